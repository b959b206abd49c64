// Keelson's local-path provisioner: the storage `keelson server` ships when it runs its own node
// (--container-runtime-endpoint), as k3s and kind ship a local-path provisioner, so that a chart's
// claims and a StatefulSet's volumeClaimTemplates are served without any setup.
//
// - The StorageClass `local-path` (default class, provisioner keelson.io/local-path,
//   WaitForFirstConsumer, reclaim policy Delete, allowedTopologies: the server's node) is created
//   when missing, at the start and whenever it is deleted while the server runs. It carries the
//   labels below, so that `--disable=local-storage` deletes it and nothing else (a class of that
//   name without them, or of another provisioner, is the user's and is left alone). A class of ours
//   whose allowedTopologies name another node (--node-name changed) is brought back to this node.
// - Provisioning, as an external provisioner (the PV binder annotates a claim of a class whose
//   provisioner is outside kubernetes.io/ with volume.kubernetes.io/storage-provisioner and leaves
//   it): a claim annotated with keelson.io/local-path, of a class of that provisioner, without a
//   volume, whose selected node (volume.kubernetes.io/selected-node, set by the scheduler; none for
//   an Immediate class) is the server's node, gets the directory
//   <path>/pvc-<claim uid>_<namespace>_<name> (mode 0777, for pods that do not run as root; without
//   the name when that would pass a file name's 255 bytes) and a
//   PV `pvc-<claim uid>`: a hostPath volume (DirectoryOrCreate) with a required node affinity on
//   kubernetes.io/hostname, the claim's request, access modes and volume mode, the class's reclaim
//   policy and mount options, and a claimRef the binder then completes. Events as the external
//   provisioners' library writes them: Provisioning, ProvisioningSucceeded, ProvisioningFailed.
//   A claim this provisioner cannot honour (a selector, volumeMode Block, a data source, an access
//   mode other than ReadWriteOnce and ReadWriteOncePod, another selected node) gets
//   ProvisioningFailed once per version of the claim, and stays Pending; a claim whose selected
//   node is another gives that node up, so that the scheduler chooses again.
// - Deletion: a PV of ours that is Released under reclaim policy Delete (the binder leaves those
//   of external provisioners to them) loses its directory, if that is a directory directly under
//   the configured path (anything else is refused with VolumeFailedDelete), then the PV is deleted
//   (one deleted by hand while bound, Released on its way out, loses its directory all the same).
//
// It runs in the server's process, on the server's own node: the directories are made and
// removed locally. It is not a kube-controller-manager controller (keelson controller-manager does
// not run it) and it takes no lease: one server serves its one node.
import { chmodSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { DeletedFinalStateUnknown, Informer } from '../client/informer.js';
import { EventRecorder } from '../client/events.js';
import { nopLogger, type Logger } from '../client/log.js';
import { RESTClient, isAlreadyExists, isConflict, isNotFound } from '../client/rest.js';
import { ResourceClient, objectKey, splitKey } from '../client/resources.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { ANN_BETA_STORAGE_PROVISIONER, ANN_DYNAMICALLY_PROVISIONED, ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER, claimClass, claimReference } from '../schema/pvmatch.js';
import { runInServer, runQueueWorkers } from './workers.js';

export const LOCAL_PATH_PROVISIONER = 'keelson.io/local-path';
export const LOCAL_PATH_CLASS = 'local-path';
/** the --disable item of this component (k3s' name) */
export const LOCAL_STORAGE_COMPONENT = 'local-storage';
/** the labels of the class Keelson makes (so that --disable=local-storage deletes only its own) */
export const LOCAL_PATH_LABELS = { 'app.kubernetes.io/name': 'local-path-provisioner', 'app.kubernetes.io/managed-by': 'keelson' };
const ANN_DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';
const HOSTNAME_LABEL = 'kubernetes.io/hostname';
const SUPPORTED_ACCESS_MODES = ['ReadWriteOnce', 'ReadWriteOncePod'];

const PVS = { group: '', version: 'v1', resource: 'persistentvolumes' };
const PVCS = { group: '', version: 'v1', resource: 'persistentvolumeclaims' };
const CLASSES = { group: 'storage.k8s.io', version: 'v1', resource: 'storageclasses' };

export interface LocalPathOptions {
  client: RESTClient;
  /** the server's node: the only one this provisioner serves */
  nodeName: string;
  /** --default-local-storage-path: the volumes' directories are made directly under it */
  path: string;
  log?: Logger;
}

/** the StorageClass Keelson makes for its node */
export function localPathClass(nodeName: string): any {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: LOCAL_PATH_CLASS, labels: { ...LOCAL_PATH_LABELS }, annotations: { [ANN_DEFAULT_CLASS]: 'true' } },
    provisioner: LOCAL_PATH_PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
    allowedTopologies: topologyOf(nodeName),
  };
}

