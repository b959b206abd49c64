// Client-side flow control: the token bucket behind a REST client's QPS/burst limit and behind
// the work queue's overall bucket rate limiter (client-go's flowcontrol.NewTokenBucketRateLimiter
// over golang.org/x/time/rate).
//
// The bucket starts full (`burst` tokens) and refills at `qps` tokens per second, never above
// `burst`. A reservation always succeeds and says how long to wait: tokens may go negative,
// which is how waiters queue up behind each other in arrival order.

export interface Clock {
  now(): number;
}

export const realClock: Clock = { now: () => performance.now() };

export class TokenBucket {
  private tokens: number;
  private last: number;

  /**
   * @param qps tokens added per second (> 0); `Infinity` never limits
   * @param burst bucket size (>= 1)
   */
  constructor(
    readonly qps: number,
    readonly burst: number,
    private readonly clock: Clock = realClock,
  ) {
    if (!(qps > 0)) throw new RangeError(`qps must be > 0, got ${qps}`);
    if (!(burst >= 1)) throw new RangeError(`burst must be >= 1, got ${burst}`);
    this.tokens = burst;
    this.last = clock.now();
  }

  private refill(now: number): void {
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
      this.last = now;
    }
  }

  /** Takes a token if one is available now (client-go's TryAccept). */
  tryAccept(): boolean {
    if (this.qps === Infinity) return true;
    this.refill(this.clock.now());
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  /** Takes a token, possibly borrowed from the future; returns how many ms to wait before using it. */
  reserve(): number {
    if (this.qps === Infinity) return 0;
    this.refill(this.clock.now());
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  /** Gives back a reservation that will not be used (a waiter was aborted). */
  cancel(): void {
    if (this.qps === Infinity) return;
    this.refill(this.clock.now());
    this.tokens = Math.min(this.burst, this.tokens + 1);
  }

  /** Waits for a token (client-go's Wait). Rejects with the signal's reason when aborted. */
  async wait(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const delay = this.reserve();
    if (delay <= 0) return;
    try {
      await sleep(delay, signal);
    } catch (e) {
      this.cancel();
      throw e;
    }
  }

  /** Tokens available now (may be negative while waiters queue). */
  available(): number {
    this.refill(this.clock.now());
    return this.tokens;
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Resolves after `ms`, or at once when the signal aborts (also when it aborted before the call: an
 * 'abort' listener added then never fires, and a loop's pause would wait out its whole period).
 */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, Math.max(0, ms));
    signal.addEventListener('abort', done, { once: true });
  });
}

/** apimachinery's wait.Jitter: `d` plus a random amount up to `d * factor` (factor <= 0 means 1). */
export function jitter(d: number, factor: number): number {
  const f = factor <= 0 ? 1 : factor;
  return d + Math.random() * f * d;
}
