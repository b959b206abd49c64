// The scheduling framework's pure half: what kube-scheduler's default plugins decide about one pod
// and one node, with no I/O, so that it can be tested with hand-made objects.
//
//   filters (in the default profile's order, a node stops at the first that rejects it):
//     NodeUnschedulable  spec.unschedulable, unless the pod tolerates node.kubernetes.io/unschedulable:NoSchedule
//     NodeName           spec.nodeName names another node
//     TaintToleration    the first NoSchedule/NoExecute taint the pod does not tolerate
//     NodeAffinity       spec.nodeSelector and requiredDuringSchedulingIgnoredDuringExecution
//                        (its PreFilter narrows the nodes to the names of matchFields metadata.name In)
//     NodePorts          a hostPort (protocol, IP) already used on the node
//     NodeResourcesFit   pods against allocatable `pods`, then the pod's requests (containers,
//                        init containers, sidecars, overhead) against allocatable minus what the
//                        node's pods request
//     VolumeBinding      the pod's PersistentVolumeClaims (volumebinding.ts; its PreFilter, and its
//                        PreBind's writes and wait, are run by scheduler.ts)
//   scores (normalized to 0..100, weighted as the default profile weighs them):
//     TaintToleration 3 (PreferNoSchedule taints not tolerated, fewer is better)
//     NodeAffinity 2 (the weights of the preferred terms that match)
//     NodeResourcesFit 1 (LeastAllocated over cpu and memory, with 100m / 200Mi for a container
//                        that requests nothing; MostAllocated when a profile asks for it)
//     NodeResourcesBalancedAllocation 1 (how evenly cpu and memory are used; skipped for a pod
//                        that requests nothing)
//     ImageLocality 1 (the sizes of the pod's images already on the node, scaled by their spread)
//   the FitError message (`0/N nodes are available: <sorted counts of reasons>.`), followed by
//   DefaultPreemption's (preemption.ts) when it found nothing to preempt.
//
// Kubernetes' PodTopologySpread and InterPodAffinity plugins, which read the pods of every node,
// are in interpod.ts; they run after NodeResourcesFit (ClusterFilters) and score with weight 2
// each.
import { addLists, resourceList, type ResourceList } from '../schema/resourcelist.js';
import { cmpQuantity, quantityMilliValue, quantityValue, type Quantity } from '../schema/validation/quantity.js';

export const MAX_NODE_SCORE = 100;
/** schedutil.DefaultMilliCPURequest and DefaultMemoryRequest: what a container without requests counts for scoring */
export const DEFAULT_MILLI_CPU_REQUEST = 100n;
export const DEFAULT_MEMORY_REQUEST = 200n * 1024n * 1024n;

export const ERR_NODE_NAME = "node(s) didn't match the requested node name";
export const ERR_UNSCHEDULABLE = 'node(s) were unschedulable';
export const ERR_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector";
export const ERR_AFFINITY_CONFLICT = 'pod affinity terms conflict';
export const ERR_NODE_PORTS = "node(s) didn't have free ports for the requested pod ports";
export const ERR_NO_NODES = 'no nodes available to schedule pods';
export const PREEMPTION_NOT_HELPFUL = 'Preemption is not helpful for scheduling';
export const NO_PREEMPTION_VICTIMS = 'No preemption victims found for incoming pod';

// ── statuses ────────────────────────────────────────────────────────────────

/** Unschedulable: preemption might help; UnschedulableAndUnresolvable: it cannot */
export type Code = 'Unschedulable' | 'UnschedulableAndUnresolvable';

export interface Status {
  code: Code;
  reasons: string[];
  plugin: string;
}

const status = (plugin: string, code: Code, ...reasons: string[]): Status => ({ code, reasons, plugin });

// ── resources ───────────────────────────────────────────────────────────────

/** framework.Resource: cpu in millicores, the rest in units, every other countable resource by name */
export interface Resource {
  milliCPU: bigint;
  memory: bigint;
  ephemeralStorage: bigint;
  pods: bigint;
  scalar: Map<string, bigint>;
}

export function emptyResource(): Resource {
  return { milliCPU: 0n, memory: 0n, ephemeralStorage: 0n, pods: 0n, scalar: new Map() };
}

/** schedutil.IsScalarResourceName: extended resources (a domain-prefixed name), hugepages and attachable volumes */
export function isScalarResourceName(name: string): boolean {
  return name.includes('/') || name.startsWith('hugepages-') || name.startsWith('attachable-volumes-');
}

/** Resource.Add of a ResourceList */
export function addResourceList(r: Resource, list: ResourceList): void {
  for (const [name, q] of list) {
    switch (name) {
      case 'cpu':
        r.milliCPU += quantityMilliValue(q);
        break;
      case 'memory':
        r.memory += quantityValue(q);
        break;
      case 'ephemeral-storage':
        r.ephemeralStorage += quantityValue(q);
        break;
      case 'pods':
        r.pods += quantityValue(q);
        break;
      default:
        if (isScalarResourceName(name)) r.scalar.set(name, (r.scalar.get(name) ?? 0n) + quantityValue(q));
    }
  }
}

