// kubectl's factory: the connection flags (genericclioptions.ConfigFlags and --match-server-version)
// turned into a namespace, a REST client, a cached discovery client and a REST mapper, with
// kubectl's loading rules (--kubeconfig, $KUBECONFIG merged in order, ~/.kube/config, in-cluster,
// and the http://localhost:8080 default when nothing is configured), its warning handling and its
// messages for transport failures.

import { existsSync, readFileSync } from 'node:fs';
import { goDialError, goHostnameError } from '../machinery/goneterr.js';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { log } from '../cli/klog.js';
import { getVersionInfo, formatVersionRaw, userAgent, type VersionInfo } from '../cli/version.js';
import { KubeconfigError, loadKubeconfig, loadRawConfig, type ConnectionConfig, type LoadOptions } from '../client/kubeconfig.js';
import { RESTClient, TransportError, restConfigFromConnection, type ResponseInfo } from '../client/rest.js';
import { DiscoveryClient } from '../client/resources.js';
import { CachedDiscovery, KubectlRESTMapper, discoveryCacheDir } from './discovery.js';
import { goParseDuration } from '../machinery/gostrings.js';

/** The values of kubectl's global connection flags. */
export interface ConfigFlagValues {
  kubeconfig: string;
  cacheDir: string;
  clientCertificate: string;
  clientKey: string;
  token: string;
  as: string;
  asUid: string;
  asGroup: string[];
  username: string;
  password: string;
  cluster: string;
  user: string;
  namespace: string;
  context: string;
  server: string;
  tlsServerName: string;
  insecureSkipTLSVerify: boolean;
  certificateAuthority: string;
  requestTimeout: string;
  disableCompression: boolean;
  matchServerVersion: boolean;
}

