// The SQLite side of SqliteBackend: the connection, its statements, and the requests the backend
// sends it (commit a batch, read, compact). The same code runs in the backend's worker thread (the
// usual case, see sqlite-worker.ts) and, before that worker has started or without one, on the main
// thread: requests and replies are plain data either way (keys as strings, numbers in Float64Arrays,
// byte values packed into one buffer), so the main thread never needs to know where they ran.
//
// Table layout: see sqlite.ts.

import Database from 'better-sqlite3';
import { compareKeysExact } from './keys.js';

export const OP_CREATE = 0;
export const OP_UPDATE = 1;
export const OP_DELETE = 2;

/** numbers per op in a commit request: kind, rev, createRev, prevRev, needPrev */
export const OP_FIELDS = 5;

/**
 * How many revisions the log's tail may run ahead of keyrev before a commit indexes it. Indexed one
 * row at a time (the index on the log it replaces), every commit rewrote one leaf page per row:
 * concurrent writers' keys fall on different leaves, so a commit of 20 creates wrote some 48 WAL
 * frames of 4 KB. Indexed in batches, in key order, a leaf is written once per batch. (The commit
 * that indexes takes longer: alone, 1,024 revisions added up to ~12 ms to it, 2,048 up to ~18 ms,
 * with the same mean cost per commit; 512 cost 7% more per commit.)
 */
export const INDEX_EVERY = 1024;

/** A BLOB compares greater than every TEXT value in SQLite: the upper bound of an open range. */
const TOP = Buffer.from([0xff]);
const EMPTY = Buffer.alloc(0);

/**
 * Byte values in transit: either the values themselves (on the main thread) or packed into one
 * buffer (between threads: one copy, one transfer, no per-value serialization). `idx` holds
 * (offset, length) per value; length 0xffffffff stands for an absent value.
 */
export type Values = (Uint8Array | null)[] | Packed;
export interface Packed {
  buf: Uint8Array;
  idx: Uint32Array;
}
const ABSENT = 0xffffffff;

export function pack(values: readonly (Uint8Array | null | undefined)[]): Packed {
  let total = 0;
  for (const v of values) if (v) total += v.byteLength;
  // a buffer of its own (not from Buffer's pool, so it can be transferred), not zero-filled
  const buf: Uint8Array = Buffer.allocUnsafeSlow(total);
  const idx = new Uint32Array(values.length * 2);
  let off = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!v) {
      idx[2 * i + 1] = ABSENT;
      continue;
    }
    buf.set(v, off);
    idx[2 * i] = off;
    idx[2 * i + 1] = v.byteLength;
    off += v.byteLength;
  }
  return { buf, idx };
}

/** value i of `vals` (views into a packed buffer share it: no copy) */
export function valueOf(vals: Values, i: number): Uint8Array | null {
  if (Array.isArray(vals)) return vals[i] ?? null;
  const len = vals.idx[2 * i + 1];
  if (len === ABSENT) return null;
  const b = vals.buf;
  return new Uint8Array(b.buffer, b.byteOffset + vals.idx[2 * i], len);
}

/** the buffers to transfer with a message that carries `vals` */
export function transferOf(vals: Values, out: ArrayBuffer[]): void {
  if (!Array.isArray(vals)) out.push(vals.buf.buffer as ArrayBuffer, vals.idx.buffer as ArrayBuffer);
}

// ---- requests and replies -----------------------------------------------------------------------

export type Request =
  | { t: 'commit'; keys: string[]; nums: Float64Array; vals: Values }
  | { t: 'resume' }
  | { t: 'get'; key: string; rev: number }
  | { t: 'list'; low: string; high: string | null; rev: number; limit: number }
  | { t: 'count'; low: string; high: string | null; rev: number }
  | { t: 'history'; low: string; high: string | null; after: number; upto: number; max: number }
  | { t: 'value'; rev: number }
  | { t: 'meta'; name: string; value: number }
  | { t: 'compact'; lo: number; hi: number }
  | { t: 'ping' }
  | { t: 'pragma'; pragma: string };

