// What the endpoints and EndpointSlice controllers share (kube-controller-manager's
// k8s.io/endpointslice/util and pkg/controller/util/endpoint): which Services select which pods,
// which pods are endpoints at all, the ports a Service's targetPort names in a pod, which Services a
// pod change concerns, the last-change trigger time, and the bookkeeping of the namespaces whose
// pods the controllers watch (ctx.pods).
import { splitKey } from '../client/resources.js';
import { DeletedFinalStateUnknown, type Informer } from '../client/informer.js';
import type { StatusError } from '../machinery/errors.js';
import type { NamespacedPods } from './podwatch.js';

/** the label of the Endpoints and EndpointSlices of a headless Service (v1.IsHeadlessService) */
export const HEADLESS_LABEL = 'service.kubernetes.io/headless';
/** the annotation saying when the change that led to this Endpoints/EndpointSlice happened */
export const TRIGGER_TIME_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time';

// (splitKey is client/resources.js's, for the two controllers that import this module)
export { splitKey };

/** namespace/name of an object (or of a tombstone's object) */
export function keyOf(obj: any): string | undefined {
  const o = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
  const ns = o?.metadata?.namespace;
  const name = o?.metadata?.name;
  return ns && name ? `${ns}/${name}` : undefined;
}


/**
 * The Service's selector, undefined when it has none. An empty selector counts as none: Kubernetes
 * stores `selector: {}` as no selector at all (the field is omitted when empty), so its
 * controllers never see one.
 */
export function selectorOf(svc: any): Record<string, string> | undefined {
  const sel = svc?.spec?.selector;
  if (!sel || typeof sel !== 'object' || Object.keys(sel).length === 0) return undefined;
  return sel as Record<string, string>;
}

/** whether the controllers keep endpoints for this Service (a selector, and not type ExternalName) */
export function managesEndpoints(svc: any): boolean {
  return svc?.spec?.type !== 'ExternalName' && selectorOf(svc) !== undefined;
}

/** a label set matches a Service's selector (labels.Set(selector).AsSelector()) */
export function selectorMatches(sel: Record<string, string>, labels: Record<string, string> | undefined): boolean {
  for (const [k, v] of Object.entries(sel)) if (labels?.[k] !== v) return false;
  return true;
}

/** the pods of a list that the Service selects */
export function selectedPods(svc: any, pods: any[]): any[] {
  const sel = selectorOf(svc);
  return sel ? pods.filter((p) => selectorMatches(sel, p?.metadata?.labels)) : [];
}

/** the Pod's Ready condition is True (podutil.IsPodReady) */
export function isPodReady(pod: any): boolean {
  return (pod?.status?.conditions ?? []).some((c: any) => c?.type === 'Ready' && c.status === 'True');
}

