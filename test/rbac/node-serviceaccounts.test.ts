// The Node authorizer with KubeletServiceAccountTokenForCredentialProviders (alpha in 1.33, off by
// default): a kubelet may get the service accounts of the pods bound to it (its credential provider
// plugins need their annotations), and no others; with the gate off, as before, only their tokens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeAuthorizer, NodeGraph } from '../../src/apiserver/rbac/node.js';
import { nodeRules } from '../../src/apiserver/rbac/policy.js';
import { ra } from './helpers.js';

const node = (n: string) => ({ name: `system:node:${n}`, groups: ['system:nodes', 'system:authenticated'] });

function graph(): NodeGraph {
  const g = new NodeGraph();
  g.setPod({ metadata: { namespace: 'apps', name: 'web' }, spec: { nodeName: 'n1', serviceAccountName: 'builder', containers: [{ name: 'c', image: 'i' }] } });
  g.setPod({ metadata: { namespace: 'apps', name: 'db' }, spec: { nodeName: 'n2', serviceAccountName: 'dba', containers: [{ name: 'c', image: 'i' }] } });
  return g;
}

test('with the gate on: get of its pods\' service accounts, nothing else', () => {
  const na = new NodeAuthorizer(graph(), { nodeRules: nodeRules(), getServiceAccounts: true });
  const n1 = node('n1');
  assert.equal(na.authorize(ra(n1, 'get', 'serviceaccounts', { ns: 'apps', name: 'builder' })).decision, 'allow');
  assert.deepEqual(na.authorize(ra(n1, 'get', 'serviceaccounts', { ns: 'apps', name: 'dba' })), { decision: 'noOpinion', reason: "no relationship found between node 'n1' and this object" });
  assert.equal(na.authorize(ra(node('n2'), 'get', 'serviceaccounts', { ns: 'apps', name: 'dba' })).decision, 'allow');
  assert.equal(na.authorize(ra(n1, 'get', 'serviceaccounts', { ns: 'other', name: 'builder' })).decision, 'noOpinion', 'the namespace counts');
  assert.deepEqual(na.authorize(ra(n1, 'list', 'serviceaccounts', { ns: 'apps' })), { decision: 'noOpinion', reason: 'can only create tokens for individual service accounts' });
  assert.deepEqual(na.authorize(ra(n1, 'update', 'serviceaccounts', { ns: 'apps', name: 'builder' })), { decision: 'noOpinion', reason: 'can only create tokens for individual service accounts' });
  assert.equal(na.authorize(ra(n1, 'create', 'serviceaccounts', { ns: 'apps', name: 'builder', sub: 'token' })).decision, 'allow');
});

test('with the gate off: no get', () => {
  const na = new NodeAuthorizer(graph(), { nodeRules: nodeRules() });
  assert.deepEqual(na.authorize(ra(node('n1'), 'get', 'serviceaccounts', { ns: 'apps', name: 'builder' })), { decision: 'noOpinion', reason: 'can only create tokens for individual service accounts' });
});
