// The scheduler (kube-scheduler): binds each pending pod to a node, one pod at a time, through the
// API server like any other client (it never imports apiserver/ or storage/).
//
// What it watches, and why no more. `keelson server` runs this scheduler in the API server's own
// process, next to clusters that hold many pods already bound (the benchmark: 10,000 Pods on 50
// Nodes). Kubernetes' scheduler keeps an informer over every pod; here that would decode every pod
// write a second time and keep a second copy of every bound pod (about +120 MiB of heap for the
// benchmark, the cost that had a pod GC of this kind rejected). So it watches only
//   - the pods waiting for it: field selector `spec.nodeName=,status.phase!=Succeeded,
//     status.phase!=Failed` (and `spec.schedulerName=<name>` when it has one profile), which the
//     API server applies, so that a pod leaves the watch (a DELETED event) once it is bound;
//   - the Nodes (small, few);
//   - the PersistentVolumeClaims, PersistentVolumes and StorageClasses (VolumeBinding's listers,
//     volumebinding.ts; a claim, volume or class added or changed retries the pods it refused).
// The pods already on a node matter only for the filters and scores that count them
// (NodeResourcesFit, NodePorts, the resource scores, PodTopologySpread and InterPodAffinity, the
// last two over every node). Those are read when a decision needs them: one list of the bound pods
// (`spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed`) and one of the Namespaces (for
// namespaceSelectors), and for the default spreading the Services of the pod's namespace and its
// controller, kept for one scheduling pass (the pods taken from the queue one after the other until
// none came for 1 s; at most 10 s) as a summary per pod (requests, host ports, priority, labels,
// pod (anti-)affinity terms: no pod objects), and updated by the pass's own bindings. A pod whose
// nodeSelector no node matches costs no list at all, and a scheduler with nothing pending costs
// nothing but its two idle watches.
//
// What Kubernetes learns from its informer over the bound pods, that one of them came, went or
// changed its labels (AssignedPodAdd, AssignedPodDelete, AssignedPodUpdate: the events that retry a
// pod that did not fit for lack of room, for an anti-affinity, a spread or a missing affinity), this
// scheduler learns from a metadata-only watch of the bound pods that it keeps open only while some
// pod waits for such an event (assigned.ts). Pods bound by someone else during a pass are seen at
// the next pass, or at once while that watch runs (the pass is then stale).
//
// Scheduling one pod (schedule_one.go): the PreFilters of NodeAffinity (matchFields metadata.name)
// and VolumeBinding (the claims; the nodes of bound local volumes),
// the filters of framework.ts over the nodes starting where the last pod's search stopped, until
// enough feasible nodes are found (percentageOfNodesToScore; every node below 100 nodes); the
// scores, the best node (ties at random); then a Binding
// (POST pods/<name>/binding) and a Normal event `Scheduled`: `Successfully assigned <ns>/<pod> to
// <node>`. A pod with WaitForFirstConsumer claims to bind first has VolumeBinding's PreBind (the
// PV's claimRef, or the claim's selected-node annotation, then a wait of up to bindTimeoutSeconds
// for the PV controller to bind them) and its binding run beside the loop, the pod counted on its
// node meanwhile; a failure there is a FailedScheduling SchedulerError and a back-off.
// When no node fits: a Warning event `FailedScheduling` and the pod's condition
// PodScheduled=False, reason Unschedulable, both with Kubernetes' message (`0/3 nodes are
// available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector. preemption:
// 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not
// helpful for scheduling.`), and the pod waits in the queue (queue.ts) for a Node event, its own
// update, its backoff or the periodic retries. Before that, DefaultPreemption (preemption.ts): a
// pod that would fit once pods of lower priority are gone has them deleted (condition
// DisruptionTarget, reason PreemptionByScheduler; a `Preempted` event) and the node nominated in
// its status.nominatedNodeName; it is tried again when a bound pod goes away (its victims, seen
// through assigned.ts's watch; at the latest after 30 s), and waits while its nominated node still
// holds a victim being deleted. Meanwhile other pods of no higher priority must fit on that node
// beside it (its room is kept), and pods of lower priority already nominated there lose their
// nomination (they look elsewhere).
//
// Pods with spec.schedulingGates are left alone until the gates go; one without a PodScheduled
// condition gets PodScheduled=False, reason SchedulingGated (which kube-apiserver sets on create).
// Nodes are not filtered on their Ready condition, as in Kubernetes: the node lifecycle controller
// taints a node that is not ready (node.kubernetes.io/not-ready:NoSchedule), and the taint keeps
// pods off it.
//
// Leadership: with leader election (the Lease kube-system/kube-scheduler by default) the informers
// and the loop run only while this scheduler leads; `keelson scheduler` exits when it loses the
// Lease, the embedded one campaigns again.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { EventRecorder } from '../client/events.js';
import { DeletedFinalStateUnknown, Informer } from '../client/informer.js';
import { runCampaign, type LeaderElector } from '../client/leaderelection.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isConflict, isNotFound, RESTClient, type RESTConfig } from '../client/rest.js';
import { ResourceClient, splitKey } from '../client/resources.js';
import { userAgent as componentUserAgent } from '../cli/version.js';
import { DEFAULT_SCHEDULER_NAME, defaultProfile, type Profile } from './config.js';
import {
  addPod,
  ERR_AFFINITY_CONFLICT,
  ERR_NO_NODES,
  fitErrorMessage,
  imageStates,
  newNodeInfo,
  newPodInfo,
  nodeAffinityPreFilter,
  numFeasibleNodesToFind,
  POD_DEPENDENT_FILTERS,
  PREEMPTION_NOT_HELPFUL,
  runNodeFilters,
  runPodFilters,
  scoreNodes,
  selectHost,
  summarizePod,
  type ClusterFilters,
  type NodeInfo,
  type PodInfo,
  type PodSummary,
  type Status,
} from './framework.js';
import { SchedulingQueue, isGated, NO_POD_EVENTS, type PodEvents, type QueueCounts, type QueuedPod } from './queue.js';
import { AssignedPodWatch } from './assigned.js';
import {
  ClusterPods,
  defaultSelector,
  defaultSpreadConstraints,
  filterInterPodAffinity,
  filterPodTopologySpread,
  interPodPreFilter,
  interPodPreScore,
  placedPod,
  scoreInterPodAffinity,
  scorePodTopologySpread,
  spreadConstraints,
  spreadPreFilter,
  type PlacedPod,
  type PodsView,
} from './interpod.js';
import { findPreemption, type Candidate } from './preemption.js';
import { sleep } from '../client/flowcontrol.js';
import {
  ANN_BOUND_BY_CONTROLLER,
  ANN_SELECTED_NODE,
  DEFAULT_BIND_TIMEOUT_SECONDS,
  claimFullyBound,
  pvMatchesNode,
  volumeBindingFilter,
  volumeBindingPreFilter,
  type PodVolumes,
  type VolumeListers,
  type VolumeState,
} from './volumebinding.js';
import { claimReference, isVolumeBoundToClaim } from '../schema/pvmatch.js';

