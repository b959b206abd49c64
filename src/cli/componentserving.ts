// The secure port of a component other than the API server (the controller manager today; the
// scheduler and the node agent later): HTTPS with its own or a self-signed certificate, and
// authentication and authorization delegated to the API server, as k8s.io/apiserver's
// DelegatingAuthenticationOptions and DelegatingAuthorizationOptions do for kube-controller-manager:
//   - a client certificate verified against --client-ca-file, else the client CA the API server
//     publishes in kube-system/extension-apiserver-authentication (looked up with
//     --authentication-kubeconfig unless --authentication-skip-lookup);
//   - front-proxy headers from a certificate of --requestheader-client-ca-file (or the published one);
//   - a bearer token asked about with a TokenReview (answers kept --authentication-token-webhook-cache-ttl);
//   - anything else is system:anonymous;
//   - --authorization-always-allow-paths (/healthz, /readyz, /livez) and the group system:masters
//     are allowed without asking; other requests are asked about with a SubjectAccessReview of the
//     non-resource path (answers kept --authorization-webhook-cache-(un)authorized-ttl); without
//     --authorization-kubeconfig they are forbidden.
// The answers: 401 Unauthorized and 403 Forbidden Status objects, worded as Kubernetes words them.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FlagSet, NamedCertKey } from './flags.js';
import { createCA, issueServingCert } from '../apiserver/pki.js';
import { insecureTLSCipherNames, loadCertKeyFiles, loadSNICertKeys, preferredTLSCipherNames, prepareServing, SecureListener, tlsPossibleVersions } from '../apiserver/tls.js';
import { bearerTokenOf, CertPool, parseCertsPEM, RequestHeaderAuthenticator, X509Authenticator } from '../apiserver/authn/index.js';
import type { UserInfo } from '../apiserver/authz.js';
import type { Logger } from '../client/log.js';
import { RESTClient, isNotFound, type RESTConfig } from '../client/rest.js';
import { exitOnSignals } from './daemon.js';

export interface SecureServingFlags {
  bindAddress: string;
  securePort: number;
  certDir: string;
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  tlsCipherSuites: string[];
  tlsMinVersion: string;
  tlsSNICertKey: NamedCertKey[];
  http2MaxStreamsPerConnection: number;
  disableHTTP2Serving: boolean;
  permitPortSharing: boolean;
  permitAddressSharing: boolean;
}

export function defaultSecureServingFlags(port: number): SecureServingFlags {
  return {
    bindAddress: '0.0.0.0',
    securePort: port,
    certDir: '',
    tlsCertFile: '',
    tlsPrivateKeyFile: '',
    tlsCipherSuites: [],
    tlsMinVersion: '',
    tlsSNICertKey: [],
    http2MaxStreamsPerConnection: 0,
    disableHTTP2Serving: false,
    permitPortSharing: false,
    permitAddressSharing: false,
  };
}

