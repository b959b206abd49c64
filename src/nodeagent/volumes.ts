// The pod's volumes on the node, as the kubelet's volume manager and volume plugins make them
// (pkg/volume/{emptydir,hostpath,configmap,secret,projected,downwardapi}, pkg/volume/util/atomic_writer.go),
// and the CRI mounts of a container (kubelet_pods.go makeMounts, kuberuntime makeMounts).
//
// Layout, as the kubelet's under its root directory:
//   <rootDir>/pods/<uid>/                                    the pod's directory (0750)
//   <rootDir>/pods/<uid>/volumes/kubernetes.io~<plugin>/<name>  each volume but hostPath, persistentVolumeClaim and ephemeral
//   <rootDir>/pods/<uid>/etc-hosts                           the /etc/hosts of its containers
//   <rootDir>/pods/<uid>/containers/<container>/<8 hex>      a termination message file per container start
//
// Volumes a container does not mount are left alone (the kubelet's populator skips unused
// volumes). emptyDir and hostPath volumes are set up once; configMap, secret, downwardAPI and
// projected ones are written again at every setUp when their contents changed (the kubelet
// remounts them at each sync), through the atomic writer: the files live in a hidden timestamped
// directory (`..2024_01_02_03_04_05.123456789`), `..data` is a symlink to it that a rename swaps,
// and each top-level entry is a symlink into `..data/`.
//
// Simplified against the kubelet (there is no mount here, only directories and files):
//   - emptyDir with medium Memory (or HugePages) is a plain directory on the node's disk, not a
//     tmpfs (its sizeLimit is enforced by the eviction manager, as any emptyDir's: eviction.ts);
//   - secret volumes are plain directories too (the kubelet's are tmpfs, so secrets never reach
//     the disk);
//   - a subPath is checked (no `..`, no absolute path, no symlink out of the volume) and resolved
//     when the container is created, not bind-mounted into volume-subpaths/ as the kubelet does;
//     a symlink swapped in afterwards by a container is not guarded against;
//   - ConfigMaps, Secrets and the node are read with a GET at each setUp (the kubelet's managers
//     cache them or watch them);
//   - a persistentVolumeClaim volume is resolved as the kubelet's desired-state populator does
//     (getPVCExtractPV, getPVSpec): the claim must exist, not be being deleted, be Bound with
//     spec.volumeName set, and its PersistentVolume's claimRef must carry the claim's uid; a PV of
//     type hostPath (with its `type` check) or local (its path must exist and be a directory) is
//     then mounted into the containers as a hostPath volume is: the path itself, not a bind mount
//     under volumes/kubernetes.io~local-volume/; read-only when the pod's claim says readOnly (the
//     mount's readOnly still applies); a PV whose only access mode is ReadWriteOncePod is refused
//     while another pod of this node has it set up. The claim is read once per pod (a running pod
//     keeps its volume when the claim changes later). What fails here is reported as the kubelet's
//     WaitForAttachAndMount reports it (`Unable to attach or mount volumes: unmounted
//     volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing
//     PVC default/data: PVC is not bound`); a PV of another type fails the same way (no volume
//     plugin matched), and the pod retries as for any failed mount;
//   - a generic ephemeral volume (`ephemeral.volumeClaimTemplate`) is the claim `<pod>-<volume>`
//     that the ephemeral volume controller makes (controllers/ephemeral.ts), resolved as the
//     populator resolves it: the claim as above, then it must be controlled by the pod (else
//     `PVC default/web-data was not created for pod default/web (pod is not owner)`), then its
//     volume and mount exactly as a persistentVolumeClaim volume's (never read-only by the claim);
//   - csi, image, clusterTrustBundle and the in-tree network
//     volumes are not supported: setUp fails with a FailedMount message naming the type; so do
//     block volumes (a claim in a container's volumeDevices: MapVolume.SetUpDevice failed).
import { randomInt, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, lchown, lstat, mkdir, open, readdir, readFile, readlink, realpath, rename, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { isAbsolute, join, posix } from 'node:path';
import type { Logger } from '../client/log.js';
import type { RESTClient } from '../client/rest.js';
import { ContainerConfigError, configMapData, containerResourceValue, envMap, errorMessage, expand, extractFieldPath, getObject, notFoundMessage, secretData } from './envvars.js';

export interface VolumeOptions {
  /** the kubelet's API client; none in standalone mode (no ConfigMaps, Secrets or tokens) */
  client: RESTClient | undefined;
  /** the kubelet's root directory (--root-dir, /var/lib/kubelet) */
  rootDir: string;
  nodeName: string;
  log: Logger;
  /** the cluster's DNS domain (--cluster-domain), for a pod's subdomain FQDN in /etc/hosts; default cluster.local */
  clusterDomain?: string;
  /** the node's allocatable (for downwardAPI resourceFieldRef items); by default read from the Node through the API */
  nodeAllocatable?: () => Promise<Record<string, string>>;
  /** the clock (ms), for the service account tokens' refresh */
  now?: () => number;
  /**
   * whether the runtime handler of the pod's sandbox mounts recursively read-only (the runtime's
   * Status lists its handlers' features; sandboxruntime.ts); absent: it does not
   */
  recursiveReadOnlySupported?: (pod: any) => Promise<boolean>;
}

/**
 * A read-only mount's recursive read-only mode as the kubelet resolves it
 * (resolveRecursiveReadOnly): whether it is recursive, or the error that fails the container
 */
export function resolveRecursiveReadOnly(m: any, supported: boolean): boolean {
  const mode = m?.recursiveReadOnly;
  if (mode === undefined || mode === null || mode === 'Disabled') return false;
  const name = JSON.stringify(String(m?.name ?? ''));
  if (m?.readOnly !== true) throw new Error(`volume ${name} requested recursive read-only mode, but it is not read-only`);
  if (m?.mountPropagation && m.mountPropagation !== 'None') throw new Error(`volume ${name} requested recursive read-only mode, but it is not compatible with propagation ${JSON.stringify(String(m.mountPropagation))}`);
  if (mode === 'IfPossible') return supported;
  if (mode === 'Enabled') {
    if (!supported) throw new Error(`volume ${name} requested recursive read-only mode, but it is not supported by the runtime`);
    return true;
  }
  throw new Error(`unknown recursive read-only mode ${JSON.stringify(String(mode))}`);
}

/** A volume that could not be set up; `message` is the kubelet's FailedMount event message (the first, when several volumes failed). */
export class VolumeError extends Error {
  override name = 'VolumeError';
  readonly reason = 'FailedMount';
  /** one FailedMount message per volume that failed */
  readonly messages: string[];
  constructor(messages: string[]) {
    super(messages[0] ?? 'volume setup failed');
    this.messages = messages;
  }
}

export interface CRIMount {
  containerPath: string;
  hostPath: string;
  readonly: boolean;
  selinuxRelabel: boolean;
  propagation: 'PROPAGATION_PRIVATE' | 'PROPAGATION_HOST_TO_CONTAINER' | 'PROPAGATION_BIDIRECTIONAL';
}

interface FileProjection {
  data: Buffer;
  mode: number;
  /** the owner of the file (the service account token's when all containers run as one user) */
  fsUser?: number;
}

/** the directory of each volume type under <rootDir>/pods/<uid>/volumes (the kubelet's plugin names) */
export const PLUGIN_DIRS: Record<string, string> = {
  emptyDir: 'kubernetes.io~empty-dir',
  configMap: 'kubernetes.io~configmap',
  secret: 'kubernetes.io~secret',
  downwardAPI: 'kubernetes.io~downward-api',
  projected: 'kubernetes.io~projected',
};
/** the volume types whose mounts are always read-only (their plugins' ReadOnly attribute) */
const READ_ONLY_TYPES = new Set(['configMap', 'secret', 'downwardAPI', 'projected']);
const DEFAULT_MODE = 0o644;
const ETC_HOSTS = '/etc/hosts';
const DATA_DIR = '..data';
const NEW_DATA_DIR = '..data_tmp';
const TOKEN_MAX_TTL_MS = 24 * 3600 * 1000;
const TOKEN_MAX_JITTER_MS = 10_000;

/** the type of a volume: its one source field (a volume without one is an emptyDir, as the API defaults it) */
export function volumeType(v: any): string {
  for (const k of Object.keys(v ?? {})) {
    if (k !== 'name' && v[k] !== null && typeof v[k] === 'object') return k;
  }
  return 'emptyDir';
}

/** the names of the volumes some container of the pod mounts (or, with `devices`, maps as a block device: volumeDevices) */
function usedVolumes(pod: any, devices = false): Set<string> {
  const used = new Set<string>();
  for (const list of [pod?.spec?.initContainers, pod?.spec?.containers, pod?.spec?.ephemeralContainers]) {
    if (!Array.isArray(list)) continue;
    for (const c of list) {
      const refs = devices ? c?.volumeDevices : c?.volumeMounts;
      for (const m of Array.isArray(refs) ? refs : []) if (m?.name) used.add(String(m.name));
    }
  }
  return used;
}

/** Go's words for a failed system call (`open /x: no such file or directory`) */
const ERRNO_TEXT: Record<string, string> = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'not a directory',
  EEXIST: 'file exists',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'file name too long',
};
function goFsError(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  const why = (err?.code && ERRNO_TEXT[err.code]) || errorMessage(e);
  return err?.syscall && err?.path ? `${err.syscall} ${err.path}: ${why}` : why;
}

