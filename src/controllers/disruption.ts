// The disruption controller: keeps each PodDisruptionBudget's status, which the eviction
// subresource reads to allow or refuse a voluntary disruption (kube-controller-manager's
// disruption controller, pkg/controller/disruption):
//   - expectedPods and desiredHealthy: with an integer minAvailable, the pods the selector matches
//     and that number; with a percentage, or with maxUnavailable, the replicas the pods' owning
//     controllers ask for (ReplicationController, ReplicaSet, the Deployment over a ReplicaSet,
//     StatefulSet, then any kind with a scale subresource, found through discovery), the
//     percentage rounded up;
//   - currentHealthy: the matching pods that are Ready, not being deleted, and not in
//     disruptedPods (pods an eviction has just been allowed for, kept there until they are deleted
//     or two minutes pass);
//   - disruptionsAllowed: currentHealthy - desiredHealthy, never below 0 (0 when no pods are
//     expected), with the condition DisruptionAllowed (SufficientPods / InsufficientPods), and
//     observedGeneration;
//   - a budget that cannot be computed (a pod whose controller is not found, or of a kind
//     without a scale subresource) allows nothing and says so in the condition (reason
//     SyncFailed).
//
// Kubernetes' controller watches every pod of the cluster. Here each budget's pods are watched
// through one informer per namespace and label selector (shared by the budgets that have the
// same), so that a cluster without budgets pays nothing and the API server filters the pods.
import { setStatusCondition } from '../machinery/conditions.js';
import { DeletedFinalStateUnknown, Informer } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isNotFound, type RESTClient } from '../client/rest.js';
import type { EventRecorder } from '../client/events.js';
import { goLabelSelectorDump } from '../schema/printers/other.js';
import { DiscoveryClient, ResourceClient } from '../client/resources.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { runQueueWorkers } from './workers.js';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const PDBS = { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets' };
/** how long a pod stays in disruptedPods, waiting for its deletion (DeletionTimeout) */
export const DELETION_TIMEOUT_MS = 2 * 60 * 1000;

export interface DisruptionControllerOptions {
  client: RESTClient;
  /** the events it writes (NoPods, UnmanagedPods, CalculateExpectedPodCountFailed), as kube-controller-manager's */
  recorder?: EventRecorder;
  /** the client the per-selector pod informers list and watch with */
  informerClient: RESTClient;
  pdbs: Informer<any>;
  log?: Logger;
  now?: () => number;
}

/** a LabelSelector as the labelSelector query parameter; undefined for a null selector (no pods) */
export function selectorString(sel: any): string | undefined {
  if (sel === null || sel === undefined || typeof sel !== 'object') return undefined;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) parts.push(`${k}=${v}`);
  for (const e of Array.isArray(sel.matchExpressions) ? sel.matchExpressions : []) {
    const values = Array.isArray(e?.values) ? e.values.join(',') : '';
    switch (e?.operator) {
      case 'In':
        parts.push(`${e.key} in (${values})`);
        break;
      case 'NotIn':
        parts.push(`${e.key} notin (${values})`);
        break;
      case 'Exists':
        parts.push(String(e.key));
        break;
      case 'DoesNotExist':
        parts.push(`!${e.key}`);
        break;
    }
  }
  return parts.join(',');
}

/** GetScaledValueFromIntOrPercent with rounding up: an integer, or a percentage of total */
function scaled(v: unknown, total: number): number {
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(String(v));
  if (!m) throw new Error(`invalid value for IntOrString: invalid value ${JSON.stringify(v)}`);
  return Math.ceil((Number(m[1]) * total) / 100);
}

const isReady = (pod: any): boolean => (pod?.status?.conditions ?? []).some((c: any) => c?.type === 'Ready' && c.status === 'True');


interface PodWatch {
  informer: Informer<any>;
  /** the budgets (namespace/name) whose pods it holds */
  pdbs: Set<string>;
}