export function resourceOf(list: ResourceList): Resource {
  const r = emptyResource();
  addResourceList(r, list);
  return r;
}

function addResource(a: Resource, b: Resource, sign: 1n | -1n): void {
  a.milliCPU += sign * b.milliCPU;
  a.memory += sign * b.memory;
  a.ephemeralStorage += sign * b.ephemeralStorage;
  a.pods += sign * b.pods;
  for (const [k, v] of b.scalar) a.scalar.set(k, (a.scalar.get(k) ?? 0n) + sign * v);
}

function isObject(v: unknown): v is Record<string, any> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
function arr<T = any>(v: unknown): T[] {
  return Array.isArray(v) ? (v as T[]) : [];
}

function maxInto(list: ResourceList, other: ResourceList): void {
  for (const [k, v] of other) {
    const cur = list.get(k);
    if (!cur || cmpQuantity(v, cur) > 0) list.set(k, v);
  }
}

const NON_MISSING: [string, Quantity][] = [
  ['cpu', { nano: DEFAULT_MILLI_CPU_REQUEST * 1_000_000n, format: 'DecimalSI' }],
  ['memory', { nano: DEFAULT_MEMORY_REQUEST * 1_000_000_000n, format: 'DecimalSI' }],
];

/**
 * A container's requests; for a pod whose node reports the container's resources (in-place
 * resize), the larger of the spec's and the status' (determineContainerReqs: a resize under way
 * counts at its larger size), or the status' alone when the resize is infeasible.
 */
function containerRequests(c: any, nonMissing: boolean, status?: any, infeasible = false): ResourceList {
  let reqs = resourceList(c?.resources?.requests);
  if (isObject(status?.resources)) {
    const actual = resourceList(status.resources.requests);
    if (infeasible) reqs = actual;
    else maxInto(reqs, actual);
  }
  if (nonMissing) for (const [k, v] of NON_MISSING) if (!reqs.has(k)) reqs.set(k, v);
  return reqs;
}

/**
 * resourcehelper.PodRequests (with UseStatusResources): the sum of the containers and of the restartable init containers
 * (sidecars), at least what each ordinary init container needs with the sidecars started before
 * it, plus the overhead. With `nonMissing`, a container without a cpu or memory request counts
 * 100m and 200Mi (NonMissingContainerRequests, what scoring and NonZeroRequested use).
 */
export function podRequests(pod: any, nonMissing = false): ResourceList {
  const spec = isObject(pod?.spec) ? pod.spec : {};
  const statuses = new Map<string, any>([...arr(pod?.status?.initContainerStatuses), ...arr(pod?.status?.containerStatuses)].filter(isObject).map((cs: any) => [cs.name, cs]));
  const infeasible = arr(pod?.status?.conditions).some((x: any) => x?.type === 'PodResizePending' && x?.reason === 'Infeasible');
  let reqs: ResourceList = new Map();
  for (const c of arr(spec.containers)) reqs = addLists(reqs, containerRequests(c, nonMissing, statuses.get(c?.name), infeasible));
  let sidecars: ResourceList = new Map();
  const initMax: ResourceList = new Map();
  for (const c of arr(spec.initContainers)) {
    const own = containerRequests(c, nonMissing, c?.restartPolicy === 'Always' ? statuses.get(c?.name) : undefined, infeasible);
    if (c?.restartPolicy === 'Always') {
      reqs = addLists(reqs, own);
      sidecars = addLists(sidecars, own);
      maxInto(initMax, sidecars);
    } else maxInto(initMax, addLists(own, sidecars));
  }
  maxInto(reqs, initMax);
  if (isObject(spec.overhead)) reqs = addLists(reqs, resourceList(spec.overhead));
  return reqs;
}

// ── host ports ──────────────────────────────────────────────────────────────

export interface HostPort {
  ip: string;
  protocol: string;
  port: number;
}

const ANY_IP = '0.0.0.0';
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** HostPortInfo.sanitize: an unparsable or empty IP is 0.0.0.0, an empty protocol TCP */
function sanitizeIP(ip: unknown): string {
  if (typeof ip !== 'string' || ip === '') return ANY_IP;
  if (IPV4.test(ip) || (ip.includes(':') && /^[0-9a-fA-F:.]+$/.test(ip))) return ip;
  return ANY_IP;
}

/** the host ports a pod holds: its containers' and its sidecars' (restartable init containers) */
export function podHostPorts(pod: any): HostPort[] {
  const out: HostPort[] = [];
  const spec = isObject(pod?.spec) ? pod.spec : {};
  const containers = [...arr(spec.initContainers).filter((c) => c?.restartPolicy === 'Always'), ...arr(spec.containers)];
  for (const c of containers) {
    for (const p of arr(c?.ports)) {
      const port = Number(p?.hostPort ?? 0);
      if (!(port > 0)) continue;
      out.push({ ip: sanitizeIP(p?.hostIP), protocol: typeof p?.protocol === 'string' && p.protocol ? p.protocol : 'TCP', port });
    }
  }
  return out;
}

/** HostPortInfo: IP -> protocol/port */
export class HostPortSet {
  private readonly byIP = new Map<string, Map<string, number>>();

