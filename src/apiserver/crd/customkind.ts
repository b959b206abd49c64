// The kinds a CustomResourceDefinition serves: one KindDecl per served version, with the
// strategy of its objects (schemaless JSON shaped by the version's structural schema), its
// Table printer (additionalPrinterColumns), its scale subresource and its stored form (the
// storage version; conversion None rewrites apiVersion only).
import { hasRules, rulesNotCheckedError, validationRuleErrors } from './celrules.js';
import { stringifyJSON } from '../../codec/int64.js';
import { inInt64 } from '../../codec/int64.js';
import { errors, field, type FieldError } from '../../machinery/errors.js';
import type { KindDecl, SubresourceDecl } from '../../schema/model.js';
import { isQualifiedName } from '../../machinery/validation.js';
import { NAME_COLUMN } from '../../schema/printers/types.js';
import { ago } from '../../schema/printers/format.js';
import { normalize, normTime, pruneUnknown } from '../../codec/json.js';
import type { DynamicNormalized } from '../../schema/dynamic.js';
import type { Strategy } from '../registry/strategy.js';
import { applySchemaDefaults, prune, UNCORRELATED, validateValue, type JSONSchemaProps } from './schema.js';
import { evalJSONPath } from './jsonpath.js';
import { goFloat, goJSON } from '../../machinery/gostrings.js';

export const CR_VERBS = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'];
const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** one element of spec.versions */
export interface CRDVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  subresources?: { status?: object; scale?: { specReplicasPath?: string; statusReplicasPath?: string; labelSelectorPath?: string } };
  additionalPrinterColumns?: { name: string; type: string; format?: string; description?: string; priority?: number; jsonPath: string }[];
  selectableFields?: { jsonPath: string }[];
}

export interface CRDNames {
  plural: string;
  singular?: string;
  kind: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}

/** The OpenAPI definition name Kubernetes gives a custom resource: the group reversed, the version, the kind. */
export function customTypeName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

/** Kubernetes' version order: GA before beta before alpha, higher numbers first, others by name last. */
export function compareVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [0, 0, 0];
    return [m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1, Number(m[1]), Number(m[3] ?? 0)];
  };
  const ra = rank(a);
  const rb = rank(b);
  for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return rb[i]! - ra[i]!;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** an object's keys sorted at every level, as Go encodes map[string]interface{} */
function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  // (Kubernetes decodes an integer beyond int64 in unstructured content as a float64)
  if (typeof v === 'bigint') return inInt64(v) ? v : Number(v);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v as object).sort()) out[k] = sortKeys((v as Record<string, unknown>)[k]);
  return out;
}

/** the normalizer of one version's objects: ObjectMeta, pruning, defaults */
export function customNormalizer(schema: JSONSchemaProps | undefined): (obj: Record<string, unknown>) => DynamicNormalized {
  return (input) => {
    const obj = structuredClone(input);
    const unknown: string[] = [];
    let typeError: string | undefined;
    if (obj.metadata !== undefined && obj.metadata !== null) {
      const m = normalize(OBJECT_META, obj.metadata);
      if (m.typeError) typeError = m.typeError.replace('Go struct field ObjectMeta.', 'Go struct field ObjectMeta.metadata.');
      obj.metadata = m.obj;
      for (const u of m.unknown) unknown.push(`metadata.${u}`);
    }
    unknown.push(...prune(obj, schema));
    applySchemaDefaults(obj, schema);
    return { obj: sortKeys(obj), unknown, typeError };
  };
}

/** the pruner of one version's apply configurations: undeclared fields out, no defaults added */
export function customPruner(schema: JSONSchemaProps | undefined): (obj: Record<string, unknown>) => { obj: any; unknown: string[] } {
  return (input) => {
    const obj = structuredClone(input);
    const unknown: string[] = [];
    if (obj.metadata !== null && typeof obj.metadata === 'object' && !Array.isArray(obj.metadata)) {
      const m = pruneUnknown(OBJECT_META, obj.metadata);
      obj.metadata = m.obj;
      for (const u of m.unknown) unknown.push(`metadata.${u}`);
    }
    unknown.push(...prune(obj, schema));
    return { obj, unknown };
  };
}

