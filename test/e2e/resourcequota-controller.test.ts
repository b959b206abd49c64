// The resource quota controller of the embedded controller manager, against a real keelson: a new
// quota gets status.hard and status.used at once (before any write in its namespace), usage is given
// back when counted objects are deleted or pods finish, a custom resource counts through
// count/<resource>.<group>, and kubectl describe shows it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, until, crdBody, createCRD, defaultServiceAccount, type Cluster } from './harness.js';

let c: Cluster;
const NS = 'rq';
const QUOTAS = `/api/v1/namespaces/${NS}/resourcequotas`;

before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory'] });
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
  await defaultServiceAccount(c, NS);
});
after(async () => {
  await c?.stop();
});

const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } });
const pod = (name: string, cpu: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu }, limits: { cpu } } }] } });

async function statusOf(name: string, want: (s: any) => boolean): Promise<any> {
  return until(`quota ${name}'s status`, async () => {
    const q = (await c.raw('GET', `${QUOTAS}/${name}`)).json();
    return want(q.status ?? {}) ? q.status : undefined;
  });
}

test('a new quota gets its status from the objects already there; deletes and finished pods give usage back', async () => {
  for (const n of ['a', 'b']) {
    const r = await c.raw('POST', `/api/v1/namespaces/${NS}/configmaps`, { body: cm(n) });
    assert.equal(r.status, 201, r.text);
  }
  const p1 = await c.raw('POST', `/api/v1/namespaces/${NS}/pods`, { body: pod('p1', '200m') });
  assert.equal(p1.status, 201, p1.text);
  const made = await c.raw('POST', QUOTAS, { body: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { configmaps: '5', pods: '3', 'requests.cpu': '1' } } } });
  assert.equal(made.status, 201, made.text);
  // (the root CA ConfigMap of the namespace counts too)
  const s = await statusOf('q', (st) => st.used?.pods === '1');
  assert.deepEqual(s.hard, { configmaps: '5', pods: '3', 'requests.cpu': '1' });
  assert.equal(s.used['requests.cpu'], '200m');
  const configmaps = Number(s.used.configmaps);
  assert.ok(configmaps >= 2, JSON.stringify(s));
  // a delete: the controller gives the usage back (no other write in the namespace)
  assert.equal((await c.raw('DELETE', `/api/v1/namespaces/${NS}/configmaps/a`)).status, 200);
  await statusOf('q', (st) => Number(st.used?.configmaps) === configmaps - 1);
  // a pod that finishes no longer counts its compute resources
  const st = await c.raw('PATCH', `/api/v1/namespaces/${NS}/pods/p1/status`, { body: JSON.stringify({ status: { phase: 'Succeeded' } }), headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(st.status, 200, st.text);
  await statusOf('q', (x) => x.used?.pods === '0' && x.used?.['requests.cpu'] === '0');
  // a spec change is synced at once
  const cur = (await c.raw('GET', `${QUOTAS}/q`)).json();
  assert.equal((await c.raw('PUT', `${QUOTAS}/q`, { body: { ...cur, spec: { hard: { ...cur.spec.hard, services: '2' } } } })).status, 200);
  await statusOf('q', (x) => x.hard?.services === '2' && x.used?.services === '0');
  const d = c.kubectl(['describe', 'quota', 'q', '-n', NS]);
  assert.equal(d.code, 0, d.stderr);
  assert.match(d.stdout, /Resource\s+Used\s+Hard\n\s*--------\s+----\s+----\n/);
  assert.match(d.stdout, /\nservices\s+0\s+2\n/);
});

test('count/<resource>.<group> counts custom resources, through an informer made when a quota first counts them', async () => {
  await createCRD(c, crdBody('rq.example.com', 'gizmos', 'Gizmo', [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }]));
  const base = `/apis/rq.example.com/v1/namespaces/${NS}/gizmos`;
  for (const n of ['g1', 'g2']) assert.equal((await c.raw('POST', base, { body: { apiVersion: 'rq.example.com/v1', kind: 'Gizmo', metadata: { name: n } } })).status, 201);
  assert.equal((await c.raw('POST', QUOTAS, { body: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'gizmos' }, spec: { hard: { 'count/gizmos.rq.example.com': '10' } } } })).status, 201);
  await statusOf('gizmos', (st) => st.used?.['count/gizmos.rq.example.com'] === '2');
  assert.equal((await c.raw('DELETE', `${base}/g1`)).status, 200);
  await statusOf('gizmos', (st) => st.used?.['count/gizmos.rq.example.com'] === '1');
});

test('the flags: --resource-quota-sync-period and --concurrent-resource-quota-syncs are in --help; bad values are refused', async () => {
  const { spawnSync } = await import('node:child_process');
  const { KEELSON } = await import('./harness.js');
  const help = spawnSync(process.execPath, [KEELSON, 'server', '--help'], { encoding: 'utf8' });
  assert.match(help.stdout, /--resource-quota-sync-period duration\s+The period for syncing quota usage status in the system \(default 5m0s\)/);
  assert.match(help.stdout, /--concurrent-resource-quota-syncs int32\s+The number of resource quotas that are allowed to sync concurrently/);
  const bad = spawnSync(process.execPath, [KEELSON, 'server', '--concurrent-resource-quota-syncs=0', '--data-dir', '/nonexistent/x'], { encoding: 'utf8', timeout: 20_000 });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--concurrent-resource-quota-syncs must be at least 1/);
});
