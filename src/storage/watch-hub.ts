// Fan-out of committed events to backend watchers, shared by the in-process backends.
//
// A watcher starts by replaying history (revisions in (afterRevision, committed]), then turns live.
// The replay reads, in order of preference:
// - the recent events the hub keeps in memory (`recent` option: the last N events delivered),
//   synchronously: a replay that starts within them turns live in the same synchronous step, so no
//   commit can fall between replay and live delivery;
// - the backend's `history` function, in chunks: synchronously (memory backend), one chunk per
//   turn of the event loop, turning live in the step that reaches the committed revision; or
//   asynchronously (the sqlite backend reads in its worker), one chunk per reply, until the replay
//   reaches the recent events (or the committed revision) and finishes synchronously as above.
// Live delivery is synchronous: the backend calls `deliver` right after a commit, before it
// resolves the writers' promises.
//
// Watchers are grouped by prefix, and the groups are indexed so an event finds its groups by
// lookup rather than by testing every prefix: prefixes that end in '/' (every resource prefix,
// '/registry/configmaps/', and namespace prefixes) are found by looking up the key's own
// '/'-terminated prefixes, those as long as a watched one can be (for /registry/configmaps/ns/name
// and watchers of resource prefixes only: one or two lookups); any other prefix is found by
// looking up the key's head of that prefix's length (one lookup per distinct length).
// Each group collects the events of a commit that match it, and the same (read-only) array goes
// to every watcher of the group.

import { CompactedError, type KeyValue, type StorageEvent, type Watch, type WatchOptions } from './interface.js';

export interface HistorySource {
  /**
   * events for keys with the prefix, revisions in (after, upto], in revision order, at most max;
   * synchronously or as a promise
   */
  history(prefix: string, after: number, upto: number, max: number): StorageEvent[] | Promise<StorageEvent[]>;
  /** the newest committed revision (every event up to it has been passed to deliver) */
  committed(): number;
  /** the compacted revision */
  compacted(): number;
}

export interface WatchHubOptions {
  /** how many of the newest delivered events to keep in memory for replays (default 0: none) */
  recent?: number;
}

interface Watcher {
  prefix: string;
  group: Group;
  /** every event with a revision <= after has been delivered (or skipped as before the start) */
  after: number;
  live: boolean;
  done: boolean;
  opts: WatchOptions;
}

interface Group {
  prefix: string;
  watchers: Set<Watcher>;
  /** the deliver() call whose events `batch` holds */
  epoch: number;
  batch: StorageEvent[];
}

const REPLAY_CHUNK = 1000;
const NO_EVENTS: StorageEvent[] = [];

export class WatchHub {
  /** groups of prefixes that end in '/', by prefix */
  private readonly slashGroups = new Map<string, Group>();
  /** the shortest and longest of those prefixes: a key's '/'-prefixes outside them are not looked up */
  private slashMin = 0;
  private slashMax = 0;
  /** groups of other prefixes (including ''), by prefix length, then prefix */
  private readonly otherGroups = new Map<number, Map<string, Group>>();
  private liveCount = 0;
  /** the live watchers (and some done ones, dropped at the next delivery when `dirty`) */
  private liveList: Watcher[] = [];
  private dirty = false;
  /** the groups the current delivery added events to */
  private touched: Group[] = [];
  private epoch = 0;
  /**
   * the recent events: a ring of `cap` slots holding `len` events from `head` on. The event of a
   * create is kept as its kv alone (type, revision and the absent prevKv follow from it): one
   * object less per create, held for as long as the ring keeps it.
   */
  private readonly cap: number;
  private ring: (StorageEvent | KeyValue | undefined)[];
  private head = 0;
  private len = 0;
  /** the ring holds every event with a revision > ringBase */
  private ringBase = 0;

  constructor(
    private readonly source: HistorySource,
    opts: WatchHubOptions = {},
  ) {
    this.cap = Math.max(0, opts.recent ?? 0);
    this.ring = new Array(this.cap);
  }

  /** the number of registered watchers */
  get size(): number {
    let n = 0;
    for (const g of this.groups()) n += g.watchers.size;
    return n;
  }

  /** forget the recent events: the next ones delivered follow `rev` (the backend (re)opened at rev) */
  resetRecent(rev: number): void {
    this.ring = new Array(this.cap);
    this.head = 0;
    this.len = 0;
    this.ringBase = rev;
  }

  watch(prefix: string, opts: WatchOptions): Watch {
    const group = this.groupFor(prefix);
    const w: Watcher = { prefix, group, after: Math.max(0, opts.afterRevision | 0), live: false, done: false, opts };
    group.watchers.add(w);
    // The first replay step runs in a microtask, so the caller holds the Watch handle before any
    // event arrives. Whatever commits first, nothing is lost or repeated: the replay reads up to
    // the committed revision and turns live in the same step, and live delivery skips revisions
    // at or below the watcher's position.
    queueMicrotask(() => this.replayStep(w));
    return { cancel: () => this.remove(w) };
  }

