// The kubelet's three listeners (cmd/kubelet/app and pkg/kubelet/server), serving the handlers of
// nodeagent/server.ts:
//
// The main port (--address:--port, 10250): HTTPS with --tls-cert-file and --tls-private-key-file,
// else a self-signed pair kept as <cert-dir>/kubelet.crt and kubelet.key (made once, for the
// node's host names and addresses: a CA "<host>-ca@<time>" and its leaf "<host>@<time>", the file
// holding both, as the kubelet's certutil.GenerateSelfSignedCertKey writes them), with
// --tls-min-version and --tls-cipher-suites. Every request is authenticated and authorized as the
// kubelet's auth filter does it:
//   - authentication, a union of the client certificate (--client-ca-file: CN the user, O the
//     groups) and the bearer token (--authentication-token-webhook: a TokenReview, answers kept
//     --authentication-token-webhook-cache-ttl); the first that names a user wins, and
//     system:authenticated is added to its groups. Credentials that are presented and refused are
//     401 even with --anonymous-auth (anonymous is only for requests that present none); with
//     --anonymous-auth=false, a request without credentials is 401 too. The answer is the
//     kubelet's plain text "Unauthorized".
//   - authorization (--authorization-mode): AlwaysAllow, or Webhook: a SubjectAccessReview for the
//     resource nodes, name the node's, version v1, the verb from the method (GET get, POST create,
//     PUT update, PATCH patch, DELETE delete; any other method, HEAD too, no verb, as the kubelet
//     maps them) and the subresource from the path, with KubeletFineGrainedAuthz (on by default in
//     Kubernetes 1.33): /pods and /runningpods (pods), /healthz (healthz) and /configz (configz)
//     are asked first about their own subresource and then about proxy; /stats (stats), /metrics
//     (metrics), /logs (log) and /checkpoint (checkpoint) only about theirs; anything else proxy.
//     Answers are kept --authorization-webhook-cache-authorized-ttl / -unauthorized-ttl. There is
//     no group that passes without asking (the kubelet's authorizer has none). Refused: 403 with
//     "Forbidden (user=<name>, verb=<verb>, resource=nodes, subresource(s)=[<subresources>])"; a
//     review that fails: 500 "Authorization error (user=..., verb=..., resource=nodes,
//     subresource=...)".
// The TokenReviews and SubjectAccessReviews go to the API server with the kubelet's own REST
// configuration (its kubeconfig). /exec, /attach and /portForward (nodes/proxy) end in an upgrade
// proxied to the runtime's streaming server (proxyStream in serveKubelet), on this port only.
//
// A stream once set up is closed after --streaming-connection-idle-timeout without a byte either
// way (nodeagent/streamidle.ts). Every other request on the main and read-only ports must be
// answered in full within 4 hours of its arrival, else its connection (HTTP/2: its stream) is
// closed: the kubelet's http.Server has ReadTimeout and WriteTimeout of 4 h ("all connections to
// the kubelet server have a maximum duration of 4 hours", as its flag's help says), which cut e.g.
// a `kubectl logs -f` at 4 h. A stream is exempt: Go's Hijack clears the connection's deadlines.
//
// The read-only port (--read-only-port, 10255; 0 turns it off): plain HTTP on --address, no
// authentication, the kubelet's read-only handlers (/healthz, /pods, /metrics; the debugging
// paths answer 405 "Debug endpoints are disabled.").
// The health port (--healthz-bind-address:--healthz-port, 127.0.0.1:10248; 0 turns it off):
// plain HTTP, /healthz with the ping check alone.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { hostname as osHostname } from 'node:os';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { createCA, issueServingCert } from '../apiserver/pki.js';
import { loadCertKeyFiles, prepareServing, SecureListener } from '../apiserver/tls.js';
import { bearerTokenOf, loadCertPool, X509Authenticator } from '../apiserver/authn/index.js';
import type { UserInfo } from '../apiserver/authz.js';
import type { Logger } from '../client/log.js';
import { RESTClient, type RESTConfig } from '../client/rest.js';
import { processProfiler } from '../client/profiling.js';
import { kubeletHandlers, notFound, type KubeletHandler, type KubeletHandlerOptions, type KubeletMetrics, type NodeAgentView } from '../nodeagent/server.js';
import { TTLCache } from './componentserving.js';
import { CertificateManager } from '../nodeagent/certmanager.js';
import type { proxyUpgrade } from '../apiserver/proxy.js';

