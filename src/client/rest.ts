// The REST client every component uses to talk to the API server (client-go's rest.RESTClient):
// HTTPS with a keep-alive agent, JSON bodies, client-go's User-Agent, typed errors that carry
// the server's Status, client-side QPS/burst rate limiting, request timeouts, and retries only
// where client-go retries:
//   - a response of 429 or 5xx that carries `Retry-After: <seconds>` is retried after that many
//     seconds, whatever the verb (the body is a buffer, so it can be sent again: client-go does
//     the same since its bodies are seekable), up to maxRetries (10) times;
//   - a GET whose connection was reset or closed before a response is retried;
//   - a 401 is retried once after refreshing credentials from an exec plugin.
// Nothing else is retried here: callers (controllers) own their retry policy.

import type { TokenSource } from './satoken.js';
import { parseJSON, stringifyJSON } from '../codec/int64.js';
import https from 'node:https';
import http from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { basename } from 'node:path';
import { createGunzip, gunzipSync } from 'node:zlib';
import { StatusError, type Status, type StatusDetails } from '../machinery/errors.js';
import { authHeaders, loadKubeconfig, tlsOptions, type ConnectionConfig, type ExecCredentialProvider, type LoadOptions } from './kubeconfig.js';
import { sleep, TokenBucket } from './flowcontrol.js';

/** client-go's defaults for a rest.Config without QPS/Burst. */
export const DEFAULT_QPS = 5;
export const DEFAULT_BURST = 10;
export const DEFAULT_MAX_RETRIES = 10;

/** A client certificate that can be replaced; the clients given it follow (RESTConfig.certSource). */
export class RotatingClientCert {
  private readonly listeners = new Set<() => void>();

  constructor(
    public cert: string | Buffer,
    public key: string | Buffer,
  ) {}

