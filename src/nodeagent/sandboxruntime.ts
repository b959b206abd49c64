// What the runtime is told about a pod's sandbox beyond its spec: the RuntimeClass handler it runs
// under, and its user namespace (the kubelet's runtimeclass manager and userns manager).
//
// RuntimeClass: a pod's spec.runtimeClassName names a node.k8s.io/v1 RuntimeClass, whose `handler`
// is passed to RunPodSandbox (the runtime's own name for a configured OCI runtime); no name: the
// runtime's default handler (''). A class that is not there fails the sandbox, with the lister's
// words (`runtimeclass.node.k8s.io "x" not found`), and is looked up again at the next attempt.
//
// User namespaces (UserNamespacesSupport, beta and on in Kubernetes 1.33): with the gate on, every
// sandbox and container is told its user namespace mode: NODE (the host's) unless the pod has
// `hostUsers: false`, which asks for a namespace of its own (POD) with a range of host IDs mapped
// to 0..n-1 inside. The runtime must say it can: its Status lists its handlers and their features
// (`userNamespaces`); a handler it does not list, or one without the feature, fails the sandbox
// (`the handler "" is not known`, `RuntimeClass handler "x" does not support user namespaces`),
// never runs the pod with the host's IDs. With the gate off, a pod that sets hostUsers fails.
//
// The ranges: the kubelet's own share of host IDs (the subordinate IDs of a user named `kubelet` in
// /etc/subuid and /etc/subgid when there is one, else 65536 up to 2^32) cut into blocks of
// `idsPerPod` (userNamespaces.idsPerPod, 65536), one per pod, the first free one. A pod's block is
// written to <root-dir>/pods/<uid>/userns (JSON, `uidMappings` and `gidMappings`) before it is used,
// read back at start so that a restarted kubelet gives no block twice, and freed with the pod, or
// at housekeeping once the pod is neither known nor running (one forgotten while the kubelet was
// down).
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isNotFound, type RESTClient } from '../client/rest.js';
import type { Logger } from '../client/log.js';
import type { StatusResponse, UserNamespace } from './cri/types.js';

/** the file in a pod's directory that holds its user namespace's mappings */
export const USERNS_MAPPINGS_FILE = 'userns';
/** the IDs a pod's user namespace gets unless userNamespaces.idsPerPod says otherwise */
export const DEFAULT_IDS_PER_POD = 65536;
const KUBELET_USER = 'kubelet';

interface IDMap {
  hostId: number;
  containerId: number;
  length: number;
}
interface Mappings {
  uidMappings: IDMap[];
  gidMappings: IDMap[];
}

export interface SandboxRuntimeOptions {
  /** the kubelet's API client (RuntimeClasses); none in standalone mode, where no class is found */
  client: RESTClient | undefined;
  /** the runtime's Status (its handlers and their features) */
  status: () => Promise<StatusResponse>;
  /** the UserNamespacesSupport gate */
  userNamespaces: boolean;
  /** userNamespaces.idsPerPod */
  idsPerPod?: number;
  maxPods: number;
  /** <root-dir>/pods */
  podsDir: string;
  log: Logger;
  /** the kubelet's share of host IDs; read from /etc/passwd, /etc/subuid and /etc/subgid when absent */
  kubeletMappings?: { first: number; length: number };
}

/** the subordinate IDs of `user` in a /etc/subuid-style file ("name:start:count" lines), or undefined */
export function subordinateIDs(text: string, user: string): { first: number; length: number } | undefined {
  for (const line of text.split('\n')) {
    const [name, start, count] = line.trim().split(':');
    if (name === user && start !== undefined && count !== undefined && /^\d+$/.test(start) && /^\d+$/.test(count)) return { first: Number(start), length: Number(count) };
  }
  return undefined;
}

/**
 * The kubelet's share of host IDs (GetKubeletMappings): 65536 up to 2^32 when no user `kubelet`
 * exists; else its subordinate IDs, which must be the same for users and groups.
 */
export function kubeletMappings(read: (file: string) => string | undefined = (f) => (existsSync(f) ? readFileSync(f, 'utf8') : undefined)): { first: number; length: number } {
  const fallback = { first: 1 << 16, length: 2 ** 32 - (1 << 16) };
  const passwd = read('/etc/passwd') ?? '';
  if (!passwd.split('\n').some((l) => l.split(':')[0] === KUBELET_USER)) return fallback;
  const uids = subordinateIDs(read('/etc/subuid') ?? '', KUBELET_USER);
  const gids = subordinateIDs(read('/etc/subgid') ?? '', KUBELET_USER);
  if (!uids) throw new Error(`no subordinate user IDs for the user ${JSON.stringify(KUBELET_USER)} in /etc/subuid`);
  if (!gids) throw new Error(`no subordinate group IDs for the user ${JSON.stringify(KUBELET_USER)} in /etc/subgid`);
  if (uids.first !== gids.first || uids.length !== gids.length) throw new Error(`the subordinate user and group IDs of the user ${JSON.stringify(KUBELET_USER)} differ: ${uids.first}:${uids.length} and ${gids.first}:${gids.length}`);
  return uids;
}

