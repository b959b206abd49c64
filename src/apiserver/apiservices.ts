// The local APIServices: one apiregistration.k8s.io/v1 APIService per group version this server
// serves itself, named <version>.<group> ('v1.' for the core group), as kube-apiserver's
// autoregister controller keeps them. They are ordinary stored objects: the server writes them
// at start (syncLocalAPIServices), and clients list, watch and read them like any other kind.
//
// An APIService without spec.service is served locally and is always available: on create its
// status is reset to the one condition Available=True, reason Local (prepareAPIServiceForCreate,
// the kind's strategy). The aggregator's own group, apiregistration.k8s.io, never has one.
import { rfc3339 } from '../machinery/time.js';
import { field, type FieldError } from '../machinery/errors.js';
import { isDNS1035Label, isDNS1123Subdomain, isValidPathSegmentName } from '../machinery/validation.js';
import type { KindDecl } from '../schema/model.js';
import type { Strategy } from './registry/strategy.js';

export interface GroupVersion {
  /** '' for the core group */
  group: string;
  version: string;
}

export interface APIServicePriority {
  /** spec.groupPriorityMinimum: the order of the group among groups (highest first) */
  group: number;
  /** spec.versionPriority: the order of the version within its group (highest first) */
  version: number;
}

/**
 * The priorities kube-apiserver gives the group versions it serves (its table of built-in
 * group versions, 1.33), by 'group/version'. A group version that is not in this table gets no
 * local APIService, as in kube-apiserver: a new built-in group must be added here.
 */
export const LOCAL_API_SERVICE_PRIORITIES: ReadonlyMap<string, APIServicePriority> = new Map(
  (
    [
      ['', 'v1', 18000, 1],
      ['apps', 'v1', 17800, 15],
      ['events.k8s.io', 'v1', 17750, 15],
      ['events.k8s.io', 'v1beta1', 17750, 5],
      ['authentication.k8s.io', 'v1', 17700, 15],
      ['authentication.k8s.io', 'v1beta1', 17700, 9],
      ['authentication.k8s.io', 'v1alpha1', 17700, 1],
      ['authorization.k8s.io', 'v1', 17600, 15],
      ['autoscaling', 'v1', 17500, 15],
      ['autoscaling', 'v2', 17500, 30],
      ['autoscaling', 'v2beta1', 17500, 9],
      ['autoscaling', 'v2beta2', 17500, 1],
      ['batch', 'v1', 17400, 15],
      ['batch', 'v1beta1', 17400, 9],
      ['batch', 'v2alpha1', 17400, 9],
      ['certificates.k8s.io', 'v1', 17300, 15],
      ['certificates.k8s.io', 'v1beta1', 17300, 9],
      ['certificates.k8s.io', 'v1alpha1', 17300, 1],
      ['networking.k8s.io', 'v1', 17200, 15],
      ['networking.k8s.io', 'v1beta1', 17200, 9],
      ['policy', 'v1', 17100, 15],
      ['policy', 'v1beta1', 17100, 9],
      ['rbac.authorization.k8s.io', 'v1', 17000, 15],
      ['storage.k8s.io', 'v1', 16800, 15],
      ['storage.k8s.io', 'v1beta1', 16800, 9],
      ['storage.k8s.io', 'v1alpha1', 16800, 1],
      ['apiextensions.k8s.io', 'v1', 16700, 15],
      ['admissionregistration.k8s.io', 'v1', 16700, 15],
      ['admissionregistration.k8s.io', 'v1beta1', 16700, 12],
      ['admissionregistration.k8s.io', 'v1alpha1', 16700, 9],
      ['scheduling.k8s.io', 'v1', 16600, 15],
      ['coordination.k8s.io', 'v1', 16500, 15],
      ['coordination.k8s.io', 'v1beta1', 16500, 13],
      ['coordination.k8s.io', 'v1alpha2', 16500, 12],
      ['node.k8s.io', 'v1', 16300, 15],
      ['node.k8s.io', 'v1beta1', 16300, 9],
      ['node.k8s.io', 'v1alpha1', 16300, 1],
      ['discovery.k8s.io', 'v1', 16200, 15],
      ['discovery.k8s.io', 'v1beta1', 16200, 12],
      ['resource.k8s.io', 'v1beta2', 16200, 15],
      ['resource.k8s.io', 'v1beta1', 16200, 9],
      ['resource.k8s.io', 'v1alpha3', 16200, 1],
      ['flowcontrol.apiserver.k8s.io', 'v1', 16100, 21],
      ['flowcontrol.apiserver.k8s.io', 'v1beta3', 16100, 18],
      ['flowcontrol.apiserver.k8s.io', 'v1beta2', 16100, 15],
      ['flowcontrol.apiserver.k8s.io', 'v1beta1', 16100, 12],
      ['flowcontrol.apiserver.k8s.io', 'v1alpha1', 16100, 9],
      ['internal.apiserver.k8s.io', 'v1alpha1', 16000, 9],
      ['storagemigration.k8s.io', 'v1alpha1', 15800, 9],
    ] as const
  ).map(([g, v, group, version]) => [`${g}/${v}`, { group, version }]),
);

