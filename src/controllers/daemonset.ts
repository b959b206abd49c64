// The DaemonSet controller (kube-controller-manager's pkg/controller/daemon): one pod of
// spec.template on every node that should run it, rolled to a new template node by node, and the
// status kubectl reads.
//
// One sync of a DaemonSet (its key in the queue):
//   - its ControllerRevisions (apps/v1) are claimed (orphans matching the selector adopted), the
//     one whose data is the current template patch (`{"spec":{"template":{...,"$patch":"replace"}}}`)
//     is the current revision, made when missing as `<ds>-<hash>` with the next revision number
//     (a name taken by another template raises status.collisionCount, which goes into the hash);
//     of several holding it, the highest revision is kept, the pods relabelled with its hash and
//     the others deleted;
//   - its pods (every pod of the namespace whose labels match, orphans adopted, owned pods that
//     no longer match released) are grouped by the node they are for (spec.nodeName, else the
//     node of the `metadata.name In [node]` matchFields term the controller puts in);
//   - for each node: whether it should run the pod (the template's nodeName, nodeSelector and
//     required node affinity match it and its NoSchedule/NoExecute taints are tolerated, with the
//     tolerations every daemon pod gets) and whether a pod there may keep running (only untolerated
//     NoSchedule taints): a node that should run one and has none gets one; a Failed pod is deleted
//     (a FailedDaemonPod event; again only after a back-off per node: 1s doubling to 15 minutes)
//     and made again by the next sync; more than one pod: all but the oldest (running first) are
//     deleted; pods on a node that may not keep them are deleted, and unscheduled pods for nodes
//     that no longer exist; creates in batches of 1, 2, 4, ... (a failing batch stops the rest),
//     at most 500 creates and 500 deletes a sync, with expectations as the ReplicaSet controller;
//   - when nothing was created or deleted and updateStrategy is RollingUpdate: pods of an old
//     revision are deleted (to be made again at the current one by the next sync) while the
//     unavailable pods number less than maxUnavailable (default 1; an unavailable old pod is
//     always replaced).
//   - old revisions beyond revisionHistoryLimit (default 10) that no pod uses are deleted, oldest first;
//   - status through the status subresource, when it changed.
// Events as Kubernetes writes them: SuccessfulCreate, FailedCreate, SuccessfulDelete, FailedDelete,
// FailedDaemonPod, SelectingAll.
//     With maxSurge, a node's new pod is made beside its old one (at most maxSurge at once; at
//     once where the old pod is unavailable) and the old one goes once the new one is available.
// Not done: metrics.

import { DeletedFinalStateUnknown, type Informer } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isAlreadyExists, isConflict, isNotFound, type RESTClient } from '../client/rest.js';
import { ResourceClient, objectKey, splitKey, type GroupVersionResource } from '../client/resources.js';
import { EventRecorder } from '../client/events.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { fromLabelSelector, matchLabels, type Requirement } from '../machinery/selectors.js';
import { matchesRequiredNodeAffinity, tolerationsTolerateTaint, type Taint } from '../scheduler/framework.js';
import { informerOf, withClient, type ControllerDescriptor } from './context.js';
import { PODS, type NamespacedPods } from './podwatch.js';
import { controllerRefOf, Expectations } from './expectations.js';
import { runQueueWorkers } from './workers.js';
import { OwnedPods, type PodOwnerKind } from './ownedpods.js';
import { podFromTemplate, isPodReady, isPodAvailable, BURST_REPLICAS } from './replicaset.js';
import { canonicalJSON, computeHash, scaledValue } from './deployment.js';
import { DAEMONSET_TEMPLATE_GENERATION } from '../schema/defaults/strategy.js';

export const DAEMONSETS: GroupVersionResource = { group: 'apps', version: 'v1', resource: 'daemonsets' };
export const NODES: GroupVersionResource = { group: '', version: 'v1', resource: 'nodes' };
export const CONTROLLER_REVISIONS: GroupVersionResource = { group: 'apps', version: 'v1', resource: 'controllerrevisions' };
/** the revision hash label of pods and revisions (DefaultDaemonSetUniqueLabelKey) */
export const REVISION_HASH_LABEL = 'controller-revision-hash';
/** the template generation label of pods (DaemonSetTemplateGenerationKey) */
export const TEMPLATE_GENERATION_LABEL = 'pod-template-generation';
const COMPONENT = 'daemonset-controller';
const DAEMON_SET: PodOwnerKind = { kind: 'DaemonSet', apiVersion: 'apps/v1', watchPrefix: 'daemonset', selector: (ds) => fromLabelSelector(ds?.spec?.selector) };
const BACKOFF_INITIAL_MS = 1000;
const BACKOFF_MAX_MS = 15 * 60_000;

// ---- pure helpers (pkg/controller/daemon/util) ----

