import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { StatusError } from '../../src/machinery/errors.js';
import type { Attributes, UserInfo } from '../../src/apiserver/authz.js';
import { impersonate, ImpersonationInternalError, hasImpersonationHeaders, impersonationHeaderNames } from '../../src/apiserver/authn/impersonation.js';
import { syntheticRequest } from '../../src/apiserver/authn/request.js';

const admin: UserInfo = { name: 'admin', groups: ['system:masters', 'system:authenticated'] };
const bob: UserInfo = { name: 'bob', groups: ['system:authenticated'] };

function recorder(allow: (a: Attributes) => boolean | { allowed: boolean; reason?: string } = () => true) {
  const asked: string[] = [];
  const authorize = (_u: UserInfo, a: Attributes) => {
    asked.push(`${a.verb} ${a.apiGroup}/${a.resource}${a.subresource ? '/' + a.subresource : ''} ${a.namespace ? a.namespace + '/' : ''}${a.name}`);
    return allow(a);
  };
  return { asked, authorize };
}

async function forbidden(p: Promise<unknown>, message: string, details?: object): Promise<void> {
  await assert.rejects(p, (e: StatusError) => {
    assert.ok(e instanceof StatusError);
    assert.equal(e.code, 403);
    assert.equal(e.reason, 'Forbidden');
    assert.equal(e.message, message);
    if (details) assert.deepEqual(e.details, details);
    return true;
  });
}

describe('impersonate', () => {
  test('no headers: null', async () => {
    assert.equal(await impersonate(admin, syntheticRequest({}), () => false), null);
    assert.ok(!hasImpersonationHeaders(syntheticRequest({ accept: 'x' })));
  });
  test('a user with groups, extras and a uid: each checked, system:authenticated added', async () => {
    const r = recorder();
    const req = syntheticRequest({ 'Impersonate-User': 'jane', 'Impersonate-Group': ['dev', 'ops'], 'Impersonate-Extra-Scopes': ['view', 'edit'], 'Impersonate-Extra-Acme.com%2Fproject': 'p1', 'Impersonate-Uid': '1234' });
    const u = await impersonate(admin, req, r.authorize);
    assert.deepEqual(u, { name: 'jane', uid: '1234', groups: ['dev', 'ops', 'system:authenticated'], extra: { scopes: ['view', 'edit'], 'acme.com/project': ['p1'] } });
    assert.deepEqual(r.asked, [
      'impersonate /users jane',
      'impersonate /groups dev',
      'impersonate /groups ops',
      'impersonate authentication.k8s.io/userextras/scopes view',
      'impersonate authentication.k8s.io/userextras/scopes edit',
      'impersonate authentication.k8s.io/userextras/acme.com/project p1',
      'impersonate authentication.k8s.io/uids 1234',
    ]);
    assert.deepEqual(impersonationHeaderNames(req).sort(), ['impersonate-extra-acme.com%2fproject', 'impersonate-extra-scopes', 'impersonate-group', 'impersonate-uid', 'impersonate-user']);
  });
  test('a service account: serviceaccounts in its namespace, with its groups unless groups are given', async () => {
    const r = recorder();
    const u = await impersonate(admin, syntheticRequest({ 'Impersonate-User': 'system:serviceaccount:kube-system:default' }), r.authorize);
    assert.deepEqual(u, { name: 'system:serviceaccount:kube-system:default', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'], extra: {} });
    assert.deepEqual(r.asked, ['impersonate /serviceaccounts kube-system/default']);
    const g = await impersonate(admin, syntheticRequest({ 'Impersonate-User': 'system:serviceaccount:kube-system:default', 'Impersonate-Group': 'x' }), () => true);
    assert.deepEqual(g!.groups, ['x', 'system:authenticated']);
  });
  test('system:authenticated / system:unauthenticated given; anonymous', async () => {
    assert.deepEqual((await impersonate(admin, syntheticRequest({ 'Impersonate-User': 'u', 'Impersonate-Group': 'system:unauthenticated' }), () => true))!.groups, ['system:unauthenticated']);
    assert.deepEqual((await impersonate(admin, syntheticRequest({ 'Impersonate-User': 'u', 'Impersonate-Group': 'system:authenticated' }), () => true))!.groups, ['system:authenticated']);
    assert.deepEqual((await impersonate(admin, syntheticRequest({ 'Impersonate-User': 'system:anonymous' }), () => true))!.groups, ['system:unauthenticated']);
  });
  test('denied: Kubernetes\' Forbidden messages', async () => {
    await forbidden(impersonate(bob, syntheticRequest({ 'Impersonate-User': 'alice' }), () => false), 'users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope', { name: 'alice', kind: 'users' });
    await forbidden(
      impersonate(bob, syntheticRequest({ 'Impersonate-User': 'system:serviceaccount:ns1:sa' }), () => ({ allowed: false, reason: 'no RBAC policy matched' })),
      'serviceaccounts "sa" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns1": no RBAC policy matched',
    );
    await forbidden(
      impersonate(bob, syntheticRequest({ 'Impersonate-User': 'alice', 'Impersonate-Group': 'system:masters' }), (_u, a) => a.resource === 'users'),
      'groups "system:masters" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope',
    );
    await forbidden(
      impersonate(bob, syntheticRequest({ 'Impersonate-User': 'alice', 'Impersonate-Extra-Scopes': 'all' }), (_u, a) => a.resource === 'users'),
      'userextras.authentication.k8s.io "all" is forbidden: User "bob" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope',
      { name: 'all', group: 'authentication.k8s.io', kind: 'userextras' },
    );
    await forbidden(
      impersonate(bob, syntheticRequest({ 'Impersonate-User': 'alice', 'Impersonate-Uid': 'u1' }), (_u, a) => a.resource === 'users'),
      'uids.authentication.k8s.io "u1" is forbidden: User "bob" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope',
    );
    await forbidden(impersonate({ name: 'a<b>', groups: [] }, syntheticRequest({ 'Impersonate-User': 'x' }), () => false), 'users "x" is forbidden: User "a&lt;b&gt;" cannot impersonate resource "users" in API group "" at the cluster scope');
  });
  test('groups, extras or a uid without a user: internal error in plain text', async () => {
    const req = { ...syntheticRequest({ 'Impersonate-Group': 'system:masters', 'Impersonate-Uid': 'u' }), url: '/api/v1/pods?limit=500' };
    await assert.rejects(impersonate(admin, req, () => true), (e: ImpersonationInternalError) => {
      assert.ok(e instanceof ImpersonationInternalError);
      assert.equal(e.code, 500);
      assert.equal(e.body, 'Internal Server Error: "/api/v1/pods?limit=500": requested [{Group  system:masters    } {UID  u  authentication.k8s.io/v1  }] without impersonating a user');
      return true;
    });
  });
  test('headers of an IncomingMessage: each repeated header line is one group', async () => {
    const req = { headers: { 'impersonate-user': 'jane', 'impersonate-group': 'a, b' }, headersDistinct: { 'impersonate-user': ['jane'], 'impersonate-group': ['a', 'b'] } };
    assert.deepEqual((await impersonate(admin, req, () => true))!.groups, ['a', 'b', 'system:authenticated']);
  });
});
