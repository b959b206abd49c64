// NodeRestriction: what a kubelet may change.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nodeRestriction } from '../../src/apiserver/admission/noderestriction.js';
import { MemoryCluster, attrs, pod, rejection } from './fake.js';

const NODE1 = { name: 'system:node:node1', groups: ['system:nodes', 'system:authenticated'] };

function setup() {
  const c = new MemoryCluster();
  c.namespace('apps');
  c.add('', 'nodes', { metadata: { name: 'node1', uid: 'node1-uid', labels: { 'kubernetes.io/hostname': 'node1' } }, spec: {} });
  c.add('', 'pods', pod('mine', 'apps', { nodeName: 'node1' }));
  c.add('', 'pods', pod('theirs', 'apps', { nodeName: 'node2' }));
  return { c, p: nodeRestriction(c) };
}

const mirror = (spec: any = {}, owners?: any[]) =>
  pod('static-node1', 'apps', { nodeName: 'node1', ...spec }, {
    annotations: { 'kubernetes.io/config.mirror': 'hash' },
    ownerReferences: owners ?? [{ apiVersion: 'v1', kind: 'Node', name: 'node1', uid: 'node1-uid', controller: true }],
  });

test('NodeRestriction: other users are not restricted', async () => {
  const { p } = setup();
  await p.mutate!(attrs('pods', 'CREATE', { object: pod('x', 'apps') }));
});

test('NodeRestriction: a node creates only mirror pods bound to and owned by itself', async () => {
  const { p } = setup();
  await p.mutate!(attrs('pods', 'CREATE', { object: mirror(), user: NODE1 }));
  const msg = async (obj: any) => (await rejection(() => p.mutate!(attrs('pods', 'CREATE', { object: obj, user: NODE1 })))).message;
  assert.equal(await msg(pod('x', 'apps', { nodeName: 'node1' })), 'pods "x" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "node1" can only create mirror pods');
  assert.equal(await msg(mirror({ nodeName: 'node2' })), 'pods "static-node1" is forbidden: node "node1" can only create pods with spec.nodeName set to itself');
  assert.equal(await msg(mirror({}, [])), 'pods "static-node1" is forbidden: node "node1" can only create pods with an owner reference set to itself');
  assert.equal(
    await msg(mirror({}, [{ apiVersion: 'v1', kind: 'Node', name: 'node1', uid: 'other', controller: true }])),
    'pods "static-node1" is forbidden: node node1 UID mismatch: expected other got node1-uid',
  );
  assert.equal(await msg(mirror({ volumes: [{ name: 's', secret: { secretName: 'x' } }] })), 'pods "static-node1" is forbidden: node "node1" can not create pods that reference secrets');
  assert.equal(await msg(mirror({ volumes: [{ name: 'c', configMap: { name: 'x' } }] })), 'pods "static-node1" is forbidden: node "node1" can not create pods that reference configmaps');
  assert.equal(
    await msg(mirror({ volumes: [{ name: 'c', persistentVolumeClaim: { claimName: 'x' } }] })),
    'pods "static-node1" is forbidden: node "node1" can not create pods that reference persistentvolumeclaims',
  );
});

test('NodeRestriction: pods and their status, only when bound to the node', async () => {
  const { c, p } = setup();
  await p.mutate!(attrs('pods', 'DELETE', { namespace: 'apps', name: 'mine', user: NODE1 }));
  let err = await rejection(() => p.mutate!(attrs('pods', 'DELETE', { namespace: 'apps', name: 'theirs', user: NODE1 })));
  assert.equal(err.message, 'pods "theirs" is forbidden: node "node1" can only delete pods with spec.nodeName set to itself');
  err = await rejection(() => p.mutate!(attrs('pods', 'UPDATE', { object: c.get('', 'pods', 'apps', 'mine'), oldObject: c.get('', 'pods', 'apps', 'mine'), user: NODE1 })));
  assert.equal(err.message, 'pods "mine" is forbidden: unexpected operation "UPDATE", node "node1" can only create and delete mirror pods');
  const mine = c.get('', 'pods', 'apps', 'mine');
  await p.mutate!(attrs('pods', 'UPDATE', { subresource: 'status', object: { ...mine, status: { phase: 'Running' } }, oldObject: mine, user: NODE1 }));
  err = await rejection(() => p.mutate!(attrs('pods', 'UPDATE', { subresource: 'status', object: { ...mine, metadata: { ...mine.metadata, labels: { a: 'b' } } }, oldObject: mine, user: NODE1 })));
  assert.equal(err.message, 'pods "mine" is forbidden: node "node1" cannot update labels through pod status');
  const theirs = c.get('', 'pods', 'apps', 'theirs');
  err = await rejection(() => p.mutate!(attrs('pods', 'UPDATE', { subresource: 'status', object: theirs, oldObject: theirs, user: NODE1 })));
  assert.equal(err.message, 'pods "theirs" is forbidden: node "node1" can only update pod status for pods with spec.nodeName set to itself');
});