/** the handler options a kubelet's serving passes on as they are (nodeagent/server.ts documents them) */
const PASSED_HANDLER_OPTIONS = ['enableDebuggingHandlers', 'enableSystemLogHandler', 'enableSystemLogQuery', 'journalctl', 'systemLogDir', 'enableDebugFlagsHandler', 'setVerbosity', 'enableProfilingHandler', 'streamingConnectionIdleTimeoutMs'] as const;
type PassedHandlerOptions = (typeof PASSED_HANDLER_OPTIONS)[number];

export interface KubeletServingOptions extends Pick<KubeletHandlerOptions, PassedHandlerOptions> {
  /** --address */
  address: string;
  /** --port */
  port: number;
  /** --read-only-port (0: off) */
  readOnlyPort: number;
  /** --healthz-bind-address */
  healthzBindAddress: string;
  /** --healthz-port (0: off) */
  healthzPort: number;
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  tlsCipherSuites: string[];
  tlsMinVersion: string;
  /** --cert-dir: where the self-signed pair is kept ('' keeps it in memory) */
  certDir: string;
  /** --anonymous-auth */
  anonymousAuth: boolean;
  /** --client-ca-file */
  clientCAFile: string;
  /** --authentication-token-webhook */
  webhookAuthn: boolean;
  /** --authentication-token-webhook-cache-ttl */
  webhookAuthnCacheTTLms: number;
  /** --authorization-mode */
  authorizationMode: 'AlwaysAllow' | 'Webhook';
  /** --authorization-webhook-cache-authorized-ttl */
  authzAuthorizedTTLms: number;
  /** --authorization-webhook-cache-unauthorized-ttl */
  authzUnauthorizedTTLms: number;
  /** the node's host names (the first one names the self-signed certificate) and addresses */
  hostnames: string[];
  ips: string[];
  /** --rotate-server-certificates (serverTLSBootstrap): the serving certificate from the cluster (nodeagent/certmanager.ts) */
  rotateServerCertificates?: boolean;
  /** how long a request may take to be answered in full, ms (default the kubelet's 4 h, REQUEST_MAX_MS; tests shorten it) */
  requestMaxMs?: number;
}

export interface KubeletServing {
  /** the ports listened on (the read-only and health ports when on) */
  port: number;
  readOnlyPort?: number;
  healthzPort?: number;
  /** the /metrics registry (the node agent may add its metrics) */
  metrics: KubeletMetrics;
  close(): Promise<void>;
}

/** the kubelet's http.Server ReadTimeout and WriteTimeout (4 * 60 * time.Minute) */
export const REQUEST_MAX_MS = 4 * 3_600_000;

/**
 * Go's ReadTimeout and WriteTimeout, for a request not upgraded: a response not over `ms` after the
 * request came is destroyed (its connection closed; an HTTP/2 stream reset). One timer per request,
 * cleared when the response closes (an upgrade's 101 closes it at once: streams are exempt).
 */
function boundRequest(res: ServerResponse, ms: number, log: Logger, path: string | undefined): void {
  if (!(ms > 0)) return;
  const timer = setTimeout(() => {
    if (res.destroyed || (res.writableFinished ?? false)) return;
    log.v(4).info('Closing a request not answered within the server\'s time limit', { path, limit: `${ms}ms` });
    res.destroy();
  }, ms);
  timer.unref();
  res.once('close', () => clearTimeout(timer));
}

