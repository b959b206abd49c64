// The garbage collector of the embedded controller manager (on by default in keelson server, its
// graph fed from the watch cache: src/apiserver/localwatch.ts), against a real keelson: dependents
// of a deleted owner go (background; kubectl delete of a Deployment takes its ReplicaSet and Pods),
// lose their reference (orphan, kubectl --cascade=orphan) or go first (foreground, kubectl
// --cascade=foreground); an object whose owner never existed goes; one that keeps another owner
// only loses the reference to the gone one; a custom resource owns as any object does, also one
// whose CRD came after the collector started.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, until, crdBody, createCRD, type Cluster } from './harness.js';

let c: Cluster;
const NS = 'gc';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;

before(async () => {
  // (the default: no flag)
  c = await startCluster({ args: ['--storage-backend=memory'] });
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
});
after(async () => {
  await c?.stop();
});

async function cm(name: string, owners: { name: string; uid: string; kind?: string; apiVersion?: string; blockOwnerDeletion?: boolean }[] = []): Promise<any> {
  const ownerReferences = owners.map((o) => ({ apiVersion: o.apiVersion ?? 'v1', kind: o.kind ?? 'ConfigMap', name: o.name, uid: o.uid, ...(o.blockOwnerDeletion ? { blockOwnerDeletion: true } : {}) }));
  const r = await c.raw('POST', CMS, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(owners.length ? { ownerReferences } : {}) } } });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

const gone = (path: string) => until(`${path} to be gone`, async () => (await c.raw('GET', path)).status === 404);

test('background: the dependents of a deleted owner are deleted', async () => {
  const owner = await cm('owner');
  await cm('dep-a', [{ name: 'owner', uid: owner.metadata.uid }]);
  await cm('dep-b', [{ name: 'owner', uid: owner.metadata.uid }]);
  const r = c.kubectl(['delete', 'configmap', 'owner', '-n', NS]);
  assert.equal(r.code, 0, r.stderr);
  await gone(`${CMS}/dep-a`);
  await gone(`${CMS}/dep-b`);
});

test('kubectl delete deployment: its ReplicaSet and Pods go with it (kubectl 1.33, 1.27)', async () => {
  for (const version of ['1.33', '1.27']) {
    const name = `web-${version.replace('.', '-')}`;
    let r = c.kubectl(['create', 'deployment', name, '--image=registry.k8s.io/pause:3.10', '--replicas=2', '-n', NS], { version });
    assert.equal(r.code, 0, r.stderr);
    const sel = encodeURIComponent(`app=${name}`);
    await until(`${name}'s ReplicaSet and 2 Pods`, async () => {
      const rs = (await c.raw('GET', `/apis/apps/v1/namespaces/${NS}/replicasets?labelSelector=${sel}`)).json().items;
      const pods = (await c.raw('GET', `/api/v1/namespaces/${NS}/pods?labelSelector=${sel}`)).json().items;
      return rs.length === 1 && pods.length === 2;
    });
    r = c.kubectl(['delete', 'deployment', name, '-n', NS], { version });
    assert.equal(r.code, 0, r.stderr);
    await until(`${name}'s ReplicaSet and Pods to be gone`, async () => {
      const rs = (await c.raw('GET', `/apis/apps/v1/namespaces/${NS}/replicasets?labelSelector=${sel}`)).json().items;
      // (no node agent: a deleted pod has no kubelet to finish it, so it goes at once with its grace
      // period, or stays Terminating; either way the collector asked for its deletion)
      const pods = (await c.raw('GET', `/api/v1/namespaces/${NS}/pods?labelSelector=${sel}`)).json().items;
      return rs.length === 0 && pods.every((p: any) => p.metadata.deletionTimestamp);
    });
  }
});

test('orphan: kubectl --cascade=orphan leaves the dependents, without the reference', async () => {
  const owner = await cm('owner2');
  await cm('dep2', [{ name: 'owner2', uid: owner.metadata.uid }]);
  const r = c.kubectl(['delete', 'configmap', 'owner2', '-n', NS, '--cascade=orphan']);
  assert.equal(r.code, 0, r.stderr);
  await gone(`${CMS}/owner2`);
  const dep = await until('dep2 without its owner reference', async () => {
    const d = (await c.raw('GET', `${CMS}/dep2`)).json();
    return d.metadata?.ownerReferences === undefined ? d : undefined;
  });
  assert.equal(dep.metadata.name, 'dep2');
});

