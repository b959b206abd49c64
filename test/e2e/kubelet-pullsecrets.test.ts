// Image pulls from a private registry with the pod's imagePullSecrets, end to end: a real `keelson
// server`, a `keelson kubelet` joining it, a private containerd 1.6 (test/nodeagent/containerd.ts)
// and a registry of the test's own on 127.0.0.1 (registry.ts: plain HTTP, Basic authentication).
// The Secrets come from kubectl's own generator (`kubectl create secret docker-registry`) and the
// older kubernetes.io/dockercfg form; the kubelet reads them as the node (the Node authorizer
// allows the pull secrets of its pods), finds the credentials whose location matches the image
// (the most specific first) and tries each, as the kubelet's keyring does. Last, an image
// credential provider plugin (a shell script) gives the credentials, and configs the kubelet
// refuses end its start.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startCluster, until, ROOT, type Cluster } from './harness.js';
import { joiningKubeletArgs, writeJoiningKubeletConfig, KubeletProcess, podWhen } from './kubeletharness.js';
import { imageTars, startContainerd, type Containerd } from '../nodeagent/containerd.js';
import { registryHostsToml, startRegistry, type TestRegistry } from './registry.js';

let c: Cluster;
let ctd: Containerd;
let reg: TestRegistry;
let kubelet: KubeletProcess | undefined;
let dir: string;
const NODE = 'keelson-pull-node';
const REPO = 'team/busybox';

function podSpec(name: string, tag: string, secrets: string[] | undefined, extra: Record<string, unknown> = {}): any {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 1,
      ...(secrets ? { imagePullSecrets: secrets.map((s) => ({ name: s })) } : {}),
      containers: [{ name: 'main', image: `${reg.host}/${REPO}:${tag}`, imagePullPolicy: 'Always', command: ['sleep', '3600'] }],
      ...extra,
    },
  };
}

function apply(o: unknown): void {
  const r = c.kubectl(['apply', '-f', '-'], { input: JSON.stringify(o) });
  assert.equal(r.code, 0, r.stderr);
}

const waitFor = (name: string, what: string, ok: (p: any) => boolean): Promise<any> => podWhen(c, 'default', name, what, ok, () => kubelet?.tail() ?? '');

const running = (name: string) => waitFor(name, 'Running', (p) => p.status?.phase === 'Running');

async function eventsOf(name: string): Promise<any[]> {
  const r = await c.raw('GET', `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D${name}`);
  return r.json().items ?? [];
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-pullsecrets-'));
  ctd = await startContainerd();
  reg = await startRegistry({ layoutTar: imageTars().busybox, repository: REPO, users: { puller: 'right-password', other: 'other-password' } });
  mkdirSync(join(ctd.registryConfigDir, reg.host), { recursive: true });
  writeFileSync(join(ctd.registryConfigDir, reg.host, 'hosts.toml'), registryHostsToml(reg.host));
  c = await startCluster({ args: ['--storage-backend=memory'] });
  writeJoiningKubeletConfig(c, dir);
  const port = await freePort();
  kubelet = new KubeletProcess([...joiningKubeletArgs({ cluster: c, dir, endpoint: ctd.endpoint, node: NODE, port }), '-v', '2']);
  await kubelet.ready(c, NODE);
  // kubectl's generator: a kubernetes.io/dockerconfigjson Secret for the registry's host
  const s = c.kubectl(['create', 'secret', 'docker-registry', 'regcred', `--docker-server=${reg.host}`, '--docker-username=puller', '--docker-password=right-password']);
  assert.equal(s.code, 0, s.stderr);
  // a wrong password for a more specific location (the repository's own path): tried first
  const w = c.kubectl(['create', 'secret', 'docker-registry', 'wrongcred', `--docker-server=${reg.host}/${REPO}`, '--docker-username=puller', '--docker-password=wrong']);
  assert.equal(w.code, 0, w.stderr);
});

