// The kubelet's image pull throttling (src/nodeagent/imagepulls.ts): serial pulls, the parallel
// limit, and the registry QPS bucket that fails pulls past it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ImagePulls } from '../../src/nodeagent/imagepulls.js';

function pulls() {
  let running = 0;
  let most = 0;
  const release: (() => void)[] = [];
  const pull = () =>
    new Promise<string>((resolve) => {
      running++;
      most = Math.max(most, running);
      release.push(() => {
        running--;
        resolve('ref');
      });
    });
  return { pull, most: () => most, release: () => release.shift()?.(), pending: () => release.length };
}

const tick = () => new Promise((r) => setImmediate(r));

test('serialized pulls run one at a time; parallel ones up to maxParallelImagePulls', async () => {
  for (const [o, expected] of [
    [{ serialize: true, qps: 0, burst: 10, maxParallel: 0 }, 1],
    [{ serialize: false, qps: 0, burst: 10, maxParallel: 2 }, 2],
    [{ serialize: false, qps: 0, burst: 10, maxParallel: 0 }, 5],
  ] as const) {
    const p = pulls();
    const q = new ImagePulls(o);
    const all = Array.from({ length: 5 }, () => q.run(p.pull));
    for (let i = 0; i < 5; i++) {
      await tick();
      p.release();
    }
    for (let i = 0; i < 10 && p.pending(); i++) {
      await tick();
      p.release();
    }
    assert.deepEqual(await Promise.all(all), ['ref', 'ref', 'ref', 'ref', 'ref']);
    assert.equal(p.most(), expected, JSON.stringify(o));
  }
});

test('registryPullQPS: pulls beyond the burst fail at once with "pull QPS exceeded"', async () => {
  const q = new ImagePulls({ serialize: false, qps: 1, burst: 2, maxParallel: 0 });
  const results = await Promise.allSettled([1, 2, 3].map(() => q.run(async () => 'ref')));
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'rejected']);
  assert.equal((results[2] as PromiseRejectedResult).reason.message, 'pull QPS exceeded');
});

// ---------------------------------------------------------------------------------------------
// KubeletEnsureSecretPulledImages: the pull records and the credential verification policies
// (src/nodeagent/pullrecords.ts), as pkg/kubelet/images/pullmanager keeps and reads them.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImagePullManager, normalizedImageName, verificationPolicy, type PullSecretRecord } from '../../src/nodeagent/pullrecords.js';
import { hashAuthConfig, keyringFromSecrets } from '../../src/nodeagent/credentials.js';

const quiet = { info() {}, error() {} };
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const IMAGE = 'registry.example.com:5000/team/app:v1';
const NAME = 'registry.example.com:5000/team/app';
const REF = `sha256:${'a'.repeat(64)}`;
const SECRET_A: PullSecretRecord = { uid: 'uid-a', namespace: 'ns-a', name: 'pull', credentialHash: 'hash-1' };

