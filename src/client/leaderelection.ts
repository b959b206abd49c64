// Lease-based leader election (client-go's tools/leaderelection with a LeaseLock on a
// coordination.k8s.io/v1 Lease).
//
// Candidates share one Lease. The holder renews spec.renewTime every retryPeriod; a candidate
// takes the Lease only when it has seen the same record unchanged for leaseDuration (measured
// on its own clock from when it observed the record, not from renewTime, so clock skew between
// machines does not matter) or when the holder released it (empty holderIdentity). A leader
// that cannot renew within renewDeadline stops leading. Every write is a PUT conditioned on the
// resourceVersion read, so two candidates never both win.
//
// Lease fields: holderIdentity, leaseDurationSeconds, acquireTime and renewTime (MicroTime:
// RFC 3339 with microseconds), leaseTransitions (incremented each time the holder changes).

import { jitter, sleep } from './flowcontrol.js';
import { nopLogger, type Logger } from './log.js';
import { isNotFound, type RESTClient } from './rest.js';
import { ResourceClient, type KubeObject } from './resources.js';
import { EventRecorder } from './events.js';

/** wait.JitterUntil's factor in client-go's elector. */
export const JITTER_FACTOR = 1.2;

export interface LeaderElectionRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: string;
  renewTime: string;
  leaseTransitions: number;
}

export interface LeaderCallbacks {
  /** called when this candidate becomes leader; `signal` aborts when it stops leading */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** called when run() ends (leadership lost or the elector stopped), leader or not, as in client-go */
  onStoppedLeading?(): void;
  /** called when the observed leader changes (including to this candidate) */
  onNewLeader?(identity: string): void;
}

export interface LeaderElectionConfig {
  client: RESTClient;
  /** the Lease: `kube-system/kube-controller-manager` for the controller manager */
  namespace: string;
  name: string;
  /** unique per candidate: `<hostname>_<uuid>` as kube-controller-manager uses */
  identity: string;
  /** --leader-elect-lease-duration (15 s) */
  leaseDurationMs: number;
  /** --leader-elect-renew-deadline (10 s) */
  renewDeadlineMs: number;
  /** --leader-elect-retry-period (2 s) */
  retryPeriodMs: number;
  callbacks: LeaderCallbacks;
  /** give the Lease up (empty holder, 1 s duration) when stopped while leading */
  releaseOnCancel?: boolean;
  /**
   * records a LeaderElection event on the Lease (client-go's LeaseLock.RecordEvent): the message
   * is `<identity> became leader` or `<identity> stopped leading`
   */
  recordEvent?: (lease: KubeObject, message: string) => void;
  log?: Logger;
  /** a clock for tests (ms) */
  now?: () => number;
}

interface LeaseObject extends KubeObject {
  spec?: Partial<LeaderElectionRecord> & { preferredHolder?: string; strategy?: string };
}

