// Fan-out of committed events to backend watchers, shared by the in-process backends.
//
// A watcher starts by replaying history (revisions in (afterRevision, committed]) read through the
// backend's `history` function, in chunks, one chunk per turn of the event loop; once a replay step
// reaches the committed revision the watcher turns live in the same synchronous step, so no commit
// can fall between replay and live delivery. Live delivery is synchronous: the backend calls
// `deliver` right after a commit, before it resolves the writers' promises.
//
// Watchers are grouped by prefix: the events of a commit are filtered once per distinct prefix and
// the same (read-only) array goes to every watcher of that prefix.

import { CompactedError, type StorageEvent, type Watch, type WatchOptions } from './interface.js';

export interface HistorySource {
  /** events for keys with the prefix, revisions in (after, upto], in revision order, at most max */
  history(prefix: string, after: number, upto: number, max: number): StorageEvent[];
  /** the newest committed revision */
  committed(): number;
  /** the compacted revision */
  compacted(): number;
}

interface Watcher {
  prefix: string;
  /** every event with a revision <= after has been delivered (or skipped as before the start) */
  after: number;
  live: boolean;
  done: boolean;
  opts: WatchOptions;
}

const REPLAY_CHUNK = 1000;

export class WatchHub {
  private readonly groups = new Map<string, Set<Watcher>>();
  private liveCount = 0;

  constructor(private readonly source: HistorySource) {}

  /** the number of registered watchers */
  get size(): number {
    let n = 0;
    for (const g of this.groups.values()) n += g.size;
    return n;
  }

  watch(prefix: string, opts: WatchOptions): Watch {
    const w: Watcher = { prefix, after: Math.max(0, opts.afterRevision | 0), live: false, done: false, opts };
    let g = this.groups.get(prefix);
    if (!g) this.groups.set(prefix, (g = new Set()));
    g.add(w);
    // The first replay step runs in a microtask, so the caller holds the Watch handle before any
    // event arrives. Whatever commits first, nothing is lost or repeated: the replay reads up to
    // the committed revision and turns live in the same step, and live delivery skips revisions
    // at or below the watcher's position.
    queueMicrotask(() => this.replayStep(w));
    return { cancel: () => this.remove(w) };
  }

  /** deliver the events of one commit (revision order) whose newest revision is `rev` */
  deliver(events: StorageEvent[], rev: number): void {
    if (this.liveCount === 0) return;
    for (const [prefix, group] of this.groups) {
      let matching: StorageEvent[] = events;
      if (prefix !== '') {
        matching = [];
        for (let i = 0; i < events.length; i++) {
          if (events[i].kv.key.startsWith(prefix)) matching.push(events[i]);
        }
      }
      for (const w of group) {
        if (!w.live || w.done) continue;
        let evs = matching;
        if (evs.length > 0 && evs[0].revision <= w.after) evs = evs.filter((e) => e.revision > w.after);
        if (evs.length > 0) {
          w.after = evs[evs.length - 1].revision;
          if (!this.call(w, evs)) continue;
        }
        if (w.after < rev) {
          w.after = rev;
          if (w.opts.onProgress) this.progress(w, rev);
        }
      }
    }
  }

  /** fail every watcher (the backend is closing, or broke) */
  failAll(err: Error): void {
    for (const g of [...this.groups.values()]) for (const w of [...g]) this.fail(w, err);
  }

  /** drop every watcher without notice */
  clear(): void {
    for (const g of this.groups.values()) for (const w of g) w.done = true;
    this.groups.clear();
    this.liveCount = 0;
  }

  /** fail watchers that are still replaying from a revision that is now compacted */
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
        const evs = this.source.history(w.prefix, w.after, upto, REPLAY_CHUNK);
        if (evs.length > 0) {
          w.after = evs[evs.length - 1].revision;
          if (!this.call(w, evs)) return;
        }
        if (evs.length >= REPLAY_CHUNK) {
          setImmediate(() => this.replayStep(w));
          return;
        }
        if (w.after < upto) {
          w.after = upto;
          if (w.opts.onProgress) this.progress(w, upto);
        }
      }
      if (w.done) return;
      w.live = true;
      this.liveCount++;
    } catch (err) {
      this.fail(w, err instanceof Error ? err : new Error(String(err)));
    }
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
    if (w.live) this.liveCount--;
    const g = this.groups.get(w.prefix);
    if (g) {
      g.delete(w);
      if (g.size === 0) this.groups.delete(w.prefix);
    }
  }
}
