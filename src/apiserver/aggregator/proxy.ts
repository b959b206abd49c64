// The proxying of a request to an extension API server (kube-aggregator's proxyHandler with
// k8s.io/apimachinery's upgrade-aware proxy): the request as the client sent it (method, path,
// query, body, Accept, Content-Type, ...) less its credentials, with the authenticated user in
// the front-proxy headers (X-Remote-User, X-Remote-Uid, X-Remote-Group, X-Remote-Extra-<key>),
// over TLS as kube-apiserver dials it: ServerName <service>.<namespace>.svc, the APIService's
// caBundle (or insecureSkipTLSVerify), and the front-proxy client certificate. The answer is
// streamed back as it comes (watches included). Upgrades are spliced through (proxyUpgradeRequest).
import https from 'node:https';
import type { IncomingMessage, ServerResponse, OutgoingHttpHeaders } from 'node:http';
import type { UserInfo } from '../authz.js';
import type { Location } from './resolve.js';
import { goDialError } from '../../machinery/goneterr.js';
import { isUpgradeRequest, proxyUpgrade, pump } from '../proxy.js';

/** the client certificate the aggregator presents (--proxy-client-cert-file, --proxy-client-key-file) */
export interface ProxyIdentity {
  cert: string | Buffer;
  key: string | Buffer;
}