export function declareSecureServingFlags(fs: FlagSet, o: SecureServingFlags, pairName: string): void {
  fs.stringVar(o, 'bindAddress', 'bind-address', 'The IP address on which to listen for the --secure-port port. The associated interface(s) must be reachable by the rest of the cluster, and by CLI/web clients. If blank or an unspecified address (0.0.0.0 or ::), all interfaces and IP address families will be used.');
  fs.stringVar(o, 'certDir', 'cert-dir', `The directory where the TLS certs are located. If --tls-cert-file and --tls-private-key-file are provided, this flag will be ignored. (Without them, a self-signed certificate is made and written here as ${pairName}.crt and ${pairName}.key, or kept in memory when this is empty.)`);
  fs.intVar(o, 'http2MaxStreamsPerConnection', 'http2-max-streams-per-connection', 'The limit that the server gives to clients for the maximum number of streams in an HTTP/2 connection. Zero means to use the default (100).');
  fs.boolVar(o, 'disableHTTP2Serving', 'disable-http2-serving', 'If true, HTTP2 serving will be disabled [default=false]');
  fs.boolVar(o, 'permitAddressSharing', 'permit-address-sharing', 'If true, SO_REUSEADDR will be used when binding the port. This allows binding to wildcard IPs like 0.0.0.0 and specific IPs in parallel, and it avoids waiting for the kernel to release sockets in TIME_WAIT state. [default=false] (Node.js always binds with SO_REUSEADDR.)');
  fs.boolVar(o, 'permitPortSharing', 'permit-port-sharing', 'If true, SO_REUSEPORT will be used when binding the port, which allows more than one instance to bind on the same address and port (needs Node.js 22.12 or later). [default=false]');
  fs.intVar(o, 'securePort', 'secure-port', 'The port on which to serve HTTPS with authentication and authorization. If 0, don\'t serve HTTPS at all.');
  fs.stringVar(o, 'tlsCertFile', 'tls-cert-file', 'File containing the default x509 Certificate for HTTPS. (CA cert, if any, concatenated after server cert). If HTTPS serving is enabled, and --tls-cert-file and --tls-private-key-file are not provided, a self-signed certificate and key are generated for the public address and saved to the directory specified by --cert-dir.');
  fs.stringsVar(o, 'tlsCipherSuites', 'tls-cipher-suites', `Comma-separated list of cipher suites for the server. If omitted, the default Go cipher suites will be used. \nPreferred values: ${preferredTLSCipherNames().join(', ')}. \nInsecure values: ${insecureTLSCipherNames().join(', ')}.`);
  fs.stringVar(o, 'tlsMinVersion', 'tls-min-version', `Minimum TLS version supported. Possible values: ${tlsPossibleVersions().join(', ')}`);
  fs.stringVar(o, 'tlsPrivateKeyFile', 'tls-private-key-file', 'File containing the default x509 private key matching --tls-cert-file.');
  fs.namedCertKeyVar(o, 'tlsSNICertKey', 'tls-sni-cert-key', 'A pair of x509 certificate and private key file paths, optionally suffixed with a list of domain patterns which are fully qualified domain names, possibly with prefixed wildcard segments. The domain patterns also allow IP addresses, but IPs should only be used if the apiserver has visibility to the IP address requested by a client. If no domain patterns are provided, the names of the certificate are extracted. Non-wildcard matches trump over wildcard matches, explicit domain patterns trump over extracted names. For multiple key/certificate pairs, use the --tls-sni-cert-key multiple times. Examples: "example.crt,example.key" or "foo.crt,foo.key:*.foo.com,foo.com".');
}

export interface DelegatedAuthFlags {
  authenticationKubeconfig: string;
  authenticationSkipLookup: boolean;
  authenticationTokenWebhookCacheTTL: number;
  authenticationTolerateLookupFailure: boolean;
  authorizationAlwaysAllowPaths: string[];
  authorizationKubeconfig: string;
  authorizationWebhookCacheAuthorizedTTL: number;
  authorizationWebhookCacheUnauthorizedTTL: number;
  clientCAFile: string;
  requestheaderAllowedNames: string[];
  requestheaderClientCAFile: string;
  requestheaderExtraHeadersPrefix: string[];
  requestheaderGroupHeaders: string[];
  requestheaderUIDHeaders: string[];
  requestheaderUsernameHeaders: string[];
}

export function defaultDelegatedAuthFlags(): DelegatedAuthFlags {
  return {
    authenticationKubeconfig: '',
    authenticationSkipLookup: false,
    authenticationTokenWebhookCacheTTL: 10_000,
    authenticationTolerateLookupFailure: false,
    authorizationAlwaysAllowPaths: ['/healthz', '/readyz', '/livez'],
    authorizationKubeconfig: '',
    authorizationWebhookCacheAuthorizedTTL: 10_000,
    authorizationWebhookCacheUnauthorizedTTL: 10_000,
    clientCAFile: '',
    requestheaderAllowedNames: [],
    requestheaderClientCAFile: '',
    requestheaderExtraHeadersPrefix: ['x-remote-extra-'],
    requestheaderGroupHeaders: ['x-remote-group'],
    requestheaderUIDHeaders: [],
    requestheaderUsernameHeaders: ['x-remote-user'],
  };
}

