// The StatefulSet controller of the embedded controller manager, against a real keelson driven by
// kubectl and raw HTTPS: pods `<set>-<ordinal>` made one at a time in order (OrderedReady), each
// with its claim; hostname, subdomain and identity labels; scale-down from the highest ordinal;
// a rolling update from the highest ordinal that stops at the partition; ControllerRevisions
// (kubectl rollout history); the status kubectl prints; Parallel; a deleted pod made again. No
// node agent runs: the tests write the pods' phase and readiness through the status subresource.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, until, type Cluster } from './harness.js';

let c: Cluster;
const NS = 'stsc';
const PODS = `/api/v1/namespaces/${NS}/pods`;
const STS = `/apis/apps/v1/namespaces/${NS}/statefulsets`;
const PVCS = `/api/v1/namespaces/${NS}/persistentvolumeclaims`;
const REVS = `/apis/apps/v1/namespaces/${NS}/controllerrevisions`;
const MERGE = { 'content-type': 'application/merge-patch+json' };

before(async () => {
  // (without the PVC protection controller: a deleted claim stays Terminating under its finalizer, as
  // one a pod on a node still uses does, so the tests see the StatefulSet controller wait for it)
  c = await startCluster({ args: ['--storage-backend=memory', '--controllers=*,-persistentvolumeclaim-protection-controller'] });
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
});
after(async () => {
  await c?.stop();
});

const sts = (name: string, replicas: number, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name },
  spec: {
    replicas,
    serviceName: `${name}-svc`,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] } },
    ...extra,
  },
});

const claimTemplate = { metadata: { name: 'data', labels: { kind: 'disk' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };

async function podsOf(app: string): Promise<any[]> {
  const r = await c.raw('GET', `${PODS}?labelSelector=app%3D${app}`);
  assert.equal(r.status, 200, r.text);
  return r.json().items.filter((p: any) => !p.metadata.deletionTimestamp);
}

const names = (pods: any[]) => pods.map((p) => p.metadata.name).sort();

async function untilPodNames(app: string, want: string[]): Promise<any[]> {
  let last: string[] = [];
  try {
    return await until(`pods ${want.join(',')}`, async () => {
      const pods = await podsOf(app);
      last = names(pods);
      return JSON.stringify(last) === JSON.stringify([...want].sort()) ? pods : undefined;
    });
  } catch (e) {
    throw new Error(`${(e as Error).message}; the last: ${last.join(',')}`);
  }
}

async function pod(name: string): Promise<any> {
  const r = await c.raw('GET', `${PODS}/${name}`);
  return r.status === 200 ? r.json() : undefined;
}

async function markReady(name: string): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }] };
  const r = await c.raw('PATCH', `${PODS}/${name}/status`, { body: JSON.stringify({ status }), headers: MERGE });
  assert.equal(r.status, 200, r.text);
}

async function statusOf(name: string, want: (s: any) => boolean): Promise<any> {
  let last: any;
  try {
    return await until(`the status of ${name}`, async () => {
      const o = (await c.raw('GET', `${STS}/${name}`)).json();
      last = o.status;
      return want(o.status ?? {}) ? o.status : undefined;
    });
  } catch (e) {
    throw new Error(`${(e as Error).message}; the last: ${JSON.stringify(last)}`);
  }
}

/** waits a little and checks no more pods than `want` were made */
async function stillOnly(app: string, want: string[]): Promise<void> {
  await new Promise((r) => setTimeout(r, 700));
  assert.deepEqual(names(await podsOf(app)), [...want].sort());
}

async function eventsOf(name: string): Promise<any[]> {
  const r = await c.raw('GET', `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name%3D${name}`);
  return r.json().items;
}