  add(p: HostPort): void {
    let m = this.byIP.get(p.ip);
    if (!m) this.byIP.set(p.ip, (m = new Map()));
    const k = `${p.protocol}/${p.port}`;
    m.set(k, (m.get(k) ?? 0) + 1);
  }

  remove(p: HostPort): void {
    const m = this.byIP.get(p.ip);
    const k = `${p.protocol}/${p.port}`;
    const n = m?.get(k);
    if (!m || n === undefined) return;
    if (n <= 1) m.delete(k);
    else m.set(k, n - 1);
    if (m.size === 0) this.byIP.delete(p.ip);
  }

  /** CheckConflict: 0.0.0.0 conflicts with the same protocol/port on any IP, any IP with 0.0.0.0 and itself */
  conflicts(p: HostPort): boolean {
    if (p.port <= 0) return false;
    const k = `${p.protocol}/${p.port}`;
    if (p.ip === ANY_IP) {
      for (const m of this.byIP.values()) if (m.has(k)) return true;
      return false;
    }
    return !!(this.byIP.get(ANY_IP)?.has(k) || this.byIP.get(p.ip)?.has(k));
  }
}

// ── the pod and the node as the plugins see them ────────────────────────────

/** what a pod on a node counts for (NodeInfo keeps no more of it) */
export interface PodSummary {
  uid: string;
  /** namespace/name */
  key: string;
  priority: number;
  requests: Resource;
  /** cpu (millicores) and memory with the defaults for containers without requests */
  nonZeroCPU: bigint;
  nonZeroMemory: bigint;
  ports: HostPort[];
  /** status.startTime in ms (not started: the largest number, the least important of its priority) */
  startTime: number;
  /** being deleted by an earlier preemption (deletionTimestamp and DisruptionTarget PreemptionByScheduler) */
  preempted: boolean;
}

export function summarizePod(pod: any): PodSummary {
  const nonZero = resourceOf(podRequests(pod, true));
  const started = Date.parse(pod?.status?.startTime ?? '');
  const conds = Array.isArray(pod?.status?.conditions) ? pod.status.conditions : [];
  return {
    uid: String(pod?.metadata?.uid ?? ''),
    key: `${pod?.metadata?.namespace ?? ''}/${pod?.metadata?.name ?? ''}`,
    priority: podPriority(pod),
    requests: resourceOf(podRequests(pod)),
    nonZeroCPU: nonZero.milliCPU,
    nonZeroMemory: nonZero.memory,
    ports: podHostPorts(pod),
    startTime: Number.isFinite(started) ? started : Number.MAX_SAFE_INTEGER,
    preempted: !!pod?.metadata?.deletionTimestamp && conds.some((c: any) => c?.type === 'DisruptionTarget' && c?.status === 'True' && c?.reason === 'PreemptionByScheduler'),
  };
}

export function podPriority(pod: any): number {
  const p = pod?.spec?.priority;
  return typeof p === 'number' && Number.isFinite(p) ? p : 0;
}

/** framework.NodeInfo, reduced to what the plugins read */
export interface NodeInfo {
  node: any;
  name: string;
  allocatable: Resource;
  /** the sum of the pods' requests */
  requested: Resource;
  nonZeroCPU: bigint;
  nonZeroMemory: bigint;
  pods: PodSummary[];
  usedPorts: HostPortSet;
}

export function newNodeInfo(node: any, pods: PodSummary[] = []): NodeInfo {
  const info: NodeInfo = {
    node,
    name: String(node?.metadata?.name ?? ''),
    allocatable: resourceOf(resourceList(node?.status?.allocatable)),
    requested: emptyResource(),
    nonZeroCPU: 0n,
    nonZeroMemory: 0n,
    pods: [],
    usedPorts: new HostPortSet(),
  };
  for (const p of pods) addPod(info, p);
  return info;
}

export function addPod(info: NodeInfo, p: PodSummary): void {
  info.pods.push(p);
  addResource(info.requested, p.requests, 1n);
  info.nonZeroCPU += p.nonZeroCPU;
  info.nonZeroMemory += p.nonZeroMemory;
  for (const hp of p.ports) info.usedPorts.add(hp);
}

export function removePod(info: NodeInfo, uid: string): boolean {
  const i = info.pods.findIndex((p) => p.uid === uid);
  if (i < 0) return false;
  const [p] = info.pods.splice(i, 1);
  addResource(info.requested, p!.requests, -1n);
  info.nonZeroCPU -= p!.nonZeroCPU;
  info.nonZeroMemory -= p!.nonZeroMemory;
  for (const hp of p!.ports) info.usedPorts.remove(hp);
  return true;
}

// ── tolerations and taints ──────────────────────────────────────────────────

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