export { DEFAULT_SCHEDULER_NAME } from './config.js';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const NODES = { group: '', version: 'v1', resource: 'nodes' };
const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };
const SERVICES = { group: '', version: 'v1', resource: 'services' };
const PDBS = { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets' };
const PVCS = { group: '', version: 'v1', resource: 'persistentvolumeclaims' };
const PVS = { group: '', version: 'v1', resource: 'persistentvolumes' };
const STORAGE_CLASSES = { group: 'storage.k8s.io', version: 'v1', resource: 'storageclasses' };
/** the controllers whose selector DefaultSelector reads, by apiVersion/kind */
const SPREAD_CONTROLLERS: Record<string, { group: string; version: string; resource: string }> = {
  'v1/ReplicationController': { group: '', version: 'v1', resource: 'replicationcontrollers' },
  'apps/v1/ReplicaSet': { group: 'apps', version: 'v1', resource: 'replicasets' },
  'apps/v1/StatefulSet': { group: 'apps', version: 'v1', resource: 'statefulsets' },
};
/** the pods that occupy a node: not terminated */
const NOT_TERMINATED = 'status.phase!=Succeeded,status.phase!=Failed';
/** a pass's node summaries are listed again after this long */
const PASS_MAX_AGE_MS = 10_000;
/** a pass ends when no pod came for this long */
const PASS_LINGER_MS = 1_000;
/** truncateMessage: an event's message is at most 1024 characters */
const MAX_EVENT_MESSAGE = 1024;
const SCHEDULING_GATED_MESSAGE = 'Scheduling is blocked due to non-empty scheduling gates';

export interface SchedulerLeaderElection {
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** the Lease (default kube-system/kube-scheduler) */
  resourceNamespace?: string;
  resourceName?: string;
  /** default `<hostname>_<uuid>` */
  identity?: string;
}

export interface SchedulerOptions {
  /** where and how to reach the API server */
  rest: RESTConfig;
  /** observations for the histograms of /metrics (keelson scheduler's; the embedded scheduler has none) */
  observe?: {
    /** scheduler_scheduling_attempt_duration_seconds: one attempt, from taking the pod to its binding or failure */
    attempt(result: 'scheduled' | 'unschedulable' | 'error', profile: string, seconds: number): void;
    /** scheduler_preemption_attempts_total and scheduler_preemption_victims: a preemption tried, and the victims it chose (undefined: none) */
    preemption(victims: number | undefined): void;
  };
  /** the User-Agent (`kube-scheduler/v1.33.0+keelson... (linux/amd64) kubernetes/...`) */
  userAgent: string;
  /** the one scheduler name served (default `default-scheduler`); ignored when `profiles` is given */
  schedulerName?: string;
  /** one profile per scheduler name (KubeSchedulerConfiguration's profiles) */
  profiles?: Profile[];
  log?: Logger;
  /** leader election on the Lease (default: on, with kube-scheduler's durations); false: off */
  leaderElect?: SchedulerLeaderElection | false;
  /** percentageOfNodesToScore (0 or undefined: adaptive) */
  percentageOfNodesToScore?: number;
  /** podInitialBackoffSeconds (1 s) and podMaxBackoffSeconds (10 s) */
  podInitialBackoffMs?: number;
  podMaxBackoffMs?: number;
  /** --pod-max-in-unschedulable-pods-duration (5 min) */
  podMaxInUnschedulablePodsDurationMs?: number;
  /** how long a pod that lacked room waits before it is tried again (30 s; see queue.ts) */
  unschedulableRecheckMs?: number;
  /** the client's rate limit (kube-scheduler: 50 QPS, burst 100) */
  qps?: number;
  burst?: number;
  /**
   * called when leadership is lost (once the loop stopped): `keelson scheduler` exits then;
   * without it the scheduler campaigns again
   */
  onLostLeadership?: () => void;
  /** ties between the best nodes are broken with this (tests) */
  random?: () => number;
}

/** the counters /metrics shows */
export interface SchedulerMetrics {
  pendingPods: QueueCounts;
  /** scheduler_schedule_attempts_total by result (scheduled, unschedulable, error) and profile */
  attempts: { result: string; profile: string; count: number }[];
  leader: boolean;
}

/**
 * the bound-pod events that may resolve a failure, by the plugins that refused (their
 * EventsToRegister): a pod gone frees room and ports (NodeResourcesFit, NodePorts) and may end an
 * anti-affinity or a skew; a pod added may satisfy an affinity or even a skew (InterPodAffinity,
 * PodTopologySpread)
 */
function podEventsOf(statuses: Iterable<Status>): PodEvents {
  let added = false;
  let removed = false;
  let volumes = false;
  for (const s of statuses) {
    if (s.plugin === 'InterPodAffinity' || s.plugin === 'PodTopologySpread') added = removed = true;
    else if (s.plugin === 'NodeResourcesFit' || s.plugin === 'NodePorts') removed = true;
    else if (s.plugin === 'VolumeBinding') volumes = true;
  }
  return added || removed || volumes ? { added, removed, ...(volumes ? { volumes } : {}) } : NO_POD_EVENTS;
}

/** VolumeBinding's events: claims, volumes and classes added or changed */
const VOLUME_EVENTS: PodEvents = Object.freeze({ added: false, removed: false, volumes: true });

/** Go's %v of a []string */
const goList = (items: readonly string[]) => `[${items.join(' ')}]`;

/** CompareResourceVersion: whether `a` is newer than `b` (unparsable: not) */
function newerVersion(a: unknown, b: unknown): boolean {
  try {
    return BigInt(String(a ?? '')) > BigInt(String(b ?? ''));
  } catch {
    return false;
  }
}

const VICTIMS_GONE: PodEvents = Object.freeze({ added: false, removed: true });

/** one scheduling pass's view of the pods on nodes (summaries, not pods) */
class PassCache {
  readonly started = Date.now();
  private listing?: Promise<{ cluster: ClusterPods; summaries: Map<string, PodSummary[]> }>;
  /** the resourceVersion of the list of bound pods, once listed */
  listedVersion?: string;
  private readonly services = new Map<string, Promise<any[]>>();
  private readonly controllers = new Map<string, Promise<any | undefined>>();
  private budgets?: Promise<any[]>;

  constructor(
    private readonly client: RESTClient,
    private readonly signal: AbortSignal,
  ) {}

  /** the bound pods of every node (one list, on first use) and the namespaces */
  private load(): Promise<{ cluster: ClusterPods; summaries: Map<string, PodSummary[]> }> {
    if (!this.listing) {
      const listing = Promise.all([
        new ResourceClient<any>(this.client, PODS).listAll({ fieldSelector: `spec.nodeName!=,${NOT_TERMINATED}`, signal: this.signal }),
        new ResourceClient<any>(this.client, NAMESPACES).listAll({ signal: this.signal }),
      ]).then(([pods, namespaces]) => {
        this.listedVersion = pods.metadata?.resourceVersion;
        const cluster = new ClusterPods([], namespaces.items ?? []);
        const summaries = new Map<string, PodSummary[]>();
        for (const pod of pods.items ?? []) {
          const node = String(pod?.spec?.nodeName ?? '');
          cluster.add(placedPod(pod, node));
          let l = summaries.get(node);
          if (!l) summaries.set(node, (l = []));
          l.push(summarizePod(pod));
        }
        return { cluster, summaries };
      });
      // (a failed list is not kept: the next pod lists again)
      listing.catch(() => {
        if (this.listing === listing) this.listing = undefined;
      });
      this.listing = listing;
    }
    return this.listing;
  }

  /** the summaries of the pods on the node */
  async podsOn(node: string): Promise<PodSummary[]> {
    const { summaries } = await this.load();
    let l = summaries.get(node);
    if (!l) summaries.set(node, (l = []));
    return l;
  }

  /** the pods of every node as InterPodAffinity and PodTopologySpread read them */
  async cluster(): Promise<ClusterPods> {
    return (await this.load()).cluster;
  }

  /** the Services of a namespace (for the default spreading) */
  servicesOf(namespace: string): Promise<any[]> {
    let p = this.services.get(namespace);
    if (!p) {
      p = new ResourceClient<any>(this.client, SERVICES, namespace).listAll({ signal: this.signal }).then((l) => l.items ?? []);
      p.catch(() => this.services.delete(namespace));
      this.services.set(namespace, p);
    }
    return p;
  }

  /** the pod's controller when it is a ReplicationController, ReplicaSet or StatefulSet (undefined otherwise, or gone) */
  controllerOf(pod: any): Promise<any | undefined> {
    const ref = (Array.isArray(pod?.metadata?.ownerReferences) ? pod.metadata.ownerReferences : []).find((r: any) => r?.controller === true);
    const gvr = ref ? SPREAD_CONTROLLERS[`${ref.apiVersion}/${ref.kind}`] : undefined;
    if (!gvr) return Promise.resolve(undefined);
    const ns = String(pod.metadata.namespace ?? '');
    const key = `${gvr.resource}/${ns}/${ref.name}`;
    let p = this.controllers.get(key);
    if (!p) {
      p = new ResourceClient<any>(this.client, gvr, ns)
        .get(String(ref.name), { signal: this.signal })
        .then((o) => (o ? { ...o, kind: ref.kind } : undefined))
        .catch((e) => {
          if (isNotFound(e)) return undefined;
          this.controllers.delete(key);
          throw e;
        });
      this.controllers.set(key, p);
    }
    return p;
  }

  /** the PodDisruptionBudgets (for preemption), listed once per pass */
  pdbs(): Promise<any[]> {
    if (!this.budgets) {
      const p = new ResourceClient<any>(this.client, PDBS).listAll({ signal: this.signal }).then((l) => l.items ?? []);
      p.catch(() => {
        if (this.budgets === p) this.budgets = undefined;
      });
      this.budgets = p;
    }
    return this.budgets;
  }

  /** victims of the pass's preemption: being deleted now */
  async preempted(node: string, uids: ReadonlySet<string>): Promise<void> {
    const loaded = await this.listing?.catch(() => undefined);
    for (const s of loaded?.summaries.get(node) ?? []) if (uids.has(s.uid)) s.preempted = true;
  }

  /** a bound pod came or went that this pass did not bind itself: its lists are out of date */
  stale = false;
  /** the uids of the pods this pass binds or bound (their ADDED events may come before the binding's answer) */
  private readonly boundUids = new Set<string>();

  /** this pass is about to bind the pod */
  binding(uid: string): void {
    this.boundUids.add(uid);
  }

  /** a bound pod was seen coming (or going, with `gone`): the pass is stale unless it bound the pod itself */
  observed(uid: string | undefined, gone: boolean): void {
    if (gone || !uid || !this.boundUids.has(uid)) this.stale = true;
  }

  /** the pass's own binding */
  async bound(node: string, pod: PodSummary, placed: PlacedPod): Promise<void> {
    const loaded = await this.listing?.catch(() => undefined);
    if (!loaded) return;
    const l = loaded.summaries.get(node);
    if (!l) loaded.summaries.set(node, [pod]);
    else if (!l.some((x) => x.uid === pod.uid)) l.push(pod);
    loaded.cluster.add(placed);
  }
}

export class Scheduler {
  readonly identity: string;
  private readonly log: Logger;
  private readonly profiles: Map<string, Profile>;
  private readonly client: RESTClient;
  private readonly leClient?: RESTClient;
  private readonly recorders = new Map<string, EventRecorder>();
  private readonly abort = new AbortController();
  private loopDone?: Promise<void>;
  private elector?: LeaderElector;
  private leading = false;
  private pods?: Informer<any>;
  private nodes?: Informer<any>;
  private pvcs?: Informer<any>;
  private pvs?: Informer<any>;
  private classes?: Informer<any>;
  private assigned?: AssignedPodWatch;
  /** the scheduling pass under way */
  private pass?: PassCache;
  private queue?: SchedulingQueue;
  private nextStartNodeIndex = 0;
  /** writes not awaited by the loop (events, status patches), awaited on stop */
  private readonly pending = new Set<Promise<unknown>>();
  private readonly attempts = new Map<string, number>();

  constructor(private readonly o: SchedulerOptions) {
    this.log = o.log ?? nopLogger;
    const profiles = o.profiles?.length ? o.profiles : [defaultProfile(o.schedulerName ?? DEFAULT_SCHEDULER_NAME)];
    this.profiles = new Map(profiles.map((p) => [p.schedulerName, p]));
    if (this.profiles.size !== profiles.length) throw new Error('duplicate scheduler names in the profiles');
    const le = o.leaderElect === undefined ? {} : o.leaderElect;
    this.identity = (le && le.identity) || `${hostname()}_${randomUUID()}`;
    this.client = new RESTClient({ ...o.rest, userAgent: o.userAgent, qps: o.qps ?? 50, burst: o.burst ?? 100 });
    if (le) this.leClient = new RESTClient({ ...o.rest, userAgent: `${o.userAgent}/leader-election`, qps: o.qps ?? 50, burst: o.burst ?? 100 });
    for (const name of this.profiles.keys()) this.recorders.set(name, new EventRecorder(this.client, name, this.log));
  }

  /** the scheduler names served */
  schedulerNames(): string[] {
    return [...this.profiles.keys()];
  }

  /** Starts campaigning (or scheduling at once without leader election). Returns at once. */
  start(): void {
    if (this.loopDone) return;
    this.loopDone = this.run().catch((e) => this.log.error(e, 'Scheduler stopped unexpectedly'));
  }

  /** Stops scheduling, releases the Lease, closes the clients. */
  async stop(): Promise<void> {
    this.abort.abort(new Error('scheduler stopping'));
    await this.loopDone;
    await Promise.allSettled([...this.pending]);
    this.client.close();
    this.leClient?.close();
  }

  /** Whether this scheduler leads (always true without leader election, once started). */
  isLeader(): boolean {
    return this.leading;
  }

  /** kube-scheduler's leaderElection health check (20 s of tolerance): undefined when healthy */
  leaderElectionHealth(toleranceMs = 20_000): string | undefined {
    return this.elector?.healthCheck(toleranceMs);
  }

  /** sched-handler-sync: the informers have synced (a scheduler that does not lead has nothing to sync) */
  handlersSynced(): boolean {
    if (!this.leading) return true;
    return !!(this.pods?.hasSynced() && this.nodes?.hasSynced() && this.pvcs?.hasSynced() && this.pvs?.hasSynced() && this.classes?.hasSynced());
  }

  metrics(): SchedulerMetrics {
    const attempts = [...this.attempts].map(([k, count]) => {
      const [result, profile] = k.split('\0') as [string, string];
      return { result, profile, count };
    });
    return { pendingPods: this.queue?.counts() ?? { active: 0, backoff: 0, unschedulable: 0, gated: 0 }, attempts, leader: this.leading };
  }

  private countAttempt(result: 'scheduled' | 'unschedulable' | 'error', profile: string, startedMs?: number): void {
    const k = `${result}\0${profile}`;
    this.attempts.set(k, (this.attempts.get(k) ?? 0) + 1);
    if (startedMs !== undefined) this.o.observe?.attempt(result, profile, (performance.now() - startedMs) / 1000);
  }

  // ── leadership ────────────────────────────────────────────────────────────

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    const le = this.o.leaderElect === undefined ? {} : this.o.leaderElect;
    if (!le) {
      this.leading = true;
      await this.lead(signal);
      this.leading = false;
      return;
    }
    await runCampaign({
      client: this.leClient!,
      namespace: le.resourceNamespace ?? 'kube-system',
      name: le.resourceName ?? 'kube-scheduler',
      identity: this.identity,
      leaseDurationMs: le.leaseDurationMs ?? 15_000,
      renewDeadlineMs: le.renewDeadlineMs ?? 10_000,
      retryPeriodMs: le.retryPeriodMs ?? 2_000,
      log: this.log,
      component: 'kube-scheduler',
      lead: (leadSignal) => this.lead(leadSignal),
      leading: (on) => (this.leading = on),
      elector: (e) => (this.elector = e),
      onLostLeadership: this.o.onLostLeadership,
      lostMessage: 'Leaderelection lost',
      work: 'scheduling',
    }, signal);
  }

  /** one term of leadership: the informers, the queue and the loop, until `signal` aborts */
  private async lead(signal: AbortSignal): Promise<void> {
    setMaxListeners(0, signal);
    const queue = new SchedulingQueue({
      initialBackoffMs: this.o.podInitialBackoffMs ?? 1_000,
      maxBackoffMs: this.o.podMaxBackoffMs ?? 10_000,
      maxInUnschedulableMs: this.o.podMaxInUnschedulablePodsDurationMs ?? 300_000,
      recheckMs: this.o.unschedulableRecheckMs ?? 30_000,
      flushPeriodMs: Math.min(30_000, this.o.unschedulableRecheckMs ?? 30_000),
    });
    const names = [...this.profiles.keys()];
    const fieldSelector = `spec.nodeName=,${NOT_TERMINATED}${names.length === 1 ? `,spec.schedulerName=${names[0]}` : ''}`;
    const pods = new Informer<any>(new ResourceClient<any>(this.client, PODS), { fieldSelector, log: this.log, name: 'unassigned pods' });
    const nodes = new Informer<any>(new ResourceClient<any>(this.client, NODES), { log: this.log, name: 'nodes' });
    // (VolumeBinding's listers: claims, volumes and classes, few and small next to the pods)
    const pvcs = new Informer<any>(new ResourceClient<any>(this.client, PVCS), { log: this.log, name: 'persistentvolumeclaims' });
    const pvs = new Informer<any>(new ResourceClient<any>(this.client, PVS), { log: this.log, name: 'persistentvolumes' });
    const classes = new Informer<any>(new ResourceClient<any>(this.client, STORAGE_CLASSES), { log: this.log, name: 'storageclasses' });
    const assigned = new AssignedPodWatch({
      client: this.client,
      fieldSelector: `spec.nodeName!=,${NOT_TERMINATED}`,
      log: this.log,
      needed: () => queue.awaitsPodEvents(),
      added: (uid) => {
        this.pass?.observed(uid, false);
        queue.movePodEvent('added');
      },
      removed: (uid) => {
        this.pass?.observed(uid, true);
        queue.movePodEvent('removed');
      },
      // (a pod may now match a term it did not, or no longer match one it did: both kinds move)
      relabeled: (uid) => {
        this.pass?.observed(uid, true);
        queue.movePodEvent('added');
        queue.movePodEvent('removed');
      },
      // (a bound pod resized down frees room as one removed does: the pods waiting for room move)
      resized: (uid) => {
        this.pass?.observed(uid, true);
        queue.movePodEvent('removed');
      },
    });
    this.queue = queue;
    this.pods = pods;
    this.nodes = nodes;
    this.pvcs = pvcs;
    this.pvs = pvs;
    this.classes = classes;
    this.assigned = assigned;
    pods.addEventHandler({
      add: (p) => this.onPod(p),
      update: (_old, p) => this.onPod(p),
      delete: (p) => this.onPodGone(p),
    });
    nodes.addEventHandler({
      add: () => queue.moveAllToActiveOrBackoff(),
      update: (old, n) => {
        if (nodeSchedulingPropertiesChanged(old, n)) queue.moveAllToActiveOrBackoff();
      },
    });
    // (VolumeBinding's EventsToRegister: PVC, PV and StorageClass Add and Update)
    for (const inf of [pvcs, pvs, classes]) {
      inf.addEventHandler({ add: () => queue.movePodEvent('volumes'), update: () => queue.movePodEvent('volumes') });
    }
    pods.run();
    nodes.run();
    pvcs.run();
    pvs.run();
    classes.run();
    try {
      const synced = await Promise.all([pods, nodes, pvcs, pvs, classes].map((i) => i.waitForSync({ signal })));
      if (synced.every(Boolean)) await this.loop(queue, signal);
    } finally {
      queue.close();
      await Promise.all([pods.stop(), nodes.stop(), pvcs.stop(), pvs.stop(), classes.stop(), assigned.stop()]);
      if (this.assigned === assigned) this.assigned = undefined;
      if (this.queue === queue) this.queue = undefined;
    }
  }

  // ── the pods and nodes seen ───────────────────────────────────────────────

  private responsible(pod: any): boolean {
    return !pod?.spec?.nodeName && !pod?.metadata?.deletionTimestamp && this.profiles.has(pod?.spec?.schedulerName ?? DEFAULT_SCHEDULER_NAME);
  }

  private onPod(pod: any): void {
    const q = this.queue;
    if (!q) return;
    const key = `${pod?.metadata?.namespace ?? ''}/${pod?.metadata?.name ?? ''}`;
    if (!this.responsible(pod)) {
      q.delete(key);
      return;
    }
    const known = q.get(key);
    if (known && known.uid === pod.metadata?.uid) q.update(pod);
    else q.add(pod);
    if (isGated(pod)) this.markGated(pod);
  }

  private onPodGone(obj: any | DeletedFinalStateUnknown<any>): void {
    const key = obj instanceof DeletedFinalStateUnknown ? obj.key : `${obj?.metadata?.namespace ?? ''}/${obj?.metadata?.name ?? ''}`;
    this.queue?.delete(key);
  }

  /** PodScheduled=False SchedulingGated, on a gated pod that has no PodScheduled condition yet */
  private markGated(pod: any): void {
    const conds: any[] = Array.isArray(pod?.status?.conditions) ? pod.status.conditions : [];
    if (conds.some((c) => c?.type === 'PodScheduled')) return;
    this.track(this.patchCondition(pod, { type: 'PodScheduled', status: 'False', reason: 'SchedulingGated', message: SCHEDULING_GATED_MESSAGE }));
  }

  // ── the loop ──────────────────────────────────────────────────────────────

  private async loop(queue: SchedulingQueue, signal: AbortSignal): Promise<void> {
    this.log.info('Starting the scheduling loop', { profiles: [...this.profiles.keys()] });
    while (!signal.aborted) {
      await queue.waitForActive(signal);
      if (signal.aborted) break;
      // a pass: the pods taken one after the other while more keep coming (a ReplicaSet makes its
      // pods in bursts), up to PASS_MAX_AGE_MS; its node summaries are dropped when it ends
      let pass = new PassCache(this.client, signal);
      this.pass = pass;
      for (;;) {
        const e = queue.pop();
        if (!e) {
          if (!(await queue.waitForActive(signal, PASS_LINGER_MS))) break;
          continue;
        }
        if (pass.stale || Date.now() - pass.started > PASS_MAX_AGE_MS) pass = new PassCache(this.client, signal);
        this.pass = pass;
        try {
          await this.scheduleOne(e, queue, pass, signal);
        } catch (err) {
          if (signal.aborted) break;
          this.log.error(err, 'Error scheduling pod; retrying', { pod: e.key });
          this.countAttempt('error', e.pod?.spec?.schedulerName ?? DEFAULT_SCHEDULER_NAME);
          queue.requeueError(e);
        }
      }
    }
  }

  private async scheduleOne(e: QueuedPod, queue: SchedulingQueue, pass: PassCache, signal: AbortSignal): Promise<void> {
    const { namespace, name } = splitKey(e.key);
    const pod = this.pods?.getByName(namespace, name);
    if (!pod || pod.metadata?.uid !== e.uid || !this.responsible(pod)) {
      queue.delete(e.key);
      return;
    }
    if (isGated(pod)) {
      e.pod = pod;
      queue.requeueGated(e);
      return;
    }
    const profile = this.profiles.get(pod.spec?.schedulerName ?? DEFAULT_SCHEDULER_NAME)!;
    const p = newPodInfo(pod);
    const allNodes = this.nodes?.list() ?? [];
    const startedMs = performance.now();
    const result = await this.findNode(p, profile, allNodes, pass, signal);
    if (signal.aborted) return;
    if ('error' in result) {
      this.countAttempt('unschedulable', profile.schedulerName, startedMs);
      this.log.v(2).info('Unable to schedule pod; no fit; waiting', { pod: e.key, err: result.error });
      let nominated: string | undefined;
      if (result.preempt) {
        await this.preempt(pod, profile, result.preempt, pass);
        nominated = result.preempt.node;
      }
      this.failed(pod, profile, 'Unschedulable', result.error, nominated);
      // (a preempting pod waits for its victims to go: a bound pod going away moves it)
      const events = result.preempt || result.waitForVictims ? VICTIMS_GONE : (result.podEvents ?? NO_POD_EVENTS);
      queue.requeueUnschedulable(e, result.resolvable || events === VICTIMS_GONE, events);
      if (events.added || events.removed) this.assigned?.ensure(pass.listedVersion);
      return;
    }
    // bind (the pass counts the pod on its node at once: the next pod sees it)
    const node = result.node;
    pass.binding(e.uid);
    const v = result.volumes;
    if (v && (v.staticBindings.length || v.dynamicProvisions.length)) {
      // VolumeBinding's PreBind writes and waits (up to bindTimeoutSeconds) for the PV controller:
      // the binding cycle goes on beside the loop, the pod assumed on its node meanwhile
      await pass.bound(node, p.summary, placedPod(pod, node));
      this.track(this.bindingCycle(e, pod, profile, node, v, pass, startedMs, result, signal));
      return;
    }
    await this.bind(e, pod, profile, node, pass, startedMs, result, signal);
  }

  /** the binding cycle of a pod with claims to bind: VolumeBinding's PreBind, then the binding */
  private async bindingCycle(e: QueuedPod, pod: any, profile: Profile, node: string, v: PodVolumes, pass: PassCache, startedMs: number, result: { evaluated: number; feasible: number }, signal: AbortSignal): Promise<void> {
    const queue = this.queue;
    try {
      await this.bindPodVolumes(pod, node, v, (profile.bindTimeoutSeconds ?? DEFAULT_BIND_TIMEOUT_SECONDS) * 1000, signal);
    } catch (err) {
      if (signal.aborted) return;
      // (Unreserve: the pass no longer counts the pod there)
      pass.stale = true;
      const msg = `running PreBind plugin "VolumeBinding": ${(err as Error).message}`;
      this.log.error(err, 'Failed to bind volumes of pod', { pod: e.key, node });
      this.countAttempt('error', profile.schedulerName, startedMs);
      this.failed(pod, profile, 'SchedulerError', msg);
      queue?.requeueError(e);
      return;
    }
    await this.bind(e, pod, profile, node, pass, startedMs, result, signal);
  }

  /**
   * BindPodVolumes: bindAPIUpdate (each static binding's PV gets its claimRef and
   * pv.kubernetes.io/bound-by-controller; each claim to provision gets
   * volume.kubernetes.io/selected-node), then checkBindings every second until every claim is
   * fully bound (the PV controller's work), or an error, or the timeout
   */
  private async bindPodVolumes(pod: any, node: string, v: PodVolumes, timeoutMs: number, signal: AbortSignal): Promise<void> {
    const written = new Map<string, string>();
    for (const b of v.staticBindings) {
      const pv = structuredClone(b.pv);
      const c = b.pvc.metadata;
      const ref = pv.spec.claimRef;
      const boundByUs = !isVolumeBoundToClaim(pv, b.pvc);
      if (!ref || ref.name !== c.name || ref.namespace !== c.namespace || ref.uid !== c.uid) {
        pv.spec.claimRef = claimReference(b.pvc);
      }
      if (boundByUs) pv.metadata.annotations = { ...(pv.metadata.annotations ?? {}), [ANN_BOUND_BY_CONTROLLER]: pv.metadata.annotations?.[ANN_BOUND_BY_CONTROLLER] ?? 'yes' };
      const out = await this.client.json({ method: 'PUT', path: `/api/v1/persistentvolumes/${encodeURIComponent(pv.metadata.name)}`, body: pv, signal });
      written.set(`pv/${pv.metadata.name}`, String(out?.metadata?.resourceVersion ?? ''));
    }
    for (const claim of v.dynamicProvisions) {
      const pvc = structuredClone(claim);
      if (pvc.metadata.annotations?.[ANN_SELECTED_NODE] === node) continue;
      pvc.metadata.annotations = { ...(pvc.metadata.annotations ?? {}), [ANN_SELECTED_NODE]: node };
      const out = await this.client.json({ method: 'PUT', path: `/api/v1/namespaces/${encodeURIComponent(pvc.metadata.namespace)}/persistentvolumeclaims/${encodeURIComponent(pvc.metadata.name)}`, body: pvc, signal });
      written.set(`pvc/${pvc.metadata.namespace}/${pvc.metadata.name}`, String(out?.metadata?.resourceVersion ?? ''));
      this.log.v(2).info('Selected the node of a claim to provision', { pvc: `${pvc.metadata.namespace}/${pvc.metadata.name}`, node });
    }
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await sleep(Math.min(1000, Math.max(0, deadline - Date.now())), signal);
      let done: boolean;
      try {
        done = this.checkBindings(pod, node, v, written);
      } catch (e) {
        throw new Error(`binding volumes: ${(e as Error).message}`);
      }
      if (done) return;
      if (Date.now() >= deadline) throw new Error('binding volumes: context deadline exceeded');
    }
  }

  /** checkBindings: true once every claim is fully bound; throws what makes the binding hopeless */
  private checkBindings(pod: any, nodeName: string, v: PodVolumes, written: Map<string, string>): boolean {
    const node = this.nodes?.get(nodeName);
    if (!node) throw new Error(`failed to get node ${JSON.stringify(nodeName)}: node ${JSON.stringify(nodeName)} not found`);
    const current = this.pods?.getByName(pod.metadata.namespace, pod.metadata.name);
    // (the pod is still pending, so in the informer, until this cycle binds it)
    if (!current || current.metadata?.uid !== pod.metadata.uid) throw new Error(`pod does not exist any more: pod ${JSON.stringify(pod.metadata.name)} not found`);
    const l = this.volumeListers();
    for (const b of v.staticBindings) {
      const name = String(b.pv.metadata.name);
      const pv = l.pv(name);
      if (!pv) throw new Error(`failed to check binding: PersistentVolume ${JSON.stringify(name)} not found`);
      const key = `${b.pvc.metadata.namespace}/${b.pvc.metadata.name}`;
      const pvc = l.pvc(b.pvc.metadata.namespace, b.pvc.metadata.name);
      if (!pvc) throw new Error(`failed to check binding: PersistentVolumeClaim ${JSON.stringify(key)} not found`);
      if (newerVersion(written.get(`pv/${name}`), pv.metadata?.resourceVersion)) return false;
      if (!pvMatchesNode(pv, node)) throw new Error(`pv ${JSON.stringify(name)} node affinity doesn't match node ${JSON.stringify(nodeName)}: no matching NodeSelectorTerms`);
      if (!pv.spec?.claimRef?.uid) throw new Error(`ClaimRef got reset for pv ${JSON.stringify(name)}`);
      if (!claimFullyBound(pvc)) return false;
    }
    for (const claim of v.dynamicProvisions) {
      const key = `${claim.metadata.namespace}/${claim.metadata.name}`;
      const pvc = l.pvc(claim.metadata.namespace, claim.metadata.name);
      if (!pvc) throw new Error(`failed to check provisioning pvc: PersistentVolumeClaim ${JSON.stringify(key)} not found`);
      if (newerVersion(written.get(`pvc/${key}`), pvc.metadata?.resourceVersion)) return false;
      const selected = pvc.metadata?.annotations?.[ANN_SELECTED_NODE];
      if (!pvc.metadata?.annotations) throw new Error(`selectedNode annotation reset for PVC ${JSON.stringify(pvc.metadata.name)}`);
      if (selected !== nodeName) throw new Error(`provisioning failed for PVC ${JSON.stringify(pvc.metadata.name)}`);
      if (pvc.spec?.volumeName) {
        const pv = l.pv(String(pvc.spec.volumeName));
        if (!pv) return false;
        if (!pvMatchesNode(pv, node)) throw new Error(`pv ${JSON.stringify(pv.metadata.name)} node affinity doesn't match node ${JSON.stringify(nodeName)}: no matching NodeSelectorTerms`);
      }
      if (!claimFullyBound(pvc)) return false;
    }
    return true;
  }

  /** the informers' claims, volumes and classes, as VolumeBinding reads them */
  private volumeListers(): VolumeListers {
    return {
      pvc: (ns, name) => this.pvcs?.getByName(ns, name),
      pv: (name) => this.pvs?.getByName('', name),
      storageClass: (name) => this.classes?.getByName('', name),
      pvs: () => this.pvs?.list() ?? [],
    };
  }

  /** DefaultBinder: the Binding, then the pod is done (a `Scheduled` event) */
  private async bind(e: QueuedPod, pod: any, profile: Profile, node: string, pass: PassCache, startedMs: number, result: { evaluated: number; feasible: number }, signal: AbortSignal): Promise<void> {
    const queue = this.queue;
    const { namespace, name } = splitKey(e.key);
    const p = newPodInfo(pod);
    try {
      await this.client.json({
        method: 'POST',
        path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}/binding`,
        body: { apiVersion: 'v1', kind: 'Binding', metadata: { name, namespace, uid: e.uid }, target: { apiVersion: 'v1', kind: 'Node', name: node } },
        signal,
      });
    } catch (err) {
      if (signal.aborted) return;
      if (isNotFound(err) || (isConflict(err) && /already assigned|being deleted|Precondition failed/.test((err as Error).message))) {
        // gone, or bound by someone else meanwhile
        this.log.v(3).info('Pod no longer needs scheduling', { pod: e.key, err: (err as Error).message });
        queue?.delete(e.key);
        return;
      }
      const msg = `running Bind plugin "DefaultBinder": ${(err as Error).message}`;
      this.log.error(err, 'Failed to bind pod', { pod: e.key, node });
      this.countAttempt('error', profile.schedulerName, startedMs);
      this.failed(pod, profile, 'SchedulerError', msg);
      queue?.requeueError(e);
      return;
    }
    await pass.bound(node, p.summary, placedPod(pod, node));
    queue?.done(e.key);
    this.countAttempt('scheduled', profile.schedulerName, startedMs);
    this.log.v(2).info('Successfully bound pod to node', { pod: e.key, node, evaluatedNodes: result.evaluated, feasibleNodes: result.feasible, elapsedMs: Math.round(performance.now() - startedMs) });
    this.track(this.recorders.get(profile.schedulerName)!.event(podRef(pod), 'Normal', 'Scheduled', `Successfully assigned ${namespace}/${name} to ${node}`));
  }

  /**
   * schedulePod: the node for the pod, or why there is none (the FitError's message, and whether
   * the removal of other pods might help: some node said Unschedulable rather than
   * UnschedulableAndUnresolvable)
   */
  private async findNode(
    p: PodInfo,
    profile: Profile,
    allNodes: any[],
    pass: PassCache,
    signal: AbortSignal,
  ): Promise<{ node: string; evaluated: number; feasible: number; volumes?: PodVolumes } | { error: string; resolvable: boolean; podEvents?: PodEvents; preempt?: Candidate; waitForVictims?: boolean }> {
    if (!allNodes.length) return { error: ERR_NO_NODES, resolvable: false };
    const numAll = allNodes.length;
    const enabled = profile.filters;
    // a PreFilter's UnschedulableAndUnresolvable: preemption cannot help on any node
    const rejected = (msg: string, podEvents?: PodEvents) => {
      const post = profile.preemption ? (p.pod?.spec?.preemptionPolicy === 'Never' ? 'preemption: not eligible due to preemptionPolicy=Never.' : `preemption: 0/${numAll} nodes are available: ${numAll} ${PREEMPTION_NOT_HELPFUL}.`) : undefined;
      return { error: fitErrorMessage({ numAllNodes: numAll, statuses: new Map(), preFilterMsg: msg, postFilterMsg: post }), resolvable: false, ...(podEvents ? { podEvents } : {}) };
    };
    // PreFilter (NodeAffinity): the names of matchFields metadata.name; (VolumeBinding): the
    // claims, and the nodes of the bound local volumes; the node names allowed are intersected
    let candidates = allNodes;
    let absent: Status | undefined;
    let names: Set<string> | undefined;
    const pluginsWithNodes: string[] = [];
    if (enabled.has('NodeAffinity')) {
      const pf = nodeAffinityPreFilter(p.pod);
      if (pf.conflict) return rejected(ERR_AFFINITY_CONFLICT);
      if (pf.names) {
        names = pf.names;
        pluginsWithNodes.push('NodeAffinity');
      }
    }
    let volumeState: VolumeState | undefined;
    if (enabled.has('VolumeBinding')) {
      const pf = volumeBindingPreFilter(p.pod, this.volumeListers());
      if ('status' in pf) return rejected(pf.status.reasons.join(', '), VOLUME_EVENTS);
      if ('state' in pf) {
        volumeState = pf.state;
        if (pf.eligibleNodes) {
          const eligible = pf.eligibleNodes;
          names = names ? new Set([...names].filter((x) => eligible.has(x))) : eligible;
          pluginsWithNodes.push('VolumeBinding');
          if (names.size === 0) {
            const sorted = [...pluginsWithNodes].sort();
            return rejected(sorted.length === 1 ? `node(s) didn't satisfy plugin ${sorted[0]}` : `node(s) didn't satisfy plugin(s) ${goList(sorted)} simultaneously`, VOLUME_EVENTS);
          }
        }
      }
    }
    if (names) {
      const allowed = names;
      candidates = allNodes.filter((n) => allowed.has(n?.metadata?.name));
      absent = { code: 'UnschedulableAndUnresolvable', reasons: [`node(s) didn't satisfy plugin(s) ${goList([...pluginsWithNodes].sort())}`], plugin: pluginsWithNodes[pluginsWithNodes.length - 1]! };
    }
    // VolumeBinding's Filter, with what its PreBind would do on each node it lets through
    const podVolumesByNode = new Map<string, PodVolumes>();
    const volumeFilter = volumeState
      ? (info: NodeInfo): Status | undefined => {
          const r = volumeBindingFilter(volumeState!, info.node, this.volumeListers());
          if (r.volumes) podVolumesByNode.set(info.name, r.volumes);
          return r.status;
        }
      : undefined;
    const statuses = new Map<string, Status>();
    const infos = new Map<string, NodeInfo>();
    const feasible: NodeInfo[] = [];
    const n = candidates.length;
    const toFind = numFeasibleNodesToFind(n, profile.percentageOfNodesToScore ?? this.o.percentageOfNodesToScore);
    const start = n ? this.nextStartNodeIndex % n : 0;
    // the nodes the Node-only filters let through, in search order, with their position
    const passing: { node: any; i: number }[] = [];
    for (let i = 0; i < n; i++) {
      const node = candidates[(start + i) % n];
      const s = runNodeFilters(p, node, enabled);
      if (s) statuses.set(node.metadata.name, s);
      else passing.push({ node, i });
    }
    let processed = n;
    // the rest read the pods on the nodes (the pass's one list of every node's pods), in search
    // order, until enough fit; PodTopologySpread and InterPodAffinity read every node's
    let cluster: ClusterPods | undefined;
    let clusterFilters: ClusterFilters | undefined;
    if (passing.length) {
      cluster = await pass.cluster();
      if (signal.aborted) return { error: 'stopped', resolvable: false };
      clusterFilters = { ...clusterFiltersOf(p, allNodes, cluster, enabled), ...(volumeFilter ? { volumes: volumeFilter } : {}) };
    }
    // (pods nominated to a node by a preemption, of at least this pod's priority, keep their room there)
    const nominated = this.nominatedPods(p);
    const withNominated = (info: NodeInfo, filters: ClusterFilters | undefined): Status | undefined => {
      const on = nominated.get(info.name);
      return on ? runPodFilters(p, newNodeInfo(info.node, [...info.pods, ...on]), enabled, filters) : undefined;
    };
    for (const c of passing) {
      const info = newNodeInfo(c.node, await pass.podsOn(c.node.metadata.name));
      infos.set(info.name, info);
      const s = runPodFilters(p, info, enabled, clusterFilters) ?? withNominated(info, clusterFilters);
      if (s) statuses.set(info.name, s);
      else {
        feasible.push(info);
        if (feasible.length >= toFind) {
          processed = c.i + 1;
          break;
        }
      }
    }
    this.nextStartNodeIndex = n ? (start + processed) % allNodes.length : this.nextStartNodeIndex;
    if (!feasible.length) {
      const resolvable = [...statuses.values()].some((s) => s.code === 'Unschedulable');
      const podEvents = podEventsOf(statuses.values());
      if (!profile.preemption) return { error: fitErrorMessage({ numAllNodes: numAll, statuses, absent }), resolvable, podEvents };
      // DefaultPreemption: the budgets are read only when some node might be helped
      const pdbs = resolvable ? await pass.pdbs() : [];
      if (signal.aborted) return { error: 'stopped', resolvable: false };
      const c = cluster;
      const r = findPreemption({
        p,
        numAllNodes: numAll,
        statuses,
        infos,
        pdbs,
        fits: (info, removed) => {
          // (taking pods away changes only the counts of filters the pod has: without them, nothing to redo)
          const filters = c && removed.size && (clusterFilters?.spread || clusterFilters?.interPod) ? { ...clusterFiltersOf(p, allNodes, c.without(info.name, removed), enabled), ...(volumeFilter ? { volumes: volumeFilter } : {}) } : clusterFilters;
          return runNodeFilters(p, info.node, enabled) ?? runPodFilters(p, info, enabled, filters) ?? withNominated(info, filters);
        },
        podMeta: (uid) => {
          for (const info of infos.values()) {
            const m = c?.find(info.name, uid);
            if (m) return m;
          }
          return undefined;
        },
      });
      // (DefaultPreemption's PostFilter counts every attempt, and the victims of the candidate chosen)
      this.o.observe?.preemption('candidate' in r ? r.candidate.victims.length : undefined);
      if ('candidate' in r) return { error: fitErrorMessage({ numAllNodes: numAll, statuses, absent }), resolvable: true, preempt: r.candidate };
      return { error: fitErrorMessage({ numAllNodes: numAll, statuses, absent, postFilterMsg: r.message }), resolvable, podEvents, waitForVictims: r.waitForVictims };
    }
    // (PreBind has something to do only for claims not bound yet)
    const volumesOf = (node: string) => (volumeState?.delayClaims.length ? { volumes: podVolumesByNode.get(node) } : {});
    if (feasible.length === 1) return { node: feasible[0]!.name, evaluated: statuses.size + 1, feasible: 1, ...volumesOf(feasible[0]!.name) };
    const clusterScores = await this.clusterScores(p, profile, feasible, allNodes, cluster!, pass);
    if (signal.aborted) return { error: 'stopped', resolvable: false };
    const totals = scoreNodes(p, feasible, profile.scoring, imageStates(allNodes), clusterScores);
    const node = selectHost(feasible.map((f) => f.name), totals, this.o.random);
    return { node, evaluated: statuses.size + feasible.length, feasible: feasible.length, ...volumesOf(node) };
  }

  /**
   * the pending pods nominated to each node (status.nominatedNodeName) whose priority is at least
   * the pod's (RunFilterPluginsWithNominatedPods: the pod must fit beside them as well as without them)
   */
  private nominatedPods(p: PodInfo): Map<string, PodSummary[]> {
    const out = new Map<string, PodSummary[]>();
    for (const other of this.pods?.list() ?? []) {
      const node = other?.status?.nominatedNodeName;
      if (typeof node !== 'string' || !node || other?.spec?.nodeName || other?.metadata?.uid === p.summary.uid) continue;
      const s = summarizePod(other);
      if (s.priority < p.priority) continue;
      let l = out.get(node);
      if (!l) out.set(node, (l = []));
      l.push(s);
    }
    return out;
  }

  /** the normalized scores of PodTopologySpread and InterPodAffinity over the feasible nodes (absent: skipped) */
  private async clusterScores(p: PodInfo, profile: Profile, feasible: NodeInfo[], allNodes: any[], cluster: ClusterPods, pass: PassCache): Promise<{ PodTopologySpread?: number[]; InterPodAffinity?: number[] }> {
    const out: { PodTopologySpread?: number[]; InterPodAffinity?: number[] } = {};
    const w = profile.scoring.weights;
    const nodes = feasible.map((f) => f.node);
    if (w.PodTopologySpread) {
      const own = Array.isArray(p.pod?.spec?.topologySpreadConstraints) && p.pod.spec.topologySpreadConstraints.length > 0;
      let constraints = own ? spreadConstraints(p.pod, 'ScheduleAnyway') : [];
      if (!own) {
        const [services, controller] = await Promise.all([pass.servicesOf(String(p.pod?.metadata?.namespace ?? '')), pass.controllerOf(p.pod)]);
        constraints = defaultSpreadConstraints(defaultSelector(p.pod, services, controller));
      }
      const scores = scorePodTopologySpread(p.pod, nodes, allNodes, cluster, constraints, !own);
      if (scores) out.PodTopologySpread = scores;
    }
    if (w.InterPodAffinity) {
      const pre = interPodPreScore(p.pod, allNodes, cluster);
      if (pre) out.InterPodAffinity = scoreInterPodAffinity(nodes, pre);
    }
    return out;
  }

  /** handleSchedulingFailure: the FailedScheduling event and the PodScheduled condition */
  /**
   * prepareCandidate: each victim gets the condition DisruptionTarget (PreemptionByScheduler), is
   * deleted (its uid as precondition) and gets a `Preempted` event; the pass counts them as being
   * deleted by a preemption
   */
  private async preempt(pod: any, profile: Profile, c: Candidate, pass: PassCache): Promise<void> {
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const schedulerName = pod.spec?.schedulerName ?? DEFAULT_SCHEDULER_NAME;
    await Promise.all(
      c.victims.map(async (v) => {
        const { namespace, name } = splitKey(v.key);
        const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;
        try {
          await this.client.json({
            method: 'PATCH',
            path: `${path}/status`,
            contentType: 'application/strategic-merge-patch+json',
            body: { metadata: { uid: v.uid }, status: { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler', message: `${schedulerName}: preempting to accommodate a higher priority pod`, lastTransitionTime: now }] } },
          });
          await this.client.json({ method: 'DELETE', path, body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: v.uid } } });
        } catch (err) {
          if (isNotFound(err) || isConflict(err)) return;
          throw err;
        }
        this.log.v(2).info('Preempting pod', { pod: v.key, preemptor: `${pod.metadata.namespace}/${pod.metadata.name}`, node: c.node });
        this.track(this.recorders.get(profile.schedulerName)!.event({ kind: 'Pod', apiVersion: 'v1', metadata: { namespace, name, uid: v.uid } }, 'Normal', 'Preempted', `Preempted by pod ${pod.metadata.uid} on node ${c.node}`));
      }),
    );
    await pass.preempted(c.node, new Set(c.victims.map((v) => v.uid)));
    // lower-priority pods nominated to the node may no longer fit there: their nomination goes, so
    // that they look elsewhere (prepareCandidate's ClearNominatedNodeName)
    const priority = typeof pod.spec?.priority === 'number' ? pod.spec.priority : 0;
    for (const other of this.pods?.list() ?? []) {
      if (other?.status?.nominatedNodeName !== c.node || other?.spec?.nodeName || other?.metadata?.uid === pod.metadata?.uid) continue;
      if ((typeof other.spec?.priority === 'number' ? other.spec.priority : 0) >= priority) continue;
      this.track(this.clearNomination(other));
    }
  }

  private async clearNomination(pod: any): Promise<void> {
    if (await this.patchPodStatus(pod, { nominatedNodeName: null }, 'Error clearing the nominated node of a pod')) {
      this.log.v(2).info('Cleared the nomination of a pod of lower priority', { pod: `${pod.metadata.namespace}/${pod.metadata.name}` });
    }
  }

  /** a strategic merge patch of the pod's status, with its uid as precondition; false when it failed (a pod gone or replaced: quietly) */
  private async patchPodStatus(pod: any, status: Record<string, unknown>, failure: string, kv: Record<string, unknown> = {}): Promise<boolean> {
    const { namespace, name, uid } = pod.metadata;
    try {
      await this.client.json({
        method: 'PATCH',
        path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}/status`,
        contentType: 'application/strategic-merge-patch+json',
        body: { metadata: { uid }, status },
      });
      return true;
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) this.log.error(err, failure, { pod: `${namespace}/${name}`, ...kv });
      return false;
    }
  }

  private failed(pod: any, profile: Profile, reason: 'Unschedulable' | 'SchedulerError', message: string, nominatedNodeName?: string): void {
    const msg = message.length <= MAX_EVENT_MESSAGE ? message : message.slice(0, MAX_EVENT_MESSAGE - 4) + ' ...';
    this.track(this.recorders.get(profile.schedulerName)!.event(podRef(pod), 'Warning', 'FailedScheduling', msg));
    this.track(this.patchCondition(pod, { type: 'PodScheduled', status: 'False', reason, message }, nominatedNodeName));
  }

  /**
   * updatePod: PodScheduled set by a strategic merge patch of the status (conditions merge by type),
   * with the pod's uid as precondition; nothing is written when the condition is already so
   */
  private async patchCondition(pod: any, cond: { type: string; status: string; reason: string; message: string }, nominatedNodeName?: string): Promise<void> {
    const conds: any[] = Array.isArray(pod?.status?.conditions) ? pod.status.conditions : [];
    const old = conds.find((c) => c?.type === cond.type);
    const nominate = nominatedNodeName !== undefined && pod?.status?.nominatedNodeName !== nominatedNodeName;
    if (!nominate && old && old.status === cond.status && old.reason === cond.reason && old.message === cond.message && !old.lastProbeTime) return;
    const lastTransitionTime = old && old.status === cond.status && old.lastTransitionTime ? old.lastTransitionTime : new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await this.patchPodStatus(pod, { conditions: [{ ...cond, lastProbeTime: null, lastTransitionTime }], ...(nominate ? { nominatedNodeName } : {}) }, 'Error updating pod condition', { condition: cond.type });
  }

  private track(p: Promise<unknown>): void {
    const t = p.catch(() => undefined).finally(() => this.pending.delete(t));
    this.pending.add(t);
  }
}

/** PodTopologySpread's and InterPodAffinity's filters of the pod over `view` (their PreFilter states computed once) */
function clusterFiltersOf(p: PodInfo, allNodes: readonly any[], view: PodsView, enabled: ReadonlySet<string>): ClusterFilters {
  const out: ClusterFilters = {};
  if (enabled.has('PodTopologySpread')) {
    const st = spreadPreFilter(p.pod, allNodes, view);
    if (st.constraints.length) out.spread = (info) => filterPodTopologySpread(p.pod, info.node, st);
  }
  if (enabled.has('InterPodAffinity')) {
    const st = interPodPreFilter(p.pod, allNodes, view);
    if (st.terms || st.existingAnti.size) out.interPod = (info) => filterInterPodAffinity(p.pod, info.node, st, view);
  }
  return out;
}

/** what an event's involvedObject names (list items carry no kind) */
function podRef(pod: any): any {
  return { kind: 'Pod', apiVersion: 'v1', metadata: pod.metadata };
}

const condKey = (n: any) => JSON.stringify((Array.isArray(n?.status?.conditions) ? n.status.conditions : []).map((c: any) => [c?.type, c?.status, c?.reason]));

/** nodeSchedulingPropertiesChange: what a Node update must change to move unschedulable pods */
export function nodeSchedulingPropertiesChanged(old: any, n: any): boolean {
  if (!old) return true;
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  return (
    !!old.spec?.unschedulable !== !!n?.spec?.unschedulable ||
    !same(old.status?.allocatable, n?.status?.allocatable) ||
    !same(old.metadata?.labels, n?.metadata?.labels) ||
    !same(old.spec?.taints, n?.spec?.taints) ||
    !same(old.metadata?.annotations, n?.metadata?.annotations) ||
    condKey(old) !== condKey(n)
  );
}

/** the client certificate's user of the scheduler inside `keelson server` */
export const SCHEDULER_USER = 'system:kube-scheduler';

/**
 * The scheduler inside `keelson server`: a loopback client with a client certificate for
 * system:kube-scheduler (the role system:kube-scheduler is bound to that user), leader election on
 * the Lease kube-system/kube-scheduler so that several servers over one store schedule once.
 * stop() never rejects and gives up waiting after 5 s.
 */
export async function startEmbeddedScheduler(o: { serverURL: string; caPEM: string; certPEM: string; keyPEM: string; log: Logger }): Promise<{ stop(): Promise<void> }> {
  const s = new Scheduler({
    rest: { server: o.serverURL, ca: o.caPEM, cert: o.certPEM, key: o.keyPEM },
    userAgent: componentUserAgent('kube-scheduler'),
    log: o.log,
    leaderElect: {},
  });
  s.start();
  o.log.info('Started the scheduler', { identity: s.identity, schedulerName: DEFAULT_SCHEDULER_NAME });
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<void>((r) => (timer = setTimeout(() => (o.log.warn('The scheduler did not stop in time; going on'), r()), 5000)));
        await Promise.race([s.stop().catch((e) => o.log.error(e, 'Stopping the scheduler failed')), timeout]);
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}
