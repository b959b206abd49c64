// The eviction subresource of a Pod (API-initiated eviction) against a real keelson: a pod that is
// not running goes at once; a running one asks its PodDisruptionBudget, whose status (kept by the
// disruption controller, written here by the test as that controller would) allows a disruption
// or refuses with 429; the budget records the disruption; the pod gets its DisruptionTarget
// condition; dry runs change nothing; and `kubectl drain` cordons a node and evicts its pods.
// Then the ephemeralcontainers subresource (`kubectl debug`: ephemeral containers are added, never
// changed or removed, and nothing else of the pod changes through it) and the GET of a pod's
// subresources whose object is the pod.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, type Cluster } from './harness.js';

let c: Cluster;
const NS = 'evict';

before(async () => {
  // the budgets' status is written here as the disruption controller would write it (that
  // controller is tested in disruption.test.ts): it is off, so that it does not overwrite it
  // (no scheduler: its status writes to the unscheduled pods would race the binding tests' resourceVersions)
  c = await startCluster({ args: ['--storage-backend=memory', '--controllers=*,-disruption-controller', '--disable-scheduler'] });
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
  // (the service account controller makes it too, and may be first: then this is 409)
  const sa = await c.raw('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } } });
  assert.ok(sa.status === 201 || (sa.status === 409 && sa.json().reason === 'AlreadyExists'), sa.text);
  assert.equal((await c.raw('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } } })).status, 201);
});
after(async () => {
  await c?.stop();
});

/** a pod on node n1 (so that its deletion is graceful and it stays to be looked at), Running and Ready unless told */
async function pod(name: string, labels: Record<string, string>, status: object = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] }): Promise<void> {
  const r = await c.raw('POST', `/api/v1/namespaces/${NS}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx' }] } } });
  assert.equal(r.status, 201, r.text);
  const s = await c.raw('PATCH', `/api/v1/namespaces/${NS}/pods/${name}/status`, { body: JSON.stringify({ status }), headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(s.status, 200, s.text);
}

async function pdb(name: string, app: string, status?: object): Promise<void> {
  const r = await c.raw('POST', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`, { body: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec: { minAvailable: 1, selector: { matchLabels: { app } } } } });
  assert.equal(r.status, 201, r.text);
  if (status) {
    const s = await c.raw('PATCH', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/${name}/status`, { body: JSON.stringify({ status }), headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(s.status, 200, s.text);
  }
}

const evict = (name: string, extra: { query?: string; body?: object; apiVersion?: string } = {}) =>
  c.raw('POST', `/api/v1/namespaces/${NS}/pods/${name}/eviction${extra.query ?? ''}`, {
    body: { apiVersion: extra.apiVersion ?? 'policy/v1', kind: 'Eviction', metadata: { name }, ...(extra.body ?? {}) },
  });

const get = async (path: string) => (await c.raw('GET', path)).json();

test('a pod that is not running is evicted at once: 201 and a Success Status; a missing pod is 404, a name that does not match 400', async () => {
  await pod('pending', { app: 'a' }, { phase: 'Pending' });
  await pdb('a-budget', 'a', { observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1, expectedPods: 1 });
  const r = await evict('pending');
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
  const p = await get(`/api/v1/namespaces/${NS}/pods/pending`);
  assert.ok(p.metadata.deletionTimestamp, 'deleted (gracefully: it is on a node)');
  assert.ok(p.status.conditions.some((x: any) => x.type === 'DisruptionTarget' && x.status === 'True' && x.reason === 'EvictionByEvictionAPI'));

  // the client's own preconditions: a stale resourceVersion or another uid is refused, the current one evicts
  await pod('pre', { app: 'pre' }, { phase: 'Pending' });
  const cur = await get(`/api/v1/namespaces/${NS}/pods/pre`);
  const stale = await evict('pre', { body: { deleteOptions: { preconditions: { resourceVersion: '1' } } } });
  assert.equal(stale.status, 409, stale.text);
  assert.equal(
    stale.json().message,
    `Operation cannot be fulfilled on Pod "pre": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${cur.metadata.resourceVersion}). The object might have been modified`,
  );
  const otherUID = await evict('pre', { body: { deleteOptions: { preconditions: { uid: 'not-the-uid' } } } });
  assert.equal(otherUID.status, 409, otherUID.text);
  assert.equal(
    otherUID.json().message,
    `Operation cannot be fulfilled on Pod "pre": the UID in the precondition (not-the-uid) does not match the UID in record (${cur.metadata.uid}). The object might have been deleted and then recreated`,
  );
  const current = await evict('pre', { body: { deleteOptions: { preconditions: { resourceVersion: cur.metadata.resourceVersion, uid: cur.metadata.uid } } } });
  assert.equal(current.status, 201, current.text);
  assert.ok((await get(`/api/v1/namespaces/${NS}/pods/pre`)).metadata.deletionTimestamp);

  const missing = await evict('nope');
  assert.equal(missing.status, 404);
  assert.equal(missing.json().message, 'pods "nope" not found');
  const mismatch = await c.raw('POST', `/api/v1/namespaces/${NS}/pods/pending/eviction`, { body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'other' } } });
  assert.equal(mismatch.status, 400);
  assert.equal(mismatch.json().message, 'name in URL does not match name in Eviction object');
});

test("a running pod asks its budget: 429 while the budget is unprocessed or has no disruption left; an allowed eviction takes one and names the pod", async () => {
  await pod('web-1', { app: 'web' });
  await pod('web-2', { app: 'web' });
  await pdb('web', 'web');
  // the disruption controller has not looked at the budget yet
  const unprocessed = await evict('web-1');
  assert.equal(unprocessed.status, 429, unprocessed.text);
  assert.equal(unprocessed.headers['retry-after'], '10');
  assert.deepEqual(unprocessed.json().details, { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget web is still being processed by the server.' }], retryAfterSeconds: 10 });

  // as the controller would write it: one disruption allowed
  const status = { observedGeneration: 1, disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 };
  const s = await c.raw('PATCH', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/web/status`, { body: JSON.stringify({ status }), headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(s.status, 200);

  // a dry run changes nothing
  const dry = await evict('web-1', { query: '?dryRun=All' });
  assert.equal(dry.status, 201, dry.text);
  assert.equal((await get(`/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/web`)).status.disruptionsAllowed, 1);
  assert.equal((await get(`/api/v1/namespaces/${NS}/pods/web-1`)).metadata.deletionTimestamp, undefined);
  // the request's dry run and the Eviction's must agree (propagateDryRun's words; 400 where Kubernetes answers 500)
  const mixed = await evict('web-1', { query: '?dryRun=All', body: { deleteOptions: { dryRun: ['Other'] } } });
  assert.equal(mixed.status, 400, mixed.text);
  assert.equal(mixed.json().message, 'Non-matching dry-run options in request and content: [All] and [Other]');

  const ok = await evict('web-1');
  assert.equal(ok.status, 201, ok.text);
  const budget = await get(`/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/web`);
  assert.equal(budget.status.disruptionsAllowed, 0);
  assert.deepEqual(Object.keys(budget.status.disruptedPods), ['web-1']);
  assert.ok(budget.status.conditions.some((x: any) => x.type === 'DisruptionAllowed' && x.status === 'False' && x.reason === 'InsufficientPods'));
  assert.ok((await get(`/api/v1/namespaces/${NS}/pods/web-1`)).metadata.deletionTimestamp);

  // no disruption left (and a policy/v1beta1 body is taken as well)
  const refused = await evict('web-2', { apiVersion: 'policy/v1beta1' });
  assert.equal(refused.status, 429, refused.text);
  assert.equal(refused.headers['retry-after'], undefined);
  assert.equal(refused.json().message, "Cannot evict pod as it would violate the pod's disruption budget.");
  assert.deepEqual(refused.json().details.causes, [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 1 healthy pods and has 2 currently' }]);
  assert.equal((await get(`/api/v1/namespaces/${NS}/pods/web-2`)).metadata.deletionTimestamp, undefined);
});

test('an unready pod goes without a disruption when the budget is healthy; two budgets are refused', async () => {
  await pod('db-1', { app: 'db' });
  await pod('db-2', { app: 'db' }, { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] });
  await pdb('db', 'db', { observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 2 });
  const unready = await evict('db-2');
  assert.equal(unready.status, 201, unready.text);
  assert.equal((await get(`/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/db`)).status.disruptionsAllowed, 0, 'no disruption taken');
  await pdb('db-too', 'db', { observedGeneration: 1, disruptionsAllowed: 1, currentHealthy: 1, desiredHealthy: 0, expectedPods: 2 });
  const two = await evict('db-1');
  // (EvictionREST returns the Status as its result: HTTP 201, the Status saying 500)
  assert.equal(two.status, 201);
  assert.equal(two.json().code, 500);
  assert.equal(two.json().status, 'Failure');
  assert.equal(two.json().message, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
});

test('binding: the Binding\'s uid and resourceVersion are preconditions; a pod with scheduling gates is not bound', async () => {
  const mk = async (name: string, spec: any = {}) => {
    const r = await c.raw('POST', `/api/v1/namespaces/${NS}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec } } });
    assert.equal(r.status, 201, r.text);
    return r.json();
  };
  const bind = (name: string, meta: any = {}) =>
    c.raw('POST', `/api/v1/namespaces/${NS}/pods/${name}/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name, ...meta }, target: { kind: 'Node', name: 'n1' } } });
  const p = await mk('bind-pre');
  const stale = await bind('bind-pre', { resourceVersion: '3' });
  assert.equal(stale.status, 409, stale.text);
  assert.equal(
    stale.json().message,
    `Operation cannot be fulfilled on pods "bind-pre": StorageError: invalid object, Code: 4, Key: /registry/pods/${NS}/bind-pre, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: ResourceVersion in precondition: 3, ResourceVersion in object meta: ${p.metadata.resourceVersion}`,
  );
  const uid = await bind('bind-pre', { uid: 'nope' });
  assert.equal(uid.status, 409, uid.text);
  assert.match(uid.json().message, /Precondition failed: UID in precondition: nope, UID in object meta: /);
  assert.equal((await get(`/api/v1/namespaces/${NS}/pods/bind-pre`)).spec.nodeName, undefined);
  assert.equal((await bind('bind-pre', { uid: p.metadata.uid, resourceVersion: p.metadata.resourceVersion })).status, 201);
  // BindingREST's words: a body naming another pod, a Binding naming none
  const other = await c.raw('POST', `/api/v1/namespaces/${NS}/pods/bind-pre/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'zz' }, target: { kind: 'Node', name: 'n1' } } });
  assert.equal(other.status, 400);
  assert.equal(other.json().message, 'name in URL does not match name in Binding object');
  const unnamed = await c.raw('POST', `/api/v1/namespaces/${NS}/bindings`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: {}, target: { kind: 'Node', name: 'n1' } } });
  assert.equal(unnamed.status, 400);
  assert.equal(unnamed.json().message, 'Name parameter required.');
  const gatedPod = await mk('bind-gated', { schedulingGates: [{ name: 'example.com/wait' }] });
  // the API server says why it waits (no scheduler runs here), with Go's zero times as null
  assert.deepEqual(gatedPod.status.conditions, [{ type: 'PodScheduled', status: 'False', lastProbeTime: null, lastTransitionTime: null, reason: 'SchedulingGated', message: 'Scheduling is blocked due to non-empty scheduling gates' }]);
  assert.match(c.kubectl(['get', 'pod', 'bind-gated', '-n', NS, '--no-headers']).stdout, /^bind-gated\s+0\/1\s+SchedulingGated\s/);
  const gated = await bind('bind-gated');
  assert.equal(gated.status, 409, gated.text);
  assert.equal(gated.json().message, 'Operation cannot be fulfilled on pods/binding "bind-gated": pod bind-gated has non-empty .spec.schedulingGates');
});

test('kubectl drain cordons the node and evicts its pods', async () => {
  assert.equal((await c.raw('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2' } } })).status, 201);
  for (const name of ['drain-1', 'drain-2']) {
    const r = await c.raw('POST', `/api/v1/namespaces/${NS}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: 'n2', containers: [{ name: 'c', image: 'nginx' }] } } });
    assert.equal(r.status, 201);
  }
  const r = await c.kubectlAsync(['drain', 'n2', '--force', '--grace-period=0', '--timeout=30s']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /pod\/drain-1 evicted/);
  assert.match(r.stdout, /pod\/drain-2 evicted/);
  assert.match(r.stdout, /node\/n2 drained/);
  assert.equal((await get('/api/v1/nodes/n2')).spec.unschedulable, true);
  for (const name of ['drain-1', 'drain-2']) assert.equal((await c.raw('GET', `/api/v1/namespaces/${NS}/pods/${name}`)).status, 404);
});