/** utilerrors.NewAggregate(...).Error(): one message as is, several deduplicated in brackets */
function aggregate(msgs: string[]): string {
  const uniq = [...new Set(msgs)];
  return uniq.length === 1 ? uniq[0]! : `[${uniq.join(', ')}]`;
}

function isErrno(e: unknown, code: string): boolean {
  return (e as NodeJS.ErrnoException)?.code === code;
}

async function pathExists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}

function within(p: string, base: string): boolean {
  return p === base || p.startsWith(base.endsWith('/') ? base : base + '/');
}

let selinuxEnabled: boolean | undefined;
/** whether the node runs SELinux (the CRI relabels only then) */
function selinuxOn(): boolean {
  if (selinuxEnabled === undefined) selinuxEnabled = existsSync('/sys/fs/selinux/enforce');
  return selinuxEnabled;
}

// ── the atomic writer ───────────────────────────────────────────────────────────────────────────

function validatePayloadPath(p: string): void {
  if (p === '') throw new Error('invalid path: must not be empty: ""');
  if (isAbsolute(p)) throw new Error(`invalid path: must be relative path: ${p}`);
  if (p.length > 4096) throw new Error('invalid path: must be less than or equal to 4096 characters');
  const items = p.split('/');
  for (const item of items) {
    if (item === '..') throw new Error(`invalid path: must not contain '..': ${p}`);
    if (Buffer.byteLength(item) > 255) throw new Error('invalid path: filenames must be less than or equal to 255 characters');
  }
  if (items[0]!.startsWith('..') && items[0]!.length > 2) throw new Error(`invalid path: must not start with '..': ${p}`);
}

function cleanPath(p: string): string {
  const c = posix.normalize(p);
  return c.length > 1 && c.endsWith('/') ? c.slice(0, -1) : c;
}

function timestampName(now: Date): string {
  const z = (n: number, w = 2) => String(n).padStart(w, '0');
  return `..${now.getUTCFullYear()}_${z(now.getUTCMonth() + 1)}_${z(now.getUTCDate())}_${z(now.getUTCHours())}_${z(now.getUTCMinutes())}_${z(now.getUTCSeconds())}.`;
}

async function newTimestampDir(target: string): Promise<string> {
  for (;;) {
    const dir = join(target, timestampName(new Date()) + String(randomBytes(4).readUInt32BE(0)));
    try {
      await mkdir(dir, { mode: 0o700 });
    } catch (e) {
      if (isErrno(e, 'EEXIST')) continue;
      throw e;
    }
    // 0755 whatever the umask, so that group and others can walk into it
    await chmod(dir, 0o755);
    return dir;
  }
}

/** every path under dir, relative, directories included */
async function walkRelative(dir: string): Promise<Set<string>> {
  const out = new Set<string>();
  const visit = async (rel: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(join(dir, rel), { withFileTypes: true });
    } catch (e) {
      if (isErrno(e, 'ENOENT') || isErrno(e, 'ENOTDIR')) return;
      throw e;
    }
    for (const e of entries) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      out.add(p);
      if (e.isDirectory()) await visit(p);
    }
  };
  await visit('');
  return out;
}

async function differs(path: string, data: Buffer): Promise<boolean> {
  try {
    await lstat(path);
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return true;
    throw e;
  }
  return !data.equals(await readFile(path));
}

/**
 * Projects `payload` (relative path → file) into `target` atomically (see the top of this file).
 * Nothing is written when the files on disk have the same contents and none is to be removed.
 * `setPerms` runs on the new contents before they become visible. Returns whether it wrote.
 */
async function atomicWrite(target: string, payload: Map<string, FileProjection>, setPerms?: () => Promise<void>): Promise<boolean> {
  const clean = new Map<string, FileProjection>();
  for (const [p, f] of payload) {
    validatePayloadPath(p);
    clean.set(cleanPath(p), f);
  }
  const dataDir = join(target, DATA_DIR);
  let oldTs = '';
  try {
    oldTs = await readlink(dataDir);
  } catch (e) {
    if (!isErrno(e, 'ENOENT')) throw e;
  }
  const oldTsPath = oldTs ? join(target, oldTs) : '';
  let toRemove = new Set<string>();
  if (oldTsPath) {
    const current = await walkRelative(oldTsPath);
    const wanted = new Set<string>();
    for (const p of clean.keys()) for (let s = p; s !== '' && s !== '.'; s = posix.dirname(s)) wanted.add(s);
    toRemove = new Set([...current].filter((p) => !wanted.has(p)));
    let should = false;
    for (const [p, f] of clean) {
      if (await differs(join(oldTsPath, p), f.data)) {
        should = true;
        break;
      }
    }
    if (!should && toRemove.size === 0) return false;
  }

  const tsDir = await newTimestampDir(target);
  const tsName = tsDir.slice(target.length + 1);
  try {
    for (const [p, f] of clean) {
      const full = join(tsDir, p);
      await mkdir(posix.dirname(full), { recursive: true, mode: 0o777 });
      await writeFile(full, f.data, { mode: f.mode });
      // the mode exactly, whatever the umask
      await chmod(full, f.mode);
      if (f.fsUser !== undefined) await chown(full, f.fsUser, -1);
    }
  } catch (e) {
    await rm(tsDir, { recursive: true, force: true });
    throw e;
  }
  // the user-visible top-level entries: symlinks into ..data
  for (const p of clean.keys()) {
    const top = p.split('/')[0]!;
    const visible = join(target, top);
    try {
      await readlink(visible);
    } catch (e) {
      if (isErrno(e, 'ENOENT')) await symlink(join(DATA_DIR, top), visible);
    }
  }
  if (setPerms) await setPerms();
  const newData = join(target, NEW_DATA_DIR);
  // (one a crash left behind would block every later write)
  await rm(newData, { force: true });
  try {
    await symlink(tsName, newData);
    await rename(newData, dataDir);
  } catch (e) {
    await rm(newData, { force: true });
    await rm(tsDir, { recursive: true, force: true });
    throw e;
  }
  let lastErr: unknown;
  for (const p of toRemove) {
    // only the user-visible entries of the volume's root
    if (p.includes('/')) continue;
    try {
      await unlink(join(target, p));
    } catch (e) {
      if (!isErrno(e, 'ENOENT')) lastErr = e;
    }
  }
  if (oldTsPath) await rm(oldTsPath, { recursive: true, force: true });
  if (lastErr) throw lastErr;
  return true;
}

