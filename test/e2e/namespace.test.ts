// Namespace deletion end to end: `keelson server` runs the namespace controller; kubectl deletes
// namespaces as a user would.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, NO_CA_PUBLISHER, until as untilWithin, type Cluster } from './harness.js';

/** the harness's polling with a minute to go: namespace deletion runs through the controller's queue */
const until = <T>(what: string, f: () => Promise<T | undefined | false>): Promise<T> => untilWithin(what, f, 60_000);

let c: Cluster;

before(async () => {
  c = await startCluster({ args: [NO_CA_PUBLISHER] });
});

after(async () => {
  await c?.stop();
});


function kubectl(args: string[], input?: string) {
  const r = c.kubectl(args, { input, timeoutMs: 120_000 });
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

// (the Deployment has no replicas: the test counts one pod of each namespace, the Pod below)
const CONTENT = (ns: string) => `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: ${ns}}
data: {a: "1"}
---
apiVersion: v1
kind: Secret
metadata: {name: token, namespace: ${ns}}
stringData: {t: secret}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: ${ns}}
spec:
  containers: [{name: web, image: nginx}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: ${ns}}
spec:
  replicas: 0
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: api, image: nginx}]
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: ${ns}}
spec:
  ports: [{port: 80}]
  selector: {app: api}
`;

const PATHS = (ns: string) => [
  `/api/v1/namespaces/${ns}/configmaps`,
  `/api/v1/namespaces/${ns}/secrets`,
  `/api/v1/namespaces/${ns}/pods`,
  `/api/v1/namespaces/${ns}/services`,
  `/apis/apps/v1/namespaces/${ns}/deployments`,
];

test('kubectl delete namespace returns once the namespace and everything in it are gone', async () => {
  kubectl(['create', 'namespace', 'doomed']);
  kubectl(['apply', '-f', '-'], CONTENT('doomed'));
  for (const p of PATHS('doomed')) assert.equal((await c.raw('GET', p)).json().items.length, 1, p);

  const out = kubectl(['delete', 'namespace', 'doomed']);
  assert.match(out, /namespace "doomed" deleted/);
  // kubectl waited for the namespace to be gone
  const get = c.kubectl(['get', 'namespace', 'doomed']);
  assert.notEqual(get.code, 0);
  assert.match(get.stderr, /namespaces "doomed" not found/);
  for (const p of PATHS('doomed')) assert.deepEqual((await c.raw('GET', p)).json().items, [], p);
});

test('an object with a finalizer keeps the namespace Terminating, with the conditions Kubernetes sets, until it is released', async () => {
  kubectl(['create', 'namespace', 'held']);
  kubectl(['apply', '-f', '-'], CONTENT('held'));
  kubectl(
    ['create', '-f', '-'],
    `
apiVersion: v1
kind: ConfigMap
metadata: {name: pinned, namespace: held, finalizers: [example.com/keep]}
`,
  );
  const del = kubectl(['delete', 'namespace', 'held', '--wait=false']);
  assert.match(del, /namespace "held" deleted/);

  const ns = await until('the remaining-content conditions', async () => {
    const o = (await c.raw('GET', '/api/v1/namespaces/held')).json();
    const cond = (t: string) => o.status?.conditions?.find((x: any) => x.type === t);
    return cond('NamespaceFinalizersRemaining')?.status === 'True' ? o : undefined;
  });
  assert.equal(ns.status.phase, 'Terminating');
  assert.ok(ns.metadata.deletionTimestamp);
  assert.deepEqual(ns.spec.finalizers, ['kubernetes']);
  const byType = Object.fromEntries(ns.status.conditions.map((x: any) => [x.type, x]));
  assert.deepEqual(Object.keys(byType).sort(), [
    'NamespaceContentRemaining',
    'NamespaceDeletionContentFailure',
    'NamespaceDeletionDiscoveryFailure',
    'NamespaceDeletionGroupVersionParsingFailure',
    'NamespaceFinalizersRemaining',
  ]);
  assert.deepEqual(
    { reason: byType.NamespaceFinalizersRemaining.reason, message: byType.NamespaceFinalizersRemaining.message },
    { reason: 'SomeFinalizersRemain', message: 'Some content in the namespace has finalizers remaining: example.com/keep in 1 resource instances' },
  );
  assert.deepEqual(
    { status: byType.NamespaceContentRemaining.status, reason: byType.NamespaceContentRemaining.reason, message: byType.NamespaceContentRemaining.message },
    { status: 'True', reason: 'SomeResourcesRemain', message: 'Some resources are remaining: configmaps. has 1 resource instances' },
  );
  for (const t of ['NamespaceDeletionDiscoveryFailure', 'NamespaceDeletionGroupVersionParsingFailure', 'NamespaceDeletionContentFailure']) {
    assert.equal(byType[t].status, 'False', t);
  }
  assert.equal(byType.NamespaceDeletionDiscoveryFailure.reason, 'ResourcesDiscovered');
  assert.equal(byType.NamespaceDeletionContentFailure.message, 'All content successfully deleted, may be waiting on finalization');

  // everything else is gone; the pinned object waits with a deletionTimestamp
  for (const p of PATHS('held').slice(1)) assert.deepEqual((await c.raw('GET', p)).json().items, [], p);
  const pinned = (await c.raw('GET', '/api/v1/namespaces/held/configmaps/pinned')).json();
  assert.ok(pinned.metadata.deletionTimestamp);

  // nothing new may be created in a terminating namespace
  const created = await c.raw('POST', '/api/v1/namespaces/held/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late' } } });
  assert.equal(created.status, 403);
  assert.equal(created.json().reason, 'Forbidden');
  assert.match(created.json().message, /unable to create new content in namespace held because it is being terminated/);
  const kc = c.kubectl(['-n', 'held', 'create', 'configmap', 'late2']);
  assert.notEqual(kc.code, 0);
  assert.match(kc.stderr, /forbidden: unable to create new content in namespace held because it is being terminated/);

  // still there a while later
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal((await c.raw('GET', '/api/v1/namespaces/held')).status, 200);

  // release the finalizer (PUT; PATCH comes later): the namespace goes away
  const released = await c.raw('PUT', '/api/v1/namespaces/held/configmaps/pinned', { body: { ...pinned, metadata: { ...pinned.metadata, finalizers: [] } } });
  assert.equal(released.status, 200, released.text);
  const wait = kubectl(['wait', '--for=delete', 'namespace/held', '--timeout=60s']);
  assert.match(wait, /deleted|condition met/);
  assert.equal((await c.raw('GET', '/api/v1/namespaces/held')).status, 404);
  assert.equal((await c.raw('GET', '/api/v1/namespaces/held/configmaps/pinned')).status, 404);
});