  /** deliver the events of one commit (revision order) whose newest revision is `rev` */
  deliver(events: StorageEvent[], rev: number): void {
    if (this.cap > 0) this.remember(events);
    if (this.liveCount === 0) return;
    const epoch = ++this.epoch;
    const slash = this.slashGroups;
    const other = this.otherGroups;
    for (let e = 0; e < events.length; e++) {
      const ev = events[e];
      const key = ev.kv.key;
      if (slash.size > 0) {
        const max = this.slashMax;
        for (let i = key.indexOf('/', this.slashMin - 1); i !== -1 && i < max; i = key.indexOf('/', i + 1)) {
          const g = slash.get(key.slice(0, i + 1));
          if (g !== undefined) this.add(g, ev, epoch);
        }
      }
      if (other.size > 0) {
        for (const [len, byPrefix] of other) {
          if (len > key.length) continue;
          const g = byPrefix.get(len === key.length ? key : key.slice(0, len));
          if (g !== undefined) this.add(g, ev, epoch);
        }
      }
    }
    // every live watcher: its group's events (if any), then progress to the commit's revision
    if (this.dirty) {
      this.liveList = this.liveList.filter((w) => !w.done);
      this.dirty = false;
    }
    const list = this.liveList;
    const n = list.length;
    for (let i = 0; i < n; i++) {
      const w = list[i];
      if (w.done) continue;
      const g = w.group;
      if (g.epoch === epoch) {
        let evs = g.batch;
        if (evs[0].revision <= w.after) evs = evs.filter((x) => x.revision > w.after);
        if (evs.length > 0) {
          w.after = evs[evs.length - 1].revision;
          if (!this.call(w, evs)) continue;
        }
      }
      if (w.after < rev) {
        w.after = rev;
        if (w.opts.onProgress) this.progress(w, rev);
      }
    }
    const touched = this.touched;
    for (let i = 0; i < touched.length; i++) touched[i].batch = NO_EVENTS;
    touched.length = 0;
  }

  /** fail every watcher (the backend is closing, or broke) */
  failAll(err: Error): void {
    for (const g of [...this.groups()]) for (const w of [...g.watchers]) this.fail(w, err);
  }

  /** drop every watcher without notice */
  clear(): void {
    for (const g of this.groups()) for (const w of g.watchers) w.done = true;
    this.slashGroups.clear();
    this.slashBounds();
    this.otherGroups.clear();
    this.liveCount = 0;
    this.liveList = [];
    this.dirty = false;
  }

  // ---------------------------------------------------------------------------------------------

  private add(g: Group, ev: StorageEvent, epoch: number): void {
    if (g.epoch !== epoch) {
      g.epoch = epoch;
      g.batch = [ev];
      this.touched.push(g);
    } else g.batch.push(ev);
  }

  private *groups(): IterableIterator<Group> {
    yield* this.slashGroups.values();
    for (const m of this.otherGroups.values()) yield* m.values();
  }

  private groupFor(prefix: string): Group {
    let g: Group | undefined;
    if (prefix.endsWith('/')) {
      g = this.slashGroups.get(prefix);
      if (!g) {
        this.slashGroups.set(prefix, (g = newGroup(prefix)));
        this.slashBounds();
      }
      return g;
    }
    let m = this.otherGroups.get(prefix.length);
    if (!m) this.otherGroups.set(prefix.length, (m = new Map()));
    g = m.get(prefix);
    if (!g) m.set(prefix, (g = newGroup(prefix)));
    return g;
  }

  private slashBounds(): void {
    let min = Infinity;
    let max = 0;
    for (const p of this.slashGroups.keys()) {
      if (p.length < min) min = p.length;
      if (p.length > max) max = p.length;
    }
    this.slashMin = max === 0 ? 0 : min;
    this.slashMax = max;
  }

  private dropGroup(g: Group): void {
    if (g.prefix.endsWith('/')) {
      if (this.slashGroups.get(g.prefix) === g) {
        this.slashGroups.delete(g.prefix);
        this.slashBounds();
      }
    } else {
      const m = this.otherGroups.get(g.prefix.length);
      if (m && m.get(g.prefix) === g) {
        m.delete(g.prefix);
        if (m.size === 0) this.otherGroups.delete(g.prefix.length);
      }
    }
  }

  private remember(events: StorageEvent[]): void {
    const cap = this.cap;
    for (let i = 0; i < events.length; i++) {
      if (this.len === cap) {
        this.ringBase = revisionOf(this.ring[this.head]!);
        this.ring[this.head] = undefined;
        this.head = (this.head + 1) % cap;
        this.len--;
      }
      const ev = events[i];
      const kv = ev.kv;
      this.ring[(this.head + this.len) % cap] = ev.type === 'put' && ev.prevKv === undefined && kv.createRevision === ev.revision && kv.modRevision === ev.revision ? kv : ev;
      this.len++;
    }
  }

