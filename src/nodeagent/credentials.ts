// Registry credentials for image pulls, as the kubelet finds them (pkg/credentialprovider): the
// pod's imagePullSecrets first (kubernetes.io/dockerconfigjson and kubernetes.io/dockercfg
// Secrets), then the node's own Docker configuration files. A keyring maps registry locations
// (`registry.example.com`, `registry.example.com:5000/team`, `*.example.com`) to credentials; an
// image's repository is looked up in it, and every matching credential is tried in turn by the
// pull, the anonymous pull only when none matches.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { AuthConfig } from './cri/types.js';

/** Docker Hub's key in a Docker configuration (`https://index.docker.io/v1/` parses to it) */
const DEFAULT_REGISTRY_HOST = 'index.docker.io';

/** one entry of a Docker configuration's auths, as the kubelet reads it */
interface ConfigEntry {
  username?: string;
  password?: string;
  auth?: string;
  email?: string;
}

/** a location without its scheme, split as Go's url.Parse splits `https://` + it */
function parseLocation(loc: string): { host: string; path: string } | undefined {
  const s = /^https?:\/\//.test(loc) ? loc : `https://${loc}`;
  try {
    const u = new URL(s);
    return { host: u.host, path: decodeURIComponent(u.pathname === '/' && !s.slice(s.indexOf('//') + 2).includes('/') ? '' : u.pathname) };
  } catch {
    return undefined;
  }
}

/** host name parts and port, as credentialprovider's splitURL */
function splitHost(host: string): { parts: string[]; port: string } {
  const m = /^(.*?)(?::(\d+))?$/.exec(host)!;
  return { parts: m[1]!.split('.'), port: m[2] ?? '' };
}

/** Go's filepath.Match for one host name part (no separators in it) */
function globMatch(glob: string, s: string): boolean {
  let re = '^';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === '*') re += '.*';
    else if (ch === '?') re += '.';
    else if (ch === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) return false; // Go: ErrBadPattern, no match
      let cls = glob.slice(i + 1, end);
      if (cls.startsWith('^')) cls = `^${cls.slice(1)}`;
      re += `[${cls.replace(/\\/g, '\\\\')}]`;
      i = end;
    } else if (ch === '\\' && i + 1 < glob.length) re += `\\${glob[++i]}`;
    else re += ch.replace(/[.+^${}()|\]\\/]/g, '\\$&');
  }
  try {
    return new RegExp(`${re}$`).test(s);
  } catch {
    return false;
  }
}

/** credentialprovider's URLsMatch: same port, as many host parts each matching its glob, and the glob's path a prefix */
export function locationMatches(glob: string, target: string): boolean {
  const g = parseLocation(glob);
  const t = parseLocation(target);
  if (!g || !t) return false;
  const gh = splitHost(g.host);
  const th = splitHost(t.host);
  if (gh.port !== th.port || gh.parts.length !== th.parts.length) return false;
  for (let i = 0; i < gh.parts.length; i++) if (!globMatch(gh.parts[i]!, th.parts[i]!)) return false;
  return t.path.startsWith(g.path);
}

/** whether an image's repository is Docker Hub's (credentialprovider's isDefaultRegistryMatch) */
function isDefaultRegistry(repo: string): boolean {
  const slash = repo.indexOf('/');
  const first = slash < 0 ? repo : repo.slice(0, slash);
  if (first === '') return false;
  if (slash < 0) return true;
  if (first === 'docker.io' || first === 'index.docker.io') return true;
  return !/[.:]/.test(first);
}

/** an image's repository as the kubelet looks it up: normalized (docker.io/library/ added), without tag or digest */
export function repositoryOf(image: string): string {
  let r = image.trim().replace(/@.*$/, '');
  const slash = r.indexOf('/');
  const first = slash < 0 ? '' : r.slice(0, slash);
  if (slash < 0) r = `docker.io/library/${r}`;
  else if (first === 'index.docker.io') r = `docker.io/${r.slice(slash + 1)}`;
  else if (!/[.:]/.test(first) && first !== 'localhost') r = `docker.io/${r}`;
  const last = r.lastIndexOf('/');
  const colon = r.indexOf(':', last);
  return colon < 0 ? r : r.slice(0, colon);
}

