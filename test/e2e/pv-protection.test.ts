// The storage object in use protection controllers end to end: the API server gives every
// PersistentVolumeClaim the finalizer kubernetes.io/pvc-protection and every PersistentVolume
// kubernetes.io/pv-protection; persistentvolumeclaim-protection-controller and
// persistentvolume-protection-controller take them off once nothing uses the object, so that
// `kubectl delete` returns and namespaces holding claims finish deleting.
//
// The server's own manager runs persistentvolume-protection-controller (on by default) and has
// persistentvolumeclaim-protection-controller turned off with --controllers: a deleted claim
// stays Terminating. A `keelson controller-manager --use-service-account-credentials
// --controllers=pvc-protection` started later (the alias) takes over, as the service account
// kube-system/pvc-protection-controller with its bootstrap role.
//
// The pods name a node that does not exist (spec.nodeName: a scheduled pod, as Kubernetes
// requires for a pod to hold a claim) or none (schedulerName `manual`: no scheduler binds them);
// the pod garbage collector, which would delete pods of missing nodes after 40 s, and the volume
// binder, which owns the phase of volumes, are off.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { startCluster, until as untilWithin, freePort, defaultServiceAccount, stopProcess, KEELSON, ROOT, type Cluster, type RunResult } from './harness.js';

const until = <T>(what: string, f: () => Promise<T | undefined | false>): Promise<T> => untilWithin(what, f, 20_000);

const NS = 'pvp';
const PVCS = `/api/v1/namespaces/${NS}/persistentvolumeclaims`;
const PODS = `/api/v1/namespaces/${NS}/pods`;
const PVS = '/api/v1/persistentvolumes';
const PVC_FINALIZER = 'kubernetes.io/pvc-protection';
const PV_FINALIZER = 'kubernetes.io/pv-protection';

let c: Cluster;
const DOOMED = 'pvp-doomed';
let namespaceDeletion: Promise<RunResult> | undefined;
let cm: ChildProcess | undefined;
let cmLogs = '';

before(async () => {
  c = await startCluster({
    args: [
      '--storage-backend=memory',
      '--controllers=*,-pod-garbage-collector-controller,-persistentvolume-binder-controller,-persistentvolumeclaim-protection-controller',
    ],
  });
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
  // (the namespace controller looks again 8 s after it found content held by finalizers, as
  // Kubernetes' does: that deletion runs while the tests below do; it can only end once the
  // controller manager of the second test runs)
  namespaceDeletion = (await deleteNamespaceWithClaims()).done;
});

after(async () => {
  await stopProcess(cm);
  await c?.stop();
});

function kubectl(args: string[]): string {
  const r = c.kubectl(args, { timeoutMs: 30_000 });
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}\n${cmLogs}`);
  return r.stdout;
}

async function createPVC(name: string, ns = NS, extra: Record<string, unknown> = {}): Promise<any> {
  const body = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, ...extra }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
  const r = await c.raw('POST', `/api/v1/namespaces/${ns}/persistentvolumeclaims`, { body });
  assert.equal(r.status, 201, r.text);
  const pvc = r.json();
  assert.deepEqual(pvc.metadata.finalizers, [PVC_FINALIZER]);
  return pvc;
}

/** a pod using `volumes`; on node `pvp-node` (which does not exist) unless `scheduled` is false */
async function createPod(name: string, volumes: unknown[], scheduled = true, ns = NS): Promise<any> {
  const spec: Record<string, unknown> = { schedulerName: 'manual', containers: [{ name: 'c', image: 'busybox' }], volumes };
  if (scheduled) spec['nodeName'] = 'pvp-node';
  const r = await c.raw('POST', `/api/v1/namespaces/${ns}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec } });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

const claimVolume = (claimName: string) => ({ name: 'data', persistentVolumeClaim: { claimName } });

async function forceDeletePod(name: string): Promise<void> {
  const r = await c.raw('DELETE', `${PODS}/${name}`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 } });
  assert.equal(r.status, 200, r.text);
}

async function gone(path: string): Promise<true> {
  return until(`${path} gone`, async () => (await c.raw('GET', path)).status === 404);
}

let barriers = 0;
/**
 * A claim deleted after the others is gone: the controller (one worker, one queue in event order)
 * has judged every claim deleted before it.
 */