export function declareDelegatedAuthFlags(authn: FlagSet, authz: FlagSet, o: DelegatedAuthFlags): void {
  authn.stringVar(o, 'authenticationKubeconfig', 'authentication-kubeconfig', 'kubeconfig file pointing at the \'core\' kubernetes server with enough rights to create tokenreviews.authentication.k8s.io. This is optional. If empty, all token requests are considered to be anonymous and no client CA is looked up in the cluster.');
  authn.boolVar(o, 'authenticationSkipLookup', 'authentication-skip-lookup', 'If false, the authentication-kubeconfig will be used to lookup missing authentication configuration from the cluster.');
  authn.durationVar(o, 'authenticationTokenWebhookCacheTTL', 'authentication-token-webhook-cache-ttl', 'The duration to cache responses from the webhook token authenticator.');
  authn.boolVar(o, 'authenticationTolerateLookupFailure', 'authentication-tolerate-lookup-failure', 'If true, failures to look up missing authentication configuration from the cluster are not considered fatal. Note that this can result in authentication that treats all requests as anonymous.');
  authn.stringVar(o, 'clientCAFile', 'client-ca-file', 'If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate.');
  authn.stringsVar(o, 'requestheaderAllowedNames', 'requestheader-allowed-names', 'List of client certificate common names to allow to provide usernames in headers specified by --requestheader-username-headers. If empty, any client certificate validated by the authorities in --requestheader-client-ca-file is allowed.');
  authn.stringVar(o, 'requestheaderClientCAFile', 'requestheader-client-ca-file', 'Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames in headers specified by --requestheader-username-headers. WARNING: generally do not depend on authorization being already done for incoming requests.');
  authn.stringsVar(o, 'requestheaderExtraHeadersPrefix', 'requestheader-extra-headers-prefix', 'List of request header prefixes to inspect. X-Remote-Extra- is suggested.');
  authn.stringsVar(o, 'requestheaderGroupHeaders', 'requestheader-group-headers', 'List of request headers to inspect for groups. X-Remote-Group is suggested.');
  authn.stringsVar(o, 'requestheaderUIDHeaders', 'requestheader-uid-headers', 'List of request headers to inspect for UIDs. X-Remote-Uid is suggested. Requires the RemoteRequestHeaderUID feature to be enabled.');
  authn.stringsVar(o, 'requestheaderUsernameHeaders', 'requestheader-username-headers', 'List of request headers to inspect for usernames. X-Remote-User is common.');
  authz.stringsVar(o, 'authorizationAlwaysAllowPaths', 'authorization-always-allow-paths', 'A list of HTTP paths to skip during authorization, i.e. these are authorized without contacting the \'core\' kubernetes server.');
  authz.stringVar(o, 'authorizationKubeconfig', 'authorization-kubeconfig', 'kubeconfig file pointing at the \'core\' kubernetes server with enough rights to create subjectaccessreviews.authorization.k8s.io. This is optional. If empty, all requests not skipped by authorization are forbidden.');
  authz.durationVar(o, 'authorizationWebhookCacheAuthorizedTTL', 'authorization-webhook-cache-authorized-ttl', 'The duration to cache \'authorized\' responses from the webhook authorizer.');
  authz.durationVar(o, 'authorizationWebhookCacheUnauthorizedTTL', 'authorization-webhook-cache-unauthorized-ttl', 'The duration to cache \'unauthorized\' responses from the webhook authorizer.');
}

const AUTH_CONFIGMAP = '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication';
const ANONYMOUS: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };
const PRIVILEGED_GROUP = 'system:masters';

/** answers kept for a time (the webhook authenticators' and authorizers' caches), at most 4,096 */
export class TTLCache<V> {
  private readonly m = new Map<string, { v: V; until: number }>();
  get(k: string): V | undefined {
    const e = this.m.get(k);
    if (!e) return undefined;
    if (e.until <= Date.now()) {
      this.m.delete(k);
      return undefined;
    }
    return e.v;
  }
  set(k: string, v: V, ttlMs: number): void {
    if (!(ttlMs > 0)) return;
    // (bounded: the oldest goes first)
    if (this.m.size >= 4096) this.m.delete(this.m.keys().next().value!);
    this.m.set(k, { v, until: Date.now() + ttlMs });
  }
}

/** the non-resource verb of an HTTP method, as the request info resolver names it */
function nonResourceVerb(method: string): string {
  switch (method) {
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return 'get';
  }
}

/** whether a path matches one of --authorization-always-allow-paths (a trailing `*` matches a prefix) */
export function alwaysAllowed(paths: readonly string[], path: string): boolean {
  for (const p of paths) {
    if (p.endsWith('*') ? path.startsWith(p.slice(0, -1)) : p === path) return true;
  }
  return false;
}