test('foreground: the owner stays, deleting, until its blocking dependents are gone', async () => {
  const owner = await cm('owner3');
  await cm('dep3', [{ name: 'owner3', uid: owner.metadata.uid, blockOwnerDeletion: true }]);
  const del = await c.raw('DELETE', `${CMS}/owner3`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' } });
  assert.equal(del.status, 200, del.text);
  assert.ok(del.json().metadata.finalizers.includes('foregroundDeletion'), del.text);
  await gone(`${CMS}/dep3`);
  await gone(`${CMS}/owner3`);
  // kubectl's foreground cascade waits for the same
  const o4 = await cm('owner4');
  await cm('dep4', [{ name: 'owner4', uid: o4.metadata.uid, blockOwnerDeletion: true }]);
  const r = await c.kubectlAsync(['delete', 'configmap', 'owner4', '-n', NS, '--cascade=foreground']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal((await c.raw('GET', `${CMS}/dep4`)).status, 404);
});

test('an object whose owner never existed goes; one with another owner only loses the reference', async () => {
  await cm('dangling', [{ name: 'nobody', uid: '00000000-0000-0000-0000-000000000001' }]);
  await gone(`${CMS}/dangling`);
  const alive = await cm('alive');
  await cm('two-owners', [
    { name: 'alive', uid: alive.metadata.uid },
    { name: 'nobody', uid: '00000000-0000-0000-0000-000000000002' },
  ]);
  const kept = await until('two-owners to keep one reference', async () => {
    const d = (await c.raw('GET', `${CMS}/two-owners`)).json();
    return d.metadata?.ownerReferences?.length === 1 ? d : undefined;
  });
  assert.equal(kept.metadata.ownerReferences[0].uid, alive.metadata.uid);
});

test('a custom resource owns a ConfigMap: deleting it deletes the ConfigMap', async () => {
  await createCRD(c, crdBody('gc.example.com', 'apps', 'App', [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }]));
  const base = `/apis/gc.example.com/v1/namespaces/${NS}/apps`;
  const app = await c.raw('POST', base, { body: { apiVersion: 'gc.example.com/v1', kind: 'App', metadata: { name: 'a1' } } });
  assert.equal(app.status, 201, app.text);
  await cm('app-config', [{ apiVersion: 'gc.example.com/v1', kind: 'App', name: 'a1', uid: app.json().metadata.uid }]);
  // (the owner exists: the ConfigMap stays)
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await c.raw('GET', `${CMS}/app-config`)).status, 200);
  assert.equal((await c.raw('DELETE', `${base}/a1`)).status, 200);
  await gone(`${CMS}/app-config`);
  // the CRD deleted: at its next discovery (30 s) the collector stops the resource's monitor
  assert.equal((await c.raw('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/apps.gc.example.com')).status, 200);
  await until('the monitor of apps.gc.example.com stopped', async () => c.logs.includes('"Garbage collector: the resource is no longer served; its monitor stops" resource="gc.example.com/apps"') || undefined, 45_000);
});

test('an owner in another namespace does not own; a cluster-scoped object naming a namespaced owner is never collected', async () => {
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gc-other' } } })).status, 201);
  const elsewhere = await c.raw('POST', '/api/v1/namespaces/gc-other/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'elsewhere' } } });
  assert.equal(elsewhere.status, 201);
  await cm('cross', [{ name: 'elsewhere', uid: elsewhere.json().metadata.uid }]);
  await gone(`${CMS}/cross`);
  const pc = await c.raw('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', {
    body: { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'gc-pc', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'nobody', uid: '00000000-0000-0000-0000-000000000003' }] }, value: 10 },
  });
  assert.equal(pc.status, 201, pc.text);
  // (the dangling namespaced one above went within this time)
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal((await c.raw('GET', '/apis/scheduling.k8s.io/v1/priorityclasses/gc-pc')).status, 200);
});
