// The verb and attributes of requests as Kubernetes maps them, and the Forbidden answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRequestInfo } from '../../src/apiserver/requestinfo.js';
import {
  authorizeCreateOnWrite,
  authorizeRequest,
  authorizeUnsafeDelete,
  effectiveWriteVerbs,
  forbiddenError,
  forbiddenMessage,
  impersonationAttributes,
  requestAttributes,
} from '../../src/apiserver/rbac/attributes.js';
import { RBACAuthorizer, UnionAuthorizer } from '../../src/apiserver/rbac/authorizers.js';
import { RBACResolver } from '../../src/apiserver/rbac/resolver.js';
import { clusterRole, clusterRoleBinding, subj, user } from './helpers.js';

const alice = user('alice');

function attrs(method: string, url: string) {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  return requestAttributes(alice, parseRequestInfo(method, path, query), method, query);
}

test('verbs of resource requests', () => {
  const cases: [string, string, string][] = [
    ['GET', '/api/v1/namespaces/default/pods', 'list'],
    ['GET', '/api/v1/namespaces/default/pods?watch=true', 'watch'],
    ['GET', '/api/v1/namespaces/default/pods?watch=false', 'list'],
    ['GET', '/api/v1/watch/namespaces/default/pods', 'watch'],
    ['GET', '/api/v1/namespaces/default/pods/web', 'get'],
    ['HEAD', '/api/v1/namespaces/default/pods/web', 'get'],
    ['POST', '/api/v1/namespaces/default/pods', 'create'],
    ['PUT', '/api/v1/namespaces/default/pods/web', 'update'],
    ['PATCH', '/api/v1/namespaces/default/pods/web', 'patch'],
    ['DELETE', '/api/v1/namespaces/default/pods/web', 'delete'],
    ['DELETE', '/api/v1/namespaces/default/pods', 'deletecollection'],
    ['GET', '/apis/apps/v1/deployments', 'list'],
    ['POST', '/api/v1/namespaces/default/pods/web/exec', 'create'],
    ['GET', '/api/v1/namespaces/default/pods/web/exec', 'get'],
  ];
  for (const [m, u, verb] of cases) assert.equal(attrs(m, u).verb, verb, `${m} ${u}`);
});

test('attributes: group, namespace, resource, subresource, name', () => {
  assert.deepEqual(
    { ...attrs('PUT', '/apis/apps/v1/namespaces/prod/deployments/web/scale'), user: undefined, path: undefined },
    { user: undefined, verb: 'update', namespace: 'prod', apiGroup: 'apps', apiVersion: 'v1', resource: 'deployments', subresource: 'scale', name: 'web', resourceRequest: true, path: undefined },
  );
  const status = attrs('PUT', '/api/v1/namespaces/prod/status');
  assert.equal(status.resource, 'namespaces');
  assert.equal(status.name, 'prod');
  assert.equal(status.subresource, 'status');
  const ns = attrs('GET', '/api/v1/namespaces/prod');
  assert.equal(ns.verb, 'get');
  assert.equal(ns.resource, 'namespaces');
  assert.equal(ns.name, 'prod');
  const log = attrs('GET', '/api/v1/namespaces/default/pods/web/log?container=c');
  assert.equal(log.subresource, 'log');
  assert.equal(log.verb, 'get');
});

test('a list or watch with fieldSelector=metadata.name=x is authorized for x', () => {
  const w = attrs('GET', '/api/v1/namespaces/default/configmaps?watch=1&fieldSelector=metadata.name%3Dsettings');
  assert.equal(w.verb, 'watch');
  assert.equal(w.name, 'settings');
  assert.deepEqual(w.fieldSelector, [{ field: 'metadata.name', op: '=', value: 'settings' }]);
  assert.equal(attrs('GET', '/api/v1/configmaps?fieldSelector=metadata.name!%3Dx').name, '');
  assert.equal(attrs('GET', '/api/v1/configmaps?fieldSelector=metadata.name%3Da%2Fb').name, '', 'not a path segment name');
  const pods = attrs('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&labelSelector=app%3Dweb');
  assert.deepEqual(pods.fieldSelector, [{ field: 'spec.nodeName', op: '=', value: 'n1' }]);
  assert.deepEqual(pods.labelSelector, [{ key: 'app', op: '=', values: ['web'] }]);
  assert.equal(attrs('GET', '/api/v1/pods?fieldSelector=%3D%3D%3D').fieldSelector, undefined, 'an invalid selector is ignored here');
});

test('non-resource requests: the lower-cased method and the path', () => {
  for (const [m, p] of [
    ['GET', '/api'],
    ['GET', '/apis'],
    ['GET', '/apis/apps/v1'],
    ['GET', '/version'],
    ['POST', '/logs'],
    ['HEAD', '/healthz'],
  ]) {
    const a = attrs(m!, p!);
    assert.equal(a.resourceRequest, false);
    assert.equal(a.verb, m!.toLowerCase());
    assert.equal(a.path, p);
  }
});