function cellForColumn(type: string, value: unknown, now: number): unknown {
  if (value === undefined || value === null) return null;
  switch (type) {
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : typeof value === 'bigint' ? value : null;
    case 'number':
      return typeof value === 'number' ? value : typeof value === 'bigint' ? Number(value) : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date': {
      // metav1.Time's query parameter form: "" and "null" are the zero time, else strict RFC 3339
      if (typeof value !== 'string') return null;
      if (value === '' || value === 'null') return '<unknown>';
      const t = normTime(value, false);
      if (t === undefined) return '<invalid>';
      return ago(Date.parse(value), now);
    }
    default:
      return stringCell(value);
  }
}

/**
 * A string column's cell as Kubernetes' JSONPath printer writes the value: a string as it is, a
 * number as Go's fmt prints an int64 or a float64 (1.2345675e+06), a boolean as true or false,
 * an object or array as Go's json.Marshal (sorted keys, <, > and & escaped).
 */
function stringCell(value: unknown): unknown {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : goFloat(value);
  if (typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return goJSON(value);
}

/** the Table printer of a version: Name, then its additionalPrinterColumns (Age when there are none) */
export function customPrinter(v: CRDVersion): NonNullable<NonNullable<KindDecl['custom']>['printer']> {
  const cols = v.additionalPrinterColumns?.length ? v.additionalPrinterColumns : [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: '', priority: 0 }];
  return {
    columns: [
      NAME_COLUMN,
      ...cols.map((c) => ({
        name: c.name,
        type: c.type,
        format: c.format ?? '',
        description: c.description || (c.name === 'Age' && c.jsonPath === '.metadata.creationTimestamp' ? 'Custom resource definition column (in JSONPath format): .metadata.creationTimestamp' : `Custom resource definition column (in JSONPath format): ${c.jsonPath}`),
        priority: c.priority ?? 0,
      })),
    ],
    cells: (obj, now) => [obj?.metadata?.name ?? '', ...cols.map((c) => cellForColumn(c.type, evalJSONPath(obj, c.jsonPath)[0], now))],
  };
}

/** a path like `.spec.replicas` split into its fields */
function pathFields(p: string): string[] {
  return p.replace(/^\./, '').split('.').filter((x) => x !== '');
}

function getPath(obj: any, p: string): unknown {
  let cur = obj;
  for (const f of pathFields(p)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = cur[f];
  }
  return cur;
}

function setPath(obj: any, p: string, value: unknown): void {
  const fs = pathFields(p);
  let cur = obj;
  for (let i = 0; i < fs.length - 1; i++) {
    if (cur[fs[i]!] === null || typeof cur[fs[i]!] !== 'object' || Array.isArray(cur[fs[i]!])) cur[fs[i]!] = {};
    cur = cur[fs[i]!];
  }
  cur[fs[fs.length - 1]!] = value;
}

/** the scale subresource as autoscaling/v1 Scale, from the version's paths */
function customScale(group: string, kind: string, sc: NonNullable<NonNullable<CRDVersion['subresources']>['scale']>): NonNullable<NonNullable<KindDecl['custom']>['scale']> {
  const specPath = sc.specReplicasPath ?? '.spec.replicas';
  const statusPath = sc.statusReplicasPath ?? '.status.replicas';
  return {
    toView(obj) {
      const m = obj.metadata;
      const meta: any = { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp };
      const spec = getPath(obj, specPath);
      const status: any = { replicas: typeof getPath(obj, statusPath) === 'number' ? getPath(obj, statusPath) : 0 };
      if (sc.labelSelectorPath) {
        const sel = getPath(obj, sc.labelSelectorPath);
        if (typeof sel === 'string' && sel !== '') status.selector = sel;
      }
      return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: meta, spec: typeof spec === 'number' && spec !== 0 ? { replicas: spec } : {}, status };
    },
    fromView(view, obj) {
      const replicas = view?.spec?.replicas ?? 0;
      if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
        throw errors.invalid({ group: 'autoscaling', name: 'Scale' }, obj.metadata.name, [field.invalid('spec.replicas', replicas, 'must be greater than or equal to 0')]);
      }
      void group;
      void kind;
      const next = structuredClone(obj);
      setPath(next, specPath, replicas);
      const rv = view?.metadata?.resourceVersion;
      if (rv) next.metadata.resourceVersion = rv;
      return next;
    },
  };
}

