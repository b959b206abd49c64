// Escalation prevention on RBAC writes, with Kubernetes' messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RBACAuthorizer, UnionAuthorizer } from '../../src/apiserver/rbac/authorizers.js';
import { checkRBACWrite, confirmNoEscalation, isOnlyMutatingGCFields } from '../../src/apiserver/rbac/escalation.js';
import { RBACResolver } from '../../src/apiserver/rbac/resolver.js';
import type { UserInfo } from '../../src/apiserver/authz.js';
import { clusterRole, clusterRoleBinding, role, roleBinding, subj, user } from './helpers.js';

const RBAC = 'rbac.authorization.k8s.io';

function setup() {
  const r = new RBACResolver();
  r.replace('clusterroles', [
    clusterRole('pods-rw', [{ verbs: ['get', 'list', 'create'], apiGroups: [''], resources: ['pods'] }]),
    clusterRole('secrets-all', [{ verbs: ['*'], apiGroups: [''], resources: ['secrets'] }]),
    clusterRole('rbac-writer', [{ verbs: ['create', 'update'], apiGroups: [RBAC], resources: ['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings'] }]),
    clusterRole('escalator', [{ verbs: ['escalate'], apiGroups: [RBAC], resources: ['roles'] }]),
    clusterRole('binder', [{ verbs: ['bind'], apiGroups: [RBAC], resources: ['clusterroles'], resourceNames: ['secrets-all'] }]),
  ]);
  r.replace('clusterrolebindings', [clusterRoleBinding('writers', 'rbac-writer', [subj.group('dev')])]);
  r.replace('roles', []);
  r.replace('rolebindings', [roleBinding('team', 'alice-pods', 'ClusterRole', 'pods-rw', [subj.user('alice')])]);
  const authorizer = new UnionAuthorizer([{ name: 'RBAC', authorizer: new RBACAuthorizer(r) }]);
  return { r, authorizer };
}

const alice: UserInfo = user('alice', 'dev');

test('a role within what the user holds may be created; more is refused with the missing rules', () => {
  const { r, authorizer } = setup();
  const ok = role('team', 'pod-reader', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }]);
  assert.equal(checkRBACWrite({ authorizer, resolver: r, user: alice, resource: 'roles', namespace: 'team', requestName: '', obj: ok }), undefined);
  const tooMuch = role('team', 'pod-admin', [{ verbs: ['get', 'delete', 'watch'], apiGroups: ['', 'apps'], resources: ['pods'] }]);
  const err = checkRBACWrite({ authorizer, resolver: r, user: alice, resource: 'roles', namespace: 'team', requestName: '', obj: tooMuch });
  assert.ok(err);
  assert.equal(err.code, 403);
  assert.equal(err.reason, 'Forbidden');
  assert.equal(
    err.message,
    'roles.rbac.authorization.k8s.io "pod-admin" is forbidden: user "alice" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
      '{APIGroups:[""], Resources:["pods"], Verbs:["delete" "watch"]}\n' +
      '{APIGroups:["apps"], Resources:["pods"], Verbs:["get" "delete" "watch"]}',
  );
  assert.deepEqual(err.details, { name: 'pod-admin', group: RBAC, kind: 'roles' });
  // the same role in another namespace: the role binding does not reach there
  const elsewhere = checkRBACWrite({ authorizer, resolver: r, user: alice, resource: 'roles', namespace: 'prod', requestName: '', obj: { ...ok, metadata: { name: 'pod-reader', namespace: 'prod' } } });
  assert.match(elsewhere!.message, /^roles.rbac.authorization.k8s.io "pod-reader" is forbidden: user "alice" .*\n\{APIGroups:\[""\], Resources:\["pods"\], Verbs:\["get" "list"\]\}$/);
});

test('system:masters and the escalate verb skip the check', () => {
  const { r, authorizer } = setup();
  const big = role('team', 'big', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]);
  const root: UserInfo = { name: 'root', groups: ['system:masters'] };
  assert.equal(checkRBACWrite({ authorizer, resolver: r, user: root, resource: 'roles', namespace: 'team', requestName: '', obj: big }), undefined);
  r.onChange('clusterrolebindings', 'ADDED', clusterRoleBinding('esc', 'escalator', [subj.user('alice')]));
  assert.equal(checkRBACWrite({ authorizer, resolver: r, user: alice, resource: 'roles', namespace: 'team', requestName: '', obj: big }), undefined);
  // escalate on roles does not reach clusterroles
  const cr = clusterRole('big', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]);
  assert.match(checkRBACWrite({ authorizer, resolver: r, user: alice, resource: 'clusterroles', namespace: '', requestName: '', obj: cr })!.message, /^clusterroles.rbac.authorization.k8s.io "big" is forbidden: /);
});