test('writes that create need create too; unsafe delete needs its own verb', () => {
  assert.deepEqual(effectiveWriteVerbs({ verb: 'update' }, false), ['update', 'create']);
  assert.deepEqual(effectiveWriteVerbs({ verb: 'update' }, true), ['update']);
  assert.deepEqual(effectiveWriteVerbs({ verb: 'patch' }, false), ['patch', 'create']);
  assert.deepEqual(effectiveWriteVerbs({ verb: 'delete' }, true), ['delete']);
  const r = new RBACResolver();
  r.replace('clusterroles', [clusterRole('cm-update', [{ verbs: ['update', 'patch', 'delete'], apiGroups: [''], resources: ['configmaps'] }])]);
  r.replace('clusterrolebindings', [clusterRoleBinding('b', 'cm-update', [subj.user('alice')])]);
  const authz = new UnionAuthorizer([{ name: 'RBAC', authorizer: new RBACAuthorizer(r) }]);
  const put = attrs('PUT', '/api/v1/namespaces/default/configmaps/settings');
  assert.equal(authorizeRequest(authz, put), undefined);
  const err = authorizeCreateOnWrite(authz, put);
  assert.equal(err?.code, 403);
  assert.equal(err?.message, 'configmaps "settings" is forbidden: ');
  const del = attrs('DELETE', '/api/v1/namespaces/default/configmaps/settings');
  assert.equal(authorizeRequest(authz, del), undefined);
  assert.equal(authorizeUnsafeDelete(authz, del)?.message, 'configmaps "settings" is forbidden: not permitted to do "unsafe-delete-ignore-read-errors", reason: ');
  r.onChange('clusterroles', 'MODIFIED', clusterRole('cm-update', [{ verbs: ['update', 'create', 'delete', 'unsafe-delete-ignore-read-errors'], apiGroups: [''], resources: ['configmaps'] }]));
  assert.equal(authorizeCreateOnWrite(authz, put), undefined);
  assert.equal(authorizeUnsafeDelete(authz, del), undefined);
});

test('Forbidden messages: namespaced, cluster scope, subresources, named objects, paths', () => {
  const list = forbiddenError(attrs('GET', '/api/v1/namespaces/default/pods'), '');
  assert.equal(list.message, 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"');
  assert.deepEqual(list.toStatus(), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"',
    reason: 'Forbidden',
    details: { kind: 'pods' },
    code: 403,
  });
  assert.equal(
    forbiddenError(attrs('GET', '/apis/apps/v1/deployments'), '').message,
    'deployments.apps is forbidden: User "alice" cannot list resource "deployments" in API group "apps" at the cluster scope',
  );
  const named = forbiddenError(attrs('GET', '/api/v1/namespaces/default/pods/web/log'), '');
  assert.equal(named.message, 'pods "web" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "default"');
  assert.deepEqual(named.details, { name: 'web', kind: 'pods' });
  const path = forbiddenError(attrs('GET', '/apis'), '');
  assert.equal(path.message, 'forbidden: User "alice" cannot get path "/apis"');
  assert.deepEqual(path.toStatus().details, {});
  const withReason = forbiddenError(
    { user: { name: 'system:node:n1', groups: ['system:nodes'] }, verb: 'get', namespace: 'default', apiGroup: '', resource: 'secrets', name: 's', resourceRequest: true },
    "no relationship found between node 'n1' and this object",
  );
  assert.equal(withReason.message, 'secrets "s" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node \'n1\' and this object');
  assert.equal(forbiddenMessage({ user: { name: 'x', groups: [] }, verb: 'get', path: '/<script>&', resourceRequest: false }), 'User "x" cannot get path "/<script>&"');
  assert.equal(forbiddenError({ user: { name: 'x', groups: [] }, verb: 'get', path: '/<b>', resourceRequest: false }, '').message, 'forbidden: User "x" cannot get path "/&lt;b&gt;"');
});

test('impersonation checks', () => {
  assert.deepEqual(impersonationAttributes(alice, { kind: 'user', name: 'bob' }), { user: alice, verb: 'impersonate', resourceRequest: true, apiGroup: '', resource: 'users', name: 'bob' });
  assert.deepEqual(impersonationAttributes(alice, { kind: 'user', name: 'system:serviceaccount:ns1:robot' }), {
    user: alice,
    verb: 'impersonate',
    resourceRequest: true,
    apiGroup: '',
    resource: 'serviceaccounts',
    namespace: 'ns1',
    name: 'robot',
  });
  assert.equal(impersonationAttributes(alice, { kind: 'group', name: 'g' }).resource, 'groups');
  assert.deepEqual(
    { ...impersonationAttributes(alice, { kind: 'userextra', key: 'scopes', value: 'view' }), user: undefined },
    { user: undefined, verb: 'impersonate', resourceRequest: true, apiGroup: 'authentication.k8s.io', resource: 'userextras', subresource: 'scopes', name: 'view' },
  );
  assert.equal(
    forbiddenError(impersonationAttributes(alice, { kind: 'user', name: 'bob' }), '').message,
    'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
  );
});