// ── ownership (fsGroup) ─────────────────────────────────────────────────────────────────────────

/**
 * volume.SetVolumeOwnership: everything under dir gets the group fsGroup and group read (and
 * write, unless the volume is read-only) permission; directories get setgid and group search.
 * With fsGroupChangePolicy OnRootMismatch nothing changes when the root has them already.
 */
async function setVolumeOwnership(dir: string, fsGroup: number, readOnly: boolean, policy: string | undefined): Promise<void> {
  const fileMask = readOnly ? 0o440 : 0o660;
  const dirMask = fileMask | 0o2000 | 0o110;
  if (policy === 'OnRootMismatch') {
    const st = await stat(dir);
    if (st.gid === fsGroup && (st.mode & dirMask) === dirMask) return;
  }
  const visit = async (p: string): Promise<void> => {
    const st = await lstat(p);
    await lchown(p, -1, fsGroup);
    if (st.isSymbolicLink()) return;
    const mask = st.isDirectory() ? dirMask : fileMask;
    await chmod(p, (st.mode & 0o7777) | mask);
    if (st.isDirectory()) for (const e of await readdir(p)) await visit(join(p, e));
  };
  await visit(dir);
}

/** securityContext's fsGroup of the pod */
function fsGroupOf(pod: any): number | undefined {
  const g = pod?.spec?.securityContext?.fsGroup;
  return typeof g === 'number' ? g : undefined;
}

/** util.FsUserFrom: the user every container runs as, when they all say the same one */
function fsUserOf(pod: any): number | undefined {
  const podUser = pod?.spec?.securityContext?.runAsUser;
  let user: number | undefined;
  for (const list of [pod?.spec?.initContainers, pod?.spec?.containers, pod?.spec?.ephemeralContainers]) {
    if (!Array.isArray(list)) continue;
    for (const c of list) {
      const u = c?.securityContext?.runAsUser ?? podUser;
      if (typeof u !== 'number') return undefined;
      if (user !== undefined && user !== u) return undefined;
      user = u;
    }
  }
  return user;
}

// ── the manager ─────────────────────────────────────────────────────────────────────────────────

interface CachedToken {
  token: string;
  /** expirationTimestamp, ms */
  expiresAt: number;
  /** the lifetime the API server granted (spec.expirationSeconds of its answer) */
  ttlSeconds: number;
}

/** what one setUp reads, once each */
class Reads {
  private readonly objects = new Map<string, Promise<any | undefined>>();
  private allocatable?: Promise<Record<string, string>>;
  constructor(
    private readonly m: VolumeManager,
    private readonly ns: string,
  ) {}
  object(resource: 'configmaps' | 'secrets', name: string): Promise<any | undefined> {
    const key = `${resource}/${name}`;
    let p = this.objects.get(key);
    if (!p) {
      const client = this.m.options.client;
      p = client ? getObject(client, resource, this.ns, name) : Promise.reject(new Error('not supported due to running kubelet in standalone mode'));
      this.objects.set(key, p);
    }
    return p;
  }
  nodeAllocatable(): Promise<Record<string, string>> {
    this.allocatable ??= this.m.readNodeAllocatable();
    return this.allocatable;
  }
  /** a PersistentVolumeClaim of the pod's namespace or a PersistentVolume, through the API (errors as the client words them) */
  storage(resource: 'persistentvolumeclaims' | 'persistentvolumes', name: string): Promise<any> {
    const key = `${resource}/${name}`;
    let p = this.objects.get(key);
    if (!p) {
      const client = this.m.options.client;
      const path = resource === 'persistentvolumes' ? `/api/v1/persistentvolumes/${encodeURIComponent(name)}` : `/api/v1/namespaces/${encodeURIComponent(this.ns)}/persistentvolumeclaims/${encodeURIComponent(name)}`;
      p = client ? client.json({ method: 'GET', path }) : Promise.reject(new Error('not supported due to running kubelet in standalone mode'));
      this.objects.set(key, p);
    }
    return p;
  }
}

/** a pod's persistentVolumeClaim volume resolved to its PersistentVolume (what the containers mount) */
interface ClaimVolume {
  pvName: string;
  /** hostPath or local */
  type: 'hostPath' | 'local';
  path: string;
  /** the pod's claim says readOnly (the volume spec's ReadOnly, which the plugins' mounters honour) */
  readOnly: boolean;
  /** a hostPath PV's `type` */
  hostPathType: string;
  accessModes: string[];
}

/** the fields of a PersistentVolumeSpec that are not its volume source */
const PV_SPEC_FIELDS = new Set(['accessModes', 'capacity', 'claimRef', 'persistentVolumeReclaimPolicy', 'storageClassName', 'mountOptions', 'volumeMode', 'nodeAffinity', 'volumeAttributesClassName']);

/** the volume source of a PersistentVolume (hostPath, local, nfs, csi, ...) */
export function persistentVolumeType(pv: any): string {
  const spec = pv?.spec ?? {};
  for (const k of Object.keys(spec)) if (!PV_SPEC_FIELDS.has(k) && spec[k] !== null && typeof spec[k] === 'object') return k;
  return '';
}

/** Go's %v of a []string */
function goList(items: readonly string[]): string {
  return `[${items.join(' ')}]`;
}

export class VolumeManager {
  readonly options: VolumeOptions;
  private readonly tokens = new Map<string, CachedToken>();
  /** per pod uid: the emptyDir and hostPath volumes set up already */
  private readonly setUpOnce = new Map<string, Set<string>>();
  private readonly locks = new Map<string, Promise<unknown>>();
  /** per pod uid: its persistentVolumeClaim volumes resolved, by volume name */
  private readonly claims = new Map<string, Map<string, ClaimVolume>>();

