// SqliteBackend: the etcd model over a key-revision log in one SQLite file (better-sqlite3).
//
// Table `kv`: one row per write.
//   rev        INTEGER PRIMARY KEY  the write's revision (the global, strictly increasing counter)
//   key        TEXT                 compared with BINARY collation: UTF-8 byte order
//   create_rev INTEGER              the revision that created the key (for a tombstone: of the deleted object)
//   prev_rev   INTEGER              the key's previous row for an update or delete, 0 for a create
//   deleted    INTEGER              1 for a tombstone (a delete); its value is the deleted value
//   value      BLOB
// Table `keyrev` (key, rev), WITHOUT ROWID: the key index of the log, kept behind it. A commit
// adds its rows' pairs only once the log's unindexed tail reaches `indexEvery` revisions (1024),
// all at once in key order (meta `indexed`: the revision up to which every row has its pair);
// reads by key take keyrev and a scan of that tail. (An index on kv itself rewrote one leaf page
// per row in every commit: most of what a commit wrote.) Files with the old index kv_key_rev are
// migrated at open. Table `meta`: compact_rev (reads and watches below it fail), compact_done (how
// far rows have physically been removed) and indexed.
//
// The state at revision R: for each key, its newest row with rev <= R, unless that row is a tombstone.
//
// Threads. A worker thread (sqlite-worker.ts) owns the SQLite connection and runs every statement:
// commits with their fsyncs and WAL checkpoints, reads, compaction. It serves the main thread's
// messages strictly in order. The main thread keeps what must be synchronous: the in-memory index
// key -> {createRevision, modRevision} of the live keys, which makes the conditional checks and the
// revision assignment synchronous and ordered (a rejected write changes nothing), the batching,
// and the delivery of events.
//
// Startup. open() starts the worker and, meanwhile, opens the file on the main thread and loads the
// index (a worker takes some 30-50 ms to start); until the worker reports ready, requests run on
// that main-thread connection, synchronously. Then the main thread closes its connection and the
// worker opens the file (the exclusive lock passes over; the worker checks that nothing was written
// in between). Without a worker (option `worker: false`, or a worker that fails to start) the
// backend keeps running on the main thread.
//
// Writes. Accepted writes are queued; a setImmediate posts them to the worker as one batch (every
// write issued during the current turn of the event loop). Batches are pipelined: while one commits
// the next may already wait in the worker's queue (at most `maxInFlight`, default 2), and writes
// arriving meanwhile form the batch after, posted as soon as an earlier one is durable. The worker
// commits each batch in one transaction (WAL, synchronous=FULL: durable when it returns) and
// replies; on the reply, the main thread delivers the batch's events to the watch hub, synchronously
// (the caches apply them), and only then resolves the writers' promises.
// Values travel packed into one transferred buffer; the main thread keeps the caller's own
// Uint8Array for the events (identity), and keeps the values of writes not yet durable, so
// conflicts and prevKv can be answered without a read; other previous values (prevKv of an update,
// the value of a delete) are read by the worker inside the commit and sent back.
// If a commit fails, its batch, every batch behind it and every queued write are rejected (they were
// checked against an index that included the failed writes), the index and the revision counter are
// rolled back, and the worker, which refuses commits after a failure, is told to resume.
//
// Reads (get, list, count, watch replay) go through the worker too, at the main thread's committed
// revision: SQLite's work stays off the event loop (a list of 10,000 keys takes tens of ms), and the
// results come back as one packed buffer (the values are views into it: no per-value copy on the
// main thread). A second, read-only connection on the main thread would need the file opened
// without the exclusive lock that keeps other processes out. Watch replays start from the hub's
// in-memory recent events when they cover the start revision (the common case: a cache lists, then
// watches from the list's revision).
//
// Compaction removes, in chunks of revisions, the rows superseded by a row at or below the
// compaction revision (each row names the row it supersedes in prev_rev) and the tombstones, one
// short transaction per chunk; commits queued meanwhile run between chunks.