/** the Secret a pod's credential came from (credentialprovider's SecretCoordinates) */
export interface SecretCoordinates {
  uid: string;
  namespace: string;
  name: string;
}

/**
 * A credential and where it came from (credentialprovider's TrackedAuthConfig): `source` names the
 * pod's pull Secret, none for the node's own credentials; `hash` is the SHA-256 (hex) of the
 * credential as the kubelet hashes it (Go's JSON of username, password and email).
 */
export interface TrackedAuth {
  auth: AuthConfig;
  hash: string;
  source?: SecretCoordinates;
}

/** Go's encoding/json string: JSON.stringify's, with <, >, &, U+2028 and U+2029 escaped as Go escapes them */
function goJSONString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** the kubelet's hashAuthConfig: sha256 of json.Marshal(AuthConfig{Username, Password, Email}) (empty fields omitted) */
export function hashAuthConfig(username: string | undefined, password: string | undefined, email: string | undefined): string {
  const parts: string[] = [];
  if (username) parts.push(`"username":${goJSONString(username)}`);
  if (password) parts.push(`"password":${goJSONString(password)}`);
  if (email) parts.push(`"email":${goJSONString(email)}`);
  return createHash('sha256').update(`{${parts.join(',')}}`).digest('hex');
}

/** registry locations and their credentials (credentialprovider's BasicDockerKeyring) */
export class DockerKeyring {
  private readonly creds = new Map<string, TrackedAuth[]>();
  private index: string[] = [];

  /**
   * adds a Docker configuration's auths (`{"<location>": {username, password, auth, email}}`),
   * from the Secret `source` (none: the node's own)
   */
  add(auths: Record<string, ConfigEntry>, source?: SecretCoordinates): void {
    for (const [loc, entry] of Object.entries(auths ?? {})) {
      if (!entry || typeof entry !== 'object') continue;
      const p = parseLocation(loc);
      if (!p) continue;
      // the docker client treats /v1/ and /v2/ as the host itself
      let path = p.path;
      if (path.startsWith('/v2/') || path.startsWith('/v1/')) path = path.slice(3);
      const key = path && path !== '/' ? p.host + path : p.host;
      let { username, password } = entry;
      if (entry.auth) {
        // "auth", base64 of user:password, takes the place of username and password (the kubelet's
        // DockerConfigEntry); one that does not decode to a pair makes the entry unusable
        const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        if (colon < 0) continue;
        username = decoded.slice(0, colon);
        password = decoded.slice(colon + 1);
      }
      const auth: AuthConfig = {};
      if (username) auth.username = username;
      if (password) auth.password = password;
      const email = typeof entry.email === 'string' ? entry.email : undefined;
      const list = this.creds.get(key) ?? [];
      list.push({ auth, hash: hashAuthConfig(username, password, email), ...(source ? { source } : {}) });
      this.creds.set(key, list);
      if (!this.index.includes(key)) this.index.push(key);
    }
    // the longest (most specific) locations first, as the kubelet sorts its index in reverse
    this.index.sort().reverse();
  }

  /** the credentials for an image's repository, most specific location first */
  lookup(repo: string): AuthConfig[] {
    return this.lookupTracked(repo).map((t) => t.auth);
  }

  /** lookup(), each credential with its source and hash */
  lookupTracked(repo: string): TrackedAuth[] {
    const out: TrackedAuth[] = [];
    for (const k of this.index) if (locationMatches(k, repo)) out.push(...this.creds.get(k)!);
    if (out.length) return out;
    if (isDefaultRegistry(repo)) return this.creds.get(DEFAULT_REGISTRY_HOST) ?? [];
    return [];
  }
}

/** a Docker configuration's text: config.json's `{"auths": {...}}`, or the older .dockercfg's bare map */
function addConfigText(k: DockerKeyring, text: string, json: boolean, source?: SecretCoordinates): boolean {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return false;
  }
  if (!v || typeof v !== 'object') return false;
  const auths = json ? (v as { auths?: unknown }).auths : v;
  if (!auths || typeof auths !== 'object') return false;
  k.add(auths as Record<string, ConfigEntry>, source);
  return true;
}

