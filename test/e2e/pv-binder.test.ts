// The PersistentVolume binder (persistentvolume-binder-controller) of the embedded controller
// manager against a real keelson, with --enable-hostpath-provisioner and a 1 s
// --pvclaimbinder-sync-period. Each test uses storage classes of its own, so that the volumes of
// one test are no candidates for the claims of another.
//
// Claims and volumes are deleted after a JSON merge patch that takes the protection finalizers
// (kubernetes.io/pvc-protection, kubernetes.io/pv-protection) off, so that these tests depend on
// the binder only, not on the protection controllers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startCluster, until, type Cluster } from './harness.js';

let c: Cluster;
const NS = 'pvb';
const PVS = '/api/v1/persistentvolumes';
const PVCS = `/api/v1/namespaces/${NS}/persistentvolumeclaims`;
const SCS = '/apis/storage.k8s.io/v1/storageclasses';
const MERGE = { 'content-type': 'application/merge-patch+json' };
/** directories this file made or saw made (removed in after(), whatever happened) */
const dirs: string[] = [];

before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory', '--enable-hostpath-provisioner', '--pvclaimbinder-sync-period=1s'] });
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
});
after(async () => {
  await c?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  // (the provisioner's base directory, when nothing else is left in it)
  try {
    rmdirSync('/tmp/hostpath_pv');
  } catch {
    // not empty, or gone
  }
});

function pv(name: string, size: string, spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): any {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, ...meta },
    spec: { capacity: { storage: size }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', hostPath: { path: `/tmp/keelson-pv-unused/${name}` }, ...spec },
  };
}

function pvc(name: string, size: string, spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): any {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, ...meta },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } }, ...spec },
  };
}

