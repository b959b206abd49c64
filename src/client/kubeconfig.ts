// kubeconfig files: writing them (with embedded certificates) and loading them with kubectl's
// rules, down to a resolved connection config a REST client can use.
//
// Loading follows client-go's clientcmd:
//   - an explicit path (--kubeconfig) must exist and is the only file read;
//   - else every file in $KUBECONFIG (':'-separated, duplicates dropped, missing files skipped)
//     is merged: for clusters, users and contexts the first file defining a name wins; for
//     current-context the first file setting it wins;
//   - else ~/.kube/config;
//   - relative paths in a file (certificate-authority, client-certificate, client-key,
//     tokenFile, and an exec command containing a '/') are relative to that file's directory;
//   - --context, --cluster, --user, --namespace, --server, --token, ... override the file;
//   - with nothing configured, in-cluster service account settings are used when present.
//
// This module stands alone (Node built-ins and `yaml`), so any layer can use it.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync, chmodSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { randomBytes } from 'node:crypto';
import { yamlModule } from '../codec/yamlmodule.js';

// `yaml` is loaded on first use (JSON kubeconfigs do not need it).
const yaml = yamlModule;

// ── the kubeconfig model (client-go's clientcmd api, with map-shaped sections) ─────────

export interface Cluster {
  server: string;
  certificateAuthority?: string;
  /** PEM bytes of certificate-authority-data (already base64-decoded). */
  certificateAuthorityData?: string;
  insecureSkipTLSVerify?: boolean;
  tlsServerName?: string;
  proxyURL?: string;
  disableCompression?: boolean;
  extensions?: Record<string, unknown>;
  /** The file this entry came from. */
  locationOfOrigin?: string;
}

export interface ExecEnvVar {
  name: string;
  value: string;
}

export interface ExecConfig {
  command: string;
  args?: string[];
  env?: ExecEnvVar[];
  apiVersion: string;
  installHint?: string;
  provideClusterInfo?: boolean;
  interactiveMode?: 'Never' | 'IfAvailable' | 'Always' | '';
}

export interface AuthInfo {
  clientCertificate?: string;
  clientCertificateData?: string;
  clientKey?: string;
  clientKeyData?: string;
  token?: string;
  tokenFile?: string;
  impersonate?: string;
  impersonateUID?: string;
  impersonateGroups?: string[];
  impersonateUserExtra?: Record<string, string[]>;
  username?: string;
  password?: string;
  exec?: ExecConfig;
  authProvider?: { name: string; config?: Record<string, string> };
  locationOfOrigin?: string;
}

export interface Context {
  cluster: string;
  user: string;
  namespace?: string;
  locationOfOrigin?: string;
}

export interface Config {
  currentContext: string;
  clusters: Record<string, Cluster>;
  users: Record<string, AuthInfo>;
  contexts: Record<string, Context>;
  preferences: Record<string, unknown>;
}

export class KubeconfigError extends Error {
  override name = 'KubeconfigError';
}

function emptyConfig(): Config {
  return { currentContext: '', clusters: {}, users: {}, contexts: {}, preferences: {} };
}

// ── parsing one file ─────────────────────────────────────────────────────────

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : v === undefined || v === null ? undefined : String(v);
}

function b64(v: unknown, what: string, file: string): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new KubeconfigError(`error loading config file "${file}": ${what} must be a base64 string`);
  return Buffer.from(v, 'base64').toString('utf8');
}

function namedList(doc: Record<string, unknown>, key: string, file: string): [string, Record<string, unknown>][] {
  const list = doc[key];
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new KubeconfigError(`error loading config file "${file}": ${key} must be a list`);
  const out: [string, Record<string, unknown>][] = [];
  for (const item of list) {
    if (typeof item !== 'object' || item === null) continue;
    const it = item as Record<string, unknown>;
    out.push([str(it.name) ?? '', it]);
  }
  return out;
}