  constructor(o: VolumeOptions) {
    this.options = o;
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  podDir(uid: string): string {
    return join(this.options.rootDir, 'pods', uid);
  }

  /** where a volume of the pod lives on the node (a hostPath volume: its path); undefined for unsupported types */
  volumePath(uid: string, volume: any): string | undefined {
    const type = volumeType(volume);
    if (type === 'hostPath') return String(volume.hostPath?.path ?? '');
    if (type === 'persistentVolumeClaim' || type === 'ephemeral') return this.claims.get(uid)?.get(String(volume.name))?.path;
    const plugin = PLUGIN_DIRS[type];
    return plugin ? join(this.podDir(uid), 'volumes', plugin, String(volume.name)) : undefined;
  }

  /** runs f after the pod's previous operation (setUp, tearDown) ended */
  private async serialized<T>(uid: string, f: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(uid) ?? Promise.resolve();
    const run = prev.then(f, f);
    const settled = run.catch(() => undefined);
    this.locks.set(uid, settled);
    try {
      return await run;
    } finally {
      if (this.locks.get(uid) === settled) this.locks.delete(uid);
    }
  }

  /**
   * Makes every volume the pod's containers mount ready on the node (idempotent; configMap,
   * secret, downwardAPI and projected contents are refreshed when they changed). Throws
   * VolumeError with the kubelet's FailedMount message of each volume that failed, e.g.
   * `MountVolume.SetUp failed for volume "cfg" : configmap "x" not found`.
   */
  async setUp(pod: any): Promise<void> {
    const uid = String(pod?.metadata?.uid ?? '');
    if (!uid) throw new VolumeError(['the pod has no uid']);
    await this.serialized(uid, () => this.setUpPod(pod, uid));
  }

  private async setUpPod(pod: any, uid: string): Promise<void> {
    const dir = this.podDir(uid);
    for (const d of [dir, join(dir, 'volumes'), join(dir, 'plugins')]) await mkdir(d, { recursive: true, mode: 0o750 });
    this.pruneTokens();
    const mounted = usedVolumes(pod);
    const devices = usedVolumes(pod, true);
    const used = new Set([...mounted, ...devices]);
    const reads = new Reads(this, String(pod?.metadata?.namespace ?? ''));
    const failures: string[] = [];
    /** the volumes the populator could not process (a claim not bound, ...), and why */
    const unprocessed = new Map<string, string>();
    const unmounted: string[] = [];
    for (const v of Array.isArray(pod?.spec?.volumes) ? pod.spec.volumes : []) {
      const name = String(v?.name ?? '');
      if (!used.has(name)) continue;
      let specName = name;
      let prefix = 'MountVolume.SetUp failed';
      try {
        if (volumeType(v) === 'persistentVolumeClaim' || volumeType(v) === 'ephemeral') {
          let claim: ClaimVolume;
          try {
            claim = await this.resolveClaim(pod, uid, v, reads, mounted.has(name), devices.has(name));
          } catch (e) {
            unprocessed.set(name, errorMessage(e));
            unmounted.push(name);
            this.options.log.error(e, 'Error processing volume', { pod: `${pod?.metadata?.namespace}/${pod?.metadata?.name}`, volumeName: name });
            continue;
          }
          specName = claim.pvName;
          // (a block volume resolves, but Keelson maps no devices)
          if (devices.has(name)) throw Object.assign(new Error("Keelson's kubelet does not support block volumes (volumeDevices)"), { prefix: 'MapVolume.SetUpDevice failed' });
          if (claim.type === 'local') prefix = 'MountVolume.GetDeviceMountPath failed';
          await this.setUpClaim(pod, uid, name, claim);
        } else await this.setUpVolume(pod, uid, v, reads);
      } catch (e) {
        const msg = `${(e as any)?.prefix ?? prefix} for volume ${JSON.stringify(specName)} : ${errorMessage(e)}`;
        this.options.log.warn('volume setup failed', { pod: `${pod?.metadata?.namespace}/${pod?.metadata?.name}`, volume: name, err: errorMessage(e) });
        failures.push(msg);
        unmounted.push(name);
      }
    }
    if (unprocessed.size) {
      // WaitForAttachAndMount: the populator's errors (sorted, deduplicated) end the wait at once
      const errs = [...new Set(unprocessed.values())].sort();
      const names = [...unprocessed.keys()].sort();
      failures.unshift(`Unable to attach or mount volumes: unmounted volumes=${goList([...unmounted].sort())}, unattached volumes=[], failed to process volumes=${goList(names)}: ${errs.join('; ')}`);
    }
    if (failures.length) throw new VolumeError(failures);
  }

  /**
   * createVolumeSpec of a persistentVolumeClaim volume: the claim (getPVCExtractPV), its volume
   * (getPVSpec), the volume mode, and a plugin for the volume's type (AddPodToVolume); once
   * resolved for a pod, the same answer is kept
   */
  private async resolveClaim(pod: any, uid: string, v: any, reads: Reads, mounted: boolean, device: boolean): Promise<ClaimVolume> {
    const name = String(v.name);
    const known = this.claims.get(uid)?.get(name);
    if (known) return known;
    const ns = String(pod?.metadata?.namespace ?? '');
    // a generic ephemeral volume is its claim `<pod>-<volume>`, which the pod must control
    const ephemeral = !v.persistentVolumeClaim && !!v.ephemeral;
    const claimName = ephemeral ? `${String(pod?.metadata?.name ?? '')}-${name}` : String(v.persistentVolumeClaim?.claimName ?? '');
    const where = `error processing PVC ${ns}/${claimName}`;
    let pvc: any;
    try {
      pvc = await reads.storage('persistentvolumeclaims', claimName);
    } catch (e) {
      throw new Error(`${where}: failed to fetch PVC from API server: ${errorMessage(e)}`);
    }
    if (pvc?.metadata?.deletionTimestamp) throw new Error(`${where}: PVC is being deleted`);
    if (pvc?.status?.phase !== 'Bound') throw new Error(`${where}: PVC is not bound`);
    const pvName = String(pvc?.spec?.volumeName ?? '');
    if (!pvName) throw new Error(`${where}: PVC has empty pvc.Spec.VolumeName`);
    if (ephemeral && (pvc?.metadata?.namespace !== ns || !(pvc?.metadata?.ownerReferences ?? []).some((r: any) => r?.controller === true && r?.uid === uid))) {
      throw new Error(`PVC ${String(pvc?.metadata?.namespace ?? '')}/${claimName} was not created for pod ${ns}/${String(pod?.metadata?.name ?? '')} (pod is not owner)`);
    }
    let pv: any;
    try {
      pv = await reads.storage('persistentvolumes', pvName);
    } catch (e) {
      throw new Error(`${where}: failed to fetch PV ${pvName} from API server: ${errorMessage(e)}`);
    }
    const ref = pv?.spec?.claimRef;
    if (!ref) throw new Error(`${where}: found PV object ${pvName} but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim`);
    const claimUID = String(pvc?.metadata?.uid ?? '');
    if (String(ref.uid ?? '') !== claimUID) throw new Error(`${where}: found PV object ${pvName} but its pv.Spec.ClaimRef.UID ${String(ref.uid ?? '')} does not point to claim.UID ${claimUID}`);
    const mode = String(pv?.spec?.volumeMode || 'Filesystem');
    if (mounted && mode !== 'Filesystem') throw new Error(`volume ${name} has volumeMode ${mode}, but is specified in volumeMounts`);
    if (device && mode !== 'Block') throw new Error(`volume ${name} has volumeMode ${mode}, but is specified in volumeDevices`);
    const type = persistentVolumeType(pv);
    if (type !== 'hostPath' && type !== 'local') {
      throw new Error(`failed to get Plugin from volumeSpec for volume ${JSON.stringify(pvName)} err=no volume plugin matched (Keelson's kubelet mounts hostPath and local persistent volumes only, not ${type || 'this type'})`);
    }
    return {
      pvName,
      type,
      path: String(pv.spec[type]?.path ?? ''),
      readOnly: v.persistentVolumeClaim?.readOnly === true,
      hostPathType: type === 'hostPath' ? String(pv.spec.hostPath?.type ?? '') : '',
      accessModes: Array.isArray(pv?.spec?.accessModes) ? pv.spec.accessModes.map(String) : [],
    };
  }

  /** the operation executor's MountVolume of a resolved claim: ReadWriteOncePod, then the plugin's checks (hostPath's type, local's path) */
  private async setUpClaim(pod: any, uid: string, name: string, claim: ClaimVolume): Promise<void> {
    let mine = this.claims.get(uid);
    if (mine?.has(name)) return;
    const modes = claim.accessModes;
    if (modes.length === 1 && modes[0] === 'ReadWriteOncePod') {
      for (const [other, vols] of this.claims) {
        if (other === uid) continue;
        for (const c of vols.values()) {
          if (c.pvName === claim.pvName) throw Object.assign(new Error('volume uses the ReadWriteOncePod access mode and is already in use by another pod'), { prefix: 'MountVolume.SetUp failed' });
        }
      }
    }
    if (claim.type === 'hostPath') await checkHostPath(claim.path, claim.hostPathType);
    else {
      // the local plugin's GetDeviceMountPath: hostutil's GetFileType of the path
      if (!claim.path) throw new Error('local volume source is nil or local path is not set');
      let st;
      try {
        st = await stat(claim.path);
      } catch (e) {
        if (isErrno(e, 'ENOENT')) throw new Error(`path ${JSON.stringify(claim.path)} does not exist`);
        throw new Error(goFsError(e));
      }
      if (!st.isDirectory()) throw new Error('only directory and block device are supported');
      const g = fsGroupOf(pod);
      if (g !== undefined && !claim.readOnly) {
        try {
          await setVolumeOwnership(claim.path, g, false, pod.spec.securityContext.fsGroupChangePolicy);
        } catch (e) {
          throw Object.assign(new Error(errorMessage(e)), { prefix: 'MountVolume.SetUp failed' });
        }
      }
    }
    if (!mine) this.claims.set(uid, (mine = new Map()));
    mine.set(name, claim);
  }

  private async setUpVolume(pod: any, uid: string, v: any, reads: Reads): Promise<void> {
    const type = volumeType(v);
    const name = String(v.name);
    const once = this.setUpOnce.get(uid) ?? new Set<string>();
    switch (type) {
      case 'emptyDir': {
        if (once.has(name)) return;
        await this.setUpEmptyDir(pod, this.volumePath(uid, v)!);
        break;
      }
      case 'hostPath': {
        if (once.has(name)) return;
        await checkHostPath(String(v.hostPath?.path ?? ''), String(v.hostPath?.type ?? ''));
        break;
      }
      case 'configMap':
        return this.writeVolume(pod, this.volumePath(uid, v)!, await this.configMapPayload(v.configMap, reads));
      case 'secret':
        return this.writeVolume(pod, this.volumePath(uid, v)!, await this.secretPayload(v.secret, reads));
      case 'downwardAPI':
        return this.writeVolume(pod, this.volumePath(uid, v)!, await this.downwardAPIPayload(pod, v.downwardAPI?.items, modeOf(v.downwardAPI?.defaultMode), reads));
      case 'projected':
        return this.writeVolume(pod, this.volumePath(uid, v)!, await this.projectedPayload(pod, v.projected, reads));
      default:
        throw new Error(`Keelson's kubelet does not support ${type} volumes`);
    }
    once.add(name);
    this.setUpOnce.set(uid, once);
  }

  private async setUpEmptyDir(pod: any, dir: string): Promise<void> {
    // medium Memory (and HugePages) is a plain directory here, not a tmpfs; the eviction manager enforces sizeLimit
    if (await pathExists(dir)) return;
    await mkdir(join(dir, '..'), { recursive: true, mode: 0o750 });
    await mkdir(dir, { mode: 0o777 });
    await chmod(dir, 0o777);
    const g = fsGroupOf(pod);
    if (g !== undefined) await setVolumeOwnership(dir, g, false, pod.spec.securityContext.fsGroupChangePolicy);
  }

  /** an atomic-writer volume: its directory (as the kubelet's wrapped emptyDir, 0777), its files, the fsGroup ownership */
  private async writeVolume(pod: any, dir: string, payload: Map<string, FileProjection>): Promise<void> {
    if (!(await pathExists(dir))) {
      await mkdir(join(dir, '..'), { recursive: true, mode: 0o750 });
      await mkdir(dir, { mode: 0o777 });
      await chmod(dir, 0o777);
    }
    const g = fsGroupOf(pod);
    const setPerms = g !== undefined ? () => setVolumeOwnership(dir, g, true, pod.spec.securityContext.fsGroupChangePolicy) : undefined;
    const wrote = await atomicWrite(dir, payload, setPerms);
    if (wrote) this.options.log.v(4).info('volume contents written', { pod: `${pod?.metadata?.namespace}/${pod?.metadata?.name}`, dir });
  }

  private async configMapPayload(src: any, reads: Reads): Promise<Map<string, FileProjection>> {
    const name = String(src?.name ?? '');
    const optional = src?.optional === true;
    const cm = await reads.object('configmaps', name);
    if (!cm && !optional) throw new Error(notFoundMessage('configmap', name));
    return configMapFiles(src?.items, cm, modeOf(src?.defaultMode), optional);
  }

  private async secretPayload(src: any, reads: Reads): Promise<Map<string, FileProjection>> {
    const name = String(src?.secretName ?? src?.name ?? '');
    const optional = src?.optional === true;
    const s = await reads.object('secrets', name);
    if (!s && !optional) throw new Error(notFoundMessage('secret', name));
    return secretFiles(src?.items, s, modeOf(src?.defaultMode), optional);
  }

  /** downwardapi.CollectData: every item, the errors aggregated */
  private async downwardAPIPayload(pod: any, items: unknown, defaultMode: number, reads: Reads): Promise<Map<string, FileProjection>> {
    const out = new Map<string, FileProjection>();
    const errs: string[] = [];
    for (const it of Array.isArray(items) ? items : []) {
      const f: FileProjection = { data: Buffer.alloc(0), mode: typeof it?.mode === 'number' ? it.mode : defaultMode };
      try {
        if (it?.fieldRef) f.data = Buffer.from(extractFieldPath(pod, String(it.fieldRef.fieldPath ?? '')));
        else if (it?.resourceFieldRef) f.data = Buffer.from(containerResourceValue(it.resourceFieldRef, pod, undefined, await reads.nodeAllocatable()));
      } catch (e) {
        errs.push(errorMessage(e));
      }
      out.set(cleanPath(String(it?.path ?? '')), f);
    }
    if (errs.length) throw new Error(aggregate(errs));
    return out;
  }

  /** the projected volume's sources, in order (a later one's file replaces an earlier one's), the errors aggregated */
  private async projectedPayload(pod: any, src: any, reads: Reads): Promise<Map<string, FileProjection>> {
    const defaultMode = modeOf(src?.defaultMode);
    const out = new Map<string, FileProjection>();
    const errs: string[] = [];
    const fsUser = fsUserOf(pod);
    const fsGroup = fsGroupOf(pod);
    for (const s of Array.isArray(src?.sources) ? src.sources : []) {
      try {
        let part: Map<string, FileProjection>;
        if (s?.secret) {
          const name = String(s.secret.name ?? '');
          const optional = s.secret.optional === true;
          const obj = await reads.object('secrets', name);
          if (!obj && !optional) throw new Error(notFoundMessage('secret', name));
          part = secretFiles(s.secret.items, obj, defaultMode, optional);
        } else if (s?.configMap) {
          const name = String(s.configMap.name ?? '');
          const optional = s.configMap.optional === true;
          const obj = await reads.object('configmaps', name);
          if (!obj && !optional) throw new Error(notFoundMessage('configmap', name));
          part = configMapFiles(s.configMap.items, obj, defaultMode, optional);
        } else if (s?.downwardAPI) {
          part = await this.downwardAPIPayload(pod, s.downwardAPI.items, defaultMode, reads);
        } else if (s?.serviceAccountToken) {
          const tp = s.serviceAccountToken;
          // with an fsGroup the group gets read access through the ownership change (0600 → 0640)
          const mode = fsUser !== undefined || fsGroup !== undefined ? 0o600 : defaultMode;
          const token = await this.serviceAccountToken(pod, String(tp.audience ?? ''), typeof tp.expirationSeconds === 'number' ? tp.expirationSeconds : 3600);
          part = new Map([[String(tp.path ?? ''), { data: Buffer.from(token), mode, fsUser }]]);
        } else if (s?.clusterTrustBundle) {
          throw new Error(`Keelson's kubelet does not support clusterTrustBundle projections`);
        } else if (s?.podCertificate) {
          throw new Error(`Keelson's kubelet does not support podCertificate projections`);
        } else continue;
        for (const [k, f] of part) out.set(k, f);
      } catch (e) {
        errs.push(errorMessage(e));
      }
    }
    if (errs.length) throw new Error(aggregate(errs));
    return out;
  }

  // ── service account tokens (the kubelet's token manager) ──

  private tokenKey(pod: any, audience: string, expirationSeconds: number): string {
    const ns = String(pod.metadata?.namespace ?? '');
    const sa = String(pod.spec?.serviceAccountName || 'default');
    return `${JSON.stringify(sa)}/${JSON.stringify(ns)}/[${audience}]/${expirationSeconds}/${pod.metadata?.name}/${pod.metadata?.uid}`;
  }

  /** a new token when 80% of the last one's life (less a jitter of up to 10 s) or 24 h passed */
  private requiresRefresh(t: CachedToken): boolean {
    const now = this.now();
    const jitter = Math.floor(Math.random() * TOKEN_MAX_JITTER_MS / 1000) * 1000;
    const issuedAt = t.expiresAt - t.ttlSeconds * 1000;
    if (now > issuedAt + TOKEN_MAX_TTL_MS - jitter) return true;
    return now > t.expiresAt - Math.floor((t.ttlSeconds * 20) / 100) * 1000 - jitter;
  }

  private pruneTokens(): void {
    const now = this.now();
    for (const [k, t] of this.tokens) if (now > t.expiresAt) this.tokens.delete(k);
  }

  /** the pod's bound token through the TokenRequest API, cached until it needs a refresh */
  private async serviceAccountToken(pod: any, audience: string, expirationSeconds: number): Promise<string> {
    const key = this.tokenKey(pod, audience, expirationSeconds);
    const cached = this.tokens.get(key);
    if (cached && !this.requiresRefresh(cached)) return cached.token;
    const ns = String(pod.metadata?.namespace ?? '');
    const sa = String(pod.spec?.serviceAccountName || 'default');
    const body: any = {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {
        ...(audience ? { audiences: [audience] } : {}),
        expirationSeconds,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: String(pod.metadata?.name ?? ''), uid: String(pod.metadata?.uid ?? '') },
      },
    };
    try {
      if (!this.options.client) throw new Error('cannot use TokenManager when kubelet is in standalone mode');
      const tr = await this.options.client.json({ method: 'POST', path: `/api/v1/namespaces/${encodeURIComponent(ns)}/serviceaccounts/${encodeURIComponent(sa)}/token`, body });
      const token = String(tr?.status?.token ?? '');
      const expiresAt = Date.parse(String(tr?.status?.expirationTimestamp ?? ''));
      if (!token || !Number.isFinite(expiresAt)) throw new Error('the TokenRequest answer has no token or expiration');
      const ttl = typeof tr?.spec?.expirationSeconds === 'number' ? tr.spec.expirationSeconds : expirationSeconds;
      this.tokens.set(key, { token, expiresAt, ttlSeconds: ttl });
      return token;
    } catch (e) {
      if (!cached) throw new Error(`failed to fetch token: ${errorMessage(e)}`);
      if (this.now() > cached.expiresAt) throw new Error(`token ${key} expired and refresh failed: ${errorMessage(e)}`);
      this.options.log.error(e, "Couldn't update token", { cacheKey: key });
      return cached.token;
    }
  }

