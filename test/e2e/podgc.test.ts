// The pod garbage collector against a real keelson: the embedded one deletes terminated pods
// beyond --terminated-pod-gc-threshold (evicted ones first, then the oldest); one run in this
// process with short periods (Kubernetes' 40 s quarantine would make the test a minute long)
// deletes the pods of a node that does not exist, after marking them Failed with the condition
// DisruptionTarget, and leaves the pods of nodes that exist.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, until, defaultServiceAccount, type Cluster } from './harness.js';
import { loadKubeconfig } from '../../src/client/kubeconfig.js';
import { RESTClient, restConfigFromConnection } from '../../src/client/rest.js';
import { PodGC } from '../../src/controllers/podgc.js';

let c: Cluster;
const PODS = '/api/v1/namespaces/default/pods';
const MERGE = { 'content-type': 'application/merge-patch+json' };

before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory', '--terminated-pod-gc-threshold=2'] });
  await defaultServiceAccount(c, 'default');
});
after(async () => {
  await c?.stop();
});

const pod = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { gc: 'test' } }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...extra } });

async function finish(name: string, phase: string, reason?: string): Promise<void> {
  const r = await c.raw('PATCH', `${PODS}/${name}/status`, { body: JSON.stringify({ status: { phase, ...(reason ? { reason } : {}) } }), headers: MERGE });
  assert.equal(r.status, 200, r.text);
}

test('terminated pods beyond --terminated-pod-gc-threshold are deleted, evicted first, then the oldest', async () => {
  for (const n of ['t1', 't2', 't3', 't4', 'live']) {
    const r = await c.raw('POST', PODS, { body: pod(n) });
    assert.equal(r.status, 201, r.text);
    await new Promise((r) => setTimeout(r, 1100)); // (creationTimestamp has seconds)
  }
  await finish('t1', 'Succeeded');
  await finish('t2', 'Failed');
  await finish('t3', 'Succeeded');
  await finish('t4', 'Failed', 'Evicted');
  // (the sweeps run every 20 s)
  const left = await until('two terminated pods left', async () => {
    const names = (await c.raw('GET', `${PODS}?labelSelector=gc%3Dtest`)).json().items.map((p: any) => p.metadata.name).sort();
    return names.length === 3 ? names : undefined;
  }, 45_000);
  assert.deepEqual(left, ['live', 't2', 't3']);
});

test('the pods of a node that is gone are marked Failed with DisruptionTarget and deleted; those of a node that exists stay', async () => {
  const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'here' } };
  assert.equal((await c.raw('POST', '/api/v1/nodes', { body: node })).status, 201);
  assert.equal((await c.raw('POST', PODS, { body: pod('orphan', { nodeName: 'ghost', terminationGracePeriodSeconds: 30 }) })).status, 201);
  assert.equal((await c.raw('POST', PODS, { body: pod('homed', { nodeName: 'here' }) })).status, 201);
  // a finalizer keeps the orphan readable after its delete, to see what was written before it
  const fin = await c.raw('PATCH', `${PODS}/orphan`, { body: JSON.stringify({ metadata: { finalizers: ['test.keelson.dev/hold'] } }), headers: MERGE });
  assert.equal(fin.status, 200, fin.text);

  const rest = restConfigFromConnection(await loadKubeconfig({ explicitPath: c.kubeconfig }));
  const client = new RESTClient(rest);
  const abort = new AbortController();
  const gc = new PodGC({ client, threshold: 0, periodMs: 200, quarantineMs: 500 });
  const running = gc.run(abort.signal);
  try {
    const gone = await until('the orphan deleted', async () => {
      const p = (await c.raw('GET', `${PODS}/orphan`)).json();
      return p.metadata?.deletionTimestamp ? p : undefined;
    }, 20_000);
    assert.equal(gone.status.phase, 'Failed');
    const cond = gone.status.conditions.find((k: any) => k.type === 'DisruptionTarget');
    assert.deepEqual({ status: cond.status, reason: cond.reason, message: cond.message }, { status: 'True', reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists' });
    assert.equal(gone.metadata.deletionGracePeriodSeconds, 0);
    const homed = await c.raw('GET', `${PODS}/homed`);
    assert.equal(homed.status, 200);
    assert.ok(!homed.json().metadata.deletionTimestamp);
  } finally {
    abort.abort();
    await running;
    client.close();
  }
  await c.raw('PATCH', `${PODS}/orphan`, { body: JSON.stringify({ metadata: { finalizers: null } }), headers: MERGE });
});
