// SqliteBackend: the etcd model over a key-revision log in one SQLite file (better-sqlite3).
//
// Table `kv`: one row per write.
//   rev        INTEGER PRIMARY KEY  the write's revision (the global, strictly increasing counter)
//   key        TEXT                 compared with BINARY collation: UTF-8 byte order
//   create_rev INTEGER              the revision that created the key (for a tombstone: of the deleted object)
//   prev_rev   INTEGER              the key's previous row for an update or delete, 0 for a create
//   deleted    INTEGER              1 for a tombstone (a delete); its value is the deleted value
//   value      BLOB
// Index kv_key_rev (key, rev). Table `meta`: compact_rev (reads and watches below it fail) and
// compact_done (how far rows have physically been removed).
//
// The state at revision R: for each key, its newest row with rev <= R, unless that row is a tombstone.
//
// Writes. An in-memory index key -> {createRevision, modRevision} of the live keys (loaded at open)
// makes the conditional checks and revision assignment synchronous and ordered; a rejected write
// changes nothing. Accepted writes are queued and committed together by one setImmediate: every
// write issued during the current turn of the event loop goes into that transaction (and, since a
// commit blocks the loop while it fsyncs, the writes that arrive meanwhile form the next one). With
// WAL and synchronous=FULL the commit is durable when it returns; then the events are delivered to
// watchers, synchronously, and only then are the writers' promises resolved. If the commit fails,
// the index and the revision counter are rolled back and every write of the batch is rejected.
//
// Compaction removes, in chunks of revisions, the rows superseded by a row at or below the
// compaction revision (each row names the row it supersedes in prev_rev) and the tombstones, one
// short transaction per chunk, yielding to the event loop between chunks.

import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
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
import { compareKeysExact, maxKey, prefixEnd } from './keys.js';
import { WatchHub } from './watch-hub.js';

/** A BLOB compares greater than every TEXT value in SQLite: the upper bound of an open range. */
const TOP = Buffer.from([0xff]);

const OP_CREATE = 0;
const OP_UPDATE = 1;
const OP_DELETE = 2;

interface IndexEntry {
  readonly c: number; // createRevision
  readonly m: number; // modRevision
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

export interface SqliteBackendOptions {
  /** revisions removed per compaction transaction (default 1000) */
  compactChunk?: number;
}

export class SqliteBackend implements Backend {
  readonly name = 'sqlite';

  private db: Database.Database | undefined;
  private st!: Statements;
  private writeBatch!: (ops: Op[], values: Map<number, Uint8Array>, events: StorageEvent[]) => void;
  private readonly index = new Map<string, IndexEntry>();
  /** the last revision handed out */
  private assigned = 0;
  /** the newest revision in the table */
  private committedRev = 0;
  private compactRev = 0;
  private compactDone = 0;
  private compactJob: Promise<void> | undefined;
  private readonly compactChunk: number;
  private pending: Op[] = [];
  /** values of the queued creates and updates by revision (conflict reports, delete values) */
  private pendingValues = new Map<number, Uint8Array>();
  private flushHandle: NodeJS.Immediate | undefined;
  private closing = false;
  private readonly hub: WatchHub;
  private readonly counters = { commits: 0, writes: 0, largestBatch: 0 };

  constructor(
    readonly path: string,
    opts: SqliteBackendOptions = {},
  ) {
    this.compactChunk = Math.max(1, opts.compactChunk ?? 1000);
    this.hub = new WatchHub({
      history: (prefix, after, upto, max) => this.history(prefix, after, upto, max),
      committed: () => this.committedRev,
      compacted: () => this.compactRev,
    });
  }

