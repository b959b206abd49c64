// Serving a watch: a long-lived chunked response of events (ADDED, MODIFIED, DELETED, BOOKMARK,
// ERROR) in JSON lines or length-prefixed Protobuf frames. Events come from the watch cache; an
// event's bytes are encoded once and shared by every watcher that receives it unchanged.
import { stringifyJSON } from '../codec/int64.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CacheEntry, CacheEvent } from '../storage/cacher.js';
import { TooOldError } from '../storage/cacher.js';
import type { OutputChoice } from '../codec/negotiate.js';
import { encodeEnvelope, encodeMessage, encodeWatchEventFrame } from '../codec/protobuf.js';
import { encodeCBOR, encodeCBORValue, encodeCBORWatchEvent, CBOR_SEQ_MEDIA_TYPE } from '../codec/cbor.js';
import { errors, type StatusError } from '../machinery/errors.js';
import { contentTypeOf, entryCBOR, entryEnvelope, entryJSON, partialObjectMetadata, POM_TYPE, STATUS_TYPE, TABLE_TYPE, tableJSON, tableOf, type TableOptions } from './encode.js';
import type { ResourceStore } from './registry/store.js';
import { observeIn, type WatchEventSeries } from './metrics.js';
import { chunkFramed, H1Response } from './http1.js';

export interface WatchParams {
  store: ResourceStore;
  /** key prefix of the watched scope (a namespace or the whole resource) */
  prefix: string;
  filter?: (e: CacheEntry) => boolean;
  /** start with synthetic ADDED events of the current state (rv unset or "0", or sendInitialEvents) */
  initialEvents: boolean;
  /** the revision to start after (when not sending initial events), or the minimum revision the initial state must reach */
  afterRevision: number;
  /** send the initial-events-end bookmark (streaming list) */
  initialEventsEndBookmark: boolean;
  /** the empty list that bookmark carries in `kubernetes.io/initial-events-list-blueprint` (base64) */
  listBlueprint?: Uint8Array;
  /** the watch fails at once: this ERROR event, then the end (the apiserver's error watcher) */
  error?: StatusError;
  allowBookmarks: boolean;
  timeoutMs: number;
  choice: OutputChoice;
  table?: TableOptions;
}

/** Watches stream until they time out, the client goes away, or the server shuts down. */
export class WatchRegistry {
  private readonly active = new Set<() => void>();
  bookmarkIntervalMs = 60_000;
  /** apiserver_watch_events_total and _sizes: every event a watch sends is counted in its series */
  events?: { watchEventsOf(group: string, version: string, kind: string): WatchEventSeries };

  /** end every open watch (graceful shutdown) */
  closeAll(): void {
    for (const close of [...this.active]) close();
  }

  get size(): number {
    return this.active.size;
  }

