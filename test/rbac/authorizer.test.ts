// The RBAC authorizer over the resolver (bindings by subject, reasons, errors, change events),
// the chain of modes (system:masters first, reasons joined), rules reviews and mode validation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AlwaysAllowAuthorizer,
  AlwaysDenyAuthorizer,
  RBACAuthorizer,
  UnionAuthorizer,
  parseAuthorizationModes,
  validateAuthorizationModes,
} from '../../src/apiserver/rbac/authorizers.js';
import { RBACResolver } from '../../src/apiserver/rbac/resolver.js';
import { Authorization } from '../../src/apiserver/rbac/index.js';
import { accessReviewStatus, reviewAttributes, reviewSubject, rulesReviewStatus } from '../../src/apiserver/rbac/reviews.js';
import { clusterRole, clusterRoleBinding, nra, ra, role, roleBinding, serviceAccount, subj, user } from './helpers.js';

function setup() {
  const r = new RBACResolver();
  r.replace('clusterroles', [
    clusterRole('pod-reader', [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] }]),
    clusterRole('healthz', [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/healthz/*'] }]),
  ]);
  r.replace('roles', [role('dev', 'cm-editor', [{ verbs: ['*'], apiGroups: [''], resources: ['configmaps'] }])]);
  r.replace('clusterrolebindings', [
    clusterRoleBinding('readers', 'pod-reader', [subj.group('readers')]),
    clusterRoleBinding('health', 'healthz', [subj.user('bob')]),
  ]);
  r.replace('rolebindings', [
    roleBinding('dev', 'alice-cm', 'Role', 'cm-editor', [subj.user('alice')]),
    roleBinding('dev', 'ci-pods', 'ClusterRole', 'pod-reader', [subj.sa('ci')]), // SA namespace defaults to the binding's
  ]);
  return { r, rbac: new RBACAuthorizer(r) };
}

test('allow reasons name the binding, the role and the subject that matched', () => {
  const { rbac } = setup();
  assert.deepEqual(rbac.authorize(ra(user('carol', 'readers'), 'list', 'pods', { ns: 'default' })), {
    decision: 'allow',
    reason: 'RBAC: allowed by ClusterRoleBinding "readers" of ClusterRole "pod-reader" to Group "readers"',
  });
  assert.deepEqual(rbac.authorize(ra(user('alice'), 'delete', 'configmaps', { ns: 'dev', name: 'x' })), {
    decision: 'allow',
    reason: 'RBAC: allowed by RoleBinding "alice-cm/dev" of Role "cm-editor" to User "alice"',
  });
  assert.deepEqual(rbac.authorize(ra(serviceAccount('dev', 'ci'), 'get', 'pods', { ns: 'dev', name: 'p' })), {
    decision: 'allow',
    reason: 'RBAC: allowed by RoleBinding "ci-pods/dev" of ClusterRole "pod-reader" to ServiceAccount "ci/dev"',
  });
  assert.equal(rbac.authorize(nra(user('bob'), 'get', '/healthz/etcd')).decision, 'allow');
});

test('role bindings grant only in their namespace; cluster-wide requests see cluster bindings only', () => {
  const { rbac } = setup();
  assert.equal(rbac.authorize(ra(user('alice'), 'get', 'configmaps', { ns: 'prod', name: 'x' })).decision, 'noOpinion');
  assert.equal(rbac.authorize(ra(user('alice'), 'list', 'configmaps')).decision, 'noOpinion', 'a list across namespaces');
  assert.equal(rbac.authorize(ra(serviceAccount('other', 'ci'), 'get', 'pods', { ns: 'dev' })).decision, 'noOpinion', 'the defaulted SA namespace is the binding namespace');
  assert.deepEqual(rbac.authorize(ra(user('dave'), 'get', 'pods', { ns: 'dev' })), { decision: 'noOpinion', reason: '' });
});

test('a binding to a missing role: no opinion with an RBAC reason; other bindings still apply', () => {
  const { r, rbac } = setup();
  r.onChange('clusterrolebindings', 'ADDED', clusterRoleBinding('ghost', 'missing', [subj.group('readers')]));
  r.onChange('rolebindings', 'ADDED', roleBinding('dev', 'ghost2', 'Role', 'nope', [subj.group('readers')]));
  const u = user('carol', 'readers');
  assert.equal(rbac.authorize(ra(u, 'get', 'pods', { ns: 'dev' })).decision, 'allow');
  assert.deepEqual(rbac.authorize(ra(u, 'delete', 'pods', { ns: 'dev' })), {
    decision: 'noOpinion',
    reason: 'RBAC: [clusterrole.rbac.authorization.k8s.io "missing" not found, role.rbac.authorization.k8s.io "nope" not found]',
  });
  assert.deepEqual(rbac.authorize(ra(u, 'delete', 'pods')), { decision: 'noOpinion', reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found' });
  // a ClusterRoleBinding cannot refer to a Role
  r.onChange('clusterrolebindings', 'ADDED', clusterRoleBinding('bad', 'cm-editor', [subj.user('erin')], 'Role'));
  assert.deepEqual(rbac.authorize(ra(user('erin'), 'get', 'configmaps', { ns: 'dev' })), { decision: 'noOpinion', reason: 'RBAC: role.rbac.authorization.k8s.io "cm-editor" not found' });
  const rules = rbac.rulesFor(u, 'dev');
  assert.equal(rules.evaluationError, '[clusterrole.rbac.authorization.k8s.io "missing" not found, role.rbac.authorization.k8s.io "nope" not found]');
  assert.equal(rules.incomplete, false);
});

test('change events: bindings and roles are re-indexed on update and delete', () => {
  const { r, rbac } = setup();
  const carol = user('carol');
  assert.equal(rbac.authorize(ra(carol, 'get', 'pods', { ns: 'x' })).decision, 'noOpinion');
  const old = clusterRoleBinding('readers', 'pod-reader', [subj.group('readers')]);
  const updated = clusterRoleBinding('readers', 'pod-reader', [subj.user('carol')]);
  r.onChange('clusterrolebindings', 'MODIFIED', updated, old);
  assert.equal(rbac.authorize(ra(carol, 'get', 'pods', { ns: 'x' })).decision, 'allow');
  assert.equal(rbac.authorize(ra(user('z', 'readers'), 'get', 'pods', { ns: 'x' })).decision, 'noOpinion', 'the old subject is gone from the index');
  r.onChange('clusterroles', 'MODIFIED', clusterRole('pod-reader', [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }]));
  assert.equal(rbac.authorize(ra(carol, 'get', 'pods', { ns: 'x' })).decision, 'noOpinion');
  assert.equal(rbac.authorize(ra(carol, 'list', 'pods', { ns: 'x' })).decision, 'allow');
  r.onChange('clusterrolebindings', 'DELETED', updated);
  assert.equal(rbac.authorize(ra(carol, 'list', 'pods', { ns: 'x' })).decision, 'noOpinion');
  assert.deepEqual(r.size(), { clusterRoles: 2, roles: 1, clusterRoleBindings: 1, roleBindings: 2 });
});

test('rulesFor: resource and non-resource rules, names kept, empty lists omitted', () => {
  const { rbac } = setup();
  const got = rbac.rulesFor(user('alice', 'readers'), 'dev');
  assert.deepEqual(got, {
    resourceRules: [
      { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['*'], apiGroups: [''], resources: ['configmaps'] },
    ],
    nonResourceRules: [],
    incomplete: false,
  });
  assert.deepEqual(rbac.rulesFor(user('bob'), '').nonResourceRules, [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/healthz/*'] }]);
});

test('the chain: system:masters first, first decision wins, reasons joined by newlines', () => {
  const { rbac } = setup();
  const chain = new UnionAuthorizer([
    { name: 'RBAC', authorizer: rbac },
    { name: 'AlwaysDeny', authorizer: new AlwaysDenyAuthorizer() },
  ]);
  assert.deepEqual(chain.authorize(ra({ name: 'root', groups: ['system:masters'] }, 'delete', 'nodes')), { decision: 'allow', reason: '' });
  assert.equal(chain.authorize(ra(user('carol', 'readers'), 'get', 'pods')).decision, 'allow');
  assert.deepEqual(chain.authorize(ra(user('dave'), 'get', 'pods')), { decision: 'noOpinion', reason: 'Everything is forbidden.' });
  const allow = new UnionAuthorizer([{ name: 'AlwaysAllow', authorizer: new AlwaysAllowAuthorizer() }]);
  assert.deepEqual(allow.authorize(ra(user('x'), 'get', 'pods')), { decision: 'allow', reason: '' });
  const rules = allow.rulesFor(user('x'), 'default');
  assert.deepEqual(rules, {
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
  });
});

test('--authorization-mode: parsing and kube-apiserver validation messages', () => {
  assert.deepEqual(parseAuthorizationModes('RBAC,Node'), ['RBAC', 'Node']);
  assert.deepEqual(parseAuthorizationModes(' Node , RBAC,'), ['Node', 'RBAC']);
  assert.deepEqual(validateAuthorizationModes(['RBAC', 'Node']), []);
  assert.deepEqual(validateAuthorizationModes([]), ['at least one authorization-mode must be passed']);
  assert.deepEqual(validateAuthorizationModes(['Rbac']), ['authorization-mode "Rbac" is not a valid mode']);
  assert.deepEqual(validateAuthorizationModes(['RBAC', 'RBAC']), ['authorization-mode ["RBAC" "RBAC"] has mode specified more than once']);
  assert.deepEqual(validateAuthorizationModes(['Webhook']), ['authorization-mode "Webhook" is not supported by keelson']);
  assert.throws(() => new Authorization({ modes: 'RBAC,Bogus' }), /authorization-mode "Bogus" is not a valid mode/);
});

test('access reviews: allowed, denied, reason; subjects as given; version * when empty', () => {
  const { rbac } = setup();
  const chain = new UnionAuthorizer([{ name: 'RBAC', authorizer: rbac }]);
  const spec = { user: 'carol', groups: ['readers'], resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'dev' } };
  const a = reviewAttributes(reviewSubject(spec), spec);
  assert.equal(a.apiVersion, '*');
  assert.deepEqual(accessReviewStatus(chain, a), { allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "readers" of ClusterRole "pod-reader" to Group "readers"' });
  const no = { user: 'carol', resourceAttributes: { verb: 'list', resource: 'pods' } };
  assert.deepEqual(accessReviewStatus(chain, reviewAttributes(reviewSubject(no), no)), { allowed: false });
  const url = { user: 'bob', nonResourceAttributes: { verb: 'get', path: '/healthz' } };
  assert.equal(accessReviewStatus(chain, reviewAttributes(reviewSubject(url), url)).allowed, true);
  assert.deepEqual(rulesReviewStatus(chain, user('nobody'), 'default'), { resourceRules: [], nonResourceRules: [], incomplete: false });
  // LocalSubjectAccessReview: the namespace of the URL
  const local = { user: 'alice', resourceAttributes: { verb: 'get', resource: 'configmaps' } };
  assert.equal(accessReviewStatus(chain, reviewAttributes(reviewSubject(local), local, 'dev')).allowed, true);
});

test('selectors of an access review reach the attributes (the Node authorizer reads them)', () => {
  const spec = { user: 'system:node:n1', groups: ['system:nodes'], resourceAttributes: { verb: 'list', resource: 'pods', fieldSelector: { rawSelector: 'spec.nodeName=n1' } } };
  assert.deepEqual(reviewAttributes(reviewSubject(spec), spec).fieldSelector, [{ field: 'spec.nodeName', op: '=', value: 'n1' }]);
  const req = { user: 'u', resourceAttributes: { verb: 'list', resource: 'pods', fieldSelector: { requirements: [{ key: 'spec.nodeName', operator: 'In', values: ['n2'] }] } } };
  assert.deepEqual(reviewAttributes(reviewSubject(req), req).fieldSelector, [{ field: 'spec.nodeName', op: '=', value: 'n2' }]);
});

test('--authorization-config: the authorizers of an AuthorizationConfiguration, in order', async () => {
  const { modesFromAuthorizationConfig, resolveAuthorizationModes } = await import('../../src/apiserver/rbac/config.js');
  const doc = `apiVersion: apiserver.config.k8s.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: Node
  name: node
- type: RBAC
  name: rbac
`;
  assert.deepEqual(modesFromAuthorizationConfig(doc), ['Node', 'RBAC']);
  assert.throws(() => modesFromAuthorizationConfig(doc.replace('type: RBAC', 'type: Webhook')), /webhook authorizers are not supported by keelson/);
  assert.throws(() => modesFromAuthorizationConfig(doc.replace('name: rbac', 'name: node')), /authorizers\[1\]\.name: Duplicate value: "node"/);
  assert.throws(() => modesFromAuthorizationConfig('kind: AuthorizationConfiguration\napiVersion: apiserver.config.k8s.io/v1\nauthorizers: []\n'), /at least one authorization mode must be defined/);
  assert.deepEqual(resolveAuthorizationModes({ authorizationConfig: 'f', readFile: () => doc }), ['Node', 'RBAC']);
  assert.throws(() => resolveAuthorizationModes({ authorizationConfig: 'f', authorizationModeSet: true, authorizationMode: ['RBAC'], readFile: () => doc }), /can not be specified when --authorization-mode is specified/);
  assert.deepEqual(resolveAuthorizationModes({ readFile: () => '' }), ['AlwaysAllow']);
});
