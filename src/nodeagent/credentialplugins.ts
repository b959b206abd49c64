// Image credential provider plugins (--image-credential-provider-config and
// --image-credential-provider-bin-dir), as the kubelet runs them (pkg/credentialprovider/plugin):
// the config names each plugin (a binary of that name in the bin directory), the images it serves
// (matchImages, the keyring's location globs) and how long its answers are kept. For an image
// whose repository one of them matches, the plugin is run with a CredentialProviderRequest on its
// standard input and answers a CredentialProviderResponse on its standard output: credentials by
// location, kept per image, per registry or for every image (cacheKeyType) for cacheDuration (or
// the config's defaultCacheDuration). A plugin that fails is logged and the pull goes on without
// its credentials, as in the kubelet.
//
// KubeletServiceAccountTokenForCredentialProviders (alpha in 1.33, off by default): a provider of
// kubelet.config.k8s.io/v1 that speaks credentialprovider.kubelet.k8s.io/v1 may set
// tokenAttributes. For a pod's pull through it, the kubelet reads the pod's ServiceAccount (the
// annotations the provider names: a required one missing means the plugin is not run), requests a
// token for the provider's audience bound to the pod (TokenRequest), and passes both in the
// CredentialProviderRequest (serviceAccountToken, serviceAccountAnnotations). Its answers are then
// cached per service account too (namespace, name, uid and those annotations), so two service
// accounts never share credentials. A pod without a service account name is not served by a
// provider that requires one.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import YAML from 'yaml';
import { DockerKeyring, locationMatches } from './credentials.js';
import type { AuthConfig } from './cri/types.js';
import { goQuote } from '../machinery/gostrings.js';
import { isQualifiedName } from '../machinery/validation.js';
import type { Logger } from '../client/log.js';

/** the CredentialProvider API versions a plugin may speak */
const PLUGIN_API_VERSIONS = ['credentialprovider.kubelet.k8s.io/v1', 'credentialprovider.kubelet.k8s.io/v1alpha1', 'credentialprovider.kubelet.k8s.io/v1beta1'];
/** the CredentialProviderConfig versions the kubelet reads */
const CONFIG_API_VERSIONS = ['kubelet.config.k8s.io/v1', 'kubelet.config.k8s.io/v1alpha1', 'kubelet.config.k8s.io/v1beta1'];
/** how long a plugin may run (the kubelet's one minute) */
const PLUGIN_TIMEOUT_MS = 60_000;

/** a provider's tokenAttributes (KubeletServiceAccountTokenForCredentialProviders) */
export interface TokenAttributes {
  serviceAccountTokenAudience: string;
  requireServiceAccount: boolean;
  requiredServiceAccountAnnotationKeys: string[];
  optionalServiceAccountAnnotationKeys: string[];
}

export interface CredentialProvider {
  name: string;
  matchImages: string[];
  defaultCacheDurationMs: number;
  apiVersion: string;
  args: string[];
  env: { name: string; value: string }[];
  /** set only with the KubeletServiceAccountTokenForCredentialProviders gate on */
  tokenAttributes?: TokenAttributes;
}

/** what the config files' strict decoding knows (CredentialProviderConfig's Go types, by config version) */
const KNOWN_FIELDS = {
  config: new Set(['kind', 'apiVersion', 'providers']),
  provider: new Set(['name', 'matchImages', 'defaultCacheDuration', 'apiVersion', 'args', 'env']),
  env: new Set(['name', 'value']),
  tokenAttributes: new Set(['serviceAccountTokenAudience', 'requireServiceAccount', 'requiredServiceAccountAnnotationKeys', 'optionalServiceAccountAnnotationKeys']),
};

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The unknown fields of a decoded config, as the kubelet's strict decoding names them
 * (`unknown field "providers[0].tokenAttributes.cacheType"`): only kubelet.config.k8s.io/v1 has
 * tokenAttributes, and 1.33's has no cacheType (1.34 added it).
 */