  /** the node's status.allocatable, through the option or the API */
  async readNodeAllocatable(): Promise<Record<string, string>> {
    if (this.options.nodeAllocatable || !this.options.client) return this.options.nodeAllocatable?.() ?? {};
    const node = await this.options.client.json({ method: 'GET', path: `/api/v1/nodes/${encodeURIComponent(this.options.nodeName)}` });
    return node?.status?.allocatable ?? {};
  }

  // ── the container's mounts ──

  /**
   * The CRI mounts of a container: its volumeMounts (subPath, subPathExpr expanded with `env`,
   * readOnly, mountPropagation), then /etc/hosts (unless the container mounts something there;
   * only once the pod has IPs or is on the host network), then its termination message file.
   * Throws ContainerConfigError (the kubelet reports these as CreateContainerConfigError).
   */
  async mountsFor(pod: any, container: any, env: { name: string; value: string }[], podIPs: string[]): Promise<{ mounts: CRIMount[]; terminationMessageHostPath?: string }> {
    try {
      return await this.makeMounts(pod, container, env, podIPs);
    } catch (e) {
      if (e instanceof ContainerConfigError) throw e;
      throw new ContainerConfigError(errorMessage(e));
    }
  }

  private async makeMounts(pod: any, container: any, env: { name: string; value: string }[], podIPs: string[]): Promise<{ mounts: CRIMount[]; terminationMessageHostPath?: string }> {
    const uid = String(pod?.metadata?.uid ?? '');
    const podDir = this.podDir(uid);
    const cname = String(container?.name ?? '');
    const volumes = new Map<string, any>();
    for (const v of Array.isArray(pod?.spec?.volumes) ? pod.spec.volumes : []) volumes.set(String(v?.name ?? ''), v);
    const hostNetwork = pod?.spec?.hostNetwork === true;
    let mountHosts = podIPs.length > 0 || hostNetwork;
    const relabelled = new Set<string>();
    const mounts: CRIMount[] = [];
    const envs = envMap(env);

    let rroSupported: boolean | undefined;
    for (const m of Array.isArray(container?.volumeMounts) ? container.volumeMounts : []) {
      const mountPath = String(m?.mountPath ?? '');
      if (mountPath === ETC_HOSTS) mountHosts = false;
      const vname = String(m?.name ?? '');
      const vol = volumes.get(vname);
      const type = vol ? volumeType(vol) : '';
      const volumePath = vol ? this.volumePath(uid, vol) : undefined;
      const claim = type === 'persistentVolumeClaim' || type === 'ephemeral' ? this.claims.get(uid)?.get(vname) : undefined;
      if (!vol || volumePath === undefined || (type !== 'hostPath' && !claim && !(await pathExists(volumePath)))) {
        throw new ContainerConfigError(`cannot find volume ${JSON.stringify(vname)} to mount into container ${JSON.stringify(cname)}`);
      }
      // an SELinux-managed volume is relabelled at its first mount (hostPath: never; local: when writable)
      let relabel = false;
      if (type !== 'hostPath' && !(claim && (claim.type === 'hostPath' || claim.readOnly)) && !relabelled.has(vname)) {
        relabelled.add(vname);
        relabel = true;
      }

      let subPath = String(m?.subPath ?? '');
      if (m?.subPathExpr) {
        const missing = new Set<string>();
        subPath = expand(String(m.subPathExpr), (k) => {
          const v = envs.get(k);
          if (v === undefined || v === '') missing.add(k);
          return v ?? '';
        });
        if (missing.size) throw new ContainerConfigError(`missing value for ${[...missing].sort().join(', ')}`);
      }
      let hostPath = volumePath;
      if (subPath !== '') {
        if (isAbsolute(subPath)) throw new ContainerConfigError(`error SubPath \`${subPath}\` must not be an absolute path`);
        if (subPath.split('/').includes('..')) throw new ContainerConfigError(`unable to provision SubPath \`${subPath}\`: must not contain '..'`);
        hostPath = await this.prepareSubPath(volumePath, subPath, vname, cname);
      }

      const propagation = translatePropagation(m?.mountPropagation);
      let recursiveReadOnly = false;
      if (m?.recursiveReadOnly !== undefined && m.recursiveReadOnly !== 'Disabled') {
        // (the runtime asked once per container, at its first such mount)
        rroSupported ??= (await this.options.recursiveReadOnlySupported?.(pod)) ?? false;
        try {
          recursiveReadOnly = resolveRecursiveReadOnly(m, rroSupported);
        } catch (e) {
          throw new ContainerConfigError(`failed to resolve recursive read-only mode: ${(e as Error).message}`);
        }
      }
      mounts.push({
        containerPath: mountPath,
        hostPath,
        readonly: m?.readOnly === true || READ_ONLY_TYPES.has(type) || claim?.readOnly === true,
        ...(recursiveReadOnly ? { recursiveReadOnly: true } : {}),
        selinuxRelabel: relabel && selinuxOn(),
        propagation,
      });
    }

    if (mountHosts) {
      const file = join(podDir, 'etc-hosts');
      await mkdir(podDir, { recursive: true, mode: 0o750 });
      const { hostname, domain } = this.hostnameAndDomain(pod);
      const content = hostNetwork ? await nodeHostsContent(pod?.spec?.hostAliases) : managedHostsContent(podIPs, hostname, domain, pod?.spec?.hostAliases);
      await writeFile(file, content, { mode: 0o644 });
      await chmod(file, 0o644);
      mounts.push({ containerPath: ETC_HOSTS, hostPath: file, readonly: false, selinuxRelabel: selinuxOn(), propagation: 'PROPAGATION_PRIVATE' });
    }

    // the termination message file: a new one at each container start (its name a random id)
    let terminationMessageHostPath: string | undefined;
    const tmp = container?.terminationMessagePath === undefined ? '/dev/termination-log' : String(container.terminationMessagePath ?? '');
    if (tmp !== '') {
      const cdir = join(podDir, 'containers', cname);
      try {
        await mkdir(cdir, { recursive: true, mode: 0o750 });
        const file = join(cdir, randomInt(0, 0x1_0000_0000).toString(16).padStart(8, '0'));
        const fh = await open(file, 'w', 0o666);
        await fh.close();
        await chmod(file, 0o666);
        terminationMessageHostPath = file;
        mounts.push({ containerPath: tmp, hostPath: file, readonly: false, selinuxRelabel: selinuxOn(), propagation: 'PROPAGATION_PRIVATE' });
      } catch (e) {
        // (the kubelet logs this and starts the container without the file)
        this.options.log.error(e, 'error on creating termination-log file', { dir: cdir });
      }
    }
    return { mounts, terminationMessageHostPath };
  }

