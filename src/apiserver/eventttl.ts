// Events expire (kube-apiserver's --event-ttl, default one hour). Kubernetes writes every Event
// under an etcd lease of that length, renewed by each write, so an Event not written for an hour
// is gone: removed from storage whatever its finalizers, with a DELETED watch event of its last
// state. Keelson's stores have no leases; this keeps the time of each Event's last write (from
// the watch cache's events) and deletes an Event once that time is older than the TTL, if it has
// not been written since (the delete names the revision it saw). Core/v1 and events.k8s.io/v1
// Events are the same stored objects, so one store's cache serves both.
//
// The time of a write made before this process started is not known: it is taken as the latest
// time the object records (its managed fields', its creation's, and an Event's own timestamps),
// never later than now, so an Event left from before a restart expires one TTL after that time.
import type { ResourceStore } from './registry/store.js';
import type { CacheEntry } from '../storage/cacher.js';
import { ConflictError, KeyNotFoundError } from '../storage/interface.js';

export class EventExpiry {
  /** storage key -> time of the last write seen (ms) */
  private readonly written = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private watch: { stop(): void } | undefined;
  private stopped = false;
  private sweeping = false;

  constructor(
    private readonly store: ResourceStore,
    readonly ttlMs: number,
    private readonly onError: (e: unknown) => void,
  ) {}

  start(): void {
    this.follow();
    // a tenth of the TTL, between a quarter second and ten seconds: an Event outlives its TTL by at most that
    const every = Math.min(10_000, Math.max(250, Math.floor(this.ttlMs / 10)));
    this.timer = setInterval(() => void this.sweep(), every);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.watch?.stop();
  }

  /** every cached Event with its last write's time, then the cache's events from that revision on */
  private follow(): void {
    if (this.stopped) return;
    const { cacher, prefix } = this.store;
    const now = Date.now();
    const listed = cacher.list({ prefix });
    this.written.clear();
    for (const e of listed.items) this.written.set(e.key, Math.min(now, recordedWriteTime(e)));
    this.watch = cacher.watch({
      prefix,
      afterRevision: listed.revision,
      onEvent: (ev) => {
        if (ev.type === 'DELETED') this.written.delete(ev.entry.key);
        else this.written.set(ev.entry.key, Date.now());
      },
      // the cache started over (a resync): start over with it
      onClose: (err) => {
        if (err && !this.stopped) setImmediate(() => this.follow());
      },
    });
  }

  /** delete every Event not written for the TTL (one sweep at a time) */
  async sweep(): Promise<void> {
    if (this.sweeping || this.stopped) return;
    this.sweeping = true;
    try {
      const deadline = Date.now() - this.ttlMs;
      const { cacher, backend } = this.store;
      for (const [key, at] of this.written) {
        if (at > deadline) continue;
        const e = cacher.get(key);
        if (!e) continue;
        try {
          await backend.delete(key, e.modRevision);
        } catch (err) {
          // written again or deleted meanwhile: the cache's event says which
          if (!(err instanceof ConflictError) && !(err instanceof KeyNotFoundError)) throw err;
        }
      }
    } catch (e) {
      this.onError(e);
    } finally {
      this.sweeping = false;
    }
  }
}

/** the latest time an Event records of itself (ms; 0 when none parses) */
function recordedWriteTime(e: CacheEntry): number {
  const o = e.obj ?? {};
  const times: unknown[] = [o.metadata?.creationTimestamp, o.lastTimestamp, o.firstTimestamp, o.eventTime, o.series?.lastObservedTime];
  for (const m of Array.isArray(o.metadata?.managedFields) ? o.metadata.managedFields : []) times.push(m?.time);
  let latest = 0;
  for (const t of times) {
    if (typeof t !== 'string') continue;
    const ms = Date.parse(t);
    if (ms > latest) latest = ms;
  }
  return latest;
}