import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  CompactedError,
  ConflictError,
  FutureRevisionError,
  KeyExistsError,
  KeyNotFoundError,
  type Backend,
  type KeyValue,
  type ListOptions,
  type ListResult,
  type StorageEvent,
  type Watch,
  type WatchOptions,
} from './interface.js';
import { maxKey, prefixEnd } from './keys.js';
import {
  INDEX_EVERY,
  OP_CREATE,
  OP_DELETE,
  OP_FIELDS,
  OP_UPDATE,
  Store,
  encodeCommit,
  valueOf,
  type CommitResult,
  type FromWorker,
  type GetResult,
  type HistoryRows,
  type ListRows,
  type Request,
  type ToWorker,
  type Values,
} from './sqlite-ops.js';
import { WatchHub } from './watch-hub.js';

const EMPTY = new Uint8Array(0);

interface IndexEntry {
  readonly c: number; // createRevision
  readonly m: number; // modRevision
}

/**
 * A key's revisions in the index: its modRevision alone while it equals its createRevision (a key
 * never updated since its create: no object for it, one object less per create for the young
 * generation's collections to copy and the heap to keep), else both.
 */
type IndexValue = IndexEntry | number;

function indexValue(c: number, m: number): IndexValue {
  return c === m ? m : { c, m };
}

function createRevOf(v: IndexValue): number {
  return typeof v === 'number' ? v : v.c;
}

function modRevOf(v: IndexValue): number {
  return typeof v === 'number' ? v : v.m;
}

interface Op {
  kind: number;
  rev: number;
  key: string;
  createRev: number;
  prevRev: number;
  value: Uint8Array | null;
  resolve: (kv: KeyValue) => void;
  reject: (err: Error) => void;
}

interface Batch {
  ops: Op[];
  /** the previous values known on the main thread when the batch was posted, by op */
  prev: (Uint8Array | undefined)[];
  cancelled: boolean;
}

type Done = (err: Error | undefined, value: unknown) => void;

export interface SqliteBackendOptions {
  /** revisions removed per compaction transaction (default 1000) */
  compactChunk?: number;
  /** run SQLite in a worker thread (default true); false: every statement on the main thread */
  worker?: boolean;
  /** batches posted to the worker and not yet durable, at most (default 2) */
  maxInFlight?: number;
  /** events kept in memory for watch replays (default 1024) */
  recentEvents?: number;
  /** revisions the log may hold beyond the key index before a commit indexes them (default INDEX_EVERY; tests use a few) */
  indexEvery?: number;
}

export class SqliteBackend implements Backend {
  readonly name = 'sqlite';

  private opened = false;
  private closing = false;
  private closed: Promise<void> | undefined;
  /** the backend cannot go on (the worker died, or could not take the file over) */
  private broken: Error | undefined;
  /** the main thread's connection: before the hand-over to the worker, or without a worker */
  private local: Store | undefined;
  private worker: Worker | undefined;
  /** requests go to the worker */
  private handedOver = false;
  private nextId = 1;
  private readonly replies = new Map<number, Done>();
  private readonly useWorker: boolean;
  private readonly maxInFlight: number;
  private readonly indexEvery: number;

  private readonly index = new Map<string, IndexValue>();
  /** the last revision handed out */
  private assigned = 0;
  /** the newest durable revision whose events have been delivered */
  private committedRev = 0;
  private compactRev = 0;
  private compactDone = 0;
  private compactJob: Promise<void> | undefined;
  private readonly compactChunk: number;
  /** accepted writes not yet posted */
  private pending: Op[] = [];
  /** posted batches not yet durable, oldest first */
  private inflight: Batch[] = [];
  /** values of the accepted creates and updates not yet durable, by revision */
  private readonly recentValues = new Map<number, Uint8Array>();
  private flushHandle: NodeJS.Immediate | undefined;
  private readonly flushNow = () => this.flush();
  private drainWaiters: (() => void)[] = [];
  private readonly hub: WatchHub;
  private readonly counters = { commits: 0, writes: 0, largestBatch: 0, maxInFlight: 0 };

