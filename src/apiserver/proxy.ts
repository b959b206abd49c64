// Kubernetes' proxying of a request to a backend, as k8s.io/apimachinery's UpgradeAwareHandler
// does it for kube-apiserver: an HTTP/1.1 upgrade (exec, attach and portforward, and an upgrade
// through a proxy subresource) is proxied by proxyUpgrade: the backend's 101 goes back as it came
// and the two connections are spliced; any other request of a proxy subresource by proxyHttp, a
// reverse proxy whose transport rewrites the backend's links (proxyhtml.ts).
//
// What goes to the backend is the client's request less its credentials (kube-apiserver's filters
// remove Authorization and Impersonate-* once checked) and less the hop-by-hop headers, with
// X-Forwarded-For appended (and, by proxyHttp, X-Forwarded-Uri: the API server's path of what
// the backend is asked for).
import { errors, StatusError } from '../machinery/errors.js';
import { goDialError } from '../machinery/goneterr.js';
import { H1Response } from './http1.js';
import { goJoin, rewriteHTMLBody, rewriteURL, type RewriteContext } from './proxyhtml.js';
import http from 'node:http';
import https from 'node:https';
import { isIP, type Socket } from 'node:net';
import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';

/** where an upgrade request is proxied to */
export interface UpgradeTarget {
  /** http: or https:, the backend's path and query (the request's own are not used) */
  url: URL;
  /** https: the client certificate and key presented */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** https: the CA the backend's certificate is verified with; absent: it is not verified */
  ca?: string | Buffer;
  /** how long the connection and its TLS handshake may take, ms (absent or 0: unbounded) */
  dialTimeoutMs?: number;
  /** https: whether the backend's certificate is verified (default: when `ca` is given) */
  verify?: boolean;
  /** https: the server name sent and verified (default: the host, when it is a name) */
  servername?: string;
  /** proxyUpgrade: headers sent after the client's (the aggregator's front-proxy headers) */
  extraHeaders?: [string, string][];
  /** proxyUpgrade: client headers (lower-case names) not passed on, besides the credentials */
  dropHeader?: (lower: string) => boolean;
}

/**
 * An error the proxy's caller answers (its Responder): nothing has been written to the client.
 * `upgradeRequired`: the request was no upgrade (kube-apiserver answers it 400, the kubelet 500).
 */
export class UpgradeProxyError extends Error {
  constructor(
    message: string,
    readonly upgradeRequired = false,
  ) {
    super(message);
  }
}

/** httpstream.IsUpgradeRequest: a Connection header that names upgrade */
export function isUpgradeRequest(req: IncomingMessage): boolean {
  const c = req.headers['connection'];
  return (Array.isArray(c) ? c.join(',') : c ?? '').toLowerCase().includes('upgrade');
}

/**
 * The request headers that do not go on as they came: its credentials (kube-apiserver's filters
 * remove Authorization and Impersonate-* once checked), X-Forwarded-For (appended to, as one
 * header) and the body's framing (the proxy writes its own, as Go's Request.Write does).
 */
function dropped(lower: string): boolean {
  return lower === 'authorization' || lower.startsWith('impersonate-') || lower === 'x-forwarded-for' || lower === 'content-length' || lower === 'transfer-encoding';
}

/** Go's RemoteAddr host: an IPv4-mapped address as IPv4 */
function clientIP(req: IncomingMessage): string {
  const a = req.socket?.remoteAddress ?? '';
  return a.startsWith('::ffff:') && a.includes('.') ? a.slice('::ffff:'.length) : a;
}

/** the 10 s Go gives an error answer of the backend to reach the client */
const ECHO_DEADLINE_MS = 10_000;

/** the headers of an echoed error answer that are the connection's, not the answer's */
const ECHO_DROPPED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade', 'proxy-connection']);

/**
 * k8s.io/apimachinery's UpgradeAwareHandler with UpgradeRequired, for an HTTP/1.1 upgrade
 * (SPDY/3.1 or WebSocket): `req` goes to `t.url` as it came (its method and headers in their order,
 * less its credentials, with X-Forwarded-For appended and, for a POST, PUT or PATCH, Content-Length
 * 0: no body is forwarded, as none comes with an upgrade); the backend's 101 goes to the client as
 * it came and the two connections are then piped both ways until one of them ends or fails, when
 * both are closed (what was read is written first). An answer of 400 or more is echoed to the
 * client (its status, headers and body; the connection then closes). Resolves once the request is
 * answered or the stream set up; rejects with an UpgradeProxyError, before anything is written,
 * for the caller to answer: no upgrade requested, no connection ("error dialing backend: ..."),
 * no answer, another status ("invalid upgrade response: status code <n>"), or a client connection
 * that cannot be taken over.
 */
