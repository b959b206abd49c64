// Informers: a reflector (list, then watch from the list's resourceVersion) feeding a local cache
// and event handlers, as client-go's SharedIndexInformer does.
//
// The reflector:
//   - lists (page by page) at resourceVersion "0" the first time (served from the watch cache),
//     later at the last resourceVersion it saw; when the server says that version is too old
//     (410 Expired/Gone) or too new (504), it lists again at "" (a consistent read);
//   - watches from the list's resourceVersion with bookmarks, for a random 5-10 minutes
//     (timeoutSeconds), and watches again from the last seen resourceVersion whenever a watch
//     ends or its connection drops;
//   - lists again when a watch answers 410 (the history it needs was compacted), replacing the
//     cache: objects that vanished meanwhile are reported as deletes of DeletedFinalStateUnknown;
//   - backs off (800 ms doubling to 30 s, jittered) after failures.
//
// Handlers run synchronously in the order events arrive; they should only enqueue keys.

import { jitter, sleep } from './flowcontrol.js';
import { nopLogger, type Logger } from './log.js';
import { isConnectionRefused, isResourceExpired, isTooLargeResourceVersion, isTooManyRequests } from './rest.js';
import { gvrString, objectKey, type GroupVersionResource, type KubeList, type KubeObject, type ListOptions, type WatchEvent, type WatchOptions } from './resources.js';

/**
 * Where an informer lists and watches: a ResourceClient (the API over HTTP), or a source inside
 * the API server's process (src/apiserver/localwatch.ts) for an embedded controller.
 */
export interface InformerSource<T extends KubeObject> {
  readonly gvr: GroupVersionResource;
  /** '' for all namespaces or a cluster-scoped resource */
  readonly ns: string;
  namespace(ns: string): InformerSource<T>;
  listAll(opts: ListOptions & { signal?: AbortSignal; pageSize?: number; metadataOnly?: boolean }): Promise<KubeList<T>>;
  watch(opts: WatchOptions & { signal?: AbortSignal }): Promise<InformerWatch<T>>;
}

/** An open watch of an InformerSource (the Watch of a ResourceClient is one) */
export interface InformerWatch<T extends KubeObject> extends AsyncIterable<WatchEvent<T>> {
  stop(): void;
  /** why it ended: 'server' (a clean end), 'stopped', or the error that broke it */
  readonly endedBy?: 'server' | 'stopped' | Error;
}

/** The last known state of an object deleted while the informer was not watching. */
export class DeletedFinalStateUnknown<T> {
  constructor(
    readonly key: string,
    readonly obj: T,
  ) {}
}

export interface ResourceEventHandler<T> {
  /** a new object; `isInInitialList` is true for the objects of the first list */
  add?(obj: T, isInInitialList: boolean): void;
  /** a changed object (on a resync, old and new are the same object) */
  update?(oldObj: T, newObj: T): void;
  /** a deleted object, or a tombstone when the deletion was missed */
  delete?(obj: T | DeletedFinalStateUnknown<T>): void;
}

export interface InformerOptions {
  /** '' (default) for all namespaces or a cluster-scoped resource */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** default resync period of handlers in ms (0: none) */
  resyncPeriodMs?: number;
  /** list page size (default 500; lists at a known resourceVersion are not paged, so the watch cache serves them) */
  pageSize?: number;
  /** ask for BOOKMARK events (default true, as client-go) */
  allowWatchBookmarks?: boolean;
  /** watches last between this and twice this (default 5 min) */
  minWatchTimeoutMs?: number;
  /** first backoff after a failure (default 800 ms), doubling up to maxBackoffMs (30 s) */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  log?: Logger;
  /** name in logs (default: the resource) */
  name?: string;
  /** hold the objects' metadata only (PartialObjectMetadata lists and watches: client-go's metadata informer) */
  metadataOnly?: boolean;
  /**
   * drop each object's metadata.managedFields before it is held and handed to the handlers, as
   * kube-controller-manager's informers do (a transform with TrimManagedFields): controllers never
   * read them, and they are often the larger part of an object's metadata
   */
  trimManagedFields?: boolean;
}

/** (set to undefined rather than deleted: a delete would turn the object's properties into a slow dictionary) */
function trimManagedFields(o: any): void {
  const m = o?.metadata;
  if (m !== null && typeof m === 'object' && m.managedFields !== undefined && !Object.isFrozen(m)) m.managedFields = undefined;
}

interface HandlerEntry<T> {
  h: ResourceEventHandler<T>;
  resyncMs: number;
  timer?: NodeJS.Timeout;
}

