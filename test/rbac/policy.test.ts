// The bootstrap policy (well-known grants of the default roles and bindings) and its
// reconciliation on start (create, add what is missing, honour autoupdate=false, recreate bindings
// whose roleRef changed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StatusError } from '../../src/machinery/errors.js';
import { RBACAuthorizer, UnionAuthorizer } from '../../src/apiserver/rbac/authorizers.js';
import { bootstrapPolicy, AUTOUPDATE_ANNOTATION, BOOTSTRAP_LABEL } from '../../src/apiserver/rbac/policy.js';
import { computeReconciledRole, reconcileBootstrapPolicy, type PolicyWriter } from '../../src/apiserver/rbac/reconcile.js';
import type { RBACResource } from '../../src/apiserver/rbac/resolver.js';
import { anonymous, bootstrapResolver, nra, ra, roleBinding, serviceAccount, subj, user } from './helpers.js';

const resolver = bootstrapResolver();
const authz = new UnionAuthorizer([{ name: 'RBAC', authorizer: new RBACAuthorizer(resolver) }]);

/** a user bound in `ns` to the ClusterRole `roleName` */
function boundTo(roleName: string, ns = 'team'): string {
  const name = `u-${roleName}`;
  resolver.onChange('rolebindings', 'ADDED', roleBinding(ns, `b-${roleName}`, 'ClusterRole', roleName, [subj.user(name)]));
  return name;
}

const can = (u: any, verb: string, resource: string, o: { group?: string; ns?: string; name?: string; sub?: string } = {}) => authz.authorize(ra(u, verb, resource, o)).decision === 'allow';

test('every object carries the bootstrap label and the autoupdate annotation', () => {
  const p = bootstrapPolicy();
  for (const o of [...p.clusterRoles, ...p.clusterRoleBindings, ...p.roles, ...p.roleBindings]) {
    assert.equal(o.metadata.labels[BOOTSTRAP_LABEL], 'rbac-defaults', o.metadata.name);
    assert.equal(o.metadata.annotations[AUTOUPDATE_ANNOTATION], 'true', o.metadata.name);
  }
  const names = new Set(p.clusterRoles.map((r) => r.metadata.name));
  for (const n of [
    'cluster-admin',
    'admin',
    'edit',
    'view',
    'system:discovery',
    'system:basic-user',
    'system:public-info-viewer',
    'system:monitoring',
    'system:node',
    'system:node-proxier',
    'system:kube-scheduler',
    'system:kube-controller-manager',
    'system:controller:namespace-controller',
    'system:controller:clusterrole-aggregation-controller',
  ]) {
    assert.ok(names.has(n), n);
  }
  assert.equal(names.size, p.clusterRoles.length, 'no duplicate names');
  // each controller role is bound to its service account in kube-system
  const ctl = p.clusterRoleBindings.find((b) => b.metadata.name === 'system:controller:deployment-controller');
  assert.deepEqual(ctl.subjects, [{ kind: 'ServiceAccount', name: 'deployment-controller', namespace: 'kube-system' }]);
  // system:node is kept without subjects (the Node authorizer authorizes kubelets)
  assert.equal(p.clusterRoleBindings.find((b) => b.metadata.name === 'system:node').subjects, undefined);
  // aggregated roles start without rules
  const admin = p.clusterRoles.find((r) => r.metadata.name === 'admin');
  assert.equal(admin.rules, undefined);
  assert.deepEqual(admin.aggregationRule, { clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } }] });
});

test('view can read pods and deployments, not secrets, and writes nothing', () => {
  const v = user(boundTo('view'));
  assert.ok(can(v, 'get', 'pods', { ns: 'team', name: 'p' }));
  assert.ok(can(v, 'list', 'pods', { ns: 'team' }));
  assert.ok(can(v, 'get', 'pods', { ns: 'team', name: 'p', sub: 'log' }));
  assert.ok(can(v, 'watch', 'deployments', { group: 'apps', ns: 'team' }));
  assert.ok(can(v, 'get', 'deployments', { group: 'apps', ns: 'team', name: 'd', sub: 'scale' }));
  assert.ok(!can(v, 'get', 'secrets', { ns: 'team', name: 's' }));
  assert.ok(!can(v, 'list', 'secrets', { ns: 'team' }));
  assert.ok(!can(v, 'create', 'pods', { ns: 'team' }));
  assert.ok(!can(v, 'get', 'pods', { ns: 'team', name: 'p', sub: 'exec' }));
  assert.ok(!can(v, 'get', 'roles', { group: 'rbac.authorization.k8s.io', ns: 'team' }));
  assert.ok(!can(v, 'get', 'pods', { ns: 'other', name: 'p' }), 'only in the binding namespace');
});