test('OrderedReady: web-0, web-1, web-2 one at a time with their claims, identity and status; scale down from the highest', async () => {
  const made = c.kubectl(['create', '-n', NS, '-f', c.file('web.yaml', JSON.stringify(sts('web', 3, { volumeClaimTemplates: [claimTemplate] })))], { version: '1.32' });
  assert.equal(made.code, 0, made.stderr);
  const set = (await c.raw('GET', `${STS}/web`)).json();

  let pods = await untilPodNames('web', ['web-0']);
  await stillOnly('web', ['web-0']);
  const p0 = pods[0];
  assert.equal(p0.spec.hostname, 'web-0');
  assert.equal(p0.spec.subdomain, 'web-svc');
  assert.equal(p0.metadata.labels['statefulset.kubernetes.io/pod-name'], 'web-0');
  assert.equal(p0.metadata.labels['apps.kubernetes.io/pod-index'], '0');
  assert.equal(p0.metadata.labels.app, 'web');
  assert.match(p0.metadata.labels['controller-revision-hash'], /^web-[a-z0-9]+$/);
  assert.deepEqual(p0.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: set.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  assert.deepEqual(
    p0.spec.volumes.find((v: any) => v.name === 'data'),
    { name: 'data', persistentVolumeClaim: { claimName: 'data-web-0' } },
  );
  // the claim, Pending for want of a provisioner, does not hold the pod back
  const claim = (await c.raw('GET', `${PVCS}/data-web-0`)).json();
  assert.deepEqual(claim.metadata.labels, { kind: 'disk', app: 'web' });
  assert.equal(claim.metadata.ownerReferences, undefined);

  // web-1 only once web-0 runs and is ready
  await markReady('web-0');
  await untilPodNames('web', ['web-0', 'web-1']);
  await stillOnly('web', ['web-0', 'web-1']);
  await markReady('web-1');
  await untilPodNames('web', ['web-0', 'web-1', 'web-2']);
  await markReady('web-2');
  const s = await statusOf('web', (s) => s.readyReplicas === 3 && s.availableReplicas === 3);
  assert.equal(s.replicas, 3);
  assert.equal(s.currentReplicas, 3);
  assert.equal(s.updatedReplicas, 3);
  assert.equal(s.observedGeneration, 1);
  assert.equal(s.currentRevision, p0.metadata.labels['controller-revision-hash']);
  assert.equal(s.updateRevision, s.currentRevision);
  assert.equal(s.collisionCount, 0);
  const pvcs = (await c.raw('GET', PVCS)).json().items.map((p: any) => p.metadata.name).sort();
  assert.deepEqual(pvcs, ['data-web-0', 'data-web-1', 'data-web-2']);

  const get = c.kubectl(['get', 'sts', 'web', '-n', NS], { version: '1.32' });
  assert.equal(get.code, 0, get.stderr);
  assert.match(get.stdout, /\nweb\s+3\/3\s+\d+s\n/);
  const old = c.kubectl(['get', 'statefulset', 'web', '-n', NS], { version: '1.27' });
  assert.equal(old.code, 0, old.stderr);
  assert.match(old.stdout, /\nweb\s+3\/3\s+\d+s\n/);
  const rollout = c.kubectl(['rollout', 'status', 'statefulset/web', '-n', NS, '--timeout=20s'], { version: '1.32' });
  assert.equal(rollout.code, 0, rollout.stderr);
  // (the API server defaults rollingUpdate.partition to 0, so kubectl reports a partitioned roll out)
  assert.match(rollout.stdout, /partitioned roll out complete: 3 new pods have been updated\.\.\./);

  const evs = await eventsOf('web');
  const msgs = evs.map((e) => `${e.reason} ${e.message}`);
  assert.ok(msgs.includes('SuccessfulCreate create Pod web-0 in StatefulSet web successful'), msgs.join('\n'));
  assert.ok(msgs.includes('SuccessfulCreate create Claim data-web-0 Pod web-0 in StatefulSet web success'), msgs.join('\n'));
  assert.equal(evs[0].source.component, 'statefulset-controller');

  // scale down: web-2 first, web-1 only once it is gone
  const scaled = c.kubectl(['scale', 'sts', 'web', '-n', NS, '--replicas=1'], { version: '1.32' });
  assert.equal(scaled.code, 0, scaled.stderr);
  await untilPodNames('web', ['web-0']);
  await statusOf('web', (s) => s.replicas === 1 && s.readyReplicas === 1 && s.observedGeneration === 2);
  const dels = (await eventsOf('web')).filter((e) => e.reason === 'SuccessfulDelete').map((e) => e.message);
  assert.deepEqual(dels, ['delete Pod web-2 in StatefulSet web successful', 'delete Pod web-1 in StatefulSet web successful']);
  // the claims stay (whenScaled: Retain)
  assert.equal((await c.raw('GET', `${PVCS}/data-web-2`)).status, 200);

  // deleted (kubectl 1.27): the garbage collector takes the pods; the claims stay (whenDeleted: Retain)
  const del = c.kubectl(['delete', 'statefulset', 'web', '-n', NS, '--wait=false'], { version: '1.27' });
  assert.equal(del.code, 0, del.stderr);
  await untilPodNames('web', []);
  const kept = (await c.raw('GET', `${PVCS}/data-web-0`)).json();
  assert.equal(kept.metadata.deletionTimestamp, undefined);
});

test('a rolling update (kubectl set image) goes from the highest ordinal down and stops at the partition; rollout history lists the revisions', async () => {
  const made = c.kubectl(['apply', '-n', NS, '-f', c.file('roll.yaml', JSON.stringify(sts('roll', 3)))], { version: '1.32' });
  assert.equal(made.code, 0, made.stderr);
  for (const n of ['roll-0', 'roll-1', 'roll-2']) {
    await until(`${n}`, () => pod(n));
    await markReady(n);
  }
  const first = await statusOf('roll', (s) => s.readyReplicas === 3);
  const rev1 = first.currentRevision;

  // partition 1: roll-0 keeps the old revision
  const p = await c.raw('PATCH', `${STS}/roll`, { body: JSON.stringify({ spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } } }), headers: MERGE });
  assert.equal(p.status, 200, p.text);
  const set = c.kubectl(['set', 'image', 'statefulset/roll', 'c=nginx:1.27', '-n', NS], { version: '1.32' });
  assert.equal(set.code, 0, set.stderr);
  const s2 = await statusOf('roll', (s) => s.updateRevision && s.updateRevision !== rev1);
  const rev2 = s2.updateRevision;
  // roll-2 is replaced first
  const new2 = await until('roll-2 at the new revision', async () => {
    const p = await pod('roll-2');
    return p && !p.metadata.deletionTimestamp && p.metadata.labels['controller-revision-hash'] === rev2 ? p : undefined;
  });
  assert.equal(new2.spec.containers[0].image, 'nginx:1.27');
  // roll-1 waits for roll-2 to be ready
  await new Promise((r) => setTimeout(r, 700));
  assert.equal((await pod('roll-1')).metadata.labels['controller-revision-hash'], rev1);
  await markReady('roll-2');
  await until('roll-1 at the new revision', async () => {
    const p = await pod('roll-1');
    return p && !p.metadata.deletionTimestamp && p.metadata.labels['controller-revision-hash'] === rev2 ? p : undefined;
  });
  await markReady('roll-1');
  const s3 = await statusOf('roll', (s) => s.updatedReplicas === 2 && s.readyReplicas === 3);
  assert.equal(s3.currentRevision, rev1);
  assert.equal(s3.currentReplicas, 1);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await pod('roll-0')).metadata.labels['controller-revision-hash'], rev1);
  const partitioned = c.kubectl(['rollout', 'status', 'sts/roll', '-n', NS, '--timeout=10s'], { version: '1.32' });
  assert.equal(partitioned.code, 0, partitioned.stderr);
  assert.match(partitioned.stdout, /partitioned roll out complete: 2 new pods have been updated/);

  // the partition lifted: roll-0 follows, and the update revision becomes current
  const p2 = await c.raw('PATCH', `${STS}/roll`, { body: JSON.stringify({ spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } }), headers: MERGE });
  assert.equal(p2.status, 200, p2.text);
  await until('roll-0 at the new revision', async () => {
    const p = await pod('roll-0');
    return p && !p.metadata.deletionTimestamp && p.metadata.labels['controller-revision-hash'] === rev2 ? p : undefined;
  });
  await markReady('roll-0');
  const done = await statusOf('roll', (s) => s.currentRevision === rev2 && s.currentReplicas === 3 && s.updatedReplicas === 3 && s.readyReplicas === 3);
  assert.equal(done.updateRevision, rev2);

  // the revisions
  const revs = (await c.raw('GET', REVS)).json().items.filter((r: any) => r.metadata.ownerReferences?.[0]?.name === 'roll');
  assert.deepEqual(revs.map((r: any) => [r.metadata.name, r.revision]).sort((a: any, b: any) => a[1] - b[1]), [[rev1, 1], [rev2, 2]]);
  const r2 = revs.find((r: any) => r.metadata.name === rev2);
  assert.equal(r2.data.spec.template.$patch, 'replace');
  assert.equal(r2.data.spec.template.spec.containers[0].image, 'nginx:1.27');
  assert.equal(r2.metadata.labels.app, 'roll');
  assert.equal(r2.metadata.labels['controller.kubernetes.io/hash'], rev2.slice('roll-'.length));
  assert.equal(r2.metadata.ownerReferences[0].kind, 'StatefulSet');
  const hist = c.kubectl(['rollout', 'history', 'statefulset/roll', '-n', NS], { version: '1.32' });
  assert.equal(hist.code, 0, hist.stderr);
  assert.match(hist.stdout, /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
  const hist2 = c.kubectl(['rollout', 'history', 'statefulset/roll', '-n', NS, '--revision=2'], { version: '1.32' });
  assert.equal(hist2.code, 0, hist2.stderr);
  assert.match(hist2.stdout, /nginx:1\.27/);

  // back to the first template: its revision is reused as revision 3
  const undo = c.kubectl(['rollout', 'undo', 'statefulset/roll', '-n', NS], { version: '1.32' });
  assert.equal(undo.code, 0, undo.stderr);
  await statusOf('roll', (s) => s.updateRevision === rev1);
  const back = (await c.raw('GET', `${REVS}/${rev1}`)).json();
  assert.equal(back.revision, 3);
});

