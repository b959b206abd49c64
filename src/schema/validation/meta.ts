// The parts of ObjectMeta validation the generic store does not do: owner references and
// finalizers (apimachinery ValidateOwnerReferences and ValidateFinalizers, plus the core rule
// that an unqualified finalizer name must be a standard one).
import { child, idx, invalid, type Errs, GoRepr, goQuote } from './errs.js';
import { arr, isQualifiedName, str } from './util.js';

const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);
const BANNED_OWNERS = new Set(['/v1/Event']);

function splitAPIVersion(av: string): [string, string] {
  const i = av.indexOf('/');
  if (i < 0) return ['', av];
  return [av.slice(0, i), av.slice(i + 1)];
}

function ownerRefRepr(r: any): GoRepr {
  const ptr = (v: unknown, t: string) => (v == null ? `(*${t})(nil)` : `(*${t})(0xc000010000)`);
  return new GoRepr(
    `v1.OwnerReference{APIVersion:${goQuote(str(r.apiVersion))}, Kind:${goQuote(str(r.kind))}, Name:${goQuote(str(r.name))}, UID:${goQuote(str(r.uid))}, Controller:${ptr(r.controller, 'bool')}, BlockOwnerDeletion:${ptr(r.blockOwnerDeletion, 'bool')}}`,
  );
}

export function validateOwnerReferences(refs: unknown, path: string): Errs {
  const errs: Errs = [];
  let firstController = '';
  const list = arr(refs);
  for (const r of list) {
    const [group, version] = splitAPIVersion(str(r?.apiVersion));
    if (!version) errs.push(invalid(child(path, 'apiVersion'), str(r?.apiVersion), 'version must not be empty'));
    if (!str(r?.kind)) errs.push(invalid(child(path, 'kind'), str(r?.kind), 'must not be empty'));
    if (!str(r?.name)) errs.push(invalid(child(path, 'name'), str(r?.name), 'must not be empty'));
    if (!str(r?.uid)) errs.push(invalid(child(path, 'uid'), str(r?.uid), 'must not be empty'));
    const gvk = `${group}/${version}/${str(r?.kind)}`;
    if (BANNED_OWNERS.has(gvk)) {
      const shown = group ? `${group}/${version}, Kind=${str(r?.kind)}` : `/${version}, Kind=${str(r?.kind)}`;
      errs.push(invalid(path, ownerRefRepr(r), `${shown} is disallowed from being an owner`));
    }
    if (r?.controller === true) {
      const cur = `${str(r.kind)}/${str(r.name)}`;
      if (firstController)
        errs.push(
          invalid(
            path,
            new GoRepr(`[]v1.OwnerReference{${list.map((x) => ownerRefRepr(x).repr).join(', ')}}`),
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${cur}`,
          ),
        );
      else firstController = cur;
    }
  }
  return errs;
}

export function validateFinalizers(fins: unknown, path: string): Errs {
  const errs: Errs = [];
  const list = arr<string>(fins);
  let orphan = false;
  let foreground = false;
  for (const f of list) {
    for (const m of isQualifiedName(str(f))) errs.push(invalid(path, str(f), m));
    if (f === 'orphan') orphan = true;
    if (f === 'foregroundDeletion') foreground = true;
  }
  if (orphan && foreground) errs.push(invalid(path, new GoRepr(`[]string{${list.map((x) => goQuote(str(x))).join(', ')}}`), 'finalizer orphan and foregroundDeletion cannot be both set'));
  list.forEach((f, i) => errs.push(...validateKubeFinalizerName(str(f), idx(path, i))));
  return errs;
}

export function validateKubeFinalizerName(f: string, path: string): Errs {
  if (!f.includes('/') && !STANDARD_FINALIZERS.has(f)) return [invalid(path, f, 'name is neither a standard finalizer name nor is it fully qualified')];
  return [];
}

/** Owner references and finalizers of any object, as ValidateObjectMeta checks them. */
export function validateMetaExtras(obj: any): Errs {
  const m = obj?.metadata ?? {};
  const errs: Errs = [];
  if (typeof m.generation === 'number' && m.generation < 0) errs.push(invalid('metadata.generation', m.generation, 'must be greater than or equal to 0'));
  errs.push(...validateOwnerReferences(m.ownerReferences, 'metadata.ownerReferences'));
  errs.push(...validateFinalizers(m.finalizers, 'metadata.finalizers'));
  return errs;
}