/** kubectl's default cache directory: $KUBECACHEDIR or ~/.kube/cache. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.KUBECACHEDIR) return env.KUBECACHEDIR;
  return join(env.HOME || homedir(), '.kube', 'cache');
}

export function defaultConfigFlags(env: NodeJS.ProcessEnv = process.env): ConfigFlagValues {
  return {
    kubeconfig: '',
    cacheDir: defaultCacheDir(env),
    clientCertificate: '',
    clientKey: '',
    token: '',
    as: '',
    asUid: '',
    asGroup: [],
    username: '',
    password: '',
    cluster: '',
    user: '',
    namespace: '',
    context: '',
    server: '',
    tlsServerName: '',
    insecureSkipTLSVerify: false,
    certificateAuthority: '',
    requestTimeout: '0',
    disableCompression: false,
    matchServerVersion: false,
  };
}

/** `invalid configuration: ...`: kubectl prints these as `Error in configuration: ...`. */
export class ConfigurationInvalidError extends Error {
  constructor(readonly errors: string[]) {
    super(errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`);
    this.name = 'ConfigurationInvalidError';
  }
}

/** A failure to reach the server, with kubectl's wording (a Go *url.Error). */
export class ConnectionError extends Error {
  constructor(
    message: string,
    /** host:port, for the "connection refused" message */
    readonly host: string,
    readonly refused: boolean,
    /** the underlying error's text (url.Error's Err): `dial tcp ...: connect: connection refused` */
    readonly detail: string,
  ) {
    super(message);
    this.name = 'ConnectionError';
  }
}

/** clientcmd.ParseTimeout: seconds, or a Go duration. */
export function parseTimeout(s: string): number {
  if (/^[0-9]+$/.test(s)) return Number(s) * 1000;
  try {
    const ns = goParseDuration(s);
    if (ns >= 0n) return Number(ns / 1000000n);
  } catch {
    /* below */
  }
  throw new Error('Invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)');
}

/** Go's text for a transport error, as a *url.Error prints it. */
export function goURLErrorText(verb: string, url: string, e: Error): { text: string; refused: boolean; host: string; detail: string } {
  const err = e as NodeJS.ErrnoException & { address?: string; port?: number };
  const u = new URL(url);
  const host = u.host;
  const method = verb.charAt(0) + verb.slice(1).toLowerCase();
  const dialHost = `${u.hostname.replace(/^\[|\]$/g, '') === 'localhost' ? '127.0.0.1' : u.hostname.replace(/^\[|\]$/g, '')}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;
  let detail: string;
  let refused = false;
  const [dialName, dialPort] = [dialHost.slice(0, dialHost.lastIndexOf(':')), dialHost.slice(dialHost.lastIndexOf(':') + 1)];
  switch (err.code) {
    case 'ETIMEDOUT':
      // (the client's own timeout, where Node reports it so, is net/http's)
      if (/deadline|Timeout/.test(err.message)) {
        detail = (err as { beforeConnect?: boolean }).beforeConnect
          ? 'net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)'
          : 'net/http: request canceled (Client.Timeout exceeded while awaiting headers)';
      } else detail = goDialError(err, { host: dialName, port: dialPort })!;
      break;
    case 'ECONNRESET':
      // a TLS server closing on a plain-HTTP request, or a peer hanging up: Go reads EOF
      detail = err.message === 'socket hang up' ? 'EOF' : 'read: connection reset by peer';
      break;
    case 'EPROTO':
      detail = /wrong version number|http request/i.test(err.message) ? 'http: server gave HTTP response to HTTPS client' : err.message;
      break;
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      detail = `tls: failed to verify certificate: ${goHostnameError(err as NodeJS.ErrnoException & { host?: string; cert?: { subjectaltname?: string } }, u.hostname)}`;
      break;
    default:
      detail = goDialError(err, { host: dialName, port: dialPort }) ?? err.message;
      refused = err.code === 'ECONNREFUSED';
  }
  return { text: `${method} "${url}": ${detail}`, refused, host, detail };
}

export interface FactoryIO {
  stderr: { write(s: string): unknown };
  /** kubectl colors `Warning:` when stderr is a terminal */
  colorWarnings?: boolean;
}

/** Prints the server's `Warning:` headers once each, and counts them (for --warnings-as-errors). */
export class WarningPrinter {
  count = 0;
  private readonly seen = new Set<string>();
  constructor(
    private readonly out: { write(s: string): unknown },
    private readonly color = false,
  ) {}

  /** Handles the values of one response's Warning headers. */
  handle(values: string[]): void {
    for (const v of values) {
      // (Node.js reads a header's bytes as latin1; a Warning's text is UTF-8, as Go writes it)
      for (const w of parseWarningHeader(/[^\x00-\x7f]/.test(v) ? Buffer.from(v, 'latin1').toString('utf8') : v)) {
        if (w.code !== 299 || !w.text) continue;
        if (this.seen.has(w.text)) continue;
        this.seen.add(w.text);
        this.count++;
        this.print(w.text);
      }
    }
  }

  print(message: string): void {
    if (this.color) this.out.write(`\u001b[33;1mWarning:\u001b[0m ${message}\n`);
    else this.out.write(`Warning: ${message}\n`);
  }
}

/** RFC 7234 Warning header values (`299 - "text"`, comma separated), as client-go parses them. */
export function parseWarningHeader(header: string): { code: number; agent: string; text: string }[] {
  const out: { code: number; agent: string; text: string }[] = [];
  let s = header.trim();
  while (s.length > 0) {
    const m = /^(\d{3}) (\S+) "/.exec(s);
    if (!m) break;
    let i = m[0].length;
    let text = '';
    let closed = false;
    while (i < s.length) {
      const c = s[i]!;
      if (c === '\\' && i + 1 < s.length) {
        text += s[i + 1];
        i += 2;
        continue;
      }
      if (c === '"') {
        closed = true;
        i++;
        break;
      }
      text += c;
      i++;
    }
    if (!closed) break;
    out.push({ code: Number(m[1]), agent: m[2]!, text });
    s = s.slice(i).trim();
    // optional date
    if (s.startsWith('"')) {
      const end = s.indexOf('"', 1);
      s = end < 0 ? '' : s.slice(end + 1).trim();
    }
    if (s.startsWith(',')) s = s.slice(1).trim();
    else break;
  }
  return out;
}

/** The kubectl-command headers of KEP 859. */
function commandHeaders(command: string): Record<string, string> {
  return { 'Kubectl-Command': command, 'Kubectl-Session': randomUUID() };
}

function statusText(code: number, text: string): string {
  return text ? `${code} ${text}` : String(code);
}

export class Factory {
  private conn: ConnectionConfig | undefined;
  private connErr: Error | undefined;
  private rest: RESTClient | undefined;
  private disco: CachedDiscovery | undefined;
  private mapper: KubectlRESTMapper | undefined;
  private versionChecked = false;
  readonly warnings: WarningPrinter;

  constructor(
    readonly flags: ConfigFlagValues,
    readonly io: FactoryIO,
    readonly command: string,
    readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.warnings = new WarningPrinter(io.stderr, !!io.colorWarnings);
  }

  private loadOptions(): LoadOptions {
    const f = this.flags;
    return {
      explicitPath: f.kubeconfig || undefined,
      kubeconfigEnv: this.env.KUBECONFIG ?? '',
      homeDir: this.env.HOME || homedir(),
      context: f.context || undefined,
      cluster: f.cluster || undefined,
      user: f.user || undefined,
      namespace: f.namespace || undefined,
      server: f.server || undefined,
      tlsServerName: f.tlsServerName || undefined,
      insecureSkipTLSVerify: f.insecureSkipTLSVerify || undefined,
      certificateAuthority: f.certificateAuthority || undefined,
      clientCertificate: f.clientCertificate || undefined,
      clientKey: f.clientKey || undefined,
      token: f.token || undefined,
      username: f.username || undefined,
      password: f.password || undefined,
      impersonate: f.as || undefined,
      impersonateUID: f.asUid || undefined,
      impersonateGroups: f.asGroup.length ? f.asGroup : undefined,
      env: this.env,
    };
  }

  private rawConfig() {
    return loadRawConfig(this.loadOptions()).config;
  }

  private contextName(cfg: ReturnType<Factory['rawConfig']>): string {
    return this.flags.context || cfg.currentContext;
  }

  /**
   * clientcmd's Namespace(): the -n value (enforced), else the context's namespace, else
   * `default` (also when nothing is configured: kubectl then talks to http://localhost:8080).
   * A context that does not exist is a configuration error.
   */
  namespace(): { namespace: string; enforce: boolean } {
    if (this.flags.namespace) return { namespace: this.flags.namespace, enforce: true };
    let cfg;
    try {
      cfg = this.rawConfig();
    } catch (e) {
      throw this.configError(e);
    }
    const name = this.contextName(cfg);
    if (name && !cfg.contexts[name]) throw new ConfigurationInvalidError([`context was not found for specified context: ${name}`]);
    const authName = this.flags.user || (name ? cfg.contexts[name]?.user : '') || '';
    if ((this.flags.asGroup.length || this.flags.asUid) && !this.flags.as && !(authName && cfg.users[authName]?.impersonate)) {
      // reported plainly on this path, as kubectl does
      throw new Error(`requesting uid, groups or user-extra for ${authName || 'default'} without impersonating a user`);
    }
    const isEmpty = !cfg.currentContext && !Object.keys(cfg.clusters).length && !Object.keys(cfg.users).length && !Object.keys(cfg.contexts).length;
    if (isEmpty) {
      const ic = this.inClusterNamespace();
      if (ic !== undefined) return { namespace: ic, enforce: false };
    }
    return { namespace: (name && cfg.contexts[name]?.namespace) || 'default', enforce: false };
  }

  private inClusterNamespace(): string | undefined {
    const host = this.env.KUBERNETES_SERVICE_HOST;
    const port = this.env.KUBERNETES_SERVICE_PORT;
    if (!host || !port || !existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token')) return undefined;
    try {
      return readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/namespace', 'utf8').trim() || 'default';
    } catch {
      return 'default';
    }
  }

  private configError(e: unknown): Error {
    if (e instanceof KubeconfigError) {
      const m = /^invalid configuration: (.*)$/s.exec(e.message);
      if (m) {
        const body = m[1]!;
        const parts = body.startsWith('[') && body.endsWith(']') ? body.slice(1, -1).split(', ') : [body];
        return new ConfigurationInvalidError(parts);
      }
      return new Error(e.message);
    }
    return e as Error;
  }

  /**
   * A failure of an exec credential plugin, as kubectl reports it when its transport asks for
   * credentials: `Unable to connect to the server: getting credentials: exec: ...`.
   */
  private execError(e: unknown, command: string | undefined): Error | undefined {
    if (!command || !(e instanceof KubeconfigError) || !/^(exec|decoding stdout)/.test(e.message)) return undefined;
    let msg = e.message;
    const notFound = /^exec: executable (.*) not found/.exec(msg);
    if (notFound && command.includes('/')) msg = `exec: fork/exec ${command}: no such file or directory`;
    const detail = `getting credentials: ${msg}`;
    return new ConnectionError(detail, '', false, detail);
  }

  /** The resolved connection (clientcmd's ClientConfig; runs exec credential plugins). */
  async connection(): Promise<ConnectionConfig> {
    if (this.conn) return this.conn;
    if (this.connErr) throw this.connErr;
    try {
      return await this.resolveConnection();
    } catch (e) {
      this.connErr = e as Error;
      throw e;
    }
  }

  private async resolveConnection(): Promise<ConnectionConfig> {
    const opts = this.loadOptions();
    let cfg;
    try {
      cfg = this.rawConfig();
    } catch (e) {
      throw this.configError(e);
    }
    const name = this.contextName(cfg);
    const ctx = name ? cfg.contexts[name] : undefined;
    if (this.flags.user && !cfg.users[this.flags.user]) throw new Error(`auth info ${JSON.stringify(this.flags.user)} does not exist`);
    if (this.flags.context && !ctx) throw new Error(`context was not found for specified context: ${this.flags.context}`);
    if (this.flags.cluster && !cfg.clusters[this.flags.cluster] && !opts.server) throw new Error(`no server found for cluster ${JSON.stringify(this.flags.cluster)}`);
    if (name && !ctx) throw new ConfigurationInvalidError([`context was not found for specified context: ${name}`]);
    const authName = this.flags.user || ctx?.user || '';
    const auth = authName ? cfg.users[authName] : undefined;
    if ((this.flags.asGroup.length || this.flags.asUid) && !this.flags.as && !auth?.impersonate) {
      throw new ConfigurationInvalidError([`requesting uid, groups or user-extra for ${authName || 'default'} without impersonating a user`]);
    }
    // client-go takes a server without a scheme to be plain HTTP
    if (opts.server && !/^[a-z][a-z0-9+.-]*:\/\//i.test(opts.server)) opts.server = `http://${opts.server}`;
    const clusterName = this.flags.cluster || ctx?.cluster || '';
    const cluster = clusterName ? cfg.clusters[clusterName] : undefined;
    const isEmpty = !cfg.currentContext && !Object.keys(cfg.clusters).length && !Object.keys(cfg.users).length && !Object.keys(cfg.contexts).length;
    let conn: ConnectionConfig;
    if (isEmpty && !opts.server && this.inClusterNamespace() !== undefined) {
      try {
        conn = await loadKubeconfig(opts);
      } catch (e) {
        throw this.configError(e);
      }
    } else if (isEmpty || !name) {
      // clientcmd's cluster defaults when nothing is configured: the local insecure port
      conn = {
        server: normalizeServer(opts.server || this.env.KUBERNETES_MASTER || 'http://localhost:8080'),
        contextName: '',
        clusterName: '',
        userName: '',
        namespace: this.flags.namespace || 'default',
        namespaceExplicit: !!this.flags.namespace,
        insecureSkipTLSVerify: !!opts.insecureSkipTLSVerify,
        tlsServerName: opts.tlsServerName,
        token: opts.token,
        username: opts.username,
        password: opts.password,
        impersonate: opts.impersonate ? { user: opts.impersonate, uid: opts.impersonateUID, groups: opts.impersonateGroups } : undefined,
        disableCompression: false,
      };
    } else {
      if (!opts.server && !(cluster && cluster.server)) opts.server = this.env.KUBERNETES_MASTER || 'http://localhost:8080';
      try {
        conn = await loadKubeconfig(opts);
      } catch (e) {
        throw this.execError(e, auth?.exec?.command) ?? this.configError(e);
      }
    }
    if (this.flags.disableCompression) conn.disableCompression = true;
    this.conn = conn;
    return conn;
  }

  private timeoutMs(): number {
    return parseTimeout(this.flags.requestTimeout || '0');
  }

  private onResponse = (r: ResponseInfo): void => {
    const w = r.headers.warning;
    if (w) this.warnings.handle(Array.isArray(w) ? w : [w]);
    if (log.enabled(6)) log.v(6).info('Response', { verb: r.verb, url: r.url, status: statusText(r.status, r.statusText), milliseconds: r.elapsedMs });
    if (log.enabled(8)) {
      log.v(8).info('Request Headers', Object.fromEntries(Object.entries(r.requestHeaders).filter(([k]) => k.toLowerCase() !== 'authorization').map(([k, v]) => [k, String(v)])));
    }
  };

  private onRequestError = (r: { verb: string; url: string; error: Error; elapsedMs: number }): void => {
    if (log.enabled(6)) log.v(6).info('Response', { verb: r.verb, url: r.url, status: '', milliseconds: r.elapsedMs });
  };

  private async makeClient(extra: { qps?: number; burst?: number; timeoutMs?: number }): Promise<RESTClient> {
    const conn = await this.connection();
    const timeoutMs = extra.timeoutMs ?? this.timeoutMs();
    const cfg = restConfigFromConnection(conn, {
      timeoutMs,
      qps: extra.qps,
      burst: extra.burst,
      maxRetries: 10,
      onResponse: this.onResponse,
      onRequestError: this.onRequestError,
    });
    cfg.headers = { ...(cfg.headers ?? {}), ...commandHeaders(this.command) };
    // kubectl's User-Agent carries its version and commit (client-go's DefaultKubernetesUserAgent)
    cfg.userAgent ??= userAgent('keelson');
    return new RESTClient(cfg);
  }

  /** The REST client for API calls (client-go's defaults: QPS 5, burst 10). */
  async restClient(): Promise<RESTClient> {
    await this.checkServerVersion();
    if (this.rest) return this.rest;
    this.rest = await this.makeClient({});
    return this.rest;
  }

  /** The disk-cached discovery client (burst 300, QPS 50, 32s timeout unless --request-timeout). */
  async discovery(): Promise<CachedDiscovery> {
    if (this.disco) return this.disco;
    const conn = await this.connection();
    const t = this.timeoutMs();
    const client = await this.makeClient({ qps: 50, burst: 300, timeoutMs: t > 0 ? t : 32_000 });
    const defaultDir = defaultCacheDir(this.env);
    const cacheDir = this.flags.cacheDir && this.flags.cacheDir !== defaultDir ? this.flags.cacheDir : defaultDir;
    const dir = discoveryCacheDir(join(cacheDir, 'discovery'), conn.server.replace(/\/+$/, ''));
    this.disco = new CachedDiscovery(new DiscoveryClient(client), dir, {
      handleError: (msg) => log.error(msg, 'Unhandled Error'),
      describe: (e) => this.describeError(e),
      log: (level, msg) => log.v(level).infof('%s', msg),
    });
    return this.disco;
  }

  async restMapper(): Promise<KubectlRESTMapper> {
    await this.checkServerVersion();
    if (this.mapper) return this.mapper;
    this.mapper = new KubectlRESTMapper(await this.discovery(), (msg) => this.warnings.print(msg));
    return this.mapper;
  }

  /** --match-server-version: the server's version must equal this client's. */
  async checkServerVersion(): Promise<void> {
    if (!this.flags.matchServerVersion || this.versionChecked) return;
    this.versionChecked = true;
    const d = await this.discovery();
    let server: VersionInfo;
    try {
      server = (await d.live.serverVersion()) as unknown as VersionInfo;
    } catch (e) {
      throw new Error(`couldn't read version from server: ${this.describeError(e)}`);
    }
    const client = getVersionInfo();
    if (client.gitVersion !== server.gitVersion || client.gitCommit !== server.gitCommit || client.gitTreeState !== server.gitTreeState) {
      throw new Error(`server version (&${formatVersionRaw(server)}) differs from client version (${formatVersionRaw(client)})!\n`);
    }
  }

  /** The Go text of an error from a request (url.Error for transport failures). */
  describeError(e: unknown): string {
    if (e instanceof TransportError) return this.transportText(e);
    return (e as Error).message;
  }

  transportText(e: TransportError): string {
    const cause = (e.cause as Error) ?? e;
    const base = this.conn?.server ?? '';
    return goURLErrorText(e.verb, base + e.path, cause).text;
  }

  /** Converts a transport failure into kubectl's connection error. */
  connectionError(e: TransportError): ConnectionError {
    const cause = (e.cause as Error) ?? e;
    const base = this.conn?.server ?? '';
    const r = goURLErrorText(e.verb, base + e.path, cause);
    return new ConnectionError(r.text, r.host, r.refused, r.detail);
  }

  close(): void {
    this.rest?.close();
    this.disco?.live.rest.close();
  }
}

function normalizeServer(s: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(s) ? s.replace(/\/+$/, '') : `http://${s}`;
}