const ANONYMOUS: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };
const AUTHENTICATED_GROUP = 'system:authenticated';


/** the kubelet's verb of an HTTP method (nodeAuthorizerAttributesGetter): none for the others */
export function kubeletVerb(method: string): string {
  switch (method) {
    case 'POST':
      return 'create';
    case 'GET':
      return 'get';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return '';
  }
}

function isSubpath(sub: string, path: string): boolean {
  if (path.endsWith('/')) path = path.slice(0, -1);
  return sub === path || (sub.startsWith(path) && sub[path.length] === '/');
}

/** the subresources of nodes a request is authorized as, in the order they are asked about (KubeletFineGrainedAuthz on) */
export function kubeletSubresources(path: string): string[] {
  const out: string[] = [];
  if (isSubpath(path, '/pods')) out.push('pods');
  else if (isSubpath(path, '/healthz')) out.push('healthz');
  else if (isSubpath(path, '/configz')) out.push('configz');
  else if (isSubpath(path, '/statusz')) out.push('statusz');
  else if (isSubpath(path, '/runningpods/')) out.push('pods');
  if (isSubpath(path, '/stats/')) out.push('stats');
  else if (isSubpath(path, '/metrics')) out.push('metrics');
  else if (isSubpath(path, '/logs/')) out.push('log');
  else if (isSubpath(path, '/checkpoint/')) out.push('checkpoint');
  else out.push('proxy');
  return out;
}

export type AuthzDecision = { allowed: true } | { allowed: false; status: 403 | 500; message: string };

/** the kubelet's authenticator and authorizer (see the head of this file) */
export class KubeletAuth {
  private readonly x509?: X509Authenticator;
  private readonly tokens?: RESTClient;
  private readonly sar?: RESTClient;
  private readonly tokenCache = new TTLCache<UserInfo | null>();
  private readonly decisions = new TTLCache<boolean>();

  constructor(
    private readonly o: Pick<KubeletServingOptions, 'anonymousAuth' | 'clientCAFile' | 'webhookAuthn' | 'webhookAuthnCacheTTLms' | 'authorizationMode' | 'authzAuthorizedTTLms' | 'authzUnauthorizedTTLms'>,
    private readonly nodeName: string,
    rest: RESTConfig | undefined,
    private readonly log: Logger,
  ) {
    if (o.clientCAFile) this.x509 = new X509Authenticator(loadCertPool(o.clientCAFile, 'client-ca-file'));
    if (o.webhookAuthn) {
      if (!rest) throw new Error('no client provided, cannot use webhook authentication');
      this.tokens = new RESTClient(rest);
    }
    if (o.authorizationMode === 'Webhook') {
      if (!rest) throw new Error('no client provided, cannot use webhook authorization');
      this.sar = new RESTClient(rest);
    } else if (o.authorizationMode !== 'AlwaysAllow') {
      throw new Error(`unknown authorization mode ${o.authorizationMode}`);
    }
  }