/** The aggregator's own group: served by it, never registered by an APIService. */
export const APIREGISTRATION_GROUP = 'apiregistration.k8s.io';

/** The label that marks an APIService the server keeps; 'onstart': synced once, when the server starts. */
export const AUTOMANAGED_LABEL = 'kube-aggregator.kubernetes.io/automanaged';
const MANAGE_ON_START = 'onstart';
const MANAGE_CONTINUOUSLY = 'true';

export const LOCAL_AVAILABLE_REASON = 'Local';
export const LOCAL_AVAILABLE_MESSAGE = 'Local APIServices are always available';

/** '<version>.<group>': 'v1.' for the core group, 'v1.apps', 'v2.autoscaling'. */
export function apiServiceName(gv: GroupVersion): string {
  return `${gv.version}.${gv.group}`;
}

/** The group versions a kind list serves, in the order they first appear. */
export function servedGroupVersions(kinds: readonly KindDecl[]): GroupVersion[] {
  const seen = new Set<string>();
  const out: GroupVersion[] = [];
  for (const k of kinds) {
    const key = `${k.group}/${k.version}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ group: k.group, version: k.version });
  }
  return out;
}

/** RFC 3339 with whole seconds, as Kubernetes writes condition times. */

/** The condition of an APIService served locally: Available=True, reason Local. */
export function localAvailableCondition(nowMs: number = Date.now()): Record<string, string> {
  return {
    type: 'Available',
    status: 'True',
    lastTransitionTime: rfc3339(nowMs),
    reason: LOCAL_AVAILABLE_REASON,
    message: LOCAL_AVAILABLE_MESSAGE,
  };
}

/**
 * The local APIServices of the served group versions, sorted by name: the objects to store.
 * Group versions without a priority (and apiregistration.k8s.io itself) have none.
 */
export function localAPIServices(groupVersions: readonly GroupVersion[], nowMs: number = Date.now()): any[] {
  const out: any[] = [];
  const seen = new Set<string>();
  for (const gv of groupVersions) {
    if (gv.group === APIREGISTRATION_GROUP) continue;
    const p = LOCAL_API_SERVICE_PRIORITIES.get(`${gv.group}/${gv.version}`);
    if (!p) continue;
    const name = apiServiceName(gv);
    if (seen.has(name)) continue;
    seen.add(name);
    out.push({
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name, labels: { [AUTOMANAGED_LABEL]: MANAGE_ON_START } },
      // spec.group is omitted when empty (the core group), as Kubernetes writes it
      spec: { ...(gv.group ? { group: gv.group } : {}), version: gv.version, groupPriorityMinimum: p.group, versionPriority: p.version },
      status: { conditions: [localAvailableCondition(nowMs)] },
    });
  }
  return out.sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
}

// ---------------------------------------------------------------------------------------------
// The kind's strategy (apiServiceStrategy, for registry/strategies.ts): what an APIService write
// does to status, and how it is validated, as kube-aggregator's registry does.

/** A service reference without a port gets 443 (kube-aggregator's defaulting). */
function defaultServicePort(obj: any): void {
  const svc = obj?.spec?.service;
  if (svc && typeof svc === 'object' && svc.port == null) svc.port = 443;
}

/** On create: the status is the server's; a local APIService (no spec.service) is available at once. */
export function prepareAPIServiceForCreate(obj: any, nowMs: number = Date.now()): void {
  defaultServicePort(obj);
  obj.status = {};
  if (obj.spec?.service == null) obj.status.conditions = [localAvailableCondition(nowMs)];
}

/** On an update of the main resource: the status stays as it was. */
export function prepareAPIServiceForUpdate(obj: any, old: any): void {
  defaultServicePort(obj);
  obj.status = old.status;
}

/** On an update of the status subresource: spec, labels, annotations, finalizers and owners stay. */
export function prepareAPIServiceStatusUpdate(obj: any, old: any): void {
  obj.spec = old.spec;
  obj.metadata ??= {};
  for (const k of ['labels', 'annotations', 'finalizers', 'ownerReferences']) {
    if (old.metadata?.[k] === undefined) delete obj.metadata[k];
    else obj.metadata[k] = old.metadata[k];
  }
}

function byteLength(b64: unknown): number {
  return typeof b64 === 'string' ? Buffer.from(b64, 'base64').length : 0;
}

/**
 * The rules of an APIService, in kube-aggregator's order and wording: the name is
 * <version>.<group>; only v1 may have an empty group; the priorities are in range; a local
 * APIService has no caBundle nor insecureSkipTLSVerify; a remote one names its service fully.
 * (The name's path-segment rule is the store's, through the strategy's nameRule.)
 */
export function validateAPIService(obj: any): FieldError[] {
  const errs: FieldError[] = [];
  const spec = obj?.spec ?? {};
  const group: string = typeof spec.group === 'string' ? spec.group : '';
  const version: string = typeof spec.version === 'string' ? spec.version : '';
  const name = obj?.metadata?.name;
  const required = `${version}.${group}`;
  if (typeof name === 'string' && name !== '' && isValidPathSegmentName(name).length === 0 && name !== required) {
    errs.push(field.invalid('metadata.name', name, `must be \`spec.version+"."+spec.group\`: ${JSON.stringify(required)}`));
  }
  if (group === '' && version !== 'v1') errs.push(field.required('spec.group', 'only v1 may have an empty group and it better be legacy kube'));
  if (group !== '') for (const msg of isDNS1123Subdomain(group)) errs.push(field.invalid('spec.group', group, msg));
  for (const msg of isDNS1035Label(version)) errs.push(field.invalid('spec.version', version, msg));
  const gpm = typeof spec.groupPriorityMinimum === 'number' ? spec.groupPriorityMinimum : 0;
  if (gpm <= 0 || gpm > 20000) errs.push(field.invalid('spec.groupPriorityMinimum', gpm, 'must be positive and less than 20000'));
  const vp = typeof spec.versionPriority === 'number' ? spec.versionPriority : 0;
  if (vp <= 0 || vp > 1000) errs.push(field.invalid('spec.versionPriority', vp, 'must be positive and less than 1000'));
  const insecure = spec.insecureSkipTLSVerify === true;
  const caBytes = byteLength(spec.caBundle);
  const svc = spec.service;
  if (svc == null) {
    if (caBytes !== 0) errs.push(field.invalid('spec.caBundle', `${caBytes} bytes`, 'local APIServices may not have a caBundle'));
    if (insecure) errs.push(field.invalid('spec.insecureSkipTLSVerify', true, 'local APIServices may not have insecureSkipTLSVerify'));
    return errs;
  }
  if (!svc.namespace) errs.push(field.required('spec.service.namespace', ''));
  if (!svc.name) errs.push(field.required('spec.service.name', ''));
  const port = typeof svc.port === 'number' ? svc.port : 0;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    errs.push(field.invalid('spec.service.port', port, 'port is not valid: must be between 1 and 65535, inclusive'));
  }
  if (insecure && caBytes > 0) errs.push(field.invalid('spec.insecureSkipTLSVerify', true, 'may not be true if caBundle is present'));
  return errs;
}

