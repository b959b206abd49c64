// Storage benchmarks: prints one JSON document of figures. Run: node dist/bench/storage.js
// (a benchmark, not a test: nothing here is asserted)
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { newCacher, type CacheEntry, type Cacher } from '../src/storage/cacher.js';
import type { Backend, KeyValue, StorageEvent } from '../src/storage/interface.js';
import { MemoryBackend } from '../src/storage/memory.js';
import { SqliteBackend } from '../src/storage/sqlite.js';
import { PAGE_SIZE } from '../src/storage/sqlite-ops.js';
import { WatchHub } from '../src/storage/watch-hub.js';

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
  // (the backend's page size: set before the file has a table)
  db.pragma(`page_size = ${PAGE_SIZE}`);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`CREATE TABLE kv (rev INTEGER PRIMARY KEY, key TEXT NOT NULL, create_rev INTEGER NOT NULL,
             prev_rev INTEGER NOT NULL, deleted INTEGER NOT NULL, value BLOB);`);
  // (the backend's log; its key index, keyrev, is filled in bulk every few thousand revisions)
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

const quantile = (xs: number[], q: number) => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/**
 * `creators` concurrent loops, each awaiting one create after another. Besides the rate: the main
 * thread's busy time per write (event-loop utilization: what a commit costs the thread that serves
 * requests), each create's latency, and the event loop's delays (how long a timer waited: the
 * stalls every in-flight request sees).
 */
