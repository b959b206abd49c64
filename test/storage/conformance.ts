// The one conformance suite every storage backend passes (memory, sqlite, and etcd later).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CompactedError,
  ConflictError,
  FutureRevisionError,
  KeyExistsError,
  KeyNotFoundError,
  type Backend,
  type KeyValue,
  type StorageEvent,
  type Watch,
} from '../../src/storage/interface.js';

export interface BackendHarness {
  /** a fresh, empty, opened backend */
  create(): Promise<Backend>;
  /** close `b` and open a new backend over the same store (durable backends only) */
  reopen?(b: Backend): Promise<Backend>;
  /** the backend's name, when the suite runs under another label (default: the label) */
  backendName?: string;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
export const bytes = (s: string): Uint8Array => enc.encode(s);
export const text = (v: Uint8Array): string => dec.decode(v);

/** wait until `cond` holds, polling once per turn of the event loop */
export async function until(cond: () => boolean, what = 'condition', timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

export interface Recorder {
  events: StorageEvent[];
  errors: Error[];
  progress: number[];
  watch: Watch;
}

export function record(b: Backend, prefix: string, afterRevision: number): Recorder {
  const r: Recorder = { events: [], errors: [], progress: [], watch: undefined as unknown as Watch };
  r.watch = b.watch(prefix, {
    afterRevision,
    onEvents: (evs) => r.events.push(...evs),
    onError: (err) => r.errors.push(err),
    onProgress: (rev) => r.progress.push(rev),
  });
  return r;
}

const summary = (kv: KeyValue | undefined) =>
  kv && { key: kv.key, value: text(kv.value), createRevision: kv.createRevision, modRevision: kv.modRevision };
const evSummary = (e: StorageEvent) => ({
  type: e.type,
  revision: e.revision,
  kv: summary(e.kv),
  prevKv: summary(e.prevKv),
});

function utf8Compare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

export function conformance(name: string, h: BackendHarness): void {
  async function withBackend(fn: (b: Backend) => Promise<Backend | void>): Promise<void> {
    let b = await h.create();
    try {
      const next = await fn(b);
      if (next) b = next;
    } finally {
      await b.close();
    }
  }

  test(`${name}: create, get, update, delete`, () =>
    withBackend(async (b) => {
      assert.equal(b.name, h.backendName ?? name);
      assert.equal(await b.healthy(), true);
      const r0 = await b.currentRevision();
      const c = await b.create('/r/a', bytes('one'));
      assert.deepEqual(summary(c), { key: '/r/a', value: 'one', createRevision: r0 + 1, modRevision: r0 + 1 });
      assert.equal(await b.currentRevision(), r0 + 1);
      assert.deepEqual(summary(await b.get('/r/a')), summary(c));
      assert.equal(await b.get('/r/missing'), undefined);

      const u = await b.update('/r/a', bytes('two'), c.modRevision);
      assert.deepEqual(summary(u), { key: '/r/a', value: 'two', createRevision: r0 + 1, modRevision: r0 + 2 });
      assert.deepEqual(summary(await b.get('/r/a')), summary(u));

      const d = await b.delete('/r/a', u.modRevision);
      assert.deepEqual(summary(d), { key: '/r/a', value: 'two', createRevision: r0 + 1, modRevision: r0 + 3 });
      assert.equal(await b.get('/r/a'), undefined);
      assert.equal(await b.currentRevision(), r0 + 3);

      // a key can be created again after its deletion, with a new createRevision
      const again = await b.create('/r/a', bytes('three'));
      assert.equal(again.createRevision, r0 + 4);
      const d2 = await b.delete('/r/a');
      assert.equal(d2.modRevision, r0 + 5);
    }));

  test(`${name}: a written value is kept, not copied`, () =>
    withBackend(async (b) => {
      const r = record(b, '/r/', await b.currentRevision());
      await new Promise((res) => setTimeout(res, 1));
      const v = bytes('abc');
      const kv = await b.create('/r/x', v);
      assert.equal(kv.value, v);
      assert.equal(r.events[0].kv.value, v);
      assert.equal(text((await b.get('/r/x'))!.value), 'abc');
      r.watch.cancel();
    }));

  test(`${name}: conflicts carry the current state and change nothing`, () =>
    withBackend(async (b) => {
      const c = await b.create('/r/a', bytes('one'));
      const u = await b.update('/r/a', bytes('two'), c.modRevision);
      const rev = await b.currentRevision();

      await assert.rejects(b.update('/r/a', bytes('stale'), c.modRevision), (err: unknown) => {
        assert.ok(err instanceof ConflictError);
        assert.equal(err.key, '/r/a');
        assert.deepEqual(summary(err.current), summary(u));
        return true;
      });
      await assert.rejects(b.delete('/r/a', c.modRevision), (err: unknown) => {
        assert.ok(err instanceof ConflictError);
        assert.deepEqual(summary(err.current), summary(u));
        return true;
      });
      await assert.rejects(b.create('/r/a', bytes('dup')), (err: unknown) => {
        assert.ok(err instanceof KeyExistsError);
        assert.equal(err.key, '/r/a');
        return true;
      });
      await assert.rejects(b.update('/r/nope', bytes('x'), 1), KeyNotFoundError);
      await assert.rejects(b.delete('/r/nope'), KeyNotFoundError);
      await assert.rejects(b.delete('/r/nope', 3), KeyNotFoundError);

      assert.equal(await b.currentRevision(), rev, 'rejected writes take no revision');
      assert.deepEqual(summary(await b.get('/r/a')), summary(u));
      const next = await b.create('/r/b', bytes('b'));
      assert.equal(next.modRevision, rev + 1);
      // a key deleted by a write accepted just before (in the same batch): the refusal's revision is at or after the deletion
      const gone = await b.create('/r/gone', bytes('g'));
      const [del, upd] = await Promise.allSettled([b.delete('/r/gone', gone.modRevision), b.update('/r/gone', bytes('late'), gone.modRevision)]);
      assert.equal(del.status, 'fulfilled');
      const nf = (upd as PromiseRejectedResult).reason;
      assert.ok(nf instanceof KeyNotFoundError || nf instanceof ConflictError, String(nf));
      if (nf instanceof KeyNotFoundError) assert.ok(nf.revision !== undefined && nf.revision >= (del as PromiseFulfilledResult<KeyValue>).value.modRevision, `KeyNotFoundError.revision ${nf.revision}`);
    }));

  test(`${name}: list by prefix in byte order`, () =>
    withBackend(async (b) => {
      const keys = ['/p/b', '/p/a', '/p/B', '/p/é', '/p/\u{1F600}', '/p/\uFFFD', '/p/a/b', '/p/a0', '/p/'];
      for (const k of keys) await b.create(k, bytes(k));
      for (const k of ['/p', '/o/z', '/q/a', '/p0', '/pa']) await b.create(k, bytes(k));
      const res = await b.list('/p/');
      const expected = [...keys].sort(utf8Compare);
      assert.deepEqual(
        res.kvs.map((kv) => kv.key),
        expected,
      );
      for (const kv of res.kvs) assert.equal(text(kv.value), kv.key);
      assert.equal(res.revision, await b.currentRevision());
      assert.equal(res.more, false);
      assert.equal(await b.count('/p/'), keys.length);
      assert.equal(await b.count('/p'), keys.length + 3);
      assert.equal(await b.count(''), keys.length + 5);
      assert.equal((await b.list('')).kvs.length, keys.length + 5);
      assert.deepEqual((await b.list('/q/')).kvs.map((kv) => kv.key), ['/q/a']);
      assert.deepEqual((await b.list('/nothing/')).kvs, []);
      // a prefix ending in the highest BMP character and an astral one
      await b.create('/s/\uFFFF/x', bytes('1'));
      await b.create('/s/\uFFFF\u{10000}', bytes('2'));
      await b.create('/s/\u{10FFFF}', bytes('3'));
      assert.deepEqual((await b.list('/s/\uFFFF')).kvs.map((kv) => kv.key), ['/s/\uFFFF/x', '/s/\uFFFF\u{10000}']);
      assert.deepEqual((await b.list('/s/\u{10FFFF}')).kvs.map((kv) => kv.key), ['/s/\u{10FFFF}']);
    }));

  test(`${name}: list and count skip deleted keys`, () =>
    withBackend(async (b) => {
      for (const k of ['a', 'b', 'c', 'd']) await b.create(`/d/${k}`, bytes(k));
      await b.delete('/d/b');
      await b.delete('/d/d');
      assert.deepEqual((await b.list('/d/')).kvs.map((kv) => kv.key), ['/d/a', '/d/c']);
      assert.equal(await b.count('/d/'), 2);
      const page = await b.list('/d/', { limit: 1 });
      assert.deepEqual(page.kvs.map((kv) => kv.key), ['/d/a']);
      assert.equal(page.more, true);
      assert.equal(page.remaining, 1);
    }));

  test(`${name}: list at an old revision`, () =>
    withBackend(async (b) => {
      const a = await b.create('/h/a', bytes('a1'));
      await b.create('/h/b', bytes('b1'));
      const r1 = await b.currentRevision();
      await b.update('/h/a', bytes('a2'), a.modRevision);
      await b.delete('/h/b');
      await b.create('/h/c', bytes('c1'));
      const r2 = await b.currentRevision();
      await b.create('/h/b', bytes('b2'));

      const at1 = await b.list('/h/', { revision: r1 });
      assert.equal(at1.revision, r1);
      assert.deepEqual(at1.kvs.map((kv) => [kv.key, text(kv.value), kv.modRevision]), [
        ['/h/a', 'a1', a.modRevision],
        ['/h/b', 'b1', a.modRevision + 1],
      ]);
      const at2 = await b.list('/h/', { revision: r2 });
      assert.deepEqual(at2.kvs.map((kv) => [kv.key, text(kv.value)]), [
        ['/h/a', 'a2'],
        ['/h/c', 'c1'],
      ]);
      const latest = await b.list('/h/');
      assert.deepEqual(latest.kvs.map((kv) => [kv.key, text(kv.value)]), [
        ['/h/a', 'a2'],
        ['/h/b', 'b2'],
        ['/h/c', 'c1'],
      ]);
      assert.deepEqual((await b.list('/h/', { revision: a.modRevision })).kvs.map((kv) => kv.key), ['/h/a']);
      const cur = await b.currentRevision();
      await assert.rejects(b.list('/h/', { revision: cur + 1 }), FutureRevisionError);
    }));

  test(`${name}: paging with startKey and limit`, () =>
    withBackend(async (b) => {
      const keys: string[] = [];
      for (let i = 0; i < 23; i++) keys.push(`/g/k${String(i).padStart(2, '0')}`);
      for (const k of keys) await b.create(k, bytes(k));
      await b.create('/g0', bytes('outside'));
      const first = await b.list('/g/', { limit: 5 });
      assert.equal(first.kvs.length, 5);
      assert.equal(first.more, true);
      assert.equal(first.remaining, 18);
      const rev = first.revision;
      // writes between pages do not show: the pages read at the first page's revision
      await b.create('/g/k05a', bytes('late'));
      await b.delete('/g/k20');
      const seen = first.kvs.map((kv) => kv.key);
      let last = first;
      while (last.more) {
        last = await b.list('/g/', { revision: rev, startKey: seen[seen.length - 1] + '\0', limit: 5 });
        assert.equal(last.revision, rev);
        seen.push(...last.kvs.map((kv) => kv.key));
        if (last.more) assert.equal(last.remaining, keys.length - seen.length);
      }
      assert.deepEqual(seen, keys);
      // a startKey before the prefix is clamped to it; one past the range yields nothing
      assert.equal((await b.list('/g/', { startKey: '/a' })).kvs.length, keys.length);
      assert.deepEqual((await b.list('/g/', { startKey: '/h' })).kvs, []);
      // limit exactly the size: no more
      const all = await b.list('/g/', { revision: rev, limit: keys.length });
      assert.equal(all.more, false);
      assert.equal(all.kvs.length, keys.length);
    }));

  test(`${name}: count`, () =>
    withBackend(async (b) => {
      assert.equal(await b.count('/c/'), 0);
      for (let i = 0; i < 7; i++) await b.create(`/c/${i}`, bytes('x'));
      await b.create('/c2/x', bytes('x'));
      assert.equal(await b.count('/c/'), 7);
      await b.delete('/c/3');
      assert.equal(await b.count('/c/'), 6);
    }));

  test(`${name}: watch from the current revision`, () =>
    withBackend(async (b) => {
      await b.create('/w/old', bytes('old'));
      const start = await b.currentRevision();
      const r = record(b, '/w/', start);
      const c = await b.create('/w/a', bytes('1'));
      const u = await b.update('/w/a', bytes('2'), c.modRevision);
      await b.create('/x/other', bytes('elsewhere'));
      const d = await b.delete('/w/a');
      await until(() => r.events.length >= 3, 'events');
      assert.deepEqual(r.events.map(evSummary), [
        { type: 'put', revision: c.modRevision, kv: summary(c), prevKv: undefined },
        { type: 'put', revision: u.modRevision, kv: summary(u), prevKv: summary(c) },
        { type: 'delete', revision: d.modRevision, kv: summary(d), prevKv: summary(u) },
      ]);
      assert.deepEqual(r.errors, []);
      // progress covers the write to the other prefix
      assert.ok(r.progress.includes(c.modRevision + 2), `progress ${r.progress}`);
      r.watch.cancel();
      await b.create('/w/after-cancel', bytes('x'));
      await new Promise((res) => setTimeout(res, 5));
      assert.equal(r.events.length, 3);
    }));

  test(`${name}: watch events arrive before the write resolves`, () =>
    withBackend(async (b) => {
      const r = record(b, '/w/', await b.currentRevision());
      await new Promise((res) => setTimeout(res, 1));
      const kv = await b.create('/w/a', bytes('1'));
      assert.equal(r.events.length, 1);
      assert.equal(r.events[0].revision, kv.modRevision);
    }));

  test(`${name}: watch from an old revision replays history, then live`, () =>
    withBackend(async (b) => {
      const c = await b.create('/o/a', bytes('1'));
      const u = await b.update('/o/a', bytes('2'), c.modRevision);
      await b.create('/o/b', bytes('b'));
      await b.create('/elsewhere', bytes('x'));
      const d = await b.delete('/o/b');
      const r = record(b, '/o/', c.modRevision - 1);
      const live = b.create('/o/c', bytes('c')); // in flight while the replay starts
      await live;
      await b.create('/o/d', bytes('d'));
      await until(() => r.events.length >= 6, 'replay and live events');
      assert.deepEqual(
        r.events.map((e) => [e.type, e.kv.key, e.revision]),
        [
          ['put', '/o/a', c.modRevision],
          ['put', '/o/a', u.modRevision],
          ['put', '/o/b', u.modRevision + 1],
          ['delete', '/o/b', d.modRevision],
          ['put', '/o/c', d.modRevision + 1],
          ['put', '/o/d', d.modRevision + 2],
        ],
      );
      assert.deepEqual(summary(r.events[1].prevKv), summary(c));
      assert.equal(r.events[0].prevKv, undefined);
      assert.equal(text(r.events[3].kv.value), 'b');
      assert.equal(r.events[3].prevKv?.modRevision, u.modRevision + 1);

      // a watch from the middle of history
      const r2 = record(b, '/o/a', u.modRevision - 1);
      await until(() => r2.events.length >= 1, 'replay');
      await new Promise((res) => setTimeout(res, 5));
      assert.deepEqual(r2.events.map((e) => e.revision), [u.modRevision]);
      // a watch from a future revision waits for it
      const cur = await b.currentRevision();
      const r3 = record(b, '/o/', cur + 1);
      await b.create('/o/e', bytes('e'));
      await b.create('/o/f', bytes('f'));
      await until(() => r3.events.length >= 1, 'future watch');
      await new Promise((res) => setTimeout(res, 5));
      assert.deepEqual(r3.events.map((e) => e.kv.key), ['/o/f']);
      for (const x of [r, r2, r3]) x.watch.cancel();
    }));

  test(`${name}: a long history replays in order`, () =>
    withBackend(async (b) => {
      const start = await b.currentRevision();
      const n = 2500;
      const writes: Promise<KeyValue>[] = [];
      for (let i = 0; i < n; i++) writes.push(b.create(`/long/${i}`, bytes(String(i))));
      await Promise.all(writes);
      const r = record(b, '/long/', start);
      await until(() => r.events.length >= n, 'long replay');
      for (let i = 0; i < n; i++) assert.equal(r.events[i].revision, start + 1 + i);
      r.watch.cancel();
    }));

  test(`${name}: many writes in one batch reach a watcher in order`, () =>
    withBackend(async (b) => {
      const start = await b.currentRevision();
      const r = record(b, '/batch/', start);
      await new Promise((res) => setTimeout(res, 1));
      const n = 300;
      const writes: Promise<KeyValue>[] = [];
      const seenAtResolve: number[] = [];
      for (let i = 0; i < n; i++) {
        const p = b.create(`/batch/${String(i).padStart(4, '0')}`, bytes(String(i)));
        p.then(() => seenAtResolve.push(r.events.length));
        writes.push(p);
      }
      const kvs = await Promise.all(writes);
      for (let i = 0; i < n; i++) assert.equal(kvs[i].modRevision, start + 1 + i);
      assert.equal(r.events.length, n);
      for (let i = 1; i < n; i++) assert.ok(r.events[i].revision > r.events[i - 1].revision);
      assert.deepEqual(
        r.events.map((e) => e.kv.key),
        kvs.map((kv) => kv.key),
      );
      // every writer saw its own event delivered by the time its promise resolved
      for (let i = 0; i < n; i++) assert.ok(seenAtResolve[i] >= i + 1);
      r.watch.cancel();
    }));

  test(`${name}: concurrent writers in one batch, one conflicting`, () =>
    withBackend(async (b) => {
      const c = await b.create('/cc/a', bytes('0'));
      const results = await Promise.allSettled([
        b.update('/cc/a', bytes('first'), c.modRevision),
        b.update('/cc/a', bytes('second'), c.modRevision),
        b.create('/cc/b', bytes('b')),
        b.create('/cc/b', bytes('b again')),
        b.create('/cc/c', bytes('c')),
      ]);
      assert.equal(results[0].status, 'fulfilled');
      assert.equal(results[1].status, 'rejected');
      const err = (results[1] as PromiseRejectedResult).reason;
      assert.ok(err instanceof ConflictError);
      assert.equal(text(err.current!.value), 'first');
      assert.equal(err.current!.modRevision, c.modRevision + 1);
      assert.equal(results[2].status, 'fulfilled');
      const exists = (results[3] as PromiseRejectedResult).reason;
      assert.ok(exists instanceof KeyExistsError);
      // the refusal names a revision at or after the create that made the key exist (perhaps
      // not committed yet when it refused): a reader waiting for it sees the key
      assert.ok(exists.revision !== undefined && exists.revision >= (results[2] as PromiseFulfilledResult<KeyValue>).value.modRevision, `KeyExistsError.revision ${exists.revision}`);
      assert.equal(results[4].status, 'fulfilled');
      const rc = (results[4] as PromiseFulfilledResult<KeyValue>).value;
      assert.equal(rc.modRevision, c.modRevision + 3, 'revisions stay dense across rejected writes');
      assert.equal(text((await b.get('/cc/a'))!.value), 'first');
      assert.equal(await b.currentRevision(), c.modRevision + 3);
      // update then delete then create of the same key in one batch
      const cur = (await b.get('/cc/a'))!;
      const nextRev = (await b.currentRevision()) + 1;
      const batch = await Promise.allSettled([
        b.update('/cc/a', bytes('x'), cur.modRevision),
        b.delete('/cc/a', nextRev),
        b.create('/cc/a', bytes('reborn')),
      ]);
      assert.deepEqual(
        batch.map((x) => x.status),
        ['fulfilled', 'fulfilled', 'fulfilled'],
      );
      const del = (batch[1] as PromiseFulfilledResult<KeyValue>).value;
      assert.equal(text(del.value), 'x');
      const now = (await b.get('/cc/a'))!;
      assert.equal(text(now.value), 'reborn');
      assert.equal(now.createRevision, now.modRevision);
    }));

  test(`${name}: compaction`, () =>
    withBackend(async (b) => {
      const a = await b.create('/k/a', bytes('a1'));
      const a2 = await b.update('/k/a', bytes('a2'), a.modRevision);
      await b.create('/k/b', bytes('b1'));
      await b.delete('/k/b');
      await b.create('/k/c', bytes('c1'));
      const mid = await b.currentRevision();
      const a3 = await b.update('/k/a', bytes('a3'), a2.modRevision);
      await b.create('/k/d', bytes('d1'));
      const end = await b.currentRevision();
      const before = await b.list('/k/', { revision: mid });

      await b.compact(mid);
      assert.equal(await b.compactedRevision(), mid);
      await assert.rejects(b.list('/k/', { revision: mid - 1 }), (err: unknown) => {
        assert.ok(err instanceof CompactedError);
        assert.equal(err.requested, mid - 1);
        assert.equal(err.compacted, mid);
        return true;
      });
      assert.deepEqual((await b.list('/k/', { revision: mid })).kvs.map(summary), before.kvs.map(summary));
      assert.deepEqual(
        (await b.list('/k/')).kvs.map((kv) => [kv.key, text(kv.value)]),
        [
          ['/k/a', 'a3'],
          ['/k/c', 'c1'],
          ['/k/d', 'd1'],
        ],
      );
      assert.equal((await b.get('/k/a'))?.modRevision, a3.modRevision);

      // a watch below the compacted revision fails; at it, it replays what follows
      const bad = record(b, '/k/', mid - 1);
      await until(() => bad.errors.length > 0, 'CompactedError');
      assert.ok(bad.errors[0] instanceof CompactedError);
      assert.equal(bad.events.length, 0);
      const good = record(b, '/k/', mid);
      await until(() => good.events.length >= 2, 'replay after compaction');
      assert.deepEqual(
        good.events.map((e) => [e.kv.key, e.revision]),
        [
          ['/k/a', a3.modRevision],
          ['/k/d', end],
        ],
      );
      assert.equal(summary(good.events[0].prevKv)?.value, 'a2');
      good.watch.cancel();

      // compacting to an older revision is a no-op; to a future one an error
      await b.compact(mid - 2);
      assert.equal(await b.compactedRevision(), mid);
      await assert.rejects(b.compact(end + 1), FutureRevisionError);
      // compact everything: latest values stay
      await b.compact(end);
      assert.deepEqual(
        (await b.list('/k/')).kvs.map((kv) => [kv.key, text(kv.value), kv.createRevision, kv.modRevision]),
        [
          ['/k/a', 'a3', a.createRevision, a3.modRevision],
          ['/k/c', 'c1', mid, mid],
          ['/k/d', 'd1', end, end],
        ],
      );
      const next = await b.update('/k/a', bytes('a4'), a3.modRevision);
      assert.equal(next.modRevision, end + 1);
    }));

  test(`${name}: a watch that throws is dropped with its error`, () =>
    withBackend(async (b) => {
      const errors: Error[] = [];
      let calls = 0;
      b.watch('/t/', {
        afterRevision: await b.currentRevision(),
        onEvents: () => {
          calls++;
          throw new Error('boom');
        },
        onError: (e) => errors.push(e),
      });
      const other = record(b, '/t/', await b.currentRevision());
      await new Promise((res) => setTimeout(res, 1));
      await b.create('/t/a', bytes('1'));
      await b.create('/t/b', bytes('2'));
      assert.equal(calls, 1);
      assert.equal(errors[0]?.message, 'boom');
      assert.equal(other.events.length, 2);
    }));

  if (h.reopen) {
    const reopen = h.reopen.bind(h);
    test(`${name}: durability across close and reopen`, () =>
      withBackend(async (b0) => {
        let b = b0;
        const a = await b.create('/dur/a', bytes('a'));
        await b.update('/dur/a', bytes('a2'), a.modRevision);
        const writes = [];
        for (let i = 0; i < 50; i++) writes.push(b.create(`/dur/n${i}`, bytes(String(i))));
        await Promise.all(writes);
        await b.delete('/dur/n7');
        const rev = await b.currentRevision();
        b = await reopen(b);
        assert.equal(await b.currentRevision(), rev);
        assert.equal(text((await b.get('/dur/a'))!.value), 'a2');
        assert.equal(await b.count('/dur/'), 50);
        assert.equal(await b.get('/dur/n7'), undefined);
        // the in-memory index is rebuilt: conditional writes still check
        await assert.rejects(b.create('/dur/a', bytes('dup')), KeyExistsError);
        await assert.rejects(b.update('/dur/a', bytes('x'), a.modRevision), ConflictError);
        const n = await b.create('/dur/n7', bytes('again'));
        assert.equal(n.modRevision, rev + 1);
        // writes still in flight when close is called are durable too
        const inflight = b.create('/dur/inflight', bytes('x'));
        b = await reopen(b);
        await inflight;
        assert.equal(text((await b.get('/dur/inflight'))!.value), 'x');
        // history survives: list at an old revision and watch replay
        assert.equal((await b.list('/dur/', { revision: rev })).kvs.length, 50);
        const r = record(b, '/dur/a', 0);
        await until(() => r.events.length >= 2, 'replay after reopen');
        r.watch.cancel();
        return b;
      }));

    test(`${name}: revisions stay monotonic across reopen, after deletes and compaction`, () =>
      withBackend(async (b0) => {
        let b = b0;
        const x = await b.create('/m/x', bytes('x'));
        const y = await b.create('/m/y', bytes('y'));
        await b.delete('/m/y');
        const del = await b.delete('/m/x');
        await b.compact(del.modRevision);
        assert.equal(await b.count('/m/'), 0);
        b = await reopen(b);
        assert.equal(await b.compactedRevision(), del.modRevision);
        const n = await b.create('/m/x', bytes('again'));
        assert.ok(n.modRevision > del.modRevision, `${n.modRevision} > ${del.modRevision}`);
        assert.ok(n.modRevision > y.modRevision && n.modRevision > x.modRevision);
        await assert.rejects(b.list('/m/', { revision: del.modRevision - 1 }), CompactedError);
        return b;
      }));
  }
}