/** Parses kubeconfig YAML/JSON text. `file` is used for messages and relative paths. */
export function parseKubeconfig(text: string, file = ''): Config {
  let doc: unknown;
  try {
    doc = undefined;
    if (text.trimStart().startsWith('{')) {
      try { doc = JSON.parse(text); } catch { doc = undefined; }
    }
    if (doc === undefined) doc = yaml().parse(text);
  } catch (e) {
    throw new KubeconfigError(`error loading config file "${file}": ${(e as Error).message}`);
  }
  const cfg = emptyConfig();
  if (doc === null || doc === undefined) return cfg;
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new KubeconfigError(`error loading config file "${file}": not a kubeconfig mapping`);
  const d = doc as Record<string, unknown>;
  cfg.currentContext = str(d['current-context']) ?? '';
  if (d.preferences && typeof d.preferences === 'object') cfg.preferences = d.preferences as Record<string, unknown>;
  for (const [name, item] of namedList(d, 'clusters', file)) {
    const c = (item.cluster ?? {}) as Record<string, unknown>;
    cfg.clusters[name] = {
      server: str(c.server) ?? '',
      certificateAuthority: str(c['certificate-authority']),
      certificateAuthorityData: b64(c['certificate-authority-data'], 'certificate-authority-data', file),
      insecureSkipTLSVerify: c['insecure-skip-tls-verify'] === true,
      tlsServerName: str(c['tls-server-name']),
      proxyURL: str(c['proxy-url']),
      disableCompression: c['disable-compression'] === true,
      extensions: extensionsOf(c.extensions),
      locationOfOrigin: file,
    };
  }
  for (const [name, item] of namedList(d, 'users', file)) {
    const u = (item.user ?? {}) as Record<string, unknown>;
    const exec = u.exec as Record<string, unknown> | undefined;
    const ap = u['auth-provider'] as Record<string, unknown> | undefined;
    cfg.users[name] = {
      clientCertificate: str(u['client-certificate']),
      clientCertificateData: b64(u['client-certificate-data'], 'client-certificate-data', file),
      clientKey: str(u['client-key']),
      clientKeyData: b64(u['client-key-data'], 'client-key-data', file),
      token: str(u.token),
      tokenFile: str(u.tokenFile),
      impersonate: str(u.as),
      impersonateUID: str(u['as-uid']),
      impersonateGroups: Array.isArray(u['as-groups']) ? (u['as-groups'] as unknown[]).map(String) : undefined,
      impersonateUserExtra: (u['as-user-extra'] as Record<string, string[]> | undefined) ?? undefined,
      username: str(u.username),
      password: str(u.password),
      exec: exec
        ? {
            command: str(exec.command) ?? '',
            args: Array.isArray(exec.args) ? (exec.args as unknown[]).map(String) : undefined,
            env: Array.isArray(exec.env) ? (exec.env as Record<string, unknown>[]).map((e) => ({ name: str(e.name) ?? '', value: str(e.value) ?? '' })) : undefined,
            apiVersion: str(exec.apiVersion) ?? '',
            installHint: str(exec.installHint),
            provideClusterInfo: exec.provideClusterInfo === true,
            interactiveMode: (str(exec.interactiveMode) ?? '') as ExecConfig['interactiveMode'],
          }
        : undefined,
      authProvider: ap ? { name: str(ap.name) ?? '', config: ap.config as Record<string, string> | undefined } : undefined,
      locationOfOrigin: file,
    };
  }
  for (const [name, item] of namedList(d, 'contexts', file)) {
    const c = (item.context ?? {}) as Record<string, unknown>;
    cfg.contexts[name] = { cluster: str(c.cluster) ?? '', user: str(c.user) ?? '', namespace: str(c.namespace), locationOfOrigin: file };
  }
  // client-go defaults an exec plugin's interactive mode for the older API versions only.
  for (const u of Object.values(cfg.users)) {
    if (u.exec && !u.exec.interactiveMode && /^client\.authentication\.k8s\.io\/v1(alpha1|beta1)$/.test(u.exec.apiVersion)) u.exec.interactiveMode = 'IfAvailable';
  }
  return cfg;
}

function extensionsOf(v: unknown): Record<string, unknown> | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: Record<string, unknown> = {};
  for (const e of v as Record<string, unknown>[]) if (e && typeof e.name === 'string') out[e.name] = e.extension;
  return out;
}

function resolveIn(base: string, p: string | undefined): string | undefined {
  if (!p) return p;
  return isAbsolute(p) ? p : join(base, p);
}

/** client-go's ResolveLocalPaths: file references relative to the file that holds them. */
export function resolveLocalPaths(cfg: Config): Config {
  for (const c of Object.values(cfg.clusters)) {
    if (!c.locationOfOrigin) continue;
    const base = resolve(dirname(c.locationOfOrigin));
    c.certificateAuthority = resolveIn(base, c.certificateAuthority);
  }
  for (const u of Object.values(cfg.users)) {
    if (!u.locationOfOrigin) continue;
    const base = resolve(dirname(u.locationOfOrigin));
    u.clientCertificate = resolveIn(base, u.clientCertificate);
    u.clientKey = resolveIn(base, u.clientKey);
    u.tokenFile = resolveIn(base, u.tokenFile);
    if (u.exec && u.exec.command.includes(sep)) u.exec.command = resolveIn(base, u.exec.command)!;
  }
  return cfg;
}

