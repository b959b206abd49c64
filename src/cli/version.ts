// The version Keelson reports: GET /version, `--version`, `--version=raw` and User-Agent.
//
// Scheme: gitVersion is `v<Kubernetes version we are compatible with>+keelson.<our version>`,
// for example `v1.33.0+keelson.0.1.0`. The Kubernetes part is what clients compare: kubectl's
// version-skew warning reads major/minor, Helm checks charts' `kubeVersion` constraints against
// it. Keelson's own version rides in semver build metadata (as k3s does with `v1.33.1+k3s1`)
// rather than in a pre-release suffix, because a pre-release version (`v1.33.0-keelson.0`)
// does not satisfy constraints such as `>=1.25.0` in Helm and other semver tools.
//
// This module imports only Node built-ins, so any layer may use it (the API server's /version
// handler included); it never throws: unknown build facts are reported empty.

import { readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';

/** The Kubernetes release whose API Keelson serves. */
export const KUBERNETES_VERSION = '1.33.0';

/** apimachinery's version.Info, as /version returns it (JSON field names). */
export interface VersionInfo {
  major: string;
  minor: string;
  emulationMajor?: string;
  emulationMinor?: string;
  minCompatibilityMajor?: string;
  minCompatibilityMinor?: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
}

/** Facts about the build; `buildinfo.json` beside this module may carry them (see writeBuildInfo). */
export interface BuildInfo {
  gitCommit?: string;
  gitTreeState?: string;
  buildDate?: string;
}

/** The word `--version` prints before the version: `Keelson v1.33.0+keelson.0.1.0`. */
export let programName = 'Keelson';
export function setProgramName(name: string): void { programName = name; }

const here = dirname(fileURLToPath(import.meta.url));

function findPackageRoot(): string | undefined {
  let dir = here;
  for (let i = 0; i < 8; i++) {
    const p = join(dir, 'package.json');
    if (existsSync(p)) {
      try {
        if (JSON.parse(readFileSync(p, 'utf8')).name === 'keelson') return dir;
      } catch { /* keep looking */ }
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}

let cachedRoot: string | undefined | null = null;
function packageRoot(): string | undefined {
  if (cachedRoot === null) cachedRoot = findPackageRoot();
  return cachedRoot;
}

function readKeelsonVersion(): string {
  const root = packageRoot();
  if (!root) return '0.0.0';
  try {
    const v = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
    return typeof v === 'string' && v ? v : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** Keelson's own version (package.json). */
export const KEELSON_VERSION = readKeelsonVersion();

/** The default gitVersion: `v1.33.0+keelson.0.1.0`. */
export const DEFAULT_GIT_VERSION = `v${KUBERNETES_VERSION}+keelson.${KEELSON_VERSION.replace(/[^0-9A-Za-z.-]/g, '-')}`;

let dynamicVersion = DEFAULT_GIT_VERSION;

// ── semver (apimachinery util/version ParseSemantic) ────────────────────────

export interface SemVer {
  major: number;
  minor: number;
  patch: number;
  preRelease: string;
  buildMetadata: string;
}

/** Parses a semantic version as apimachinery's ParseSemantic does (leading `v` allowed). */
export function parseSemantic(str: string): SemVer {
  const m = /^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)$/.exec(str);
  if (!m) throw new Error(`could not parse "${str}" as version`);
  const numbers = m[1]!;
  const extra = m[2]!;
  const comps = numbers.split('.');
  if (comps.length !== 3) throw new Error(`illegal version string "${str}"`);
  for (const c of comps) {
    if (c.length > 1 && c[0] === '0') throw new Error(`illegal zero-prefixed version component "${c}" in "${str}"`);
  }
  let preRelease = '';
  let buildMetadata = '';
  if (extra !== '') {
    const pm = /^(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/.exec(extra);
    if (!pm || (!pm[1] && !pm[2])) throw new Error(`illegal version string "${str}"`);
    preRelease = pm[1] ?? '';
    buildMetadata = pm[2] ?? '';
  }
  return { major: Number(comps[0]), minor: Number(comps[1]), patch: Number(comps[2]), preRelease, buildMetadata };
}

/**
 * Sets the version reported from now on (`--version=v1.33.0`); it must keep the
 * major/minor/patch of the default, as component-base requires.
 */
export function setDynamicVersion(v: string): void {
  if (v.length === 0) throw new Error('version must not be empty');
  if (v !== DEFAULT_GIT_VERSION) {
    const a = parseSemantic(v);
    const b = parseSemantic(DEFAULT_GIT_VERSION);
    if (a.major !== b.major || a.minor !== b.minor || a.patch !== b.patch) {
      throw new Error(`version "${v}" must match major/minor/patch of default version "${DEFAULT_GIT_VERSION}"`);
    }
  }
  dynamicVersion = v;
}

// ── platform ────────────────────────────────────────────────────────────────

const GOARCH: Record<string, string> = {
  x64: 'amd64', arm64: 'arm64', ia32: '386', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x',
  riscv64: 'riscv64', loong64: 'loong64', mips: 'mips', mipsel: 'mipsle', ppc: 'ppc',
};
const GOOS: Record<string, string> = { win32: 'windows', sunos: 'solaris' };

/** `linux/amd64` style: Go's GOOS/GOARCH names for this process. */
export function goPlatform(platform: string = process.platform, arch: string = process.arch): string {
  let a = GOARCH[arch] ?? arch;
  if (arch === 'ppc64' && platform === 'aix') a = 'ppc64';
  return `${GOOS[platform] ?? platform}/${a}`;
}

// ── build facts ─────────────────────────────────────────────────────────────

function readGitCommit(root: string): string {
  try {
    let gitDir = join(root, '.git');
    const st = statSync(gitDir);
    if (st.isFile()) {
      const m = /^gitdir:\s*(.+)$/m.exec(readFileSync(gitDir, 'utf8'));
      if (!m) return '';
      gitDir = resolve(root, m[1]!.trim());
    }
    let commonDir = gitDir;
    if (existsSync(join(gitDir, 'commondir'))) commonDir = resolve(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim());
    const head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
    if (/^[0-9a-f]{40,64}$/.test(head)) return head;
    const ref = /^ref:\s*(.+)$/.exec(head)?.[1];
    if (!ref) return '';
    for (const dir of [gitDir, commonDir]) {
      const p = join(dir, ref);
      if (existsSync(p)) return readFileSync(p, 'utf8').trim();
    }
    const packed = join(commonDir, 'packed-refs');
    if (existsSync(packed)) {
      for (const line of readFileSync(packed, 'utf8').split('\n')) {
        const [sha, name] = line.split(' ');
        if (name === ref && sha && /^[0-9a-f]{40,64}$/.test(sha)) return sha;
      }
    }
  } catch { /* not built from a git checkout */ }
  return '';
}

function isoSeconds(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

let cachedBuild: Required<BuildInfo> | undefined;

/**
 * The build facts: from `buildinfo.json` beside this module when a build step wrote one, else
 * the commit read from the checkout's .git files (no subprocess) and the compiled module's
 * modification time as the build date. The tree state is only known from buildinfo.json.
 */
export function getBuildInfo(): Required<BuildInfo> {
  if (cachedBuild) return cachedBuild;
  let file: BuildInfo = {};
  try {
    file = JSON.parse(readFileSync(join(here, 'buildinfo.json'), 'utf8')) as BuildInfo;
  } catch { /* optional */ }
  const root = packageRoot();
  let buildDate = file.buildDate ?? '';
  if (!buildDate) {
    try { buildDate = isoSeconds(statSync(fileURLToPath(import.meta.url)).mtime); } catch { buildDate = '1970-01-01T00:00:00Z'; }
  }
  cachedBuild = {
    gitCommit: file.gitCommit ?? (root ? readGitCommit(root) : ''),
    gitTreeState: file.gitTreeState ?? '',
    buildDate,
  };
  return cachedBuild;
}

/**
 * Collects build facts with the git CLI (commit, clean/dirty) for a build step; never throws.
 * Write them with writeBuildInfo so that a running server need not look at git.
 */
export function collectBuildInfo(root: string = packageRoot() ?? process.cwd()): Required<BuildInfo> {
  const git = (...args: string[]): string | undefined => {
    try {
      return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).trim();
    } catch {
      return undefined;
    }
  };
  const commit = git('rev-parse', 'HEAD') ?? '';
  const status = commit ? git('status', '--porcelain', '--untracked-files=no') : undefined;
  return {
    gitCommit: commit,
    gitTreeState: status === undefined ? '' : status === '' ? 'clean' : 'dirty',
    buildDate: isoSeconds(new Date()),
  };
}

/** Writes buildinfo.json beside the compiled version module (call from a build script). */
export async function writeBuildInfo(info: BuildInfo = collectBuildInfo()): Promise<string> {
  const { writeFileSync } = await import('node:fs');
  const path = join(here, 'buildinfo.json');
  writeFileSync(path, JSON.stringify(info, null, 2) + '\n');
  cachedBuild = undefined;
  return path;
}

// ── the report ──────────────────────────────────────────────────────────────

/** The version info served at /version and printed by `--version=raw`. */
export function getVersionInfo(): VersionInfo {
  const b = getBuildInfo();
  const k = parseSemantic(KUBERNETES_VERSION);
  return {
    major: String(k.major),
    minor: String(k.minor),
    emulationMajor: String(k.major),
    emulationMinor: String(k.minor),
    minCompatibilityMajor: String(k.major),
    minCompatibilityMinor: String(Math.max(0, k.minor - 1)),
    gitVersion: dynamicVersion,
    gitCommit: b.gitCommit,
    gitTreeState: b.gitTreeState,
    buildDate: b.buildDate,
    // Go reports its toolchain as `go1.24.0`; we report the runtime the same way.
    goVersion: 'node' + process.versions.node,
    compiler: 'tsc',
    platform: goPlatform(),
  };
}

function goFieldName(k: string): string {
  return k.charAt(0).toUpperCase() + k.slice(1);
}

/** `--version=raw`: the struct as Go's `%#v` prints component-base's version.Info. */
export function formatVersionRaw(info: VersionInfo = getVersionInfo()): string {
  const order: (keyof VersionInfo)[] = ['major', 'minor', 'emulationMajor', 'emulationMinor', 'minCompatibilityMajor', 'minCompatibilityMinor',
    'gitVersion', 'gitCommit', 'gitTreeState', 'buildDate', 'goVersion', 'compiler', 'platform'];
  return 'version.Info{' + order.map((k) => `${goFieldName(k)}:${JSON.stringify(info[k] ?? '')}`).join(', ') + '}';
}

/** `--version`: `Keelson v1.33.0+keelson.0.1.0`. */
export function formatVersionLine(info: VersionInfo = getVersionInfo()): string {
  return `${programName} ${info.gitVersion}`;
}

/**
 * client-go's default User-Agent for a component: `keelson-controller-manager/v1.33.0+keelson.0.1.0
 * (linux/amd64) kubernetes/abcdef0`.
 */
export function userAgent(command: string): string {
  const info = getVersionInfo();
  const commit = info.gitCommit ? info.gitCommit.slice(0, 7) : 'unknown';
  return `${command}/${info.gitVersion} (${info.platform}) kubernetes/${commit}`;
}
