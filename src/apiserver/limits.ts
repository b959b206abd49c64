// The request chain's limits, with the semantics of kube-apiserver's generic filters:
//
// - in-flight limits (--max-requests-inflight, --max-mutating-requests-inflight): a request
//   over its kind's limit is refused at once with 429 and `Retry-After: 1`, in the plain-text
//   wording of Kubernetes' filter; long-running requests (watch, proxy, and the attach, exec,
//   log, portforward and proxy subresources) are not counted; members of system:masters are
//   never refused; 0 turns a limit off; the health endpoints are never limited (Kubernetes'
//   priority and fairness exempts them). Keelson has no flow schemas or priority levels: these
//   limits apply as kube-apiserver applies them with --enable-priority-and-fairness=false.
// - the request deadline (--request-timeout and the `timeout` query parameter, counted from the
//   request's arrival): a request that is not long-running and has not answered by its deadline
//   gets 504 with Kubernetes' Timeout Status; whatever the handler does afterwards is discarded,
//   and its write does not reach storage (the store checks it once validating admission is
//   over: WriteAdmission.deadline). The in-flight slot is held until the handler is done, as in
//   Kubernetes.
// - the storage size limit: a write larger than etcd accepts (--max-request-bytes, 1.5 MiB by
//   default; 2 MiB for its client) fails as kube-apiserver fails it, on every backend
//   (withStorageRequestLimit).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors, StatusError } from '../machinery/errors.js';
import { parseGoDuration } from '../codec/protobuf-special.js';
import { parseRequestInfo, type RequestInfo } from './requestinfo.js';
import type { UserInfo } from './authz.js';

// ---- long-running requests ----

const LONG_RUNNING_VERBS = new Set(['watch', 'proxy']);
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

/** kube-apiserver's long-running check: these requests have no deadline and take no in-flight slot */
export function isLongRunning(info: RequestInfo): boolean {
  if (LONG_RUNNING_VERBS.has(info.verb)) return true;
  if (info.isResourceRequest && LONG_RUNNING_SUBRESOURCES.has(info.subresource)) return true;
  return !info.isResourceRequest && info.path.startsWith('/debug/pprof/');
}

const READ_ONLY_VERBS = new Set(['get', 'list', 'watch']);

/** read-only requests and mutating ones are limited separately (a HEAD counts as mutating, as in Kubernetes) */
export function isMutating(info: RequestInfo): boolean {
  return !READ_ONLY_VERBS.has(info.verb);
}

// ---- the request's scope ----

/** what the chain knows of a request before it is authenticated */
export interface RequestScope {
  method: string;
  path: string;
  query: URLSearchParams;
  info: RequestInfo;
  longRunning: boolean;
  /**
   * `group/version/resource` of the request info, the key of the API server's table of
   * resources: made once per request line (see targetOf), so that the string, and the hash V8
   * keeps in it, serve every request of the line
   */
  gvr: string;
  /** when the request arrived, in milliseconds since the epoch (with microseconds) */
  receivedAt: number;
  /** the deadline of a request that is not long-running (absent when it has none) */
  deadline?: RequestDeadline;
  /** the audit annotations of the request's audit event (absent when it is not audited) */
  auditAnnotations?: Record<string, string>;
  /** milliseconds spent calling admission webhooks (the webhook plugins add to it; the SLI latency leaves it out) */
  webhookMs: number;
}

/** the current time in milliseconds since the epoch, with microseconds */
export function nowMicros(): number {
  return performance.timeOrigin + performance.now();
}

// the scope travels on the request under a non-enumerable symbol: a WeakMap entry per request
// costs the garbage collector more than the rest of this bookkeeping
const SCOPE = Symbol('request scope');

/** the request's scope, for the handlers (its deadline, its audit annotations) */
export function scopeOf(req: object): RequestScope | undefined {
  return (req as { [SCOPE]?: RequestScope })[SCOPE];
}

/** what a request's method and URL say, parsed once per distinct request line (see targetOf) */
interface Target {
  path: string;
  query: URLSearchParams;
  info: RequestInfo;
  longRunning: boolean;
  gvr: string;
}

// Clients repeat their request lines (a controller's creates, a poller's gets, kubectl's
// discovery), and parsing one (path, query, request info) cost a few µs and a dozen objects per
// request. The parses of the lines seen are kept, by method and URL, up to TARGETS_MAX lines of
// at most TARGET_URL_MAX characters (then the cache starts over); the request info is frozen, as
// it is shared by every request of that line (and the query is only read).
const TARGETS = new Map<string, Map<string, Target>>();
const TARGETS_MAX = 1024;
const TARGET_URL_MAX = 512;
let targetCount = 0;

