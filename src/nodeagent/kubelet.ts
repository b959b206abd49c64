// The node agent: its node (registration, status, Lease), its pod workers over the container
// runtime, its volumes and the view its HTTP servers serve. `keelson kubelet` (cli/kubelet.ts)
// builds one from its flags and config file.
//
// The API server is reached through three clients, as the kubelet has them: one for the pods and
// everything else (--kube-api-qps/--kube-api-burst), one for events (--event-qps/--event-burst),
// and one for the node's status and Lease that no rate limit holds back (the heartbeat client).
import { nodeKeyring } from './credentials.js';
import type { CredentialPlugins } from './credentialplugins.js';
import { SandboxRuntime } from './sandboxruntime.js';
import { mkdirSync } from 'node:fs';
import type { Logger } from '../client/log.js';
import { RESTClient, type RESTConfig } from '../client/rest.js';
import { ContainerLogManager } from './logrotation.js';
import { SysctlAllowlist } from './sysctls.js';
import { PredicateAdmitHandler, admitAppArmor, appArmorHostError } from './admission.js';
import { EventRecorder } from '../client/events.js';
import { EvictionManager } from './eviction.js';
import { LocalStorageStats, type PodStorage } from './ephemeral.js';
import { fsStatsOf, processLimits, ResourceSampler, type FsStats, type StorageSummary } from './stats.js';
import { ImageGCManager, type ImageGCPolicy } from './imagegc.js';
import type { EvictionThreshold } from './options.js';
import type { CRIClient } from './cri.js';
import { ReservedCgroupError, type ContainerManager } from './cgroups.js';
import { NodeAgentNode, type NodeOptions } from './node.js';
import { PodWorkers } from './pods.js';
import { ImagePullManager, type VerificationPolicy } from './pullrecords.js';
import { VolumeManager } from './volumes.js';
import { StaticPodSource } from './staticpods.js';
import { ProbeMetrics } from './probes.js';
import type { ContainerSettings, NodeDNS } from './podspec.js';

/** the node's settings the kubelet passes on as they are */
type NodeSettings = 'nodeName' | 'hostname' | 'nodeIPs' | 'rootDir' | 'labels' | 'taints' | 'providerID' | 'podCIDR' | 'maxPods' | 'podsPerCore' | 'kubeletPort' | 'systemReserved' | 'kubeReserved' | 'evictionHard' | 'nodeStatusMaxImages' | 'registerNode' | 'kubeletVersion' | 'log';

/** the kubelet's runonce.go: how long the first manifest is waited for, and the look-ups of a pod's containers */
const RUN_ONCE_MANIFEST_DELAY_MS = 1000;
const RUN_ONCE_MAX_RETRIES = 10;
const RUN_ONCE_RETRY_DELAY_MS = 1000;

