// The PersistentVolume binder (kube-controller-manager's persistentvolume-binder-controller,
// pkg/controller/volume/persistentvolume): binds PersistentVolumeClaims to PersistentVolumes,
// provisions volumes for claims through the in-tree host-path plugin (--enable-hostpath-provisioner)
// or leaves them to an external provisioner, and reclaims the volumes of deleted claims.
//
// The binding is Kubernetes' two-way pointer: pv.spec.claimRef first (then the PV's status), then
// pvc.spec.volumeName (then the claim's status), each a plain update on the version read, so that
// a write over a change made meanwhile fails with a conflict and the next sync starts again.
// `pv.kubernetes.io/bind-completed` on a claim says its binding was done once;
// `pv.kubernetes.io/bound-by-controller` on either side says the controller (not the user) made
// the pointer. One worker per queue (claims, volumes): a claim's sync is not reentrant.
//
// The controller keeps its own copy of the volumes and claims it has seen or written (a newer
// resourceVersion wins), as Kubernetes' does: after its own writes it does not take the informer's
// older copies for news. Every --pvclaimbinder-sync-period each claim and volume is synced again.
//
// Provisioning: a claim with a storage class and no matching volume is given to the class's
// provisioner: its name goes into `volume.kubernetes.io/storage-provisioner` (and the beta
// annotation); an external provisioner (any name outside kubernetes.io/) then does the work. For
// `kubernetes.io/host-path` with --enable-hostpath-provisioner the controller makes the directory
// /tmp/hostpath_pv/<uuid> on its own machine (only meaningful on a one-node cluster, as in
// Kubernetes) and a PV `pvc-<claim uid>` pre-bound to the claim, which the next sync binds.
//
// Reclaim: Retain leaves a Released volume; Delete removes the volume (for a hostPath volume, its
// directory when it lies under /tmp/, as the host-path deleter does; an external provisioner's
// volume is left to it) and then the PV; Recycle is deprecated, and Kubernetes recycles hostPath
// and NFS volumes with a scrubber pod: Keelson has no recycler, so a volume to recycle is marked
// Failed with the event Kubernetes gives a volume no recycler plugin supports.
//
// Not done: a WaitForFirstConsumer claim's event is always WaitForFirstConsumer (Kubernetes says
// WaitForPodScheduled when it finds unscheduled pods using the claim); CSI migration annotations;
// metrics.

import { mkdirSync, rmSync } from 'node:fs';
import { DeletedFinalStateUnknown, type Informer } from '../client/informer.js';
import { EventRecorder } from '../client/events.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isAlreadyExists, isConflict, isNotFound, type RESTClient } from '../client/rest.js';
import { ResourceClient, objectKey, splitKey } from '../client/resources.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { newUUID } from '../machinery/uuid.js';
import {
  ANN_BETA_STORAGE_CLASS,
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  ANN_DYNAMICALLY_PROVISIONED,
  ANN_MIGRATED_TO,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  PV_EXTERNAL_FINALIZER,
  PV_IN_TREE_FINALIZER,
  accessModesSatisfied,
  claimClass,
  claimReference,
  claimStorageRequest,
  findMatchingVolume,
  isVolumeBoundToClaim,
  storageNano,
  volumeCapacity,
  volumeClass,
  volumeModeMismatch,
} from '../schema/pvmatch.js';
import { parseQuantity } from '../schema/validation/quantity.js';
import { informerOf, withClient, type ControllerDescriptor } from './context.js';
import { runQueueWorkers } from './workers.js';

export const PERSISTENT_VOLUMES = { group: '', version: 'v1', resource: 'persistentvolumes' };
export const PERSISTENT_VOLUME_CLAIMS = { group: '', version: 'v1', resource: 'persistentvolumeclaims' };
export const STORAGE_CLASSES = { group: 'storage.k8s.io', version: 'v1', resource: 'storageclasses' };

const ANN_DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';
const ANN_BETA_DEFAULT_CLASS = 'storageclass.beta.kubernetes.io/is-default-class';
/** the host-path provisioner's mark on its volumes (volume/util's VolumeDynamicallyCreatedByKey) */
const ANN_CREATED_BY = 'kubernetes.io/createdby';
export const HOST_PATH_PLUGIN = 'kubernetes.io/host-path';
/** where the host-path provisioner makes its directories */
export const HOST_PATH_PROVISIONER_BASE = '/tmp/hostpath_pv';

const CREATE_PROVISIONED_PV_RETRIES = 5;
const CREATE_PROVISIONED_PV_INTERVAL_MS = 10_000;

// ---- helpers (those of k8s.io/component-helpers/storage/volume are in schema/pvmatch.ts, shared with the scheduler) ----

function annotations(obj: any): Record<string, string> {
  return obj?.metadata?.annotations ?? {};
}

function hasAnnotation(obj: any, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(annotations(obj), key);
}

/** whether the claim names a class at all (an explicit '' counts) */
function claimHasClass(claim: any): boolean {
  return ANN_BETA_STORAGE_CLASS in annotations(claim) || (claim?.spec?.storageClassName !== undefined && claim?.spec?.storageClassName !== null);
}

function claimKey(claim: any): string {
  return `${claim.metadata.namespace}/${claim.metadata.name}`;
}

function claimRefKey(ref: any): string {
  return `${ref.namespace}/${ref.name}`;
}

const MODE_ORDER = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'];

/** a volume's set of access modes as one key (GetAccessModesAsString: RWO,ROX,RWX,RWOP in that order) */
function accessModesKey(modes: string[] | undefined): string {
  const set = new Set(modes ?? []);
  return MODE_ORDER.filter((m) => set.has(m)).join(',');
}

/**
 * findBestMatchForClaim (index.go): the volumes are grouped by their exact set of access modes; the
 * groups that hold every mode the claim asks for are searched, those with the fewest modes first,
 * and the first group with a match gives the volume.
 */
