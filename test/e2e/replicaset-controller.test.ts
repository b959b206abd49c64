// The ReplicaSet and ReplicationController controllers of the embedded controller manager, against a
// real keelson driven by kubectl and raw HTTPS: pods made from the template and deleted on a
// scale-down (least ready first), replaced when deleted, orphans adopted and non-matching pods
// released, the status kubectl prints (ready, available after minReadySeconds), and the
// ReplicaFailure condition while the API server refuses the pods. No node agent runs: the tests
// write the pods' readiness through the status subresource.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, until, type Cluster } from './harness.js';

let c: Cluster;
const NS = 'rsc';
const PODS = `/api/v1/namespaces/${NS}/pods`;
const RSS = `/apis/apps/v1/namespaces/${NS}/replicasets`;
const RCS = `/api/v1/namespaces/${NS}/replicationcontrollers`;
const MERGE = { 'content-type': 'application/merge-patch+json' };

before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory'] });
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
});
after(async () => {
  await c?.stop();
});

const rs = (name: string, replicas: number, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name, tier: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }, ...extra },
});

/** the active pods of the namespace with label app=<app> */
async function podsOf(app: string): Promise<any[]> {
  const r = await c.raw('GET', `${PODS}?labelSelector=app%3D${app}`);
  assert.equal(r.status, 200, r.text);
  return r.json().items.filter((p: any) => !p.metadata.deletionTimestamp);
}

async function untilPods(app: string, n: number): Promise<any[]> {
  return until(`${n} pods of ${app}`, async () => {
    const pods = await podsOf(app);
    return pods.length === n ? pods : undefined;
  });
}

async function markReady(pod: any, ready = true): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const status = { phase: 'Running', podIP: '10.0.0.9', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: now }] };
  const r = await c.raw('PATCH', `${PODS}/${pod.metadata.name}/status`, { body: JSON.stringify({ status }), headers: MERGE });
  assert.equal(r.status, 200, r.text);
}

async function statusOf(path: string, want: (s: any) => boolean): Promise<any> {
  let last: any;
  try {
    return await until(`the status of ${path}`, async () => {
      const o = (await c.raw('GET', path)).json();
      last = o.status;
      return want(o.status ?? {}) ? o.status : undefined;
    });
  } catch (e) {
    throw new Error(`${(e as Error).message}; the last: ${JSON.stringify(last)}`);
  }
}

