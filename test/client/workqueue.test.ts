// Work queue and rate limiter behaviour (client-go's util/workqueue semantics), with a fake clock
// for the token bucket: no timing is asserted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TokenBucket, type Clock } from '../../src/client/flowcontrol.js';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  DelayingQueue,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  RateLimitingQueue,
  WorkQueue,
} from '../../src/client/workqueue.js';

class FakeClock implements Clock {
  t = 1000;
  now(): number {
    return this.t;
  }
  step(ms: number): void {
    this.t += ms;
  }
}

// ── token bucket ────────────────────────────────────────────────────────────

test('token bucket: starts full, then refills at qps up to burst', () => {
  const c = new FakeClock();
  const b = new TokenBucket(10, 3, c);
  assert.equal(b.tryAccept(), true);
  assert.equal(b.tryAccept(), true);
  assert.equal(b.tryAccept(), true);
  assert.equal(b.tryAccept(), false, 'burst exhausted');
  c.step(100); // one token at 10 qps
  assert.equal(b.tryAccept(), true);
  assert.equal(b.tryAccept(), false);
  c.step(10_000); // refill caps at burst
  assert.equal(b.available(), 3);
});

test('token bucket: reservations queue behind each other', () => {
  const c = new FakeClock();
  const b = new TokenBucket(5, 1, c);
  assert.equal(b.reserve(), 0);
  assert.equal(b.reserve(), 200);
  assert.equal(b.reserve(), 400);
  c.step(200);
  // one reservation became due; the bucket is still two tokens in debt minus one refill
  assert.equal(Math.round(b.available() * 1000) / 1000, -1);
  b.cancel();
  assert.equal(Math.round(b.available() * 1000) / 1000, 0);
});

test('token bucket: rejects bad parameters, wait honours abort', async () => {
  assert.throws(() => new TokenBucket(0, 1), RangeError);
  assert.throws(() => new TokenBucket(1, 0), RangeError);
  const c = new FakeClock();
  const b = new TokenBucket(0.001, 1, c);
  await b.wait(); // the burst token
  const ac = new AbortController();
  const p = b.wait(ac.signal);
  ac.abort(new Error('stop'));
  await assert.rejects(p, /stop/);
  // the aborted reservation was given back
  assert.ok(b.available() > -1);
});

// ── rate limiters ───────────────────────────────────────────────────────────

test('exponential failure rate limiter: base * 2^n, capped, per item, forget resets', () => {
  const r = new ItemExponentialFailureRateLimiter<string>(5, 1000);
  assert.deepEqual([r.when('a'), r.when('a'), r.when('a'), r.when('a')], [5, 10, 20, 40]);
  assert.equal(r.when('b'), 5, 'items are independent');
  assert.equal(r.numRequeues('a'), 4);
  for (let i = 0; i < 20; i++) r.when('a');
  assert.equal(r.when('a'), 1000, 'capped at max');
  for (let i = 0; i < 2000; i++) r.when('a');
  assert.equal(r.when('a'), 1000, 'no overflow');
  r.forget('a');
  assert.equal(r.numRequeues('a'), 0);
  assert.equal(r.when('a'), 5);
});

test('fast/slow rate limiter', () => {
  const r = new ItemFastSlowRateLimiter<string>(10, 500, 2);
  assert.deepEqual([r.when('x'), r.when('x'), r.when('x')], [10, 10, 500]);
  r.forget('x');
  assert.equal(r.when('x'), 10);
});

test('max-of rate limiter takes the longest wait; default controller limiter', () => {
  const slow = new ItemFastSlowRateLimiter<string>(100, 100, 1);
  const exp = new ItemExponentialFailureRateLimiter<string>(1, 10_000);
  const m = new MaxOfRateLimiter<string>(exp, slow);
  assert.equal(m.when('k'), 100);
  assert.equal(m.numRequeues('k'), 1);
  for (let i = 0; i < 9; i++) m.when('k');
  assert.equal(m.when('k'), 1024);
  m.forget('k');
  assert.equal(m.numRequeues('k'), 0);

  const d = defaultControllerRateLimiter<string>();
  assert.equal(d.when('a'), 5);
  assert.equal(d.when('a'), 10);
});

test('bucket rate limiter spreads retries across all items', () => {
  const c = new FakeClock();
  const r = new BucketRateLimiter<string>(10, 2, new TokenBucket(10, 2, c));
  assert.equal(r.when('a'), 0);
  assert.equal(r.when('b'), 0);
  assert.equal(r.when('c'), 100);
  assert.equal(r.numRequeues('c'), 0);
});