/** The rules of a status write: each condition's status is True, False or Unknown. */
export function validateAPIServiceStatus(obj: any): FieldError[] {
  const errs: FieldError[] = [];
  const conditions = obj?.status?.conditions;
  if (!Array.isArray(conditions)) return errs;
  conditions.forEach((c: any, i: number) => {
    const st = c?.status;
    if (st !== 'True' && st !== 'False' && st !== 'Unknown') errs.push(field.notSupported(`status.conditions[${i}].status`, st ?? '', ['True', 'False', 'Unknown']));
  });
  return errs;
}

/**
 * The APIService kind's strategy, on top of the default one: names are path segments
 * ('v1.' is a valid name), status belongs to the server (Available at once for a local
 * APIService), and the rules above.
 */
export function apiServiceStrategy(s: Strategy): void {
  s.nameRule = 'path';
  s.statusSubresource = true;
  s.prepareForCreate = (obj) => prepareAPIServiceForCreate(obj);
  s.prepareForUpdate = (obj, old) => prepareAPIServiceForUpdate(obj, old);
  const validate = s.validate;
  const validateUpdate = s.validateUpdate;
  const validateSubresource = s.validateSubresource;
  s.validate = (obj) => [...validate(obj), ...validateAPIService(obj)];
  s.validateUpdate = (obj, old) => [...validateUpdate(obj, old), ...validateAPIService(obj)];
  const prepareSub = s.prepareForSubresourceUpdate;
  s.prepareForSubresourceUpdate = (sub, obj, old) => {
    prepareSub?.(sub, obj, old);
    if (sub === 'status') prepareAPIServiceStatusUpdate(obj, old);
  };
  s.validateSubresource = (sub, obj, old) => (sub === 'status' ? [...validateSubresource(sub, obj, old), ...validateAPIServiceStatus(obj)] : validateSubresource(sub, obj, old));
}

