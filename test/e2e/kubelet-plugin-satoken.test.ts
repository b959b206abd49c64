// Service account tokens for image credential provider plugins (KEP-4412, Kubernetes 1.33), end to
// end: a real `keelson server` with NodeRestriction enabled (and
// KubeletServiceAccountTokenForCredentialProviders on, so the Node authorizer lets a kubelet read
// its pods' ServiceAccounts; ServiceAccountNodeAudienceRestriction is on by default), a `keelson
// kubelet` with the gate on, a private containerd and a registry of the test's own (registry.ts),
// and a plugin (a shell script) whose provider config sets tokenAttributes. The plugin records each
// request it gets and answers the registry's credentials only when the request carries a service
// account token.
//
// The node's token request for the provider's audience (no volume of the pod names it) is refused
// by NodeRestriction until a ClusterRole grants nodes `request-serviceaccounts-token-audience` on
// the audience; then the pod pulls with the plugin's credentials, the plugin having been given a
// real token bound to the pod for that audience. A second ServiceAccount does not reuse the first
// one's cached credentials. A kubelet without the gate refuses the config at start, and with the
// gate a config with 1.34's cacheType fails the 1.33 strict decoding.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
let bin: string;
let calls: string;
const NODE = 'keelson-satoken-node';
const REPO = 'team/busybox';
const AUDIENCE = 'registry.example';
const GATE = '--feature-gates=KubeletServiceAccountTokenForCredentialProviders=true';

/** the plugin's config: a provider with tokenAttributes (and `extra` lines under them) */
function writeConfig(file: string, extra: string[] = []): void {
  writeFileSync(file, [
    'apiVersion: kubelet.config.k8s.io/v1',
    'kind: CredentialProviderConfig',
    'providers:',
    '- name: sa-helper',
    `  matchImages: ["${reg.host}"]`,
    '  defaultCacheDuration: 10m',
    '  apiVersion: credentialprovider.kubelet.k8s.io/v1',
    '  tokenAttributes:',
    `    serviceAccountTokenAudience: ${AUDIENCE}`,
    '    requireServiceAccount: true',
    '    requiredServiceAccountAnnotationKeys: ["registry.example/role"]',
    ...extra,
  ].join('\n') + '\n');
}

function podSpec(name: string, tag: string, serviceAccountName: string): any {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      nodeName: NODE,
      serviceAccountName,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: `${reg.host}/${REPO}:${tag}`, imagePullPolicy: 'Always', command: ['sleep', '3600'] }],
    },
  };
}