test('Parallel makes every pod at once; a deleted pod is made again under its name; OnDelete waits for deletes', async () => {
  const made = c.kubectl(['create', '-n', NS, '-f', c.file('par.yaml', JSON.stringify(sts('par', 3, { podManagementPolicy: 'Parallel', updateStrategy: { type: 'OnDelete' } })))], { version: '1.27' });
  assert.equal(made.code, 0, made.stderr);
  const pods = await untilPodNames('par', ['par-0', 'par-1', 'par-2']);
  assert.ok(pods.every((p) => !p.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True')));
  const uid1 = pods.find((p) => p.metadata.name === 'par-1').metadata.uid;
  const del = c.kubectl(['delete', 'pod', 'par-1', '-n', NS, '--wait=false'], { version: '1.32' });
  assert.equal(del.code, 0, del.stderr);
  await until('par-1 again', async () => {
    const p = await pod('par-1');
    return p && p.metadata.uid !== uid1 && !p.metadata.deletionTimestamp ? p : undefined;
  });

  // OnDelete: a new template changes no pod until one is deleted
  const rev1 = (await statusOf('par', (s) => s.replicas === 3)).updateRevision;
  assert.equal(c.kubectl(['set', 'image', 'sts/par', 'c=nginx:1.27', '-n', NS], { version: '1.32' }).code, 0);
  const rev2 = (await statusOf('par', (s) => s.updateRevision !== rev1)).updateRevision;
  await new Promise((r) => setTimeout(r, 700));
  for (const p of await podsOf('par')) assert.equal(p.metadata.labels['controller-revision-hash'], rev1);
  const p0 = await pod('par-0');
  assert.equal((await c.raw('DELETE', `${PODS}/par-0`)).status, 200);
  const again = await until('par-0 again', async () => {
    const p = await pod('par-0');
    return p && p.metadata.uid !== p0.metadata.uid ? p : undefined;
  });
  assert.equal(again.metadata.labels['controller-revision-hash'], rev2);
  assert.equal(again.spec.containers[0].image, 'nginx:1.27');

  // Parallel scale-down: both at once even though none is ready
  assert.equal(c.kubectl(['scale', 'sts', 'par', '-n', NS, '--replicas=1'], { version: '1.32' }).code, 0);
  await untilPodNames('par', ['par-0']);
});

test('a failed pod is deleted and made again; an orphan named after the set is adopted', async () => {
  // an orphan made before its set, named and labelled as its pod 0
  const orphan = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'adopt-0', labels: { app: 'adopt' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] } };
  assert.equal((await c.raw('POST', PODS, { body: orphan })).status, 201);
  assert.equal(c.kubectl(['create', '-n', NS, '-f', c.file('adopt.yaml', JSON.stringify(sts('adopt', 1)))], { version: '1.32' }).code, 0);
  const adopted = await until('adopt-0 adopted', async () => {
    const p = await pod('adopt-0');
    return p?.metadata.ownerReferences?.[0]?.kind === 'StatefulSet' ? p : undefined;
  });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const r = await c.raw('PATCH', `${PODS}/adopt-0/status`, { body: JSON.stringify({ status: { phase: 'Failed', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: now }] } }), headers: MERGE });
  assert.equal(r.status, 200, r.text);
  const made = await until('adopt-0 made again', async () => {
    const p = await pod('adopt-0');
    return p && p.metadata.uid !== adopted.metadata.uid ? p : undefined;
  });
  assert.equal(made.metadata.labels['statefulset.kubernetes.io/pod-name'], 'adopt-0');
});

