// The scheduler's VolumeBinding plugin against a real keelson: Nodes made by hand (as in
// scheduler.test.ts: Ready through nodes/status, the not-ready taint removed), the scheduler
// started in this process through startEmbeddedScheduler with system:kube-scheduler's certificate,
// and no PV binder (--controllers=...,-persistentvolume-binder-controller): the tests bind claims
// by hand as the PV controller does (spec.volumeName and pv.kubernetes.io/bind-completed on the
// claim, spec.claimRef on the volume, the phases through the status subresources).
// Cases: a claim that does not exist (Kubernetes' PreFilter message in the FailedScheduling event,
// the PodScheduled condition and kubectl describe), then created unbound in Immediate mode
// (`pod has unbound immediate PersistentVolumeClaims`); a claim bound to a local PV with a zone
// node affinity: the pod lands in that zone, and a pod held to the other zone gets `node(s) had
// volume node affinity conflict`; a PV naming its node by kubernetes.io/hostname narrows the nodes
// in PreFilter (`didn't satisfy plugin(s) [VolumeBinding]`); WaitForFirstConsumer with a
// provisioner: the claim gets volume.kubernetes.io/selected-node and the pod waits, unbound, until
// the claim is bound; WaitForFirstConsumer without a provisioner: no PV (`node(s) didn't find
// available persistent volumes to bind`), then an Available PV in one zone: the scheduler writes
// its claimRef and the pod binds to that zone once the claim is bound; a provisioner giving up
// (the annotation removed) fails PreBind (`running PreBind plugin "VolumeBinding": binding volumes:
// selectedNode annotation reset for PVC ...`, SchedulerError) and the pod is tried again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, until, type Cluster, readyNode } from './harness.js';
import { startTestScheduler } from './testscheduler.js';

let c: Cluster;
let sched: { stop(): Promise<void> } | undefined;
const K = '1.32';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const ZONE = 'topology.kubernetes.io/zone';
const NODES: [string, string][] = [
  ['vol-a', 'z1'],
  ['vol-b', 'z2'],
  ['vol-c', 'z2'],
];
const NOT_HELPFUL = 'preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.';

before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory', '--controllers=*,-node-lifecycle-controller,-persistentvolume-binder-controller'] });
  for (const [name, zone] of NODES) await readyNode(c, name, { labels: { [ZONE]: zone } });
  sched = await startTestScheduler(c);
});

after(async () => {
  await sched?.stop();
  await c?.stop();
});

async function create(path: string, body: any): Promise<any> {
  const r = await c.raw('POST', path, { body });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

async function get(path: string): Promise<any> {
  const r = await c.raw('GET', path);
  assert.equal(r.status, 200, r.text);
  return r.json();
}

async function patch(path: string, body: any): Promise<any> {
  const r = await c.raw('PATCH', path, { body: JSON.stringify(body), headers: MERGE });
  assert.equal(r.status, 200, r.text);
  return r.json();
}

const pod = (name: string, claim: string, nodeSelector?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: {
    ...(nodeSelector ? { nodeSelector } : {}),
    containers: [{ name: 'c', image: 'busybox', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }],
  },
});

const claim = (name: string, o: { storageClassName?: string; volumeName?: string } = {}) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: o.storageClassName ?? '', ...(o.volumeName ? { volumeName: o.volumeName } : {}) },
});

const volume = (name: string, o: { storageClassName?: string; zone?: string; hostname?: string; claimRef?: any }) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name },
  spec: {
    capacity: { storage: '2Gi' },
    accessModes: ['ReadWriteOnce'],
    persistentVolumeReclaimPolicy: 'Retain',
    storageClassName: o.storageClassName ?? '',
    local: { path: '/mnt/disks/' + name },
    nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: o.hostname ? [{ key: 'kubernetes.io/hostname', operator: 'In', values: [o.hostname] }] : [{ key: ZONE, operator: 'In', values: [o.zone!] }] }] } },
    ...(o.claimRef ? { claimRef: o.claimRef } : {}),
  },
});