function unknownFields(doc: Record<string, unknown>): string[] {
  const out: string[] = [];
  const check = (obj: Record<string, unknown>, known: Set<string>, path: string) => {
    for (const k of Object.keys(obj)) if (!known.has(k)) out.push(`unknown field ${goQuote(path ? `${path}.${k}` : k)}`);
  };
  check(doc, KNOWN_FIELDS.config, '');
  if (!Array.isArray(doc.providers)) return out;
  doc.providers.forEach((p: unknown, i: number) => {
    if (!isMap(p)) return;
    const path = `providers[${i}]`;
    const known = doc.apiVersion === 'kubelet.config.k8s.io/v1' ? new Set([...KNOWN_FIELDS.provider, 'tokenAttributes']) : KNOWN_FIELDS.provider;
    check(p, known, path);
    if (Array.isArray(p.env)) p.env.forEach((e: unknown, j: number) => isMap(e) && check(e, KNOWN_FIELDS.env, `${path}.env[${j}]`));
    if (known.has('tokenAttributes') && isMap(p.tokenAttributes)) check(p.tokenAttributes, KNOWN_FIELDS.tokenAttributes, `${path}.tokenAttributes`);
  });
  return out;
}

/** Go's %#v of a []string, as a field error shows an invalid list */
function goStringSlice(v: string[]): string {
  return `[]string{${v.map((s) => goQuote(s)).join(', ')}}`;
}

/** validateServiceAccountAnnotationKeys: qualified names (case does not matter), no duplicates */
function annotationKeyErrors(path: string, keys: string[]): string[] {
  const errs: string[] = [];
  const seen = new Set<string>();
  for (const k of keys) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(`${path}: Invalid value: ${goQuote(k)}: ${m}`);
    if (seen.has(k)) errs.push(`${path}: Duplicate value: ${goQuote(k)}`);
    seen.add(k);
  }
  return errs;
}

/** the JSON type of a value, as Go's decoder names it in an UnmarshalTypeError */
function jsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  return typeof v === 'object' ? 'object' : typeof v;
}

/** a list of strings from the config (a value of another type fails the decoding, as Go's would) */
function stringList(f: string, v: unknown, field: string): string[] {
  if (v === undefined || v === null) return [];
  const at = `Go struct field ServiceAccountTokenAttributes.providers.tokenAttributes.${field}`;
  if (!Array.isArray(v)) throw new Error(`error decoding config ${goQuote(f)}: json: cannot unmarshal ${jsonType(v)} into ${at} of type []string`);
  const bad = v.find((x) => typeof x !== 'string');
  if (bad !== undefined) throw new Error(`error decoding config ${goQuote(f)}: json: cannot unmarshal ${jsonType(bad)} into ${at} of type string`);
  return v as string[];
}

/** Go's time.ParseDuration for the durations a config holds ("12h", "1m30s", "0") */
function parseDuration(s: string): number | undefined {
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y;
  const unit: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let neg = false;
  let i = 0;
  if (s.startsWith('-')) {
    neg = true;
    i = 1;
  }
  let total = 0;
  let any = false;
  while (i < s.length) {
    re.lastIndex = i;
    const m = re.exec(s);
    if (!m) return undefined;
    total += Number(m[1]) * unit[m[2]!]!;
    i = re.lastIndex;
    any = true;
  }
  return any ? (neg ? -total : total) : undefined;
}

/** a location glob as the keyring parses it (credentialprovider's ParseSchemelessURL) */
function matchImageError(m: string): string | undefined {
  if (m === '') return undefined; // (Go parses "https://" without an error)
  try {
    new URL(`https://${m}`);
    return undefined;
  } catch {
    return `parse ${goQuote(`https://${m}`)}: invalid URL`;
  }
}

/**
 * Reads and checks --image-credential-provider-config (a file, or a directory of *.json, *.yaml
 * and *.yml files merged in lexicographic order) and finds each plugin's binary; throws with the
 * kubelet's words for what it refuses.
 */