export class SandboxRuntime {
  private readonly idsPerPod: number;
  private readonly offset: number;
  private readonly slots: number;
  /** the block (index from `offset`) of each pod with a user namespace of its own */
  private readonly usedBy = new Map<string, number>();
  private readonly used = new Set<number>();

  /** throws, with the kubelet's words, when the kubelet's share of IDs cannot hold maxPods pods */
  constructor(private readonly o: SandboxRuntimeOptions) {
    this.idsPerPod = o.idsPerPod ?? DEFAULT_IDS_PER_POD;
    const m = o.userNamespaces ? (o.kubeletMappings ?? kubeletMappings()) : { first: this.idsPerPod, length: this.idsPerPod * o.maxPods };
    const per = this.idsPerPod;
    if (m.first % per !== 0) throw new Error(`kubelet user assigned ID ${m.first} is not a multiple of ${per}`);
    if (m.first < per) throw new Error(`kubelet user assigned ID ${m.first} must be greater or equal to ${per}`);
    if (m.length % per !== 0) throw new Error(`kubelet user assigned IDs length ${m.length} is not a multiple of ${per}`);
    if (m.length / per < o.maxPods) throw new Error(`kubelet user assigned IDs are not enough to support ${o.maxPods} pods`);
    this.offset = m.first / per;
    this.slots = m.length / per;
    if (o.userNamespaces) this.recordFromDisk();
  }

  /** the handlers the runtime's Status listed last, by name: whether each mounts recursively read-only */
  private rroByHandler = new Map<string, boolean>();
  /** each pod's handler as last looked up */
  private handlerOfPod = new Map<string, string>();

  /**
   * whether the runtime handler of the pod mounts recursively read-only
   * (runtimeClassSupportsRecursiveReadOnlyMounts): false when its class cannot be looked up
   */
  async recursiveReadOnlySupported(pod: any): Promise<boolean> {
    let handler: string;
    try {
      handler = await this.runtimeHandler(pod);
    } catch (e) {
      this.o.log.error(e, 'failed to look up the runtime handler', { pod: `${pod?.metadata?.namespace}/${pod?.metadata?.name}` });
      return false;
    }
    const handlers = (await this.o.status()).runtimeHandlers ?? [];
    this.rroByHandler = new Map(handlers.map((h) => [h.name ?? '', h.features?.recursiveReadOnlyMounts === true]));
    return this.rroByHandler.get(handler) ?? false;
  }

  /** the same from what was last learnt (for the pod's status, written often): false when not known */
  recursiveReadOnlySupportedNow(pod: any): boolean {
    const handler = this.handlerOfPod.get(String(pod?.metadata?.uid ?? ''));
    return handler !== undefined && (this.rroByHandler.get(handler) ?? false);
  }

  /** the handler RunPodSandbox is given for the pod (LookupRuntimeHandler) */
  async runtimeHandler(pod: any): Promise<string> {
    const h = await this.lookupHandler(pod);
    this.handlerOfPod.set(String(pod?.metadata?.uid ?? ''), h);
    return h;
  }

  private async lookupHandler(pod: any): Promise<string> {
    const name = pod?.spec?.runtimeClassName;
    if (typeof name !== 'string' || name === '') return '';
    const notFound = new Error(`runtimeclass.node.k8s.io ${JSON.stringify(name)} not found`);
    if (!this.o.client) throw notFound;
    try {
      const rc = await this.o.client.json({ method: 'GET', path: `/apis/node.k8s.io/v1/runtimeclasses/${encodeURIComponent(name)}` });
      const handler = typeof rc?.handler === 'string' ? rc.handler : '';
      if (handler !== '') this.o.log.v(2).info('Running pod with runtime handler', { pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, runtimeHandler: handler });
      return handler;
    } catch (e) {
      if (isNotFound(e)) throw notFound;
      throw new Error(`failed to lookup RuntimeClass ${name}: ${(e as Error).message}`);
    }
  }

  /** the sandbox's and containers' user namespace (GetOrCreateUserNamespaceMappings); undefined: none said */
  async userNamespace(pod: any, handler: string): Promise<UserNamespace | undefined> {
    const hostUsers = pod?.spec?.hostUsers;
    if (typeof hostUsers !== 'boolean') return this.o.userNamespaces ? { mode: 'NODE' } : undefined;
    if (!this.o.userNamespaces) throw new Error('the feature gate "UserNamespacesSupport" is disabled: can\'t set spec.HostUsers');
    if (hostUsers) return { mode: 'NODE' };
    const handlers = (await this.o.status()).runtimeHandlers;
    if (!handlers) throw new Error('runtime handlers are not set');
    const h = handlers.find((x) => (x.name ?? '') === handler);
    if (!h) throw new Error(`the handler ${JSON.stringify(handler)} is not known`);
    if (!h.features?.userNamespaces) throw new Error(`RuntimeClass handler ${JSON.stringify(handler)} does not support user namespaces`);
    const uid = String(pod.metadata?.uid ?? '');
    const m = this.mappingsOf(uid) ?? this.allocate(uid);
    const ids = (l: IDMap[]) => l.map((x) => ({ hostId: x.hostId, containerId: x.containerId, length: x.length }));
    return { mode: 'POD', uids: ids(m.uidMappings), gids: ids(m.gidMappings) };
  }