test('ordinals.start, whenDeleted/whenScaled: Delete owners on the claims, the pod-name label restored', async () => {
  const body = sts('db', 2, {
    ordinals: { start: 3 },
    podManagementPolicy: 'Parallel',
    volumeClaimTemplates: [claimTemplate],
    persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' },
  });
  const made = c.kubectl(['create', '-n', NS, '-f', c.file('db.yaml', JSON.stringify(body))], { version: '1.32' });
  assert.equal(made.code, 0, made.stderr);
  const set = (await c.raw('GET', `${STS}/db`)).json();
  const pods = await untilPodNames('db', ['db-3', 'db-4']);
  assert.equal(pods.find((p) => p.metadata.name === 'db-3').metadata.labels['apps.kubernetes.io/pod-index'], '3');
  const claim = await until('data-db-4', async () => {
    const r = await c.raw('GET', `${PVCS}/data-db-4`);
    return r.status === 200 ? r.json() : undefined;
  });
  assert.deepEqual(claim.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: set.metadata.uid, controller: true, blockOwnerDeletion: true }]);

  // the pod-name label taken away: put back
  const strip = await c.raw('PATCH', `${PODS}/db-3`, { body: JSON.stringify({ metadata: { labels: { 'statefulset.kubernetes.io/pod-name': null } } }), headers: MERGE });
  assert.equal(strip.status, 200, strip.text);
  await until('the pod-name label back', async () => (await pod('db-3'))?.metadata.labels['statefulset.kubernetes.io/pod-name'] === 'db-3');

  // scaled down: the claim of db-4 is owned by its pod before the pod goes
  const db4 = await pod('db-4');
  assert.equal(c.kubectl(['scale', 'sts', 'db', '-n', NS, '--replicas=1'], { version: '1.32' }).code, 0);
  await untilPodNames('db', ['db-3']);
  // (gone already, when the garbage collector followed the pod; else owned by the pod alone)
  const after = await c.raw('GET', `${PVCS}/data-db-4`);
  if (after.status !== 404) {
    assert.equal(after.status, 200, after.text);
    assert.deepEqual(after.json().metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Pod', name: 'db-4', uid: db4.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  }
  // the claim of the pod kept still has the set as owner
  assert.equal((await c.raw('GET', `${PVCS}/data-db-3`)).json().metadata.ownerReferences[0].kind, 'StatefulSet');

  // the policy changed: the existing claims' owners follow
  const policy = (whenDeleted: string) => c.raw('PATCH', `${STS}/db`, { body: JSON.stringify({ spec: { persistentVolumeClaimRetentionPolicy: { whenDeleted } } }), headers: MERGE });
  assert.equal((await policy('Retain')).status, 200);
  await until('data-db-3 without owner', async () => (await c.raw('GET', `${PVCS}/data-db-3`)).json().metadata.ownerReferences === undefined);
  assert.equal((await policy('Delete')).status, 200);
  await until('data-db-3 owned by the set again', async () => (await c.raw('GET', `${PVCS}/data-db-3`)).json().metadata.ownerReferences?.[0]?.uid === set.metadata.uid);

  // deleted: the garbage collector deletes its claims too (whenDeleted: Delete; a claim's
  // protection finalizer may keep it a while, being deleted)
  assert.equal((await c.raw('DELETE', `${STS}/db`)).status, 200);
  await until('data-db-3 deleted', async () => {
    const r = await c.raw('GET', `${PVCS}/data-db-3`);
    return r.status === 404 || !!r.json().metadata.deletionTimestamp;
  });
});