function topologyOf(nodeName: string): any[] {
  return [{ matchLabelExpressions: [{ key: HOSTNAME_LABEL, values: [nodeName] }] }];
}

/** the class is the one Keelson made (its labels, its provisioner): a user's class of that name is not */
export function isOurClass(cls: any): boolean {
  const l = cls?.metadata?.labels ?? {};
  return cls?.provisioner === LOCAL_PATH_PROVISIONER && Object.entries(LOCAL_PATH_LABELS).every(([k, v]) => l[k] === v);
}

function annotations(o: any): Record<string, string> {
  return o?.metadata?.annotations ?? {};
}

/** `--disable=local-storage`: the class Keelson made goes (a user's class of that name stays) */
export async function removeLocalPathClass(client: RESTClient, log: Logger = nopLogger): Promise<void> {
  const classes = new ResourceClient<any>(client, CLASSES);
  let cls: any;
  try {
    cls = await classes.get(LOCAL_PATH_CLASS);
  } catch (e) {
    if (isNotFound(e)) return;
    throw e;
  }
  if (!isOurClass(cls)) {
    log.info('The StorageClass local-path is not the one Keelson made: left as it is (--disable=local-storage)', { name: LOCAL_PATH_CLASS, provisioner: cls.provisioner });
    return;
  }
  try {
    await classes.delete(LOCAL_PATH_CLASS, { preconditions: { uid: cls.metadata.uid } });
    log.info('Deleted the StorageClass of the local-path provisioner (--disable=local-storage)', { name: LOCAL_PATH_CLASS });
  } catch (e) {
    if (!isNotFound(e) && !isConflict(e)) throw e;
  }
}