async function create(path: string, body: any): Promise<any> {
  const r = await c.raw('POST', path, { body });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

async function getPV(name: string): Promise<any | undefined> {
  const r = await c.raw('GET', `${PVS}/${name}`);
  return r.status === 200 ? r.json() : undefined;
}

async function getPVC(name: string): Promise<any> {
  return (await c.raw('GET', `${PVCS}/${name}`)).json();
}

async function boundClaim(name: string): Promise<any> {
  return until(`claim ${name} Bound`, async () => {
    const p = await getPVC(name);
    return p.status?.phase === 'Bound' ? p : undefined;
  }, 15_000);
}

async function eventOf(name: string, reason: string): Promise<any> {
  return until(`event ${reason} of ${name}`, async () => {
    const items = (await c.raw('GET', `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name%3D${name}`)).json().items as any[];
    return items.find((e) => e.reason === reason);
  }, 15_000);
}

/** takes the protection finalizers off, then deletes */
async function deleteClaim(name: string): Promise<void> {
  assert.equal((await c.raw('PATCH', `${PVCS}/${name}`, { body: JSON.stringify({ metadata: { finalizers: null } }), headers: MERGE })).status, 200);
  const r = await c.raw('DELETE', `${PVCS}/${name}`);
  assert.ok(r.status === 200 || r.status === 404, r.text);
}

/** the volume without kubernetes.io/pv-protection (its other finalizers stay) */
async function unprotectPV(name: string): Promise<void> {
  const v = await getPV(name);
  const fins = (v.metadata.finalizers ?? []).filter((f: string) => f !== 'kubernetes.io/pv-protection');
  const r = await c.raw('PATCH', `${PVS}/${name}`, { body: JSON.stringify({ metadata: { finalizers: fins.length ? fins : null } }), headers: MERGE });
  assert.equal(r.status, 200, r.text);
}

test('a claim binds to the smallest matching volume: both sides annotated, phases Bound, the claim given the capacity and access modes; kubectl shows CLAIM and VOLUME', async () => {
  // too small, the wrong access modes, the wrong volume mode, labels the selector refuses, and three
  // that fit: the one with more access modes than asked for is not taken though smaller, as
  // Kubernetes' index searches the volumes with the fewest access modes first
  await create(PVS, pv('pvb-small', '500Mi', { storageClassName: '' }));
  await create(PVS, pv('pvb-rwx', '1Gi', { storageClassName: '', accessModes: ['ReadWriteMany'] }));
  await create(PVS, pv('pvb-block', '1Gi', { storageClassName: '', volumeMode: 'Block' }));
  await create(PVS, pv('pvb-other', '1Gi', { storageClassName: '' }, { labels: { tier: 'other' } }));
  await create(PVS, pv('pvb-rox', '1Gi', { storageClassName: '', accessModes: ['ReadWriteOnce', 'ReadOnlyMany'] }, { labels: { tier: 'fast' } }));
  await create(PVS, pv('pvb-2g', '2Gi', { storageClassName: '' }, { labels: { tier: 'fast' } }));
  await create(PVS, pv('pvb-10g', '10Gi', { storageClassName: '' }, { labels: { tier: 'fast' } }));
  await until('the volumes Available', async () => (await getPV('pvb-10g'))?.status?.phase === 'Available' && (await getPV('pvb-2g'))?.status?.phase === 'Available');
  await create(PVCS, pvc('data', '1Gi', { storageClassName: '', selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['fast'] }] } }));
  const claim = await boundClaim('data');
  assert.equal(claim.spec.volumeName, 'pvb-2g');
  assert.equal(claim.metadata.annotations['pv.kubernetes.io/bind-completed'], 'yes');
  assert.equal(claim.metadata.annotations['pv.kubernetes.io/bound-by-controller'], 'yes');
  assert.deepEqual(claim.status.capacity, { storage: '2Gi' });
  assert.deepEqual(claim.status.accessModes, ['ReadWriteOnce']);
  const vol = await until('pvb-2g Bound', async () => {
    const v = await getPV('pvb-2g');
    return v?.status?.phase === 'Bound' ? v : undefined;
  });
  assert.deepEqual(vol.spec.claimRef, { kind: 'PersistentVolumeClaim', namespace: NS, name: 'data', uid: claim.metadata.uid, apiVersion: 'v1', resourceVersion: vol.spec.claimRef.resourceVersion });
  assert.equal(vol.metadata.annotations['pv.kubernetes.io/bound-by-controller'], 'yes');
  for (const other of ['pvb-small', 'pvb-rwx', 'pvb-block', 'pvb-other', 'pvb-rox', 'pvb-10g']) assert.equal((await getPV(other)).status.phase, 'Available', other);

  const k = c.kubectl(['get', 'pv,pvc', '-n', NS]);
  assert.equal(k.code, 0, k.stderr);
  const pvLine = k.stdout.split('\n').find((l) => l.startsWith('persistentvolume/pvb-2g '));
  assert.ok(pvLine, k.stdout);
  assert.match(pvLine, /^persistentvolume\/pvb-2g\s+2Gi\s+RWO\s+Retain\s+Bound\s+pvb\/data\s+/);
  const pvcLine = k.stdout.split('\n').find((l) => l.startsWith('persistentvolumeclaim/data '));
  assert.ok(pvcLine, k.stdout);
  assert.match(pvcLine, /^persistentvolumeclaim\/data\s+Bound\s+pvb-2g\s+2Gi\s+RWO\s+/);
});

test('a claim no volume matches stays Pending with FailedBinding; a class mismatch binds nothing, a claim naming a volume of another class gets VolumeMismatch', async () => {
  await create(PVCS, pvc('huge', '100Gi', { storageClassName: '' }));
  const ev = await eventOf('huge', 'FailedBinding');
  assert.equal(ev.type, 'Normal');
  assert.equal(ev.message, 'no persistent volumes available for this claim and no storage class is set');
  assert.equal(ev.source.component, 'persistentvolume-controller');
  assert.equal((await getPVC('huge')).status.phase, 'Pending');

  await create(PVS, pv('pvb-gold', '5Gi', { storageClassName: 'gold' }));
  await until('pvb-gold Available', async () => (await getPV('pvb-gold'))?.status?.phase === 'Available');
  await create(PVCS, pvc('silver', '1Gi', { storageClassName: 'silver' }));
  // (a class with no StorageClass object: the binder cannot provision)
  const failed = await eventOf('silver', 'ProvisioningFailed');
  assert.equal(failed.message, 'storageclass.storage.k8s.io "silver" not found');
  await create(PVCS, pvc('named', '1Gi', { storageClassName: 'silver', volumeName: 'pvb-gold' }));
  const mismatch = await eventOf('named', 'VolumeMismatch');
  assert.equal(mismatch.type, 'Warning');
  assert.equal(mismatch.message, 'Cannot bind to requested volume "pvb-gold": storageClassName does not match');
  await new Promise((r) => setTimeout(r, 1500)); // (a resync has passed)
  assert.equal((await getPVC('silver')).status.phase, 'Pending');
  assert.equal((await getPVC('named')).status.phase, 'Pending');
  assert.equal((await getPV('pvb-gold')).status.phase, 'Available');
  assert.equal((await getPV('pvb-gold')).spec.claimRef, undefined);
});

