// Feeding the authorizers from the API server's watch caches: a full list of a resource, then
// its events, synchronously as the cache applies them; a watch that ends (cache restart) is
// followed by a new list and watch.
import type { Cacher } from '../../storage/cacher.js';
import type { ChangeType } from './resolver.js';

/** what a ResourceStore offers (its key prefix and its watch cache) */
export interface FeedSource {
  readonly prefix: string;
  readonly cacher: Cacher;
}

export interface FeedSink {
  replace(objs: any[]): void;
  onChange(type: ChangeType, obj: any, old?: any): void;
}

/** list then watch `source` into `sink` until stopped */
export function feed(source: FeedSource, sink: FeedSink, opts: { relistDelayMs?: number; onError?: (err: unknown) => void } = {}): { stop(): void } {
  let stopped = false;
  let watch: { stop(): void } | undefined;
  let timer: NodeJS.Timeout | undefined;
  const start = () => {
    if (stopped) return;
    try {
      const l = source.cacher.list({ prefix: source.prefix });
      sink.replace(l.items.map((e) => e.obj));
      watch = source.cacher.watch({
        prefix: source.prefix,
        afterRevision: l.revision,
        onEvent: (ev) => sink.onChange(ev.type, ev.entry.obj, ev.prev?.obj),
        onClose: (err) => {
          watch = undefined;
          if (err) opts.onError?.(err);
          if (!stopped) timer = setTimeout(start, opts.relistDelayMs ?? 100);
        },
      });
    } catch (e) {
      opts.onError?.(e);
      if (!stopped) timer = setTimeout(start, opts.relistDelayMs ?? 100);
    }
  };
  start();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      watch?.stop();
    },
  };
}
