// ResourceQuota: a namespace's ResourceQuotas bound what its objects may consume. A create (or an
// update that changes usage: a pod's terminating scope or resources, a service's type, a claim's
// size) is refused with `exceeded quota: <quota>, requested: ..., used: ..., limited: ...` when it
// would take a quota past its hard limits, and otherwise charged to the quota: status.used is
// written through the ClusterWriter (never on dry runs), with status.hard.
//
// Usage counted: count/<resource>[.<group>] for any resource (and the legacy names configmaps,
// secrets, replicationcontrollers, resourcequotas); for pods `pods`, cpu, memory,
// ephemeral-storage, requests.* and limits.* of them, hugepages-* and requests.<extended>; for
// services `services`, services.loadbalancers, services.nodeports; for claims
// `persistentvolumeclaims`, requests.storage and their <class>.storageclass.storage.k8s.io/
// variants. Pod quotas may be scoped (Terminating, NotTerminating, BestEffort, NotBestEffort,
// PriorityClass, CrossNamespacePodAffinity).
//
// Kubernetes keeps status.used with a controller (kube-controller-manager's resourcequota
// controller recounts after deletes and on resync) and charges admissions on top of it. Keelson's
// controller (src/controllers/resourcequota.ts, in `keelson server`) does the same; the plugin
// does not rely on it: it recounts the namespace's objects from the ClusterReader at each check
// (used = what is stored + what this server admitted and has not stored yet) and takes the hard
// limits from spec.hard, so that `keelson apiserver` without a controller manager counts right.
import { addGoSeconds } from '../../machinery/time.js';
import { StatusError, errors } from '../../machinery/errors.js';
import { cmpQuantity, parseQuantity } from '../../schema/validation/quantity.js';
import type { AdmissionAttributes, AdmissionPlugin, ClusterReader, ClusterWriter } from './types.js';
import {
  addLists,
  asArray,
  forbidden,
  isObject,
  listToJSON,
  mask,
  prettyPrint,
  removeZeros,
  resourceList,
  subtractNonNegative,
  ZERO_QUANTITY,
  type ResourceList,
} from './util.js';
import { allContainers, podQOS, podTotals } from './podresources.js';
import { matchLabels, type LabelOp } from '../../machinery/selectors.js';

// ---------------------------------------------------------------------------------------------
// evaluators

interface ScopeSelector {
  scopeName: string;
  operator: string;
  values?: string[];
}

interface Evaluator {
  group: string;
  resource: string;
  /** does this request change usage */
  handles(a: AdmissionAttributes): boolean;
  matchingResources(names: string[]): string[];
  /** does the object match one scope selector */
  matchesScope(sel: ScopeSelector, obj: any): boolean;
  usage(obj: any, now: number): ResourceList;
  /** required fields for the resources a quota tracks (an error message, or undefined) */
  constraints(required: string[], obj: any): string | undefined;
}

const one = () => ({ nano: 1_000_000_000n, format: 'DecimalSI' as const });
const count = (n: number) => ({ nano: BigInt(n) * 1_000_000_000n, format: 'DecimalSI' as const });

export function objectCountName(group: string, resource: string): string {
  return group ? `count/${resource}.${group}` : `count/${resource}`;
}

/** the legacy quota names of some object counts */
const LEGACY_ALIASES: Record<string, string> = { configmaps: 'configmaps', secrets: 'secrets', replicationcontrollers: 'replicationcontrollers', resourcequotas: 'resourcequotas' };

function objectCountEvaluator(group: string, resource: string): Evaluator {
  const names = [objectCountName(group, resource)];
  if (group === '' && LEGACY_ALIASES[resource]) names.push(LEGACY_ALIASES[resource]!);
  return {
    group,
    resource,
    handles: (a) => a.subresource === '' && a.operation === 'CREATE',
    matchingResources: (input) => input.filter((n) => names.includes(n)),
    matchesScope: () => false,
    usage: () => new Map(names.map((n) => [n, one()])),
    constraints: () => undefined,
  };
}