function targetOf(method: string, url: string): Target {
  let byURL = TARGETS.get(method);
  const hit = byURL?.get(url);
  if (hit) return hit;
  const qi = url.indexOf('?');
  const path = qi < 0 ? url : url.slice(0, qi);
  const query = new URLSearchParams(qi < 0 ? '' : url.slice(qi + 1));
  const info = parseRequestInfo(method, path, query);
  Object.freeze(info.parts);
  const t: Target = { path, query, info: Object.freeze(info), longRunning: isLongRunning(info), gvr: `${info.apiGroup}/${info.apiVersion}/${info.resource}` };
  // (a long line, a big selector say, is rarely repeated: not kept, so the cache stays small)
  if (url.length > TARGET_URL_MAX) return t;
  if (++targetCount > TARGETS_MAX) {
    TARGETS.clear();
    targetCount = 1;
    byURL = undefined;
  }
  if (!byURL) TARGETS.set(method, (byURL = new Map()));
  byURL.set(url, t);
  return t;
}

export function requestScope(req: IncomingMessage): RequestScope {
  const receivedAt = nowMicros();
  const method = req.method ?? 'GET';
  const t = targetOf(method, req.url ?? '/');
  const scope: RequestScope = { method, path: t.path, query: t.query, info: t.info, longRunning: t.longRunning, gvr: t.gvr, receivedAt, webhookMs: 0 };
  (req as { [SCOPE]?: RequestScope })[SCOPE] = scope;
  return scope;
}

// ---- in-flight limits ----

export interface InFlightMetrics {
  /** the highest number of requests of each kind in flight since the last report */
  inflight(readOnly: number, mutating: number): void;
}

/** a slot taken by a request: release it once, when the request is done */
export type Release = () => void;

const NOOP: Release = () => {};

/**
 * kube-apiserver's max-in-flight filter: two pools of slots, read-only (get, list) and
 * mutating (everything else), each of a fixed size; a request that finds its pool full is
 * refused at once (no queueing), unless its user is in system:masters.
 */
export class InFlightLimiter {
  private readOnly = 0;
  private mutating = 0;
  private readOnlyMark = 0;
  private mutatingMark = 0;
  private timer?: NodeJS.Timeout;

  constructor(
    readonly readOnlyLimit: number,
    readonly mutatingLimit: number,
    private readonly metrics?: InFlightMetrics,
  ) {
    if (metrics) {
      // the gauge shows the highest use of each pool in the last second, as Kubernetes' watermark
      this.timer = setInterval(() => {
        metrics.inflight(this.readOnlyMark, this.mutatingMark);
        this.readOnlyMark = this.readOnly;
        this.mutatingMark = this.mutating;
      }, 1000);
      this.timer.unref();
    }
  }

  get enabled(): boolean {
    return this.readOnlyLimit > 0 || this.mutatingLimit > 0;
  }

  /** the in-flight counts now: [read-only, mutating] */
  get current(): [number, number] {
    return [this.readOnly, this.mutating];
  }

