// The Node authorizer: a kubelet reaches its Node, the pods bound to it, and what those pods use.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeAuthorizer, NodeGraph, nodeIdentity, podSecretNames, podConfigMapNames, podClaimNames } from '../../src/apiserver/rbac/node.js';
import { nodeRules } from '../../src/apiserver/rbac/policy.js';
import { RBACAuthorizer, UnionAuthorizer } from '../../src/apiserver/rbac/authorizers.js';
import { forbiddenError } from '../../src/apiserver/rbac/attributes.js';
import { bootstrapResolver, ra, user } from './helpers.js';

const node = (n: string) => ({ name: `system:node:${n}`, groups: ['system:nodes', 'system:authenticated'] });

function pod(ns: string, name: string, nodeName: string, spec: any = {}, annotations?: Record<string, string>): any {
  return { metadata: { namespace: ns, name, ...(annotations ? { annotations } : {}) }, spec: { nodeName, containers: [{ name: 'c', image: 'i' }], ...spec } };
}

const WEB = {
  serviceAccountName: 'web-sa',
  imagePullSecrets: [{ name: 'pull' }],
  containers: [
    {
      name: 'c',
      image: 'i',
      env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'k' } } }, { name: 'B', valueFrom: { configMapKeyRef: { name: 'env-cm', key: 'k' } } }],
      envFrom: [{ secretRef: { name: 'from-secret' } }, { configMapRef: { name: 'from-cm' } }],
    },
  ],
  initContainers: [{ name: 'i', image: 'i', env: [{ name: 'C', valueFrom: { secretKeyRef: { name: 'init-secret', key: 'k' } } }] }],
  volumes: [
    { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
    { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } },
    { name: 'cfg', configMap: { name: 'vol-cm' } },
    { name: 'sec', secret: { secretName: 'vol-secret' } },
    { name: 'proj', projected: { sources: [{ secret: { name: 'proj-secret' } }, { configMap: { name: 'proj-cm' } }] } },
  ],
};

function setup() {
  const g = new NodeGraph();
  g.setPod(pod('default', 'web', 'n1', WEB));
  g.setPod(pod('default', 'other', 'n2', { volumes: [{ name: 's', secret: { secretName: 'n2-secret' } }] }));
  g.setPod(pod('default', 'pending', '', { volumes: [{ name: 's', secret: { secretName: 'pending-secret' } }] }));
  g.setPod(pod('default', 'mirror', 'n1', { volumes: [{ name: 's', secret: { secretName: 'mirror-secret' } }] }, { 'kubernetes.io/config.mirror': 'x' }));
  g.setPV({ metadata: { name: 'pv1' }, spec: { claimRef: { namespace: 'default', name: 'data' }, csi: { driver: 'd', volumeHandle: 'h', nodePublishSecretRef: { name: 'csi-secret', namespace: 'storage' }, controllerPublishSecretRef: { name: 'ctl-secret', namespace: 'storage' } } } });
  g.setVolumeAttachment({ metadata: { name: 'va1' }, spec: { nodeName: 'n1', attacher: 'd', source: { persistentVolumeName: 'pv1' } } });
  const na = new NodeAuthorizer(g, { nodeRules: nodeRules() });
  return { g, na };
}

test('identity: system:node:<name> in system:nodes', () => {
  assert.deepEqual(nodeIdentity(node('n1')), { isNode: true, nodeName: 'n1' });
  assert.deepEqual(nodeIdentity({ name: 'system:node:n1', groups: [] }), { isNode: false, nodeName: '' });
  assert.deepEqual(nodeIdentity(user('n1', 'system:nodes')), { isNode: false, nodeName: '' });
  const { na } = setup();
  assert.deepEqual(na.authorize(ra({ name: 'system:node:', groups: ['system:nodes'] }, 'get', 'pods')), { decision: 'noOpinion', reason: 'unknown node for user "system:node:"' });
  assert.deepEqual(na.authorize(ra(user('alice'), 'get', 'secrets', { ns: 'default', name: 'pull' })), { decision: 'noOpinion', reason: '' });
});