/** A MicroTime: `2024-01-02T03:04:05.123000Z`. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export function validateLeaderElectionConfig(c: Pick<LeaderElectionConfig, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs' | 'identity'>): string[] {
  const errs: string[] = [];
  if (c.leaseDurationMs <= c.renewDeadlineMs) errs.push('leaseDuration must be greater than renewDeadline');
  if (c.renewDeadlineMs <= JITTER_FACTOR * c.retryPeriodMs) errs.push('renewDeadline must be greater than retryPeriod*JitterFactor');
  if (c.leaseDurationMs < 1) errs.push('leaseDuration must be greater than zero');
  if (c.renewDeadlineMs < 1) errs.push('renewDeadline must be greater than zero');
  if (c.retryPeriodMs < 1) errs.push('retryPeriod must be greater than zero');
  if (!c.identity) errs.push('Lock identity is empty');
  return errs;
}

export class LeaderElector {
  private readonly leases: ResourceClient<LeaseObject>;
  private readonly log: Logger;
  private readonly now: () => number;
  /** the last Lease object read or written (its resourceVersion conditions the next write) */
  private lease?: LeaseObject;
  private observed?: LeaderElectionRecord;
  private observedRaw = '';
  private observedTime = 0;
  private reportedLeader = '';
  private running = false;

  constructor(readonly config: LeaderElectionConfig) {
    const errs = validateLeaderElectionConfig(config);
    if (errs.length) throw new Error(errs.join('; '));
    this.leases = new ResourceClient<LeaseObject>(config.client, { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' }, config.namespace);
    this.log = config.log ?? nopLogger;
    this.now = config.now ?? Date.now;
  }

  get identity(): string {
    return this.config.identity;
  }

  private get desc(): string {
    return `${this.config.namespace}/${this.config.name}`;
  }

  /** Whether the last observed record names this candidate. */
  isLeader(): boolean {
    return this.observed?.holderIdentity === this.config.identity;
  }

  /** The holder of the last observed record. */
  getLeader(): string {
    return this.observed?.holderIdentity ?? '';
  }

  /**
   * client-go's HealthzAdaptor check: an error when this candidate leads but has not renewed its
   * Lease for longer than the lease duration plus `toleranceMs` (a stuck renewal loop); undefined
   * otherwise, also while it does not lead.
   */
  healthCheck(toleranceMs: number): string | undefined {
    if (!this.isLeader()) return undefined;
    if (this.now() - this.observedTime > this.config.leaseDurationMs + toleranceMs) return `failed election to renew leadership on lease ${this.config.name}`;
    return undefined;
  }

  observedRecord(): LeaderElectionRecord | undefined {
    return this.observed ? { ...this.observed } : undefined;
  }

  /**
   * Campaigns until this candidate leads, leads until it cannot renew or `signal` aborts, then
   * returns (after onStoppedLeading). Run it again to campaign again.
   */
  async run(signal?: AbortSignal): Promise<void> {
    if (this.running) throw new Error('leader elector is already running');
    this.running = true;
    const stop = new AbortController();
    const onAbort = () => stop.abort(signal?.reason);
    if (signal?.aborted) stop.abort(signal.reason);
    else signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (!(await this.acquire(stop.signal))) return;
      const leading = new AbortController();
      const abortLeading = () => leading.abort(new Error('leader election lost'));
      stop.signal.addEventListener('abort', abortLeading, { once: true });
      Promise.resolve()
        .then(() => this.config.callbacks.onStartedLeading(leading.signal))
        .catch((e) => this.log.error(e, 'onStartedLeading failed', { lock: this.desc }));
      try {
        await this.renew(stop.signal);
      } finally {
        abortLeading();
        stop.signal.removeEventListener('abort', abortLeading);
      }
      if (this.config.releaseOnCancel) await this.release();
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.running = false;
      try {
        this.config.callbacks.onStoppedLeading?.();
      } catch (e) {
        this.log.error(e, 'onStoppedLeading failed', { lock: this.desc });
      }
    }
  }

  private recordEvent(what: string): void {
    if (!this.config.recordEvent || !this.lease) return;
    try {
      this.config.recordEvent({ ...this.lease, kind: 'Lease', apiVersion: 'coordination.k8s.io/v1' }, `${this.config.identity} ${what}`);
    } catch (e) {
      this.log.error(e, 'Recording the leader election event failed', { lock: this.desc });
    }
  }

  /** Tries every retryPeriod (jittered) until the lease is acquired; false if stopped first. */
  private async acquire(signal: AbortSignal): Promise<boolean> {
    this.log.info('Attempting to acquire leader lease...', { lock: this.desc });
    while (!signal.aborted) {
      const ok = await this.tryAcquireOrRenew(this.config.renewDeadlineMs);
      this.maybeReportTransition();
      if (ok) {
        this.recordEvent('became leader');
        this.log.info('Successfully acquired lease', { lock: this.desc, identity: this.config.identity });
        return true;
      }
      this.log.v(4).info('Failed to acquire lease', { lock: this.desc, holder: this.getLeader() });
      try {
        await sleep(jitter(this.config.retryPeriodMs, JITTER_FACTOR), signal);
      } catch {
        return false;
      }
    }
    return false;
  }

  /** Renews every retryPeriod; returns when a renewal could not be made within renewDeadline, or on stop. */
  private async renew(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const deadline = this.now() + this.config.renewDeadlineMs;
      let ok = false;
      // PollImmediateUntil(retryPeriod, tryAcquireOrRenew, renewDeadline)
      for (;;) {
        if (signal.aborted) return;
        const left = deadline - this.now();
        if (left <= 0) break;
        ok = await this.tryAcquireOrRenew(left);
        if (ok) break;
        if (deadline - this.now() <= 0) break;
        try {
          await sleep(Math.min(this.config.retryPeriodMs, Math.max(0, deadline - this.now())), signal);
        } catch {
          return;
        }
      }
      this.maybeReportTransition();
      if (!ok) {
        if (signal.aborted) return;
        this.recordEvent('stopped leading');
        this.log.info('Failed to renew lease', { lock: this.desc, err: 'timed out waiting for the condition' });
        return;
      }
      try {
        await sleep(this.config.retryPeriodMs, signal);
      } catch {
        return;
      }
    }
  }

  private isLeaseValid(now: number): boolean {
    return this.observedTime + (this.observed?.leaseDurationSeconds ?? 0) * 1000 > now;
  }

  private setObserved(rec: LeaderElectionRecord, raw?: string): void {
    this.observed = rec;
    this.observedRaw = raw ?? JSON.stringify(rec);
    this.observedTime = this.now();
  }

  private maybeReportTransition(): void {
    const holder = this.observed?.holderIdentity ?? '';
    if (!this.observed || holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    const cb = this.config.callbacks.onNewLeader;
    if (cb) {
      queueMicrotask(() => {
        try {
          cb(holder);
        } catch (e) {
          this.log.error(e, 'onNewLeader failed', { lock: this.desc });
        }
      });
    }
  }

  private recordOf(l: LeaseObject): LeaderElectionRecord {
    const s = l.spec ?? {};
    return {
      holderIdentity: s.holderIdentity ?? '',
      leaseDurationSeconds: s.leaseDurationSeconds ?? 0,
      acquireTime: s.acquireTime ?? '',
      renewTime: s.renewTime ?? '',
      leaseTransitions: s.leaseTransitions ?? 0,
    };
  }

  /** the Lease spec of a record (client-go's LeaderElectionRecordToLeaseSpec: holderIdentity always, "" when released) */
  private specOf(r: LeaderElectionRecord): LeaseObject['spec'] {
    const spec: LeaseObject['spec'] = { holderIdentity: r.holderIdentity, leaseDurationSeconds: r.leaseDurationSeconds };
    if (r.acquireTime) spec.acquireTime = r.acquireTime;
    if (r.renewTime) spec.renewTime = r.renewTime;
    spec.leaseTransitions = r.leaseTransitions;
    return spec;
  }

  /** the record replaces the whole spec, as client-go's LeaseLock.Update does */
  private async updateLease(rec: LeaderElectionRecord, timeoutMs: number): Promise<void> {
    if (!this.lease) throw new Error('lease not initialized, call get or create first');
    const next: LeaseObject = { ...this.lease, spec: this.specOf(rec) };
    this.lease = await this.leases.update(next, { timeoutMs });
  }

  /** One attempt (client-go's tryAcquireOrRenew). */
  private async tryAcquireOrRenew(timeoutMs: number): Promise<boolean> {
    const nowMs = this.now();
    const now = microTime(nowMs);
    const rec: LeaderElectionRecord = {
      holderIdentity: this.config.identity,
      leaseDurationSeconds: Math.floor(this.config.leaseDurationMs / 1000),
      renewTime: now,
      acquireTime: now,
      leaseTransitions: 0,
    };
    // 1. the leader's fast path: update optimistically from the record observed last time
    if (this.isLeader() && this.isLeaseValid(nowMs) && this.lease) {
      rec.acquireTime = this.observed!.acquireTime;
      rec.leaseTransitions = this.observed!.leaseTransitions;
      try {
        await this.updateLease(rec, timeoutMs);
        this.setObserved(rec);
        return true;
      } catch (e) {
        this.log.error(e, 'Failed to update lock optimistically, falling back to slow path', { lock: this.desc });
      }
    }
    // 2. get or create the record
    let cur: LeaseObject;
    try {
      cur = await this.leases.get(this.config.name, { timeoutMs });
    } catch (e) {
      if (!isNotFound(e)) {
        this.log.error(e, 'Error retrieving resource lock', { lock: this.desc });
        return false;
      }
      try {
        this.lease = await this.leases.create(
          { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.config.name, namespace: this.config.namespace }, spec: this.specOf(rec) },
          { timeoutMs },
        );
      } catch (e2) {
        this.log.error(e2, 'Error initially creating leader election record', { lock: this.desc });
        return false;
      }
      this.setObserved(rec);
      return true;
    }
    this.lease = cur;
    // 3. check the holder and whether its lease is still valid
    const old = this.recordOf(cur);
    const raw = JSON.stringify(old);
    if (raw !== this.observedRaw) this.setObserved(old, raw);
    if (old.holderIdentity && this.isLeaseValid(nowMs) && !this.isLeader()) {
      this.log.v(4).info('Lock is held and has not yet expired', { lock: this.desc, holder: old.holderIdentity });
      return false;
    }
    // 4. take or renew it
    if (this.isLeader()) {
      rec.acquireTime = old.acquireTime;
      rec.leaseTransitions = old.leaseTransitions;
    } else {
      rec.leaseTransitions = old.leaseTransitions + 1;
    }
    try {
      await this.updateLease(rec, timeoutMs);
    } catch (e) {
      this.log.error(e, 'Failed to update lock', { lock: this.desc });
      return false;
    }
    this.setObserved(rec);
    return true;
  }

  /** Gives the lease up if this candidate holds it (releaseOnCancel). */
  async release(): Promise<boolean> {
    if (!this.isLeader() || !this.lease) return true;
    const now = microTime(this.now());
    const rec: LeaderElectionRecord = { holderIdentity: '', leaseDurationSeconds: 1, renewTime: now, acquireTime: now, leaseTransitions: this.observed!.leaseTransitions };
    try {
      await this.updateLease(rec, this.config.renewDeadlineMs);
    } catch (e) {
      this.log.error(e, 'Failed to release lock', { lock: this.desc });
      return false;
    }
    this.setObserved(rec);
    return true;
  }
}