  set(cert: string | Buffer, key: string | Buffer): void {
    this.cert = cert;
    this.key = key;
    for (const l of [...this.listeners]) l();
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}

export interface RESTConfig {
  /** Base URL, scheme included (`https://127.0.0.1:6443`); a path prefix is kept. */
  server: string;
  /** CA bundle (PEM) to verify the server; undefined means the system roots. */
  ca?: string | Buffer;
  /** Client certificate and key (PEM). */
  cert?: string | Buffer;
  key?: string | Buffer;
  /**
   * A client certificate that changes (the kubelet's, rotated: nodeagent/certmanager.ts); it
   * overrides cert and key, and when it changes the client's connections are closed, so that the
   * next requests (and the watches made again) present the new one, as client-go's kubelet does.
   */
  certSource?: RotatingClientCert;
  /** TLS server name (SNI and verification) when it differs from the URL's host. */
  servername?: string;
  insecureSkipTLSVerify?: boolean;
  /** Headers sent with every request (Authorization, Impersonate-*). */
  headers?: Record<string, string | string[]>;
  /** Defaults to client-go's form for an unknown binary: `<argv1>/v0.0.0 (<os>/<arch>) kubernetes/$Format`. */
  userAgent?: string;
  /** Client-side rate limit; QPS <= 0 means client-go's default (5), Infinity disables it. */
  qps?: number;
  /** Burst of the rate limit; <= 0 means the default (10). */
  burst?: number;
  /** A limiter to share between clients (overrides qps/burst); null disables limiting. */
  rateLimiter?: TokenBucket | null;
  /** Timeout of each non-streaming request in ms, sent as `?timeout=` as client-go does; 0: none. */
  timeoutMs?: number;
  /** Retries after Retry-After answers or resets (default 10). */
  maxRetries?: number;
  /** Token source: an exec credential plugin, or a service account's tokens (refreshed after a 401). */
  execProvider?: ExecCredentialProvider | TokenSource;
  /** Don't ask for gzip-compressed responses. */
  disableCompression?: boolean;
  /** Sockets per host of the keep-alive agent (default: unlimited; watches each hold one). */
  maxSockets?: number;
  /**
   * Called with every HTTP response's head (any status, before retries are decided), e.g. to
   * print the server's `Warning` headers or log requests as kubectl does at -v=6.
   */
  onResponse?: (info: ResponseInfo) => void;
  /** Called when a request gets no response (connection refused, reset, TLS, timeout). */
  onRequestError?: (info: { verb: string; url: string; error: Error; elapsedMs: number }) => void;
}

/** What onResponse sees of a response. */
export interface ResponseInfo {
  verb: string;
  /** the full URL requested */
  url: string;
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  elapsedMs: number;
  requestHeaders: Record<string, string | string[] | number>;
}

// ── errors ──────────────────────────────────────────────────────────────────

const GENERIC: Record<number, [string, string]> = {
  400: ['BadRequest', 'the server rejected our request for an unknown reason'],
  401: ['Unauthorized', 'the server has asked for the client to provide credentials'],
  403: ['Forbidden', 'the server does not allow access to the requested resource'],
  404: ['NotFound', 'the server could not find the requested resource'],
  405: ['MethodNotAllowed', 'the server does not allow this method on the requested resource'],
  406: ['NotAcceptable', 'the server was unable to respond with a content type that the client supports'],
  409: ['Conflict', 'the server reported a conflict'],
  410: ['Gone', 'the server reported that the requested resource is gone'],
  413: ['RequestEntityTooLarge', 'the server rejected the request because it is too large'],
  415: ['UnsupportedMediaType', 'the server was unable to accept the content type of the request'],
  422: ['Invalid', 'the server rejected our request due to an error in our request'],
  429: ['TooManyRequests', 'the server has received too many requests and has asked us to try again later'],
  500: ['InternalError', 'an error on the server has prevented the request from succeeding'],
  503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
  504: ['Timeout', 'the server was unable to return a response in the time allotted, but may still be processing the request'],
};

/**
 * An error answer of the API server: the Status it sent (or one made from the HTTP status code
 * when the body was not a Status, as client-go's NewGenericServerResponse does).
 */
export class APIError extends StatusError {
  constructor(
    /** the Status as sent (or synthesized) */
    readonly status: Status,
    /** HTTP method and path of the request */
    readonly verb: string,
    readonly path: string,
    /** seconds from a Retry-After header or details.retryAfterSeconds */
    readonly retryAfterSeconds?: number,
  ) {
    super(status.code, status.reason ?? '', status.message ?? '', status.details);
    this.name = 'APIError';
    if (status.metadata && 'continue' in status.metadata && status.metadata.continue) this.listMeta = { continue: status.metadata.continue };
  }

  static fromResponse(verb: string, path: string, code: number, headers: IncomingHttpHeaders, body: Buffer): APIError {
    const retryAfter = parseRetryAfter(headers['retry-after']);
    let st: Status | undefined;
    const ct = String(headers['content-type'] ?? '');
    if (body.length && (ct.includes('json') || body[0] === 0x7b)) {
      try {
        const o = JSON.parse(body.toString('utf8'));
        if (o && typeof o === 'object' && o.kind === 'Status' && typeof o.code === 'number') st = o as Status;
      } catch {
        st = undefined;
      }
    }
    if (!st || st.code === 0) {
      const [reason, msg] = GENERIC[code] ?? (code >= 500 ? GENERIC[500]! : ['', `the server responded with the status code ${code} but did not return more information`]);
      let message = msg;
      const text = body.toString('utf8').trim();
      if (text && code >= 500) message = `an error on the server (${JSON.stringify(text.slice(0, 512))}) has prevented the request from succeeding`;
      // (client-go adds what was asked for: "(get configmaps c1)", "(list deployments.apps)")
      const target = resourceOfPath(path);
      if (target) message += ` (${verb.toLowerCase()} ${target.resource}${target.name ? ` ${target.name}` : ''})`;
      const details: StatusDetails = { causes: [{ reason: 'UnexpectedServerResponse', message: text.slice(0, 512) }] };
      if (retryAfter !== undefined) details.retryAfterSeconds = retryAfter;
      st = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, details, code };
    }
    return new APIError(st, verb, path, retryAfter ?? st.details?.retryAfterSeconds);
  }
}

/**
 * The resource (with its group: `deployments.apps`) and name a REST path names, as the request
 * builder of client-go knows them; undefined for a path that names no resource (discovery, /x).
 */
