// The Job controller (kube-controller-manager's pkg/controller/job, as 1.33 behaves): runs a
// Job's pods from spec.template until enough of them succeed, or the Job fails.
//
// One sync of a Job (its key in the queue):
//   - a finished Job (condition Complete or Failed True) is left alone; its pods still holding
//     the tracking finalizer lose it, and the pod watch of its namespace is released;
//   - the pods it controls are claimed (orphans matching the selector adopted with the tracking
//     finalizer, owned pods that no longer match released);
//   - pods that finished since the last sync are counted through status.uncountedTerminatedPods:
//     their uids are written there first, then their finalizer `batch.kubernetes.io/job-tracking`
//     is removed, then they move into status.succeeded / status.failed. A crash between the
//     steps never counts a pod twice nor loses one;
//   - the Job fails (interim condition FailureTarget, then Failed once no pod is left running or
//     uncounted) when more pods failed than spec.backoffLimit allows, or when it ran longer than
//     spec.activeDeadlineSeconds; its active pods are then deleted;
//   - a failed pod matching a FailJob rule of spec.podFailurePolicy fails the Job the same way
//     (reason PodFailurePolicy); one matching an Ignore rule is not counted;
//   - otherwise pods are created (slow-start batches, after the failure backoff) or deleted
//     toward min(parallelism, completions - succeeded); a suspended Job has none (condition
//     Suspended); enough successes, or a rule of an Indexed Job's spec.successPolicy, make it
//     SuccessCriteriaMet, then Complete once no pod is left running or uncounted.
// spec.podReplacementPolicy Failed (implied by a podFailurePolicy): a pod being deleted is
// neither counted as failed nor replaced until it has failed. The Job-wide pod backoff (10 s
// doubled per failure since the last success, at most 6 min) is kept in memory: a restarted
// controller starts it afresh.
// Indexed Jobs give each pod a completion index (annotation and label
// batch.kubernetes.io/job-completion-index, hostname <job>-<index>) and record the succeeded
// ones in status.completedIndexes ("0-2,4"). With spec.backoffLimitPerIndex each index has its
// own failure count (annotation batch.kubernetes.io/job-index-failure-count, carried to the pod
// that runs the index again) and backoff; an index past its limit (or matched by a FailIndex
// rule) goes into status.failedIndexes, and the Job fails with FailedIndexes once every index has
// finished, or with MaxFailedIndexesExceeded past spec.maxFailedIndexes.
//
// A pod holding the tracking finalizer that no unfinished Job controls (an orphan: its Job deleted
// with propagationPolicy Orphan, the default for Jobs over the API) loses the finalizer in a sync
// of its own (queue key `orphan-pod:<namespace>/<name>`).
//
// Pods come from the shared per-namespace pod watch (podwatch.ts), held while the namespace has
// an unfinished Job. No node agent runs them: they move through their phases by whatever writes
// their status.

import { DeletedFinalStateUnknown, type Informer } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isConflict, isNotFound, type RESTClient } from '../client/rest.js';
import { ResourceClient, objectKey, splitKey } from '../client/resources.js';
import { EventRecorder } from '../client/events.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { fromLabelSelector, matchLabels, type Requirement } from '../machinery/selectors.js';
import { informerOf, withClient, type ControllerDescriptor } from './context.js';
import { PODS, type NamespacedPods } from './podwatch.js';
import { isActive, isPodReady, podFromTemplate, podsToDelete } from './replicaset.js';
import { controllerRefOf, Expectations } from './expectations.js';
import { runQueueWorkers } from './workers.js';

export const JOBS = { group: 'batch', version: 'v1', resource: 'jobs' };
/** the finalizer that keeps a finished pod until the Job has counted it */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
/** the completion index of an Indexed Job's pod (annotation and label) */
export const COMPLETION_INDEX = 'batch.kubernetes.io/job-completion-index';
/** on a pod of a Job with backoffLimitPerIndex: the failures of its index before it (counted, and ignored by the pod failure policy) */
export const INDEX_FAILURE_COUNT = 'batch.kubernetes.io/job-index-failure-count';
export const INDEX_IGNORED_FAILURE_COUNT = 'batch.kubernetes.io/job-index-ignored-failure-count';
/** the environment variable an Indexed Job's containers read their index from */
const COMPLETION_INDEX_ENV = 'JOB_COMPLETION_INDEX';
/** at most this many pods created or deleted by one sync (MaxPodCreateDeletePerSync) */
const MAX_POD_CREATE_DELETE_PER_SYNC = 500;
/** at most this many pods counted by one sync (MaxUncountedPods) */
const MAX_UNCOUNTED_PODS = 500;
/** the first pod backoff after a failure, doubled per further failure up to the maximum */
const POD_FAILURE_BACKOFF_MS = 10_000;
const MAX_POD_FAILURE_BACKOFF_MS = 360_000;
/** a generated name's prefix is cut to this length by the API server */
const MAX_GENERATED_NAME_PREFIX = 58;
const COMPONENT = 'job-controller';

/** a condition about to be set on the Job */
interface Cond {
  type: string;
  reason: string;
  message: string;
}

/** what one sync knows about its Job (syncJobCtx) */
interface SyncCtx {
  key: string;
  job: any;
  /** the Job's status being built (a copy of the cached one) */
  status: any;
  pods: any[];
  active: any[];
  ready: number;
  terminating: number;
  succeeded: number;
  failed: number;
  uncountedSucceeded: Set<string>;
  uncountedFailed: Set<string>;
  /** pods whose finalizer removal is in flight (not seen by the watch yet) */
  rmExpected: Set<string>;
  finished?: Cond;
  /** Indexed: the succeeded indexes of status.completedIndexes, and with the pods' */
  prevSucceededIndexes?: number[];
  succeededIndexes?: number[];
  /** backoffLimitPerIndex: the failed indexes (status.failedIndexes and the pods'), and per index the failed pod to be replaced, whose finalizer stays until it is */
  failedIndexes?: number[];
  delayed?: Map<number, any>;
  newFailed: any[];
  newSucceeded: any[];
}

/** failures since the last success and when the last one happened (backoffRecord) */
interface Backoff {
  failures: number;
  lastFailure: number;
}

const isJobRef = (ref: any): boolean => ref?.kind === 'Job' && typeof ref?.apiVersion === 'string' && ref.apiVersion.split('/')[0] === 'batch';
/** the queue key of an orphan pod that holds the tracking finalizer (Job keys hold no ':') */
const ORPHAN_POD = 'orphan-pod:';

const hasFinalizer = (pod: any): boolean => Array.isArray(pod?.metadata?.finalizers) && pod.metadata.finalizers.includes(JOB_TRACKING_FINALIZER);
const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const findCondition = (status: any, type: string): any => (Array.isArray(status?.conditions) ? status.conditions.find((c: any) => c?.type === type) : undefined);

/** the True Complete or Failed condition of a finished Job */
export function jobFinishedCondition(job: any): any {
  return ['Complete', 'Failed'].map((t) => findCondition(job?.status, t)).find((c) => c?.status === 'True');
}

/** a Job with condition Complete or Failed True (IsJobFinished) */
export function isJobFinished(job: any): boolean {
  return jobFinishedCondition(job) !== undefined;
}

const isSuspended = (job: any): boolean => job?.spec?.suspend === true;
const isIndexed = (job: any): boolean => job?.spec?.completionMode === 'Indexed';
/** an Indexed Job whose indexes each have their own backoff limit */
const hasPerIndexLimit = (job: any): boolean => isIndexed(job) && typeof job?.spec?.backoffLimitPerIndex === 'number';
/** podReplacementPolicy Failed (or a podFailurePolicy): terminating pods are not replaced yet */
const onlyReplaceFailed = (job: any): boolean => job?.spec?.podReplacementPolicy === 'Failed' || !!job?.spec?.podFailurePolicy;