// ── loading rules ────────────────────────────────────────────────────────────

export interface LoadingRules {
  /** --kubeconfig: must exist; no other file is read. */
  explicitPath?: string;
  /** The KUBECONFIG value; process.env.KUBECONFIG by default. */
  kubeconfigEnv?: string;
  /** Home directory for ~/.kube/config; os.homedir() by default. */
  homeDir?: string;
}

/** The files the rules read, in priority order. */
export function kubeconfigPrecedence(rules: LoadingRules = {}): string[] {
  if (rules.explicitPath) return [rules.explicitPath];
  const env = rules.kubeconfigEnv ?? process.env.KUBECONFIG ?? '';
  if (env) {
    const seen = new Set<string>();
    const out: string[] = [];
    for (const p of env.split(delimiter)) {
      if (!p || seen.has(p)) continue;
      seen.add(p);
      out.push(p);
    }
    return out;
  }
  return [join(rules.homeDir ?? homedir(), '.kube', 'config')];
}

/** Reads and merges the kubeconfig files the rules name (clientcmd's Load). */
export function loadRawConfig(rules: LoadingRules = {}): { config: Config; files: string[]; missing: string[] } {
  if (rules.explicitPath && !existsSync(rules.explicitPath)) {
    throw new KubeconfigError(`stat ${rules.explicitPath}: no such file or directory`);
  }
  const files: string[] = [];
  const missing: string[] = [];
  const configs: Config[] = [];
  const errs: string[] = [];
  for (const f of kubeconfigPrecedence(rules)) {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') { missing.push(f); continue; }
      errs.push(`error loading config file "${f}": ${(e as Error).message}`);
      continue;
    }
    try {
      configs.push(parseKubeconfig(text, f));
      files.push(f);
    } catch (e) {
      errs.push((e as Error).message);
    }
  }
  if (errs.length) throw new KubeconfigError(errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`);
  const merged = emptyConfig();
  for (const c of configs) {
    for (const k of ['clusters', 'users', 'contexts'] as const) {
      const into = merged[k] as Record<string, unknown>;
      for (const [name, v] of Object.entries(c[k])) if (!(name in into)) into[name] = v;
    }
    if (!merged.currentContext && c.currentContext) merged.currentContext = c.currentContext;
    for (const [k, v] of Object.entries(c.preferences)) if (!(k in merged.preferences)) merged.preferences[k] = v;
  }
  resolveLocalPaths(merged);
  return { config: merged, files, missing };
}

// ── overrides and the resolved connection ─────────────────────────────────────

/** kubectl's connection flags. */
export interface Overrides {
  context?: string;
  cluster?: string;
  user?: string;
  namespace?: string;
  server?: string;
  tlsServerName?: string;
  insecureSkipTLSVerify?: boolean;
  certificateAuthority?: string;
  clientCertificate?: string;
  clientKey?: string;
  token?: string;
  username?: string;
  password?: string;
  impersonate?: string;
  impersonateUID?: string;
  impersonateGroups?: string[];
}

export interface ExecCredentials {
  token?: string;
  cert?: string;
  key?: string;
  /** When the plugin said the credentials expire (ms since epoch). */
  expiresAt?: number;
}

/** What a REST client needs to talk to the API server. */
export interface ConnectionConfig {
  /** Base URL, scheme included: `https://127.0.0.1:6443`. */
  server: string;
  contextName: string;
  clusterName: string;
  userName: string;
  /** The namespace for namespaced requests: --namespace, else the context's, else `default`. */
  namespace: string;
  /** Whether the namespace came from --namespace or the context (kubectl's "explicit"). */
  namespaceExplicit: boolean;
  /** CA bundle (PEM) to verify the server with; undefined means the system roots. */
  ca?: string;
  insecureSkipTLSVerify: boolean;
  tlsServerName?: string;
  /** Client certificate and key (PEM). */
  cert?: string;
  key?: string;
  token?: string;
  /** The token file, re-read by clients that rotate tokens (service accounts). */
  tokenFile?: string;
  username?: string;
  password?: string;
  impersonate?: { user: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  proxyURL?: string;
  disableCompression: boolean;
  /** Present for users with an exec credential plugin. */
  execProvider?: ExecCredentialProvider;
}

export interface LoadOptions extends LoadingRules, Overrides {
  /** Run an exec credential plugin now and fill token/cert/key from it (default true). */
  runExec?: boolean;
  /** In-cluster fallback settings (tests). */
  inCluster?: { host?: string; port?: string; tokenFile?: string; caFile?: string; namespaceFile?: string };
  /** Environment for exec plugins (process.env by default). */
  env?: NodeJS.ProcessEnv;
}

function readFileOrThrow(path: string, what: string, owner: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const msg = code === 'ENOENT' ? `open ${path}: no such file or directory` : (e as Error).message;
    throw new KubeconfigError(`unable to read ${what} ${path} for ${owner} due to ${msg}`);
  }
}