test('what a pod references', () => {
  const p = pod('default', 'web', 'n1', WEB);
  assert.deepEqual(podSecretNames(p).sort(), ['env-secret', 'from-secret', 'init-secret', 'proj-secret', 'pull', 'vol-secret']);
  assert.deepEqual(podConfigMapNames(p).sort(), ['env-cm', 'from-cm', 'proj-cm', 'vol-cm']);
  assert.deepEqual(podClaimNames(p).sort(), ['data', 'web-scratch']);
});

test('secrets and config maps of pods bound to the node, and no others', () => {
  const { na } = setup();
  const n1 = node('n1');
  for (const s of ['pull', 'env-secret', 'from-secret', 'init-secret', 'vol-secret', 'proj-secret']) {
    assert.equal(na.authorize(ra(n1, 'get', 'secrets', { ns: 'default', name: s })).decision, 'allow', s);
  }
  assert.equal(na.authorize(ra(n1, 'watch', 'configmaps', { ns: 'default', name: 'vol-cm' })).decision, 'allow');
  assert.deepEqual(na.authorize(ra(n1, 'get', 'secrets', { ns: 'default', name: 'n2-secret' })), { decision: 'noOpinion', reason: "no relationship found between node 'n1' and this object" });
  assert.equal(na.authorize(ra(node('n2'), 'get', 'secrets', { ns: 'default', name: 'n2-secret' })).decision, 'allow');
  assert.equal(na.authorize(ra(n1, 'get', 'secrets', { ns: 'default', name: 'pending-secret' })).decision, 'noOpinion', 'unbound pods give nothing');
  assert.equal(na.authorize(ra(n1, 'get', 'secrets', { ns: 'default', name: 'mirror-secret' })).decision, 'noOpinion', 'mirror pods give nothing');
  assert.equal(na.authorize(ra(n1, 'get', 'secrets', { ns: 'other', name: 'pull' })).decision, 'noOpinion', 'the namespace counts');
  assert.deepEqual(na.authorize(ra(n1, 'list', 'secrets', { ns: 'default' })), { decision: 'noOpinion', reason: 'No Object name found' });
  assert.deepEqual(na.authorize(ra(n1, 'update', 'secrets', { ns: 'default', name: 'pull' })), { decision: 'noOpinion', reason: 'can only read resources of this type' });
  assert.deepEqual(na.authorize(ra(n1, 'get', 'secrets', { name: 'pull' })), { decision: 'noOpinion', reason: 'can only read namespaced object of this type' });
  assert.deepEqual(na.authorize(ra(node('n9'), 'get', 'secrets', { ns: 'default', name: 'pull' })), { decision: 'noOpinion', reason: "no relationship found between node 'n9' and this object" });
});

test('claims, volumes, volume attachments, their secrets, service account tokens', () => {
  const { na } = setup();
  const n1 = node('n1');
  assert.equal(na.authorize(ra(n1, 'get', 'persistentvolumeclaims', { ns: 'default', name: 'data' })).decision, 'allow');
  assert.equal(na.authorize(ra(n1, 'get', 'persistentvolumeclaims', { ns: 'default', name: 'web-scratch' })).decision, 'allow');
  assert.deepEqual(na.authorize(ra(n1, 'list', 'persistentvolumeclaims', { ns: 'default' })), { decision: 'noOpinion', reason: 'can only get individual resources of this type' });
  assert.equal(na.authorize(ra(n1, 'patch', 'persistentvolumeclaims', { ns: 'default', name: 'data', sub: 'status' })).decision, 'allow');
  assert.equal(na.authorize(ra(n1, 'get', 'persistentvolumes', { name: 'pv1' })).decision, 'allow');
  assert.equal(na.authorize(ra(node('n2'), 'get', 'persistentvolumes', { name: 'pv1' })).decision, 'noOpinion');
  assert.equal(na.authorize(ra(n1, 'get', 'secrets', { ns: 'storage', name: 'csi-secret' })).decision, 'allow', 'a node-visible secret of a volume');
  assert.equal(na.authorize(ra(n1, 'get', 'secrets', { ns: 'storage', name: 'ctl-secret' })).decision, 'noOpinion', 'the controller-publish secret is not for nodes');
  assert.equal(na.authorize(ra(n1, 'get', 'volumeattachments', { group: 'storage.k8s.io', name: 'va1' })).decision, 'allow');
  assert.equal(na.authorize(ra(node('n2'), 'get', 'volumeattachments', { group: 'storage.k8s.io', name: 'va1' })).decision, 'noOpinion');
  assert.equal(na.authorize(ra(n1, 'create', 'serviceaccounts', { ns: 'default', name: 'web-sa', sub: 'token' })).decision, 'allow');
  assert.deepEqual(na.authorize(ra(n1, 'create', 'serviceaccounts', { ns: 'default', name: 'default', sub: 'token' })), { decision: 'noOpinion', reason: "no relationship found between node 'n1' and this object" });
  assert.deepEqual(na.authorize(ra(n1, 'get', 'serviceaccounts', { ns: 'default', name: 'web-sa' })), { decision: 'noOpinion', reason: 'can only create tokens for individual service accounts' });
});