  /** the recent events after `after` for keys with the prefix (the ring must cover after) */
  private recentAfter(prefix: string, after: number): StorageEvent[] {
    const cap = this.cap;
    // the first event with revision > after (binary search: revisions increase along the ring)
    let lo = 0;
    let hi = this.len;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (revisionOf(this.ring[(this.head + mid) % cap]!) <= after) lo = mid + 1;
      else hi = mid;
    }
    const out: StorageEvent[] = [];
    for (let i = lo; i < this.len; i++) {
      const x = this.ring[(this.head + i) % cap]!;
      if (isEvent(x)) {
        if (x.kv.key.startsWith(prefix)) out.push(x);
      } else if (x.key.startsWith(prefix)) out.push({ type: 'put', kv: x, revision: x.modRevision });
    }
    return out;
  }

  private replayStep(w: Watcher): void {
    if (w.done) return;
    try {
      const compacted = this.source.compacted();
      if (w.after < compacted) {
        this.fail(w, new CompactedError(w.after, compacted));
        return;
      }
      const upto = this.source.committed();
      if (w.after < upto) {
        if (this.cap > 0 && w.after >= this.ringBase) {
          // everything after the watcher's position is in memory: replay it and turn live now
          const evs = this.recentAfter(w.prefix, w.after);
          if (evs.length > 0) {
            w.after = evs[evs.length - 1].revision;
            if (!this.call(w, evs)) return;
          }
        } else {
          const res = this.source.history(w.prefix, w.after, upto, REPLAY_CHUNK);
          if (!Array.isArray(res)) {
            res.then(
              (evs) => this.replayed(w, upto, evs),
              (err) => this.fail(w, err instanceof Error ? err : new Error(String(err))),
            );
            return;
          }
          if (res.length > 0) {
            w.after = res[res.length - 1].revision;
            if (!this.call(w, res)) return;
          }
          if (res.length >= REPLAY_CHUNK) {
            setImmediate(() => this.replayStep(w));
            return;
          }
        }
        if (w.after < upto) {
          w.after = upto;
          if (w.opts.onProgress) this.progress(w, upto);
        }
      }
      if (w.done) return;
      w.live = true;
      this.liveCount++;
      this.liveList.push(w);
    } catch (err) {
      this.fail(w, err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** a chunk of history read asynchronously, for revisions in (w.after, upto] */
  private replayed(w: Watcher, upto: number, evs: StorageEvent[]): void {
    if (w.done) return;
    try {
      // a compaction that started while the chunk was read may have removed rows from it
      const compacted = this.source.compacted();
      if (w.after < compacted) {
        this.fail(w, new CompactedError(w.after, compacted));
        return;
      }
      if (evs.length > 0) {
        w.after = evs[evs.length - 1].revision;
        if (!this.call(w, evs)) return;
      }
      if (evs.length < REPLAY_CHUNK && w.after < upto) {
        w.after = upto;
        if (w.opts.onProgress) this.progress(w, upto);
        if (w.done) return;
      }
    } catch (err) {
      this.fail(w, err instanceof Error ? err : new Error(String(err)));
      return;
    }
    // commits went on meanwhile: the next step reads them (from memory, most likely) and turns live
    this.replayStep(w);
  }

  private call(w: Watcher, evs: StorageEvent[]): boolean {
    try {
      w.opts.onEvents(evs);
      return !w.done;
    } catch (err) {
      this.fail(w, err instanceof Error ? err : new Error(String(err)));
      return false;
    }
  }

  private progress(w: Watcher, rev: number): void {
    try {
      w.opts.onProgress!(rev);
    } catch (err) {
      this.fail(w, err instanceof Error ? err : new Error(String(err)));
    }
  }

  private fail(w: Watcher, err: Error): void {
    if (w.done) return;
    this.remove(w);
    try {
      w.opts.onError(err);
    } catch {
      // a watcher's error handler has nowhere to report to
    }
  }

  private remove(w: Watcher): void {
    if (w.done) return;
    w.done = true;
    if (w.live) {
      this.liveCount--;
      this.dirty = true;
      if (this.liveList.length > 2 * this.liveCount + 64) {
        this.liveList = this.liveList.filter((x) => !x.done);
        this.dirty = false;
      }
    }
    const g = w.group;
    g.watchers.delete(w);
    if (g.watchers.size === 0) this.dropGroup(g);
  }
}

function newGroup(prefix: string): Group {
  return { prefix, watchers: new Set(), epoch: 0, batch: NO_EVENTS };
}

function isEvent(x: StorageEvent | KeyValue): x is StorageEvent {
  return (x as StorageEvent).kv !== undefined;
}

/** the revision of a ring slot: an event's, or a create's kv's */
function revisionOf(x: StorageEvent | KeyValue): number {
  return isEvent(x) ? x.revision : x.modRevision;
}