  /** GeneratePodHostNameAndDomain: spec.hostname or the pod's name (at most 63 characters), and the subdomain's FQDN */
  private hostnameAndDomain(pod: any): { hostname: string; domain: string } {
    let hostname = String(pod?.spec?.hostname || pod?.metadata?.name || '');
    if (hostname.length > 63) hostname = hostname.slice(0, 63).replace(/[-.]+$/, '');
    const sub = pod?.spec?.subdomain;
    const domain = sub ? `${sub}.${pod?.metadata?.namespace ?? ''}.svc.${this.options.clusterDomain ?? 'cluster.local'}` : '';
    return { hostname, domain };
  }

  /** creates a missing subPath inside the volume (with the volume's mode) and resolves it; it must stay inside the volume */
  private async prepareSubPath(volumePath: string, subPath: string, vname: string, cname: string): Promise<string> {
    let base: string;
    let perm: number;
    try {
      base = await realpath(volumePath);
      perm = (await stat(volumePath)).mode & 0o7777;
    } catch (e) {
      throw new ContainerConfigError(goFsError(e));
    }
    const full = join(volumePath, subPath);
    let exists = true;
    try {
      await lstat(full);
    } catch {
      exists = false;
    }
    if (!exists) {
      try {
        await safeMakeDir(volumePath, base, subPath, perm);
      } catch (e) {
        this.options.log.error(e, 'Failed to create subPath directory for volumeMount of the container', { containerName: cname, volumeMountName: vname });
        throw new ContainerConfigError(`failed to create subPath directory for volumeMount ${JSON.stringify(vname)} of container ${JSON.stringify(cname)}`);
      }
    }
    try {
      const real = await realpath(full);
      if (!within(real, base)) throw new Error(`subpath ${full} resolves outside of the volume`);
      return real;
    } catch (e) {
      this.options.log.error(e, 'Failed to prepare subPath for volumeMount of the container', { containerName: cname, volumeMountName: vname });
      throw new ContainerConfigError(`failed to prepare subPath for volumeMount ${JSON.stringify(vname)} of container ${JSON.stringify(cname)}`);
    }
  }

