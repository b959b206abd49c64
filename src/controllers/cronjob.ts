// The CronJob controller (kube-controller-manager's cronjob-controller, pkg/controller/cronjob v2):
// a CronJob makes a Job from its jobTemplate at each time its schedule names.
//
// One sync of a CronJob (its key in the queue, again just after the next scheduled time):
//   - status.active is brought in line with its Jobs: a finished Job leaves it (event
//     SawCompletedJob), a Job gone leaves it after a fresh read (MissingJob), an unfinished Job it
//     controls that the list lacks is reported (UnexpectedJob); lastSuccessfulTime follows the
//     newest completion;
//   - unless it is being deleted or suspended: the most recent scheduled time not yet run (from
//     lastScheduleTime, else its creation, and not before now - startingDeadlineSeconds) is run,
//     unless it is already too late (MissSchedule), already done, or a Job still runs and the
//     concurrencyPolicy is Forbid (JobAlreadyActive); with Replace the running Jobs are deleted
//     first. The Job is `<cronjob>-<scheduled time in minutes since the epoch>`, with the
//     template's labels, annotations, spec, the annotation
//     batch.kubernetes.io/cronjob-scheduled-timestamp and a controller reference; status.active
//     gains it and lastScheduleTime becomes the scheduled time (SuccessfulCreate);
//   - finished Jobs beyond successfulJobsHistoryLimit and failedJobsHistoryLimit are deleted, the
//     earliest started first (SuccessfulDelete);
//   - status is written through the status subresource when it changed.
// More than 100 missed times are reported (TooManyMissedTimes) and only the latest is run, as in
// Kubernetes. Times are in spec.timeZone, a TZ= prefix of the schedule, or else this process's
// zone (Go's time.Local, as kube-controller-manager uses).
import { DeletedFinalStateUnknown, type Informer } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isAlreadyExists, isConflict, isNotFound, type RESTClient } from '../client/rest.js';
import { ResourceClient, objectKey, splitKey } from '../client/resources.js';
import { EventRecorder } from '../client/events.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { parseSchedule, zoneOffset, type Schedule } from '../schema/validation/cron.js';
import { informerOf, withClient, type ControllerDescriptor } from './context.js';
import { controllerRefOf } from './expectations.js';
import { jobFinishedCondition } from './job.js';
import { runQueueWorkers } from './workers.js';

const CRONJOBS = { group: 'batch', version: 'v1', resource: 'cronjobs' };
const JOBS = { group: 'batch', version: 'v1', resource: 'jobs' };
export const SCHEDULED_TIMESTAMP = 'batch.kubernetes.io/cronjob-scheduled-timestamp';
/** how long after a scheduled time the CronJob is synced again (nextScheduleDelta) */
const NEXT_SCHEDULE_DELTA_MS = 100;
/** missed times beyond which a warning is recorded */
const TOO_MANY_MISSED = 100;

export interface CronJobControllerOptions {
  client: RESTClient;
  cronJobs: Informer<any>;
  jobs: Informer<any>;
  recorder?: EventRecorder;
  log?: Logger;
  now?: () => number;
  /** the zone of schedules without one (default: this process's) */
  localZone?: string;
}

const seconds = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** the type of a finished Job's condition (Complete or Failed), if any */
const finishedCondition = (job: any): string | undefined => jobFinishedCondition(job)?.type;