/** a pod that counts as failed: phase Failed, or being deleted before it succeeded (isPodFailed) */
function isPodFailed(pod: any, job: any): boolean {
  if (pod?.status?.phase === 'Failed') return true;
  if (onlyReplaceFailed(job)) return false;
  return !!pod?.metadata?.deletionTimestamp && pod?.status?.phase !== 'Succeeded';
}

/** being deleted and not finished (CountTerminatingPods) */
const isTerminating = (pod: any): boolean => !!pod?.metadata?.deletionTimestamp && pod?.status?.phase !== 'Succeeded' && pod?.status?.phase !== 'Failed';

/** a condition as Kubernetes writes it: both times now */
function newCondition(type: string, status: string, reason: string, message: string, now: number): any {
  const t = rfc3339(now);
  return { type, status, lastProbeTime: t, lastTransitionTime: t, reason, message };
}

/** sets a condition's status, reason and message (ensureJobConditionStatus); whether it changed */
function ensureCondition(status: any, type: string, value: string, reason: string, message: string, now: number): boolean {
  const list: any[] = Array.isArray(status.conditions) ? status.conditions : [];
  const i = list.findIndex((c) => c?.type === type);
  if (i >= 0) {
    const c = list[i];
    if (c.status === value && (c.reason ?? '') === reason && (c.message ?? '') === message) return false;
    list[i] = newCondition(type, value, reason, message, now);
    status.conditions = list;
    return true;
  }
  if (value === 'False') return false;
  status.conditions = [...list, newCondition(type, value, reason, message, now)];
  return true;
}

// ---- completion indexes ----

/** a pod's completion index from its annotation; -1 when absent or invalid */
export function completionIndexOf(pod: any): number {
  const v = pod?.metadata?.annotations?.[COMPLETION_INDEX];
  if (typeof v !== 'string' || !/^(0|[1-9][0-9]*)$/.test(v)) return -1;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : -1;
}

/** "0-2,4" → [0,1,2,4], keeping those below `limit` */
export function parseIndexes(s: string | undefined, limit: number): number[] {
  const out = new Set<number>();
  for (const part of (s ?? '').split(',')) {
    if (!part) continue;
    const [a, b] = part.split('-');
    const first = Number(a);
    const last = b === undefined ? first : Number(b);
    if (!Number.isInteger(first) || !Number.isInteger(last)) continue;
    for (let i = first; i <= last && i < limit; i++) out.add(i);
  }
  return [...out].sort((x, y) => x - y);
}

