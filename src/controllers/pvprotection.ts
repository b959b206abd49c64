// The storage object in use protection controllers of kube-controller-manager
// (pkg/controller/volume/pvcprotection and pvprotection), as 1.33 behaves.
//
// The API server's StorageObjectInUseProtection admission gives every new PersistentVolumeClaim
// the finalizer `kubernetes.io/pvc-protection` and every new PersistentVolume
// `kubernetes.io/pv-protection`; a deleted claim or volume stays (Terminating) until these
// controllers take the finalizer off:
//
//   - persistentvolumeclaim-protection-controller (pvc-protection): a claim being deleted loses
//     its finalizer once no pod of its namespace uses it. A pod uses a claim when it is scheduled
//     (spec.nodeName set: the kubelet only sees scheduled pods, and starts none whose claim is
//     being deleted) and has a `persistentVolumeClaim` volume naming it, or a generic ephemeral
//     volume whose claim (`<pod>-<volume>`) is this one and is controlled by the pod, unless the
//     pod is shut down (being deleted with a grace period of 0). As in Kubernetes a pod that has
//     finished (phase Succeeded or Failed) still holds its claims until it is deleted. The pods
//     are looked for in the informer's cache first, then, when none there uses the claim, in a
//     live list of the namespace (one list shared by the claims of a namespace handled together),
//     so that a pod the cache has not seen yet is never missed. A pod that is deleted, finishes
//     or is not scheduled queues the claims it names again. A claim that is not being deleted
//     and lacks the finalizer gets it (claims made before the admission plugin was on).
//   - persistentvolume-protection-controller (pv-protection): a volume being deleted loses its
//     finalizer once it is not Bound (status.phase != Bound, which the volume binder keeps); one
//     that is not being deleted and lacks the finalizer gets it.
//
// Both write the whole object back (update, the verb their RBAC roles have) from the informer's
// cache; a conflict with a newer version is retried with backoff, as in Kubernetes.
//
// Kubernetes' PVC protection controller keeps an informer over every pod of the cluster. Here
// the pods of a namespace are watched (through the manager's per-namespace pod informers,
// podwatch.ts) only while a claim there is being deleted: a cluster whose claims are not being
// deleted pays nothing for it. The informer of a namespace is listed before the live list that
// decides a claim is unused, so the deletion of any pod that list showed reaches the controller.

