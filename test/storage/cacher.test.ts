import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodedEntries, newCacher, setDecodedEntries, TooOldError, type CacheEntry, type CacheEvent, type Cacher } from '../../src/storage/cacher.js';
import { FutureRevisionError, type Backend, type KeyValue } from '../../src/storage/interface.js';
import { parseJSON, stringifyJSON } from '../../src/codec/int64.js';
import { MemoryBackend } from '../../src/storage/memory.js';
import { SqliteBackend } from '../../src/storage/sqlite.js';
import { until } from './conformance.js';

const dir = mkdtempSync(join(tmpdir(), 'keelson-cacher-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const PREFIX = '/registry/configmaps/';

const backends: Record<string, () => Promise<Backend>> = {
  memory: async () => {
    const b = new MemoryBackend();
    await b.open();
    return b;
  },
  sqlite: async () => {
    const b = new SqliteBackend(join(dir, `c${n++}.db`));
    await b.open();
    await b.workerReady();
    return b;
  },
};

function obj(ns: string, name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: ns, name, labels }, data };
}
const json = (o: unknown) => Buffer.from(JSON.stringify(o));
const key = (ns: string, name: string) => `${PREFIX}${ns}/${name}`;

interface Clock {
  t: number;
}

function cacherFor(b: Backend, opts: { clock?: Clock; historyWindowMs?: number; snapshotMaxAgeMs?: number; decodes?: { n: number }; fields?: (o: any) => Record<string, string> } = {}): Cacher {
  return newCacher(b, PREFIX, {
    fields: opts.fields,
    decode: (kv: KeyValue) => {
      if (opts.decodes) opts.decodes.n++;
      const o = parseJSON(Buffer.from(kv.value).toString('utf8'));
      o.metadata.resourceVersion = String(kv.modRevision);
      return o;
    },
    split: (k: string) => {
      const rest = k.slice(PREFIX.length);
      const i = rest.indexOf('/');
      return { namespace: rest.slice(0, i), name: rest.slice(i + 1) };
    },
    historyWindowMs: opts.historyWindowMs,
    snapshotMaxAgeMs: opts.snapshotMaxAgeMs,
    now: opts.clock ? () => opts.clock!.t : undefined,
  });
}

/** let the cache's fan-out run: it passes applied events to its watchers in a setImmediate */
const settle = () => new Promise<void>((r) => setImmediate(r));

const names = (items: CacheEntry[]) => items.map((e) => `${e.namespace}/${e.name}`);
const evs = (events: CacheEvent[]) =>
  events.map((e) => [e.type, `${e.entry.namespace}/${e.entry.name}`, e.revision, e.entry.obj.metadata.resourceVersion]);

function recordWatch(c: Cacher, opts: { prefix?: string; afterRevision: number; filter?: (e: CacheEntry) => boolean }) {
  const events: CacheEvent[] = [];
  const closed: (Error | undefined)[] = [];
  const w = c.watch({
    prefix: opts.prefix ?? PREFIX,
    afterRevision: opts.afterRevision,
    filter: opts.filter,
    onEvent: (e) => events.push(e),
    onClose: (err) => closed.push(err),
  });
  return { events, closed, stop: () => w.stop() };
}