/** the previous values a commit was asked for (needPrev), by op index */
export interface CommitResult {
  /** null when no previous value was asked for */
  prev: Values | null;
}
export interface GetResult {
  found: boolean;
  c: number;
  m: number;
  vals: Values;
}
export interface ListRows {
  keys: string[];
  /** createRevision, modRevision per row */
  nums: Float64Array;
  vals: Values;
  more: boolean;
  remaining: number;
}
export interface HistoryRows {
  keys: string[];
  /** rev, createRev, prevRev, deleted per row */
  nums: Float64Array;
  vals: Values;
  prevVals: Values;
}

/** the page size of a new store file */
export const PAGE_SIZE = 16384;
/** the log's size at which SQLite checkpoints it into the database file */
const CHECKPOINT_BYTES = 4 * 1024 * 1024;

/** open (or create) the store file with the backend's pragmas and tables */
export function openDatabase(path: string): Database.Database {
  const db = new Database(path);
  try {
    // one process owns the file: the in-memory index is the truth for conditional writes, so a
    // second writer must not exist (exclusive locking: it gets SQLITE_BUSY), and no shared-memory
    // WAL index is needed
    db.pragma('locking_mode = EXCLUSIVE');
    // a new file gets pages of 16 KiB (a file made with another size keeps it: SQLite fixes the
    // size when the first table is written). A commit of ~30 objects of 1.4 KB then writes ~5 WAL
    // frames instead of ~30 (two pwrite calls each): measured with better-sqlite3 alone (batches
    // of 30 rows of 1.4 KB, WAL, synchronous=FULL), 9 against 12.5 us of CPU per row, and with the
    // checkpoint below, a commit's p99 of 3.4 to 3.9 ms against 10.8 ms, its maximum 5 to 6 ms
    // against 12.5 (bench/HISTORY.md, 2026-12-01)
    db.pragma(`page_size = ${PAGE_SIZE}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    // a checkpoint after 4 MiB of log, whatever the page size: SQLite's default of 1,000 pages
    // would be 16 MiB at 16 KiB, and a checkpoint holds up the commits behind it for its whole copy
    const pageSize = Number(db.pragma('page_size', { simple: true })) || 4096;
    db.pragma(`wal_autocheckpoint = ${Math.max(16, Math.round(CHECKPOINT_BYTES / pageSize))}`);
    db.exec(`
      CREATE TABLE IF NOT EXISTS kv (
        rev INTEGER PRIMARY KEY,
        key TEXT NOT NULL,
        create_rev INTEGER NOT NULL,
        prev_rev INTEGER NOT NULL,
        deleted INTEGER NOT NULL,
        value BLOB
      );
      CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS keyrev (key TEXT NOT NULL, rev INTEGER NOT NULL, PRIMARY KEY (key, rev)) WITHOUT ROWID;
    `);
    // a damaged page does not fail the reads that pass over it: the rows behind it are simply not
    // found, and the server would start without them. SQLite's quick check reads every page once
    // (about 1 s per GiB here), so a damaged file is refused at start instead
    const check = db.pragma('quick_check(1)', { simple: true });
    if (check !== 'ok') {
      const e = new Error(`database disk image is malformed (quick_check: ${String(check)})`) as Error & { code?: string };
      e.code = 'SQLITE_CORRUPT';
      throw e;
    }
    migrateKeyIndex(db);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * A file written before `keyrev` existed has the index kv_key_rev (key, rev) on the log instead:
 * the table is filled from the log (emptied first: a file opened by such an older version since
 * may hold rows the log no longer has) and the index dropped, in one transaction.
 */
function migrateKeyIndex(db: Database.Database): void {
  const old = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'kv_key_rev'").get();
  if (!old) return;
  db.transaction(() => {
    db.exec('DELETE FROM keyrev; INSERT INTO keyrev (key, rev) SELECT key, rev FROM kv ORDER BY key, rev; DROP INDEX kv_key_rev;');
    db.prepare("INSERT INTO meta (name, value) VALUES ('indexed', (SELECT COALESCE(MAX(rev), 0) FROM kv)) ON CONFLICT (name) DO UPDATE SET value = excluded.value").run();
  })();
}

// The newest row of each key at a revision: the rows indexed in keyrev (revisions up to @ix) and
// the log's tail above @ix, found by a range of the primary key and filtered by key.
const NEWEST_OF_KEYS_WITH_TAIL = `SELECT k, MAX(r) AS mr FROM (
    SELECT key AS k, rev AS r FROM keyrev WHERE key >= @low AND key < @high AND rev <= @rev
    UNION ALL
    SELECT key, rev FROM kv WHERE rev > @ix AND rev <= @rev AND +key >= @low AND +key < @high
  ) GROUP BY k`;
// the same when the revision is at or below @ix: keyrev alone, scanned in key order
const NEWEST_OF_KEYS = 'SELECT key AS k, MAX(rev) AS mr FROM keyrev WHERE key >= @low AND key < @high AND rev <= @rev GROUP BY key';

function prepareStatements(db: Database.Database) {
  return {
    insert: db.prepare('INSERT INTO kv (rev, key, create_rev, prev_rev, deleted, value) VALUES (?, ?, ?, ?, ?, ?)'),
    // a tombstone carries the deleted value: copied from the key's previous row, in SQLite
    insertTombstone: db.prepare('INSERT INTO kv (rev, key, create_rev, prev_rev, deleted, value) SELECT ?, ?, ?, ?, 1, value FROM kv WHERE rev = ?'),
    valueAt: db.prepare('SELECT value FROM kv WHERE rev = ?').pluck(),
    // a key's newest row at or below the revision: in keyrev, or in the log's unindexed tail
    get: db
      .prepare(
        `SELECT create_rev, rev, deleted, value FROM kv WHERE rev = (SELECT MAX(r) FROM (
           SELECT MAX(rev) AS r FROM keyrev WHERE key = @key AND rev <= @rev
           UNION ALL
           SELECT MAX(rev) FROM kv WHERE rev > @ix AND rev <= @rev AND +key = @key))`,
      )
      .raw(),
    // for each key in the range its newest row at or below the revision, unless a tombstone; the
    // grouped scan runs on keyrev in key order (with the tail: through a sorted temporary tree),
    // only the winners touch the log. (No ORDER BY: it would sort the whole range before LIMIT.)
    list: db.prepare(`SELECT kv.key, kv.create_rev, kv.rev, kv.value FROM (${NEWEST_OF_KEYS}) m JOIN kv ON kv.rev = m.mr WHERE kv.deleted = 0 LIMIT @limit`).raw(),
    listWithTail: db.prepare(`SELECT kv.key, kv.create_rev, kv.rev, kv.value FROM (${NEWEST_OF_KEYS_WITH_TAIL}) m JOIN kv ON kv.rev = m.mr WHERE kv.deleted = 0 LIMIT @limit`).raw(),
    count: db.prepare(`SELECT COUNT(*) FROM (${NEWEST_OF_KEYS}) m JOIN kv ON kv.rev = m.mr WHERE kv.deleted = 0`).pluck(),
    countWithTail: db.prepare(`SELECT COUNT(*) FROM (${NEWEST_OF_KEYS_WITH_TAIL}) m JOIN kv ON kv.rev = m.mr WHERE kv.deleted = 0`).pluck(),
    // (at open, once the tail is indexed)
    liveKeys: db
      .prepare(
        `SELECT kv.key, kv.create_rev, kv.rev FROM (SELECT MAX(rev) AS mr FROM keyrev GROUP BY key) m
         JOIN kv ON kv.rev = m.mr WHERE kv.deleted = 0`,
      )
      .raw(),
    // the tail's (key, rev) pairs into keyrev, in key order: each leaf page of keyrev is written
    // once per batch of the tail rather than once per row
    indexTail: db.prepare('INSERT OR IGNORE INTO keyrev (key, rev) SELECT key, rev FROM kv WHERE rev > ? AND rev <= ? ORDER BY key, rev'),
    // replay: a range of revisions (the primary key) filtered by prefix (the unary + keeps the
    // planner on the primary key should kv ever have an index on key again)
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
    // (keyrev first: its pairs are found through the rows about to go)
    compactPrevKeys: db.prepare('DELETE FROM keyrev WHERE (key, rev) IN (SELECT p.key, p.rev FROM kv t JOIN kv p ON p.rev = t.prev_rev WHERE t.rev > ? AND t.rev <= ? AND t.prev_rev > 0)'),
    compactPrev: db.prepare('DELETE FROM kv WHERE rev IN (SELECT prev_rev FROM kv WHERE rev > ? AND rev <= ? AND prev_rev > 0)'),
    compactTombstoneKeys: db.prepare('DELETE FROM keyrev WHERE (key, rev) IN (SELECT key, rev FROM kv WHERE rev > ? AND rev <= ? AND deleted = 1)'),
    compactTombstones: db.prepare('DELETE FROM kv WHERE rev > ? AND rev <= ? AND deleted = 1'),
    ping: db.prepare('SELECT 1').pluck(),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

export interface LoadedState {
  compactRev: number;
  compactDone: number;
  /** the newest revision in the table (0 when empty) */
  maxRev: number;
}

/**
 * One connection and the requests it serves. `pack` chooses how byte values leave: packed (for a
 * message to another thread) or as they are (for a caller on the same thread).
 */
export class Store {
  readonly db: Database.Database;
  private readonly st: Statements;
  private readonly tx: (keys: string[], nums: Float64Array, vals: Values, prev: (Uint8Array | null)[]) => number;
  /** a commit failed: refuse the commits already queued behind it until the backend says resume */
  private failed = false;
  /** every row of the log up to this revision has its (key, rev) pair in keyrev (meta 'indexed') */
  private indexed: number;

  /**
   * `indexEvery`: how many revisions the log's unindexed tail may hold before a commit indexes
   * it (in the same transaction)
   */
  constructor(
    path: string,
    private readonly packValues: boolean,
    private readonly indexEvery = INDEX_EVERY,
  ) {
    this.db = openDatabase(path);
    try {
      this.st = prepareStatements(this.db);
      this.indexed = this.st.getMeta.get('indexed') ?? 0;
      // a file is opened with its tail indexed: loads (liveKeys, the caches' lists) read keyrev alone
      const top = this.st.maxRev.get() ?? 0;
      if (top > this.indexed) this.db.transaction(() => this.indexUpTo(top))();
      this.indexed = top;
    } catch (err) {
      this.db.close();
      throw err;
    }
    // (returns the revision the tail was indexed up to, 0 when it was not)
    this.tx = this.db.transaction((keys: string[], nums: Float64Array, vals: Values, prev: (Uint8Array | null)[]) => {
      const top = this.writeOps(keys, nums, vals, prev);
      if (top - this.indexed < this.indexEvery) return 0;
      this.indexUpTo(top);
      return top;
    });
  }

  /** (inside a transaction) the tail's pairs up to `top` into keyrev; the watermark moves once the transaction commits */
  private indexUpTo(top: number): void {
    this.st.indexTail.run(this.indexed, top);
    this.st.setMeta.run('indexed', top);
  }

  /** the stored metadata and the newest revision */
  state(): LoadedState {
    return {
      compactRev: this.st.getMeta.get('compact_rev') ?? 0,
      compactDone: this.st.getMeta.get('compact_done') ?? 0,
      maxRev: this.st.maxRev.get() ?? 0,
    };
  }

  /** every live key with its createRevision and modRevision */
  liveKeys(): IterableIterator<[string, number, number]> {
    return this.st.liveKeys.iterate() as IterableIterator<[string, number, number]>;
  }

  close(): void {
    this.db.close();
  }

  /** serve one request; throws on failure */
  handle(req: Request): unknown {
    const st = this.st;
    switch (req.t) {
      case 'commit': {
        if (this.failed) throw new Error('storage commit refused: an earlier commit failed');
        const prev: (Uint8Array | null)[] = new Array(req.keys.length).fill(null);
        let wanted = false;
        for (let o = 4; o < req.nums.length; o += OP_FIELDS) if (req.nums[o] !== 0) wanted = true;
        try {
          const indexedTo = this.tx(req.keys, req.nums, req.vals, prev);
          if (indexedTo > 0) this.indexed = indexedTo;
        } catch (err) {
          this.failed = true;
          throw err;
        }
        const res: CommitResult = { prev: wanted ? this.out(prev) : null };
        return res;
      }
      case 'resume':
        this.failed = false;
        return undefined;
      case 'get': {
        const row = st.get.get({ key: req.key, rev: req.rev, ix: this.indexed }) as [number, number, number, Uint8Array] | undefined;
        const found = !!row && row[2] === 0;
        const res: GetResult = { found, c: found ? row![0] : 0, m: found ? row![1] : 0, vals: this.out([found ? row![3] : null]) };
        return res;
      }
      case 'list':
        return this.list(req.low, req.high ?? TOP, req.rev, req.limit);
      case 'count':
        return this.count(req.low, req.high ?? TOP, req.rev);
      case 'history':
        return this.history(req.low, req.high ?? TOP, req.after, req.upto, req.max);
      case 'value':
        return this.out([(st.valueAt.get(req.rev) as Uint8Array | undefined) ?? null]);
      case 'meta':
        st.setMeta.run(req.name, req.value);
        return undefined;
      case 'compact': {
        // the rows to remove must have their pairs in keyrev, which loses them too (the backend
        // compacts only committed revisions; the watermark never passes the log's newest row)
        const top = Math.max(this.indexed, Math.min(req.hi, st.maxRev.get() ?? 0));
        this.db.transaction(() => {
          if (top > this.indexed) this.indexUpTo(top);
          st.compactPrevKeys.run(req.lo, req.hi);
          st.compactPrev.run(req.lo, req.hi);
          st.compactTombstoneKeys.run(req.lo, req.hi);
          st.compactTombstones.run(req.lo, req.hi);
          st.setMeta.run('compact_done', req.hi);
        })();
        this.indexed = top;
        return undefined;
      }
      case 'ping':
        return st.ping.get() === 1;
      case 'pragma':
        return this.db.pragma(req.pragma);
    }
  }

  private out(values: (Uint8Array | null)[]): Values {
    return this.packValues ? pack(values) : values;
  }

  /** the rows of one batch (runs inside the batch's transaction); returns the newest revision written */
  private writeOps(keys: string[], nums: Float64Array, vals: Values, prev: (Uint8Array | null)[]): number {
    const st = this.st;
    let top = 0;
    for (let i = 0; i < keys.length; i++) {
      const o = i * OP_FIELDS;
      const kind = nums[o];
      const rev = nums[o + 1];
      const createRev = nums[o + 2];
      const prevRev = nums[o + 3];
      const needPrev = nums[o + 4] !== 0;
      if (kind === OP_CREATE) {
        st.insert.run(rev, keys[i], createRev, 0, 0, valueOf(vals, i) ?? EMPTY);
      } else if (kind === OP_UPDATE) {
        if (needPrev) prev[i] = (st.valueAt.get(prevRev) as Uint8Array | undefined) ?? EMPTY;
        st.insert.run(rev, keys[i], createRev, prevRev, 0, valueOf(vals, i) ?? EMPTY);
      } else {
        if (st.insertTombstone.run(rev, keys[i], createRev, prevRev, prevRev).changes === 0) {
          // the previous row is missing (should not happen): keep the delete, with an empty value
          st.insert.run(rev, keys[i], createRev, prevRev, 1, EMPTY);
        }
        if (needPrev) prev[i] = (st.valueAt.get(prevRev) as Uint8Array | undefined) ?? EMPTY;
      }
      if (rev > top) top = rev;
    }
    return top;
  }

  private count(low: string, high: string | Buffer, rev: number): number {
    if (rev <= this.indexed) return this.st.count.get({ low, high, rev }) as number;
    return this.st.countWithTail.get({ low, high, rev, ix: this.indexed }) as number;
  }

  private list(low: string, high: string | Buffer, rev: number, limit: number): ListRows {
    const st = this.st;
    const n = limit > 0 ? limit + 1 : -1;
    const rows = (rev <= this.indexed ? st.list.all({ low, high, rev, limit: n }) : st.listWithTail.all({ low, high, rev, ix: this.indexed, limit: n })) as [string, number, number, Uint8Array][];
    let more = false;
    let remaining = 0;
    if (limit > 0 && rows.length > limit) {
      rows.length = limit;
      more = true;
    }
    // the join yields keys in the grouping's order; should a future query plan not, restore the contract
    let sorted = true;
    for (let i = 1; i < rows.length; i++) {
      if (compareKeysExact(rows[i - 1][0], rows[i][0]) > 0) {
        sorted = false;
        break;
      }
    }
    if (!sorted) rows.sort((a, b) => compareKeysExact(a[0], b[0]));
    if (more) remaining = this.count(rows[rows.length - 1][0] + '\0', high, rev);
    const keys: string[] = new Array(rows.length);
    const nums = new Float64Array(rows.length * 2);
    const values: Uint8Array[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      keys[i] = r[0];
      nums[2 * i] = r[1];
      nums[2 * i + 1] = r[2];
      values[i] = r[3];
    }
    return { keys, nums, vals: this.out(values), more, remaining };
  }

  private history(low: string, high: string | Buffer, after: number, upto: number, max: number): HistoryRows {
    const rows = this.st.history.all(after, upto, low, high, max) as [number, string, number, number, number, Uint8Array, Uint8Array | null][];
    const keys: string[] = new Array(rows.length);
    const nums = new Float64Array(rows.length * 4);
    const values: Uint8Array[] = new Array(rows.length);
    const prevValues: (Uint8Array | null)[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const [rev, key, createRev, prevRev, deleted, value, prevValue] = rows[i];
      keys[i] = key;
      nums[4 * i] = rev;
      nums[4 * i + 1] = createRev;
      nums[4 * i + 2] = prevRev;
      nums[4 * i + 3] = deleted;
      values[i] = value;
      prevValues[i] = prevValue;
    }
    return { keys, nums, vals: this.out(values), prevVals: this.out(prevValues) };
  }
}

// ---- messages between the backend and its worker ------------------------------------------------

/** main -> worker: open the store (after the main thread released it), then requests in order */
export type ToWorker =
  | { t: 'open'; id: number; path: string; expectRev: number; indexEvery: number }
  | { t: 'close'; id: number }
  | { t: 'commit1'; id: number; buf: ArrayBuffer }
  | (Request & { id: number });

// A commit crosses to the worker as one transferred buffer (the 'commit1' message): every write
// posts one, and postMessage costs per value it clones: the keys, the numbers and the values as
// separate arrays took about 20 us of the main thread per batch, one buffer about 4 us.
// Layout: u32 n; u32 key bytes; f64 nums[n * OP_FIELDS]; u32 keyIdx[2n]; u32 valIdx[2n]; the keys
// (UTF-8); the values.

/** the commit request as one buffer to transfer */
export function encodeCommit(keys: readonly string[], nums: Float64Array, values: readonly (Uint8Array | null)[]): ArrayBuffer {
  const n = keys.length;
  // (the keys' UTF-8 is written straight into the buffer: no Buffer per key)
  const keyLens = new Array<number>(n);
  let keyTotal = 0;
  for (let i = 0; i < n; i++) keyTotal += keyLens[i] = Buffer.byteLength(keys[i]!, 'utf8');
  let valTotal = 0;
  for (const v of values) if (v) valTotal += v.byteLength;
  const numsAt = 8;
  const keyIdxAt = numsAt + nums.length * 8;
  const valIdxAt = keyIdxAt + n * 8;
  const keysAt = valIdxAt + n * 8;
  const valsAt = keysAt + keyTotal;
  // (not zero-filled: every byte is written below, and a batch's values are tens of kilobytes)
  const buf = Buffer.allocUnsafeSlow(valsAt + valTotal).buffer as ArrayBuffer;
  const head = new Uint32Array(buf, 0, 2);
  head[0] = n;
  head[1] = keyTotal;
  new Float64Array(buf, numsAt, nums.length).set(nums);
  const keyIdx = new Uint32Array(buf, keyIdxAt, 2 * n);
  const valIdx = new Uint32Array(buf, valIdxAt, 2 * n);
  const bytes = Buffer.from(buf);
  let off = keysAt;
  for (let i = 0; i < n; i++) {
    bytes.write(keys[i]!, off, keyLens[i]!, 'utf8');
    keyIdx[2 * i] = off;
    keyIdx[2 * i + 1] = keyLens[i]!;
    off += keyLens[i]!;
  }
  let voff = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (!v) {
      valIdx[2 * i] = 0;
      valIdx[2 * i + 1] = ABSENT;
      continue;
    }
    bytes.set(v, valsAt + voff);
    valIdx[2 * i] = voff;
    valIdx[2 * i + 1] = v.byteLength;
    voff += v.byteLength;
  }
  return buf;
}

/** the commit request of encodeCommit's buffer (views into it, no copies of the values) */
export function decodeCommit(buf: ArrayBuffer): { t: 'commit'; keys: string[]; nums: Float64Array; vals: Packed } {
  const head = new Uint32Array(buf, 0, 2);
  const n = head[0]!;
  const keyTotal = head[1]!;
  const numsAt = 8;
  const nums = new Float64Array(buf, numsAt, n * OP_FIELDS);
  const keyIdxAt = numsAt + n * OP_FIELDS * 8;
  const keyIdx = new Uint32Array(buf, keyIdxAt, 2 * n);
  const valIdx = new Uint32Array(buf, keyIdxAt + n * 8, 2 * n);
  const all = Buffer.from(buf);
  const keys: string[] = new Array(n);
  for (let i = 0; i < n; i++) keys[i] = all.toString('utf8', keyIdx[2 * i]!, keyIdx[2 * i]! + keyIdx[2 * i + 1]!);
  const valsAt = keyIdxAt + n * 16 + keyTotal;
  return { t: 'commit', keys, nums, vals: { buf: new Uint8Array(buf, valsAt), idx: valIdx } };
}

/** worker -> main: 'ready' once loaded, then one reply per message, in order */
export type FromWorker =
  | { t: 'ready' }
  | { t: 'reply'; id: number; ok: true; value: unknown }
  | { t: 'reply'; id: number; ok: false; message: string; code?: string };

/** the buffers to transfer with a reply value */
export function transferOfResult(value: unknown): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  if (value && typeof value === 'object') {
    const v = value as Partial<ListRows & HistoryRows & CommitResult & Packed>;
    if (v.vals) transferOf(v.vals, out);
    if (v.prevVals) transferOf(v.prevVals, out);
    if (v.prev) transferOf(v.prev, out);
    if (v.nums) out.push(v.nums.buffer as ArrayBuffer);
    if (v.buf && v.idx) transferOf(v as Packed, out);
  }
  return out;
}