/** the tolerations every daemon pod gets (AddOrUpdateDaemonPodTolerations), each replacing one with the same key and effect */
export function addDaemonPodTolerations(spec: any): void {
  const add = (key: string, effect: string) => {
    const t = { key, operator: 'Exists', effect };
    const list: any[] = Array.isArray(spec.tolerations) ? spec.tolerations : [];
    const i = list.findIndex((x) => x?.key === key && x?.effect === effect);
    if (i >= 0) list[i] = t;
    else list.push(t);
    spec.tolerations = list;
  };
  add('node.kubernetes.io/not-ready', 'NoExecute');
  add('node.kubernetes.io/unreachable', 'NoExecute');
  add('node.kubernetes.io/disk-pressure', 'NoSchedule');
  add('node.kubernetes.io/memory-pressure', 'NoSchedule');
  add('node.kubernetes.io/pid-pressure', 'NoSchedule');
  add('node.kubernetes.io/unschedulable', 'NoSchedule');
  if (spec.hostNetwork === true) add('node.kubernetes.io/network-unavailable', 'NoSchedule');
}

/** the required node affinity replaced by one term `matchFields metadata.name In [node]` (ReplaceDaemonSetPodNodeNameNodeAffinity) */
export function replaceNodeNameAffinity(affinity: any, nodeName: string): any {
  const terms = [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }];
  const out = affinity && typeof affinity === 'object' ? { ...affinity } : {};
  out.nodeAffinity = { ...(out.nodeAffinity ?? {}) };
  const req = out.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution;
  out.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = { ...(req && typeof req === 'object' ? req : {}), nodeSelectorTerms: terms };
  return out;
}

/** the template a daemon pod is made from (CreatePodTemplate): the daemon tolerations, the generation and hash labels */
export function daemonPodTemplate(ds: any, hash: string): any {
  const t = structuredClone(ds?.spec?.template ?? {});
  t.spec ??= {};
  addDaemonPodTolerations(t.spec);
  t.metadata = { ...(t.metadata ?? {}) };
  t.metadata.labels = { ...(t.metadata.labels ?? {}) };
  const gen = templateGeneration(ds);
  if (gen !== undefined) t.metadata.labels[TEMPLATE_GENERATION_LABEL] = gen;
  if (hash) t.metadata.labels[REVISION_HASH_LABEL] = hash;
  return t;
}

/** the template generation annotation of a DaemonSet (GetTemplateGeneration), if any */
export function templateGeneration(ds: any): string | undefined {
  const v = ds?.metadata?.annotations?.[DAEMONSET_TEMPLATE_GENERATION];
  return typeof v === 'string' && /^-?\d+$/.test(v) ? v : undefined;
}

function untolerated(taints: Taint[], tolerations: any[], effects: string[]): boolean {
  return taints.some((t) => effects.includes(t?.effect) && !tolerationsTolerateTaint(tolerations, t));
}

/**
 * Whether a node should run the DaemonSet's pod, and whether a pod already there may keep running
 * (NodeShouldRunDaemonPod): the template's nodeName, nodeSelector and required node affinity must
 * match it; an untolerated NoSchedule or NoExecute taint keeps a new pod off, an untolerated
 * NoExecute taint also an existing one.
 */
export function nodeShouldRunDaemonPod(ds: any, node: any): { shouldRun: boolean; shouldContinueRunning: boolean } {
  const name = node?.metadata?.name;
  const spec = structuredClone(ds?.spec?.template?.spec ?? {});
  addDaemonPodTolerations(spec);
  if (spec.nodeName && spec.nodeName !== name) return { shouldRun: false, shouldContinueRunning: false };
  if (!matchesRequiredNodeAffinity({ spec }, node)) return { shouldRun: false, shouldContinueRunning: false };
  const taints: Taint[] = Array.isArray(node?.spec?.taints) ? node.spec.taints : [];
  const tolerations: any[] = spec.tolerations;
  if (untolerated(taints, tolerations, ['NoSchedule', 'NoExecute'])) {
    return { shouldRun: false, shouldContinueRunning: !untolerated(taints, tolerations, ['NoExecute']) };
  }
  return { shouldRun: true, shouldContinueRunning: true };
}

/** the node a daemon pod is for: spec.nodeName, else its `metadata.name In [node]` matchFields term (GetTargetNodeName) */
export function targetNodeName(pod: any): string | undefined {
  if (pod?.spec?.nodeName) return pod.spec.nodeName;
  const terms = pod?.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!Array.isArray(terms)) return undefined;
  for (const term of terms) {
    for (const f of Array.isArray(term?.matchFields) ? term.matchFields : []) {
      if (f?.key === 'metadata.name' && f?.operator === 'In' && Array.isArray(f.values) && f.values.length === 1) return String(f.values[0]);
    }
  }
  return undefined;
}

/**
 * The data of a DaemonSet's ControllerRevision (getPatch): `{"spec":{"template":{...,"$patch":"replace"}}}`,
 * keys sorted as Go marshals a map, the template's metadata with creationTimestamp null as Go
 * marshals an empty ObjectMeta's.
 */
export function revisionPatch(ds: any): any {
  const template = structuredClone(ds?.spec?.template ?? {});
  template.metadata = { creationTimestamp: null, ...(template.metadata ?? {}) };
  template.$patch = 'replace';
  return sortKeys({ spec: { template } });
}

function sortKeys(v: any): any {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object') {
    const out: any = {};
    for (const k of Object.keys(v).sort()) out[k] = sortKeys(v[k]);
    return out;
  }
  return v;
}

/** a revision holds the DaemonSet's current template (Match) */
export function revisionMatches(ds: any, rev: any): boolean {
  return canonicalJSON(rev?.data ?? null) === canonicalJSON(revisionPatch(ds));
}

