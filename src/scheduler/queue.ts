// The scheduling queue (kube-scheduler's PriorityQueue): four places a pending pod can be.
//   active         ready to be tried, the highest spec.priority first, then the oldest
//                  (creationTimestamp), then the longest queued;
//   backoff        failed recently: back to active once its backoff (podInitialBackoff doubling
//                  per attempt up to podMaxBackoff) has passed since its last failure;
//   unschedulable  no node fitted: it waits for a cluster event that may help (a Node added, or
//                  changed in what the filters read: labels, taints, allocatable, conditions,
//                  unschedulable), then goes to backoff or active; an update of the pod itself
//                  (its spec or labels, not its status) moves it too; and after
//                  podMaxInUnschedulablePodsDuration (5 min) it is tried again anyway;
//   gated          spec.schedulingGates not empty: left alone until the gates are removed.
// A pod that failed while a move was requested (a Node event during its attempt) goes to backoff,
// not unschedulable, so that the event is not lost (moveRequestCycle).
//
// Bound pods coming, going or changing their labels (AssignedPodAdd, AssignedPodDelete,
// AssignedPodUpdate) move the unschedulable pods whose failure such an event may resolve
// (`podEvents`: a bound pod added may satisfy an affinity or change a spread; one gone, or resized
// down in place, may free room or ports, or end an anti-affinity): the scheduler watches them only
// while such pods wait (assigned.ts). That watch reads the bound pods' metadata only, and tells a
// resize from the pod's generation, not from its requests; as a fallback for what it may misjudge,
// a pod that the removal of other pods could help is also tried again after `recheckMs` (30 s) in
// unschedulable. A pod VolumeBinding refused moves when a PersistentVolumeClaim, PersistentVolume
// or StorageClass is added or changed (`podEvents.volumes`).

export interface QueuedPod {
  /** namespace/name */
  key: string;
  uid: string;
  /** the newest copy of the pod seen */
  pod: any;
  priority: number;
  /** creationTimestamp in ms */
  created: number;
  /** when the pod last entered the queue (ms) */
  timestamp: number;
  /** scheduling attempts so far */
  attempts: number;
  /** the end of the last failed attempt (ms), from which the backoff counts */
  lastFailure: number;
  /** the last failure could be resolved by pods leaving a node */
  resolvable: boolean;
  /** which bound-pod events may resolve the last failure (none: only Node events and the waits) */
  podEvents: PodEvents;
  /** the scheduling cycle of its last pop */
  cycle: number;
  where: 'active' | 'backoff' | 'unschedulable' | 'gated' | 'inflight';
  /** the pod changed (spec or labels) while it was being tried */
  updatedInFlight: boolean;
}

/** the bound-pod events a failure registers for, as Kubernetes' plugins do (EventsToRegister) */
export interface PodEvents {
  added: boolean;
  removed: boolean;
  /** a PersistentVolumeClaim, PersistentVolume or StorageClass added or changed (VolumeBinding's events) */
  volumes?: boolean;
}

export const NO_POD_EVENTS: PodEvents = Object.freeze({ added: false, removed: false });

export interface QueueOptions {
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** podMaxInUnschedulablePodsDuration */
  maxInUnschedulableMs: number;
  /** how long a pod whose failure pods leaving could resolve waits in unschedulable */
  recheckMs: number;
  /** how often unschedulable pods are looked at for the two waits above (Kubernetes: 30 s) */
  flushPeriodMs?: number;
  now?: () => number;
}

export interface QueueCounts {
  active: number;
  backoff: number;
  unschedulable: number;
  gated: number;
}

export function isGated(pod: any): boolean {
  return Array.isArray(pod?.spec?.schedulingGates) && pod.spec.schedulingGates.length > 0;
}

/** the parts of a pod whose change may make it schedulable (not its status, not bookkeeping) */
function schedulingRelevant(pod: any): string {
  const md = pod?.metadata ?? {};
  return JSON.stringify([md.labels ?? null, md.annotations ?? null, pod?.spec ?? null]);
}

function before(a: QueuedPod, b: QueuedPod): boolean {
  if (a.priority !== b.priority) return a.priority > b.priority;
  if (a.created !== b.created) return a.created < b.created;
  if (a.timestamp !== b.timestamp) return a.timestamp < b.timestamp;
  return a.key < b.key;
}

export class SchedulingQueue {
  private readonly entries = new Map<string, QueuedPod>();
  /** the active pods, in pop order */
  private active: QueuedPod[] = [];
  private readonly now: () => number;
  private waiters: (() => void)[] = [];
  private backoffTimer?: NodeJS.Timeout;
  private backoffTimerAt = 0;
  private readonly flushTimer: NodeJS.Timeout;
  private schedulingCycle = 0;
  private moveRequestCycle = -1;
  private closed = false;