test('edit can create deployments, pods, secrets; cannot touch roles or quotas', () => {
  const e = user(boundTo('edit'));
  assert.ok(can(e, 'create', 'deployments', { group: 'apps', ns: 'team' }));
  assert.ok(can(e, 'patch', 'deployments', { group: 'apps', ns: 'team', name: 'd', sub: 'scale' }));
  assert.ok(can(e, 'delete', 'pods', { ns: 'team', name: 'p' }));
  assert.ok(can(e, 'create', 'pods', { ns: 'team', name: 'p', sub: 'exec' }));
  assert.ok(can(e, 'get', 'secrets', { ns: 'team', name: 's' }));
  assert.ok(can(e, 'create', 'secrets', { ns: 'team' }));
  assert.ok(can(e, 'impersonate', 'serviceaccounts', { ns: 'team', name: 'default' }));
  assert.ok(can(e, 'create', 'serviceaccounts', { ns: 'team', name: 'default', sub: 'token' }));
  assert.ok(can(e, 'create', 'jobs', { group: 'batch', ns: 'team' }));
  assert.ok(!can(e, 'create', 'rolebindings', { group: 'rbac.authorization.k8s.io', ns: 'team' }));
  assert.ok(!can(e, 'update', 'resourcequotas', { ns: 'team', name: 'q' }));
  assert.ok(!can(e, 'update', 'pods', { ns: 'team', name: 'p', sub: 'status' }));
});

test('admin can create roles and rolebindings and local access reviews', () => {
  const a = user(boundTo('admin'));
  assert.ok(can(a, 'create', 'rolebindings', { group: 'rbac.authorization.k8s.io', ns: 'team' }));
  assert.ok(can(a, 'delete', 'roles', { group: 'rbac.authorization.k8s.io', ns: 'team', name: 'r' }));
  assert.ok(can(a, 'create', 'localsubjectaccessreviews', { group: 'authorization.k8s.io', ns: 'team' }));
  assert.ok(can(a, 'create', 'deployments', { group: 'apps', ns: 'team' }), 'admin aggregates edit');
  assert.ok(can(a, 'get', 'pods', { ns: 'team', name: 'p' }), 'and view');
  assert.ok(!can(a, 'create', 'clusterroles', { group: 'rbac.authorization.k8s.io' }));
  assert.ok(!can(a, 'delete', 'namespaces', { name: 'team' }));
});

test('cluster-admin through system:masters; discovery, basic-user and public-info for everyone', () => {
  const root = { name: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] };
  const rbacOnly = new RBACAuthorizer(resolver);
  assert.equal(rbacOnly.authorize(ra(root, 'delete', 'nodes', { name: 'n' })).reason, 'RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to Group "system:masters"');
  assert.equal(rbacOnly.authorize(nra(root, 'get', '/metrics')).decision, 'allow');

  const someone = user('someone');
  for (const p of ['/api', '/apis', '/apis/apps/v1', '/version', '/healthz', '/openapi/v2', '/openapi/v3/apis/apps/v1']) {
    assert.equal(authz.authorize(nra(someone, 'get', p)).decision, 'allow', p);
  }
  assert.equal(authz.authorize(nra(someone, 'post', '/apis')).decision, 'noOpinion');
  assert.equal(authz.authorize(nra(someone, 'get', '/metrics')).decision, 'noOpinion');
  assert.ok(can(someone, 'create', 'selfsubjectaccessreviews', { group: 'authorization.k8s.io' }));
  assert.ok(can(someone, 'create', 'selfsubjectrulesreviews', { group: 'authorization.k8s.io' }));
  assert.ok(can(someone, 'create', 'selfsubjectreviews', { group: 'authentication.k8s.io' }));
  assert.ok(!can(someone, 'list', 'pods', { ns: 'default' }));
  assert.ok(!can(someone, 'list', 'namespaces'));

  // anonymous: public info only
  assert.equal(authz.authorize(nra(anonymous, 'get', '/version')).decision, 'allow');
  assert.equal(authz.authorize(nra(anonymous, 'get', '/healthz')).decision, 'allow');
  assert.equal(authz.authorize(nra(anonymous, 'get', '/apis')).decision, 'noOpinion');
  assert.ok(!can(anonymous, 'create', 'selfsubjectaccessreviews', { group: 'authorization.k8s.io' }));

  // service accounts: issuer discovery
  assert.equal(authz.authorize(nra(serviceAccount('default', 'x'), 'get', '/openid/v1/jwks')).decision, 'allow');
  assert.equal(authz.authorize(nra(someone, 'get', '/openid/v1/jwks')).decision, 'noOpinion');
});

