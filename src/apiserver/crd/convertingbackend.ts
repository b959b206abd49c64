// The storage one version of a webhook-converted CRD sees (spec.conversion.strategy: Webhook): the
// shared Backend, with every value read converted into that version by the CRD's webhook, and
// every value written converted into the storage version. The version's ResourceStore and its
// watch cache sit on it unchanged: to them, objects are stored in their own version.
//
// Why at the storage boundary: a conversion is a call to another server, and the backend's methods
// are the asynchronous ones. The watch cache decodes each stored value once, synchronously, as it
// applies a commit's events; here a commit's events wait for their conversion (one review for all
// of them) and are passed on in order, with the progress reports behind them, so that a reader
// waiting for a revision waits for its conversion too. As in kube-apiserver, each served version
// converts each write once, in its own cache; a write is answered once this version has it.
//
// A value the webhook could not convert is passed on as a marker (conversionFailedValue) that the
// store reads as an object it cannot decode: a get or list of it answers 500 InternalError with
// the webhook's error, as kube-apiserver does, and the object is kept out of lists and watches.
// While such values are held, the cache loads everything again (with back-off, up to 30 s), so
// that a webhook that comes back makes them readable without a write.
import { parseJSON, stringifyJSON } from '../../codec/int64.js';
import { errors } from '../../machinery/errors.js';
import type { Backend, KeyValue, ListOptions, ListResult, StorageEvent, Watch, WatchOptions } from '../../storage/interface.js';
import { WrappingBackend } from '../../storage/wrapping.js';
import { conversionFailedValue } from '../registry/store.js';
import { ConversionFailedError, type WebhookConverter } from './conversion.js';

/** the most objects in one ConversionReview of a list */
const LIST_BATCH = 256;
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;
/** how long a write waits for its event to be converted before it is answered anyway */
const DELIVERY_WAIT_MS = 35_000;

export interface ConvertingBackendOptions {
  /** the version this backend serves, as an apiVersion */
  apiVersion: string;
  /** the CRD's storage version, as an apiVersion */
  storageAPIVersion: string;
  converter: WebhookConverter;
  /** a stored object's own version's defaults, applied before it is converted (kube-apiserver defaults what it reads) */
  defaults(obj: any): void;
  /** what the webhook returned, pruned to the schema of its version (unknown fields dropped) */
  prune(obj: any): void;
  /** some values could not be converted: load the cache again (the webhook may be back) */
  retry(): void;
}

export class ConvertingBackend extends WrappingBackend {
  /** values known to be in this version already (written by this backend), read without parsing */
  private readonly inVersion = new WeakSet<Uint8Array>();
  /** the highest revision every watch of this backend has passed on */
  private delivered = 0;
  private readonly deliveryWaiters: { rev: number; resolve: () => void }[] = [];
  private readonly watches = new Set<object>();
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = RETRY_FIRST_MS;
  private stopped = false;

  constructor(
    inner: Backend,
    private readonly o: ConvertingBackendOptions,
  ) {
    super(inner);
  }

  /** the shared backend is opened and closed by the server, not by a CRD's version */
  override async open(): Promise<void> {}
  override async close(): Promise<void> {}