test('an aggregationRule needs cluster-admin, on create and when the old role had one', () => {
  const { r, authorizer } = setup();
  const agg = clusterRole('agg', [], { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] } });
  const err = checkRBACWrite({ authorizer, resolver: r, user: alice, resource: 'clusterroles', namespace: '', requestName: '', obj: agg });
  assert.equal(err?.message, 'clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule');
  const plain = clusterRole('agg', []);
  const err2 = checkRBACWrite({ authorizer, resolver: r, user: alice, resource: 'clusterroles', namespace: '', requestName: 'agg', obj: plain, old: { ...agg, metadata: { ...agg.metadata, resourceVersion: '5' } } });
  assert.match(err2!.message, /must have cluster-admin privileges to use the aggregationRule/);
});

test('bindings: what the user holds may be bound; otherwise bind is needed', () => {
  const { r, authorizer } = setup();
  const rb = roleBinding('team', 'bob-pods', 'ClusterRole', 'pods-rw', [subj.user('bob')]);
  assert.equal(checkRBACWrite({ authorizer, resolver: r, user: alice, resource: 'rolebindings', namespace: 'team', requestName: '', obj: rb }), undefined);
  const secrets = roleBinding('team', 'bob-secrets', 'ClusterRole', 'secrets-all', [subj.user('bob')]);
  const err = checkRBACWrite({ authorizer, resolver: r, user: alice, resource: 'rolebindings', namespace: 'team', requestName: '', obj: secrets });
  assert.equal(
    err?.message,
    'rolebindings.rbac.authorization.k8s.io "bob-secrets" is forbidden: user "alice" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["*"]}',
  );
  // the bind verb on that very ClusterRole
  r.onChange('clusterrolebindings', 'ADDED', clusterRoleBinding('b', 'binder', [subj.user('alice')]));
  assert.equal(checkRBACWrite({ authorizer, resolver: r, user: alice, resource: 'rolebindings', namespace: 'team', requestName: '', obj: secrets }), undefined);
  // a cluster role binding of pods-rw: alice holds pods-rw only in team
  const crb = clusterRoleBinding('bob-pods', 'pods-rw', [subj.user('bob')]);
  const err2 = checkRBACWrite({ authorizer, resolver: r, user: alice, resource: 'clusterrolebindings', namespace: '', requestName: '', obj: crb });
  assert.match(err2!.message, /^clusterrolebindings.rbac.authorization.k8s.io "bob-pods" is forbidden: user "alice" .* not currently held:\n\{APIGroups:\[""\], Resources:\["pods"\], Verbs:\["get" "list" "create"\]\}$/);
});

test('a binding to a missing role the user may not bind answers 404 NotFound', () => {
  const { r, authorizer } = setup();
  const rb = roleBinding('team', 'x', 'ClusterRole', 'nope', [subj.user('bob')]);
  const err = checkRBACWrite({ authorizer, resolver: r, user: alice, resource: 'rolebindings', namespace: 'team', requestName: '', obj: rb });
  assert.equal(err?.code, 404);
  assert.equal(err?.message, 'clusterroles.rbac.authorization.k8s.io "nope" not found');
  const rb2 = roleBinding('team', 'y', 'Role', 'nope', [subj.user('bob')]);
  assert.equal(checkRBACWrite({ authorizer, resolver: r, user: alice, resource: 'rolebindings', namespace: 'team', requestName: '', obj: rb2 })?.message, 'roles.rbac.authorization.k8s.io "nope" not found');
});

test('updates that change only ownerReferences or finalizers are not checked', () => {
  const { r, authorizer } = setup();
  const old = role('team', 'big', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]);
  const withOwner = { ...old, metadata: { ...old.metadata, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'u' }], finalizers: ['x'] } };
  assert.equal(isOnlyMutatingGCFields(withOwner, old), true);
  assert.equal(checkRBACWrite({ authorizer, resolver: r, user: alice, resource: 'roles', namespace: 'team', requestName: 'big', obj: withOwner, old }), undefined);
  const withLabel = { ...old, metadata: { ...old.metadata, labels: { a: 'b' } } };
  assert.equal(isOnlyMutatingGCFields(withLabel, old), false);
  assert.ok(checkRBACWrite({ authorizer, resolver: r, user: alice, resource: 'roles', namespace: 'team', requestName: 'big', obj: withLabel, old }));
});

test('resolution errors are appended to the refusal', () => {
  const { r } = setup();
  r.onChange('clusterrolebindings', 'ADDED', clusterRoleBinding('ghost', 'gone', [subj.user('alice')]));
  const msg = confirmNoEscalation(r, alice, '', [{ verbs: ['get'], apiGroups: [''], resources: ['nodes'] }]);
  assert.equal(
    msg,
    'user "alice" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["nodes"], Verbs:["get"]}; resolution errors: [clusterroles.rbac.authorization.k8s.io "gone" not found]',
  );
});