/** headers that belong to one connection (Go's hop-by-hop list), never forwarded either way */
const HOP_BY_HOP = new Set(['connection', 'proxy-connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'http2-settings']);

/** a byte of an HTTP token (RFC 7230), which a header name may carry as is */
function isTokenByte(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || "!#$&'*+-.^_`|~".includes(String.fromCharCode(b));
}

/** client-go's headerKeyEscape: an extra key in a header name, other bytes (and %) as %XX */
export function escapeExtraKey(key: string): string {
  let out = '';
  for (const b of Buffer.from(key, 'utf8')) out += isTokenByte(b) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/** transport.SetAuthProxyHeaders: the user in the front-proxy headers */
export function authProxyHeaders(user: Pick<UserInfo, 'name' | 'uid' | 'groups' | 'extra'>): Record<string, string | string[]> {
  const h: Record<string, string | string[]> = { 'X-Remote-User': user.name };
  if (user.uid) h['X-Remote-Uid'] = user.uid;
  if (user.groups.length) h['X-Remote-Group'] = [...user.groups];
  for (const [k, vs] of Object.entries(user.extra ?? {})) if (vs.length) h[`X-Remote-Extra-${escapeExtraKey(k)}`] = [...vs];
  return h;
}

/** the TLS settings of an APIService's transport (proxyHandler.updateAPIService) */
export function tlsOptionsFor(apiService: any, identity: ProxyIdentity | undefined): https.RequestOptions {
  const spec = apiService.spec ?? {};
  const svc = spec.service ?? {};
  return {
    servername: `${svc.name}.${svc.namespace}.svc`,
    rejectUnauthorized: spec.insecureSkipTLSVerify !== true,
    ...(spec.caBundle ? { ca: Buffer.from(String(spec.caBundle), 'base64') } : {}),
    ...(identity ? { cert: identity.cert, key: identity.key } : {}),
  };
}

/** a Node.js connection error in the words of Go's net/http and crypto/tls */
export function goErrorText(e: unknown, loc?: Location): string {
  const err = e as NodeJS.ErrnoException;
  if (err?.code === 'ECONNRESET') return 'read: connection reset by peer';
  return (loc ? goDialError(e, { host: loc.host, port: loc.port }) : goDialError(e, { host: '', port: '' })) ?? err?.message ?? String(e);
}

/** http.Error: a plain-text answer, as kube-aggregator writes its own errors */
export function httpError(res: ServerResponse, text: string, code: number): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = Buffer.from(text + '\n');
  res.statusCode = code;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Length', body.length);
  res.end(body);
}

export interface ProxyOptions {
  apiService: any;
  location: Location;
  identity?: ProxyIdentity;
  agent?: https.Agent;
  user: UserInfo;
  auditID: string;
  path: string;
  query: URLSearchParams;
  /** milliseconds before the upstream request is abandoned (discovery documents: 5 s) */
  timeoutMs?: number;
}

/**
 * An upgrade (exec, attach, port-forward, a console of an extension's own) is proxied as
 * kube-aggregator proxies it: the upgrade-aware proxy with the APIService's transport (its CA or
 * none, the front-proxy client certificate, the Service's name), the client's headers less its
 * credentials and front-proxy headers, the user's front-proxy headers and Audit-Id added, the
 * request's path and query as they came; its errors are 503 with their text.
 */
function proxyUpgradeRequest(req: IncomingMessage, res: ServerResponse, o: ProxyOptions): Promise<void> {
  const tls = tlsOptionsFor(o.apiService, o.identity);
  const extra: [string, string][] = [];
  for (const [k, v] of Object.entries(authProxyHeaders(o.user))) for (const x of Array.isArray(v) ? v : [v]) extra.push([k, x]);
  extra.push(['Audit-Id', o.auditID]);
  const qs = o.query.toString();
  const host = o.location.host.includes(':') ? `[${o.location.host}]` : o.location.host;
  return proxyUpgrade(req, res, {
    url: new URL(`https://${host}:${o.location.port}${o.path}${qs ? `?${qs}` : ''}`),
    cert: o.identity?.cert,
    key: o.identity?.key,
    ca: tls.ca as Buffer | undefined,
    verify: tls.rejectUnauthorized,
    servername: tls.servername,
    extraHeaders: extra,
    dropHeader: (lower) => lower.startsWith('x-remote-'),
    dialTimeoutMs: 30_000,
  }).catch((e: unknown) => {
    req.resume();
    httpError(res, e instanceof Error ? e.message : String(e), 503);
  });
}

/** forward the request and stream the answer back; resolves when the response is done */
export function proxyRequest(req: IncomingMessage, res: ServerResponse, o: ProxyOptions): Promise<void> {
  if (isUpgradeRequest(req)) return proxyUpgradeRequest(req, res, o);
  const headers: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || k.startsWith(':') || HOP_BY_HOP.has(k)) continue;
    // the client's credentials stay here: its Authorization (the authentication filter drops it),
    // its impersonation and its own front-proxy headers
    if (k === 'authorization' || k.startsWith('impersonate-') || k.startsWith('x-remote-')) continue;
    headers[k] = v;
  }
  Object.assign(headers, authProxyHeaders(o.user));
  headers['Audit-Id'] = o.auditID;
  const ip = req.socket?.remoteAddress;
  if (ip) headers['X-Forwarded-For'] = req.headers['x-forwarded-for'] ? `${req.headers['x-forwarded-for']}, ${ip}` : ip;
  // url.Values.Encode: sorted by key
  const q = new URLSearchParams(o.query);
  q.sort();
  const qs = q.toString();
  return new Promise<void>((resolve) => {
    let settled = false;
    const done = () => {
      if (!settled) {
        settled = true;
        resolve();
      }
    };
    let up: ReturnType<typeof https.request>;
    try {
      up = https.request({
        host: o.location.host,
        port: o.location.port,
        method: req.method,
        path: o.path + (qs ? `?${qs}` : ''),
        headers,
        agent: o.agent,
        ...tlsOptionsFor(o.apiService, o.identity),
      });
    } catch (e) {
      // a caBundle or client certificate TLS cannot use: the transport could not be built
      req.resume();
      httpError(res, (e as Error).message, 500);
      done();
      return;
    }
    const timer = o.timeoutMs ? setTimeout(() => up.destroy(Object.assign(new Error('context deadline exceeded'), { code: 'DEADLINE' })), o.timeoutMs) : undefined;
    timer?.unref();
    up.on('response', (ur) => {
      const out: OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(ur.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
      if (res.headersSent || res.destroyed) {
        ur.destroy();
        return done();
      }
      res.writeHead(ur.statusCode ?? 502, out);
      // each chunk as it comes (a watch's events are not held back)
      pump(ur, res);
      ur.on('end', () => {
        if (timer) clearTimeout(timer);
        res.end();
        done();
      });
      ur.on('error', () => {
        res.destroy();
        done();
      });
    });
    up.on('error', (e) => {
      if (timer) clearTimeout(timer);
      // the upgrade-aware proxy's responder: 503 with the error
      if (!res.headersSent) httpError(res, goErrorText(e, o.location), 503);
      else res.destroy();
      done();
    });
    // the client went away (or the request's deadline answered it): the upstream request ends too
    res.on('close', () => {
      if (timer) clearTimeout(timer);
      up.destroy();
      done();
    });
    // the body as it comes (the server's own HTTP/1.1 requests are event emitters, not streams)
    pump(req, up);
    req.on('end', () => up.end());
    req.resume();
  });
}

export interface FetchResult {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** one GET to an extension server, read whole (the availability and discovery checks) */
export function fetchFrom(loc: Location, path: string, headers: OutgoingHttpHeaders, tls: https.RequestOptions, timeoutMs: number, agent?: https.Agent): Promise<FetchResult> {
  return new Promise((resolve, reject) => {
    const r = https.request({ host: loc.host, port: loc.port, method: 'GET', path, headers, agent: agent ?? false, ...tls }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    r.setTimeout(timeoutMs, () => r.destroy(Object.assign(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)'), { code: 'CLIENT_TIMEOUT' })));
    r.on('error', reject);
    r.end();
  });
}