test('pods: get bound pods, list/watch with spec.nodeName, mirror pods, status, evictions', () => {
  const { na } = setup();
  const n1 = node('n1');
  assert.equal(na.authorize(ra(n1, 'get', 'pods', { ns: 'default', name: 'web' })).decision, 'allow');
  assert.deepEqual(na.authorize(ra(n1, 'get', 'pods', { ns: 'default', name: 'other' })), { decision: 'noOpinion', reason: "no relationship found between node 'n1' and this object" });
  assert.deepEqual(na.authorize(ra(n1, 'list', 'pods')), { decision: 'noOpinion', reason: 'can only list/watch pods with spec.nodeName field selector' });
  assert.equal(na.authorize({ ...ra(n1, 'watch', 'pods'), fieldSelector: [{ field: 'spec.nodeName', op: '=', value: 'n1' }] } as any).decision, 'allow');
  assert.equal(na.authorize({ ...ra(n1, 'watch', 'pods'), fieldSelector: [{ field: 'spec.nodeName', op: '=', value: 'n2' }] } as any).decision, 'noOpinion');
  assert.equal(na.authorize(ra(n1, 'create', 'pods', { ns: 'default' })).decision, 'allow');
  assert.equal(na.authorize(ra(n1, 'delete', 'pods', { ns: 'default', name: 'web' })).decision, 'allow');
  assert.equal(na.authorize(ra(n1, 'patch', 'pods', { ns: 'default', name: 'web', sub: 'status' })).decision, 'allow');
  assert.equal(na.authorize(ra(n1, 'create', 'pods', { ns: 'default', name: 'web', sub: 'eviction' })).decision, 'allow');
  assert.deepEqual(na.authorize(ra(n1, 'update', 'pods', { ns: 'default', name: 'web' })), { decision: 'noOpinion', reason: '' });
  assert.equal(na.authorize(ra(n1, 'get', 'pods', { ns: 'default', name: 'web', sub: 'log' })).decision, 'noOpinion');
});