export class DisruptionController {
  readonly queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'disruption');
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly watches = new Map<string, PodWatch>();
  /** the watch key of each budget's pods */
  private readonly watchOf = new Map<string, string>();
  private stopped = false;

  constructor(private readonly o: DisruptionControllerOptions) {
    this.log = o.log ?? nopLogger;
    this.now = o.now ?? Date.now;
    o.pdbs.addEventHandler({
      add: (p) => this.onBudget(p),
      update: (_old, p) => this.onBudget(p),
      delete: (p) => {
        const obj = p instanceof DeletedFinalStateUnknown ? p.obj : p;
        const key = keyOf(obj);
        if (key) this.unwatch(key);
      },
    });
  }

  private onBudget(pdb: any): void {
    const key = keyOf(pdb);
    if (!key || this.stopped) return;
    const sel = selectorString(pdb.spec?.selector);
    const wkey = sel === undefined ? undefined : `${pdb.metadata.namespace}|${sel}`;
    if (this.watchOf.get(key) !== wkey) {
      this.unwatch(key);
      if (wkey !== undefined) this.watch(key, wkey, pdb.metadata.namespace, sel!);
    }
    this.queue.add(key);
  }

  private watch(key: string, wkey: string, namespace: string, labelSelector: string): void {
    let w = this.watches.get(wkey);
    if (!w) {
      const informer = new Informer<any>(new ResourceClient<any>(this.o.informerClient, PODS), { namespace, labelSelector, log: this.log, name: `pods in ${namespace} (${labelSelector || 'all'})`, trimManagedFields: true });
      const entry: PodWatch = { informer, pdbs: new Set() };
      const touch = () => {
        for (const k of entry.pdbs) this.queue.add(k);
      };
      informer.addEventHandler({ add: touch, update: touch, delete: touch });
      informer.run();
      this.watches.set(wkey, (w = entry));
    }
    w.pdbs.add(key);
    this.watchOf.set(key, wkey);
  }

  private unwatch(key: string): void {
    const wkey = this.watchOf.get(key);
    this.watchOf.delete(key);
    if (wkey === undefined) return;
    const w = this.watches.get(wkey);
    if (!w) return;
    w.pdbs.delete(key);
    if (w.pdbs.size === 0) {
      this.watches.delete(wkey);
      void w.informer.stop();
    }
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    try {
      await runQueueWorkers(
        { name: 'disruption controller', log: this.log, queue: this.queue, informers: [this.o.pdbs], sync: (k, s) => this.sync(k, s), failure: 'Syncing a PodDisruptionBudget failed' },
        workers,
        signal,
      );
    } finally {
      this.stopped = true;
      await Promise.all([...this.watches.values()].map((w) => w.informer.stop()));
      this.watches.clear();
      this.watchOf.clear();
    }
  }

  /** compute and write one budget's status */
  async sync(key: string, signal?: AbortSignal): Promise<void> {
    const slash = key.indexOf('/');
    const pdb = this.o.pdbs.getByName(key.slice(0, slash), key.slice(slash + 1));
    if (!pdb || pdb.metadata?.deletionTimestamp) return;
    const w = this.watches.get(this.watchOf.get(key) ?? '');
    // (the budget's pods not listed yet: retried with backoff rather than holding the worker)
    if (w && !(await w.informer.waitForSync({ signal, timeoutMs: 10_000 }))) {
      if (signal?.aborted) return;
      throw new Error(`the pods of PodDisruptionBudget ${key} are not listed yet`);
    }
    const pods = w ? w.informer.list() : [];
    // the events kube-controller-manager's disruption controller writes on the budget
    const about = { ...pdb, kind: 'PodDisruptionBudget', apiVersion: 'policy/v1' };
    if (pods.length === 0) void this.o.recorder?.event(about, 'Normal', 'NoPods', 'No matching pods found');
    let counts: { expected: number; desired: number; unmanaged: number };
    try {
      counts = await this.expectedCount(pdb, pods, signal);
    } catch (e) {
      if (signal?.aborted) return;
      this.log.error(e, 'Failed to sync PDB', { pdb: key });
      void this.o.recorder?.event(about, 'Warning', 'CalculateExpectedPodCountFailed', `Failed to calculate the number of expected pods: ${(e as Error).message}`);
      return this.failSafe(pdb, (e as Error).message, signal);
    }
    if (counts.unmanaged > 0) {
      void this.o.recorder?.event(
        about,
        'Warning',
        'UnmanagedPods',
        `Pods selected by this PodDisruptionBudget (selector: ${goLabelSelectorDump(pdb.spec?.selector)}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.`,
      );
    }
    const now = this.now();
    const byName = new Map<string, any>(pods.map((p) => [p.metadata?.name, p]));
    const disrupted: Record<string, string> = {};
    let recheck: number | undefined;
    for (const [name, at] of Object.entries<string>(pdb.status?.disruptedPods ?? {})) {
      const pod = byName.get(name);
      // a pod gone, or being deleted, has done its disruption
      if (!pod || pod.metadata?.deletionTimestamp) continue;
      const expiry = Date.parse(at) + DELETION_TIMEOUT_MS;
      if (!(expiry > now)) {
        this.log.info('Pod was expected to be deleted but it has not been', { pod: `${pdb.metadata.namespace}/${name}`, pdb: key });
        continue;
      }
      disrupted[name] = at;
      if (recheck === undefined || expiry < recheck) recheck = expiry;
    }
    let healthy = 0;
    for (const pod of pods) {
      if (pod.metadata?.deletionTimestamp) continue;
      if (disrupted[pod.metadata?.name] !== undefined) continue;
      if (isReady(pod)) healthy++;
    }
    await this.writeStatus(pdb, { currentHealthy: healthy, desiredHealthy: counts.desired, expectedPods: counts.expected, disruptedPods: disrupted }, signal);
    if (recheck !== undefined) this.queue.addAfter(key, recheck - now + 1);
  }

  /** expectedPods and desiredHealthy (getExpectedPodCount) */
  private async expectedCount(pdb: any, pods: any[], signal?: AbortSignal): Promise<{ expected: number; desired: number; unmanaged: number }> {
    const spec = pdb.spec ?? {};
    // (pods without a controller count as unmanaged where the controllers' scale is asked)
    const unmanaged = pods.filter((p) => !(p.metadata?.ownerReferences ?? []).some((r: any) => r?.controller === true)).length;
    if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
      const expected = await this.expectedScale(pdb, pods, signal);
      return { expected, desired: Math.max(0, expected - scaled(spec.maxUnavailable, expected)), unmanaged };
    }
    if (spec.minAvailable !== undefined && spec.minAvailable !== null) {
      if (typeof spec.minAvailable === 'number') return { expected: pods.length, desired: spec.minAvailable, unmanaged: 0 };
      const expected = await this.expectedScale(pdb, pods, signal);
      return { expected, desired: scaled(spec.minAvailable, expected), unmanaged };
    }
    return { expected: 0, desired: 0, unmanaged: 0 };
  }

  /** the replicas the pods' controllers ask for, each controller once (getExpectedScale); pods without one are left out */
  private async expectedScale(pdb: any, pods: any[], signal?: AbortSignal): Promise<number> {
    const scales = new Map<string, number>();
    for (const pod of pods) {
      const ref = (pod.metadata?.ownerReferences ?? []).find((r: any) => r?.controller === true);
      if (!ref) continue;
      if (scales.has(ref.uid)) continue;
      const found = await this.controllerScale(ref, pod.metadata.namespace, signal);
      if (!found) throw new Error(`found no controllers for pod "${pod.metadata.name}"`);
      scales.set(found.uid, found.scale);
    }
    let total = 0;
    for (const s of scales.values()) total += s;
    return total;
  }

  /** the controller a pod's controller reference names, and its scale (the finders: RC, Deployment over RS, RS, StatefulSet, then any kind's scale subresource) */
  private async controllerScale(ref: any, namespace: string, signal?: AbortSignal): Promise<{ uid: string; scale: number } | undefined> {
    const group = String(ref.apiVersion ?? '').includes('/') ? String(ref.apiVersion).split('/')[0] : '';
    const get = async (gvr: { group: string; version: string; resource: string }, name: string): Promise<any> => {
      try {
        return await new ResourceClient<any>(this.o.client, gvr, namespace).get(name, { signal });
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    };
    const replicas = (o: any): number => (typeof o?.spec?.replicas === 'number' ? o.spec.replicas : 1);
    if (group === '' && ref.kind === 'ReplicationController') {
      const rc = await get({ group: '', version: 'v1', resource: 'replicationcontrollers' }, ref.name);
      if (rc && rc.metadata.uid === ref.uid) return { uid: rc.metadata.uid, scale: replicas(rc) };
    }
    if (group === 'apps' && ref.kind === 'ReplicaSet') {
      const rs = await get({ group: 'apps', version: 'v1', resource: 'replicasets' }, ref.name);
      if (rs && rs.metadata.uid === ref.uid) {
        const owner = (rs.metadata.ownerReferences ?? []).find((r: any) => r?.controller === true);
        if (owner && owner.kind === 'Deployment' && String(owner.apiVersion).startsWith('apps/')) {
          // a Deployment's ReplicaSet counts as its Deployment
          const d = await get({ group: 'apps', version: 'v1', resource: 'deployments' }, owner.name);
          if (d && d.metadata.uid === owner.uid) return { uid: d.metadata.uid, scale: replicas(d) };
        } else return { uid: rs.metadata.uid, scale: replicas(rs) };
      }
    }
    if (group === 'apps' && ref.kind === 'StatefulSet') {
      const ss = await get({ group: 'apps', version: 'v1', resource: 'statefulsets' }, ref.name);
      if (ss && ss.metadata.uid === ref.uid) return { uid: ss.metadata.uid, scale: replicas(ss) };
    }
    return this.scaleOf(ref, namespace, signal);
  }

  /**
   * The last finder (getScaleController): any kind with a scale subresource, a custom resource's
   * too, found through discovery. A kind discovery does not know, or one without a scale
   * subresource, is an error in Kubernetes' words; an absent object, or another one by that
   * name (its uid), is no controller.
   */
  private async scaleOf(ref: any, namespace: string, signal?: AbortSignal): Promise<{ uid: string; scale: number } | undefined> {
    const apiVersion = String(ref.apiVersion ?? '');
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const noMatch = () => new Error(`no matches for kind ${JSON.stringify(String(ref.kind))} in version ${JSON.stringify(apiVersion)}`);
    let resources: { name: string; kind: string; namespaced?: boolean }[];
    try {
      resources = (await new DiscoveryClient(this.o.client).serverResourcesForGroupVersion(apiVersion, { signal })).resources;
    } catch (e) {
      if (isNotFound(e)) throw noMatch();
      throw e;
    }
    const r = resources.find((x) => x.kind === ref.kind && !x.name.includes('/'));
    if (!r) throw noMatch();
    const base = group ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const path = `${base}${r.namespaced === false ? '' : `/namespaces/${encodeURIComponent(namespace)}`}/${r.name}/${encodeURIComponent(String(ref.name))}/scale`;
    let scale: any;
    try {
      scale = await this.o.client.json<any>({ method: 'GET', path, signal });
    } catch (e) {
      if (!isNotFound(e)) throw e;
      if (!resources.some((x) => x.name === `${r.name}/scale`)) throw new Error(`${group ? `${r.name}.${group}` : r.name} does not implement the scale subresource`);
      return undefined;
    }
    if (scale?.metadata?.uid !== ref.uid) return undefined;
    return { uid: ref.uid, scale: typeof scale?.spec?.replicas === 'number' ? scale.spec.replicas : 0 };
  }

  /** write the status when it changed (updatePdbStatus) */
  private async writeStatus(pdb: any, s: { currentHealthy: number; desiredHealthy: number; expectedPods: number; disruptedPods: Record<string, string> }, signal?: AbortSignal): Promise<void> {
    let allowed = s.currentHealthy - s.desiredHealthy;
    if (s.expectedPods <= 0 || allowed <= 0) allowed = 0;
    const cur = pdb.status ?? {};
    const generation = pdb.metadata?.generation ?? 0;
    const want = allowed > 0 ? { status: 'True', reason: 'SufficientPods' } : { status: 'False', reason: 'InsufficientPods' };
    const cond = (cur.conditions ?? []).find((c: any) => c?.type === 'DisruptionAllowed');
    if (
      cur.currentHealthy === s.currentHealthy &&
      cur.desiredHealthy === s.desiredHealthy &&
      cur.expectedPods === s.expectedPods &&
      cur.disruptionsAllowed === allowed &&
      sameMap(cur.disruptedPods, s.disruptedPods) &&
      cur.observedGeneration === generation &&
      cond?.status === want.status &&
      cond?.reason === want.reason &&
      cond?.observedGeneration === generation
    )
      return;
    const status = {
      ...s,
      disruptionsAllowed: allowed,
      observedGeneration: generation,
      conditions: setStatusCondition(cur.conditions, { type: 'DisruptionAllowed', ...want, message: '', observedGeneration: generation }, this.now()),
    };
    await this.putStatus(pdb, status, signal);
  }

  /** a budget that cannot be computed allows no disruption (failSafe) */
  private async failSafe(pdb: any, message: string, signal?: AbortSignal): Promise<void> {
    const cur = pdb.status ?? {};
    const status = {
      ...cur,
      disruptionsAllowed: 0,
      conditions: setStatusCondition(cur.conditions, { type: 'DisruptionAllowed', status: 'False', reason: 'SyncFailed', message, observedGeneration: cur.observedGeneration ?? 0 }, this.now()),
    };
    await this.putStatus(pdb, status, signal);
  }

  private async putStatus(pdb: any, status: any, signal?: AbortSignal): Promise<void> {
    const client = new ResourceClient<any>(this.o.client, PDBS, pdb.metadata.namespace);
    try {
      await client.updateStatus({ ...pdb, status }, { signal });
    } catch (e) {
      // a budget gone meanwhile needs nothing; on a conflict (it changed) the item is retried
      if (isNotFound(e)) return;
      throw e;
    }
  }
}

function keyOf(pdb: any): string | undefined {
  const ns = pdb?.metadata?.namespace;
  const name = pdb?.metadata?.name;
  return ns && name ? `${ns}/${name}` : undefined;
}

function sameMap(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const x = a ?? {};
  const ka = Object.keys(x);
  return ka.length === Object.keys(b).length && ka.every((k) => x[k] === b[k]);
}

