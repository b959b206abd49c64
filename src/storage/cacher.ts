// The watch cache: one per resource prefix, in front of a Backend. The API server serves lists and
// watches from it (as Kubernetes' cacher does).
//
// - `tree`: the latest state, a B+ tree of key -> CacheEntry in byte order (new keys join it
//   in batches, in key order: see `unsorted`); `byKey` the same entries by key, for gets.
// - `history`: a ring of the events applied (each with the time it was applied), kept for
//   historyWindowMs: a watch resumes from any revision >= oldestRevision().
// - Exact lists at a past revision R: the state at R is rebuilt on demand from the newest state
//   (or from a nearer snapshot already built) by undoing the history events after R, on a
//   copy-on-write clone of the tree (BTree.clone() is O(1); undoing touches O(events * log n)
//   nodes). The rebuilt snapshot is kept (a few of them, keyed by the first event after R), so
//   the pages of one paged list share it. Nothing is copied on the write path. A state is served
//   while it was current within snapshotMaxAgeMs (the first event after R is at most that old).
// - One decode per write: a 'put' KeyValue is decoded once into the entry; a DELETED entry reuses
//   the previous entry's object (a shallow copy with the deletion's resourceVersion).
// - Fan-out: watchers are indexed by prefix (one map lookup per distinct prefix length per event);
//   an unfiltered watcher receives the cache's own event object (shared by every watcher, so
//   per-event memoization by the caller is shared too); filtered watchers get ADDED/DELETED
//   transitions built once per event and shared among the watchers that need them.
// - Apply now, fan out right after: the backend hands a commit's events to the cache synchronously,
//   before the writer's promise resolves, and the cache applies them at once (tree, history,
//   revision, freshness waiters: a writer reads its own write from the cache). The calls to the
//   cache's watchers (the API server's watch streams, thousands of them) are queued and run in a
//   setImmediate, after the writers' continuations, so a write's answer does not wait for the
//   fan-out. Every watcher still sees every event once, in revision order: the queue is drained in
//   order, and a watch started meanwhile replays the history (which already holds the queued events)
//   and skips them when the queue reaches it. revision() drains the queue first, so a caller that
//   reports revision() to a watcher (a bookmark) never gets ahead of the events sent to it.
// - Freshness: the backend watch reports progress after every commit (onProgress), so revision()
//   follows the store's revision even when this prefix sees no writes; waitUntilFresh waits for it.

import { BTree } from './btree.js';
import { FutureRevisionError, type Backend, type KeyValue, type StorageEvent, type Watch } from './interface.js';
import { parseJSON, stringifyJSON } from '../codec/int64.js';
import { keptUTF8 } from '../codec/kept.js';
import { KEEP_DECODED } from '../machinery/objectmeta.js';
import { compareKeys, maxKey, noteKey, prefixEnd, sortKeys } from './keys.js';

/**
 * What a kind's entries keep while frozen (see CacheEntry): the values its field selectors read,
 * by field path ('spec.nodeName'), so that a list or watch with a field selector over frozen
 * entries decodes none of them.
 */
export interface EntryKind {
  fields?: (obj: any) => Record<string, string>;
  /** the object of a stored value in plain text (decrypted), as the cache's decode makes it (CacherOptions.load) */
  fromPlain?: (plain: Uint8Array, kv: KeyValue) => any;
}

/**
 * One object in the watch cache, with its serialized bytes.
 *
 * An entry is thawed (its decoded object held) or frozen (its JSON alone held, the object
 * decoded again when next asked for). Only the last DEFAULT_DECODED_ENTRIES (4,096) entries that
 * were made or decoded stay thawed, across every resource of the process (`hotRing`): a decoded object is a
 * few hundred heap objects for a Pod (a few dozen for a small ConfigMap), and the garbage
 * collector's every full collection marks each of them again, which for a store of 10,000 Pods
 * took a sixth of a core while writes ran (bench/HISTORY.md, 2026-12-03 evening). Frozen, an
 * entry is a handful of heap objects and its bytes outside the heap. The objects writes and
 * watches touch are the recent ones, which stay decoded; a read of an old one decodes it once
 * (a 6 KB Pod in ~25 µs) and it joins the ring again. Labels and the kind's selectable fields
 * stay readable while frozen, so selectors never decode.
 */
export class CacheEntry {
  /** the decoded object while thawed (metadata.resourceVersion set; shared: treat as immutable); undefined while frozen */
  private o: any;
  // the object's serialized bytes, each made once (by the API server, when first asked for)
  // and shared by every answer, list and watcher: JSON, Protobuf, CBOR. Plain fields rather
  // than a Map: a Map per cached object cost memory and allocation on every write.
  json: Uint8Array | undefined;
  pb: Uint8Array | undefined = undefined;
  cbor: Uint8Array | undefined = undefined;
  /** the API server's Table row of the object, made once like the bytes above (opaque here) */
  row: unknown = undefined;
  /** an entry loaded from storage, until its JSON is made: its stored value in plain text, decoded again by the kind's fromPlain */
  private sv: Uint8Array | undefined = undefined;
  /** kept from the first freeze on: metadata.labels, and the kind's field-selector values */
  private fl: Record<string, string> | undefined = undefined;
  private ff: Record<string, string> | undefined = undefined;

  constructor(
    /** '/registry/configmaps/default/x' */
    readonly key: string,
    /** '' for cluster-scoped */
    readonly namespace: string,
    readonly name: string,
    obj: any,
    readonly modRevision: number,
    readonly createRevision: number,
    json: Uint8Array | undefined,
    /** the cache's kind (undefined: an entry made outside a cache, never frozen) */
    private readonly kind: EntryKind | undefined,
  ) {
    this.o = obj;
    this.json = json;
  }

