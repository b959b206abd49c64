import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  getVersionInfo, formatVersionRaw, formatVersionLine, parseSemantic, setDynamicVersion, goPlatform, userAgent,
  DEFAULT_GIT_VERSION, KEELSON_VERSION, KUBERNETES_VERSION, collectBuildInfo,
} from '../../src/cli/version.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');

test('gitVersion is the Kubernetes version plus Keelson build metadata, and parses as semver', () => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  assert.equal(KEELSON_VERSION, pkg.version);
  assert.equal(DEFAULT_GIT_VERSION, `v${KUBERNETES_VERSION}+keelson.${pkg.version}`);
  const v = parseSemantic(DEFAULT_GIT_VERSION);
  assert.deepEqual([v.major, v.minor, v.patch, v.preRelease], [1, 33, 0, '']);
  assert.equal(v.buildMetadata, `keelson.${pkg.version}`);
  const info = getVersionInfo();
  assert.equal(info.major, '1');
  assert.equal(info.minor, '33');
  assert.equal(info.gitVersion, DEFAULT_GIT_VERSION);
  assert.equal(info.emulationMinor, '33');
  assert.equal(info.minCompatibilityMinor, '32');
  assert.match(info.buildDate, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(info.goVersion, `node${process.versions.node}`);
  assert.equal(info.compiler, 'tsc');
  assert.equal(info.platform, goPlatform());
});

test('the commit comes from the checkout without running git, when there is one', () => {
  const info = getVersionInfo();
  let inGit = true;
  try {
    execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, stdio: 'ignore' });
  } catch {
    inGit = false;
  }
  if (!inGit) {
    assert.equal(info.gitCommit, '');
    return;
  }
  assert.match(info.gitCommit, /^[0-9a-f]{40}$/);
  // a commit of this repository (HEAD moves while others commit, so only check it exists)
  execFileSync('git', ['cat-file', '-e', `${info.gitCommit}^{commit}`], { cwd: root, stdio: 'ignore' });
  const b = collectBuildInfo(root);
  assert.match(b.gitCommit, /^[0-9a-f]{40}$/);
  assert.ok(b.gitTreeState === 'clean' || b.gitTreeState === 'dirty');
});

test('apimachinery ParseSemantic errors', () => {
  assert.throws(() => parseSemantic('abc'), { message: 'could not parse "abc" as version' });
  assert.throws(() => parseSemantic('v1.2'), { message: 'illegal version string "v1.2"' });
  assert.throws(() => parseSemantic('v1.02.3'), { message: 'illegal zero-prefixed version component "02" in "v1.02.3"' });
  assert.throws(() => parseSemantic('v1.2.3x'), { message: 'illegal version string "v1.2.3x"' });
  assert.deepEqual(parseSemantic('1.2.3-rc.1+build.5'), { major: 1, minor: 2, patch: 3, preRelease: 'rc.1', buildMetadata: 'build.5' });
});

test('--version=vX.Y.Z must keep major/minor/patch', () => {
  assert.throws(() => setDynamicVersion('v1.34.0'), { message: `version "v1.34.0" must match major/minor/patch of default version "${DEFAULT_GIT_VERSION}"` });
  assert.throws(() => setDynamicVersion(''), { message: 'version must not be empty' });
  setDynamicVersion('v1.33.0-custom.1');
  assert.equal(getVersionInfo().gitVersion, 'v1.33.0-custom.1');
  assert.equal(formatVersionLine(), 'Keelson v1.33.0-custom.1');
  setDynamicVersion(DEFAULT_GIT_VERSION);
});

test('--version=raw prints the struct as Go %#v does', () => {
  const raw = formatVersionRaw({
    major: '1', minor: '33', emulationMajor: '1', emulationMinor: '33', minCompatibilityMajor: '1', minCompatibilityMinor: '32',
    gitVersion: 'v1.33.0+keelson.0.1.0', gitCommit: 'abc', gitTreeState: 'clean', buildDate: '2026-01-01T00:00:00Z',
    goVersion: 'node20.0.0', compiler: 'tsc', platform: 'linux/amd64',
  });
  assert.equal(raw, 'version.Info{Major:"1", Minor:"33", EmulationMajor:"1", EmulationMinor:"33", MinCompatibilityMajor:"1", MinCompatibilityMinor:"32", GitVersion:"v1.33.0+keelson.0.1.0", GitCommit:"abc", GitTreeState:"clean", BuildDate:"2026-01-01T00:00:00Z", GoVersion:"node20.0.0", Compiler:"tsc", Platform:"linux/amd64"}');
});

test('platform names follow GOOS/GOARCH', () => {
  assert.equal(goPlatform('linux', 'x64'), 'linux/amd64');
  assert.equal(goPlatform('linux', 'arm64'), 'linux/arm64');
  assert.equal(goPlatform('darwin', 'arm64'), 'darwin/arm64');
  assert.equal(goPlatform('win32', 'ia32'), 'windows/386');
  assert.equal(goPlatform('linux', 'ppc64'), 'linux/ppc64le');
  assert.equal(goPlatform('linux', 's390x'), 'linux/s390x');
});

test('User-Agent in client-go form', () => {
  assert.match(userAgent('keelson-scheduler'), /^keelson-scheduler\/v1\.33\.0\+keelson\.\S+ \([a-z0-9]+\/[a-z0-9]+\) kubernetes\/([0-9a-f]{7}|unknown)$/);
});