function resourceOfPath(path: string): { resource: string; name?: string } | undefined {
  const segs = path.split('?')[0]!.split('/').filter(Boolean).map((x) => {
    try {
      return decodeURIComponent(x);
    } catch {
      return x;
    }
  });
  let group = '';
  let rest: string[];
  if (segs[0] === 'api' && segs.length >= 2) rest = segs.slice(2);
  else if (segs[0] === 'apis' && segs.length >= 3) {
    group = segs[1]!;
    rest = segs.slice(3);
  } else return undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  if (rest.length === 0) return undefined;
  return { resource: group ? `${rest[0]}.${group}` : rest[0]!, name: rest[1] };
}

function reasonOf(e: unknown): string | undefined {
  return e instanceof StatusError ? e.reason : undefined;
}
function codeOf(e: unknown): number | undefined {
  return e instanceof StatusError ? e.code : undefined;
}
export const isNotFound = (e: unknown): boolean => reasonOf(e) === 'NotFound' || (reasonOf(e) === '' && codeOf(e) === 404);
export const isAlreadyExists = (e: unknown): boolean => reasonOf(e) === 'AlreadyExists';
export const isConflict = (e: unknown): boolean => reasonOf(e) === 'Conflict' || (reasonOf(e) === '' && codeOf(e) === 409);
export const isInvalid = (e: unknown): boolean => reasonOf(e) === 'Invalid' || (reasonOf(e) === '' && codeOf(e) === 422);
export const isForbidden = (e: unknown): boolean => reasonOf(e) === 'Forbidden' || (reasonOf(e) === '' && codeOf(e) === 403);
export const isMethodNotSupported = (e: unknown): boolean => reasonOf(e) === 'MethodNotAllowed' || (reasonOf(e) === '' && codeOf(e) === 405);
export const isTooManyRequests = (e: unknown): boolean => reasonOf(e) === 'TooManyRequests' || codeOf(e) === 429;
/** 410 Gone or reason Expired: a watch or continue token older than the compacted revision. */
export const isResourceExpired = (e: unknown): boolean => reasonOf(e) === 'Expired' || reasonOf(e) === 'Gone' || codeOf(e) === 410;
/** 504 "Too large resource version": the server has not caught up with the requested revision. */
export const isTooLargeResourceVersion = (e: unknown): boolean =>
  codeOf(e) === 504 && !!(e as StatusError).details?.causes?.some((c) => c.reason === 'ResourceVersionTooLarge' || /too large resource version/i.test(c.message ?? ''));

/** A transport failure (no HTTP response): connection refused, reset, TLS, timeout. */
export class TransportError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly verb: string,
    readonly path: string,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}

export const isConnectionRefused = (e: unknown): boolean => e instanceof TransportError && e.code === 'ECONNREFUSED';

export function parseRetryAfter(v: string | string[] | undefined): number | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  if (s === undefined || !/^\s*\d+\s*$/.test(s)) return undefined;
  const n = Number(s);
  return n >= 0 ? n : undefined;
}

// ── user agent ──────────────────────────────────────────────────────────────

const GOARCH: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };

/** client-go's DefaultKubernetesUserAgent for a binary whose version is not known. */
export function defaultUserAgent(): string {
  const bin = basename(process.argv[1] ?? 'node').replace(/\.[cm]?js$/, '') || 'node';
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  return `${bin}/v0.0.0 (${os}/${GOARCH[process.arch] ?? process.arch}) kubernetes/$Format`;
}

/** Go's time.Duration.String() for whole milliseconds (`32s`, `1m0s`, `1.5s`, `250ms`). */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  let s = ms / 1000;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  const sec = `${Number(s.toFixed(3))}s`;
  if (h) return `${h}h${m}m${sec}`;
  if (m) return `${m}m${sec}`;
  return sec;
}

// ── requests ────────────────────────────────────────────────────────────────

export type QueryValue = string | number | boolean | readonly string[] | undefined | null;