  constructor(
    readonly path: string,
    opts: SqliteBackendOptions = {},
  ) {
    this.compactChunk = Math.max(1, opts.compactChunk ?? 1000);
    this.useWorker = opts.worker ?? true;
    this.maxInFlight = Math.max(1, opts.maxInFlight ?? 2);
    this.indexEvery = Math.max(1, opts.indexEvery ?? INDEX_EVERY);
    this.hub = new WatchHub(
      {
        history: (prefix, after, upto, max) => this.history(prefix, after, upto, max),
        committed: () => this.committedRev,
        compacted: () => this.compactRev,
      },
      { recent: Math.max(0, opts.recentEvents ?? 1024) },
    );
  }

  /** the database file and its write-ahead log */
  sizeBytes(): number | undefined {
    if (this.path === ':memory:') return undefined;
    let size = 0;
    for (const f of [this.path, `${this.path}-wal`]) {
      try {
        size += statSync(f).size;
      } catch {
        /* no log yet */
      }
    }
    return size;
  }

  async open(): Promise<void> {
    if (this.opened) return;
    if (this.closed) await this.closed;
    if (this.path !== ':memory:') mkdirSync(dirname(this.path), { recursive: true });
    // the worker starts while this thread loads the index
    if (this.useWorker && this.path !== ':memory:') this.startWorker();
    let store: Store | undefined;
    try {
      store = new Store(this.path, false, this.indexEvery);
      const st = store.state();
      this.compactRev = st.compactRev;
      this.compactDone = st.compactDone;
      this.committedRev = this.assigned = Math.max(st.maxRev, this.compactRev);
      this.index.clear();
      for (const [key, c, m] of store.liveKeys()) this.index.set(key, indexValue(c, m));
    } catch (err) {
      store?.close();
      this.stopWorker();
      throw err;
    }
    this.local = store;
    this.handedOver = false;
    this.broken = undefined;
    this.closing = false;
    this.opened = true;
    this.hub.resetRecent(this.committedRev);
    if (this.compactDone < this.compactRev) void this.runCompaction().catch(() => {});
  }

  close(): Promise<void> {
    if (!this.opened) return this.closed ?? Promise.resolve();
    if (!this.closing) {
      this.closing = true;
      this.closed = this.shutdown();
    }
    return this.closed!;
  }

  async currentRevision(): Promise<number> {
    return this.committedRev;
  }

  revisionNow(): number {
    return this.committedRev;
  }

  async compactedRevision(): Promise<number> {
    return this.compactRev;
  }

  async get(key: string): Promise<KeyValue | undefined> {
    this.readable();
    const r = (await this.call({ t: 'get', key, rev: this.committedRev })) as GetResult;
    if (!r.found) return undefined;
    return { key, value: valueOf(r.vals, 0) ?? EMPTY, createRevision: r.c, modRevision: r.m };
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.readable();
    const rev = opts.revision && opts.revision > 0 ? opts.revision : this.committedRev;
    if (rev > this.committedRev) throw new FutureRevisionError(rev, this.committedRev);
    if (rev < this.compactRev) throw new CompactedError(rev, this.compactRev);
    const low = opts.startKey ? maxKey(opts.startKey, prefix) : prefix;
    const high = prefixEnd(prefix) ?? null;
    const limit = opts.limit && opts.limit > 0 ? opts.limit : -1;
    const r = (await this.call({ t: 'list', low, high, rev, limit })) as ListRows;
    const n = r.keys.length;
    const kvs: KeyValue[] = new Array(n);
    for (let i = 0; i < n; i++) {
      kvs[i] = { key: r.keys[i], value: valueOf(r.vals, i) ?? EMPTY, createRevision: r.nums[2 * i], modRevision: r.nums[2 * i + 1] };
    }
    return { kvs, revision: rev, more: r.more, remaining: r.remaining };
  }

  async count(prefix: string): Promise<number> {
    this.readable();
    return (await this.call({ t: 'count', low: prefix, high: prefixEnd(prefix) ?? null, rev: this.committedRev })) as number;
  }

  create(key: string, value: Uint8Array): Promise<KeyValue> {
    if (!this.writable()) return Promise.reject(this.broken ?? new Error('storage closed'));
    if (this.index.has(key)) return Promise.reject(new KeyExistsError(key, this.assigned));
    const rev = ++this.assigned;
    this.index.set(key, rev);
    return this.enqueue(OP_CREATE, rev, key, rev, 0, value);
  }

