// RBAC end to end: `keelson server --authorization-mode=RBAC,Node` with a static token file, driven
// by kubectl and raw HTTPS as several users: the admin certificate (system:masters), token users,
// a service account, anonymous requests, impersonation and a node. Every answer is checked
// against what the bootstrap policy and the bindings made here grant, with kube-apiserver's
// messages. Then a restart reconciles the bootstrap policy.
//
// Needs: --authorization-mode wired to src/apiserver/rbac (authorizer in the request chain,
// escalation checks in the RBAC stores, bootstrap reconciliation, aggregation), and the
// authentication of issue 5 (--token-auth-file, service account tokens from `kubectl create
// token`, anonymous requests, impersonation headers).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster, until, type Cluster, type RunResult, NO_POD_GC } from './harness.js';

let c: Cluster;
let dataDir: string;
let tokenDir: string;
const TOKENS: Record<string, string> = {
  alice: 'alice-token-0123456789',
  bob: 'bob-token-0123456789',
  node1: 'node1-token-0123456789',
};

/** a kubeconfig with the cluster's CA and a bearer token (or no credentials: anonymous) */
function kubeconfigFor(name: string, token?: string): string {
  const ca = c.credentials.ca.toString('base64');
  const user = token ? `    token: ${token}\n` : '    {}\n';
  return c.file(
    `kubeconfig-${name}`,
    `apiVersion: v1
kind: Config
clusters:
- name: keelson
  cluster:
    server: ${c.url}
    certificate-authority-data: ${ca}
    tls-server-name: localhost
users:
- name: ${name}
  user:
${user}contexts:
- name: ${name}
  context: {cluster: keelson, user: ${name}}
current-context: ${name}
`,
  );
}

const configs: Record<string, string> = {};

function as(who: string, args: string[], input?: string): RunResult {
  if (who === 'admin') return c.kubectl(args, { input, timeoutMs: 60_000 });
  return c.kubectl(args, { input, env: { KUBECONFIG: configs[who]! }, timeoutMs: 60_000 });
}