export interface RequestOptions {
  method: string;
  /** absolute path (`/api/v1/namespaces`), joined to the server URL's own path */
  path: string;
  query?: Record<string, QueryValue> | URLSearchParams;
  /** a Buffer or string is sent as is; anything else is sent as JSON */
  body?: unknown;
  contentType?: string;
  /** default `application/json` */
  accept?: string;
  headers?: Record<string, string>;
  /** overrides the config's timeout (0: none) */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface StreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** the (decompressed) body */
  body: NodeJS.ReadableStream & AsyncIterable<Buffer>;
  /** closes the connection */
  close(): void;
}

const RETRYABLE_ERR_CODES = new Set(['ECONNRESET', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE', 'ECONNABORTED']);

export class RESTClient {
  readonly config: Readonly<RESTConfig>;
  readonly base: URL;
  readonly rateLimiter: TokenBucket | null;
  readonly userAgent: string;
  private agent: https.Agent | http.Agent;
  private unsubscribe?: () => void;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;

  constructor(cfg: RESTConfig) {
    this.config = { ...cfg };
    this.base = new URL(cfg.server);
    if (this.base.protocol !== 'https:' && this.base.protocol !== 'http:') throw new Error(`unsupported server URL scheme: ${cfg.server}`);
    if (cfg.rateLimiter !== undefined) this.rateLimiter = cfg.rateLimiter;
    else {
      const qps = cfg.qps !== undefined && cfg.qps > 0 ? cfg.qps : DEFAULT_QPS;
      const burst = cfg.burst !== undefined && cfg.burst > 0 ? cfg.burst : DEFAULT_BURST;
      this.rateLimiter = qps === Infinity ? null : new TokenBucket(qps, burst);
    }
    this.userAgent = cfg.userAgent || defaultUserAgent();
    this.timeoutMs = cfg.timeoutMs ?? 0;
    this.maxRetries = cfg.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.agent = this.makeAgent();
    const src = cfg.certSource;
    if (src && this.base.protocol === 'https:') {
      this.unsubscribe = src.onChange(() => {
        const old = this.agent;
        this.agent = this.makeAgent();
        old.destroy();
      });
    }
  }

  private makeAgent(): https.Agent | http.Agent {
    const cfg = this.config;
    const common = { keepAlive: true, maxSockets: cfg.maxSockets ?? Infinity, scheduling: 'lifo' as const };
    return this.base.protocol === 'https:'
      ? new https.Agent({
          ...common,
          ca: cfg.ca,
          cert: cfg.certSource?.cert ?? cfg.cert,
          key: cfg.certSource?.key ?? cfg.key,
          servername: cfg.servername,
          rejectUnauthorized: !cfg.insecureSkipTLSVerify,
        })
      : new http.Agent(common);
  }

  /** A client for the connection resolved from a kubeconfig. */
  static fromConnection(conn: ConnectionConfig, extra: Partial<RESTConfig> = {}): RESTClient {
    return new RESTClient(restConfigFromConnection(conn, extra));
  }

  /** Loads kubeconfig with kubectl's rules (see kubeconfig.ts) and builds a client for it. */
  static async fromKubeconfig(opts: LoadOptions = {}, extra: Partial<RESTConfig> = {}): Promise<RESTClient> {
    return RESTClient.fromConnection(await loadKubeconfig(opts), extra);
  }

  /** Closes idle keep-alive connections (open watches end when their streams are closed). */
  close(): void {
    this.unsubscribe?.();
    this.agent.destroy();
  }

  private url(path: string, query?: RequestOptions['query'], timeoutMs?: number): string {
    const basePath = this.base.pathname.replace(/\/+$/, '');
    const u = new URL(this.base.origin + basePath + (path.startsWith('/') ? path : '/' + path));
    if (query instanceof URLSearchParams) query.forEach((v, k) => u.searchParams.append(k, v));
    else if (query) {
      for (const [k, v] of Object.entries(query)) {
        if (v === undefined || v === null || v === '') continue;
        if (Array.isArray(v)) for (const x of v) u.searchParams.append(k, x);
        else u.searchParams.set(k, String(v));
      }
    }
    if (timeoutMs && timeoutMs > 0 && !u.searchParams.has('timeout')) u.searchParams.set('timeout', goDuration(timeoutMs));
    return u.pathname + u.search;
  }

  private async headersFor(o: RequestOptions, body: Buffer | undefined): Promise<Record<string, string | string[] | number>> {
    const h: Record<string, string | string[] | number> = {
      'User-Agent': this.userAgent,
      Accept: o.accept ?? 'application/json, */*',
      ...(this.config.headers ?? {}),
    };
    if (!this.config.disableCompression) h['Accept-Encoding'] = 'gzip';
    if (this.config.execProvider) {
      const c = await this.config.execProvider.get();
      if (c.token) h.Authorization = `Bearer ${c.token}`;
    }
    if (body !== undefined) {
      h['Content-Type'] = o.contentType ?? 'application/json';
      h['Content-Length'] = body.length;
    }
    Object.assign(h, o.headers ?? {});
    return h;
  }

  private encodeBody(body: unknown): Buffer | undefined {
    if (body === undefined) return undefined;
    if (Buffer.isBuffer(body)) return body;
    if (typeof body === 'string') return Buffer.from(body);
    return Buffer.from(stringifyJSON(body));
  }

  /** One HTTP exchange, no retries. Resolves with the response head and a body stream. */
  private send(o: RequestOptions, path: string, body: Buffer | undefined, headers: Record<string, string | string[] | number>, timeoutMs: number): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const mod = this.base.protocol === 'https:' ? https : http;
      const req = mod.request(
        {
          protocol: this.base.protocol,
          hostname: this.base.hostname.replace(/^\[|\]$/g, ''),
          port: this.base.port || (this.base.protocol === 'https:' ? 443 : 80),
          method: o.method,
          path,
          headers,
          agent: this.agent,
          signal: o.signal,
        },
        (res) => {
          if (timer) clearTimeout(timer);
          resolve(res);
        },
      );
      let timer: NodeJS.Timeout | undefined;
      if (timeoutMs > 0) {
        // beforeConnect: the timeout fired before a connection was made (Go says "while waiting for connection")
        timer = setTimeout(() => req.destroy(Object.assign(new Error(`context deadline exceeded (Client.Timeout exceeded while awaiting headers)`), { code: 'ETIMEDOUT', beforeConnect: !req.socket || req.socket.connecting })), timeoutMs);
      }
      req.on('error', (e: NodeJS.ErrnoException) => {
        if (timer) clearTimeout(timer);
        reject(e);
      });
      if (body) req.end(body);
      else req.end();
    });
  }

  /**
   * Sends a request with rate limiting and client-go's retries. Resolves with the response head
   * for 2xx (body not read); rejects with APIError for other codes and TransportError when no
   * response came.
   */
  private async exchange(o: RequestOptions, streaming: boolean): Promise<{ res: IncomingMessage; deadline: number }> {
    const timeoutMs = streaming ? 0 : (o.timeoutMs ?? this.timeoutMs);
    const path = this.url(o.path, o.query, streaming ? 0 : timeoutMs);
    const body = this.encodeBody(o.body);
    const verb = o.method.toUpperCase();
    let refreshed = false;
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      if (this.rateLimiter) await this.rateLimiter.wait(o.signal);
      const left = timeoutMs > 0 ? timeoutMs - (Date.now() - started) : 0;
      if (timeoutMs > 0 && left <= 0) throw new TransportError(`${verb} ${path}: context deadline exceeded`, 'ETIMEDOUT', verb, path);
      const headers = await this.headersFor(o, body);
      let res: IncomingMessage;
      const sentAt = Date.now();
      try {
        res = await this.send(o, path, body, headers, left);
      } catch (e) {
        const err = e as NodeJS.ErrnoException;
        this.config.onRequestError?.({ verb, url: this.base.origin + path, error: err, elapsedMs: Date.now() - sentAt });
        if (o.signal?.aborted) throw o.signal.reason ?? err;
        const code = err.code ?? (err.message === 'socket hang up' ? 'ECONNRESET' : undefined);
        if (verb === 'GET' && code && RETRYABLE_ERR_CODES.has(code) && attempt < this.maxRetries) {
          await sleep(Math.min(1000, 100 * 2 ** attempt), o.signal);
          continue;
        }
        throw new TransportError(`${verb} ${this.base.origin}${path}: ${err.message}`, code, verb, path, err);
      }
      const status = res.statusCode ?? 0;
      this.config.onResponse?.({ verb, url: this.base.origin + path, status, statusText: res.statusMessage ?? '', headers: res.headers, elapsedMs: Date.now() - sentAt, requestHeaders: headers });
      if (status >= 200 && status < 300) return { res, deadline: timeoutMs > 0 ? started + timeoutMs : 0 };
      const buf = await readAll(res);
      const retryAfter = parseRetryAfter(res.headers['retry-after']);
      if ((status === 429 || status >= 500) && retryAfter !== undefined && attempt < this.maxRetries) {
        await sleep(retryAfter * 1000, o.signal);
        continue;
      }
      if (status === 401 && this.config.execProvider && !refreshed) {
        refreshed = true;
        await this.config.execProvider.refresh();
        continue;
      }
      throw APIError.fromResponse(verb, path, status, res.headers, buf);
    }
  }

  /** A request whose whole body is read; throws APIError / TransportError on failure. */
  async request(o: RequestOptions): Promise<RawResponse> {
    const { res, deadline } = await this.exchange(o, false);
    // the timeout covers the body too
    const timeoutMs = deadline ? Math.max(1, deadline - Date.now()) : 0;
    const timer = timeoutMs > 0 ? setTimeout(() => res.destroy(Object.assign(new Error('context deadline exceeded (Client.Timeout or context cancellation while reading body)'), { code: 'ETIMEDOUT' })), timeoutMs) : undefined;
    let buf: Buffer;
    try {
      buf = await readAll(res);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      throw new TransportError(`${o.method} ${o.path}: ${err.message}`, err.code, o.method, o.path, err);
    } finally {
      if (timer) clearTimeout(timer);
    }
    return { status: res.statusCode ?? 0, headers: res.headers, body: buf };
  }

  /** A JSON request: the body (if any) is sent as JSON, the answer parsed. */
  async json<T = any>(o: RequestOptions): Promise<T> {
    const r = await this.request(o);
    if (r.body.length === 0) return undefined as T;
    let obj: any;
    try {
      obj = parseJSON(r.body.toString('utf8'));
    } catch (e) {
      throw new TransportError(`${o.method} ${o.path}: cannot decode the response as JSON: ${(e as Error).message}`, 'EBADRESPONSE', o.method, o.path, e);
    }
    // a Status of failure with a 2xx code is still a failure (client-go's transformResponse)
    if (obj && obj.kind === 'Status' && obj.status === 'Failure') throw new APIError(obj as Status, o.method.toUpperCase(), o.path);
    return obj as T;
  }

  /** A streaming request (watch, logs): no timeout; the caller consumes and closes the body. */
  async stream(o: RequestOptions): Promise<StreamResponse> {
    const { res } = await this.exchange(o, true);
    const enc = String(res.headers['content-encoding'] ?? '');
    let body: NodeJS.ReadableStream & AsyncIterable<Buffer> = res;
    if (enc === 'gzip') {
      const gz = createGunzip();
      res.pipe(gz);
      res.on('error', (e) => gz.destroy(e));
      body = gz as any;
    }
    return {
      status: res.statusCode ?? 0,
      headers: res.headers,
      body,
      close: () => {
        res.destroy();
        if (body !== res) (body as any).destroy?.();
      },
    };
  }
}

async function readAll(res: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  const buf = Buffer.concat(chunks);
  if (res.headers['content-encoding'] === 'gzip' && buf.length) return gunzipSync(buf);
  return buf;
}

/** The REST configuration of a resolved kubeconfig connection (tlsOptions + authHeaders). */
export function restConfigFromConnection(conn: ConnectionConfig, extra: Partial<RESTConfig> = {}): RESTConfig {
  const t = tlsOptions(conn);
  return {
    server: conn.server,
    ca: t.ca,
    cert: t.cert,
    key: t.key,
    servername: t.servername,
    insecureSkipTLSVerify: !t.rejectUnauthorized,
    headers: authHeaders(conn),
    execProvider: conn.execProvider,
    disableCompression: conn.disableCompression,
    ...extra,
  };
}