  /** the pod is gone with its directory: its block is free again */
  release(uid: string): void {
    this.handlerOfPod.delete(uid);
    const slot = this.usedBy.get(uid);
    if (slot === undefined) return;
    this.usedBy.delete(uid);
    this.used.delete(slot);
    rmSync(join(this.o.podsDir, uid, USERNS_MAPPINGS_FILE), { force: true });
  }

  /**
   * frees the blocks of pods that are neither known nor running (CleanupOrphanedPodUsernsAllocations,
   * at each housekeeping): a pod the kubelet forgot while it was down, whose directory stays
   */
  releaseUnknown(known: ReadonlySet<string>): void {
    for (const uid of [...this.usedBy.keys()]) if (!known.has(uid)) this.release(uid);
  }

  /** pods with a block, and its first host ID */
  allocations(): Map<string, number> {
    return new Map([...this.usedBy].map(([uid, slot]) => [uid, (slot + this.offset) * this.idsPerPod]));
  }

  private recordFromDisk(): void {
    let uids: string[] = [];
    try {
      uids = readdirSync(this.o.podsDir);
    } catch {
      return;
    }
    for (const uid of uids) {
      try {
        this.mappingsOf(uid);
      } catch (e) {
        throw new Error(`record pod mappings: ${(e as Error).message}`);
      }
    }
  }

  /** the pod's recorded mappings (checked and marked used), or undefined when it has none */
  private mappingsOf(uid: string): Mappings | undefined {
    const file = join(this.o.podsDir, uid, USERNS_MAPPINGS_FILE);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
    if (text === '') return undefined;
    let m: Mappings;
    try {
      m = JSON.parse(text);
    } catch (e) {
      throw new Error(`invalid user namespace mappings file: ${(e as Error).message}`);
    }
    const u = Array.isArray(m?.uidMappings) ? m.uidMappings : [];
    const g = Array.isArray(m?.gidMappings) ? m.gidMappings : [];
    if (u.length !== 1) throw new Error('invalid user namespace configuration: no more than one mapping allowed.');
    if (u.length !== g.length) throw new Error('invalid user namespace configuration: GID and UID mappings should be identical.');
    if (u[0]!.hostId !== g[0]!.hostId || u[0]!.containerId !== g[0]!.containerId || u[0]!.length !== g[0]!.length) throw new Error('invalid user namespace configuration: GID and UID mapping should be identical');
    if (u[0]!.containerId !== 0) throw new Error('invalid user namespace configuration: UID 0 must be mapped');
    const { hostId, length } = u[0]!;
    if (length !== this.idsPerPod) throw new Error(`wrong user namespace length ${length}`);
    if (hostId % this.idsPerPod !== 0) throw new Error(`wrong user namespace offset specified ${hostId}`);
    const slot = hostId / this.idsPerPod - this.offset;
    const prev = this.usedBy.get(uid);
    if (prev !== undefined && prev !== slot) throw new Error(`different user namespace range already used by pod ${JSON.stringify(uid)}`);
    if (slot < 0 || slot >= this.slots) throw new Error(`id ${hostId} is out of range`);
    if (prev === undefined && this.used.has(slot)) throw new Error(`range picked for pod ${JSON.stringify(uid)} already taken`);
    this.usedBy.set(uid, slot);
    this.used.add(slot);
    return m;
  }

  private allocate(uid: string): Mappings {
    let slot = 0;
    while (slot < this.slots && this.used.has(slot)) slot++;
    if (slot >= this.slots) throw new Error('could not find an empty slot to allocate a user namespace');
    const map: IDMap = { hostId: (slot + this.offset) * this.idsPerPod, containerId: 0, length: this.idsPerPod };
    const m: Mappings = { uidMappings: [map], gidMappings: [{ ...map }] };
    const dir = join(this.o.podsDir, uid);
    mkdirSync(dir, { recursive: true, mode: 0o750 });
    // (written whole, then renamed: a crash leaves the old file or the new one)
    const tmp = join(dir, `.${USERNS_MAPPINGS_FILE}.tmp`);
    writeFileSync(tmp, JSON.stringify(m), { mode: 0o600, flush: true });
    renameSync(tmp, join(dir, USERNS_MAPPINGS_FILE));
    this.usedBy.set(uid, slot);
    this.used.add(slot);
    return m;
  }
}
