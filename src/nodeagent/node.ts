// The node's own objects: its registration (the Node), its status, posted every
// --node-status-update-frequency when it changed and at least every nodeStatusReportFrequency, and
// its heartbeat Lease in kube-node-lease, renewed every quarter of nodeLeaseDurationSeconds, as the
// kubelet's kubelet_node_status.go and nodelease controller keep them.
//
// Registration: the kubelet creates its Node; when one of its name exists already it is adopted
// (Kubernetes reconciles a few of its labels and annotations and then uses it), and the status
// patch that follows makes it this node's. The status is what the kubelet reports of a Linux host:
// capacity (cpu, memory, pods, ephemeral-storage of the root directory's file system,
// hugepages), allocatable (capacity less --kube-reserved, --system-reserved and the hard
// eviction thresholds), the four conditions with the kubelet's reasons and messages, addresses,
// the kubelet's endpoint, nodeInfo and the runtime's images.
import { readFileSync, statfsSync } from 'node:fs';
import os from 'node:os';
import type { Logger } from '../client/log.js';
import { isAlreadyExists, isConflict, isNotFound, type RESTClient } from '../client/rest.js';
import { microTime } from '../client/leaderelection.js';
import { parseQuantity, quantityValue } from '../schema/validation/quantity.js';
import type { Taint } from './options.js';
import type { RuntimeFeatures, RuntimeHandler } from './cri/types.js';

export interface NodeRuntimeInfo {
  /** `containerd://1.6.20` */
  runtimeVersion(): string;
  /**
   * The runtime's Status: a message when it is not ready (RuntimeReady and NetworkReady), its
   * handlers and its features (what the kubelet's runtime state keeps from its last Status call).
   */
  runtimeStatus(): Promise<{ problem?: string; handlers?: RuntimeHandler[]; features?: RuntimeFeatures }>;
  images(): Promise<{ names: string[]; sizeBytes: number }[]>;
}

export interface NodeOptions {
  /** the heartbeat client; none in standalone mode: the node is neither registered nor reported */
  client: RESTClient | undefined;
  nodeName: string;
  hostname: string;
  /** the node's IPs (--node-ip, else the host's first non-loopback address) */
  nodeIPs: string[];
  labels: Record<string, string>;
  taints: Taint[];
  providerID: string;
  podCIDR: string;
  maxPods: number;
  /** podsPerCore: pods per CPU core at most (0: only maxPods) */
  podsPerCore?: number;
  kubeletPort: number;
  rootDir: string;
  systemReserved: Record<string, string>;
  kubeReserved: Record<string, string>;
  evictionHard: Record<string, string>;
  nodeStatusMaxImages: number;
  registerNode: boolean;
  statusUpdateFrequencyMs: number;
  statusReportFrequencyMs: number;
  leaseDurationSeconds: number;
  kubeletVersion: string;
  runtime: NodeRuntimeInfo;
  /** a message when the pod workers' loop is unhealthy (the Ready condition says it) */
  syncLoopError: () => string | undefined;
  /** the pressure conditions that are True now (the eviction manager's) */
  pressure?: () => ReadonlySet<string>;
  /** status.runtimeHandlers is reported (the RecursiveReadOnlyMounts or UserNamespacesSupport gate) */
  reportRuntimeHandlers?: boolean;
  /** status.features is reported (the SupplementalGroupsPolicy gate) */
  reportFeatures?: boolean;
  log: Logger;
}

const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** the host's first non-internal IPv4 address (then IPv6), as the kubelet picks one without --node-ip */
export function defaultNodeIP(): string {
  const all = Object.values(os.networkInterfaces()).flat().filter((a): a is os.NetworkInterfaceInfo => !!a && !a.internal);
  return (all.find((a) => a.family === 'IPv4') ?? all.find((a) => a.family === 'IPv6'))?.address ?? '127.0.0.1';
}