export class DelegatedAuth {
  private x509?: X509Authenticator;
  private requestHeader?: RequestHeaderAuthenticator;
  private tokenClient?: RESTClient;
  private sarClient?: RESTClient;
  private readonly tokens = new TTLCache<UserInfo | null>();
  private readonly decisions = new TTLCache<{ allowed: boolean; reason: string }>();

  private constructor(private readonly o: DelegatedAuthFlags) {}

  /**
   * Builds the authenticator and authorizer; `restFor(kubeconfig)` makes the REST configuration of a
   * kubeconfig file. Throws start-up errors in Kubernetes' words.
   */
  static async build(o: DelegatedAuthFlags, restFor: (kubeconfig: string) => Promise<RESTConfig>, log: Logger, userAgent: string): Promise<DelegatedAuth> {
    const a = new DelegatedAuth(o);
    let clientCA = o.clientCAFile ? readFileSync(o.clientCAFile, 'utf8') : '';
    let rh: { ca: string; username: string[]; uid: string[]; group: string[]; extra: string[]; allowed: string[] } | undefined = o.requestheaderClientCAFile
      ? { ca: readFileSync(o.requestheaderClientCAFile, 'utf8'), username: o.requestheaderUsernameHeaders, uid: o.requestheaderUIDHeaders, group: o.requestheaderGroupHeaders, extra: o.requestheaderExtraHeadersPrefix, allowed: o.requestheaderAllowedNames }
      : undefined;
    if (!o.authenticationKubeconfig) {
      log.warn('No authentication-kubeconfig provided in order to lookup client-ca-file in configmap/extension-apiserver-authentication in kube-system, so client certificate authentication won\'t work.');
      log.warn('No authentication-kubeconfig provided in order to lookup requestheader-client-ca-file in configmap/extension-apiserver-authentication in kube-system, so request-header client certificate authentication won\'t work.');
    } else {
      a.tokenClient = new RESTClient({ ...(await restFor(o.authenticationKubeconfig)), userAgent });
      if (!o.authenticationSkipLookup && (!clientCA || !rh)) {
        try {
          const cm = await a.tokenClient.json<any>({ method: 'GET', path: AUTH_CONFIGMAP });
          const d = cm?.data ?? {};
          if (!clientCA && d['client-ca-file']) clientCA = d['client-ca-file'];
          if (!rh && d['requestheader-client-ca-file']) {
            const list = (k: string, def: string[]): string[] => {
              try {
                const v = JSON.parse(d[k] ?? 'null');
                return Array.isArray(v) ? v.map(String) : def;
              } catch {
                return def;
              }
            };
            rh = { ca: d['requestheader-client-ca-file'], username: list('requestheader-username-headers', []), uid: list('requestheader-uid-headers', []), group: list('requestheader-group-headers', []), extra: list('requestheader-extra-headers-prefix', []), allowed: list('requestheader-allowed-names', []) };
          }
        } catch (e) {
          const why = isNotFound(e) ? 'configmaps "extension-apiserver-authentication" not found' : (e as Error).message;
          if (!o.authenticationTolerateLookupFailure) {
            throw new Error(`unable to load configmap based request-header-client-ca-file: ${why}; to continue without it, use --authentication-tolerate-lookup-failure (client certificates are then not accepted)`);
          }
          log.warn('Error looking up in-cluster authentication configuration; continuing without it', { err: why });
        }
      }
    }
    if (clientCA) a.x509 = new X509Authenticator(new CertPool(parseCertsPEM(clientCA)));
    if (rh) {
      a.requestHeader = new RequestHeaderAuthenticator({
        pool: new CertPool(parseCertsPEM(rh.ca)),
        allowedNames: rh.allowed,
        usernameHeaders: rh.username,
        uidHeaders: rh.uid,
        groupHeaders: rh.group,
        extraHeaderPrefixes: rh.extra,
      });
    }
    if (o.authorizationKubeconfig) a.sarClient = new RESTClient({ ...(await restFor(o.authorizationKubeconfig)), userAgent });
    else log.warn('No authorization-kubeconfig provided, so SubjectAccessReview of authorization tokens won\'t work.');
    return a;
  }