test('OrderedReady scale-down waits while a remaining pod is not ready', async () => {
  assert.equal(c.kubectl(['create', '-n', NS, '-f', c.file('ord.yaml', JSON.stringify(sts('ord', 3)))], { version: '1.32' }).code, 0);
  for (const n of ['ord-0', 'ord-1', 'ord-2']) {
    await until(n, () => pod(n));
    await markReady(n);
  }
  await statusOf('ord', (s) => s.readyReplicas === 3);
  // ord-0 no longer ready: nothing is deleted
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const r = await c.raw('PATCH', `${PODS}/ord-0/status`, { body: JSON.stringify({ status: { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: now }] } }), headers: MERGE });
  assert.equal(r.status, 200, r.text);
  await statusOf('ord', (s) => s.readyReplicas === 2);
  assert.equal(c.kubectl(['scale', 'sts', 'ord', '-n', NS, '--replicas=1'], { version: '1.32' }).code, 0);
  await statusOf('ord', (s) => s.observedGeneration === 2);
  await stillOnly('ord', ['ord-0', 'ord-1', 'ord-2']);
  await markReady('ord-0');
  await untilPodNames('ord', ['ord-0']);
});

test('minReadySeconds: the next pod waits until its predecessor has been ready that long; availableReplicas follows', async () => {
  assert.equal(c.kubectl(['create', '-n', NS, '-f', c.file('slow.yaml', JSON.stringify(sts('slow', 2, { minReadySeconds: 3 })))], { version: '1.32' }).code, 0);
  await untilPodNames('slow', ['slow-0']);
  await markReady('slow-0');
  const s = await statusOf('slow', (s) => s.readyReplicas === 1);
  assert.equal(s.availableReplicas ?? 0, 0);
  await stillOnly('slow', ['slow-0']);
  const t0 = Date.now();
  await untilPodNames('slow', ['slow-0', 'slow-1']);
  assert.ok(Date.now() - t0 > 1000, 'slow-1 came after minReadySeconds');
  await statusOf('slow', (s) => s.availableReplicas === 1 && s.replicas === 2);
});