export function loadCredentialProviders(configPath: string, binDir: string, opts: { saTokenForCredentialProviders?: boolean } = {}): CredentialProvider[] {
  if (!existsSync(binDir)) throw new Error(`plugin binary directory ${binDir} did not exist`);
  if (configPath === '') throw new Error('credential provider config path is empty');
  let st;
  try {
    st = statSync(configPath);
  } catch (e) {
    throw new Error(`unable to access path ${goQuote(configPath)}: ${(e as Error).message}`);
  }
  let files = [configPath];
  if (st.isDirectory()) {
    files = readdirSync(configPath, { withFileTypes: true })
      .filter((e) => !e.isDirectory() && ['.json', '.yaml', '.yml'].includes(extname(e.name)))
      .map((e) => join(configPath, e.name))
      .sort();
    if (files.length === 0) throw new Error(`no configuration files found in directory ${goQuote(configPath)}`);
  }
  const raw: any[] = [];
  const names = new Set<string>();
  for (const f of files) {
    let doc: any;
    try {
      doc = YAML.parse(readFileSync(f, 'utf8'));
    } catch (e) {
      throw new Error(`error decoding config ${goQuote(f)}: ${(e as Error).message}`);
    }
    if (!doc || typeof doc !== 'object') throw new Error(`error decoding config ${goQuote(f)}: Object 'Kind' is missing`);
    if (doc.kind !== 'CredentialProviderConfig') throw new Error(`error decoding config ${goQuote(f)}: failed to decode ${goQuote(String(doc.kind ?? ''))} (wrong Kind)`);
    if (!CONFIG_API_VERSIONS.includes(doc.apiVersion)) throw new Error(`error decoding config ${goQuote(f)}: no kind "CredentialProviderConfig" is registered for version ${goQuote(String(doc.apiVersion ?? ''))}`);
    // (the kubelet's codecs are strict: a field its types do not have fails the decoding)
    const unknown = unknownFields(doc);
    if (unknown.length) throw new Error(`error decoding config ${goQuote(f)}: strict decoding error: ${unknown.join(', ')}`);
    for (const p of Array.isArray(doc.providers) ? doc.providers : []) {
      if (names.has(p?.name)) throw new Error(`duplicate provider name ${goQuote(String(p?.name))} found in configuration file(s)`);
      names.add(p?.name);
      const ta = p?.tokenAttributes;
      if (ta !== undefined && ta !== null) {
        if (!isMap(ta)) throw new Error(`error decoding config ${goQuote(f)}: json: cannot unmarshal ${jsonType(ta)} into Go struct field CredentialProvider.providers.tokenAttributes of type v1.ServiceAccountTokenAttributes`);
        if (ta.requireServiceAccount !== undefined && ta.requireServiceAccount !== null && typeof ta.requireServiceAccount !== 'boolean') {
          throw new Error(`error decoding config ${goQuote(f)}: json: cannot unmarshal ${jsonType(ta.requireServiceAccount)} into Go struct field ServiceAccountTokenAttributes.providers.tokenAttributes.requireServiceAccount of type bool`);
        }
        stringList(f, ta.requiredServiceAccountAnnotationKeys, 'requiredServiceAccountAnnotationKeys');
        stringList(f, ta.optionalServiceAccountAnnotationKeys, 'optionalServiceAccountAnnotationKeys');
      }
      raw.push(p ?? {});
    }
  }
  // validateCredentialProviderConfig
  const errs: string[] = [];
  if (raw.length === 0) errs.push('providers: Required value: at least 1 item in plugins is required');
  const seen = new Set<string>();
  const providers: CredentialProvider[] = [];
  for (const p of raw) {
    const name = String(p.name ?? '');
    if (name.includes('/')) errs.push(`providers.name: Invalid value: ${goQuote(name)}: provider name cannot contain '/'`);
    if (name.includes(' ')) errs.push(`providers.name: Invalid value: ${goQuote(name)}: provider name cannot contain spaces`);
    if (name === '.') errs.push(`providers.name: Invalid value: ${goQuote(name)}: provider name cannot be '.'`);
    if (name === '..') errs.push(`providers.name: Invalid value: ${goQuote(name)}: provider name cannot be '..'`);
    if (seen.has(name)) errs.push(`providers.name: Duplicate value: ${goQuote(name)}`);
    seen.add(name);
    const apiVersion = String(p.apiVersion ?? '');
    if (apiVersion === '') errs.push('providers.apiVersion: Required value');
    else if (!PLUGIN_API_VERSIONS.includes(apiVersion)) errs.push(`providers.apiVersion: Unsupported value: ${goQuote(apiVersion)}: supported values: ${[...PLUGIN_API_VERSIONS].sort().map((v) => goQuote(v)).join(', ')}`);
    const matchImages: string[] = Array.isArray(p.matchImages) ? p.matchImages.map(String) : [];
    if (matchImages.length === 0) errs.push('providers.matchImages: Required value: at least 1 item in matchImages is required');
    for (const m of matchImages) {
      const why = matchImageError(m);
      if (why) errs.push(`providers.matchImages: Invalid value: ${goQuote(m)}: match image is invalid: ${why}`);
    }
    let cache = 0;
    if (p.defaultCacheDuration === undefined || p.defaultCacheDuration === null) errs.push('providers.defaultCacheDuration: Required value');
    else {
      const d = parseDuration(String(p.defaultCacheDuration));
      if (d === undefined) errs.push(`providers.defaultCacheDuration: Invalid value: ${goQuote(String(p.defaultCacheDuration))}: not a duration`);
      else if (d < 0) errs.push(`providers.defaultCacheDuration: Invalid value: ${goQuote(String(p.defaultCacheDuration))}: defaultCacheDuration must be greater than or equal to 0`);
      else cache = d;
    }
    let tokenAttributes: TokenAttributes | undefined;
    if (p.tokenAttributes !== undefined && p.tokenAttributes !== null) {
      // (1.33's validation: the messages of its field errors are its own)
      const path = 'providers.tokenAttributes';
      const ta = p.tokenAttributes as Record<string, any>;
      if (!opts.saTokenForCredentialProviders) errs.push(`${path}: Forbidden: tokenAttributes is not supported when KubeletServiceAccountTokenForCredentialProviders feature gate is disabled`);
      const audience = typeof ta.serviceAccountTokenAudience === 'string' ? ta.serviceAccountTokenAudience : ta.serviceAccountTokenAudience === undefined || ta.serviceAccountTokenAudience === null ? '' : String(ta.serviceAccountTokenAudience);
      if (audience === '') errs.push(`${path}.serviceAccountTokenAudience: Required value: serviceAccountTokenAudience is required`);
      const requireSA: boolean | undefined = typeof ta.requireServiceAccount === 'boolean' ? ta.requireServiceAccount : undefined;
      if (requireSA === undefined) errs.push(`${path}.requireServiceAccount: Required value: requireServiceAccount is required`);
      if (apiVersion !== 'credentialprovider.kubelet.k8s.io/v1') errs.push(`${path}: Forbidden: tokenAttributes is only supported for credentialprovider.kubelet.k8s.io/v1 API version`);
      const required: string[] = Array.isArray(ta.requiredServiceAccountAnnotationKeys) ? ta.requiredServiceAccountAnnotationKeys : [];
      const optional: string[] = Array.isArray(ta.optionalServiceAccountAnnotationKeys) ? ta.optionalServiceAccountAnnotationKeys : [];
      if (requireSA === false && required.length > 0) errs.push(`${path}.requiredServiceAccountAnnotationKeys: Forbidden: requireServiceAccount cannot be false when requiredServiceAccountAnnotationKeys is set`);
      errs.push(...annotationKeyErrors(`${path}.requiredServiceAccountAnnotationKeys`, required));
      errs.push(...annotationKeyErrors(`${path}.optionalServiceAccountAnnotationKeys`, optional));
      const both = [...new Set(required.filter((k) => optional.includes(k)))].sort();
      if (both.length) errs.push(`${path}: Invalid value: ${goStringSlice(both)}: annotation keys cannot be both required and optional`);
      tokenAttributes = { serviceAccountTokenAudience: audience, requireServiceAccount: requireSA ?? false, requiredServiceAccountAnnotationKeys: required, optionalServiceAccountAnnotationKeys: optional };
    }
    providers.push({
      ...(tokenAttributes ? { tokenAttributes } : {}),
      name,
      matchImages,
      defaultCacheDurationMs: cache,
      apiVersion,
      args: Array.isArray(p.args) ? p.args.map(String) : [],
      env: Array.isArray(p.env) ? p.env.map((e: any) => ({ name: String(e?.name ?? ''), value: String(e?.value ?? '') })) : [],
    });
  }
  if (errs.length) {
    // (the aggregate of a field error list says each message once)
    const msgs = [...new Set(errs)];
    throw new Error(`failed to validate credential provider config: ${msgs.length === 1 ? msgs[0] : `[${msgs.join(', ')}]`}`);
  }
  for (const p of providers) {
    const bin = join(binDir, p.name);
    if (!existsSync(bin)) throw new Error(`plugin binary executable ${bin} did not exist`);
  }
  return providers;
}