test('NodeRestriction: its own Node, without taints or restricted labels', async () => {
  const { c, p } = setup();
  const node = c.get('', 'nodes', '', 'node1');
  let err = await rejection(() => p.mutate!(attrs('nodes', 'UPDATE', { name: 'node2', object: { metadata: { name: 'node2' } }, oldObject: { metadata: { name: 'node2' } }, user: NODE1 })));
  assert.equal(err.message, 'nodes "node2" is forbidden: node "node1" is not allowed to modify node "node2"');
  const tainted = structuredClone(node);
  tainted.spec.taints = [{ key: 'x', effect: 'NoSchedule' }];
  err = await rejection(() => p.mutate!(attrs('nodes', 'UPDATE', { object: tainted, oldObject: node, user: NODE1 })));
  assert.equal(err.message, 'nodes "node1" is forbidden: node "node1" is not allowed to modify taints');
  const labeled = structuredClone(node);
  labeled.metadata.labels['node-role.kubernetes.io/control-plane'] = '';
  labeled.metadata.labels['node-restriction.kubernetes.io/secure'] = 'true';
  labeled.metadata.labels['topology.kubernetes.io/zone'] = 'a';
  labeled.metadata.labels['example.com/mine'] = 'ok';
  err = await rejection(() => p.mutate!(attrs('nodes', 'UPDATE', { object: labeled, oldObject: node, user: NODE1 })));
  assert.equal(err.message, 'nodes "node1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/secure, node-role.kubernetes.io/control-plane');
  const status = structuredClone(node);
  status.status = { conditions: [{ type: 'Ready', status: 'True' }] };
  await p.mutate!(attrs('nodes', 'UPDATE', { subresource: 'status', object: status, oldObject: node, user: NODE1 }));
  err = await rejection(() => p.mutate!(attrs('nodes', 'CREATE', { object: { metadata: { name: 'node1', labels: { 'node-role.kubernetes.io/worker': '' } } }, user: NODE1 })));
  assert.equal(err.message, 'nodes "node1" is forbidden: node "node1" is not allowed to set the following labels: node-role.kubernetes.io/worker');
});

test('NodeRestriction: leases in kube-node-lease named after the node; claims status only', async () => {
  const { p } = setup();
  const lease = (name: string, namespace: string) => ({ metadata: { name, namespace } });
  await p.mutate!(attrs('leases', 'CREATE', { object: lease('node1', 'kube-node-lease'), user: NODE1 }));
  let err = await rejection(() => p.mutate!(attrs('leases', 'CREATE', { object: lease('node2', 'kube-node-lease'), user: NODE1 })));
  assert.equal(err.message, 'leases.coordination.k8s.io "node2" is forbidden: can only access node lease with the same name as the requesting node');
  err = await rejection(() => p.mutate!(attrs('leases', 'UPDATE', { object: lease('node1', 'default'), name: 'node1', user: NODE1 })));
  assert.equal(err.message, 'leases.coordination.k8s.io "node1" is forbidden: can only access leases in the "kube-node-lease" system namespace');
  err = await rejection(() => p.mutate!(attrs('persistentvolumeclaims', 'UPDATE', { object: { metadata: { name: 'd', namespace: 'apps' } }, user: NODE1 })));
  assert.equal(err.message, 'persistentvolumeclaims "d" is forbidden: may only update PVC status');
});

test('NodeRestriction: a user in system:nodes without a node name is refused', async () => {
  const { p } = setup();
  const err = await rejection(() => p.mutate!(attrs('pods', 'CREATE', { object: pod('x', 'apps'), user: { name: 'system:node:', groups: ['system:nodes'] } })));
  assert.equal(err.message, 'pods "x" is forbidden: could not determine node from user "system:node:"');
});