  /** the request's user; throws (401) for credentials that are presented and refused */
  async authenticate(req: IncomingMessage): Promise<UserInfo> {
    // A union, as the delegating authenticator's: the front proxy's headers first (its certificate
    // may also chain to a client CA), then the client certificate, then the bearer token. The first
    // that answers with a user wins; a refusal counts only when none does (a client certificate
    // that the front proxy's CA does not sign is refused there and accepted by the client CA).
    const errors: Error[] = [];
    for (const a of [this.requestHeader, this.x509]) {
      try {
        const r = a?.authenticate(req);
        if (r) return r.user;
      } catch (e) {
        errors.push(e as Error);
      }
    }
    const token = bearerTokenOf(req);
    if (token === undefined || !this.tokenClient) {
      if (errors.length) throw errors[0];
      // (a token with no TokenReview to ask: the request is anonymous, as Kubernetes treats it)
      return ANONYMOUS;
    }
    let user = this.tokens.get(token);
    if (user === undefined) {
      const review = await this.tokenClient.json<any>({ method: 'POST', path: '/apis/authentication.k8s.io/v1/tokenreviews', body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } });
      const st = review?.status ?? {};
      user = st.authenticated ? { name: String(st.user?.username ?? ''), uid: st.user?.uid, groups: Array.isArray(st.user?.groups) ? st.user.groups : [], extra: st.user?.extra } : null;
      this.tokens.set(token, user, this.o.authenticationTokenWebhookCacheTTL);
    }
    if (!user) throw errors[0] ?? new Error('the token was not accepted by the TokenReview');
    return user;
  }

  /** whether `user` may do `method` on the non-resource `path`, and the reviewer's reason */
  async authorize(user: UserInfo, method: string, path: string): Promise<{ allowed: boolean; reason: string }> {
    if (alwaysAllowed(this.o.authorizationAlwaysAllowPaths, path)) return { allowed: true, reason: '' };
    if (user.groups.includes(PRIVILEGED_GROUP)) return { allowed: true, reason: '' };
    if (!this.sarClient) return { allowed: false, reason: 'no authorization-kubeconfig: requests not allowed by --authorization-always-allow-paths are forbidden' };
    const verb = nonResourceVerb(method);
    const spec: Record<string, unknown> = { user: user.name, groups: user.groups, nonResourceAttributes: { path, verb } };
    if (user.uid) spec['uid'] = user.uid;
    if (user.extra) spec['extra'] = user.extra;
    const key = JSON.stringify(spec);
    const hit = this.decisions.get(key);
    if (hit) return hit;
    const review = await this.sarClient.json<any>({ method: 'POST', path: '/apis/authorization.k8s.io/v1/subjectaccessreviews', body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec } });
    const d = { allowed: review?.status?.allowed === true, reason: String(review?.status?.reason ?? '') };
    this.decisions.set(key, d, d.allowed ? this.o.authorizationWebhookCacheAuthorizedTTL : this.o.authorizationWebhookCacheUnauthorizedTTL);
    return d;
  }
}

function writeStatus(res: ServerResponse, code: number, reason: string, message: string): void {
  res.statusCode = code;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, details: {}, code }) + '\n');
}

/** the serving certificate: the files given, else one made for localhost and the bind address (kept in --cert-dir when it is set) */
async function servingPair(o: SecureServingFlags, pairName: string, log: Logger): Promise<{ cert: string | Buffer; key: string | Buffer }> {
  if (o.tlsCertFile || o.tlsPrivateKeyFile) return loadCertKeyFiles('serving-cert', o.tlsCertFile, o.tlsPrivateKeyFile);
  const certFile = o.certDir ? join(o.certDir, `${pairName}.crt`) : '';
  const keyFile = o.certDir ? join(o.certDir, `${pairName}.key`) : '';
  if (certFile && existsSync(certFile) && existsSync(keyFile)) return loadCertKeyFiles('serving-cert', certFile, keyFile);
  const now = Math.floor(Date.now() / 1000);
  const ca = await createCA(`localhost-ca@${now}`);
  const ips = ['127.0.0.1'];
  if (o.bindAddress && o.bindAddress !== '0.0.0.0' && o.bindAddress !== '::' && !ips.includes(o.bindAddress)) ips.push(o.bindAddress);
  const leaf = await issueServingCert(ca, `localhost@${now}`, { dns: ['localhost'], ips });
  const cert = leaf.certPEM + ca.certPEM;
  if (certFile) {
    mkdirSync(o.certDir, { recursive: true, mode: 0o700 });
    writeFileSync(certFile, cert, { mode: 0o644 });
    writeFileSync(keyFile, leaf.keyPEM, { mode: 0o600 });
    log.info('Generated self-signed cert', { certFile, keyFile });
  }
  return { cert, key: leaf.keyPEM };
}