  /** the request's user; undefined: 401 */
  async authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    let failed: Error | undefined;
    if (this.x509) {
      try {
        const r = this.x509.authenticate(req);
        if (r) return withAuthenticated(r.user);
      } catch (e) {
        failed = e as Error;
      }
    }
    const token = this.tokens ? bearerTokenOf(req) : undefined;
    if (token !== undefined) {
      try {
        const user = await this.reviewToken(token);
        if (user) return withAuthenticated(user);
        failed ??= new Error('invalid bearer token');
      } catch (e) {
        failed ??= e as Error;
      }
    }
    if (failed) {
      this.log.error(failed, 'Unable to authenticate the request due to an error');
      return undefined;
    }
    return this.o.anonymousAuth ? { ...ANONYMOUS, groups: [...ANONYMOUS.groups] } : undefined;
  }

  private async reviewToken(token: string): Promise<UserInfo | null> {
    const hit = this.tokenCache.get(token);
    if (hit !== undefined) return hit;
    const review = await this.tokens!.json<any>({ method: 'POST', path: '/apis/authentication.k8s.io/v1/tokenreviews', body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } });
    const st = review?.status ?? {};
    const user: UserInfo | null = st.authenticated
      ? { name: String(st.user?.username ?? ''), ...(st.user?.uid ? { uid: String(st.user.uid) } : {}), groups: Array.isArray(st.user?.groups) ? st.user.groups.map(String) : [], ...(st.user?.extra ? { extra: st.user.extra } : {}) }
      : null;
    this.tokenCache.set(token, user, this.o.webhookAuthnCacheTTLms);
    return user;
  }

  /** whether `user` may make the request (the kubelet's auth filter) */
  async authorize(user: UserInfo, method: string, path: string): Promise<AuthzDecision> {
    if (!this.sar) return { allowed: true };
    const verb = kubeletVerb(method);
    const subresources = kubeletSubresources(path);
    for (const subresource of subresources) {
      const resourceAttributes: Record<string, string> = { verb, version: 'v1', resource: 'nodes', subresource, name: this.nodeName };
      if (!verb) delete resourceAttributes['verb'];
      const spec: Record<string, unknown> = { resourceAttributes, user: user.name, groups: user.groups };
      if (user.uid) spec['uid'] = user.uid;
      if (user.extra && Object.keys(user.extra).length) spec['extra'] = user.extra;
      const key = JSON.stringify(spec);
      let allowed = this.decisions.get(key);
      if (allowed === undefined) {
        try {
          const review = await this.sar.json<any>({ method: 'POST', path: '/apis/authorization.k8s.io/v1/subjectaccessreviews', body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec } });
          allowed = review?.status?.allowed === true;
          this.decisions.set(key, allowed, allowed ? this.o.authzAuthorizedTTLms : this.o.authzUnauthorizedTTLms);
        } catch (e) {
          this.log.error(e, 'Authorization error', { user: user.name, verb, resource: 'nodes', subresource });
          return { allowed: false, status: 500, message: `Authorization error (user=${user.name}, verb=${verb}, resource=nodes, subresource=${subresource})` };
        }
      }
      if (allowed) return { allowed: true };
    }
    this.log.v(2).info('Forbidden', { user: user.name, verb, resource: 'nodes', subresources: subresources.join(',') });
    return { allowed: false, status: 403, message: `Forbidden (user=${user.name}, verb=${verb}, resource=nodes, subresource(s)=[${subresources.join(' ')}])` };
  }
}

function withAuthenticated(u: UserInfo): UserInfo {
  if (u.groups.includes(AUTHENTICATED_GROUP) || u.name === ANONYMOUS.name || u.groups.includes('system:unauthenticated')) return u;
  return { ...u, groups: [...u.groups, AUTHENTICATED_GROUP] };
}

/** go-restful's WriteErrorString */
function plain(res: ServerResponse, code: number, text: string): void {
  res.statusCode = code;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.end(text);
}