after(async () => {
  if (c && kubelet) c.kubectl(['delete', 'pods', '--all', '--wait=true', '--timeout=60s']);
  await kubelet?.stop();
  kubelet = undefined;
  await ctd?.stop();
  await reg?.stop();
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a pod with imagePullSecrets pulls from the private registry with their credentials', async () => {
  const before = reg.requests.length;
  apply(podSpec('private', 'v1', ['regcred']));
  await running('private');
  const seen = reg.requests.slice(before);
  // (containerd asks without credentials first, gets the 401 and its challenge, then asks as the
  // secret's user; the image's blobs are those of the local busybox image it holds already, so it
  // reads no blob)
  assert.equal(seen[0]?.user, '', JSON.stringify(seen));
  assert.ok(seen.some((r) => r.user === 'puller') && seen.every((r) => r.user === '' || r.user === 'puller'), JSON.stringify(seen));
  assert.ok(seen.every((r) => r.path === `/v2/${REPO}/manifests/v1`), JSON.stringify(seen));
  const ev = await eventsOf('private');
  assert.ok(ev.some((e) => e.reason === 'Pulled' && e.message.startsWith(`Successfully pulled image "${reg.host}/${REPO}:v1"`)), JSON.stringify(ev.map((e) => e.message)));
});

test('without pull secrets the pull is anonymous: the registry\'s 401 is ErrImagePull, then ImagePullBackOff', async () => {
  const before = reg.requests.length;
  apply(podSpec('anonymous', 'v2', undefined));
  const p = await waitFor('anonymous', 'failing its pull', (x) => ['ErrImagePull', 'ImagePullBackOff'].includes(x.status?.containerStatuses?.[0]?.state?.waiting?.reason));
  assert.equal(p.status.phase, 'Pending');
  assert.ok(reg.requests.slice(before).every((r) => r.user === ''), 'no credentials were presented');
  await until('the Failed event with the registry\'s answer', async () => {
    const ev = await eventsOf('anonymous');
    return ev.find((e) => e.reason === 'Failed' && e.message.startsWith(`Failed to pull image "${reg.host}/${REPO}:v2": `) && /401 Unauthorized/.test(e.message));
  });
});

test('a pull secret that cannot be read: a FailedToRetrieveImagePullSecret warning naming it, and the pull goes on with the others', async () => {
  apply(podSpec('partial', 'v3', ['absent', 'regcred', '']));
  await running('partial');
  const ev = await eventsOf('partial');
  const warn = ev.find((e) => e.reason === 'FailedToRetrieveImagePullSecret');
  assert.ok(warn, JSON.stringify(ev.map((e) => e.reason)));
  assert.equal(warn.type, 'Warning');
  assert.equal(warn.message, 'Unable to retrieve some image pull secrets (absent); attempting to pull the image may not succeed.');
});

test('several matching credentials are tried in turn, the most specific location first: a wrong one, then the right one', async () => {
  const before = reg.requests.length;
  apply(podSpec('retry', 'v4', ['regcred', 'wrongcred']));
  await running('retry');
  const users = reg.requests.slice(before).map((r) => r.user);
  const wrong = users.indexOf('!puller');
  const right = users.indexOf('puller');
  assert.ok(wrong >= 0 && right > wrong, `the wrong password first, then the right one: ${users.join(' ')}`);
});

test('the older kubernetes.io/dockercfg Secret, and pull secrets a pod gets from its ServiceAccount', async () => {
  const cfg = Buffer.from(JSON.stringify({ [`http://${reg.host}`]: { auth: Buffer.from('other:other-password').toString('base64'), email: 'x@example.com' } })).toString('base64');
  const s = await c.raw('POST', '/api/v1/namespaces/default/secrets', { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'oldcfg' }, type: 'kubernetes.io/dockercfg', data: { '.dockercfg': cfg } } });
  assert.equal(s.status, 201, s.text);
  const sa = await c.raw('POST', '/api/v1/namespaces/default/serviceaccounts', { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'puller' }, imagePullSecrets: [{ name: 'oldcfg' }] } });
  assert.equal(sa.status, 201, sa.text);
  const before = reg.requests.length;
  apply(podSpec('fromsa', 'v5', undefined, { serviceAccountName: 'puller' }));
  const p = await running('fromsa');
  assert.deepEqual(p.spec.imagePullSecrets, [{ name: 'oldcfg' }], 'the ServiceAccount admission plugin added them');
  assert.ok(reg.requests.slice(before).some((r) => r.user === 'other'), 'pulled as the dockercfg\'s user');
});

