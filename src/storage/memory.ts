// MemoryBackend: the storage interface held in process memory, with the same revision semantics as
// the durable backends (list at a revision, watch from a revision, compaction).
//
// Layout:
// - `log`: one StorageEvent per revision (revisions are dense: a rejected write takes none), from
//   `logBase` on; compaction drops its head. Watch replay reads it.
// - `versions`: key -> its versions (oldest first; a tombstone marks a delete), for get, the
//   conditional checks and lists at any revision; deleted keys stay until compaction.
// - `order`: a B+ tree (byte order) over the same version arrays, for range scans; a write touches
//   it only when a key first appears (updates and deletes append to the shared array).
// Writes apply synchronously (so checks and revision assignment are ordered) and are delivered to
// watchers in one batch per microtask, before the writers' promises resolve.

import { BTree } from './btree.js';
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
import { compareKeys, maxKey, noteKey, prefixEnd } from './keys.js';
import { WatchHub } from './watch-hub.js';

interface Version {
  rev: number;
  /** for a tombstone: the deleted value, modRevision = the deletion's revision */
  kv: KeyValue;
  deleted: boolean;
}

interface Pending {
  kv: KeyValue;
  resolve: (kv: KeyValue) => void;
}

export class MemoryBackend implements Backend {
  readonly name = 'memory';

  private rev = 0;
  private compacted = 0;
  private readonly versions = new Map<string, Version[]>();
  private readonly order = new BTree<string, Version[]>(undefined, compareKeys);
  private log: StorageEvent[] = [];
  private logBase = 1;
  private readonly hub: WatchHub;
  private pendingEvents: StorageEvent[] = [];
  private pendingWrites: Pending[] = [];
  private flushScheduled = false;
  private closed = false;

  constructor() {
    this.hub = new WatchHub({
      history: (prefix, after, upto, max) => this.history(prefix, after, upto, max),
      committed: () => this.rev,
      compacted: () => this.compacted,
    });
  }

  async open(): Promise<void> {
    this.closed = false;
  }

  async close(): Promise<void> {
    this.flush();
    this.closed = true;
    this.hub.failAll(new Error('storage closed'));
  }

  async currentRevision(): Promise<number> {
    return this.rev;
  }

  revisionNow(): number {
    return this.rev;
  }

  async compactedRevision(): Promise<number> {
    return this.compacted;
  }

  async get(key: string): Promise<KeyValue | undefined> {
    return this.latest(key);
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const rev = opts.revision && opts.revision > 0 ? opts.revision : this.rev;
    if (rev > this.rev) throw new FutureRevisionError(rev, this.rev);
    if (rev < this.compacted) throw new CompactedError(rev, this.compacted);
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const low = opts.startKey ? maxKey(opts.startKey, prefix) : prefix;
    const kvs: KeyValue[] = [];
    let more = false;
    let remaining = 0;
    const atLatest = rev === this.rev;
    this.scan(low, prefix, (_k, versions) => {
      const kv = atLatest ? liveLatest(versions) : liveAt(versions, rev);
      if (!kv) return;
      if (kvs.length < limit) kvs.push(kv);
      else {
        more = true;
        remaining++;
      }
    });
    return { kvs, revision: rev, more, remaining };
  }

  async count(prefix: string): Promise<number> {
    let n = 0;
    this.scan(prefix, prefix, (_k, versions) => {
      if (!versions[versions.length - 1].deleted) n++;
    });
    return n;
  }

  create(key: string, value: Uint8Array): Promise<KeyValue> {
    if (this.closed) return Promise.reject(new Error('storage closed'));
    if (this.latest(key)) return Promise.reject(new KeyExistsError(key, this.rev));
    const rev = ++this.rev;
    const kv: KeyValue = { key, value, createRevision: rev, modRevision: rev };
    return this.apply({ type: 'put', kv, revision: rev }, false, kv);
  }

  update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KeyValue> {
    if (this.closed) return Promise.reject(new Error('storage closed'));
    const cur = this.latest(key);
    if (!cur) return Promise.reject(new KeyNotFoundError(key, this.rev));
    if (cur.modRevision !== expectedModRevision) return Promise.reject(new ConflictError(key, cur));
    const rev = ++this.rev;
    const kv: KeyValue = { key, value, createRevision: cur.createRevision, modRevision: rev };
    return this.apply({ type: 'put', kv, prevKv: cur, revision: rev }, false, kv);
  }