export interface KubeletOptions extends Pick<NodeOptions, NodeSettings> {
  /** --image-credential-provider-config's plugins (credentialplugins.ts), asked after the node's Docker configuration */
  credentialPlugins?: CredentialPlugins;
  /** how to reach the API server; none: standalone mode (static pods only, nothing reported) */
  rest: RESTConfig | undefined;
  /** --runonce: run the static pods once (runOnce()), no pods of the API server, no node status */
  runOnce?: boolean;
  /** the InPlacePodVerticalScaling gate: pods' resources change in place (pods.ts) */
  inPlaceResize?: boolean;
  /** the UserNamespacesSupport gate, and userNamespaces.idsPerPod (sandboxruntime.ts) */
  userNamespaces?: boolean;
  idsPerPod?: number;
  /** the node status reports the runtime's handlers (the RecursiveReadOnlyMounts or UserNamespacesSupport gate) */
  nodeStatusRuntimeHandlers?: boolean;
  /** the node status reports the runtime's features (the SupplementalGroupsPolicy gate) */
  nodeStatusFeatures?: boolean;
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
  /** the local storage limits (localStorageCapacityIsolation) and the volumes' measuring period (volumeStatsAggPeriod) */
  localStorage?: { capacityIsolation: boolean; volumeStatsAggPeriodMs: number };
  /** the rotation of the containers' logs (logrotation.ts): containerLogMaxSize in bytes, containerLogMaxFiles, ... */
  containerLogs?: { maxSizeBytes: number; maxFiles: number; monitorIntervalMs: number; maxWorkers: number };
  /** image garbage collection (imagegc.ts): the imageGC* settings, --pod-infra-container-image, the
   * collection's period (default 5 minutes); none: no image garbage collection */
  imageGC?: ImageGCPolicy & { sandboxImage?: string; periodMs?: number };
  /** the node's and the pods' cgroups (cgroups.ts: cgroupsPerQOS, --cgroup-root, --pod-max-pids); none: no cgroups */
  containerManager?: ContainerManager;
  /**
   * KubeletEnsureSecretPulledImages: imagePullCredentialsVerificationPolicy (with
   * preloadedImagesVerificationAllowlist) as pullrecords.ts verificationPolicy() makes it; the
   * records are kept under <root-dir>/image_manager. None: the gate is off.
   */
  pullCredentialsPolicy?: VerificationPolicy;
}

export class Kubelet {
  readonly node: NodeAgentNode;
  readonly pods: PodWorkers;
  readonly volumes: VolumeManager;
  readonly staticPods: StaticPodSource | undefined;
  readonly eviction: EvictionManager | undefined;
  readonly logRotation: ContainerLogManager | undefined;
  readonly imageGC: ImageGCManager | undefined;
  /** the image pull records (KubeletEnsureSecretPulledImages), none with the gate off */
  readonly pullManager: ImagePullManager | undefined;
  private readonly clients: RESTClient[] = [];
  private firstStaticUpdate?: (pods: any[]) => void;
  private nodeEvent: (type: 'Normal' | 'Warning', reason: string, message: string) => void = () => {};
  /** /metrics/probes (probes.ts) */
  readonly probeMetrics = new ProbeMetrics();
  /** the pods' use of local storage (ephemeral.ts) */
  private readonly storage: LocalStorageStats;

