// Generic ephemeral volumes end to end: the ephemeral volume controller (ephemeral-volume-controller,
// on by default) of the embedded controller manager makes the claim `<pod>-<volume>` from the
// volume's claim template, owned by the pod; a claim of that name the pod does not own is an
// event on the pod; the garbage collector deletes the claim with the pod (the PVC protection
// controller lets it go: the pod is gone). With --enable-hostpath-provisioner and a StorageClass of
// kubernetes.io/host-path (Immediate) the claim is provisioned and bound as any other. No node
// runs here: the pods stay unscheduled.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { startCluster, until, type Cluster } from './harness.js';

let c: Cluster;
const NS = 'eph';
const PVCS = `/api/v1/namespaces/${NS}/persistentvolumeclaims`;
const PODS = `/api/v1/namespaces/${NS}/pods`;
const dirs: string[] = [];

before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory', '--enable-hostpath-provisioner', '--pvclaimbinder-sync-period=1s'] });
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
  const sc = { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'eph-hostpath' }, provisioner: 'kubernetes.io/host-path', reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' };
  assert.equal((await c.raw('POST', '/apis/storage.k8s.io/v1/storageclasses', { body: sc })).status, 201);
});
after(async () => {
  await c?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function ephemeralPod(name: string): any {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      containers: [{ name: 'c', image: 'busybox', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{
        name: 'data',
        ephemeral: {
          volumeClaimTemplate: {
            metadata: { labels: { app: name, tier: 'cache' }, annotations: { 'example.com/note': 'scratch' } },
            spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'eph-hostpath', resources: { requests: { storage: '2Mi' } } },
          },
        },
      }],
    },
  };
}

async function getPVC(name: string): Promise<any | undefined> {
  const r = await c.raw('GET', `${PVCS}/${name}`);
  return r.status === 200 ? r.json() : undefined;
}

test('a pod\'s ephemeral volume gets its claim <pod>-<volume> from the template, owned by the pod, provisioned and bound; deleting the pod deletes it', async () => {
  const r = await c.raw('POST', PODS, { body: ephemeralPod('web') });
  assert.equal(r.status, 201, r.text);
  const pod = r.json();
  const claim = await until('claim web-data bound', async () => {
    const pvc = await getPVC('web-data');
    return pvc?.status?.phase === 'Bound' ? pvc : undefined;
  }, 10_000);
  assert.deepEqual(claim.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: pod.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  assert.deepEqual(claim.metadata.labels, { app: 'web', tier: 'cache' });
  assert.equal(claim.metadata.annotations['example.com/note'], 'scratch');
  assert.deepEqual(claim.spec.accessModes, ['ReadWriteOnce']);
  assert.equal(claim.spec.storageClassName, 'eph-hostpath');
  assert.deepEqual(claim.spec.resources, { requests: { storage: '2Mi' } });
  assert.equal(claim.spec.volumeName, `pvc-${claim.metadata.uid}`);
  const pv = (await c.raw('GET', `/api/v1/persistentvolumes/${claim.spec.volumeName}`)).json();
  dirs.push(pv.spec.hostPath.path);

  // the garbage collector deletes the claim with its pod; the binder then the provisioned volume
  assert.equal((await c.raw('DELETE', `${PODS}/web`)).status, 200);
  await until('claim web-data deleted', async () => (await getPVC('web-data')) === undefined, 10_000);
  await until(`${pv.metadata.name} deleted`, async () => (await c.raw('GET', `/api/v1/persistentvolumes/${pv.metadata.name}`)).status === 404, 10_000);
});

test('a claim of the name that the pod does not own: a FailedBinding event on the pod, and no claim made', async () => {
  const foreign = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'other-data' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'eph-none', resources: { requests: { storage: '1Mi' } } } };
  assert.equal((await c.raw('POST', PVCS, { body: foreign })).status, 201);
  assert.equal((await c.raw('POST', PODS, { body: ephemeralPod('other') })).status, 201);
  const ev = await until('FailedBinding event', async () => {
    const r = await c.raw('GET', `/api/v1/namespaces/${NS}/events?fieldSelector=${encodeURIComponent('involvedObject.name=other,reason=FailedBinding')}`);
    return r.json().items?.[0];
  }, 10_000);
  assert.equal(ev.type, 'Warning');
  assert.equal(ev.involvedObject.kind, 'Pod');
  assert.equal(ev.source.component, 'ephemeral_volume');
  assert.equal(ev.message, `ephemeral volume data: PVC ${NS}/other-data was not created for pod ${NS}/other (pod is not owner)`);
  const claim = await getPVC('other-data');
  assert.equal(claim.metadata.ownerReferences, undefined);
  assert.equal(claim.spec.storageClassName, 'eph-none');
  const names = (await c.raw('GET', PVCS)).json().items.map((p: any) => p.metadata.name);
  assert.deepEqual(names, ['other-data']);
});
