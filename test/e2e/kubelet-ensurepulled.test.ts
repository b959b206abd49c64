// KubeletEnsureSecretPulledImages end to end: a real `keelson server`, a `keelson kubelet` with
// the gate on, a private containerd 1.6 (test/nodeagent/containerd.ts) and a registry of the
// test's own on 127.0.0.1 (registry.ts, Basic authentication), as kubelet-pullsecrets.test.ts has
// them. The kubelet records which pull Secret pulled the private image (under
// <root-dir>/image_manager/pulled), and a pod of another namespace without that Secret may not use
// the image although it is on the node: imagePullPolicy IfNotPresent pulls again, anonymously,
// and fails with ErrImagePull; Never fails as if the image were absent. A pod with the Secret, or
// with a copy of its credential in another Secret, uses the image without a pull. The records
// outlive a restart of the kubelet; NeverVerify lets every pod use the image.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startCluster, until, type Cluster } from './harness.js';
import { joiningKubeletArgs, writeJoiningKubeletConfig, KubeletProcess, podWhen } from './kubeletharness.js';
import { imageTars, startContainerd, type Containerd } from '../nodeagent/containerd.js';
import { registryHostsToml, startRegistry, type TestRegistry } from './registry.js';

let c: Cluster;
let ctd: Containerd;
let reg: TestRegistry;
let kubelet: KubeletProcess | undefined;
let dir: string;
const NODE = 'keelson-ensurepulled-node';
const REPO = 'team/secret-app';
const GATE = ['featureGates:', '  KubeletEnsureSecretPulledImages: true'];

const image = () => `${reg.host}/${REPO}:v1`;

function podSpec(ns: string, name: string, secret: string | undefined, policy = 'IfNotPresent'): any {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 1,
      ...(secret ? { imagePullSecrets: [{ name: secret }] } : {}),
      containers: [{ name: 'main', image: image(), imagePullPolicy: policy, command: ['sleep', '3600'] }],
    },
  };
}

function apply(o: unknown): void {
  const r = c.kubectl(['apply', '-f', '-'], { input: JSON.stringify(o) });
  assert.equal(r.code, 0, r.stderr);
}

const waitFor = (ns: string, name: string, what: string, ok: (p: any) => boolean): Promise<any> => podWhen(c, ns, name, what, ok, () => kubelet?.tail() ?? '');

const running = (ns: string, name: string) => waitFor(ns, name, 'Running', (p) => p.status?.phase === 'Running');
const waitingReason = (p: any): string | undefined => p.status?.containerStatuses?.[0]?.state?.waiting?.reason;

async function eventsOf(ns: string, name: string): Promise<any[]> {
  const r = await c.raw('GET', `/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name%3D${name}`);
  return r.json().items ?? [];
}

/** (re)starts the kubelet with the gate on and these extra configuration lines */
async function startKubelet(extra: string[]): Promise<void> {
  await kubelet?.stop();
  writeJoiningKubeletConfig(c, dir, [...GATE, ...extra]);
  const port = await freePort();
  kubelet = new KubeletProcess([...joiningKubeletArgs({ cluster: c, dir, endpoint: ctd.endpoint, node: NODE, port }), '-v', '2']);
  await kubelet.ready(c, NODE);
}

/** the kubelet's pulled records, decoded */
function pulledRecords(): any[] {
  const d = join(dir, 'root', 'image_manager', 'pulled');
  return readdirSync(d).map((f) => JSON.parse(readFileSync(join(d, f), 'utf8')));
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-ensurepulled-'));
  ctd = await startContainerd();
  reg = await startRegistry({ layoutTar: imageTars().busybox, repository: REPO, users: { puller: 'right-password' } });
  mkdirSync(join(ctd.registryConfigDir, reg.host), { recursive: true });
  writeFileSync(join(ctd.registryConfigDir, reg.host, 'hosts.toml'), registryHostsToml(reg.host));
  c = await startCluster({ args: ['--storage-backend=memory'] });
  for (const ns of ['team-a', 'team-b']) assert.equal(c.kubectl(['create', 'namespace', ns]).code, 0);
  const s = c.kubectl(['create', 'secret', 'docker-registry', 'regcred', '-n', 'team-a', `--docker-server=${reg.host}`, '--docker-username=puller', '--docker-password=right-password']);
  assert.equal(s.code, 0, s.stderr);
  // (the default policy with the gate on: NeverVerifyPreloadedImages)
  await startKubelet([]);
});