async function create(path: string, body: unknown): Promise<any> {
  const r = await c.raw('POST', path, { body: body as object });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

const waitFor = (name: string, what: string, ok: (p: any) => boolean): Promise<any> => podWhen(c, 'default', name, what, ok, () => kubelet?.tail() ?? '');

/** the requests the plugin was given so far */
function pluginRequests(): any[] {
  if (!existsSync(calls)) return [];
  return readFileSync(calls, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** a JWT's claims */
function claims(jwt: string): any {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8'));
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-satoken-'));
  bin = join(dir, 'plugins');
  calls = join(dir, 'plugin-calls');
  mkdirSync(bin, { recursive: true });
  [ctd, reg, c] = await Promise.all([
    startContainerd(),
    startRegistry({ layoutTar: imageTars().busybox, repository: REPO, users: { puller: 'right-password' } }),
    startCluster({ args: ['--storage-backend=memory', '--enable-admission-plugins=NodeRestriction', GATE] }),
  ]);
  mkdirSync(join(ctd.registryConfigDir, reg.host), { recursive: true });
  writeFileSync(join(ctd.registryConfigDir, reg.host, 'hosts.toml'), registryHostsToml(reg.host));
  // the plugin: records the request (one line), answers the registry's credentials only for a
  // request with a service account token (an empty auth otherwise), cached per registry
  const withToken = JSON.stringify({ kind: 'CredentialProviderResponse', apiVersion: 'credentialprovider.kubelet.k8s.io/v1', cacheKeyType: 'Registry', cacheDuration: '5m', auth: { [reg.host]: { username: 'puller', password: 'right-password' } } });
  const without = JSON.stringify({ kind: 'CredentialProviderResponse', apiVersion: 'credentialprovider.kubelet.k8s.io/v1', cacheKeyType: 'Registry', cacheDuration: '5m', auth: {} });
  writeFileSync(join(bin, 'sa-helper'), [
    '#!/bin/sh',
    'req=$(cat)',
    `printf '%s\\n' "$req" >> ${calls}`,
    'case "$req" in',
    `  *'"serviceAccountToken":"'*) echo '${withToken}' ;;`,
    `  *) echo '${without}' ;;`,
    'esac',
  ].join('\n') + '\n', { mode: 0o755 });
  const cfg = join(dir, 'credential-providers.yaml');
  writeConfig(cfg);
  writeJoiningKubeletConfig(c, dir);
  const port = await freePort();
  kubelet = new KubeletProcess([...joiningKubeletArgs({ cluster: c, dir, endpoint: ctd.endpoint, node: NODE, port }), '-v', '2', GATE, '--image-credential-provider-config', cfg, '--image-credential-provider-bin-dir', bin]);
  await kubelet.ready(c, NODE);
  for (const sa of ['builder', 'deployer']) {
    await create('/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, annotations: { 'registry.example/role': sa, 'not/passed': 'x' } } });
  }
});

after(async () => {
  if (c && kubelet) c.kubectl(['delete', 'pods', '--all', '--wait=true', '--timeout=30s']);
  await kubelet?.stop();
  kubelet = undefined;
  await Promise.all([ctd?.stop(), reg?.stop(), c?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the node may not request a token for the plugin\'s audience until RBAC grants request-serviceaccounts-token-audience on it; then the pod pulls with the plugin\'s credentials, given a real bound token', async () => {
  // without the grant: NodeRestriction refuses the kubelet's TokenRequest, the plugin is not run,
  // the pull goes on anonymously and the registry says 401
  const refusedPod = await create('/api/v1/namespaces/default/pods', podSpec('no-grant', 'v1', 'builder'));
  await waitFor('no-grant', 'failing its pull', (p) => ['ErrImagePull', 'ImagePullBackOff'].includes(p.status?.containerStatuses?.[0]?.state?.waiting?.reason));
  const forbidden = `serviceaccounts \\"builder\\" is forbidden: audience \\"${AUDIENCE}\\" not found in pod spec volume, system:node:${NODE} is not authorized to request tokens for this audience`;
  await until('the kubelet\'s log of the refused token', () => kubelet!.logs.includes('Error getting service account token default/builder') && kubelet!.logs.includes(forbidden), 10_000).catch((e) => {
    throw new Error(`${(e as Error).message}\n${kubelet?.tail()}`);
  });
  assert.deepEqual(pluginRequests(), [], 'the plugin is not run without a token');

  // the same request as the node itself (its own client certificate), through kubectl
  const asNode = ['--kubeconfig', join(dir, 'kubelet.kubeconfig')];
  const tokenArgs = (pod: any) => ['create', 'token', 'builder', '--audience', AUDIENCE, '--bound-object-kind', 'Pod', '--bound-object-name', pod.metadata.name, '--bound-object-uid', pod.metadata.uid];
  const r1 = c.kubectl([...asNode, ...tokenArgs(refusedPod)]);
  assert.equal(r1.code, 1, r1.stdout);
  assert.match(r1.stderr, new RegExp(`serviceaccounts "builder" is forbidden: audience "${AUDIENCE.replace(/\./g, '\\.')}" not found in pod spec volume, system:node:${NODE} is not authorized to request tokens for this audience`));
  // (the refused pod goes: a retry of its pull must not be the plugin's first run below)
  assert.equal(c.kubectl(['delete', 'pod', 'no-grant', '--wait=true', '--timeout=30s']).code, 0);

  // the grant: a ClusterRole with the verb on the audience, bound to the nodes
  await create('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'registry-audience' },
    rules: [{ apiGroups: [''], resources: [AUDIENCE], verbs: ['request-serviceaccounts-token-audience'] }],
  });
  await create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'registry-audience' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'registry-audience' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:nodes' }],
  });
  await until('the grant in effect', async () => {
    const r = await c.raw('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: `system:node:${NODE}`, groups: ['system:nodes'], resourceAttributes: { verb: 'request-serviceaccounts-token-audience', group: '', resource: AUDIENCE, namespace: 'default', name: 'builder' } } },
    });
    return r.json().status?.allowed === true;
  }, 10_000);

  const before = reg.requests.length;
  const pod = await create('/api/v1/namespaces/default/pods', podSpec('granted', 'v2', 'builder'));
  await waitFor('granted', 'Running', (p) => p.status?.phase === 'Running');
  assert.ok(reg.requests.slice(before).some((x) => x.user === 'puller'), 'pulled with the plugin\'s credentials');
  const reqs = pluginRequests();
  assert.equal(reqs.length, 1, JSON.stringify(reqs));
  const req = reqs[0];
  assert.deepEqual(Object.keys(req), ['kind', 'apiVersion', 'image', 'serviceAccountToken', 'serviceAccountAnnotations']);
  assert.equal(req.kind, 'CredentialProviderRequest');
  assert.equal(req.apiVersion, 'credentialprovider.kubelet.k8s.io/v1');
  assert.equal(req.image, `${reg.host}/${REPO}`);
  assert.deepEqual(req.serviceAccountAnnotations, { 'registry.example/role': 'builder' }, 'only the annotations the config names');

  // the token: bound to the pod, for the audience, of the service account
  const sa = (await c.raw('GET', '/api/v1/namespaces/default/serviceaccounts/builder')).json();
  const cl = claims(req.serviceAccountToken);
  assert.deepEqual(cl.aud, [AUDIENCE]);
  assert.equal(cl.sub, 'system:serviceaccount:default:builder');
  assert.deepEqual(cl['kubernetes.io'].pod, { name: 'granted', uid: pod.metadata.uid });
  assert.deepEqual(cl['kubernetes.io'].serviceaccount, { name: 'builder', uid: sa.metadata.uid });
  assert.equal(cl.exp - cl.iat, 3600, 'the TokenRequest\'s default lifetime');
  const review = await c.raw('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: req.serviceAccountToken, audiences: [AUDIENCE] } } });
  const status = review.json().status;
  assert.equal(status.authenticated, true, review.text);
  assert.deepEqual(status.audiences, [AUDIENCE]);
  assert.equal(status.user.username, 'system:serviceaccount:default:builder');
  assert.deepEqual(status.user.extra['authentication.kubernetes.io/pod-name'], ['granted']);
});

test('the plugin\'s answers are cached per service account: another pod of the same one reuses them, another service account does not', async () => {
  const n = pluginRequests().length;
  assert.ok(n >= 1);
  await create('/api/v1/namespaces/default/pods', podSpec('granted-again', 'v3', 'builder'));
  await waitFor('granted-again', 'Running', (p) => p.status?.phase === 'Running');
  assert.equal(pluginRequests().length, n, 'the cached answer');
  await create('/api/v1/namespaces/default/pods', podSpec('other-sa', 'v4', 'deployer'));
  await waitFor('other-sa', 'Running', (p) => p.status?.phase === 'Running');
  const reqs = pluginRequests();
  assert.equal(reqs.length, n + 1, 'run again for another service account');
  assert.deepEqual(reqs[n].serviceAccountAnnotations, { 'registry.example/role': 'deployer' });
  assert.equal(claims(reqs[n].serviceAccountToken).sub, 'system:serviceaccount:default:deployer');
  // and the node, granted, gets such a token itself (kubectl as the node)
  const granted = (await c.raw('GET', '/api/v1/namespaces/default/pods/other-sa')).json();
  const r = c.kubectl(['--kubeconfig', join(dir, 'kubelet.kubeconfig'), 'create', 'token', 'deployer', '--audience', AUDIENCE, '--bound-object-kind', 'Pod', '--bound-object-name', 'other-sa', '--bound-object-uid', granted.metadata.uid]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(claims(r.stdout.trim()).aud, [AUDIENCE]);
});

test('the config the kubelet refuses: tokenAttributes without the gate; 1.34\'s cacheType with it (1.33\'s strict decoding)', async () => {
  const refusedDir = join(dir, 'refused');
  mkdirSync(refusedDir, { recursive: true });
  writeJoiningKubeletConfig(c, refusedDir);
  const port = await freePort();
  const start = (extra: string[]) =>
    spawnSync(process.execPath, [...joiningKubeletArgs({ cluster: c, dir: refusedDir, endpoint: ctd.endpoint, node: 'refused-node', port }), '--cgroups-per-qos=false', '--enforce-node-allocatable=', ...extra], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  const cfg = join(dir, 'credential-providers.yaml');
  const r1 = start(['--image-credential-provider-config', cfg, '--image-credential-provider-bin-dir', bin]);
  assert.equal(r1.status, 1, r1.stderr);
  assert.match(r1.stderr, /"Failed to register CRI auth plugins" err="failed to validate credential provider config: providers\.tokenAttributes: Forbidden: tokenAttributes is not supported when KubeletServiceAccountTokenForCredentialProviders feature gate is disabled"/);
  const withCacheType = join(dir, 'cache-type.yaml');
  writeConfig(withCacheType, ['    cacheType: Token']);
  const r2 = start([GATE, '--image-credential-provider-config', withCacheType, '--image-credential-provider-bin-dir', bin]);
  assert.equal(r2.status, 1, r2.stderr);
  assert.ok(r2.stderr.includes(`"Failed to register CRI auth plugins" err="error decoding config \\"${withCacheType}\\": strict decoding error: unknown field \\"providers[0].tokenAttributes.cacheType\\""`), r2.stderr);
});
