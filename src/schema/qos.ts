// A Pod's quality-of-service class, as kube-apiserver computes it (its qos.ComputePodQOS): from the
// cpu and memory requests and limits of its regular and init containers (ephemeral containers
// take no resources). Quantities are summed over the containers and compared by value, so "1" and
// "1000m" are the same request; a quantity of zero counts as not set.
//   - BestEffort: no container requests or limits any cpu or memory;
//   - Guaranteed: every container has cpu and memory limits, and the summed requests equal the
//     summed limits for each of them;
//   - Burstable: anything else.
// (Pod-level resources, behind the PodLevelResources gate, off in 1.33, are not considered.)
import { parseQuantity } from './validation/quantity.js';

export type QOSClass = 'BestEffort' | 'Burstable' | 'Guaranteed';

const QOS_RESOURCES = ['cpu', 'memory'] as const;

/** add each positive cpu and memory quantity of `list` into `into` (nano units); the names found */
function addPositive(list: unknown, into: Map<string, bigint>): Set<string> {
  const found = new Set<string>();
  if (!list || typeof list !== 'object') return found;
  for (const name of QOS_RESOURCES) {
    const q = parseQuantity((list as Record<string, unknown>)[name]);
    if (!q || q.nano <= 0n) continue;
    found.add(name);
    into.set(name, (into.get(name) ?? 0n) + q.nano);
  }
  return found;
}

export function computePodQOS(spec: any): QOSClass {
  const requests = new Map<string, bigint>();
  const limits = new Map<string, bigint>();
  let guaranteed = true;
  const containers: any[] = [...(Array.isArray(spec?.containers) ? spec.containers : []), ...(Array.isArray(spec?.initContainers) ? spec.initContainers : [])];
  for (const c of containers) {
    addPositive(c?.resources?.requests, requests);
    const lim = addPositive(c?.resources?.limits, limits);
    if (!lim.has('cpu') || !lim.has('memory')) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, req] of requests) {
      if (limits.get(name) !== req) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

/** the class a stored pod carries in its status, or the computed one when it has none (qos.GetPodQOS) */
export function getPodQOS(pod: any): string {
  const recorded = pod?.status?.qosClass;
  if (typeof recorded === 'string' && recorded !== '') return recorded;
  return computePodQOS(pod?.spec);
}