test('revisionHistoryLimit: old revisions no pod uses are deleted, the oldest first', async () => {
  const body = sts('hist', 1, { podManagementPolicy: 'Parallel', updateStrategy: { type: 'OnDelete' }, revisionHistoryLimit: 1 });
  assert.equal(c.kubectl(['create', '-n', NS, '-f', c.file('hist.yaml', JSON.stringify(body))], { version: '1.32' }).code, 0);
  await untilPodNames('hist', ['hist-0']);
  const revs: string[] = [(await statusOf('hist', (s) => !!s.updateRevision)).updateRevision];
  for (const tag of ['1.26', '1.27', '1.28']) {
    assert.equal(c.kubectl(['set', 'image', 'sts/hist', `c=nginx:${tag}`, '-n', NS], { version: '1.32' }).code, 0);
    revs.push((await statusOf('hist', (s) => s.updateRevision && !revs.includes(s.updateRevision))).updateRevision);
  }
  // hist-0 (OnDelete) keeps the first; of the dead ones (the 2nd and 3rd) one is kept: the newest
  const names = await until('the history trimmed', async () => {
    const items = (await c.raw('GET', REVS)).json().items.filter((r: any) => r.metadata.ownerReferences?.[0]?.name === 'hist');
    const n = items.map((r: any) => r.metadata.name).sort();
    return n.length === 3 ? n : undefined;
  });
  assert.deepEqual(names, [revs[0], revs[2], revs[3]].sort());
});