function withRoot(f: (root: string) => void | Promise<void>) {
  return async () => {
    const root = mkdtempSync(join(tmpdir(), 'keelson-pullrecords-'));
    try {
      await f(root);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  };
}

test('image names are normalized as the kubelet parses them, and bad ones are refused', () => {
  assert.equal(normalizedImageName('busybox'), 'docker.io/library/busybox');
  assert.equal(normalizedImageName('busybox:1.36'), 'docker.io/library/busybox');
  assert.equal(normalizedImageName('team/app@sha256:' + 'b'.repeat(64)), 'docker.io/team/app');
  assert.equal(normalizedImageName('index.docker.io/team/app:v1'), 'docker.io/team/app');
  assert.equal(normalizedImageName(IMAGE), NAME);
  assert.equal(normalizedImageName('localhost/app:v2'), 'localhost/app');
  assert.equal(normalizedImageName('[::1]:5000/app:v2'), '[::1]:5000/app');
  for (const bad of ['', 'Team/App', 'app:', 'a'.repeat(64), 'registry.example.com/App:v1', 'app@sha256:xyz']) {
    assert.throws(() => normalizedImageName(bad), Error, bad);
  }
});

test('the verification policies: NeverVerify, NeverVerifyPreloadedImages (by whether the kubelet pulled it), AlwaysVerify, NeverVerifyAllowlistedImages', () => {
  assert.equal(verificationPolicy('NeverVerify')(IMAGE, true), false);
  assert.equal(verificationPolicy('NeverVerifyPreloadedImages')(IMAGE, false), false);
  assert.equal(verificationPolicy('NeverVerifyPreloadedImages')(IMAGE, true), true);
  assert.equal(verificationPolicy('AlwaysVerify')(IMAGE, false), true);
  const allow = verificationPolicy('NeverVerifyAllowlistedImages', ['docker.io/library/busybox', 'registry.example.com:5000/team/*']);
  assert.equal(allow('busybox:1.36', true), false, 'a full name, matched on the normalized name without tag');
  assert.equal(allow('docker.io/library/busybox@sha256:' + 'c'.repeat(64), false), false);
  assert.equal(allow(IMAGE, true), false, 'under a prefix');
  assert.equal(allow('registry.example.com:5000/other/app:v1', false), true, 'outside it: verified, even when preloaded');
  assert.equal(allow('docker.io/library/busybox2:1', false), true);
  // the entries the kubelet refuses (and then does not start)
  const refused: [string, RegExp][] = [
    [' busybox', /^Error: leading\/trailing spaces are not allowed:  busybox$/],
    ['*', /^Error: not a valid wildcard pattern, only patterns ending with '\/\*' are allowed: \*$/],
    ['/*', /^Error: at least registry hostname is required$/],
    ['registry.example.com/*/app', /^Error: not a valid wildcard pattern/],
    ['busybox', /^Error: neither tag nor digest is accepted in an image reference: busybox$/],
    ['docker.io/library/busybox:1.36', /^Error: neither tag nor digest is accepted in an image reference/],
    ['Registry.example.com/App', /^Error: failed to parse as an image name: /],
  ];
  for (const [p, msg] of refused) assert.throws(() => verificationPolicy('NeverVerifyAllowlistedImages', [p]), msg, p);
  assert.throws(() => verificationPolicy('Sometimes'), /^Error: unknown image pull credential verification policy: Sometimes$/);
});

test('a pull Secret\'s credential hash is the kubelet\'s: SHA-256 of Go\'s JSON of username, password and email', () => {
  assert.equal(hashAuthConfig('puller', 'pw', undefined), sha('{"username":"puller","password":"pw"}'));
  assert.equal(hashAuthConfig('u', 'p<&>', 'me@example.com'), sha('{"username":"u","password":"p\\u003c\\u0026\\u003e","email":"me@example.com"}'));
  assert.equal(hashAuthConfig(undefined, undefined, undefined), sha('{}'));
  // the keyring of a pod's Secrets tracks each credential's Secret and hash
  const cfg = Buffer.from(JSON.stringify({ auths: { 'registry.example.com:5000': { auth: Buffer.from('puller:pw').toString('base64'), email: 'e@x' } } })).toString('base64');
  const k = keyringFromSecrets([{ type: 'kubernetes.io/dockerconfigjson', metadata: { name: 'pull', namespace: 'ns-a', uid: 'uid-a' }, data: { '.dockerconfigjson': cfg } }]);
  assert.deepEqual(k.lookupTracked(NAME), [{ auth: { username: 'puller', password: 'pw' }, hash: sha('{"username":"puller","password":"pw","email":"e@x"}'), source: { uid: 'uid-a', namespace: 'ns-a', name: 'pull' } }]);
});

test('a pull with a Secret: the record names it; the same Secret, or another with the same credential, may use the image; others must pull', withRoot((root) => {
  const m = new ImagePullManager({ rootDir: root, policy: verificationPolicy('AlwaysVerify'), log: quiet, now: () => Date.parse('2026-01-02T03:04:05.678Z') });
  m.recordPullIntent(IMAGE);
  const intent = join(root, 'image_manager', 'pulling', `sha256-${sha(IMAGE)}`);
  assert.equal(readFileSync(intent, 'utf8'), `{"kind":"ImagePullIntent","apiVersion":"kubelet.config.k8s.io/v1alpha1","image":"${IMAGE}"}\n`);
  m.recordImagePulled(IMAGE, REF, { kubernetesSecrets: [SECRET_A] });
  assert.equal(existsSync(intent), false, 'the intent goes once the pull is recorded');
  const file = join(root, 'image_manager', 'pulled', `sha256-${sha(REF)}`);
  assert.equal(
    readFileSync(file, 'utf8'),
    `{"kind":"ImagePulledRecord","apiVersion":"kubelet.config.k8s.io/v1alpha1","lastUpdatedTime":"2026-01-02T03:04:05Z","imageRef":"${REF}","credentialMapping":{"${NAME}":{"kubernetesSecrets":[{"uid":"uid-a","namespace":"ns-a","name":"pull","credentialHash":"hash-1"}]}}}\n`,
  );
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(statSync(join(root, 'image_manager', 'pulled')).mode & 0o777, 0o700);

  assert.equal(m.mustAttemptImagePull(IMAGE, REF, []), true, 'no Secret');
  assert.equal(m.mustAttemptImagePull(IMAGE, REF, [{ uid: 'uid-b', namespace: 'ns-b', name: 'pull', credentialHash: 'hash-2' }]), true, 'another Secret, another credential');
  assert.equal(m.mustAttemptImagePull(IMAGE, REF, [SECRET_A]), false, 'the same Secret');
  assert.equal(m.mustAttemptImagePull('registry.example.com:5000/team/app:v2', REF, [SECRET_A]), false, 'any tag of the name, same image');
  assert.equal(m.mustAttemptImagePull('registry.example.com:5000/team/other:v1', REF, [SECRET_A]), true, 'another name for the same image: not recorded');
  assert.equal(m.mustAttemptImagePull(IMAGE, '', [SECRET_A]), true, 'no image reference: pull');
  // a Secret of another namespace holding the same credential: allowed, and recorded
  const copy = { uid: 'uid-c', namespace: 'ns-c', name: 'copy', credentialHash: 'hash-1' };
  assert.equal(m.mustAttemptImagePull(IMAGE, REF, [copy]), false);
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')).credentialMapping[NAME].kubernetesSecrets.map((s: any) => s.uid), ['uid-a', 'uid-c'], 'sorted by namespace, name, uid');
  // the same Secret with a new credential (rotated): allowed, its new hash replaces the old
  assert.equal(m.mustAttemptImagePull(IMAGE, REF, [{ ...SECRET_A, credentialHash: 'hash-9' }]), false);
  const secrets = JSON.parse(readFileSync(file, 'utf8')).credentialMapping[NAME].kubernetesSecrets;
  assert.deepEqual(secrets.find((s: any) => s.uid === 'uid-a').credentialHash, 'hash-9');
  assert.equal(m.mustAttemptImagePull(IMAGE, REF, [{ uid: 'uid-d', namespace: 'ns-d', name: 'x', credentialHash: 'hash-1' }]), false, 'the old hash is still the copy\'s');
}));

test('an anonymous pull (or with the node\'s own credentials) lets every pod of the node use the image', withRoot((root) => {
  const m = new ImagePullManager({ rootDir: root, policy: verificationPolicy('AlwaysVerify'), log: quiet });
  m.recordPullIntent(IMAGE);
  m.recordImagePulled(IMAGE, REF, { kubernetesSecrets: [SECRET_A] });
  m.recordPullIntent(IMAGE);
  m.recordImagePulled(IMAGE, REF, { nodePodsAccessible: true });
  const file = join(root, 'image_manager', 'pulled', `sha256-${sha(REF)}`);
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')).credentialMapping, { [NAME]: { nodePodsAccessible: true } });
  assert.equal(m.mustAttemptImagePull(IMAGE, REF, []), false);
}));

test('preloaded images (no record, no intent): NeverVerifyPreloadedImages lets them be; AlwaysVerify pulls; an intent marks an image as the kubelet\'s', withRoot((root) => {
  const preloaded = new ImagePullManager({ rootDir: root, policy: verificationPolicy('NeverVerifyPreloadedImages'), log: quiet });
  assert.equal(preloaded.mustAttemptImagePull(IMAGE, REF, []), false);
  const always = new ImagePullManager({ rootDir: root, policy: verificationPolicy('AlwaysVerify'), log: quiet });
  assert.equal(always.mustAttemptImagePull(IMAGE, REF, [SECRET_A]), true);
  // a pull under way (its intent on disk): the kubelet's image, verified
  always.recordPullIntent(IMAGE);
  assert.equal(preloaded.mustAttemptImagePull(IMAGE, REF, []), true);
  always.recordImagePullFailed(IMAGE);
  assert.equal(readdirSync(join(root, 'image_manager', 'pulling')).length, 0, 'a failed pull ends its intent');
  assert.equal(preloaded.mustAttemptImagePull(IMAGE, REF, []), false);
  // two pulls of one image at once: the intent stays until both end
  always.recordPullIntent(IMAGE);
  always.recordPullIntent(IMAGE);
  always.recordImagePullFailed(IMAGE);
  assert.equal(readdirSync(join(root, 'image_manager', 'pulling')).length, 1);
  always.recordImagePulled(IMAGE, REF, { kubernetesSecrets: [SECRET_A] });
  assert.equal(readdirSync(join(root, 'image_manager', 'pulling')).length, 0);
}));

test('the records outlive the kubelet: a new manager reads them; intents left by a crash become records without credentials at the start', withRoot(async (root) => {
  const first = new ImagePullManager({ rootDir: root, policy: verificationPolicy('NeverVerifyPreloadedImages'), log: quiet });
  first.recordPullIntent(IMAGE);
  first.recordImagePulled(IMAGE, REF, { kubernetesSecrets: [SECRET_A] });
  const second = new ImagePullManager({ rootDir: root, policy: verificationPolicy('NeverVerifyPreloadedImages'), log: quiet });
  await second.initialize(async () => []);
  assert.equal(second.mustAttemptImagePull(IMAGE, REF, []), true);
  assert.equal(second.mustAttemptImagePull(IMAGE, REF, [SECRET_A]), false);

  // a pull interrupted by the kubelet's end: its intent stays on disk
  const other = 'registry.example.com:5000/team/crashed:v1';
  const otherRef = `sha256:${'d'.repeat(64)}`;
  second.recordPullIntent(other);
  const third = new ImagePullManager({ rootDir: root, policy: verificationPolicy('NeverVerifyPreloadedImages'), log: quiet });
  assert.equal(third.mustAttemptImagePull(other, otherRef, []), true, 'the intent alone marks it as pulled by the kubelet');
  await third.initialize(async () => [{ id: otherRef, repoTags: [other], repoDigests: [] }, { id: REF, repoTags: ['unrelated:v1'] }]);
  assert.deepEqual(readdirSync(join(root, 'image_manager', 'pulling')), [], 'the runtime has it: the intent became a record');
  const rec = JSON.parse(readFileSync(join(root, 'image_manager', 'pulled', `sha256-${sha(otherRef)}`), 'utf8'));
  assert.equal(rec.imageRef, otherRef);
  assert.equal(rec.credentialMapping, undefined, 'no credentials: every pod must show its own');
  assert.equal(third.mustAttemptImagePull(other, otherRef, [SECRET_A]), true);
  // an intent whose image the runtime does not have stays
  third.recordPullIntent('registry.example.com:5000/team/never:v1');
  const fourth = new ImagePullManager({ rootDir: root, policy: verificationPolicy('NeverVerifyPreloadedImages'), log: quiet });
  await fourth.initialize(async () => {
    throw new Error('runtime down');
  });
  assert.equal(readdirSync(join(root, 'image_manager', 'pulling')).length, 1);
}));

test('files that do not decode never crash the kubelet: the image is pulled (verified) and other files are skipped', withRoot(async (root) => {
  const m = new ImagePullManager({ rootDir: root, policy: verificationPolicy('NeverVerifyPreloadedImages'), log: quiet });
  const pulled = join(root, 'image_manager', 'pulled');
  const pulling = join(root, 'image_manager', 'pulling');
  for (const [i, text] of ['not json', '[]', '{"kind":"ImagePulledRecord","apiVersion":"kubelet.config.k8s.io/v1alpha1","imageRef":"' + REF + '","extra":1}', '{"kind":"ImagePulledRecord","apiVersion":"v1","imageRef":"' + REF + '"}', '{"kind":"ImagePulledRecord","apiVersion":"kubelet.config.k8s.io/v1alpha1","imageRef":"' + REF + '","credentialMapping":{"x":{"kubernetesSecrets":"no"}}}'].entries()) {
    writeFileSync(join(pulled, `sha256-${sha(REF)}`), text);
    assert.equal(m.mustAttemptImagePull(IMAGE, REF, [SECRET_A]), true, `case ${i}`);
  }
  // a record of another reference in the file of this one (a hash collision, or a copied file): none
  writeFileSync(join(pulled, `sha256-${sha(REF)}`), `{"kind":"ImagePulledRecord","apiVersion":"kubelet.config.k8s.io/v1alpha1","lastUpdatedTime":null,"imageRef":"sha256:other"}`);
  assert.equal(m.mustAttemptImagePull(IMAGE, REF, []), false, 'no record: preloaded');
  // junk in the directories: skipped by the start and by the prune
  writeFileSync(join(pulling, 'sha256-junk'), '{');
  writeFileSync(join(pulling, 'README'), 'not ours');
  writeFileSync(join(pulling, `sha256-${sha(IMAGE)}.tmp`), 'half written');
  mkdirSync(join(pulled, 'sha256-dir'));
  await m.initialize(async () => [{ id: REF, repoTags: [IMAGE] }]);
  m.pruneUnknownRecords([], Date.now() + 1000);
  assert.ok(existsSync(join(pulled, 'sha256-dir')));
  // a record written by a newer pull, then bad input to every entry point
  m.recordPullIntent(IMAGE);
  m.recordImagePulled(IMAGE, REF, { kubernetesSecrets: [SECRET_A] });
  m.recordImagePulled('Not A Valid/Name', REF, { nodePodsAccessible: true });
  m.recordImagePullFailed('never-recorded');
  assert.equal(m.mustAttemptImagePull('Not A Valid/Name', REF, []), true);
}));

test('the prune of the image garbage collector: records of images the runtime no longer has, last updated before it began, go', withRoot((root) => {
  let now = Date.parse('2026-01-02T00:00:00Z');
  const m = new ImagePullManager({ rootDir: root, policy: verificationPolicy('AlwaysVerify'), log: quiet, now: () => now });
  const refs = ['sha256:' + '1'.repeat(64), 'sha256:' + '2'.repeat(64), 'sha256:' + '3'.repeat(64)];
  for (const r of refs.slice(0, 2)) m.recordImagePulled(IMAGE, r, { nodePodsAccessible: true });
  now += 60_000;
  m.recordImagePulled(IMAGE, refs[2]!, { nodePodsAccessible: true });
  m.pruneUnknownRecords([refs[1]!], now - 1000);
  const left = readdirSync(join(root, 'image_manager', 'pulled')).sort();
  assert.deepEqual(left, [`sha256-${sha(refs[1]!)}`, `sha256-${sha(refs[2]!)}`].sort());
}));