/** client-go's DefaultServerURL: add a scheme when the server has none. */
export function normalizeServer(host: string, tls: boolean): string {
  let u: URL | undefined;
  try {
    u = new URL(host);
  } catch {
    u = undefined;
  }
  if (!u || !u.host || !/^[a-z][a-z0-9+.-]*:$/i.test(u.protocol)) {
    try {
      u = new URL((tls ? 'https://' : 'http://') + host);
    } catch {
      throw new KubeconfigError(`host must be a URL or a host:port pair: ${JSON.stringify(host)}`);
    }
  }
  return u.href.replace(/\/$/, '');
}

function inClusterConfig(opts: LoadOptions): ConnectionConfig | undefined {
  const ic = opts.inCluster ?? {};
  const host = ic.host ?? process.env.KUBERNETES_SERVICE_HOST;
  const port = ic.port ?? process.env.KUBERNETES_SERVICE_PORT;
  const dir = '/var/run/secrets/kubernetes.io/serviceaccount';
  const tokenFile = ic.tokenFile ?? join(dir, 'token');
  if (!host || !port || !existsSync(tokenFile)) return undefined;
  const caFile = ic.caFile ?? join(dir, 'ca.crt');
  const nsFile = ic.namespaceFile ?? join(dir, 'namespace');
  const ns = opts.namespace ?? (existsSync(nsFile) ? readFileSync(nsFile, 'utf8').trim() : '') ?? '';
  const h = host.includes(':') ? `[${host}]` : host;
  return {
    server: `https://${h}:${port}`,
    contextName: '', clusterName: '', userName: '',
    namespace: ns || 'default',
    namespaceExplicit: !!ns,
    ca: existsSync(caFile) ? readFileSync(caFile, 'utf8') : undefined,
    insecureSkipTLSVerify: false,
    token: readFileSync(tokenFile, 'utf8').trim(),
    tokenFile,
    disableCompression: false,
  };
}

/**
 * Loads kubeconfig with kubectl's rules and overrides and resolves the selected context into a
 * connection config. Exec credential plugins are run once here (their provider stays on the
 * result for refreshing). Throws KubeconfigError with client-go's messages.
 */