function ok(who: string, args: string[], input?: string): string {
  const r = as(who, args, input);
  assert.equal(r.code, 0, `${who}: kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** a 403 as kubectl prints it: `Error from server (Forbidden): <message>` */
function forbidden(who: string, args: string[], message: string, input?: string): void {
  const r = as(who, args, input);
  assert.notEqual(r.code, 0, `${who}: kubectl ${args.join(' ')} succeeded: ${r.stdout}`);
  assert.ok(r.stderr.includes(`Error from server (Forbidden): ${message}`), `${who}: kubectl ${args.join(' ')}:\n${r.stderr}\nexpected: ${message}`);
}

/** a 403 through `kubectl create <kind>`, which prints `error: failed to create <kind>: <message>` */
function refused(who: string, args: string[], message: string): void {
  const r = as(who, args);
  assert.notEqual(r.code, 0, `${who}: kubectl ${args.join(' ')} succeeded: ${r.stdout}`);
  assert.ok(r.stderr.includes(message), `${who}: kubectl ${args.join(' ')}:\n${r.stderr}\nexpected: ${message}`);
}

function canI(who: string, args: string[]): boolean {
  const r = as(who, ['auth', 'can-i', ...args]);
  const out = r.stdout.trim();
  assert.ok(out.startsWith('yes') || out.startsWith('no'), `${who}: can-i ${args.join(' ')}: ${r.stdout} ${r.stderr}`);
  return out.startsWith('yes');
}

function bearer(who: string): Record<string, string> {
  return { authorization: `Bearer ${TOKENS[who] ?? who}` };
}

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'keelson-rbac-'));
  tokenDir = mkdtempSync(join(tmpdir(), 'keelson-rbac-tokens-'));
  const tokenFile = join(tokenDir, 'tokens.csv');
  writeFileSync(
    tokenFile,
    [`${TOKENS.alice},alice,alice-uid,"dev"`, `${TOKENS.bob},bob,bob-uid`, `${TOKENS.node1},system:node:node1,node1-uid,"system:nodes"`].join('\n') + '\n',
  );
  c = await startCluster({ dataDir, keepData: true, args: ['--authorization-mode=RBAC,Node', `--token-auth-file=${tokenFile}`, NO_POD_GC] });
  configs.alice = kubeconfigFor('alice', TOKENS.alice);
  configs.bob = kubeconfigFor('bob', TOKENS.bob);
  configs.node1 = kubeconfigFor('node1', TOKENS.node1);
  // the bootstrap policy is in place and aggregated before the tests start
  await until('aggregated admin role', () => {
    const r = c.kubectl(['get', 'clusterrole', 'admin', '-o', 'json']);
    return r.code === 0 && (JSON.parse(r.stdout).rules ?? []).some((x: any) => (x.resources ?? []).includes('rolebindings'));
  });
  ok('admin', ['create', 'namespace', 'team']);
  ok('admin', ['create', 'rolebinding', 'alice-view', '--clusterrole=view', '--user=alice', '-n', 'team']);
  ok('admin', ['create', 'serviceaccount', 'ci', '-n', 'team']);
  ok('admin', ['create', 'rolebinding', 'ci-edit', '--clusterrole=edit', '--serviceaccount=team:ci', '-n', 'team']);
  ok('admin', ['create', 'configmap', 'settings', '-n', 'team', '--from-literal=a=1']);
  ok('admin', ['create', 'secret', 'generic', 'creds', '-n', 'team', '--from-literal=p=x']);
  // bindings reach the authorizer through the watch caches
  await until('alice bound', () => canI('alice', ['list', 'pods', '-n', 'team']));
});

after(async () => {
  await c?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(tokenDir, { recursive: true, force: true });
});

test('bootstrap policy: default roles and bindings with their labels and annotations', () => {
  const roles = JSON.parse(ok('admin', ['get', 'clusterroles', '-o', 'json'])).items;
  const names = new Set(roles.map((r: any) => r.metadata.name));
  for (const n of ['cluster-admin', 'admin', 'edit', 'view', 'system:discovery', 'system:basic-user', 'system:public-info-viewer', 'system:node', 'system:kube-scheduler', 'system:controller:namespace-controller']) {
    assert.ok(names.has(n), n);
  }
  const view = roles.find((r: any) => r.metadata.name === 'view');
  assert.equal(view.metadata.labels['kubernetes.io/bootstrapping'], 'rbac-defaults');
  assert.equal(view.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'], 'true');
  assert.ok(view.rules.length > 0, 'view is aggregated');
  const crb = JSON.parse(ok('admin', ['get', 'clusterrolebinding', 'cluster-admin', '-o', 'json']));
  assert.deepEqual(crb.subjects, [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:masters' }]);
  const rbs = JSON.parse(ok('admin', ['get', 'rolebindings', '-n', 'kube-system', '-o', 'json'])).items.map((b: any) => b.metadata.name);
  assert.ok(rbs.includes('system::leader-locking-kube-scheduler'));
});

test('admin certificate (system:masters): everything', () => {
  assert.equal(canI('admin', ['*', '*']), true);
  assert.equal(canI('admin', ['delete', 'nodes']), true);
  ok('admin', ['get', 'pods', '-A']);
  const r = as('admin', ['get', '--raw', '/metrics']);
  assert.equal(r.code, 0, r.stderr);
});

test('token user with view in one namespace: kubectl answers and messages', () => {
  ok('alice', ['get', 'pods', '-n', 'team']);
  ok('alice', ['get', 'configmap', 'settings', '-n', 'team']);
  forbidden('alice', ['get', 'pods', '-n', 'default'], 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"');
  forbidden('alice', ['get', 'nodes'], 'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope');
  forbidden('alice', ['get', 'secret', 'creds', '-n', 'team'], 'secrets "creds" is forbidden: User "alice" cannot get resource "secrets" in API group "" in the namespace "team"');
  forbidden('alice', ['get', 'deployments.apps', '-n', 'default'], 'deployments.apps is forbidden: User "alice" cannot list resource "deployments" in API group "apps" in the namespace "default"');
  refused('alice', ['create', 'configmap', 'x', '-n', 'team'], 'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team"');
  // a dry run needs what the real request needs
  refused('alice', ['create', 'configmap', 'x', '-n', 'team', '--dry-run=server'], 'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team"');
  forbidden('alice', ['delete', 'configmap', 'settings', '-n', 'team'], 'configmaps "settings" is forbidden: User "alice" cannot delete resource "configmaps" in API group "" in the namespace "team"');
  forbidden('alice', ['delete', 'configmaps', '--all', '-n', 'team'], 'configmaps "settings" is forbidden: User "alice" cannot delete resource "configmaps" in API group "" in the namespace "team"');
});

test('kubectl auth can-i and can-i --list (SelfSubjectAccessReview, SelfSubjectRulesReview)', () => {
  assert.equal(canI('alice', ['list', 'pods', '-n', 'team']), true);
  assert.equal(canI('alice', ['get', 'pods', '--subresource=log', '-n', 'team']), true);
  assert.equal(canI('alice', ['watch', 'deployments.apps', '-n', 'team']), true);
  assert.equal(canI('alice', ['create', 'pods', '-n', 'team']), false);
  assert.equal(canI('alice', ['get', 'secrets', '-n', 'team']), false);
  assert.equal(canI('alice', ['list', 'pods', '-n', 'default']), false);
  assert.equal(canI('alice', ['get', '/apis']), true);
  assert.equal(canI('alice', ['get', '/metrics']), false);
  const list = ok('alice', ['auth', 'can-i', '--list', '-n', 'team']);
  assert.match(list, /^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs/m);
  assert.match(list, /^pods\s+\[\]\s+\[\]\s+\[get list watch\]/m);
  assert.match(list, /^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]/m);
  assert.match(list, /^\s+\[\/api\/\*\]\s+\[\]\s+\[get\]/m);
  assert.doesNotMatch(list, /^secrets\s/m);
  const other = ok('alice', ['auth', 'can-i', '--list', '-n', 'default']);
  assert.doesNotMatch(other, /^pods\s/m);
});

test('raw requests: discovery allowed, other paths refused with the path message', async () => {
  const dc = await c.rawNoAuth('DELETE', '/api/v1/namespaces/team/configmaps', { headers: bearer('alice') });
  assert.equal(dc.status, 403);
  assert.equal(dc.json().message, 'configmaps is forbidden: User "alice" cannot deletecollection resource "configmaps" in API group "" in the namespace "team"');
  for (const p of ['/api', '/apis', '/apis/apps/v1', '/version']) {
    const r = await c.rawNoAuth('GET', p, { headers: bearer('alice') });
    assert.equal(r.status, 200, `${p}: ${r.text}`);
  }
  const m = await c.rawNoAuth('GET', '/metrics', { headers: bearer('alice') });
  assert.equal(m.status, 403);
  assert.deepEqual(m.json(), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'forbidden: User "alice" cannot get path "/metrics"',
    reason: 'Forbidden',
    details: {},
    code: 403,
  });
  const l = await c.rawNoAuth('GET', '/api/v1/namespaces/default/pods', { headers: bearer('alice') });
  assert.equal(l.status, 403);
  assert.deepEqual(l.json(), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"',
    reason: 'Forbidden',
    details: { kind: 'pods' },
    code: 403,
  });
  // a watch of one object by field selector is authorized for that object
  ok('admin', ['create', 'configmap', 'shared', '-n', 'default', '--from-literal=a=1']);
  ok('admin', ['create', 'role', 'one-cm', '-n', 'default', '--verb=get,list,watch', '--resource=configmaps', '--resource-name=shared']);
  ok('admin', ['create', 'rolebinding', 'bob-one-cm', '-n', 'default', '--role=one-cm', '--user=bob']);
  await until('bob bound', () => canI('bob', ['get', 'configmaps/shared', '-n', 'default']));
  const named = await c.rawNoAuth('GET', '/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dshared', { headers: bearer('bob') });
  assert.equal(named.status, 200, named.text);
  const all = await c.rawNoAuth('GET', '/api/v1/namespaces/default/configmaps', { headers: bearer('bob') });
  assert.equal(all.status, 403);
});

test('service account with edit: writes in its namespace, nothing elsewhere, no RBAC', async () => {
  const token = ok('admin', ['create', 'token', 'ci', '-n', 'team']).trim();
  configs.ci = kubeconfigFor('ci', token);
  TOKENS.ci = token;
  await until('ci bound', () => canI('ci', ['create', 'configmaps', '-n', 'team']));
  ok('ci', ['create', 'configmap', 'from-ci', '-n', 'team', '--from-literal=a=1']);
  ok('ci', ['get', 'secret', 'creds', '-n', 'team']);
  ok('ci', ['create', 'deployment', 'web', '--image=nginx', '-n', 'team']);
  forbidden('ci', ['get', 'pods', '-n', 'default'], 'pods is forbidden: User "system:serviceaccount:team:ci" cannot list resource "pods" in API group "" in the namespace "default"');
  refused(
    'ci',
    ['create', 'rolebinding', 'x', '--clusterrole=view', '--user=bob', '-n', 'team'],
    'rolebindings.rbac.authorization.k8s.io is forbidden: User "system:serviceaccount:team:ci" cannot create resource "rolebindings" in API group "rbac.authorization.k8s.io" in the namespace "team"',
  );
  assert.equal(canI('ci', ['create', 'deployments.apps', '-n', 'team']), true);
  assert.equal(canI('ci', ['update', 'resourcequotas', '-n', 'team']), false);
});

test('anonymous: public information only', async () => {
  const v = await c.rawNoAuth('GET', '/version');
  assert.equal(v.status, 200);
  const api = await c.rawNoAuth('GET', '/api');
  assert.equal(api.status, 403);
  assert.equal(api.json().message, 'forbidden: User "system:anonymous" cannot get path "/api"');
  const pods = await c.rawNoAuth('GET', '/api/v1/namespaces/default/pods');
  assert.equal(pods.status, 403);
  assert.equal(pods.json().message, 'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "default"');
  // (kubectl without credentials prompts for a user name, so anonymous requests go raw)
  const ns = await c.rawNoAuth('GET', '/api/v1/namespaces');
  assert.equal(ns.status, 403);
  assert.equal(ns.json().message, 'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope');
  const ssar = await c.rawNoAuth('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } }),
  });
  assert.equal(ssar.status, 403, 'system:basic-user is bound to authenticated users only');
});

test('impersonation: the admin may, alice may not until granted', async () => {
  ok('admin', ['get', 'pods', '-n', 'team', '--as=alice']);
  forbidden('admin', ['get', 'pods', '-n', 'default', '--as=alice'], 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"');
  forbidden('admin', ['get', 'secrets', '-n', 'team', '--as=system:serviceaccount:team:other'], 'secrets is forbidden: User "system:serviceaccount:team:other" cannot list resource "secrets" in API group "" in the namespace "team"');
  forbidden('alice', ['get', 'pods', '-n', 'team', '--as=bob'], 'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope');
  ok('admin', ['create', 'clusterrole', 'impersonate-bob', '--verb=impersonate', '--resource=users', '--resource-name=bob']);
  ok('admin', ['create', 'clusterrolebinding', 'alice-impersonates-bob', '--clusterrole=impersonate-bob', '--user=alice']);
  await until('alice may impersonate bob', () => canI('alice', ['impersonate', 'users/bob']));
  // as bob, alice sees what bob sees (nothing in team)
  forbidden('alice', ['get', 'pods', '-n', 'team', '--as=bob'], 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "team"');
  forbidden('alice', ['get', 'pods', '-n', 'team', '--as=carol'], 'users "carol" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope');
});

test('escalation: a role with more than the user holds is refused; bind and escalate lift it', async () => {
  ok('admin', ['create', 'role', 'rbac-writer', '-n', 'team', '--verb=create,update,get', '--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io']);
  ok('admin', ['create', 'rolebinding', 'alice-rbac', '-n', 'team', '--role=rbac-writer', '--user=alice']);
  await until('alice may create roles', () => canI('alice', ['create', 'roles.rbac.authorization.k8s.io', '-n', 'team']));
  ok('alice', ['create', 'role', 'readers', '-n', 'team', '--verb=get,list', '--resource=pods']);
  const r = as('alice', ['create', 'role', 'deleters', '-n', 'team', '--verb=get,delete', '--resource=pods,secrets']);
  assert.notEqual(r.code, 0);
  assert.ok(
    r.stderr.includes(
      'roles.rbac.authorization.k8s.io "deleters" is forbidden: user "alice" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n' +
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}',
    ),
    r.stderr,
  );
  // binding edit (more than view) is refused, binding view (held) is allowed
  refused(
    'alice',
    ['create', 'rolebinding', 'bob-edit', '-n', 'team', '--clusterrole=edit', '--user=bob'],
    'rolebindings.rbac.authorization.k8s.io "bob-edit" is forbidden: user "alice" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:',
  );
  ok('alice', ['create', 'rolebinding', 'bob-view', '-n', 'team', '--clusterrole=view', '--user=bob']);
  // the bind verb on edit lifts the check for bindings
  ok('admin', ['create', 'role', 'bind-edit', '-n', 'team', '--verb=bind', '--resource=clusterroles.rbac.authorization.k8s.io', '--resource-name=edit']);
  ok('admin', ['create', 'rolebinding', 'alice-bind-edit', '-n', 'team', '--role=bind-edit', '--user=alice']);
  await until('alice may bind edit', () => canI('alice', ['bind', 'clusterroles.rbac.authorization.k8s.io/edit', '-n', 'team']));
  ok('alice', ['create', 'rolebinding', 'bob-edit', '-n', 'team', '--clusterrole=edit', '--user=bob']);
  // the escalate verb lifts it for roles
  ok('admin', ['create', 'role', 'escalate-roles', '-n', 'team', '--verb=escalate', '--resource=roles.rbac.authorization.k8s.io']);
  ok('admin', ['create', 'rolebinding', 'alice-escalate', '-n', 'team', '--role=escalate-roles', '--user=alice']);
  await until('alice may escalate', () => canI('alice', ['escalate', 'roles.rbac.authorization.k8s.io', '-n', 'team']));
  ok('alice', ['create', 'role', 'deleters', '-n', 'team', '--verb=get,delete', '--resource=pods,secrets']);
});

test('SubjectAccessReview answers allowed, reason and denied as Kubernetes', async () => {
  const review = (spec: any) =>
    c.raw('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec } });
  const yes = await review({ user: 'alice', groups: ['dev'], resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'team' } });
  assert.equal(yes.status, 201, yes.text);
  assert.deepEqual(yes.json().status, { allowed: true, reason: 'RBAC: allowed by RoleBinding "alice-view/team" of ClusterRole "view" to User "alice"' });
  const no = await review({ user: 'alice', groups: ['dev'], resourceAttributes: { verb: 'delete', resource: 'pods', namespace: 'team' } });
  assert.deepEqual(no.json().status, { allowed: false });
  const nodeNo = await review({ user: 'system:node:node1', groups: ['system:nodes'], resourceAttributes: { verb: 'get', resource: 'secrets', namespace: 'team', name: 'creds' } });
  assert.deepEqual(nodeNo.json().status, { allowed: false, reason: "no relationship found between node 'node1' and this object" });
  // alice may not ask about others
  const denied = await c.rawNoAuth('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    headers: { ...bearer('alice'), 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'bob', resourceAttributes: { verb: 'get', resource: 'pods' } } }),
  });
  assert.equal(denied.status, 403);
  assert.equal(denied.json().message, 'subjectaccessreviews.authorization.k8s.io is forbidden: User "alice" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope');
});

test('Node authorizer: its Node, its pods and what they use', async () => {
  ok('admin', ['create', 'secret', 'generic', 'pod-secret', '-n', 'team', '--from-literal=a=1']);
  ok(
    'admin',
    ['apply', '-f', '-'],
    `apiVersion: v1
kind: Pod
metadata: {name: on-node1, namespace: team}
spec:
  nodeName: node1
  schedulerName: not-served
  containers: [{name: c, image: nginx}]
  volumes: [{name: s, secret: {secretName: pod-secret}}]
`,
  );
  const get = (p: string) => c.rawNoAuth('GET', p, { headers: bearer('node1') });
  await until('the graph knows the pod', async () => (await get('/api/v1/namespaces/team/secrets/pod-secret')).status === 200);
  const other = await get('/api/v1/namespaces/team/secrets/creds');
  assert.equal(other.status, 403);
  assert.equal(
    other.json().message,
    'secrets "creds" is forbidden: User "system:node:node1" cannot get resource "secrets" in API group "" in the namespace "team": no relationship found between node \'node1\' and this object',
  );
  assert.equal((await get('/api/v1/namespaces/team/pods/on-node1')).status, 200);
  assert.equal((await get('/api/v1/pods?fieldSelector=spec.nodeName%3Dnode1')).status, 200);
  const all = await get('/api/v1/pods');
  assert.equal(all.status, 403);
  assert.match(all.json().message, /: can only list\/watch pods with spec.nodeName field selector$/);
  assert.equal((await get('/api/v1/nodes/node1')).status, 404, 'allowed; not registered');
  const n2 = await get('/api/v1/nodes/node2');
  assert.equal(n2.status, 403);
  assert.equal(n2.json().message, 'nodes "node2" is forbidden: User "system:node:node1" cannot get resource "nodes" in API group "" at the cluster scope: node \'node1\' cannot read \'node2\', only its own Node object');
  const lease = await get('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node1');
  assert.equal(lease.status, 404, 'allowed; absent');
  // list of nodes: refused with the node reason
  forbidden('node1', ['get', 'nodes'], 'nodes is forbidden: User "system:node:node1" cannot list resource "nodes" in API group "" at the cluster scope: node \'node1\' cannot read all nodes, only its own Node object');
});

test('restart: the bootstrap policy is reconciled (missing permissions back, autoupdate=false kept)', async () => {
  // trim two default roles; protect one of them
  ok('admin', ['patch', 'clusterrole', 'system:public-info-viewer', '--type=json', '-p', '[{"op":"replace","path":"/rules","value":[{"verbs":["get"],"nonResourceURLs":["/version"]}]}]']);
  ok('admin', ['patch', 'clusterrole', 'system:monitoring', '--type=json', '-p', '[{"op":"replace","path":"/rules","value":[]}]']);
  ok('admin', ['annotate', '--overwrite', 'clusterrole', 'system:monitoring', 'rbac.authorization.kubernetes.io/autoupdate=false']);
  ok('admin', ['delete', 'clusterrolebinding', 'system:basic-user']);
  await c.stopProcess();
  await c.launch();
  const piv = JSON.parse(ok('admin', ['get', 'clusterrole', 'system:public-info-viewer', '-o', 'json']));
  const urls = piv.rules.flatMap((r: any) => r.nonResourceURLs ?? []);
  for (const u of ['/version', '/healthz', '/livez', '/readyz', '/version/']) assert.ok(urls.includes(u), u);
  const mon = JSON.parse(ok('admin', ['get', 'clusterrole', 'system:monitoring', '-o', 'json']));
  assert.deepEqual(mon.rules ?? [], []);
  ok('admin', ['get', 'clusterrolebinding', 'system:basic-user']);
  // the user bindings made before survived and still apply
  assert.equal(canI('alice', ['list', 'pods', '-n', 'team']), true);
});