/** the serving pair: the files given, else <cert-dir>/kubelet.crt and .key, made self-signed when they cannot be read */
async function servingPair(o: KubeletServingOptions, log: Logger): Promise<{ cert: string | Buffer; key: string | Buffer }> {
  if (o.tlsCertFile || o.tlsPrivateKeyFile) return loadCertKeyFiles('serving-cert', o.tlsCertFile, o.tlsPrivateKeyFile);
  const certFile = o.certDir ? join(o.certDir, 'kubelet.crt') : '';
  const keyFile = o.certDir ? join(o.certDir, 'kubelet.key') : '';
  if (certFile && existsSync(certFile) && existsSync(keyFile)) {
    try {
      return loadCertKeyFiles('serving-cert', certFile, keyFile);
    } catch (e) {
      log.warn('The kubelet serving pair in --cert-dir cannot be used; making a new one', { certFile, err: (e as Error).message });
    }
  }
  const host = (o.hostnames.find((h) => h) ?? osHostname()).toLowerCase();
  const dns: string[] = [];
  const ips: string[] = [];
  for (const h of [host, ...o.hostnames]) if (h && !isIP(h) && !dns.includes(h.toLowerCase())) dns.push(h.toLowerCase());
  for (const a of [...o.hostnames, ...o.ips]) if (a && isIP(a) && !ips.includes(a)) ips.push(a);
  const now = Math.floor(Date.now() / 1000);
  const ca = await createCA(`${host}-ca@${now}`);
  const leaf = await issueServingCert(ca, `${host}@${now}`, { dns, ips });
  const cert = leaf.certPEM + ca.certPEM;
  if (certFile) {
    mkdirSync(o.certDir, { recursive: true, mode: 0o700 });
    writeFileSync(certFile, cert, { mode: 0o644 });
    writeFileSync(keyFile, leaf.keyPEM, { mode: 0o600 });
    log.v(4).info('Using self-signed cert', { TLSCertFile: certFile, TLSPrivateKeyFile: keyFile });
  }
  return { cert, key: leaf.keyPEM };
}