  constructor(readonly o: KubeletOptions) {
    const sysctls = o.sysctls ?? new SysctlAllowlist([]);
    mkdirSync(o.rootDir, { recursive: true });
    mkdirSync(`${o.rootDir}/pods`, { recursive: true });
    const rest = o.rest;
    const make = (extra: Partial<RESTConfig>) => {
      if (!rest) return undefined;
      const c = new RESTClient({ ...rest, userAgent: o.userAgent, ...extra });
      this.clients.push(c);
      return c;
    };
    if (!rest) o.log.info('No API server defined - no events will be sent to API server');
    const client = make({ qps: o.kubeAPIQPS > 0 ? o.kubeAPIQPS : 50, burst: o.kubeAPIBurst > 0 ? o.kubeAPIBurst : 100 });
    const eventClient = make({ qps: o.eventQPS > 0 ? o.eventQPS : 5, burst: o.eventBurst > 0 ? o.eventBurst : 10 });
    const heartbeat = make({ qps: Infinity });
    const events = new EventRecorder(eventClient, 'kubelet', o.log, o.nodeName);
    {
      const nodeRef = { apiVersion: 'v1', kind: 'Node', metadata: { name: o.nodeName, uid: o.nodeName } };
      this.nodeEvent = (type, reason, message) => void events.event(nodeRef, type, reason, message);
    }
    // the service account mode of the credential provider plugins (KubeletServiceAccountTokenForCredentialProviders):
    // the pod's ServiceAccount and a token bound to the pod, through the kubelet's client
    o.credentialPlugins?.useServiceAccounts({
      getServiceAccount: async (namespace, name) => {
        if (!client) throw new Error('cannot get ServiceAccounts when kubelet is in standalone mode');
        return client.json({ method: 'GET', path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(name)}` });
      },
      getToken: async (namespace, name, audience, pod) => {
        if (!client) throw new Error('cannot use TokenManager when kubelet is in standalone mode');
        // (no expirationSeconds: the TokenRequest's default)
        const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [audience], boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.name, uid: pod.uid } } };
        const tr = await client.json({ method: 'POST', path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(name)}/token`, body });
        const token = String(tr?.status?.token ?? '');
        if (!token) throw new Error('the TokenRequest answer has no token');
        return token;
      },
    });
    let sandboxRuntime: SandboxRuntime;
    try {
      sandboxRuntime = new SandboxRuntime({ client, status: () => o.cri.status(), userNamespaces: o.userNamespaces ?? false, idsPerPod: o.idsPerPod, maxPods: o.maxPods, podsDir: `${o.rootDir}/pods`, log: o.log });
    } catch (e) {
      throw new Error(`create user namespace manager: ${(e as Error).message}`);
    }
    this.volumes = new VolumeManager({
      client,
      rootDir: o.rootDir,
      nodeName: o.nodeName,
      log: o.log,
      clusterDomain: o.clusterDomain || 'cluster.local',
      nodeAllocatable: async () => node?.resources().allocatable ?? {},
      recursiveReadOnlySupported: (pod) => sandboxRuntime.recursiveReadOnlySupported(pod),
    });
    let node: NodeAgentNode | undefined;
    if (o.pullCredentialsPolicy) this.pullManager = new ImagePullManager({ rootDir: o.rootDir, policy: o.pullCredentialsPolicy, log: o.log });
    // the predicate admission (admission.ts) reads the Node as the API server has it, else as the kubelet would register it
    const appArmorHost = appArmorHostError();
    const predicates = new PredicateAdmitHandler({ nodeName: o.nodeName, client, initialNode: () => ({ ...node?.initialNode(), status: node?.resources() }), admittedPods: () => this.pods.admittedPods(), log: o.log });
    this.pods = new PodWorkers({
      sandboxRuntime,
      pullManager: this.pullManager,
      client,
      // the node's Docker configuration, read once, as the kubelet reads it (credentials.ts)
      nodeCredentials: {
        keyring: nodeKeyring(o.rootDir, (file, why) => o.log.error(new Error(why), 'Could not read the Docker configuration; its registry credentials are not used', { file })),
        plugins: o.credentialPlugins,
      },
      runOnce: o.runOnce,
      probeMetrics: this.probeMetrics,
      inPlaceResize: o.inPlaceResize,
      staticSources: Boolean(o.staticPodPath || o.staticPodURL),
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
      // (the kubelet's order: the eviction manager's handler, the sysctls', the predicates', then AppArmor's)
      admit: async (pod) => this.eviction?.admit(pod) ?? sysctls.admit(pod) ?? (await predicates.admit(pod)) ?? admitAppArmor(pod, appArmorHost),
      cgroups: o.containerManager,
      rootDir: o.rootDir,
    });
    if (o.imageGC) {
      const nodeRef = { apiVersion: 'v1', kind: 'Node', metadata: { name: o.nodeName, uid: o.nodeName } };
      this.imageGC = new ImageGCManager({ ...o.imageGC, runtime: o.cri, log: o.log, nodeEvent: (type, reason, message) => void events.event(nodeRef, type, reason, message), pullRecords: this.pullManager });
    }
    const isolation = o.localStorage?.capacityIsolation === true;
    const storage = (this.storage = new LocalStorageStats({ rootDir: o.rootDir, podLogsDir: o.podLogsDir, cri: o.cri, volumeStatsAggPeriodMs: o.localStorage?.volumeStatsAggPeriodMs ?? 60_000 }));
    if (o.eviction && (o.eviction.thresholds.length > 0 || isolation)) {
      const sampler = new ResourceSampler(o.cri);
      const nodeRef = { apiVersion: 'v1', kind: 'Node', metadata: { name: o.nodeName, uid: o.nodeName } };
      this.eviction = new EvictionManager({
        ...o.eviction,
        rootDir: o.rootDir,
        sample: () => sampler.sample(),
        pods: this.pods,
        nodeEvent: (type, reason, message) => void events.event(nodeRef, type, reason, message),
        log: o.log,
        deleteUnusedContainers: () => this.pods.deleteUnusedContainers(),
        deleteUnusedImages: this.imageGC ? () => this.imageGC!.deleteUnusedImages() : undefined,
        localStorage: isolation ? (pod) => storage.podStorage(pod) : undefined,
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
        onChange: (pods) => {
          this.pods.setStaticPods(pods);
          this.firstStaticUpdate?.(pods);
          this.firstStaticUpdate = undefined;
        },
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
        runtimeStatus: async () => {
          const s = await o.cri.status();
          const conds: any[] = s.status?.conditions ?? [];
          const bad = conds.filter((c) => !c.status);
          const problem = bad.length ? `container runtime ${bad.map((c) => `${c.type}=false reason:${c.reason} message:${c.message}`).join(', ')}` : undefined;
          return { problem, handlers: s.runtimeHandlers, features: s.features };
        },
        images: async () => (await o.cri.listImages()).map((i: any) => ({ names: [...(i.repoTags ?? []), ...(i.repoDigests ?? [])], sizeBytes: Number(i.size ?? 0) })),
      },
      syncLoopError: () => this.pods.syncLoopError(),
      pressure: () => this.eviction?.conditions() ?? new Set(),
      reportRuntimeHandlers: o.nodeStatusRuntimeHandlers,
      reportFeatures: o.nodeStatusFeatures,
    });
  }

  /** the node's file systems and process limits, and the pods' storage, for /stats/summary */
  async storageSummary(): Promise<StorageSummary> {
    const now = Date.now();
    const pods = new Map<string, PodStorage>();
    for (const p of this.pods.pods()) {
      try {
        pods.set(p.metadata.uid, await this.storage.podStorage(p));
      } catch {
        /* not measured */
      }
    }
    let imageFs: FsStats | undefined;
    try {
      const f = (await this.o.cri.imageFsInfo()).imageFilesystems?.[0];
      const base = f?.fsId?.mountpoint ? fsStatsOf(f.fsId.mountpoint, now) : undefined;
      if (f && base) imageFs = { ...base, usedBytes: Number(f.usedBytes?.value ?? base.usedBytes), inodesUsed: Number(f.inodesUsed?.value ?? base.inodesUsed) };
    } catch {
      /* the runtime does not tell */
    }
    const pids = processLimits();
    return { nodeFs: fsStatsOf(this.o.rootDir, now), imageFs, rlimit: pids ? { time: now, ...pids } : undefined, pods };
  }

  /**
   * The container manager's start (the QoS cgroups and node allocatable's kubepods), before the pods
   * run: a failure stops the kubelet (`Failed to start ContainerManager`).
   */
  startContainerManager(): void {
    const cm = this.o.containerManager;
    // (without cgroupsPerQOS it only looks for the kubelet's own cgroup, for the Summary)
    if (!cm) return;
    let r: ReturnType<ContainerManager['start']>;
    try {
      r = cm.start(() => this.pods.admittedPods());
    } catch (e) {
      if (e instanceof ReservedCgroupError) this.nodeEvent('Warning', 'FailedNodeAllocatableEnforcement', e.message);
      this.o.log.error(e, 'Failed to start ContainerManager');
      throw new Error(`Failed to start ContainerManager: ${(e as Error).message}`);
    }
    if (r.enforced?.ok) this.nodeEvent('Normal', 'NodeAllocatableEnforced', r.enforced.message);
    else if (r.enforced) this.nodeEvent('Warning', 'FailedNodeAllocatableEnforcement', r.enforced.message);
    for (const m of r.reserved ?? []) this.nodeEvent('Normal', 'NodeAllocatableEnforced', m);
  }

  /** --pod-cidr goes to the runtime (CRI UpdateRuntimeConfig), as the kubelet does when it starts */
  private async updatePodCIDR(): Promise<void> {
    if (!this.o.podCIDR) return;
    try {
      await this.o.cri.updateRuntimeConfig(this.o.podCIDR);
      this.o.log.info('Updating Pod CIDR', { originalPodCIDR: '', newPodCIDR: this.o.podCIDR });
    } catch (e) {
      this.o.log.error(e, 'Pod CIDR update failed');
    }
  }

  async start(): Promise<void> {
    await this.updatePodCIDR();
    await this.pullManager?.initialize(() => this.o.cri.listImages());
    await this.node.start();
    await this.pods.start();
    this.eviction?.start();
    this.logRotation?.start();
    this.imageGC?.start();
    await this.staticPods?.start();
  }

  /**
   * --runonce (the kubelet's RunOnce): the first update of the static pod sources, within a
   * second, is run: each pod admission accepts is waited for until all its containers run, looking
   * again after 1 s, 2 s, 4 s ... (10 times at most). Resolves once they all run; rejects with the
   * kubelet's errors otherwise. The containers go on running after the kubelet exits.
   */
  async runOnce(): Promise<void> {
    const log = this.o.log;
    await this.updatePodCIDR();
    await this.pullManager?.initialize(() => this.o.cri.listImages());
    await this.pods.start();
    const first = new Promise<any[] | undefined>((resolve) => {
      this.firstStaticUpdate = resolve;
      setTimeout(() => resolve(undefined), RUN_ONCE_MANIFEST_DELAY_MS);
    });
    void this.staticPods?.start();
    const pods = await first;
    this.firstStaticUpdate = undefined;
    if (!pods) throw new Error(`no pod manifest update after ${RUN_ONCE_MANIFEST_DELAY_MS / 1000}s`);
    log.info('Processing manifest with pods', { numPods: pods.length });
    const failed: string[] = [];
    const results = await Promise.all(
      pods.map(async (pod) => {
        const uid = pod.metadata.uid;
        const name = `${pod.metadata.name}_${pod.metadata.namespace}(${uid})`;
        let delay = RUN_ONCE_RETRY_DELAY_MS;
        for (let retry = 0; ; retry++) {
          const state = await this.pods.runOnceState(uid);
          if (state === 'rejected') return { pod, rejected: true };
          if (state === 'running') {
            log.info("Pod's containers running", { pod: `${pod.metadata.namespace}/${pod.metadata.name}` });
            return { pod };
          }
          log.info("Pod's containers not running: syncing", { pod: `${pod.metadata.namespace}/${pod.metadata.name}` });
          if (retry >= RUN_ONCE_MAX_RETRIES) return { pod, error: `timeout error: pod ${JSON.stringify(name)} containers not running after ${RUN_ONCE_MAX_RETRIES} retries`, name };
          log.info("Pod's containers synced, waiting", { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, duration: `${delay / 1000}s` });
          await new Promise((r) => setTimeout(r, delay));
          delay *= 2;
        }
      }),
    );
    log.info('Waiting for pods', { numPods: results.filter((r) => !r.rejected).length });
    for (const r of results) {
      if (r.rejected) continue;
      const key = `${r.pod.metadata.namespace}/${r.pod.metadata.name}`;
      if (r.error) {
        log.info('Failed to start pod', { pod: key, err: r.error });
        failed.push(r.name!);
      } else log.info('Started pod', { pod: key });
    }
    log.info('Finished processing pods', { numPods: pods.length });
    if (failed.length) throw new Error(`error running pods: [${failed.join(' ')}]`);
    log.info('Pods started', { numPods: pods.length });
  }

  async stop(): Promise<void> {
    this.node.stop();
    this.eviction?.stop();
    await this.logRotation?.stop();
    await this.imageGC?.stop();
    this.staticPods?.stop();
    await this.pods.stop();
    this.o.containerManager?.stop();
    for (const c of this.clients) c.close();
  }
}