test("GET of a Pod's ephemeralcontainers and resize subresources answers the Pod, as kube-apiserver does", async () => {
  await pod('readme', { app: 'read' });
  for (const sub of ['ephemeralcontainers', 'resize']) {
    const r = await c.raw('GET', `/api/v1/namespaces/${NS}/pods/readme/${sub}`);
    assert.equal(r.status, 200, `${sub}: ${r.text}`);
    assert.equal(r.json().kind, 'Pod');
    assert.equal(r.json().metadata.name, 'readme');
  }
  const k = await c.kubectlAsync(['get', 'pod', 'readme', '-n', NS, '--subresource=resize', '-o', 'jsonpath={.metadata.name}']);
  assert.equal(k.code, 0, k.stderr);
  assert.equal(k.stdout, 'readme');
});

test('ephemeralcontainers: kubectl debug adds one (defaulted); existing ones may not be removed or changed; nothing else changes through it', async () => {
  await pod('dbg', { app: 'dbg' });
  const d = await c.kubectlAsync(['debug', 'dbg', '-n', NS, '--image=busybox:1.36', '--container=debugger', '--profile=general']);
  assert.equal(d.code, 0, d.stderr);
  const p = await get(`/api/v1/namespaces/${NS}/pods/dbg`);
  assert.equal(p.spec.ephemeralContainers.length, 1);
  assert.equal(p.spec.ephemeralContainers[0].name, 'debugger');
  assert.equal(p.spec.ephemeralContainers[0].terminationMessagePolicy, 'File', 'defaulted as a Pod body is');
  assert.ok(p.metadata.managedFields.some((m: any) => m.subresource === 'ephemeralcontainers'));

  const patch = (type: string, body: unknown) =>
    c.raw('PATCH', `/api/v1/namespaces/${NS}/pods/dbg/ephemeralcontainers`, { body: JSON.stringify(body), headers: { 'content-type': type } });
  const removed = await patch('application/json-patch+json', [{ op: 'remove', path: '/spec/ephemeralContainers/0' }]);
  assert.equal(removed.status, 422);
  assert.equal(removed.json().message, 'Pod "dbg" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may not be removed\n');
  const changed = await patch('application/json-patch+json', [{ op: 'replace', path: '/spec/ephemeralContainers/0/image', value: 'busybox:1.37' }]);
  assert.equal(changed.status, 422);
  assert.match(changed.json().message, /existing ephemeral containers "debugger" may not be changed/);
  const ports = await patch('application/strategic-merge-patch+json', { spec: { ephemeralContainers: [{ name: 'bad', image: 'x', ports: [{ containerPort: 80 }] }] } });
  assert.equal(ports.status, 422);
  // (a strategic merge puts the patch's new items first, as Kubernetes' does)
  assert.match(ports.json().message, /spec\.ephemeralContainers\[0\]\.ports: Forbidden: cannot be set for an Ephemeral Container/);
  // other fields of the pod do not change through the subresource
  const other = await patch('application/merge-patch+json', { metadata: { labels: { extra: 'x' } }, spec: { activeDeadlineSeconds: 5 } });
  assert.equal(other.status, 200, other.text);
  const after = await get(`/api/v1/namespaces/${NS}/pods/dbg`);
  assert.equal(after.metadata.labels.extra, undefined);
  assert.equal(after.spec.activeDeadlineSeconds, undefined);
  // PUT of the whole Pod adds a second one
  const cur = await get(`/api/v1/namespaces/${NS}/pods/dbg/ephemeralcontainers`);
  cur.spec.ephemeralContainers.push({ name: 'second', image: 'busybox:1.36' });
  const put = await c.raw('PUT', `/api/v1/namespaces/${NS}/pods/dbg/ephemeralcontainers`, { body: cur });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual(put.json().spec.ephemeralContainers.map((x: any) => x.name), ['debugger', 'second']);
});