export function findBestMatchForClaim(claim: any, volumes: Iterable<any>, delayBinding: boolean): any | undefined {
  const groups = new Map<string, any[]>();
  for (const pv of volumes) {
    const k = accessModesKey(pv.spec?.accessModes);
    let g = groups.get(k);
    if (!g) groups.set(k, (g = []));
    g.push(pv);
  }
  const wanted: string[] = claim?.spec?.accessModes ?? [];
  const keys = [...groups.keys()]
    .filter((k) => {
      const have = new Set(k ? k.split(',') : []);
      return wanted.every((m) => have.has(m));
    })
    .sort((a, b) => (a ? a.split(',').length : 0) - (b ? b.split(',').length : 0));
  for (const k of keys) {
    const v = findMatchingVolume(claim, groups.get(k)!, undefined, undefined, delayBinding);
    if (v) return v;
  }
  return undefined;
}

/** the default StorageClass (GetDefaultClass): the newest of those annotated default, then by name */
export function defaultStorageClass(classes: any[]): any | undefined {
  const defaults = classes.filter((c) => annotations(c)[ANN_DEFAULT_CLASS] === 'true' || annotations(c)[ANN_BETA_DEFAULT_CLASS] === 'true');
  defaults.sort((a, b) => {
    const ta = Date.parse(a.metadata?.creationTimestamp ?? '') || 0;
    const tb = Date.parse(b.metadata?.creationTimestamp ?? '') || 0;
    if (ta === tb) return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
    return tb - ta;
  });
  return defaults[0];
}

function clone<T>(o: T): T {
  return structuredClone(o);
}

function rvNumber(o: any): bigint | undefined {
  try {
    return BigInt(o?.metadata?.resourceVersion ?? '');
  } catch {
    return undefined;
  }
}

/** a Go %v of a string slice */
function goSlice(a: string[]): string {
  return `[${a.join(' ')}]`;
}

/** the cache of last known versions (storeObjectUpdate): an older version than the one kept is ignored */
class VersionedStore {
  private readonly items = new Map<string, any>();
  get(key: string): any | undefined {
    return this.items.get(key);
  }
  values(): IterableIterator<any> {
    return this.items.values();
  }
  delete(key: string): void {
    this.items.delete(key);
  }
  /** true when stored (new, or not older than the one kept) */
  update(key: string, obj: any): boolean {
    const old = this.items.get(key);
    if (old) {
      const a = rvNumber(old);
      const b = rvNumber(obj);
      if (a !== undefined && b !== undefined && a > b) return false;
    }
    this.items.set(key, obj);
    return true;
  }
}

/** an error a volume plugin reports (the deleter's, the provisioner's) */
class PluginError extends Error {}

export interface PersistentVolumeBinderOptions {
  client: RESTClient;
  volumes: Informer<any>;
  claims: Informer<any>;
  classes: Informer<any>;
  /** --pvclaimbinder-sync-period */
  syncPeriodMs: number;
  /** --enable-hostpath-provisioner */
  enableHostPathProvisioner: boolean;
  /** --enable-dynamic-provisioning (Kubernetes' default: true) */
  enableDynamicProvisioning?: boolean;
  log?: Logger;
  /** the host-path provisioner's base directory (default /tmp/hostpath_pv; tests may change it) */
  hostPathBase?: string;
  /** the wait between attempts to save a provisioned PV (default 10 s) */
  createProvisionedPVIntervalMs?: number;
}

export class PersistentVolumeBinder {
  readonly claimQueue: RateLimitingQueue<string>;
  readonly volumeQueue: RateLimitingQueue<string>;
  private readonly log: Logger;
  private readonly recorder: EventRecorder;
  private readonly pvClient: ResourceClient<any>;
  private readonly volumeCache = new VersionedStore();
  private readonly claimCache = new VersionedStore();
  /** asynchronous operations (provision, delete, recycle) running or backing off, by name */
  private readonly operations = new Map<string, { running: boolean; failures: number; notBefore: number }>();
  private signal: AbortSignal = new AbortController().signal;