  /** the decoded object (decoded now if the entry is frozen); shared: treat as immutable */
  get obj(): any {
    const o = this.o;
    return o !== undefined ? o : this.thaw();
  }

  /** keeps the object's JSON (made by the API server); a frozen entry of a load then lets its stored value go */
  keepJSON(b: Uint8Array): void {
    this.json = b;
    if (this.o === undefined) this.sv = undefined;
  }

  /**
   * the object for one reading: the decoded one, or for a frozen entry a decoding that is not
   * kept (the entry stays frozen and takes no place among the decoded ones). For a reader that
   * needs the object once and keeps what it makes of it (a Table row), so that reading every
   * object of a large list does not decode them all into the heap for the next collections.
   */
  peek(): any {
    const o = this.o;
    return o !== undefined ? o : this.decode();
  }

  /** the object if it is decoded now, else undefined (never decodes) */
  get decoded(): any {
    return this.o;
  }

  /** the object's metadata.labels (undefined: none), without decoding a frozen entry */
  get labels(): Record<string, string> | undefined {
    const o = this.o;
    if (o === undefined && this.fl !== undefined) return this.fl === NO_LABELS ? undefined : this.fl;
    const m = this.obj?.metadata;
    return m !== null && typeof m === 'object' ? m.labels : undefined;
  }

  /** a selectable field's value (by its dotted path) as kept while frozen, else undefined: read the object */
  keptField(path: string): string | undefined {
    return this.o === undefined ? this.ff?.[path] : undefined;
  }

  /**
   * drops the decoded object, keeping its JSON (made now if it was never asked for) or, for an
   * entry of a load, its stored value; the ring and the load's timer call it
   */
  freeze(): void {
    const o = this.o;
    if (o === undefined || this.kind === undefined) return;
    // an object that carries more than its JSON stays decoded
    if (o[KEEP_DECODED] === true) return;
    if (this.json === undefined && (this.sv === undefined || this.kind.fromPlain === undefined)) {
      try {
        this.json = keptUTF8(stringifyJSON(o));
      } catch {
        return; // not JSON (none is expected): it stays decoded
      }
    }
    if (this.json !== undefined) this.sv = undefined;
    if (this.fl === undefined) {
      const m = o.metadata;
      const labels = m !== null && typeof m === 'object' ? m.labels : undefined;
      this.fl = labels !== null && typeof labels === 'object' ? labels : NO_LABELS;
      this.ff = this.kind.fields?.(o);
    }
    this.o = undefined;
  }

  /**
   * An entry loaded from storage is frozen a little later (LOADED_FREEZE_MS), holding the stored
   * value it was decoded from (in plain text) rather than JSON made for it: making every object's
   * JSON at a start would cost more than the load. Until then it stays decoded, for the readers
   * of every object a start has (the node authorizer's graph reads every Pod), and it is not in
   * the ring: it joins it when next decoded.
   */
  loaded(plain: Uint8Array): void {
    this.sv = plain;
    loadedToFreeze.push(this);
    loadedTimer ??= setTimeout(freezeLoaded, LOADED_FREEZE_MS).unref();
  }

  private thaw(): any {
    const o = this.decode();
    if (o === undefined) return undefined;
    this.o = o;
    warm(this);
    return o;
  }

  /** the object decoded from its JSON or stored value (undefined when the entry has neither) */
  private decode(): any {
    const j = this.json;
    if (j !== undefined) return parseJSON(Buffer.from(j.buffer, j.byteOffset, j.byteLength).toString('utf8'));
    if (this.sv !== undefined && this.kind?.fromPlain !== undefined) return this.kind.fromPlain(this.sv, { key: this.key, value: this.sv, createRevision: this.createRevision, modRevision: this.modRevision });
    return undefined;
  }
}

const NO_LABELS: Record<string, string> = Object.freeze(Object.create(null));

/**
 * How many cache entries stay decoded, across every resource (see CacheEntry). The environment
 * variable KEELSON_DECODED_ENTRIES sets another number (the tests run servers with 1, so that
 * every read meets frozen entries).
 */
const DEFAULT_DECODED_ENTRIES = 4096;
let hotRing: (CacheEntry | undefined)[] = [];
let hotNext = 0;
setDecodedEntries(Number(process.env.KEELSON_DECODED_ENTRIES) || DEFAULT_DECODED_ENTRIES);

/** how many cache entries stay decoded */
export function decodedEntries(): number {
  return hotRing.length;
}

/** sets how many cache entries stay decoded (at least 1); those beyond it are frozen now */
export function setDecodedEntries(n: number): void {
  const size = Math.max(1, Math.floor(n));
  const old = hotRing;
  const start = hotNext;
  hotRing = new Array<CacheEntry | undefined>(size).fill(undefined);
  hotNext = 0;
  // the most recent keep their place, in their order
  const keep: CacheEntry[] = [];
  for (let i = 0; i < old.length; i++) {
    const e = old[(start + i) % old.length];
    if (e !== undefined) keep.push(e);
  }
  for (const e of keep) warm(e);
}

/** how long after a load its entries are frozen */
const LOADED_FREEZE_MS = 2000;
let loadedToFreeze: CacheEntry[] = [];
let loadedTimer: NodeJS.Timeout | undefined;

function freezeLoaded(): void {
  loadedTimer = undefined;
  const es = loadedToFreeze;
  loadedToFreeze = [];
  for (const e of es) e.freeze();
}

/** an entry decoded now joins the ring; the one it takes the place of is frozen */
function warm(e: CacheEntry): void {
  const i = hotNext;
  const old = hotRing[i];
  hotRing[i] = e;
  hotNext = i + 1 === hotRing.length ? 0 : i + 1;
  if (old !== undefined && old !== e) old.freeze();
}