interface Cached {
  expires: number;
  auths: Record<string, { username?: string; password?: string }>;
}

/** the registry (host) part of a repository, the key of a Registry-cached answer */
function registryOf(repo: string): string {
  const slash = repo.indexOf('/');
  return slash < 0 ? repo : repo.slice(0, slash);
}

/** the pod an image is pulled for (the kubelet's per-pod plugin provider) */
export interface PodCoordinates {
  namespace: string;
  name: string;
  uid: string;
  serviceAccountName: string;
}

/** how the plugins reach the API for a pod's service account (the kubelet's client) */
export interface ServiceAccountAccess {
  /** the ServiceAccount object */
  getServiceAccount(namespace: string, name: string): Promise<any>;
  /** a token of the service account for the audience, bound to the pod (TokenRequest) */
  getToken(namespace: string, serviceAccountName: string, audience: string, pod: { name: string; uid: string }): Promise<string>;
}

const NO_ACCESS: ServiceAccountAccess = {
  getServiceAccount: async () => {
    throw new Error('get service account is not implemented');
  },
  getToken: async () => {
    throw new Error('cannot use TokenManager when kubelet is in standalone mode');
  },
};

/** a required annotation the pod's service account does not have (requiredAnnotationNotFoundError) */
class RequiredAnnotationNotFound extends Error {
  constructor(key: string) {
    super(`required annotation ${key} not found`);
  }
}