test('component identities: scheduler, controller manager, controllers, monitoring', () => {
  const sched = { name: 'system:kube-scheduler', groups: ['system:authenticated'] };
  assert.ok(can(sched, 'create', 'pods', { ns: 'default', name: 'p', sub: 'binding' }));
  assert.ok(can(sched, 'list', 'nodes'));
  assert.ok(can(sched, 'update', 'leases', { group: 'coordination.k8s.io', ns: 'kube-system', name: 'kube-scheduler' }));
  assert.ok(!can(sched, 'update', 'leases', { group: 'coordination.k8s.io', ns: 'default', name: 'other' }));
  assert.ok(can(sched, 'update', 'leases', { group: 'coordination.k8s.io', ns: 'kube-system', name: 'other' }), 'leader-locking role in kube-system');
  assert.ok(can(sched, 'update', 'persistentvolumeclaims', { ns: 'default', name: 'c' }), 'system:volume-scheduler');
  assert.ok(!can(sched, 'delete', 'nodes', { name: 'n' }));
  const kcm = { name: 'system:kube-controller-manager', groups: ['system:authenticated'] };
  assert.ok(can(kcm, 'watch', 'deployments', { group: 'apps' }));
  assert.ok(can(kcm, 'get', 'configmaps', { ns: 'kube-system', name: 'extension-apiserver-authentication' }), 'namespaced role in kube-system');
  assert.ok(!can(kcm, 'delete', 'pods', { ns: 'default', name: 'p' }));
  const nsCtl = serviceAccount('kube-system', 'namespace-controller');
  assert.ok(can(nsCtl, 'deletecollection', 'configmaps', { ns: 'doomed' }));
  assert.ok(can(nsCtl, 'update', 'namespaces', { name: 'doomed', sub: 'finalize' }));
  const agg = serviceAccount('kube-system', 'clusterrole-aggregation-controller');
  assert.ok(can(agg, 'escalate', 'clusterroles', { group: 'rbac.authorization.k8s.io', name: 'admin' }));
  const mon = { name: 'prometheus', groups: ['system:monitoring', 'system:authenticated'] };
  assert.equal(authz.authorize(nra(mon, 'get', '/metrics')).decision, 'allow');
  assert.equal(authz.authorize(nra(mon, 'get', '/readyz/etcd')).decision, 'allow');
  const proxy = { name: 'system:kube-proxy', groups: ['system:authenticated'] };
  assert.ok(can(proxy, 'watch', 'endpointslices', { group: 'discovery.k8s.io' }));
  // the system:node role is bound to nobody
  const node = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
  assert.ok(!can(node, 'get', 'secrets', { ns: 'default', name: 's' }));
});

// ---- reconciliation ----

class MemoryWriter implements PolicyWriter {
  readonly objs = new Map<string, any>();
  readonly writes: string[] = [];
  private rv = 1;
  private k(res: RBACResource, ns: string, name: string) {
    return `${res}/${ns}/${name}`;
  }
  get(res: RBACResource, ns: string, name: string) {
    const o = this.objs.get(this.k(res, ns, name));
    return o ? JSON.parse(JSON.stringify(o)) : undefined;
  }
  async create(res: RBACResource, obj: any) {
    const k = this.k(res, obj.metadata.namespace ?? '', obj.metadata.name);
    if (this.objs.has(k)) throw new StatusError(409, 'AlreadyExists', 'exists');
    obj.metadata.resourceVersion = String(this.rv++);
    this.objs.set(k, obj);
    this.writes.push(`create ${k}`);
    return obj;
  }
  async update(res: RBACResource, obj: any) {
    const k = this.k(res, obj.metadata.namespace ?? '', obj.metadata.name);
    const cur = this.objs.get(k);
    if (!cur) throw new StatusError(404, 'NotFound', 'gone');
    if (cur.metadata.resourceVersion !== obj.metadata.resourceVersion) throw new StatusError(409, 'Conflict', 'conflict');
    obj.metadata.resourceVersion = String(this.rv++);
    this.objs.set(k, obj);
    this.writes.push(`update ${k}`);
    return obj;
  }
  async delete(res: RBACResource, ns: string, name: string) {
    this.objs.delete(this.k(res, ns, name));
    this.writes.push(`delete ${this.k(res, ns, name)}`);
  }
}

test('reconcile: creates everything, then nothing to do on restart', async () => {
  const w = new MemoryWriter();
  const p = bootstrapPolicy();
  const total = p.clusterRoles.length + p.clusterRoleBindings.length + p.roles.length + p.roleBindings.length;
  const lines: string[] = [];
  const first = await reconcileBootstrapPolicy(w, { log: (l) => lines.push(l) });
  assert.equal(first.filter((r) => r.operation === 'create').length, total);
  assert.equal(w.objs.size, total);
  assert.ok(lines.includes('created clusterrole.rbac.authorization.k8s.io/cluster-admin'));
  assert.ok(lines.includes('created rolebinding.rbac.authorization.k8s.io/system:controller:token-cleaner in kube-system'));
  w.writes.length = 0;
  const again = await reconcileBootstrapPolicy(w);
  assert.equal(again.filter((r) => r.operation !== 'none').length, 0);
  assert.deepEqual(w.writes, []);
});