  constructor(private readonly o: QueueOptions) {
    this.now = o.now ?? Date.now;
    this.flushTimer = setInterval(() => this.flushUnschedulable(), o.flushPeriodMs ?? 30_000);
    this.flushTimer.unref?.();
  }

  close(): void {
    this.closed = true;
    clearInterval(this.flushTimer);
    if (this.backoffTimer) clearTimeout(this.backoffTimer);
    this.wake();
  }

  counts(): QueueCounts {
    const c: QueueCounts = { active: 0, backoff: 0, unschedulable: 0, gated: 0 };
    for (const e of this.entries.values()) if (e.where !== 'inflight') c[e.where]++;
    return c;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  get(key: string): QueuedPod | undefined {
    return this.entries.get(key);
  }

  // ── pod events ────────────────────────────────────────────────────────────

  /** a pending pod appeared */
  add(pod: any): void {
    const key = `${pod?.metadata?.namespace ?? ''}/${pod?.metadata?.name ?? ''}`;
    const known = this.entries.get(key);
    if (known) {
      if (known.uid === String(pod?.metadata?.uid ?? '')) return this.update(pod);
      this.delete(key);
    }
    const now = this.now();
    const e: QueuedPod = {
      key,
      uid: String(pod?.metadata?.uid ?? ''),
      pod,
      priority: typeof pod?.spec?.priority === 'number' ? pod.spec.priority : 0,
      created: Date.parse(pod?.metadata?.creationTimestamp ?? '') || now,
      timestamp: now,
      attempts: 0,
      lastFailure: 0,
      resolvable: false,
      podEvents: NO_POD_EVENTS,
      cycle: -1,
      where: 'gated',
      updatedInFlight: false,
    };
    this.entries.set(key, e);
    if (isGated(pod)) e.where = 'gated';
    else this.toActive(e);
  }

  /** a pending pod changed */
  update(pod: any): void {
    const key = `${pod?.metadata?.namespace ?? ''}/${pod?.metadata?.name ?? ''}`;
    const e = this.entries.get(key);
    if (!e || e.uid !== String(pod?.metadata?.uid ?? '')) return this.add(pod);
    const relevant = schedulingRelevant(e.pod) !== schedulingRelevant(pod);
    e.pod = pod;
    e.priority = typeof pod?.spec?.priority === 'number' ? pod.spec.priority : 0;
    switch (e.where) {
      case 'inflight':
        if (relevant) e.updatedInFlight = true;
        return;
      case 'gated':
        if (!isGated(pod)) this.toActive(e);
        return;
      case 'active':
        // (the priority may have changed: keep the order)
        this.removeActive(e);
        this.insertActive(e);
        return;
      case 'unschedulable':
        if (relevant) this.moveOut(e);
        return;
      case 'backoff':
        return;
    }
  }

  /** a pod is gone (deleted, or bound: it is no longer pending) */
  delete(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    if (e.where === 'active') this.removeActive(e);
    this.entries.delete(key);
  }

  // ── scheduling ────────────────────────────────────────────────────────────

  /** the next active pod (it is in flight until done, requeued or deleted), or undefined */
  pop(): QueuedPod | undefined {
    const e = this.active.shift();
    if (!e) return undefined;
    e.where = 'inflight';
    e.attempts++;
    e.cycle = ++this.schedulingCycle;
    e.updatedInFlight = false;
    return e;
  }

  /** resolves true once a pod is active; false when the queue closed, the signal aborted or `timeoutMs` passed first */
  async waitForActive(signal: AbortSignal, timeoutMs?: number): Promise<boolean> {
    const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
    while (!this.active.length && !this.closed && !signal.aborted) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        const done = () => {
          if (timer) clearTimeout(timer);
          signal.removeEventListener('abort', done);
          const i = this.waiters.indexOf(done);
          if (i >= 0) this.waiters.splice(i, 1);
          resolve();
        };
        if (left !== Infinity) timer = setTimeout(done, left);
        this.waiters.push(done);
        signal.addEventListener('abort', done, { once: true });
      });
    }
    return this.active.length > 0 && !this.closed && !signal.aborted;
  }

  /** scheduled (bound): forgotten */
  done(key: string): void {
    this.entries.delete(key);
  }

  /**
   * no node fitted: to unschedulable, or to backoff when a move was requested during the attempt
   * or the pod changed meanwhile
   */
  requeueUnschedulable(e: QueuedPod, resolvable: boolean, podEvents: PodEvents = NO_POD_EVENTS): void {
    if (this.entries.get(e.key) !== e) return;
    e.lastFailure = this.now();
    e.resolvable = resolvable;
    e.podEvents = podEvents;
    e.timestamp = e.lastFailure;
    if (e.updatedInFlight || this.moveRequestCycle >= e.cycle) this.toBackoffOrActive(e);
    else e.where = 'unschedulable';
  }

  /** the pod got scheduling gates while waiting: to gated */
  requeueGated(e: QueuedPod): void {
    if (this.entries.get(e.key) !== e) return;
    e.where = isGated(e.pod) ? 'gated' : e.where;
    if (e.where === 'inflight') this.toActive(e);
  }

  /** an error (the binding failed, the API server did not answer): to backoff */
  requeueError(e: QueuedPod): void {
    if (this.entries.get(e.key) !== e) return;
    e.lastFailure = this.now();
    e.timestamp = e.lastFailure;
    this.toBackoffOrActive(e);
  }

  /** a cluster event that may make unschedulable pods schedulable (MoveAllToActiveOrBackoffQueue) */
  moveAllToActiveOrBackoff(): void {
    this.moveRequestCycle = this.schedulingCycle;
    for (const e of this.entries.values()) if (e.where === 'unschedulable') this.moveOut(e);
  }

  /** a bound pod was added (`added`) or went away, or a claim, volume or class changed (`volumes`): the unschedulable pods that registered for it move */
  movePodEvent(which: keyof PodEvents): void {
    this.moveRequestCycle = this.schedulingCycle;
    for (const e of this.entries.values()) if (e.where === 'unschedulable' && e.podEvents[which]) this.moveOut(e);
  }

  /** some unschedulable pod waits for a bound pod to come or go */
  awaitsPodEvents(): boolean {
    for (const e of this.entries.values()) if (e.where === 'unschedulable' && (e.podEvents.added || e.podEvents.removed)) return true;
    return false;
  }

  /** the backoff of a pod after `attempts` attempts */
  backoffMs(attempts: number): number {
    let d = this.o.initialBackoffMs;
    for (let i = 1; i < attempts; i++) {
      d *= 2;
      if (d > this.o.maxBackoffMs) return this.o.maxBackoffMs;
    }
    return Math.min(d, this.o.maxBackoffMs);
  }

  private backoffExpiry(e: QueuedPod): number {
    return e.lastFailure + this.backoffMs(e.attempts);
  }

  // ── moves ────────────────────────────────────────────────────────────────

  private moveOut(e: QueuedPod): void {
    e.timestamp = this.now();
    this.toBackoffOrActive(e);
  }

  private toBackoffOrActive(e: QueuedPod): void {
    if (isGated(e.pod)) {
      e.where = 'gated';
      return;
    }
    if (this.now() < this.backoffExpiry(e)) {
      e.where = 'backoff';
      this.armBackoffTimer();
    } else this.toActive(e);
  }

  private toActive(e: QueuedPod): void {
    if (e.where === 'active') return;
    this.insertActive(e);
  }

  private insertActive(e: QueuedPod): void {
    e.where = 'active';
    // binary search for the first entry e goes before
    let lo = 0;
    let hi = this.active.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (before(this.active[mid]!, e)) lo = mid + 1;
      else hi = mid;
    }
    this.active.splice(lo, 0, e);
    this.wake();
  }

  private removeActive(e: QueuedPod): void {
    const i = this.active.indexOf(e);
    if (i >= 0) this.active.splice(i, 1);
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** the backoff timer fires at the earliest expiry and moves every expired pod to active */
  private armBackoffTimer(): void {
    if (this.closed) return;
    let next = Infinity;
    for (const e of this.entries.values()) if (e.where === 'backoff') next = Math.min(next, this.backoffExpiry(e));
    if (next === Infinity) return;
    if (this.backoffTimer && this.backoffTimerAt <= next) return;
    if (this.backoffTimer) clearTimeout(this.backoffTimer);
    this.backoffTimerAt = next;
    this.backoffTimer = setTimeout(() => {
      this.backoffTimer = undefined;
      this.flushBackoff();
    }, Math.max(0, next - this.now()));
    this.backoffTimer.unref?.();
  }

  /** flushBackoffQCompleted */
  flushBackoff(): void {
    const now = this.now();
    for (const e of this.entries.values()) if (e.where === 'backoff' && now >= this.backoffExpiry(e)) this.toActive(e);
    this.armBackoffTimer();
  }

  /** flushUnschedulablePodsLeftover, and the recheck of pods that pods leaving might help */
  flushUnschedulable(): void {
    const now = this.now();
    for (const e of this.entries.values()) {
      if (e.where !== 'unschedulable') continue;
      const waited = now - e.timestamp;
      if (waited >= this.o.maxInUnschedulableMs || (e.resolvable && waited >= this.o.recheckMs)) this.moveOut(e);
    }
  }
}