/**
 * The warning of a deprecated version: its own text, or Kubernetes' default naming the most
 * preferred served version that is not deprecated and ranks above it.
 */
export function deprecationWarning(crd: any, v: CRDVersion): string | undefined {
  if (!v.deprecated) return undefined;
  if (typeof v.deprecationWarning === 'string') return v.deprecationWarning;
  const { group, names } = crd.spec;
  const msg = `${group}/${v.name} ${names.kind} is deprecated`;
  const better = ((crd.spec.versions ?? []) as CRDVersion[])
    .filter((o) => o.served && !o.deprecated && o.name !== v.name && compareVersions(o.name, v.name) < 0)
    .map((o) => o.name)
    .sort(compareVersions)[0];
  return better ? `${msg}; use ${group}/${better} ${names.kind}` : msg;
}

/** the KindDecl of one served version of a CRD */
export function customKind(crd: any, v: CRDVersion): KindDecl {
  const spec = crd.spec;
  // served under the names the naming controller accepted (status.acceptedNames), as Kubernetes
  // serves and discovers them; the requested ones before any are accepted
  const accepted = crd.status?.acceptedNames;
  const names: CRDNames = accepted?.kind ? { ...accepted, shortNames: accepted.shortNames ?? [], categories: accepted.categories ?? [] } : spec.names;
  const group: string = spec.group;
  const subs: SubresourceDecl[] = [];
  if (v.subresources?.status) subs.push({ name: 'status', group, version: v.name, kind: names.kind, verbs: ['get', 'patch', 'update'] });
  if (v.subresources?.scale) subs.push({ name: 'scale', group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] });
  return {
    group,
    version: v.name,
    kind: names.kind,
    listKind: names.listKind || `${names.kind}List`,
    resource: names.plural,
    singular: names.singular || names.kind.toLowerCase(),
    namespaced: spec.scope !== 'Cluster',
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    verbs: CR_VERBS,
    type: customTypeName(group, v.name, names.kind),
    subresources: subs,
    selectableFields: (v.selectableFields ?? []).map((f) => f.jsonPath.replace(/^\./, '')),
    storagePrefix: `${group}/${names.plural}`,
    custom: {
      schemaless: true,
      deprecationWarning: deprecationWarning(crd, v),
      printer: customPrinter(v),
      scale: v.subresources?.scale ? customScale(group, names.kind, v.subresources.scale) : undefined,
      storage: { version: ((spec.versions ?? []) as CRDVersion[]).find((x) => x.storage)?.name ?? v.name, kind: spec.names.kind },
    },
  };
}

/** everything but metadata (and status when it has its own subresource) */
function nonMetaChanged(next: any, old: any, statusSub: boolean): boolean {
  const keys = new Set([...Object.keys(next), ...Object.keys(old)]);
  for (const k of keys) {
    if (k === 'metadata' || (statusSub && k === 'status')) continue;
    if (stringifyJSON(sortKeys(next[k])) !== stringifyJSON(sortKeys(old[k]))) return true;
  }
  return false;
}