  update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KeyValue> {
    if (!this.writable()) return Promise.reject(this.broken ?? new Error('storage closed'));
    const cur = this.index.get(key);
    if (cur === undefined) return Promise.reject(new KeyNotFoundError(key, this.assigned));
    const c = createRevOf(cur);
    const m = modRevOf(cur);
    if (m !== expectedModRevision) return this.conflict(key, c, m);
    const rev = ++this.assigned;
    this.index.set(key, { c, m: rev });
    return this.enqueue(OP_UPDATE, rev, key, c, m, value);
  }

  delete(key: string, expectedModRevision?: number): Promise<KeyValue> {
    if (!this.writable()) return Promise.reject(this.broken ?? new Error('storage closed'));
    const cur = this.index.get(key);
    if (cur === undefined) return Promise.reject(new KeyNotFoundError(key, this.assigned));
    const c = createRevOf(cur);
    const m = modRevOf(cur);
    if (expectedModRevision !== undefined && m !== expectedModRevision) return this.conflict(key, c, m);
    const rev = ++this.assigned;
    this.index.delete(key);
    return this.enqueue(OP_DELETE, rev, key, c, m, null);
  }

  watch(prefix: string, opts: WatchOptions): Watch {
    if (!this.writable()) {
      const err = this.broken ?? new Error('storage closed');
      queueMicrotask(() => opts.onError(err));
      return { cancel() {} };
    }
    return this.hub.watch(prefix, opts);
  }

  async compact(revision: number): Promise<void> {
    this.readable();
    if (revision > this.committedRev) throw new FutureRevisionError(revision, this.committedRev);
    if (revision > this.compactRev) {
      this.compactRev = revision;
      await this.call({ t: 'meta', name: 'compact_rev', value: revision });
    }
    if (this.compactDone < this.compactRev) await this.runCompaction();
  }

  async healthy(): Promise<boolean> {
    if (!this.writable()) return false;
    try {
      return (await this.call({ t: 'ping' })) === true;
    } catch {
      return false;
    }
  }

  /** write transactions committed, writes in them, the largest batch, the most batches in flight */
  stats(): { commits: number; writes: number; largestBatch: number; maxInFlight: number; worker: boolean } {
    return { ...this.counters, worker: this.handedOver };
  }

  /** resolves once SQLite runs in the worker (false: it never will, e.g. `worker: false`) */
  async workerReady(timeoutMs = 5000): Promise<boolean> {
    const end = Date.now() + timeoutMs;
    while (this.opened && !this.handedOver && this.worker && Date.now() < end) await new Promise((r) => setTimeout(r, 2));
    return this.handedOver;
  }

  /** run a pragma on the connection, in order with the writes (for tests: e.g. query_only) */
  pragma(pragma: string): Promise<unknown> {
    return this.call({ t: 'pragma', pragma });
  }

  // ---- the connection: on this thread until the worker takes over ----------------------------------

  private startWorker(): void {
    let w: Worker;
    try {
      w = new Worker(new URL('./sqlite-worker.js', import.meta.url));
    } catch {
      return; // no worker: stay on the main thread
    }
    w.unref();
    this.worker = w;
    w.on('message', (m: FromWorker) => this.onMessage(w, m));
    w.on('error', (err) => this.workerGone(w, err));
    w.on('exit', (code) => this.workerGone(w, new Error(`storage worker exited (code ${code})`)));
  }

  private stopWorker(): Promise<unknown> {
    const w = this.worker;
    this.worker = undefined;
    return w ? w.terminate().catch(() => {}) : Promise.resolve();
  }

  private onMessage(w: Worker, m: FromWorker): void {
    if (w !== this.worker) return;
    if (m.t === 'ready') {
      this.handOver();
      return;
    }
    const done = this.replies.get(m.id);
    if (!done) return;
    this.replies.delete(m.id);
    if (this.replies.size === 0) w.unref();
    if (m.ok) done(undefined, m.value);
    else {
      const err = new Error(m.message) as Error & { code?: string };
      if (m.code) err.code = m.code;
      done(err, undefined);
    }
  }