/** sorted indexes in Kubernetes' interval form: runs of consecutive indexes as "first-last" */
export function formatIndexes(indexes: number[]): string {
  const sorted = [...new Set(indexes)].sort((x, y) => x - y);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** `<job>-<index>-`, the job name cut so that the prefix fits a generated name (podGenerateNameWithIndex) */
function generateNameWithIndex(job: string, index: number): string {
  const appendix = `-${index}-`;
  const prefix = job + appendix;
  return prefix.length > MAX_GENERATED_NAME_PREFIX ? job.slice(0, MAX_GENERATED_NAME_PREFIX - appendix.length) + appendix : prefix;
}

/**
 * When a finished pod finished (getFinishedTime): its Ready condition's turn to False, else its
 * last container's termination, else its deletion, else (no node agent wrote any of these) its
 * creation.
 */
function finishTime(pod: any, now: number): number {
  const conds: any[] = Array.isArray(pod?.status?.conditions) ? pod.status.conditions : [];
  const notReady = Date.parse(conds.find((x) => x?.type === 'Ready' && x?.status === 'False')?.lastTransitionTime ?? '');
  if (Number.isFinite(notReady)) return notReady;
  let at = -Infinity;
  for (const s of Array.isArray(pod?.status?.containerStatuses) ? pod.status.containerStatuses : []) {
    const t = Date.parse(s?.state?.terminated?.finishedAt ?? '');
    if (Number.isFinite(t) && t > at) at = t;
  }
  if (Number.isFinite(at)) return at;
  for (const t of [pod?.metadata?.deletionTimestamp, pod?.metadata?.creationTimestamp]) {
    const ms = Date.parse(t ?? '');
    if (Number.isFinite(ms)) return ms;
  }
  return now;
}

export interface JobControllerOptions {
  client: RESTClient;
  jobs: Informer<any>;
  pods: NamespacedPods;
  recorder?: EventRecorder;
  log?: Logger;
  now?: () => number;
}

export class JobController {
  readonly queue: RateLimitingQueue<string>;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly expectations: Expectations;
  /** per Job key: the uids of pods whose finalizer removal is not observed yet */
  private readonly rmFinalizers = new Map<string, Set<string>>();
  private readonly backoff = new Map<string, Backoff>();
  /** the Jobs (by key) for which the pods of their namespace are watched */
  private readonly watched = new Set<string>();
  /**
   * per Job key: the resourceVersion our last status write replaced. While the cache still shows
   * it, a sync would only conflict; the watch event of the write queues the Job again.
   */
  private readonly superseded = new Map<string, string>();
  private podHandler?: { remove(): void };

  constructor(private readonly o: JobControllerOptions) {
    this.log = o.log ?? nopLogger;
    this.now = o.now ?? Date.now;
    this.expectations = new Expectations(this.now);
    this.queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'job');
    o.jobs.addEventHandler({
      add: (job) => this.onJob(job),
      update: (_old, job) => this.onJob(job),
      // (the sync of a Job that is gone releases its pods' finalizers and the pod watch)
      delete: (d) => this.queue.add(objectKey(d instanceof DeletedFinalStateUnknown ? d.obj : d)),
    });
    this.podHandler = o.pods.addEventHandler({
      add: (pod) => this.onPodAdd(pod),
      update: (old, pod) => this.onPodUpdate(old, pod),
      delete: (d) => this.onPodDelete(d instanceof DeletedFinalStateUnknown ? d.obj : d),
    });
  }

  // ---- events ----

  private onJob(job: any): void {
    const key = objectKey(job);
    if (!isJobFinished(job) && !this.watched.has(key)) {
      this.watched.add(key);
      this.o.pods.watch(job.metadata.namespace, `job:${key}`);
    }
    this.queue.add(key);
  }

  private unwatch(key: string): void {
    if (!this.watched.delete(key)) return;
    this.o.pods.unwatch(splitKey(key).namespace, `job:${key}`);
  }

  /** the cached Job a controller reference names (same uid) */
  private resolve(namespace: string, ref: any): any {
    if (!isJobRef(ref)) return undefined;
    const job = this.o.jobs.getByName(namespace, ref.name);
    return job?.metadata?.uid === ref.uid ? job : undefined;
  }

  /** the key of the Job a pod belongs to: its controller's, or (an orphan) the first selecting it */
  private ownerKeys(pod: any): string[] {
    const ns = pod?.metadata?.namespace;
    const ref = controllerRefOf(pod);
    if (ref) {
      // (a Job gone or replaced: its name's sync releases the pod's finalizer)
      return isJobRef(ref) ? [`${ns}/${ref.name}`] : [];
    }
    const labels = pod?.metadata?.labels ?? {};
    const out: string[] = [];
    for (const job of this.o.jobs.list()) {
      if (job?.metadata?.namespace !== ns || isJobFinished(job)) continue;
      const sel = selectorOf(job);
      if (sel && sel.length && matchLabels(sel, labels)) out.push(objectKey(job));
    }
    return out;
  }

  private onPodAdd(pod: any): void {
    if (pod?.metadata?.deletionTimestamp) {
      this.onPodDelete(pod);
      return;
    }
    const ref = controllerRefOf(pod);
    if (ref && this.resolve(pod.metadata.namespace, ref)) this.expectations.creationObserved(`${pod.metadata.namespace}/${ref.name}`);
    if (!ref && hasFinalizer(pod)) this.queue.add(ORPHAN_POD + objectKey(pod));
    for (const k of this.ownerKeys(pod)) this.queue.add(k);
  }

  private onPodUpdate(old: any, pod: any): void {
    if (old?.metadata?.resourceVersion === pod?.metadata?.resourceVersion) return;
    const ref = controllerRefOf(pod);
    const key = ref ? `${pod.metadata.namespace}/${ref.name}` : undefined;
    if (pod?.metadata?.deletionTimestamp && !old?.metadata?.deletionTimestamp && key) this.expectations.deletionObserved(key, objectKey(pod));
    if (key && !hasFinalizer(pod)) this.rmFinalizers.get(key)?.delete(pod.metadata.uid);
    const oldRef = controllerRefOf(old);
    if (oldRef && isJobRef(oldRef) && oldRef.uid !== ref?.uid) this.queue.add(`${old.metadata.namespace}/${oldRef.name}`);
    // (an orphan, say of a Job deleted with propagationPolicy Orphan: nothing would release it)
    if (!ref && hasFinalizer(pod)) this.queue.add(ORPHAN_POD + objectKey(pod));
    for (const k of this.ownerKeys(pod)) this.queue.add(k);
  }

  private onPodDelete(pod: any): void {
    const ref = controllerRefOf(pod);
    if (!ref || !isJobRef(ref)) return;
    const key = `${pod.metadata.namespace}/${ref.name}`;
    this.expectations.deletionObserved(key, objectKey(pod));
    this.rmFinalizers.get(key)?.delete(pod?.metadata?.uid);
    this.queue.add(key);
  }

  // ---- expectations ----

  private forget(key: string): void {
    this.superseded.delete(key);
    this.expectations.delete(key);
    this.rmFinalizers.delete(key);
    this.backoff.delete(key);
  }

  // ---- running ----

  async run(workers: number, signal: AbortSignal): Promise<void> {
    try {
      await runQueueWorkers(
        {
          name: 'job controller',
          log: this.log,
          queue: this.queue,
          informers: [this.o.jobs],
          sync: (k, s) => this.sync(k, s),
          onError: (k, err) => {
            // (a write on a Job changed meanwhile: tried again on the newer one, as any failure)
            if (isConflict(err)) this.log.v(4).info('Job changed during its sync', { job: k });
            else this.log.error(err, 'Sync of Job failed', { job: k });
            this.queue.addRateLimited(k);
          },
        },
        workers,
        signal,
      );
    } finally {
      this.podHandler?.remove();
      for (const key of [...this.watched]) this.unwatch(key);
    }
  }

  /** one Job's sync (syncJob) */
  async sync(key: string, signal: AbortSignal): Promise<void> {
    if (key.startsWith(ORPHAN_POD)) return this.syncOrphanPod(key.slice(ORPHAN_POD.length), signal);
    const { namespace: ns, name } = splitKey(key);
    const job = this.o.jobs.getByName(ns, name);
    if (job && this.superseded.get(key) === job.metadata.resourceVersion) return;
    this.superseded.delete(key);
    if (!job || isJobFinished(job)) {
      await this.releaseFinished(key, job, signal);
      return;
    }
    // (a Job managed by another controller: spec.managedBy other than ours)
    const managedBy = job.spec?.managedBy;
    if (managedBy !== undefined && managedBy !== 'kubernetes.io/job-controller') return;
    if (!this.watched.has(key)) this.onJob(job);
    if (!(await this.o.pods.synced(ns, signal))) {
      if (signal.aborted) return;
      throw new Error(`the pods of namespace ${ns} are not listed yet`);
    }
    const mode = job.spec?.completionMode;
    if (mode !== undefined && mode !== 'NonIndexed' && mode !== 'Indexed') {
      void this.event(job, 'Warning', 'UnknownCompletionMode', 'Skipped Job sync because completion mode is unknown');
      return;
    }
    const satisfied = this.expectations.satisfied(key);
    const pods = await this.claim(job, signal);
    const c = this.context(key, job, pods);
    this.decideFailure(c);
    let manageErr: unknown;
    let suspendChanged = false;
    let activeCount = c.active.length;
    if (c.finished) {
      const { deleted, deletedReady, error } = await this.deleteActive(job, c.active, signal);
      if (deleted !== activeCount || !satisfied) c.finished = undefined;
      activeCount -= deleted;
      c.terminating += deleted;
      c.ready -= deletedReady;
      manageErr = error;
    } else {
      let managed = false;
      if (satisfied && !job.metadata.deletionTimestamp) {
        try {
          activeCount = await this.manage(c, signal);
        } catch (e) {
          manageErr = e;
          activeCount = (e as { active?: number }).active ?? activeCount;
        }
        managed = true;
      }
      const completions = job.spec?.completions;
      const complete = completions === undefined || completions === null ? c.succeeded > 0 && activeCount === 0 : c.succeeded >= completions && activeCount === 0;
      if (complete) c.finished = { type: 'SuccessCriteriaMet', reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' };
      else if (managed) suspendChanged = this.updateSuspended(c);
    }
    c.status.active = activeCount;
    c.status.ready = c.ready;
    c.status.terminating = c.terminating;
    const cached = job.status ?? {};
    const needsFlush = suspendChanged || (cached.active ?? 0) !== activeCount || cached.ready !== c.ready || cached.terminating !== c.terminating || cached.startTime !== c.status.startTime;
    await this.trackStatus(c, needsFlush, signal);
    if (manageErr) throw manageErr;
  }

  /** the sync's view of the Job and its pods, with the counts so far */
  private context(key: string, job: any, pods: any[]): SyncCtx {
    const status = structuredClone(job.status ?? {});
    const uncounted = status.uncountedTerminatedPods ?? {};
    status.uncountedTerminatedPods = uncounted;
    const active = pods.filter(isActive);
    const c: SyncCtx = {
      key,
      job,
      status,
      pods,
      active,
      ready: active.filter(isPodReady).length,
      terminating: pods.filter(isTerminating).length,
      succeeded: 0,
      failed: 0,
      uncountedSucceeded: new Set(uncounted.succeeded ?? []),
      uncountedFailed: new Set(uncounted.failed ?? []),
      rmExpected: new Set(this.rmFinalizers.get(key) ?? []),
      newFailed: [],
      newSucceeded: [],
    };
    // the finished pods not counted yet (getNewFinishedPods)
    for (const p of pods) {
      const uid = p.metadata.uid;
      if (!hasFinalizer(p) || c.rmExpected.has(uid)) continue;
      if (p.status?.phase === 'Succeeded' && !c.uncountedSucceeded.has(uid)) c.newSucceeded.push(p);
      else if (isPodFailed(p, job) && !c.uncountedFailed.has(uid)) c.newFailed.push(p);
    }
    c.succeeded = (status.succeeded ?? 0) + c.newSucceeded.length + c.uncountedSucceeded.size;
    c.failed = (status.failed ?? 0) + c.newFailed.filter((p) => matchPodFailurePolicy(job, p).count).length + c.uncountedFailed.size;
    // the first start (a suspended Job has not started)
    if (!status.startTime && !isSuspended(job)) status.startTime = rfc3339(this.now());
    if (isIndexed(job)) {
      const completions = Number(job.spec?.completions ?? 0);
      c.prevSucceededIndexes = parseIndexes(status.completedIndexes, completions);
      const fresh = pods.filter((p) => p.status?.phase === 'Succeeded' && hasFinalizer(p)).map(completionIndexOf).filter((i) => i >= 0 && i < completions);
      c.succeededIndexes = [...new Set([...c.prevSucceededIndexes, ...fresh])].sort((a, b) => a - b);
      c.succeeded = c.succeededIndexes.length;
      if (hasPerIndexLimit(job)) {
        const failedNow = pods.filter((p) => hasFinalizer(p) && isIndexFailed(job, p)).map(completionIndexOf).filter((i) => i >= 0 && i < completions);
        c.failedIndexes = [...new Set([...parseIndexes(status.failedIndexes, completions), ...failedNow])].sort((a, b) => a - b);
      }
    }
    return c;
  }

  /** the failure the Job has come to, if any: a FailureTarget already set, the backoff limit, the deadline */
  private decideFailure(c: SyncCtx): void {
    const job = c.job;
    if (findCondition(c.status, 'SuccessCriteriaMet')?.status === 'True') {
      const scm = findCondition(c.status, 'SuccessCriteriaMet');
      c.finished = { type: 'SuccessCriteriaMet', reason: scm.reason ?? '', message: scm.message ?? '' };
      return;
    }
    const target = findCondition(c.status, 'FailureTarget');
    if (target?.status === 'True') {
      c.finished = { type: 'Failed', reason: target.reason ?? '', message: target.message ?? '' };
      return;
    }
    // (a failed pod matching a FailJob rule of spec.podFailurePolicy fails the Job at once)
    for (const p of c.pods) {
      const m = isPodFailed(p, job) ? matchPodFailurePolicy(job, p).failJob : undefined;
      if (m) {
        c.finished = { type: 'FailureTarget', reason: 'PodFailurePolicy', message: m };
        return;
      }
    }
    const backoffLimit = Number(job.spec?.backoffLimit ?? 6);
    if (c.failed > backoffLimit || this.pastBackoffLimitOnFailure(job, c.pods)) {
      c.finished = { type: 'FailureTarget', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' };
      return;
    }
    const deadline = job.spec?.activeDeadlineSeconds;
    if (typeof deadline === 'number' && c.status.startTime && !isSuspended(job)) {
      const left = Date.parse(c.status.startTime) + deadline * 1000 - this.now();
      if (left <= 0) c.finished = { type: 'FailureTarget', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' };
      else this.queue.addAfter(c.key, left);
    }
    if (c.failedIndexes) {
      const completions = Number(job.spec?.completions ?? 0);
      const maxFailed = job.spec?.maxFailedIndexes;
      if (!c.finished && typeof maxFailed === 'number' && c.failedIndexes.length > maxFailed) {
        c.finished = { type: 'FailureTarget', reason: 'MaxFailedIndexesExceeded', message: 'Job has exceeded the specified maximal number of failed indexes' };
      } else if (!c.finished && c.failedIndexes.length > 0 && c.failedIndexes.length + (c.succeededIndexes?.length ?? 0) >= completions) {
        c.finished = { type: 'FailureTarget', reason: 'FailedIndexes', message: 'Job has failed indexes' };
      }
      c.delayed = podsAwaitingReplacement(c, this.now());
    }
    if (!c.finished && isIndexed(job)) {
      const matched = matchSuccessPolicy(job, c.succeededIndexes ?? []);
      if (matched) c.finished = { type: 'SuccessCriteriaMet', reason: 'SuccessPolicy', message: matched };
    }
  }

  /** restartPolicy OnFailure: the restarts of its active pods' containers reached the backoff limit */
  private pastBackoffLimitOnFailure(job: any, pods: any[]): boolean {
    if (job.spec?.template?.spec?.restartPolicy !== 'OnFailure') return false;
    let restarts = 0;
    for (const p of pods) {
      const phase = p.status?.phase;
      if (phase !== 'Running' && phase !== 'Pending') continue;
      for (const s of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])]) restarts += Number(s?.restartCount ?? 0);
    }
    const limit = Number(job.spec?.backoffLimit ?? 6);
    return limit === 0 ? restarts > 0 : restarts >= limit;
  }

  /** condition Suspended True while spec.suspend, False (resumed, start time reset) after; whether it changed */
  private updateSuspended(c: SyncCtx): boolean {
    const now = this.now();
    if (isSuspended(c.job)) {
      if (!ensureCondition(c.status, 'Suspended', 'True', 'JobSuspended', 'Job suspended', now)) return false;
      void this.event(c.job, 'Normal', 'Suspended', 'Job suspended');
      return true;
    }
    if (!ensureCondition(c.status, 'Suspended', 'False', 'JobResumed', 'Job resumed', now)) return false;
    void this.event(c.job, 'Normal', 'Resumed', 'Job resumed');
    // (activeDeadlineSeconds counts the time the Job is continuously active)
    c.status.startTime = rfc3339(now);
    return true;
  }

  // ---- claiming (getPodsForJob) ----

  /** every pod the Job controls, finished ones included, after adoption and release */
  private async claim(job: any, signal: AbortSignal): Promise<any[]> {
    const uid = job.metadata.uid;
    let selector: Requirement[] | null = null;
    try {
      selector = selectorOf(job);
    } catch (e) {
      this.log.error(e, 'Job has an invalid selector', { job: objectKey(job) });
    }
    const matches = (pod: any) => !!selector && selector.length > 0 && matchLabels(selector, pod?.metadata?.labels ?? {});
    const owned: any[] = [];
    let canAdopt: boolean | undefined;
    for (const pod of this.o.pods.list(job.metadata.namespace)) {
      const ref = controllerRefOf(pod);
      if (ref) {
        if (ref.uid !== uid) continue;
        if (matches(pod)) owned.push(pod);
        else if (!job.metadata.deletionTimestamp) await this.release(job, pod, signal);
        continue;
      }
      if (!matches(pod) || job.metadata.deletionTimestamp || pod.metadata?.deletionTimestamp) continue;
      canAdopt ??= await this.stillOwner(job, signal);
      if (!canAdopt) continue;
      const adopted = await this.adopt(job, pod, signal);
      if (adopted) owned.push(adopted);
    }
    return owned;
  }

  private async stillOwner(job: any, signal: AbortSignal): Promise<boolean> {
    try {
      const fresh = await new ResourceClient<any>(this.o.client, JOBS, job.metadata.namespace).get(job.metadata.name, { signal });
      return fresh?.metadata?.uid === job.metadata.uid && !fresh.metadata.deletionTimestamp;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  private controllerRef(job: any): Record<string, unknown> {
    return { apiVersion: 'batch/v1', kind: 'Job', name: job.metadata.name, uid: job.metadata.uid, controller: true, blockOwnerDeletion: true };
  }

  private podPath(pod: any): string {
    return new ResourceClient<any>(this.o.client, PODS, pod.metadata.namespace).path(pod.metadata.name);
  }

  private patchPod(pod: any, body: unknown, signal: AbortSignal): Promise<any> {
    return this.o.client.json({ method: 'PATCH', path: this.podPath(pod), body, contentType: 'application/strategic-merge-patch+json', signal });
  }

  /** the controller reference patched in, with the tracking finalizer when the pod has not finished; the pod, or undefined when it changed or went */
  private async adopt(job: any, pod: any, signal: AbortSignal): Promise<any> {
    const metadata: any = { ownerReferences: [this.controllerRef(job)], uid: pod.metadata.uid };
    const finished = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
    if (!finished && !hasFinalizer(pod)) metadata.finalizers = [JOB_TRACKING_FINALIZER];
    try {
      return await this.patchPod(pod, { metadata }, signal);
    } catch (e) {
      if (isNotFound(e) || isConflict(e)) return undefined;
      throw e;
    }
  }

  private async release(job: any, pod: any, signal: AbortSignal): Promise<void> {
    const metadata: any = { ownerReferences: [{ $patch: 'delete', uid: job.metadata.uid }], uid: pod.metadata.uid };
    if (hasFinalizer(pod)) metadata['$deleteFromPrimitiveList/finalizers'] = [JOB_TRACKING_FINALIZER];
    try {
      await this.patchPod(pod, { metadata }, signal);
    } catch (e) {
      if (isNotFound(e) || isConflict(e) || (e as { code?: number }).code === 422) return;
      throw e;
    }
  }

  /** removes the tracking finalizer (the pod's uid as a precondition); false when it failed */
  private async removeFinalizer(pod: any, signal: AbortSignal): Promise<boolean> {
    try {
      await this.patchPod(pod, { metadata: { '$deleteFromPrimitiveList/finalizers': [JOB_TRACKING_FINALIZER], uid: pod.metadata.uid } }, signal);
      return true;
    } catch (e) {
      // (gone, or another pod under the name: nothing left to hold)
      if (isNotFound(e) || isConflict(e)) return true;
      this.log.error(e, 'Removing the tracking finalizer failed', { pod: objectKey(pod) });
      return false;
    }
  }

  /**
   * A pod that holds the tracking finalizer and that no unfinished Job controls loses the
   * finalizer (syncOrphanPod): an orphan (a Job deleted with its dependents orphaned, or a pod
   * released) would otherwise keep it for ever. A pod adopted meanwhile keeps it. The pod is read
   * from the cache, or from the server once the namespace's pod watch has gone with its last Job.
   */
  private async syncOrphanPod(podKey: string, signal: AbortSignal): Promise<void> {
    const { namespace: ns, name } = splitKey(podKey);
    let pod: any;
    if (this.o.pods.informer(ns) && (await this.o.pods.synced(ns, signal))) pod = this.o.pods.informer(ns)?.getByName(ns, name);
    else {
      try {
        pod = await new ResourceClient<any>(this.o.client, PODS, ns).get(name, { signal });
      } catch (e) {
        if (isNotFound(e)) return;
        throw e;
      }
    }
    if (!pod || !hasFinalizer(pod)) return;
    const ref = controllerRefOf(pod);
    if (ref) {
      if (!isJobRef(ref)) return;
      const job = this.resolve(ns, ref);
      const managedBy = job?.spec?.managedBy;
      if (job && (!isJobFinished(job) || (managedBy !== undefined && managedBy !== 'kubernetes.io/job-controller'))) return;
    }
    if (!(await this.removeFinalizer(pod, signal))) throw new Error(`removing the tracking finalizer of orphan pod ${podKey}`);
  }

  /**
   * A Job finished or gone: the pods in the cache that it (or any earlier Job of the name, when
   * gone) controls and that still hold the tracking finalizer lose it; then the pod watch goes.
   * (The namespace's pods are looked at while anything watches them: an orphan seen through
   * another Job's watch is released too.)
   */
  private async releaseFinished(key: string, job: any, signal: AbortSignal): Promise<void> {
    const { namespace: ns, name } = splitKey(key);
    if (this.o.pods.informer(ns) && (await this.o.pods.synced(ns, signal))) {
      const stuck = this.o.pods.list(ns).filter((p) => {
        const ref = controllerRefOf(p);
        return hasFinalizer(p) && isJobRef(ref) && ref.name === name && (!job || ref.uid === job.metadata.uid);
      });
      const done = await Promise.all(stuck.map((p) => this.removeFinalizer(p, signal)));
      if (!done.every(Boolean)) throw new Error(`removing the tracking finalizer of the pods of Job ${key}`);
    }
    this.forget(key);
    this.unwatch(key);
  }

  // ---- creating and deleting pods (manageJob) ----

  /** creates or deletes pods toward the wanted number of active ones; the active count after */
  private async manage(c: SyncCtx, signal: AbortSignal): Promise<number> {
    const job = c.job;
    let active = c.active.length;
    if (isSuspended(job)) {
      const { removed, removedReady, error } = await this.deleteJobPods(c, c.active, signal);
      c.terminating += removed;
      c.ready -= removedReady;
      return this.afterError(active - removed, error);
    }
    if (c.failedIndexes?.length) {
      // the pods still running for an index that has failed are not wanted
      const failed = new Set(c.failedIndexes);
      const doomed = c.active.filter((p) => failed.has(completionIndexOf(p)));
      if (doomed.length > 0) {
        const { removed, removedReady, error } = await this.deleteJobPods(c, doomed, signal);
        c.terminating += removed;
        c.ready -= removedReady;
        return this.afterError(active - removed, error);
      }
    }
    const want = this.wantActive(c, active);
    const rm = activePodsForRemoval(job, c.active, Math.max(0, active - want), this.now()).slice(0, MAX_POD_CREATE_DELETE_PER_SYNC);
    if (rm.length > 0) {
      const { removed, removedReady, error } = await this.deleteJobPods(c, rm, signal);
      c.terminating += removed;
      c.ready -= removedReady;
      return this.afterError(active - removed, error);
    }
    const terminating = onlyReplaceFailed(job) ? c.terminating : 0;
    let diff = want - terminating - active;
    if (diff <= 0) return active;
    // (with backoffLimitPerIndex each index waits its own backoff instead)
    const wait = c.delayed ? 0 : this.remainingBackoff(c);
    if (wait > 0) {
      this.log.v(4).info('Delaying pod creation after failures', { job: c.key, waitMs: wait });
      this.queue.addAfter(c.key, wait);
      return active;
    }
    diff = Math.min(diff, MAX_POD_CREATE_DELETE_PER_SYNC);
    let indexes: number[] = [];
    if (isIndexed(job)) {
      indexes = firstPendingIndexes(c, diff, Number(job.spec?.completions ?? 0));
      if (c.delayed) indexes = this.indexesPastBackoff(c, indexes);
      diff = indexes.length;
    }
    if (diff <= 0) return active;
    this.expectations.expect(c.key, diff);
    this.log.v(4).info('Too few pods running', { job: c.key, need: want, creating: diff });
    const { made, error } = await this.createPods(c, diff, indexes, signal);
    // (the creates that failed or never ran will never be observed)
    for (let i = made; i < diff; i++) this.expectations.creationObserved(c.key);
    return this.afterError(active + made, error);
  }

  /** the number of active pods the Job wants: parallelism, but no more than the completions left */
  private wantActive(c: SyncCtx, active: number): number {
    const parallelism = Number(c.job.spec?.parallelism ?? 1);
    const completions = c.job.spec?.completions;
    if (completions === undefined || completions === null) return c.succeeded > 0 ? active : parallelism;
    return Math.max(0, Math.min(parallelism, completions - c.succeeded));
  }

  /** `active`, or a throw of `error` carrying it (the sync writes the status, then retries) */
  private afterError(active: number, error: unknown): number {
    if (error) throw Object.assign(error instanceof Error ? error : new Error(String(error)), { active });
    return active;
  }

  /** the time left of the pod backoff after failures (10 s doubled per failure since the last success, at most 6 min) */
  private remainingBackoff(c: SyncCtx): number {
    const rec = this.backoffRecord(c);
    if (rec.failures === 0) return 0;
    const backoff = Math.min(POD_FAILURE_BACKOFF_MS * 2 ** (rec.failures - 1), MAX_POD_FAILURE_BACKOFF_MS);
    return backoff - (this.now() - rec.lastFailure);
  }

  /**
   * The indexes whose backoff has run out: an index whose last pod failed waits 10 s doubled per
   * counted failure of the index (at most 6 min) after that failure; the Job comes back when the
   * first of the others is due (getPodCreationInfoForIndependentIndexes).
   */
  private indexesPastBackoff(c: SyncCtx, indexes: number[]): number[] {
    const now = this.now();
    const ready: number[] = [];
    let next = Infinity;
    for (const ix of indexes) {
      const replaced = c.delayed!.get(ix);
      if (!replaced) {
        ready.push(ix);
        continue;
      }
      const failures = indexFailureCounts(c.job, replaced).failed;
      const backoff = failures > 0 ? Math.min(POD_FAILURE_BACKOFF_MS * 2 ** (failures - 1), MAX_POD_FAILURE_BACKOFF_MS) : 0;
      const left = backoff - (now - finishTime(replaced, now));
      if (left <= 0) ready.push(ix);
      else next = Math.min(next, left);
    }
    if (next < Infinity) this.queue.addAfter(c.key, next);
    return ready;
  }

  /** the backoff record with this sync's newly finished pods (newBackoffRecord) */
  private backoffRecord(c: SyncCtx): Backoff {
    const prev = this.backoff.get(c.key) ?? { failures: 0, lastFailure: 0 };
    if (c.newSucceeded.length > 0) return { failures: 0, lastFailure: 0 };
    if (c.newFailed.length === 0) return prev;
    const now = this.now();
    const last = Math.max(prev.lastFailure, ...c.newFailed.map((p) => finishTime(p, now)));
    return { failures: prev.failures + c.newFailed.length, lastFailure: last };
  }

  /** the template as the Job's pods get it: the tracking finalizer, and for Indexed Jobs the index variable (read from the index label, as with PodIndexLabel on) */
  private podTemplate(job: any): any {
    const pod = podFromTemplate(job, this.controllerRef(job));
    const finalizers: string[] = pod.metadata.finalizers ?? [];
    if (!finalizers.includes(JOB_TRACKING_FINALIZER)) pod.metadata.finalizers = [...finalizers, JOB_TRACKING_FINALIZER];
    if (isIndexed(job)) {
      for (const ct of [...(pod.spec.initContainers ?? []), ...(pod.spec.containers ?? [])]) {
        const env: any[] = Array.isArray(ct.env) ? ct.env : [];
        if (env.some((e) => e?.name === COMPLETION_INDEX_ENV)) continue;
        ct.env = [...env, { name: COMPLETION_INDEX_ENV, valueFrom: { fieldRef: { fieldPath: `metadata.labels['${COMPLETION_INDEX}']` } } }];
      }
    }
    return pod;
  }

  /** creates `n` pods in slow-start batches (1, 2, 4, ...; a batch with a failure stops the rest) */
  private async createPods(c: SyncCtx, n: number, indexes: number[], signal: AbortSignal): Promise<{ made: number; error?: unknown }> {
    const template = this.podTemplate(c.job);
    const queue = [...indexes];
    let made = 0;
    let error: unknown;
    for (let left = n, batch = 1; left > 0 && !error; batch *= 2) {
      const size = Math.min(batch, left);
      left -= size;
      const batchPods = Array.from({ length: size }, () => this.withIndex(c, template, queue.length ? queue.shift()! : -1));
      const results = await Promise.allSettled(batchPods.map((p) => this.createPod(c.job, p, signal)));
      for (const r of results) {
        if (r.status === 'fulfilled') made++;
        else error ??= r.reason;
      }
    }
    return { made, error };
  }

  /** the pod of a completion index (annotation, label, hostname, name), or the template itself (-1) */
  private withIndex(c: SyncCtx, template: any, index: number): any {
    if (index < 0) return template;
    const job = c.job;
    const pod = structuredClone(template);
    if (c.delayed) {
      // the failures of the index so far, carried from the pod it replaces
      const replaced = c.delayed.get(index);
      const counts = replaced ? indexFailureCounts(job, replaced) : { failed: 0, ignored: 0 };
      pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), [INDEX_FAILURE_COUNT]: String(counts.failed) };
      if (counts.ignored > 0) pod.metadata.annotations[INDEX_IGNORED_FAILURE_COUNT] = String(counts.ignored);
    }
    pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), [COMPLETION_INDEX]: String(index) };
    pod.metadata.labels = { ...(pod.metadata.labels ?? {}), [COMPLETION_INDEX]: String(index) };
    pod.metadata.generateName = generateNameWithIndex(job.metadata.name, index);
    if (!pod.spec.hostname) pod.spec.hostname = `${job.metadata.name}-${index}`;
    return pod;
  }

  private async createPod(job: any, pod: any, signal: AbortSignal): Promise<void> {
    try {
      const made = await new ResourceClient<any>(this.o.client, PODS, job.metadata.namespace).create(pod, { signal });
      void this.event(job, 'Normal', 'SuccessfulCreate', `Created pod: ${made.metadata.name}`);
    } catch (e) {
      // (a namespace being deleted refuses new pods: no event for that, as in Kubernetes)
      if (!/is being terminated|because it is being terminated/.test(messageOf(e))) {
        void this.event(job, 'Warning', 'FailedCreate', `Error creating: ${messageOf(e)}`);
      }
      throw e;
    }
  }

  /** deletes pods the Job no longer wants, their finalizer removed first so that they do not count as failed (deleteJobPods) */
  private async deleteJobPods(c: SyncCtx, pods: any[], signal: AbortSignal): Promise<{ removed: number; removedReady: number; error?: unknown }> {
    this.expectations.expect(c.key, 0, pods.map(objectKey));
    let removed = 0;
    let removedReady = 0;
    let error: unknown;
    await Promise.all(
      pods.map(async (pod) => {
        try {
          if (hasFinalizer(pod) && !(await this.removeFinalizer(pod, signal))) throw new Error(`removing completion finalizer of pod ${pod.metadata.name}`);
          await this.deletePod(c.job, pod, signal);
          removed++;
          if (isPodReady(pod)) removedReady++;
        } catch (e) {
          this.expectations.deletionObserved(c.key, objectKey(pod));
          if (isNotFound(e)) return;
          error ??= e;
        }
      }),
    );
    return { removed, removedReady, error };
  }

  /** deletes the active pods of a failed Job, keeping their finalizers (they are counted as failed) */
  private async deleteActive(job: any, pods: any[], signal: AbortSignal): Promise<{ deleted: number; deletedReady: number; error?: unknown }> {
    let deleted = 0;
    let deletedReady = 0;
    let error: unknown;
    await Promise.all(
      pods.map(async (pod) => {
        try {
          await this.deletePod(job, pod, signal);
        } catch (e) {
          if (!isNotFound(e)) {
            error ??= e;
            return;
          }
        }
        deleted++;
        if (isPodReady(pod)) deletedReady++;
      }),
    );
    return { deleted, deletedReady, error };
  }

  private async deletePod(job: any, pod: any, signal: AbortSignal): Promise<void> {
    try {
      await new ResourceClient<any>(this.o.client, PODS, pod.metadata.namespace).delete(pod.metadata.name, { preconditions: { uid: pod.metadata.uid }, signal });
      void this.event(job, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`);
    } catch (e) {
      if (!isNotFound(e)) void this.event(job, 'Warning', 'FailedDelete', `Error deleting: ${messageOf(e)}`);
      throw e;
    }
  }

  // ---- counting finished pods and the status (trackJobStatusAndRemoveFinalizers) ----

  /**
   * Puts the newly finished pods into status.uncountedTerminatedPods, writes that, removes their
   * finalizers, moves those whose finalizer is gone into the counters, and sets the final
   * condition once nothing is left uncounted or terminating.
   */
  private async trackStatus(c: SyncCtx, needsFlush: boolean, signal: AbortSignal): Promise<void> {
    const job = c.job;
    const status = c.status;
    const uncounted = status.uncountedTerminatedPods;
    const completions = Number(job.spec?.completions ?? 0);
    const withFinalizer = new Set<string>(c.pods.filter((p) => hasFinalizer(p) && !c.rmExpected.has(p.metadata.uid)).map((p) => p.metadata.uid));
    if (countUncounted(status, withFinalizer)) needsFlush = true;
    const toRemove: any[] = [];
    const newIndexes: number[] = [];
    let reachedMax = false;
    const pods = isIndexed(job) ? [...c.pods].sort((a, b) => completionIndexOf(a) - completionIndexOf(b)) : c.pods;
    for (const pod of pods) {
      const uid = pod.metadata.uid;
      if (!hasFinalizer(pod) || c.rmExpected.has(uid)) continue;
      const failed = isPodFailed(pod, job);
      // (a pod still running stays until it finishes, unless the Job is done or going away)
      if (!job.metadata.deletionTimestamp && !c.finished && pod.status?.phase !== 'Succeeded' && !failed) continue;
      // (a failed pod whose index runs again keeps its finalizer until its replacement carries the count)
      if (!job.metadata.deletionTimestamp && !c.finished && failed && c.delayed?.get(completionIndexOf(pod))?.metadata?.uid === uid) continue;
      toRemove.push(pod);
      if (pod.status?.phase === 'Succeeded' && !c.uncountedFailed.has(uid)) {
        if (isIndexed(job)) {
          const ix = completionIndexOf(pod);
          if (ix >= 0 && ix < completions && !c.prevSucceededIndexes!.includes(ix)) {
            newIndexes.push(ix);
            needsFlush = true;
          }
        } else if (!c.uncountedSucceeded.has(uid)) {
          uncounted.succeeded = [...(uncounted.succeeded ?? []), uid];
          needsFlush = true;
        }
      } else if (failed || (c.finished && c.finished.type !== 'SuccessCriteriaMet')) {
        // (once the Job is finishing, every pod not succeeded counts as failed)
        const ix = completionIndexOf(pod);
        // (a pod an Ignore rule of the pod failure policy matches is not counted)
        if (!c.uncountedFailed.has(uid) && (!isIndexed(job) || (ix >= 0 && ix < completions)) && matchPodFailurePolicy(job, pod).count) {
          uncounted.failed = [...(uncounted.failed ?? []), uid];
          needsFlush = true;
        }
      }
      if (newIndexes.length + (uncounted.succeeded?.length ?? 0) + (uncounted.failed?.length ?? 0) >= MAX_UNCOUNTED_PODS) {
        reachedMax = true;
        break;
      }
    }
    if (isIndexed(job)) {
      const all = formatIndexes([...c.prevSucceededIndexes!, ...newIndexes]);
      if ((status.completedIndexes ?? '') !== all) needsFlush = true;
      status.completedIndexes = all;
      status.succeeded = parseIndexes(all, completions).length;
      if (c.failedIndexes) {
        const failedAll = formatIndexes(c.failedIndexes);
        if (status.failedIndexes !== failedAll) needsFlush = true;
        status.failedIndexes = failedAll;
      }
    }
    if (c.finished?.type === 'FailureTarget') {
      // the interim condition goes in before the finalizers go; Failed follows once they have
      status.conditions = [...(status.conditions ?? []), newCondition('FailureTarget', 'True', c.finished.reason, c.finished.message, this.now())];
      needsFlush = true;
      c.finished = { ...c.finished, type: 'Failed' };
    }
    if (c.finished?.type === 'SuccessCriteriaMet') {
      if (findCondition(status, 'SuccessCriteriaMet')?.status !== 'True') {
        status.conditions = [...(status.conditions ?? []), newCondition('SuccessCriteriaMet', 'True', c.finished.reason, c.finished.message, this.now())];
        needsFlush = true;
      }
      c.finished = { ...c.finished, type: 'Complete' };
    }
    let current = job;
    if (needsFlush) {
      current = await this.writeStatus(current, status, signal);
      // (the newly failed pods are counted now: the next creates wait their backoff)
      this.backoff.set(c.key, this.backoffRecord(c));
      needsFlush = false;
    }
    const rmError = await this.removeFinalizers(c, toRemove, withFinalizer, signal);
    if (countUncounted(status, withFinalizer)) needsFlush = true;
    if (rmError) {
      if (needsFlush) await this.writeStatus(current, status, signal);
      throw rmError;
    }
    const finished = !reachedMax && this.enactFinished(c);
    if (finished) needsFlush = true;
    if (needsFlush || !sameStatus(current.status, status)) {
      await this.writeStatus(current, status, signal);
      if (finished) this.recordFinished(c);
    }
  }

  /** removes the finalizers (expecting their removal to be seen), dropping each removed uid from `withFinalizer` */
  private async removeFinalizers(c: SyncCtx, pods: any[], withFinalizer: Set<string>, signal: AbortSignal): Promise<unknown> {
    if (pods.length === 0) return undefined;
    let expected = this.rmFinalizers.get(c.key);
    if (!expected) this.rmFinalizers.set(c.key, (expected = new Set()));
    for (const p of pods) expected.add(p.metadata.uid);
    let error: unknown;
    await Promise.all(
      pods.map(async (p) => {
        if (await this.removeFinalizer(p, signal)) withFinalizer.delete(p.metadata.uid);
        else {
          expected!.delete(p.metadata.uid);
          error ??= new Error(`removing the tracking finalizer of pod ${p.metadata.name}`);
        }
      }),
    );
    return error;
  }

  /** sets the final condition (Complete or Failed) once no pod is uncounted or terminating (enactJobFinished) */
  private enactFinished(c: SyncCtx): boolean {
    if (!c.finished) return false;
    const uncounted = c.status.uncountedTerminatedPods ?? {};
    if ((uncounted.succeeded?.length ?? 0) + (uncounted.failed?.length ?? 0) > 0) return false;
    if (c.terminating > 0) return false;
    ensureCondition(c.status, c.finished.type, 'True', c.finished.reason, c.finished.message, this.now());
    if (c.finished.type === 'Complete') c.status.completionTime = findCondition(c.status, 'Complete').lastTransitionTime;
    return true;
  }

  private recordFinished(c: SyncCtx): void {
    if (c.finished?.type === 'Complete') void this.event(c.job, 'Normal', 'Completed', 'Job completed');
    else if (c.finished) void this.event(c.job, 'Warning', c.finished.reason, c.finished.message);
  }

  /** a PUT of the status on the object last read (a conflict fails the sync, which runs again on the newer Job); the Job written */
  private async writeStatus(job: any, status: any, signal: AbortSignal): Promise<any> {
    const client = new ResourceClient<any>(this.o.client, JOBS, job.metadata.namespace);
    const written = await client.updateStatus({ ...job, status: wireStatus(status) }, { signal });
    const key = objectKey(job);
    if (written?.metadata?.resourceVersion !== job.metadata.resourceVersion && job === this.o.jobs.getByName(job.metadata.namespace, job.metadata.name)) {
      this.superseded.set(key, job.metadata.resourceVersion);
    }
    return written;
  }

  private event(job: any, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    return this.o.recorder?.event({ ...job, kind: 'Job', apiVersion: 'batch/v1' }, type, reason, message) ?? Promise.resolve();
  }
}

// ---- spec.podFailurePolicy and spec.successPolicy ----

/** a terminated container status (containers first, then init containers) whose non-zero exit code the requirement matches */
function matchExitCodes(pod: any, req: any): any {
  for (const list of [pod?.status?.containerStatuses, pod?.status?.initContainerStatuses]) {
    for (const cs of Array.isArray(list) ? list : []) {
      const code = cs?.state?.terminated?.exitCode;
      if (typeof code !== 'number' || code === 0) continue;
      if (req.containerName != null && req.containerName !== cs.name) continue;
      const values: number[] = Array.isArray(req.values) ? req.values : [];
      if (req.operator === 'In' ? values.includes(code) : req.operator === 'NotIn' ? !values.includes(code) : false) return cs;
    }
  }
  return undefined;
}

/**
 * A failed pod against spec.podFailurePolicy's rules, the first that matches deciding: whether
 * it counts toward the backoff limit (not under Ignore) and, under FailJob, the Job's failure
 * message (matchPodFailurePolicy); under FailIndex (backoffLimitPerIndex) the pod's index fails.
 */
export function matchPodFailurePolicy(job: any, pod: any): { count: boolean; failJob?: string; action?: string } {
  const rules: any[] = Array.isArray(job?.spec?.podFailurePolicy?.rules) ? job.spec.podFailurePolicy.rules : [];
  const ns = pod?.metadata?.namespace;
  const name = pod?.metadata?.name;
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i];
    let failJob: string | undefined;
    if (rule?.onExitCodes) {
      const cs = matchExitCodes(pod, rule.onExitCodes);
      if (!cs) continue;
      failJob = `Container ${cs.name} for pod ${ns}/${name} failed with exit code ${cs.state.terminated.exitCode} matching ${rule.action} rule at index ${i}`;
    } else if (Array.isArray(rule?.onPodConditions)) {
      const conds: any[] = Array.isArray(pod?.status?.conditions) ? pod.status.conditions : [];
      const hit = conds.find((pc) => rule.onPodConditions.some((pat: any) => pat?.type === pc?.type && (pat?.status ?? 'True') === pc?.status));
      if (!hit) continue;
      failJob = `Pod ${ns}/${name} has condition ${hit.type} matching ${rule.action} rule at index ${i}`;
    } else continue;
    if (rule.action === 'Ignore') return { count: false, action: 'Ignore' };
    if (rule.action === 'Count') return { count: true, action: 'Count' };
    if (rule.action === 'FailJob') return { count: true, failJob, action: 'FailJob' };
    if (rule.action === 'FailIndex') return { count: true, action: 'FailIndex' };
  }
  return { count: true };
}

/**
 * An Indexed Job's spec.successPolicy: the first rule its succeeded indexes satisfy (all of the
 * rule's succeededIndexes, or succeededCount of them; or succeededCount indexes of any), as
 * "Matched rules at index N" (matchSuccessPolicy).
 */
export function matchSuccessPolicy(job: any, succeeded: number[]): string | undefined {
  const rules: any[] = Array.isArray(job?.spec?.successPolicy?.rules) ? job.spec.successPolicy.rules : [];
  if (rules.length === 0 || succeeded.length === 0) return undefined;
  const completions = Number(job.spec?.completions ?? 0);
  const have = new Set(succeeded);
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i];
    const count = typeof rule?.succeededCount === 'number' ? rule.succeededCount : undefined;
    if (typeof rule?.succeededIndexes === 'string') {
      const required = parseIndexes(rule.succeededIndexes, completions);
      if (required.length === 0) continue;
      const contained = required.filter((ix) => have.has(ix)).length;
      if (contained === required.length || (count !== undefined && contained >= count)) return `Matched rules at index ${i}`;
    } else if (count !== undefined && succeeded.length >= count) return `Matched rules at index ${i}`;
  }
  return undefined;
}

// ---- backoffLimitPerIndex ----

/** a non-negative integer annotation of the pod (0 when absent or invalid) */
function countAnnotation(pod: any, key: string): number {
  const v = pod?.metadata?.annotations?.[key];
  const n = typeof v === 'string' && /^[0-9]+$/.test(v) ? Number(v) : 0;
  return n <= 2147483647 ? n : 0;
}

/** whether a failed pod fails its index: a FailIndex rule, or a counted failure past backoffLimitPerIndex (isIndexFailed) */
function isIndexFailed(job: any, pod: any): boolean {
  if (!isPodFailed(pod, job)) return false;
  const m = matchPodFailurePolicy(job, pod);
  if (m.action === 'FailIndex') return true;
  return m.count && countAnnotation(pod, INDEX_FAILURE_COUNT) >= job.spec.backoffLimitPerIndex;
}

/** the failure counts a failed pod's replacement carries: its own plus its failure, counted or ignored (getNewIndexFailureCounts) */
function indexFailureCounts(job: any, replaced: any): { failed: number; ignored: number } {
  let failed = countAnnotation(replaced, INDEX_FAILURE_COUNT);
  let ignored = countAnnotation(replaced, INDEX_IGNORED_FAILURE_COUNT);
  if (matchPodFailurePolicy(job, replaced).count) failed++;
  else ignored++;
  return { failed, ignored };
}

/**
 * Per index neither succeeded, failed nor running: its last failed pod (the most failures, then
 * the latest), which a new pod of the index will replace (getPodsWithDelayedDeletionPerIndex).
 */
function podsAwaitingReplacement(c: SyncCtx, now: number): Map<number, any> {
  const completions = Number(c.job.spec?.completions ?? 0);
  const busy = new Set<number>([...(c.succeededIndexes ?? []), ...(c.failedIndexes ?? []), ...c.active.map(completionIndexOf)]);
  const out = new Map<number, any>();
  const total = (p: any) => countAnnotation(p, INDEX_FAILURE_COUNT) + countAnnotation(p, INDEX_IGNORED_FAILURE_COUNT);
  for (const p of c.pods) {
    if (!hasFinalizer(p) || !isPodFailed(p, c.job)) continue;
    const ix = completionIndexOf(p);
    if (ix < 0 || ix >= completions || busy.has(ix)) continue;
    const last = out.get(ix);
    if (!last || (total(last) <= total(p) && finishTime(p, now) >= finishTime(last, now))) out.set(ix, p);
  }
  return out;
}

/** the Job's selector requirements (null: selects nothing) */
function selectorOf(job: any): Requirement[] | null {
  return fromLabelSelector(job?.spec?.selector);
}

/**
 * Uncounted uids whose pods no longer hold the finalizer (or are gone) move into
 * status.succeeded / status.failed (cleanUncountedPodsWithoutFinalizers); whether any did.
 */
function countUncounted(status: any, withFinalizer: Set<string>): boolean {
  const u = status.uncountedTerminatedPods;
  let changed = false;
  for (const [list, counter] of [
    ['succeeded', 'succeeded'],
    ['failed', 'failed'],
  ] as const) {
    const uids: string[] = u[list] ?? [];
    const keep = uids.filter((uid) => withFinalizer.has(uid));
    if (keep.length === uids.length) continue;
    changed = true;
    status[counter] = (status[counter] ?? 0) + uids.length - keep.length;
    if (keep.length) u[list] = keep;
    else delete u[list];
  }
  return changed;
}

/** the status as Kubernetes serializes it: zero counters left out, ready, terminating and uncountedTerminatedPods always there */
function wireStatus(status: any): any {
  const out: any = { ...status };
  for (const f of ['active', 'succeeded', 'failed']) if (!out[f]) delete out[f];
  if (!out.completedIndexes) delete out.completedIndexes;
  const u = out.uncountedTerminatedPods ?? {};
  out.uncountedTerminatedPods = {};
  if (u.succeeded?.length) out.uncountedTerminatedPods.succeeded = u.succeeded;
  if (u.failed?.length) out.uncountedTerminatedPods.failed = u.failed;
  return out;
}

function sameStatus(a: any, b: any): boolean {
  return JSON.stringify(canonical(wireStatus(a ?? {}))) === JSON.stringify(canonical(wireStatus(b)));
}

function canonical(v: any): any {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])]));
  return v;
}

/** the first `n` indexes below `completions` neither succeeded, failed, nor held by an active (or, when only failed pods are replaced, terminating) pod */
function firstPendingIndexes(c: SyncCtx, n: number, completions: number): number[] {
  const taken = new Set<number>([...(c.succeededIndexes ?? []), ...(c.failedIndexes ?? [])]);
  for (const p of c.active) taken.add(completionIndexOf(p));
  if (onlyReplaceFailed(c.job)) for (const p of c.pods.filter(isTerminating)) taken.add(completionIndexOf(p));
  const out: number[] = [];
  for (let i = 0; i < completions && out.length < n; i++) if (!taken.has(i)) out.push(i);
  return out;
}

/**
 * The active pods to delete: for Indexed Jobs those with an index out of range or repeated first;
 * then the least worth keeping, as the ReplicaSet ranks them (activePodsForRemoval).
 */
function activePodsForRemoval(job: any, pods: any[], atLeast: number, now: number): any[] {
  const rm: any[] = [];
  let left = pods;
  if (isIndexed(job)) {
    const completions = Number(job.spec?.completions ?? 0);
    const seen = new Set<number>();
    left = [];
    for (const p of [...pods].sort((a, b) => completionIndexOf(a) - completionIndexOf(b))) {
      const ix = completionIndexOf(p);
      if (ix < 0 || ix >= completions || seen.has(ix)) rm.push(p);
      else {
        seen.add(ix);
        left.push(p);
      }
    }
  }
  if (rm.length < atLeast) rm.push(...podsToDelete(left, left, atLeast - rm.length, now));
  return rm;
}

export const jobControllerDescriptor: ControllerDescriptor = {
  name: 'job-controller',
  async run(ctx) {
    await withClient(ctx, COMPONENT, undefined, async (client) => {
      const c = new JobController({
        client,
        jobs: informerOf<any>(ctx, JOBS),
        pods: ctx.pods,
        recorder: new EventRecorder(client, COMPONENT, ctx.log),
        log: ctx.log,
      });
      await c.run(ctx.options.concurrentJobSyncs, ctx.signal);
    });
  },
};