/** Toleration.ToleratesTaint */
export function toleratesTaint(t: any, taint: Taint): boolean {
  if (t?.effect && t.effect !== taint.effect) return false;
  if (t?.key && t.key !== taint.key) return false;
  switch (t?.operator ?? '') {
    case '':
    case 'Equal':
      return (t?.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

export function tolerationsTolerateTaint(tolerations: any[], taint: Taint): boolean {
  return tolerations.some((t) => toleratesTaint(t, taint));
}

/** FindMatchingUntoleratedTaint over the NoSchedule and NoExecute taints */
export function untoleratedTaint(node: any, tolerations: any[]): Taint | undefined {
  for (const taint of arr<Taint>(node?.spec?.taints)) {
    if (taint?.effect !== 'NoSchedule' && taint?.effect !== 'NoExecute') continue;
    if (!tolerationsTolerateTaint(tolerations, taint)) return taint;
  }
  return undefined;
}

// ── node selectors ──────────────────────────────────────────────────────────

const INT64 = /^[+-]?\d+$/;

/** one NodeSelectorRequirement against the node's labels (an invalid one matches nothing) */
function matchExpression(e: any, labels: Record<string, string>): boolean {
  const key = String(e?.key ?? '');
  const values: string[] = arr<string>(e?.values).map(String);
  const has = Object.prototype.hasOwnProperty.call(labels, key);
  const v = has ? String(labels[key]) : '';
  switch (e?.operator) {
    case 'In':
      return values.length > 0 && has && values.includes(v);
    case 'NotIn':
      return values.length > 0 && (!has || !values.includes(v));
    case 'Exists':
      return values.length === 0 && has;
    case 'DoesNotExist':
      return values.length === 0 && !has;
    case 'Gt':
    case 'Lt': {
      if (values.length !== 1 || !INT64.test(values[0]!) || !has || !INT64.test(v)) return false;
      const a = BigInt(v);
      const b = BigInt(values[0]!);
      return e.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

/** one matchFields requirement against the node's fields (metadata.name only; In/NotIn with one value) */
function matchField(e: any, nodeName: string): boolean {
  const values = arr<string>(e?.values).map(String);
  if (values.length !== 1) return false;
  const actual = e?.key === 'metadata.name' ? nodeName : '';
  if (e?.operator === 'In') return actual === values[0];
  if (e?.operator === 'NotIn') return actual !== values[0];
  return false;
}

function isEmptyTerm(term: any): boolean {
  return arr(term?.matchExpressions).length === 0 && arr(term?.matchFields).length === 0;
}

/** a NodeSelectorTerm: every expression and every field requirement */
export function matchNodeSelectorTerm(term: any, node: any): boolean {
  const labels: Record<string, string> = isObject(node?.metadata?.labels) ? node.metadata.labels : {};
  const name = String(node?.metadata?.name ?? '');
  if (isEmptyTerm(term)) return false;
  return arr(term.matchExpressions).every((e) => matchExpression(e, labels)) && arr(term.matchFields).every((e) => matchField(e, name));
}

/** GetRequiredNodeAffinity(pod).Match(node): spec.nodeSelector and the required terms (ORed; empty terms skipped) */
export function matchesRequiredNodeAffinity(pod: any, node: any): boolean {
  const sel = pod?.spec?.nodeSelector;
  if (isObject(sel)) {
    const labels: Record<string, string> = isObject(node?.metadata?.labels) ? node.metadata.labels : {};
    for (const [k, v] of Object.entries(sel)) if (!Object.prototype.hasOwnProperty.call(labels, k) || labels[k] !== v) return false;
  }
  const required = pod?.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!isObject(required)) return true;
  return arr(required.nodeSelectorTerms).some((t) => !isEmptyTerm(t) && matchNodeSelectorTerm(t, node));
}

/**
 * NodeAffinity's PreFilter: the node names the required terms allow through matchFields
 * metadata.name In, when every term names some (undefined: all nodes); a conflict (no name left)
 * rejects the pod on every node.
 */
export function nodeAffinityPreFilter(pod: any): { names?: Set<string>; conflict?: boolean } {
  const terms = arr(pod?.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms);
  if (terms.length === 0) return {};
  let names: Set<string> | undefined;
  for (const t of terms) {
    let termNames: Set<string> | undefined;
    for (const r of arr(t?.matchFields)) {
      if (r?.key !== 'metadata.name' || r?.operator !== 'In') continue;
      const s = new Set(arr<string>(r.values).map(String));
      termNames = termNames === undefined ? s : new Set([...termNames].filter((n) => s.has(n)));
    }
    if (termNames === undefined) return {};
    names = new Set([...(names ?? []), ...termNames]);
  }
  if (names && names.size === 0) return { conflict: true };
  return { names };
}

// ── the filters ─────────────────────────────────────────────────────────────

/** the filters a profile can turn off; each in the default profile's order */
export const FILTER_PLUGINS = ['NodeUnschedulable', 'NodeName', 'TaintToleration', 'NodeAffinity', 'NodePorts', 'NodeResourcesFit', 'VolumeBinding', 'PodTopologySpread', 'InterPodAffinity'] as const;
export type FilterPlugin = (typeof FILTER_PLUGINS)[number];
/** the filters that read the pods on the node, or on every node (the rest read the Node alone) */
export const POD_DEPENDENT_FILTERS: ReadonlySet<FilterPlugin> = new Set(['NodePorts', 'NodeResourcesFit', 'PodTopologySpread', 'InterPodAffinity']);

/** the filters of interpod.ts, bound to their PreFilter states over every node's pods */
export interface ClusterFilters {
  /** VolumeBinding's Filter (volumebinding.ts), bound to its PreFilter state */
  volumes?(info: NodeInfo): Status | undefined;
  spread?(info: NodeInfo): Status | undefined;
  interPod?(info: NodeInfo): Status | undefined;
}

export function filterNodeUnschedulable(pod: any, node: any): Status | undefined {
  if (!node?.spec?.unschedulable) return undefined;
  const tolerates = tolerationsTolerateTaint(arr(pod?.spec?.tolerations), { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' });
  return tolerates ? undefined : status('NodeUnschedulable', 'UnschedulableAndUnresolvable', ERR_UNSCHEDULABLE);
}

export function filterNodeName(pod: any, node: any): Status | undefined {
  const want = pod?.spec?.nodeName;
  if (!want || want === node?.metadata?.name) return undefined;
  return status('NodeName', 'UnschedulableAndUnresolvable', ERR_NODE_NAME);
}

export function filterTaintToleration(pod: any, node: any): Status | undefined {
  const taint = untoleratedTaint(node, arr(pod?.spec?.tolerations));
  if (!taint) return undefined;
  return status('TaintToleration', 'UnschedulableAndUnresolvable', `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`);
}

export function filterNodeAffinity(pod: any, node: any): Status | undefined {
  return matchesRequiredNodeAffinity(pod, node) ? undefined : status('NodeAffinity', 'UnschedulableAndUnresolvable', ERR_NODE_AFFINITY);
}

export function filterNodePorts(ports: HostPort[], info: NodeInfo): Status | undefined {
  for (const p of ports) if (info.usedPorts.conflicts(p)) return status('NodePorts', 'Unschedulable', ERR_NODE_PORTS);
  return undefined;
}

/** a resource the pod's requests do not fit in what the node has left (noderesources.InsufficientResource) */
export interface InsufficientResource {
  resource: string;
  requested: bigint;
  used: bigint;
  capacity: bigint;
}

/**
 * fitsRequest: each resource the pod's requests (`req`, `pods` counting one) do not fit in, in the
 * order pods, cpu, memory, ephemeral-storage, then the scalar resources. The scheduler words these as
 * reasons, the kubelet's admission as its rejection messages.
 */
export function insufficientResources(req: Resource, info: NodeInfo): InsufficientResource[] {
  const out: InsufficientResource[] = [];
  const a = info.allocatable;
  const r = info.requested;
  const used = BigInt(info.pods.length);
  if (used + 1n > a.pods) out.push({ resource: 'pods', requested: 1n, used, capacity: a.pods });
  if (req.milliCPU === 0n && req.memory === 0n && req.ephemeralStorage === 0n && req.scalar.size === 0) return out;
  const check = (resource: string, want: bigint, used: bigint, capacity: bigint) => {
    if (want > 0n && want > capacity - used) out.push({ resource, requested: want, used, capacity });
  };
  check('cpu', req.milliCPU, r.milliCPU, a.milliCPU);
  check('memory', req.memory, r.memory, a.memory);
  check('ephemeral-storage', req.ephemeralStorage, r.ephemeralStorage, a.ephemeralStorage);
  for (const [name, want] of req.scalar) check(name, want, r.scalar.get(name) ?? 0n, a.scalar.get(name) ?? 0n);
  return out;
}

export function filterNodeResourcesFit(req: Resource, info: NodeInfo): Status | undefined {
  const reasons = insufficientResources(req, info).map((x) => (x.resource === 'pods' ? 'Too many pods' : `Insufficient ${x.resource}`));
  return reasons.length ? status('NodeResourcesFit', 'Unschedulable', ...reasons) : undefined;
}

/** what the filters need of a pod, computed once per attempt */
export interface PodInfo {
  pod: any;
  priority: number;
  requests: Resource;
  /** requests with the defaults for containers without cpu/memory requests (LeastAllocated's) */
  nonZero: Resource;
  ports: HostPort[];
  summary: PodSummary;
}

export function newPodInfo(pod: any): PodInfo {
  const summary = summarizePod(pod);
  return {
    pod,
    priority: summary.priority,
    requests: summary.requests,
    nonZero: resourceOf(podRequests(pod, true)),
    ports: summary.ports,
    summary,
  };
}

/** the filters that read the Node alone, in order; the first rejection */
export function runNodeFilters(p: PodInfo, node: any, enabled: ReadonlySet<FilterPlugin>): Status | undefined {
  if (enabled.has('NodeUnschedulable')) {
    const s = filterNodeUnschedulable(p.pod, node);
    if (s) return s;
  }
  if (enabled.has('NodeName')) {
    const s = filterNodeName(p.pod, node);
    if (s) return s;
  }
  if (enabled.has('TaintToleration')) {
    const s = filterTaintToleration(p.pod, node);
    if (s) return s;
  }
  if (enabled.has('NodeAffinity')) {
    const s = filterNodeAffinity(p.pod, node);
    if (s) return s;
  }
  return undefined;
}

/** the filters that read the node's pods (and, with `cluster`, every node's), in order; the first rejection */
export function runPodFilters(p: PodInfo, info: NodeInfo, enabled: ReadonlySet<FilterPlugin>, cluster?: ClusterFilters): Status | undefined {
  if (enabled.has('NodePorts') && p.ports.length) {
    const s = filterNodePorts(p.ports, info);
    if (s) return s;
  }
  if (enabled.has('NodeResourcesFit')) {
    const s = filterNodeResourcesFit(p.requests, info);
    if (s) return s;
  }
  if (enabled.has('VolumeBinding') && cluster?.volumes) {
    const s = cluster.volumes(info);
    if (s) return s;
  }
  if (enabled.has('PodTopologySpread') && cluster?.spread) {
    const s = cluster.spread(info);
    if (s) return s;
  }
  if (enabled.has('InterPodAffinity') && cluster?.interPod) {
    const s = cluster.interPod(info);
    if (s) return s;
  }
  return undefined;
}

// ── messages ────────────────────────────────────────────────────────────────

/**
 * FitError.Error(): `0/N nodes are available: <counts>.` where each node counts once per reason of
 * its status, the nodes without an explicit status count with `absent`'s reasons, and the
 * `<count> <reason>` strings are sorted as strings (so "10 x" sorts before "2 y", as in Go); a
 * PreFilter rejection shows its message instead; the PostFilter message follows.
 */
export function fitErrorMessage(o: { numAllNodes: number; statuses: ReadonlyMap<string, Status>; absent?: Status; preFilterMsg?: string; postFilterMsg?: string }): string {
  let msg = `0/${o.numAllNodes} nodes are available:`;
  if (o.preFilterMsg) msg += ` ${o.preFilterMsg}.`;
  else {
    const counts = new Map<string, number>();
    for (const s of o.statuses.values()) for (const r of s.reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
    if (o.statuses.size < o.numAllNodes && o.absent) {
      for (const r of o.absent.reasons) counts.set(r, (counts.get(r) ?? 0) + (o.numAllNodes - o.statuses.size));
    }
    const parts = [...counts].map(([r, n]) => `${n} ${r}`).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    if (parts.length) msg += ` ${parts.join(', ')}.`;
  }
  if (o.postFilterMsg) msg += ` ${o.postFilterMsg}`;
  return msg;
}

// ── scores ──────────────────────────────────────────────────────────────────

export const SCORE_PLUGINS = ['TaintToleration', 'NodeAffinity', 'NodeResourcesFit', 'NodeResourcesBalancedAllocation', 'ImageLocality', 'PodTopologySpread', 'InterPodAffinity'] as const;
export type ScorePlugin = (typeof SCORE_PLUGINS)[number];
/** the default profile's weights */
export const DEFAULT_SCORE_WEIGHTS: Readonly<Record<ScorePlugin, number>> = {
  TaintToleration: 3,
  NodeAffinity: 2,
  NodeResourcesFit: 1,
  NodeResourcesBalancedAllocation: 1,
  ImageLocality: 1,
  PodTopologySpread: 2,
  InterPodAffinity: 2,
};

export interface ResourceSpec {
  name: string;
  weight: number;
}
export const DEFAULT_RESOURCE_SPECS: readonly ResourceSpec[] = [
  { name: 'cpu', weight: 1 },
  { name: 'memory', weight: 1 },
];

export interface ScoringConfig {
  weights: Readonly<Record<ScorePlugin, number>>;
  /** NodeResourcesFit's scoringStrategy */
  fitStrategy: 'LeastAllocated' | 'MostAllocated';
  fitResources: readonly ResourceSpec[];
  balancedResources: readonly ResourceSpec[];
}

export const DEFAULT_SCORING: ScoringConfig = {
  weights: DEFAULT_SCORE_WEIGHTS,
  fitStrategy: 'LeastAllocated',
  fitResources: DEFAULT_RESOURCE_SPECS,
  balancedResources: DEFAULT_RESOURCE_SPECS,
};

/** countIntolerableTaintsPreferNoSchedule (tolerations of effect PreferNoSchedule or none) */
export function scoreTaintToleration(pod: any, node: any): number {
  const tolerations = arr(pod?.spec?.tolerations).filter((t) => !t?.effect || t.effect === 'PreferNoSchedule');
  let n = 0;
  for (const taint of arr<Taint>(node?.spec?.taints)) if (taint?.effect === 'PreferNoSchedule' && !tolerationsTolerateTaint(tolerations, taint)) n++;
  return n;
}

/** the sum of the weights of the preferred terms the node matches (terms of weight 0 or empty are skipped) */
export function scoreNodeAffinity(pod: any, node: any): number {
  let score = 0;
  for (const t of arr(pod?.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution)) {
    const w = Number(t?.weight ?? 0);
    if (!w || isEmptyTerm(t?.preference)) continue;
    const pref = t.preference;
    const labels: Record<string, string> = isObject(node?.metadata?.labels) ? node.metadata.labels : {};
    const name = String(node?.metadata?.name ?? '');
    if (arr(pref.matchExpressions).every((e) => matchExpression(e, labels)) && arr(pref.matchFields).every((e) => matchField(e, name))) score += w;
  }
  return score;
}

export function hasPreferredNodeAffinity(pod: any): boolean {
  return arr(pod?.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution).length > 0;
}

function resourceAmount(r: Resource, name: string): bigint {
  switch (name) {
    case 'cpu':
      return r.milliCPU;
    case 'memory':
      return r.memory;
    case 'ephemeral-storage':
      return r.ephemeralStorage;
    default:
      return r.scalar.get(name) ?? 0n;
  }
}

/**
 * calculateResourceAllocatableRequest: the node's allocatable and what would be requested with the
 * pod: NonZeroRequested for cpu and memory unless `useRequested`; (0, 0), skipping the resource,
 * for an extended resource the pod does not request or the node does not have
 */
function allocatableAndRequest(info: NodeInfo, name: string, podRequest: bigint, useRequested: boolean): [bigint, bigint] {
  if (podRequest === 0n && isScalarResourceName(name)) return [0n, 0n];
  if (name === 'cpu') return [info.allocatable.milliCPU, (useRequested ? info.requested.milliCPU : info.nonZeroCPU) + podRequest];
  if (name === 'memory') return [info.allocatable.memory, (useRequested ? info.requested.memory : info.nonZeroMemory) + podRequest];
  if (name === 'ephemeral-storage') return [info.allocatable.ephemeralStorage, info.requested.ephemeralStorage + podRequest];
  if (info.allocatable.scalar.has(name)) return [info.allocatable.scalar.get(name)!, (info.requested.scalar.get(name) ?? 0n) + podRequest];
  return [0n, 0n];
}

/** NodeResourcesFit's score: LeastAllocated ((alloc - requested) * 100 / alloc) or MostAllocated, weighted by resource */
export function scoreNodeResourcesFit(p: PodInfo, info: NodeInfo, cfg: Pick<ScoringConfig, 'fitStrategy' | 'fitResources'> = DEFAULT_SCORING): number {
  let nodeScore = 0n;
  let weightSum = 0n;
  for (const r of cfg.fitResources) {
    const [alloc, req] = allocatableAndRequest(info, r.name, resourceAmount(p.nonZero, r.name), false);
    if (alloc === 0n) continue;
    let s: bigint;
    if (cfg.fitStrategy === 'MostAllocated') s = ((req > alloc ? alloc : req) * BigInt(MAX_NODE_SCORE)) / alloc;
    else s = req > alloc ? 0n : ((alloc - req) * BigInt(MAX_NODE_SCORE)) / alloc;
    nodeScore += s * BigInt(r.weight);
    weightSum += BigInt(r.weight);
  }
  return weightSum === 0n ? 0 : Number(nodeScore / weightSum);
}

/** whether BalancedAllocation skips the pod: it requests none of the resources (a best-effort pod) */
export function balancedAllocationSkips(p: PodInfo, resources: readonly ResourceSpec[] = DEFAULT_RESOURCE_SPECS): boolean {
  return resources.every((r) => resourceAmount(p.requests, r.name) === 0n);
}

/** BalancedAllocation: (1 - the standard deviation of the requested fractions) * 100, with the pod's actual requests */
export function scoreBalancedAllocation(p: PodInfo, info: NodeInfo, resources: readonly ResourceSpec[] = DEFAULT_RESOURCE_SPECS): number {
  const fractions: number[] = [];
  let total = 0;
  for (const r of resources) {
    const [alloc, req] = allocatableAndRequest(info, r.name, resourceAmount(p.requests, r.name), true);
    if (alloc === 0n) continue;
    let f = Number(req) / Number(alloc);
    if (f > 1) f = 1;
    total += f;
    fractions.push(f);
  }
  let std = 0;
  if (fractions.length === 2) std = Math.abs((fractions[0]! - fractions[1]!) / 2);
  else if (fractions.length > 2) {
    const mean = total / fractions.length;
    let sum = 0;
    for (const f of fractions) sum += (f - mean) * (f - mean);
    std = Math.sqrt(sum / fractions.length);
  }
  return Math.trunc((1 - std) * MAX_NODE_SCORE);
}

const MB = 1024 * 1024;
const MIN_IMAGE_THRESHOLD = 23 * MB;
const MAX_CONTAINER_IMAGE_THRESHOLD = 1000 * MB;

/** normalizedImageName: `:latest` for a name without a tag or digest */
export function normalizedImageName(name: string): string {
  return name.lastIndexOf(':') <= name.lastIndexOf('/') ? `${name}:latest` : name;
}

/** image name -> size on this node, and on how many nodes each name is (ImageStateSummary) */
export interface ImageStates {
  sizes(node: any): Map<string, number>;
  numNodes(name: string): number;
  totalNodes: number;
}

export function imageStates(nodes: readonly any[]): ImageStates {
  const count = new Map<string, number>();
  const perNode = new WeakMap<object, Map<string, number>>();
  const sizes = (node: any): Map<string, number> => {
    let m = perNode.get(node);
    if (m) return m;
    m = new Map();
    for (const img of arr(node?.status?.images)) for (const n of arr<string>(img?.names)) m.set(String(n), Number(img?.sizeBytes ?? 0));
    if (node && typeof node === 'object') perNode.set(node, m);
    return m;
  };
  for (const n of nodes) for (const name of sizes(n).keys()) count.set(name, (count.get(name) ?? 0) + 1);
  return { sizes, numNodes: (name) => count.get(name) ?? 0, totalNodes: nodes.length };
}

/** ImageLocality: the sizes of the pod's images on the node, each scaled by its spread, mapped onto 0..100 */
export function scoreImageLocality(pod: any, node: any, images: ImageStates): number {
  const containers = [...arr(pod?.spec?.initContainers), ...arr(pod?.spec?.containers)];
  if (!containers.length || images.totalNodes === 0) return 0;
  const sizes = images.sizes(node);
  let sum = 0;
  for (const c of containers) {
    const name = normalizedImageName(String(c?.image ?? ''));
    const size = sizes.get(name);
    if (size === undefined) continue;
    sum += Math.trunc(size * (images.numNodes(name) / images.totalNodes));
  }
  const max = MAX_CONTAINER_IMAGE_THRESHOLD * containers.length;
  if (sum < MIN_IMAGE_THRESHOLD) sum = MIN_IMAGE_THRESHOLD;
  else if (sum > max) sum = max;
  return Math.trunc((MAX_NODE_SCORE * (sum - MIN_IMAGE_THRESHOLD)) / (max - MIN_IMAGE_THRESHOLD));
}

/** helper.DefaultNormalizeScore */
export function defaultNormalizeScore(scores: number[], reverse: boolean): number[] {
  let max = 0;
  for (const s of scores) if (s > max) max = s;
  if (max === 0) return scores.map((s) => (reverse ? MAX_NODE_SCORE : s));
  return scores.map((s) => {
    const v = Math.trunc((MAX_NODE_SCORE * s) / max);
    return reverse ? MAX_NODE_SCORE - v : v;
  });
}

/**
 * every plugin's weighted, normalized score, summed per node (in the order of `infos`); the
 * scores of interpod.ts's plugins come normalized in `cluster` (absent: the plugin skipped)
 */
export function scoreNodes(p: PodInfo, infos: readonly NodeInfo[], cfg: ScoringConfig, images: ImageStates, cluster: { PodTopologySpread?: number[]; InterPodAffinity?: number[] } = {}): number[] {
  const totals = infos.map(() => 0);
  const add = (weight: number, scores: number[]) => {
    if (!weight) return;
    scores.forEach((s, i) => (totals[i]! += s * weight));
  };
  const w = cfg.weights;
  if (w.TaintToleration) add(w.TaintToleration, defaultNormalizeScore(infos.map((n) => scoreTaintToleration(p.pod, n.node)), true));
  if (w.NodeAffinity && hasPreferredNodeAffinity(p.pod)) add(w.NodeAffinity, defaultNormalizeScore(infos.map((n) => scoreNodeAffinity(p.pod, n.node)), false));
  if (w.NodeResourcesFit) add(w.NodeResourcesFit, infos.map((n) => scoreNodeResourcesFit(p, n, cfg)));
  if (w.NodeResourcesBalancedAllocation && !balancedAllocationSkips(p, cfg.balancedResources)) add(w.NodeResourcesBalancedAllocation, infos.map((n) => scoreBalancedAllocation(p, n, cfg.balancedResources)));
  if (w.ImageLocality) add(w.ImageLocality, infos.map((n) => scoreImageLocality(p.pod, n.node, images)));
  if (w.PodTopologySpread && cluster.PodTopologySpread) add(w.PodTopologySpread, cluster.PodTopologySpread);
  if (w.InterPodAffinity && cluster.InterPodAffinity) add(w.InterPodAffinity, cluster.InterPodAffinity);
  return totals;
}

/** selectHost: the highest total, ties broken at random (each of k tied nodes with probability 1/k) */
export function selectHost(names: readonly string[], totals: readonly number[], random: () => number = Math.random): string {
  let selected = 0;
  let ties = 1;
  for (let i = 1; i < names.length; i++) {
    if (totals[i]! > totals[selected]!) {
      selected = i;
      ties = 1;
    } else if (totals[i] === totals[selected]) {
      ties++;
      if (Math.floor(random() * ties) === 0) selected = i;
    }
  }
  return names[selected]!;
}

/**
 * numFeasibleNodesToFind: every node below 100 nodes or at 100 %; otherwise the percentage (the
 * profile's, else the configuration's, else 50 - nodes/125, at least 5) of the nodes, at least 100
 */
export function numFeasibleNodesToFind(numAllNodes: number, percentage: number | undefined): number {
  const MIN = 100;
  if (numAllNodes < MIN) return numAllNodes;
  let pct = percentage ?? 0;
  if (pct >= 100) return numAllNodes;
  if (pct <= 0) {
    pct = 50 - Math.trunc(numAllNodes / 125);
    if (pct < 5) pct = 5;
  }
  const n = Math.trunc((numAllNodes * pct) / 100);
  return n < MIN ? MIN : n;
}
