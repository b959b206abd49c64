// The kubelet's pod workers: the pods bound to this node (an informer on spec.nodeName), each
// synced by a worker of its own, one sync at a time per pod, against what the container runtime
// runs (kubelet.go syncPod, kuberuntime_manager.go computePodActions and SyncPod, the status
// manager, PLEG):
//   - a sync is asked for by a change of the pod, by a change the relist of the runtime finds
//     (every second: sandboxes and containers and their states), by a probe whose result turned,
//     by the end of a back-off, and every --sync-frequency;
//   - a pod gets a sandbox (a new one, attempt + 1, when its sandbox is gone or not ready, and all
//     its containers are started again), its init containers one after the other, each to exit 0,
//     then its containers; exited containers are restarted by the restartPolicy after a back-off
//     of 10 s doubling to 5 minutes (reset after 10 minutes of running), as CrashLoopBackOff;
//     images are pulled by imagePullPolicy (ErrImagePull, then ImagePullBackOff);
//   - a container whose spec changed (its hash) or whose liveness or startup probe failed is
//     killed and started again;
//   - a pod that is deleted (deletionTimestamp) has its preStop hooks run and its containers
//     stopped within its grace period, its sandbox stopped, its status written, and then the
//     kubelet deletes it for good (grace period 0, with the pod's UID as precondition), removes its
//     containers, sandbox and directory; a pod that reached Succeeded or Failed has its sandbox
//     stopped and keeps its containers for their logs;
//   - the status (phase, conditions, IPs, container statuses with states, last states, restart
//     counts, readiness) is computed from the runtime after every sync and written with a
//     strategic merge patch to pods/<name>/status when it changed.
// Dead containers: the latest exited instance of each container is kept (its logs are `kubectl
// logs --previous`), older ones are removed, as --maximum-dead-containers-per-container=1 does.
import { readFileSync, rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../client/log.js';
import { isAlreadyExists, isConflict, isNotFound, type RESTClient } from '../client/rest.js';
import { CONFIG_HASH, CONFIG_MIRROR, CONFIG_SOURCE, isCriticalPod } from './staticpods.js';
import { Informer } from '../client/informer.js';
import { ResourceClient } from '../client/resources.js';
import type { EventRecorder } from '../client/events.js';
import type { CRIClient } from './cri.js';
import type { ContainerManager } from './cgroups.js';
import { makeEnvironment, expandCommandAndArgs, ContainerConfigError, getObject } from './envvars.js';
import { keyringFromSecrets, pullingPod, trackedCredentialsFor, type DockerKeyring, type NodeCredentials, type TrackedAuth } from './credentials.js';
import type { ImagePullManager, PullCredentials } from './pullrecords.js';
import type { SandboxRuntime } from './sandboxruntime.js';
import type { UserNamespace } from './cri/types.js';
import { resolveRecursiveReadOnly, type VolumeManager } from './volumes.js';
import type { StreamKind, StreamRequest } from './server.js';
import { goQuote } from '../machinery/gostrings.js';
import { ImagePulls } from './imagepulls.js';
import { runHandler, ProbeState, type HandlerResult, type ProbeKind, type ProbeMetrics } from './probes.js';
import {
  A_HASH, A_PRESTOP, A_TERMINATION_PATH, containerConfig, containerFieldPath, containerHash, dnsConfigFor, L_CONTAINER_NAME, type ContainerKind, L_CONTAINER_TYPE, L_POD_NAME, L_POD_NAMESPACE, L_POD_UID, linuxResources, milli as resourceMilli, podLogDir, value as resourceValue,
  qosClass, sandboxConfig, type ContainerSettings, type NodeDNS,
} from './podspec.js';

const PODS = { group: '', version: 'v1', resource: 'pods' };

/** a sandbox's or container's configuration with its user namespace (none: the runtime's default) */
function withUserNamespace<T extends { linux?: any }>(config: T, userns: UserNamespace | undefined): T {
  if (userns) {
    const sc = (config.linux ??= {}).securityContext ??= {};
    (sc.namespaceOptions ??= {}).usernsOptions = userns;
  }
  return config;
}
const BACKOFF_INITIAL_MS = 10_000;
const BACKOFF_MAX_MS = 300_000;
/** a container that ran this long has its back-off reset */
const BACKOFF_RESET_MS = 600_000;
const RELIST_PERIOD_MS = 1000;
/** the kubelet's housekeeping period: the orphaned pod cgroups are cleaned up at its pace */
const HOUSEKEEPING_PERIOD_MS = 2000;

export interface PodWorkersOptions {
  /**
   * the kubelet's API client: the pods bound to the node, their status, mirror pods; none in
   * standalone mode, where the static pods are all and their status is kept here (the kubelet's
   * /pods serves it)
   */
  client: RESTClient | undefined;
  /** --runonce: the static pods only, none from the API server and no mirror pods */
  runOnce?: boolean;
  /**
   * InPlacePodVerticalScaling: a change of a running pod's resources (the pods/resize subresource)
   * is admitted against the node's allocatable and applied to its containers in place
   */
  inPlaceResize?: boolean;
  /** /metrics/probes' series (probes.ts), counted as each probe answers */
  probeMetrics?: ProbeMetrics;
  /** whether static pod sources are configured: until their first update the pod set is not known */
  staticSources?: boolean;
  cri: CRIClient;
  nodeName: string;
  nodeIPs: string[];
  volumes: VolumeManager;
  events: EventRecorder;
  log: Logger;
  dns: NodeDNS;
  settings: ContainerSettings;
  syncFrequencyMs: number;
  nodeAllocatable: () => Record<string, string>;
  /** `containerd`: the scheme of containerIDs */
  runtimeName: string;
  /** the Node's UID (the owner of mirror pods), '' until registered */
  nodeUID: () => string;
  /** podLogsDir: where the pods' log directories are (/var/log/pods) */
  podLogsDir: string;
  /** --serialize-image-pulls */
  serializeImagePulls: boolean;
  /** registryPullQPS and registryBurst: pulls beyond them fail with "pull QPS exceeded" (0: no limit) */
  registryPullQPS?: number;
  registryBurst?: number;
  /** maxParallelImagePulls, with parallel pulls (0 or absent: no limit) */
  maxParallelImagePulls?: number;
  /**
   * whether a pod not yet started may start here (the eviction manager's admission under node
   * pressure): a refusal fails it with the reason and message, as the kubelet's canAdmitPod does
   */
  admit?: (pod: any) => { reason: string; message: string } | undefined | Promise<{ reason: string; message: string } | undefined>;
  /** the pods' cgroups (cgroups.ts; cgroupsPerQOS): each pod's made before its sandbox, resized with it, removed after it */
  cgroups?: ContainerManager;
  /** --root-dir: the pods' directories (<root>/pods/<uid>), whose mounted volumes keep an orphaned pod cgroup */
  rootDir?: string;
  /** the RuntimeClass handler and the user namespace of each sandbox (sandboxruntime.ts); none: the default handler, nothing said of user namespaces */
  sandboxRuntime?: SandboxRuntime;
  /** the node's own registry credentials (credentials.ts: its Docker configuration files and credential provider plugins), tried after the pod's pull secrets */
  nodeCredentials?: NodeCredentials;
  /**
   * KubeletEnsureSecretPulledImages (pullrecords.ts): the records of the pulls and the credentials
   * they used, and whether a pod may use an image present already; none: the gate is off
   */
  pullManager?: ImagePullManager;
}

interface RuntimeContainer {
  id: string;
  sandboxId: string;
  name: string;
  attempt: number;
  state: string;
  createdAt: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  imageRef: string;
}

interface RuntimeSandbox {
  id: string;
  attempt: number;
  state: string;
  createdAt: number;
}

/** what the runtime runs for one pod */
interface RuntimePod {
  sandboxes: RuntimeSandbox[];
  containers: RuntimeContainer[];
}

interface BackOff {
  delayMs: number;
  until: number;
}

/** the kubelet's own record of a pod between syncs */
interface PodRecord {
  uid: string;
  /** where the pod comes from: `api`, or `file` and `http` for static pods */
  source: string;
  pod: any;
  firstSeen: number;
  /** why a container is waiting (ErrImagePull, CrashLoopBackOff, CreateContainerConfigError ...) */
  waiting: Map<string, { reason: string; message: string }>;
  backoff: Map<string, BackOff>;
  imageBackoff: Map<string, BackOff>;
  probes: Map<string, ProbeState>; // `${container}/${kind}`, for the running instance
  /** while its containers are being stopped for its deletion: the grace period (s) they were given */
  killGrace?: number;
  /** the user namespace its sandbox and containers are given (sandboxruntime.ts), once worked out */
  userns?: { value: UserNamespace | undefined };
  probeInstance: Map<string, string>; // container -> the container id its probes are for
  podIPs: string[];
  lastStatus: string;
  terminated: boolean;
  /** set once the final delete was sent */
  deleted: boolean;
  sandboxStopped: boolean;
  /** a sync is running, and whether another was asked for meanwhile */
  syncing: boolean;
  again: boolean;
  timer?: NodeJS.Timeout;
  /** the kubelet ended the pod itself (activeDeadlineSeconds, eviction, admission): its status' reason and message */
  failure?: { reason: string; message: string; disruptionTarget?: boolean; at?: string };
  /** admitted (or started before the kubelet came up): admission is not asked again */
  admitted?: boolean;
  /** an eviction asked for, carried out by the pod's next sync (never beside a running one) */
  evicting?: { message: string; graceSeconds: number; disruptionTarget: boolean };
  /** the sync at spec.activeDeadlineSeconds */
  deadlineTimer?: NodeJS.Timeout;
  /** the last volume set-up errors logged */
  mountError?: string;
  /** in-place resize: the resources admitted for each resizable container (the kubelet's allocation) */
  allocated?: Map<string, any>;
  /** ... and those the running instance of each has (by container name: its ID and resources) */
  actuated?: Map<string, { id: string; resources: any }>;
  /** a resize not admitted: PodResizePending's reason (Infeasible, Deferred) and message */
  resizePending?: { reason: string; message: string };
  /** a resize the runtime refused: PodResizeInProgress's Error message */
  resizeError?: string;
}

/** the runtime's sandbox and container records, as the workers keep them */
function toSandbox(s: any): RuntimeSandbox {
  return { id: s.id, attempt: s.metadata?.attempt ?? 0, state: String(s.state), createdAt: Number(s.createdAt) };
}
function toContainer(c: any): RuntimeContainer {
  return {
    id: c.id,
    sandboxId: c.podSandboxId,
    name: c.labels?.[L_CONTAINER_NAME] ?? c.metadata?.name ?? '',
    attempt: c.metadata?.attempt ?? 0,
    state: String(c.state),
    createdAt: Number(c.createdAt),
    labels: c.labels ?? {},
    annotations: c.annotations ?? {},
    imageRef: c.imageRef ?? '',
  };
}

function newRecord(uid: string, pod: any): PodRecord {
  return {
    uid,
    source: 'api',
    pod,
    firstSeen: Date.now(),
    waiting: new Map(),
    backoff: new Map(),
    imageBackoff: new Map(),
    probes: new Map(),
    probeInstance: new Map(),
    podIPs: [],
    lastStatus: '',
    terminated: false,
    deleted: false,
    sandboxStopped: false,
    syncing: false,
    again: false,
  };
}

const nsToMs = (ns: number): number => Math.floor(ns / 1e6);
const isoOf = (ns: number): string | undefined => (ns > 0 ? new Date(nsToMs(ns)).toISOString().replace(/\.\d{3}Z$/, 'Z') : undefined);
const nowISO = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

// ── in-place resize (InPlacePodVerticalScaling) ──────────────────────────────

/** the conditions of an in-place resize, which only the kubelet sets */
const RESIZE_CONDITIONS = new Set(['PodResizePending', 'PodResizeInProgress']);

/** the containers whose resources change in place: the regular ones and the sidecars */
function resizableContainers(pod: any): any[] {
  return [...(pod.spec?.initContainers ?? []).filter((c: any) => c.restartPolicy === 'Always'), ...(pod.spec?.containers ?? [])];
}

/** a container's CPU (millicores) and memory (bytes) requests and limits, the figures a resize changes */
function cpuMemory(r: any): { cpuReq: number; cpuLim: number; memReq: number; memLim: number } {
  return { cpuReq: resourceMilli(r?.requests, 'cpu'), cpuLim: resourceMilli(r?.limits, 'cpu'), memReq: resourceValue(r?.requests, 'memory'), memLim: resourceValue(r?.limits, 'memory') };
}

/** which of cpu and memory differ between two containers' requirements */
function resizedResources(a: any, b: any): ('cpu' | 'memory')[] {
  const x = cpuMemory(a);
  const y = cpuMemory(b);
  const out: ('cpu' | 'memory')[] = [];
  if (x.cpuReq !== y.cpuReq || x.cpuLim !== y.cpuLim) out.push('cpu');
  if (x.memReq !== y.memReq || x.memLim !== y.memLim) out.push('memory');
  return out;
}

/** the pod's effective requests (cpu in millicores, memory in bytes) with these containers' requirements: the sum of the regular ones and the sidecars, or the largest init container's if larger */
function podRequests(pod: any, resources: (c: any) => any): { cpu: number; memory: number } {
  let cpu = 0;
  let memory = 0;
  let initCPU = 0;
  let initMem = 0;
  let sidecarCPU = 0;
  let sidecarMem = 0;
  for (const c of pod.spec?.initContainers ?? []) {
    const r = cpuMemory(resources(c));
    if (c.restartPolicy === 'Always') {
      sidecarCPU += r.cpuReq;
      sidecarMem += r.memReq;
    } else {
      initCPU = Math.max(initCPU, sidecarCPU + r.cpuReq);
      initMem = Math.max(initMem, sidecarMem + r.memReq);
    }
  }
  for (const c of pod.spec?.containers ?? []) {
    const r = cpuMemory(resources(c));
    cpu += r.cpuReq;
    memory += r.memReq;
  }
  return { cpu: Math.max(cpu + sidecarCPU, initCPU), memory: Math.max(memory + sidecarMem, initMem) };
}

function podKey(pod: any): string {
  return `${pod.metadata.namespace}/${pod.metadata.name}`;
}

/** what the kubelet's messages call a pod: name_namespace(uid) */
/**
 * The reasons kubelet_admission_rejections_total names (the kubelet's allowlist, against a label
 * of high cardinality): other resources' OutOf<name> count as OutOfExtendedResources, the rest as
 * Other (the scheduler plugins' reasons NodeAffinity, NodeName, NodePorts and TaintToleration too:
 * the allowlist has the taint plugin's message, not its name).
 */
const ADMISSION_REJECTION_REASONS = new Set([
  'AppArmor', 'PodOSSelectorNodeLabelDoesNotMatch', 'PodOSNotSupported', 'InvalidNodeInfo', 'InitContainerRestartPolicyForbidden', 'SupplementalGroupsPolicyNotSupported',
  'UnexpectedAdmissionError', 'UnknownReason', 'UnexpectedPredicateFailureType', 'OutOfcpu', 'OutOfmemory', 'OutOfephemeral-storage', 'OutOfpods',
  "node(s) had taints that the pod didn't tolerate", 'Evicted', 'SysctlForbidden', 'TopologyAffinityError', 'NodeShutdown',
]);
export function admissionRejectionReason(reason: string): string {
  if (ADMISSION_REJECTION_REASONS.has(reason)) return reason;
  return reason.startsWith('OutOf') ? 'OutOfExtendedResources' : 'Other';
}

/** the kubelet's handlerRunner words for a failed lifecycle hook (its FailedPostStartHook event) */
function hookFailure(h: any, container: string, pod: any, r: HandlerResult): string {
  const where = `for Container ${goQuote(container)} in Pod ${goQuote(podDesc(pod))} failed - error: `;
  if (h?.exec) return `Exec lifecycle hook ([${(h.exec.command ?? []).join(' ')}]) ${where}${r.error ?? r.output}, message: ${goQuote(r.output)}`;
  if (h?.httpGet) return `HTTP lifecycle hook (${h.httpGet.path ?? ''}) ${where}${r.output}`;
  return r.output;
}

function podDesc(pod: any): string {
  return `${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export class PodWorkers {
  private readonly o: PodWorkersOptions;
  /** the pods bound to this node (none in standalone mode and with --runonce) */
  private readonly informer?: Informer<any>;
  private readonly records = new Map<string, PodRecord>();
  private runtime = new Map<string, RuntimePod>();
  private lastStates = new Map<string, string>();
  private timers: NodeJS.Timeout[] = [];
  private stopped = false;
  private readonly pulls: ImagePulls;
  private lastRelist = 0;
  /** the static pod sources have sent their first set */
  private staticSeen = false;
  private relisting = false;
  /** the last time the loop ran without error, for the syncloop health check */
  lastLoop = Date.now();
  /** the pods the admit handlers refused, by kubelet_admission_rejections_total's reason (admissionRejectionReason) */
  readonly admissionRejections = new Map<string, number>();

  constructor(o: PodWorkersOptions) {
    this.o = o;
    this.pulls = new ImagePulls({ serialize: o.serializeImagePulls, qps: o.registryPullQPS ?? 0, burst: o.registryBurst ?? 10, maxParallel: o.maxParallelImagePulls ?? 0 });
    if (!o.client || o.runOnce) return;
    this.informer = new Informer<any>(new ResourceClient<any>(o.client, PODS), {
      fieldSelector: `spec.nodeName=${o.nodeName}`,
      log: o.log,
      name: 'pods',
    });
    this.informer.addEventHandler({
      add: (p) => this.podChanged(p),
      update: (_old, p) => this.podChanged(p),
      delete: (p: any) => this.podGone(p?.obj ?? p),
    });
  }

  async start(): Promise<void> {
    await this.relist().catch((e) => this.o.log.error(e, 'The first relist of the container runtime failed'));
    this.informer?.run();
    this.timers.push(setInterval(() => void this.relist().catch((e) => this.o.log.error(e, 'GenericPLEG: Unable to retrieve pods')), RELIST_PERIOD_MS));
    this.timers.push(setInterval(() => this.resyncAll(), this.o.syncFrequencyMs));
    this.timers.push(setInterval(() => this.runProbes(), 500));
    if ((this.o.cgroups?.enabled || this.o.sandboxRuntime) && !this.o.runOnce) this.timers.push(setInterval(() => void this.housekeeping(), HOUSEKEEPING_PERIOD_MS));
    for (const t of this.timers) t.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    for (const r of this.records.values()) {
      if (r.timer) clearTimeout(r.timer);
      if (r.deadlineTimer) clearTimeout(r.deadlineTimer);
    }
    this.informer?.stop();
  }

  /** a message when the sync loop has not run for a while (the kubelet's syncloop check) */
  syncLoopError(): string | undefined {
    const idle = Date.now() - this.lastLoop;
    return idle > Math.max(2 * this.o.syncFrequencyMs, 60_000) ? `sync loop took too long: ${Math.round(idle / 1000)}s` : undefined;
  }

  /**
   * For --runonce: 'running' once every container of the pod's spec runs in the runtime (the
   * kubelet's isPodRunning, on a fresh look at the runtime), 'rejected' when admission refused
   * the pod; undefined while neither
   */
  async runOnceState(uid: string): Promise<'running' | 'rejected' | undefined> {
    const rec = this.records.get(uid);
    if (!rec) return undefined;
    if (!rec.admitted && rec.failure) return 'rejected';
    const rp = await this.refresh(uid);
    const running = new Set(rp.containers.filter((c) => c.state === 'CONTAINER_RUNNING').map((c) => c.name));
    const stopped = (rec.pod.spec?.containers ?? []).filter((c: any) => !running.has(c.name));
    for (const c of stopped) this.o.log.info('Container not running', { pod: podKey(rec.pod), containerName: c.name });
    return stopped.length === 0 ? 'running' : undefined;
  }

  /** the pods this kubelet runs, with their latest status as written */
  pods(): any[] {
    return [...this.records.values()].filter((r) => !r.deleted).map((r) => r.pod);
  }

  /** what the runtime runs, as minimal pods (the kubelet's /runningpods/) */
  runningPods(): any[] {
    const out: any[] = [];
    for (const [uid, rp] of this.runtime) {
      const running = rp.containers.filter((c) => c.state === 'CONTAINER_RUNNING');
      if (!running.length) continue;
      const rec = this.records.get(uid);
      const first = running[0];
      out.push({
        metadata: { name: rec?.pod.metadata.name ?? first.labels['io.kubernetes.pod.name'], namespace: rec?.pod.metadata.namespace ?? first.labels['io.kubernetes.pod.namespace'], uid, creationTimestamp: null },
        spec: { containers: running.map((c) => ({ name: c.name, image: c.imageRef, resources: {} })) },
        status: {},
      });
    }
    return out;
  }

  /** the log file of a container's current (or previous) instance */
  containerLogPath(namespace: string, name: string, container: string, previous: boolean): { path: string; running: boolean } | { error: string; code: number } {
    const rec = [...this.records.values()].find((r) => r.pod.metadata.namespace === namespace && r.pod.metadata.name === name);
    if (!rec) return { error: `pod ${namespace}/${name} not found`, code: 404 };
    const spec = rec.pod.spec ?? {};
    const known = [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])].some((c: any) => c.name === container);
    if (!known) return { error: `container ${container} is not valid for pod ${name}`, code: 400 };
    const instances = (this.runtime.get(rec.uid)?.containers ?? []).filter((c) => c.name === container).sort((a, b) => b.attempt - a.attempt || b.createdAt - a.createdAt);
    const inst = previous ? instances[1] : instances[0];
    if (!inst) {
      return previous
        ? { error: `previous terminated container "${container}" in pod "${name}" not found`, code: 400 }
        : { error: `container "${container}" in pod "${name}" is waiting to start: ${rec.waiting.get(container)?.reason ?? 'ContainerCreating'}`, code: 400 };
    }
    return { path: `${podLogDir(rec.pod, this.o.podLogsDir)}/${container}/${inst.attempt}.log`, running: inst.state === 'CONTAINER_RUNNING' };
  }

  // ── the runtime's streams (the kubelet's GetExec, GetAttach, GetPortForward, RunInContainer) ──

  /**
   * The kubelet's findContainer: the running instance of a container of the pod, as the runtime
   * has it now (not the last relist): by the pod's UID when the request names one, else by its
   * namespace and name; the newest when there are several.
   */
  private async runningContainer(namespace: string, name: string, container: string, uid: string | undefined): Promise<string | undefined> {
    const labelSelector: Record<string, string> = uid ? { [L_POD_UID]: uid } : { [L_POD_NAMESPACE]: namespace, [L_POD_NAME]: name };
    labelSelector[L_CONTAINER_NAME] = container;
    const cs = await this.o.cri.listContainers({ state: { state: 'CONTAINER_RUNNING' }, labelSelector });
    cs.sort((a: any, b: any) => Number(b.createdAt ?? 0) - Number(a.createdAt ?? 0));
    return cs[0]?.id;
  }

  /** the runtime's streaming URL for an exec, an attach or a port forward, with the kubelet's errors (server.ts' NodeAgentView.streamingURL) */
  async streamingURL(kind: StreamKind, namespace: string, name: string, container: string, o: StreamRequest): Promise<string> {
    const fullName = `${name}_${namespace}`;
    if (kind === 'portForward') {
      // GetPortForward: the pod must be running (a ready sandbox or a running container); its newest sandbox
      const uid = o.uid ?? [...this.records.values()].find((r) => !r.deleted && r.pod.metadata.namespace === namespace && r.pod.metadata.name === name)?.uid;
      const [sandboxes, running] = uid
        ? await Promise.all([this.o.cri.listPodSandbox({ labelSelector: { [L_POD_UID]: uid } }), this.o.cri.listContainers({ state: { state: 'CONTAINER_RUNNING' }, labelSelector: { [L_POD_UID]: uid } })])
        : [[], []];
      if (!sandboxes.some((s: any) => String(s.state) === 'SANDBOX_READY') && running.length === 0) throw new Error(`pod not found (${goQuote(fullName)})`);
      sandboxes.sort((a: any, b: any) => Number(b.createdAt ?? 0) - Number(a.createdAt ?? 0));
      const sandbox = sandboxes[0];
      if (!sandbox?.id) throw new Error(`failed to find sandboxID for pod ${name}_${namespace}(${uid})`);
      return this.o.cri.portForward({ podSandboxId: sandbox.id, port: o.ports ?? [] });
    }
    const id = await this.runningContainer(namespace, name, container, o.uid);
    if (kind === 'exec') {
      if (!id) throw new Error(`container not found (${goQuote(container)})`);
      return this.o.cri.exec({ containerId: id, cmd: o.cmd ?? [], tty: o.tty === true, stdin: o.stdin === true, stdout: o.stdout === true, stderr: o.stderr === true });
    }
    if (!id) throw new Error(`container ${container} not found in pod ${fullName}`);
    // attach: the TTY is the container's own (whether its process runs in one cannot change)
    const rec = [...this.records.values()].find((r) => !r.deleted && r.pod.metadata.namespace === namespace && r.pod.metadata.name === name && (!o.uid || r.uid === o.uid));
    if (!rec) throw new Error(`pod ${fullName} not found`);
    const spec = rec.pod.spec ?? {};
    const c = [...(spec.containers ?? []), ...(spec.initContainers ?? []), ...(spec.ephemeralContainers ?? [])].find((x: any) => x?.name === container);
    if (!c) throw new Error(`container ${container} not found in pod ${fullName}`);
    return this.o.cri.attach({ containerId: id, stdin: o.stdin === true, stdout: o.stdout === true, stderr: o.stderr === true, tty: c.tty === true });
  }

  /** RunInContainer: the command run to its end in the running container (ExecSync, no timeout), its stdout then its stderr; an exit code other than 0 is an error, as the kubelet's runtime client words it */
  async runInContainer(namespace: string, name: string, container: string, cmd: string[], uid?: string): Promise<Buffer> {
    const id = await this.runningContainer(namespace, name, container, uid);
    if (!id) throw new Error(`container not found (${goQuote(container)})`);
    const r = await this.o.cri.execSync(id, cmd, 0);
    if (r.exitCode !== 0) throw new Error(`command '${cmd.join(' ')}' exited with ${r.exitCode}: ${r.stderr.toString('utf8')}`);
    return Buffer.concat([r.stdout, r.stderr]);
  }

  // ── events of the API and the runtime ─────────────────────────────────────

  /** the static pods of the manifest sources (staticpods.ts), the whole set each time */
  setStaticPods(pods: any[]): void {
    this.staticSeen = true;
    const seen = new Set<string>();
    for (const p of pods) {
      seen.add(p.metadata.uid);
      if (!this.records.has(p.metadata.uid)) this.podChanged(p, p.metadata.annotations?.[CONFIG_SOURCE] ?? 'file');
    }
    for (const rec of this.records.values()) {
      if (rec.source !== 'api' && !seen.has(rec.uid) && !rec.deleted) {
        this.o.log.v(2).info('SyncLoop REMOVE', { source: rec.source, pods: [podKey(rec.pod)] });
        rec.deleted = true;
        this.enqueue(rec.uid);
      }
    }
  }

  /** the static pod a mirror pod of the API stands for */
  private staticOf(mirror: any): PodRecord | undefined {
    for (const r of this.records.values()) if (r.source !== 'api' && r.pod.metadata.name === mirror.metadata.name && r.pod.metadata.namespace === mirror.metadata.namespace) return r;
    return undefined;
  }

  private podChanged(pod: any, source = 'api'): void {
    if (source === 'api' && pod.metadata.annotations?.[CONFIG_MIRROR] !== undefined) {
      // a mirror pod: its static pod is the one run; a change of the mirror (a delete, say) is its static pod's sync
      const r = this.staticOf(pod);
      if (r) this.enqueue(r.uid);
      return;
    }
    const uid = pod.metadata.uid;
    let rec = this.records.get(uid);
    if (!rec) {
      rec = newRecord(uid, pod);
      rec.source = source;
      this.records.set(uid, rec);
      this.o.log.v(2).info('SyncLoop ADD', { source, pods: [podKey(pod)] });
    } else {
      // (the status the kubelet wrote comes back through the watch; the pod's spec and metadata are what matter)
      rec.pod = pod;
      // a deletion's grace period shortened while the containers are being stopped (a second
      // `kubectl delete --grace-period=1`): they are stopped again within the shorter one, as the
      // kubelet's pod worker cancels the kill under way and starts it again
      const g = pod.metadata?.deletionGracePeriodSeconds;
      if (rec.killGrace !== undefined && typeof g === 'number' && g < rec.killGrace) {
        rec.killGrace = Math.max(0, g);
        void this.shortenKill(rec, rec.killGrace);
      }
    }
    this.enqueue(uid);
  }

  private podGone(pod: any): void {
    const uid = pod?.metadata?.uid;
    if (!uid) return;
    if (pod.metadata.annotations?.[CONFIG_MIRROR] !== undefined) {
      const r = this.staticOf(pod);
      if (r) this.enqueue(r.uid);
      return;
    }
    const rec = this.records.get(uid);
    if (!rec) return;
    this.o.log.v(2).info('SyncLoop REMOVE', { source: 'api', pods: [podKey(pod)] });
    rec.deleted = true;
    this.enqueue(uid);
  }

  /** reads the runtime's sandboxes and containers, and asks for a sync of each pod whose containers changed state */
  private async relist(): Promise<void> {
    if (this.relisting || this.stopped) return;
    this.relisting = true;
    try {
      const [sandboxes, containers]: [any[], any[]] = await Promise.all([this.o.cri.listPodSandbox(), this.o.cri.listContainers()]);
      const next = new Map<string, RuntimePod>();
      const of = (uid: string) => {
        let p = next.get(uid);
        if (!p) next.set(uid, (p = { sandboxes: [], containers: [] }));
        return p;
      };
      for (const s of sandboxes) {
        const uid = s.labels?.[L_POD_UID] ?? s.metadata?.uid;
        if (!uid) continue;
        of(uid).sandboxes.push(toSandbox(s));
      }
      for (const c of containers) {
        const uid = c.labels?.[L_POD_UID];
        if (!uid) continue;
        of(uid).containers.push(toContainer(c));
      }
      const states = new Map<string, string>();
      const changed = new Set<string>();
      for (const [uid, rp] of next) {
        for (const c of rp.containers) {
          states.set(c.id, c.state);
          if (this.lastStates.get(c.id) !== c.state) changed.add(uid);
        }
        for (const s of rp.sandboxes) {
          states.set(s.id, s.state);
          if (this.lastStates.get(s.id) !== s.state) changed.add(uid);
        }
      }
      for (const id of this.lastStates.keys()) if (!states.has(id)) for (const [uid, rp] of this.runtime) if (rp.containers.some((c) => c.id === id)) changed.add(uid);
      this.runtime = next;
      this.lastStates = states;
      this.lastRelist = Date.now();
      this.lastLoop = Date.now();
      for (const uid of changed) if (this.records.has(uid)) this.enqueue(uid);
      for (const uid of this.runtime.keys()) if (!this.records.has(uid)) this.orphan(uid);
    } finally {
      this.relisting = false;
    }
  }

  private resyncAll(): void {
    this.lastLoop = Date.now();
    for (const uid of this.records.keys()) this.enqueue(uid);
    // sandboxes of pods the kubelet does not know (deleted while it was down): removed
    for (const uid of this.runtime.keys()) if (!this.records.has(uid)) this.orphan(uid);
  }

  /**
   * Whether every pod source has given its pods (the kubelet's sourcesReady): the API server's
   * (the informer synced) and the static ones (their first set). Until then a pod the runtime runs
   * and the kubelet has no record of may be one a source is about to give (a restarted kubelet's).
   */
  private sourcesReady(): boolean {
    return (!this.informer || this.informer.hasSynced()) && (!this.o.staticSources || this.staticSeen);
  }

  /** the runtime runs a pod the kubelet has no record of, and the sources are ready: it is killed and removed */
  private orphan(uid: string): void {
    // (--runonce does no housekeeping: it only starts its pods)
    if (this.records.has(uid) || this.o.runOnce || !this.sourcesReady()) return;
    const rp = this.runtime.get(uid);
    if (!rp) return;
    const rec = newRecord(uid, { metadata: { uid, name: '', namespace: '' }, spec: { terminationGracePeriodSeconds: 2 } });
    rec.terminated = true;
    rec.deleted = true;
    (rec as any).orphan = true;
    this.records.set(uid, rec);
    this.enqueue(uid);
  }

  private enqueue(uid: string, delayMs = 0): void {
    const rec = this.records.get(uid);
    if (!rec || this.stopped) return;
    if (delayMs > 0) {
      if (rec.timer) clearTimeout(rec.timer);
      rec.timer = setTimeout(() => {
        rec.timer = undefined;
        this.enqueue(uid);
      }, delayMs);
      rec.timer.unref();
      return;
    }
    if (rec.syncing) {
      rec.again = true;
      return;
    }
    rec.syncing = true;
    void (async () => {
      do {
        rec.again = false;
        try {
          await this.sync(rec);
        } catch (e) {
          if (!this.stopped) this.o.log.error(e, 'Error syncing pod, skipping', { pod: podKey(rec.pod), podUID: uid });
          this.enqueue(uid, 2000);
        }
      } while (rec.again && !this.stopped);
      rec.syncing = false;
    })();
  }

  // ── one sync ──────────────────────────────────────────────────────────────

  private runtimePod(uid: string): RuntimePod {
    return this.runtime.get(uid) ?? { sandboxes: [], containers: [] };
  }

  /** refreshes one pod's view of the runtime right after changing it (the relist comes later) */
  private async refresh(uid: string): Promise<RuntimePod> {
    const [sandboxes, containers] = await Promise.all([this.o.cri.listPodSandbox({ labelSelector: { [L_POD_UID]: uid } } as any), this.o.cri.listContainers({ labelSelector: { [L_POD_UID]: uid } } as any)]);
    const rp: RuntimePod = {
      sandboxes: sandboxes.map(toSandbox),
      containers: containers.map(toContainer),
    };
    if (rp.sandboxes.length || rp.containers.length) this.runtime.set(uid, rp);
    else this.runtime.delete(uid);
    for (const c of rp.containers) this.lastStates.set(c.id, c.state);
    for (const s of rp.sandboxes) this.lastStates.set(s.id, s.state);
    return rp;
  }

  private async sync(rec: PodRecord): Promise<void> {
    const pod = rec.pod;
    if (rec.deleted || pod.metadata.deletionTimestamp) {
      await this.terminate(rec);
      return;
    }
    if (rec.source !== 'api') await this.ensureMirror(rec);
    if (rec.evicting && !rec.terminated) {
      const { message, graceSeconds, disruptionTarget } = rec.evicting;
      rec.evicting = undefined;
      await this.fail(rec, 'Evicted', message, { graceSeconds, disruptionTarget, warning: true });
      return;
    }
    if (rec.terminated) {
      // Succeeded or Failed: nothing runs again; the sandbox is stopped once
      if (!rec.sandboxStopped) {
        const rp = await this.refresh(rec.uid);
        for (const s of rp.sandboxes) if (s.state === 'SANDBOX_READY') await this.o.cri.stopPodSandbox(s.id).catch(() => undefined);
        rec.sandboxStopped = true;
      }
      await this.writeStatus(rec, await this.refresh(rec.uid));
      return;
    }
    // spec.activeDeadlineSeconds, counted from the pod's start on this node (status.startTime)
    const deadline = this.activeDeadline(rec);
    if (deadline !== undefined) {
      const left = deadline - Date.now();
      if (left <= 0) {
        await this.fail(rec, 'DeadlineExceeded', 'Pod was active on the node longer than the specified deadline');
        return;
      }
      if (rec.deadlineTimer) clearTimeout(rec.deadlineTimer);
      rec.deadlineTimer = setTimeout(() => {
        rec.deadlineTimer = undefined;
        this.enqueue(rec.uid);
      }, left + 10);
      rec.deadlineTimer.unref();
    }
    let rp = await this.refresh(rec.uid);
    const spec = pod.spec ?? {};
    if (!rec.admitted) {
      // (a pod this node runs already, say from before a restart, was admitted then)
      const refused = rp.sandboxes.length === 0 ? await this.o.admit?.(pod) : undefined;
      if (refused) {
        // (the kubelet's rejectPod: the event says the message, the status `Pod was rejected: <message>`)
        this.o.log.info('Pod was rejected', { pod: podKey(pod), reason: refused.reason, message: refused.message });
        const label = admissionRejectionReason(refused.reason);
        this.admissionRejections.set(label, (this.admissionRejections.get(label) ?? 0) + 1);
        await this.fail(rec, refused.reason, refused.message, { warning: true, statusMessage: `Pod was rejected: ${refused.message}` });
        return;
      }
      rec.admitted = true;
    }
    // (a static pod cannot be resized: its manifest is its spec)
    if (this.o.inPlaceResize && rec.source === 'api') this.allocate(rec);
    const cgroups = this.o.cgroups?.enabled ? this.o.cgroups : undefined;
    if (cgroups && !cgroups.podCgroupExists(this.allocatedPod(rec))) {
      // The pod's cgroup, made before its sandbox (SyncPod). A pod running without one (the kubelet
      // started again with cgroupsPerQOS) is killed and started again under it; one that is not to
      // restart (restartPolicy Never) gets none.
      let killed = false;
      if (rp.containers.some((c) => c.state === 'CONTAINER_RUNNING')) {
        await this.stopPod(rec, rp, this.gracePeriod(pod));
        rp = await this.refresh(rec.uid);
        killed = true;
      }
      if (!(killed && (spec.restartPolicy || 'Always') === 'Never')) {
        try {
          cgroups.updateQOSCgroups();
        } catch (e) {
          this.o.log.v(2).info('Failed to update QoS cgroups while syncing pod', { pod: podKey(pod), err: (e as Error).message });
        }
        try {
          cgroups.ensurePodCgroup(this.allocatedPod(rec));
        } catch (e) {
          void this.o.events.event(pod, 'Warning', 'FailedCreatePodContainer', `unable to ensure pod container exists: ${(e as Error).message}`);
          throw new Error(`failed to ensure that the pod: ${rec.uid} cgroups exist and are correctly applied: ${(e as Error).message}`);
        }
      }
    }

    // volumes first: a pod whose volumes cannot be set up waits (FailedMount)
    try {
      await this.o.volumes.setUp(pod);
    } catch (e) {
      const msgs: string[] = (e as any)?.messages ?? [(e as Error).message];
      for (const msg of msgs) void this.o.events.event(pod, 'Warning', 'FailedMount', msg);
      // (logged too, once for each new set of errors: a standalone kubelet's events go nowhere else)
      const text = msgs.join('; ');
      if (rec.mountError !== text) this.o.log.error(new Error(text), 'Unable to attach or mount volumes', { pod: podKey(pod) });
      rec.mountError = text;
      for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) if (!rp.containers.some((x) => x.name === c.name)) rec.waiting.set(c.name, { reason: 'ContainerCreating', message: '' });
      await this.writeStatus(rec, rp);
      this.enqueue(rec.uid, 5000);
      return;
    }

    // the sandbox
    const sandboxes = [...rp.sandboxes].sort((a, b) => b.createdAt - a.createdAt);
    let sandbox = sandboxes[0];
    const regular: any[] = spec.containers ?? [];
    const init: any[] = spec.initContainers ?? [];
    const policy: string = spec.restartPolicy || 'Always';
    const { config: dns, missingClusterDNS } = dnsConfigFor(pod, this.o.dns);
    if (!sandbox || sandbox.state !== 'SANDBOX_READY') {
      // a pod that ran to its end is not started again (restartPolicy Never or OnFailure with all succeeded)
      if (sandbox && this.allDone(rec, rp, policy)) {
        rec.terminated = true;
        await this.writeStatus(rec, rp);
        return;
      }
      if (sandbox) {
        this.o.log.info('No ready sandbox for pod can be found. Need to start a new one', { pod: podKey(pod) });
        for (const c of rp.containers) if (c.state === 'CONTAINER_RUNNING') await this.o.cri.stopContainer(c.id, 0).catch(() => undefined);
        for (const s of rp.sandboxes) await this.o.cri.stopPodSandbox(s.id).catch(() => undefined);
      }
      if (missingClusterDNS) void this.o.events.event(pod, 'Warning', 'MissingClusterDNS', 'pod: "' + podDesc(pod) + '". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.');
      const attempt = sandbox ? sandbox.attempt + 1 : 0;
      try {
        const handler = (await this.o.sandboxRuntime?.runtimeHandler(pod)) ?? '';
        rec.userns = { value: await this.o.sandboxRuntime?.userNamespace(pod, handler) };
        const id = await this.o.cri.runPodSandbox(withUserNamespace(sandboxConfig(pod, attempt, dns, this.o.podLogsDir, this.cgroupParent(rec), this.o.dns.clusterDomain), rec.userns.value), handler);
        const st = await this.o.cri.podSandboxStatus(id);
        const ip = st.status?.network?.ip;
        rec.podIPs = spec.hostNetwork ? [...this.o.nodeIPs] : ip ? [ip, ...(st.status?.network?.additionalIps ?? []).map((x: any) => x.ip)] : [];
      } catch (e) {
        const msg = `Failed to create pod sandbox: ${(e as Error).message}`;
        void this.o.events.event(pod, 'Warning', 'FailedCreatePodSandBox', msg);
        this.o.log.error(e, 'CreatePodSandbox for pod failed', { pod: podKey(pod) });
        await this.writeStatus(rec, rp);
        this.enqueue(rec.uid, 5000);
        return;
      }
      rp = await this.refresh(rec.uid);
      sandbox = [...rp.sandboxes].sort((a, b) => b.createdAt - a.createdAt)[0];
      if (!sandbox) throw new Error('the new sandbox is not listed by the runtime');
      rec.probes.clear();
      rec.probeInstance.clear();
    } else if (rec.podIPs.length === 0) {
      const st = await this.o.cri.podSandboxStatus(sandbox.id).catch(() => undefined);
      const ip = st?.status?.network?.ip;
      rec.podIPs = spec.hostNetwork ? [...this.o.nodeIPs] : ip ? [ip] : [];
    }
    const inSandbox = (name: string) => rp.containers.filter((c) => c.name === name && c.sandboxId === sandbox!.id).sort((a, b) => b.attempt - a.attempt || b.createdAt - a.createdAt);
    const latestAttempt = (name: string) => Math.max(-1, ...rp.containers.filter((c) => c.name === name).map((c) => c.attempt));

    // ephemeral containers (kubectl debug), before the init containers as the kubelet starts them
    // (so that one runs while an init container fails): each started once, never restarted, an
    // instance of any earlier sandbox counting as started
    if (!rec.terminated) {
      for (const ec of Array.isArray(spec.ephemeralContainers) ? spec.ephemeralContainers : []) {
        if (rp.containers.some((x) => x.name === ec.name)) continue;
        const target = typeof ec.targetContainerName === 'string' && ec.targetContainerName ? { name: ec.targetContainerName, containers: rp.containers } : undefined;
        if (await this.startContainer(rec, sandbox.id, ec, 0, 'ephemeral', dns, target)) rp = await this.refresh(rec.uid);
      }
    }

    // init containers, in order
    let initDone = true;
    for (const c of init) {
      const sidecar = c.restartPolicy === 'Always';
      const inst = inSandbox(c.name)[0];
      if (!inst) {
        await this.startContainer(rec, sandbox.id, c, latestAttempt(c.name) + 1, 'init', dns);
        initDone = false;
        break;
      }
      if (inst.state === 'CONTAINER_RUNNING' || inst.state === 'CONTAINER_CREATED') {
        if (sidecar && inst.state === 'CONTAINER_RUNNING') continue;
        initDone = false;
        break;
      }
      const status = await this.o.cri.containerStatus(inst.id).catch(() => undefined);
      const exitCode = status?.status?.exitCode ?? 0;
      if (!sidecar && exitCode === 0) continue;
      initDone = false;
      if (!sidecar && policy === 'Never') {
        rec.terminated = true;
        break;
      }
      await this.restartWithBackoff(rec, sandbox.id, c, inst, latestAttempt(c.name) + 1, 'init', dns);
      break;
    }

    if (initDone && !rec.terminated) {
      // an in-place resize: the pod cgroup widened before its containers grow (doPodResizeAction)
      const resizeCgroup = this.o.inPlaceResize && rec.allocated && cgroups ? cgroups : undefined;
      if (resizeCgroup) this.resizePodCgroup(rec, resizeCgroup, 'widen');
      for (const c of regular) {
        const inst = inSandbox(c.name)[0];
        if (!inst) {
          await this.startContainer(rec, sandbox.id, c, latestAttempt(c.name) + 1, 'regular', dns);
          continue;
        }
        if (inst.state === 'CONTAINER_RUNNING') {
          const hash = inst.annotations[A_HASH];
          const liveness = rec.probes.get(`${c.name}/liveness`);
          const startup = rec.probes.get(`${c.name}/startup`);
          let why = '';
          // (a failed liveness or startup probe's own terminationGracePeriodSeconds, when it has one
          // and the pod is not being deleted: the kubelet's setTerminationGracePeriod)
          let probeGrace: unknown;
          if (hash && hash !== containerHash(c)) why = `Container ${c.name} definition changed, will be restarted`;
          else if (liveness && !liveness.result) {
            why = `Container ${c.name} failed liveness probe, will be restarted`;
            probeGrace = c.livenessProbe?.terminationGracePeriodSeconds;
          } else if (startup && !startup.result && startup.failureCount >= (c.startupProbe?.failureThreshold ?? 3)) {
            why = `Container ${c.name} failed startup probe, will be restarted`;
            probeGrace = c.startupProbe?.terminationGracePeriodSeconds;
          } else why = await this.actuate(rec, c, inst);
          if (why) {
            void this.o.events.event(pod, 'Normal', 'Killing', why, `spec.containers{${c.name}}`);
            const grace = typeof probeGrace === 'number' && pod.metadata.deletionGracePeriodSeconds === undefined ? probeGrace : this.gracePeriod(pod);
            await this.killContainer(rec, inst, c, grace);
            rec.probes.delete(`${c.name}/liveness`);
            rec.probes.delete(`${c.name}/startup`);
            rec.probes.delete(`${c.name}/readiness`);
            if (policy !== 'Never') this.enqueue(rec.uid, 100);
          } else {
            this.ensureProbes(rec, c, inst);
          }
          continue;
        }
        if (inst.state === 'CONTAINER_CREATED') {
          await this.o.cri.startContainer(inst.id).catch((e) => this.o.log.error(e, 'Start of a created container failed', { container: c.name }));
          continue;
        }
        // exited (or unknown)
        const status = await this.o.cri.containerStatus(inst.id).catch(() => undefined);
        const exitCode = status?.status?.exitCode ?? 0;
        const restart = policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0);
        if (!restart) continue;
        await this.restartWithBackoff(rec, sandbox.id, c, inst, latestAttempt(c.name) + 1, 'regular', dns, status?.status);
      }
      // ... and narrowed once they shrank
      if (resizeCgroup && !rec.resizeError) this.resizePodCgroup(rec, resizeCgroup, 'narrow');
      rp = await this.refresh(rec.uid);
      if (this.allDone(rec, rp, policy)) rec.terminated = true;
    } else {
      rp = await this.refresh(rec.uid);
    }
    await this.removeDeadContainers(rp);
    await this.writeStatus(rec, rp);
    if (rec.terminated) this.enqueue(rec.uid, 10);
  }

  /** whether every container ran to an end the restartPolicy does not restart */
  private allDone(rec: PodRecord, rp: RuntimePod, policy: string): boolean {
    if (policy === 'Always') return false;
    const regular: any[] = rec.pod.spec?.containers ?? [];
    if (!regular.length) return false;
    for (const c of regular) {
      const inst = rp.containers.filter((x) => x.name === c.name).sort((a, b) => b.attempt - a.attempt || b.createdAt - a.createdAt)[0];
      if (!inst || inst.state !== 'CONTAINER_EXITED') return false;
    }
    if (policy === 'Never') return true;
    // OnFailure: done when all succeeded; the exit codes are in the statuses the status computation reads
    return (rec as any).allSucceeded === true;
  }

  /** when spec.activeDeadlineSeconds ends (ms since the epoch), counted from status.startTime; undefined: no deadline */
  private activeDeadline(rec: PodRecord): number | undefined {
    const secs = rec.pod.spec?.activeDeadlineSeconds;
    if (typeof secs !== 'number' || !(secs > 0)) return undefined;
    const started = Date.parse(rec.pod.status?.startTime ?? '');
    return (Number.isFinite(started) ? started : rec.firstSeen) + secs * 1000;
  }

  /**
   * The kubelet ends a pod itself (the active deadline's SyncPodKill): an event with the reason,
   * its containers stopped with the pod's grace period, the sandbox stopped, and the status Failed
   * with the reason and message. The pod object stays (its owner or the pod GC deletes it).
   */
  private async fail(rec: PodRecord, reason: string, message: string, o: { graceSeconds?: number; disruptionTarget?: boolean; warning?: boolean; statusMessage?: string } = {}): Promise<void> {
    const pod = rec.pod;
    this.o.log.info('Pod failed', { pod: podKey(pod), reason, message });
    void this.o.events.event(pod, o.warning ? 'Warning' : 'Normal', reason, message);
    rec.failure = { reason, message: o.statusMessage ?? message, disruptionTarget: o.disruptionTarget, at: nowISO() };
    let rp = await this.refresh(rec.uid);
    await this.stopPod(rec, rp, o.graceSeconds ?? this.gracePeriod(pod));
    rec.sandboxStopped = true;
    rec.terminated = true;
    if (rec.deadlineTimer) clearTimeout(rec.deadlineTimer);
    rp = await this.refresh(rec.uid);
    await this.writeStatus(rec, rp);
  }

  /**
   * the pods the eviction manager may evict: admitted, not ended, and not critical (isCriticalPod:
   * the kubelet never evicts those)
   */
  activePods(): any[] {
    const out: any[] = [];
    for (const r of this.records.values()) {
      if (!r.admitted || r.terminated || r.deleted || r.evicting || r.pod.metadata?.deletionTimestamp) continue;
      if (r.source !== 'api' || isCriticalPod(r.pod)) continue;
      out.push(r.pod);
    }
    return out;
  }

  /** the pods admitted and not ended, with their admitted resources (the container manager's active pods) */
  admittedPods(): any[] {
    const out: any[] = [];
    for (const r of this.records.values()) if (r.admitted && !r.terminated && !r.deleted) out.push(this.allocatedPod(r));
    return out;
  }

  /** the pod with the resources admitted for it (the kubelet's allocated pod) */
  private allocatedPod(rec: PodRecord): any {
    const alloc = rec.allocated;
    if (!alloc) return rec.pod;
    const spec = rec.pod.spec ?? {};
    const res = (c: any) => (alloc.has(c.name) ? { ...c, resources: alloc.get(c.name) } : c);
    return { ...rec.pod, spec: { ...spec, containers: (spec.containers ?? []).map(res), initContainers: spec.initContainers ? spec.initContainers.map((c: any) => (c.restartPolicy === 'Always' ? res(c) : c)) : undefined } };
  }

  /**
   * The kubelet's cleanupOrphanedPodCgroups, at every housekeeping once the sources are ready: the
   * pod cgroups of pods neither known here nor in the runtime are removed (their processes killed),
   * or only get their CPU reduced while their volumes are still mounted.
   */
  private cleaningCgroups = false;

  /** the pods not yet terminated here, and those the runtime runs (a ready sandbox or a live container) */
  private possiblyRunning(): Set<string> {
    const out = new Set<string>();
    for (const r of this.records.values()) if (!r.terminated) out.add(r.uid);
    for (const [uid, rp] of this.runtime) {
      if (rp.sandboxes.some((x) => x.state === 'SANDBOX_READY') || rp.containers.some((c) => c.state === 'CONTAINER_RUNNING' || c.state === 'CONTAINER_CREATED')) out.add(uid);
    }
    return out;
  }

  /**
   * The kubelet's housekeeping (HandlePodCleanups), once the sources are ready and the runtime
   * listed: the user namespace blocks of pods neither known here nor running are freed, then the
   * orphaned pod cgroups are cleaned up.
   */
  private async housekeeping(): Promise<void> {
    if (this.stopped || !this.sourcesReady() || this.lastRelist === 0) return;
    this.o.sandboxRuntime?.releaseUnknown(new Set([...this.records.keys(), ...this.possiblyRunning()]));
    await this.cleanupPodCgroups();
  }

  private async cleanupPodCgroups(): Promise<void> {
    const cm = this.o.cgroups;
    if (!cm?.enabled || this.stopped || this.cleaningCgroups || !this.sourcesReady() || this.lastRelist === 0) return;
    this.cleaningCgroups = true;
    try {
      const possiblyRunning = this.possiblyRunning();
      let mounts: string[] = [];
      try {
        mounts = readFileSync('/proc/self/mounts', 'utf8').split('\n').map((l) => (l.split(' ')[1] ?? '').replace(/\\040/g, ' '));
      } catch {
        /* no /proc: nothing is taken to be mounted */
      }
      const root = this.o.rootDir;
      const mounted = (uid: string) => !!root && mounts.some((m) => m.startsWith(`${root}/pods/${uid}/volumes/`));
      await cm.cleanupOrphanedPodCgroups(possiblyRunning, mounted);
    } catch (e) {
      this.o.log.error(e, 'Failed cleaning up orphaned pod cgroups');
    } finally {
      this.cleaningCgroups = false;
    }
  }

  /** the eviction manager's eviction: the pod fails with reason Evicted and the DisruptionTarget condition, its containers stopped within `graceSeconds` */
  async evict(uid: string, message: string, graceSeconds: number, disruptionTarget = true): Promise<boolean> {
    const rec = this.records.get(uid);
    if (!rec || rec.terminated || rec.deleted) return false;
    rec.evicting = { message, graceSeconds, disruptionTarget };
    this.enqueue(uid);
    return true;
  }

  /**
   * The kubelet's handlePodResourcesResize: the resources a pod asks for (its spec) beside those
   * admitted for it. A change is admitted when the pod's requests fit the node's allocatable
   * (else PodResizePending Infeasible, `Node didn't have enough capacity: cpu, requested: 5000,
   * capacity: 2000`) and, with the other pods' admitted requests, what is left of it (else
   * Deferred, `Node didn't have enough resource: ...`, tried again at every sync).
   */
  private allocate(rec: PodRecord): void {
    const pod = rec.pod;
    const desired = new Map<string, any>(resizableContainers(pod).map((c: any) => [c.name, c.resources ?? {}]));
    if (!rec.allocated) {
      rec.allocated = desired;
      return;
    }
    const allocated = rec.allocated;
    if (![...desired].some(([n, r]) => resizedResources(r, allocated.get(n)).length > 0)) {
      rec.resizePending = undefined;
      return;
    }
    const alloc = this.o.nodeAllocatable();
    const cpuCap = resourceMilli(alloc, 'cpu');
    const memCap = resourceValue(alloc, 'memory');
    const want = podRequests(pod, (c) => desired.get(c.name) ?? c.resources);
    if (want.cpu > cpuCap || want.memory > memCap) {
      const what = want.memory > memCap ? `memory, requested: ${want.memory}, capacity: ${memCap}` : `cpu, requested: ${want.cpu}, capacity: ${cpuCap}`;
      rec.resizePending = { reason: 'Infeasible', message: `Node didn't have enough capacity: ${what}` };
      return;
    }
    let usedCPU = 0;
    let usedMem = 0;
    for (const r of this.records.values()) {
      if (r === rec || !r.admitted || r.terminated || r.deleted) continue;
      const u = podRequests(r.pod, (c) => r.allocated?.get(c.name) ?? c.resources);
      usedCPU += u.cpu;
      usedMem += u.memory;
    }
    if (usedCPU + want.cpu > cpuCap) {
      rec.resizePending = { reason: 'Deferred', message: `Node didn't have enough resource: cpu, requested: ${want.cpu}, used: ${usedCPU}, capacity: ${cpuCap}` };
      return;
    }
    if (usedMem + want.memory > memCap) {
      rec.resizePending = { reason: 'Deferred', message: `Node didn't have enough resource: memory, requested: ${want.memory}, used: ${usedMem}, capacity: ${memCap}` };
      return;
    }
    this.o.log.v(2).info('Pod resize admitted', { pod: podKey(pod) });
    rec.allocated = desired;
    rec.resizePending = undefined;
    rec.resizeError = undefined;
  }

  /**
   * A running container whose admitted resources differ from those it has: restarted when a
   * resized resource's resizePolicy says RestartContainer (returns why), else its new resources
   * go to the runtime (UpdateContainerResources); a refusal is PodResizeInProgress's Error.
   */
  private async actuate(rec: PodRecord, c: any, inst: RuntimeContainer): Promise<string> {
    if (!this.o.inPlaceResize || !rec.allocated) return '';
    const want = rec.allocated.get(c.name) ?? c.resources ?? {};
    const actuated = (rec.actuated ??= new Map());
    const act = actuated.get(c.name);
    // (a new instance was made with the admitted resources; one found at start is taken to have them)
    if (!act || act.id !== inst.id) {
      actuated.set(c.name, { id: inst.id, resources: want });
      return '';
    }
    const changed = resizedResources(act.resources, want);
    if (!changed.length) return '';
    const policy = (r: string) => (c.resizePolicy ?? []).find((p: any) => p?.resourceName === r)?.restartPolicy ?? 'NotRequired';
    if (changed.some((r) => policy(r) === 'RestartContainer')) return `Container ${c.name} resize requires restart`;
    try {
      await this.o.cri.updateContainerResources(inst.id, linuxResources(rec.pod, { ...c, resources: want }, this.o.settings));
      act.resources = want;
      rec.resizeError = undefined;
      this.o.log.v(2).info('Container resources updated in place', { pod: podKey(rec.pod), containerName: c.name, resources: changed });
    } catch (e) {
      rec.resizeError = (e as Error).message;
      this.o.log.error(e, 'Failed to update the container resources', { pod: podKey(rec.pod), containerName: c.name });
    }
    return '';
  }

  /** the pod cgroup's share of an in-place resize; a failure is PodResizeInProgress's Error */
  private resizePodCgroup(rec: PodRecord, cgroups: ContainerManager, phase: 'widen' | 'narrow'): void {
    try {
      if (cgroups.resizePodCgroup(this.allocatedPod(rec), phase)) this.o.log.v(2).info('Pod cgroup resized', { pod: podKey(rec.pod), phase });
    } catch (e) {
      rec.resizeError = `failed to set the pod cgroup's resources: ${(e as Error).message}`;
      this.o.log.error(e, 'Failed to set cgroup config', { pod: podKey(rec.pod) });
    }
  }

  /** the pod's cgroup parent ('' without cgroupsPerQOS) */
  /** the pod's user namespace, worked out again for a sandbox this kubelet did not start (after a restart) */
  private async userNamespaceOf(rec: PodRecord, pod: any): Promise<UserNamespace | undefined> {
    if (!this.o.sandboxRuntime) return undefined;
    if (!rec.userns) rec.userns = { value: await this.o.sandboxRuntime.userNamespace(pod, await this.o.sandboxRuntime.runtimeHandler(pod)) };
    return rec.userns.value;
  }

  private cgroupParent(rec: PodRecord): string {
    return this.o.cgroups?.podCgroupParent(rec.pod) ?? '';
  }

  /**
   * The eviction manager's node-level reclaim of disk (the kubelet's DeleteAllUnusedContainers):
   * the dead containers of the pods that ended (their logs go with them) or that the kubelet no
   * longer knows; a running pod keeps the last dead instance of each container, as always.
   */
  async deleteUnusedContainers(): Promise<void> {
    for (const [uid, rp] of this.runtime) {
      const rec = this.records.get(uid);
      if (rec && !rec.terminated && !rec.deleted) continue;
      for (const c of rp.containers) {
        if (c.state !== 'CONTAINER_EXITED') continue;
        await this.o.cri.removeContainer(c.id).catch(() => undefined);
        this.o.log.v(2).info('Removed a dead container to reclaim disk', { podUID: uid, containerName: c.name, containerID: c.id });
      }
    }
  }

  private gracePeriod(pod: any): number {
    const g = pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
    return Math.max(0, Number(g));
  }

  /**
   * starts an exited container again unless it is in its back-off (the kubelet's: none before the
   * first restart, then 10 s from the last exit, doubling to 5 minutes; reset when the container
   * had run 10 minutes)
   */
  private async restartWithBackoff(rec: PodRecord, sandboxId: string, c: any, inst: RuntimeContainer, attempt: number, kind: ContainerKind, dns: any, status?: any): Promise<void> {
    const now = Date.now();
    const st = status ?? (await this.o.cri.containerStatus(inst.id).catch(() => undefined))?.status;
    const finishedAt = st && st.finishedAt > 0 ? nsToMs(st.finishedAt) : now;
    const ranMs = st && st.startedAt > 0 ? finishedAt - nsToMs(st.startedAt) : 0;
    let b = rec.backoff.get(c.name);
    if (b && ranMs >= BACKOFF_RESET_MS) {
      rec.backoff.delete(c.name);
      b = undefined;
    }
    if (b && now < finishedAt + b.delayMs) {
      const msg = `back-off ${goSeconds(b.delayMs)} restarting failed container=${c.name} pod=${podDesc(rec.pod)}`;
      if (rec.waiting.get(c.name)?.message !== msg) void this.o.events.event(rec.pod, 'Warning', 'BackOff', `Back-off restarting failed container ${c.name} in pod ${podDesc(rec.pod)}`, containerFieldPath(kind, c.name));
      rec.waiting.set(c.name, { reason: 'CrashLoopBackOff', message: msg });
      this.enqueue(rec.uid, finishedAt + b.delayMs - now + 50);
      return;
    }
    if (b) b.delayMs = Math.min(BACKOFF_MAX_MS, b.delayMs * 2);
    else rec.backoff.set(c.name, { delayMs: BACKOFF_INITIAL_MS, until: 0 });
    await this.startContainer(rec, sandboxId, c, attempt, kind, dns);
  }

  /**
   * pulls the image (by imagePullPolicy), makes the container and starts it; false when it could
   * not. `target`: an ephemeral container's targetContainerName, as the pod's containers are now
   * (its PID namespace is the target's)
   */
  private async startContainer(rec: PodRecord, sandboxId: string, c: any, attempt: number, kind: ContainerKind, dns: any, target?: { name: string; containers: RuntimeContainer[] }): Promise<boolean> {
    const pod = rec.pod;
    const fieldPath = containerFieldPath(kind, c.name);
    // (the container waits with `reason`, the error in a Failed event, and the pod is synced again in 5 s)
    const failed = (reason: string, msg: string): false => {
      rec.waiting.set(c.name, { reason, message: msg });
      void this.o.events.event(pod, 'Warning', 'Failed', `Error: ${msg}`, fieldPath);
      this.enqueue(rec.uid, 5000);
      return false;
    };
    const image = await this.ensureImage(rec, c, fieldPath);
    if (!image) return false;
    // (the kubelet's getTargetID: the target's newest instance, whatever its state)
    let targetId: string | undefined;
    if (target) {
      targetId = target.containers.filter((x) => x.name === target.name).sort((a, b) => b.attempt - a.attempt || b.createdAt - a.createdAt)[0]?.id;
      if (targetId === undefined) return failed('CreateContainerConfigError', `unable to find target container ${target.name}`);
    }
    let env: { name: string; value: string }[];
    let mounts: any[];
    try {
      env = await makeEnvironment(pod, c, { client: this.o.client, nodeName: this.o.nodeName, hostIPs: this.o.nodeIPs, podIPs: rec.podIPs, nodeAllocatable: this.o.nodeAllocatable() } as any);
      mounts = (await this.o.volumes.mountsFor(pod, c, env, rec.podIPs)).mounts;
    } catch (e) {
      const msg = (e as Error).message;
      if (e instanceof ContainerConfigError || (e as any)?.name === 'ContainerConfigError') return failed('CreateContainerConfigError', msg);
      throw e;
    }
    const nonRoot = await this.verifyRunAsNonRoot(pod, c, image);
    if (nonRoot) return failed('CreateContainerConfigError', nonRoot);
    const cmd = expandCommandAndArgs(c, env);
    // (with the resources admitted for it: a resize not admitted yet does not reach a new instance)
    const admitted = rec.allocated?.get(c.name);
    let userns: UserNamespace | undefined;
    try {
      userns = await this.userNamespaceOf(rec, pod);
    } catch (e) {
      return failed('CreateContainerConfigError', (e as Error).message);
    }
    const config = withUserNamespace(containerConfig(pod, admitted ? { ...c, resources: admitted } : c, attempt, image, env, cmd, mounts, kind, this.o.settings, targetId), userns);
    if (c.lifecycle?.preStop) config.annotations[A_PRESTOP] = JSON.stringify(c.lifecycle.preStop);
    const sbConfig = withUserNamespace(sandboxConfig(pod, 0, dns, this.o.podLogsDir, this.cgroupParent(rec), this.o.dns.clusterDomain), userns);
    let id: string;
    try {
      id = await this.o.cri.createContainer(sandboxId, config, sbConfig);
    } catch (e) {
      return failed('CreateContainerError', (e as Error).message);
    }
    void this.o.events.event(pod, 'Normal', 'Created', `Created container: ${c.name}`, fieldPath);
    try {
      await this.o.cri.startContainer(id);
    } catch (e) {
      return failed('RunContainerError', (e as Error).message);
    }
    rec.waiting.delete(c.name);
    void this.o.events.event(pod, 'Normal', 'Started', `Started container ${c.name}`, fieldPath);
    if (c.lifecycle?.postStart) {
      // (as the kubelet runs it: an exec without a timeout)
      const h = c.lifecycle.postStart;
      const r = await runHandler(h, { podIP: rec.podIPs[0] ?? '', containerID: id, execSync: (i, cm, t) => this.o.cri.execSync(i, cm, t), ports: portsOf(c) }, 0, { hook: true });
      if (!r.ok) {
        void this.o.events.event(pod, 'Warning', 'FailedPostStartHook', hookFailure(h, c.name, pod, r), fieldPath);
        await this.o.cri.stopContainer(id, 0).catch(() => undefined);
      }
    }
    return true;
  }

  /**
   * The kubelet's verifyRunAsNonRoot, for a container whose effective securityContext says
   * runAsNonRoot: its runAsUser must not be 0; without one, its image's user (the runtime's
   * ImageStatus: a uid, a user name, else root) must be a uid other than 0. The refusal's words,
   * or undefined.
   */
  private async verifyRunAsNonRoot(pod: any, c: any, image: string): Promise<string | undefined> {
    const psc = pod.spec?.securityContext ?? {};
    const csc = c.securityContext ?? {};
    if ((csc.runAsNonRoot ?? psc.runAsNonRoot) !== true) return undefined;
    const where = `(pod: ${goQuote(podDesc(pod))}, container: ${c.name})`;
    const runAsUser = csc.runAsUser ?? psc.runAsUser;
    if (typeof runAsUser === 'number') return runAsUser === 0 ? `container's runAsUser breaks non-root policy ${where}` : undefined;
    let st: Awaited<ReturnType<CRIClient['imageStatus']>>;
    try {
      st = await this.o.cri.imageStatus(image);
    } catch (e) {
      return (e as Error).message;
    }
    if (!st) return `image ${goQuote(c.image)} not found`;
    // (a uid of 0 may come as an empty Int64Value: proto3 leaves a zero out)
    if (st.uid) return Number(st.uid.value ?? 0) === 0 ? `container has runAsNonRoot and image will run as root ${where}` : undefined;
    if (st.username) return `container has runAsNonRoot and image has non-numeric user (${st.username}), cannot verify user is non-root ${where}`;
    return `container has runAsNonRoot and image will run as root ${where}`;
  }

  /**
   * A pull with each credential that matches the image, in turn, until one succeeds (anonymous
   * when none matches); when all fail, their errors together, as the kubelet's image puller
   * aggregates them.
   */
  private async pullWith(image: string, creds: TrackedAuth[]): Promise<{ ref: string; used?: TrackedAuth }> {
    if (creds.length === 0) return { ref: await this.o.cri.pullImage(image, undefined, undefined) };
    const errs: string[] = [];
    for (const c of creds) {
      try {
        return { ref: await this.o.cri.pullImage(image, c.auth, undefined), used: c };
      } catch (e) {
        errs.push((e as Error).message);
      }
    }
    throw new Error(errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`);
  }

  /**
   * The keyring of the pod's imagePullSecrets (the kubelet's getPullSecretsForPod): those that
   * cannot be read are named in a FailedToRetrieveImagePullSecret warning and the pull goes on
   * without them. None in standalone mode, where no Secret can be read.
   */
  private async pullSecretsKeyring(pod: any): Promise<DockerKeyring | undefined> {
    const refs: any[] = Array.isArray(pod.spec?.imagePullSecrets) ? pod.spec.imagePullSecrets : [];
    const client = this.o.client;
    if (!client || refs.length === 0) return undefined;
    const secrets: any[] = [];
    const failed: string[] = [];
    for (const r of refs) {
      const name = typeof r?.name === 'string' ? r.name : '';
      if (!name) continue; // (validation lets an empty name through; the kubelet ignores it)
      try {
        const s = await getObject(client, 'secrets', pod.metadata.namespace, name);
        if (s) secrets.push(s);
        else failed.push(name);
      } catch (e) {
        this.o.log.info('Unable to retrieve pull secret, the image pull may not succeed.', { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, secret: name, err: (e as Error).message });
        failed.push(name);
      }
    }
    if (failed.length) void this.o.events.event(pod, 'Warning', 'FailedToRetrieveImagePullSecret', `Unable to retrieve some image pull secrets (${failed.join(', ')}); attempting to pull the image may not succeed.`);
    return keyringFromSecrets(secrets);
  }

  /** the image's reference, pulled when the policy says so; undefined when the container must wait */
  private async ensureImage(rec: PodRecord, c: any, fieldPath: string): Promise<string | undefined> {
    const pod = rec.pod;
    const image: string = c.image;
    const policy: string = c.imagePullPolicy || (/:latest$/.test(image) || !/:[^/]+$/.test(image.replace(/@.*$/, '')) ? 'Always' : 'IfNotPresent');
    const present = await this.o.cri.imageStatus(image).catch(() => undefined);
    const pm = this.o.pullManager;
    // (with KubeletEnsureSecretPulledImages, the pod's credentials as the kubelet finds them before
    // it decides: a present image may need them checked)
    let creds: TrackedAuth[] | undefined;
    if (pm && policy !== 'Always') creds = await trackedCredentialsFor(image, await this.pullSecretsKeyring(pod), this.o.nodeCredentials, pullingPod(pod)).catch(() => undefined);
    if (present && policy !== 'Always') {
      if (!pm) {
        void this.o.events.event(pod, 'Normal', 'Pulled', `Container image "${image}" already present on machine`, fieldPath);
        return present.id || image;
      }
      // the pod's pull Secrets that match the image, by coordinates and the hash of their credential
      const secrets = (creds ?? []).filter((c) => c.source).map((c) => ({ uid: c.source!.uid, namespace: c.source!.namespace, name: c.source!.name, credentialHash: c.hash }));
      if (!pm.mustAttemptImagePull(image, present.id ?? '', secrets)) {
        void this.o.events.event(pod, 'Normal', 'Pulled', `Container image "${image}" already present on machine and can be accessed by the pod`, fieldPath);
        return present.id || image;
      }
      // (not to be used with these credentials: Never fails as if it were not present, so as not
      // to tell that it is; IfNotPresent pulls with them)
    }
    if (policy === 'Never') {
      const msg = `Container image "${image}" is not present with pull policy of Never`;
      rec.waiting.set(c.name, { reason: 'ErrImageNeverPull', message: msg });
      void this.o.events.event(pod, 'Warning', 'ErrImageNeverPull', msg, fieldPath);
      this.enqueue(rec.uid, 10_000);
      return undefined;
    }
    // the intent before anything else of the pull; each end of it below ends the intent
    if (pm) {
      try {
        pm.recordPullIntent(image);
      } catch (e) {
        const msg = `Failed to record image pull intent for container image "${image}": ${(e as Error).message}`;
        rec.waiting.set(c.name, { reason: (e as Error).message, message: msg });
        void this.o.events.event(pod, 'Warning', 'Failed', `Error: ${(e as Error).message}`, fieldPath);
        this.enqueue(rec.uid, 10_000);
        return undefined;
      }
    }
    const b = rec.imageBackoff.get(image);
    if (b && Date.now() < b.until) {
      pm?.recordImagePullFailed(image);
      rec.waiting.set(c.name, { reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}"` });
      void this.o.events.event(pod, 'Normal', 'BackOff', `Back-off pulling image "${image}"`, fieldPath);
      this.enqueue(rec.uid, b.until - Date.now() + 50);
      return undefined;
    }
    void this.o.events.event(pod, 'Normal', 'Pulling', `Pulling image "${image}"`, fieldPath);
    const started = Date.now();
    try {
      let pulled: { ref: string; used?: TrackedAuth };
      try {
        const tracked = creds ?? (await trackedCredentialsFor(image, await this.pullSecretsKeyring(pod), this.o.nodeCredentials, pullingPod(pod)));
        pulled = await this.pulls.run(() => this.pullWith(image, tracked));
      } catch (e) {
        pm?.recordImagePullFailed(image);
        throw e;
      }
      const ref = pulled.ref;
      if (pm) {
        // who may use it from now on: the Secret whose credential pulled it, or every pod of the
        // node (anonymous, or the node's own credentials)
        const used: PullCredentials = pulled.used?.source
          ? { kubernetesSecrets: [{ uid: pulled.used.source.uid, namespace: pulled.used.source.namespace, name: pulled.used.source.name, credentialHash: pulled.used.hash }] }
          : { nodePodsAccessible: true };
        if (ref) pm.recordImagePulled(image, ref, used);
        else pm.recordImagePullFailed(image);
      }
      rec.imageBackoff.delete(image);
      void this.o.events.event(pod, 'Normal', 'Pulled', `Successfully pulled image "${image}" in ${((Date.now() - started) / 1000).toFixed(3)}s`, fieldPath);
      return ref || image;
    } catch (e) {
      const msg = `Failed to pull image "${image}": ${(e as Error).message}`;
      const delay = b ? Math.min(BACKOFF_MAX_MS, b.delayMs * 2) : BACKOFF_INITIAL_MS;
      rec.imageBackoff.set(image, { delayMs: delay, until: Date.now() + delay });
      rec.waiting.set(c.name, { reason: 'ErrImagePull', message: msg });
      void this.o.events.event(pod, 'Warning', 'Failed', msg, fieldPath);
      void this.o.events.event(pod, 'Warning', 'Failed', 'Error: ErrImagePull', fieldPath);
      this.enqueue(rec.uid, delay + 50);
      return undefined;
    }
  }

  /** runs the container's preStop hook, then stops it within the grace period */
  private async killContainer(rec: PodRecord, inst: RuntimeContainer, c: any | undefined, graceSeconds: number): Promise<void> {
    let grace = graceSeconds;
    const preStop = c?.lifecycle?.preStop ?? (inst.annotations[A_PRESTOP] ? JSON.parse(inst.annotations[A_PRESTOP]) : undefined);
    if (preStop && grace > 0) {
      const started = Date.now();
      const r = await Promise.race([
        runHandler(preStop, { podIP: rec.podIPs[0] ?? '', containerID: inst.id, execSync: (i, cm, t) => this.o.cri.execSync(i, cm, t), ports: portsOf(c ?? {}) }, grace, { hook: true }),
        sleep(grace * 1000).then(() => ({ ok: false, output: 'timeout' })),
      ]);
      // (the kubelet words it without the hook's error, so that no secret of its output leaks into an event)
      if (!r.ok && r.output !== 'timeout') void this.o.events.event(rec.pod, 'Warning', 'FailedPreStopHook', 'PreStopHook failed', `spec.containers{${inst.name}}`);
      grace = Math.max(2, grace - Math.ceil((Date.now() - started) / 1000));
    }
    await this.o.cri.stopContainer(inst.id, grace).catch((e) => {
      this.o.log.error(e, 'Container termination failed', { containerID: inst.id });
    });
  }

  /** stops the pod's running containers (a Killing event each, preStop hooks within the grace period), then its ready sandboxes */
  private async stopPod(rec: PodRecord, rp: RuntimePod, graceSeconds: number): Promise<void> {
    const spec = rec.pod.spec ?? {};
    const byName = new Map<string, any>([...(spec.initContainers ?? []), ...(spec.containers ?? [])].map((c: any) => [c.name, c]));
    const running = rp.containers.filter((c) => c.state === 'CONTAINER_RUNNING' || c.state === 'CONTAINER_CREATED');
    for (const inst of running) void this.o.events.event(rec.pod, 'Normal', 'Killing', `Stopping container ${inst.name}`, `spec.containers{${inst.name}}`);
    await Promise.all(running.map((inst) => this.killContainer(rec, inst, byName.get(inst.name), graceSeconds)));
    for (const s of rp.sandboxes) if (s.state === 'SANDBOX_READY') await this.o.cri.stopPodSandbox(s.id).catch(() => undefined);
  }

  /** the containers of a pod being stopped, stopped again within a shorter grace period */
  private async shortenKill(rec: PodRecord, graceSeconds: number): Promise<void> {
    this.o.log.v(2).info('Pod termination grace period shortened', { pod: podKey(rec.pod), gracePeriod: graceSeconds });
    const rp = await this.refresh(rec.uid).catch(() => undefined);
    for (const inst of rp?.containers ?? []) {
      if (inst.state !== 'CONTAINER_RUNNING' && inst.state !== 'CONTAINER_CREATED') continue;
      void this.o.cri.stopContainer(inst.id, graceSeconds).catch((e) => this.o.log.error(e, 'Container termination failed', { containerID: inst.id }));
    }
  }

  /** a deleted pod: containers stopped, sandbox stopped, status written, then the final delete and the clean-up */
  private async terminate(rec: PodRecord): Promise<void> {
    const pod = rec.pod;
    const orphan = (rec as any).orphan === true;
    let rp = await this.refresh(rec.uid);
    const grace = orphan ? 2 : this.gracePeriod(pod);
    rec.killGrace = grace;
    try {
      await this.stopPod(rec, rp, grace);
    } finally {
      rec.killGrace = undefined;
    }
    rp = await this.refresh(rec.uid);
    rec.terminated = true;
    if (rec.source !== 'api') await this.deleteMirror(rec, this.informer?.getByName(pod.metadata.namespace, pod.metadata.name));
    if (!orphan && !rec.deleted && !this.o.client) {
      // (standalone: the last status is kept until the pod is forgotten)
      await this.writeStatus(rec, rp);
      rec.deleted = true;
    } else if (!orphan && !rec.deleted && this.o.client) {
      await this.writeStatus(rec, rp);
      // the final delete: the pod's UID as precondition, grace 0 (the status manager's canBeDeleted, then Delete)
      try {
        await this.o.client.json({
          method: 'DELETE',
          path: `/api/v1/namespaces/${encodeURIComponent(pod.metadata.namespace)}/pods/${encodeURIComponent(pod.metadata.name)}`,
          body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0, preconditions: { uid: rec.uid } },
        });
        this.o.log.v(2).info('Pod fully terminated and removed from etcd', { pod: podKey(pod) });
      } catch (e) {
        if (!isNotFound(e) && !isConflict(e)) throw e;
      }
      rec.deleted = true;
    }
    // clean-up: containers, sandboxes, the pod's directories
    for (const c of rp.containers) await this.o.cri.removeContainer(c.id).catch(() => undefined);
    for (const s of rp.sandboxes) await this.o.cri.removePodSandbox(s.id).catch(() => undefined);
    await this.refresh(rec.uid);
    if (!orphan) {
      await this.o.volumes.tearDown(rec.uid).catch((e: unknown) => this.o.log.error(e, 'Failed to clean up the pod directory', { podUID: rec.uid }));
      this.o.sandboxRuntime?.release(rec.uid);
      try {
        rmSync(podLogDir(pod, this.o.podLogsDir), { recursive: true, force: true });
      } catch {
        /* logs of a pod already gone */
      }
    }
    this.o.probeMetrics?.forget(rec.uid);
    if (rec.timer) clearTimeout(rec.timer);
    if (rec.deadlineTimer) clearTimeout(rec.deadlineTimer);
    this.records.delete(rec.uid);
  }

  /** removes the exited instances of a container but its latest (the one `--previous` reads) and its current */
  private async removeDeadContainers(rp: RuntimePod): Promise<void> {
    const byName = new Map<string, RuntimeContainer[]>();
    for (const c of rp.containers) {
      const list = byName.get(c.name) ?? [];
      list.push(c);
      byName.set(c.name, list);
    }
    for (const list of byName.values()) {
      list.sort((a, b) => b.attempt - a.attempt || b.createdAt - a.createdAt);
      for (const c of list.slice(2)) if (c.state === 'CONTAINER_EXITED') await this.o.cri.removeContainer(c.id).catch(() => undefined);
    }
    const sandboxes = [...rp.sandboxes].sort((a, b) => b.createdAt - a.createdAt);
    for (const s of sandboxes.slice(1)) {
      if (s.state !== 'SANDBOX_READY' && !rp.containers.some((c) => c.sandboxId === s.id)) await this.o.cri.removePodSandbox(s.id).catch(() => undefined);
    }
  }

  // ── probes ────────────────────────────────────────────────────────────────

  private ensureProbes(rec: PodRecord, c: any, inst: RuntimeContainer): void {
    if (rec.probeInstance.get(c.name) === inst.id) return;
    rec.probeInstance.set(c.name, inst.id);
    const started = Date.now();
    for (const [kind, probe] of [['startup', c.startupProbe], ['liveness', c.livenessProbe], ['readiness', c.readinessProbe]] as [ProbeKind, any][]) {
      const key = `${c.name}/${kind}`;
      if (probe) rec.probes.set(key, new ProbeState(kind, probe, started));
      else rec.probes.delete(key);
    }
  }

  private runProbes(): void {
    const now = Date.now();
    for (const rec of this.records.values()) {
      if (rec.terminated || rec.deleted) continue;
      for (const [key, p] of rec.probes) {
        if (!p.due(now)) continue;
        const name = key.slice(0, key.lastIndexOf('/'));
        const startup = rec.probes.get(`${name}/startup`);
        if (p.kind !== 'startup' && startup && !startup.result) continue;
        if (p.kind === 'startup' && p.result) continue;
        const id = rec.probeInstance.get(name);
        const c = (rec.pod.spec?.containers ?? []).find((x: any) => x.name === name);
        if (!id || !c) continue;
        p.running = true;
        const started = performance.now();
        void runHandler(p.probe, { podIP: rec.podIPs[0] ?? '', containerID: id, execSync: (i, cm, t) => this.o.cri.execSync(i, cm, t), ports: portsOf(c) }, p.probe.timeoutSeconds ?? 1).then((r) => {
          p.running = false;
          this.o.probeMetrics?.observe(rec.pod, name, p.kind, r.ok, (performance.now() - started) / 1000);
          const turned = p.record(r.ok, r.output, Date.now());
          if (!r.ok) {
            const what = p.kind === 'liveness' ? 'Liveness' : p.kind === 'readiness' ? 'Readiness' : 'Startup';
            // (an exec the runtime could not run is the prober's Unknown result, an error)
            const msg = r.errored ? `${what} probe errored and resulted in unknown state: ${r.error}` : `${what} probe failed: ${r.output}`;
            void this.o.events.event(rec.pod, 'Warning', 'Unhealthy', msg, `spec.containers{${name}}`);
          }
          if (turned || (p.kind === 'startup' && !r.ok && p.failureCount >= (p.probe.failureThreshold ?? 3))) this.enqueue(rec.uid);
        });
      }
    }
  }

  // ── status ────────────────────────────────────────────────────────────────

  private async containerStatuses(rec: PodRecord, rp: RuntimePod, containers: any[], init: boolean): Promise<any[]> {
    const out: any[] = [];
    const currentSandbox = [...rp.sandboxes].sort((a, b) => b.createdAt - a.createdAt)[0];
    for (const c of containers) {
      const instances = rp.containers.filter((x) => x.name === c.name).sort((a, b) => b.attempt - a.attempt || b.createdAt - a.createdAt);
      const [cur, prev] = instances;
      const s: any = { name: c.name, state: {}, lastState: {}, ready: false, restartCount: 0, image: c.image, imageID: '' };
      const waiting = rec.waiting.get(c.name);
      const terminatedOf = async (inst: RuntimeContainer) => {
        const st = (await this.o.cri.containerStatus(inst.id).catch(() => undefined))?.status;
        if (!st) return { exitCode: 0, reason: 'Unknown', containerID: `${this.o.runtimeName}://${inst.id}` };
        const t: any = {
          exitCode: st.exitCode,
          reason: st.reason && st.reason !== 'Completed' && st.reason !== 'Error' ? st.reason : st.exitCode === 0 ? 'Completed' : 'Error',
          startedAt: isoOf(st.startedAt ?? 0) ?? null,
          finishedAt: isoOf(st.finishedAt ?? 0) ?? null,
          containerID: `${this.o.runtimeName}://${inst.id}`,
        };
        if (st.message) t.message = st.message;
        return t;
      };
      if (cur) {
        s.restartCount = cur.attempt;
        s.containerID = `${this.o.runtimeName}://${cur.id}`;
        const st = (await this.o.cri.containerStatus(cur.id).catch(() => undefined))?.status;
        s.imageID = st?.imageRef ?? cur.imageRef ?? '';
        if (st?.image?.image) s.image = c.image;
        if (cur.state === 'CONTAINER_RUNNING') {
          s.state = { running: { startedAt: isoOf(st?.startedAt ?? 0) ?? nowISO() } };
          if (this.o.inPlaceResize && (!init || c.restartPolicy === 'Always')) s.resources = this.statusResources(rec, c, cur.id);
          const startup = rec.probes.get(`${c.name}/startup`);
          const readiness = rec.probes.get(`${c.name}/readiness`);
          // (a container with a probe whose worker is not set up yet has not passed it: the kubelet's
          // prober manager reports such a container not started and not ready)
          s.started = c.startupProbe ? startup?.result === true : true;
          s.ready = s.started && (c.readinessProbe ? readiness?.result === true : true) && (!currentSandbox || cur.sandboxId === currentSandbox.id);
          if (init && c.restartPolicy !== 'Always') s.ready = false;
        } else if (cur.state === 'CONTAINER_EXITED' || cur.state === 'CONTAINER_UNKNOWN') {
          const t = await terminatedOf(cur);
          if (waiting && waiting.reason === 'CrashLoopBackOff' && !rec.terminated) {
            s.state = { waiting: { reason: waiting.reason, message: waiting.message } };
            s.lastState = { terminated: t };
          } else {
            s.state = { terminated: t };
            if (prev) s.lastState = { terminated: await terminatedOf(prev) };
          }
          s.started = false;
          if (init && t.exitCode === 0) s.ready = true;
        } else {
          s.state = { waiting: { reason: 'ContainerCreating' } };
          s.started = false;
        }
        if (prev && !s.lastState.terminated) s.lastState = { terminated: await terminatedOf(prev) };
      } else {
        s.state = { waiting: waiting ? { reason: waiting.reason, ...(waiting.message ? { message: waiting.message } : {}) } : { reason: init ? 'PodInitializing' : rec.pod.spec?.initContainers?.length ? 'PodInitializing' : 'ContainerCreating' } };
        if (init && !waiting) s.state = { waiting: { reason: 'PodInitializing' } };
        s.started = false;
      }
      if (waiting && cur && cur.state !== 'CONTAINER_RUNNING' && waiting.reason !== 'CrashLoopBackOff' && !rec.terminated) {
        if (s.state.terminated) s.lastState = { terminated: s.state.terminated };
        s.state = { waiting: { reason: waiting.reason, ...(waiting.message ? { message: waiting.message } : {}) } };
      }
      // (a read-only mount's recursive read-only mode as resolved, Enabled or Disabled, as the kubelet reports it)
      const rro = this.o.sandboxRuntime?.recursiveReadOnlySupportedNow(rec.pod) ?? false;
      s.volumeMounts = (c.volumeMounts ?? []).map((m: any) => {
        let mode: string | undefined;
        if (m.readOnly) {
          try {
            mode = resolveRecursiveReadOnly(m, rro) ? 'Enabled' : 'Disabled';
          } catch {
            mode = 'Disabled';
          }
        }
        return { name: m.name, mountPath: m.mountPath, ...(m.readOnly ? { readOnly: true } : {}), ...(mode ? { recursiveReadOnly: mode } : {}) };
      });
      if (!s.volumeMounts.length) delete s.volumeMounts;
      if (!Object.keys(s.lastState).length) s.lastState = {};
      out.push(s);
    }
    return out;
  }

  /**
   * A running container's status.resources (InPlacePodVerticalScaling): the requests admitted for
   * it, its limits with the CPU and memory it has now
   */
  private statusResources(rec: PodRecord, c: any, id: string): any {
    const admitted = rec.allocated?.get(c.name) ?? c.resources ?? {};
    const act = rec.actuated?.get(c.name);
    const now = act && act.id === id ? act.resources : admitted;
    const out: any = {};
    if (admitted.requests && Object.keys(admitted.requests).length) out.requests = { ...admitted.requests };
    const limits: Record<string, unknown> = { ...(admitted.limits ?? {}) };
    for (const r of ['cpu', 'memory']) {
      if (now.limits?.[r] !== undefined) limits[r] = now.limits[r];
      else delete limits[r];
    }
    if (Object.keys(limits).length) out.limits = limits;
    return out;
  }

  /** the pod's status from the runtime (generateAPIPodStatus and getPhase) */
  async podStatus(rec: PodRecord, rp: RuntimePod): Promise<any> {
    const pod = rec.pod;
    const spec = pod.spec ?? {};
    const policy: string = spec.restartPolicy || 'Always';
    const initStatuses = await this.containerStatuses(rec, rp, spec.initContainers ?? [], true);
    const statuses = await this.containerStatuses(rec, rp, spec.containers ?? [], false);
    const ephemeral: any[] = Array.isArray(spec.ephemeralContainers) ? spec.ephemeralContainers : [];
    // (as regular containers' statuses, but never ready, and neither probed nor `started`: the
    // kubelet's prober does not see them)
    const ephemeralStatuses = ephemeral.length ? (await this.containerStatuses(rec, rp, ephemeral, false)).map((x) => (delete x.started, delete x.resources, { ...x, ready: false })) : [];
    const prior = pod.status ?? {};

    // the phase
    let phase = 'Pending';
    const initFailed = initStatuses.some((s, i) => spec.initContainers[i].restartPolicy !== 'Always' && s.state.terminated && s.state.terminated.exitCode !== 0 && policy === 'Never');
    const initPending = initStatuses.some((s, i) => (spec.initContainers[i].restartPolicy === 'Always' ? !s.started : !(s.state.terminated && s.state.terminated.exitCode === 0)));
    if (initFailed) phase = 'Failed';
    else if (initPending) phase = 'Pending';
    else {
      let running = 0;
      let waiting = 0;
      let stopped = 0;
      let succeeded = 0;
      for (const s of statuses) {
        if (s.state.running) running++;
        else if (s.state.terminated) {
          stopped++;
          if (s.state.terminated.exitCode === 0) succeeded++;
        } else if (s.state.waiting) {
          if (s.lastState.terminated) stopped++;
          else waiting++;
        }
      }
      if (waiting > 0) phase = 'Pending';
      else if (running > 0) phase = 'Running';
      else if (stopped > 0) {
        if (policy === 'Always') phase = 'Running';
        else if (stopped === succeeded) phase = 'Succeeded';
        else if (policy === 'Never') phase = 'Failed';
        else phase = 'Running';
      }
      (rec as any).allSucceeded = statuses.length > 0 && statuses.every((s) => s.state.terminated && s.state.terminated.exitCode === 0);
    }
    // a pod that ended stays ended (the kubelet never moves a pod out of a terminal phase)
    if (prior.phase === 'Succeeded' || prior.phase === 'Failed') phase = prior.phase;
    // a pod the kubelet ended itself, whatever its containers' exit codes
    if (rec.failure && phase !== 'Succeeded') phase = 'Failed';
    if (rec.terminated && phase !== 'Succeeded' && phase !== 'Failed' && (pod.metadata.deletionTimestamp || rec.deleted)) {
      // a deleted pod's containers were stopped: by the restartPolicy it ended
      phase = policy === 'Always' ? 'Failed' : statuses.every((s) => s.state.terminated?.exitCode === 0) ? 'Succeeded' : 'Failed';
    }
    if (phase === 'Succeeded' || phase === 'Failed') {
      for (const s of statuses) {
        s.ready = false;
        if (s.state.waiting) s.state = { terminated: { exitCode: 137, reason: 'ContainerStatusUnknown', message: 'The container could not be located when the pod was terminated', startedAt: null, finishedAt: null } };
      }
    }

    // conditions
    const now = nowISO();
    const sandboxReady = rp.sandboxes.some((s) => s.state === 'SANDBOX_READY') && phase !== 'Succeeded' && phase !== 'Failed';
    const initialized = !initPending && !initFailed;
    const containersReady = statuses.length > 0 && statuses.every((s) => s.ready) && phase === 'Running';
    const gates: any[] = spec.readinessGates ?? [];
    const gatesOK = gates.every((g) => (prior.conditions ?? []).some((c: any) => c.type === g.conditionType && c.status === 'True'));
    const ready = containersReady && gatesOK;
    const cond = (type: string, ok: boolean, reason?: string, message?: string) => {
      const old = (prior.conditions ?? []).find((c: any) => c.type === type);
      const status = ok ? 'True' : 'False';
      const c: any = { type, status, lastProbeTime: null, lastTransitionTime: old && old.status === status ? old.lastTransitionTime : now };
      if (!ok && reason) c.reason = reason;
      if (!ok && message) c.message = message;
      return c;
    };
    const notReady = statuses.filter((s) => !s.ready).map((s) => s.name);
    const notReadyMsg = notReady.length ? `containers with unready status: [${notReady.join(' ')}]` : undefined;
    const initNotDone = initStatuses.filter((s) => !(s.state.terminated?.exitCode === 0 || s.started)).map((s) => s.name);
    const conditions = [
      cond('PodReadyToStartContainers', sandboxReady),
      cond('Initialized', initialized, 'ContainersNotInitialized', initNotDone.length ? `containers with incomplete status: [${initNotDone.join(' ')}]` : undefined),
      cond('Ready', ready, phase === 'Succeeded' ? 'PodCompleted' : 'ContainersNotReady', phase === 'Succeeded' ? undefined : containersReady && !gatesOK ? 'the status of pod readiness gate is not "True"' : notReadyMsg),
      cond('ContainersReady', containersReady, phase === 'Succeeded' ? 'PodCompleted' : 'ContainersNotReady', phase === 'Succeeded' ? undefined : notReadyMsg),
      cond('PodScheduled', true),
    ];
    if (phase === 'Succeeded') {
      for (const c of conditions) if (c.type === 'Ready' || c.type === 'ContainersReady') delete c.message;
    }
    if (!initialized && phase === 'Succeeded') conditions[1] = cond('Initialized', true);
    // an in-place resize not admitted, or admitted and not yet applied to every running container
    if (this.o.inPlaceResize && phase !== 'Succeeded' && phase !== 'Failed') {
      const kept = (type: string) => (prior.conditions ?? []).find((x: any) => x.type === type);
      if (rec.resizePending) {
        const old = kept('PodResizePending');
        const same = old && old.reason === rec.resizePending.reason && old.message === rec.resizePending.message;
        conditions.push({ type: 'PodResizePending', status: 'True', lastProbeTime: same ? old.lastProbeTime : now, lastTransitionTime: old ? old.lastTransitionTime : now, reason: rec.resizePending.reason, message: rec.resizePending.message });
      }
      const running = new Map<string, string>(statuses.filter((x) => x.state.running).map((x) => [x.name, String(x.containerID ?? '').split('://')[1] ?? '']));
      const behind = resizableContainers(pod).some((c) => {
        const id = running.get(c.name);
        const act = rec.actuated?.get(c.name);
        return id !== undefined && act?.id === id && resizedResources(act.resources, rec.allocated?.get(c.name) ?? c.resources).length > 0;
      });
      if (behind || rec.resizeError) {
        const old = kept('PodResizeInProgress');
        const c: any = { type: 'PodResizeInProgress', status: 'True', lastProbeTime: null, lastTransitionTime: old ? old.lastTransitionTime : now };
        if (rec.resizeError) Object.assign(c, { reason: 'Error', message: rec.resizeError });
        conditions.push(c);
      }
    }
    const status: any = {
      phase,
      conditions,
      hostIP: this.o.nodeIPs[0],
      hostIPs: this.o.nodeIPs.map((ip) => ({ ip })),
      startTime: prior.startTime ?? new Date(rec.firstSeen).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      containerStatuses: statuses,
      qosClass: prior.qosClass ?? qosClass(pod),
    };
    if (rec.podIPs.length && phase !== 'Succeeded' && phase !== 'Failed') {
      status.podIP = rec.podIPs[0];
      status.podIPs = rec.podIPs.map((ip) => ({ ip }));
    } else if (prior.podIP) {
      status.podIP = prior.podIP;
      status.podIPs = prior.podIPs;
    }
    if (initStatuses.length) status.initContainerStatuses = initStatuses;
    if (ephemeralStatuses.length) status.ephemeralContainerStatuses = ephemeralStatuses;
    // why the kubelet ended it (kept from the prior status once written)
    const failure = rec.failure ?? (phase === 'Failed' && typeof prior.reason === 'string' ? { reason: prior.reason, message: prior.message } : undefined);
    if (phase === 'Failed' && failure) {
      status.reason = failure.reason;
      if (failure.message) status.message = failure.message;
    }
    // (an eviction: the condition the API's evictions and the taint manager set too)
    if (rec.failure?.disruptionTarget) conditions.push({ type: 'DisruptionTarget', status: 'True', lastProbeTime: null, lastTransitionTime: rec.failure.at, reason: 'TerminationByKubelet', message: rec.failure.message });
    // (termination messages: the file the container wrote, or its log's tail by FallbackToLogsOnError)
    for (const [i, s] of statuses.entries()) {
      const t = s.state.terminated;
      if (!t || t.message) continue;
      const c = spec.containers[i];
      const id = (t.containerID as string | undefined)?.split('://')[1];
      const inst = rp.containers.find((x) => x.id === id);
      if (inst?.annotations[A_TERMINATION_PATH]) {
        const msg = await this.terminationMessage(rec, c, inst, t.exitCode);
        if (msg) t.message = msg;
      }
    }
    return status;
  }

  private async terminationMessage(rec: PodRecord, c: any, inst: RuntimeContainer, exitCode: number): Promise<string | undefined> {
    const st = (await this.o.cri.containerStatus(inst.id).catch(() => undefined))?.status;
    if (st?.message) return st.message;
    if (c.terminationMessagePolicy === 'FallbackToLogsOnError' && exitCode !== 0) {
      try {
        const { readFileSync } = await import('node:fs');
        const text = readFileSync(`${podLogDir(rec.pod, this.o.podLogsDir)}/${c.name}/${inst.attempt}.log`, 'utf8');
        const lines = text.split('\n').filter(Boolean).slice(-80).map((l) => l.replace(/^\S+ (stdout|stderr) [PF] ?/, ''));
        const out = lines.join('\n');
        return out.length > 2048 ? out.slice(-2048) : out;
      } catch {
        return undefined;
      }
    }
    return undefined;
  }

  /**
   * keeps the mirror pod of a static pod in the API server (kubelet.go syncPod's mirror handling):
   * made when missing; one that is being deleted, or is of another version of the manifest, is
   * deleted for good and made again
   */
  private async ensureMirror(rec: PodRecord): Promise<void> {
    const pod = rec.pod;
    const hash = pod.metadata.annotations?.[CONFIG_HASH];
    if (!this.informer || !this.o.client) return;
    const mirror = this.informer.getByName(pod.metadata.namespace, pod.metadata.name);
    if (mirror && !mirror.metadata.deletionTimestamp && mirror.metadata.annotations?.[CONFIG_MIRROR] === hash) return;
    if (mirror) await this.deleteMirror(rec, mirror);
    const nodeUID = this.o.nodeUID();
    const body = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: pod.metadata.name,
        namespace: pod.metadata.namespace,
        labels: pod.metadata.labels,
        annotations: { ...pod.metadata.annotations, [CONFIG_MIRROR]: hash },
        ...(nodeUID ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.o.nodeName, uid: nodeUID, controller: true }] } : {}),
      },
      spec: pod.spec,
    };
    try {
      await this.o.client.json({ method: 'POST', path: `/api/v1/namespaces/${encodeURIComponent(pod.metadata.namespace)}/pods`, body });
      this.o.log.v(2).info('Created mirror pod', { pod: podKey(pod) });
      rec.lastStatus = '';
    } catch (e) {
      if (!isAlreadyExists(e)) this.o.log.error(e, 'Failed creating a mirror pod', { pod: podKey(pod) });
    }
  }

  private async deleteMirror(rec: PodRecord, mirror: any): Promise<void> {
    if (!mirror || !this.o.client) return;
    try {
      await this.o.client.json({
        method: 'DELETE',
        path: `/api/v1/namespaces/${encodeURIComponent(mirror.metadata.namespace)}/pods/${encodeURIComponent(mirror.metadata.name)}`,
        body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0, preconditions: { uid: mirror.metadata.uid } },
      });
      this.o.log.v(2).info('Deleted mirror pod', { pod: podKey(rec.pod) });
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  }

  private async writeStatus(rec: PodRecord, rp: RuntimePod): Promise<void> {
    if (rec.deleted || (rec as any).orphan) return;
    const status = await this.podStatus(rec, rp);
    const text = JSON.stringify(status);
    if (text === rec.lastStatus) return;
    const pod = rec.pod;
    if (!this.o.client) {
      // standalone mode: the status stays with the kubelet (its /pods serves it)
      rec.lastStatus = text;
      rec.pod = { ...rec.pod, status };
      this.o.log.v(3).info('Status for pod updated successfully', { pod: podKey(pod), phase: status.phase });
      if (status.phase === 'Succeeded' || status.phase === 'Failed') rec.terminated = true;
      return;
    }
    // (a static pod's status is written to its mirror pod, whose UID is the API server's)
    const uid = rec.source === 'api' ? rec.uid : this.informer?.getByName(pod.metadata.namespace, pod.metadata.name)?.metadata.uid;
    if (!uid) return;
    // (conditions merge by type in a strategic merge patch: the resize conditions the kubelet set
    // and no longer has are deleted by name; the others' are theirs)
    const gone = (pod.status?.conditions ?? []).filter((c: any) => RESIZE_CONDITIONS.has(c.type) && !status.conditions.some((n: any) => n.type === c.type));
    const patchStatus = gone.length ? { ...status, conditions: [...status.conditions, ...gone.map((c: any) => ({ type: c.type, $patch: 'delete' }))] } : status;
    try {
      const updated = await this.o.client.json({
        method: 'PATCH',
        path: `/api/v1/namespaces/${encodeURIComponent(pod.metadata.namespace)}/pods/${encodeURIComponent(pod.metadata.name)}/status`,
        body: { metadata: { uid }, status: patchStatus },
        contentType: 'application/strategic-merge-patch+json',
      });
      rec.lastStatus = text;
      if (updated?.metadata?.uid === rec.uid) rec.pod = updated;
      else if (rec.source !== 'api') rec.pod = { ...rec.pod, status: updated?.status ?? status };
      this.o.log.v(3).info('Status for pod updated successfully', { pod: podKey(pod), phase: status.phase });
    } catch (e) {
      if (isNotFound(e) || isConflict(e)) return;
      throw e;
    }
    if (status.phase === 'Succeeded' || status.phase === 'Failed') rec.terminated = true;
  }
}

function portsOf(c: any): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of c.ports ?? []) if (p.name) out[p.name] = p.containerPort;
  return out;
}

/** a back-off as Go prints a duration of whole seconds: 10s, 20s, 1m20s, 5m0s */
function goSeconds(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${s % 60}s`;
}