  constructor(private readonly o: PersistentVolumeBinderOptions) {
    this.log = o.log ?? nopLogger;
    this.recorder = new EventRecorder(o.client, 'persistentvolume-controller', this.log);
    this.pvClient = new ResourceClient<any>(o.client, PERSISTENT_VOLUMES);
    this.claimQueue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'claims');
    this.volumeQueue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'volumes');
    const enqueue = (q: RateLimitingQueue<string>) => (obj: any) => {
      const o2 = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
      if (obj instanceof DeletedFinalStateUnknown && !o2) {
        q.add(obj.key);
        return;
      }
      if (o2?.metadata?.name) q.add(objectKey(o2));
    };
    o.volumes.addEventHandler({ add: enqueue(this.volumeQueue), update: (_o, n) => enqueue(this.volumeQueue)(n), delete: enqueue(this.volumeQueue) });
    o.claims.addEventHandler({ add: enqueue(this.claimQueue), update: (_o, n) => enqueue(this.claimQueue)(n), delete: enqueue(this.claimQueue) });
  }

  private claimsClient(ns: string): ResourceClient<any> {
    return new ResourceClient<any>(this.o.client, PERSISTENT_VOLUME_CLAIMS, ns);
  }

  private event(obj: any, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const isPV = !obj.metadata?.namespace;
    void this.recorder.event({ ...obj, kind: isPV ? 'PersistentVolume' : 'PersistentVolumeClaim', apiVersion: 'v1' }, type, reason, message);
  }

  async run(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    const informers = [this.o.volumes, this.o.claims, this.o.classes];
    const synced = await Promise.all(informers.map((i) => i.waitForSync({ signal })));
    if (!synced.every(Boolean)) return;
    // initializeCaches
    for (const pv of this.o.volumes.list()) this.volumeCache.update(pv.metadata.name, clone(pv));
    for (const pvc of this.o.claims.list()) this.claimCache.update(objectKey(pvc), clone(pvc));
    const timer = setInterval(() => this.resync(), Math.max(1, this.o.syncPeriodMs));
    timer.unref?.();
    try {
      await Promise.all([
        runQueueWorkers(
          {
            name: 'persistent volume controller',
            log: this.log,
            queue: this.volumeQueue,
            informers,
            sync: (k) => this.volumeWorker(k),
            // (Kubernetes' plain queues: a failed sync waits for the next event or resync)
            onError: (k, err) => this.logSyncError('Could not sync volume', { volumeName: k }, err),
          },
          1,
          signal,
        ),
        runQueueWorkers(
          {
            name: 'persistent volume claim worker',
            log: this.log,
            queue: this.claimQueue,
            informers,
            sync: (k) => this.claimWorker(k),
            onError: (k, err) => this.logSyncError('Could not sync claim', { PVC: k }, err),
          },
          1,
          signal,
        ),
      ]);
    } finally {
      clearInterval(timer);
    }
  }

  private logSyncError(msg: string, kv: Record<string, unknown>, err: unknown): void {
    if (isConflict(err)) this.log.v(3).info(msg, { ...kv, err: (err as Error).message });
    else this.log.error(err, msg, kv);
  }

  /** resync: every claim and volume of the informers queued again */
  resync(): void {
    this.log.v(4).info('Resyncing PV controller');
    for (const pvc of this.o.claims.list()) this.claimQueue.add(objectKey(pvc));
    for (const pv of this.o.volumes.list()) this.volumeQueue.add(pv.metadata.name);
  }

  // ---- workers ----

  private async volumeWorker(key: string): Promise<void> {
    const pv = this.o.volumes.getByName('', key);
    if (pv) {
      if (!this.volumeCache.update(key, clone(pv))) return;
      await this.syncVolume(clone(pv));
      return;
    }
    const gone = this.volumeCache.get(key);
    if (!gone) return;
    // deleteVolume
    this.volumeCache.delete(key);
    this.log.v(4).info('volume deleted', { volumeName: key });
    if (gone.spec?.claimRef) this.claimQueue.add(claimRefKey(gone.spec.claimRef));
  }

  private async claimWorker(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const pvc = this.o.claims.getByName(namespace, name);
    if (pvc) {
      if (!this.claimCache.update(key, clone(pvc))) return;
      await this.syncClaim(clone(pvc));
      return;
    }
    const gone = this.claimCache.get(key);
    if (!gone) return;
    // deleteClaim
    this.claimCache.delete(key);
    this.log.v(4).info('Claim deleted', { PVC: key });
    if (gone.spec?.volumeName) this.volumeQueue.add(gone.spec.volumeName);
  }

  // ---- claims ----

  async syncClaim(claim: any): Promise<void> {
    if (!hasAnnotation(claim, ANN_BIND_COMPLETED)) await this.syncUnboundClaim(claim);
    else await this.syncBoundClaim(claim);
  }

  private isDelayBindingMode(claim: any): boolean {
    const name = claimClass(claim);
    if (!name) return false;
    const cls = this.o.classes.getByName('', name);
    if (!cls) return false;
    if (!cls.volumeBindingMode) throw new Error(`VolumeBindingMode not set for StorageClass "${name}"`);
    return cls.volumeBindingMode === 'WaitForFirstConsumer';
  }

  private async syncUnboundClaim(claim: any): Promise<void> {
    if (!claim.spec?.volumeName) {
      const delayBinding = this.isDelayBindingMode(claim);
      const volume = findBestMatchForClaim(claim, this.volumeCache.values(), delayBinding);
      if (!volume) {
        if (await this.assignDefaultStorageClass(claim)) return;
        if (delayBinding && !hasAnnotation(claim, ANN_SELECTED_NODE)) {
          this.event(claim, 'Normal', 'WaitForFirstConsumer', 'waiting for first consumer to be created before binding');
        } else if (claimClass(claim) !== '') {
          // (the provisioning runs on its own; the claim is bound by a later sync)
          this.provisionClaim(claim);
          return;
        } else {
          this.event(claim, 'Normal', 'FailedBinding', 'no persistent volumes available for this claim and no storage class is set');
        }
        await this.updateClaimStatus(claim, 'Pending', undefined);
        return;
      }
      await this.bind(volume, claim);
      return;
    }
    // the user asked for a volume by name
    const volume = this.volumeCache.get(claim.spec.volumeName);
    if (!volume) {
      this.log.v(4).info('Synchronizing unbound PersistentVolumeClaim, volume requested and not found, will try again next time', { PVC: claimKey(claim), volumeName: claim.spec.volumeName });
      await this.updateClaimStatus(claim, 'Pending', undefined);
      return;
    }
    if (!volume.spec?.claimRef) {
      const why = checkVolumeSatisfyClaim(volume, claim);
      if (why) {
        this.event(claim, 'Warning', 'VolumeMismatch', `Cannot bind to requested volume "${volume.metadata.name}": ${why}`);
        await this.updateClaimStatus(claim, 'Pending', undefined);
        return;
      }
      await this.bind(volume, claim);
      return;
    }
    if (isVolumeBoundToClaim(volume, claim)) {
      await this.bind(volume, claim);
      return;
    }
    this.event(claim, 'Warning', 'FailedBinding', `volume "${volume.metadata.name}" already bound to a different claim.`);
    if (!hasAnnotation(claim, ANN_BOUND_BY_CONTROLLER)) {
      await this.updateClaimStatus(claim, 'Pending', undefined);
      return;
    }
    throw new Error(`invalid binding of claim "${claimKey(claim)}" to volume "${claim.spec.volumeName}": volume already claimed by "${claimRefKey(volume.spec.claimRef)}"`);
  }

  private async syncBoundClaim(claim: any): Promise<void> {
    if (!claim.spec?.volumeName) {
      await this.updateClaimStatusWithEvent(claim, 'Lost', undefined, 'Warning', 'ClaimLost', 'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!');
      return;
    }
    const volume = this.volumeCache.get(claim.spec.volumeName);
    if (!volume) {
      await this.updateClaimStatusWithEvent(claim, 'Lost', undefined, 'Warning', 'ClaimLost', 'Bound claim has lost its PersistentVolume. Data on the volume is lost!');
      return;
    }
    if (!volume.spec?.claimRef || volume.spec.claimRef.uid === claim.metadata.uid) {
      // (unbound volume: bind it again; bound to this claim: bind() only fixes what is missing)
      await this.bind(volume, claim);
      return;
    }
    await this.updateClaimStatusWithEvent(claim, 'Lost', undefined, 'Warning', 'ClaimMisbound', 'Two claims are bound to the same volume, this one is bound incorrectly');
  }

  // ---- volumes ----

  async syncVolume(volume: any): Promise<void> {
    volume = await this.updateVolumeFinalizers(volume);
    const ref = volume.spec?.claimRef;
    if (!ref) {
      await this.updateVolumePhase(volume, 'Available', '');
      return;
    }
    if (!ref.uid) {
      // pre-bound by the user to a claim not bound yet: the claim's sync does it. (Keelson also
      // queues that claim when it exists: synced before this volume reached the cache, it found no
      // volume, and in Kubernetes would wait for the next resync)
      await this.updateVolumePhase(volume, 'Available', '');
      if (ref.name && this.o.claims.getByName(ref.namespace ?? '', ref.name)) this.claimQueue.add(claimRefKey(ref));
      return;
    }
    const key = claimRefKey(ref);
    let claim: any = this.claimCache.get(key);
    if (!claim && volume.status?.phase !== 'Released' && volume.status?.phase !== 'Failed') {
      // (a claim bound elsewhere may not have reached the cache yet: the informer, then the server)
      claim = this.o.claims.getByName(ref.namespace, ref.name) ?? (await this.getClaim(ref.namespace, ref.name));
    }
    if (claim && claim.metadata.uid !== ref.uid) {
      // the cached claim may be older than the reference: ask the server
      claim = await this.getClaim(ref.namespace, ref.name);
      if (claim && claim.metadata.uid !== ref.uid) claim = undefined;
    }
    if (!claim) {
      if (volume.status?.phase !== 'Released' && volume.status?.phase !== 'Failed') {
        this.log.v(2).info('Volume is released and reclaim policy will be executed', { volumeName: volume.metadata.name, reclaimPolicy: volume.spec?.persistentVolumeReclaimPolicy });
        volume = await this.updateVolumePhase(volume, 'Released', '');
      }
      await this.reclaimVolume(volume);
      return;
    }
    if (!claim.spec?.volumeName) {
      if (volumeModeMismatch(claim, volume)) {
        this.event(volume, 'Warning', 'VolumeMismatch', `Cannot bind PersistentVolume to requested PersistentVolumeClaim "${claim.metadata.name}" due to incompatible volumeMode.`);
        this.event(claim, 'Warning', 'VolumeMismatch', `Cannot bind PersistentVolume "${volume.metadata.name}" to requested PersistentVolumeClaim due to incompatible volumeMode.`);
        return;
      }
      // the volume is bound and the claim not yet: the claim's sync finishes it (soon)
      this.claimQueue.add(claimKey(claim));
      return;
    }
    if (claim.spec.volumeName === volume.metadata.name) {
      await this.updateVolumePhase(volume, 'Bound', '');
      return;
    }
    // the claim is bound to another volume
    if (hasAnnotation(volume, ANN_DYNAMICALLY_PROVISIONED) && volume.spec?.persistentVolumeReclaimPolicy === 'Delete') {
      if (volume.status?.phase !== 'Released' && volume.status?.phase !== 'Failed') {
        volume = await this.updateVolumePhase(volume, 'Released', '');
      }
      await this.reclaimVolume(volume);
      return;
    }
    await this.unbindVolume(volume);
  }

  private async getClaim(ns: string, name: string): Promise<any | undefined> {
    try {
      return await this.claimsClient(ns).get(name, { signal: this.signal });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /**
   * modifyDeletionFinalizers (HonorPVReclaimPolicy): a volume an in-tree plugin provisioned keeps
   * kubernetes.io/pv-controller while its policy is Delete, and loses it under Retain or Recycle;
   * the external provisioner's finalizer is taken off such a volume.
   */
  private async updateVolumeFinalizers(volume: any): Promise<any> {
    const provisioner = annotations(volume)[ANN_DYNAMICALLY_PROVISIONED];
    if (provisioner === undefined || !provisioner.startsWith('kubernetes.io/')) return volume;
    const before: string[] = volume.metadata.finalizers ?? [];
    let after = [...before];
    const policy = volume.spec?.persistentVolumeReclaimPolicy;
    if (policy === 'Delete' && !after.includes(PV_IN_TREE_FINALIZER)) after.push(PV_IN_TREE_FINALIZER);
    else if ((policy === 'Retain' || policy === 'Recycle') && after.includes(PV_IN_TREE_FINALIZER)) after = after.filter((f) => f !== PV_IN_TREE_FINALIZER);
    if (after.includes(PV_EXTERNAL_FINALIZER)) after = after.filter((f) => f !== PV_EXTERNAL_FINALIZER);
    if (after.length === before.length && after.every((f, i) => f === before[i])) return volume;
    const c = clone(volume);
    c.metadata.finalizers = after;
    let updated: any;
    try {
      updated = await this.pvClient.update(c, { signal: this.signal });
    } catch (e) {
      throw new Error(`persistent Volume Controller can't anneal migration annotations or finalizer: ${(e as Error).message}`, { cause: e });
    }
    this.volumeCache.update(updated.metadata.name, updated);
    return updated;
  }

  // ---- writes ----

  /** updateClaimStatus: phase, and the volume's access modes and capacity (or none) */
  private async updateClaimStatus(claim: any, phase: string, volume: any | undefined): Promise<any> {
    const c = clone(claim);
    c.status ??= {};
    let dirty = false;
    if (claim.status?.phase !== phase) {
      c.status.phase = phase;
      dirty = true;
    }
    if (!volume) {
      if (claim.status?.accessModes !== undefined) {
        delete c.status.accessModes;
        dirty = true;
      }
      if (claim.status?.capacity !== undefined) {
        delete c.status.capacity;
        dirty = true;
      }
    } else {
      if (JSON.stringify(claim.status?.accessModes ?? null) !== JSON.stringify(volume.spec?.accessModes ?? null)) {
        c.status.accessModes = volume.spec?.accessModes;
        dirty = true;
      }
      // the capacity only when the claim becomes Bound (a later difference may be meant)
      if (claim.status?.phase !== phase) {
        const vcap = volume.spec?.capacity?.storage;
        if (vcap === undefined) throw new Error(`PersistentVolume "${volume.metadata.name}" is without a storage capacity`);
        const pre = annotations(volume)['volume.alpha.kubernetes.io/pre-resize-capacity'];
        if (pre !== undefined) {
          c.status.capacity = { ...(c.status.capacity ?? {}), storage: parseQuantity(pre) ? pre : vcap };
          dirty = true;
        } else if (claim.status?.capacity?.storage === undefined || storageNano(claim.status.capacity) !== storageNano(volume.spec.capacity)) {
          c.status.capacity = volume.spec.capacity;
          dirty = true;
        }
      }
    }
    if (!dirty) return claim;
    const updated = await this.claimsClient(claim.metadata.namespace).updateStatus(c, { signal: this.signal });
    this.claimCache.update(objectKey(updated), updated);
    this.log.v(2).info('Claim entered phase', { PVC: claimKey(claim), phase });
    return updated;
  }

  /** the status and an event, only when the phase changes */
  private async updateClaimStatusWithEvent(claim: any, phase: string, volume: any | undefined, type: 'Normal' | 'Warning', reason: string, message: string): Promise<any> {
    if (claim.status?.phase === phase) return claim;
    const updated = await this.updateClaimStatus(claim, phase, volume);
    this.event(updated, type, reason, message);
    return updated;
  }

  private async updateVolumePhase(volume: any, phase: string, message: string): Promise<any> {
    if (volume.status?.phase === phase) return volume;
    const c = clone(volume);
    c.status = { ...(c.status ?? {}), phase };
    if (message) c.status.message = message;
    else delete c.status.message;
    const updated = await this.pvClient.updateStatus(c, { signal: this.signal });
    this.volumeCache.update(updated.metadata.name, updated);
    this.log.v(2).info('Volume entered phase', { volumeName: volume.metadata.name, phase });
    return updated;
  }

  private async updateVolumePhaseWithEvent(volume: any, phase: string, type: 'Normal' | 'Warning', reason: string, message: string): Promise<any> {
    if (volume.status?.phase === phase) return volume;
    const updated = await this.updateVolumePhase(volume, phase, message);
    this.event(updated, type, reason, message);
    return updated;
  }

  /** assignDefaultStorageClass: a claim with no class at all gets the default one; true when updated */
  private async assignDefaultStorageClass(claim: any): Promise<boolean> {
    if (claimHasClass(claim)) return false;
    const cls = defaultStorageClass(this.o.classes.list());
    if (!cls) return false;
    const c = clone(claim);
    c.spec.storageClassName = cls.metadata.name;
    try {
      await this.claimsClient(claim.metadata.namespace).update(c, { signal: this.signal });
    } catch (e) {
      throw new Error(`can't update PersistentVolumeClaim["${claimKey(claim)}"]: ${(e as Error).message}`, { cause: e });
    }
    this.log.v(4).info('Successfully assigned StorageClass to PersistentVolumeClaim', { PVC: claimKey(claim), storageClassName: cls.metadata.name });
    return true;
  }

  /** bind: the volume's claimRef, its phase Bound, the claim's volumeName, its phase Bound (stops at the first error) */
  private async bind(volume: any, claim: any): Promise<void> {
    this.log.v(4).info('Binding volume to claim', { PVC: claimKey(claim), volumeName: volume.metadata.name });
    volume = await this.bindVolumeToClaim(volume, claim);
    volume = await this.updateVolumePhase(volume, 'Bound', '');
    claim = await this.bindClaimToVolume(claim, volume);
    await this.updateClaimStatus(claim, 'Bound', volume);
  }

  private async bindVolumeToClaim(volume: any, claim: any): Promise<any> {
    const c = clone(volume);
    let dirty = false;
    const setBoundByController = !isVolumeBoundToClaim(volume, claim);
    const ref = volume.spec?.claimRef;
    if (!ref || ref.name !== claim.metadata.name || ref.namespace !== claim.metadata.namespace || ref.uid !== claim.metadata.uid) {
      c.spec.claimRef = claimReference(claim);
      dirty = true;
    }
    if (setBoundByController && !hasAnnotation(c, ANN_BOUND_BY_CONTROLLER)) {
      c.metadata.annotations = { ...(c.metadata.annotations ?? {}), [ANN_BOUND_BY_CONTROLLER]: 'yes' };
      dirty = true;
    }
    if (!dirty) return volume;
    this.log.v(2).info('Claim bound to volume', { PVC: claimKey(claim), volumeName: volume.metadata.name });
    const updated = await this.pvClient.update(c, { signal: this.signal });
    this.volumeCache.update(updated.metadata.name, updated);
    return updated;
  }

  private async bindClaimToVolume(claim: any, volume: any): Promise<any> {
    const c = clone(claim);
    let dirty = false;
    const ann = { ...(c.metadata.annotations ?? {}) };
    if (claim.spec?.volumeName !== volume.metadata.name) {
      c.spec.volumeName = volume.metadata.name;
      if (!(ANN_BOUND_BY_CONTROLLER in ann)) ann[ANN_BOUND_BY_CONTROLLER] = 'yes';
      dirty = true;
    }
    if (!(ANN_BIND_COMPLETED in ann)) {
      ann[ANN_BIND_COMPLETED] = 'yes';
      dirty = true;
    }
    if (!dirty) return claim;
    c.metadata.annotations = ann;
    this.log.v(2).info('Volume bound to claim', { PVC: claimKey(claim), volumeName: volume.metadata.name });
    const updated = await this.claimsClient(claim.metadata.namespace).update(c, { signal: this.signal });
    this.claimCache.update(objectKey(updated), updated);
    return updated;
  }

  /** unbindVolume: the controller's binding undone (a user's pre-binding keeps its name, loses the uid); then Available */
  private async unbindVolume(volume: any): Promise<void> {
    const c = clone(volume);
    if (hasAnnotation(volume, ANN_BOUND_BY_CONTROLLER)) {
      delete c.spec.claimRef;
      delete c.metadata.annotations[ANN_BOUND_BY_CONTROLLER];
      if (Object.keys(c.metadata.annotations).length === 0) delete c.metadata.annotations;
    } else {
      c.spec.claimRef = { ...c.spec.claimRef };
      delete c.spec.claimRef.uid;
    }
    const updated = await this.pvClient.update(c, { signal: this.signal });
    this.volumeCache.update(updated.metadata.name, updated);
    await this.updateVolumePhase(updated, 'Available', '');
  }

  // ---- reclaim ----

  private async reclaimVolume(volume: any): Promise<void> {
    if (annotations(volume)[ANN_MIGRATED_TO]) return;
    const name = volume.metadata.name;
    switch (volume.spec?.persistentVolumeReclaimPolicy) {
      case 'Retain':
        this.log.v(4).info('ReclaimVolume: policy is Retain, nothing to do', { volumeName: name });
        return;
      case 'Recycle':
        this.scheduleOperation(`recycle-${name}[${volume.metadata.uid}]`, () => this.recycleVolumeOperation(volume));
        return;
      case 'Delete':
        this.scheduleOperation(`delete-${name}[${volume.metadata.uid}]`, () => this.deleteVolumeOperation(volume));
        return;
      default:
        await this.updateVolumePhaseWithEvent(volume, 'Failed', 'Warning', 'VolumeUnknownReclaimPolicy', 'Volume has unrecognized PersistentVolumeReclaimPolicy');
    }
  }

  /**
   * Kubernetes recycles hostPath and NFS volumes with a scrubber pod (the deprecated Recycle
   * policy); Keelson has no recycler plugin, so the volume fails as one no recycler supports does.
   */
  private async recycleVolumeOperation(volume: any): Promise<void> {
    const fresh = await this.getVolume(volume.metadata.name);
    if (!fresh || !this.isVolumeReleased(fresh)) return;
    await this.updateVolumePhaseWithEvent(fresh, 'Failed', 'Warning', 'VolumeFailedRecycle', 'No recycler plugin found for the volume!');
  }

  private async getVolume(name: string): Promise<any | undefined> {
    try {
      return await this.pvClient.get(name, { signal: this.signal });
    } catch (e) {
      this.log.v(3).info('Error reading persistent volume', { volumeName: name, err: (e as Error).message });
      return undefined;
    }
  }

  /** the volume is bound (with a uid) to a claim that is gone, or that is bound to another volume */
  private isVolumeReleased(volume: any): boolean {
    const ref = volume.spec?.claimRef;
    if (!ref || !ref.uid) return false;
    const claim = this.claimCache.get(claimRefKey(ref));
    if (claim && claim.metadata.uid === ref.uid) {
      return !!claim.spec?.volumeName && claim.spec.volumeName !== volume.metadata.name;
    }
    return true;
  }

  private async deleteVolumeOperation(volume: any): Promise<void> {
    const fresh = await this.getVolume(volume.metadata.name);
    if (!fresh) return;
    if (!this.isVolumeReleased(fresh)) {
      this.log.v(3).info('Volume no longer needs deletion, skipping', { volumeName: fresh.metadata.name });
      return;
    }
    let deleted: boolean;
    try {
      deleted = await this.doDeleteVolume(fresh);
    } catch (e) {
      this.log.v(3).info('Deletion of volume failed', { volumeName: fresh.metadata.name, err: (e as Error).message });
      await this.updateVolumePhaseWithEvent(fresh, 'Failed', 'Warning', 'VolumeFailedDelete', (e as Error).message);
      // (failed: the operation backs off, and the next sync tries again)
      throw e;
    }
    if (!deleted) return; // an external deleter's volume
    try {
      await this.pvClient.delete(fresh.metadata.name, { signal: this.signal });
    } catch (e) {
      if (!isNotFound(e)) this.log.v(3).info('Failed to delete volume from database', { volumeName: fresh.metadata.name, err: (e as Error).message });
    }
  }

  /**
   * The deleter: the plugin that provisioned the volume, else the one its source needs. Only the
   * host-path plugin deletes here (its directory, when under /tmp/); a volume of an external
   * provisioner or a CSI volume is left (false); any other source has no deleter (an error).
   */
  private async doDeleteVolume(volume: any): Promise<boolean> {
    const provisioner = annotations(volume)[ANN_DYNAMICALLY_PROVISIONED];
    let plugin: string | undefined;
    if (provisioner) {
      if (provisioner === HOST_PATH_PLUGIN) plugin = HOST_PATH_PLUGIN;
      else if (!provisioner.startsWith('kubernetes.io/')) return false;
      else throw new PluginError(`no deletable volume plugin matched name: ${provisioner}`);
    } else if (hasAnnotation(volume, ANN_MIGRATED_TO) || volume.spec?.csi) {
      return false;
    } else if (volume.spec?.hostPath) {
      plugin = HOST_PATH_PLUGIN;
    } else {
      throw new PluginError(`error getting deleter volume plugin for volume "${volume.metadata.name}": no deletable volume plugin matched`);
    }
    if (plugin === HOST_PATH_PLUGIN) {
      const path: string | undefined = volume.spec?.hostPath?.path;
      if (!path) throw new PluginError('spec.PersistentVolumeSource.HostPath is nil');
      if (!/\/tmp\/.+/.test(path)) throw new PluginError(`host_path deleter only supports /tmp/.+ but received provided ${path}`);
      rmSync(path, { recursive: true, force: true });
      this.log.v(2).info('Volume deleted', { volumeName: volume.metadata.name });
    }
    await this.removeDeletionProtectionFinalizer(volume);
    return true;
  }

  private async removeDeletionProtectionFinalizer(volume: any): Promise<void> {
    const fresh = await this.pvClient.get(volume.metadata.name, { signal: this.signal });
    const fins: string[] = fresh.metadata.finalizers ?? [];
    if (!fins.includes(PV_IN_TREE_FINALIZER)) return;
    const c = clone(fresh);
    c.metadata.finalizers = fins.filter((f) => f !== PV_IN_TREE_FINALIZER);
    try {
      const updated = await this.pvClient.update(c, { signal: this.signal });
      this.volumeCache.update(updated.metadata.name, updated);
    } catch (e) {
      throw new Error(`persistent volume controller can't update finalizer: ${(e as Error).message}`, { cause: e });
    }
    this.log.v(2).info('PV in-tree protection finalizer removed from volume', { volumeName: volume.metadata.name });
  }

  // ---- provisioning ----

  private provisionClaim(claim: any): void {
    if (this.o.enableDynamicProvisioning === false) return;
    const clsName = claimClass(claim);
    const cls = this.o.classes.getByName('', clsName);
    if (!cls) {
      this.event(claim, 'Warning', 'ProvisioningFailed', `storageclass.storage.k8s.io "${clsName}" not found`);
      return;
    }
    const provisioner: string = cls.provisioner ?? '';
    let internal = false;
    if (provisioner === HOST_PATH_PLUGIN) internal = true;
    else if (provisioner.startsWith('kubernetes.io/')) {
      this.event(claim, 'Warning', 'ProvisioningFailed', `no volume plugin matched name: ${provisioner}`);
      return;
    }
    this.scheduleOperation(`provision-${claimKey(claim)}[${claim.metadata.uid}]`, () => (internal ? this.provisionClaimOperation(claim, cls) : this.provisionClaimOperationExternal(claim, cls)));
  }

  /** setClaimProvisioner: volume.kubernetes.io/storage-provisioner (and the beta annotation) say who provisions */
  private async setClaimProvisioner(claim: any, provisioner: string): Promise<any> {
    if (annotations(claim)[ANN_STORAGE_PROVISIONER] === provisioner) return claim;
    const c = clone(claim);
    c.metadata.annotations = { ...(c.metadata.annotations ?? {}), [ANN_BETA_STORAGE_PROVISIONER]: provisioner, [ANN_STORAGE_PROVISIONER]: provisioner };
    const updated = await this.claimsClient(claim.metadata.namespace).update(c, { signal: this.signal });
    this.claimCache.update(objectKey(updated), updated);
    return updated;
  }

  private async provisionClaimOperationExternal(claim: any, cls: any): Promise<void> {
    const provisioner: string = cls.provisioner;
    try {
      claim = await this.setClaimProvisioner(claim, provisioner);
    } catch (e) {
      this.event(claim, 'Warning', 'ProvisioningFailed', `Error saving claim: ${(e as Error).message}`);
      throw e;
    }
    this.event(
      claim,
      'Normal',
      'ExternalProvisioning',
      `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
    );
  }

  private async provisionClaimOperation(claim: any, cls: any): Promise<void> {
    const plugin = HOST_PATH_PLUGIN;
    if (claim.spec?.dataSource) {
      const msg = `plugin "${plugin}" is not a CSI plugin. Only CSI plugin can provision a claim with a datasource`;
      this.event(claim, 'Warning', 'ProvisioningFailed', msg);
      throw new Error(msg);
    }
    claim = await this.setClaimProvisioner(claim, cls.provisioner);
    const pvName = `pvc-${claim.metadata.uid}`;
    try {
      await this.pvClient.get(pvName, { signal: this.signal });
      this.log.v(4).info('provisionClaimOperation: volume already exists, skipping', { PVC: claimKey(claim) });
      return;
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    const mountOptions: string[] = cls.mountOptions ?? [];
    if (mountOptions.length > 0) {
      this.event(claim, 'Warning', 'ProvisioningFailed', `Mount options are not supported by the provisioner but StorageClass "${cls.metadata.name}" has mount options ${goSlice(mountOptions)}`);
      throw new Error(`provisioner "${plugin}" doesn't support mount options`);
    }
    if (!this.o.enableHostPathProvisioner) {
      const err = `provisioning in volume plugin "${plugin}" is disabled`;
      this.event(claim, 'Warning', 'ProvisioningFailed', `Failed to create provisioner: ${err}`);
      throw new Error(err);
    }
    // Provision
    let path: string;
    try {
      if (claim.spec?.volumeMode === 'Block') throw new PluginError(`${plugin} does not support block volume provisioning`);
      path = `${this.o.hostPathBase ?? HOST_PATH_PROVISIONER_BASE}/${newUUID()}`;
      mkdirSync(path, { recursive: true, mode: 0o750 });
    } catch (e) {
      await this.rescheduleProvisioning(claim);
      this.event(claim, 'Warning', 'ProvisioningFailed', `Failed to provision volume with StorageClass "${cls.metadata.name}": ${(e as Error).message}`);
      throw e;
    }
    const accessModes: string[] = claim.spec?.accessModes?.length ? claim.spec.accessModes : ['ReadWriteOnce'];
    const reclaimPolicy: string = cls.reclaimPolicy ?? 'Delete';
    const pv: any = {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: {
        name: pvName,
        annotations: { [ANN_CREATED_BY]: 'hostpath-dynamic-provisioner', [ANN_BOUND_BY_CONTROLLER]: 'yes', [ANN_DYNAMICALLY_PROVISIONED]: plugin },
        ...(reclaimPolicy === 'Delete' ? { finalizers: [PV_IN_TREE_FINALIZER] } : {}),
      },
      spec: {
        persistentVolumeReclaimPolicy: reclaimPolicy,
        accessModes,
        capacity: { storage: claim.spec?.resources?.requests?.storage ?? '0' },
        hostPath: { path },
        claimRef: claimReference(claim),
        storageClassName: claimClass(claim),
      },
      status: { phase: 'Bound' },
    };
    let err: unknown;
    for (let i = 0; i < CREATE_PROVISIONED_PV_RETRIES; i++) {
      try {
        const created = await this.pvClient.create(pv, { signal: this.signal });
        this.volumeCache.update(created.metadata.name, created);
        err = undefined;
        break;
      } catch (e) {
        if (isAlreadyExists(e)) {
          err = undefined;
          break;
        }
        err = e;
        if (this.signal.aborted) break;
        this.log.v(3).info('Failed to save volume for claim', { PVC: claimKey(claim), volumeName: pvName, err: (e as Error).message });
        await new Promise((r) => setTimeout(r, this.o.createProvisionedPVIntervalMs ?? CREATE_PROVISIONED_PV_INTERVAL_MS));
      }
    }
    if (err) {
      this.event(claim, 'Warning', 'ProvisioningFailed', `Error creating provisioned PV object for claim ${claimKey(claim)}: ${(err as Error).message}. Deleting the volume.`);
      try {
        rmSync(path, { recursive: true, force: true });
      } catch (e) {
        this.event(claim, 'Warning', 'ProvisioningCleanupFailed', `Error cleaning provisioned volume for claim ${claimKey(claim)}: ${(e as Error).message}. Please delete manually.`);
      }
      return;
    }
    this.log.v(2).info('Volume provisioned for claim', { PVC: claimKey(claim), volumeName: pvName });
    this.event(claim, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${pvName} using ${plugin}`);
  }

  /** rescheduleProvisioning: a claim the scheduler chose a node for loses the choice, so that it chooses again */
  private async rescheduleProvisioning(claim: any): Promise<void> {
    if (!hasAnnotation(claim, ANN_SELECTED_NODE)) return;
    const c = clone(claim);
    delete c.metadata.annotations[ANN_SELECTED_NODE];
    try {
      const updated = await this.claimsClient(claim.metadata.namespace).update(c, { signal: this.signal });
      this.claimCache.update(objectKey(updated), updated);
    } catch (e) {
      this.log.v(4).info("Failed to delete annotation 'storagehelpers.AnnSelectedNode' for PersistentVolumeClaim", { PVC: claimKey(claim), err: (e as Error).message });
    }
  }

  /**
   * An operation runs once at a time under its name; after a failure the next attempt waits
   * (exponential backoff from 500 ms to about 2 minutes, as goroutinemap's).
   */
  private scheduleOperation(name: string, op: () => Promise<void>): void {
    const now = Date.now();
    const st = this.operations.get(name) ?? { running: false, failures: 0, notBefore: 0 };
    if (st.running) {
      this.log.v(4).info('Operation is already running, skipping', { operationName: name });
      return;
    }
    if (now < st.notBefore) {
      this.log.v(4).info('Operation postponed due to exponential backoff', { operationName: name });
      return;
    }
    st.running = true;
    this.operations.set(name, st);
    void op().then(
      () => this.operations.delete(name),
      (e) => {
        st.running = false;
        st.failures++;
        st.notBefore = Date.now() + Math.min(500 * 2 ** (st.failures - 1), 122_000);
        if (!this.signal.aborted) this.log.v(2).info('Operation failed', { operationName: name, err: (e as Error)?.message });
      },
    );
  }
}

/** checkVolumeSatisfyClaim: why a volume the claim names cannot be bound to it ('' when it can) */
export function checkVolumeSatisfyClaim(volume: any, claim: any): string {
  if (volume.metadata?.deletionTimestamp) return `the volume is marked for deletion "${volume.metadata.name}"`;
  if (volumeCapacity(volume) < claimStorageRequest(claim)) return 'requested PV is too small';
  if (volumeClass(volume) !== claimClass(claim)) return 'storageClassName does not match';
  if (volumeModeMismatch(claim, volume)) return 'incompatible volumeMode';
  if (!accessModesSatisfied(claim, volume)) return 'incompatible accessMode';
  return '';
}

export const persistentVolumeBinderControllerDescriptor: ControllerDescriptor = {
  name: 'persistentvolume-binder-controller',
  async run(ctx) {
    // (kube-controller-manager's client and service account: persistent-volume-binder)
    await withClient(ctx, 'persistent-volume-binder', undefined, async (client) => {
      const c = new PersistentVolumeBinder({
        client,
        volumes: informerOf<any>(ctx, PERSISTENT_VOLUMES),
        claims: informerOf<any>(ctx, PERSISTENT_VOLUME_CLAIMS),
        classes: informerOf<any>(ctx, STORAGE_CLASSES),
        syncPeriodMs: ctx.options.pvClaimBinderSyncPeriodMs,
        enableHostPathProvisioner: ctx.options.enableHostPathProvisioner,
        enableDynamicProvisioning: ctx.options.enableDynamicProvisioning,
        log: ctx.log,
      });
      await c.run(ctx.signal);
    });
  },
};