/** the plugins of a config, run for the images they match, their answers cached */
export class CredentialPlugins {
  private readonly caches = new Map<string, Map<string, Cached>>();
  private access: ServiceAccountAccess = NO_ACCESS;

  constructor(
    private readonly providers: CredentialProvider[],
    private readonly binDir: string,
    private readonly onError: (provider: string, err: Error) => void,
    private readonly log?: Logger,
  ) {}

  /** how the service account mode's providers read service accounts and request tokens */
  useServiceAccounts(access: ServiceAccountAccess): void {
    this.access = access;
  }

  /**
   * the credentials the plugins give for a repository (normalized, no tag), in the providers'
   * name order; `pod` is the pod the image is pulled for (the service account mode's providers
   * need it)
   */
  async lookup(repo: string, pod?: PodCoordinates): Promise<AuthConfig[]> {
    const out: AuthConfig[] = [];
    for (const p of [...this.providers].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (!p.matchImages.some((m) => locationMatches(m, repo))) continue;
      const k = new DockerKeyring();
      const auths = await this.provide(p, repo, pod).catch((e: Error) => {
        this.onError(p.name, e);
        return undefined;
      });
      if (!auths) continue;
      k.add(auths);
      out.push(...k.lookup(repo));
    }
    return out;
  }

  /**
   * the service account part of a pull through a provider with tokenAttributes (the kubelet's
   * pluginProvider.provide): undefined when the plugin must not be run for the pod
   */
  private async serviceAccountData(p: CredentialProvider, ta: TokenAttributes, pod: PodCoordinates | undefined): Promise<{ token: string; annotations: Record<string, string>; cacheKey: string } | undefined> {
    const ns = pod?.namespace ?? '';
    const podName = pod?.name ?? '';
    const saName = pod?.serviceAccountName ?? '';
    if (saName === '') {
      if (ta.requireServiceAccount) {
        this.log?.v(5).info(`Service account name is empty for pod ${ns}/${podName}`);
        return undefined;
      }
      // (a plugin that does not require one is run without a token)
      return { token: '', annotations: {}, cacheKey: '' };
    }
    let uid: string;
    let annotations: Record<string, string>;
    try {
      const sa = await this.access.getServiceAccount(ns, saName);
      const have: Record<string, unknown> = sa?.metadata?.annotations ?? {};
      annotations = {};
      for (const k of ta.requiredServiceAccountAnnotationKeys) {
        if (!Object.prototype.hasOwnProperty.call(have, k)) throw new RequiredAnnotationNotFound(k);
        annotations[k] = String(have[k]);
      }
      for (const k of ta.optionalServiceAccountAnnotationKeys) if (Object.prototype.hasOwnProperty.call(have, k)) annotations[k] = String(have[k]);
      uid = String(sa?.metadata?.uid ?? '');
    } catch (e) {
      // a missing required annotation is how a workload opts out: quiet, at -v5
      if (e instanceof RequiredAnnotationNotFound) this.log?.v(5).info(`Failed to get service account data ${ns}/${saName}: ${e.message}`);
      else this.log?.error(e, `Failed to get service account ${ns}/${saName}`, { provider: p.name });
      return undefined;
    }
    let token: string;
    try {
      token = await this.access.getToken(ns, saName, ta.serviceAccountTokenAudience, { name: podName, uid: pod?.uid ?? '' });
    } catch (e) {
      this.log?.error(e, `Error getting service account token ${ns}/${saName}`, { provider: p.name });
      return undefined;
    }
    // (generateServiceAccountCacheKey: namespace, name, uid and the annotations passed, sorted)
    const sorted = Object.keys(annotations).sort().map((k) => [k, annotations[k]!]);
    return { token, annotations, cacheKey: JSON.stringify([ns, saName, uid, sorted]) };
  }