// -- pods

const POD_RESOURCES = [
  'count/pods',
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
];
/** quota on these makes every container state them (a backward compatibility requirement) */
const VALIDATION_SET = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory']);

/** a resource name outside the kubernetes.io domain (helper.IsNativeResource) */
function isNative(name: string): boolean {
  if (!name.includes('/')) return true;
  const d = name.slice(0, name.indexOf('/'));
  return d === 'kubernetes.io' || d.endsWith('.kubernetes.io');
}

function isExtendedResourceName(name: string): boolean {
  if (isNative(name) || name.startsWith('requests.')) return false;
  return true;
}

function podComputeUsage(requests: ResourceList, limits: ResourceList): ResourceList {
  const r: ResourceList = new Map([['pods', one()]]);
  const copy = (from: ResourceList, key: string, ...to: string[]) => {
    const v = from.get(key);
    if (v) for (const t of to) r.set(t, v);
  };
  copy(requests, 'cpu', 'cpu', 'requests.cpu');
  copy(limits, 'cpu', 'limits.cpu');
  copy(requests, 'memory', 'memory', 'requests.memory');
  copy(limits, 'memory', 'limits.memory');
  copy(requests, 'ephemeral-storage', 'ephemeral-storage', 'requests.ephemeral-storage');
  copy(limits, 'ephemeral-storage', 'limits.ephemeral-storage');
  for (const [k, v] of requests) {
    if (k.startsWith('hugepages-')) {
      r.set(k, v);
      r.set(`requests.${k}`, v);
    }
    if (isExtendedResourceName(k)) r.set(`requests.${k}`, v);
  }
  return r;
}

export function isTerminatingPod(pod: any): boolean {
  const ads = pod?.spec?.activeDeadlineSeconds;
  return (typeof ads === 'number' || typeof ads === 'bigint') && ads >= 0;
}

/** QuotaV1Pod: a pod is charged unless terminal, or deleted and past its grace period */
function chargedPod(pod: any, now: number): boolean {
  const phase = pod?.status?.phase;
  if (phase === 'Failed' || phase === 'Succeeded') return false;
  const ts = pod?.metadata?.deletionTimestamp;
  const grace = pod?.metadata?.deletionGracePeriodSeconds;
  if (ts && (typeof grace === 'number' || typeof grace === 'bigint')) {
    const t = Date.parse(ts);
    if (!Number.isNaN(t) && now > addGoSeconds(t, grace)) return false;
  }
  return true;
}

function crossNamespaceAffinity(pod: any): boolean {
  const term = (t: any) => asArray(t?.namespaces).length > 0 || (t?.namespaceSelector !== undefined && t?.namespaceSelector !== null);
  const terms = (x: any) => asArray(x?.requiredDuringSchedulingIgnoredDuringExecution).some(term) || asArray(x?.preferredDuringSchedulingIgnoredDuringExecution).some((w: any) => term(w?.podAffinityTerm));
  const aff = pod?.spec?.affinity;
  return terms(aff?.podAffinity) || terms(aff?.podAntiAffinity);
}