test('a pod that stops matching the selector is released; its name stays taken, so the set does not make it again', async () => {
  assert.equal(c.kubectl(['create', '-n', NS, '-f', c.file('rel.yaml', JSON.stringify(sts('rel', 1)))], { version: '1.27' }).code, 0);
  const p = await until('rel-0', () => pod('rel-0'));
  const r = await c.raw('PATCH', `${PODS}/rel-0`, { body: JSON.stringify({ metadata: { labels: { app: 'other' } } }), headers: MERGE });
  assert.equal(r.status, 200, r.text);
  await until('rel-0 released', async () => (await pod('rel-0'))?.metadata.ownerReferences === undefined);
  await statusOf('rel', (s) => s.replicas === 0);
  await new Promise((r) => setTimeout(r, 500));
  const still = await pod('rel-0');
  assert.equal(still.metadata.uid, p.metadata.uid);
  assert.ok(!(await eventsOf('rel')).some((e) => e.reason === 'FailedCreate'));
});

test('a claim being deleted holds its pod back (FailedCreate) until it is gone', async () => {
  const claim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data-hold-0', finalizers: ['example.com/hold'] }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
  assert.equal((await c.raw('POST', PVCS, { body: claim })).status, 201);
  assert.equal((await c.raw('DELETE', `${PVCS}/data-hold-0`)).status, 200);
  assert.equal(c.kubectl(['create', '-n', NS, '-f', c.file('hold.yaml', JSON.stringify(sts('hold', 1, { volumeClaimTemplates: [claimTemplate] })))], { version: '1.32' }).code, 0);
  const ev = await until('FailedCreate', async () => (await eventsOf('hold')).find((e) => e.reason === 'FailedCreate'));
  assert.equal(ev.type, 'Warning');
  assert.equal(ev.message, 'create Pod hold-0 in StatefulSet hold failed error: pvc data-hold-0 is being deleted');
  assert.equal(await pod('hold-0'), undefined);
  // the finalizer removed: the claim goes, then a new one and the pod are made
  const r = await c.raw('PATCH', `${PVCS}/data-hold-0`, { body: JSON.stringify({ metadata: { finalizers: null } }), headers: MERGE });
  assert.equal(r.status, 200, r.text);
  await until('hold-0', () => pod('hold-0'));
  const fresh = (await c.raw('GET', `${PVCS}/data-hold-0`)).json();
  assert.equal(fresh.metadata.deletionTimestamp, undefined);
});

test('kubectl rollout restart replaces the pods from the highest ordinal; rollout status waits for it; describe shows the set', async () => {
  assert.equal(c.kubectl(['create', '-n', NS, '-f', c.file('rr.yaml', JSON.stringify(sts('rr', 2)))], { version: '1.32' }).code, 0);
  for (const n of ['rr-0', 'rr-1']) {
    await until(n, () => pod(n));
    await markReady(n);
  }
  const before = await statusOf('rr', (s) => s.readyReplicas === 2 && s.currentRevision === s.updateRevision);
  const uids = Object.fromEntries(await Promise.all(['rr-0', 'rr-1'].map(async (n) => [n, (await pod(n)).metadata.uid])));
  const restart = c.kubectl(['rollout', 'restart', 'statefulset/rr', '-n', NS], { version: '1.32' });
  assert.equal(restart.code, 0, restart.stderr);
  const again = (n: string) =>
    until(`${n} made again`, async () => {
      const p = await pod(n);
      return p && p.metadata.uid !== uids[n] && !p.metadata.deletionTimestamp ? p : undefined;
    });
  const rr1 = await again('rr-1');
  assert.ok(rr1.metadata.annotations['kubectl.kubernetes.io/restartedAt']);
  assert.equal((await pod('rr-0')).metadata.uid, uids['rr-0']);
  const waiting = c.kubectlAsync(['rollout', 'status', 'sts/rr', '-n', NS, '--timeout=30s'], { version: '1.32' });
  await markReady('rr-1');
  await again('rr-0');
  await markReady('rr-0');
  const done = await waiting;
  assert.equal(done.code, 0, done.stderr);
  assert.match(done.stdout, /partitioned roll out complete: 2 new pods have been updated\.\.\./);
  const after = await statusOf('rr', (s) => s.currentRevision === s.updateRevision && s.readyReplicas === 2 && s.updatedReplicas === 2);
  assert.notEqual(after.updateRevision, before.updateRevision);
  const d = c.kubectl(['describe', 'sts', 'rr', '-n', NS], { version: '1.32' });
  assert.equal(d.code, 0, d.stderr);
  assert.match(d.stdout, /Replicas:\s+2 desired \| 2 total/);
  assert.match(d.stdout, /Pods Status:\s+2 Running \/ 0 Waiting \/ 0 Succeeded \/ 0 Failed/);
  assert.match(d.stdout, /Normal\s+SuccessfulDelete\s+.*statefulset-controller\s+delete Pod rr-1 in StatefulSet rr successful/);
});