export function proxyUpgrade(req: IncomingMessage, res: ServerResponse, t: UpgradeTarget): Promise<void> {
  if (!isUpgradeRequest(req)) return Promise.reject(new UpgradeProxyError('Upgrade request required', true));
  const secure = t.url.protocol === 'https:';
  const host = t.url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = Number(t.url.port) || (secure ? 443 : 80);
  const method = req.method ?? 'GET';
  // the request's headers as they came (names, order, repeats), less the dropped ones
  const headers: string[] = [];
  const forwardedFor: string[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const lower = raw[i]!.toLowerCase();
    if (lower === 'x-forwarded-for') forwardedFor.push(raw[i + 1]!);
    if (!dropped(lower) && !t.dropHeader?.(lower)) headers.push(raw[i]!, raw[i + 1]!);
  }
  for (const [k, v] of t.extraHeaders ?? []) headers.push(k, v);
  const ip = clientIP(req);
  if (ip) headers.push('X-Forwarded-For', [...forwardedFor, ip].join(', '));
  if (method === 'POST' || method === 'PUT' || method === 'PATCH') headers.push('Content-Length', '0');
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let dial: Dial | undefined;
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      dial?.release();
      reject(new UpgradeProxyError(message));
    };
    const finish = () => {
      if (settled) return;
      settled = true;
      dial?.release();
      resolve();
    };
    let up: ClientRequest;
    const common = { host, port, method, path: `${t.url.pathname}${t.url.search}`, headers, agent: false as const };
    try {
      up = secure
        ? https.request({ ...common, cert: t.cert, key: t.key, ca: t.ca, rejectUnauthorized: t.verify ?? t.ca !== undefined, ...(t.servername ? { servername: t.servername } : {}) })
        : http.request(common);
    } catch (e) {
      // (a client certificate or CA TLS cannot use: no connection can be made)
      fail(`error dialing backend: ${(e as Error).message}`);
      return;
    }
    // the connection and its handshake are bounded; the answer is not (the runtime starts the process first)
    dial = watchDial(up, {
      secure, host, port, timeoutMs: t.dialTimeoutMs, client: res,
      gone: finish,
      failed: (words, dialled) => fail(dialled ? words : `error dialing backend: ${words}`),
    });
    up.on('upgrade', (ures: IncomingMessage, backend: Socket, head: Buffer) => {
      if (settled) {
        backend.destroy();
        return;
      }
      dial?.release();
      const client = hijack(res);
      if (!client) {
        backend.destroy();
        fail(`request connection cannot be hijacked: ${(res as object).constructor?.name ?? typeof res}`);
        return;
      }
      settled = true;
      // the backend's head as it came (status line and headers), then whatever followed it
      let text = `HTTP/${ures.httpVersion} ${ures.statusCode} ${ures.statusMessage ?? ''}\r\n`;
      const rh = ures.rawHeaders;
      for (let i = 0; i + 1 < rh.length; i += 2) text += `${rh[i]}: ${rh[i + 1]}\r\n`;
      client.write(Buffer.concat([Buffer.from(`${text}\r\n`, 'latin1'), head]));
      splice(client, backend);
      resolve();
    });
    up.on('response', (ures: IncomingMessage) => {
      dial.clear();
      const status = ures.statusCode ?? 0;
      if (status < 400) {
        ures.destroy();
        up.destroy();
        fail(`invalid upgrade response: status code ${status}`);
        return;
      }
      // an error: echoed to the client (the backend has 10 s to send it), then the connection closes
      const chunks: Buffer[] = [];
      ures.on('data', (d: Buffer) => chunks.push(d));
      let echoed = false;
      const echo = () => {
        if (echoed) return;
        echoed = true;
        clearTimeout(deadline);
        up.destroy();
        if (settled) return;
        dial?.release();
        settled = true;
        res.statusCode = status;
        if (ures.statusMessage) res.statusMessage = ures.statusMessage;
        const rh = ures.rawHeaders;
        const byName = new Map<string, [string, string[]]>();
        for (let i = 0; i + 1 < rh.length; i += 2) {
          const lower = rh[i]!.toLowerCase();
          if (ECHO_DROPPED.has(lower)) continue;
          const e = byName.get(lower);
          if (e) e[1].push(rh[i + 1]!);
          else byName.set(lower, [rh[i]!, [rh[i + 1]!]]);
        }
        try {
          for (const [name, values] of byName.values()) res.setHeader(name, values.length === 1 ? values[0]! : values);
        } catch {
          // (a header this layer will not send: the answer goes without it)
        }
        res.end(Buffer.concat(chunks));
        resolve();
      };
      const deadline = setTimeout(echo, ECHO_DEADLINE_MS);
      ures.once('end', echo);
      ures.once('close', echo);
      ures.once('error', echo);
    });
    up.end();
  });
}