/** Succeeded or Failed (podutil.IsPodTerminal) */
export function isPodTerminal(pod: any): boolean {
  const phase = pod?.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** the pod's IPs (status.podIPs, else status.podIP) */
export function podIPs(pod: any): string[] {
  const list = (pod?.status?.podIPs ?? []).map((p: any) => p?.ip).filter((ip: unknown): ip is string => typeof ip === 'string' && ip !== '');
  if (list.length) return list;
  return pod?.status?.podIP ? [String(pod.status.podIP)] : [];
}

/**
 * Whether a pod is an endpoint at all (ShouldPodBeInEndpoints): not terminal, with an IP, and not
 * being deleted unless terminating pods are included.
 */
export function shouldPodBeInEndpoints(pod: any, includeTerminating: boolean): boolean {
  if (isPodTerminal(pod)) return false;
  if (podIPs(pod).length === 0) return false;
  if (!includeTerminating && pod?.metadata?.deletionTimestamp) return false;
  return true;
}

/** the pod gets its hostname in the Service's endpoints: its subdomain is the Service (ShouldSetHostname) */
export function shouldSetHostname(pod: any, svc: any): boolean {
  return !!pod?.spec?.hostname && pod.spec.subdomain === svc?.metadata?.name && svc?.metadata?.namespace === pod?.metadata?.namespace;
}

export function isIPv6(ip: string | undefined): boolean {
  return typeof ip === 'string' && ip.includes(':');
}

/** a ClusterIP other than None and "" (helper.IsServiceIPSet) */
export function isServiceIPSet(svc: any): boolean {
  const ip = svc?.spec?.clusterIP;
  return typeof ip === 'string' && ip !== '' && ip !== 'None';
}

/**
 * The port a Service port's targetPort is in this pod (podutil.FindPort): a number as it is; a
 * name looked up among the containers' ports (then the sidecars': init containers that always
 * restart) of the same protocol. Undefined when the pod has no such port.
 */
export function findPort(pod: any, servicePort: any): number | undefined {
  const target = servicePort?.targetPort ?? servicePort?.port;
  if (typeof target === 'number') return target;
  if (typeof target === 'string' && /^\d+$/.test(target)) return Number(target);
  const protocol = servicePort?.protocol ?? 'TCP';
  const lookIn = (containers: any[]): number | undefined => {
    for (const c of containers) {
      for (const p of c?.ports ?? []) if (p?.name === target && (p.protocol ?? 'TCP') === protocol) return p.containerPort;
    }
    return undefined;
  };
  return lookIn(pod?.spec?.containers ?? []) ?? lookIn((pod?.spec?.initContainers ?? []).filter((c: any) => c?.restartPolicy === 'Always'));
}

/** keys of the Services (of an informer) in the pod's namespace whose selector matches the pod (GetPodServiceMemberships) */
export function podServiceMemberships(services: Informer<any>, pod: any): Set<string> {
  const out = new Set<string>();
  const ns = pod?.metadata?.namespace;
  for (const svc of services.list()) {
    if (svc?.metadata?.namespace !== ns) continue;
    // (a Service without a selector selects nothing, not everything)
    const sel = selectorOf(svc);
    if (sel && selectorMatches(sel, pod?.metadata?.labels)) out.add(`${ns}/${svc.metadata.name}`);
  }
  return out;
}

function sameJSON(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

function sameLabels(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const x = a ?? {};
  const y = b ?? {};
  const kx = Object.keys(x);
  return kx.length === Object.keys(y).length && kx.every((k) => x[k] === y[k]);
}

/**
 * What in a pod change matters to its endpoints (podEndpointsChanged): whether the endpoint itself
 * changed (deletion timestamp, readiness, IPs) and whether its Service memberships may have
 * (labels, hostname, subdomain).
 */
export function podEndpointsChanged(oldPod: any, newPod: any): { podChanged: boolean; labelsChanged: boolean } {
  const labelsChanged =
    !sameLabels(oldPod?.metadata?.labels, newPod?.metadata?.labels) || (oldPod?.spec?.hostname ?? '') !== (newPod?.spec?.hostname ?? '') || (oldPod?.spec?.subdomain ?? '') !== (newPod?.spec?.subdomain ?? '');
  const podChanged =
    (oldPod?.metadata?.deletionTimestamp ?? '') !== (newPod?.metadata?.deletionTimestamp ?? '') ||
    isPodReady(oldPod) !== isPodReady(newPod) ||
    !sameJSON(podIPs(oldPod), podIPs(newPod)) ||
    // (a pod that turns terminal leaves the endpoints: Kubernetes sees that through its Ready
    // condition, which the kubelet sets to False then; with no kubelet the phase is looked at too)
    isPodTerminal(oldPod) !== isPodTerminal(newPod);
  return { podChanged, labelsChanged };
}

/** the Services to sync after a pod update (GetServicesToUpdateOnPodChange) */
export function servicesToUpdateOnPodChange(services: Informer<any>, oldPod: any, newPod: any): Set<string> {
  if (oldPod?.metadata?.resourceVersion === newPod?.metadata?.resourceVersion) return new Set();
  const { podChanged, labelsChanged } = podEndpointsChanged(oldPod, newPod);
  if (!podChanged && !labelsChanged) return new Set();
  const now = podServiceMemberships(services, newPod);
  if (!labelsChanged) return now;
  const before = podServiceMemberships(services, oldPod);
  // the endpoint changed: every Service it was or is in; else those it joined or left
  if (podChanged) return new Set([...before, ...now]);
  const out = new Set<string>();
  for (const k of before) if (!now.has(k)) out.add(k);
  for (const k of now) if (!before.has(k)) out.add(k);
  return out;
}

/** the pod of a delete event, a tombstone's too */
export function podOfDelete(obj: any): any {
  return obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
}

/** a time as Go's time.RFC3339Nano in UTC (fraction without trailing zeros, none when whole seconds) */
export function rfc3339Nano(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.replace(/\.(\d*?)0*Z$/, (_m, frac: string) => (frac ? `.${frac}Z` : 'Z'));
}

function parseTime(t: unknown): number {
  const ms = typeof t === 'string' ? Date.parse(t) : NaN;
  return Number.isFinite(ms) ? ms : 0;
}

/** the earlier of two times, a zero (0) one left out */
function minTime(a: number, b: number): number {
  if (a === 0) return b;
  if (b === 0) return a;
  return Math.min(a, b);
}

/**
 * When the change a sync publishes happened (TriggerTimeTracker): for a Service seen for the first
 * time, its creation; after that the earliest of the pod Ready transitions and Service changes
 * newer than those of the previous sync (0: none, and the annotation is dropped).
 */
export class TriggerTimeTracker {
  private readonly states = new Map<string, { pods: Map<string, number>; service: number }>();

  compute(svc: any, pods: any[]): number {
    const key = `${svc.metadata.namespace}/${svc.metadata.name}`;
    const prev = this.states.get(key);
    const next = { pods: new Map<string, number>(), service: parseTime(svc.metadata.creationTimestamp) };
    let changed = 0;
    for (const pod of pods) {
      const ready = (pod?.status?.conditions ?? []).find((c: any) => c?.type === 'Ready');
      const t = parseTime(ready?.lastTransitionTime);
      if (t === 0) continue;
      next.pods.set(pod.metadata.name, t);
      if (t > (prev?.pods.get(pod.metadata.name) ?? 0)) changed = minTime(changed, t);
    }
    if (next.service > (prev?.service ?? 0)) changed = minTime(changed, next.service);
    this.states.set(key, next);
    return prev ? changed : next.service;
  }

  deleteService(key: string): void {
    this.states.delete(key);
  }
}

/**
 * The namespaces whose pods a controller needs: one owner key (`<prefix>:<ns>/<name>`) per Service
 * that has endpoints kept, watched through ctx.pods while it has.
 */
export class ServicePodWatches {
  private readonly watched = new Set<string>();

  constructor(
    private readonly pods: NamespacedPods,
    private readonly prefix: string,
  ) {}

  /** a Service added or changed: its namespace's pods are watched while it manages endpoints */
  track(svc: any): void {
    const key = keyOf(svc);
    if (!key) return;
    if (managesEndpoints(svc)) {
      if (this.watched.has(key)) return;
      this.watched.add(key);
      this.pods.watch(svc.metadata.namespace, `${this.prefix}:${key}`);
    } else this.forget(key);
  }

  /** a Service deleted, or no longer selecting pods */
  forget(key: string): void {
    if (!this.watched.delete(key)) return;
    this.pods.unwatch(splitKey(key).namespace, `${this.prefix}:${key}`);
  }

  stop(): void {
    for (const key of [...this.watched]) this.forget(key);
  }
}

/**
 * Waits until the pods of a watched namespace are listed (ctx.pods.synced, bounded): a controller
 * never writes endpoints from a pod cache that has not listed yet. False when it is not watched,
 * the wait ran out (the item is retried) or the signal aborted.
 */
export async function podsSynced(pods: NamespacedPods, namespace: string, signal: AbortSignal, timeoutMs = 10_000): Promise<boolean> {
  const inf = pods.informer(namespace);
  return !!inf && (await inf.waitForSync({ signal, timeoutMs }));
}

/** a Forbidden create in a namespace being deleted (its Status cause NamespaceTerminating) */
export function isNamespaceTerminating(e: unknown): boolean {
  const causes = (e as StatusError | undefined)?.details?.causes ?? [];
  return causes.some((c: any) => c?.type === 'NamespaceTerminating' || c?.reason === 'NamespaceTerminating');
}

/** JSON with object keys sorted: equality that ignores key order */
export function canonicalJSON(v: unknown): string {
  return JSON.stringify(v, (_k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x));
}