  async open(): Promise<void> {
    if (this.db) return;
    if (this.path !== ':memory:') mkdirSync(dirname(this.path), { recursive: true });
    const db = new Database(this.path);
    try {
      // one process owns the file: the in-memory index is the truth for conditional writes, so a
      // second writer must not exist (exclusive locking: it gets SQLITE_BUSY), and no shared-memory
      // WAL index is needed
      db.pragma('locking_mode = EXCLUSIVE');
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.exec(`
        CREATE TABLE IF NOT EXISTS kv (
          rev INTEGER PRIMARY KEY,
          key TEXT NOT NULL,
          create_rev INTEGER NOT NULL,
          prev_rev INTEGER NOT NULL,
          deleted INTEGER NOT NULL,
          value BLOB
        );
        CREATE INDEX IF NOT EXISTS kv_key_rev ON kv (key, rev);
        CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
      `);
      this.db = db;
      this.st = prepareStatements(db);
      this.writeBatch = db.transaction((ops: Op[], values: Map<number, Uint8Array>, events: StorageEvent[]) =>
        this.writeOps(ops, values, events),
      );
      this.compactRev = this.st.getMeta.get('compact_rev') ?? 0;
      this.compactDone = this.st.getMeta.get('compact_done') ?? 0;
      const maxRev = this.st.maxRev.get() ?? 0;
      this.committedRev = this.assigned = Math.max(maxRev, this.compactRev);
      this.index.clear();
      for (const [key, c, m] of this.st.liveKeys.iterate() as IterableIterator<[string, number, number]>) {
        this.index.set(key, { c, m });
      }
    } catch (err) {
      this.db = undefined;
      db.close();
      throw err;
    }
    this.closing = false;
    if (this.compactDone < this.compactRev) void this.runCompaction().catch(() => {});
  }

  async close(): Promise<void> {
    if (!this.db) return;
    if (this.flushHandle) {
      clearImmediate(this.flushHandle);
      this.flush();
    }
    this.closing = true;
    if (this.compactJob) await this.compactJob.catch(() => {});
    this.hub.failAll(new Error('storage closed'));
    this.db.close();
    this.db = undefined;
  }

  async currentRevision(): Promise<number> {
    return this.committedRev;
  }

  async compactedRevision(): Promise<number> {
    return this.compactRev;
  }

  async get(key: string): Promise<KeyValue | undefined> {
    const row = this.live().get.get(key) as [number, number, number, Uint8Array] | undefined;
    if (!row || row[2] !== 0) return undefined;
    return { key, value: row[3], createRevision: row[0], modRevision: row[1] };
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const st = this.live();
    const rev = opts.revision && opts.revision > 0 ? opts.revision : this.committedRev;
    if (rev > this.committedRev) throw new FutureRevisionError(rev, this.committedRev);
    if (rev < this.compactRev) throw new CompactedError(rev, this.compactRev);
    const low = opts.startKey ? maxKey(opts.startKey, prefix) : prefix;
    const high = prefixEnd(prefix) ?? TOP;
    const limit = opts.limit && opts.limit > 0 ? opts.limit : -1;
    const rows = st.list.all(low, high, rev, limit < 0 ? -1 : limit + 1) as [string, number, number, Uint8Array][];
    let more = false;
    let remaining = 0;
    if (limit > 0 && rows.length > limit) {
      rows.length = limit;
      more = true;
    }
    const kvs: KeyValue[] = new Array(rows.length);
    let sorted = true;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      kvs[i] = { key: r[0], value: r[3], createRevision: r[1], modRevision: r[2] };
      if (i > 0 && sorted && compareKeysExact(rows[i - 1][0], r[0]) > 0) sorted = false;
    }
    // the join yields keys in index order; should a future query plan not, restore the contract
    if (!sorted) kvs.sort((a, b) => compareKeysExact(a.key, b.key));
    if (more) remaining = st.count.get(kvs[kvs.length - 1].key + '\0', high, rev) as number;
    return { kvs, revision: rev, more, remaining };
  }

  async count(prefix: string): Promise<number> {
    return this.live().count.get(prefix, prefixEnd(prefix) ?? TOP, this.committedRev) as number;
  }

  create(key: string, value: Uint8Array): Promise<KeyValue> {
    if (!this.db || this.closing) return Promise.reject(new Error('storage closed'));
    if (this.index.has(key)) return Promise.reject(new KeyExistsError(key));
    const rev = ++this.assigned;
    this.index.set(key, { c: rev, m: rev });
    return this.enqueue(OP_CREATE, rev, key, rev, 0, value);
  }

  update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KeyValue> {
    if (!this.db || this.closing) return Promise.reject(new Error('storage closed'));
    const cur = this.index.get(key);
    if (!cur) return Promise.reject(new KeyNotFoundError(key));
    if (cur.m !== expectedModRevision) return Promise.reject(new ConflictError(key, this.current(key, cur)));
    const rev = ++this.assigned;
    this.index.set(key, { c: cur.c, m: rev });
    return this.enqueue(OP_UPDATE, rev, key, cur.c, cur.m, value);
  }