  private async provide(p: CredentialProvider, repo: string, pod?: PodCoordinates): Promise<Cached['auths'] | undefined> {
    let sa: { token: string; annotations: Record<string, string>; cacheKey: string } | undefined;
    if (p.tokenAttributes) {
      sa = await this.serviceAccountData(p, p.tokenAttributes, pod);
      if (!sa) return undefined;
    }
    // (generateCacheKey: the base key beside the service account's, empty without one)
    const keyOf = (base: string) => (p.tokenAttributes ? JSON.stringify([base, sa!.cacheKey]) : base);
    let cache = this.caches.get(p.name);
    if (!cache) this.caches.set(p.name, (cache = new Map()));
    const now = Date.now();
    for (const base of [repo, registryOf(repo), 'global']) {
      const key = keyOf(base);
      const hit = cache.get(key);
      if (hit && hit.expires > now) return hit.auths;
      if (hit) cache.delete(key);
    }
    const req: Record<string, unknown> = { kind: 'CredentialProviderRequest', apiVersion: p.apiVersion, image: repo };
    if (sa?.token) req.serviceAccountToken = sa.token;
    if (sa && Object.keys(sa.annotations).length) req.serviceAccountAnnotations = Object.fromEntries(Object.keys(sa.annotations).sort().map((k) => [k, sa!.annotations[k]]));
    const request = JSON.stringify(req);
    const stdout = await new Promise<string>((resolve, reject) => {
      const env: NodeJS.ProcessEnv = { ...process.env };
      for (const e of p.env) env[e.name] = e.value;
      const child = execFile(join(this.binDir, p.name), p.args, { env, timeout: PLUGIN_TIMEOUT_MS, maxBuffer: 1 << 20 }, (err, out, errOut) => {
        if (err) reject(new Error(`error execing credential provider plugin ${p.name} for image ${repo}: ${err.message}${errOut ? `: ${String(errOut).trim()}` : ''}`));
        else resolve(String(out));
      });
      child.stdin?.on('error', () => {});
      child.stdin?.end(request);
    });
    let resp: any;
    try {
      resp = JSON.parse(stdout);
    } catch (e) {
      throw new Error(`error decoding credential provider plugin response from stdout: ${(e as Error).message}`);
    }
    if (resp?.kind !== 'CredentialProviderResponse') throw new Error(`unexpected kind ${goQuote(String(resp?.kind ?? ''))} in response, expected ${goQuote('CredentialProviderResponse')}`);
    if (resp?.apiVersion !== p.apiVersion) throw new Error(`unexpected apiVersion ${goQuote(String(resp?.apiVersion ?? ''))} in response, expected ${goQuote(p.apiVersion)}`);
    const keyType = resp.cacheKeyType;
    const base = keyType === 'Image' ? repo : keyType === 'Registry' ? registryOf(repo) : keyType === 'Global' ? 'global' : undefined;
    if (base === undefined) throw new Error(`invalid cache key type: ${goQuote(String(keyType ?? ''))}`);
    const auths: Cached['auths'] = {};
    for (const [loc, a] of Object.entries((resp.auth ?? {}) as Record<string, any>)) auths[loc] = { username: a?.username, password: a?.password };
    const ttl = resp.cacheDuration !== undefined && resp.cacheDuration !== null ? (parseDuration(String(resp.cacheDuration)) ?? p.defaultCacheDurationMs) : p.defaultCacheDurationMs;
    if (ttl > 0) cache.set(keyOf(base), { expires: now + ttl, auths });
    return auths;
  }
}