async function concurrentCreates(b: Backend, creators: number, total: number, valueSize: number) {
  const per = Math.ceil(total / creators);
  const values = Array.from({ length: creators }, (_, i) => configMap('bench', `c${i}`, valueSize));
  const latencies: number[] = [];
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const elu0 = performance.eventLoopUtilization();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: creators }, async (_, c) => {
      for (let i = 0; i < per; i++) {
        const t = performance.now();
        await b.create(`${PREFIX}bench/c${c}-${i}`, values[c]);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const ms = performance.now() - t0;
  const elu = performance.eventLoopUtilization(elu0);
  const cpu = process.cpuUsage(cpu0);
  delay.disable();
  const writes = per * creators;
  return {
    creators,
    writes,
    writesPerSec: Math.round((writes * 1000) / ms),
    mainThreadBusyUsPerWrite: round((elu.active * 1000) / writes, 2),
    processCpuUsPerWrite: round((cpu.user + cpu.system) / writes, 2),
    latencyMs: { p50: round(quantile(latencies, 0.5), 2), p99: round(quantile(latencies, 0.99), 2), max: round(latencies.reduce((a, x) => (x > a ? x : a), 0), 2) },
    eventLoopDelayMs: { p99: round(delay.percentile(99) / 1e6, 2), max: round(delay.max / 1e6, 2) },
  };
}

/** a sqlite backend, once SQLite runs in its worker (when it has one) */
async function openSqlite(path: string, opts: Record<string, unknown> = {}): Promise<SqliteBackend> {
  const b = new (SqliteBackend as unknown as new (p: string, o: Record<string, unknown>) => SqliteBackend)(path, opts);
  await b.open();
  const ready = (b as unknown as { workerReady?: () => Promise<boolean> }).workerReady;
  if (ready) await ready.call(b);
  return b;
}

/** creates through each sqlite configuration, alternating, best of `rounds` by rate */
async function sqliteCreates(rounds: number) {
  const configs: [string, Record<string, unknown>][] = [
    ['worker', {}],
    ['workerOneInFlight', { maxInFlight: 1 }],
    ['mainThread', { worker: false }],
  ];
  const out: Record<string, unknown> = {};
  const all: Record<string, Awaited<ReturnType<typeof concurrentCreates>>[]> = {};
  for (let r = 0; r < rounds; r++) {
    for (const [name, opts] of configs) {
      const b = await openSqlite(join(dir, `creates-${name}-${r}.db`), opts);
      const res = await concurrentCreates(b, 64, 20_000, 1024);
      const st = b.stats() as { commits: number; writes: number; largestBatch: number; maxInFlight?: number };
      await b.close();
      (all[name] ??= []).push({ ...res, meanBatch: round(st.writes / st.commits, 1), largestBatch: st.largestBatch } as never);
    }
  }
  for (const [name, runs] of Object.entries(all)) {
    const best = runs.reduce((a, x) => (x.writesPerSec > a.writesPerSec ? x : a));
    out[name] = {
      ...best,
      roundsWritesPerSec: runs.map((x) => x.writesPerSec),
      roundsMainThreadBusyUsPerWrite: runs.map((x) => x.mainThreadBusyUsPerWrite),
      roundsP99Ms: runs.map((x) => x.latencyMs.p99),
      roundsEventLoopDelayMaxMs: runs.map((x) => x.eventLoopDelayMs.max),
    };
  }
  return out;
}

/** open of a store with 10,000 keys: until open() resolves, and until SQLite runs in the worker */
async function sqliteOpen() {
  const path = join(dir, 'open.db');
  const b0 = await openSqlite(path);
  const writes: Promise<KeyValue>[] = [];
  for (let i = 0; i < 10_000; i++) writes.push(b0.create(`${PREFIX}ns${i % 50}/cm${i}`, configMap('ns', `cm${i}`, 1024)));
  await Promise.all(writes);
  await b0.close();
  const runs: { openMs: number; workerReadyMs: number }[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    const b = new SqliteBackend(path);
    await b.open();
    const openMs = performance.now() - t0;
    const ready = (b as unknown as { workerReady?: () => Promise<boolean> }).workerReady;
    if (ready) await ready.call(b);
    runs.push({ openMs: round(openMs, 1), workerReadyMs: round(performance.now() - t0, 1) });
    await b.close();
  }
  const med = (xs: number[]) => quantile(xs, 0.5);
  return { keys: 10_000, openMedianMs: med(runs.map((x) => x.openMs)), workerReadyMedianMs: med(runs.map((x) => x.workerReadyMs)), runs };
}

/** one commit's delivery through the storage watch hub, one watcher per resource prefix (as the API server's caches) */
async function hubDeliver(prefixCount: number, batch: number) {
  const prefixes = Array.from({ length: prefixCount }, (_, i) => (i === 0 ? `${PREFIX}` : `/registry/resource${i}/`));
  const hub = new (WatchHub as unknown as new (s: unknown, o?: unknown) => WatchHub)({ history: () => [], committed: () => 0, compacted: () => 0 });
  let seen = 0;
  let progress = 0;
  for (const p of prefixes) hub.watch(p, { afterRevision: 0, onEvents: (e) => void (seen += e.length), onError: () => {}, onProgress: () => void progress++ });
  await new Promise((r) => setTimeout(r, 5));
  const value = new Uint8Array(1024);
  // keys spread over the prefixes the way writes are: mostly one resource, some others
  const keys = Array.from({ length: 4096 }, (_, i) => (i % 4 === 0 ? `${prefixes[i % prefixCount]}ns${i % 7}/o${i}` : `${PREFIX}ns${i % 7}/o${i}`));
  let rev = 0;
  let best = Infinity;
  for (let run = 0; run < 6; run++) {
    let n = 0;
    const t0 = performance.now();
    let t = t0;
    while (t - t0 < 150) {
      for (let k = 0; k < 100; k++) {
        const evs: StorageEvent[] = new Array(batch);
        for (let j = 0; j < batch; j++) {
          rev++;
          evs[j] = { type: 'put', kv: { key: keys[rev & 4095], value, createRevision: rev, modRevision: rev }, revision: rev };
        }
        hub.deliver(evs, rev);
        n += batch;
      }
      t = performance.now();
    }
    if (run > 0) best = Math.min(best, ((t - t0) * 1e6) / n);
  }
  return { prefixes: prefixCount, eventsPerCommit: batch, nsPerEvent: round(best, 0), delivered: seen > 0 && progress > 0 };
}

/**
 * A writer beside a cache with many watchers (the API server's watch streams): the time from a
 * create to its promise resolving, and to the last watcher's callback. Each watcher spends ~`workUs`
 * (a stream write costs some tens of microseconds).
 */
async function writerBesideWatchers(watchers: number, workUs: number, writes: number) {
  const b = new MemoryBackend();
  await b.open();
  const c = cacherOn(b);
  await c.start();
  let lastCall = 0;
  const spin = () => {
    const end = performance.now() + workUs / 1000;
    while (performance.now() < end);
    lastCall = performance.now();
  };
  const handles = Array.from({ length: watchers }, () => c.watch({ prefix: PREFIX, afterRevision: c.revision(), onEvent: spin }));
  const resolveMs: number[] = [];
  const fanOutMs: number[] = [];
  const value = configMap('ns', 'w', 1024);
  for (let i = 0; i < writes; i++) {
    const t0 = performance.now();
    await b.create(`${PREFIX}ns/w${i}`, value);
    resolveMs.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 1)); // the fan-out has run
    fanOutMs.push(lastCall - t0);
  }
  for (const h of handles) h.stop();
  c.stop();
  await b.close();
  return {
    watchers,
    workUsPerWatcher: workUs,
    writerResolvedMedianMs: round(quantile(resolveMs, 0.5), 3),
    lastWatcherMedianMs: round(quantile(fanOutMs, 0.5), 2),
  };
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