// ---------------------------------------------------------------------------------------------
// Writing them at start

/** What the sync needs of the APIService store (a ResourceStore gives it through apiServiceStoreOf). */
export interface APIServiceStore {
  /** every stored APIService */
  list(): any[];
  create(obj: any): Promise<unknown>;
  /** replace the spec of a stored APIService, if its uid is still `uid` */
  replaceSpec(name: string, uid: string, spec: any): Promise<unknown>;
  /** delete a stored APIService, if its uid is still `uid` */
  delete(name: string, uid: string): Promise<unknown>;
}

/** The parts of a ResourceStore the sync uses. */
interface StoreLike {
  prefix: string;
  cacher: { list(opts: { prefix: string }): { items: { obj: any }[] } };
  create(obj: any, opts: { dryRun: boolean }): Promise<any>;
  guaranteedUpdate(namespace: string, name: string, mutate: (copy: any) => any, opts: { dryRun: boolean; main?: boolean }): Promise<any>;
  delete(namespace: string, name: string, opts: { dryRun: boolean; preconditions?: { uid?: string } }): Promise<unknown>;
}

export function apiServiceStoreOf(store: StoreLike): APIServiceStore {
  return {
    list: () => store.cacher.list({ prefix: store.prefix }).items.map((e) => e.obj),
    create: (obj) => store.create(obj, { dryRun: false }),
    replaceSpec: (name, uid, spec) =>
      store.guaranteedUpdate(
        '',
        name,
        (cur) => {
          if (cur.metadata?.uid !== uid) throw Object.assign(new Error(`APIService ${name} was replaced`), { code: 409 });
          cur.spec = structuredClone(spec);
          return cur;
        },
        { dryRun: false, main: true },
      ),
    delete: (name, uid) => store.delete('', name, { dryRun: false, preconditions: { uid } }),
  };
}

export interface SyncResult {
  created: string[];
  updated: string[];
  deleted: string[];
}

function sameSpec(a: any, b: any): boolean {
  const keys = ['group', 'version', 'groupPriorityMinimum', 'versionPriority', 'service', 'insecureSkipTLSVerify', 'caBundle'];
  return keys.every((k) => JSON.stringify(a?.[k] ?? null) === JSON.stringify(b?.[k] ?? null));
}

/** A write lost to a concurrent one (another API server syncing, a user): nothing to do. */
export function lostRace(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return code === 409 || code === 404;
}

/**
 * Brings the stored local APIServices in line with the served group versions, once, as
 * kube-apiserver's autoregister controller does when it starts: a missing one is created; one the
 * server manages (the automanaged label) whose spec differs gets the desired spec; one the server
 * manages for a group version it no longer serves is deleted. APIServices without the label
 * (registered by someone else) are left alone. Safe to run from several servers at once.
 */
export async function syncLocalAPIServices(store: APIServiceStore, groupVersions: readonly GroupVersion[], nowMs: number = Date.now()): Promise<SyncResult> {
  const desired = new Map(localAPIServices(groupVersions, nowMs).map((o) => [o.metadata.name as string, o]));
  const current = new Map(store.list().map((o) => [o.metadata.name as string, o]));
  const result: SyncResult = { created: [], updated: [], deleted: [] };
  // every write at once, so that they share the storage's group commits; the result lists keep the desired order
  const ops: Promise<void>[] = [];
  const created: (string | undefined)[] = [];
  const updated: (string | undefined)[] = [];
  const deleted: (string | undefined)[] = [];
  const run = (into: (string | undefined)[], name: string, write: () => Promise<unknown>) => {
    const i = into.push(undefined) - 1;
    ops.push(
      write().then(
        () => void (into[i] = name),
        (e) => {
          if (!lostRace(e)) throw e;
        },
      ),
    );
  };
  for (const [name, want] of desired) {
    const cur = current.get(name);
    if (!cur) run(created, name, () => store.create(structuredClone(want)));
    else if (isAutomanaged(cur) && !sameSpec(cur.spec, want.spec)) run(updated, name, () => store.replaceSpec(name, cur.metadata.uid, want.spec));
  }
  for (const [name, cur] of current) {
    if (desired.has(name) || !isAutomanaged(cur)) continue;
    run(deleted, name, () => store.delete(name, cur.metadata.uid));
  }
  await Promise.all(ops);
  const done = (l: (string | undefined)[]) => l.filter((n): n is string => n !== undefined);
  result.created = done(created);
  result.updated = done(updated);
  result.deleted = done(deleted);
  return result;
}

function isAutomanaged(o: any): boolean {
  const v = o?.metadata?.labels?.[AUTOMANAGED_LABEL];
  return v === MANAGE_ON_START || v === MANAGE_CONTINUOUSLY;
}