/** the pod has the current revision's hash or template generation (IsPodUpdated) */
export function isPodUpdated(pod: any, hash: string, generation: string | undefined): boolean {
  const labels = pod?.metadata?.labels ?? {};
  return (generation !== undefined && labels[TEMPLATE_GENERATION_LABEL] === generation) || (!!hash && labels[REVISION_HASH_LABEL] === hash);
}

/** spec.updateStrategy.rollingUpdate.maxSurge against the desired pods, rounded up (0 unless RollingUpdate; SurgeCount) */
export function maxSurgeOf(ds: any, desired: number): number {
  if ((ds?.spec?.updateStrategy?.type ?? 'RollingUpdate') !== 'RollingUpdate') return 0;
  return scaledValue(ds?.spec?.updateStrategy?.rollingUpdate?.maxSurge ?? 0, desired, true);
}

/** a rollout may surge: a second pod on a node while the old one still runs (AllowsSurge) */
export const allowsSurge = (ds: any): boolean => maxSurgeOf(ds, 1) > 0;

/** spec.updateStrategy.rollingUpdate.maxUnavailable against the desired pods, rounded up (1 when it and maxSurge come to 0) */
export function maxUnavailableOf(ds: any, desired: number): number {
  const u = scaledValue(ds?.spec?.updateStrategy?.rollingUpdate?.maxUnavailable ?? 1, desired, true);
  return desired > 0 && u === 0 && maxSurgeOf(ds, desired) === 0 ? 1 : u;
}

const created = (p: any): number => Date.parse(p?.metadata?.creationTimestamp ?? '') || 0;

/** running first, then oldest first, then by name (podByCreationTimestampAndPhase) */
export function byCreationAndPhase(a: any, b: any): number {
  const ar = a?.status?.phase === 'Running';
  const br = b?.status?.phase === 'Running';
  if (ar !== br) return ar ? -1 : 1;
  const d = created(a) - created(b);
  if (d !== 0) return d;
  return String(a?.metadata?.name ?? '').localeCompare(String(b?.metadata?.name ?? ''));
}

/** a node's new and old pod, not being deleted; ok is false when it has several of either (findUpdatedPodsOnNode) */
function updatedPodsOnNode(pods: any[], hash: string, generation: string | undefined): { newPod?: any; oldPod?: any; ok: boolean } {
  let newPod: any;
  let oldPod: any;
  for (const p of pods) {
    if (p?.metadata?.deletionTimestamp) continue;
    if (isPodUpdated(p, hash, generation)) {
      if (newPod) return { ok: false };
      newPod = p;
    } else {
      if (oldPod) return { ok: false };
      oldPod = p;
    }
  }
  return { newPod, oldPod, ok: true };
}

/**
 * A rolling update with maxSurge: a node whose old pod is unavailable gets its new pod at once, up
 * to maxSurge nodes with an available old pod get theirs alongside it, and an old pod goes once the
 * new one on its node is available. Old pods on nodes that should no longer run one go only while
 * more pods than desired are available.
 */
export function surgeRollingUpdate(
  nodeToPods: Map<string, any[]>,
  hash: string,
  generation: string | undefined,
  o: { maxSurge: number; desired: number; minReadySeconds: number; now: number; shouldRun: (node: string) => boolean },
): { deletes: any[]; creates: string[] } {
  const deletes: any[] = [];
  const notRunDeletes: any[] = [];
  const candidates: string[] = [];
  const allowed: string[] = [];
  let numSurge = 0;
  let numAvailable = 0;
  const available = (p: any) => isPodAvailable(p, o.minReadySeconds, o.now);
  for (const [nodeName, pods] of nodeToPods) {
    const { newPod, oldPod, ok } = updatedPodsOnNode(pods, hash, generation);
    if (!ok) {
      numSurge++;
      continue;
    }
    if (oldPod ? available(oldPod) : newPod && available(newPod)) numAvailable++;
    if (!oldPod) continue;
    if (!newPod) {
      if (!available(oldPod)) {
        if (!o.shouldRun(nodeName)) deletes.push(oldPod);
        else allowed.push(nodeName);
      } else if (!o.shouldRun(nodeName)) {
        notRunDeletes.push(oldPod);
      } else if (numSurge < o.maxSurge) {
        candidates.push(nodeName);
      }
      continue;
    }
    if (!available(newPod)) numSurge++;
    else deletes.push(oldPod);
  }
  const deletable = Math.min(Math.max(0, numAvailable - o.desired), notRunDeletes.length);
  deletes.push(...notRunDeletes.slice(0, deletable));
  const remaining = Math.min(Math.max(0, o.maxSurge - numSurge), candidates.length);
  return { deletes, creates: [...allowed, ...candidates.slice(0, remaining)] };
}

/**
 * The pods to delete of a node with several while a rollout may surge: beyond the oldest new and
 * the oldest old pod, all; the old one too once it is not ready or the new one is available.
 */
export function surplusWithSurge(running: any[], hash: string, minReadySeconds: number, now: number): any[] {
  const out: any[] = [];
  let oldestNew: any;
  let oldestOld: any;
  for (const p of running.slice().sort(byCreationAndPhase)) {
    if (p?.metadata?.labels?.[REVISION_HASH_LABEL] === hash) {
      if (!oldestNew) {
        oldestNew = p;
        continue;
      }
    } else if (!oldestOld) {
      oldestOld = p;
      continue;
    }
    out.push(p);
  }
  if (oldestNew && oldestOld && (!isPodReady(oldestOld) || isPodAvailable(oldestNew, minReadySeconds, now))) out.push(oldestOld);
  return out;
}

