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
// PriorityClass, CrossNamespacePodAffinity). The evaluators are in src/schema/quota.ts, shared with
// the resource quota controller.
//
// Kubernetes keeps status.used with a controller (kube-controller-manager's resourcequota
// controller recounts after deletes and on resync) and charges admissions on top of it. Keelson's
// controller (src/controllers/resourcequota.ts, in `keelson server`) does the same; the plugin
// does not rely on it: it recounts the namespace's objects from the ClusterReader at each check
// (used = what is stored + what this server admitted and has not stored yet) and takes the hard
// limits from spec.hard, so that `keelson apiserver` without a controller manager counts right.
import { StatusError, errors } from '../../machinery/errors.js';
import { cmpQuantity } from '../../schema/validation/quantity.js';
import type { AdmissionAttributes, AdmissionPlugin, ClusterReader, ClusterWriter } from './types.js';
import { addLists, forbidden, isObject, mask, prettyPrint, removeZeros, subtractNonNegative, type ResourceList } from './util.js';
import { evaluatorFor, hardOf, IGNORED, matches, quotaStatus, recountUsage as recount } from '../../schema/quota.js';

/** what the objects stored in a namespace consume of a quota's hard resources (the quota controller's recount, over a reader) */
export function recountUsage(reader: ClusterReader, namespace: string, quota: any, now = Date.now()): ResourceList {
  return recount((g, r, ns) => reader.list(g, r, ns), namespace, quota, now);
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
