// What ResourceQuotas count (Kubernetes' quota evaluators, pkg/quota/v1/evaluator/core): the usage
// of an object by resource name (count/<resource>[.<group>] and the legacy count names for any
// resource; pods' compute resources, hugepages and extended resources by scope; services, their
// load balancers and node ports; claims' storage by class), a quota's hard limits, and the
// recount of a namespace's usage. Shared by the ResourceQuota admission plugin
// (apiserver/admission/resourcequota.ts) and the resource quota controller
// (controllers/resourcequota.ts), which reads the objects through its informers.
import { cmpQuantity, parseQuantity } from './validation/quantity.js';
import { addLists, listToJSON, mask, resourceList, ZERO_QUANTITY, type ResourceList } from './resourcelist.js';
import { allContainers, podQOS, podTotals } from './podresources.js';
import { matchLabels, type LabelOp } from '../machinery/selectors.js';
import { addGoSeconds } from '../machinery/time.js';

/** what an evaluator asks of a write to know whether it changes usage (an admission request) */
export interface QuotaRequest {
  operation: string;
  subresource: string;
  object?: any;
  oldObject?: any;
}

/** the objects of a resource in a namespace */
export type Lister = (group: string, resource: string, namespace: string) => any[];

function isObject(v: unknown): v is Record<string, any> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function asArray<T = any>(v: unknown): T[] {
  return Array.isArray(v) ? (v as T[]) : [];
}

export interface ScopeSelector {
  scopeName: string;
  operator: string;
  values?: string[];
}

export interface Evaluator {
  group: string;
  resource: string;
  /** does this request change usage */
  handles(a: QuotaRequest): boolean;
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
export const IGNORED = new Set([
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

export function matches(e: Evaluator, quota: any, hard: ResourceList, obj: any): boolean {
  if (e.matchingResources([...hard.keys()]).length === 0) return false;
  return scopeSelectors(quota).every((s) => e.matchesScope(s, obj));
}

/**
 * What the objects stored in a namespace consume of a quota's hard resources (the quota
 * controller's recount): each evaluator lists its resource and sums the usage of the objects in
 * the quota's scopes.
 */
export function recountUsage(list: Lister, namespace: string, quota: any, now = Date.now()): ResourceList {
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
    for (const obj of list(e.group, e.resource, namespace)) {
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

