// The node agent: its node (registration, status, Lease), its pod workers over the container
// runtime, its volumes and the view its HTTP servers serve. `keelson kubelet` (cli/kubelet.ts)
// builds one from its flags and config file.
//
// The API server is reached through three clients, as the kubelet has them: one for the pods and
// everything else (--kube-api-qps/--kube-api-burst), one for events (--event-qps/--event-burst),
// and one for the node's status and Lease that no rate limit holds back (the heartbeat client).
import { mkdirSync } from 'node:fs';
import type { Logger } from '../client/log.js';
import { RESTClient, type RESTConfig } from '../client/rest.js';
import { ContainerLogManager } from './logrotation.js';
import { SysctlAllowlist } from './sysctls.js';
import { EventRecorder } from '../client/events.js';
import { EvictionManager } from './eviction.js';
import type { EvictionThreshold } from './options.js';
import { ResourceSampler } from './stats.js';
import type { CRIClient } from './cri.js';
import { NodeAgentNode, type NodeOptions } from './node.js';
import { PodWorkers } from './pods.js';
import { VolumeManager } from './volumes.js';
import { StaticPodSource } from './staticpods.js';
import type { ContainerSettings, NodeDNS } from './podspec.js';

/** the node's settings the kubelet passes on as they are */
type NodeSettings = 'nodeName' | 'hostname' | 'nodeIPs' | 'rootDir' | 'labels' | 'taints' | 'providerID' | 'podCIDR' | 'maxPods' | 'podsPerCore' | 'kubeletPort' | 'systemReserved' | 'kubeReserved' | 'evictionHard' | 'nodeStatusMaxImages' | 'registerNode' | 'kubeletVersion' | 'log';

export interface KubeletOptions extends Pick<NodeOptions, NodeSettings> {
  rest: RESTConfig;
  userAgent: string;
  kubeAPIQPS: number;
  kubeAPIBurst: number;
  eventQPS: number;
  eventBurst: number;
  cri: CRIClient;
  nodeStatusUpdateFrequencyMs: number;
  nodeStatusReportFrequencyMs: number;
  nodeLeaseDurationSeconds: number;
  syncFrequencyMs: number;
  dns: NodeDNS;
  settings: ContainerSettings;
  serializeImagePulls: boolean;
  podLogsDir: string;
  /** the eviction manager's thresholds and settings (eviction.ts); none: no thresholds */
  eviction?: { thresholds: EvictionThreshold[]; pressureTransitionPeriodMs: number; maxPodGracePeriodSeconds: number };
  /** the static pods' sources (staticpods.ts): '' for none */
  staticPodPath: string;
  staticPodURL: string;
  staticPodURLHeader: Record<string, string[]>;
  fileCheckFrequencyMs: number;
  httpCheckFrequencyMs: number;
  clusterDomain: string;
  /** registryPullQPS, registryBurst, maxParallelImagePulls (pods.ts) */
  registryPullQPS?: number;
  registryBurst?: number;
  maxParallelImagePulls?: number;
  /** the sysctls pods may set (--allowed-unsafe-sysctls, sysctls.ts); default: the safe ones */
  sysctls?: SysctlAllowlist;
  /** the rotation of the containers' logs (logrotation.ts): containerLogMaxSize in bytes, containerLogMaxFiles, ... */
  containerLogs?: { maxSizeBytes: number; maxFiles: number; monitorIntervalMs: number; maxWorkers: number };
}

export class Kubelet {
  readonly node: NodeAgentNode;
  readonly pods: PodWorkers;
  readonly volumes: VolumeManager;
  readonly staticPods: StaticPodSource | undefined;
  readonly eviction: EvictionManager | undefined;
  readonly logRotation: ContainerLogManager | undefined;
  private readonly clients: RESTClient[] = [];