test('reconcile: missing permissions, labels and subjects are added; extras kept; autoupdate=false honoured', async () => {
  const w = new MemoryWriter();
  await reconcileBootstrapPolicy(w);
  // an operator trimmed system:discovery and added a rule of their own
  const disc = w.objs.get('clusterroles//system:discovery');
  disc.rules = [{ verbs: ['get'], nonResourceURLs: ['/api', '/custom'] }];
  delete disc.metadata.labels;
  // someone removed a subject from system:public-info-viewer and added one
  const piv = w.objs.get('clusterrolebindings//system:public-info-viewer');
  piv.subjects = [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'extra' }];
  // a protected role keeps its edits
  const basic = w.objs.get('clusterroles//system:basic-user');
  basic.metadata.annotations[AUTOUPDATE_ANNOTATION] = 'false';
  basic.rules = [];
  // a binding pointing elsewhere is recreated
  const kcm = w.objs.get('clusterrolebindings//system:kube-controller-manager');
  kcm.roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' };
  // a deleted role comes back
  w.objs.delete('roles/kube-system/system:controller:token-cleaner');
  w.writes.length = 0;
  const lines: string[] = [];
  const res = await reconcileBootstrapPolicy(w, { log: (l) => lines.push(l) });
  const byName = (n: string) => res.find((r) => r.name === n)!;

  const d = w.objs.get('clusterroles//system:discovery');
  assert.equal(byName('system:discovery').operation, 'update');
  assert.equal(d.rules[0].nonResourceURLs.join(), '/api,/custom', 'existing rules kept first');
  assert.equal(d.rules.length, 1 + 10, 'one broken-down rule per missing URL');
  assert.equal(d.metadata.labels[BOOTSTRAP_LABEL], 'rbac-defaults');
  assert.ok(
    lines.some((l) => l.startsWith('updated clusterrole.rbac.authorization.k8s.io/system:discovery with additional permissions: ') && l.includes('{NonResourceURLs:["/apis"], Verbs:["get"]}')),
    lines.join('\n'),
  );

  const s = w.objs.get('clusterrolebindings//system:public-info-viewer').subjects.map((x: any) => x.name);
  assert.deepEqual(s, ['extra', 'system:authenticated', 'system:unauthenticated']);

  assert.equal(byName('system:basic-user').protected, true);
  assert.deepEqual(w.objs.get('clusterroles//system:basic-user').rules, []);
  assert.ok(lines.some((l) => l.startsWith('skipped reconcile-protected clusterrole.rbac.authorization.k8s.io/system:basic-user with missing permissions: ')));

  const kcmRes = res.find((r) => r.resource === 'clusterrolebindings' && r.name === 'system:kube-controller-manager')!;
  assert.equal(kcmRes.operation, 'recreate');
  assert.equal(w.objs.get('clusterrolebindings//system:kube-controller-manager').roleRef.name, 'system:kube-controller-manager');
  assert.ok(w.writes.includes('delete clusterrolebindings//system:kube-controller-manager'));

  assert.equal(res.find((r) => r.resource === 'roles' && r.name === 'system:controller:token-cleaner')!.operation, 'create');
});

test('reconcile of aggregated roles: selectors added, rules left to the aggregator', () => {
  const expected = bootstrapPolicy().clusterRoles.find((r) => r.metadata.name === 'edit');
  const existing = JSON.parse(JSON.stringify(expected));
  existing.rules = [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }];
  existing.aggregationRule.clusterRoleSelectors = [{ matchLabels: { custom: 'true' } }];
  const r = computeReconciledRole(existing, expected, true);
  assert.equal(r.operation, 'update');
  assert.deepEqual(r.object.aggregationRule.clusterRoleSelectors, [{ matchLabels: { custom: 'true' } }, { matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } }]);
  assert.deepEqual(r.object.rules, existing.rules);
  // a role the policy does not aggregate loses an aggregationRule
  const cm = bootstrapPolicy().clusterRoles.find((x) => x.metadata.name === 'system:discovery');
  const cm2 = { ...JSON.parse(JSON.stringify(cm)), aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] } };
  const r2 = computeReconciledRole(cm2, cm, true);
  assert.equal(r2.operation, 'update');
  assert.equal(r2.object.aggregationRule, undefined);
});