for (const [bname, make] of Object.entries(backends)) {
  const withCacher = (
    opts: Parameters<typeof cacherFor>[1],
    fn: (b: Backend, c: Cacher) => Promise<void>,
    setup?: (b: Backend) => Promise<void>,
  ) => async () => {
    const b = await make();
    try {
      if (setup) await setup(b);
      const c = cacherFor(b, opts);
      await c.start();
      try {
        await fn(b, c);
      } finally {
        c.stop();
      }
    } finally {
      await b.close();
    }
  };

  test(
    `cacher/${bname}: initial list, get, latest list by namespace, read-your-writes`,
    withCacher(
      {},
      async (b, c) => {
        const rev0 = await b.currentRevision();
        assert.equal(c.revision(), rev0);
        assert.deepEqual(names(c.list({ prefix: PREFIX }).items), ['a/x', 'a/y', 'b/x']);
        assert.deepEqual(names(c.list({ prefix: `${PREFIX}a/` }).items), ['a/x', 'a/y']);
        const e = c.get(key('a', 'y'))!;
        assert.equal(e.namespace, 'a');
        assert.equal(e.name, 'y');
        assert.equal(e.obj.metadata.resourceVersion, String(e.modRevision));
        assert.ok(e.json === undefined || e.json instanceof Uint8Array);
        assert.equal(c.get(key('zz', 'x')), undefined);

        const kv = await b.create(key('a', 'z'), json(obj('a', 'z')));
        // the write resolved: the cache already holds it
        assert.equal(c.get(key('a', 'z'))?.modRevision, kv.modRevision);
        assert.equal(c.revision(), kv.modRevision);
        const res = c.list({ prefix: PREFIX });
        assert.equal(res.revision, kv.modRevision);
        assert.deepEqual(names(res.items), ['a/x', 'a/y', 'a/z', 'b/x']);
        assert.equal(c.count(), 4);
        await b.delete(key('a', 'x'));
        assert.equal(c.get(key('a', 'x')), undefined);
        assert.equal(c.count(), 3, 'a deleted object is not counted');
        // writes to other prefixes advance the cache's revision (progress)
        const other = await b.create('/registry/secrets/a/s', json(obj('a', 's')));
        assert.equal(c.revision(), other.modRevision);
        assert.equal(c.count(), 3, 'another resource\'s objects are not counted');
        assert.equal(c.list({ prefix: PREFIX }).revision, other.modRevision);
      },
      async (b) => {
        await b.create(key('b', 'x'), json(obj('b', 'x')));
        await b.create(key('a', 'y'), json(obj('a', 'y')));
        await b.create(key('a', 'x'), json(obj('a', 'x')));
        await b.create('/registry/configmapsx/a/x', json(obj('a', 'x')));
      },
    ),
  );

  test(
    `cacher/${bname}: new keys join the sorted tree in batches; lists (latest and exact) see every write in order`,
    withCacher({}, async (b, c) => {
      // a model of the state after each write, to compare lists with
      const model = new Map<string, string>();
      const states: { rev: number; names: string[] }[] = [];
      const sortedNames = () => [...model.keys()].sort();
      const mods = new Map<string, number>();
      let i = 0;
      // more new keys than wait unsorted at most (512), with updates and deletes of keys not in the tree yet
      for (let round = 0; round < 3; round++) {
        for (let k = 0; k < 300; k++, i++) {
          const name = `n${(i * 7919) % 1000}-${i}`;
          const kv = await b.create(key('a', name), json(obj('a', name)));
          model.set(`a/${name}`, name);
          mods.set(name, kv.modRevision);
          if (i % 7 === 0) {
            const u = await b.update(key('a', name), json(obj('a', name, { v: 'u' })), kv.modRevision);
            mods.set(name, u.modRevision);
          }
          if (i % 11 === 0) {
            const d = await b.delete(key('a', name));
            model.delete(`a/${name}`);
            mods.delete(name);
            states.push({ rev: d.modRevision, names: sortedNames() });
          }
        }
        const res = c.list({ prefix: `${PREFIX}a/` });
        assert.deepEqual(names(res.items), sortedNames(), `latest list after round ${round}`);
        states.push({ rev: res.revision, names: sortedNames() });
      }
      for (const st of states.slice(-8)) {
        assert.deepEqual(names(c.list({ prefix: `${PREFIX}a/`, revision: st.rev }).items), st.names, `exact list at ${st.rev}`);
      }
      // updated entries are the latest ones, in the tree and by key
      for (const e of c.list({ prefix: `${PREFIX}a/` }).items) assert.equal(e.modRevision, mods.get(e.name));
      // a paged list walks the same order
      const paged: string[] = [];
      let start: string | undefined;
      for (;;) {
        const page = c.list({ prefix: `${PREFIX}a/`, limit: 97, startKey: start });
        paged.push(...names(page.items));
        if (!page.continueKey) break;
        start = page.continueKey;
      }
      assert.deepEqual(paged, sortedNames());
    }),
  );

  test(
    `cacher/${bname}: one decode per write`,
    (() => {
      const decodes = { n: 0 };
      return withCacher({ decodes }, async (b, c) => {
        const before = decodes.n;
        const kv = await b.create(key('a', 'x'), json(obj('a', 'x')));
        await b.update(key('a', 'x'), json(obj('a', 'x', { v: '2' })), kv.modRevision);
        const d = await b.delete(key('a', 'x'));
        assert.equal(decodes.n - before, 2, 'create and update decode once each; delete reuses the object');
        const r = recordWatch(c, { afterRevision: kv.modRevision - 1 });
        assert.equal(r.events[2].type, 'DELETED');
        assert.equal(r.events[2].entry.obj.metadata.resourceVersion, String(d.modRevision));
        assert.equal(r.events[2].entry.obj.metadata.labels.v, '2');
        assert.equal(r.events[2].prev?.obj.metadata.resourceVersion, String(d.modRevision - 1));
      });
    })(),
  );

  test(
    `cacher/${bname}: exact lists at past revisions, and paging with continueKey`,
    withCacher({}, async (b, c) => {
      const kvs: KeyValue[] = [];
      for (let i = 0; i < 12; i++) kvs.push(await b.create(key('p', `o${String(i).padStart(2, '0')}`), json(obj('p', `o${i}`))));
      const r1 = c.revision();
      await b.update(kvs[3].key, json(obj('p', 'o3', { changed: 'yes' })), kvs[3].modRevision);
      await b.delete(kvs[5].key);
      await b.create(key('p', 'o05b'), json(obj('p', 'o5b')));
      const r2 = c.revision();
      await b.create(key('p', 'o99'), json(obj('p', 'o99')));

      const at1 = c.list({ prefix: PREFIX, revision: r1 });
      assert.equal(at1.revision, r1);
      assert.equal(at1.items.length, 12);
      assert.equal(at1.items[3].obj.metadata.labels.changed, undefined);
      assert.equal(at1.items[3].modRevision, kvs[3].modRevision);
      const at2 = c.list({ prefix: PREFIX, revision: r2 });
      assert.deepEqual(
        names(at2.items),
        ['p/o00', 'p/o01', 'p/o02', 'p/o03', 'p/o04', 'p/o05b', 'p/o06', 'p/o07', 'p/o08', 'p/o09', 'p/o10', 'p/o11'],
      );
      assert.equal(at2.items[3].obj.metadata.labels.changed, 'yes');
      // the same as the backend's list at those revisions
      for (const r of [r1, r2, r2 - 1, kvs[6].modRevision, c.revision()]) {
        const fromBackend = (await b.list(PREFIX, { revision: r })).kvs.map((kv) => [kv.key, kv.modRevision]);
        const fromCache = c.list({ prefix: PREFIX, revision: r }).items.map((e) => [e.key, e.modRevision]);
        assert.deepEqual(fromCache, fromBackend, `revision ${r}`);
      }

      // paging: the first page at r1, the rest at r1 while writes go on
      const first = c.list({ prefix: PREFIX, revision: r1, limit: 5 });
      assert.equal(first.items.length, 5);
      assert.equal(first.continueKey, key('p', 'o04') + '\0');
      assert.equal(first.remaining, 7);
      await b.create(key('p', 'o04a'), json(obj('p', 'o4a')));
      const second = c.list({ prefix: PREFIX, revision: r1, startKey: first.continueKey, limit: 5 });
      assert.deepEqual(names(second.items), ['p/o05', 'p/o06', 'p/o07', 'p/o08', 'p/o09']);
      assert.equal(second.remaining, 2);
      const third = c.list({ prefix: PREFIX, revision: r1, startKey: second.continueKey, limit: 5 });
      assert.deepEqual(names(third.items), ['p/o10', 'p/o11']);
      assert.equal(third.continueKey, undefined);
      assert.equal(third.remaining, undefined);
      // latest pages
      const l1 = c.list({ prefix: PREFIX, limit: 13 });
      assert.equal(l1.items.length, 13);
      assert.equal(l1.remaining, 1);
      // with a filter: continueKey, no remaining
      const f = c.list({ prefix: PREFIX, limit: 2, filter: (e) => e.name.endsWith('1') || e.name.endsWith('9') });
      assert.deepEqual(names(f.items), ['p/o01', 'p/o09']);
      assert.equal(f.continueKey, key('p', 'o09') + '\0');
      assert.equal(f.remaining, undefined);
      const f2 = c.list({ prefix: PREFIX, limit: 2, startKey: f.continueKey, filter: (e) => e.name.endsWith('1') || e.name.endsWith('9') });
      assert.deepEqual(names(f2.items), ['p/o11', 'p/o99']);
      // a future revision
      assert.throws(() => c.list({ prefix: PREFIX, revision: c.revision() + 1 }), FutureRevisionError);
    }),
  );

  test(
    `cacher/${bname}: watch replays history, then live; a future start waits`,
    withCacher({}, async (b, c) => {
      const a = await b.create(key('w', 'a'), json(obj('w', 'a')));
      const start = c.revision();
      const a2 = await b.update(a.key, json(obj('w', 'a', { v: '2' })), a.modRevision);
      const bb = await b.create(key('w', 'b'), json(obj('w', 'b')));
      const bd = await b.delete(bb.key);
      await b.create(key('v', 'other-ns'), json(obj('v', 'other-ns')));
      const all = recordWatch(c, { afterRevision: start });
      const ns = recordWatch(c, { prefix: `${PREFIX}w/`, afterRevision: start });
      // the replay ran inside watch()
      assert.equal(all.events.length, 4);
      const c2 = await b.create(key('w', 'c'), json(obj('w', 'c')));
      await settle();
      assert.deepEqual(evs(all.events), [
        ['MODIFIED', 'w/a', a2.modRevision, String(a2.modRevision)],
        ['ADDED', 'w/b', bb.modRevision, String(bb.modRevision)],
        ['DELETED', 'w/b', bd.modRevision, String(bd.modRevision)],
        ['ADDED', 'v/other-ns', bd.modRevision + 1, String(bd.modRevision + 1)],
        ['ADDED', 'w/c', c2.modRevision, String(c2.modRevision)],
      ]);
      assert.equal(all.events[0].prev?.modRevision, a.modRevision);
      assert.deepEqual(
        evs(ns.events).map((e) => e[1]),
        ['w/a', 'w/b', 'w/b', 'w/c'],
      );
      const future = recordWatch(c, { afterRevision: c.revision() + 1 });
      await b.create(key('w', 'd'), json(obj('w', 'd')));
      await b.create(key('w', 'e'), json(obj('w', 'e')));
      await settle();
      assert.deepEqual(evs(future.events).map((e) => e[1]), ['w/e']);
      all.stop();
      await b.create(key('w', 'f'), json(obj('w', 'f')));
      await settle();
      assert.equal(all.events.length, 7);
      assert.equal(ns.events.length, 7);
    }),
  );

  test(
    `cacher/${bname}: selector transitions`,
    withCacher({}, async (b, c) => {
      const sel = (e: CacheEntry) => e.obj.metadata.labels?.app === 'web';
      const r = recordWatch(c, { afterRevision: c.revision(), filter: sel });
      const plain = recordWatch(c, { afterRevision: c.revision() });
      const x = await b.create(key('s', 'x'), json(obj('s', 'x', { app: 'db' }))); // no match: nothing
      const x2 = await b.update(x.key, json(obj('s', 'x', { app: 'web' })), x.modRevision); // starts matching: ADDED
      const x3 = await b.update(x.key, json(obj('s', 'x', { app: 'web', t: '1' })), x2.modRevision); // MODIFIED
      const x4 = await b.update(x.key, json(obj('s', 'x', { app: 'db' })), x3.modRevision); // stops: DELETED (its last matching state, at this revision)
      await b.update(x.key, json(obj('s', 'x', { app: 'db', t: '2' })), x4.modRevision); // nothing
      const y = await b.create(key('s', 'y'), json(obj('s', 'y', { app: 'web' }))); // ADDED
      const yd = await b.delete(y.key); // DELETED
      await settle();
      assert.deepEqual(evs(r.events), [
        ['ADDED', 's/x', x2.modRevision, String(x2.modRevision)],
        ['MODIFIED', 's/x', x3.modRevision, String(x3.modRevision)],
        ['DELETED', 's/x', x4.modRevision, String(x4.modRevision)],
        ['ADDED', 's/y', y.modRevision, String(y.modRevision)],
        ['DELETED', 's/y', yd.modRevision, String(yd.modRevision)],
      ]);
      // as Kubernetes' cacheWatcher sends it: the previous object with the event's resourceVersion
      assert.deepEqual(r.events[2].entry.obj.metadata.labels, { app: 'web', t: '1' }, 'the DELETED of a transition carries the last state that matched');
      // unchanged events are the cache's own objects, shared with unfiltered watchers
      assert.equal(r.events[1], plain.events[2]);
      // the same transitions through a replay
      const replay = recordWatch(c, { afterRevision: x.modRevision - 1, filter: sel });
      assert.deepEqual(evs(replay.events), evs(r.events));
    }),
  );

  test(
    `cacher/${bname}: TooOldError below the history window`,
    (() => {
      const clock: Clock = { t: 1_000_000 };
      return withCacher({ clock, historyWindowMs: 1000, snapshotMaxAgeMs: 1000 }, async (b, c) => {
        const start = c.revision();
        assert.equal(c.oldestRevision(), start);
        assert.throws(() => c.watch({ prefix: PREFIX, afterRevision: start - 1, onEvent() {} }), TooOldError);
        const a = await b.create(key('t', 'a'), json(obj('t', 'a')));
        clock.t += 600;
        const bb = await b.create(key('t', 'b'), json(obj('t', 'b')));
        // within the window: a resume from the start works
        const ok = recordWatch(c, { afterRevision: start });
        assert.equal(ok.events.length, 2);
        ok.stop();
        clock.t += 600; // a is now 1200 ms old
        assert.equal(c.oldestRevision(), a.modRevision);
        assert.throws(
          () => c.watch({ prefix: PREFIX, afterRevision: start, onEvent() {} }),
          (err: unknown) => err instanceof TooOldError && err.requested === start && err.oldest === a.modRevision,
        );
        const resumed = recordWatch(c, { afterRevision: a.modRevision });
        assert.deepEqual(resumed.events.map((e) => e.revision), [bb.modRevision]);
        assert.throws(() => c.list({ prefix: PREFIX, revision: start }), TooOldError);
        clock.t += 2000;
        // every event is out of the window: a watch from the newest revision still works
        assert.equal(c.oldestRevision(), bb.modRevision);
        const w = recordWatch(c, { afterRevision: c.revision() });
        await b.create(key('t', 'c'), json(obj('t', 'c')));
        await settle();
        assert.equal(w.events.length, 1);
      });
    })(),
  );

  test(
    `cacher/${bname}: snapshots expire after snapshotMaxAgeMs`,
    (() => {
      const clock: Clock = { t: 5_000_000 };
      return withCacher({ clock, historyWindowMs: 60_000, snapshotMaxAgeMs: 1000 }, async (b, c) => {
        const a = await b.create(key('e', 'a'), json(obj('e', 'a')));
        const r1 = c.revision();
        clock.t += 500;
        await b.update(a.key, json(obj('e', 'a', { v: '2' })), a.modRevision);
        const r2 = c.revision();
        assert.equal(c.list({ prefix: PREFIX, revision: r1 }).items[0].modRevision, a.modRevision);
        clock.t += 800; // the state at r1 ended 800 ms ago
        assert.equal(c.list({ prefix: PREFIX, revision: r1 }).items[0].modRevision, a.modRevision);
        clock.t += 300; // 1100 ms ago
        assert.throws(() => c.list({ prefix: PREFIX, revision: r1 }), TooOldError);
        // the state at r2 is still the latest: always listable
        clock.t += 10_000;
        assert.equal(c.list({ prefix: PREFIX, revision: r2 }).items[0].modRevision, r2);
        // a watch still resumes from r1: the history window is longer
        assert.equal(recordWatch(c, { afterRevision: r1 }).events.length, 1);
      });
    })(),
  );

  test(
    `cacher/${bname}: waitUntilFresh`,
    withCacher({}, async (b, c) => {
      const cur = c.revision();
      assert.equal(await c.waitUntilFresh(cur, 10), true);
      const p = c.waitUntilFresh(cur + 2, 5000);
      await b.create('/registry/pods/a/x', json(obj('a', 'x'))); // another prefix: progress
      await b.create(key('a', 'x'), json(obj('a', 'x')));
      assert.equal(await p, true);
      const t0 = Date.now();
      assert.equal(await c.waitUntilFresh(c.revision() + 10, 30), false);
      assert.ok(Date.now() - t0 >= 25);
    }),
  );

  test(
    `cacher/${bname}: fan-out shares one event object; stop closes watchers`,
    withCacher({}, async (b, c) => {
      const got: CacheEvent[] = [];
      const closed: (Error | undefined)[] = [];
      for (let i = 0; i < 1000; i++) {
        c.watch({
          prefix: i % 2 ? PREFIX : `${PREFIX}f/`,
          afterRevision: c.revision(),
          onEvent: (e) => got.push(e),
          onClose: (err) => closed.push(err),
        });
      }
      await b.create(key('f', 'a'), json(obj('f', 'a')));
      await b.create(key('g', 'a'), json(obj('g', 'a')));
      await settle();
      assert.equal(got.length, 1500);
      assert.ok(got.slice(0, 1000).every((e) => e === got[0]));
      // a watcher that throws is dropped with its error
      let throws = 0;
      c.watch({
        prefix: PREFIX,
        afterRevision: c.revision(),
        onEvent: () => {
          throws++;
          throw new Error('boom');
        },
        onClose: (err) => closed.push(err),
      });
      await b.create(key('f', 'b'), json(obj('f', 'b')));
      await b.create(key('f', 'c'), json(obj('f', 'c')));
      await settle();
      assert.equal(throws, 1);
      assert.equal(closed.length, 1);
      assert.equal(closed[0]?.message, 'boom');
      c.stop();
      assert.equal(closed.length, 1001);
      assert.equal(await c.waitUntilFresh(c.revision() + 1, 1000), false);
    }),
  );

  test(
    `cacher/${bname}: a write resolves before the fan-out; per-watcher order and start revisions hold`,
    withCacher({}, async (b, c) => {
      const web = (e: CacheEntry) => e.obj.metadata.labels?.app === 'web';
      const early = recordWatch(c, { afterRevision: c.revision() });
      const filtered = recordWatch(c, { afterRevision: c.revision(), filter: web });
      const kv1 = await b.create(key('o', 'a'), json(obj('o', 'a', { app: 'web' })));
      // applied before the writer resumes (it reads its own write), not yet passed to the watchers
      assert.equal(c.get(kv1.key)?.modRevision, kv1.modRevision);
      assert.equal(c.list({ prefix: PREFIX }).items.length, 1);
      assert.equal(early.events.length, 0);
      // a watch from the write's revision sees nothing older; one from just before replays it, once
      const atWrite = recordWatch(c, { afterRevision: kv1.modRevision });
      const before = recordWatch(c, { afterRevision: kv1.modRevision - 1 });
      assert.deepEqual(
        before.events.map((e) => e.revision),
        [kv1.modRevision],
      );
      const kv2 = await b.update(kv1.key, json(obj('o', 'a', { app: 'web', v: '2' })), kv1.modRevision);
      const kv3 = await b.create(key('o', 'b'), json(obj('o', 'b')));
      await settle();
      const all = [kv1.modRevision, kv2.modRevision, kv3.modRevision];
      assert.deepEqual(
        early.events.map((e) => e.revision),
        all,
      );
      assert.deepEqual(
        filtered.events.map((e) => e.revision),
        all.slice(0, 2),
      );
      assert.deepEqual(
        atWrite.events.map((e) => e.revision),
        all.slice(1),
      );
      assert.deepEqual(
        before.events.map((e) => e.revision),
        all,
      );
      // revision() passes queued events on first: a bookmark at revision() never overtakes them
      const kv4 = await b.delete(kv3.key);
      assert.equal(early.events.length, 3);
      assert.equal(c.revision(), kv4.modRevision);
      assert.equal(early.events.length, 4);
      // a watcher stopped while events are queued gets none of them
      await b.create(key('o', 'c'), json(obj('o', 'c')));
      early.stop();
      await settle();
      assert.equal(early.events.length, 4);
      assert.equal(before.events.length, 5);
    }),
  );

  test(
    `cacher/${bname}: random writes, every past revision equals the backend's list`,
    withCacher({}, async (b, c) => {
      let seed = 42;
      const rnd = (k: number) => {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        return seed % k;
      };
      const revs: number[] = [c.revision()];
      for (let round = 0; round < 30; round++) {
        const batch: Promise<unknown>[] = [];
        for (let j = 0; j < 10; j++) {
          const k = key(`n${rnd(3)}`, `o${rnd(15)}`);
          const cur = c.get(k);
          const op = rnd(3);
          if (!cur) batch.push(b.create(k, json(obj('n', k, { r: String(round) }))).catch(() => {}));
          else if (op === 0) batch.push(b.delete(k, cur.modRevision).catch(() => {}));
          else batch.push(b.update(k, json(obj('n', k, { r: String(round), j: String(j) })), cur.modRevision).catch(() => {}));
        }
        await Promise.all(batch);
        revs.push(c.revision());
      }
      const w = recordWatch(c, { afterRevision: revs[0] });
      assert.equal(w.events.length, c.revision() - revs[0]);
      for (const r of [...revs].reverse()) {
        for (const prefix of [PREFIX, `${PREFIX}n1/`]) {
          // (a backend reads revision 0 as the latest; the cache reads it as the empty start)
          const fromBackend = r === 0 ? [] : (await b.list(prefix, { revision: r })).kvs.map((kv) => [kv.key, kv.modRevision]);
          const fromCache = c.list({ prefix, revision: r }).items.map((e) => [e.key, e.modRevision, Number(e.obj.metadata.resourceVersion)]);
          assert.deepEqual(fromCache.map((x) => x.slice(0, 2)), fromBackend, `revision ${r}`);
          for (const x of fromCache) assert.equal(x[1], x[2]);
        }
      }
    }),
  );
}