/**
 * The keyring of a pod's pull secrets (credentialprovider/secrets' MakeDockerKeyring): a
 * kubernetes.io/dockerconfigjson Secret's `.dockerconfigjson`, a kubernetes.io/dockercfg
 * Secret's `.dockercfg`; other Secrets add nothing.
 */
export function keyringFromSecrets(secrets: any[]): DockerKeyring {
  const k = new DockerKeyring();
  for (const s of secrets) {
    const data = s?.data ?? {};
    const m = s?.metadata ?? {};
    const source: SecretCoordinates = { uid: String(m.uid ?? ''), namespace: String(m.namespace ?? ''), name: String(m.name ?? '') };
    if (s?.type === 'kubernetes.io/dockerconfigjson' && data['.dockerconfigjson']) {
      addConfigText(k, Buffer.from(String(data['.dockerconfigjson']), 'base64').toString('utf8'), true, source);
    } else if (s?.type === 'kubernetes.io/dockercfg' && data['.dockercfg']) {
      addConfigText(k, Buffer.from(String(data['.dockercfg']), 'base64').toString('utf8'), false, source);
    }
  }
  return k;
}

/**
 * The node's own credentials, as the kubelet reads them once at start (credentialprovider's
 * ReadDockerConfigFile): the first config.json found in --root-dir, the working directory,
 * $HOME/.docker and /.docker; else the first .dockercfg in --root-dir, the working directory,
 * $HOME and /.
 */
export function nodeKeyring(rootDir: string, onError: (file: string, why: string) => void): DockerKeyring {
  const k = new DockerKeyring();
  const home = homedir();
  const tryFiles = (files: string[], json: boolean): boolean => {
    for (const f of files) {
      if (!existsSync(f)) continue;
      try {
        if (addConfigText(k, readFileSync(f, 'utf8'), json)) return true;
        onError(f, 'not a Docker configuration');
      } catch (e) {
        onError(f, (e as Error).message);
      }
    }
    return false;
  };
  if (!tryFiles([join(rootDir, 'config.json'), join(process.cwd(), 'config.json'), join(home, '.docker', 'config.json'), '/.docker/config.json'], true)) {
    tryFiles([join(rootDir, '.dockercfg'), join(process.cwd(), '.dockercfg'), join(home, '.dockercfg'), '/.dockercfg'], false);
  }
  return k;
}

/** what an image's credentials may come from besides the pod's pull secrets (the kubelet's default keyring) */
export interface NodeCredentials {
  /** the node's Docker configuration files */
  keyring?: DockerKeyring;
  /** the image credential provider plugins (given the pod the image is pulled for: a plugin may ask for its service account's token) */
  plugins?: { lookup(repo: string, pod?: PullingPod): Promise<AuthConfig[]> };
}

/** the pod an image is pulled for, as the plugins see it (its namespace, name, uid and service account) */
export interface PullingPod {
  namespace: string;
  name: string;
  uid: string;
  serviceAccountName: string;
}

/** a pod object's coordinates for the plugins */
export function pullingPod(pod: any): PullingPod {
  const m = pod?.metadata ?? {};
  return { namespace: String(m.namespace ?? ''), name: String(m.name ?? ''), uid: String(m.uid ?? ''), serviceAccountName: String(pod?.spec?.serviceAccountName ?? '') };
}

/** the credentials to try for an image: the pod's secrets first, then the node's configuration, then the plugins' (a union keyring) */
export async function credentialsFor(image: string, podKeyring: DockerKeyring | undefined, node: NodeCredentials | undefined, pod?: PullingPod): Promise<AuthConfig[]> {
  return (await trackedCredentialsFor(image, podKeyring, node, pod)).map((t) => t.auth);
}

/** credentialsFor(), each with its source (the pod's Secret; none for the node's and the plugins') and hash */
export async function trackedCredentialsFor(image: string, podKeyring: DockerKeyring | undefined, node: NodeCredentials | undefined, pod?: PullingPod): Promise<TrackedAuth[]> {
  const repo = repositoryOf(image);
  const plugins = ((await node?.plugins?.lookup(repo, pod)) ?? []).map((auth) => ({ auth, hash: hashAuthConfig(auth.username, auth.password, undefined) }));
  return [...(podKeyring?.lookupTracked(repo) ?? []), ...(node?.keyring?.lookupTracked(repo) ?? []), ...plugins];
}