test('image credential provider plugins: a plugin the config names is run for the images it matches, its answer cached by registry; a config the kubelet cannot use ends its start', async () => {
  const bin = join(dir, 'plugins');
  mkdirSync(bin, { recursive: true });
  const calls = join(dir, 'plugin-calls');
  // the plugin: records its request, arguments and environment, answers credentials for the registry
  const answer = JSON.stringify({
    kind: 'CredentialProviderResponse',
    apiVersion: 'credentialprovider.kubelet.k8s.io/v1',
    cacheKeyType: 'Registry',
    cacheDuration: '1m',
    auth: { [reg.host]: { username: 'other', password: 'other-password' } },
  });
  writeFileSync(join(bin, 'reg-helper'), `#!/bin/sh\n{ cat; echo; echo "args=$*"; echo "mark=$HELPER_MARK"; } >> ${calls}\necho '${answer}'\n`, { mode: 0o755 });
  const cfg = join(dir, 'credential-providers.yaml');
  writeFileSync(cfg, [
    'apiVersion: kubelet.config.k8s.io/v1',
    'kind: CredentialProviderConfig',
    'providers:',
    '- name: reg-helper',
    `  matchImages: ["${reg.host}"]`,
    '  defaultCacheDuration: 10m',
    '  apiVersion: credentialprovider.kubelet.k8s.io/v1',
    '  args: ["--verbose"]',
    '  env:',
    '  - name: HELPER_MARK',
    '    value: from-config',
  ].join('\n'));
  await kubelet?.stop();
  const port = await freePort();
  kubelet = new KubeletProcess([...joiningKubeletArgs({ cluster: c, dir, endpoint: ctd.endpoint, node: NODE, port }), '-v', '2', '--image-credential-provider-config', cfg, '--image-credential-provider-bin-dir', bin]);
  await kubelet.ready(c, NODE);
  const before = reg.requests.length;
  apply(podSpec('viaplugin', 'v6', undefined));
  await running('viaplugin');
  assert.ok(reg.requests.slice(before).some((r) => r.user === 'other'), 'pulled with the plugin\'s credentials');
  const log = readFileSync(calls, 'utf8');
  assert.match(log, new RegExp(`^\\{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider\\.kubelet\\.k8s\\.io/v1","image":"${reg.host.replace(/\./g, '\\.')}/team/busybox"\\}\nargs=--verbose\nmark=from-config\n$`));
  // a second image of the same registry: the cached answer, the plugin is not run again
  apply(podSpec('viaplugin2', 'v7', undefined));
  await running('viaplugin2');
  assert.equal(readFileSync(calls, 'utf8'), log, 'one run, cached for the registry');

  // what the kubelet refuses: "Failed to register CRI auth plugins", and it exits 1
  const refused = (extra: string[]) =>
    spawnSync(process.execPath, [...joiningKubeletArgs({ cluster: c, dir: join(dir, 'refused'), endpoint: ctd.endpoint, node: 'refused-node', port }), '--cgroups-per-qos=false', '--enforce-node-allocatable=', ...extra], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  mkdirSync(join(dir, 'refused'), { recursive: true });
  writeJoiningKubeletConfig(c, join(dir, 'refused'));
  const noCache = join(dir, 'no-cache.yaml');
  writeFileSync(noCache, 'apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: reg-helper\n  matchImages: ["x.io"]\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n');
  const r1 = refused(['--image-credential-provider-config', noCache, '--image-credential-provider-bin-dir', bin]);
  assert.equal(r1.status, 1, r1.stderr);
  assert.match(r1.stderr, /"Failed to register CRI auth plugins" err="failed to validate credential provider config: providers\.defaultCacheDuration: Required value"/);
  const missing = join(dir, 'missing.yaml');
  writeFileSync(missing, 'apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: nope\n  matchImages: ["x.io"]\n  defaultCacheDuration: 1m\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n');
  const r2 = refused(['--image-credential-provider-config', missing, '--image-credential-provider-bin-dir', bin]);
  assert.equal(r2.status, 1, r2.stderr);
  assert.match(r2.stderr, new RegExp(`"Failed to register CRI auth plugins" err="plugin binary executable ${join(bin, 'nope').replace(/[/.]/g, '\\$&')} did not exist"`));
});