test('keelson server --help has --concurrent-statefulset-syncs (default 5); 0 is refused', async () => {
  const { spawnSync } = await import('node:child_process');
  const { KEELSON } = await import('./harness.js');
  const help = spawnSync(process.execPath, [KEELSON, 'server', '--help'], { encoding: 'utf8' });
  assert.match(help.stdout, /--concurrent-statefulset-syncs int32\s+The number of statefulset objects that are allowed to sync concurrently\..*\(default 5\)/);
  const bad = spawnSync(process.execPath, [KEELSON, 'server', '--concurrent-statefulset-syncs=0', '--data-dir', '/nonexistent/x'], { encoding: 'utf8', timeout: 20_000 });
  assert.notEqual(bad.status, 0);
  assert.ok(bad.stderr.includes('--concurrent-statefulset-syncs must be at least 1'), bad.stderr);
});

test('whenScaled: Delete: scaled back up, a pod waits while its claim is still owned by the pod that went, and is made once the claim is gone', async () => {
  const body = sts('st', 2, { podManagementPolicy: 'Parallel', volumeClaimTemplates: [claimTemplate], persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' } });
  assert.equal(c.kubectl(['create', '-n', NS, '-f', c.file('st.yaml', JSON.stringify(body))], { version: '1.32' }).code, 0);
  await untilPodNames('st', ['st-0', 'st-1']);
  const old = await pod('st-1');
  assert.equal(c.kubectl(['scale', 'sts', 'st', '-n', NS, '--replicas=1'], { version: '1.32' }).code, 0);
  await untilPodNames('st', ['st-0']);
  const owned = (await c.raw('GET', `${PVCS}/data-st-1`)).json();
  assert.equal(owned.metadata.ownerReferences?.[0]?.uid, old.metadata.uid);
  // back to 2: st-1 waits for its claim (stale, or being deleted by the garbage collector)
  assert.equal(c.kubectl(['scale', 'sts', 'st', '-n', NS, '--replicas=2'], { version: '1.32' }).code, 0);
  await statusOf('st', (s) => s.observedGeneration === 3);
  await stillOnly('st', ['st-0']);
  // the claim gone (deleted, and its protection finalizer taken off: no protection controller here)
  await c.raw('DELETE', `${PVCS}/data-st-1`);
  const r = await c.raw('PATCH', `${PVCS}/data-st-1`, { body: JSON.stringify({ metadata: { finalizers: null } }), headers: MERGE });
  assert.ok(r.status === 200 || r.status === 404, r.text);
  await untilPodNames('st', ['st-0', 'st-1']);
  const fresh = await until('a new data-st-1', async () => {
    const x = await c.raw('GET', `${PVCS}/data-st-1`);
    return x.status === 200 && x.json().metadata.uid !== owned.metadata.uid ? x.json() : undefined;
  });
  assert.equal(fresh.metadata.ownerReferences, undefined);
});