// ── the queue ───────────────────────────────────────────────────────────────

test('work queue: FIFO, duplicate adds are processed once', async () => {
  const q = new WorkQueue<string>();
  q.add('a');
  q.add('b');
  q.add('a');
  assert.equal(q.len(), 2);
  assert.deepEqual(await q.get(), { item: 'a', shutdown: false });
  assert.deepEqual(await q.get(), { item: 'b', shutdown: false });
  assert.equal(q.len(), 0);
  q.done('a');
  q.done('b');
  assert.equal(q.len(), 0);
});

test('work queue: an item added while processing is queued again only after done', async () => {
  const q = new WorkQueue<string>();
  q.add('a');
  const { item } = await q.get();
  assert.equal(item, 'a');
  assert.equal(q.isProcessing('a'), true);
  q.add('a');
  q.add('a');
  assert.equal(q.len(), 0, 'not handed to a second worker while the first has it');
  q.done('a');
  assert.equal(q.len(), 1);
  assert.equal((await q.get()).item, 'a');
  q.done('a');
  assert.equal(q.len(), 0);
});

test('work queue: get waits for add; waiting workers each get a different item', async () => {
  const q = new WorkQueue<number>();
  const got: number[] = [];
  const workers = [1, 2, 3].map(async () => {
    const r = await q.get();
    if (!r.shutdown) got.push(r.item);
  });
  q.add(1);
  q.add(2);
  q.add(3);
  await Promise.all(workers);
  assert.deepEqual(got.sort(), [1, 2, 3]);
});

test('work queue: shutdown wakes idle workers, drains queued items, ignores adds', async () => {
  const q = new WorkQueue<string>();
  const idle = q.get();
  q.shutDown();
  assert.deepEqual(await idle, { item: undefined, shutdown: true });
  q.add('late');
  assert.equal(q.len(), 0);
  assert.equal(q.shuttingDown(), true);

  const q2 = new WorkQueue<string>();
  q2.add('x');
  q2.shutDown();
  assert.deepEqual(await q2.get(), { item: 'x', shutdown: false }, 'queued items are still handed out');
  assert.deepEqual(await q2.get(), { item: undefined, shutdown: true });
});

test('work queue: shutDownWithDrain waits for items being processed', async () => {
  const q = new WorkQueue<string>();
  q.add('a');
  const { item } = await q.get();
  let drained = false;
  const p = q.shutDownWithDrain().then(() => (drained = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(drained, false);
  q.done(item!);
  await p;
  assert.equal(drained, true);
});

test('delaying queue: addAfter adds later; the earlier time wins; <= 0 adds now', async () => {
  const q = new DelayingQueue<string>();
  q.addAfter('now', 0);
  assert.equal(q.len(), 1);
  q.addAfter('later', 60_000);
  q.addAfter('later', 20);
  q.addAfter('later', 120_000);
  assert.equal(q.waitingLen(), 1);
  assert.equal((await q.get()).item, 'now');
  const r = await q.get();
  assert.equal(r.item, 'later');
  assert.equal(q.waitingLen(), 0);
  q.shutDown();
});

test('delaying queue: a delay beyond setTimeout\'s longest (24.8 days) waits, not fires at once', async () => {
  // (Node runs a longer timer after 1 ms, with a TimeoutOverflowWarning: the queue would spin)
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on('warning', onWarning);
  const q = new DelayingQueue<string>();
  try {
    q.addAfter('far', 30 * 24 * 3600 * 1000);
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(q.len(), 0);
    assert.equal(q.waitingLen(), 1);
    assert.deepEqual(warnings, []);
  } finally {
    process.off('warning', onWarning);
    q.shutDown();
  }
});

test('delaying queue: shutdown drops waiting items', async () => {
  const q = new DelayingQueue<string>();
  q.addAfter('x', 10);
  q.shutDown();
  assert.equal(q.waitingLen(), 0);
  assert.deepEqual(await q.get(), { item: undefined, shutdown: true });
  q.addAfter('y', 1);
  assert.equal(q.waitingLen(), 0);
});

test('rate limiting queue: backoff per item, forget resets it', async () => {
  const q = new RateLimitingQueue<string>(new ItemExponentialFailureRateLimiter<string>(1, 1000));
  q.addRateLimited('a');
  q.addRateLimited('a');
  assert.equal(q.numRequeues('a'), 2);
  const r = await q.get();
  assert.equal(r.item, 'a');
  q.forget('a');
  q.done('a');
  assert.equal(q.numRequeues('a'), 0);
  q.shutDown();
});
