// Work queues as controllers use them (client-go's util/workqueue):
//
//   - WorkQueue: a set-like FIFO. An item added several times before a worker takes it is
//     processed once; an item added while a worker processes it is queued again only when that
//     worker calls done(), so no two workers ever process the same item at the same time.
//   - DelayingQueue: addAfter(item, ms). An item already waiting keeps the earlier time.
//   - RateLimitingQueue: addRateLimited(item) waits as the rate limiter says (per-item
//     exponential backoff, an overall token bucket, or the max of several); forget(item) resets
//     the item's backoff once it was processed successfully.
//
// Shutdown: shutDown() makes add() a no-op and wakes idle workers; items already queued are
// still handed out, then get() reports shutdown. shutDownWithDrain() also waits until every
// item being processed is done.

import { TokenBucket } from './flowcontrol.js';

// ── rate limiters ───────────────────────────────────────────────────────────

export interface RateLimiter<T> {
  /** how long (ms) to wait before the item may be processed again; counts a failure */
  when(item: T): number;
  /** the item succeeded: forget its failures */
  forget(item: T): void;
  /** failures recorded for the item */
  numRequeues(item: T): number;
}

/** baseDelay * 2^failures, capped at maxDelay (client-go's ItemExponentialFailureRateLimiter). */
export class ItemExponentialFailureRateLimiter<T> implements RateLimiter<T> {
  private readonly failures = new Map<T, number>();

  constructor(
    readonly baseDelayMs: number,
    readonly maxDelayMs: number,
  ) {}