/** lists of 10,000 keys through the backend: wall time, and the main thread's share of it */
async function sqliteBackendList(opts: Record<string, unknown>) {
  const b = await openSqlite(join(dir, `list-${Object.keys(opts).join('-') || 'default'}.db`), opts);
  const writes: Promise<KeyValue>[] = [];
  for (let i = 0; i < 10_000; i++) writes.push(b.create(`${PREFIX}ns${i % 50}/cm${i}`, configMap('ns', `cm${i}`, 1024)));
  await Promise.all(writes);
  let n = 0;
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  while (performance.now() - t0 < 500) {
    await b.list(PREFIX);
    n++;
  }
  const ms = (performance.now() - t0) / n;
  const busy = performance.eventLoopUtilization(elu0).active / n;
  const t1 = performance.now();
  const c = cacherOn(b);
  await c.start();
  const startMs = performance.now() - t1;
  c.stop();
  await b.close();
  return { entries: 10_000, listAllMs: round(ms, 2), listMainThreadBusyMs: round(busy, 2), cacherStartMs: round(startMs, 1) };
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
    // the fan-out included (a cache that fans out in a setImmediate does it here)
    await new Promise((r) => setImmediate(r));
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
    await new Promise((r) => setImmediate(r)); // a cache that fans out after the writers resolve: let it finish
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
  const sqCreates = await sqliteCreates(3);
  out.rawSqliteDurableInserts = [rawInserts(1, 500), rawInserts(64, 64 * 300), rawInserts(256, 256 * 100)];

  const mem = new MemoryBackend();
  await mem.open();
  const memCreates = await concurrentCreates(mem, 64, 200_000, 1024);
  await mem.close();
  out.backendCreates64Concurrent = {
    note: 'sqlite: best of 3 alternating rounds by rate; mainThreadBusyUsPerWrite is the event loop\'s busy time per write',
    sqlite: sqCreates,
    memory: memCreates,
  };
  out.sqliteOpen10k = await sqliteOpen();

  out.cacherList10k = await cacherLists();
  out.sqliteBackendList10k = { worker: await sqliteBackendList({}), mainThread: await sqliteBackendList({ worker: false }) };
  out.watchHubDeliver = {
    note: 'ns per event of WatchHub.deliver, one watcher per resource prefix (best of 5 runs)',
    runs: [await hubDeliver(34, 1), await hubDeliver(34, 16), await hubDeliver(34, 64)],
  };
  out.writerBesideWatchers = {
    note: 'memory backend + one cache: time to the writer\'s resolve and to the last watcher callback (medians of 20 writes)',
    runs: [await writerBesideWatchers(1000, 20, 20)],
  };
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