  delete(key: string, expectedModRevision?: number): Promise<KeyValue> {
    if (!this.db || this.closing) return Promise.reject(new Error('storage closed'));
    const cur = this.index.get(key);
    if (!cur) return Promise.reject(new KeyNotFoundError(key));
    if (expectedModRevision !== undefined && cur.m !== expectedModRevision) {
      return Promise.reject(new ConflictError(key, this.current(key, cur)));
    }
    const rev = ++this.assigned;
    this.index.delete(key);
    return this.enqueue(OP_DELETE, rev, key, cur.c, cur.m, null);
  }

  watch(prefix: string, opts: WatchOptions): Watch {
    if (!this.db || this.closing) {
      queueMicrotask(() => opts.onError(new Error('storage closed')));
      return { cancel() {} };
    }
    return this.hub.watch(prefix, opts);
  }

  async compact(revision: number): Promise<void> {
    this.live();
    if (revision > this.committedRev) throw new FutureRevisionError(revision, this.committedRev);
    if (revision > this.compactRev) {
      this.compactRev = revision;
      this.st.setMeta.run('compact_rev', revision);
    }
    if (this.compactDone < this.compactRev) await this.runCompaction();
  }

  async healthy(): Promise<boolean> {
    if (!this.db || this.closing) return false;
    try {
      return this.st.ping.get() === 1;
    } catch {
      return false;
    }
  }

  /** write transactions committed, writes in them, and the largest batch (for metrics) */
  stats(): { commits: number; writes: number; largestBatch: number } {
    return { ...this.counters };
  }

  // ---------------------------------------------------------------------------------------------

  private live() {
    if (!this.db) throw new Error('storage closed');
    return this.st;
  }

  /** the current state of a live key whose index entry is `e` (queued or committed) */
  private current(key: string, e: IndexEntry): KeyValue {
    const value = this.pendingValues.get(e.m) ?? (this.st.valueAt.get(e.m) as Uint8Array | undefined) ?? new Uint8Array(0);
    return { key, value, createRevision: e.c, modRevision: e.m };
  }

  private enqueue(kind: number, rev: number, key: string, createRev: number, prevRev: number, value: Uint8Array | null): Promise<KeyValue> {
    if (value) this.pendingValues.set(rev, value);
    if (!this.flushHandle) this.flushHandle = setImmediate(() => this.flush());
    return new Promise<KeyValue>((resolve, reject) => {
      this.pending.push({ kind, rev, key, createRev, prevRev, value, resolve, reject });
    });
  }

  private flush(): void {
    this.flushHandle = undefined;
    const ops = this.pending;
    if (ops.length === 0) return;
    this.pending = [];
    const values = this.pendingValues;
    this.pendingValues = new Map();
    const events: StorageEvent[] = new Array(ops.length);
    try {
      this.writeBatch(ops, values, events);
    } catch (e) {
      const err = e instanceof Error ? e : new Error(String(e));
      // nothing of the batch is stored: undo its index changes, newest first, and its revisions
      for (let i = ops.length - 1; i >= 0; i--) {
        const op = ops[i];
        if (op.kind === OP_CREATE) this.index.delete(op.key);
        else this.index.set(op.key, { c: op.createRev, m: op.prevRev });
      }
      this.assigned = this.committedRev;
      for (const op of ops) op.reject(err);
      return;
    }
    this.committedRev = ops[ops.length - 1].rev;
    this.counters.commits++;
    this.counters.writes += ops.length;
    if (ops.length > this.counters.largestBatch) this.counters.largestBatch = ops.length;
    this.hub.deliver(events, this.committedRev);
    for (let i = 0; i < ops.length; i++) ops[i].resolve(events[i].kv);
  }