after(async () => {
  if (c && kubelet) c.kubectl(['delete', 'pods', '--all', '--all-namespaces', '--wait=true', '--timeout=60s']);
  await kubelet?.stop();
  kubelet = undefined;
  await ctd?.stop();
  await reg?.stop();
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a pod with the pull Secret pulls the private image; the kubelet records the Secret that pulled it', async () => {
  apply(podSpec('team-a', 'owner', 'regcred'));
  await running('team-a', 'owner');
  const ev = await eventsOf('team-a', 'owner');
  assert.ok(ev.some((e) => e.reason === 'Pulled' && e.message.startsWith(`Successfully pulled image "${image()}"`)), JSON.stringify(ev.map((e) => e.message)));
  const secret = JSON.parse(c.kubectl(['get', 'secret', 'regcred', '-n', 'team-a', '-o', 'json']).stdout);
  const rec = pulledRecords().find((r) => r.credentialMapping?.[`${reg.host}/${REPO}`]);
  assert.ok(rec, JSON.stringify(pulledRecords()));
  assert.equal(rec.kind, 'ImagePulledRecord');
  assert.equal(rec.apiVersion, 'kubelet.config.k8s.io/v1alpha1');
  assert.match(rec.imageRef, /^sha256:[0-9a-f]{64}$/);
  assert.deepEqual(rec.credentialMapping[`${reg.host}/${REPO}`], {
    kubernetesSecrets: [{ uid: secret.metadata.uid, namespace: 'team-a', name: 'regcred', credentialHash: createHash('sha256').update('{"username":"puller","password":"right-password"}').digest('hex') }],
  });
  assert.deepEqual(readdirSync(join(dir, 'root', 'image_manager', 'pulling')), [], 'no pull under way');
});

test('a pod of another namespace without the Secret may not use the image on the node: IfNotPresent pulls anonymously and fails (ErrImagePull); Never fails as if it were absent', async () => {
  const before = reg.requests.length;
  apply(podSpec('team-b', 'intruder', undefined));
  const p = await waitFor('team-b', 'intruder', 'failing its pull', (x) => ['ErrImagePull', 'ImagePullBackOff'].includes(waitingReason(x) ?? ''));
  assert.equal(p.status.phase, 'Pending');
  const seen = reg.requests.slice(before);
  assert.ok(seen.length > 0 && seen.every((r) => r.user === ''), `an anonymous pull: ${JSON.stringify(seen)}`);
  await until('the Failed event with the registry\'s answer', async () => {
    const ev = await eventsOf('team-b', 'intruder');
    return ev.find((e) => e.reason === 'Failed' && e.message.startsWith(`Failed to pull image "${image()}": `) && /401 Unauthorized/.test(e.message));
  });

  apply(podSpec('team-b', 'never', undefined, 'Never'));
  const n = await waitFor('team-b', 'never', 'ErrImageNeverPull', (x) => waitingReason(x) === 'ErrImageNeverPull');
  assert.equal(n.status.containerStatuses[0].state.waiting.message, `Container image "${image()}" is not present with pull policy of Never`);
  const ev = await eventsOf('team-b', 'never');
  assert.ok(ev.some((e) => e.type === 'Warning' && e.reason === 'ErrImageNeverPull'), JSON.stringify(ev.map((e) => e.reason)));
});

test('a pod with the same Secret, or with a copy of its credential in another namespace\'s Secret, uses the image without a pull', async () => {
  const before = reg.requests.length;
  apply(podSpec('team-a', 'sibling', 'regcred'));
  await running('team-a', 'sibling');
  const ev = await eventsOf('team-a', 'sibling');
  assert.ok(ev.some((e) => e.reason === 'Pulled' && e.message === `Container image "${image()}" already present on machine and can be accessed by the pod`), JSON.stringify(ev.map((e) => e.message)));

  const s = c.kubectl(['create', 'secret', 'docker-registry', 'samecred', '-n', 'team-b', `--docker-server=${reg.host}`, '--docker-username=puller', '--docker-password=right-password']);
  assert.equal(s.code, 0, s.stderr);
  apply(podSpec('team-b', 'copy', 'samecred'));
  await running('team-b', 'copy');
  // (the intruder of the test before, without credentials, goes on retrying its anonymous pull
  // in back-off meanwhile: only a request with the Secret's user is a pull of these two pods)
  assert.deepEqual(reg.requests.slice(before).filter((r) => r.user !== ''), [], 'no request to the registry with the credential');
  // the copy is recorded too
  const rec = pulledRecords().find((r) => r.credentialMapping?.[`${reg.host}/${REPO}`]);
  assert.deepEqual(rec.credentialMapping[`${reg.host}/${REPO}`].kubernetesSecrets.map((x: any) => `${x.namespace}/${x.name}`), ['team-a/regcred', 'team-b/samecred']);
});

test('the records outlive a restart of the kubelet; with NeverVerify every pod may use the image', async () => {
  // the same policy after a restart: the kubelet still knows it pulled the image (else it would
  // count as preloaded and go unverified), and tries the intruder's pull again
  await kubelet?.stop();
  const restarted = reg.requests.length;
  await startKubelet([]);
  await until('the intruder\'s pull tried again after the restart', () => reg.requests.slice(restarted).some((r) => r.user === ''));
  const p = await waitFor('team-b', 'intruder', 'failing its pull', (x) => ['ErrImagePull', 'ImagePullBackOff'].includes(waitingReason(x) ?? ''));
  assert.equal(p.status.phase, 'Pending');

  await startKubelet(['imagePullCredentialsVerificationPolicy: NeverVerify']);
  await running('team-b', 'intruder');
  await running('team-b', 'never');
});