  when(item: T): number {
    const exp = this.failures.get(item) ?? 0;
    this.failures.set(item, exp + 1);
    const backoff = this.baseDelayMs * 2 ** exp;
    if (!Number.isFinite(backoff) || backoff > this.maxDelayMs) return this.maxDelayMs;
    return backoff;
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/** fastDelay for the first maxFastAttempts failures, slowDelay after (ItemFastSlowRateLimiter). */
export class ItemFastSlowRateLimiter<T> implements RateLimiter<T> {
  private readonly failures = new Map<T, number>();

  constructor(
    readonly fastDelayMs: number,
    readonly slowDelayMs: number,
    readonly maxFastAttempts: number,
  ) {}

  when(item: T): number {
    const n = (this.failures.get(item) ?? 0) + 1;
    this.failures.set(item, n);
    return n <= this.maxFastAttempts ? this.fastDelayMs : this.slowDelayMs;
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/** An overall token bucket: qps retries per second across all items, `burst` at once (BucketRateLimiter). */
export class BucketRateLimiter<T> implements RateLimiter<T> {
  readonly bucket: TokenBucket;

  constructor(qps: number, burst: number, bucket?: TokenBucket) {
    this.bucket = bucket ?? new TokenBucket(qps, burst);
  }

  when(_item: T): number {
    return this.bucket.reserve();
  }

  forget(_item: T): void {}

  numRequeues(_item: T): number {
    return 0;
  }
}

/** The longest wait of several limiters (MaxOfRateLimiter). */
export class MaxOfRateLimiter<T> implements RateLimiter<T> {
  readonly limiters: RateLimiter<T>[];

  constructor(...limiters: RateLimiter<T>[]) {
    this.limiters = limiters;
  }

  when(item: T): number {
    let ret = 0;
    for (const l of this.limiters) ret = Math.max(ret, l.when(item));
    return ret;
  }

  forget(item: T): void {
    for (const l of this.limiters) l.forget(item);
  }

  numRequeues(item: T): number {
    let ret = 0;
    for (const l of this.limiters) ret = Math.max(ret, l.numRequeues(item));
    return ret;
  }
}

/** client-go's DefaultControllerRateLimiter: max of exponential(5ms, 1000s) and bucket(10 qps, 100). */
export function defaultControllerRateLimiter<T>(): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(new ItemExponentialFailureRateLimiter<T>(5, 1000_000), new BucketRateLimiter<T>(10, 100));
}

// ── the queue ───────────────────────────────────────────────────────────────

export type GetResult<T> = { item: T; shutdown: false } | { item: undefined; shutdown: true };

/** what a named queue reports (client-go's queueMetrics): see workqueuemetrics.ts */
export interface WorkQueueMetrics {
  /** an item became dirty (queued, or due again while processed) */
  add(item: unknown): void;
  /** a worker took the item */
  get(item: unknown): void;
  /** the worker finished the item */
  done(item: unknown): void;
  /** a rate-limited add */
  retry(): void;
}

export interface WorkQueueMetricsProvider {
  forQueue(name: string): WorkQueueMetrics;
}

let metricsProvider: WorkQueueMetricsProvider | undefined;

/**
 * The metrics of every named queue made from now on (client-go's workqueue.SetProvider); without
 * one (keelson server's embedded controllers), queues report nothing and cost nothing for it.
 */
export function setWorkQueueMetricsProvider(p: WorkQueueMetricsProvider | undefined): void {
  metricsProvider = p;
}

export class WorkQueue<T> {
  private queue: T[] = [];
  private head = 0;
  private readonly dirty = new Set<T>();
  private readonly processing = new Set<T>();
  private waiters: (() => void)[] = [];
  private drainWaiters: (() => void)[] = [];
  private shutting = false;
  protected readonly metrics: WorkQueueMetrics | undefined;

  constructor(readonly name = '') {
    this.metrics = name && metricsProvider ? metricsProvider.forQueue(name) : undefined;
  }

  /** Marks the item as needing processing. */
  add(item: T): void {
    if (this.shutting) return;
    if (this.dirty.has(item)) return;
    this.metrics?.add(item);
    this.dirty.add(item);
    if (this.processing.has(item)) return;
    this.queue.push(item);
    this.wakeOne();
  }

  /** Items waiting to be processed (not those being processed). */
  len(): number {
    return this.queue.length - this.head;
  }

  /** Waits for an item; the worker must call done(item) when finished with it. */
  async get(): Promise<GetResult<T>> {
    while (this.len() === 0 && !this.shutting) {
      await new Promise<void>((r) => this.waiters.push(r));
    }
    if (this.len() === 0) return { item: undefined, shutdown: true };
    const item = this.queue[this.head++]!;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.processing.add(item);
    this.dirty.delete(item);
    this.metrics?.get(item);
    return { item, shutdown: false };
  }

  /** The worker finished the item; if it was added again meanwhile it is queued again now. */
  done(item: T): void {
    if (this.processing.delete(item)) this.metrics?.done(item);
    if (this.dirty.has(item)) {
      this.queue.push(item);
      this.wakeOne();
    }
    if (this.processing.size === 0 && this.drainWaiters.length) {
      const w = this.drainWaiters;
      this.drainWaiters = [];
      for (const f of w) f();
    }
  }

  /** Stops accepting items and wakes idle workers; queued items are still handed out. */
  shutDown(): void {
    this.shutting = true;
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** shutDown(), then wait until no item is being processed. */
  async shutDownWithDrain(): Promise<void> {
    this.shutDown();
    while (this.processing.size > 0) await new Promise<void>((r) => this.drainWaiters.push(r));
  }

  shuttingDown(): boolean {
    return this.shutting;
  }

  /** Whether the item is being processed right now. */
  isProcessing(item: T): boolean {
    return this.processing.has(item);
  }

  private wakeOne(): void {
    const f = this.waiters.shift();
    if (f) f();
  }
}

/** A work queue with addAfter (client-go's DelayingInterface). */
export class DelayingQueue<T> extends WorkQueue<T> {
  private readonly waiting = new Map<T, number>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;

  /** Adds the item after `ms` (now when ms <= 0); an item already waiting keeps the earlier time. */
  addAfter(item: T, ms: number): void {
    if (this.shuttingDown()) return;
    if (!(ms > 0)) {
      this.add(item);
      return;
    }
    const at = Date.now() + ms;
    const cur = this.waiting.get(item);
    if (cur !== undefined && cur <= at) return;
    this.waiting.set(item, at);
    this.schedule();
  }

  /** Items waiting for their time. */
  waitingLen(): number {
    return this.waiting.size;
  }

  override shutDown(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    this.waiting.clear();
    super.shutDown();
  }

  private schedule(): void {
    let next = Infinity;
    for (const t of this.waiting.values()) if (t < next) next = t;
    if (next === Infinity) return;
    if (this.timer && this.timerAt <= next) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = next;
    // (at most setTimeout's longest delay, ~24.8 days: a longer one fires at once; fire() schedules again)
    this.timer = setTimeout(() => this.fire(), Math.min(MAX_TIMER_MS, Math.max(0, next - Date.now())));
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = Date.now();
    for (const [item, at] of this.waiting) {
      if (at <= now) {
        this.waiting.delete(item);
        this.add(item);
      }
    }
    this.schedule();
  }
}

/** the longest delay setTimeout takes (2^31 - 1 ms) */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A delaying queue with a rate limiter (client-go's RateLimitingInterface). */
export class RateLimitingQueue<T> extends DelayingQueue<T> {
  constructor(
    readonly rateLimiter: RateLimiter<T> = defaultControllerRateLimiter<T>(),
    name = '',
  ) {
    super(name);
  }

  /** Adds the item when the rate limiter says it may be processed again. */
  addRateLimited(item: T): void {
    this.metrics?.retry();
    this.addAfter(item, this.rateLimiter.when(item));
  }

  /** The item was processed successfully: reset its backoff. */
  forget(item: T): void {
    this.rateLimiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(item);
  }
}