  /** the rows of one batch (runs inside the batch's transaction) */
  private writeOps(ops: Op[], values: Map<number, Uint8Array>, events: StorageEvent[]): void {
    const st = this.st;
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i];
      let prevValue: Uint8Array | undefined;
      if (op.kind !== OP_CREATE) {
        prevValue = values.get(op.prevRev) ?? (st.valueAt.get(op.prevRev) as Uint8Array | undefined) ?? new Uint8Array(0);
      }
      const deleted = op.kind === OP_DELETE;
      const value = deleted ? prevValue! : op.value!;
      st.insert.run(op.rev, op.key, op.createRev, op.prevRev, deleted ? 1 : 0, value);
      if (deleted) values.set(op.rev, value);
      const kv: KeyValue = { key: op.key, value, createRevision: op.createRev, modRevision: op.rev };
      events[i] =
        op.kind === OP_CREATE
          ? { type: 'put', kv, revision: op.rev }
          : {
              type: deleted ? 'delete' : 'put',
              kv,
              prevKv: { key: op.key, value: prevValue!, createRevision: op.createRev, modRevision: op.prevRev },
              revision: op.rev,
            };
    }
  }

  private history(prefix: string, after: number, upto: number, max: number): StorageEvent[] {
    const rows = this.live().history.all(after, upto, prefix, prefixEnd(prefix) ?? TOP, max) as [
      number,
      string,
      number,
      number,
      number,
      Uint8Array,
      Uint8Array | null,
    ][];
    const out: StorageEvent[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const [rev, key, createRev, prevRev, deleted, value, prevValue] = rows[i];
      const kv: KeyValue = { key, value, createRevision: createRev, modRevision: rev };
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

  private runCompaction(): Promise<void> {
    if (this.compactJob) return this.compactJob;
    const job = (async () => {
      try {
        while (this.db && !this.closing && this.compactDone < this.compactRev) {
          const lo = this.compactDone;
          const hi = Math.min(lo + this.compactChunk, this.compactRev);
          this.db.transaction(() => {
            this.st.compactPrev.run(lo, hi);
            this.st.compactTombstones.run(lo, hi);
            this.st.setMeta.run('compact_done', hi);
          })();
          this.compactDone = hi;
          if (this.compactDone < this.compactRev) await new Promise<void>((r) => setImmediate(r));
        }
      } finally {
        this.compactJob = undefined;
      }
    })();
    this.compactJob = job;
    return job;
  }
}

function prepareStatements(db: Database.Database) {
  return {
    insert: db.prepare('INSERT INTO kv (rev, key, create_rev, prev_rev, deleted, value) VALUES (?, ?, ?, ?, ?, ?)'),
    valueAt: db.prepare('SELECT value FROM kv WHERE rev = ?').pluck(),
    get: db.prepare('SELECT create_rev, rev, deleted, value FROM kv WHERE key = ? ORDER BY rev DESC LIMIT 1').raw(),
    // for each key in the range its newest row at or below the revision, unless a tombstone;
    // the grouped scan runs on the covering (key, rev) index, only the winners touch the table
    list: db
      .prepare(
        `SELECT kv.key, kv.create_rev, kv.rev, kv.value
         FROM (SELECT MAX(rev) AS mr FROM kv WHERE key >= ? AND key < ? AND rev <= ? GROUP BY key) m
         JOIN kv ON kv.rev = m.mr WHERE kv.deleted = 0 LIMIT ?`,
      )
      .raw(),
    count: db
      .prepare(
        `SELECT COUNT(*) FROM (SELECT MAX(rev) AS mr FROM kv WHERE key >= ? AND key < ? AND rev <= ? GROUP BY key) m
         JOIN kv ON kv.rev = m.mr WHERE kv.deleted = 0`,
      )
      .pluck(),
    liveKeys: db
      .prepare(
        `SELECT kv.key, kv.create_rev, kv.rev FROM (SELECT MAX(rev) AS mr FROM kv GROUP BY key) m
         JOIN kv ON kv.rev = m.mr WHERE kv.deleted = 0`,
      )
      .raw(),
    // replay: a range of revisions (the primary key) filtered by prefix; the unary + keeps the
    // planner off the key index, which would read the prefix's whole history
    history: db
      .prepare(
        `SELECT t.rev, t.key, t.create_rev, t.prev_rev, t.deleted, t.value, p.value
         FROM kv t LEFT JOIN kv p ON t.deleted = 0 AND t.prev_rev > 0 AND p.rev = t.prev_rev
         WHERE t.rev > ? AND t.rev <= ? AND +t.key >= ? AND +t.key < ?
         ORDER BY t.rev LIMIT ?`,
      )
      .raw(),
    maxRev: db.prepare('SELECT MAX(rev) FROM kv').pluck() as Database.Statement<[], number | null>,
    getMeta: db.prepare('SELECT value FROM meta WHERE name = ?').pluck() as Database.Statement<[string], number>,
    setMeta: db.prepare('INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value'),
    compactPrev: db.prepare('DELETE FROM kv WHERE rev IN (SELECT prev_rev FROM kv WHERE rev > ? AND rev <= ? AND prev_rev > 0)'),
    compactTombstones: db.prepare('DELETE FROM kv WHERE rev > ? AND rev <= ? AND deleted = 1'),
    ping: db.prepare('SELECT 1').pluck(),
  };
}

type Statements = ReturnType<typeof prepareStatements>;