  serve(req: IncomingMessage, res: ServerResponse, p: WatchParams): void {
    const { store, choice } = p;
    const kind = store.kind;
    const cacher = store.cacher;
    const proto = choice.encoding === 'protobuf';
    const cbor = choice.encoding === 'cbor';
    const plain = !choice.transform;
    // memoized per event object: watchers that get the same event share its frame
    const memoKey = proto ? 'pb' : cbor ? 'cbor' : 'json';
    const chunkKey = `${memoKey}/chunk`;

    res.statusCode = 200;
    // a CBOR watch is a CBOR sequence (application/cbor-seq), one data item per event
    res.setHeader('Content-Type', proto ? `${contentTypeOf(choice)};stream=watch` : cbor ? CBOR_SEQ_MEDIA_TYPE : contentTypeOf(choice));
    res.setHeader('Cache-Control', 'no-cache, private');
    res.setHeader('Transfer-Encoding', 'chunked');
    if (req.method === 'HEAD') {
      // the headers of the stream and no stream: a HEAD answer carries no body, and one left open
      // would hold its connection, and every request sent after it on that connection, forever
      res.end();
      return;
    }
    res.flushHeaders();

    let closed = false;
    let lastRV = 0;
    let tableHeadersSent = false;
    // a plain event is its entry's cached bytes; a frozen entry is decoded only for a Table or metadata
    const objectBytes = (entry: CacheEntry): Uint8Array => {
      if (plain) return proto ? entryEnvelope(entry, kind) : cbor ? entryCBOR(entry, kind) : entryJSON(entry);
      const obj = entry.obj;
      if (choice.transform === 'Table') {
        // only the first event of the stream carries the column definitions, as in Kubernetes
        const meta = { resourceVersion: obj.metadata?.resourceVersion ?? '' };
        const opts = { ...(p.table ?? { includeObject: 'Metadata' as const }), noHeaders: tableHeadersSent };
        tableHeadersSent = true;
        // (JSON: the entry's kept row, shared by every watcher of the event)
        const kept = proto || cbor ? undefined : tableJSON(kind, [entry], meta, opts, choice.transformVersion);
        if (kept !== undefined) return kept;
        const t = tableOf(kind, [obj], meta, opts, choice.transformVersion);
        return proto ? encodeEnvelope(t.apiVersion, 'Table', encodeMessage(TABLE_TYPE, t)) : cbor ? encodeCBORValue(t) : Buffer.from(stringifyJSON(t));
      }
      const m = partialObjectMetadata(obj, choice.transformVersion);
      return proto ? encodeEnvelope(m.apiVersion, m.kind, encodeMessage(POM_TYPE, m)) : cbor ? encodeCBOR(POM_TYPE, m) : Buffer.from(stringifyJSON(m));
    };
    const frame = (type: string, obj: Uint8Array): Uint8Array => {
      if (proto) return encodeWatchEventFrame(type, obj);
      if (cbor) return encodeCBORWatchEvent(type, obj);
      const head = Buffer.from(`{"type":"${type}","object":`);
      return Buffer.concat([head, obj, Buffer.from('}\n')]);
    };
    const sent = this.events?.watchEventsOf(kind.group, kind.version, kind.kind);
    // an HTTP/1.1 watch (H1Response) takes an event's frame in chunk framing made once for all its watchers
    const h1 = (res as unknown) instanceof H1Response ? (res as unknown as H1Response) : undefined;
    /** `memo`: the event's memoized frames, where b is one; its chunk framing is kept there too */
    const write = (b: Uint8Array, memo?: Map<string, Uint8Array>) => {
      if (closed) return;
      if (sent) {
        sent.count++;
        observeIn(sent.sizes, b.length);
      }
      if (memo !== undefined && h1?.preframed) {
        let c = memo.get(chunkKey);
        if (c === undefined) memo.set(chunkKey, (c = chunkFramed(b)));
        h1.writePreframed(c);
      } else res.write(b);
      // a watcher that cannot keep up is ended, as Kubernetes does, rather than buffering without bound
      if (res.writableLength > 64 * 1024 * 1024) close();
    };
    const onEvent = (ev: CacheEvent) => {
      if (closed) return;
      let b: Uint8Array | undefined;
      let memo: Map<string, Uint8Array> | undefined;
      if (plain) {
        memo = (ev as any)._frames as Map<string, Uint8Array> | undefined;
        b = memo?.get(memoKey);
        if (!b) {
          b = frame(ev.type, objectBytes(ev.entry));
          memo ??= (ev as any)._frames = new Map<string, Uint8Array>();
          memo.set(memoKey, b);
        }
      } else {
        b = frame(ev.type, objectBytes(ev.entry));
      }
      if (ev.revision > lastRV) lastRV = ev.revision;
      write(b, memo);
    };
    const bookmark = (rv: number, initialEnd: boolean) => {
      const meta: any = { resourceVersion: String(rv) };
      if (initialEnd) {
        meta.annotations = { 'k8s.io/initial-events-end': 'true' };
        if (p.listBlueprint) meta.annotations['kubernetes.io/initial-events-list-blueprint'] = Buffer.from(p.listBlueprint).toString('base64');
      }
      let obj: any;
      if (choice.transform === 'PartialObjectMetadata') obj = { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${choice.transformVersion}`, metadata: meta };
      else obj = { kind: kind.kind, apiVersion: store.apiVersion, metadata: meta };
      let bytes: Uint8Array;
      const type = choice.transform === 'PartialObjectMetadata' ? POM_TYPE : kind.type;
      if (proto) bytes = encodeEnvelope(obj.apiVersion, obj.kind, encodeMessage(type, obj));
      else if (cbor) bytes = encodeCBOR(type, obj);
      else bytes = Buffer.from(stringifyJSON(obj));
      write(frame('BOOKMARK', bytes));
    };
    const errorEvent = (err: StatusError) => {
      const st = err.toStatus();
      const bytes = proto ? encodeEnvelope('v1', 'Status', encodeMessage(STATUS_TYPE, st)) : cbor ? encodeCBOR(STATUS_TYPE, st) : Buffer.from(stringifyJSON(st));
      write(frame('ERROR', bytes));
    };

    let watcher: { stop(): void } | undefined;
    let timer: NodeJS.Timeout | undefined;
    let bookmarkTimer: NodeJS.Timeout | undefined;
    const close = () => {
      if (closed) return;
      closed = true;
      this.active.delete(close);
      watcher?.stop();
      if (timer) clearTimeout(timer);
      if (bookmarkTimer) clearInterval(bookmarkTimer);
      res.end();
    };
    // the cache ended this watch (its storage watch failed): tell the client, then end
    const onClose = (err?: Error) => {
      if (closed) return;
      if (err) errorEvent(err instanceof TooOldError ? errors.expired(err.message) : errors.internal(err));
      close();
    };
    this.active.add(close);
    req.on('close', close);
    res.on('close', close);
    res.on('error', close);

    if (p.error) {
      errorEvent(p.error);
      close();
      return;
    }
    try {
      if (p.initialEvents) {
        const { items, revision } = cacher.list({ prefix: p.prefix, filter: p.filter });
        for (const e of items) {
          write(frame('ADDED', objectBytes(e)));
        }
        lastRV = revision;
        watcher = cacher.watch({ prefix: p.prefix, afterRevision: revision, filter: p.filter, onEvent, onClose });
        if (p.initialEventsEndBookmark) bookmark(revision, true);
      } else {
        lastRV = p.afterRevision;
        watcher = cacher.watch({ prefix: p.prefix, afterRevision: p.afterRevision, filter: p.filter, onEvent, onClose });
      }
    } catch (err) {
      if (err instanceof TooOldError) {
        errorEvent(errors.expired(err.message));
      } else {
        errorEvent(errors.internal(err));
      }
      close();
      return;
    }
    if (closed) return;
    if (p.allowBookmarks) {
      bookmarkTimer = setInterval(() => {
        const rv = Math.max(lastRV, cacher.revision());
        lastRV = rv;
        bookmark(rv, false);
      }, this.bookmarkIntervalMs);
      bookmarkTimer.unref();
    }
    if (p.timeoutMs > 0) {
      timer = setTimeout(() => {
        if (p.allowBookmarks) bookmark(Math.max(lastRV, cacher.revision()), false);
        close();
      }, p.timeoutMs);
      timer.unref();
    }
  }
}