/** a cache entry whose encodings are made later, when first asked for (json: when the writer already has it); with `kind`, a cache's own entry, frozen in its turn */
export function cacheEntry(key: string, namespace: string, name: string, obj: any, modRevision: number, createRevision: number, json?: Uint8Array, kind?: EntryKind): CacheEntry {
  const e = new CacheEntry(key, namespace, name, obj, modRevision, createRevision, json, kind);
  if (kind !== undefined) warm(e);
  return e;
}

/** a copy of an object with metadata.resourceVersion set to a revision: the object as a delete (or a write left unchanged) at that revision shows it */
export function atRevision(o: any, revision: number): any {
  return { ...o, metadata: { ...o.metadata, resourceVersion: String(revision) } };
}

/** the last state of a deleted object as its DELETED event shows it (undefined: not an object with metadata) */
function atDeletion(o: any, revision: number): any {
  return o && typeof o === 'object' && o.metadata && typeof o.metadata === 'object' ? atRevision(o, revision) : undefined;
}

/**
 * A key whose stored value cannot be read back (its decode threw: a value the configured
 * encryption cannot decrypt, or bytes that do not decode). It is kept out of the tree, the
 * lists and the watches; reads of it report `error`, and only an unsafe delete removes it.
 */
export interface CorruptEntry {
  key: string;
  namespace: string;
  name: string;
  modRevision: number;
  createRevision: number;
  /** what decode threw */
  error: Error;
}

export type CacheEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface CacheEvent {
  type: CacheEventType;
  entry: CacheEntry;
  /** the entry before this event (MODIFIED, DELETED, and ADDED/DELETED transitions of a filter) */
  prev?: CacheEntry;
  revision: number;
}

export interface CacheListOptions {
  /** keys with this prefix (the resource prefix, or a namespace's prefix within it) */
  prefix: string;
  /** undefined: the latest state; R: exactly the state at R (TooOldError when it cannot be rebuilt) */
  revision?: number;
  /** only keys >= startKey (a continueKey from a previous page) */
  startKey?: string;
  /** at most this many matching items */
  limit?: number;
  filter?: (e: CacheEntry) => boolean;
}

export interface CacheListResult {
  items: CacheEntry[];
  /** the revision the list reflects */
  revision: number;
  /** set when keys follow the page: the startKey of the next page (the last item's key + '\0') */
  continueKey?: string;
  /** with continueKey and no filter: the number of keys in the prefix after this page */
  remaining?: number;
}

export interface CacheWatchOptions {
  prefix: string;
  /** deliver events with revision > afterRevision (TooOldError if older than oldestRevision()) */
  afterRevision: number;
  filter?: (e: CacheEntry) => boolean;
  /** called synchronously; the history replay runs inside watch(), before it returns */
  onEvent: (ev: CacheEvent) => void;
  /** the watch ended without stop(): the cacher stopped or restarted, or onEvent threw */
  onClose?: (err?: Error) => void;
}

export interface Cacher {
  readonly resourcePrefix: string;
  /** initial list at a revision, then watch the backend from it */
  start(): Promise<void>;
  stop(): void;
  /** the newest revision applied to the cache (events and progress of the store) */
  revision(): number;
  /** events after this revision are still in history */
  oldestRevision(): number;
  /** resolves true once revision() >= rev, false on timeout */
  waitUntilFresh(rev: number, timeoutMs: number): Promise<boolean>;
  /** the latest entry of a key */
  get(key: string): CacheEntry | undefined;
  /** whether the resource holds no object now (cheaper than an empty list) */
  isEmpty(): boolean;
  /** how many objects the resource holds now (without listing them) */
  count(): number;
  /**
   * Throws TooOldError when `revision` is older than the cache can rebuild (the caller falls back
   * to the backend), FutureRevisionError when it is newer than revision() (wait first).
   */
  list(opts: CacheListOptions): CacheListResult;
  /** throws TooOldError (410) if afterRevision < oldestRevision() */
  watch(opts: CacheWatchOptions): { stop(): void };
  /** the key, when its stored value could not be decoded */
  corrupt(key: string): CorruptEntry | undefined;
  /** the unreadable keys with the prefix (>= startKey, < endKey when given), in key order */
  corruptIn(prefix: string, startKey?: string, endKey?: string): CorruptEntry[];
  /** end every watch and load the state again from the backend (after the decode changed) */
  resync(reason: Error): void;
}

export interface CacherOptions {
  /** JSON bytes -> object with resourceVersion set to String(kv.modRevision); a throw marks the key corrupt */
  decode: (kv: KeyValue) => any;
  /**
   * the JSON of an object decode() just returned for a put, when it is known without serializing
   * the object (it becomes the entry's `json`); undefined: serialized when first asked
   */
  json?: (kv: KeyValue, obj: any) => Uint8Array | undefined;
  /**
   * the entry made of the put whose object decode() and json() were just asked for: a writer that
   * waits for its own write takes it from here, not by a second look-up of the key
   */
  made?: (entry: CacheEntry) => void;
  /** the values of the kind's selectable fields (EntryKind), kept by a frozen entry */
  fields?: (obj: any) => Record<string, string>;
  /**
   * decode in two steps, for a load: the stored value in plain text (decrypted; throws as decode
   * does), and the object from it. With it, the entries of a load are frozen soon after it
   * holding their plain values (CacheEntry.loaded), not JSON made for each.
   */
  load?: { plain: (kv: KeyValue) => Uint8Array; fromPlain: (plain: Uint8Array, kv: KeyValue) => any };
  /** the object of the DELETED event of a corrupt key (its last value could not be decoded) */
  tombstone?: (namespace: string, name: string, revision: number) => any;
  /**
   * a key's namespace and name; given the key's decoded object, its own metadata strings when
   * they are the key's (so that the entry holds no second copy of them)
   */
  split: (key: string, obj?: any) => { namespace: string; name: string };
  /** events kept for watch resume (default 5 minutes) */
  historyWindowMs?: number;
  /** how long a past state stays listable exactly (default 75 s) */
  snapshotMaxAgeMs?: number;
  /** upper bound on the events kept, whatever their age (default 102,400, Kubernetes' upper bound) */
  historyMaxEvents?: number;
  now?: () => number;
}