/** the strategy of a version's objects */
export function customStrategy(crd: any, v: CRDVersion, storageVersion: string, convertByWebhook?: (obj: any, apiVersion: string) => Promise<any>): Strategy {
  const group: string = crd.spec.group;
  const schema = v.schema?.openAPIV3Schema;
  const statusSub = !!v.subresources?.status;
  const apiVersion = `${group}/${v.name}`;
  const storageAPIVersion = `${group}/${storageVersion}`;
  const storageSchema = ((crd.spec.versions ?? []) as CRDVersion[]).find((x) => x.name === storageVersion)?.schema?.openAPIV3Schema;
  // a write through another version than the storage one: Kubernetes stores the object
  // converted and pruned to the storage version's schema, and answers with it as read back (the
  // storage version's defaults applied); the object is given that form when it is written, so
  // that the answer, the cache and the stored bytes agree (toStorage then only renames it)
  // (a webhook-converted CRD: each version's storage converts, crd/convertingbackend.ts; the
  // objects a version's store writes and reads are in its own version)
  const webhook = crd.spec.conversion?.strategy === 'Webhook';
  const withStorageDefaults = (obj: any) => {
    if (v.name === storageVersion || webhook) return;
    prune(obj, storageSchema);
    applySchemaDefaults(obj, storageSchema);
  };
  const rules = hasRules(schema);
  const validate = (obj: any, old?: any, warnings?: string[]): FieldError[] => {
    const errs: FieldError[] = [];
    // ObjectMeta's generic rules: finalizers are qualified names
    const fins = obj.metadata?.finalizers;
    if (Array.isArray(fins)) fins.forEach((f: unknown, i: number) => {
      for (const m of isQualifiedName(String(f))) errs.push(field.invalid(`metadata.finalizers[${i}]`, f, m));
    });
    // (an update's unchanged values are not validated again: ratcheting)
    validateValue(obj, schema, '', errs, true, old === undefined ? UNCORRELATED : old);
    if (rules) {
      // the CEL rules run on an object whose types are right (as Kubernetes' strategy does)
      if (errs.some((e) => e.type === 'FieldValueTypeInvalid' || e.type === 'FieldValueNotSupported')) errs.push(rulesNotCheckedError());
      else errs.push(...validationRuleErrors(obj, old, schema, warnings));
    }
    return errs;
  };
  return {
    convertByWebhook,
    nameRule: 'subdomain',
    generation: false,
    statusSubresource: statusSub,
    returnDeletedObject: false,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    prepareForCreate(obj) {
      obj.metadata.generation = 1;
      if (statusSub) delete obj.status;
      withStorageDefaults(obj);
    },
    prepareForUpdate(obj, old) {
      const g = old.metadata.generation ?? 1;
      obj.metadata.generation = nonMetaChanged(obj, old, statusSub) ? g + 1 : g;
      withStorageDefaults(obj);
    },
    validate: (obj) => validate(obj),
    validateUpdate: (obj, old, warnings) => validate(obj, old, warnings),
    prepareForSubresourceUpdate(sub, obj, old) {
      if (sub !== 'status') return;
      const status = obj.status;
      const managed = obj.metadata.managedFields;
      const rv = obj.metadata.resourceVersion;
      for (const k of Object.keys(obj)) delete obj[k];
      Object.assign(obj, structuredClone(old));
      if (status === undefined) delete obj.status;
      else obj.status = status;
      if (managed === undefined) delete obj.metadata.managedFields;
      else obj.metadata.managedFields = managed;
      obj.metadata.resourceVersion = rv;
    },
    validateSubresource: (_sub, obj, old, warnings) => validate(obj, old, warnings),
    // conversion Webhook: see above. Conversion None: the stored form is the storage version's apiVersion, the rest as it is
    // (pruned to the storage version's schema on the way in, see withStorageDefaults); what is
    // read from storage gets the storage version's defaults, then is pruned to this version's
    // schema (fields a schema change has removed go), as Kubernetes' storage codec does
    storageForm: webhook
      ? {
          toStorage: (obj) => obj,
          // (this version's defaults and schema; an object of another version has been converted
          // by the webhook, after the defaults of its own)
          fromStorage: (obj) => {
            applySchemaDefaults(obj, schema);
            prune(obj, schema);
            return obj;
          },
        }
      : {
          toStorage: (obj) => (obj.apiVersion === storageAPIVersion ? obj : { ...obj, apiVersion: storageAPIVersion }),
          fromStorage: (obj) => {
            applySchemaDefaults(obj, storageSchema);
            obj.apiVersion = apiVersion;
            prune(obj, schema);
            return obj;
          },
        },
  };
}