test('cacher: start after writes in flight, and a backend that closes ends the watches', async () => {
  const b = new MemoryBackend();
  await b.open();
  const c = cacherFor(b);
  const writes = [b.create(key('i', 'a'), json(obj('i', 'a'))), b.create(key('i', 'b'), json(obj('i', 'b')))];
  await c.start();
  await Promise.all(writes);
  await until(() => c.list({ prefix: PREFIX }).items.length === 2, 'both writes in the cache');
  const r = recordWatch(c, { afterRevision: c.revision() });
  await b.close();
  await until(() => r.closed.length === 1, 'watch closed');
  assert.match(String(r.closed[0]?.message), /closed/);
  c.stop();
});

for (const [name, mk] of Object.entries(backends)) {
  test(`cacher (${name}): values that do not decode are kept out of lists and watches, and named`, async () => {
    const b = await mk();
    await b.create(key('a', 'ok'), json(obj('a', 'ok')));
    await b.create(key('a', 'bad'), Buffer.from('{not json'));
    await b.create(key('b', 'bad'), Buffer.from('k8s:enc:aescbc:v1:x:'));
    const c = cacherFor(b);
    await c.start();
    try {
      assert.deepEqual(c.list({ prefix: PREFIX }).items.map((e) => e.key), [key('a', 'ok')]);
      assert.equal(c.get(key('a', 'bad')), undefined);
      assert.ok(c.corrupt(key('a', 'bad'))?.error instanceof SyntaxError);
      assert.equal(c.corrupt(key('a', 'ok')), undefined);
      assert.deepEqual(c.corruptIn(PREFIX).map((x) => x.key), [key('a', 'bad'), key('b', 'bad')]);
      assert.deepEqual(c.corruptIn(`${PREFIX}a/`).map((x) => x.name), ['bad']);
      assert.deepEqual(c.corruptIn(PREFIX, key('a', 'bad\0')).map((x) => x.key), [key('b', 'bad')]);
      assert.deepEqual(c.corruptIn(PREFIX, undefined, key('b', 'bad')).map((x) => x.key), [key('a', 'bad')]);
      const evs: CacheEvent[] = [];
      const startRev = c.revision();
      const w = c.watch({ prefix: PREFIX, afterRevision: startRev, onEvent: (e) => evs.push(e) });
      // a readable object becomes unreadable: it leaves (DELETED); readable again: it comes back (ADDED)
      const ok = c.get(key('a', 'ok'))!;
      const broken = await b.update(key('a', 'ok'), Buffer.from('nope'), ok.modRevision);
      const fixed = await b.update(key('a', 'ok'), json(obj('a', 'ok', { v: '2' })), broken.modRevision);
      // an unreadable object written anew is ADDED; one removed is DELETED by name
      const bad = c.corrupt(key('a', 'bad'))!;
      await b.update(key('a', 'bad'), json(obj('a', 'bad')), bad.modRevision);
      await b.delete(key('b', 'bad'));
      await until(() => evs.length === 4);
      assert.deepEqual(
        evs.map((e) => [e.type, e.entry.key, e.entry.obj?.metadata?.name, e.revision]),
        [
          ['DELETED', key('a', 'ok'), 'ok', broken.modRevision],
          ['ADDED', key('a', 'ok'), 'ok', fixed.modRevision],
          ['ADDED', key('a', 'bad'), 'bad', evs[2]!.revision],
          ['DELETED', key('b', 'bad'), 'bad', evs[3]!.revision],
        ],
      );
      assert.equal(evs[0]!.prev?.obj.metadata.resourceVersion, String(ok.modRevision));
      assert.deepEqual(c.corruptIn(PREFIX), []);
      assert.deepEqual(c.list({ prefix: PREFIX }).items.map((e) => e.key), [key('a', 'bad'), key('a', 'ok')]);
      // the state before the object broke is still listed exactly
      assert.deepEqual(c.list({ prefix: PREFIX, revision: startRev }).items.map((e) => e.key), [key('a', 'ok')]);
      w.stop();
    } finally {
      c.stop();
      await b.close();
    }
  });
}