async function pvcBarrier(): Promise<void> {
  const name = `barrier-${barriers++}`;
  await createPVC(name);
  kubectl(['delete', 'pvc', name, '-n', NS, '--timeout=20s']);
}

/** the claim is Terminating and keeps its finalizer */
async function assertTerminating(path: string, finalizer: string): Promise<void> {
  const r = await c.raw('GET', path);
  assert.equal(r.status, 200, `${path} should still be there`);
  const o = r.json();
  assert.ok(o.metadata.deletionTimestamp, `${path} should be being deleted`);
  assert.deepEqual(o.metadata.finalizers, [finalizer]);
}

test('persistentvolume-protection-controller (on by default): an unbound volume goes at once, a Bound one waits until it is not Bound', async () => {
  const pv = (name: string) => ({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/tmp/${name}` } } });
  for (const name of ['pvp-free', 'pvp-bound', 'pvp-barrier', 'pvp-refinalized']) {
    const r = await c.raw('POST', PVS, { body: pv(name) });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json().metadata.finalizers, [PV_FINALIZER]);
  }
  kubectl(['delete', 'pv', 'pvp-free', '--timeout=20s']);
  assert.equal((await c.raw('GET', `${PVS}/pvp-free`)).status, 404);

  const bound = await c.raw('PATCH', `${PVS}/pvp-bound/status`, { body: { status: { phase: 'Bound' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(bound.status, 200, bound.text);
  kubectl(['delete', 'pv', 'pvp-bound', '--wait=false']);
  // (the volume deleted after it went: the Bound one has been judged)
  kubectl(['delete', 'pv', 'pvp-barrier', '--timeout=20s']);
  await assertTerminating(`${PVS}/pvp-bound`, PV_FINALIZER);
  const released = await c.raw('PATCH', `${PVS}/pvp-bound/status`, { body: { status: { phase: 'Released' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(released.status, 200, released.text);
  await gone(`${PVS}/pvp-bound`);

  // a live volume without the finalizer gets it back
  const stripped = await c.raw('PATCH', `${PVS}/pvp-refinalized`, { body: { metadata: { finalizers: null } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(stripped.status, 200, stripped.text);
  await until('the pv-protection finalizer back', async () => ((await c.raw('GET', `${PVS}/pvp-refinalized`)).json().metadata.finalizers ?? []).includes(PV_FINALIZER));
  kubectl(['delete', 'pv', 'pvp-refinalized', '--timeout=20s']);
  assert.match(c.logs, /Starting PV protection controller/);
});

test('with persistentvolumeclaim-protection-controller off a deleted claim stays; keelson controller-manager --controllers=pvc-protection as its service account lets it go', async () => {
  await defaultServiceAccount(c, NS);
  await createPVC('stuck');
  kubectl(['delete', 'pvc', 'stuck', '-n', NS, '--wait=false']);
  // (the volume test and this wait: long enough for a running controller to have let it go)
  await new Promise((r) => setTimeout(r, 500));
  await assertTerminating(`${PVCS}/stuck`, PVC_FINALIZER);
  assert.doesNotMatch(c.logs, /Starting PVC protection controller/);
  const doomed = await c.raw('GET', `/api/v1/namespaces/${DOOMED}`);
  assert.equal(doomed.status, 200, 'the namespace deleted at the start waits for its claims');
  assert.equal(doomed.json().status.phase, 'Terminating');

  const port = await freePort();
  cm = spawn(
    process.execPath,
    [
      KEELSON, 'controller-manager', '--kubeconfig', c.kubeconfig, '--secure-port', String(port), '--bind-address', '127.0.0.1',
      '--authentication-kubeconfig', c.kubeconfig, '--authorization-kubeconfig', c.kubeconfig,
      '--leader-elect=false', '--use-service-account-credentials', '--controllers=pvc-protection',
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  cm.stdout!.on('data', (d) => (cmLogs += d));
  cm.stderr!.on('data', (d) => (cmLogs += d));
  await gone(`${PVCS}/stuck`).catch((e) => assert.fail(`${e}\n${cmLogs}`));
  assert.equal((await c.raw('GET', '/api/v1/namespaces/kube-system/serviceaccounts/pvc-protection-controller')).status, 200);
  assert.match(cmLogs, /Starting PVC protection controller/);
  assert.doesNotMatch(cmLogs, /forbidden/i);

  // `kubectl delete pvc` of an unused claim returns, and it is gone
  await createPVC('free');
  kubectl(['delete', 'pvc', 'free', '-n', NS, '--timeout=20s']);
  assert.equal((await c.raw('GET', `${PVCS}/free`)).status, 404);
});

test('a claim a scheduled pod uses stays Terminating until the pod is deleted, even once the pod has finished; an unscheduled pod holds none', async () => {
  assert.ok(cm, 'the controller manager of the previous test');
  await createPVC('used');
  await createPVC('finished');
  await createPVC('failed');
  await createPVC('pending');
  await createPod('user', [claimVolume('used')]);
  await createPod('waiting', [claimVolume('pending')], false);
  for (const [pod, claim, phase] of [['done', 'finished', 'Succeeded'], ['crashed', 'failed', 'Failed']] as const) {
    await createPod(pod, [claimVolume(claim)]);
    const r = await c.raw('PATCH', `${PODS}/${pod}/status`, { body: { status: { phase } }, headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json().status.phase, phase);
  }

  kubectl(['delete', 'pvc', 'used', 'finished', 'failed', '-n', NS, '--wait=false']);
  // the claim of a pod that no scheduler placed goes (the kubelet would not start it now)
  kubectl(['delete', 'pvc', 'pending', '-n', NS, '--timeout=20s']);
  await pvcBarrier();
  await assertTerminating(`${PVCS}/used`, PVC_FINALIZER);
  // (Kubernetes' rule: a finished pod that is not deleted still holds its claims)
  await assertTerminating(`${PVCS}/finished`, PVC_FINALIZER);
  await assertTerminating(`${PVCS}/failed`, PVC_FINALIZER);

  await forceDeletePod('user');
  await gone(`${PVCS}/used`);
  await forceDeletePod('done');
  await forceDeletePod('crashed');
  await gone(`${PVCS}/finished`);
  await gone(`${PVCS}/failed`);
});

test('a generic ephemeral volume holds its claim (<pod>-<volume>) only when the pod controls it', async () => {
  const ephemeral = { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } };
  const owner = await createPod('eph', [ephemeral]);
  await createPod('stray', [ephemeral]);
  await createPVC('eph-scratch', NS, { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'eph', uid: owner.metadata.uid, controller: true }] });
  await createPVC('stray-scratch');
  kubectl(['delete', 'pvc', 'eph-scratch', '-n', NS, '--wait=false']);
  // (a claim of the name that the pod does not control is not the pod's)
  kubectl(['delete', 'pvc', 'stray-scratch', '-n', NS, '--timeout=20s']);
  await pvcBarrier();
  await assertTerminating(`${PVCS}/eph-scratch`, PVC_FINALIZER);
  await forceDeletePod('eph');
  await gone(`${PVCS}/eph-scratch`);
  await forceDeletePod('stray');
});

test('a live claim without the finalizer gets it back', async () => {
  await createPVC('refinalized');
  const stripped = await c.raw('PATCH', `${PVCS}/refinalized`, { body: { metadata: { finalizers: null } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(stripped.status, 200, stripped.text);
  await until('the pvc-protection finalizer back', async () => ((await c.raw('GET', `${PVCS}/refinalized`)).json().metadata.finalizers ?? []).includes(PVC_FINALIZER));
});

/** a namespace holding claims, one of them used by a pod no scheduler placed, deleted with kubectl */
async function deleteNamespaceWithClaims(): Promise<{ done: Promise<RunResult> }> {
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: DOOMED } } })).status, 201);
  await createPVC('data', DOOMED);
  await createPVC('logs', DOOMED);
  await defaultServiceAccount(c, DOOMED);
  await createPod('web', [claimVolume('data')], false, DOOMED);
  return { done: c.kubectlAsync(['delete', 'namespace', DOOMED, '--timeout=30s']) };
}

test('kubectl delete namespace of a namespace holding claims completes', async () => {
  assert.ok(namespaceDeletion, 'started before the tests');
  const r = await namespaceDeletion;
  assert.equal(r.code, 0, `kubectl delete namespace: ${r.stderr}\n${cmLogs}`);
  assert.equal((await c.raw('GET', `/api/v1/namespaces/${DOOMED}`)).status, 404);
});