/** The requested revision is older than the cache holds: 410 Gone for watches, fall back for lists. */
export class TooOldError extends Error {
  constructor(
    readonly requested: number,
    readonly oldest: number,
  ) {
    super(`too old resource version: ${requested} (${oldest})`);
    this.name = 'TooOldError';
  }
}

export function newCacher(backend: Backend, resourcePrefix: string, opts: CacherOptions): Cacher {
  return new WatchCache(backend, resourcePrefix, opts);
}

// -------------------------------------------------------------------------------------------------

/** a ring of events in revision order, with the time each was applied */
// (an ADDED event of a key new to the cache, the event of every create, is kept as its entry
// alone: type, entry and revision follow from it, and the ring holds one object less per create,
// an object the young generation's collections would otherwise copy twice)
class History {
  private evs: (CacheEvent | CacheEntry | undefined)[] = new Array(1024);
  private times = new Float64Array(1024);
  private head = 0;
  length = 0;

  push(ev: CacheEvent, t: number): void {
    if (this.length === this.evs.length) this.grow();
    const i = (this.head + this.length) & (this.evs.length - 1);
    this.evs[i] = ev.type === 'ADDED' && ev.prev === undefined && ev.revision === ev.entry.modRevision ? ev.entry : ev;
    this.times[i] = t;
    this.length++;
  }

  /** drops the oldest event; its revision */
  shift(): number {
    const x = this.evs[this.head]!;
    this.evs[this.head] = undefined;
    this.head = (this.head + 1) & (this.evs.length - 1);
    this.length--;
    return revisionOf(x);
  }

  at(i: number): CacheEvent {
    const x = this.evs[(this.head + i) & (this.evs.length - 1)]!;
    return isEvent(x) ? x : { type: 'ADDED', entry: x, revision: x.modRevision };
  }

  revisionAt(i: number): number {
    return revisionOf(this.evs[(this.head + i) & (this.evs.length - 1)]!);
  }

  timeAt(i: number): number {
    return this.times[(this.head + i) & (this.evs.length - 1)];
  }

  /** the index of the first event with revision > rev (length if none) */
  firstAfter(rev: number): number {
    let lo = 0;
    let hi = this.length;
    if (hi === 0 || this.revisionAt(hi - 1) <= rev) return hi;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.revisionAt(mid) <= rev) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  clear(): void {
    this.evs = new Array(1024);
    this.times = new Float64Array(1024);
    this.head = 0;
    this.length = 0;
  }

  private grow(): void {
    const n = this.evs.length;
    const evs: (CacheEvent | CacheEntry | undefined)[] = new Array(n * 2);
    const times = new Float64Array(n * 2);
    for (let i = 0; i < this.length; i++) {
      const j = (this.head + i) & (n - 1);
      evs[i] = this.evs[j];
      times[i] = this.times[j];
    }
    this.evs = evs;
    this.times = times;
    this.head = 0;
  }
}

function isEvent(x: CacheEvent | CacheEntry): x is CacheEvent {
  return (x as CacheEvent).type !== undefined;
}

function revisionOf(x: CacheEvent | CacheEntry): number {
  return isEvent(x) ? x.revision : x.modRevision;
}

interface CacheWatcher {
  prefix: string;
  after: number;
  filter?: (e: CacheEntry) => boolean;
  onEvent: (ev: CacheEvent) => void;
  onClose?: (err?: Error) => void;
  stopped: boolean;
}

interface Snapshot {
  /** the revision of the first event after the snapshot's state */
  next: number;
  tree: BTree<string, CacheEntry>;
}

interface Waiter {
  rev: number;
  resolve: (ok: boolean) => void;
  timer: NodeJS.Timeout;
}

const MAX_SNAPSHOTS = 8;
/** new keys waiting for the tree at most (see WatchCache.unsorted) */
const UNSORTED_MAX = 512;
type Visit = (k: string, e: CacheEntry) => { break: true } | void;
const BREAK = { break: true } as const;

class WatchCache implements Cacher {
  private tree: BTree<string, CacheEntry> = new BTree<string, CacheEntry>(undefined, compareKeys);
  /**
   * New keys not in the tree yet, by key. They go in together, in key order, when the tree is
   * read (sorted()) or when UNSORTED_MAX of them wait: one at a time, each insert walks the
   * tree's nodes cold (7 µs a key in a busy server), and in key order neighbouring inserts find
   * them warm (3 µs at 512).
   */
  private unsorted = new Map<string, CacheEntry>();
  /** the same latest entries by key, for O(1) get */
  private byKey = new Map<string, CacheEntry>();
  /** the keys whose value does not decode (rarely any) */
  private corruptByKey = new Map<string, CorruptEntry>();
  private rev = 0;
  private oldest = 0;
  private readonly history = new History();
  private snapshots: Snapshot[] = [];
  /** watchers by prefix length, then prefix */
  private readonly watchers = new Map<number, Map<string, Set<CacheWatcher>>>();
  private waiters: Waiter[] = [];
  /** events applied but not yet passed to the watchers, in revision order */
  private outbox: CacheEvent[] = [];
  private outboxHandle: NodeJS.Immediate | undefined;
  private dispatching = false;
  private readonly drainOutbox = () => this.flushOutbox();
  private backendWatch: Watch | undefined;
  private running = false;
  private generation = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly decode: (kv: KeyValue) => any;
  private readonly json: ((kv: KeyValue, obj: any) => Uint8Array | undefined) | undefined;
  private readonly made: ((entry: CacheEntry) => void) | undefined;
  /** what this cache's entries keep while frozen */
  private readonly entryKind: EntryKind;
  private readonly plain: ((kv: KeyValue) => Uint8Array) | undefined;
  private readonly tombstone: (namespace: string, name: string, revision: number) => any;
  private readonly split: (key: string, obj?: any) => { namespace: string; name: string };
  private readonly historyWindowMs: number;
  private readonly snapshotMaxAgeMs: number;
  private readonly historyMaxEvents: number;
  private readonly now: () => number;