  /** the worker is ready: pass it the file (between two tasks: nothing runs on the local connection) */
  private handOver(): void {
    if (!this.local || this.closing || this.handedOver || !this.worker) return;
    try {
      this.local.close();
    } catch (err) {
      // the file stays with this thread
      void err;
      return;
    }
    this.local = undefined;
    this.handedOver = true;
    this.post({ t: 'open', id: 0, path: this.path, expectRev: this.committedRev, indexEvery: this.indexEvery }, (err) => {
      if (err) this.breakDown(new Error(`storage: the worker could not open ${this.path}: ${err.message}`));
    });
    if (this.pending.length > 0 && !this.flushHandle) this.flushHandle = setImmediate(this.flushNow);
  }

  private workerGone(w: Worker, err: Error): void {
    if (w !== this.worker) return;
    this.worker = undefined;
    // before the hand-over the main thread simply keeps the file
    if (this.handedOver) this.breakDown(err);
  }

  /** fail everything in flight and every later request */
  private breakDown(err: Error): void {
    if (this.broken) return;
    this.broken = err;
    const waiting = [...this.replies.values()];
    this.replies.clear();
    for (const done of waiting) done(err, undefined);
    this.rejectQueued(err);
    this.hub.failAll(err);
    void this.stopWorker();
    this.drained();
  }

  /** run a request where the store is now: here, synchronously (done is called before submit returns), or in the worker */
  private submit(req: Request, done: Done): void {
    if (this.broken) return done(this.broken, undefined);
    if (!this.handedOver) {
      let value: unknown;
      try {
        if (!this.local) throw new Error('storage closed');
        value = this.local.handle(req);
      } catch (err) {
        return done(err instanceof Error ? err : new Error(String(err)), undefined);
      }
      return done(undefined, value);
    }
    if (req.t === 'commit') {
      const buf = encodeCommit(req.keys, req.nums, req.vals as (Uint8Array | null)[]);
      this.post({ t: 'commit1', id: 0, buf }, done, [buf]);
      return;
    }
    this.post(req as ToWorker, done);
  }

  private post(msg: ToWorker, done: Done, transfer: ArrayBuffer[] = []): void {
    const w = this.worker;
    if (!w) return done(this.broken ?? new Error('storage closed'), undefined);
    msg.id = this.nextId++;
    this.replies.set(msg.id, done);
    if (this.replies.size === 1) w.ref();
    w.postMessage(msg, transfer);
  }

  private call(req: Request): Promise<unknown> {
    return new Promise((resolve, reject) => this.submit(req, (err, value) => (err ? reject(err) : resolve(value))));
  }

  private readable(): void {
    if (!this.opened) throw new Error('storage closed');
    if (this.broken) throw this.broken;
  }

  private writable(): boolean {
    return this.opened && !this.closing && !this.broken;
  }

  // ---- writes ------------------------------------------------------------------------------------

  /** a ConflictError with the key's current state (its value: kept here if not yet durable, else read) */
  private conflict(key: string, c: number, m: number): Promise<never> {
    const known = this.recentValues.get(m);
    const fail = (value: Uint8Array): never => {
      throw new ConflictError(key, { key, value, createRevision: c, modRevision: m });
    };
    if (known) return Promise.resolve(known).then(fail);
    return this.call({ t: 'value', rev: m }).then(
      (vals) => fail(valueOf(vals as Values, 0) ?? EMPTY),
      () => fail(EMPTY),
    );
  }

  private enqueue(kind: number, rev: number, key: string, createRev: number, prevRev: number, value: Uint8Array | null): Promise<KeyValue> {
    if (value) this.recentValues.set(rev, value);
    if (!this.flushHandle) this.flushHandle = setImmediate(this.flushNow);
    return new Promise<KeyValue>((resolve, reject) => {
      this.pending.push({ kind, rev, key, createRev, prevRev, value, resolve, reject });
    });
  }