/** a daemon's campaign for its Lease, term after term (runCampaign) */
export interface CampaignOptions extends Omit<LeaderElectionConfig, 'callbacks' | 'recordEvent' | 'releaseOnCancel'> {
  /** the component that records the LeaderElection events on the Lease (`kube-controller-manager`) */
  component: string;
  /** one term of leadership: the daemon's work, until the signal aborts; awaited before campaigning again */
  lead(signal: AbortSignal): Promise<void>;
  /** the leadership changed (for health and metrics) */
  leading(on: boolean): void;
  /** the elector of the current term (to say who leads) */
  elector?(e: LeaderElector): void;
  /** a lost leadership ends the campaign (the daemon exits, as Kubernetes' do); without it, campaigns again */
  onLostLeadership?: () => void;
  /** the error line of a lost leadership ("leaderelection lost", kube-scheduler's "Leaderelection lost") */
  lostMessage: string;
  /** what stops with the leadership, for the log ("controllers", "scheduling") */
  work: string;
}

/**
 * kube-controller-manager's and kube-scheduler's leader election: campaign for the Lease, run
 * `lead` for each term (events LeaderElection on the Lease), and when a term ends without the
 * campaign being stopped, either end (onLostLeadership) or campaign again. Resolves when `signal`
 * aborts or the leadership is lost for good.
 */
export async function runCampaign(o: CampaignOptions, signal: AbortSignal): Promise<void> {
  const log = o.log ?? nopLogger;
  const recorder = new EventRecorder(o.client, o.component, log);
  while (!signal.aborted) {
    let running: Promise<void> | undefined;
    const elector = new LeaderElector({
      ...o,
      releaseOnCancel: true,
      recordEvent: (lease, message) => void recorder.event(lease, 'Normal', 'LeaderElection', message),
      callbacks: {
        onStartedLeading: (leadSignal) => {
          o.leading(true);
          log.info('Started leading', { lock: `${o.namespace}/${o.name}`, identity: o.identity });
          running = o.lead(leadSignal);
        },
        onStoppedLeading: () => o.leading(false),
        onNewLeader: (id) => {
          if (id !== o.identity) log.info('New leader elected', { identity: id });
        },
      },
    });
    o.elector?.(elector);
    await elector.run(signal);
    // the term's work winds down before campaigning again
    await running;
    if (signal.aborted) return;
    if (o.onLostLeadership) {
      log.error(undefined, o.lostMessage);
      o.onLostLeadership();
      return;
    }
    log.warn(`Leader election lost; ${o.work} stopped, campaigning again`, { identity: o.identity });
  }
}