  /**
   * Removes the pod's directory and everything in it (once its containers are gone). Refuses
   * while something is still mounted under it, rather than delete through the mount.
   */
  async tearDown(uid: string): Promise<void> {
    await this.serialized(uid, async () => {
      const dir = this.podDir(uid);
      const mounted = await mountPointsUnder(dir);
      if (mounted.length) throw new Error(`the directory of pod ${uid} still has mounts: ${mounted.join(', ')}`);
      await rm(dir, { recursive: true, force: true });
      this.setUpOnce.delete(uid);
      this.claims.delete(uid);
      for (const k of [...this.tokens.keys()]) if (k.endsWith(`/${uid}`)) this.tokens.delete(k);
    });
  }
}

function modeOf(v: unknown): number {
  return typeof v === 'number' ? v : DEFAULT_MODE;
}

/** configmap.MakePayload: all of data and binaryData, or the items (a missing key fails unless optional) */
function configMapFiles(items: unknown, cm: any, defaultMode: number, optional: boolean): Map<string, FileProjection> {
  const data = configMapData(cm);
  const binary = new Map<string, Buffer>();
  if (cm?.binaryData && typeof cm.binaryData === 'object') for (const [k, v] of Object.entries(cm.binaryData)) binary.set(k, Buffer.from(String(v ?? ''), 'base64'));
  const out = new Map<string, FileProjection>();
  if (!Array.isArray(items) || items.length === 0) {
    for (const [k, v] of data) out.set(k, { data: Buffer.from(v), mode: defaultMode });
    for (const [k, v] of binary) out.set(k, { data: v, mode: defaultMode });
    return out;
  }
  for (const it of items) {
    const key = String(it?.key ?? '');
    const content = data.has(key) ? Buffer.from(data.get(key)!) : binary.get(key);
    if (content === undefined) {
      if (optional) continue;
      throw new Error(`configmap references non-existent config key: ${key}`);
    }
    out.set(String(it?.path ?? ''), { data: content, mode: typeof it?.mode === 'number' ? it.mode : defaultMode });
  }
  return out;
}