/** both connections piped into each other; when either ends or fails, both are closed once what was read has been written */
function splice(a: Socket, b: Socket): void {
  let closing = false;
  const close = () => {
    if (closing) return;
    closing = true;
    for (const s of [a, b]) {
      if (s.destroyed) continue;
      // (ends it once its pending writes are out, then destroys it)
      s.destroySoon();
    }
  };
  for (const s of [a, b]) {
    s.on('error', () => s.destroy());
    s.once('end', close);
    s.once('close', close);
  }
  a.pipe(b, { end: false });
  b.pipe(a, { end: false });
}

/**
 * Go's Hijack: the client's connection taken out of the HTTP/1.1 layer (H1Response.detach) for
 * the upgraded protocol. The response counts as answered (101) from there, as a hijacked one does
 * in Go: the server's books and its graceful end do not wait for the stream. Undefined for a
 * response of another layer (HTTP/2 has no upgrade).
 */
function hijack(res: ServerResponse): Socket | undefined {
  return (res as unknown) instanceof H1Response ? (res as unknown as H1Response).detach() : undefined;
}

// ---- the dial, bounded ----

/** a backend request's connection, watched: the dial and its TLS handshake bounded, and Go's words for a failure */
export interface Dial {
  /** the bound no longer applies (an answer came) */
  clear(): void;
  /** the client's close no longer ends the backend's request */
  release(): void;
}

/** where a backend request comes from and what ends it */
export interface DialOptions {
  secure: boolean;
  host: string;
  port: number;
  /** the dial and its handshake, ms (absent or 0: unbounded) */
  timeoutMs?: number;
  /** the client's response: its close (the client gone) ends the backend's request, and calls `gone` */
  client: ServerResponse;
  gone(): void;
  /** the request failed (once): Go's words for it, and whether it was connected by then */
  failed(words: string, dialled: boolean): void;
}

/**
 * Watches `up`'s connection: destroyed with Go's timeout error when the dial or handshake takes
 * over `timeoutMs`, and when the client goes; its error reported in Go's words.
 */
export function watchDial(up: ClientRequest, o: DialOptions): Dial {
  const { secure, host, port, timeoutMs } = o;
  let connected = false;
  let dialled = false;
  const timer = timeoutMs
    ? setTimeout(() => {
        up.destroy(connected ? Object.assign(new Error('net/http: TLS handshake timeout'), { code: 'TLS_HANDSHAKE_TIMEOUT' }) : Object.assign(new Error('i/o timeout'), { code: 'ETIMEDOUT' }));
      }, timeoutMs)
    : undefined;
  up.once('socket', (s: Socket) => {
    s.once('connect', () => {
      connected = true;
      if (!secure) {
        dialled = true;
        clearTimeout(timer);
      }
    });
    s.once('secureConnect', () => {
      dialled = true;
      clearTimeout(timer);
    });
  });
  const onClose = () => {
    clearTimeout(timer);
    up.destroy();
    o.gone();
  };
  o.client.once('close', onClose);
  const words = (e: Error): string => {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'TLS_HANDSHAKE_TIMEOUT') return e.message;
    // (a reset, in the handshake too, is a read's error)
    if (code === 'ECONNRESET' && connected) return 'read: connection reset by peer';
    if (!dialled) return goDialError(e, { host, port }) ?? e.message;
    // (http.ReadResponse's error: the backend closed without answering, or reset the connection)
    return e.message === 'socket hang up' ? 'EOF' : code === 'ECONNRESET' ? 'read: connection reset by peer' : e.message;
  };
  up.on('error', (e) => {
    clearTimeout(timer);
    o.failed(words(e), dialled);
  });
  return {
    clear: () => clearTimeout(timer),
    release: () => o.client.removeListener('close', onClose),
  };
}