  delete(key: string, expectedModRevision?: number): Promise<KeyValue> {
    if (this.closed) return Promise.reject(new Error('storage closed'));
    const cur = this.latest(key);
    if (!cur) return Promise.reject(new KeyNotFoundError(key, this.rev));
    if (expectedModRevision !== undefined && cur.modRevision !== expectedModRevision) {
      return Promise.reject(new ConflictError(key, cur));
    }
    const rev = ++this.rev;
    const kv: KeyValue = { key, value: cur.value, createRevision: cur.createRevision, modRevision: rev };
    return this.apply({ type: 'delete', kv, prevKv: cur, revision: rev }, true, kv);
  }

  watch(prefix: string, opts: WatchOptions): Watch {
    if (this.closed) {
      queueMicrotask(() => opts.onError(new Error('storage closed')));
      return { cancel() {} };
    }
    return this.hub.watch(prefix, opts);
  }

  async compact(revision: number): Promise<void> {
    if (revision > this.rev) throw new FutureRevisionError(revision, this.rev);
    if (revision <= this.compacted) return;
    const touched = new Set<string>();
    const end = revision - this.logBase + 1;
    for (let i = 0; i < end; i++) touched.add(this.log[i].kv.key);
    this.log = this.log.slice(end);
    this.logBase = revision + 1;
    for (const key of touched) {
      const versions = this.versions.get(key);
      if (!versions) continue;
      // the newest version at or below the revision stays (unless a tombstone); older ones go
      let i = versions.length - 1;
      while (i >= 0 && versions[i].rev > revision) i--;
      if (i < 0) continue;
      const drop = versions[i].deleted ? i + 1 : i;
      if (drop === versions.length) {
        this.versions.delete(key);
        this.order.delete(key);
      } else if (drop > 0) versions.splice(0, drop);
    }
    this.compacted = revision;
  }

  async healthy(): Promise<boolean> {
    return !this.closed;
  }

  // ---------------------------------------------------------------------------------------------

  private apply(ev: StorageEvent, deleted: boolean, kv: KeyValue): Promise<KeyValue> {
    const key = kv.key;
    const version: Version = { rev: ev.revision, kv, deleted };
    const versions = this.versions.get(key);
    if (versions) versions.push(version);
    else {
      noteKey(key);
      const vs = [version];
      this.versions.set(key, vs);
      this.order.set(key, vs);
    }
    this.log.push(ev);
    this.pendingEvents.push(ev);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      queueMicrotask(() => this.flush());
    }
    return new Promise<KeyValue>((resolve) => this.pendingWrites.push({ kv, resolve }));
  }

  private flush(): void {
    this.flushScheduled = false;
    const events = this.pendingEvents;
    const writes = this.pendingWrites;
    if (events.length === 0) return;
    this.pendingEvents = [];
    this.pendingWrites = [];
    this.hub.deliver(events, events[events.length - 1].revision);
    for (let i = 0; i < writes.length; i++) writes[i].resolve(writes[i].kv);
  }

  private latest(key: string): KeyValue | undefined {
    const vs = this.versions.get(key);
    if (!vs) return undefined;
    const v = vs[vs.length - 1];
    return v.deleted ? undefined : v.kv;
  }

  private history(prefix: string, after: number, upto: number, max: number): StorageEvent[] {
    const out: StorageEvent[] = [];
    const start = Math.max(after + 1, this.logBase) - this.logBase;
    const end = Math.min(upto, this.rev) - this.logBase;
    for (let i = start; i <= end && out.length < max; i++) {
      const ev = this.log[i];
      if (ev.kv.key.startsWith(prefix)) out.push(ev);
    }
    return out;
  }

  /** visit every key in [low, prefixEnd(prefix)) that starts with prefix */
  private scan(low: string, prefix: string, fn: (key: string, versions: Version[]) => void): void {
    const high = prefixEnd(prefix);
    if (high !== undefined) {
      this.order.forRange(low, high, false, fn);
      return;
    }
    for (const [k, v] of this.order.entries(low)) {
      if (!k.startsWith(prefix)) break;
      fn(k, v);
    }
  }
}

function liveLatest(versions: Version[]): KeyValue | undefined {
  const v = versions[versions.length - 1];
  return v.deleted ? undefined : v.kv;
}

function liveAt(versions: Version[], rev: number): KeyValue | undefined {
  for (let i = versions.length - 1; i >= 0; i--) {
    const v = versions[i];
    if (v.rev <= rev) return v.deleted ? undefined : v.kv;
  }
  return undefined;
}
