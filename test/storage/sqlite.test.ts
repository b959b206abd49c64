import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteBackend, type SqliteBackendOptions } from '../../src/storage/sqlite.js';
import type { Backend } from '../../src/storage/interface.js';
import { bytes, conformance, record, text, until } from './conformance.js';
import { ConflictError } from '../../src/storage/interface.js';

const dir = mkdtempSync(join(tmpdir(), 'keelson-sqlite-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

// the usual configuration (SQLite in a worker thread), SQLite on the main thread, a worker with
// one batch in flight at a time, and the key index kept only three revisions behind the log (the
// default keeps it 1,024 behind: the other runs read the log's tail nearly always)
for (const [label, opts] of [
  ['sqlite', {}],
  ['sqlite (main thread)', { worker: false }],
  ['sqlite (one batch in flight)', { maxInFlight: 1, recentEvents: 4 }],
  ['sqlite (key index three revisions behind)', { indexEvery: 3 }],
] as [string, SqliteBackendOptions][]) {
  conformance(label, {
    backendName: 'sqlite',
    async create() {
      const b = new SqliteBackend(join(dir, `t${n++}`, 'state.db'), { compactChunk: 3, ...opts });
      await b.open();
      // run the suite against the worker, not the main-thread connection that serves until it is ready
      await b.workerReady();
      return b;
    },
    async reopen(b: Backend) {
      await b.close();
      const next = new SqliteBackend((b as SqliteBackend).path, { compactChunk: 3, ...opts });
      await next.open();
      await next.workerReady();
      return next;
    },
  });
}

/** the one value a pragma reads back (better-sqlite3 gives rows) */
async function pragmaValue(b: SqliteBackend, name: string): Promise<unknown> {
  const rows = (await b.pragma(name)) as Record<string, unknown>[];
  return rows[0]?.[name];
}

const tick = () => new Promise<void>((r) => setImmediate(r));

test('sqlite: the worker takes the file over; a second process can neither read nor write it', async () => {
  const path = join(dir, 'handover.db');
  const b = new SqliteBackend(path);
  await b.open();
  // until the worker is ready, writes commit on the main thread
  const early = await b.create('/h/early', bytes('1'));
  assert.equal(await b.workerReady(), true);
  assert.equal(b.stats().worker, true);
  const late = await b.create('/h/late', bytes('2'));
  assert.equal(late.modRevision, early.modRevision + 1);
  assert.equal(text((await b.get('/h/early'))!.value), '1');
  const other = new Database(path, { timeout: 0 });
  assert.throws(() => other.prepare('SELECT COUNT(*) FROM kv').get(), /locked|busy/i);
  other.close();
  await b.close();
  const db = new Database(path, { readonly: true });
  assert.equal(db.prepare('SELECT COUNT(*) FROM kv').pluck().get(), 2);
  db.close();
});

test('sqlite: batches are pipelined, committed in order, and close drains them', async () => {
  const path = join(dir, 'pipeline.db');
  const b = new SqliteBackend(path);
  await b.open();
  await b.workerReady();
  const seen: number[] = [];
  const r = record(b, '/p/', 0);
  await new Promise((res) => setTimeout(res, 1));
  const writes: Promise<unknown>[] = [];
  const resolvedAt: number[] = [];
  // writes in several turns of the event loop: several batches, in flight together
  for (let turn = 0; turn < 20; turn++) {
    for (let i = 0; i < 10; i++) {
      const p = b.create(`/p/k${turn}-${i}`, bytes(`${turn}-${i}`));
      writes.push(p.then((kv) => void resolvedAt.push(kv.modRevision)));
    }
    await tick();
  }
  // updates that depend on writes not yet durable, then close at once: every write lands
  const first = await b.create('/p/u', bytes('0'));
  let prev = first.modRevision;
  for (let i = 1; i <= 5; i++) {
    const u = b.update('/p/u', bytes(String(i)), prev);
    prev++;
    writes.push(u);
  }
  writes.push(b.delete('/p/u', prev));
  await b.close();
  await Promise.all(writes);
  for (const e of r.events) seen.push(e.revision);
  assert.deepEqual(resolvedAt, [...resolvedAt].sort((x, y) => x - y), 'writers resolve in revision order');
  assert.deepEqual(seen, Array.from({ length: seen.length }, (_, i) => i + 1), 'watchers see every revision once, in order');
  assert.equal(seen.length, 200 + 7);
  const del = r.events[r.events.length - 1];
  assert.equal(del.type, 'delete');
  assert.equal(text(del.kv.value), '5');
  assert.equal(text(del.prevKv!.value), '5');
  assert.ok(b.stats().maxInFlight >= 2, `batches in flight together: ${b.stats().maxInFlight}`);
  const b2 = new SqliteBackend(path);
  await b2.open();
  assert.equal(await b2.currentRevision(), 207);
  assert.equal(await b2.count('/p/'), 200);
  await b2.close();
});

test('sqlite: a second process cannot write the file while a backend holds it', async () => {
  const path = join(dir, 'exclusive.db');
  const b = new SqliteBackend(path);
  await b.open();
  await b.create('/x/a', bytes('1'));
  const other = new Database(path, { timeout: 0 });
  assert.throws(() => other.prepare('SELECT COUNT(*) FROM kv').get(), /locked|busy/i);
  other.close();
  await b.close();
});

test('sqlite: the file holds one row per write and the configured pragmas', async () => {
  const path = join(dir, 'rows.db');
  const b = new SqliteBackend(path);
  await b.open();
  const a = await b.create('/r/a', bytes('1'));
  await b.update('/r/a', bytes('2'), a.modRevision);
  await b.delete('/r/a');
  await b.close();
  const db = new Database(path, { readonly: true });
  const rows = db.prepare('SELECT rev, key, create_rev, prev_rev, deleted FROM kv ORDER BY rev').raw().all();
  assert.deepEqual(rows, [
    [1, '/r/a', 1, 0, 0],
    [2, '/r/a', 1, 1, 0],
    [3, '/r/a', 1, 2, 1],
  ]);
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  assert.equal(db.pragma('page_size', { simple: true }), 16384);
  db.close();
  // the connection itself checkpoints after 4 MiB of log: 256 pages of 16 KiB
  const b2 = new SqliteBackend(path, { worker: false });
  await b2.open();
  assert.equal(await pragmaValue(b2, 'wal_autocheckpoint'), 256);
  await b2.close();
});

test('sqlite: a file made with another page size keeps it, and is checkpointed after 4 MiB of log all the same', async () => {
  const path = join(dir, 'pages4k.db');
  const old = new Database(path);
  old.pragma('page_size = 4096');
  old.exec('CREATE TABLE t (x)');
  old.close();
  const b = new SqliteBackend(path, { worker: false });
  await b.open();
  const a = await b.create('/p4/a', bytes('1'));
  assert.equal(text((await b.get('/p4/a'))!.value), '1');
  assert.equal(a.modRevision, 1);
  assert.equal(await pragmaValue(b, 'page_size'), 4096);
  assert.equal(await pragmaValue(b, 'wal_autocheckpoint'), 1024);
  await b.close();
});

test('sqlite: compaction removes superseded rows and tombstones in chunks', async () => {
  const path = join(dir, 'compact.db');
  const b = new SqliteBackend(path, { compactChunk: 7 });
  await b.open();
  let kv = await b.create('/c/a', bytes('0'));
  for (let i = 1; i < 100; i++) kv = await b.update('/c/a', bytes(String(i)), kv.modRevision);
  for (let i = 0; i < 20; i++) await b.create(`/c/t${i}`, bytes('t'));
  for (let i = 0; i < 20; i++) await b.delete(`/c/t${i}`);
  await b.create('/c/z', bytes('z'));
  const rev = await b.currentRevision();
  // writes keep flowing while the compaction runs in chunks
  const compaction = b.compact(rev);
  const during = b.create('/c/during', bytes('d'));
  await Promise.all([compaction, during]);
  await b.close();
  const db = new Database(path, { readonly: true });
  const rows = db.prepare('SELECT key FROM kv ORDER BY rev').pluck().all();
  assert.deepEqual(rows, ['/c/a', '/c/z', '/c/during']);
  assert.equal(db.prepare("SELECT value FROM meta WHERE name = 'compact_done'").pluck().get(), rev);
  db.close();
});

/** the (key, rev) pairs of keyrev, and those of the log's rows up to meta 'indexed' (they must be the same) */
function keyIndexAgainstLog(db: Database.Database): { keyrev: unknown[]; log: unknown[] } {
  const indexed = (db.prepare("SELECT value FROM meta WHERE name = 'indexed'").pluck().get() as number | undefined) ?? 0;
  return {
    keyrev: db.prepare('SELECT key, rev FROM keyrev ORDER BY key, rev').raw().all(),
    log: db.prepare('SELECT key, rev FROM kv WHERE rev <= ? ORDER BY key, rev').raw().all(indexed),
  };
}

test('sqlite: compaction removes the key index pairs of the rows it removes', async () => {
  const path = join(dir, 'compact-keys.db');
  const b = new SqliteBackend(path, { compactChunk: 4, indexEvery: 5 });
  await b.open();
  let kv = await b.create('/k/a', bytes('0'));
  for (let i = 1; i < 30; i++) kv = await b.update('/k/a', bytes(String(i)), kv.modRevision);
  for (let i = 0; i < 7; i++) await b.create(`/k/t${i}`, bytes('t'));
  for (let i = 0; i < 7; i++) await b.delete(`/k/t${i}`);
  const rev = await b.currentRevision();
  await b.create('/k/b', bytes('b'));
  await b.compact(rev - 2);
  await b.create('/k/c', bytes('c'));
  await b.close();
  const db = new Database(path, { readonly: true });
  const { keyrev, log } = keyIndexAgainstLog(db);
  assert.deepEqual(keyrev, log);
  assert.ok(keyrev.length >= 3, 'the pairs of the rows kept are there');
  db.close();
});

test('sqlite: lists at every revision agree with a model, whatever part of the log the key index holds', async () => {
  const path = join(dir, 'model.db');
  let b = new SqliteBackend(path, { indexEvery: 4 });
  await b.open();
  // a small seeded generator: the same history every run
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const live = new Map<string, KeyValueLike>();
  type KeyValueLike = { value: string; mod: number };
  const states = new Map<number, Map<string, string>>();
  for (let i = 0; i < 120; i++) {
    const key = `/m/k${rand(9)}`;
    const cur = live.get(key);
    let rev: number;
    if (!cur) {
      rev = (await b.create(key, bytes(`v${i}`))).modRevision;
      live.set(key, { value: `v${i}`, mod: rev });
    } else if (rand(3) > 0) {
      rev = (await b.update(key, bytes(`v${i}`), cur.mod)).modRevision;
      live.set(key, { value: `v${i}`, mod: rev });
    } else {
      rev = (await b.delete(key, cur.mod)).modRevision;
      live.delete(key);
    }
    states.set(rev, new Map([...live].map(([k, v]) => [k, v.value])));
  }
  const expect = (r: number) => [...states.get(r)!].sort(([x], [y]) => (x < y ? -1 : 1)).map(([k, v]) => `${k}=${v}`);
  const got = (kvs: { key: string; value: Uint8Array }[]) => kvs.map((kv) => `${kv.key}=${text(kv.value)}`);
  const check = async (label: string) => {
    for (const r of states.keys()) {
      assert.deepEqual(got((await b.list('/m/', { revision: r })).kvs), expect(r), `${label}: list at ${r}`);
      // paged, as continue tokens read it: from a start key, a few at a time
      const paged: string[] = [];
      let start: string | undefined;
      for (;;) {
        const page = await b.list('/m/', { revision: r, limit: 2, startKey: start });
        paged.push(...got(page.kvs));
        if (!page.more) break;
        start = page.kvs[page.kvs.length - 1]!.key + '\0';
      }
      assert.deepEqual(paged, expect(r), `${label}: pages at ${r}`);
    }
    const last = Math.max(...states.keys());
    for (let k = 0; k < 9; k++) {
      const key = `/m/k${k}`;
      const kv = await b.get(key);
      assert.equal(kv ? text(kv.value) : undefined, states.get(last)!.get(key), `${label}: get ${key}`);
    }
    assert.equal(await b.count('/m/'), states.get(last)!.size, `${label}: count`);
  };
  await check('open');
  await b.close();
  b = new SqliteBackend(path, { indexEvery: 4 });
  await b.open();
  await check('reopened (the tail indexed at open)');
  await b.close();
});

test('sqlite: a file with the key index of earlier versions is migrated at open', async () => {
  const path = join(dir, 'old', 'state.db');
  mkdirSync(dirname(path), { recursive: true });
  const old = new Database(path);
  old.exec(`
    CREATE TABLE kv (rev INTEGER PRIMARY KEY, key TEXT NOT NULL, create_rev INTEGER NOT NULL, prev_rev INTEGER NOT NULL, deleted INTEGER NOT NULL, value BLOB);
    CREATE INDEX kv_key_rev ON kv (key, rev);
    CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
  `);
  const ins = old.prepare('INSERT INTO kv VALUES (?, ?, ?, ?, ?, ?)');
  ins.run(1, '/o/a', 1, 0, 0, bytes('a1'));
  ins.run(2, '/o/b', 2, 0, 0, bytes('b1'));
  ins.run(3, '/o/a', 1, 1, 0, bytes('a2'));
  ins.run(4, '/o/b', 2, 2, 1, bytes('b1'));
  ins.run(5, '/o/c', 5, 0, 0, bytes('c1'));
  old.close();

  const b = new SqliteBackend(path);
  await b.open();
  assert.deepEqual((await b.list('/o/')).kvs.map((kv) => `${kv.key}=${text(kv.value)}`), ['/o/a=a2', '/o/c=c1']);
  assert.deepEqual((await b.list('/o/', { revision: 2 })).kvs.map((kv) => `${kv.key}=${text(kv.value)}`), ['/o/a=a1', '/o/b=b1']);
  assert.equal(text((await b.update('/o/a', bytes('a3'), 3)).value), 'a3');
  await b.close();
  const db = new Database(path, { readonly: true });
  assert.equal(db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name = 'kv_key_rev'").pluck().get(), 0, 'the old index is gone');
  assert.deepEqual(
    db.prepare('SELECT key, rev FROM keyrev ORDER BY key, rev').raw().all(),
    [['/o/a', 1], ['/o/a', 3], ['/o/b', 2], ['/o/b', 4], ['/o/c', 5]],
    'every row of the old file has its pair (the write after the migration waits in the tail)',
  );
  db.close();
});

test('sqlite: an interrupted compaction resumes at open', async () => {
  const path = join(dir, 'resume.db');
  const b = new SqliteBackend(path, { compactChunk: 1 });
  await b.open();
  let kv = await b.create('/c/a', bytes('0'));
  for (let i = 1; i < 50; i++) kv = await b.update('/c/a', bytes(String(i)), kv.modRevision);
  const compaction = b.compact(kv.modRevision);
  await b.close(); // stops between chunks
  await compaction;
  const b2 = new SqliteBackend(path);
  await b2.open();
  assert.equal(await b2.compactedRevision(), kv.modRevision);
  await b2.compact(kv.modRevision); // joins the compaction resumed at open
  assert.equal(text((await b2.get('/c/a'))!.value), '49');
  await b2.close();
  const db = new Database(path, { readonly: true });
  assert.equal(db.prepare('SELECT COUNT(*) FROM kv').pluck().get(), 1);
  db.close();
});

test('sqlite: a failed commit rejects the batch and leaves nothing behind', async () => {
  const path = join(dir, 'fail.db');
  const b = new SqliteBackend(path);
  await b.open();
  const a = await b.create('/f/a', bytes('a'));
  const r = record(b, '/f/', a.modRevision);
  await new Promise((res) => setTimeout(res, 1));
  // make the next transaction fail: the connection refuses writes for a moment
  await b.pragma('query_only = ON');
  const results = await Promise.allSettled([b.update('/f/a', bytes('a2'), a.modRevision), b.create('/f/b', bytes('b'))]);
  await b.pragma('query_only = OFF');
  assert.deepEqual(
    results.map((x) => x.status),
    ['rejected', 'rejected'],
  );
  assert.equal(r.events.length, 0);
  assert.equal(await b.currentRevision(), a.modRevision);
  // the index was rolled back: the same writes succeed now, with the same revisions
  const u = await b.update('/f/a', bytes('a2'), a.modRevision);
  assert.equal(u.modRevision, a.modRevision + 1);
  const c = await b.create('/f/b', bytes('b'));
  assert.equal(c.modRevision, a.modRevision + 2);
  assert.equal(r.events.length, 2);
  await b.close();
});

test('sqlite: a failed commit also rejects the batches behind it and the writes that depend on it', async () => {
  const path = join(dir, 'fail-pipeline.db');
  const b = new SqliteBackend(path);
  await b.open();
  await b.workerReady();
  const a = await b.create('/g/a', bytes('a'));
  const r = record(b, '/g/', a.modRevision);
  await new Promise((res) => setTimeout(res, 1));
  void b.pragma('query_only = ON');
  const first = b.update('/g/a', bytes('a2'), a.modRevision); // fails in the worker
  await tick(); // posted as one batch
  void b.pragma('query_only = OFF');
  // checked against the failed update: queued or in flight when it fails, rejected with it
  const second = b.update('/g/a', bytes('a3'), a.modRevision + 1);
  const third = b.create('/g/c', bytes('c'));
  const results = await Promise.allSettled([first, second, third]);
  assert.deepEqual(
    results.map((x) => x.status),
    ['rejected', 'rejected', 'rejected'],
  );
  assert.equal(await b.currentRevision(), a.modRevision);
  await assert.rejects(b.update('/g/a', bytes('x'), a.modRevision + 1), (err: Error) => err.name === 'ConflictError');
  const u = await b.update('/g/a', bytes('a2'), a.modRevision);
  assert.equal(u.modRevision, a.modRevision + 1);
  assert.equal(text((await b.get('/g/a'))!.value), 'a2');
  assert.deepEqual(
    r.events.map((e) => e.revision),
    [u.modRevision],
  );
  await b.close();
});

test('sqlite: a conflict reports the current value, durable or not', async () => {
  const b = new SqliteBackend(join(dir, 'conflict.db'));
  await b.open();
  await b.workerReady();
  const a = await b.create('/k/a', bytes('durable'));
  await assert.rejects(b.update('/k/a', bytes('x'), a.modRevision + 7), (err: Error) => err instanceof ConflictError && text(err.current!.value) === 'durable');
  const pending = b.update('/k/a', bytes('queued'), a.modRevision);
  await assert.rejects(b.delete('/k/a', a.modRevision), (err: Error) => err instanceof ConflictError && text(err.current!.value) === 'queued');
  await pending;
  await b.close();
});

test('sqlite: a watch replays from the database beyond the recent events, then from memory, while writes go on', async () => {
  const b = new SqliteBackend(join(dir, 'replay.db'), { recentEvents: 8 });
  await b.open();
  await b.workerReady();
  for (let i = 0; i < 40; i++) await b.create(`/r/k${i}`, bytes(String(i)));
  await b.create('/other/x', bytes('x'));
  const got: number[] = [];
  const w = b.watch('/r/', {
    afterRevision: 3,
    onEvents: (evs) => got.push(...evs.map((e) => e.revision)),
    onError: (err) => assert.fail(err),
  });
  const more: Promise<unknown>[] = [];
  for (let i = 40; i < 60; i++) more.push(b.create(`/r/k${i}`, bytes(String(i))));
  await Promise.all(more);
  await until(() => got.length === 57, 'replay and live events');
  assert.deepEqual(got, [...Array.from({ length: 37 }, (_, i) => i + 4), ...Array.from({ length: 20 }, (_, i) => 42 + i)]);
  w.cancel();
  // a replay from before a compaction fails
  await b.compact(30);
  const errors: Error[] = [];
  b.watch('/r/', { afterRevision: 10, onEvents: () => {}, onError: (err) => errors.push(err) });
  await until(() => errors.length === 1, 'compacted error');
  assert.equal(errors[0].name, 'CompactedError');
  await b.close();
});

test('sqlite: a worker that dies fails the writes in flight, every later request, and the health check', async () => {
  const b = new SqliteBackend(join(dir, 'dies.db'));
  await b.open();
  await b.workerReady();
  const a = await b.create('/d/a', bytes('a'));
  const errors: Error[] = [];
  b.watch('/d/', { afterRevision: a.modRevision, onEvents: () => {}, onError: (err) => errors.push(err) });
  await new Promise((res) => setTimeout(res, 1));
  const w = (b as unknown as { worker: { terminate(): Promise<number> } }).worker;
  const inFlight = b.create('/d/b', bytes('b'));
  await w.terminate();
  await assert.rejects(inFlight, /exited/);
  await assert.rejects(b.create('/d/c', bytes('c')), /exited/);
  await assert.rejects(b.get('/d/a'), /exited/);
  assert.equal(await b.healthy(), false);
  assert.equal(errors.length, 1);
  await b.close();
  // the file is intact: the next open finds the durable writes
  const b2 = new SqliteBackend(join(dir, 'dies.db'));
  await b2.open();
  assert.equal(text((await b2.get('/d/a'))!.value), 'a');
  assert.equal(await b2.get('/d/b'), undefined);
  await b2.close();
});
