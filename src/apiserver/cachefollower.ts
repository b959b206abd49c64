// A server-side loop that keeps something in line with stored objects (the FlowSchemas' Dangling
// conditions, the default ServiceCIDR) follows the stores' watch caches: each change of interest
// is followed by one run of `sync`, changes that come together sharing it, and a watch the cache
// ends (a resync) starts again, with a run for what it missed.
import type { CacheEntry } from '../storage/cacher.js';
import type { ResourceStore } from './registry/store.js';

export class CacheFollower {
  private watches: { stop(): void }[] = [];
  private pending?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly stores: ResourceStore[],
    private readonly sync: () => Promise<void>,
    private readonly onError: (e: unknown) => void,
    /** the changes that call for a run (all, when absent) */
    private readonly relevant: (e: CacheEntry) => boolean = () => true,
  ) {}

  start(): void {
    for (const st of this.stores) this.follow(st);
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.watches) w.stop();
    this.watches = [];
    if (this.pending) clearTimeout(this.pending);
  }

  private follow(st: ResourceStore): void {
    if (this.stopped) return;
    const w = st.cacher.watch({
      prefix: st.prefix,
      afterRevision: st.cacher.revision(),
      onEvent: (ev) => {
        if (this.relevant(ev.entry)) this.schedule();
      },
      onClose: () => {
        this.watches = this.watches.filter((x) => x !== w);
        if (this.stopped) return;
        setTimeout(() => {
          this.follow(st);
          this.schedule();
        }, 100).unref();
      },
    });
    this.watches.push(w);
  }

  /** one run after the changes of the next 20 ms */
  schedule(): void {
    if (this.pending || this.stopped) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.sync().catch(this.onError);
    }, 20);
    this.pending.unref();
  }
}
