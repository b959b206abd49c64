// Image credential provider plugins (--image-credential-provider-config and
// --image-credential-provider-bin-dir), as the kubelet runs them (pkg/credentialprovider/plugin):
// the config names each plugin (a binary of that name in the bin directory), the images it serves
// (matchImages, the keyring's location globs) and how long its answers are kept. For an image
// whose repository one of them matches, the plugin is run with a CredentialProviderRequest on its
// standard input and answers a CredentialProviderResponse on its standard output: credentials by
// location, kept per image, per registry or for every image (cacheKeyType) for cacheDuration (or
// the config's defaultCacheDuration). A plugin that fails is logged and the pull goes on without
// its credentials, as in the kubelet.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import YAML from 'yaml';
import { DockerKeyring, locationMatches } from './credentials.js';
import type { AuthConfig } from './cri/types.js';
import { goQuote } from '../machinery/gostrings.js';

/** the CredentialProvider API versions a plugin may speak */
const PLUGIN_API_VERSIONS = ['credentialprovider.kubelet.k8s.io/v1', 'credentialprovider.kubelet.k8s.io/v1alpha1', 'credentialprovider.kubelet.k8s.io/v1beta1'];
/** the CredentialProviderConfig versions the kubelet reads */
const CONFIG_API_VERSIONS = ['kubelet.config.k8s.io/v1', 'kubelet.config.k8s.io/v1alpha1', 'kubelet.config.k8s.io/v1beta1'];
/** how long a plugin may run (the kubelet's one minute) */
const PLUGIN_TIMEOUT_MS = 60_000;

export interface CredentialProvider {
  name: string;
  matchImages: string[];
  defaultCacheDurationMs: number;
  apiVersion: string;
  args: string[];
  env: { name: string; value: string }[];
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
export function loadCredentialProviders(configPath: string, binDir: string): CredentialProvider[] {
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
    for (const p of Array.isArray(doc.providers) ? doc.providers : []) {
      if (names.has(p?.name)) throw new Error(`duplicate provider name ${goQuote(String(p?.name))} found in configuration file(s)`);
      names.add(p?.name);
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
    if (p.tokenAttributes !== undefined) errs.push('providers.tokenAttributes: Forbidden: tokenAttributes is not supported when KubeletServiceAccountTokenForCredentialProviders feature gate is disabled');
    providers.push({
      name,
      matchImages,
      defaultCacheDurationMs: cache,
      apiVersion,
      args: Array.isArray(p.args) ? p.args.map(String) : [],
      env: Array.isArray(p.env) ? p.env.map((e: any) => ({ name: String(e?.name ?? ''), value: String(e?.value ?? '') })) : [],
    });
  }
  if (errs.length) throw new Error(`failed to validate credential provider config: ${errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`}`);
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

/** the plugins of a config, run for the images they match, their answers cached */
export class CredentialPlugins {
  private readonly caches = new Map<string, Map<string, Cached>>();

  constructor(
    private readonly providers: CredentialProvider[],
    private readonly binDir: string,
    private readonly onError: (provider: string, err: Error) => void,
  ) {}

  /** the credentials the plugins give for a repository (normalized, no tag), in the providers' name order */
  async lookup(repo: string): Promise<AuthConfig[]> {
    const out: AuthConfig[] = [];
    for (const p of [...this.providers].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (!p.matchImages.some((m) => locationMatches(m, repo))) continue;
      const k = new DockerKeyring();
      const auths = await this.provide(p, repo).catch((e: Error) => {
        this.onError(p.name, e);
        return undefined;
      });
      if (!auths) continue;
      k.add(auths);
      out.push(...k.lookup(repo));
    }
    return out;
  }

  private async provide(p: CredentialProvider, repo: string): Promise<Cached['auths']> {
    let cache = this.caches.get(p.name);
    if (!cache) this.caches.set(p.name, (cache = new Map()));
    const now = Date.now();
    for (const key of [repo, registryOf(repo), 'global']) {
      const hit = cache.get(key);
      if (hit && hit.expires > now) return hit.auths;
      if (hit) cache.delete(key);
    }
    const request = JSON.stringify({ kind: 'CredentialProviderRequest', apiVersion: p.apiVersion, image: repo });
    const stdout = await new Promise<string>((resolve, reject) => {
      const env: NodeJS.ProcessEnv = { ...process.env };
      for (const e of p.env) env[e.name] = e.value;
      const child = execFile(join(this.binDir, p.name), p.args, { env, timeout: PLUGIN_TIMEOUT_MS, maxBuffer: 1 << 20 }, (err, out, errOut) => {
        if (err) reject(new Error(`error execing credential provider plugin ${p.name} for image ${repo}: ${err.message}${errOut ? `: ${String(errOut).trim()}` : ''}`));
        else resolve(String(out));
      });
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
    const key = keyType === 'Image' ? repo : keyType === 'Registry' ? registryOf(repo) : keyType === 'Global' ? 'global' : undefined;
    if (key === undefined) throw new Error(`invalid cache key type: ${goQuote(String(keyType ?? ''))}`);
    const auths: Cached['auths'] = {};
    for (const [loc, a] of Object.entries((resp.auth ?? {}) as Record<string, any>)) auths[loc] = { username: a?.username, password: a?.password };
    const ttl = resp.cacheDuration !== undefined && resp.cacheDuration !== null ? (parseDuration(String(resp.cacheDuration)) ?? p.defaultCacheDurationMs) : p.defaultCacheDurationMs;
    if (ttl > 0) cache.set(key, { expires: now + ttl, auths });
    return auths;
  }
}
