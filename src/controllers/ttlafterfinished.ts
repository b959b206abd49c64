// The TTL-after-finished controller (kube-controller-manager's pkg/controller/ttlafterfinished):
// deletes a finished Job (condition Complete or Failed True) spec.ttlSecondsAfterFinished
// seconds after it finished.
//
// A Job is queued when it is added or updated finished with a TTL; its sync waits (the queue's
// addAfter) until the TTL has run out, reads the Job again from the API server (the cache may
// be behind: the TTL may have been changed or removed meanwhile) and deletes it with
// propagationPolicy Foreground, its uid and resourceVersion as preconditions, so that a Job
// changed or made again under the name since that read is not deleted.
//
// With the garbage collector off (as `keelson server` runs by default) the API server sets no
// foregroundDeletion finalizer, so the Job goes at once and its pods are left behind.

import type { Informer } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isConflict, isNotFound, type RESTClient } from '../client/rest.js';
import { ResourceClient, objectKey, splitKey } from '../client/resources.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { informerOf, withClient, type ControllerDescriptor } from './context.js';
import { JOBS, jobFinishedCondition } from './job.js';
import { runQueueWorkers } from './workers.js';

const COMPONENT = 'ttl-after-finished-controller';


/** a Job with a TTL that has finished and is not being deleted (needsCleanup) */
export function needsCleanup(job: any): boolean {
  return typeof job?.spec?.ttlSecondsAfterFinished === 'number' && !!jobFinishedCondition(job) && !job?.metadata?.deletionTimestamp;
}

/** when the Job finished: its condition's lastTransitionTime, else status.completionTime */
export function finishedAt(job: any): number | undefined {
  const t = Date.parse(jobFinishedCondition(job)?.lastTransitionTime ?? job?.status?.completionTime ?? '');
  return Number.isFinite(t) ? t : undefined;
}

export interface TTLAfterFinishedOptions {
  client: RESTClient;
  jobs: Informer<any>;
  log?: Logger;
  now?: () => number;
}

export class TTLAfterFinishedController {
  readonly queue: RateLimitingQueue<string>;
  private readonly log: Logger;
  private readonly now: () => number;

  constructor(private readonly o: TTLAfterFinishedOptions) {
    this.log = o.log ?? nopLogger;
    this.now = o.now ?? Date.now;
    this.queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'ttl_jobs_to_delete');
    const enqueue = (job: any) => {
      if (needsCleanup(job)) this.queue.add(objectKey(job));
    };
    o.jobs.addEventHandler({ add: enqueue, update: (_old, job) => enqueue(job) });
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    await runQueueWorkers(
      {
        name: 'TTL after finished controller',
        log: this.log,
        queue: this.queue,
        informers: [this.o.jobs],
        sync: (k, s) => this.sync(k, s),
        onError: (k, err) => {
          this.log.error(err, 'Error cleaning up Job', { job: k });
          this.queue.addRateLimited(k);
        },
      },
      workers,
      signal,
    );
  }

  /**
   * The time left before the Job expires (<= 0: expired), or undefined when it needs no cleanup.
   * A Job with a finished condition but no time on it cannot be judged: an error.
   */
  private timeLeft(job: any): number | undefined {
    if (!needsCleanup(job)) return undefined;
    const at = finishedAt(job);
    if (at === undefined) throw new Error(`unable to find the time when the Job ${objectKey(job)} finished`);
    if (at > this.now()) this.log.info('Warning: Found Job finished in the future. This is likely due to time skew in the cluster. Job cleanup will be deferred.', { job: objectKey(job) });
    return at + job.spec.ttlSecondsAfterFinished * 1000 - this.now();
  }

  /** one Job (processJob): requeued for the time left, or deleted once expired on a fresh read */
  async sync(key: string, signal: AbortSignal): Promise<void> {
    const { namespace: ns, name } = splitKey(key);
    const cached = this.o.jobs.getByName(ns, name);
    if (!cached || !this.expired(key, cached)) return;
    const client = new ResourceClient<any>(this.o.client, JOBS, ns);
    let fresh: any;
    try {
      fresh = await client.get(name, { signal });
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
    if (!this.expired(key, fresh)) return;
    this.log.v(4).info('Cleaning up Job', { job: key });
    try {
      await client.delete(name, { propagationPolicy: 'Foreground', preconditions: { uid: fresh.metadata.uid, resourceVersion: fresh.metadata.resourceVersion }, signal });
    } catch (e) {
      // (gone already; or changed since the read: its update event queues it again)
      if (isNotFound(e) || isConflict(e)) return;
      throw e;
    }
  }

  /** whether the Job's TTL ran out; if not, the key comes back when it will have */
  private expired(key: string, job: any): boolean {
    const left = this.timeLeft(job);
    if (left === undefined) return false;
    if (left > 0) {
      this.queue.addAfter(key, left);
      return false;
    }
    return true;
  }
}

export const ttlAfterFinishedControllerDescriptor: ControllerDescriptor = {
  name: 'ttl-after-finished-controller',
  async run(ctx) {
    await withClient(ctx, COMPONENT, undefined, async (client) => {
      const c = new TTLAfterFinishedController({ client, jobs: informerOf<any>(ctx, JOBS), log: ctx.log });
      await c.run(ctx.options.concurrentTTLAfterFinishedSyncs, ctx.signal);
    });
  },
};