/** Go's time.RFC3339 of an instant in a zone (`2026-12-05T13:00:00+01:00`, `Z` in UTC) */
function rfc3339In(t: number, zone: string): string {
  const off = zoneOffset(t, zone);
  const wall = new Date(t + off).toISOString().replace(/\.\d+Z$/, '');
  if (off === 0) return `${wall}Z`;
  const m = Math.abs(off) / 60000;
  return `${wall}${off < 0 ? '-' : '+'}${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

/** RFC1123Z, as the MissSchedule event prints the time */
function rfc1123z(t: number): string {
  const d = new Date(t);
  const day = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][d.getUTCDay()];
  const mon = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][d.getUTCMonth()];
  const p = (n: number) => String(n).padStart(2, '0');
  return `${day}, ${p(d.getUTCDate())} ${mon} ${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}

export class CronJobController {
  readonly queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'cronjob');
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly localZone: string;
  /**
   * the CronJobs whose status this controller wrote, as written, by key, with the resourceVersion
   * the write was made on: while the informer still shows that version, the sync starts from what
   * was written (else it would take its own new Job for an unexpected one and make it again)
   */
  private readonly written = new Map<string, { base: string; obj: any }>();

  constructor(private readonly o: CronJobControllerOptions) {
    this.log = o.log ?? nopLogger;
    this.now = o.now ?? Date.now;
    this.localZone = o.localZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC';
    o.cronJobs.addEventHandler({
      add: (cj) => this.queue.add(objectKey(cj)),
      update: (_old, cj) => this.queue.add(objectKey(cj)),
      delete: (d) => this.queue.add(objectKey(d instanceof DeletedFinalStateUnknown ? d.obj : d)),
    });
    const onJob = (job: any) => {
      const ref = controllerRefOf(job);
      if (ref?.kind !== 'CronJob' || ref.apiVersion?.split('/')[0] !== 'batch') return;
      const cj = o.cronJobs.getByName(job.metadata?.namespace, ref.name);
      if (cj?.metadata?.uid === ref.uid) this.queue.add(objectKey(cj));
    };
    o.jobs.addEventHandler({
      add: onJob,
      update: (_old, job) => onJob(job),
      delete: (d) => onJob(d instanceof DeletedFinalStateUnknown ? d.obj : d),
    });
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    await runQueueWorkers(
      {
        name: 'cronjob controller',
        log: this.log,
        queue: this.queue,
        informers: [this.o.cronJobs, this.o.jobs],
        sync: (k, s) => this.sync(k, s),
        onError: (k, err) => {
          this.log.error(err, 'Error syncing CronJobController', { cronjob: k });
          this.queue.addRateLimited(k);
        },
      },
      workers,
      signal,
    );
  }

  private about(cj: any): any {
    return { ...cj, kind: 'CronJob', apiVersion: 'batch/v1' };
  }

  private event(cj: any, type: 'Normal' | 'Warning', reason: string, message: string): void {
    void this.o.recorder?.event(this.about(cj), type, reason, message);
  }

  private jobsClient(ns: string): ResourceClient<any> {
    return new ResourceClient<any>(this.o.client, JOBS, ns);
  }

  /** one CronJob's sync (sync and syncCronJob) */
  async sync(key: string, signal: AbortSignal): Promise<void> {
    const { namespace, name } = splitKey(key);
    const cached = this.o.cronJobs.getByName(namespace, name);
    if (!cached) {
      this.written.delete(key);
      return;
    }
    const mine = this.written.get(key);
    const cj = structuredClone(mine && mine.base === cached.metadata?.resourceVersion ? mine.obj : cached);
    if (mine && mine.base !== cached.metadata?.resourceVersion) this.written.delete(key);
    cj.status ??= {};
    const base = cached.metadata?.resourceVersion;
    const jobs = this.o.jobs.list().filter((j) => j?.metadata?.namespace === cj.metadata.namespace && controllerRefOf(j)?.uid === cj.metadata.uid);
    const before = JSON.stringify(cj.status);
    let requeueMs: number | undefined;
    try {
      requeueMs = await this.syncCronJob(cj, jobs, signal);
    } finally {
      if (JSON.stringify(cj.status) !== before) {
        const out = await this.writeStatus(cj, signal);
        if (out) this.written.set(key, { base, obj: out });
      }
    }
    await this.cleanupFinishedJobs(cj, jobs, signal);
    if (requeueMs !== undefined) this.queue.addAfter(key, Math.max(0, requeueMs));
  }

  /** what a sync changes in cj.status; the time until the next scheduled time, if any */
  private async syncCronJob(cj: any, jobs: any[], signal: AbortSignal): Promise<number | undefined> {
    const now = this.now();
    const status = cj.status;
    status.active = Array.isArray(status.active) ? status.active : [];
    const inActive = (uid: string) => status.active.some((r: any) => r?.uid === uid);
    const children = new Set<string>();
    for (const j of jobs) {
      children.add(j.metadata.uid);
      const finished = finishedCondition(j);
      if (!inActive(j.metadata.uid) && !finished) {
        // (a fresh read first: the cache may not have the status that lists it yet)
        const fresh = await new ResourceClient<any>(this.o.client, CRONJOBS, cj.metadata.namespace).get(cj.metadata.name, { signal }).catch(() => undefined);
        if (!(fresh?.status?.active ?? []).some((r: any) => r?.uid === j.metadata.uid)) {
          this.event(cj, 'Warning', 'UnexpectedJob', `Saw a job that the controller did not create or forgot: ${j.metadata.name}`);
        }
      } else if (inActive(j.metadata.uid) && finished) {
        status.active = status.active.filter((r: any) => r?.uid !== j.metadata.uid);
        this.event(cj, 'Normal', 'SawCompletedJob', `Saw completed job: ${j.metadata.name}, condition: ${finished}`);
      }
      if (finished === 'Complete' && j.status?.completionTime) {
        const done = Date.parse(j.status.completionTime);
        if (!status.lastSuccessfulTime || done > Date.parse(status.lastSuccessfulTime)) status.lastSuccessfulTime = j.status.completionTime;
      }
    }
    // references to Jobs the informer does not have: gone, after a fresh read says so
    for (const ref of [...status.active]) {
      if (children.has(ref?.uid)) continue;
      try {
        await this.jobsClient(ref.namespace ?? cj.metadata.namespace).get(ref.name, { signal });
      } catch (e) {
        if (!isNotFound(e)) throw e;
        this.event(cj, 'Normal', 'MissingJob', `Active job went missing: ${ref.name}`);
        status.active = status.active.filter((r: any) => r?.uid !== ref.uid);
      }
    }
    if (status.active.length === 0) delete status.active;
    if (cj.metadata.deletionTimestamp) return undefined;
    if (cj.spec?.suspend === true) {
      this.log.v(4).info('Not starting job because the cron is suspended', { cronjob: objectKey(cj) });
      return undefined;
    }
    let sched: Schedule;
    const spec = cj.spec?.timeZone ? `TZ=${cj.spec.timeZone} ${cj.spec.schedule}` : String(cj.spec?.schedule ?? '');
    try {
      sched = parseSchedule(spec);
    } catch (e) {
      this.event(cj, 'Warning', 'UnparseableSchedule', `unparseable schedule: ${JSON.stringify(cj.spec?.schedule)} : ${(e as Error).message}`);
      return undefined;
    }
    const scheduled = this.nextScheduleTime(cj, now, sched);
    const untilNext = () => this.nextScheduleDuration(cj, now, sched);
    if (scheduled === undefined) return untilNext();
    const deadline = cj.spec?.startingDeadlineSeconds;
    if (typeof deadline === 'number' && scheduled + deadline * 1000 < now) {
      this.log.v(4).info('Missed starting window', { cronjob: objectKey(cj) });
      this.event(cj, 'Warning', 'MissSchedule', `Missed scheduled time to start a job: ${rfc1123z(scheduled)}`);
      return untilNext();
    }
    const jobName = `${cj.metadata.name}-${Math.floor(scheduled / 60000)}`;
    const lastSchedule = status.lastScheduleTime ? Date.parse(status.lastScheduleTime) : undefined;
    if ((status.active ?? []).some((r: any) => r?.name === jobName) || lastSchedule === scheduled) {
      this.log.v(4).info('Not starting job because the scheduled time is already processed', { cronjob: objectKey(cj) });
      return untilNext();
    }
    const policy = cj.spec?.concurrencyPolicy ?? 'Allow';
    if (policy === 'Forbid' && (status.active ?? []).length > 0) {
      this.log.v(4).info('Not starting job because prior execution is still running and concurrency policy is Forbid', { cronjob: objectKey(cj) });
      this.event(cj, 'Normal', 'JobAlreadyActive', 'Not starting job because prior execution is running and concurrency policy is Forbid');
      return untilNext();
    }
    if (policy === 'Replace') {
      for (const ref of [...(status.active ?? [])]) {
        this.log.v(4).info('Deleting job that was still running at next scheduled start time', { job: `${ref.namespace}/${ref.name}` });
        await this.deleteJob(cj, ref.name, signal);
        status.active = status.active.filter((r: any) => r?.uid !== ref.uid);
      }
      if (status.active?.length === 0) delete status.active;
    }
    const made = await this.createJob(cj, jobName, scheduled, sched, signal);
    status.active = [...(status.active ?? []), { kind: 'Job', namespace: made.metadata.namespace, name: made.metadata.name, uid: made.metadata.uid, apiVersion: 'batch/v1', resourceVersion: made.metadata.resourceVersion }];
    status.lastScheduleTime = seconds(scheduled);
    return untilNext();
  }

  /** the Job of a scheduled time (getJobFromTemplate2), created; an existing one of this CronJob is taken as made */
  private async createJob(cj: any, name: string, scheduled: number, sched: Schedule, signal: AbortSignal): Promise<any> {
    const t = cj.spec?.jobTemplate ?? {};
    const metadata: any = {
      name,
      namespace: cj.metadata.namespace,
      labels: { ...(t.metadata?.labels ?? {}) },
      annotations: { ...(t.metadata?.annotations ?? {}), [SCHEDULED_TIMESTAMP]: rfc3339In(scheduled, sched.zone ?? this.localZone) },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: cj.metadata.name, uid: cj.metadata.uid, controller: true, blockOwnerDeletion: true }],
    };
    if (Object.keys(metadata.labels).length === 0) delete metadata.labels;
    const job = { apiVersion: 'batch/v1', kind: 'Job', metadata, spec: structuredClone(t.spec ?? {}) };
    const client = this.jobsClient(cj.metadata.namespace);
    try {
      const made = await client.create(job, { signal });
      this.log.v(4).info('Created Job', { job: `${made.metadata.namespace}/${made.metadata.name}`, cronjob: objectKey(cj) });
      this.event(cj, 'Normal', 'SuccessfulCreate', `Created job ${made.metadata.name}`);
      return made;
    } catch (e) {
      if (isAlreadyExists(e)) {
        // (made before a restart, or by another actor: it counts as this time's Job if this CronJob controls it)
        const existing = await client.get(name, { signal });
        if (controllerRefOf(existing)?.uid !== cj.metadata.uid) throw new Error(`Job ${cj.metadata.namespace}/${name} is not controlled by CronJob ${cj.metadata.name}`);
        this.log.info('Job already exists', { cronjob: objectKey(cj), job: `${cj.metadata.namespace}/${name}` });
        return existing;
      }
      if (!/is being terminated/.test((e as Error).message)) this.event(cj, 'Warning', 'FailedCreate', `Error creating job: ${(e as Error).message}`);
      throw e;
    }
  }

  private async deleteJob(cj: any, name: string, signal: AbortSignal): Promise<void> {
    try {
      await this.jobsClient(cj.metadata.namespace).delete(name, { propagationPolicy: 'Background', signal });
    } catch (e) {
      if (isNotFound(e)) return;
      this.event(cj, 'Warning', 'FailedDelete', `Deleted job: ${(e as Error).message}`);
      throw e;
    }
    this.event(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${name}`);
  }

  /**
   * The latest scheduled time at or before now not yet considered (nextScheduleTime and
   * mostRecentScheduleTime): counted from lastScheduleTime, else the creation, and not from
   * before now - startingDeadlineSeconds; undefined when none has come.
   */
  private nextScheduleTime(cj: any, now: number, sched: Schedule): number | undefined {
    let earliest = Date.parse(cj.status?.lastScheduleTime ?? cj.metadata?.creationTimestamp ?? '');
    if (!Number.isFinite(earliest)) earliest = now;
    const deadline = cj.spec?.startingDeadlineSeconds;
    if (typeof deadline === 'number' && now - deadline * 1000 > earliest) earliest = now - deadline * 1000;
    if (earliest > now) return undefined;
    const { latest, missed } = this.mostRecent(earliest, now, sched);
    if (missed > TOO_MANY_MISSED) {
      this.event(cj, 'Warning', 'TooManyMissedTimes', `too many missed start times: ${missed}. Set or decrease .spec.startingDeadlineSeconds or check clock skew`);
      this.log.info('too many missed times', { cronjob: objectKey(cj), missed });
    }
    return latest;
  }

  /** the last scheduled time after `from` and at or before `now`, and how many there were */
  private mostRecent(from: number, now: number, sched: Schedule): { latest: number | undefined; missed: number } {
    const t1 = sched.next(from, this.localZone);
    if (t1 === undefined || t1 > now) return { latest: undefined, missed: 0 };
    let latest = t1;
    let missed = 1;
    // (each time in turn, up to a bound; beyond it, whole intervals at once, as Kubernetes counts
    // them from the first two times)
    for (; missed <= TOO_MANY_MISSED; missed++) {
      const t = sched.next(latest, this.localZone);
      if (t === undefined || t > now) return { latest, missed };
      latest = t;
    }
    const t2 = sched.next(t1, this.localZone)!;
    const interval = Math.max(1000, t2 - t1);
    const n = Math.floor((now - t1) / interval);
    latest = t1 + n * interval;
    for (let t = sched.next(latest, this.localZone); t !== undefined && t <= now; t = sched.next(latest, this.localZone)) latest = t;
    return { latest, missed: n + 1 };
  }

  /** the time until the next scheduled time after the latest one considered, plus 100 ms */
  private nextScheduleDuration(cj: any, now: number, sched: Schedule): number | undefined {
    const earliest = Date.parse(cj.status?.lastScheduleTime ?? cj.metadata?.creationTimestamp ?? '');
    const from = this.mostRecent(Number.isFinite(earliest) ? earliest : now, now, sched).latest ?? (Number.isFinite(earliest) ? earliest : now);
    const next = sched.next(from, this.localZone);
    return next === undefined ? undefined : next + NEXT_SCHEDULE_DELTA_MS - now;
  }

  /** finished Jobs beyond the history limits are deleted, the earliest started first */
  private async cleanupFinishedJobs(cj: any, jobs: any[], signal: AbortSignal): Promise<void> {
    const okLimit = cj.spec?.successfulJobsHistoryLimit;
    const failLimit = cj.spec?.failedJobsHistoryLimit;
    if (typeof okLimit !== 'number' && typeof failLimit !== 'number') return;
    const byStart = (a: any, b: any) => {
      const x = Date.parse(a?.status?.startTime ?? '');
      const y = Date.parse(b?.status?.startTime ?? '');
      if (Number.isFinite(x) !== Number.isFinite(y)) return Number.isFinite(x) ? -1 : 1;
      if (x !== y && Number.isFinite(x)) return x - y;
      return String(a.metadata.name).localeCompare(String(b.metadata.name));
    };
    for (const [kind, limit] of [['Complete', okLimit], ['Failed', failLimit]] as const) {
      if (typeof limit !== 'number') continue;
      const done = jobs.filter((j) => finishedCondition(j) === kind && !j.metadata.deletionTimestamp).sort(byStart);
      for (const j of done.slice(0, Math.max(0, done.length - limit))) await this.deleteJob(cj, j.metadata.name, signal);
    }
  }

  /** writes cj.status (a conflict: once more on a fresh read, keeping the fresh spec); the object written */
  private async writeStatus(cj: any, signal: AbortSignal): Promise<any> {
    const client = new ResourceClient<any>(this.o.client, CRONJOBS, cj.metadata.namespace);
    try {
      return await client.updateStatus(cj, { signal });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      if (!isConflict(e)) throw e;
      const fresh = await client.get(cj.metadata.name, { signal });
      return client.updateStatus({ ...fresh, status: cj.status }, { signal });
    }
  }
}

export const cronJobControllerDescriptor: ControllerDescriptor = {
  name: 'cronjob-controller',
  async run(ctx) {
    await withClient(ctx, 'cronjob-controller', undefined, async (client) => {
      const c = new CronJobController({
        client,
        cronJobs: informerOf<any>(ctx, CRONJOBS),
        jobs: informerOf<any>(ctx, JOBS),
        recorder: new EventRecorder(client, 'cronjob-controller', ctx.log),
        log: ctx.log,
      });
      await c.run(ctx.options.concurrentCronJobSyncs, ctx.signal);
    });
  },
};