test('resize: kubectl 1.33 and 1.32 change cpu and memory through it; nothing else changes; the rules of kube-apiserver refuse the rest', async () => {
  const r = await c.raw('POST', `/api/v1/namespaces/${NS}/pods`, {
    body: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'rz' },
      spec: {
        containers: [
          { name: 'c', image: 'nginx', resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } } },
          { name: 'd', image: 'nginx', resources: { requests: { cpu: '50m' } }, resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }] },
        ],
        initContainers: [{ name: 'init', image: 'busybox:1.36', resources: { requests: { cpu: '10m' } } }],
      },
    },
  });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json().status.qosClass, 'Burstable');
  const resources = async (i = 0) => (await get(`/api/v1/namespaces/${NS}/pods/rz`)).spec.containers[i].resources;

  // kubectl patch --subresource resize (1.33 and 1.32; older kubectl refuses the value itself)
  const k33 = c.kubectl(['patch', 'pod', 'rz', '-n', NS, '--subresource', 'resize', '-p', '{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"150m"}}}]}}'], { version: '1.33' });
  assert.equal(k33.code, 0, k33.stderr);
  assert.equal((await resources()).requests.cpu, '150m');
  const k32 = c.kubectl(['patch', 'pod', 'rz', '-n', NS, '--subresource=resize', '-p', '{"spec":{"containers":[{"name":"c","resources":{"limits":{"memory":"256Mi"}}}]}}'], { version: '1.32' });
  assert.equal(k32.code, 0, k32.stderr);
  assert.deepEqual(await resources(), { requests: { cpu: '150m', memory: '64Mi' }, limits: { cpu: '200m', memory: '256Mi' } });
  const p = await get(`/api/v1/namespaces/${NS}/pods/rz`);
  assert.ok(p.metadata.managedFields.some((m: any) => m.manager === 'kubectl-patch' && m.subresource === 'resize'));

  const patch = (body: unknown, type = 'application/strategic-merge-patch+json', query = '') =>
    c.raw('PATCH', `/api/v1/namespaces/${NS}/pods/rz/resize${query}`, { body: JSON.stringify(body), headers: { 'content-type': type } });
  // everything but the containers' resources is dropped, as kube-apiserver drops it
  const other = await patch({ metadata: { labels: { extra: 'x' } }, spec: { activeDeadlineSeconds: 5, containers: [{ name: 'c', image: 'httpd', resources: { requests: { cpu: '160m' } } }] } });
  assert.equal(other.status, 200, other.text);
  const after = await get(`/api/v1/namespaces/${NS}/pods/rz`);
  assert.equal(after.metadata.labels, undefined);
  assert.equal(after.spec.activeDeadlineSeconds, undefined);
  assert.equal(after.spec.containers[0].image, 'nginx');
  assert.equal(after.spec.containers[0].resources.requests.cpu, '160m');
  // a dry run answers the resized pod and keeps the stored one
  const dry = await patch({ spec: { containers: [{ name: 'c', resources: { requests: { cpu: '170m' } } }] } }, undefined, '?dryRun=All');
  assert.equal(dry.status, 200, dry.text);
  assert.equal(dry.json().spec.containers[0].resources.requests.cpu, '170m');
  assert.equal((await resources()).requests.cpu, '160m');

  const invalid = async (body: unknown, message: string, type?: string) => {
    const res = await patch(body, type);
    assert.equal(res.status, 422, res.text);
    assert.equal(res.json().reason, 'Invalid');
    assert.equal(res.json().message, `Pod "rz" is invalid: ${message}`);
  };
  await invalid({ spec: { containers: [{ name: 'c', resources: { limits: { memory: '100Mi' } } }] } }, 'spec.containers[0].resources.limits[memory]: Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer');
  await invalid({ spec: { containers: [{ name: 'c', resources: { limits: { 'ephemeral-storage': '1Gi' } } }] } }, 'spec: Forbidden: only cpu and memory resources are mutable');
  await invalid([{ op: 'remove', path: '/spec/containers/0/resources/limits/cpu' }], 'spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed', 'application/json-patch+json');
  // requests equal to limits would make a pod Guaranteed
  const q = await c.raw('POST', `/api/v1/namespaces/${NS}/pods`, {
    body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'rzq' }, spec: { containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } } }] } },
  });
  assert.equal(q.status, 201, q.text);
  const qos = await c.raw('PATCH', `/api/v1/namespaces/${NS}/pods/rzq/resize`, {
    body: JSON.stringify({ spec: { containers: [{ name: 'c', resources: { requests: { cpu: '0.2', memory: '128Mi' } } }] } }),
    headers: { 'content-type': 'application/strategic-merge-patch+json' },
  });
  assert.equal(qos.status, 422, qos.text);
  assert.equal(qos.json().message, 'Pod "rzq" is invalid: spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing');
  // a plain init container's resources stay; a container that restarts on a memory resize may lower its limit
  await invalid({ spec: { initContainers: [{ name: 'init', resources: { requests: { cpu: '20m' } } }] } }, 'spec: Forbidden: resources for non-sidecar init containers are immutable');
  const add = await patch({ spec: { containers: [{ name: 'd', resources: { limits: { memory: '512Mi' } } }] } });
  assert.equal(add.status, 200, add.text);
  // (the limit gave the request, which must come down with it)
  const lower = await patch({ spec: { containers: [{ name: 'd', resources: { requests: { memory: '256Mi' }, limits: { memory: '256Mi' } } }] } });
  assert.equal(lower.status, 200, lower.text);
  assert.deepEqual(lower.json().spec.containers[1].resources, { requests: { cpu: '50m', memory: '256Mi' }, limits: { memory: '256Mi' } });
  await invalid([{ op: 'add', path: '/spec/containers/-', value: { name: 'e', image: 'nginx' } }], 'spec.containers: Forbidden: pod updates may not add or remove containers', 'application/json-patch+json');
  // a node agent that reports a running container without its resources cannot resize
  const st = await c.raw('PATCH', `/api/v1/namespaces/${NS}/pods/rz/status`, {
    body: JSON.stringify({ status: { phase: 'Running', containerStatuses: [{ name: 'c', image: 'nginx', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: '2026-01-01T00:00:00Z' } } }] } }),
    headers: { 'content-type': 'application/merge-patch+json' },
  });
  assert.equal(st.status, 200, st.text);
  await invalid({ spec: { containers: [{ name: 'c', resources: { requests: { cpu: '180m' } } }] } }, 'spec: Forbidden: Pod running on node without support for resize');

  // PUT of the whole Pod (kubectl replace --subresource resize)
  const cur = await get(`/api/v1/namespaces/${NS}/pods/rz/resize`);
  cur.status.containerStatuses[0].resources = { requests: { cpu: '160m' } };
  const st2 = await c.raw('PUT', `/api/v1/namespaces/${NS}/pods/rz/status`, { body: cur });
  assert.equal(st2.status, 200, st2.text);
  const fresh = st2.json();
  fresh.spec.containers[0].resources.requests.cpu = '190m';
  fresh.metadata.annotations = { ignored: 'yes' };
  const put = await c.raw('PUT', `/api/v1/namespaces/${NS}/pods/rz/resize`, { body: fresh });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.json().spec.containers[0].resources.requests.cpu, '190m');
  assert.equal(put.json().metadata.annotations, undefined);
  const stale = await c.raw('PUT', `/api/v1/namespaces/${NS}/pods/rz/resize`, { body: fresh });
  assert.equal(stale.status, 409, stale.text);
});
