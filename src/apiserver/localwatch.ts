// Metadata informers fed straight from the watch cache, for a controller that runs inside the API
// server's process (the garbage collector of `keelson server`).
//
// The garbage collector holds a graph of every object of every resource, so over HTTP it costs a
// second watch event per write: the event's PartialObjectMetadata encoded, framed, sent through TLS
// to the same process, decrypted, parsed and applied (bench/HISTORY.md: 1.2x the server's CPU per
// create, 0.87x the creates rate). The source here gives the informer the same lists and events
// from the cache itself: each event's metadata is the cache's own object (decoded already, shared,
// read only), and nothing is encoded or parsed. The informer above it (list, watch from the list's
// resourceVersion, 410 and relist) is the one every controller uses; the rules of the watch are the
// cache's, as for a watch over HTTP: events after the resourceVersion asked for, in order, and 410
// once that version left the history.
//
// What it does not do: selectors, authorization, audit, priority and fairness (the embedded
// controller manager is system:masters, and its watches are not audited in kube-apiserver either).
import type { InformerSource, InformerWatch } from '../client/informer.js';
import type { GroupVersionResource, KubeList, KubeObject, ListOptions, WatchEvent, WatchOptions } from '../client/resources.js';
import { StatusError } from '../machinery/errors.js';
import type { CacheEntry, CacheEvent } from '../storage/cacher.js';
import { TooOldError } from '../storage/cacher.js';
import type { ResourceStore } from './registry/store.js';

/** finds the store of a group's resource (any served version: metadata is the same in all) */
export type StoreFinder = (group: string, resource: string) => ResourceStore | undefined;

const META_API_VERSION = 'meta.k8s.io/v1';

/**
 * What a metadata-only watch or list carries for an object: its metadata without managedFields,
 * as kube-controller-manager's informers trim them (TrimManagedFields). The informer holds it for
 * as long as the object lives; the cache itself lets a quiet object's decoded form go (CacheEntry
 * freeze), and its managed fields, often most of its metadata, go with it.
 */
function partial(e: CacheEntry): KubeObject {
  // (peek: a frozen entry of a list is decoded for this reading only, not kept decoded)
  const m = e.peek()?.metadata;
  let metadata = m ?? {};
  if (m?.managedFields !== undefined) {
    const { managedFields: _, ...rest } = m;
    metadata = rest;
  }
  return { apiVersion: META_API_VERSION, kind: 'PartialObjectMetadata', metadata } as KubeObject;
}

function notServed(gvr: GroupVersionResource): StatusError {
  return new StatusError(404, 'NotFound', `the server could not find the requested resource (${gvr.group ? `${gvr.resource}.${gvr.group}` : gvr.resource})`);
}

/** a source of PartialObjectMetadata lists and watches of one resource, from its watch cache */
export class LocalMetadataSource implements InformerSource<KubeObject> {
  constructor(
    private readonly find: StoreFinder,
    readonly gvr: GroupVersionResource,
    readonly ns = '',
  ) {}

  namespace(ns: string): LocalMetadataSource {
    return new LocalMetadataSource(this.find, this.gvr, ns);
  }

  private store(opts: ListOptions): { store: ResourceStore; prefix: string } {
    if (opts.labelSelector || opts.fieldSelector) throw new StatusError(400, 'BadRequest', 'selectors are not supported by the in-process metadata source');
    const store = this.find(this.gvr.group, this.gvr.resource);
    if (!store) throw notServed(this.gvr);
    return { store, prefix: this.ns && store.kind.namespaced ? store.scopePrefix(this.ns) : store.prefix };
  }

  /** the latest state (which is "not older than" any resourceVersion this source handed out) */
  async listAll(opts: ListOptions & { signal?: AbortSignal } = {}): Promise<KubeList<KubeObject>> {
    const { store, prefix } = this.store(opts);
    const res = store.cacher.list({ prefix });
    const items = new Array<KubeObject>(res.items.length);
    for (let i = 0; i < res.items.length; i++) items[i] = partial(res.items[i]);
    return { apiVersion: META_API_VERSION, kind: 'PartialObjectMetadataList', metadata: { resourceVersion: String(res.revision) }, items };
  }

  async watch(opts: WatchOptions & { signal?: AbortSignal } = {}): Promise<InformerWatch<KubeObject>> {
    const { store, prefix } = this.store(opts);
    const after = opts.resourceVersion ? Number(opts.resourceVersion) : store.cacher.revision();
    if (!Number.isSafeInteger(after) || after < 0) throw new StatusError(400, 'BadRequest', `invalid resourceVersion: ${opts.resourceVersion}`);
    const w = new LocalWatch();
    try {
      w.handle = store.cacher.watch({
        prefix,
        afterRevision: after,
        onEvent: (ev) => w.push(ev),
        onClose: (err) => w.end(err ?? 'server'),
      });
    } catch (e) {
      if (e instanceof TooOldError) throw new StatusError(410, 'Expired', `too old resource version: ${e.requested} (${e.oldest})`);
      throw e;
    }
    if (opts.timeoutSeconds && opts.timeoutSeconds > 0) {
      w.timer = setTimeout(() => w.end('server'), opts.timeoutSeconds * 1000);
      w.timer.unref?.();
    }
    if (opts.signal) {
      if (opts.signal.aborted) w.stop();
      else opts.signal.addEventListener('abort', () => w.stop(), { once: true });
    }
    return w;
  }
}

/**
 * One watch: the cache calls push() synchronously as it dispatches (the history's replay inside
 * watch() included); the informer reads the events in order from its `for await`.
 */
class LocalWatch implements InformerWatch<KubeObject> {
  endedBy?: 'server' | 'stopped' | Error;
  handle: { stop(): void } | undefined;
  timer: NodeJS.Timeout | undefined;
  private queue: WatchEvent<KubeObject>[] = [];
  private wake: (() => void) | undefined;
  private done = false;

  push(ev: CacheEvent): void {
    if (this.done) return;
    this.queue.push({ type: ev.type, object: partial(ev.entry) });
    this.notify();
  }

  /** no more events: the events queued before are still read, unless the reader stopped */
  end(by: 'server' | 'stopped' | Error): void {
    if (this.done) return;
    this.done = true;
    this.endedBy = by;
    this.handle?.stop();
    if (this.timer) clearTimeout(this.timer);
    this.notify();
  }

  stop(): void {
    this.end('stopped');
  }

  private notify(): void {
    const w = this.wake;
    if (w) {
      this.wake = undefined;
      w();
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<KubeObject>> {
    try {
      for (;;) {
        if (this.queue.length > 0) {
          const batch = this.queue;
          this.queue = [];
          for (let i = 0; i < batch.length; i++) {
            if (this.endedBy === 'stopped') return;
            yield batch[i];
          }
          continue;
        }
        if (this.done) return;
        await new Promise<void>((r) => (this.wake = r));
      }
    } finally {
      this.stop();
    }
  }
}
