// Storage benchmarks: prints one JSON document of figures. Run: node dist/bench/storage.js
// (a benchmark, not a test: nothing here is asserted)
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { newCacher, type CacheEntry, type Cacher } from '../src/storage/cacher.js';
import type { Backend, KeyValue } from '../src/storage/interface.js';
import { MemoryBackend } from '../src/storage/memory.js';
import { SqliteBackend } from '../src/storage/sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'keelson-bench-'));
const PREFIX = '/registry/configmaps/';
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

function configMap(ns: string, name: string, size: number, labels: Record<string, string> = {}): Buffer {
  const o = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns, uid: '6f0c3bd4-7d0e-4b8e-9a63-1f1e2d3c4b5a', creationTimestamp: '2026-01-01T00:00:00Z', labels },
    data: { payload: '' },
  };
  const base = JSON.stringify(o).length;
  o.data.payload = 'x'.repeat(Math.max(0, size - base));
  return Buffer.from(JSON.stringify(o));
}

/** raw better-sqlite3 inserts in the backend's table layout, one durable transaction per batch */
function rawInserts(batch: number, totalRows: number) {
  const db = new Database(join(dir, `raw-${batch}.db`));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`CREATE TABLE kv (rev INTEGER PRIMARY KEY, key TEXT NOT NULL, create_rev INTEGER NOT NULL,
             prev_rev INTEGER NOT NULL, deleted INTEGER NOT NULL, value BLOB);
           CREATE INDEX kv_key_rev ON kv (key, rev);`);
  const insert = db.prepare('INSERT INTO kv VALUES (?, ?, ?, ?, 0, ?)');
  const value = Buffer.alloc(1024, 0x61);
  const tx = db.transaction((start: number) => {
    for (let i = 0; i < batch; i++) {
      const rev = start + i;
      insert.run(rev, `${PREFIX}bench/k${rev}`, rev, 0, value);
    }
  });
  const commits = Math.ceil(totalRows / batch);
  const t0 = performance.now();
  for (let c = 0; c < commits; c++) tx(c * batch + 1);
  const ms = performance.now() - t0;
  db.close();
  return { batch, rows: commits * batch, rowsPerSec: Math.round((commits * batch * 1000) / ms), commitsPerSec: Math.round((commits * 1000) / ms), msPerCommit: round(ms / commits, 3) };
}

/** `creators` concurrent loops, each awaiting one create after another */
async function concurrentCreates(b: Backend, creators: number, total: number, valueSize: number) {
  const per = Math.ceil(total / creators);
  const values = Array.from({ length: creators }, (_, i) => configMap('bench', `c${i}`, valueSize));
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: creators }, async (_, c) => {
      for (let i = 0; i < per; i++) await b.create(`${PREFIX}bench/c${c}-${i}`, values[c]);
    }),
  );
  const ms = performance.now() - t0;
  return { creators, writes: per * creators, writesPerSec: Math.round((per * creators * 1000) / ms) };
}

function cacherOn(b: Backend): Cacher {
  return newCacher(b, PREFIX, {
    decode: (kv: KeyValue) => {
      const o = JSON.parse(Buffer.from(kv.value.buffer, kv.value.byteOffset, kv.value.byteLength).toString('utf8'));
      o.metadata.resourceVersion = String(kv.modRevision);
      return o;
    },
    split: (key) => {
      const rest = key.slice(PREFIX.length);
      const i = rest.indexOf('/');
      return { namespace: rest.slice(0, i), name: rest.slice(i + 1) };
    },
  });
}

function time(fn: () => void, minMs = 300): number {
  fn();
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < minMs) {
    fn();
    n++;
    t = performance.now();
  }
  return (t - t0) / n;
}

async function cacherLists() {
  const b = new MemoryBackend();
  await b.open();
  const kvs: KeyValue[] = [];
  for (let i = 0; i < 10_000; i++) {
    const ns = `ns${i % 50}`;
    kvs.push(await b.create(`${PREFIX}${ns}/cm${i}`, configMap(ns, `cm${i}`, 1024, { app: i % 10 === 0 ? 'web' : 'db' })));
  }
  const c = cacherOn(b);
  const t0 = performance.now();
  await c.start();
  const startMs = performance.now() - t0;
  const r0 = c.revision();
  for (let i = 0; i < 1000; i++) await b.update(kvs[i].key, configMap('ns', `cm${i}`, 1024, { v: '2' }), kvs[i].modRevision);
  const web = (e: CacheEntry) => e.obj.metadata.labels.app === 'web';
  const figures = {
    entries: 10_000,
    startMs: round(startMs),
    listAllMs: round(time(() => c.list({ prefix: PREFIX })), 3),
    listNamespaceMs: round(time(() => c.list({ prefix: `${PREFIX}ns7/` })), 3),
    listPage500Ms: round(time(() => c.list({ prefix: PREFIX, limit: 500 })), 3),
    listFilteredMs: round(time(() => c.list({ prefix: PREFIX, filter: web })), 3),
    // the state before 1,000 updates: built once by undoing them, then shared by later pages
    exactListFirstMs: round(
      (() => {
        const t = performance.now();
        c.list({ prefix: PREFIX, revision: r0, limit: 500 });
        return performance.now() - t;
      })(),
      3,
    ),
    exactListPage500Ms: round(time(() => c.list({ prefix: PREFIX, revision: r0, limit: 500 })), 3),
    backendListAllMs: 0,
  };
  figures.backendListAllMs = round(time(() => void b.list(PREFIX), 300), 3);
  c.stop();
  await b.close();
  return figures;
}