  private flush(): void {
    this.flushHandle = undefined;
    if (this.pending.length === 0) return;
    // the pipeline is full: the batch goes out when an earlier one is durable
    if (this.handedOver && this.inflight.length >= this.maxInFlight) return;
    this.postBatch();
  }

  /** send the queued writes as one batch */
  private postBatch(): void {
    const ops = this.pending;
    this.pending = [];
    const n = ops.length;
    const keys: string[] = new Array(n);
    const nums = new Float64Array(n * OP_FIELDS);
    const values: (Uint8Array | null)[] = new Array(n);
    const prev: (Uint8Array | undefined)[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const op = ops[i];
      const o = i * OP_FIELDS;
      keys[i] = op.key;
      nums[o] = op.kind;
      nums[o + 1] = op.rev;
      nums[o + 2] = op.createRev;
      nums[o + 3] = op.prevRev;
      if (op.kind !== OP_CREATE) {
        const p = this.recentValues.get(op.prevRev);
        prev[i] = p;
        nums[o + 4] = p ? 0 : 1;
      }
      values[i] = op.value;
    }
    const batch: Batch = { ops, prev, cancelled: false };
    this.inflight.push(batch);
    if (this.inflight.length > this.counters.maxInFlight) this.counters.maxInFlight = this.inflight.length;
    // (to the worker the batch goes as one buffer: see encodeCommit)
    this.submit({ t: 'commit', keys, nums, vals: values }, (err, res) => this.committed(batch, err, res as CommitResult | undefined));
  }

  /** a batch is durable (or failed); replies come in order, so it is the oldest in flight */
  private committed(batch: Batch, err: Error | undefined, res: CommitResult | undefined): void {
    if (batch.cancelled) return;
    this.inflight.shift();
    if (err) {
      this.failFrom(batch, err);
      this.drained();
      return;
    }
    // keep the worker busy: the next batch goes out before this one's watchers and writers run
    if (this.pending.length > 0 && this.handedOver && this.inflight.length < this.maxInFlight) {
      if (this.flushHandle) {
        clearImmediate(this.flushHandle);
        this.flushHandle = undefined;
      }
      this.postBatch();
    }
    const ops = batch.ops;
    const n = ops.length;
    const events: StorageEvent[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const op = ops[i];
      if (op.kind === OP_CREATE) {
        events[i] = { type: 'put', kv: { key: op.key, value: op.value!, createRevision: op.rev, modRevision: op.rev }, revision: op.rev };
        continue;
      }
      const prevValue = batch.prev[i] ?? (res?.prev && valueOf(res.prev, i)) ?? EMPTY;
      const prevKv: KeyValue = { key: op.key, value: prevValue, createRevision: op.createRev, modRevision: op.prevRev };
      if (op.kind === OP_UPDATE) {
        events[i] = { type: 'put', kv: { key: op.key, value: op.value!, createRevision: op.createRev, modRevision: op.rev }, prevKv, revision: op.rev };
      } else {
        events[i] = { type: 'delete', kv: { key: op.key, value: prevValue, createRevision: op.createRev, modRevision: op.rev }, prevKv, revision: op.rev };
      }
    }
    for (let i = 0; i < n; i++) if (ops[i].value) this.recentValues.delete(ops[i].rev);
    this.committedRev = ops[n - 1].rev;
    this.counters.commits++;
    this.counters.writes += n;
    if (n > this.counters.largestBatch) this.counters.largestBatch = n;
    this.hub.deliver(events, this.committedRev);
    for (let i = 0; i < n; i++) ops[i].resolve(events[i].kv);
    this.drained();
  }

  /** a commit failed: reject it and everything accepted after it, and undo their index changes */
  private failFrom(batch: Batch, err: Error): void {
    this.rejectQueued(err, [batch]);
    // the worker refuses commits after a failure (those already sent were rejected above)
    this.submit({ t: 'resume' }, () => {});
  }