  /** the CRD's version is no longer served: no more retries */
  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    for (const w of this.deliveryWaiters.splice(0)) w.resolve();
  }

  override async get(key: string): Promise<KeyValue | undefined> {
    const kv = await this.inner.get(key);
    return kv ? (await this.toVersionNow([kv]))[0] : undefined;
  }

  override async list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    const res = await this.inner.list(prefix, opts);
    const kvs: KeyValue[] = [];
    // (a webhook that cannot be reached fails the rest of the list without a call each: a load
    // waits for one timeout, not one per batch)
    let down: string | undefined;
    for (let i = 0; i < res.kvs.length; i += LIST_BATCH) {
      kvs.push(...(await this.toVersionNow(res.kvs.slice(i, i + LIST_BATCH), (m) => (down ??= m), down)));
    }
    return { ...res, kvs };
  }

  override async create(key: string, value: Uint8Array): Promise<KeyValue> {
    const kv = await this.inner.create(key, await this.toStorage(value));
    await this.deliveredUpTo(kv.modRevision);
    return kv;
  }

  override async update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KeyValue> {
    const kv = await this.inner.update(key, await this.toStorage(value), expectedModRevision);
    await this.deliveredUpTo(kv.modRevision);
    return kv;
  }

  override async delete(key: string, expectedModRevision?: number): Promise<KeyValue> {
    const kv = await this.inner.delete(key, expectedModRevision);
    await this.deliveredUpTo(kv.modRevision);
    return kv;
  }

  override watch(prefix: string, opts: WatchOptions): Watch {
    const token = {};
    this.watches.add(token);
    let chain: Promise<void> | undefined;
    let cancelled = false;
    const fail = (err: unknown) => {
      if (!cancelled) opts.onError(err instanceof Error ? err : new Error(String(err)));
    };
    // (in order: a step waits for the steps before it; with nothing waiting, it runs now. A step
    // that fails ends the watch: the cache restarts it)
    const step = (f: () => void | Promise<void>) => {
      if (!chain) {
        let r: void | Promise<void>;
        try {
          r = cancelled ? undefined : f();
        } catch (err) {
          fail(err);
          return;
        }
        if (!r) return;
        chain = r.catch(fail);
      } else chain = chain.then(() => (cancelled ? undefined : f())).catch(fail);
      const mine = chain;
      void mine.then(() => {
        if (chain === mine) chain = undefined;
      });
    };
    const inner = this.inner.watch(prefix, {
      afterRevision: opts.afterRevision,
      onEvents: (evs) =>
        step(() => {
          if (cancelled) return;
          const puts = evs.filter((e) => e.kv.value.length > 0);
          const converting = this.toVersionNow(puts.map((e) => e.kv));
          const pass = (kvs: KeyValue[]) => {
            if (cancelled) return;
            const out: StorageEvent[] = [];
            let j = 0;
            for (const e of evs) out.push(e.kv.value.length > 0 ? { type: e.type, kv: kvs[j++]!, revision: e.revision } : { type: e.type, kv: e.kv, revision: e.revision });
            opts.onEvents(out);
            this.passed(evs[evs.length - 1]!.revision);
          };
          if (Array.isArray(converting)) return pass(converting);
          return converting.then(pass);
        }),
      onProgress: (rev) =>
        step(() => {
          if (cancelled) return;
          opts.onProgress?.(rev);
          this.passed(rev);
        }),
      onError: (err) =>
        step(() => {
          if (!cancelled) opts.onError(err);
        }),
    });
    return {
      cancel: () => {
        cancelled = true;
        this.watches.delete(token);
        inner.cancel();
        // (a write waiting for this watch is answered: the cache is restarting)
        if (this.watches.size === 0) for (const w of this.deliveryWaiters.splice(0)) w.resolve();
      },
    };
  }

  // ---- conversion ----

  /**
   * the values in this version; synchronous (an array) when none needs the webhook. `unreachable`
   * hears of a call that failed for every value (the webhook is down); with `failWith`, values
   * that need the webhook fail with that message without a call.
   */
  private toVersionNow(kvs: KeyValue[], unreachable?: (message: string) => void, failWith?: string): KeyValue[] | Promise<KeyValue[]> {
    let parsed: (any | undefined)[] | undefined;
    for (let i = 0; i < kvs.length; i++) {
      const kv = kvs[i]!;
      if (this.inVersion.has(kv.value)) continue;
      const obj = parseStored(kv.value);
      if (obj === undefined || obj.apiVersion === this.o.apiVersion) continue;
      parsed ??= new Array(kvs.length);
      parsed[i] = obj;
    }
    if (!parsed) return kvs;
    return this.convertParsed(kvs, parsed, unreachable, failWith);
  }

  private async convertParsed(kvs: KeyValue[], parsed: (any | undefined)[], unreachable?: (message: string) => void, failWith?: string): Promise<KeyValue[]> {
    const idx: number[] = [];
    const objs: any[] = [];
    parsed.forEach((o, i) => {
      if (o === undefined) return;
      this.o.defaults(o);
      idx.push(i);
      objs.push(o);
    });
    const results = failWith !== undefined ? objs.map(() => new ConversionFailedError(failWith)) : await this.o.converter.convert(objs, this.o.apiVersion);
    const first = results[0];
    if (unreachable && first instanceof ConversionFailedError && results.every((r) => r === first)) unreachable(first.message);
    const out = kvs.slice();
    let failed = false;
    results.forEach((r, j) => {
      const kv = kvs[idx[j]!]!;
      let value: Uint8Array;
      if (r instanceof ConversionFailedError) {
        value = conversionFailedValue(r.message);
        failed = true;
      } else {
        this.o.prune(r);
        value = Buffer.from(stringifyJSON(r));
      }
      out[idx[j]!] = { key: kv.key, value, createRevision: kv.createRevision, modRevision: kv.modRevision };
    });
    if (failed) this.scheduleRetry();
    else this.retryMs = RETRY_FIRST_MS;
    return out;
  }

  /** a value to write, in the storage version; a value that cannot be converted fails the write */
  private async toStorage(value: Uint8Array): Promise<Uint8Array> {
    const obj = parseStored(value);
    if (obj === undefined || obj.apiVersion === this.o.storageAPIVersion) {
      if (this.o.apiVersion === this.o.storageAPIVersion) this.inVersion.add(value);
      return value;
    }
    const [r] = await this.o.converter.convert([obj], this.o.storageAPIVersion);
    if (r instanceof ConversionFailedError) throw errors.internal(new Error(r.message));
    // (kept in the form it is stored in: no resourceVersion, pruned to the storage version's schema)
    if (r.metadata) delete r.metadata.resourceVersion;
    this.o.prune(r);
    return Buffer.from(stringifyJSON(r));
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.stopped) return;
    const ms = this.retryMs;
    this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.stopped) this.o.retry();
    }, ms);
    this.retryTimer.unref?.();
  }

  // ---- writes answered once their event has passed ----

  private passed(rev: number): void {
    if (rev <= this.delivered) return;
    this.delivered = rev;
    if (this.deliveryWaiters.length === 0) return;
    const waiting = this.deliveryWaiters.splice(0);
    for (const w of waiting) {
      if (w.rev <= rev) w.resolve();
      else this.deliveryWaiters.push(w);
    }
  }

  private deliveredUpTo(rev: number): Promise<void> {
    if (rev <= this.delivered || this.watches.size === 0 || this.stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, DELIVERY_WAIT_MS);
      timer.unref?.();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.deliveryWaiters.push({ rev, resolve: done });
    });
  }
}

/** a stored value's object (undefined when it is not a JSON object: the store reports it) */
function parseStored(value: Uint8Array): any {
  if (value.length === 0 || value[0] !== 0x7b) return undefined;
  try {
    const o = parseJSON(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8'));
    return o !== null && typeof o === 'object' && !Array.isArray(o) ? o : undefined;
  } catch {
    return undefined;
  }
}