export async function loadKubeconfig(opts: LoadOptions = {}): Promise<ConnectionConfig> {
  const { config } = loadRawConfig(opts);
  const isEmpty = !config.currentContext && !Object.keys(config.clusters).length && !Object.keys(config.users).length && !Object.keys(config.contexts).length;
  if (isEmpty && !opts.server) {
    const ic = inClusterConfig(opts);
    if (ic) return ic;
    throw new KubeconfigError('invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable');
  }

  const contextName = opts.context || config.currentContext;
  let context: Context | undefined;
  if (contextName) {
    context = config.contexts[contextName];
    if (!context) throw new KubeconfigError(`context was not found for specified context: ${contextName}`);
  } else if (!opts.server) {
    throw new KubeconfigError('invalid configuration: no context chosen');
  }
  const clusterName = opts.cluster || context?.cluster || '';
  const userName = opts.user || context?.user || '';
  const errs: string[] = [];
  let cluster: Cluster | undefined = clusterName ? config.clusters[clusterName] : undefined;
  if (clusterName && !cluster) {
    if (opts.cluster) errs.push(`cluster ${JSON.stringify(clusterName)} does not exist`);
    else errs.push(`cluster ${JSON.stringify(clusterName)} was not found for context ${JSON.stringify(contextName)}`);
  }
  let user: AuthInfo | undefined = userName ? config.users[userName] : undefined;
  if (userName && !user) {
    if (opts.user) errs.push(`auth info ${JSON.stringify(userName)} does not exist`);
    else errs.push(`user ${JSON.stringify(userName)} was not found for context ${JSON.stringify(contextName)}`);
  }
  cluster = { ...(cluster ?? { server: '' }) };
  user = { ...(user ?? {}) };

  // Overrides (kubectl flags). --insecure-skip-tls-verify drops the CA, as kubectl does.
  if (opts.server) cluster.server = opts.server;
  if (opts.tlsServerName) cluster.tlsServerName = opts.tlsServerName;
  if (opts.certificateAuthority) { cluster.certificateAuthority = opts.certificateAuthority; cluster.certificateAuthorityData = undefined; }
  if (opts.insecureSkipTLSVerify) { cluster.insecureSkipTLSVerify = true; cluster.certificateAuthority = undefined; cluster.certificateAuthorityData = undefined; }
  if (opts.clientCertificate) { user.clientCertificate = opts.clientCertificate; user.clientCertificateData = undefined; }
  if (opts.clientKey) { user.clientKey = opts.clientKey; user.clientKeyData = undefined; }
  if (opts.token) { user.token = opts.token; user.tokenFile = undefined; }
  if (opts.username) user.username = opts.username;
  if (opts.password) user.password = opts.password;
  if (opts.impersonate) user.impersonate = opts.impersonate;
  if (opts.impersonateUID) user.impersonateUID = opts.impersonateUID;
  if (opts.impersonateGroups) user.impersonateGroups = opts.impersonateGroups;

  // Validation of the parts in use (clientcmd's ConfirmUsable).
  const uname = userName || 'default';
  const cname = clusterName;
  if (!cluster.server && !(clusterName && !config.clusters[clusterName])) {
    errs.push(cname ? `no server found for cluster ${JSON.stringify(cname)}` : 'default cluster has no server defined');
  }
  if (cluster.certificateAuthority && cluster.certificateAuthorityData && !opts.certificateAuthority) {
    errs.push(`certificate-authority-data and certificate-authority are both specified for ${cname}. certificate-authority-data will override.`);
  }
  const methods: string[] = [];
  if (user.token) methods.push('token');
  if (user.username || user.password) methods.push('basicAuth');
  if (methods.length > 1) errs.push(`more than one authentication method found for ${uname}; found [${methods.join(' ')}], only one is allowed`);
  if (user.clientCertificate || user.clientCertificateData) {
    if (!user.clientKey && !user.clientKeyData) errs.push(`client-key-data or client-key must be specified for ${uname} to use the clientCert authentication method.`);
  }
  if (user.exec) {
    if (!user.exec.command) errs.push(`command must be specified for ${uname} to use exec authentication plugin`);
    if (!user.exec.apiVersion) errs.push(`apiVersion must be specified for ${uname} to use exec authentication plugin`);
    for (const e of user.exec.env ?? []) if (!e.name) errs.push(`env variable name must be specified for ${uname} to use exec authentication plugin`);
  }
  if ((user.impersonateGroups?.length || (user.impersonateUserExtra && Object.keys(user.impersonateUserExtra).length)) && !user.impersonate) {
    errs.push(`requesting groups or user-extra for ${uname} without impersonating a user`);
  }
  if (errs.length) throw new KubeconfigError(`invalid configuration: ${errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`}`);

  const ca = cluster.certificateAuthorityData ?? (cluster.certificateAuthority ? readFileOrThrow(cluster.certificateAuthority, 'certificate-authority', cname) : undefined);
  if (cluster.insecureSkipTLSVerify && ca) throw new KubeconfigError('specifying a root certificates file with the insecure flag is not allowed');
  const cert = user.clientCertificateData ?? (user.clientCertificate ? readFileOrThrow(user.clientCertificate, 'client-cert', uname) : undefined);
  const key = user.clientKeyData ?? (user.clientKey ? readFileOrThrow(user.clientKey, 'client-key', uname) : undefined);
  let token = user.token;
  if (!token && user.tokenFile) token = readFileOrThrow(user.tokenFile, 'tokenFile', uname).trim();

  const tls = !!(ca || cert || cluster.insecureSkipTLSVerify);
  const ns = opts.namespace || context?.namespace || '';
  const conn: ConnectionConfig = {
    server: normalizeServer(cluster.server, tls),
    contextName: contextName ?? '',
    clusterName,
    userName,
    namespace: ns || 'default',
    namespaceExplicit: !!ns,
    ca,
    insecureSkipTLSVerify: !!cluster.insecureSkipTLSVerify,
    tlsServerName: cluster.tlsServerName || undefined,
    cert,
    key,
    token,
    tokenFile: user.token ? undefined : user.tokenFile,
    username: user.username,
    password: user.password,
    impersonate: user.impersonate
      ? { user: user.impersonate, uid: user.impersonateUID, groups: user.impersonateGroups, extra: user.impersonateUserExtra }
      : undefined,
    proxyURL: cluster.proxyURL,
    disableCompression: !!cluster.disableCompression,
  };
  if (user.exec) {
    conn.execProvider = new ExecCredentialProvider(user.exec, cluster, opts.env);
    if (opts.runExec ?? true) {
      const creds = await conn.execProvider.get();
      if (creds.token) conn.token = creds.token;
      if (creds.cert) { conn.cert = creds.cert; conn.key = creds.key; }
    }
  }
  return conn;
}

// ── exec credential plugins ───────────────────────────────────────────────────

const EXEC_API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'];

/**
 * Runs a client-go credential plugin (ExecCredential, client.authentication.k8s.io/v1 or
 * v1beta1) and caches its answer until the plugin's expirationTimestamp.
 */
export class ExecCredentialProvider {
  private cached: ExecCredentials | undefined;
  private inflight: Promise<ExecCredentials> | undefined;

  constructor(readonly config: ExecConfig, private readonly cluster: Cluster, private readonly env: NodeJS.ProcessEnv = process.env, private readonly now: () => number = Date.now) {
    if (!EXEC_API_VERSIONS.includes(config.apiVersion)) throw new KubeconfigError(`exec plugin: invalid apiVersion ${JSON.stringify(config.apiVersion)}`);
  }

  /** Cached credentials, or fresh ones from the plugin when there are none or they expired. */
  get(): Promise<ExecCredentials> {
    if (this.cached && (this.cached.expiresAt === undefined || this.cached.expiresAt > this.now())) return Promise.resolve(this.cached);
    return this.refresh();
  }

  /** Runs the plugin again (a client does this after a 401). */
  refresh(): Promise<ExecCredentials> {
    if (!this.inflight) {
      this.inflight = this.run().then(
        (c) => { this.cached = c; this.inflight = undefined; return c; },
        (e: unknown) => { this.inflight = undefined; throw e; },
      );
    }
    return this.inflight;
  }

  private interactive(): boolean {
    const mode = this.config.interactiveMode ?? '';
    switch (mode) {
      case 'Never': return false;
      case 'IfAvailable': return !!process.stdin.isTTY;
      case 'Always':
        if (!process.stdin.isTTY) throw new KubeconfigError('exec plugin cannot support interactive mode: standard input is not a terminal');
        return true;
      default:
        throw new KubeconfigError(`exec plugin cannot support interactive mode: unknown interactiveMode: ${JSON.stringify(mode)}`);
    }
  }

  private execInfo(interactive: boolean): string {
    const spec: Record<string, unknown> = { interactive };
    if (this.config.provideClusterInfo) {
      const c = this.cluster;
      const cluster: Record<string, unknown> = { server: c.server };
      if (c.tlsServerName) cluster['tls-server-name'] = c.tlsServerName;
      if (c.insecureSkipTLSVerify) cluster['insecure-skip-tls-verify'] = true;
      const ca = c.certificateAuthorityData ?? (c.certificateAuthority && existsSync(c.certificateAuthority) ? readFileSync(c.certificateAuthority, 'utf8') : undefined);
      if (ca) cluster['certificate-authority-data'] = Buffer.from(ca).toString('base64');
      if (c.proxyURL) cluster['proxy-url'] = c.proxyURL;
      if (c.disableCompression) cluster['disable-compression'] = true;
      const ext = c.extensions?.['client.authentication.k8s.io/exec'];
      if (ext !== undefined) cluster.config = ext;
      spec.cluster = cluster;
    }
    return JSON.stringify({ kind: 'ExecCredential', apiVersion: this.config.apiVersion, spec });
  }

  private async run(): Promise<ExecCredentials> {
    const interactive = this.interactive();
    const env: NodeJS.ProcessEnv = { ...this.env };
    for (const e of this.config.env ?? []) env[e.name] = e.value;
    env.KUBERNETES_EXEC_INFO = this.execInfo(interactive);
    const cmd = this.config.command;
    const stdout = await new Promise<string>((resolveRun, reject) => {
      let out = '';
      const child = spawn(cmd, this.config.args ?? [], { env, stdio: [interactive ? 'inherit' : 'ignore', 'pipe', 'inherit'] });
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (d: string) => { out += d; });
      child.on('error', (e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT') {
          let msg = `exec: executable ${cmd} not found\n\nIt looks like you are trying to use a client-go credential plugin that is not installed.\n\nTo learn more about this feature, consult the documentation available at:\n      https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins`;
          if (this.config.installHint) msg += `\n\n${this.config.installHint}`;
          reject(new KubeconfigError(msg));
        } else reject(new KubeconfigError(`exec: ${e.message}`));
      });
      child.on('close', (code, signal) => {
        if (code === 0) resolveRun(out);
        else reject(new KubeconfigError(`exec: executable ${cmd} failed with exit code ${code ?? (signal ? 128 : -1)}`));
      });
    });
    let cred: Record<string, unknown>;
    try {
      cred = JSON.parse(stdout) as Record<string, unknown>;
    } catch (e) {
      throw new KubeconfigError(`decoding stdout: ${(e as Error).message}`);
    }
    if (cred.kind !== 'ExecCredential') throw new KubeconfigError(`decoding stdout: no kind "${String(cred.kind ?? '')}" is registered for version "${String(cred.apiVersion ?? '')}"`);
    if (cred.apiVersion !== this.config.apiVersion) {
      throw new KubeconfigError(`exec plugin is configured to use API version ${this.config.apiVersion}, plugin returned version ${String(cred.apiVersion ?? '')}`);
    }
    const status = cred.status as Record<string, unknown> | undefined;
    if (!status) throw new KubeconfigError("exec plugin didn't return a status field");
    const token = typeof status.token === 'string' ? status.token : '';
    const cert = typeof status.clientCertificateData === 'string' ? status.clientCertificateData : '';
    const key = typeof status.clientKeyData === 'string' ? status.clientKeyData : '';
    if (!token && !cert && !key) throw new KubeconfigError("exec plugin didn't return a token or cert/key pair");
    if (!cert !== !key) throw new KubeconfigError('exec plugin returned only certificate or key, not both');
    const exp = typeof status.expirationTimestamp === 'string' ? Date.parse(status.expirationTimestamp) : NaN;
    return {
      token: token || undefined,
      cert: cert || undefined,
      key: key || undefined,
      expiresAt: Number.isNaN(exp) ? undefined : exp,
    };
  }
}

// ── helpers for clients ────────────────────────────────────────────────────────

/** Options for node:https / node:tls from a connection config. */
export function tlsOptions(conn: ConnectionConfig): { ca?: string; cert?: string; key?: string; servername?: string; rejectUnauthorized: boolean } {
  const o: { ca?: string; cert?: string; key?: string; servername?: string; rejectUnauthorized: boolean } = { rejectUnauthorized: !conn.insecureSkipTLSVerify };
  if (conn.ca) o.ca = conn.ca;
  if (conn.cert && conn.key) { o.cert = conn.cert; o.key = conn.key; }
  if (conn.tlsServerName) o.servername = conn.tlsServerName;
  return o;
}

/** Authorization and impersonation headers for a request. */
export function authHeaders(conn: ConnectionConfig): Record<string, string | string[]> {
  const h: Record<string, string | string[]> = {};
  if (conn.token) h.Authorization = `Bearer ${conn.token}`;
  else if (conn.username || conn.password) h.Authorization = 'Basic ' + Buffer.from(`${conn.username ?? ''}:${conn.password ?? ''}`).toString('base64');
  if (conn.impersonate) {
    h['Impersonate-User'] = conn.impersonate.user;
    if (conn.impersonate.uid) h['Impersonate-Uid'] = conn.impersonate.uid;
    if (conn.impersonate.groups?.length) h['Impersonate-Group'] = conn.impersonate.groups;
    for (const [k, vs] of Object.entries(conn.impersonate.extra ?? {})) h[`Impersonate-Extra-${encodeURIComponent(k)}`] = vs;
  }
  return h;
}

// ── writing ──────────────────────────────────────────────────────────────────

export interface WriteKubeconfigOptions {
  server: string;
  caPEM?: string;
  clientCertPEM?: string;
  clientKeyPEM?: string;
  token?: string;
  clusterName?: string;
  userName?: string;
  contextName?: string;
  namespace?: string;
  insecureSkipTLSVerify?: boolean;
  tlsServerName?: string;
}

/** The kubeconfig text kubeadm would write: one cluster, user and context, data embedded. */
export function kubeconfigYAML(o: WriteKubeconfigOptions): string {
  const clusterName = o.clusterName ?? 'kubernetes';
  const userName = o.userName ?? 'kubernetes-admin';
  const contextName = o.contextName ?? `${userName}@${clusterName}`;
  const cluster: Record<string, unknown> = {};
  if (o.caPEM) cluster['certificate-authority-data'] = Buffer.from(o.caPEM).toString('base64');
  if (o.insecureSkipTLSVerify) cluster['insecure-skip-tls-verify'] = true;
  cluster.server = o.server;
  if (o.tlsServerName) cluster['tls-server-name'] = o.tlsServerName;
  const user: Record<string, unknown> = {};
  if (o.clientCertPEM) user['client-certificate-data'] = Buffer.from(o.clientCertPEM).toString('base64');
  if (o.clientKeyPEM) user['client-key-data'] = Buffer.from(o.clientKeyPEM).toString('base64');
  if (o.token) user.token = o.token;
  const context: Record<string, unknown> = { cluster: clusterName };
  if (o.namespace) context.namespace = o.namespace;
  context.user = userName;
  const doc = {
    apiVersion: 'v1',
    clusters: [{ cluster, name: clusterName }],
    contexts: [{ context, name: contextName }],
    'current-context': contextName,
    kind: 'Config',
    preferences: {},
    users: [{ name: userName, user }],
  };
  return emitKubeconfig(doc);
}

/**
 * The YAML text of the fixed-shape document kubeconfigYAML() builds: block mappings and sequences
 * of scalars, in kubeadm's layout (sequences not indented). Written by hand because the server writes
 * its admin kubeconfig on the way to ready, and loading `yaml` for it alone cost 40-90 ms of
 * start-up. A string that would not read back as the same plain string is written as a JSON
 * string, which is also a valid YAML double-quoted scalar.
 */
function emitKubeconfig(doc: Record<string, unknown>): string {
  const out: string[] = [];
  const scalar = (v: unknown): string => {
    if (typeof v === 'boolean' || typeof v === 'number') return String(v);
    const t = String(v);
    const plain = /^[A-Za-z0-9_/.][A-Za-z0-9_/.+=@:-]*$/.test(t) && !/:$/.test(t) && !/^(true|false|yes|no|on|off|y|n|null|~|[-+]?(\.?[0-9]).*|\.(inf|nan))$/i.test(t);
    return plain ? t : JSON.stringify(t);
  };
  const emit = (v: unknown, indent: string, first: string): void => {
    // first: what goes before the first key of a mapping (a "- " for an item of a sequence)
    if (Array.isArray(v)) {
      for (const item of v) emit(item, indent, `${indent}- `);
      return;
    }
    const inner = first.endsWith('- ') ? `${indent}  ` : indent;
    let lead = first;
    for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
      const key = `${lead}${scalar(k)}:`;
      lead = inner;
      if (Array.isArray(val)) {
        if (val.length === 0) out.push(`${key} []`);
        else {
          out.push(key);
          emit(val, inner, `${inner}- `);
        }
      } else if (val !== null && typeof val === 'object') {
        if (Object.keys(val).length === 0) out.push(`${key} {}`);
        else {
          out.push(key);
          emit(val, `${inner}  `, `${inner}  `);
        }
      } else out.push(`${key} ${scalar(val)}`);
    }
  };
  emit(doc, '', '');
  return out.join('\n') + '\n';
}

/** Writes a kubeconfig atomically with mode 0600 (creating the directory if needed). */
export function writeKubeconfig(path: string, o: WriteKubeconfigOptions): void {
  writeAtomically(path, kubeconfigYAML(o));
}

function writeAtomically(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, text, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/**
 * Brings an existing kubeconfig in line with `o` and keeps the rest of it, or writes it when there
 * is none (kubeadm writes its kubeconfigs only when they are missing): the cluster, user and
 * context `o` names get their server, CA and credentials; the user's own edits (`kubectl config
 * set-context --namespace`, other clusters, users and contexts, the current context) stay. A file
 * that does not read as a kubeconfig is replaced. Returns what was done.
 */
export function ensureKubeconfig(path: string, o: WriteKubeconfigOptions): 'written' | 'updated' | 'unchanged' {
  const want = kubeconfigYAML(o);
  let cur: string | undefined;
  try {
    cur = readFileSync(path, 'utf8');
  } catch {
    cur = undefined;
  }
  if (cur === undefined) {
    writeAtomically(path, want);
    return 'written';
  }
  if (cur === want) return 'unchanged';
  let doc: any;
  try {
    doc = yaml().parse(cur);
  } catch {
    doc = undefined;
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    writeAtomically(path, want);
    return 'written';
  }
  const ours = yaml().parse(want);
  const upsert = (list: string, entry: any, merge: (old: any, mine: any) => any) => {
    const items: any[] = Array.isArray(doc[list]) ? doc[list] : (doc[list] = []);
    const i = items.findIndex((x) => x && typeof x === 'object' && x.name === entry.name);
    if (i < 0) items.push(entry);
    else items[i] = merge(items[i], entry);
  };
  const field = (k: string) => (old: any, mine: any) => ({ ...old, [k]: { ...(old?.[k] && typeof old[k] === 'object' ? old[k] : {}), ...mine[k] } });
  upsert('clusters', ours.clusters[0], field('cluster'));
  upsert('users', ours.users[0], field('user'));
  upsert('contexts', ours.contexts[0], field('context'));
  if (!doc['current-context']) doc['current-context'] = ours['current-context'];
  doc.apiVersion ??= 'v1';
  doc.kind ??= 'Config';
  const text = yaml().stringify(doc, { lineWidth: 0 });
  if (text === cur) return 'unchanged';
  writeAtomically(path, text);
  return 'updated';
}