  /** reject the batches in flight and the queued writes (with `first` before them), rolling back the index */
  private rejectQueued(err: Error, first: Batch[] = []): void {
    const batches = [...first, ...this.inflight];
    this.inflight = [];
    for (const b of batches) b.cancelled = true;
    const ops: Op[] = [];
    for (const b of batches) for (const op of b.ops) ops.push(op);
    for (const op of this.pending) ops.push(op);
    this.pending = [];
    if (this.flushHandle) {
      clearImmediate(this.flushHandle);
      this.flushHandle = undefined;
    }
    if (ops.length === 0) return;
    // nothing of them is stored: undo their index changes, newest first, and their revisions
    for (let i = ops.length - 1; i >= 0; i--) {
      const op = ops[i];
      if (op.kind === OP_CREATE) this.index.delete(op.key);
      else this.index.set(op.key, indexValue(op.createRev, op.prevRev));
      this.recentValues.delete(op.rev);
    }
    this.assigned = this.committedRev;
    for (const op of ops) op.reject(err);
  }

  private drained(): void {
    if (this.inflight.length > 0 || this.pending.length > 0 || this.drainWaiters.length === 0) return;
    const ws = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of ws) w();
  }

  private async shutdown(): Promise<void> {
    // the queued writes go out now, whatever the pipeline holds; then wait until all are durable
    if (this.flushHandle) {
      clearImmediate(this.flushHandle);
      this.flushHandle = undefined;
    }
    if (this.pending.length > 0 && !this.broken) this.postBatch();
    if (this.inflight.length > 0 || this.pending.length > 0) await new Promise<void>((r) => this.drainWaiters.push(r));
    if (this.compactJob) await this.compactJob.catch(() => {});
    this.hub.failAll(new Error('storage closed'));
    if (this.handedOver && this.worker) {
      await new Promise<void>((resolve) => this.post({ t: 'close', id: 0 }, () => resolve()));
    }
    this.local?.close();
    this.local = undefined;
    await this.stopWorker();
    this.handedOver = false;
    this.opened = false;
    this.replies.clear();
    this.recentValues.clear();
  }

  // ---- reads for the watch hub and compaction ------------------------------------------------------

  private history(prefix: string, after: number, upto: number, max: number): StorageEvent[] | Promise<StorageEvent[]> {
    const req: Request = { t: 'history', low: prefix, high: prefixEnd(prefix) ?? null, after, upto, max };
    if (!this.handedOver) {
      if (!this.local) throw this.broken ?? new Error('storage closed');
      return historyEvents(this.local.handle(req) as HistoryRows);
    }
    return this.call(req).then((r) => historyEvents(r as HistoryRows));
  }

  private runCompaction(): Promise<void> {
    if (this.compactJob) return this.compactJob;
    const job = (async () => {
      try {
        while (this.opened && !this.closing && !this.broken && this.compactDone < this.compactRev) {
          const lo = this.compactDone;
          const hi = Math.min(lo + this.compactChunk, this.compactRev);
          const sync = !this.handedOver;
          await this.call({ t: 'compact', lo, hi });
          this.compactDone = hi;
          // on this thread, let the event loop run between chunks (in the worker, commits queued meanwhile run between them)
          if (sync && this.compactDone < this.compactRev) await new Promise<void>((r) => setImmediate(r));
        }
      } finally {
        this.compactJob = undefined;
      }
    })();
    this.compactJob = job;
    return job;
  }
}

function historyEvents(r: HistoryRows): StorageEvent[] {
  const n = r.keys.length;
  const out: StorageEvent[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const key = r.keys[i];
    const rev = r.nums[4 * i];
    const createRev = r.nums[4 * i + 1];
    const prevRev = r.nums[4 * i + 2];
    const deleted = r.nums[4 * i + 3] !== 0;
    const value = valueOf(r.vals, i) ?? EMPTY;
    const kv: KeyValue = { key, value, createRevision: createRev, modRevision: rev };
    const prevValue = valueOf(r.prevVals, i);
    if (deleted) {
      out[i] = { type: 'delete', kv, prevKv: { key, value, createRevision: createRev, modRevision: prevRev }, revision: rev };
    } else if (prevValue) {
      out[i] = { type: 'put', kv, prevKv: { key, value: prevValue, createRevision: createRev, modRevision: prevRev }, revision: rev };
    } else {
      out[i] = { type: 'put', kv, revision: rev };
    }
  }
  return out;
}