export class LocalPathProvisioner {
  readonly claims: Informer<any>;
  readonly volumes: Informer<any>;
  readonly classes: Informer<any>;
  private readonly claimQueue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'local-path claims');
  private readonly volumeQueue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'local-path volumes');
  private readonly log: Logger;
  private readonly recorder: EventRecorder;
  private readonly base: string;
  /** claims (uid) provisioned here, until the informer shows their PV */
  private readonly provisioned = new Set<string>();
  /** the version of each claim (uid) already refused, so that its ProvisioningFailed is written once */
  private readonly refused = new Map<string, string>();
  /** the version of each PV refused for deletion (VolumeFailedDelete once per version) */
  private readonly refusedDelete = new Map<string, string>();
  /** PVs of ours gone while Released under Delete (pv-protection lets a hand-deleted one go at once): their directories still to remove */
  private readonly goneVolumes = new Map<string, any>();
  private ensuring?: Promise<void>;
  private signal: AbortSignal = new AbortController().signal;

  constructor(private readonly o: LocalPathOptions) {
    this.log = o.log ?? nopLogger;
    this.base = resolve(o.path);
    // (the external provisioners' library names its events' source <provisioner>_<identity>)
    this.recorder = new EventRecorder(o.client, `${LOCAL_PATH_PROVISIONER}_${o.nodeName}`, this.log);
    this.claims = new Informer<any>(new ResourceClient<any>(o.client, PVCS), { log: this.log, name: 'persistentvolumeclaims' });
    this.volumes = new Informer<any>(new ResourceClient<any>(o.client, PVS), { log: this.log, name: 'persistentvolumes' });
    this.classes = new Informer<any>(new ResourceClient<any>(o.client, CLASSES), { log: this.log, name: 'storageclasses' });
    const claimKeyOf = (obj: any): string | undefined => {
      if (obj instanceof DeletedFinalStateUnknown) return obj.key;
      return obj?.metadata?.name ? objectKey(obj) : undefined;
    };
    this.claims.addEventHandler({
      add: (c) => this.claimQueue.add(objectKey(c)),
      update: (_o, c) => this.claimQueue.add(objectKey(c)),
      delete: (c) => {
        const obj = c instanceof DeletedFinalStateUnknown ? c.obj : c;
        const uid = obj?.metadata?.uid;
        if (uid) {
          this.provisioned.delete(uid);
          this.refused.delete(uid);
        }
        const k = claimKeyOf(c);
        if (k) this.claimQueue.add(k);
      },
    });
    this.volumes.addEventHandler({
      add: (v) => this.volumeQueue.add(v.metadata.name),
      update: (_o, v) => this.volumeQueue.add(v.metadata.name),
      delete: (v) => {
        const obj = v instanceof DeletedFinalStateUnknown ? v.obj : v;
        if (!obj?.metadata?.name) return;
        this.refusedDelete.delete(obj.metadata.name);
        if (annotations(obj)[ANN_DYNAMICALLY_PROVISIONED] === LOCAL_PATH_PROVISIONER && obj.status?.phase === 'Released' && obj.spec?.persistentVolumeReclaimPolicy === 'Delete') {
          this.goneVolumes.set(obj.metadata.name, obj);
          this.volumeQueue.add(obj.metadata.name);
        }
      },
    });
    this.classes.addEventHandler({
      // a class of ours that appears lets the claims waiting for it go on
      add: (cls) => {
        if (cls.provisioner === LOCAL_PATH_PROVISIONER) for (const c of this.claims.list()) this.claimQueue.add(objectKey(c));
      },
      update: (_o, cls) => {
        if (cls.metadata?.name === LOCAL_PATH_CLASS) void this.ensureClass();
      },
      delete: (cls) => {
        const name = cls instanceof DeletedFinalStateUnknown ? splitKey(cls.key).name : cls?.metadata?.name;
        if (name === LOCAL_PATH_CLASS) void this.ensureClass();
      },
    });
  }

  private event(obj: any, kind: string, type: 'Normal' | 'Warning', reason: string, message: string): void {
    void this.recorder.event({ ...obj, kind, apiVersion: 'v1' }, type, reason, message);
  }

  /** runs until the signal aborts */
  async run(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    const informers = [this.claims, this.volumes, this.classes];
    for (const i of informers) i.run();
    try {
      const synced = await Promise.all(informers.map((i) => i.waitForSync({ signal })));
      if (!synced.every(Boolean)) return;
      await this.ensureClass();
      await Promise.all([
        runQueueWorkers(
          {
            name: 'local-path provisioner (claims)',
            log: this.log,
            queue: this.claimQueue,
            informers,
            sync: (k) => this.syncClaim(k),
            onError: (k, err) => {
              this.log.error(err, 'Provisioning a local-path volume failed; trying again', { PVC: k });
              this.claimQueue.addRateLimited(k);
            },
          },
          1,
          signal,
        ),
        runQueueWorkers(
          {
            name: 'local-path provisioner (volumes)',
            log: this.log,
            queue: this.volumeQueue,
            informers,
            sync: (k) => this.syncVolume(k),
            onError: (k, err) => {
              this.log.error(err, 'Deleting a local-path volume failed; trying again', { PV: k });
              this.volumeQueue.addRateLimited(k);
            },
          },
          1,
          signal,
        ),
      ]);
    } finally {
      await Promise.all(informers.map((i) => i.stop()));
    }
  }

  // ---- the StorageClass ----

  /** the class created when missing; ours brought back to this node's topology. One at a time. */
  ensureClass(): Promise<void> {
    if (this.signal.aborted) return Promise.resolve();
    this.ensuring ??= this.doEnsureClass()
      .catch((e) => this.log.error(e, 'Keeping the local-path StorageClass failed'))
      .finally(() => (this.ensuring = undefined));
    return this.ensuring;
  }

  private async doEnsureClass(): Promise<void> {
    const classes = new ResourceClient<any>(this.o.client, CLASSES);
    let cls: any;
    try {
      cls = await classes.get(LOCAL_PATH_CLASS, { signal: this.signal });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    if (!cls) {
      try {
        await classes.create(localPathClass(this.o.nodeName), { signal: this.signal });
        this.log.info('Created the default StorageClass of the local-path provisioner', { name: LOCAL_PATH_CLASS, node: this.o.nodeName, path: this.base });
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
      return;
    }
    if (!isOurClass(cls) || cls.metadata?.deletionTimestamp) return;
    const want = topologyOf(this.o.nodeName);
    if (JSON.stringify(cls.allowedTopologies ?? null) === JSON.stringify(want)) return;
    try {
      await classes.update({ ...cls, allowedTopologies: want }, { signal: this.signal });
      this.log.info('The local-path StorageClass now names this node', { name: LOCAL_PATH_CLASS, node: this.o.nodeName });
    } catch (e) {
      if (!isConflict(e) && !isNotFound(e)) throw e;
    }
  }

  // ---- provisioning ----

  private async syncClaim(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const claim = this.claims.getByName(namespace, name);
    if (!claim || claim.metadata?.deletionTimestamp || claim.spec?.volumeName) return;
    const a = annotations(claim);
    if ((a[ANN_STORAGE_PROVISIONER] ?? a[ANN_BETA_STORAGE_PROVISIONER]) !== LOCAL_PATH_PROVISIONER) return;
    const className = claimClass(claim);
    const cls = this.classes.getByName('', className);
    // (the class may come back: its add queues the claims again)
    if (!cls || cls.provisioner !== LOCAL_PATH_PROVISIONER) return;
    const selected = a[ANN_SELECTED_NODE];
    if (cls.volumeBindingMode === 'WaitForFirstConsumer' && !selected) return;
    const uid: string = claim.metadata.uid;
    const pvName = `pvc-${uid}`;
    if (this.provisioned.has(uid) || this.volumes.getByName('', pvName)) return;
    const problem = this.cannotProvision(claim, selected);
    if (problem) {
      if (this.refused.get(uid) === claim.metadata.resourceVersion) return;
      this.refused.set(uid, claim.metadata.resourceVersion);
      this.event(claim, 'PersistentVolumeClaim', 'Warning', 'ProvisioningFailed', problem);
      if (selected && selected !== this.o.nodeName) await this.giveUpSelectedNode(claim);
      return;
    }
    this.event(claim, 'PersistentVolumeClaim', 'Normal', 'Provisioning', `External provisioner is provisioning volume for claim "${namespace}/${name}"`);
    // (a claim's name may be 253 characters: past a file name's 255 bytes, the namespace alone follows the uid)
    const long = `pvc-${uid}_${namespace}_${name}`;
    const dir = join(this.base, Buffer.byteLength(long) > 255 ? `pvc-${uid}_${namespace}` : long);
    try {
      mkdirSync(this.base, { recursive: true, mode: 0o755 });
      mkdirSync(dir, { recursive: true });
      // (mkdir's mode is masked by the umask: every user of the pod may write, as rancher's provisioner sets it)
      chmodSync(dir, 0o777);
    } catch (e) {
      this.event(claim, 'PersistentVolumeClaim', 'Warning', 'ProvisioningFailed', `failed to provision volume with StorageClass "${className}": ${(e as Error).message}`);
      throw e;
    }
    const pv = this.volumeFor(claim, cls, pvName, dir);
    try {
      await new ResourceClient<any>(this.o.client, PVS).create(pv, { signal: this.signal });
    } catch (e) {
      if (!isAlreadyExists(e)) {
        this.event(claim, 'PersistentVolumeClaim', 'Warning', 'ProvisioningFailed', `Error creating provisioned PV object for claim ${namespace}/${name}: ${(e as Error).message}`);
        throw e;
      }
      return;
    }
    this.provisioned.add(uid);
    this.refused.delete(uid);
    this.log.info('Provisioned a local-path volume', { PVC: key, PV: pvName, path: dir });
    this.event(claim, 'PersistentVolumeClaim', 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${pvName}`);
  }

  /** why this claim cannot have a directory on this node ('' when it can) */
  private cannotProvision(claim: any, selected: string | undefined): string {
    if (selected && selected !== this.o.nodeName) {
      return `${LOCAL_PATH_PROVISIONER} provisions volumes on node "${this.o.nodeName}" only, not on the selected node "${selected}"`;
    }
    const spec = claim.spec ?? {};
    if (spec.selector != null) return 'claim Selector is not supported';
    if (spec.volumeMode === 'Block') return `${LOCAL_PATH_PROVISIONER} does not support block volume provisioning`;
    if (spec.dataSource != null || spec.dataSourceRef != null) return `${LOCAL_PATH_PROVISIONER} does not support a data source: its volumes start empty`;
    const modes: string[] = Array.isArray(spec.accessModes) ? spec.accessModes : [];
    const other = modes.filter((m) => !SUPPORTED_ACCESS_MODES.includes(m));
    if (other.length) {
      return `${LOCAL_PATH_PROVISIONER} does not support access mode ${other.join(', ')}: a directory on one node serves ${SUPPORTED_ACCESS_MODES.join(' and ')} only`;
    }
    return '';
  }

  /** the claim's selected node given up (the external provisioners' reschedule), so that the scheduler chooses again */
  private async giveUpSelectedNode(claim: any): Promise<void> {
    const c = structuredClone(claim);
    delete c.metadata.annotations[ANN_SELECTED_NODE];
    try {
      await new ResourceClient<any>(this.o.client, PVCS, claim.metadata.namespace).update(c, { signal: this.signal });
    } catch (e) {
      if (!isConflict(e) && !isNotFound(e)) throw e;
    }
  }

  private volumeFor(claim: any, cls: any, pvName: string, dir: string): any {
    const spec = claim.spec ?? {};
    const pv: any = {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: pvName, annotations: { [ANN_DYNAMICALLY_PROVISIONED]: LOCAL_PATH_PROVISIONER } },
      spec: {
        capacity: { storage: spec.resources?.requests?.storage ?? '0' },
        accessModes: Array.isArray(spec.accessModes) && spec.accessModes.length ? spec.accessModes : ['ReadWriteOnce'],
        volumeMode: spec.volumeMode ?? 'Filesystem',
        persistentVolumeReclaimPolicy: cls.reclaimPolicy ?? 'Delete',
        storageClassName: claimClass(claim),
        hostPath: { path: dir, type: 'DirectoryOrCreate' },
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: HOSTNAME_LABEL, operator: 'In', values: [this.o.nodeName] }] }] } },
        claimRef: claimReference(claim),
      },
    };
    if (Array.isArray(cls.mountOptions) && cls.mountOptions.length) pv.spec.mountOptions = [...cls.mountOptions];
    return pv;
  }

  // ---- deletion ----

  private async syncVolume(name: string): Promise<void> {
    const live = this.volumes.getByName('', name);
    const gone = live ? undefined : this.goneVolumes.get(name);
    this.goneVolumes.delete(name);
    const pv = live ?? gone;
    if (!pv) return;
    if (annotations(pv)[ANN_DYNAMICALLY_PROVISIONED] !== LOCAL_PATH_PROVISIONER) return;
    if (pv.status?.phase !== 'Released' || pv.spec?.persistentVolumeReclaimPolicy !== 'Delete') return;
    // (a volume of another node is not on this machine)
    const nodes: string[] = (pv.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? []).flatMap((t: any) =>
      (t?.matchExpressions ?? []).filter((e: any) => e?.key === HOSTNAME_LABEL && e?.operator === 'In').flatMap((e: any) => e.values ?? []),
    );
    if (nodes.length && !nodes.includes(this.o.nodeName)) return;
    const path: unknown = pv.spec?.hostPath?.path;
    const dir = typeof path === 'string' && path ? resolve(path) : '';
    if (!dir || dirname(dir) !== this.base || !basename(dir).startsWith('pvc-')) {
      if (this.refusedDelete.get(name) === pv.metadata.resourceVersion) return;
      this.refusedDelete.set(name, pv.metadata.resourceVersion);
      this.event(pv, 'PersistentVolume', 'Warning', 'VolumeFailedDelete', `${LOCAL_PATH_PROVISIONER} deletes only directories directly under ${this.base}, not ${JSON.stringify(path ?? '')}: remove it and the PersistentVolume by hand`);
      return;
    }
    const existed = existsSync(dir);
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch (e) {
      this.event(pv, 'PersistentVolume', 'Warning', 'VolumeFailedDelete', (e as Error).message);
      if (gone) this.goneVolumes.set(name, gone);
      throw e;
    }
    // (a PV deleted by hand while bound is Released on its way out: its directory goes all the same)
    if (live && !pv.metadata?.deletionTimestamp) {
      try {
        await new ResourceClient<any>(this.o.client, PVS).delete(name, { preconditions: { uid: pv.metadata.uid }, signal: this.signal });
      } catch (e) {
        if (!isNotFound(e) && !isConflict(e)) throw e;
      }
    }
    if (existed) this.log.info('Deleted a local-path volume', { PV: name, path: dir });
  }
}

/**
 * `keelson server`: the local-path provisioner on the server's node, a client of the server over
 * loopback HTTPS with a certificate of its own. stop() never rejects.
 */
export function startLocalPathProvisioner(o: { rest: { server: string; ca: string; cert: string; key: string }; userAgent: string; nodeName: string; path: string; log: Logger }): { stop(): Promise<void> } {
  const client = new RESTClient({ ...o.rest, userAgent: o.userAgent, qps: 20, burst: 30 });
  const p = new LocalPathProvisioner({ client, nodeName: o.nodeName, path: o.path, log: o.log });
  const stopper = runInServer(client, (signal) => p.run(signal), o.log, 'The local-path provisioner stopped');
  o.log.info('Started the local-path provisioner', { node: o.nodeName, path: resolve(o.path), provisioner: LOCAL_PATH_PROVISIONER });
  return stopper;
}