/** secret.MakePayload */
function secretFiles(items: unknown, secret: any, defaultMode: number, optional: boolean): Map<string, FileProjection> {
  const data = secretData(secret);
  const out = new Map<string, FileProjection>();
  if (!Array.isArray(items) || items.length === 0) {
    for (const [k, v] of data) out.set(k, { data: v, mode: defaultMode });
    return out;
  }
  for (const it of items) {
    const key = String(it?.key ?? '');
    const content = data.get(key);
    if (content === undefined) {
      if (optional) continue;
      throw new Error(`references non-existent secret key: ${key}`);
    }
    out.set(String(it?.path ?? ''), { data: content, mode: typeof it?.mode === 'number' ? it.mode : defaultMode });
  }
  return out;
}

/** the hostPath type check, with the kubelet's messages; DirectoryOrCreate and FileOrCreate make what is missing */
async function checkHostPath(path: string, type: string): Promise<void> {
  const kind = async (): Promise<string | undefined> => {
    try {
      const st = await stat(path);
      if (st.isDirectory()) return 'dir';
      if (st.isFile()) return 'file';
      if (st.isSocket()) return 'socket';
      if (st.isCharacterDevice()) return 'char';
      if (st.isBlockDevice()) return 'block';
      return 'other';
    } catch {
      return undefined;
    }
  };
  const k = await kind();
  const fail = (what: string) => new Error(`hostPath type check failed: ${path} is not ${what}`);
  switch (type) {
    case '':
      return;
    case 'DirectoryOrCreate':
    case 'Directory':
      if (type === 'DirectoryOrCreate' && k === undefined) {
        try {
          await mkdir(path, { recursive: true, mode: 0o755 });
        } catch (e) {
          if (!isErrno(e, 'EEXIST')) throw new Error(goFsError(e));
        }
        return;
      }
      if (k !== 'dir') throw fail('a directory');
      return;
    case 'FileOrCreate':
    case 'File':
      if (type === 'FileOrCreate' && k === undefined) {
        try {
          const fh = await open(path, 'a', 0o644);
          await fh.close();
        } catch (e) {
          if (!isErrno(e, 'EEXIST')) throw new Error(goFsError(e));
        }
        return;
      }
      if (k !== 'file') throw fail('a file');
      return;
    case 'Socket':
      if (k !== 'socket') throw fail('a socket file');
      return;
    case 'CharDevice':
      if (k !== 'char') throw fail('a character device');
      return;
    case 'BlockDevice':
      if (k !== 'block') throw fail('a block device');
      return;
    default:
      throw new Error(`${type} is an invalid volume type`);
  }
}

/** creates the missing directories of subPath under the volume; what exists must resolve inside it */
async function safeMakeDir(volumePath: string, base: string, subPath: string, perm: number): Promise<void> {
  const parts = subPath.split('/').filter((p) => p !== '' && p !== '.');
  let cur = volumePath;
  let i = 0;
  for (; i < parts.length; i++) {
    const next = join(cur, parts[i]!);
    try {
      await lstat(next);
    } catch (e) {
      if (isErrno(e, 'ENOENT')) break;
      throw e;
    }
    cur = next;
  }
  let p = await realpath(cur);
  if (!within(p, base)) throw new Error(`${cur} resolves outside of the volume`);
  for (; i < parts.length; i++) {
    p = join(p, parts[i]!);
    await mkdir(p, { mode: perm });
    await chmod(p, perm);
  }
}

function translatePropagation(mode: unknown): CRIMount['propagation'] {
  switch (mode) {
    case undefined:
    case null:
    case 'None':
      return 'PROPAGATION_PRIVATE';
    case 'HostToContainer':
      return 'PROPAGATION_HOST_TO_CONTAINER';
    case 'Bidirectional':
      return 'PROPAGATION_BIDIRECTIONAL';
    default:
      throw new ContainerConfigError(`invalid MountPropagation mode: ${JSON.stringify(String(mode))}`);
  }
}

function hostAliasLines(aliases: unknown): string {
  if (!Array.isArray(aliases) || aliases.length === 0) return '';
  let s = '\n# Entries added by HostAliases.\n';
  for (const a of aliases) s += `${a?.ip ?? ''}\t${(Array.isArray(a?.hostnames) ? a.hostnames : []).join('\t')}\n`;
  return s;
}

/** the /etc/hosts of a pod on the pod network: the localhost lines, its IPs with its name, its host aliases */
export function managedHostsContent(podIPs: string[], hostname: string, domain: string, aliases: unknown): string {
  let s = '# Kubernetes-managed hosts file.\n';
  s += '127.0.0.1\tlocalhost\n';
  s += '::1\tlocalhost ip6-localhost ip6-loopback\n';
  s += 'fe00::0\tip6-localnet\n';
  s += 'fe00::0\tip6-mcastprefix\n';
  s += 'fe00::1\tip6-allnodes\n';
  s += 'fe00::2\tip6-allrouters\n';
  for (const ip of podIPs) s += domain ? `${ip}\t${hostname}.${domain}\t${hostname}\n` : `${ip}\t${hostname}\n`;
  return s + hostAliasLines(aliases);
}

/** the /etc/hosts of a host-network pod: the node's, under a header, with the pod's host aliases */
async function nodeHostsContent(aliases: unknown): Promise<string> {
  const node = await readFile(ETC_HOSTS, 'utf8');
  return '# Kubernetes-managed hosts file (host network).\n' + node + hostAliasLines(aliases);
}

/** mount points at or under dir (from /proc/self/mountinfo) */
async function mountPointsUnder(dir: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(' ');
    if (f.length < 5) continue;
    const mp = f[4]!.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
    if (within(mp, dir)) out.push(mp);
  }
  return out;
}