/** Counters for observing the reflector (tests, metrics). */
export interface ReflectorStats {
  lists: number;
  watches: number;
  /** watches or lists that ended with 410 Expired/Gone */
  expired: number;
  events: number;
}

export class Informer<T extends KubeObject = KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly handlers: HandlerEntry<T>[] = [];
  private synced = false;
  private syncWaiters: ((ok: boolean) => void)[] = [];
  private running = false;
  private abort = new AbortController();
  private loopDone: Promise<void> = Promise.resolve();
  private lastRV = '';
  private lastRVUnavailable = false;
  private readonly log: Logger;
  readonly name: string;
  readonly stats: ReflectorStats = { lists: 0, watches: 0, expired: 0, events: 0 };

  constructor(
    readonly client: InformerSource<T>,
    readonly opts: InformerOptions = {},
  ) {
    this.log = opts.log ?? nopLogger;
    this.name = opts.name ?? gvrString(client.gvr);
    if (opts.namespace !== undefined) this.client = client.namespace(opts.namespace);
  }

  // ── handlers ─────────────────────────────────────────────────────────────

  /**
   * Registers handlers. A handler added after the informer synced first gets an add for every
   * cached object. `resyncPeriodMs` (default: the informer's) re-delivers every object as an
   * update periodically.
   */
  addEventHandler(h: ResourceEventHandler<T>, resyncPeriodMs = this.opts.resyncPeriodMs ?? 0): { remove(): void } {
    const entry: HandlerEntry<T> = { h, resyncMs: resyncPeriodMs > 0 ? resyncPeriodMs : 0 };
    this.handlers.push(entry);
    if (this.synced) for (const o of this.items.values()) this.call(() => h.add?.(o, false));
    if (this.running) this.startResync(entry);
    return {
      remove: () => {
        const i = this.handlers.indexOf(entry);
        if (i >= 0) this.handlers.splice(i, 1);
        if (entry.timer) clearInterval(entry.timer);
      },
    };
  }

  private call(f: () => void): void {
    try {
      f();
    } catch (e) {
      this.log.error(e, 'Event handler failed', { informer: this.name });
    }
  }

  private emitAdd(o: T, initial: boolean): void {
    for (const e of this.handlers) this.call(() => e.h.add?.(o, initial));
  }

  private emitUpdate(old: T, o: T): void {
    for (const e of this.handlers) this.call(() => e.h.update?.(old, o));
  }

  private emitDelete(o: T | DeletedFinalStateUnknown<T>): void {
    for (const e of this.handlers) this.call(() => e.h.delete?.(o));
  }

  private startResync(e: HandlerEntry<T>): void {
    if (!e.resyncMs || e.timer) return;
    e.timer = setInterval(() => {
      if (!this.synced) return;
      for (const o of this.items.values()) this.call(() => e.h.update?.(o, o));
    }, e.resyncMs);
    e.timer.unref?.();
  }

  // ── the cache ────────────────────────────────────────────────────────────

  /** The cached object with this key (`namespace/name` or `name`). */
  get(key: string): T | undefined {
    return this.items.get(key);
  }

  getByName(namespace: string, name: string): T | undefined {
    return this.items.get(namespace ? `${namespace}/${name}` : name);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  /** The resourceVersion of the last list or event seen. */
  lastSyncResourceVersion(): string {
    return this.lastRV;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves true once synced; false if the informer stops, the signal aborts or the timeout passes first. */
  waitForSync(opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    // (a signal aborted already would never call its listener: a controller started as the manager stops)
    if (opts.signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      let t: NodeJS.Timeout | undefined;
      const done = (ok: boolean) => {
        if (t) clearTimeout(t);
        opts.signal?.removeEventListener('abort', onAbort);
        const i = this.syncWaiters.indexOf(done);
        if (i >= 0) this.syncWaiters.splice(i, 1);
        resolve(ok);
      };
      const onAbort = () => done(false);
      this.syncWaiters.push(done);
      if (opts.timeoutMs !== undefined) t = setTimeout(() => done(false), opts.timeoutMs);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private markSynced(): void {
    if (this.synced) return;
    this.synced = true;
    const w = this.syncWaiters;
    this.syncWaiters = [];
    for (const f of w) f(true);
  }

  // ── running ──────────────────────────────────────────────────────────────

  /** Starts the reflector (once). */
  run(): void {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    for (const e of this.handlers) this.startResync(e);
    this.loopDone = this.loop().catch((e) => this.log.error(e, 'Reflector stopped unexpectedly', { informer: this.name }));
  }

  /** Stops the reflector and closes its watch. The cache keeps its contents. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.abort.abort(new Error('informer stopped'));
    for (const e of this.handlers) {
      if (e.timer) clearInterval(e.timer);
      e.timer = undefined;
    }
    const w = this.syncWaiters;
    this.syncWaiters = [];
    for (const f of w) f(false);
    await this.loopDone;
  }

  private get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  private async loop(): Promise<void> {
    const initial = this.opts.initialBackoffMs ?? 800;
    const max = this.opts.maxBackoffMs ?? 30_000;
    let backoff = initial;
    let lastFailure = 0;
    while (!this.stopped) {
      let failed = false;
      try {
        await this.listAndWatch();
      } catch (e) {
        if (this.stopped) break;
        failed = true;
        this.log.warn('Failed to list and watch', { informer: this.name, err: (e as Error).message });
      }
      if (this.stopped) break;
      const now = Date.now();
      // the backoff resets after two minutes without failures (client-go's backoff manager)
      if (!failed || now - lastFailure > 120_000) backoff = initial;
      if (failed) lastFailure = now;
      try {
        await sleep(jitter(backoff, 1), this.abort.signal);
      } catch {
        break;
      }
      if (failed) backoff = Math.min(max, backoff * 2);
    }
  }

  private relistResourceVersion(): string {
    if (this.lastRVUnavailable) return '';
    return this.lastRV === '' ? '0' : this.lastRV;
  }

  private async listAndWatch(): Promise<void> {
    await this.listOnce();
    this.markSynced();
    // watch until a watch needs a relist (410) or fails in a way a new watch cannot fix
    const minTimeout = this.opts.minWatchTimeoutMs ?? 300_000;
    for (;;) {
      if (this.stopped) return;
      const timeoutSeconds = Math.max(1, Math.floor((minTimeout * (1 + Math.random())) / 1000));
      let w;
      try {
        this.stats.watches++;
        w = await this.client.watch({
          resourceVersion: this.lastRV,
          allowWatchBookmarks: this.opts.allowWatchBookmarks ?? true,
          timeoutSeconds,
          labelSelector: this.opts.labelSelector,
          fieldSelector: this.opts.fieldSelector,
          metadataOnly: this.opts.metadataOnly,
          signal: this.abort.signal,
        });
      } catch (e) {
        if (this.stopped) return;
        if (isResourceExpired(e)) {
          this.stats.expired++;
          this.log.v(4).info('Watch expired, listing again', { informer: this.name, err: (e as Error).message });
          return;
        }
        if (isConnectionRefused(e) || isTooManyRequests(e)) {
          await sleep(jitter(this.opts.initialBackoffMs ?? 800, 1), this.abort.signal).catch(() => undefined);
          continue;
        }
        throw e;
      }
      const started = Date.now();
      let n = 0;
      try {
        for await (const ev of w) {
          n++;
          this.stats.events++;
          this.apply(ev.type, ev.object as T);
        }
      } catch (e) {
        if (this.stopped) return;
        if (isResourceExpired(e)) {
          this.stats.expired++;
          this.log.v(4).info('Watch expired, listing again', { informer: this.name, err: (e as Error).message });
          return;
        }
        if (isTooManyRequests(e)) {
          await sleep(jitter(this.opts.initialBackoffMs ?? 800, 1), this.abort.signal).catch(() => undefined);
          continue;
        }
        this.log.warn('Watch ended with an error', { informer: this.name, err: (e as Error).message });
        return;
      } finally {
        w.stop();
      }
      if (this.stopped) return;
      // a watch closed at once without events: something is wrong; back off and list again
      if (n === 0 && Date.now() - started < 1000 && w.endedBy !== 'server') {
        throw new Error(`very short watch: ${w.endedBy instanceof Error ? w.endedBy.message : 'closed'}`);
      }
      if (w.endedBy instanceof Error) this.log.v(4).info('Watch connection dropped, resuming', { informer: this.name, resourceVersion: this.lastRV, err: w.endedBy.message });
    }
  }

  private async listOnce(): Promise<void> {
    for (;;) {
      const rv = this.relistResourceVersion();
      this.stats.lists++;
      try {
        const list = await this.client.listAll({
          resourceVersion: rv,
          labelSelector: this.opts.labelSelector,
          fieldSelector: this.opts.fieldSelector,
          // client-go's reflector pages only consistent lists ("") and "0" (which the server
          // serves whole from its cache anyway): a list at a resourceVersion with a limit would
          // be an exact list, possibly older than the cache can serve
          pageSize: rv !== '' && rv !== '0' ? 0 : (this.opts.pageSize ?? 500),
          metadataOnly: this.opts.metadataOnly,
          signal: this.abort.signal,
        });
        this.lastRVUnavailable = false;
        // (a list's items carry no kind: given the list's, as client-go's scheme would know it, for
        // whatever names them, such as an event's involvedObject)
        const kind = typeof list.kind === 'string' && list.kind.endsWith('List') ? list.kind.slice(0, -4) : undefined;
        const items = kind ? (list.items ?? []).map((o: any) => (o && typeof o === 'object' && o.kind === undefined ? { apiVersion: list.apiVersion, kind, ...o } : o)) : (list.items ?? []);
        this.replace(items, list.metadata?.resourceVersion ?? '');
        return;
      } catch (e) {
        if (!this.stopped && rv !== '' && (isResourceExpired(e) || isTooLargeResourceVersion(e))) {
          // the version we asked for is gone (or not there yet): a consistent list at once
          if (isResourceExpired(e)) this.stats.expired++;
          this.lastRVUnavailable = true;
          continue;
        }
        throw e;
      }
    }
  }

  private replace(items: T[], rv: string): void {
    const fresh = new Map<string, T>();
    const trim = this.opts.trimManagedFields === true;
    for (const o of items) {
      if (trim) trimManagedFields(o);
      fresh.set(objectKey(o), o);
    }
    const initial = !this.synced;
    for (const [k, old] of this.items) {
      if (!fresh.has(k)) {
        this.items.delete(k);
        this.emitDelete(new DeletedFinalStateUnknown(k, old));
      }
    }
    for (const [k, o] of fresh) {
      const old = this.items.get(k);
      this.items.set(k, o);
      if (!old) this.emitAdd(o, initial);
      else if (old.metadata?.resourceVersion !== o.metadata?.resourceVersion) this.emitUpdate(old, o);
    }
    this.lastRV = rv;
  }

  private apply(type: string, o: T): void {
    const rv = o?.metadata?.resourceVersion;
    switch (type) {
      case 'ADDED':
      case 'MODIFIED': {
        if (this.opts.trimManagedFields === true) trimManagedFields(o);
        const k = objectKey(o);
        const old = this.items.get(k);
        this.items.set(k, o);
        if (old) this.emitUpdate(old, o);
        else this.emitAdd(o, false);
        break;
      }
      case 'DELETED': {
        const k = objectKey(o);
        this.items.delete(k);
        this.emitDelete(o);
        break;
      }
      case 'BOOKMARK':
        break;
      default:
        this.log.warn('Unexpected watch event', { informer: this.name, type });
        return;
    }
    if (rv) this.lastRV = rv;
  }
}

/**
 * Shares one informer per resource (and namespace/selector) between controllers, as client-go's
 * SharedInformerFactory does.
 */
export class InformerFactory {
  private readonly informers = new Map<string, Informer<any>>();
  private started = false;

  constructor(
    private readonly defaults: InformerOptions = {},
  ) {}

  /** The shared informer for the client's resource (created on first use). */
  informerFor<T extends KubeObject>(client: InformerSource<T>, opts: InformerOptions = {}): Informer<T> {
    const o = { ...this.defaults, ...opts };
    const key = `${gvrString(client.gvr)}|${o.namespace ?? client.ns}|${o.labelSelector ?? ''}|${o.fieldSelector ?? ''}${o.metadataOnly ? '|metadata' : ''}`;
    let inf = this.informers.get(key) as Informer<T> | undefined;
    if (!inf) {
      inf = new Informer<T>(client, o);
      this.informers.set(key, inf);
      if (this.started) inf.run();
    }
    return inf;
  }

  /** Stops one informer and forgets it (its resource is gone): a later informerFor makes a new one. */
  async remove(inf: Informer<any>): Promise<void> {
    for (const [k, v] of this.informers) if (v === inf) this.informers.delete(k);
    await inf.stop();
  }

  /** Starts every informer made so far, and any made later. */
  start(): void {
    this.started = true;
    for (const i of this.informers.values()) i.run();
  }

  async waitForCacheSync(opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<boolean> {
    const r = await Promise.all([...this.informers.values()].map((i) => i.waitForSync(opts)));
    return r.every(Boolean);
  }

  async stop(): Promise<void> {
    this.started = false;
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }
}