import { DeletedFinalStateUnknown, type Informer } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import type { RESTClient } from '../client/rest.js';
import { ResourceClient, objectKey, splitKey } from '../client/resources.js';
import { RateLimitingQueue, WorkQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { informerOf, withClient, type ControllerDescriptor } from './context.js';
import { PODS, type NamespacedPods } from './podwatch.js';
import { runQueueWorkers } from './workers.js';

export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';
export const PERSISTENT_VOLUME_CLAIMS = { group: '', version: 'v1', resource: 'persistentvolumeclaims' };
export const PERSISTENT_VOLUMES = { group: '', version: 'v1', resource: 'persistentvolumes' };

/** how long a claim's sync waits for its namespace's pods to be listed before it is retried */
const POD_SYNC_TIMEOUT_MS = 10_000;

const hasFinalizer = (obj: any, finalizer: string): boolean => Array.isArray(obj?.metadata?.finalizers) && obj.metadata.finalizers.includes(finalizer);

/** being deleted and still holding the finalizer (protectionutil.IsDeletionCandidate) */
export function isDeletionCandidate(obj: any, finalizer: string): boolean {
  return !!obj?.metadata?.deletionTimestamp && hasFinalizer(obj, finalizer);
}

/** not being deleted and without the finalizer (protectionutil.NeedToAddFinalizer) */
export function needToAddFinalizer(obj: any, finalizer: string): boolean {
  return !obj?.metadata?.deletionTimestamp && !hasFinalizer(obj, finalizer);
}

/** every container status is terminated or waiting (or there are none) */
function notRunning(statuses: any): boolean {
  if (!Array.isArray(statuses)) return true;
  return statuses.every((s: any) => s?.state?.terminated || s?.state?.waiting);
}

/** finished (Succeeded, Failed), or being deleted with no container running (volume util's IsPodTerminated) */
export function isPodTerminated(pod: any): boolean {
  const st = pod?.status ?? {};
  if (st.phase === 'Failed' || st.phase === 'Succeeded') return true;
  return !!pod?.metadata?.deletionTimestamp && notRunning(st.initContainerStatuses) && notRunning(st.containerStatuses) && notRunning(st.ephemeralContainerStatuses);
}

/**
 * The kubelet is done with the pod, or it was force-deleted: a deletion timestamp with a grace
 * period of 0. Such a pod no longer holds its ephemeral volumes' claims (which breaks a cycle of a
 * pod finalizer waiting for the claim and the claim waiting for the pod).
 */
export function podIsShutDown(pod: any): boolean {
  return !!pod?.metadata?.deletionTimestamp && pod?.metadata?.deletionGracePeriodSeconds === 0;
}

/** the claim of a generic ephemeral volume: `<pod>-<volume>` */
export function ephemeralClaimName(pod: any, volume: any): string {
  return `${pod?.metadata?.name ?? ''}-${volume?.name ?? ''}`;
}

/** the claim was made for the pod: same namespace, and the pod is its controller */
export function claimIsForPod(pod: any, pvc: any): boolean {
  if (pod?.metadata?.namespace !== pvc?.metadata?.namespace) return false;
  const uid = pod?.metadata?.uid;
  return (pvc?.metadata?.ownerReferences ?? []).some((r: any) => r?.controller === true && r?.uid === uid);
}

/** the names of the claims a pod's volumes name (persistentVolumeClaim, ephemeral) */
export function claimNamesOf(pod: any): string[] {
  const names: string[] = [];
  for (const v of pod?.spec?.volumes ?? []) {
    if (v?.persistentVolumeClaim) names.push(v.persistentVolumeClaim.claimName ?? '');
    else if (v?.ephemeral) names.push(ephemeralClaimName(pod, v));
  }
  return names.filter((n) => n !== '');
}

/** whether the pod keeps the claim from going (podUsesPVC) */
export function podUsesPVC(pod: any, pvc: any): boolean {
  // only a scheduled pod: the kubelet sees pods once they are scheduled, and starts none whose
  // claim is being deleted
  if (!pod?.spec?.nodeName) return false;
  const name = pvc?.metadata?.name;
  for (const v of pod.spec.volumes ?? []) {
    if (v?.persistentVolumeClaim && v.persistentVolumeClaim.claimName === name) return true;
    if (!podIsShutDown(pod) && v?.ephemeral && ephemeralClaimName(pod, v) === name && claimIsForPod(pod, pvc)) return true;
  }
  return false;
}

// ---- persistentvolumeclaim-protection-controller ----

export interface PVCProtectionOptions {
  client: RESTClient;
  pvcs: Informer<any>;
  /** the per-namespace pod informers of the manager */
  pods: NamespacedPods;
  log?: Logger;
}

export class PVCProtectionController {
  readonly queue: RateLimitingQueue<string>;
  /** the namespaces with claims taken off the queue and waiting to be handled together */
  private readonly namespaceQueue = new WorkQueue<string>();
  private readonly pending = new Map<string, string[]>();
  /** the claims (keys) being deleted whose namespace's pods this controller watches */
  private readonly watched = new Set<string>();
  private readonly log: Logger;
  private podHandler?: { remove(): void };

  constructor(private readonly o: PVCProtectionOptions) {
    this.log = o.log ?? nopLogger;
    this.queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'pvcprotection');
    o.pvcs.addEventHandler({
      add: (pvc) => this.pvcAddedUpdated(pvc),
      update: (_old, pvc) => this.pvcAddedUpdated(pvc),
      delete: (d) => this.unwatch(objectKey(d instanceof DeletedFinalStateUnknown ? d.obj : d)),
    });
    this.podHandler = o.pods.addEventHandler({
      add: (pod) => this.podAddedDeletedUpdated(undefined, pod, false),
      update: (old, pod) => this.podAddedDeletedUpdated(old, pod, false),
      delete: (d) => this.podAddedDeletedUpdated(undefined, d instanceof DeletedFinalStateUnknown ? d.obj : d, true),
    });
  }

  // ---- events ----

  private pvcAddedUpdated(pvc: any): void {
    const key = objectKey(pvc);
    this.log.v(4).info('Got event on PVC', { pvc: key });
    const candidate = isDeletionCandidate(pvc, PVC_PROTECTION_FINALIZER);
    // the pods of its namespace are needed while the claim waits for them
    if (candidate) this.watch(key);
    else this.unwatch(key);
    if (candidate || needToAddFinalizer(pvc, PVC_PROTECTION_FINALIZER)) this.queue.add(key);
  }

  private podAddedDeletedUpdated(old: any, pod: any, deleted: boolean): void {
    if (!pod) return;
    this.enqueuePVCs(pod, deleted);
    // an update may hide the deletion of a pod and the creation of another under its name: the
    // claims of the old one are looked at again, or one only it used would never go
    if (old && old.metadata?.uid !== pod.metadata?.uid) this.enqueuePVCs(old, true);
  }

  private enqueuePVCs(pod: any, deleted: boolean): void {
    // only pods that can let a claim go: deleted, terminated, or not scheduled
    if (!deleted && !isPodTerminated(pod) && pod?.spec?.nodeName) return;
    const names = claimNamesOf(pod);
    if (names.length === 0) return;
    this.log.v(4).info('Enqueuing PVCs for Pod', { pod: objectKey(pod), podUID: pod.metadata?.uid });
    for (const n of names) this.queue.add(`${pod.metadata.namespace}/${n}`);
  }

  private watch(key: string): void {
    if (this.watched.has(key)) return;
    this.watched.add(key);
    this.o.pods.watch(splitKey(key).namespace, `pvc-protection:${key}`);
  }

  private unwatch(key: string): void {
    if (!this.watched.delete(key)) return;
    this.o.pods.unwatch(splitKey(key).namespace, `pvc-protection:${key}`);
  }

  // ---- workers ----

  /**
   * Runs until the signal aborts: one worker moves claims off the queue into per-namespace
   * batches; `workers` workers handle a namespace's batch at a time (kube-controller-manager
   * runs one).
   */
  async run(workers: number, signal: AbortSignal): Promise<void> {
    this.log.info('Starting PVC protection controller');
    try {
      this.log.info('Waiting for caches to sync for PVC protection');
      if (!(await this.o.pvcs.waitForSync({ signal }))) return;
      this.log.info('Caches are synced for PVC protection');
      const done = [this.mainWorker()];
      for (let i = 0; i < Math.max(1, workers); i++) done.push(this.namespaceWorker(signal));
      await new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));
      this.queue.shutDown();
      this.namespaceQueue.shutDown();
      await Promise.all(done);
    } finally {
      this.queue.shutDown();
      this.namespaceQueue.shutDown();
      this.podHandler?.remove();
      this.podHandler = undefined;
      for (const key of [...this.watched]) this.unwatch(key);
      this.log.info('Shutting down PVC protection controller');
    }
  }

  /** takes claims off the queue (they stay "processing" there until their batch is handled) */
  private async mainWorker(): Promise<void> {
    for (;;) {
      const { item: key, shutdown } = await this.queue.get();
      if (shutdown) return;
      const ns = splitKey(key).namespace;
      let batch = this.pending.get(ns);
      if (!batch) {
        this.pending.set(ns, (batch = []));
        this.namespaceQueue.add(ns);
      }
      batch.push(key);
    }
  }

  private async namespaceWorker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const { item: ns, shutdown } = await this.namespaceQueue.get();
      if (shutdown) return;
      const keys = this.pending.get(ns) ?? [];
      this.pending.delete(ns);
      this.namespaceQueue.done(ns);
      // (one live list of the namespace's pods for the whole batch, made when first needed)
      const live: { pods?: any[] } = {};
      for (const key of keys) {
        if (signal.aborted) {
          this.queue.done(key);
          continue;
        }
        try {
          await this.processPVC(key, live, signal);
          this.queue.forget(key);
        } catch (e) {
          if (!signal.aborted) {
            const { name } = splitKey(key);
            this.log.error(e, `PVC ${name}/${ns} failed with: ${e instanceof Error ? e.message : String(e)}`);
            this.queue.addRateLimited(key);
          }
        } finally {
          this.queue.done(key);
        }
      }
    }
  }

  /** one claim: its finalizer off when being deleted and unused, on when missing */
  async processPVC(key: string, live: { pods?: any[] }, signal: AbortSignal): Promise<void> {
    const { namespace: ns, name } = splitKey(key);
    this.log.v(4).info('Processing PVC', { PVC: key });
    const start = Date.now();
    try {
      const pvc = this.o.pvcs.getByName(ns, name);
      if (!pvc) {
        this.log.v(4).info('PVC not found, ignoring', { PVC: key });
        return;
      }
      if (isDeletionCandidate(pvc, PVC_PROTECTION_FINALIZER)) {
        if (!(await this.isBeingUsed(pvc, live, signal))) {
          await this.writeFinalizers(pvc, (pvc.metadata.finalizers as string[]).filter((f) => f !== PVC_PROTECTION_FINALIZER), signal);
          this.log.v(3).info('Removed protection finalizer from PVC', { PVC: key });
          return;
        }
        this.log.v(2).info('Keeping PVC because it is being used', { PVC: key });
      }
      if (needToAddFinalizer(pvc, PVC_PROTECTION_FINALIZER)) {
        // (the admission plugin adds it; this is for claims made before it was on)
        await this.writeFinalizers(pvc, [...(pvc.metadata.finalizers ?? []), PVC_PROTECTION_FINALIZER], signal);
        this.log.v(3).info('Added protection finalizer to PVC', { PVC: key });
      }
    } finally {
      this.log.v(4).info('Finished processing PVC', { PVC: key, duration: `${Date.now() - start}ms` });
    }
  }

  private async writeFinalizers(pvc: any, finalizers: string[], signal: AbortSignal): Promise<void> {
    const client = new ResourceClient<any>(this.o.client, PERSISTENT_VOLUME_CLAIMS, pvc.metadata.namespace);
    try {
      await client.update({ ...pvc, metadata: { ...pvc.metadata, finalizers } }, { signal });
    } catch (e) {
      if (!signal.aborted) this.log.error(e, finalizers.includes(PVC_PROTECTION_FINALIZER) ? 'Error adding protection finalizer to PVC' : 'Error removing protection finalizer from PVC', { PVC: objectKey(pvc) });
      throw e;
    }
  }

  /** a pod uses the claim: in the namespace's pod cache, else in a live list */
  private async isBeingUsed(pvc: any, live: { pods?: any[] }, signal: AbortSignal): Promise<boolean> {
    const key = objectKey(pvc);
    const ns = pvc.metadata.namespace;
    // the namespace's pods are watched from here on; they are listed before the live list, so
    // that the deletion of any pod it shows is an event this controller sees
    this.watch(key);
    const informer = this.o.pods.informer(ns);
    if (!informer || !(await informer.waitForSync({ signal, timeoutMs: POD_SYNC_TIMEOUT_MS }))) {
      throw new Error(`cache-based list of pods failed while processing ${key}: the pods of namespace ${ns} are not listed yet`);
    }
    this.log.v(4).info("Looking for Pods using PVC in the Informer's cache", { PVC: key });
    for (const pod of informer.list()) {
      if (podUsesPVC(pod, pvc)) {
        this.log.v(2).info('Pod uses PVC', { pod: objectKey(pod), PVC: key });
        return true;
      }
    }
    this.log.v(4).info("No Pod using PVC was found in the Informer's cache", { PVC: key });
    // the cache may not have seen a new pod yet: a live list decides
    this.log.v(4).info('Looking for Pods using PVC', { PVC: key });
    if (!live.pods) {
      this.log.v(4).info('Live listing Pods in namespace', { namespace: ns });
      try {
        live.pods = (await new ResourceClient<any>(this.o.client, PODS, ns).listAll({ signal })).items ?? [];
      } catch (e) {
        throw new Error(`live list of pods failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    for (const pod of live.pods) {
      if (podUsesPVC(pod, pvc)) {
        this.log.v(2).info('Pod uses PVC', { pod: objectKey(pod), PVC: key });
        return true;
      }
    }
    this.log.v(2).info('PVC is unused', { PVC: key });
    return false;
  }
}

export const pvcProtectionControllerDescriptor: ControllerDescriptor = {
  name: 'persistentvolumeclaim-protection-controller',
  async run(ctx) {
    await withClient(ctx, 'pvc-protection-controller', undefined, async (client) => {
      const c = new PVCProtectionController({ client, pvcs: informerOf<any>(ctx, PERSISTENT_VOLUME_CLAIMS), pods: ctx.pods, log: ctx.log });
      // (kube-controller-manager runs one worker)
      await c.run(1, ctx.signal);
    });
  },
};

// ---- persistentvolume-protection-controller ----

/** a volume is in use while it is Bound to a claim (the binder keeps status.phase) */
export function pvIsBeingUsed(pv: any): boolean {
  return pv?.status?.phase === 'Bound';
}

export interface PVProtectionOptions {
  client: RESTClient;
  pvs: Informer<any>;
  log?: Logger;
}

export class PVProtectionController {
  readonly queue: RateLimitingQueue<string>;
  private readonly log: Logger;

  constructor(private readonly o: PVProtectionOptions) {
    this.log = o.log ?? nopLogger;
    this.queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'pvprotection');
    const enqueue = (pv: any): void => {
      this.log.v(4).info('Got event on PV', { PV: pv?.metadata?.name });
      if (needToAddFinalizer(pv, PV_PROTECTION_FINALIZER) || isDeletionCandidate(pv, PV_PROTECTION_FINALIZER)) this.queue.add(pv.metadata.name);
    };
    o.pvs.addEventHandler({ add: enqueue, update: (_old, pv) => enqueue(pv) });
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    await runQueueWorkers(
      {
        name: 'PV protection controller',
        log: this.log,
        queue: this.queue,
        informers: [this.o.pvs],
        sync: (name, signal) => this.processPV(name, signal),
        onError: (name, e, signal) => {
          if (signal.aborted) return;
          this.log.error(e, `PV ${name} failed with : ${e instanceof Error ? e.message : String(e)}`);
          this.queue.addRateLimited(name);
        },
      },
      workers,
      signal,
    );
  }

  /** one volume: its finalizer off when being deleted and not Bound, on when missing */
  async processPV(name: string, signal: AbortSignal): Promise<void> {
    this.log.v(4).info('Processing PV', { PV: name });
    const start = Date.now();
    try {
      const pv = this.o.pvs.getByName('', name);
      if (!pv) {
        this.log.v(4).info('PV not found, ignoring', { PV: name });
        return;
      }
      if (isDeletionCandidate(pv, PV_PROTECTION_FINALIZER)) {
        if (!pvIsBeingUsed(pv)) {
          await this.writeFinalizers(pv, (pv.metadata.finalizers as string[]).filter((f) => f !== PV_PROTECTION_FINALIZER), signal);
          this.log.v(3).info('Removed protection finalizer from PV', { PV: name });
          return;
        }
        this.log.v(4).info('Keeping PV because it is being used', { PV: name });
      }
      if (needToAddFinalizer(pv, PV_PROTECTION_FINALIZER)) {
        await this.writeFinalizers(pv, [...(pv.metadata.finalizers ?? []), PV_PROTECTION_FINALIZER], signal);
        this.log.v(3).info('Added protection finalizer to PV', { PV: name });
      }
    } finally {
      this.log.v(4).info('Finished processing PV', { PV: name, cost: `${Date.now() - start}ms` });
    }
  }

  private async writeFinalizers(pv: any, finalizers: string[], signal: AbortSignal): Promise<void> {
    try {
      await new ResourceClient<any>(this.o.client, PERSISTENT_VOLUMES).update({ ...pv, metadata: { ...pv.metadata, finalizers } }, { signal });
    } catch (e) {
      if (!signal.aborted) this.log.v(3).info(finalizers.includes(PV_PROTECTION_FINALIZER) ? 'Error adding protection finalizer to PV' : 'Error removing protection finalizer from PV', { PV: pv.metadata.name, err: e instanceof Error ? e.message : String(e) });
      throw e;
    }
  }
}

export const pvProtectionControllerDescriptor: ControllerDescriptor = {
  name: 'persistentvolume-protection-controller',
  async run(ctx) {
    await withClient(ctx, 'pv-protection-controller', undefined, async (client) => {
      const c = new PVProtectionController({ client, pvs: informerOf<any>(ctx, PERSISTENT_VOLUMES), log: ctx.log });
      // (kube-controller-manager runs one worker)
      await c.run(1, ctx.signal);
    });
  },
};