test('nodes, leases, CSINodes and the static node rules', () => {
  const { na } = setup();
  const n1 = node('n1');
  assert.equal(na.authorize(ra(n1, 'get', 'nodes', { name: 'n1' })).decision, 'allow');
  assert.deepEqual(na.authorize(ra(n1, 'get', 'nodes', { name: 'n2' })), { decision: 'noOpinion', reason: "node 'n1' cannot read 'n2', only its own Node object" });
  assert.deepEqual(na.authorize(ra(n1, 'list', 'nodes')), { decision: 'noOpinion', reason: "node 'n1' cannot read all nodes, only its own Node object" });
  assert.equal(na.authorize(ra(n1, 'create', 'nodes')).decision, 'allow');
  assert.equal(na.authorize(ra(n1, 'patch', 'nodes', { name: 'n1', sub: 'status' })).decision, 'allow');
  assert.equal(na.authorize(ra(n1, 'delete', 'nodes', { name: 'n1' })).decision, 'noOpinion');
  const lease = (verb: string, ns: string, name: string) => na.authorize(ra(n1, verb, 'leases', { group: 'coordination.k8s.io', ns, name }));
  assert.equal(lease('update', 'kube-node-lease', 'n1').decision, 'allow');
  assert.equal(lease('create', 'kube-node-lease', '').decision, 'allow');
  assert.deepEqual(lease('update', 'kube-node-lease', 'n2'), { decision: 'noOpinion', reason: 'can only access node lease with the same name as the requesting node' });
  assert.deepEqual(lease('get', 'default', 'n1'), { decision: 'noOpinion', reason: 'can only access leases in the "kube-node-lease" system namespace' });
  assert.deepEqual(lease('list', 'kube-node-lease', ''), { decision: 'noOpinion', reason: 'can only get, create, update, patch, or delete a node lease' });
  assert.equal(na.authorize(ra(n1, 'patch', 'csinodes', { group: 'storage.k8s.io', name: 'n1' })).decision, 'allow');
  assert.equal(na.authorize(ra(n1, 'patch', 'csinodes', { group: 'storage.k8s.io', name: 'n2' })).decision, 'noOpinion');
  // static rules: events, CSRs, services, runtime classes, access reviews
  assert.equal(na.authorize(ra(n1, 'create', 'events', { ns: 'default' })).decision, 'allow');
  assert.equal(na.authorize(ra(n1, 'create', 'certificatesigningrequests', { group: 'certificates.k8s.io' })).decision, 'allow');
  assert.equal(na.authorize(ra(n1, 'watch', 'services')).decision, 'allow');
  assert.equal(na.authorize(ra(n1, 'list', 'runtimeclasses', { group: 'node.k8s.io' })).decision, 'allow');
  assert.equal(na.authorize(ra(n1, 'create', 'subjectaccessreviews', { group: 'authorization.k8s.io' })).decision, 'allow');
  assert.equal(na.authorize(ra(n1, 'delete', 'deployments', { group: 'apps', ns: 'default', name: 'd' })).decision, 'noOpinion');
  assert.deepEqual(na.rulesFor(n1), { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'node authorizer does not support user rule resolution' });
  assert.deepEqual(na.rulesFor(user('alice')), { resourceRules: [], nonResourceRules: [], incomplete: false });
});

test('the graph follows changes: rebinding, deletion, new references', () => {
  const { g, na } = setup();
  const n1 = node('n1');
  g.onChange('pods', 'DELETED', pod('default', 'web', 'n1'));
  assert.equal(na.authorize(ra(n1, 'get', 'secrets', { ns: 'default', name: 'pull' })).decision, 'noOpinion');
  assert.equal(na.authorize(ra(n1, 'get', 'persistentvolumes', { name: 'pv1' })).decision, 'noOpinion');
  g.onChange('pods', 'ADDED', pod('default', 'web', 'n1', { volumes: [{ name: 's', secret: { secretName: 'new' } }] }));
  assert.equal(na.authorize(ra(n1, 'get', 'secrets', { ns: 'default', name: 'new' })).decision, 'allow');
  // two pods referencing the same secret: it stays reachable until both are gone
  g.onChange('pods', 'ADDED', pod('default', 'web2', 'n1', { volumes: [{ name: 's', secret: { secretName: 'new' } }] }));
  g.onChange('pods', 'MODIFIED', pod('default', 'web', 'n1'));
  assert.equal(na.authorize(ra(n1, 'get', 'secrets', { ns: 'default', name: 'new' })).decision, 'allow');
  g.onChange('pods', 'DELETED', pod('default', 'web2', 'n1'));
  assert.equal(na.authorize(ra(n1, 'get', 'secrets', { ns: 'default', name: 'new' })).decision, 'noOpinion');
  g.replace('volumeattachments', []);
  assert.equal(na.authorize(ra(n1, 'get', 'volumeattachments', { group: 'storage.k8s.io', name: 'va1' })).decision, 'noOpinion');
});

test('Node,RBAC: the node reason reaches the Forbidden message; RBAC still grants what it binds', () => {
  const { na } = setup();
  const resolver = bootstrapResolver();
  const chain = new UnionAuthorizer([
    { name: 'Node', authorizer: na },
    { name: 'RBAC', authorizer: new RBACAuthorizer(resolver) },
  ]);
  const a = ra(node('n1'), 'get', 'secrets', { ns: 'default', name: 'n2-secret' });
  const r = chain.authorize(a);
  assert.deepEqual(r, { decision: 'noOpinion', reason: "no relationship found between node 'n1' and this object" });
  assert.equal(
    forbiddenError(a, r.reason).message,
    'secrets "n2-secret" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node \'n1\' and this object',
  );
  // discovery through RBAC (system:authenticated)
  assert.equal(chain.authorize({ user: node('n1'), verb: 'get', path: '/apis', resourceRequest: false }).decision, 'allow');
});