function readTrim(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

function osImage(): string {
  const text = readTrim('/etc/os-release');
  const m = /^PRETTY_NAME=(.*)$/m.exec(text);
  return m ? m[1].replace(/^"(.*)"$/, '$1') : 'Linux';
}

const GOARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' };
export const goArch = (): string => GOARCH[process.arch] ?? process.arch;

/** bytes of a quantity map's entry (0 when absent or unparsable) */
function bytesOf(m: Record<string, string>, key: string): bigint {
  const q = m[key] !== undefined ? parseQuantity(m[key]) : null;
  return q ? quantityValue(q) : 0n;
}

export class NodeAgentNode {
  private readonly o: NodeOptions;
  private timers: NodeJS.Timeout[] = [];
  private lastPosted = '';
  private lastPostedAt = 0;
  private nodeUID = '';
  private stopped = false;
  private readonly readySince = Date.now();
  private lastReady: boolean | undefined;
  private transitions = new Map<string, string>();
  /** the runtime's handlers and features as its last Status gave them (kept while it is down) */
  private runtimeHandlers: RuntimeHandler[] = [];
  private runtimeFeatures: RuntimeFeatures | undefined;
  /** why the node status could not be posted, for the kubelet's health */
  lastError: string | undefined;

  constructor(o: NodeOptions) {
    this.o = o;
  }

  private get path(): string {
    return `/api/v1/nodes/${encodeURIComponent(this.o.nodeName)}`;
  }

  /** registers the node (retrying until it is registered or stopped), then keeps its status and Lease */
  async start(): Promise<void> {
    if (!this.o.client) {
      this.o.log.info('Kubernetes client is nil, not starting status manager');
      this.o.log.info('No API server defined - no node status update will be sent');
      return;
    }
    if (this.o.registerNode) {
      let delay = 100;
      for (;;) {
        try {
          await this.register();
          break;
        } catch (e) {
          if (this.stopped) return;
          this.o.log.error(e, 'Unable to register node with API server', { node: this.o.nodeName });
          await new Promise((r) => setTimeout(r, delay));
          delay = Math.min(delay * 2, 7000);
        }
      }
    }
    await this.syncStatus(true).catch((e) => this.o.log.error(e, 'Error updating node status, will retry'));
    await this.renewLease().catch((e) => this.o.log.error(e, 'Failed to update lease'));
    this.timers.push(setInterval(() => void this.syncStatus(false).catch((e) => this.reportError(e, 'Error updating node status, will retry')), this.o.statusUpdateFrequencyMs));
    this.timers.push(setInterval(() => void this.renewLease().catch((e) => this.reportError(e, 'Failed to update lease')), Math.max(1000, (this.o.leaseDurationSeconds * 1000) / 4)));
    for (const t of this.timers) t.unref();
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }

  private reportError(e: unknown, msg: string): void {
    if (this.stopped) return;
    this.lastError = `${msg}: ${(e as Error).message}`;
    this.o.log.error(e, msg);
  }

  /** the Node the kubelet registers (kubelet_node_status.go initialNode) */
  initialNode(): any {
    const labels: Record<string, string> = {
      'beta.kubernetes.io/arch': goArch(),
      'beta.kubernetes.io/os': 'linux',
      'kubernetes.io/arch': goArch(),
      'kubernetes.io/hostname': this.o.hostname,
      'kubernetes.io/os': 'linux',
      ...this.o.labels,
    };
    const spec: any = {};
    if (this.o.taints.length) spec.taints = this.o.taints.map((t) => ({ key: t.key, ...(t.value ? { value: t.value } : {}), effect: t.effect }));
    if (this.o.providerID) spec.providerID = this.o.providerID;
    if (this.o.podCIDR) {
      spec.podCIDR = this.o.podCIDR;
      spec.podCIDRs = [this.o.podCIDR];
    }
    return {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: this.o.nodeName, labels, annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' } },
      spec,
    };
  }

  private async register(): Promise<void> {
    const node = this.initialNode();
    try {
      const made = await this.o.client!.json({ method: 'POST', path: '/api/v1/nodes', body: node });
      this.nodeUID = made.metadata.uid;
      this.o.log.info('Successfully registered node', { node: this.o.nodeName });
      return;
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
    // a Node of this name exists: adopt it, with this kubelet's labels brought in (reconcileExtendedResource and
    // updateDefaultLabels in Kubernetes keep the default labels right)
    const existing = await this.o.client!.json({ method: 'GET', path: this.path });
    this.nodeUID = existing.metadata.uid;
    const want = node.metadata.labels as Record<string, string>;
    const have = existing.metadata.labels ?? {};
    const changed: Record<string, string> = {};
    for (const k of ['kubernetes.io/hostname', 'kubernetes.io/os', 'kubernetes.io/arch', 'beta.kubernetes.io/os', 'beta.kubernetes.io/arch']) {
      if (have[k] !== want[k]) changed[k] = want[k];
    }
    if (Object.keys(changed).length) {
      await this.o.client!.json({ method: 'PATCH', path: this.path, body: { metadata: { labels: changed } }, contentType: 'application/merge-patch+json' });
    }
    this.o.log.info('Node was previously registered', { node: this.o.nodeName });
  }

  /** capacity and allocatable (the allocatable less the reservations and the hard eviction thresholds) */
  resources(): { capacity: Record<string, string>; allocatable: Record<string, string> } {
    const cpus = os.cpus().length || 1;
    const memory = BigInt(os.totalmem());
    let storage = 0n;
    try {
      const s = statfsSync(this.o.rootDir);
      storage = BigInt(s.blocks) * BigInt(s.bsize);
    } catch {
      /* the root directory is made before the node starts; without it no ephemeral storage is reported */
    }
    // (--pods-per-core: at most that many pods per core, below --max-pods)
    const pods = (this.o.podsPerCore ?? 0) > 0 ? Math.min(this.o.maxPods, this.o.podsPerCore! * cpus) : this.o.maxPods;
    const capacity: Record<string, string> = {
      cpu: String(cpus),
      'ephemeral-storage': `${storage / 1024n}Ki`,
      'hugepages-1Gi': '0',
      'hugepages-2Mi': '0',
      memory: `${memory / 1024n}Ki`,
      pods: String(pods),
    };
    const reserved = (k: string) => bytesOf(this.o.systemReserved, k) + bytesOf(this.o.kubeReserved, k);
    const cpuReservedMilli = this.milli(this.o.systemReserved.cpu) + this.milli(this.o.kubeReserved.cpu);
    const evictMem = this.evictionBytes('memory.available', memory);
    const evictFs = this.evictionBytes('nodefs.available', storage);
    const memAlloc = memory - reserved('memory') - evictMem;
    const fsAlloc = storage - reserved('ephemeral-storage') - evictFs;
    const cpuAlloc = cpus * 1000 - cpuReservedMilli;
    const allocatable: Record<string, string> = {
      cpu: cpuAlloc % 1000 === 0 ? String(cpuAlloc / 1000) : `${Math.max(0, cpuAlloc)}m`,
      'ephemeral-storage': String(fsAlloc > 0n ? fsAlloc : 0n),
      'hugepages-1Gi': '0',
      'hugepages-2Mi': '0',
      memory: `${(memAlloc > 0n ? memAlloc : 0n) / 1024n}Ki`,
      pods: String(pods),
    };
    return { capacity, allocatable };
  }

  private milli(v: string | undefined): number {
    if (v === undefined) return 0;
    const q = parseQuantity(v);
    if (!q) return 0;
    // (quantityValue rounds up to whole units; the milli-value of a CPU reservation is what counts)
    const m = /^(\d+(?:\.\d+)?)(m?)$/.exec(v.trim());
    if (m) return m[2] ? Math.round(Number(m[1])) : Math.round(Number(m[1]) * 1000);
    return Number(quantityValue(q)) * 1000;
  }

  /** a hard eviction threshold's bytes: a quantity, or a percentage of the total */
  private evictionBytes(signal: string, total: bigint): bigint {
    const v = this.o.evictionHard[signal];
    if (v === undefined) return 0n;
    if (v.endsWith('%')) return (total * BigInt(Math.round(Number(v.slice(0, -1)) * 100))) / 10000n;
    return bytesOf(this.o.evictionHard, signal);
  }

  private condition(type: string, ok: boolean, reason: string, message: string, now: string): any {
    const status = type === 'Ready' ? (ok ? 'True' : 'False') : ok ? 'False' : 'True';
    const key = `${type}=${status}`;
    const prev = [...this.transitions.keys()].find((k) => k.startsWith(`${type}=`));
    if (prev !== key) {
      if (prev) this.transitions.delete(prev);
      this.transitions.set(key, now);
    }
    return { type, status, lastHeartbeatTime: now, lastTransitionTime: this.transitions.get(key), reason, message };
  }

  /** the status the kubelet reports now */
  async status(): Promise<any> {
    const now = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    const { capacity, allocatable } = this.resources();
    let runtimeProblem: string | undefined;
    try {
      const rs = await this.o.runtime.runtimeStatus();
      runtimeProblem = rs.problem;
      this.runtimeHandlers = rs.handlers ?? [];
      this.runtimeFeatures = rs.features;
    } catch (e) {
      runtimeProblem = `container runtime is down: ${(e as Error).message}`;
    }
    const loopProblem = this.o.syncLoopError();
    const pressure = this.o.pressure?.() ?? new Set<string>();
    const readyProblem = runtimeProblem ?? loopProblem;
    const ready = readyProblem === undefined;
    if (this.lastReady !== ready) {
      this.o.log.info(ready ? 'Node became ready' : 'Node became not ready', { node: this.o.nodeName, ...(readyProblem ? { message: readyProblem } : {}) });
      this.lastReady = ready;
    }
    const addresses = [...this.o.nodeIPs.map((address) => ({ type: 'InternalIP', address })), { type: 'Hostname', address: this.o.hostname }];
    let images: any[] = [];
    try {
      const all = await this.o.runtime.images();
      all.sort((a, b) => b.sizeBytes - a.sizeBytes);
      images = (this.o.nodeStatusMaxImages >= 0 ? all.slice(0, this.o.nodeStatusMaxImages) : all).filter((i) => i.names.length);
    } catch {
      /* the runtime's condition says what is wrong */
    }
    return {
      capacity,
      allocatable,
      conditions: [
        pressure.has('MemoryPressure')
          ? this.condition('MemoryPressure', false, 'KubeletHasInsufficientMemory', 'kubelet has insufficient memory available', now)
          : this.condition('MemoryPressure', true, 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available', now),
        pressure.has('DiskPressure')
          ? this.condition('DiskPressure', false, 'KubeletHasDiskPressure', 'kubelet has disk pressure', now)
          : this.condition('DiskPressure', true, 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure', now),
        pressure.has('PIDPressure')
          ? this.condition('PIDPressure', false, 'KubeletHasInsufficientPID', 'kubelet has insufficient PID available', now)
          : this.condition('PIDPressure', true, 'KubeletHasSufficientPID', 'kubelet has sufficient PID available', now),
        ready
          ? this.condition('Ready', true, 'KubeletReady', 'kubelet is posting ready status', now)
          : this.condition('Ready', false, 'KubeletNotReady', readyProblem!, now),
      ],
      addresses,
      daemonEndpoints: { kubeletEndpoint: { Port: this.o.kubeletPort } },
      nodeInfo: {
        machineID: readTrim('/etc/machine-id'),
        systemUUID: readTrim('/sys/class/dmi/id/product_uuid').toLowerCase(),
        bootID: readTrim('/proc/sys/kernel/random/boot_id'),
        kernelVersion: os.release(),
        osImage: osImage(),
        containerRuntimeVersion: this.o.runtime.runtimeVersion(),
        kubeletVersion: this.o.kubeletVersion,
        kubeProxyVersion: '',
        operatingSystem: 'linux',
        architecture: goArch(),
      },
      images,
      // the kubelet's RuntimeHandlers and NodeFeatures setters: each handler with both features
      // said (false when the runtime does not list them); no features when the runtime gives none
      ...(this.o.reportRuntimeHandlers && this.runtimeHandlers.length
        ? {
            runtimeHandlers: this.runtimeHandlers.map((h) => ({
              name: h.name ?? '',
              features: { recursiveReadOnlyMounts: h.features?.recursiveReadOnlyMounts === true, userNamespaces: h.features?.userNamespaces === true },
            })),
          }
        : {}),
      ...(this.o.reportFeatures && this.runtimeFeatures ? { features: { supplementalGroupsPolicy: this.runtimeFeatures.supplementalGroupsPolicy === true } } : {}),
    };
  }

  /**
   * Posts the status when it changed (the heartbeat times aside) or nodeStatusReportFrequency has
   * passed since the last post, as the kubelet does since node leases carry the heartbeat.
   */
  async syncStatus(force: boolean): Promise<void> {
    if (this.stopped) return;
    // the Node is read first, as the kubelet's tryUpdateNodeStatus does: a Node deleted under a
    // running kubelet is registered again (Kubernetes' kubelet waits for its next start for that)
    try {
      await this.o.client!.json({ method: 'GET', path: this.path });
    } catch (e) {
      if (!isNotFound(e) || !this.o.registerNode) throw e;
      this.o.log.warn('The node object is gone; registering it again', { node: this.o.nodeName });
      await this.register();
      force = true;
    }
    const status = await this.status();
    const comparable = JSON.stringify({ ...status, conditions: status.conditions.map((c: any) => ({ ...c, lastHeartbeatTime: '' })) });
    const due = Date.now() - this.lastPostedAt >= this.o.statusReportFrequencyMs;
    if (!force && !due && comparable === this.lastPosted) return;
    await this.o.client!.json({ method: 'PATCH', path: `${this.path}/status`, body: { status }, contentType: 'application/strategic-merge-patch+json' });
    this.lastPosted = comparable;
    this.lastPostedAt = Date.now();
    this.lastError = undefined;
  }

  /** creates or renews kube-node-lease/<node> (the heartbeat the node lifecycle controller reads) */
  async renewLease(): Promise<void> {
    if (this.stopped) return;
    const path = `/apis/coordination.k8s.io/v1/namespaces/${NODE_LEASE_NAMESPACE}/leases/${encodeURIComponent(this.o.nodeName)}`;
    const now = microTime(Date.now());
    let lease: any;
    try {
      lease = await this.o.client!.json({ method: 'GET', path });
    } catch (e) {
      if (!isNotFound(e)) throw e;
      if (!this.nodeUID) {
        const node = await this.o.client!.json({ method: 'GET', path: this.path }).catch(() => undefined);
        this.nodeUID = node?.metadata?.uid ?? '';
      }
      const body = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          name: this.o.nodeName,
          namespace: NODE_LEASE_NAMESPACE,
          ...(this.nodeUID ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.o.nodeName, uid: this.nodeUID }] } : {}),
        },
        spec: { holderIdentity: this.o.nodeName, leaseDurationSeconds: this.o.leaseDurationSeconds, renewTime: now },
      };
      try {
        await this.o.client!.json({ method: 'POST', path: `/apis/coordination.k8s.io/v1/namespaces/${NODE_LEASE_NAMESPACE}/leases`, body });
      } catch (e2) {
        if (!isAlreadyExists(e2)) throw e2;
      }
      return;
    }
    lease.spec = { ...lease.spec, holderIdentity: this.o.nodeName, leaseDurationSeconds: this.o.leaseDurationSeconds, renewTime: now };
    try {
      await this.o.client!.json({ method: 'PUT', path, body: lease });
    } catch (e) {
      if (!isConflict(e)) throw e;
    }
  }

  /** the registered Node's UID ('' until then) */
  uid(): string {
    return this.nodeUID;
  }

  /** seconds the node has been up (for logs) */
  uptimeSeconds(): number {
    return Math.round((Date.now() - this.readySince) / 1000);
  }
}
