// `keelson patch -k DIR` against `kubectl patch -k DIR` (1.33) on a real keelson server: the
// objects of a kustomization with generators (hashed names), name prefix, namespace, patches,
// images and replicas are created by `kubectl apply -k DIR`; then both tools patch them with -k and
// must print the same lines and exit the same way, and keelson's patch must land on exactly the
// objects kubectl created (the generated ConfigMap and Secret with their hash suffixes included).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { startCluster, KEELSON, kubectlBinary, type Cluster, type RunResult } from './harness.js';
import { writeCase, type KustomizeCase } from '../kubectl/kustomize-cases.js';

const NS = 'kz-e2e';
let c: Cluster;
let dir: string;

const KZ: KustomizeCase = {
  name: 'e2e',
  dir: 'overlay',
  files: {
    'base/kustomization.yaml': `resources:
- app.yaml
configMapGenerator:
- name: settings
  literals: [mode=base, level=1]
- name: files
  files: [conf.txt]
secretGenerator:
- name: creds
  literals: [password=s3cret]
`,
    'base/conf.txt': 'a=1\nb=2\n',
    'base/app.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      schedulerName: manual
      containers:
      - name: web
        image: nginx:1.25
        envFrom:
        - configMapRef: {name: settings}
        env:
        - name: P
          valueFrom:
            secretKeyRef: {name: creds, key: password}
      volumes:
      - name: files
        configMap: {name: files}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: runner
`,
    'overlay/kustomization.yaml': `resources:
- ../base
namespace: ${NS}
namePrefix: shop-
commonLabels:
  app.kubernetes.io/part-of: shop
configMapGenerator:
- name: settings
  behavior: merge
  literals: [mode=prod]
images:
- name: nginx
  newTag: "1.27"
replicas:
- name: web
  count: 0
patches:
- target: {kind: Deployment}
  patch: |-
    - op: add
      path: /spec/template/spec/serviceAccountName
      value: runner
`,
  },
};

function run(bin: 'kubectl' | 'keelson', args: string[]): RunResult {
  const env = { PATH: process.env.PATH ?? '', HOME: c.home, KUBECONFIG: c.kubeconfig };
  const cmd = bin === 'kubectl' ? kubectlBinary('1.33') : process.execPath;
  const argv = bin === 'kubectl' ? args : [KEELSON, ...args];
  const r = spawnSync(cmd, argv, { env, encoding: 'utf8', timeout: 60_000, cwd: c.home });
  return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

const normalize = (s: string) => s.replace(/\bkubectl(?:\.1\.33)? patch\b/g, 'keelson patch');

async function get(path: string): Promise<Record<string, any>> {
  const r = await c.raw('GET', path);
  assert.equal(r.status, 200, `${path}: ${r.text}`);
  return r.json();
}

before(async () => {
  c = await startCluster({ args: ['--controllers=*,-deployment-controller'] });
  const ns = await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  assert.equal(ns.status, 201, ns.text);
  dir = writeCase(join(c.home, 'kz'), KZ);
  const applied = run('kubectl', ['apply', '-k', dir]);
  assert.equal(applied.code, 0, applied.stderr);
});

after(async () => {
  await c?.stop();
});

test('kubectl apply -k created the hashed names keelson computes', async () => {
  const out = run('keelson', ['patch', '-k', dir, '--local', '-p', '{}', '-o', 'name']);
  assert.equal(out.code, 0, out.stderr);
  const names = out.stdout.trim().split('\n');
  const cms = (await get(`/api/v1/namespaces/${NS}/configmaps`)).items.map((o: any) => `configmap/${o.metadata.name}`).filter((n: string) => n.startsWith('configmap/shop-'));
  const secrets = (await get(`/api/v1/namespaces/${NS}/secrets`)).items.map((o: any) => `secret/${o.metadata.name}`).filter((n: string) => n.startsWith('secret/shop-'));
  assert.deepEqual(names.filter((n) => n.startsWith('configmap/')).sort(), cms.sort());
  assert.deepEqual(names.filter((n) => n.startsWith('secret/')).sort(), secrets.sort());
  assert.ok(cms.some((n: string) => /^configmap\/shop-settings-[a-z0-9]{10}$/.test(n)), cms.join(' '));
  assert.ok(names.includes('deployment.apps/shop-web'), names.join(' '));
  // the Deployment kubectl applied refers to the generated names keelson computes
  const d = await get(`/apis/apps/v1/namespaces/${NS}/deployments/shop-web`);
  const cm = names.find((n) => n.startsWith('configmap/shop-settings-'))!.slice('configmap/'.length);
  assert.equal(d.spec.template.spec.containers[0].envFrom[0].configMapRef.name, cm);
  assert.equal(d.spec.template.spec.containers[0].image, 'nginx:1.27');
  assert.equal(d.spec.replicas, 0);
  assert.equal(d.spec.template.spec.serviceAccountName, 'shop-runner');
});

test('keelson patch -k prints what kubectl patch -k prints and patches the same objects', async () => {
  for (const [label, extra] of [
    ['by-kubectl', []],
    ['by-keelson', ['-o', 'name']],
  ] as [string, string[]][]) {
    const a = run('kubectl', ['patch', '-k', dir, '-p', `{"metadata":{"labels":{"patched":"${label}-a"}}}`, ...extra]);
    const b = run('keelson', ['patch', '-k', dir, '-p', `{"metadata":{"labels":{"patched":"${label}-b"}}}`, ...extra]);
    assert.deepEqual({ code: b.code, stdout: normalize(b.stdout), stderr: normalize(b.stderr) }, { code: a.code, stdout: normalize(a.stdout), stderr: normalize(a.stderr) });
    assert.equal(a.code, 0, a.stderr);
  }
  // every object of the kustomization carries keelson's last label
  const local = run('keelson', ['patch', '-k', dir, '--local', '-p', '{}', '-o', 'name']);
  const names = local.stdout.trim().split('\n');
  assert.equal(names.length, 5, local.stdout);
  for (const n of names) {
    const [type, name] = n.split('/') as [string, string];
    const path = type === 'deployment.apps' ? `/apis/apps/v1/namespaces/${NS}/deployments/${name}` : `/api/v1/namespaces/${NS}/${type}s/${name}`;
    const o = await get(path);
    assert.equal(o.metadata.labels.patched, 'by-keelson-b', n);
  }
  // the same patch again: kubectl compares the server's answer with the object the kustomization
  // built (not with the object before the patch), so both say "patched" again
  const again = ['patch', '-k', dir, '-p', '{"metadata":{"labels":{"patched":"by-keelson-b"}}}'];
  const a = run('kubectl', again);
  const b = run('keelson', again);
  assert.deepEqual({ code: b.code, stdout: normalize(b.stdout), stderr: normalize(b.stderr) }, { code: a.code, stdout: normalize(a.stdout), stderr: normalize(a.stderr) });
  assert.match(b.stdout, /^configmap\/shop-settings-[a-z0-9]{10} patched$/m);
});

test('keelson patch -k with a data patch on the generated ConfigMap', async () => {
  const cmName = run('keelson', ['patch', '-k', dir, '--local', '-p', '{}', '-o', 'name']).stdout.split('\n').find((n) => n.startsWith('configmap/shop-settings-'))!;
  const a = run('kubectl', ['patch', '-k', dir, '--type', 'merge', '-p', '{"metadata":{"annotations":{"who":"kubectl"}}}', '-o', 'jsonpath={.metadata.name}{" "}']);
  const b = run('keelson', ['patch', '-k', dir, '--type', 'merge', '-p', '{"metadata":{"annotations":{"who":"keelson"}}}', '-o', 'jsonpath={.metadata.name}{" "}']);
  assert.deepEqual({ code: b.code, stdout: b.stdout, stderr: normalize(b.stderr) }, { code: a.code, stdout: a.stdout, stderr: normalize(a.stderr) });
  const o = await get(`/api/v1/namespaces/${NS}/configmaps/${cmName.slice('configmap/'.length)}`);
  assert.equal(o.metadata.annotations.who, 'keelson');
  assert.deepEqual(o.data, { level: '1', mode: 'prod' });
});
