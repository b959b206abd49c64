// The disruption controller of the embedded controller manager, against a real keelson: it keeps
// each PodDisruptionBudget's status from the pods its selector matches (Ready and not being
// deleted) and from their controllers' replicas, so that the eviction subresource and
// `kubectl drain` allow exactly the disruptions the budget leaves.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, until, type Cluster } from './harness.js';

let c: Cluster;
const NS = 'dis';

before(async () => {
  // (without the Job controller: a test gives a pod a controller reference to a Job without the
  // Job's selector labels, which the Job controller would release)
  c = await startCluster({ args: ['--storage-backend=memory', '--controllers=*,-job-controller'] });
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
  // (the service account controller makes it too, and may be first: then this is 409)
  const sa = await c.raw('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } } });
  assert.ok(sa.status === 201 || sa.status === 409, sa.text);
  assert.equal((await c.raw('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } } })).status, 201);
});
after(async () => {
  await c?.stop();
});

const PDBS = `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`;

/** a pod on n1, Ready when asked */
async function pod(name: string, labels: Record<string, string>, ready: boolean, owner?: object): Promise<void> {
  const r = await c.raw('POST', `/api/v1/namespaces/${NS}/pods`, {
    body: { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels, ...(owner ? { ownerReferences: [owner] } : {}) }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx' }] } },
  });
  assert.equal(r.status, 201, r.text);
  if (ready) await setReady(name, true);
}

async function setReady(name: string, ready: boolean): Promise<void> {
  const status = { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] };
  const s = await c.raw('PATCH', `/api/v1/namespaces/${NS}/pods/${name}/status`, { body: JSON.stringify({ status }), headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(s.status, 200, s.text);
}

async function budget(name: string, spec: object): Promise<void> {
  const r = await c.raw('POST', PDBS, { body: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec } });
  assert.equal(r.status, 201, r.text);
}

/** the budget's status once it has what `want` names (undefined: the field is absent) */
async function statusOf(name: string, want: Record<string, unknown>): Promise<any> {
  let last: any;
  try {
    return await until(`${name} status ${JSON.stringify(want)}`, async () => {
      last = (await c.raw('GET', `${PDBS}/${name}`)).json().status;
      return Object.entries(want).every(([k, v]) => JSON.stringify(last?.[k]) === JSON.stringify(v)) ? last : undefined;
    }, 15_000);
  } catch (e) {
    throw new Error(`${(e as Error).message}; last status: ${JSON.stringify(last)}`);
  }
}

const condition = (s: any) => s.conditions.find((x: any) => x.type === 'DisruptionAllowed');

test('minAvailable: the matching Ready pods against the number; evictions take the disruptions and the controller counts them down', async () => {
  await budget('web', { minAvailable: 1, selector: { matchLabels: { app: 'web' } } });
  const empty = await statusOf('web', { expectedPods: 0, currentHealthy: 0, desiredHealthy: 1, disruptionsAllowed: 0, observedGeneration: 1 });
  assert.equal(condition(empty).status, 'False');
  assert.equal(condition(empty).reason, 'InsufficientPods');
  assert.ok(condition(empty).lastTransitionTime);

  await pod('web-1', { app: 'web' }, true);
  await pod('web-2', { app: 'web' }, true);
  await pod('web-3', { app: 'web' }, false);
  await pod('other', { app: 'other' }, true);
  const s = await statusOf('web', { expectedPods: 3, currentHealthy: 2, desiredHealthy: 1, disruptionsAllowed: 1 });
  assert.equal(condition(s).status, 'True');
  assert.equal(condition(s).reason, 'SufficientPods');

  // the eviction takes the one disruption; the pod, deleted gracefully, no longer counts
  const first = await c.raw('POST', `/api/v1/namespaces/${NS}/pods/web-1/eviction`, { body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-1' } } });
  assert.equal(first.status, 201, first.text);
  // (the evicted pod, being deleted, leaves disruptedPods: the map is empty, and omitted)
  await statusOf('web', { currentHealthy: 1, disruptionsAllowed: 0, disruptedPods: undefined });
  const second = await c.raw('POST', `/api/v1/namespaces/${NS}/pods/web-2/eviction`, { body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-2' } } });
  assert.equal(second.status, 429, second.text);
  assert.match(second.json().message, /Cannot evict pod as it would violate the pod's disruption budget/);

  // a pod becoming Ready gives one back
  await setReady('web-3', true);
  await statusOf('web', { currentHealthy: 2, disruptionsAllowed: 1 });
  // a new selector is a new set of pods
  const cur = (await c.raw('GET', `${PDBS}/web`)).json();
  cur.spec.selector = { matchExpressions: [{ key: 'app', operator: 'In', values: ['other'] }] };
  assert.equal((await c.raw('PUT', `${PDBS}/web`, { body: cur })).status, 200);
  await statusOf('web', { expectedPods: 1, currentHealthy: 1, disruptionsAllowed: 0, observedGeneration: 2 });
});

test("maxUnavailable and percentages count the replicas of the pods' controllers (a Deployment over its ReplicaSet)", async () => {
  const d = await c.raw('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, {
    body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'api' }, spec: { replicas: 4, selector: { matchLabels: { app: 'api' } }, template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } },
  });
  assert.equal(d.status, 201, d.text);
  const dep = d.json();
  const rs = await c.raw('POST', `/apis/apps/v1/namespaces/${NS}/replicasets`, {
    body: {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      // (labelled as the Deployment's selector wants: else the deployment controller releases it)
      metadata: { name: 'api-1', labels: { app: 'api' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'api', uid: dep.metadata.uid, controller: true }] },
      spec: { replicas: 4, selector: { matchLabels: { app: 'api' } }, template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    },
  });
  assert.equal(rs.status, 201, rs.text);
  const owner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'api-1', uid: rs.json().metadata.uid, controller: true };
  for (const n of ['api-a', 'api-b', 'api-c']) await pod(n, { app: 'api' }, true, owner);
  await budget('api-max', { maxUnavailable: 1, selector: { matchLabels: { app: 'api' } } });
  await budget('api-pct', { minAvailable: '50%', selector: { matchLabels: { app: 'api' } } });
  // 4 replicas expected, 3 healthy: maxUnavailable 1 leaves 3 desired, so nothing may go
  await statusOf('api-max', { expectedPods: 4, desiredHealthy: 3, currentHealthy: 3, disruptionsAllowed: 0 });
  // 50% of 4 is 2: one may go
  await statusOf('api-pct', { expectedPods: 4, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 });
  await pod('api-d', { app: 'api' }, true, owner);
  await statusOf('api-max', { currentHealthy: 4, disruptionsAllowed: 1 });
});

test("a pod of a custom resource counts that resource's scale subresource; an unknown kind, or one without scale, makes the budget allow nothing, with Kubernetes' reason", async () => {
  const crd = await c.raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    body: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'pools.example.com' },
      spec: {
        group: 'example.com',
        names: { plural: 'pools', singular: 'pool', kind: 'Pool' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { replicas: { type: 'integer' } } }, status: { type: 'object', properties: { replicas: { type: 'integer' } } } } } },
            subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
          },
        ],
      },
    },
  });
  assert.equal(crd.status, 201, crd.text);
  const made = await until('the Pool resource', async () => {
    const r = await c.raw('POST', `/apis/example.com/v1/namespaces/${NS}/pools`, { body: { apiVersion: 'example.com/v1', kind: 'Pool', metadata: { name: 'p' }, spec: { replicas: 5 } } });
    return r.status === 201 ? r.json() : undefined;
  });
  const owner = { apiVersion: 'example.com/v1', kind: 'Pool', name: 'p', uid: made.metadata.uid, controller: true };
  for (const n of ['pool-a', 'pool-b']) await pod(n, { app: 'pool' }, true, owner);
  await budget('pool', { maxUnavailable: '20%', selector: { matchLabels: { app: 'pool' } } });
  // 5 expected (the Pool's scale), 20% of 5 rounds up to 1 unavailable: 4 desired, 2 healthy
  await statusOf('pool', { expectedPods: 5, desiredHealthy: 4, currentHealthy: 2, disruptionsAllowed: 0 });

  const failed = async (name: string, app: string, ref: object, message: string) => {
    await pod(`${name}-1`, { app }, true, ref);
    await budget(name, { maxUnavailable: '50%', selector: { matchLabels: { app } } });
    const s = await until(`SyncFailed of ${name}`, async () => {
      const st = (await c.raw('GET', `${PDBS}/${name}`)).json().status;
      return st?.conditions?.some((x: any) => x.reason === 'SyncFailed') ? st : undefined;
    });
    assert.equal(s.disruptionsAllowed, 0);
    assert.equal(condition(s).status, 'False');
    assert.equal(condition(s).message, message);
  };
  await failed('widget', 'widget', { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: '7b9b5cf1-8a52-4a3b-9b7e-3f3c1d6b0c11', controller: true }, 'no matches for kind "Widget" in version "example.com/v1"');
  const job = await c.raw('POST', `/apis/batch/v1/namespaces/${NS}/jobs`, {
    body: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } },
  });
  assert.equal(job.status, 201, job.text);
  await failed('job', 'job', { apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: job.json().metadata.uid, controller: true }, 'jobs.batch does not implement the scale subresource');
  // a controller that is gone: no controller at all
  await failed('gone', 'gone', { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'nope', uid: '0b2e8f0e-3c55-4f57-9d4e-6f2b8b6b5a10', controller: true }, 'found no controllers for pod "gone-1"');
});

