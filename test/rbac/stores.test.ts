// Authorization over real ResourceStores (memory backend): the bootstrap policy written through
// the stores (their validation accepts every object), the resolver and the node graph fed from the
// watch caches, aggregation written back, reconciliation on a second start, escalation checks
// against what was stored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryBackend } from '../../src/storage/memory.js';
import { BUILTIN_KINDS } from '../../src/schema/kinds.js';
import { ResourceStore } from '../../src/apiserver/registry/store.js';
import { strategyFor } from '../../src/apiserver/registry/strategies.js';
import { Authorization, forbiddenError, requestAttributes, storeAggregationWriter, storePolicyWriter, type RBACResource } from '../../src/apiserver/rbac/index.js';
import { parseRequestInfo } from '../../src/apiserver/requestinfo.js';
import { bootstrapPolicy } from '../../src/apiserver/rbac/policy.js';
import { roleBinding, subj, user } from './helpers.js';

async function stores() {
  const backend = new MemoryBackend();
  await backend.open();
  const byResource = new Map<string, ResourceStore>();
  for (const k of BUILTIN_KINDS) {
    if (k.virtual) continue;
    if (!['rbac.authorization.k8s.io', '', 'storage.k8s.io'].includes(k.group)) continue;
    if (!['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings', 'pods', 'persistentvolumes', 'volumeattachments'].includes(k.resource)) continue;
    const s = new ResourceStore(k, strategyFor(k), backend);
    await s.start();
    byResource.set(`${k.group}/${k.resource}`, s);
  }
  const lookup = (group: string, resource: string) => byResource.get(`${group}/${resource}`);
  const rbac = (r: RBACResource) => byResource.get(`rbac.authorization.k8s.io/${r}`)!;
  return { backend, lookup, rbac };
}

async function settle(f: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!f()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const attrs = (u: any, method: string, path: string) => {
  const q = path.indexOf('?');
  const query = new URLSearchParams(q < 0 ? '' : path.slice(q + 1));
  const p = q < 0 ? path : path.slice(0, q);
  return requestAttributes(u, parseRequestInfo(method, p, query), method, query);
};

test('bootstrap through the stores, feeds from the caches, aggregation written back', async () => {
  const { backend, lookup, rbac } = await stores();
  const authz = new Authorization({ modes: 'Node,RBAC' });
  authz.attach(lookup);
  const lines: string[] = [];
  const results = await authz.bootstrap(storePolicyWriter(rbac), (l) => lines.push(l));
  const p = bootstrapPolicy();
  assert.equal(results.length, p.clusterRoles.length + p.clusterRoleBindings.length + p.roles.length + p.roleBindings.length);
  assert.ok(results.every((r) => r.operation === 'create'));
  const aggregator = authz.startAggregation(storeAggregationWriter(rbac('clusterroles')));
  // view feeds edit, edit feeds admin: each write comes back through the cache and triggers the next run
  await settle(() => (rbac('clusterroles').get('', 'admin')?.obj.rules ?? []).some((r: any) => r.resources?.includes('controllerrevisions')), 'admin aggregated');
  await aggregator.idle();
  const admin = rbac('clusterroles').get('', 'admin')!.obj;
  assert.ok(admin.rules.some((r: any) => r.resources?.includes('rolebindings')), 'admin holds aggregate-to-admin');
  assert.ok(admin.rules.some((r: any) => r.resources?.includes('deployments') && r.verbs.includes('create')), 'admin holds edit');

  // the resolver follows the stores
  const alice = user('alice');
  assert.deepEqual(authz.authorizer.authorize(attrs(alice, 'GET', '/api/v1/namespaces/team/pods')), { decision: 'noOpinion', reason: '' });
  await rbac('rolebindings').create(roleBinding('team', 'alice-edit', 'ClusterRole', 'edit', [subj.user('alice')]), { dryRun: false });
  await settle(() => authz.authorizer.authorize(attrs(alice, 'GET', '/api/v1/namespaces/team/pods')).decision === 'allow', 'binding seen');
  assert.equal(authz.authorizer.authorize(attrs(alice, 'POST', '/apis/apps/v1/namespaces/team/deployments')).decision, 'allow');
  const denied = attrs(alice, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings');
  const r = authz.authorizer.authorize(denied);
  assert.equal(r.decision, 'noOpinion');
  assert.equal(
    forbiddenError(denied, r.reason).message,
    'rolebindings.rbac.authorization.k8s.io is forbidden: User "alice" cannot create resource "rolebindings" in API group "rbac.authorization.k8s.io" in the namespace "team"',
  );

  // escalation: alice (edit in team) may bind view there, not admin
  const view = roleBinding('team', 'bob-view', 'ClusterRole', 'view', [subj.user('bob')]);
  assert.equal(authz.checkWrite({ user: alice, resource: 'rolebindings', namespace: 'team', requestName: '', obj: view }), undefined);
  const adm = roleBinding('team', 'bob-admin', 'ClusterRole', 'admin', [subj.user('bob')]);
  const err = authz.checkWrite({ user: alice, resource: 'rolebindings', namespace: 'team', requestName: '', obj: adm });
  assert.match(err!.message, /^rolebindings.rbac.authorization.k8s.io "bob-admin" is forbidden: user "alice" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\["authorization.k8s.io"\], Resources:\["localsubjectaccessreviews"\], Verbs:\["create"\]\}\n\{APIGroups:\["rbac.authorization.k8s.io"\], Resources:\["rolebindings"\], Verbs:\["create" /);

  // the node graph follows the pods store
  const pods = lookup('', 'pods')!;
  await pods.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'team' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx' }], volumes: [{ name: 's', secret: { secretName: 'tls' } }] } }, { dryRun: false });
  const n1 = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
  await settle(() => authz.authorizer.authorize(attrs(n1, 'GET', '/api/v1/namespaces/team/secrets/tls')).decision === 'allow', 'pod seen');
  assert.deepEqual(authz.authorizer.authorize(attrs(n1, 'GET', '/api/v1/namespaces/team/secrets/other')), { decision: 'noOpinion', reason: "no relationship found between node 'n1' and this object" });
  assert.equal(authz.authorizer.authorize(attrs(n1, 'GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn1')).decision, 'allow');

  // a second start: nothing to do; a trimmed role gets its permissions back
  const again = await authz.bootstrap(storePolicyWriter(rbac));
  assert.equal(again.filter((x) => x.operation !== 'none').length, 0, JSON.stringify(again.filter((x) => x.operation !== 'none').map((x) => x.name)));
  await rbac('clusterroles').guaranteedUpdate('', 'system:public-info-viewer', (cur) => ({ ...cur, rules: [{ verbs: ['get'], nonResourceURLs: ['/version'] }] }), { dryRun: false });
  const third = await authz.bootstrap(storePolicyWriter(rbac), (l) => lines.push(l));
  assert.deepEqual(third.filter((x) => x.operation !== 'none').map((x) => `${x.operation} ${x.name}`), ['update system:public-info-viewer']);
  assert.ok(lines.some((l) => l.startsWith('updated clusterrole.rbac.authorization.k8s.io/system:public-info-viewer with additional permissions: ')));

  authz.stop();
  for (const res of ['clusterroles', 'clusterrolebindings', 'roles', 'rolebindings'] as RBACResource[]) rbac(res).stop();
  for (const [g, res] of [['', 'pods'], ['', 'persistentvolumes'], ['storage.k8s.io', 'volumeattachments']]) lookup(g!, res!)!.stop();
  await backend.close();
});