/**
 * The old pods a rolling update deletes now (rollingUpdate with maxSurge 0): on each node with one
 * pod, an old pod that is unavailable always, an available one while the unavailable pods
 * (missing, several, new but not available yet) stay under maxUnavailable.
 */
export function rollingUpdateDeletes(nodeToPods: Map<string, any[]>, hash: string, generation: string | undefined, maxUnavailable: number, minReadySeconds: number, now: number): any[] {
  let numUnavailable = 0;
  const allowed: any[] = [];
  const candidates: any[] = [];
  for (const pods of nodeToPods.values()) {
    const { newPod, oldPod, ok } = updatedPodsOnNode(pods, hash, generation);
    if (!ok || (!newPod && !oldPod) || (newPod && oldPod)) {
      numUnavailable++;
      continue;
    }
    if (newPod) {
      if (!isPodAvailable(newPod, minReadySeconds, now)) numUnavailable++;
      continue;
    }
    if (!isPodAvailable(oldPod, minReadySeconds, now)) allowed.push(oldPod);
    else if (numUnavailable < maxUnavailable) candidates.push(oldPod);
  }
  const remaining = Math.min(Math.max(0, maxUnavailable - numUnavailable), candidates.length);
  return [...allowed, ...candidates.slice(0, remaining)];
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

// ---- the controller ----

export interface DaemonSetControllerOptions {
  client: RESTClient;
  daemonSets: Informer<any>;
  nodes: Informer<any>;
  revisions: Informer<any>;
  pods: NamespacedPods;
  recorder?: EventRecorder;
  log?: Logger;
  now?: () => number;
  burstReplicas?: number;
}

const STATUS_FIELDS = ['currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady', 'observedGeneration', 'updatedNumberScheduled', 'numberAvailable', 'numberUnavailable'];

export class DaemonSetController {
  readonly queue: RateLimitingQueue<string>;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly burst: number;
  private readonly expectations: Expectations;
  private readonly owned: OwnedPods;
  private readonly backoff = new Map<string, { delay: number; at: number }>();

  constructor(private readonly o: DaemonSetControllerOptions) {
    this.log = o.log ?? nopLogger;
    this.now = o.now ?? Date.now;
    this.burst = o.burstReplicas ?? BURST_REPLICAS;
    this.expectations = new Expectations(this.now);
    this.queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'daemonset');
    this.owned = new OwnedPods({ kind: DAEMON_SET, objects: o.daemonSets, pods: o.pods, queue: this.queue, expectations: this.expectations });
    o.nodes.addEventHandler({
      add: (node) => this.onNode(undefined, node),
      update: (old, node) => this.onNode(old, node),
      delete: (d) => this.onNode(d instanceof DeletedFinalStateUnknown ? d.obj : d, undefined),
    });
    // (a revision's owner, or for an orphan the DaemonSets that select it: addHistory, updateHistory, deleteHistory)
    const onRevision = (rev: any) => {
      const ref = controllerRefOf(rev);
      const owners = ref ? [this.owned.resolve(rev.metadata.namespace, ref)].filter(Boolean) : this.owned.selecting(rev);
      for (const ds of owners) this.queue.add(objectKey(ds));
    };
    o.revisions.addEventHandler({
      add: onRevision,
      update: (_old, rev) => onRevision(rev),
      delete: (d) => onRevision(d instanceof DeletedFinalStateUnknown ? d.obj : d),
    });
  }

  // ---- events ----

  /** the DaemonSets whose view of the node changed (addNode, updateNode, deleteNode) */
  private onNode(old: any, node: any): void {
    for (const ds of this.o.daemonSets.list()) {
      if (!old || !node) {
        this.queue.add(objectKey(ds));
        continue;
      }
      const a = nodeShouldRunDaemonPod(ds, old);
      const b = nodeShouldRunDaemonPod(ds, node);
      if (a.shouldRun !== b.shouldRun || a.shouldContinueRunning !== b.shouldContinueRunning) this.queue.add(objectKey(ds));
    }
  }

  // ---- running ----

  async run(workers: number, signal: AbortSignal): Promise<void> {
    try {
      await runQueueWorkers(
        {
          name: 'daemon sets controller',
          log: this.log,
          queue: this.queue,
          informers: [this.o.daemonSets, this.o.nodes, this.o.revisions],
          sync: (k, s) => this.sync(k, s),
          onError: (k, err) => {
            this.log.error(err, 'Sync of DaemonSet failed', { DaemonSet: k });
            this.queue.addRateLimited(k);
          },
        },
        workers,
        signal,
      );
    } finally {
      this.owned.stop();
    }
  }

  private about(ds: any): any {
    return { ...ds, kind: 'DaemonSet', apiVersion: 'apps/v1' };
  }

  private controllerRef(ds: any): Record<string, unknown> {
    return { apiVersion: 'apps/v1', kind: 'DaemonSet', name: ds.metadata.name, uid: ds.metadata.uid, controller: true, blockOwnerDeletion: true };
  }

  /** one DaemonSet's sync (syncDaemonSet) */
  async sync(key: string, signal: AbortSignal): Promise<void> {
    const { namespace: ns, name } = splitKey(key);
    const ds = this.o.daemonSets.getByName(ns, name);
    if (!ds) {
      this.expectations.delete(key);
      return;
    }
    if (!(await this.o.pods.synced(ns, signal))) {
      if (signal.aborted) return;
      throw new Error(`the pods of namespace ${ns} are not listed yet`);
    }
    let selector: Requirement[] | null;
    try {
      selector = fromLabelSelector(ds.spec?.selector);
    } catch (e) {
      this.log.error(e, 'DaemonSet has an invalid selector', { DaemonSet: key });
      return;
    }
    if (!selector || selector.length === 0) {
      void this.o.recorder?.event(this.about(ds), 'Warning', 'SelectingAll', 'This daemon set is selecting all pods. A non-empty selector is required.');
      return;
    }
    if (ds.metadata.deletionTimestamp) return;
    const { cur, old } = await this.constructHistory(ds, selector, signal);
    const hash: string = cur.metadata?.labels?.[REVISION_HASH_LABEL] ?? '';
    const nodes = this.o.nodes.list();
    const pods = await this.claimPods(ds, selector, signal);
    if (!this.expectations.satisfied(key)) {
      await this.updateStatus(ds, nodes, pods, hash, signal);
      return;
    }
    let error: unknown;
    try {
      await this.manage(key, ds, nodes, pods, hash, signal);
      if (this.expectations.satisfied(key) && (ds.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate') {
        await this.rollingUpdate(key, ds, nodes, pods, hash, signal);
      }
      await this.cleanupHistory(ds, pods, old, signal);
    } catch (e) {
      error = e;
    }
    await this.updateStatus(ds, nodes, pods, hash, signal);
    if (error) throw error;
  }

  // ---- claiming ----

  private async stillOwner(ds: any, signal: AbortSignal): Promise<boolean> {
    try {
      const fresh = await new ResourceClient<any>(this.o.client, DAEMONSETS, ds.metadata.namespace).get(ds.metadata.name, { signal });
      return fresh?.metadata?.uid === ds.metadata.uid && !fresh.metadata.deletionTimestamp;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  /** adopts matching orphans and releases owned objects that no longer match (ClaimPods, ClaimControllerRevisions); the owned ones */
  private async claim(ds: any, selector: Requirement[], items: any[], gvr: GroupVersionResource, signal: AbortSignal): Promise<any[]> {
    const uid = ds.metadata.uid;
    const owned: any[] = [];
    let canAdopt: boolean | undefined;
    const patch = async (o: any, body: any): Promise<boolean> => {
      const path = new ResourceClient<any>(this.o.client, gvr, o.metadata.namespace).path(o.metadata.name);
      try {
        await this.o.client.json({ method: 'PATCH', path, body: { metadata: { ...body, uid: o.metadata.uid } }, contentType: 'application/strategic-merge-patch+json', signal });
        return true;
      } catch (e) {
        if (isNotFound(e) || isConflict(e) || (e as { code?: number }).code === 422) return false;
        throw e;
      }
    };
    for (const o of items) {
      const matches = matchLabels(selector, o?.metadata?.labels ?? {});
      const ref = controllerRefOf(o);
      if (ref) {
        if (ref.uid !== uid) continue;
        if (matches) owned.push(o);
        else await patch(o, { ownerReferences: [{ $patch: 'delete', uid }] });
        continue;
      }
      if (!matches || o.metadata?.deletionTimestamp) continue;
      canAdopt ??= await this.stillOwner(ds, signal);
      if (!canAdopt) continue;
      if (await patch(o, { ownerReferences: [this.controllerRef(ds)] })) owned.push(o);
    }
    return owned;
  }

  private claimPods(ds: any, selector: Requirement[], signal: AbortSignal): Promise<any[]> {
    return this.claim(ds, selector, this.o.pods.list(ds.metadata.namespace), PODS, signal);
  }

  /** the pods by the node they are for, leaving out terminal pods being deleted (getNodesToDaemonPods) */
  private nodeToPods(pods: any[]): Map<string, any[]> {
    const m = new Map<string, any[]>();
    for (const p of pods) {
      const phase = p?.status?.phase;
      if ((phase === 'Failed' || phase === 'Succeeded') && p?.metadata?.deletionTimestamp) continue;
      const node = targetNodeName(p);
      if (!node) continue;
      const list = m.get(node) ?? [];
      list.push(p);
      m.set(node, list);
    }
    return m;
  }

  // ---- history ----

  private revisionClient(ns: string): ResourceClient<any> {
    return new ResourceClient<any>(this.o.client, CONTROLLER_REVISIONS, ns);
  }

  /** the current revision (made when missing) and the old ones (constructHistory) */
  private async constructHistory(ds: any, selector: Requirement[], signal: AbortSignal): Promise<{ cur: any; old: any[] }> {
    const ns = ds.metadata.namespace;
    const all = this.o.revisions.list().filter((r) => r?.metadata?.namespace === ns);
    const histories = await this.claim(ds, selector, all, CONTROLLER_REVISIONS, signal);
    const current: any[] = [];
    const old: any[] = [];
    for (let h of histories) {
      if (!h.metadata?.labels?.[REVISION_HASH_LABEL]) {
        h = await this.revisionClient(ns).update({ ...h, metadata: { ...h.metadata, labels: { ...(h.metadata.labels ?? {}), [REVISION_HASH_LABEL]: h.metadata.name } } }, { signal });
      }
      (revisionMatches(ds, h) ? current : old).push(h);
    }
    const next = old.reduce((m, r) => Math.max(m, Number(r.revision ?? 0)), 0) + 1;
    let cur: any;
    if (current.length === 0) {
      cur = await this.snapshot(ds, next, signal);
    } else {
      current.sort((a, b) => Number(b.revision ?? 0) - Number(a.revision ?? 0));
      cur = current[0];
      for (const dup of current.slice(1)) {
        // (the pods first take the kept revision's hash, as Kubernetes' dedupCurHistories relabels them)
        await this.relabelPods(ds, cur.metadata.labels[REVISION_HASH_LABEL], signal);
        try {
          await this.revisionClient(ns).delete(dup.metadata.name, { signal });
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
      }
      if (Number(cur.revision ?? 0) < next) cur = await this.revisionClient(ns).update({ ...cur, revision: next }, { signal });
    }
    return { cur, old };
  }

  /** the DaemonSet's pods with another revision hash get `hash` */
  private async relabelPods(ds: any, hash: string, signal: AbortSignal): Promise<void> {
    for (const pod of this.o.pods.list(ds.metadata.namespace)) {
      if (controllerRefOf(pod)?.uid !== ds.metadata.uid || pod.metadata?.labels?.[REVISION_HASH_LABEL] === hash) continue;
      const path = new ResourceClient<any>(this.o.client, PODS, pod.metadata.namespace).path(pod.metadata.name);
      try {
        await this.o.client.json({ method: 'PATCH', path, body: { metadata: { labels: { [REVISION_HASH_LABEL]: hash } } }, contentType: 'application/strategic-merge-patch+json', signal });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
  }

  private async snapshot(ds: any, revision: number, signal: AbortSignal): Promise<any> {
    const ns = ds.metadata.namespace;
    const collisionCount = ds.status?.collisionCount;
    const hash = computeHash(ds.spec?.template, collisionCount ?? undefined);
    const name = `${ds.metadata.name}-${hash}`;
    const rev: any = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name, namespace: ns, labels: { ...(ds.spec?.template?.metadata?.labels ?? {}), [REVISION_HASH_LABEL]: hash }, ownerReferences: [this.controllerRef(ds)] },
      data: revisionPatch(ds),
      revision,
    };
    if (ds.metadata.annotations) rev.metadata.annotations = { ...ds.metadata.annotations };
    try {
      return await this.revisionClient(ns).create(rev, { signal });
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      const existing = await this.revisionClient(ns).get(name, { signal });
      if (revisionMatches(ds, existing)) return existing;
      // a hash collision: raise the collision count (read fresh, so that a stale count is not raised twice)
      const dsClient = new ResourceClient<any>(this.o.client, DAEMONSETS, ns);
      const fresh = await dsClient.get(ds.metadata.name, { signal });
      if ((fresh.status?.collisionCount ?? null) !== (collisionCount ?? null)) {
        throw new Error(`found a stale collision count (${collisionCount ?? 'nil'}, expected ${fresh.status?.collisionCount ?? 'nil'}) of DaemonSet "${ds.metadata.name}" while processing; will retry until it is updated`);
      }
      await dsClient.updateStatus({ ...fresh, status: { ...(fresh.status ?? {}), collisionCount: (fresh.status?.collisionCount ?? 0) + 1 } }, { signal });
      this.log.v(2).info('Found a hash collision for DaemonSet - bumping collisionCount to resolve it', { daemonset: objectKey(ds), collisionCount: (fresh.status?.collisionCount ?? 0) + 1 });
      throw e;
    }
  }

  /** old revisions beyond revisionHistoryLimit that no pod uses, oldest first (cleanupHistory) */
  private async cleanupHistory(ds: any, pods: any[], old: any[], signal: AbortSignal): Promise<void> {
    const keep = Number(ds.spec?.revisionHistoryLimit ?? 10);
    let toKill = old.length - keep;
    if (toKill <= 0) return;
    const live = new Set<string>();
    for (const list of this.nodeToPods(pods).values()) for (const p of list) if (p.metadata?.labels?.[REVISION_HASH_LABEL]) live.add(p.metadata.labels[REVISION_HASH_LABEL]);
    for (const h of old.slice().sort((a, b) => Number(a.revision ?? 0) - Number(b.revision ?? 0))) {
      if (toKill <= 0) break;
      if (live.has(h.metadata?.labels?.[REVISION_HASH_LABEL])) continue;
      try {
        await this.revisionClient(ds.metadata.namespace).delete(h.metadata.name, { signal });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      toKill--;
    }
  }

  // ---- pods on nodes (manage, podsShouldBeOnNode) ----

  private inBackoff(key: string, now: number): number {
    const b = this.backoff.get(key);
    if (!b) return 0;
    const left = b.at + b.delay - now;
    return left > 0 ? left : 0;
  }

  private nextBackoff(key: string, now: number): void {
    // (entries idle for twice the longest delay are forgotten, as the back-off's GC does)
    for (const [k, e] of this.backoff) if (now - e.at > 2 * BACKOFF_MAX_MS) this.backoff.delete(k);
    const b = this.backoff.get(key);
    if (!b || now - b.at > 2 * BACKOFF_MAX_MS) this.backoff.set(key, { delay: BACKOFF_INITIAL_MS, at: now });
    else this.backoff.set(key, { delay: Math.min(b.delay * 2, BACKOFF_MAX_MS), at: now });
  }

  private async manage(key: string, ds: any, nodes: any[], pods: any[], hash: string, signal: AbortSignal): Promise<void> {
    const byNode = this.nodeToPods(pods);
    const needing: string[] = [];
    const toDelete: any[] = [];
    const now = this.now();
    const known = new Set<string>();
    for (const node of nodes) {
      const nodeName: string = node.metadata.name;
      known.add(nodeName);
      const { shouldRun, shouldContinueRunning } = nodeShouldRunDaemonPod(ds, node);
      const daemonPods = byNode.get(nodeName) ?? [];
      if (shouldRun && daemonPods.length === 0) {
        needing.push(nodeName);
      } else if (shouldContinueRunning) {
        const running: any[] = [];
        for (const p of daemonPods) {
          if (p.metadata?.deletionTimestamp) continue;
          const phase = p.status?.phase;
          if (phase === 'Failed') {
            const bkey = `${ds.metadata.uid}/${nodeName}`;
            const wait = this.inBackoff(bkey, now);
            if (wait > 0) {
              this.log.v(4).info('Deleting failed pod on node has been limited by backoff', { pod: objectKey(p), node: nodeName, delay: wait });
              this.queue.addAfter(key, wait);
              continue;
            }
            this.nextBackoff(bkey, now);
            const msg = `Found failed daemon pod ${p.metadata.namespace}/${p.metadata.name} on node ${nodeName}, will try to kill it`;
            this.log.v(2).info(msg);
            void this.o.recorder?.event(this.about(ds), 'Warning', 'FailedDaemonPod', msg);
            toDelete.push(p);
          } else if (phase === 'Succeeded') {
            this.log.v(2).info(`Found succeeded daemon pod ${p.metadata.namespace}/${p.metadata.name} on node ${nodeName}, will try to delete it`);
            toDelete.push(p);
          } else {
            running.push(p);
          }
        }
        if (running.length > 1) toDelete.push(...(allowsSurge(ds) ? surplusWithSurge(running, hash, Number(ds.spec?.minReadySeconds ?? 0), now) : running.sort(byCreationAndPhase).slice(1)));
      } else {
        for (const p of daemonPods) if (!p.metadata?.deletionTimestamp) toDelete.push(p);
      }
    }
    // (unscheduled pods for nodes that are gone: scheduled ones are the pod garbage collector's)
    for (const [nodeName, list] of byNode) {
      if (known.has(nodeName)) continue;
      for (const p of list) if (!p.spec?.nodeName && !p.metadata?.deletionTimestamp) toDelete.push(p);
    }
    await this.syncNodes(key, ds, toDelete, needing, hash, signal);
  }

  /** creates a pod for each node needing one, deletes the pods given (syncNodes) */
  private async syncNodes(key: string, ds: any, toDelete: any[], nodesNeeding: string[], hash: string, signal: AbortSignal): Promise<void> {
    const creates = nodesNeeding.slice(0, this.burst);
    const deletes = toDelete.slice(0, this.burst);
    if (creates.length === 0 && deletes.length === 0) return;
    this.expectations.expect(key, creates.length, deletes.map(objectKey));
    const template = daemonPodTemplate(ds, hash);
    let error: unknown;
    let made = 0;
    let next = 0;
    for (let batch = 1; next < creates.length && !error; batch *= 2) {
      const these = creates.slice(next, next + batch);
      next += these.length;
      const results = await Promise.allSettled(these.map((n) => this.createPod(ds, template, n, signal)));
      for (const r of results) {
        if (r.status === 'fulfilled') made++;
        else error ??= r.reason;
      }
    }
    for (let i = made; i < creates.length; i++) this.expectations.creationObserved(key);
    const results = await Promise.allSettled(deletes.map((p) => this.deletePod(ds, p, signal)));
    results.forEach((r, i) => {
      if (r.status === 'rejected') {
        this.expectations.deletionObserved(key, objectKey(deletes[i]));
        error ??= r.reason;
      }
    });
    if (error) throw error;
  }

  private async createPod(ds: any, template: any, nodeName: string, signal: AbortSignal): Promise<void> {
    const t = structuredClone(template);
    t.spec.affinity = replaceNodeNameAffinity(t.spec.affinity, nodeName);
    const pod = podFromTemplate({ metadata: ds.metadata, spec: { template: t } }, this.controllerRef(ds));
    try {
      const made = await new ResourceClient<any>(this.o.client, PODS, ds.metadata.namespace).create(pod, { signal });
      void this.o.recorder?.event(this.about(ds), 'Normal', 'SuccessfulCreate', `Created pod: ${made.metadata.name}`);
    } catch (e) {
      if (!/is being terminated/.test(messageOf(e))) void this.o.recorder?.event(this.about(ds), 'Warning', 'FailedCreate', `Error creating: ${messageOf(e)}`);
      throw e;
    }
  }

  private async deletePod(ds: any, pod: any, signal: AbortSignal): Promise<void> {
    try {
      await new ResourceClient<any>(this.o.client, PODS, pod.metadata.namespace).delete(pod.metadata.name, { preconditions: { uid: pod.metadata.uid }, signal });
      void this.o.recorder?.event(this.about(ds), 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`);
    } catch (e) {
      if (isNotFound(e)) return;
      void this.o.recorder?.event(this.about(ds), 'Warning', 'FailedDelete', `Error deleting: ${messageOf(e)}`);
      throw e;
    }
  }

  // ---- rolling update ----

  private desiredNodes(ds: any, nodes: any[]): number {
    return nodes.filter((n) => nodeShouldRunDaemonPod(ds, n).shouldRun).length;
  }

  private async rollingUpdate(key: string, ds: any, nodes: any[], pods: any[], hash: string, signal: AbortSignal): Promise<void> {
    const desired = this.desiredNodes(ds, nodes);
    const maxSurge = maxSurgeOf(ds, desired);
    const minReadySeconds = Number(ds.spec?.minReadySeconds ?? 0);
    if (maxSurge > 0) {
      const byName = new Map(nodes.map((n) => [n.metadata.name, n]));
      const shouldRun = (name: string) => byName.has(name) && nodeShouldRunDaemonPod(ds, byName.get(name)).shouldRun;
      const { deletes, creates } = surgeRollingUpdate(this.nodeToPods(pods), hash, templateGeneration(ds), { maxSurge, desired, minReadySeconds, now: this.now(), shouldRun });
      await this.syncNodes(key, ds, deletes, creates, hash, signal);
      return;
    }
    const maxUnavailable = maxUnavailableOf(ds, desired);
    const victims = rollingUpdateDeletes(this.nodeToPods(pods), hash, templateGeneration(ds), maxUnavailable, minReadySeconds, this.now());
    if (victims.length) this.log.v(4).info('Marking old pods for deletion', { daemonset: key, pods: victims.map((p) => p.metadata.name) });
    await this.syncNodes(key, ds, victims, [], hash, signal);
  }

  // ---- status ----

  private async updateStatus(ds: any, nodes: any[], pods: any[], hash: string, signal: AbortSignal): Promise<void> {
    const byNode = this.nodeToPods(pods);
    const min = Number(ds.spec?.minReadySeconds ?? 0);
    const now = this.now();
    const generation = templateGeneration(ds);
    let desired = 0;
    let current = 0;
    let mis = 0;
    let ready = 0;
    let available = 0;
    let updated = 0;
    for (const node of nodes) {
      const { shouldRun } = nodeShouldRunDaemonPod(ds, node);
      const list = byNode.get(node.metadata.name) ?? [];
      if (shouldRun) {
        desired++;
        if (!list.length) continue;
        current++;
        const pod = list.slice().sort((a, b) => created(a) - created(b))[0];
        if (isPodReady(pod)) {
          ready++;
          if (isPodAvailable(pod, min, now)) available++;
        }
        if (isPodUpdated(pod, hash, generation)) updated++;
      } else if (list.length) {
        mis++;
      }
    }
    const status: any = {
      ...(ds.status ?? {}),
      currentNumberScheduled: current,
      numberMisscheduled: mis,
      desiredNumberScheduled: desired,
      numberReady: ready,
      observedGeneration: ds.metadata.generation,
      updatedNumberScheduled: updated,
      numberAvailable: available,
      numberUnavailable: desired - available,
    };
    const client = new ResourceClient<any>(this.o.client, DAEMONSETS, ds.metadata.namespace);
    let cur = ds;
    for (let attempt = 0; ; attempt++) {
      if (cur.status && STATUS_FIELDS.every((f) => (cur.status[f] ?? 0) === (status[f] ?? 0))) break;
      try {
        await client.updateStatus({ ...cur, status: { ...(cur.status ?? {}), ...Object.fromEntries(STATUS_FIELDS.map((f) => [f, status[f]])) } }, { signal });
        break;
      } catch (e) {
        if (isNotFound(e)) return;
        if (!isConflict(e) || attempt > 0) throw e;
        cur = await client.get(cur.metadata.name, { signal });
        status.observedGeneration = cur.metadata.generation;
      }
    }
    if (min > 0 && ready !== available) this.queue.addAfter(objectKey(ds), min * 1000);
  }
}

export const daemonSetControllerDescriptor: ControllerDescriptor = {
  name: 'daemonset-controller',
  async run(ctx) {
    // (the client of the service account daemon-set-controller under --use-service-account-credentials, as kube-controller-manager's)
    await withClient(ctx, 'daemon-set-controller', undefined, async (client) => {
      const c = new DaemonSetController({
        client,
        daemonSets: informerOf<any>(ctx, DAEMONSETS),
        nodes: informerOf<any>(ctx, NODES),
        revisions: informerOf<any>(ctx, CONTROLLER_REVISIONS),
        pods: ctx.pods,
        recorder: new EventRecorder(client, COMPONENT, ctx.log),
        log: ctx.log,
      });
      await c.run(ctx.options.concurrentDaemonSetSyncs, ctx.signal);
    });
  },
};
