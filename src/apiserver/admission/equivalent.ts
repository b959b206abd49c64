// matchPolicy Equivalent: the other versions (and groups) a request's resource is served at.
//
// Kubernetes calls two resources equivalent when they share their storage (its
// EquivalentResourceRegistry keys them by their storage prefix): autoscaling/v2 and v1
// HorizontalPodAutoscalers, core v1 and events.k8s.io/v1 Events, every served version of a custom
// resource. A webhook or admission policy whose rules name one of them (matchPolicy Equivalent,
// the default) also sees the writes through the others; it is sent the object converted to the
// version its rule matched, with that version's kind and resource (requestKind and
// requestResource keep the request's own), and a mutating webhook's patch, made against that
// version, is converted back. Equivalents are tried only when no rule matches the request as it
// came, in the order the resources are served (their stores' order).
import type { KindDecl } from '../../schema/model.js';
import { stringifyJSON } from '../../codec/int64.js';
import type { AdmissionAttributes } from './types.js';

/** one other version of the request's resource */
export interface EquivalentView {
  resource: { group: string; version: string; resource: string };
  /** the kind of the request's object in this version (a subresource's own kind: autoscaling/v1 Scale) */
  kind: { group: string; version: string; kind: string };
  /** a copy of an object of the request's version in this one (null and undefined stay) */
  convert(obj: any): any;
  /** a copy of an object of this version in the request's */
  back(obj: any): any;
  /**
   * A version converted by a CRD's conversion webhook: converts the objects now, so that
   * convert() gives the webhook's conversion of each (while it is unchanged) rather than the
   * object relabelled. Throws the conversion's error (500).
   */
  prepare?(objs: unknown[]): Promise<void>;
  /** back() through the conversion webhook */
  backAsync?(obj: any): Promise<any>;
}

export type EquivalentResolver = (a: AdmissionAttributes) => readonly EquivalentView[];

/** what the resolver needs of a store: its kind and how its objects are stored */
export interface EquivalentStore {
  readonly kind: KindDecl;
  readonly strategy: {
    storageForm?: { toStorage(obj: any): any; fromStorage(obj: any): any };
    /** a webhook-converted CRD's conversion of an object into an apiVersion (the kind's stores share it) */
    convertByWebhook?: (obj: any, apiVersion: string) => Promise<any>;
  };
}

const NONE: readonly EquivalentView[] = [];

/**
 * The resolver over the served stores (`stores` is asked on each request that needs it: custom
 * resources come and go). A request's views are made once, on the first webhook or policy that
 * misses it, and kept with the request.
 */
export function equivalentResolver(stores: () => Iterable<EquivalentStore>): EquivalentResolver {
  const made = new WeakMap<AdmissionAttributes, readonly EquivalentView[]>();
  return (a) => {
    let views = made.get(a);
    if (views === undefined) {
      views = viewsOf(stores(), a);
      made.set(a, views);
    }
    return views;
  };
}

function viewsOf(stores: Iterable<EquivalentStore>, a: AdmissionAttributes): readonly EquivalentView[] {
  const all = [...stores];
  const r = a.resource;
  const self = all.find((s) => s.kind.group === r.group && s.kind.version === r.version && s.kind.resource === r.resource);
  if (!self) return NONE;
  const views: EquivalentView[] = [];
  for (const s of all) {
    const k = s.kind;
    if (s === self || k.storagePrefix !== self.kind.storagePrefix || k.virtual) continue;
    let kind = { group: k.group, version: k.version, kind: k.kind };
    // the object is the resource's own (the main resource, status): converted between the versions
    let whole = true;
    if (a.subresource) {
      const sub = k.subresources.find((x) => x.name === a.subresource);
      if (!sub) continue;
      whole = sub.group === k.group && sub.version === k.version && sub.kind === k.kind;
      kind = { group: sub.group, version: sub.version, kind: sub.kind };
      // a subresource with a kind of its own (Scale) is equivalent only with the same kind
      if (!whole && (kind.group !== a.kind.group || kind.version !== a.kind.version || kind.kind !== a.kind.kind)) continue;
    }
    const convert = whole ? converter(self, s) : same;
    const back = whole ? converter(s, self) : same;
    const view: EquivalentView = { resource: { group: k.group, version: k.version, resource: k.resource }, kind, convert, back };
    const hook = whole ? s.strategy.convertByWebhook : undefined;
    views.push(hook ? webhookView(view, apiVersionOf(s.kind), apiVersionOf(self.kind), hook) : view);
  }
  return views;
}

const same = (o: any) => (o === null || o === undefined ? o : structuredClone(o));

function apiVersionOf(k: KindDecl): string {
  return k.group ? `${k.group}/${k.version}` : k.version;
}

/** a view whose conversions go through a CRD's webhook: prepared ahead, since convert() is synchronous */
function webhookView(base: EquivalentView, to: string, from: string, hook: (obj: any, apiVersion: string) => Promise<any>): EquivalentView {
  // each object converted, with its JSON then: an object changed since (a mutating webhook's patch) is converted again
  const prepared = new WeakMap<object, { json: string; out: any }>();
  return {
    ...base,
    convert(obj) {
      if (obj !== null && typeof obj === 'object') {
        const p = prepared.get(obj);
        if (p && p.json === stringifyJSON(obj)) return structuredClone(p.out);
      }
      return base.convert(obj);
    },
    async prepare(objs) {
      for (const o of objs) {
        if (o === null || typeof o !== 'object') continue;
        const json = stringifyJSON(o);
        if (prepared.get(o)?.json === json) continue;
        prepared.set(o, { json, out: await hook(structuredClone(o), to) });
      }
    },
    backAsync: (obj) => hook(structuredClone(obj), from),
  };
}

/** objects of `from`'s version in `to`'s, through the stored form they share */
function converter(from: EquivalentStore, to: EquivalentStore): (o: any) => any {
  const apiVersion = to.kind.group ? `${to.kind.group}/${to.kind.version}` : to.kind.version;
  return (o) => {
    if (o === null || o === undefined || typeof o !== 'object') return o;
    let x = structuredClone(o);
    const into = from.strategy.storageForm;
    if (into) x = into.toStorage(x);
    const out = to.strategy.storageForm;
    // (the conversions may share parts with their input: the result is a copy of its own)
    x = out ? out.fromStorage(structuredClone(x)) : x;
    if (x.apiVersion === apiVersion && x.kind === to.kind.kind) return x;
    const { kind: _k, apiVersion: _v, ...rest } = x;
    return { kind: to.kind.kind, apiVersion, ...rest };
  };
}