test('a volume pre-bound by claimRef goes to its claim (over a smaller one); a claim pre-bound by volumeName gets its volume', async () => {
  await create(PVS, pv('pvb-pre-small', '1Gi', { storageClassName: 'pre' }));
  await create(PVS, pv('pvb-pre-big', '8Gi', { storageClassName: 'pre', claimRef: { namespace: NS, name: 'wanted' } }));
  await until('the pre-bound volume Available', async () => (await getPV('pvb-pre-big'))?.status?.phase === 'Available');
  await create(PVCS, pvc('wanted', '1Gi', { storageClassName: 'pre' }));
  const claim = await boundClaim('wanted');
  assert.equal(claim.spec.volumeName, 'pvb-pre-big');
  const big = await until('pvb-pre-big Bound', async () => {
    const v = await getPV('pvb-pre-big');
    return v?.status?.phase === 'Bound' ? v : undefined;
  });
  assert.equal(big.spec.claimRef.uid, claim.metadata.uid);
  // (the user bound the volume: no bound-by-controller on it; the controller set the claim's volumeName)
  assert.equal(big.metadata.annotations?.['pv.kubernetes.io/bound-by-controller'], undefined);
  assert.equal(claim.metadata.annotations['pv.kubernetes.io/bound-by-controller'], 'yes');

  await create(PVCS, pvc('byname', '1Gi', { storageClassName: 'pre', volumeName: 'pvb-pre-small' }));
  const named = await boundClaim('byname');
  assert.equal(named.spec.volumeName, 'pvb-pre-small');
  assert.equal(named.metadata.annotations['pv.kubernetes.io/bound-by-controller'], undefined);
  assert.equal(named.metadata.annotations['pv.kubernetes.io/bind-completed'], 'yes');
  const small = await getPV('pvb-pre-small');
  assert.equal(small.spec.claimRef.name, 'byname');
  assert.equal(small.metadata.annotations['pv.kubernetes.io/bound-by-controller'], 'yes');
});

test('reclaim: Retain leaves a Released volume with its claimRef; Delete removes a /tmp hostPath volume\'s directory and the PV', async () => {
  await create(PVS, pv('pvb-retain', '1Gi', { storageClassName: 'ret' }));
  await create(PVCS, pvc('keep', '1Gi', { storageClassName: 'ret' }));
  const kept = await boundClaim('keep');
  await deleteClaim('keep');
  const released = await until('pvb-retain Released', async () => {
    const v = await getPV('pvb-retain');
    return v?.status?.phase === 'Released' ? v : undefined;
  });
  assert.equal(released.spec.claimRef.uid, kept.metadata.uid);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal((await getPV('pvb-retain')).status.phase, 'Released');

  const dir = mkdtempSync('/tmp/keelson-pvb-');
  dirs.push(dir);
  writeFileSync(join(dir, 'data'), 'x');
  await create(PVS, pv('pvb-delete', '1Gi', { storageClassName: 'del', persistentVolumeReclaimPolicy: 'Delete', hostPath: { path: dir } }));
  await create(PVCS, pvc('scratch', '1Gi', { storageClassName: 'del' }));
  await boundClaim('scratch');
  await unprotectPV('pvb-delete');
  await deleteClaim('scratch');
  await until('pvb-delete deleted', async () => (await getPV('pvb-delete')) === undefined, 15_000);
  assert.equal(existsSync(dir), false);
});