test('kubectl drain waits for nothing it may not evict: with a budget that allows one, one pod goes and the drain retries the other', async () => {
  assert.equal((await c.raw('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2' } } })).status, 201);
  for (const name of ['db-1', 'db-2']) {
    const r = await c.raw('POST', `/api/v1/namespaces/${NS}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'db' } }, spec: { nodeName: 'n2', containers: [{ name: 'c', image: 'nginx' }] } } });
    assert.equal(r.status, 201);
    await setReady(name, true);
  }
  await budget('db', { minAvailable: 1, selector: { matchLabels: { app: 'db' } } });
  await statusOf('db', { currentHealthy: 2, disruptionsAllowed: 1 });
  // the budget lets one pod go: the other is refused until the timeout
  const r = await c.kubectlAsync(['drain', 'n2', '--force', '--grace-period=0', '--timeout=4s']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr + r.stdout, /Cannot evict pod as it would violate the pod's disruption budget/);
  const gone = await Promise.all(['db-1', 'db-2'].map(async (n) => (await c.raw('GET', `/api/v1/namespaces/${NS}/pods/${n}`)).status === 404));
  assert.equal(gone.filter(Boolean).length, 1, 'exactly one pod evicted');
});

test('the controller writes kube-controller-manager\'s events on a budget: NoPods, UnmanagedPods (a repeat raises the count)', async () => {
  await budget('ev-none', { minAvailable: 1, selector: { matchLabels: { app: 'ev-none' } } });
  await pod('ev-bare', { app: 'ev-bare' }, true);
  await budget('ev-pct', { minAvailable: '50%', selector: { matchLabels: { app: 'ev-bare' } } });
  const events = async () => (await c.raw('GET', `/api/v1/namespaces/${NS}/events`)).json().items as any[];
  const none = await until('NoPods', async () => (await events()).find((e) => e.reason === 'NoPods' && e.involvedObject.name === 'ev-none'));
  assert.deepEqual(
    { type: none.type, message: none.message, kind: none.involvedObject.kind, apiVersion: none.involvedObject.apiVersion, source: none.source },
    { type: 'Normal', message: 'No matching pods found', kind: 'PodDisruptionBudget', apiVersion: 'policy/v1', source: { component: 'controllermanager' } },
  );
  const unmanaged = await until('UnmanagedPods', async () => (await events()).find((e) => e.reason === 'UnmanagedPods' && e.involvedObject.name === 'ev-pct'));
  assert.equal(unmanaged.type, 'Warning');
  assert.equal(
    unmanaged.message,
    'Pods selected by this PodDisruptionBudget (selector: &LabelSelector{MatchLabels:map[string]string{app: ev-bare,},MatchExpressions:[]LabelSelectorRequirement{},}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.',
  );
  // another sync of the budget: the same event counted again, not written twice
  await setReady('ev-bare', false);
  await until('counted again', async () => (await events()).find((e) => e.reason === 'UnmanagedPods' && e.involvedObject.name === 'ev-pct' && e.count >= 2));
  assert.equal((await events()).filter((e) => e.reason === 'UnmanagedPods' && e.involvedObject.name === 'ev-pct').length, 1);
});