function listenPlain(handler: KubeletHandler, port: number, host: string, log: Logger, what: string, requestMaxMs = 0): Promise<http.Server> {
  const server = http.createServer({ maxHeaderSize: 1 << 20 }, (req, res) => {
    boundRequest(res, requestMaxMs, log, req.url);
    const url = new URL(req.url ?? '/', 'http://kubelet');
    let path = url.pathname;
    try {
      path = decodeURIComponent(path);
    } catch {
      /* as sent */
    }
    handler(req, res, path, url.searchParams)
      .then((served) => {
        if (!served) notFound(res);
      })
      .catch((e) => {
        log.error(e, 'Serving a request failed', { port: what, path });
        if (!res.headersSent) plain(res, 500, (e as Error).message);
        else res.destroy();
      });
  });
  server.keepAliveTimeout = 90_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

function boundPort(s: { address(): unknown }): number {
  const a = s.address();
  return a && typeof a === 'object' && 'port' in a ? Number((a as { port: number }).port) : 0;
}

/**
 * Starts the kubelet's listeners (see the head of this file) over `view`; `rest` is the kubelet's
 * own REST configuration, for its TokenReviews and SubjectAccessReviews. Start-up errors (files,
 * TLS options, ports taken) reject.
 */
export async function serveKubelet(o: KubeletServingOptions, view: NodeAgentView, rest: RESTConfig | undefined, log: Logger): Promise<KubeletServing> {
  // the kubelet's proxyStream: the upgrade goes to the runtime's streaming server (containerd's on
  // 127.0.0.1, plain HTTP unless the runtime serves TLS) as it came, and the two connections are
  // piped (apiserver/proxy.ts' UpgradeAwareHandler; the runtime's certificate is not verified:
  // the kubelet's proxy has no transport of its own). Loaded with the first stream: proxy.ts
  // brings the HTML tokenizer of the API server's proxy along, which the kubelet never needs.
  let upgradeProxy: Promise<typeof proxyUpgrade> | undefined;
  const proxyStream = async (req: IncomingMessage, res: ServerResponse, url: string): Promise<void> => {
    const proxy = await (upgradeProxy ??= import('../apiserver/proxy.js').then((m) => m.proxyUpgrade));
    return proxy(req, res, { url: new URL(url) });
  };
  const passed = Object.fromEntries(PASSED_HANDLER_OPTIONS.map((k) => [k, o[k]])) as Pick<KubeletHandlerOptions, PassedHandlerOptions>;
  const handlers = kubeletHandlers(view, {
    ...passed,
    // (Go's pprof refuses a profile as long as the server's WriteTimeout, the kubelet's 4 hours)
    profilingWriteTimeoutSeconds: (o.requestMaxMs ?? REQUEST_MAX_MS) / 1000,
    log,
    proxyStream,
  });
  // profiling on: V8's sampling heap profiler runs from the start, as Go's heap sampling does
  if (o.enableProfilingHandler && o.enableDebuggingHandlers) await processProfiler().startHeapSampling();
  const requestMaxMs = o.requestMaxMs ?? REQUEST_MAX_MS;
  const auth = new KubeletAuth(o, view.nodeName, rest, log);
  const pair = await servingPair(o, log);
  const prepared = prepareServing({
    ...pair,
    clientCA: o.clientCAFile ? readFileSync(o.clientCAFile) : undefined,
    minVersion: o.tlsMinVersion,
    cipherSuites: o.tlsCipherSuites,
  });
  for (const c of prepared.insecureCiphers) log.warn(`Use of insecure cipher '${c}' detected.`);
  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    let path = url.pathname;
    try {
      path = decodeURIComponent(path);
    } catch {
      /* as sent */
    }
    const user = await auth.authenticate(req);
    if (!user) return plain(res, 401, 'Unauthorized');
    const d = await auth.authorize(user, req.method ?? 'GET', path);
    if (!d.allowed) return plain(res, d.status, d.message);
    if (!(await handlers.main(req, res, path, url.searchParams))) notFound(res);
  };
  const secure = new SecureListener(prepared, (req, res) => {
    boundRequest(res, requestMaxMs, log, req.url);
    serve(req, res).catch((e) => {
      log.error(e, 'Serving a request failed', { path: req.url });
      if (!res.headersSent) plain(res, 500, (e as Error).message);
      else res.destroy();
    });
  });
  const closers: (() => Promise<void>)[] = [];
  try {
    log.info('Starting to listen', { address: o.address, port: o.port });
    await secure.listen(o.port, o.address || '0.0.0.0');
    closers.push(async () => {
      const done = secure.beginShutdown();
      secure.closeAll();
      await done;
    });
    if (o.rotateServerCertificates && rest) {
      const dns = [...new Set(o.hostnames.filter((h) => h && !isIP(h)).map((h) => h.toLowerCase()))];
      const ips = [...new Set([...o.hostnames, ...o.ips].filter((a) => a && isIP(a)))];
      const manager = new CertificateManager({
        kind: 'server',
        rest,
        nodeName: view.nodeName,
        certDir: o.certDir,
        hostnames: dns,
        ips,
        log,
        use: (cert, key) =>
          secure.updateCertificates(prepareServing({ cert, key, clientCA: o.clientCAFile ? readFileSync(o.clientCAFile) : undefined, minVersion: o.tlsMinVersion, cipherSuites: o.tlsCipherSuites })),
      });
      manager.start();
      closers.push(() => manager.stop());
    }
    let readOnlyPort: number | undefined;
    if (o.readOnlyPort > 0) {
      log.info('Starting to listen read-only', { address: o.address, port: o.readOnlyPort });
      const s = await listenPlain(handlers.readOnly, o.readOnlyPort, o.address || '0.0.0.0', log, 'read-only', requestMaxMs);
      closers.push(() => closePlain(s));
      readOnlyPort = boundPort(s);
    }
    let healthzPort: number | undefined;
    if (o.healthzPort > 0) {
      const s = await listenPlain(handlers.health, o.healthzPort, o.healthzBindAddress || '127.0.0.1', log, 'healthz');
      closers.push(() => closePlain(s));
      healthzPort = boundPort(s);
    }
    return {
      port: boundPort(secure.server),
      readOnlyPort,
      healthzPort,
      metrics: handlers.metrics,
      close: async () => {
        await Promise.all(closers.map((c) => c().catch(() => {})));
      },
    };
  } catch (e) {
    await Promise.all(closers.map((c) => c().catch(() => {})));
    throw e;
  }
}

function closePlain(s: http.Server): Promise<void> {
  return new Promise((resolve) => {
    s.close(() => resolve());
    s.closeAllConnections();
  });
}