test('cacher: entries beyond the decoded ring are frozen to their JSON and decoded again when read; labels and kept fields need no decode', async () => {
  const b = await backends.memory!();
  const fieldsOf: string[] = [];
  const c = cacherFor(b, {
    fields: (o) => {
      fieldsOf.push(o.metadata.name);
      return { 'data.phase': o.data?.phase ?? '' };
    },
  });
  const decoded = decodedEntries();
  setDecodedEntries(2);
  try {
    await c.start();
    // (an integer beyond 2^53: a frozen entry's JSON and its object decoded again keep it exactly)
    const stored = (i: number) => ({ ...obj('a', `o${i}`, { n: String(i) }, { phase: i % 2 ? 'odd' : 'even' }), big: 9007199254740993n });
    for (let i = 0; i < 5; i++) await b.create(key('a', `o${i}`), Buffer.from(stringifyJSON(stored(i))));
    const get = (i: number) => c.get(key('a', `o${i}`))!;
    // the ring holds the last two made: o3 and o4; the three before were frozen, their JSON made then
    assert.deepEqual([0, 1, 2, 3, 4].map((i) => get(i).decoded !== undefined), [false, false, false, true, true]);
    assert.deepEqual(fieldsOf, ['o0', 'o1', 'o2']);
    const e0 = get(0);
    assert.ok(e0.json);
    // labels and the kept fields are read without decoding
    assert.deepEqual(e0.labels, { n: '0' });
    assert.equal(e0.keptField('data.phase'), 'even');
    assert.equal(e0.keptField('spec.other'), undefined, 'a field not kept: the caller reads the object');
    assert.equal(e0.decoded, undefined);
    // read: decoded again, equal to what was stored, and it joins the ring (o3 leaves it)
    const o0 = e0.obj;
    assert.deepEqual(o0, { ...stored(0), metadata: { ...stored(0).metadata, resourceVersion: String(e0.modRevision) } });
    assert.equal(typeof o0.big, 'bigint');
    assert.equal(e0.obj, o0, 'the same object while it stays decoded');
    assert.equal(e0.keptField('data.phase'), undefined, 'decoded: the object is read');
    assert.deepEqual([0, 1, 2, 3, 4].map((i) => get(i).decoded !== undefined), [true, false, false, false, true]);
    // frozen again: the fields are not computed twice
    get(1).obj;
    get(2).obj;
    assert.equal(e0.decoded, undefined);
    assert.deepEqual(fieldsOf, ['o0', 'o1', 'o2', 'o3', 'o4']);
    // a filtered list and a watch's replay over frozen entries
    const odd = (e: CacheEntry) => e.labels?.n !== undefined && (e.keptField('data.phase') ?? e.obj.data.phase) === 'odd';
    assert.deepEqual(names(c.list({ prefix: PREFIX, filter: odd }).items), ['a/o1', 'a/o3']);
    const seen: string[] = [];
    const w = c.watch({ prefix: PREFIX, afterRevision: 0, filter: odd, onEvent: (ev) => seen.push(`${ev.type} ${ev.entry.obj.metadata.name}`) });
    assert.deepEqual(seen, ['ADDED o1', 'ADDED o3']);
    // an update and a delete of a frozen entry: the events carry the objects
    // (the watch read o1 and o3: two other reads freeze them again)
    get(0).obj;
    get(4).obj;
    const e3 = get(3);
    assert.equal(e3.decoded, undefined);
    await b.update(key('a', 'o3'), Buffer.from(stringifyJSON({ ...stored(3), data: { phase: 'even' } })), e3.modRevision);
    await b.delete(key('a', 'o1'));
    await until(() => seen.length === 4);
    assert.deepEqual(seen.slice(2), ['DELETED o3', 'DELETED o1']);
    w.stop();
  } finally {
    setDecodedEntries(decoded);
    c.stop();
    await b.close();
  }
});