  constructor(
    private readonly backend: Backend,
    readonly resourcePrefix: string,
    opts: CacherOptions,
  ) {
    this.decode = opts.decode;
    this.json = opts.json;
    this.made = opts.made;
    this.entryKind = { fields: opts.fields, fromPlain: opts.load?.fromPlain };
    this.plain = opts.load?.plain;
    this.tombstone = opts.tombstone ?? ((namespace, name, revision) => ({ metadata: { ...(namespace ? { namespace } : {}), name, resourceVersion: String(revision) } }));
    this.split = opts.split;
    this.historyWindowMs = opts.historyWindowMs ?? 5 * 60_000;
    this.snapshotMaxAgeMs = opts.snapshotMaxAgeMs ?? 75_000;
    this.historyMaxEvents = Math.max(1, opts.historyMaxEvents ?? 102_400);
    this.now = opts.now ?? Date.now;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.load();
    } catch (err) {
      this.running = false;
      throw err;
    }
  }

  stop(): void {
    if (!this.running) return;
    this.running = false;
    this.generation++;
    this.backendWatch?.cancel();
    this.backendWatch = undefined;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.dropOutbox();
    this.closeWatchers(undefined);
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.resolve(false);
    }
    this.waiters = [];
  }

  revision(): number {
    if (this.outbox.length > 0 && !this.dispatching) this.flushOutbox();
    return this.rev;
  }

  oldestRevision(): number {
    this.trim(this.now());
    return this.oldest;
  }

  waitUntilFresh(rev: number, timeoutMs: number): Promise<boolean> {
    if (this.rev >= rev) return Promise.resolve(true);
    if (!this.running) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const w: Waiter = {
        rev,
        resolve,
        timer: setTimeout(() => {
          const i = this.waiters.indexOf(w);
          if (i >= 0) this.waiters.splice(i, 1);
          resolve(false);
        }, Math.max(0, timeoutMs)),
      };
      this.waiters.push(w);
    });
  }

  get(key: string): CacheEntry | undefined {
    return this.byKey.get(key);
  }

  isEmpty(): boolean {
    return this.byKey.size === 0;
  }

  count(): number {
    return this.byKey.size;
  }

  list(opts: CacheListOptions): CacheListResult {
    const { prefix, filter } = opts;
    let tree: BTree<string, CacheEntry>;
    let revision = this.rev;
    if (opts.revision !== undefined && opts.revision !== this.rev) {
      revision = opts.revision;
      tree = this.treeAt(revision);
    } else {
      // nothing stored (most admission lookups: webhook configurations, quotas, limit ranges)
      if (this.byKey.size === 0) return { items: [], revision };
      tree = this.sorted();
    }
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const items: CacheEntry[] = [];
    let more = false;
    let remaining = 0;
    const visit: Visit = filter
      ? (_k, e) => {
          if (items.length >= limit) {
            more = true;
            return BREAK;
          }
          if (filter(e)) items.push(e);
        }
      : (_k, e) => {
          if (items.length < limit) items.push(e);
          else {
            more = true;
            remaining++;
          }
        };
    scan(tree, opts.startKey ? maxKey(opts.startKey, prefix) : prefix, prefix, visit);
    const res: CacheListResult = { items, revision };
    if (more) {
      res.continueKey = items[items.length - 1].key + '\0';
      if (!filter) res.remaining = remaining;
    }
    return res;
  }

  watch(opts: CacheWatchOptions): { stop(): void } {
    const now = this.now();
    this.trim(now);
    if (opts.afterRevision < this.oldest) throw new TooOldError(opts.afterRevision, this.oldest);
    const w: CacheWatcher = {
      prefix: opts.prefix,
      after: opts.afterRevision,
      filter: opts.filter,
      onEvent: opts.onEvent,
      onClose: opts.onClose,
      stopped: false,
    };
    const handle = { stop: () => this.removeWatcher(w) };
    // replay, then register: both in this synchronous call, so no event falls between them
    const h = this.history;
    for (let i = h.firstAfter(opts.afterRevision); i < h.length && !w.stopped; i++) {
      const ev = h.at(i);
      if (ev.entry.key.startsWith(w.prefix)) this.send(w, ev, undefined);
    }
    if (w.stopped) return handle;
    if (w.after < this.rev) w.after = this.rev;
    let byPrefix = this.watchers.get(w.prefix.length);
    if (!byPrefix) this.watchers.set(w.prefix.length, (byPrefix = new Map()));
    let set = byPrefix.get(w.prefix);
    if (!set) byPrefix.set(w.prefix, (set = new Set()));
    set.add(w);
    return handle;
  }

  corrupt(key: string): CorruptEntry | undefined {
    return this.corruptByKey.size === 0 ? undefined : this.corruptByKey.get(key);
  }

  corruptIn(prefix: string, startKey?: string, endKey?: string): CorruptEntry[] {
    if (this.corruptByKey.size === 0) return NONE_CORRUPT;
    const out: CorruptEntry[] = [];
    for (const c of this.corruptByKey.values()) {
      if (!c.key.startsWith(prefix)) continue;
      if (startKey !== undefined && compareKeys(c.key, startKey) < 0) continue;
      if (endKey !== undefined && compareKeys(c.key, endKey) >= 0) continue;
      out.push(c);
    }
    return out.sort((a, b) => compareKeys(a.key, b.key));
  }

  resync(reason: Error): void {
    if (this.running) this.restart(reason);
  }

  /** the number of active watchers (for metrics and tests) */
  watcherCount(): number {
    let n = 0;
    for (const m of this.watchers.values()) for (const s of m.values()) n += s.size;
    return n;
  }

  // ---------------------------------------------------------------------------------------------

  private async load(): Promise<void> {
    const gen = ++this.generation;
    const res = await this.backend.list(this.resourcePrefix);
    if (gen !== this.generation) return;
    const pairs: [string, CacheEntry][] = [];
    const byKey = new Map<string, CacheEntry>();
    const corrupt = new Map<string, CorruptEntry>();
    for (let i = 0; i < res.kvs.length; i++) {
      const kv = res.kvs[i];
      noteKey(kv.key);
      let obj: any;
      let plain: Uint8Array | undefined;
      try {
        if (this.plain) {
          plain = this.plain(kv);
          obj = this.entryKind.fromPlain!(plain, kv);
        } else obj = this.decode(kv);
      } catch (e) {
        // one unreadable value does not keep the rest of the collection from being served
        const { namespace, name } = this.split(kv.key);
        corrupt.set(kv.key, corruptEntry(kv, namespace, name, e));
        continue;
      }
      const { namespace, name } = this.split(kv.key, obj);
      let entry: CacheEntry;
      if (plain) {
        entry = new CacheEntry(kv.key, namespace, name, obj, kv.modRevision, kv.createRevision, undefined, this.entryKind);
        entry.loaded(plain);
      } else entry = cacheEntry(kv.key, namespace, name, obj, kv.modRevision, kv.createRevision, undefined, this.entryKind);
      pairs.push([kv.key, entry]);
      byKey.set(kv.key, entry);
    }
    this.tree = new BTree<string, CacheEntry>(pairs, compareKeys);
    this.unsorted.clear();
    this.byKey = byKey;
    this.corruptByKey = corrupt;
    this.history.clear();
    this.snapshots = [];
    this.dropOutbox();
    this.rev = res.revision;
    this.oldest = res.revision;
    this.backendWatch = this.backend.watch(this.resourcePrefix, {
      afterRevision: res.revision,
      onEvents: (evs) => {
        if (gen === this.generation) this.applyEvents(evs);
      },
      onProgress: (rev) => {
        if (gen === this.generation) this.advance(rev);
      },
      onError: (err) => {
        if (gen === this.generation) this.restart(err);
      },
    });
    this.notifyWaiters();
  }

  /** the backend watch broke: end every watch (clients re-list and re-watch) and reload */
  private restart(err: Error): void {
    if (!this.running) return;
    this.generation++;
    this.backendWatch = undefined;
    this.dropOutbox();
    this.closeWatchers(err);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.running) this.load().catch((e) => this.restart(e instanceof Error ? e : new Error(String(e))));
    }, 100);
    this.restartTimer.unref?.();
  }

  private applyEvents(evs: StorageEvent[]): void {
    const now = this.now();
    for (let i = 0; i < evs.length; i++) {
      const se = evs[i];
      if (se.revision <= this.rev) continue;
      const ev = this.toCacheEvent(se);
      this.rev = se.revision;
      // a value that does not decode, of a key the watchers never saw: no event
      if (!ev) continue;
      this.history.push(ev, now);
      // a watcher registered later replays the history, which holds the event
      if (this.watchers.size > 0) this.outbox.push(ev);
    }
    if (this.outbox.length > 0 && !this.outboxHandle) this.outboxHandle = setImmediate(this.drainOutbox);
    this.trim(now);
    if (this.waiters.length > 0) this.notifyWaiters();
  }

  /** pass the applied events to the watchers, in order */
  private flushOutbox(): void {
    if (this.outboxHandle) {
      clearImmediate(this.outboxHandle);
      this.outboxHandle = undefined;
    }
    if (this.dispatching) return;
    this.dispatching = true;
    try {
      // events applied while a watcher runs (none today: backends deliver from their own tasks)
      // are passed on in the same call, after these
      while (this.outbox.length > 0) {
        const evs = this.outbox;
        this.outbox = [];
        for (let i = 0; i < evs.length; i++) this.dispatch(evs[i]);
      }
    } finally {
      this.dispatching = false;
    }
  }

  private dropOutbox(): void {
    this.outbox = [];
    if (this.outboxHandle) clearImmediate(this.outboxHandle);
    this.outboxHandle = undefined;
  }

  private advance(rev: number): void {
    if (rev <= this.rev) return;
    this.rev = rev;
    if (this.waiters.length > 0) this.notifyWaiters();
  }

  private toCacheEvent(se: StorageEvent): CacheEvent | undefined {
    const kv = se.kv;
    const key = kv.key;
    // (a put that created its key found none: the cache holds what storage held at the revision
    // before, so there is nothing to look up, one probe of a map of every key the fewer)
    const prev = se.type === 'put' && kv.createRevision === kv.modRevision ? undefined : this.byKey.get(key);
    if (this.corruptByKey.size > 0 && !prev) {
      const c = this.corruptByKey.get(key);
      if (c) return this.corruptKeyEvent(se, c);
    }
    if (se.type === 'put') {
      if (!prev) noteKey(key);
      let obj: any;
      try {
        obj = this.decode(kv);
      } catch (e) {
        const { namespace, name } = prev ?? this.split(key);
        return this.becameCorrupt(se, corruptEntry(kv, namespace, name, e), prev);
      }
      // (a new key's names are its object's own strings: the entry holds no copies of them)
      const { namespace, name } = prev ?? this.split(key, obj);
      const entry = cacheEntry(key, namespace, name, obj, kv.modRevision, kv.createRevision, this.json?.(kv, obj), this.entryKind);
      this.made?.(entry);
      if (prev) this.replaceInTree(key, entry);
      else this.insertIntoTree(key, entry);
      this.byKey.set(key, entry);
      return { type: prev ? 'MODIFIED' : 'ADDED', entry, prev, revision: se.revision };
    }
    let entry: CacheEntry;
    if (prev) {
      const obj = atDeletion(prev.obj, se.revision) ?? this.decode(kv);
      entry = cacheEntry(key, prev.namespace, prev.name, obj, se.revision, kv.createRevision, undefined, this.entryKind);
      this.removeFromTree(key);
      this.byKey.delete(key);
    } else {
      // not in the cache (should not happen): build it from the event
      const { namespace, name } = this.split(key);
      let obj: any;
      try {
        obj = this.decode(kv);
      } catch {
        obj = this.tombstone(namespace, name, se.revision);
      }
      entry = cacheEntry(key, namespace, name, obj, se.revision, kv.createRevision, undefined, this.entryKind);
    }
    return { type: 'DELETED', entry, prev, revision: se.revision };
  }

  /** an event of a key whose value did not decode */
  private corruptKeyEvent(se: StorageEvent, c: CorruptEntry): CacheEvent | undefined {
    const kv = se.kv;
    if (se.type === 'delete') {
      // removed (the unsafe delete): the watchers learn of it from the object's name alone
      this.corruptByKey.delete(kv.key);
      const entry = cacheEntry(kv.key, c.namespace, c.name, this.tombstone(c.namespace, c.name, se.revision), se.revision, c.createRevision, undefined, this.entryKind);
      return { type: 'DELETED', entry, revision: se.revision };
    }
    let obj: any;
    try {
      obj = this.decode(kv);
    } catch (e) {
      this.corruptByKey.set(kv.key, corruptEntry(kv, c.namespace, c.name, e));
      return undefined;
    }
    // readable again (written anew): for the watchers it appears
    this.corruptByKey.delete(kv.key);
    const entry = cacheEntry(kv.key, c.namespace, c.name, obj, kv.modRevision, kv.createRevision, undefined, this.entryKind);
    this.insertIntoTree(kv.key, entry);
    this.byKey.set(kv.key, entry);
    return { type: 'ADDED', entry, revision: se.revision };
  }

  /** a put whose value does not decode: the key leaves the readable state (DELETED for those who saw it) */
  private becameCorrupt(se: StorageEvent, c: CorruptEntry, prev: CacheEntry | undefined): CacheEvent | undefined {
    this.corruptByKey.set(c.key, c);
    if (!prev) return undefined;
    this.removeFromTree(c.key);
    this.byKey.delete(c.key);
    const entry = cacheEntry(c.key, prev.namespace, prev.name, atDeletion(prev.obj, se.revision) ?? prev.obj, se.revision, prev.createRevision, undefined, this.entryKind);
    return { type: 'DELETED', entry, prev, revision: se.revision };
  }

  private dispatch(ev: CacheEvent): void {
    if (this.watchers.size === 0) return;
    const key = ev.entry.key;
    const derived: Derived = { added: undefined, deleted: undefined };
    for (const [len, byPrefix] of this.watchers) {
      if (len > key.length) continue;
      const set = byPrefix.get(len === key.length ? key : key.slice(0, len));
      if (set) for (const w of set) this.send(w, ev, derived);
    }
  }

  /** deliver one event to one watcher, applying its filter (with match transitions) */
  private send(w: CacheWatcher, ev: CacheEvent, derived: Derived | undefined): void {
    if (ev.revision <= w.after) return;
    w.after = ev.revision;
    const f = w.filter;
    if (!f) return this.call(w, ev);
    try {
      switch (ev.type) {
        case 'ADDED':
          if (f(ev.entry)) this.call(w, ev);
          return;
        case 'DELETED':
          if (f(ev.prev ?? ev.entry)) this.call(w, ev);
          return;
        case 'MODIFIED': {
          const now = f(ev.entry);
          const before = ev.prev ? f(ev.prev) : false;
          if (now && before) this.call(w, ev);
          else if (now) {
            let e = derived?.added;
            if (!e) {
              e = { type: 'ADDED', entry: ev.entry, prev: ev.prev, revision: ev.revision };
              if (derived) derived.added = e;
            }
            this.call(w, e);
          } else if (before) {
            // the object left the selection: its last state that matched, at this revision
            // (convertToWatchEvent sends the previous object with the event's resourceVersion)
            let e = derived?.deleted;
            if (!e) {
              const p = ev.prev!;
              const entry = cacheEntry(p.key, p.namespace, p.name, atDeletion(p.obj, ev.revision) ?? p.obj, ev.revision, p.createRevision, undefined, this.entryKind);
              e = { type: 'DELETED', entry, prev: ev.prev, revision: ev.revision };
              if (derived) derived.deleted = e;
            }
            this.call(w, e);
          }
          return;
        }
      }
    } catch (err) {
      this.dropWatcher(w, err);
    }
  }

  private call(w: CacheWatcher, ev: CacheEvent): void {
    try {
      w.onEvent(ev);
    } catch (err) {
      this.dropWatcher(w, err);
    }
  }

  private dropWatcher(w: CacheWatcher, err: unknown): void {
    if (w.stopped) return;
    this.removeWatcher(w);
    try {
      w.onClose?.(err instanceof Error ? err : new Error(String(err)));
    } catch {
      // nowhere to report
    }
  }

  private removeWatcher(w: CacheWatcher): void {
    if (w.stopped) return;
    w.stopped = true;
    const byPrefix = this.watchers.get(w.prefix.length);
    const set = byPrefix?.get(w.prefix);
    if (!set) return;
    set.delete(w);
    if (set.size === 0) {
      byPrefix!.delete(w.prefix);
      if (byPrefix!.size === 0) this.watchers.delete(w.prefix.length);
    }
  }

  private closeWatchers(err: Error | undefined): void {
    const all: CacheWatcher[] = [];
    for (const m of this.watchers.values()) for (const s of m.values()) all.push(...s);
    this.watchers.clear();
    for (const w of all) {
      w.stopped = true;
      try {
        w.onClose?.(err);
      } catch {
        // nowhere to report
      }
    }
  }

  private notifyWaiters(): void {
    const rest: Waiter[] = [];
    for (const w of this.waiters) {
      if (this.rev >= w.rev) {
        clearTimeout(w.timer);
        w.resolve(true);
      } else rest.push(w);
    }
    this.waiters = rest;
  }

  /** drop events older than the history window (or beyond the size bound) */
  private trim(now: number): void {
    const h = this.history;
    const horizon = now - this.historyWindowMs;
    while (h.length > 0 && (h.timeAt(0) < horizon || h.length > this.historyMaxEvents)) {
      this.oldest = h.shift();
    }
    if (this.snapshots.length > 0 && this.snapshots[0].next <= this.oldest) {
      this.snapshots = this.snapshots.filter((s) => s.next > this.oldest);
    }
  }

  /** the tree of the latest state, every key in it */
  private sorted(): BTree<string, CacheEntry> {
    const u = this.unsorted;
    if (u.size > 0) {
      const keys = sortKeys([...u.keys()]);
      for (let i = 0; i < keys.length; i++) this.tree.set(keys[i]!, u.get(keys[i]!)!);
      u.clear();
    }
    return this.tree;
  }

  /** a key the cache did not have */
  private insertIntoTree(key: string, entry: CacheEntry): void {
    this.unsorted.set(key, entry);
    if (this.unsorted.size >= UNSORTED_MAX) this.sorted();
  }

  /** a new entry of a key the cache has */
  private replaceInTree(key: string, entry: CacheEntry): void {
    if (this.unsorted.has(key)) this.unsorted.set(key, entry);
    else this.tree.set(key, entry);
  }

  private removeFromTree(key: string): void {
    if (!this.unsorted.delete(key)) this.tree.delete(key);
  }

  /** the state at exactly `rev` (rev !== this.rev) */
  private treeAt(rev: number): BTree<string, CacheEntry> {
    if (rev > this.rev) throw new FutureRevisionError(rev, this.rev);
    const now = this.now();
    this.trim(now);
    if (rev < this.oldest) throw new TooOldError(rev, this.oldest);
    const h = this.history;
    const first = h.firstAfter(rev);
    if (first === h.length) return this.sorted(); // nothing happened to this prefix since rev
    if (h.timeAt(first) < now - this.snapshotMaxAgeMs) throw new TooOldError(rev, this.oldestSnapshotRevision(now));
    const next = h.revisionAt(first);
    // the nearest state at or after the one wanted: a snapshot already built, or the latest
    let base: BTree<string, CacheEntry> = this.sorted();
    let baseIndex = h.length;
    for (const s of this.snapshots) {
      if (s.next === next) return s.tree;
      if (s.next > next) {
        const i = h.firstAfter(s.next - 1);
        if (i < baseIndex) {
          base = s.tree;
          baseIndex = i;
        }
      }
    }
    const t = base.clone();
    if (t.isFrozen) t.unfreeze();
    for (let i = baseIndex - 1; i >= first; i--) {
      const ev = h.at(i);
      if (ev.type === 'ADDED' || !ev.prev) t.delete(ev.entry.key);
      else t.set(ev.entry.key, ev.prev);
    }
    t.freeze();
    this.snapshots.push({ next, tree: t });
    if (this.snapshots.length > MAX_SNAPSHOTS) this.snapshots.shift();
    return t;
  }

  /** the oldest revision an exact list can still be served at (for error messages) */
  private oldestSnapshotRevision(now: number): number {
    const h = this.history;
    const horizon = now - this.snapshotMaxAgeMs;
    let i = 0;
    while (i < h.length && h.timeAt(i) < horizon) i++;
    return i === 0 ? this.oldest : h.revisionAt(i - 1);
  }
}

const NONE_CORRUPT: CorruptEntry[] = [];

function corruptEntry(kv: KeyValue, namespace: string, name: string, e: unknown): CorruptEntry {
  return { key: kv.key, namespace, name, modRevision: kv.modRevision, createRevision: kv.createRevision, error: e instanceof Error ? e : new Error(String(e)) };
}

interface Derived {
  added: CacheEvent | undefined;
  deleted: CacheEvent | undefined;
}

function scan(tree: BTree<string, CacheEntry>, low: string, prefix: string, visit: Visit): void {
  const high = prefixEnd(prefix);
  if (high !== undefined) {
    tree.forRange(low, high, false, visit as (k: string, e: CacheEntry) => void);
    return;
  }
  for (const [k, e] of tree.entries(low)) {
    if (!k.startsWith(prefix)) break;
    if (visit(k, e)) break;
  }
}