  constructor(readonly o: KubeletOptions) {
    const sysctls = o.sysctls ?? new SysctlAllowlist([]);
    mkdirSync(o.rootDir, { recursive: true });
    mkdirSync(`${o.rootDir}/pods`, { recursive: true });
    const make = (extra: Partial<RESTConfig>) => {
      const c = new RESTClient({ ...o.rest, userAgent: o.userAgent, ...extra });
      this.clients.push(c);
      return c;
    };
    const client = make({ qps: o.kubeAPIQPS > 0 ? o.kubeAPIQPS : 50, burst: o.kubeAPIBurst > 0 ? o.kubeAPIBurst : 100 });
    const eventClient = make({ qps: o.eventQPS > 0 ? o.eventQPS : 5, burst: o.eventBurst > 0 ? o.eventBurst : 10 });
    const heartbeat = make({ qps: Infinity });
    const events = new EventRecorder(eventClient, 'kubelet', o.log, o.nodeName);
    this.volumes = new VolumeManager({ client, rootDir: o.rootDir, nodeName: o.nodeName, log: o.log, clusterDomain: o.clusterDomain || 'cluster.local', nodeAllocatable: async () => node?.resources().allocatable ?? {} });
    let node: NodeAgentNode | undefined;
    this.pods = new PodWorkers({
      client,
      cri: o.cri,
      nodeName: o.nodeName,
      nodeIPs: o.nodeIPs,
      volumes: this.volumes,
      events,
      log: o.log,
      dns: o.dns,
      settings: o.settings,
      syncFrequencyMs: o.syncFrequencyMs,
      nodeAllocatable: () => node?.resources().allocatable ?? {},
      runtimeName: o.cri.runtimeName || 'containerd',
      serializeImagePulls: o.serializeImagePulls,
      registryPullQPS: o.registryPullQPS,
      registryBurst: o.registryBurst,
      maxParallelImagePulls: o.maxParallelImagePulls,
      podLogsDir: o.podLogsDir,
      nodeUID: () => node?.uid() ?? '',
      // (the kubelet's order: the eviction manager's handler, then the sysctls')
      admit: (pod) => this.eviction?.admit(pod) ?? sysctls.admit(pod),
    });
    if (o.eviction && o.eviction.thresholds.length > 0) {
      const sampler = new ResourceSampler(o.cri);
      const nodeRef = { apiVersion: 'v1', kind: 'Node', metadata: { name: o.nodeName, uid: o.nodeName } };
      this.eviction = new EvictionManager({
        ...o.eviction,
        rootDir: o.rootDir,
        sample: () => sampler.sample(),
        pods: this.pods,
        nodeEvent: (type, reason, message) => void events.event(nodeRef, type, reason, message),
        log: o.log,
      });
    }
    if (o.containerLogs && o.containerLogs.maxSizeBytes > 0) {
      this.logRotation = new ContainerLogManager({
        ...o.containerLogs,
        log: o.log,
        runtime: {
          runningContainers: async () => {
            const out: { id: string; logPath: string }[] = [];
            for (const c of await o.cri.listContainers({ state: { state: 'CONTAINER_RUNNING' } })) {
              if (!c.id) continue;
              const st = await o.cri.containerStatus(c.id).catch(() => undefined);
              out.push({ id: c.id, logPath: st?.status?.logPath ?? '' });
            }
            return out;
          },
          reopenContainerLog: (id) => o.cri.reopenContainerLog(id),
        },
      });
    }
    if (o.staticPodPath || o.staticPodURL) {
      this.staticPods = new StaticPodSource({
        path: o.staticPodPath,
        url: o.staticPodURL,
        urlHeaders: o.staticPodURLHeader,
        fileCheckFrequencyMs: o.fileCheckFrequencyMs,
        httpCheckFrequencyMs: o.httpCheckFrequencyMs,
        nodeName: o.nodeName,
        log: o.log,
        onChange: (pods) => this.pods.setStaticPods(pods),
      });
    }
    const { nodeName, hostname, nodeIPs, rootDir, labels, taints, providerID, podCIDR, maxPods, podsPerCore, kubeletPort, systemReserved, kubeReserved, evictionHard, nodeStatusMaxImages, registerNode, kubeletVersion, log } = o;
    node = this.node = new NodeAgentNode({
      ...{ nodeName, hostname, nodeIPs, rootDir, labels, taints, providerID, podCIDR, maxPods, podsPerCore, kubeletPort, systemReserved, kubeReserved, evictionHard, nodeStatusMaxImages, registerNode, kubeletVersion, log },
      client: heartbeat,
      statusUpdateFrequencyMs: o.nodeStatusUpdateFrequencyMs,
      statusReportFrequencyMs: o.nodeStatusReportFrequencyMs,
      leaseDurationSeconds: o.nodeLeaseDurationSeconds,
      runtime: {
        runtimeVersion: () => `${o.cri.runtimeName}://${o.cri.runtimeVersion}`,
        runtimeReady: async () => {
          const s = await o.cri.status();
          const conds: any[] = s.status?.conditions ?? [];
          const bad = conds.filter((c) => !c.status);
          if (!bad.length) return undefined;
          return `container runtime ${bad.map((c) => `${c.type}=false reason:${c.reason} message:${c.message}`).join(', ')}`;
        },
        images: async () => (await o.cri.listImages()).map((i: any) => ({ names: [...(i.repoTags ?? []), ...(i.repoDigests ?? [])], sizeBytes: Number(i.size ?? 0) })),
      },
      syncLoopError: () => this.pods.syncLoopError(),
      pressure: () => this.eviction?.conditions() ?? new Set(),
    });
  }

  async start(): Promise<void> {
    await this.node.start();
    await this.pods.start();
    this.eviction?.start();
    this.logRotation?.start();
    await this.staticPods?.start();
  }

  async stop(): Promise<void> {
    this.node.stop();
    this.eviction?.stop();
    await this.logRotation?.stop();
    this.staticPods?.stop();
    await this.pods.stop();
    for (const c of this.clients) c.close();
  }
}