/** what the PV controller does once a claim and a volume are to be bound: both ways, then the phases */
async function bindByHand(pvcName: string, pvName: string): Promise<void> {
  const pvc = await get(`/api/v1/namespaces/default/persistentvolumeclaims/${pvcName}`);
  const pv = await get(`/api/v1/persistentvolumes/${pvName}`);
  if (!pv.spec.claimRef?.uid) await patch(`/api/v1/persistentvolumes/${pvName}`, { spec: { claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name: pvcName, uid: pvc.metadata.uid } } });
  await patch(`/api/v1/persistentvolumes/${pvName}/status`, { status: { phase: 'Bound' } });
  await patch(`/api/v1/namespaces/default/persistentvolumeclaims/${pvcName}`, { metadata: { annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } }, spec: { volumeName: pvName } });
  await patch(`/api/v1/namespaces/default/persistentvolumeclaims/${pvcName}/status`, { status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '2Gi' } } });
}

function events(name: string): any[] {
  const r = c.kubectl(['get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'json'], { version: K });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).items;
}

/** the FailedScheduling event whose message matches */
const failedScheduling = (name: string, re: RegExp) =>
  until(`FailedScheduling ${re} for ${name}`, () => events(name).find((e) => e.reason === 'FailedScheduling' && re.test(e.message))?.message as string | undefined, 15_000);

const boundTo = (name: string) => until(`${name} bound`, async () => (await get(`/api/v1/namespaces/default/pods/${name}`)).spec.nodeName as string | undefined, 15_000);

test('a missing claim, then an unbound Immediate one: PreFilter rejects the pod with Kubernetes words', async () => {
  await create('/api/v1/namespaces/default/pods', pod('pv-missing', 'nope'));
  const msg = `0/3 nodes are available: persistentvolumeclaim "nope" not found. ${NOT_HELPFUL}`;
  assert.equal(await failedScheduling('pv-missing', /not found/), msg);
  const p = await get('/api/v1/namespaces/default/pods/pv-missing');
  const cond = p.status.conditions.find((x: any) => x.type === 'PodScheduled');
  assert.deepEqual([cond.status, cond.reason, cond.message], ['False', 'Unschedulable', msg]);
  const d = c.kubectl(['describe', 'pod', 'pv-missing'], { version: K });
  assert.equal(d.code, 0, d.stderr);
  assert.match(d.stdout, /Warning\s+FailedScheduling\s.*persistentvolumeclaim "nope" not found/);
  // the claim comes (no class, so Immediate) but nothing binds it: the pod is tried again at once
  await create('/api/v1/namespaces/default/persistentvolumeclaims', claim('nope'));
  assert.equal(await failedScheduling('pv-missing', /unbound immediate/), `0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. ${NOT_HELPFUL}`);
  assert.equal((await get('/api/v1/namespaces/default/pods/pv-missing')).spec.nodeName, undefined);
});

test('a claim bound to a local PV: the PV node affinity chooses the nodes', async () => {
  await create('/api/v1/persistentvolumes', volume('local-z1', { zone: 'z1' }));
  await create('/api/v1/namespaces/default/persistentvolumeclaims', claim('local-z1', { volumeName: 'local-z1' }));
  await bindByHand('local-z1', 'local-z1');
  await create('/api/v1/namespaces/default/pods', pod('pv-local', 'local-z1'));
  assert.equal(await boundTo('pv-local'), 'vol-a');
  await create('/api/v1/namespaces/default/pods', pod('pv-local-z2', 'local-z1', { [ZONE]: 'z2' }));
  assert.equal(
    await failedScheduling('pv-local-z2', /volume node affinity/),
    `0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 node(s) had volume node affinity conflict. ${NOT_HELPFUL}`,
  );
  // a PV that names its node by hostname narrows the nodes before the filters (GetEligibleNodes)
  await create('/api/v1/persistentvolumes', volume('local-b', { hostname: 'vol-b' }));
  await create('/api/v1/namespaces/default/persistentvolumeclaims', claim('local-b', { volumeName: 'local-b' }));
  await bindByHand('local-b', 'local-b');
  await create('/api/v1/namespaces/default/pods', pod('pv-host-z1', 'local-b', { [ZONE]: 'z1' }));
  assert.equal(
    await failedScheduling('pv-host-z1', /VolumeBinding/),
    `0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 node(s) didn't satisfy plugin(s) [VolumeBinding]. ${NOT_HELPFUL}`,
  );
});

test('WaitForFirstConsumer with a provisioner: the claim gets the selected node, the pod waits for its binding', async () => {
  await create('/apis/storage.k8s.io/v1/storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'wffc' }, provisioner: 'example.com/fake', volumeBindingMode: 'WaitForFirstConsumer' });
  await create('/api/v1/namespaces/default/persistentvolumeclaims', claim('wait-claim', { storageClassName: 'wffc' }));
  await create('/api/v1/namespaces/default/pods', pod('pv-wffc', 'wait-claim', { [ZONE]: 'z2' }));
  const node = await until('the selected node', async () => (await get('/api/v1/namespaces/default/persistentvolumeclaims/wait-claim')).metadata.annotations?.['volume.kubernetes.io/selected-node'] as string | undefined, 15_000);
  assert.ok(node === 'vol-b' || node === 'vol-c', node);
  // the scheduler waits in PreBind: the pod is not bound while the claim is not
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal((await get('/api/v1/namespaces/default/pods/pv-wffc')).spec.nodeName, undefined);
  // "the provisioner" makes a volume on that node, and "the PV controller" binds it
  await create('/api/v1/persistentvolumes', volume('wait-pv', { storageClassName: 'wffc', hostname: node, claimRef: undefined }));
  await bindByHand('wait-claim', 'wait-pv');
  assert.equal(await boundTo('pv-wffc'), node);
  assert.ok(events('pv-wffc').some((e) => e.reason === 'Scheduled' && e.message === `Successfully assigned default/pv-wffc to ${node}`));
});

test('WaitForFirstConsumer without a provisioner: an Available PV in one zone, bound by the scheduler', async () => {
  await create('/apis/storage.k8s.io/v1/storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'local-wffc' }, provisioner: 'kubernetes.io/no-provisioner', volumeBindingMode: 'WaitForFirstConsumer' });
  await create('/api/v1/namespaces/default/persistentvolumeclaims', claim('static-claim', { storageClassName: 'local-wffc' }));
  await create('/api/v1/namespaces/default/pods', pod('pv-static', 'static-claim'));
  assert.equal(await failedScheduling('pv-static', /available persistent volumes/), `0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind. ${NOT_HELPFUL}`);
  // a volume of the class appears in z1 (Available, as the PV controller would make it): the pod moves
  await create('/api/v1/persistentvolumes', volume('static-pv', { storageClassName: 'local-wffc', zone: 'z1' }));
  await patch('/api/v1/persistentvolumes/static-pv/status', { status: { phase: 'Available' } });
  const pv = await until('the claimRef the scheduler writes', async () => {
    const v = await get('/api/v1/persistentvolumes/static-pv');
    return v.spec.claimRef?.name === 'static-claim' ? v : undefined;
  }, 15_000);
  assert.equal(pv.metadata.annotations['pv.kubernetes.io/bound-by-controller'], 'yes');
  assert.equal((await get('/api/v1/namespaces/default/pods/pv-static')).spec.nodeName, undefined);
  await bindByHand('static-claim', 'static-pv');
  assert.equal(await boundTo('pv-static'), 'vol-a');
});

test('a provisioner that gives up (the selected-node annotation removed) fails PreBind: FailedScheduling SchedulerError, then a new attempt selects a node again', async () => {
  await create('/apis/storage.k8s.io/v1/storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'wffc-flaky' }, provisioner: 'example.com/flaky', volumeBindingMode: 'WaitForFirstConsumer' });
  await create('/api/v1/namespaces/default/persistentvolumeclaims', claim('given-up', { storageClassName: 'wffc-flaky' }));
  await create('/api/v1/namespaces/default/pods', pod('pv-given-up', 'given-up'));
  const path = '/api/v1/namespaces/default/persistentvolumeclaims/given-up';
  await until('the selected node', async () => (await get(path)).metadata.annotations?.['volume.kubernetes.io/selected-node'], 15_000);
  await patch(path, { metadata: { annotations: { 'volume.kubernetes.io/selected-node': null } } });
  const msg = await failedScheduling('pv-given-up', /PreBind/);
  // (its only annotation gone, the claim has none: checkBindings' first words for it)
  assert.equal(msg, 'running PreBind plugin "VolumeBinding": binding volumes: selectedNode annotation reset for PVC "given-up"');
  const cond = (await get('/api/v1/namespaces/default/pods/pv-given-up')).status.conditions.find((x: any) => x.type === 'PodScheduled');
  assert.deepEqual([cond.status, cond.reason], ['False', 'SchedulerError']);
  await until('a node selected again', async () => (await get(path)).metadata.annotations?.['volume.kubernetes.io/selected-node'], 15_000);
});