test('reclaim: a Delete volume outside /tmp fails with VolumeFailedDelete; Recycle fails with VolumeFailedRecycle (no recycler)', async () => {
  await create(PVS, pv('pvb-nodelete', '1Gi', { storageClassName: 'nodel', persistentVolumeReclaimPolicy: 'Delete', hostPath: { path: '/var/keelson-pvb-none' } }));
  await create(PVCS, pvc('nodel', '1Gi', { storageClassName: 'nodel' }));
  await boundClaim('nodel');
  await deleteClaim('nodel');
  const failed = await until('pvb-nodelete Failed', async () => {
    const v = await getPV('pvb-nodelete');
    return v?.status?.phase === 'Failed' ? v : undefined;
  });
  assert.equal(failed.status.message, 'host_path deleter only supports /tmp/.+ but received provided /var/keelson-pvb-none');
  const ev = (await c.raw('GET', `/api/v1/events?fieldSelector=involvedObject.name%3Dpvb-nodelete`)).json().items.find((e: any) => e.reason === 'VolumeFailedDelete');
  assert.ok(ev, 'VolumeFailedDelete event');
  assert.equal(ev.type, 'Warning');

  await create(PVS, pv('pvb-recycle', '1Gi', { storageClassName: 'rec', persistentVolumeReclaimPolicy: 'Recycle' }));
  await create(PVCS, pvc('rec', '1Gi', { storageClassName: 'rec' }));
  await boundClaim('rec');
  await deleteClaim('rec');
  const rec = await until('pvb-recycle Failed', async () => {
    const v = await getPV('pvb-recycle');
    return v?.status?.phase === 'Failed' ? v : undefined;
  });
  assert.equal(rec.status.message, 'No recycler plugin found for the volume!');
});

test('hostpath provisioning: a StorageClass of kubernetes.io/host-path gets a PV pvc-<uid> on /tmp/hostpath_pv/<uuid>, bound; deleting the claim deletes PV and directory', async () => {
  await create(SCS, { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'pvb-hostpath' }, provisioner: 'kubernetes.io/host-path' });
  const made = await create(PVCS, pvc('dyn', '3Mi', { storageClassName: 'pvb-hostpath' }));
  const claim = await boundClaim('dyn');
  const name = `pvc-${made.metadata.uid}`;
  assert.equal(claim.spec.volumeName, name);
  assert.equal(claim.metadata.annotations['volume.kubernetes.io/storage-provisioner'], 'kubernetes.io/host-path');
  assert.equal(claim.metadata.annotations['volume.beta.kubernetes.io/storage-provisioner'], 'kubernetes.io/host-path');
  assert.deepEqual(claim.status.capacity, { storage: '3Mi' });
  const vol = await getPV(name);
  dirs.push(vol.spec.hostPath.path);
  assert.match(vol.spec.hostPath.path, /^\/tmp\/hostpath_pv\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.equal(existsSync(vol.spec.hostPath.path), true);
  assert.equal(vol.metadata.annotations['pv.kubernetes.io/provisioned-by'], 'kubernetes.io/host-path');
  assert.equal(vol.metadata.annotations['pv.kubernetes.io/bound-by-controller'], 'yes');
  assert.equal(vol.metadata.annotations['kubernetes.io/createdby'], 'hostpath-dynamic-provisioner');
  assert.ok(vol.metadata.finalizers.includes('kubernetes.io/pv-controller'), JSON.stringify(vol.metadata.finalizers));
  assert.equal(vol.spec.persistentVolumeReclaimPolicy, 'Delete');
  assert.equal(vol.spec.storageClassName, 'pvb-hostpath');
  assert.equal(vol.spec.claimRef.uid, made.metadata.uid);
  const ok = await eventOf('dyn', 'ProvisioningSucceeded');
  assert.equal(ok.message, `Successfully provisioned volume ${name} using kubernetes.io/host-path`);

  await unprotectPV(name);
  await deleteClaim('dyn');
  await until(`${name} deleted`, async () => (await getPV(name)) === undefined, 15_000);
  assert.equal(existsSync(vol.spec.hostPath.path), false);
});

