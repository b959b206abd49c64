// A pod's effective requests and limits, as the scheduler, LimitRanger and quota count them:
// the sum of the containers (and of the restartable "sidecar" init containers), at least the
// largest ordinary init container (plus the sidecars started before it), plus the pod overhead
// (all of it for requests; for limits, only on resources that have a limit).
import { addLists, resourceList, type ResourceList } from './resourcelist.js';
import { cmpQuantity } from './validation/quantity.js';

function isObject(v: unknown): v is Record<string, any> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function asArray<T = any>(v: unknown): T[] {
  return Array.isArray(v) ? (v as T[]) : [];
}

function maxInto(list: ResourceList, other: ResourceList): void {
  for (const [k, v] of other) {
    const cur = list.get(k);
    if (!cur || cmpQuantity(v, cur) > 0) list.set(k, v);
  }
}

function isSidecar(c: any): boolean {
  return c?.restartPolicy === 'Always';
}

export function podTotals(pod: any, which: 'requests' | 'limits', opts: { overhead?: boolean } = {}): ResourceList {
  const spec = isObject(pod?.spec) ? pod.spec : {};
  let total: ResourceList = new Map();
  for (const c of asArray(spec.containers)) total = addLists(total, resourceList(c?.resources?.[which]));
  let sidecars: ResourceList = new Map();
  const initMax: ResourceList = new Map();
  for (const c of asArray(spec.initContainers)) {
    const own = resourceList(c?.resources?.[which]);
    if (isSidecar(c)) {
      total = addLists(total, own);
      sidecars = addLists(sidecars, own);
      maxInto(initMax, sidecars);
    } else {
      maxInto(initMax, addLists(own, sidecars));
    }
  }
  maxInto(total, initMax);
  if (opts.overhead && isObject(spec.overhead)) {
    const overhead = resourceList(spec.overhead);
    if (which === 'requests') total = addLists(total, overhead);
    else for (const [k, v] of overhead) if (total.has(k)) total = addLists(total, new Map([[k, v]]));
  }
  return total;
}

/** every container of a pod with the word its messages use for it */
export function allContainers(pod: any, withEphemeral = false): { c: any; what: string }[] {
  const spec = isObject(pod?.spec) ? pod.spec : {};
  const out: { c: any; what: string }[] = [];
  for (const c of asArray(spec.initContainers)) if (isObject(c)) out.push({ c, what: 'init container' });
  for (const c of asArray(spec.containers)) if (isObject(c)) out.push({ c, what: 'container' });
  if (withEphemeral) for (const c of asArray(spec.ephemeralContainers)) if (isObject(c)) out.push({ c, what: 'ephemeral container' });
  return out;
}

/** v1qos.GetPodQOS: Guaranteed, Burstable or BestEffort (from cpu and memory; pod-level resources are alpha in 1.33, off) */
export function podQOS(pod: any): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const spec = isObject(pod?.spec) ? pod.spec : {};
  const supported = (k: string) => k === 'cpu' || k === 'memory';
  const requests = new Map<string, bigint>();
  const limits = new Map<string, bigint>();
  let isGuaranteed = true;
  for (const c of [...asArray(spec.containers), ...asArray(spec.initContainers)]) {
    for (const [k, v] of resourceList(c?.resources?.requests)) {
      if (supported(k) && v.nano > 0n) requests.set(k, (requests.get(k) ?? 0n) + v.nano);
    }
    const found = new Set<string>();
    for (const [k, v] of resourceList(c?.resources?.limits)) {
      if (!supported(k) || v.nano <= 0n) continue;
      found.add(k);
      limits.set(k, (limits.get(k) ?? 0n) + v.nano);
    }
    if (!(found.has('cpu') && found.has('memory'))) isGuaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (isGuaranteed) {
    for (const [k, v] of requests) if (limits.get(k) !== v) isGuaranteed = false;
  }
  if (isGuaranteed && requests.size === limits.size) return 'Guaranteed';
  return 'Burstable';
}