// ---- any other request: a reverse proxy ----

/** the headers of a connection, not of a message: never passed on (Go's ReverseProxy's list) */
const HOP_HEADERS = new Set(['connection', 'proxy-connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** the CORS headers of a backend, which kube-apiserver's proxy removes (its own CORS policy applies) */
const CORS_HEADERS = new Set(['access-control-allow-credentials', 'access-control-allow-headers', 'access-control-allow-methods', 'access-control-allow-origin']);

/** the header names a Connection header lists (they are the connection's too) */
function connectionTokens(raw: string[]): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'connection') continue;
    for (const t of raw[i + 1]!.split(',')) if (t.trim()) out.add(t.trim().toLowerCase());
  }
  return out;
}

/**
 * Go's net.JoinPreserveTrailingSlash: the parts joined and cleaned, with a trailing slash when the
 * last non-empty one has one.
 */
/** what pump() reads: a stream, or the server's own HTTP/1.1 request (an event emitter with pause and resume) */
export interface PumpSource {
  on(event: 'data', f: (d: Buffer) => void): unknown;
  pause(): unknown;
  resume(): unknown;
}

/** what pump() writes to: a response or an outgoing request */
export interface PumpSink {
  write(d: Buffer): boolean;
  once(event: 'drain', f: () => void): unknown;
}

/** each chunk written as it comes (a watch's events are not held back), the source paused while the sink's buffer is full */
export function pump(from: PumpSource, to: PumpSink): void {
  from.on('data', (d: Buffer) => {
    if (!to.write(d)) {
      from.pause();
      to.once('drain', () => from.resume());
    }
  });
}

export function joinPreserveTrailingSlash(...parts: string[]): string {
  let out = goJoin(...parts);
  const last = [...parts].reverse().find((p) => p !== '');
  if (last !== undefined && last.endsWith('/') && !out.endsWith('/')) out += '/';
  return out;
}

/** where a proxy subresource's request goes, and how the answer's links are rewritten */
export interface ProxyTarget extends UpgradeTarget {
  /** the backend's address as its location names it (host or host:port), which a link may name */
  backendHost: string;
  /** the API server's path before the backend's (for X-Forwarded-Uri and the links) */
  pathPrepend: string;
}

/**
 * The reverse proxy of kube-apiserver's proxy subresources (UpgradeAwareHandler without
 * UpgradeRequired, its transport wrapped): `req` goes to `t.url` (its path and query; the
 * request's own query replaces the location's), its body streamed, and the backend's answer comes
 * back streamed, less its hop-by-hop and CORS headers, its Location and its HTML links rewritten to
 * go through the proxy (proxyhtml.ts). Resolves once the answer has gone (or the client has);
 * rejects, before anything is written, with the Status to answer: 503 "error trying to reach
 * service: <Go's words>" when the backend cannot be reached or does not answer.
 */