function selectorMatches(sel: ScopeSelector, labels: Record<string, string> | undefined): boolean {
  const op = ({ In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' } as Record<string, LabelOp>)[sel.operator];
  if (!op) return false;
  return matchLabels([{ key: sel.scopeName, op, values: [...(sel.values ?? [])] }], labels);
}

export const podEvaluator: Evaluator = {
  group: '',
  resource: 'pods',
  handles(a) {
    if (a.subresource === '') {
      if (a.operation === 'UPDATE') return isTerminatingPod(a.oldObject) !== isTerminatingPod(a.object);
      return a.operation === 'CREATE';
    }
    return a.subresource === 'resize' && a.operation === 'UPDATE';
  },
  matchingResources(input) {
    const out = input.filter((n) => POD_RESOURCES.includes(n));
    for (const n of input) {
      if (n.startsWith('hugepages-') || n.startsWith('requests.hugepages-')) out.push(n);
      else if (n.startsWith('requests.') && isExtendedResourceName(n.slice('requests.'.length))) out.push(n);
    }
    return out;
  },
  matchesScope(sel, pod) {
    switch (sel.scopeName) {
      case 'Terminating':
        return isTerminatingPod(pod);
      case 'NotTerminating':
        return !isTerminatingPod(pod);
      case 'BestEffort':
        return podQOS(pod) === 'BestEffort';
      case 'NotBestEffort':
        return podQOS(pod) !== 'BestEffort';
      case 'PriorityClass': {
        const pc = pod?.spec?.priorityClassName;
        if (sel.operator === 'Exists') return !!pc;
        return selectorMatches(sel, pc ? { PriorityClass: pc } : undefined);
      }
      case 'CrossNamespacePodAffinity':
        return crossNamespaceAffinity(pod);
      default:
        return false;
    }
  },
  usage(pod, now) {
    const result: ResourceList = new Map([['count/pods', one()]]);
    if (!chargedPod(pod, now)) return result;
    return addLists(result, podComputeUsage(podTotals(pod, 'requests', { overhead: true }), podTotals(pod, 'limits', { overhead: true })));
  },
  constraints(required, pod) {
    const req = required.filter((r) => VALIDATION_SET.has(r));
    if (req.length === 0) return undefined;
    const missing = new Map<string, Set<string>>();
    for (const { c } of allContainers(pod)) {
      const have = new Set(podComputeUsage(resourceList(c.resources?.requests), resourceList(c.resources?.limits)).keys());
      for (const r of req) {
        if (have.has(r)) continue;
        if (!missing.has(r)) missing.set(r, new Set());
        missing.get(r)!.add(c.name);
      }
    }
    if (missing.size === 0) return undefined;
    const parts = [...missing.keys()].sort().map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`);
    return `must specify ${parts.join('; ')}`;
  },
};

// -- services

export const serviceEvaluator: Evaluator = {
  group: '',
  resource: 'services',
  handles: (a) => a.operation === 'CREATE' || a.operation === 'UPDATE',
  matchingResources: (input) => input.filter((n) => ['count/services', 'services', 'services.loadbalancers', 'services.nodeports'].includes(n)),
  matchesScope: () => false,
  usage(svc) {
    const ports = asArray(svc?.spec?.ports).length;
    const r: ResourceList = new Map([
      ['count/services', one()],
      ['services', one()],
      ['services.loadbalancers', { ...ZERO_QUANTITY }],
      ['services.nodeports', { ...ZERO_QUANTITY }],
    ]);
    const type = svc?.spec?.type;
    if (type === 'NodePort') r.set('services.nodeports', count(ports));
    if (type === 'LoadBalancer') {
      r.set('services.nodeports', count(ports));
      r.set('services.loadbalancers', one());
    }
    return r;
  },
  constraints: () => undefined,
};

// -- persistent volume claims

const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';

function claimClass(pvc: any): string {
  const beta = pvc?.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'];
  if (typeof beta === 'string') return beta;
  return typeof pvc?.spec?.storageClassName === 'string' ? pvc.spec.storageClassName : '';
}

export const pvcEvaluator: Evaluator = {
  group: '',
  resource: 'persistentvolumeclaims',
  handles: (a) => a.operation === 'CREATE' || a.operation === 'UPDATE',
  matchingResources(input) {
    return input.filter(
      (n) =>
        n === 'count/persistentvolumeclaims' ||
        n === 'persistentvolumeclaims' ||
        n === 'requests.storage' ||
        n.endsWith(STORAGE_CLASS_SUFFIX + 'persistentvolumeclaims') ||
        n.endsWith(STORAGE_CLASS_SUFFIX + 'requests.storage'),
    );
  },
  matchesScope: () => false,
  usage(pvc) {
    const r: ResourceList = new Map([
      ['persistentvolumeclaims', one()],
      ['count/persistentvolumeclaims', one()],
    ]);
    const cls = claimClass(pvc);
    if (cls) r.set(cls + STORAGE_CLASS_SUFFIX + 'persistentvolumeclaims', one());
    let storage = parseQuantity(pvc?.spec?.resources?.requests?.storage);
    if (storage) {
      // whole bytes (RoundUp(0))
      const rem = storage.nano % 1_000_000_000n;
      if (rem !== 0n) storage = { nano: storage.nano - rem + (storage.nano > 0n ? 1_000_000_000n : 0n), format: storage.format };
      const allocated = parseQuantity(pvc?.status?.allocatedResources?.storage);
      if (allocated && cmpQuantity(allocated, storage) > 0) storage = allocated;
      r.set('requests.storage', storage);
      if (cls) r.set(cls + STORAGE_CLASS_SUFFIX + 'requests.storage', storage);
    }
    return r;
  },
  constraints: () => undefined,
};

const EVALUATORS = new Map<string, Evaluator>([
  ['/pods', podEvaluator],
  ['/services', serviceEvaluator],
  ['/persistentvolumeclaims', pvcEvaluator],
]);

/** resources quota never counts (virtual reviews, events) */
const IGNORED = new Set([
  '/events',
  'events.k8s.io/events',
  '/componentstatuses',
  '/bindings',
  'authentication.k8s.io/tokenreviews',
  'authentication.k8s.io/selfsubjectreviews',
  'authorization.k8s.io/subjectaccessreviews',
  'authorization.k8s.io/selfsubjectaccessreviews',
  'authorization.k8s.io/localsubjectaccessreviews',
  'authorization.k8s.io/selfsubjectrulesreviews',
]);

/** the object-count evaluators made so far, one per resource (asked on every write) */
const countEvaluators = new Map<string, Evaluator>();

export function evaluatorFor(group: string, resource: string): Evaluator {
  const key = `${group}/${resource}`;
  const e = EVALUATORS.get(key) ?? countEvaluators.get(key);
  if (e) return e;
  const made = objectCountEvaluator(group, resource);
  if (countEvaluators.size < 4096) countEvaluators.set(key, made);
  return made;
}

/** the evaluator whose resource a quota name counts (for recounting) */
function evaluatorForName(name: string): Evaluator | undefined {
  for (const e of EVALUATORS.values()) if (e.matchingResources([name]).length) return e;
  if (LEGACY_ALIASES[name]) return objectCountEvaluator('', name);
  if (name.startsWith('count/')) {
    const rest = name.slice('count/'.length);
    const dot = rest.indexOf('.');
    return dot < 0 ? objectCountEvaluator('', rest) : objectCountEvaluator(rest.slice(dot + 1), rest.slice(0, dot));
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// quotas

function scopeSelectors(quota: any): ScopeSelector[] {
  const out: ScopeSelector[] = asArray(quota?.spec?.scopes).map((s: string) => ({ scopeName: s, operator: 'Exists' }));
  for (const e of asArray(quota?.spec?.scopeSelector?.matchExpressions)) if (isObject(e)) out.push(e as ScopeSelector);
  return out;
}

/** the quota's hard limits: spec.hard (what the quota controller copies to status.hard) */
export function hardOf(quota: any): ResourceList {
  return resourceList(isObject(quota?.spec?.hard) ? quota.spec.hard : quota?.status?.hard);
}

function matches(e: Evaluator, quota: any, hard: ResourceList, obj: any): boolean {
  if (e.matchingResources([...hard.keys()]).length === 0) return false;
  return scopeSelectors(quota).every((s) => e.matchesScope(s, obj));
}

/**
 * What the objects stored in a namespace consume of a quota's hard resources (the quota
 * controller's recount): each evaluator lists its resource and sums the usage of the objects in
 * the quota's scopes.
 */
export function recountUsage(reader: ClusterReader, namespace: string, quota: any, now = Date.now()): ResourceList {
  const hard = hardOf(quota);
  const used: ResourceList = new Map();
  const byEvaluator = new Map<Evaluator, string[]>();
  for (const name of hard.keys()) {
    used.set(name, { ...ZERO_QUANTITY });
    const e = evaluatorForName(name);
    if (!e) continue;
    const key = [...byEvaluator.keys()].find((x) => x.group === e.group && x.resource === e.resource) ?? e;
    byEvaluator.set(key, [...(byEvaluator.get(key) ?? []), name]);
  }
  const scopes = scopeSelectors(quota);
  for (const [e, names] of byEvaluator) {
    let total: ResourceList = new Map();
    for (const obj of reader.list(e.group, e.resource, namespace)) {
      if (!scopes.every((s) => e.matchesScope(s, obj))) continue;
      total = addLists(total, e.usage(obj, now));
    }
    for (const [k, v] of mask(total, names)) used.set(k, v);
  }
  return used;
}

/** the resources (group and resource) whose objects a quota's hard limits count */
export function trackedResources(quota: any): { group: string; resource: string }[] {
  const out = new Map<string, { group: string; resource: string }>();
  for (const name of hardOf(quota).keys()) {
    const e = evaluatorForName(name);
    if (e) out.set(`${e.group}/${e.resource}`, { group: e.group, resource: e.resource });
  }
  return [...out.values()];
}

/** a quota's status as the controller and this plugin write it: hard from spec.hard, used of those names */
export function quotaStatus(hard: ResourceList, used: ResourceList): { hard: Record<string, string>; used: Record<string, string> } {
  return { hard: listToJSON(hard), used: listToJSON(mask(used, hard.keys())) };
}

interface Reservation {
  quota: string;
  namespace: string;
  /** the object: its name and uid (create) or the resourceVersion it replaces (update) */
  group: string;
  resource: string;
  name: string;
  uid?: string;
  replacedVersion?: string;
  delta: ResourceList;
  expires: number;
}

export interface ResourceQuotaOptions {
  now?: () => number;
  /** how long an admitted change is counted before the reader shows it (failed writes are forgotten then) */
  reservationMs?: number;
}

export function resourceQuota(reader: ClusterReader, writer: ClusterWriter, opts: ResourceQuotaOptions = {}): AdmissionPlugin {
  const now = opts.now ?? Date.now;
  const reservationMs = opts.reservationMs ?? 5_000;
  let reservations: Reservation[] = [];
  const locks = new Map<string, Promise<void>>();

  /** admitted changes the reader does not show yet */
  const pending = (namespace: string, quota: string): ResourceList => {
    const t = now();
    reservations = reservations.filter((r) => {
      if (r.expires < t) return false;
      const cur = reader.get(r.group, r.resource, r.namespace, r.name);
      if (r.replacedVersion !== undefined) return !cur || cur.metadata?.resourceVersion === r.replacedVersion;
      return !(cur && (!r.uid || cur.metadata?.uid === r.uid));
    });
    let sum: ResourceList = new Map();
    for (const r of reservations) if (r.namespace === namespace && r.quota === quota) sum = addLists(sum, r.delta);
    return sum;
  };

  const check = async (a: AdmissionAttributes): Promise<void> => {
    const e = evaluatorFor(a.resource.group, a.resource.resource);
    if (!e.handles(a)) return;
    const quotas = reader.list('', 'resourcequotas', a.namespace);
    if (quotas.length === 0) return;
    const obj = a.object;
    if (!isObject(obj)) return;
    const t = now();

    const interesting: { quota: any; hard: ResourceList }[] = [];
    for (const quota of quotas) {
      const hard = hardOf(quota);
      if (!matches(e, quota, hard, obj)) continue;
      const restricted = e.matchingResources([...hard.keys()]);
      const err = e.constraints(restricted, obj);
      if (err) throw forbidden(a, `failed quota: ${quota.metadata?.name ?? ''}: ${err}`);
      interesting.push({ quota, hard });
    }
    if (interesting.length === 0) return;

    const input = e.usage(obj, t);
    const negative = [...input.entries()].filter(([, v]) => v.nano < 0n).map(([k]) => k);
    if (negative.length) throw forbidden(a, `quota usage is negative for resource(s): ${negative.sort().join(',')}`);

    const deltas = new Map<any, ResourceList>();
    for (const q of interesting) deltas.set(q.quota, input);
    if (a.operation === 'UPDATE') {
      const prev = a.oldObject;
      if (!isObject(prev)) throw forbidden(a, 'unable to get previous usage since prior version of object was not found');
      if (prev.metadata?.resourceVersion) {
        const delta = subtractNonNegative(input, e.usage(prev, t));
        for (const q of interesting) if (matches(e, q.quota, q.hard, prev)) deltas.set(q.quota, delta);
      }
    }
    for (const [k, v] of deltas) {
      const z = removeZeros(v);
      if (z.size === 0) deltas.delete(k);
      else deltas.set(k, z);
    }
    if (deltas.size === 0) return;

    const writes: { name: string; hard: ResourceList; used: ResourceList; charged: ResourceList }[] = [];
    for (const { quota, hard } of interesting) {
      const delta = deltas.get(quota);
      if (!delta) continue;
      const name = quota.metadata?.name ?? '';
      const used = addLists(recountUsage(reader, a.namespace, quota, t), mask(pending(a.namespace, name), hard.keys()));
      const requested = mask(delta, hard.keys());
      const next = addLists(used, requested);
      if (a.subresource !== 'status') {
        const exceeded: string[] = [];
        for (const [k, v] of mask(next, requested.keys())) {
          const h = hard.get(k);
          if (h && cmpQuantity(v, h) > 0) exceeded.push(k);
        }
        if (exceeded.length) {
          throw forbidden(a, `exceeded quota: ${name}, requested: ${prettyPrint(mask(requested, exceeded))}, used: ${prettyPrint(mask(used, exceeded))}, limited: ${prettyPrint(mask(hard, exceeded))}`);
        }
      }
      writes.push({ name, hard, used: next, charged: requested });
    }
    if (a.dryRun) return;

    for (const w of writes) {
      if (w.charged.size === 0) continue;
      reservations.push({
        quota: w.name,
        namespace: a.namespace,
        group: a.resource.group,
        resource: a.resource.resource,
        name: obj.metadata?.name ?? a.name,
        uid: a.operation === 'CREATE' ? obj.metadata?.uid : undefined,
        replacedVersion: a.operation === 'UPDATE' ? a.oldObject?.metadata?.resourceVersion ?? '' : undefined,
        delta: w.charged,
        expires: t + reservationMs,
      });
    }
    for (const w of writes) {
      const status = quotaStatus(w.hard, w.used);
      try {
        await writer.updateStatus('', 'resourcequotas', a.namespace, w.name, (cur: any) => {
          cur.status = status;
          return cur;
        });
      } catch (err) {
        // the quota was deleted meanwhile: nothing to charge
        if (err instanceof StatusError && err.code === 404) continue;
        throw err instanceof StatusError ? err : errors.internal(err);
      }
    }
  };

  // one evaluation at a time per namespace: each sees the charges of the ones before it
  const evaluateInTurn = async (a: AdmissionAttributes): Promise<void> => {
    const prev = locks.get(a.namespace) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const chained = prev.then(() => mine);
    locks.set(a.namespace, chained);
    await prev;
    try {
      await check(a);
    } finally {
      release();
      if (locks.get(a.namespace) === chained) locks.delete(a.namespace);
    }
  };

  return {
    name: 'ResourceQuota',
    // synchronous (no promise) for what no quota can charge, and in a namespace without quotas
    validate(a) {
      if (!a.namespace) return;
      if (a.operation === 'CREATE' && a.kind.group === '' && a.kind.kind === 'Namespace') return;
      if (IGNORED.has(`${a.resource.group}/${a.resource.resource}`)) return;
      if (!evaluatorFor(a.resource.group, a.resource.resource).handles(a)) return;
      // a namespace without quotas has nothing to charge (most writes): no turn to wait for
      if (reader.list('', 'resourcequotas', a.namespace).length === 0) return;
      return evaluateInTurn(a);
    },
  };
}