test('a namespace with other finalizers in spec.finalizers is left to them once the controller is done', async () => {
  // the controller removes only its own token
  kubectl(['create', 'namespace', 'shared']);
  const ns = (await c.raw('GET', '/api/v1/namespaces/shared')).json();
  const fin = await c.raw('PUT', '/api/v1/namespaces/shared/finalize?fieldManager=finalizer-test', {
    body: { ...ns, metadata: { ...ns.metadata, labels: { ...ns.metadata.labels, team: 'x' } }, spec: { finalizers: ['kubernetes', 'example.com/other'] } },
  });
  assert.equal(fin.status, 200, fin.text);
  // namespaceFinalizeStrategy keeps the status only: the sent metadata is written, and the writer recorded
  assert.equal(fin.json().metadata.labels.team, 'x');
  assert.ok(
    fin.json().metadata.managedFields.some((f: any) => f.manager === 'finalizer-test' && f.subresource === 'finalize'),
    JSON.stringify(fin.json().metadata.managedFields),
  );
  kubectl(['delete', 'namespace', 'shared', '--wait=false']);
  const left = await until('the kubernetes token removed', async () => {
    const o = (await c.raw('GET', '/api/v1/namespaces/shared')).json();
    return o.spec?.finalizers?.length === 1 ? o : undefined;
  });
  assert.deepEqual(left.spec.finalizers, ['example.com/other']);
  assert.equal(left.status.phase, 'Terminating');
  const done = await c.raw('PUT', '/api/v1/namespaces/shared/finalize', { body: { ...left, spec: { finalizers: [] } } });
  assert.equal(done.status, 200, done.text);
  await until('the namespace gone', async () => (await c.raw('GET', '/api/v1/namespaces/shared')).status === 404);
});