  /**
   * Take a slot for a request (long-running requests take none). Undefined when the request's
   * pool is full: the caller answers 429 (writeTooManyRequests).
   */
  acquire(scope: Pick<RequestScope, 'info' | 'longRunning'>, user: UserInfo | undefined): Release | undefined {
    if (scope.longRunning) return NOOP;
    const mutating = isMutating(scope.info);
    const limit = mutating ? this.mutatingLimit : this.readOnlyLimit;
    if (limit <= 0) return NOOP;
    const cur = mutating ? this.mutating : this.readOnly;
    if (cur >= limit) {
      // a system:masters user is the cluster's super-admin (or its loopback client): always answered
      if (user?.groups.includes('system:masters')) return NOOP;
      return undefined;
    }
    if (mutating) {
      this.mutating++;
      if (this.mutating > this.mutatingMark) this.mutatingMark = this.mutating;
    } else {
      this.readOnly++;
      if (this.readOnly > this.readOnlyMark) this.readOnlyMark = this.readOnly;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (mutating) this.mutating--;
      else this.readOnly--;
    };
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

/** Kubernetes' answer to a request over the in-flight limit: plain text, as http.Error writes it */
export function writeTooManyRequests(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  const body = 'Too many requests, please try again later.\n';
  res.statusCode = 429;
  res.setHeader('Retry-After', '1');
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

// ---- request deadlines ----

/**
 * The deadline of a request: --request-timeout, or the `timeout` query parameter when it is
 * shorter (a Go duration; an unparsable one is a 400). 0 (no --request-timeout) means none
 * unless the parameter gives one. Returns milliseconds, 0 for no deadline.
 */
export function requestTimeoutMs(query: URLSearchParams, maximumMs: number): number {
  const v = query.get('timeout');
  if (v === null || v === '') return maximumMs;
  let ns: bigint;
  try {
    ns = parseGoDuration(v, 'time');
  } catch (e) {
    throw errors.badRequest(`invalid timeout specified in the request URL - ${(e as Error).message}`);
  }
  const ms = Number(ns / 1_000_000n);
  if (ns > 0n && (maximumMs <= 0 || ms < maximumMs)) return Math.max(ms, 1);
  return maximumMs;
}

/** the Status kube-apiserver's timeout filter writes (encoded as it is, without kind and apiVersion) */
export const TIMEOUT_STATUS = {
  metadata: {},
  status: 'Failure',
  message: 'Timeout: request did not complete within the allotted timeout',
  reason: 'Timeout',
  details: {},
  code: 504,
};

/** the error of a write that reaches the store after its request's deadline */
export function deadlineExceeded(): StatusError {
  return errors.timeout('request did not complete within requested timeout - context deadline exceeded', 0);
}

function noopThis(this: unknown): unknown {
  return this;
}

/**
 * The pending deadlines of one timeout length, in the order they fall due, with one timer, for
 * the first. Requests mostly share one timeout (--request-timeout), so a new deadline falls due
 * after those set before it: it is appended, and a request that ends is unlinked. A Node timer per
 * request (a Timeout object with its async ids, its timer list's insert and removal) cost about a
 * microsecond of every request.
 */
class DeadlineQueue {
  constructor(private readonly ms: number) {}
  head: RequestDeadline | undefined = undefined;
  tail: RequestDeadline | undefined = undefined;
  private timer: NodeJS.Timeout | undefined = undefined;

  add(d: RequestDeadline): void {
    // (in order of due time: one set out of turn, by a request whose scope was made earlier, walks back)
    let after = this.tail;
    while (after !== undefined && after.due > d.due) after = after.prev;
    d.prev = after;
    d.next = after ? after.next : this.head;
    if (d.next) d.next.prev = d;
    else this.tail = d;
    if (after) after.next = d;
    else this.head = d;
    if (this.timer === undefined || this.head === d) this.arm();
  }

  remove(d: RequestDeadline): void {
    if (d.prev) d.prev.next = d.next;
    else if (this.head === d) this.head = d.next;
    else return; // (not queued)
    if (d.next) d.next.prev = d.prev;
    else this.tail = d.prev;
    d.prev = d.next = undefined;
    // (the timer stays set for a head that has gone: it finds the new head when it fires)
    if (this.head === undefined) {
      if (this.timer !== undefined) {
        clearTimeout(this.timer);
        this.timer = undefined;
      }
      // (clients choose timeouts: an empty queue is not kept once there are many)
      if (deadlineQueues.size > MAX_IDLE_QUEUES) deadlineQueues.delete(this.ms);
    }
  }

  private arm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = this.head === undefined ? undefined : setTimeout(this.run, Math.max(0, this.head.due - nowMicros()));
  }

  private readonly run = (): void => {
    this.timer = undefined;
    const now = nowMicros();
    for (let d = this.head; d !== undefined && d.due <= now; d = this.head) {
      this.remove(d);
      d.fire();
    }
    if (this.head !== undefined && this.timer === undefined) this.arm();
  };
}

/** the queues of deadlines, by timeout length (ms) */
const deadlineQueues = new Map<number, DeadlineQueue>();
/** queues kept while empty, at most (the usual timeouts: --request-timeout, kubectl's) */
const MAX_IDLE_QUEUES = 8;

/**
 * A request's deadline. When it passes before the response is complete, the client gets 504
 * with TIMEOUT_STATUS (or, when the response had begun, the connection is reset), and every
 * later write of the handler to the response is dropped.
 */
export class RequestDeadline {
  timedOut = false;
  /** when it falls due (nowMicros' clock) */
  readonly due: number;
  /** its neighbours in its queue */
  prev: RequestDeadline | undefined = undefined;
  next: RequestDeadline | undefined = undefined;
  private readonly queue: DeadlineQueue;

  /** `timeoutMs` from `startedAt` (nowMicros' clock: the request's arrival) */
  constructor(
    private readonly res: ServerResponse,
    timeoutMs: number,
    startedAt: number,
    private readonly onTimeout: (headersSent: boolean) => void,
  ) {
    this.due = startedAt + timeoutMs;
    let q = deadlineQueues.get(timeoutMs);
    if (q === undefined) deadlineQueues.set(timeoutMs, (q = new DeadlineQueue(timeoutMs)));
    this.queue = q;
    q.add(this);
  }

  /** the request is done (its response closed): the deadline no longer applies */
  cancel(): void {
    this.queue.remove(this);
  }

  /** a write for this request must not reach storage any more */
  check(): void {
    if (this.timedOut) throw deadlineExceeded();
  }

  /** the deadline has passed (DeadlineQueue) */
  fire(): void {
    const res = this.res;
    const proto = Object.getPrototypeOf(res) as ServerResponse;
    if (res.writableEnded || res.destroyed) return;
    this.timedOut = true;
    const started = res.headersSent;
    this.onTimeout(started);
    if (started) {
      // too late for a status: end the response abruptly, as Go's handler abort does
      res.destroy();
      return;
    }
    for (const h of res.getHeaderNames()) if (h !== 'audit-id') res.removeHeader(h);
    const body = JSON.stringify(TIMEOUT_STATUS) + '\n';
    // the prototype's methods: the handler's hooks (warnings) do not apply to this answer
    (proto.writeHead as (code: number, headers: Record<string, string | number>) => void).call(res, 504, {
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
    });
    (proto.end as (chunk: string) => void).call(res, body);
    // the handler goes on until it notices; what it writes now goes nowhere
    const r = res as any;
    r.writeHead = noopThis;
    r.setHeader = noopThis;
    r.removeHeader = noopThis;
    r.appendHeader = noopThis;
    r.flushHeaders = () => {};
    r.write = (...args: unknown[]) => {
      const cb = args.find((a) => typeof a === 'function') as (() => void) | undefined;
      if (cb) process.nextTick(cb);
      return true;
    };
    r.end = function (this: unknown, ...args: unknown[]) {
      const cb = args.find((a) => typeof a === 'function') as (() => void) | undefined;
      if (cb) process.nextTick(cb);
      return this;
    };
    r.destroy = noopThis;
  }
}

// ---- the storage size limit ----

/** etcd's default --max-request-bytes (1.5 MiB): the largest request its server accepts */
export const MAX_STORAGE_REQUEST_BYTES = 1.5 * 1024 * 1024;
/** the etcd client's largest message (2 MiB): bigger requests fail before they are sent */
export const MAX_STORAGE_CALL_SEND_BYTES = 2 * 1024 * 1024;
/** what a write request carries besides its key and value (the compare and the revision) */
const REQUEST_OVERHEAD_BYTES = 32;

/**
 * The storage error of a write too large for etcd. kube-apiserver passes etcd's error through
 * unchanged: it is not a Status, so the client gets 500 with etcd's message and no reason
 * (after kube-apiserver retried the write without managedFields).
 */
export class StorageRequestTooLargeError extends StatusError {
  constructor(size: number) {
    super(
      500,
      '',
      size > MAX_STORAGE_CALL_SEND_BYTES
        ? `rpc error: code = ResourceExhausted desc = trying to send message larger than max (${size} vs. ${MAX_STORAGE_CALL_SEND_BYTES})`
        : 'etcdserver: request is too large',
    );
  }
}

/** the size of a write's request to storage when it is too large for etcd, else 0 */
export function oversizedWrite(key: string, value: Uint8Array): number {
  const size = Buffer.byteLength(key) * 2 + value.length + REQUEST_OVERHEAD_BYTES;
  return size > MAX_STORAGE_REQUEST_BYTES ? size : 0;
}

/**
 * The storage with etcd's request size limit, whatever the backend: every backend refuses the
 * writes etcd would refuse, so a cluster behaves the same on SQLite, in memory and on etcd.
 */
export function withStorageRequestLimit<B extends { create(key: string, value: Uint8Array): Promise<unknown>; update(key: string, value: Uint8Array, rev: number): Promise<unknown> }>(backend: B): B {
  const create = backend.create.bind(backend);
  const update = backend.update.bind(backend);
  const overrides: Record<string, unknown> = {
    create: (key: string, value: Uint8Array) => {
      const size = oversizedWrite(key, value);
      return size ? Promise.reject(new StorageRequestTooLargeError(size)) : create(key, value);
    },
    update: (key: string, value: Uint8Array, rev: number) => {
      const size = oversizedWrite(key, value);
      return size ? Promise.reject(new StorageRequestTooLargeError(size)) : update(key, value, rev);
    },
  };
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(backend, {
    get(target, p) {
      if (p in overrides) return overrides[p as string];
      const v = Reflect.get(target, p, target);
      if (typeof v !== 'function') return v;
      let f = bound.get(p);
      if (f === undefined) bound.set(p, (f = (v as (...a: unknown[]) => unknown).bind(target)));
      return f;
    },
  });
}