async function sqliteBackendList() {
  const b = new SqliteBackend(join(dir, 'list.db'));
  await b.open();
  const writes: Promise<KeyValue>[] = [];
  for (let i = 0; i < 10_000; i++) writes.push(b.create(`${PREFIX}ns${i % 50}/cm${i}`, configMap('ns', `cm${i}`, 1024)));
  await Promise.all(writes);
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < 500) {
    await b.list(PREFIX);
    n++;
  }
  const ms = (performance.now() - t0) / n;
  const t1 = performance.now();
  const c = cacherOn(b);
  await c.start();
  const startMs = performance.now() - t1;
  c.stop();
  await b.close();
  return { entries: 10_000, listAllMs: round(ms, 2), cacherStartMs: round(startMs, 1) };
}

/**
 * Fan-out: writes through a memory backend into one cacher, alternating rounds with no watcher
 * and with `watchers` watchers attached (best of 5 rounds each), so the difference is the cost of
 * delivering one event to every watcher.
 */
async function fanOut(watchers: number, eventsPerRound: number, filtered: boolean) {
  const b = new MemoryBackend();
  await b.open();
  const c = cacherOn(b);
  await c.start();
  let delivered = 0;
  const filter = filtered ? (e: CacheEntry) => e.obj.metadata.labels?.app === 'web' : undefined;
  const values = Array.from({ length: 16 }, (_, i) => configMap('ns', `o${i}`, 256, { app: 'web' }));
  let seq = 0;
  const round = async (): Promise<number> => {
    const t0 = performance.now();
    for (let i = 0; i < eventsPerRound; i++) await b.create(`${PREFIX}ns/o${seq++}`, values[i % 16]);
    return ((performance.now() - t0) * 1000) / eventsPerRound;
  };
  await round(); // warm-up
  let without = Infinity;
  let withWatchers = Infinity;
  for (let r = 0; r < 5; r++) {
    without = Math.min(without, await round());
    const handles = Array.from({ length: watchers }, () =>
      c.watch({ prefix: PREFIX, afterRevision: c.revision(), filter, onEvent: () => void delivered++ }),
    );
    withWatchers = Math.min(withWatchers, await round());
    for (const h of handles) h.stop();
  }
  c.stop();
  await b.close();
  return {
    watchers,
    filtered,
    usPerEventWithout: round1(without),
    usPerEventWith: round1(withWatchers),
    nsPerWatcherPerEvent: round1(((withWatchers - without) * 1000) / watchers),
    delivered,
  };
}
const round1 = (x: number) => Math.round(x * 100) / 100;

async function main() {
  const out: Record<string, unknown> = { node: process.version, tmpdir: dir };
  // the backend first: the raw runs leave the disk busy writing back tens of megabytes
  const sq = new SqliteBackend(join(dir, 'creates.db'));
  await sq.open();
  const sqCreates = await concurrentCreates(sq, 64, 30_000, 1024);
  const st = sq.stats();
  await sq.close();
  out.rawSqliteDurableInserts = [rawInserts(1, 500), rawInserts(64, 64 * 300), rawInserts(256, 256 * 100)];

  const mem = new MemoryBackend();
  await mem.open();
  const memCreates = await concurrentCreates(mem, 64, 200_000, 1024);
  await mem.close();
  out.backendCreates64Concurrent = {
    sqlite: { ...sqCreates, commits: st.commits, meanBatch: round(st.writes / st.commits, 1), largestBatch: st.largestBatch },
    memory: memCreates,
  };

  out.cacherList10k = await cacherLists();
  out.sqliteBackendList10k = await sqliteBackendList();
  out.fanOut = {
    note: 'a write to a memory backend, decoded once into the cache, delivered to N watchers of the prefix',
    unfiltered: await fanOut(1000, 3000, false),
    filtered: await fanOut(1000, 3000, true),
  };
  process.stdout.write(JSON.stringify(out, null, 2) + '\n');
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(dir, { recursive: true, force: true }));