test('an external provisioner\'s claim is only annotated (ExternalProvisioning) and left Pending', async () => {
  await create(SCS, { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'pvb-local-path' }, provisioner: 'rancher.io/local-path' });
  await create(PVCS, pvc('ext', '1Gi', { storageClassName: 'pvb-local-path' }));
  const ev = await eventOf('ext', 'ExternalProvisioning');
  assert.equal(ev.message, "Waiting for a volume to be created either by the external provisioner 'rancher.io/local-path' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.");
  const claim = await getPVC('ext');
  assert.equal(claim.metadata.annotations['volume.kubernetes.io/storage-provisioner'], 'rancher.io/local-path');
  assert.equal(claim.metadata.annotations['volume.beta.kubernetes.io/storage-provisioner'], 'rancher.io/local-path');
  assert.equal(claim.status.phase, 'Pending');
  assert.equal(claim.spec.volumeName, undefined);
});

test('WaitForFirstConsumer: the claim waits (even with a matching volume) until volume.kubernetes.io/selected-node is set, then is provisioned and bound', async () => {
  await create(SCS, { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'pvb-wffc' }, provisioner: 'kubernetes.io/host-path', volumeBindingMode: 'WaitForFirstConsumer' });
  await create(PVS, pv('pvb-wffc-static', '1Gi', { storageClassName: 'pvb-wffc' }));
  await create(PVCS, pvc('late', '1Gi', { storageClassName: 'pvb-wffc' }));
  const ev = await eventOf('late', 'WaitForFirstConsumer');
  assert.equal(ev.message, 'waiting for first consumer to be created before binding');
  await new Promise((r) => setTimeout(r, 1500));
  const waiting = await getPVC('late');
  assert.equal(waiting.status.phase, 'Pending');
  assert.equal(waiting.spec.volumeName, undefined);
  assert.equal((await getPV('pvb-wffc-static')).status.phase, 'Available');

  const r = await c.raw('PATCH', `${PVCS}/late`, { body: JSON.stringify({ metadata: { annotations: { 'volume.kubernetes.io/selected-node': 'node-1' } } }), headers: MERGE });
  assert.equal(r.status, 200, r.text);
  const claim = await boundClaim('late');
  assert.equal(claim.spec.volumeName, `pvc-${claim.metadata.uid}`);
  const vol = await getPV(claim.spec.volumeName);
  dirs.push(vol.spec.hostPath.path);
  assert.equal(vol.status.phase, 'Bound');
  await unprotectPV(vol.metadata.name);
  await deleteClaim('late');
  await until('the provisioned volume deleted', async () => (await getPV(vol.metadata.name)) === undefined, 15_000);
  assert.equal(existsSync(vol.spec.hostPath.path), false);
});


test('--enable-dynamic-provisioning=false: the binder still binds static volumes but provisions nothing, not even by annotation for an external provisioner', async () => {
  const off = await startCluster({ args: ['--storage-backend=memory', '--enable-hostpath-provisioner', '--enable-dynamic-provisioning=false', '--pvclaimbinder-sync-period=1s'] });
  try {
    const post = async (path: string, body: any) => {
      const r = await off.raw('POST', path, { body });
      assert.equal(r.status, 201, r.text);
    };
    await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await post(SCS, { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'off-hostpath' }, provisioner: 'kubernetes.io/host-path' });
    await post(SCS, { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'off-external' }, provisioner: 'rancher.io/local-path' });
    await post(PVS, pv('off-static', '1Gi'));
    await post(PVCS, pvc('off-static', '1Gi'));
    await post(PVCS, pvc('off-dyn', '1Gi', { storageClassName: 'off-hostpath' }));
    await post(PVCS, pvc('off-ext', '1Gi', { storageClassName: 'off-external' }));
    await until('the static claim Bound', async () => (await off.raw('GET', `${PVCS}/off-static`)).json().status?.phase === 'Bound', 15_000);
    // (two resyncs of 1 s go by: still nothing provisioned)
    await new Promise((r) => setTimeout(r, 2500));
    for (const name of ['off-dyn', 'off-ext']) {
      const claim = (await off.raw('GET', `${PVCS}/${name}`)).json();
      assert.equal(claim.status.phase, 'Pending', name);
      assert.equal(claim.spec.volumeName, undefined, name);
      assert.equal(claim.metadata.annotations?.['volume.kubernetes.io/storage-provisioner'], undefined, name);
    }
    const pvs = (await off.raw('GET', PVS)).json().items.map((v: any) => v.metadata.name);
    assert.deepEqual(pvs, ['off-static']);
  } finally {
    await off.stop();
  }
});
