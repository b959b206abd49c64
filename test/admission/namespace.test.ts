// NamespaceLifecycle, NamespaceExists and NamespaceAutoProvision with a cluster held in memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { namespaceAutoProvision, namespaceExists, namespaceLifecycle } from '../../src/apiserver/admission/namespace.js';
import { MemoryCluster, attrs, pod, rejection } from './fake.js';

function cluster() {
  const c = new MemoryCluster();
  c.namespace('default');
  c.namespace('kube-system');
  c.namespace('kube-public');
  c.namespace('kube-node-lease');
  c.namespace('apps');
  c.namespace('leaving', {}, { metadata: { name: 'leaving', deletionTimestamp: '2025-01-01T00:00:00Z' }, status: { phase: 'Terminating' } });
  return c;
}

test('NamespaceLifecycle: a create in a missing namespace is 404 namespaces "x" not found', async () => {
  const p = namespaceLifecycle(cluster());
  const err = await rejection(() => p.mutate!(attrs('pods', 'CREATE', { object: pod('web', 'nope') })));
  assert.equal(err.code, 404);
  assert.equal(err.reason, 'NotFound');
  assert.equal(err.message, 'namespaces "nope" not found');
  assert.deepEqual(err.details, { name: 'nope', kind: 'namespaces' });
});

test('NamespaceLifecycle: a create in a terminating namespace is refused with the NamespaceTerminating cause', async () => {
  const p = namespaceLifecycle(cluster());
  const err = await rejection(() => p.mutate!(attrs('pods', 'CREATE', { object: pod('web', 'leaving') })));
  assert.equal(err.code, 403);
  assert.equal(err.message, 'pods "web" is forbidden: unable to create new content in namespace leaving because it is being terminated');
  assert.deepEqual(err.toStatus().details, {
    name: 'web',
    kind: 'pods',
    causes: [{ reason: 'NamespaceTerminating', message: 'namespace leaving is being terminated', field: 'metadata.namespace' }],
  });
  // generateName: the name is the prefix, as Kubernetes names it before generation
  const err2 = await rejection(() => p.mutate!(attrs('pods', 'CREATE', { object: { metadata: { generateName: 'web-', namespace: 'leaving' } } })));
  assert.equal(err2.message, 'pods "web-" is forbidden: unable to create new content in namespace leaving because it is being terminated');
});

test('NamespaceLifecycle: updates and deletes in a terminating namespace pass; so do creates in an active one', async () => {
  const p = namespaceLifecycle(cluster());
  await p.mutate!(attrs('pods', 'UPDATE', { object: pod('web', 'leaving'), oldObject: pod('web', 'leaving') }));
  await p.mutate!(attrs('pods', 'DELETE', { namespace: 'leaving', name: 'web' }));
  await p.mutate!(attrs('pods', 'CREATE', { object: pod('web', 'apps') }));
  // cluster-scoped objects are not in a namespace
  await p.mutate!(attrs('nodes', 'CREATE', { object: { metadata: { name: 'n1' } } }));
});

test('NamespaceLifecycle: the immortal namespaces cannot be deleted; others can', async () => {
  const p = namespaceLifecycle(cluster());
  for (const ns of ['default', 'kube-system', 'kube-public']) {
    const err = await rejection(() => p.mutate!(attrs('namespaces', 'DELETE', { name: ns, namespace: ns })));
    assert.equal(err.code, 403);
    assert.equal(err.message, `namespaces "${ns}" is forbidden: this namespace may not be deleted`);
  }
  // kube-node-lease is not immortal in Kubernetes (the system namespaces controller recreates it)
  await p.mutate!(attrs('namespaces', 'DELETE', { name: 'kube-node-lease', namespace: 'kube-node-lease' }));
  await p.mutate!(attrs('namespaces', 'DELETE', { name: 'apps', namespace: 'apps' }));
  // a configurable set
  const q = namespaceLifecycle(cluster(), ['default', 'kube-system', 'kube-public', 'kube-node-lease']);
  const err = await rejection(() => q.mutate!(attrs('namespaces', 'DELETE', { name: 'kube-node-lease', namespace: 'kube-node-lease' })));
  assert.equal(err.message, 'namespaces "kube-node-lease" is forbidden: this namespace may not be deleted');
});

test('NamespaceLifecycle: a namespace that appears within the wait is found', async () => {
  const c = cluster();
  const p = namespaceLifecycle(c);
  setTimeout(() => c.namespace('late'), 10);
  await p.mutate!(attrs('pods', 'CREATE', { object: pod('web', 'late') }));
});

test('NamespaceLifecycle: local access reviews are admitted in any namespace', async () => {
  const p = namespaceLifecycle(cluster());
  await p.mutate!(
    attrs('pods', 'CREATE', {
      kind: { group: 'authorization.k8s.io', version: 'v1', kind: 'LocalSubjectAccessReview' },
      resource: { group: 'authorization.k8s.io', version: 'v1', resource: 'localsubjectaccessreviews' },
      namespace: 'nope',
      object: { metadata: { namespace: 'nope' } },
    }),
  );
});

test('NamespaceExists: any write into a missing namespace is 404', async () => {
  const p = namespaceExists(cluster());
  for (const op of ['CREATE', 'UPDATE', 'DELETE'] as const) {
    const err = await rejection(() => p.validate!(attrs('pods', op, { object: op === 'DELETE' ? undefined : pod('web', 'nope'), namespace: 'nope', name: 'web' })));
    assert.equal(err.message, 'namespaces "nope" not found');
  }
  await p.validate!(attrs('pods', 'CREATE', { object: pod('web', 'leaving') }));
});

test('NamespaceAutoProvision: creates the missing namespace, not on dry runs', async () => {
  const c = cluster();
  const p = namespaceAutoProvision(c, c);
  await p.mutate!(attrs('pods', 'CREATE', { object: pod('web', 'fresh'), dryRun: true }));
  assert.equal(c.get('', 'namespaces', '', 'fresh'), undefined);
  await p.mutate!(attrs('pods', 'CREATE', { object: pod('web', 'fresh') }));
  assert.equal(c.get('', 'namespaces', '', 'fresh').metadata.name, 'fresh');
  // existing: nothing to do
  await p.mutate!(attrs('pods', 'CREATE', { object: pod('web', 'fresh') }));
});