export function proxyHttp(req: IncomingMessage, res: ServerResponse, t: ProxyTarget): Promise<void> {
  const secure = t.url.protocol === 'https:';
  const host = t.url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = Number(t.url.port) || (secure ? 443 : 80);
  const method = req.method ?? 'GET';
  const raw = req.rawHeaders;
  const dropConn = connectionTokens(raw);
  const headers: string[] = [];
  const forwardedFor: string[] = [];
  let requestHost = '';
  let chunked = false;
  let length = false;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (lower === ':authority') requestHost = raw[i + 1]!;
    if (lower === 'host') requestHost = raw[i + 1]!;
    if (lower === 'x-forwarded-for') forwardedFor.push(raw[i + 1]!);
    if (lower === 'transfer-encoding') chunked = true;
    if (lower === 'content-length') length = true;
    if (lower.startsWith(':') || HOP_HEADERS.has(lower) || dropConn.has(lower) || lower === 'x-forwarded-uri') continue;
    if (lower === 'authorization' || lower.startsWith('impersonate-') || lower === 'x-forwarded-for') continue;
    headers.push(name, raw[i + 1]!);
  }
  // (HTTP/2 has no Host header: Go's Request.Host is the :authority, and the backend is sent it)
  if (!raw.some((h, i) => i % 2 === 0 && h.toLowerCase() === 'host') && requestHost) headers.push('Host', requestHost);
  const ip = clientIP(req);
  if (ip) headers.push('X-Forwarded-For', [...forwardedFor, ip].join(', '));
  const backendPath = t.url.pathname;
  let forwardedUri = goJoin(t.pathPrepend, backendPath);
  if (backendPath.endsWith('/')) forwardedUri += '/';
  headers.push('X-Forwarded-Uri', forwardedUri);
  // a body of unknown length goes chunked, whatever the method (node chunks only some by default)
  if (chunked && !length) headers.push('Transfer-Encoding', 'chunked');
  const rw: RewriteContext = { pathPrepend: t.pathPrepend, backendHost: t.backendHost, requestHost };
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let dial: Dial | undefined;
    const fail = (e: StatusError) => {
      if (settled) return;
      settled = true;
      dial?.release();
      req.resume();
      reject(e);
    };
    const finish = () => {
      if (settled) return;
      settled = true;
      dial?.release();
      resolve();
    };
    let up: ClientRequest;
    const common = { host, port, method, path: `${backendPath}${t.url.search}`, headers, agent: false as const };
    try {
      up = secure
        ? https.request({ ...common, cert: t.cert, key: t.key, ca: t.ca, rejectUnauthorized: t.ca !== undefined, ...(isIP(host) ? {} : { servername: host }) })
        : http.request(common);
    } catch (e) {
      fail(errors.serviceUnavailable(`error trying to reach service: ${(e as Error).message}`));
      return;
    }
    dial = watchDial(up, {
      secure, host, port, timeoutMs: t.dialTimeoutMs, client: res,
      gone: finish,
      failed: (words) => fail(errors.serviceUnavailable(`error trying to reach service: ${words}`)),
    });
    up.on('response', (ures: IncomingMessage) => {
      dial.clear();
      if (settled) {
        ures.destroy();
        return;
      }
      const status = ures.statusCode ?? 502;
      const rh = ures.rawHeaders;
      const dropResp = connectionTokens(rh);
      const byName = new Map<string, [string, string[]]>();
      for (let i = 0; i + 1 < rh.length; i += 2) {
        const lower = rh[i]!.toLowerCase();
        if (HOP_HEADERS.has(lower) || dropResp.has(lower) || CORS_HEADERS.has(lower)) continue;
        const e = byName.get(lower);
        if (e) e[1].push(rh[i + 1]!);
        else byName.set(lower, [rh[i]!, [rh[i + 1]!]]);
      }
      const location = byName.get('location');
      const contentType = byName.get('content-type')?.[1][0] ?? '';
      const html = !location && contentType.split(';', 1)[0]!.trim() === 'text/html' && method !== 'HEAD';
      if (location) {
        const v = rewriteURL(location[1][0]!, rw);
        if (v === undefined) {
          ures.destroy();
          up.destroy();
          fail(errors.internal(new Error(`error trying to parse Location header: parse ${JSON.stringify(location[1][0])}: invalid URL`)));
          return;
        }
        location[1] = [v];
      }
      const writeHead = () => {
        res.statusCode = status;
        for (const [name, values] of byName.values()) {
          try {
            res.setHeader(name, values.length === 1 ? values[0]! : values);
          } catch {
            // (a header this server's layer will not send: the answer goes without it)
          }
        }
      };
      if (html) {
        // a page: read whole, its links rewritten, sent with its new length
        const chunks: Buffer[] = [];
        ures.on('data', (d: Buffer) => chunks.push(d));
        ures.once('error', () => fail(errors.serviceUnavailable('error trying to reach service: unexpected EOF')));
        ures.once('end', () => {
          if (settled) return;
          const body = Buffer.concat(chunks);
          const encoding = (byName.get('content-encoding')?.[1][0] ?? '').trim();
          let out: Buffer;
          try {
            out = rewriteHTMLBody(body, encoding, rw);
          } catch (e) {
            fail(new StatusError(500, '', `errorf making ${encoding} reader: ${(e as Error).message}`));
            return;
          }
          byName.delete('content-length');
          writeHead();
          res.setHeader('Content-Length', out.length);
          res.end(out);
          finish();
        });
        return;
      }
      writeHead();
      res.flushHeaders?.();
      pump(ures, res);
      ures.once('end', () => {
        if (!res.writableEnded) res.end();
        finish();
      });
      // the backend gone mid-answer: the client's answer is cut short too (Go's ErrAbortHandler)
      ures.once('aborted', () => res.destroy());
      ures.once('error', () => res.destroy());
    });
    // the request's body, streamed with back-pressure
    pump(req, up);
    req.once('end', () => up.end());
    req.resume();
  });
}