export type ComponentHandler = (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams) => Promise<boolean> | boolean;

/**
 * Serves `handler` on --secure-port behind the delegated authentication and authorization
 * (BuildHandlerChain): 401 for refused credentials, 403 when not authorized, 404 for a path the
 * handler does not serve. Returns the listener, or undefined with --secure-port=0.
 */
export async function serveComponent(o: SecureServingFlags, pairName: string, auth: DelegatedAuth, handler: ComponentHandler, log: Logger): Promise<SecureListener | undefined> {
  if (o.securePort === 0) {
    log.info('Secure serving is off (--secure-port=0)');
    return undefined;
  }
  const pair = await servingPair(o, pairName, log);
  const prepared = prepareServing({
    ...pair,
    minVersion: o.tlsMinVersion,
    cipherSuites: o.tlsCipherSuites,
    sniCertKeys: loadSNICertKeys(o.tlsSNICertKey),
    http2MaxStreamsPerConnection: o.http2MaxStreamsPerConnection,
    disableHTTP2: o.disableHTTP2Serving,
    permitPortSharing: o.permitPortSharing,
  });
  for (const c of prepared.insecureCiphers) log.warn(`Use of insecure cipher '${c}' detected.`);
  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'https://component');
    const path = url.pathname;
    let user: UserInfo;
    try {
      user = await auth.authenticate(req);
    } catch (e) {
      log.v(2).info('Unable to authenticate the request', { err: (e as Error).message });
      writeStatus(res, 401, 'Unauthorized', 'Unauthorized');
      return;
    }
    const method = req.method ?? 'GET';
    const d = await auth.authorize(user, method, path);
    if (!d.allowed) {
      log.v(4).info('Forbidden', { user: user.name, path, reason: d.reason });
      writeStatus(res, 403, 'Forbidden', `forbidden: User "${user.name}" cannot ${nonResourceVerb(method)} path "${path}"${d.reason ? `: ${d.reason}` : ''}`);
      return;
    }
    res.setHeader('Cache-Control', 'no-cache, private');
    if (await handler(req, res, path, url.searchParams)) return;
    res.statusCode = 404;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.end('404 page not found\n');
  };
  const listener = new SecureListener(prepared, (req, res) => {
    serve(req, res).catch((e) => {
      log.error(e, 'Serving a request failed', { path: req.url });
      if (!res.headersSent) writeStatus(res, 500, 'InternalError', `Internal error occurred: ${(e as Error).message}`);
      else res.end();
    });
  });
  await listener.listen(o.securePort, o.bindAddress || '0.0.0.0');
  return listener;
}

/** a component's /metrics (its Prometheus registry) and /metrics/slis (its health checks' SLIs); false for any other path */
export async function serveComponentMetrics(res: ServerResponse, path: string, registry: { contentType: string; metrics(): Promise<string> }, health: { slisText(): string }): Promise<boolean> {
  if (path === '/metrics') {
    res.setHeader('Content-Type', registry.contentType);
    res.end(await registry.metrics());
    return true;
  }
  if (path === '/metrics/slis') {
    res.setHeader('Content-Type', 'text/plain; version=0.0.4; charset=utf-8');
    res.end(health.slisText());
    return true;
  }
  return false;
}

/**
 * A component's end on SIGTERM or SIGINT, as kube-controller-manager and kube-scheduler end: its
 * work stopped first (its Lease given up), then its secure port closed; past 10 s it exits anyway.
 */
export function exitComponentOnSignals(log: Logger, stopWork: () => Promise<void>, listener: SecureListener | undefined): void {
  exitOnSignals(log, async () => {
    const timer = setTimeout(() => process.exit(0), 10_000);
    timer.unref();
    await stopWork();
    void listener?.beginShutdown();
    listener?.closeAll();
  });
}