test('kubectl: a ReplicaSet makes its pods, scales down and up, replaces a deleted pod, and describe shows the events', async () => {
  const made = c.kubectl(['apply', '-n', NS, '-f', c.file('web.yaml', JSON.stringify(rs('web', 3)))]);
  assert.equal(made.code, 0, made.stderr);
  const pods = await untilPods('web', 3);
  const owner = (await c.raw('GET', `${RSS}/web`)).json();
  for (const p of pods) {
    assert.match(p.metadata.name, /^web-[a-z0-9]{5}$/);
    assert.deepEqual(p.metadata.labels, { app: 'web', tier: 'web' });
    assert.deepEqual(p.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    assert.equal(p.spec.containers[0].image, 'nginx');
  }
  await statusOf(`${RSS}/web`, (s) => s.replicas === 3 && s.fullyLabeledReplicas === 3 && (s.readyReplicas ?? 0) === 0 && s.observedGeneration === 1);
  const get = c.kubectl(['get', 'rs', 'web', '-n', NS]);
  assert.match(get.stdout, /\nweb\s+3\s+3\s+0\s+\d+s\n/);

  // one ready pod: a scale-down to 1 keeps it (not-ready pods go first)
  await markReady(pods[1]);
  await statusOf(`${RSS}/web`, (s) => s.readyReplicas === 1 && s.availableReplicas === 1);
  assert.equal(c.kubectl(['scale', 'rs', 'web', '-n', NS, '--replicas=1']).code, 0);
  const left = await untilPods('web', 1);
  assert.equal(left[0].metadata.name, pods[1].metadata.name);
  await statusOf(`${RSS}/web`, (s) => s.replicas === 1 && s.observedGeneration === 2);

  // a deleted pod is replaced
  assert.equal(c.kubectl(['delete', 'pod', left[0].metadata.name, '-n', NS, '--wait=false']).code, 0);
  const again = await untilPods('web', 1);
  assert.notEqual(again[0].metadata.name, left[0].metadata.name);

  assert.equal(c.kubectl(['scale', 'rs', 'web', '-n', NS, '--replicas=2']).code, 0);
  await untilPods('web', 2);
  const d = c.kubectl(['describe', 'rs', 'web', '-n', NS]);
  assert.equal(d.code, 0, d.stderr);
  assert.match(d.stdout, /Replicas:\s+2 current \/ 2 desired/);
  assert.match(d.stdout, /Normal\s+SuccessfulCreate\s+.*replicaset-controller\s+Created pod: web-[a-z0-9]{5}/);
  assert.match(d.stdout, /Normal\s+SuccessfulDelete\s+.*replicaset-controller\s+Deleted pod: web-[a-z0-9]{5}/);
});

test('a ReplicationController (kubectl 1.27) keeps its replicas the same way', async () => {
  const rc = { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'legacy' }, spec: { replicas: 2, template: { metadata: { labels: { app: 'legacy' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } } };
  const made = c.kubectl(['create', '-n', NS, '-f', c.file('rc.yaml', JSON.stringify(rc))], { version: '1.27' });
  assert.equal(made.code, 0, made.stderr);
  const pods = await untilPods('legacy', 2);
  assert.equal(pods[0].metadata.ownerReferences[0].kind, 'ReplicationController');
  assert.equal(pods[0].metadata.ownerReferences[0].apiVersion, 'v1');
  await statusOf(`${RCS}/legacy`, (s) => s.replicas === 2);
  assert.equal(c.kubectl(['scale', 'rc', 'legacy', '-n', NS, '--replicas=0'], { version: '1.27' }).code, 0);
  await untilPods('legacy', 0);
  await statusOf(`${RCS}/legacy`, (s) => s.replicas === 0);
  const d = c.kubectl(['describe', 'rc', 'legacy', '-n', NS]);
  assert.match(d.stdout, /replication-controller\s+Deleted pod: legacy-[a-z0-9]{5}/);
});

test('an orphan that matches is adopted; an owned pod whose labels change is released and replaced', async () => {
  const orphan = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'stray', labels: { app: 'adopt' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
  assert.equal((await c.raw('POST', PODS, { body: orphan })).status, 201);
  assert.equal((await c.raw('POST', RSS, { body: rs('adopt', 2) })).status, 201);
  const pods = await untilPods('adopt', 2);
  const stray = pods.find((p) => p.metadata.name === 'stray');
  assert.ok(stray, 'the orphan is one of the two');
  await until('the orphan adopted', async () => (await c.raw('GET', `${PODS}/stray`)).json().metadata.ownerReferences?.[0]?.name === 'adopt');
  // relabelled: no longer selected, so released, and another is made in its place
  const r = await c.raw('PATCH', `${PODS}/stray`, { body: JSON.stringify({ metadata: { labels: { app: 'elsewhere' } } }), headers: MERGE });
  assert.equal(r.status, 200, r.text);
  await until('the pod released', async () => ((await c.raw('GET', `${PODS}/stray`)).json().metadata.ownerReferences ?? []).length === 0);
  const now = await untilPods('adopt', 2);
  assert.ok(!now.some((p) => p.metadata.name === 'stray'));
});

test('availableReplicas waits for minReadySeconds', async () => {
  assert.equal((await c.raw('POST', RSS, { body: rs('slow', 1, { minReadySeconds: 2 }) })).status, 201);
  const [pod] = await untilPods('slow', 1);
  await markReady(pod);
  const s = await statusOf(`${RSS}/slow`, (x) => x.readyReplicas === 1);
  assert.equal(s.availableReplicas ?? 0, 0, 'not available before minReadySeconds');
  await statusOf(`${RSS}/slow`, (x) => x.availableReplicas === 1);
});

test('pods the API server refuses: the ReplicaFailure condition and a FailedCreate event, gone once the pods can be made', async () => {
  const quota = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'few' }, spec: { hard: { pods: '1' } } };
  assert.equal((await c.raw('POST', `/api/v1/namespaces/${NS}/resourcequotas`, { body: quota })).status, 201);
  // (other tests' pods count: room for exactly one more)
  const used = (await c.raw('GET', PODS)).json().items.filter((p: any) => !['Succeeded', 'Failed'].includes(p.status?.phase)).length;
  // (read, change, write, again on a conflict: the quota controller writes the status meanwhile)
  await until('the quota raised', async () => {
    const q = (await c.raw('GET', `/api/v1/namespaces/${NS}/resourcequotas/few`)).json();
    const put = await c.raw('PUT', `/api/v1/namespaces/${NS}/resourcequotas/few`, { body: { ...q, spec: { hard: { pods: String(used + 1) } } } });
    if (put.status === 409) return undefined;
    assert.equal(put.status, 200, put.text);
    return true;
  });
  await until('the quota in effect', async () => (await c.raw('GET', `/api/v1/namespaces/${NS}/resourcequotas/few`)).json().status?.hard?.pods === String(used + 1));
  assert.equal((await c.raw('POST', RSS, { body: rs('capped', 3) })).status, 201);
  // (the one pod made counts once the controller has seen it: the sync that made it and failed the
  // others may write the condition with the replicas it had seen before, 0, as Kubernetes' does)
  const s = await statusOf(`${RSS}/capped`, (x) => (x.conditions ?? []).some((k: any) => k.type === 'ReplicaFailure') && x.replicas === 1);
  const cond = s.conditions.find((k: any) => k.type === 'ReplicaFailure');
  assert.equal(cond.status, 'True');
  assert.equal(cond.reason, 'FailedCreate');
  assert.match(cond.message, /exceeded quota: few/);
  assert.equal(s.replicas, 1);
  const d = c.kubectl(['describe', 'rs', 'capped', '-n', NS]);
  assert.match(d.stdout, /Warning\s+FailedCreate\s+.*replicaset-controller\s+Error creating: pods "capped-[a-z0-9]{5}" is forbidden: exceeded quota: few/);
  assert.match(d.stdout, /ReplicaFailure\s+True\s+FailedCreate/);
  // room again: the rest are made (after the controller's backoff) and the condition goes
  assert.equal((await c.raw('DELETE', `/api/v1/namespaces/${NS}/resourcequotas/few`)).status, 200);
  await untilPods('capped', 3);
  await statusOf(`${RSS}/capped`, (x) => x.replicas === 3 && !(x.conditions ?? []).some((k: any) => k.type === 'ReplicaFailure'));
});

test('the flags of the workload and endpoints controllers are in --help with their defaults; bad values are refused', async () => {
  const { spawnSync } = await import('node:child_process');
  const { KEELSON } = await import('./harness.js');
  const help = spawnSync(process.execPath, [KEELSON, 'server', '--help'], { encoding: 'utf8' });
  for (const flag of ['concurrent-rc-syncs', 'concurrent-replicaset-syncs', 'concurrent-deployment-syncs', 'concurrent-endpoint-syncs', 'concurrent-service-endpoint-syncs']) {
    assert.match(help.stdout, new RegExp(`--${flag} int32\\s+The number of .*\\(default 5\\)`), flag);
  }
  assert.match(help.stdout, /--max-endpoints-per-slice int32\s+The maximum number of endpoints that will be added to an EndpointSlice.*\(default 100\)/);
  assert.match(help.stdout, /--endpoint-updates-batch-period duration\s+The length of endpoint updates batching period/);
  assert.match(help.stdout, /--endpointslice-updates-batch-period duration\s+The length of endpoint slice updates batching period/);
  for (const [arg, message] of [
    ['--concurrent-rc-syncs=0', '--concurrent-rc-syncs must be at least 1'],
    ['--concurrent-replicaset-syncs=-1', '--concurrent-replicaset-syncs must be at least 1'],
    ['--max-endpoints-per-slice=1001', '--max-endpoints-per-slice must be between 1 and 1000, was 1001'],
  ]) {
    const bad = spawnSync(process.execPath, [KEELSON, 'server', arg!, '--data-dir', '/nonexistent/x'], { encoding: 'utf8', timeout: 20_000 });
    assert.notEqual(bad.status, 0, arg);
    assert.ok(bad.stderr.includes(message!), `${arg}: ${bad.stderr}`);
  }
});
