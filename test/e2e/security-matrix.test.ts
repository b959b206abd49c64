// The security matrix of issue 5, end to end against a real `keelson server` (Node,RBAC):
//  - users: the admin certificate, a token user (--token-auth-file) bound to the `view`
//    ClusterRole in one namespace, to a custom Role (through a group) in another and to a custom
//    ClusterRole, a service account with a token from `kubectl create token` bound to `edit`,
//    anonymous requests, and the admin impersonating each of them (Impersonate-User, -Group,
//    -Uid, -Extra-*);
//  - by verbs (get, list, watch, create, update, patch, delete, deletecollection, a PUT that
//    creates, a server-side apply that creates, a dry run) and resources (pods, pods/status,
//    pods/log, secrets, configmaps, deployments/scale, namespaces, clusterroles, nodes);
//  - every answer checked against what the bindings made here grant (the test holds its own
//    copy of the rules of `view` and `edit` for these resources, as Kubernetes' bootstrap policy
//    defines them), every 403 with Kubernetes' exact message, and `kubectl auth can-i` (and
//    `--list`) agreeing with the raw requests.
// Then impersonation without the impersonate verb, bad credentials of every kind (401, the
// server stays ready), --anonymous-auth=false and AlwaysAllow, TokenRequest's answer, the front
// proxy with its uid header, access reviews (SubjectAccessReview, LocalSubjectAccessReview,
// SelfSubjectRulesReview), escalation prevention through raw requests (bind, escalate,
// aggregationRule), ClusterRole aggregation, NodeRestriction with the Node authorizer, webhook
// configuration validation and the dry-run rule of webhooks with side effects (configurations
// written into the store while the server is stopped, since v1 validation refuses them), and
// the flags `keelson server` shares with `keelson apiserver`.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, createPublicKey, createSign, createHmac, createVerify, generateKeyPairSync, type KeyObject } from 'node:crypto';
import Database from 'better-sqlite3';
import { KEELSON, ROOT, startCluster, until, type Cluster, type RunResult } from './harness.js';
import { makeCert, type TestCert } from '../authn/helpers.js';
import { respond, startWebhookServer, type WebhookServer } from '../admission/webhookserver.js';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const ALICE_TOKEN = 'alice-token-mx-0123456789';
const EVE_TOKEN = 'eve-token-mx-0123456789';
const NODE_TOKEN = 'node-token-mx-0123456789';

let c: Cluster;
let dir: string;
let saKey: KeyObject;
let clientCA: TestCert;
let robotToken = '';
let robotUID = '';
const certs: Record<string, TestCert> = {};

// ---------------------------------------------------------------- requests

interface Resp {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): any;
}

const anonAgent = new https.Agent({ keepAlive: true, maxSockets: 32 });

/** one HTTPS request; `cert` true is the admin certificate; a watch resolves once the headers are in */
function send(method: string, path: string, o: { cert?: boolean | TestCert; headers?: Record<string, string | string[]>; body?: unknown; ctype?: string; watch?: boolean } = {}): Promise<Resp> {
  return new Promise((resolve, reject) => {
    const body = o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    const headers: Record<string, string | string[] | number> = { ...(o.headers ?? {}) };
    if (body !== undefined) {
      headers['content-type'] = o.ctype ?? 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    const tls =
      o.cert === true
        ? { agent: adminAgent }
        : o.cert
          ? { cert: o.cert.pem, key: o.cert.keyPEM, agent: false as const }
          : { agent: anonAgent };
    const req = https.request({ host: '127.0.0.1', port: c.port, method, path, headers, ca: c.credentials.ca, servername: 'localhost', ...tls }, (res) => {
      const chunks: Buffer[] = [];
      const done = () => {
        const b = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: b, json: () => JSON.parse(b) });
      };
      if (o.watch && res.statusCode === 200) {
        done();
        req.destroy();
        return;
      }
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', done);
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

let adminAgent: https.Agent;
/** as the admin certificate (kept-alive connections) */
function admin(method: string, path: string, body?: unknown, ctype?: string): Promise<Resp> {
  return send(method, path, { cert: true, body, ctype });
}

async function adminOK(method: string, path: string, body?: unknown): Promise<any> {
  const r = await admin(method, path, body);
  assert.ok(r.status >= 200 && r.status < 300, `admin ${method} ${path}: ${r.status} ${r.text}`);
  return r.text ? r.json() : undefined;
}

function kubectlAsync(args: string[], kubeconfig: string): Promise<RunResult> {
  return c.kubectlAsync(args, { kubeconfig });
}

function tokenKubeconfig(name: string, token: string): string {
  return c.tokenKubeconfig(name, token);
}

// ---------------------------------------------------------------- RBAC as the test sees it

interface Rule {
  groups: string[];
  resources: string[];
  verbs: string[];
}
interface Grant {
  /** a RoleBinding's namespace; undefined: a ClusterRoleBinding (everywhere) */
  namespace?: string;
  rules: Rule[];
}

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];

/** `view`, for the resources of the matrix (Kubernetes' bootstrap policy) */
const VIEW: Rule[] = [
  { groups: [''], resources: ['pods', 'configmaps'], verbs: READ },
  { groups: [''], resources: ['pods/status', 'pods/log'], verbs: READ },
  { groups: [''], resources: ['namespaces'], verbs: READ },
  { groups: ['apps'], resources: ['deployments', 'deployments/scale', 'deployments/status'], verbs: READ },
];
/** `edit` = view + these, for the resources of the matrix */
const EDIT: Rule[] = [
  ...VIEW,
  { groups: [''], resources: ['pods', 'secrets'], verbs: READ },
  { groups: [''], resources: ['pods'], verbs: WRITE },
  { groups: [''], resources: ['configmaps', 'secrets'], verbs: WRITE },
  { groups: ['apps'], resources: ['deployments', 'deployments/scale'], verbs: WRITE },
];
/** the custom Role `mx-custom` (bound to the group mx-team in namespace mx-custom) */
const CUSTOM_ROLE: Rule[] = [
  { groups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] },
  { groups: [''], resources: ['pods', 'pods/status'], verbs: ['get', 'update'] },
  { groups: [''], resources: ['secrets'], verbs: ['list', 'deletecollection'] },
  { groups: ['apps'], resources: ['deployments/scale'], verbs: ['get', 'patch'] },
  { groups: [''], resources: ['namespaces'], verbs: ['get'] },
];
/** the custom ClusterRole `mx-cluster` (bound to alice everywhere): update but not create clusterroles */
const CUSTOM_CLUSTER_ROLE: Rule[] = [
  { groups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['get', 'update', 'patch'] },
  { groups: [''], resources: ['nodes'], verbs: ['get', 'list'] },
];

function toYAMLRules(rules: Rule[]): any[] {
  return rules.map((r) => ({ apiGroups: r.groups, resources: r.resources, verbs: r.verbs }));
}

interface Identity {
  key: string;
  /** the user name RBAC sees */
  user: string;
  grants: Grant[];
  /** request options (credentials and impersonation headers) */
  opts: () => { cert?: boolean; headers?: Record<string, string | string[]> };
  /** the userInfo SelfSubjectReview must report (impersonated identities) */
  whoami?: any;
  /** the kubeconfig and extra arguments for kubectl; undefined: kubectl cannot act as it */
  kubectl?: () => { kubeconfig: string; args: string[] };
}

const NS = ['mx-view', 'mx-custom', 'mx-a'];

const ALICE_GRANTS: Grant[] = [
  { namespace: 'mx-view', rules: VIEW },
  { namespace: 'mx-custom', rules: CUSTOM_ROLE },
  { rules: CUSTOM_CLUSTER_ROLE },
];
const ROBOT = 'system:serviceaccount:mx-a:robot';
const ROBOT_GRANTS: Grant[] = [{ namespace: 'mx-a', rules: EDIT }];
const ALL: Grant[] = [{ rules: [{ groups: ['*'], resources: ['*'], verbs: ['*'] }] }];

const IDENTITIES: Identity[] = [
  { key: 'adm', user: 'kubernetes-admin', grants: ALL, opts: () => ({ cert: true }), kubectl: () => ({ kubeconfig: c.kubeconfig, args: [] }) },
  { key: 'ali', user: 'alice', grants: ALICE_GRANTS, opts: () => ({ headers: { authorization: `Bearer ${ALICE_TOKEN}` } }), kubectl: () => ({ kubeconfig: tokenKubeconfig('alice', ALICE_TOKEN), args: [] }) },
  { key: 'rob', user: ROBOT, grants: ROBOT_GRANTS, opts: () => ({ headers: { authorization: `Bearer ${robotToken}` } }), kubectl: () => ({ kubeconfig: tokenKubeconfig('robot', robotToken), args: [] }) },
  { key: 'ano', user: 'system:anonymous', grants: [], opts: () => ({}) },
  {
    key: 'iad',
    user: 'kubernetes-admin',
    grants: ALL,
    opts: () => ({ cert: true, headers: { 'Impersonate-User': 'kubernetes-admin', 'Impersonate-Group': 'system:masters' } }),
    whoami: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
    kubectl: () => ({ kubeconfig: c.kubeconfig, args: ['--as=kubernetes-admin', '--as-group=system:masters'] }),
  },
  {
    key: 'ial',
    user: 'alice',
    grants: ALICE_GRANTS,
    opts: () => ({ cert: true, headers: { 'Impersonate-User': 'alice', 'Impersonate-Group': 'mx-team', 'Impersonate-Uid': 'alice-uid', 'Impersonate-Extra-Scopes': ['view', 'audit'] } }),
    whoami: { username: 'alice', uid: 'alice-uid', groups: ['mx-team', 'system:authenticated'], extra: { scopes: ['view', 'audit'] } },
    kubectl: () => ({ kubeconfig: c.kubeconfig, args: ['--as=alice', '--as-group=mx-team', '--as-uid=alice-uid'] }),
  },
  {
    key: 'iro',
    user: ROBOT,
    grants: ROBOT_GRANTS,
    opts: () => ({ cert: true, headers: { 'Impersonate-User': ROBOT } }),
    whoami: { username: ROBOT, groups: ['system:serviceaccounts', 'system:serviceaccounts:mx-a', 'system:authenticated'] },
    kubectl: () => ({ kubeconfig: c.kubeconfig, args: [`--as=${ROBOT}`] }),
  },
  {
    key: 'ian',
    user: 'system:anonymous',
    grants: [],
    opts: () => ({ cert: true, headers: { 'Impersonate-User': 'system:anonymous', 'Impersonate-Group': 'system:unauthenticated' } }),
  },
];

interface Attrs {
  verb: string;
  group: string;
  resource: string;
  sub?: string;
  namespace?: string;
  name?: string;
}

function allows(grants: Grant[], a: Attrs): boolean {
  const res = a.sub ? `${a.resource}/${a.sub}` : a.resource;
  for (const g of grants) {
    if (g.namespace !== undefined && g.namespace !== a.namespace) continue;
    for (const r of g.rules) {
      if (!r.verbs.includes(a.verb) && !r.verbs.includes('*')) continue;
      if (!r.groups.includes(a.group) && !r.groups.includes('*')) continue;
      if (!r.resources.includes(res) && !r.resources.includes('*')) continue;
      return true;
    }
  }
  return false;
}

/** Kubernetes' 403 message of the authorization filter */
function forbiddenMessage(user: string, a: Attrs): string {
  const res = a.sub ? `${a.resource}/${a.sub}` : a.resource;
  const gr = a.group ? `${a.resource}.${a.group}` : a.resource;
  const prefix = a.name ? `${gr} "${a.name}"` : gr;
  const scope = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
  return `${prefix} is forbidden: User "${user}" cannot ${a.verb} resource "${res}" in API group "${a.group}" ${scope}`;
}

// ---------------------------------------------------------------- the cells

interface Kind {
  label: string;
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  /** a PUT of a missing object creates it (the kind's strategy allows create on update) */
  createOnUpdate: boolean;
  body(name: string, ns: string | undefined, labels: Record<string, string>): any;
}

const base = (k: Pick<Kind, 'group' | 'version'>) => (k.group ? `/apis/${k.group}/${k.version}` : `/api/${k.version}`);

const KINDS: Kind[] = [
  {
    label: 'pods',
    group: '',
    version: 'v1',
    resource: 'pods',
    kind: 'Pod',
    namespaced: true,
    createOnUpdate: false,
    body: (name, ns, labels) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels }, spec: { schedulerName: 'mx-nobody', containers: [{ name: 'c', image: 'nginx' }] } }),
  },
  {
    label: 'secrets',
    group: '',
    version: 'v1',
    resource: 'secrets',
    kind: 'Secret',
    namespaced: true,
    createOnUpdate: false,
    body: (name, ns, labels) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns, labels }, stringData: { k: 'v' } }),
  },
  {
    label: 'configmaps',
    group: '',
    version: 'v1',
    resource: 'configmaps',
    kind: 'ConfigMap',
    namespaced: true,
    createOnUpdate: false,
    body: (name, ns, labels) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels }, data: { k: 'v' } }),
  },
  {
    label: 'clusterroles',
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    resource: 'clusterroles',
    kind: 'ClusterRole',
    namespaced: false,
    createOnUpdate: true,
    body: (name, _ns, labels) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, labels }, rules: [] }),
  },
  {
    label: 'nodes',
    group: '',
    version: 'v1',
    resource: 'nodes',
    kind: 'Node',
    namespaced: false,
    createOnUpdate: false,
    body: (name, _ns, labels) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels } }),
  },
];

interface Result {
  who: string;
  cell: string;
  attrs: Attrs;
  expected: boolean;
  status: number;
}
const results: Result[] = [];
const failures: string[] = [];

/** check one answer against the expectation; returns whether the request was allowed */
function check(id: Identity, cell: string, attrs: Attrs, r: Resp, okStatus: number[], expectedMessage?: string): void {
  const expected = allows(id.grants, attrs);
  results.push({ who: id.key, cell, attrs, expected, status: r.status });
  const where = `${id.key} (${id.user}) ${cell}`;
  if (expected) {
    if (!okStatus.includes(r.status)) failures.push(`${where}: expected ${okStatus.join('/')}, got ${r.status} ${r.text.slice(0, 300)}`);
    return;
  }
  if (r.status !== 403) {
    failures.push(`${where}: expected 403, got ${r.status} ${r.text.slice(0, 300)}`);
    return;
  }
  let s: any;
  try {
    s = r.json();
  } catch {
    failures.push(`${where}: 403 without a Status: ${r.text.slice(0, 300)}`);
    return;
  }
  const want = expectedMessage ?? forbiddenMessage(id.user, attrs);
  if (s.kind !== 'Status' || s.reason !== 'Forbidden' || s.code !== 403 || s.message !== want) {
    failures.push(`${where}: expected message\n    ${JSON.stringify(want)}\n  got ${JSON.stringify(s.message)} (${s.reason}, ${s.code})`);
  }
  const details: any = { kind: attrs.resource };
  if (attrs.group) details.group = attrs.group;
  if (attrs.name) details.name = attrs.name;
  if (expectedMessage === undefined && JSON.stringify(sortKeys(s.details ?? {})) !== JSON.stringify(sortKeys(details))) {
    failures.push(`${where}: details ${JSON.stringify(s.details)}, expected ${JSON.stringify(details)}`);
  }
}

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}

/** every verb of one kind in one namespace (or the cluster scope) for one identity */
async function kindCells(id: Identity, k: Kind, ns: string | undefined): Promise<void> {
  const tag = `${id.key}-${ns ?? 'cl'}-${k.label}`.replace(/[^a-z0-9-]/g, '');
  const coll = `${base(k)}${ns ? `/namespaces/${ns}` : ''}/${k.resource}`;
  const at = (verb: string, name?: string): Attrs => ({ verb, group: k.group, resource: k.resource, namespace: ns, name });
  const opts = id.opts();
  const req = (method: string, path: string, more: { body?: unknown; ctype?: string; watch?: boolean } = {}) => send(method, path, { ...opts, ...more });
  const lbl = { 'mx-cell': tag };
  const obj = `${tag}-a`;
  await adminOK('POST', coll, k.body(obj, ns, lbl));
  await adminOK('POST', coll, k.body(`${tag}-dc`, ns, { 'mx-dc': tag }));
  const cell = (v: string) => `${v} ${k.group ? k.resource + '.' + k.group : k.resource}${ns ? ' in ' + ns : ''}`;

  check(id, cell('get'), at('get', obj), await req('GET', `${coll}/${obj}`), [200]);
  check(id, cell('list'), at('list'), await req('GET', `${coll}?labelSelector=mx-cell%3D${tag}`), [200]);
  check(id, cell('watch'), at('watch'), await req('GET', `${coll}?watch=true&labelSelector=mx-cell%3D${tag}`, { watch: true }), [200]);
  for (let i = 0; ; i++) {
    const cur = await adminOK('GET', `${coll}/${obj}`);
    cur.metadata.labels = { ...cur.metadata.labels, updated: 'yes' };
    const r = await req('PUT', `${coll}/${obj}`, { body: cur });
    if (r.status === 409 && i < 3) continue;
    check(id, cell('update'), at('update', obj), r, [200]);
    break;
  }
  check(id, cell('patch'), at('patch', obj), await req('PATCH', `${coll}/${obj}`, { body: { metadata: { labels: { patched: 'yes' } } }, ctype: 'application/merge-patch+json' }), [200]);
  check(id, cell('create'), at('create'), await req('POST', coll, { body: k.body(`${tag}-c`, ns, lbl) }), [201]);

  // a PUT of a missing object: update, then create when the kind allows create on update
  const putName = `${tag}-put`;
  const put = await req('PUT', `${coll}/${putName}`, { body: k.body(putName, ns, lbl) });
  if (!allows(id.grants, at('update', putName))) check(id, cell('create via PUT'), at('update', putName), put, []);
  else if (!k.createOnUpdate) {
    results.push({ who: id.key, cell: cell('create via PUT'), attrs: at('update', putName), expected: true, status: put.status });
    if (put.status !== 404) failures.push(`${id.key} ${cell('create via PUT')}: expected 404 (no create on update), got ${put.status} ${put.text.slice(0, 200)}`);
  } else {
    const gr = k.group ? `${k.resource}.${k.group}` : k.resource;
    check(id, cell('create via PUT'), at('create', putName), put, [201], `${gr} "${putName}" is forbidden: `);
  }
  // a server-side apply of a missing object: patch, then create
  const applyName = `${tag}-ssa`;
  const apply = await req('PATCH', `${coll}/${applyName}?fieldManager=mx`, { body: k.body(applyName, ns, lbl), ctype: 'application/apply-patch+yaml' });
  if (!allows(id.grants, at('patch', applyName))) check(id, cell('apply (create)'), at('patch', applyName), apply, []);
  else {
    const gr = k.group ? `${k.resource}.${k.group}` : k.resource;
    check(id, cell('apply (create)'), at('create', applyName), apply, [201], `${gr} "${applyName}" is forbidden: `);
  }
  // a dry run needs what the real request needs
  check(id, cell('create (dry run)'), at('create'), await req('POST', `${coll}?dryRun=All`, { body: k.body(`${tag}-dry`, ns, lbl) }), [201]);
  check(id, cell('deletecollection'), at('deletecollection'), await req('DELETE', `${coll}?labelSelector=mx-dc%3D${tag}`), [200]);
  check(id, cell('delete (dry run)'), at('delete', obj), await req('DELETE', `${coll}/${obj}?dryRun=All`), [200, 202]);
  check(id, cell('delete'), at('delete', obj), await req('DELETE', `${coll}/${obj}`), [200, 202]);
}

/** pods/status, pods/log and deployments/scale of the namespace's fixtures */
async function subresourceCells(id: Identity, ns: string): Promise<void> {
  const opts = id.opts();
  const req = (method: string, path: string, more: { body?: unknown; ctype?: string } = {}) => send(method, path, { ...opts, ...more });
  const pod = `/api/v1/namespaces/${ns}/pods/mx-pod`;
  const at = (verb: string, group: string, resource: string, sub: string, name: string): Attrs => ({ verb, group, resource, sub, namespace: ns, name });
  check(id, `get pods/status in ${ns}`, at('get', '', 'pods', 'status', 'mx-pod'), await req('GET', `${pod}/status`), [200]);
  for (let i = 0; ; i++) {
    const cur = await adminOK('GET', `${pod}/status`);
    cur.status.conditions = [{ type: 'MxChecked', status: 'True' }];
    const r = await req('PUT', `${pod}/status`, { body: cur });
    if (r.status === 409 && i < 3) continue;
    check(id, `update pods/status in ${ns}`, at('update', '', 'pods', 'status', 'mx-pod'), r, [200]);
    break;
  }
  check(id, `patch pods/status in ${ns}`, at('patch', '', 'pods', 'status', 'mx-pod'), await req('PATCH', `${pod}/status`, { body: { status: { message: `by ${id.key}` } }, ctype: 'application/merge-patch+json' }), [200]);
  // the log of a pod without a node: 204 No Content, as kube-apiserver answers (its log streamer
  // has nothing to stream); 403 when not allowed
  check(id, `get pods/log in ${ns}`, at('get', '', 'pods', 'log', 'mx-pod'), await req('GET', `${pod}/log`), [204]);
  const scale = `/apis/apps/v1/namespaces/${ns}/deployments/mx-deploy/scale`;
  check(id, `get deployments/scale in ${ns}`, at('get', 'apps', 'deployments', 'scale', 'mx-deploy'), await req('GET', scale), [200]);
  for (let i = 0; ; i++) {
    const cur = await adminOK('GET', scale);
    const r = await req('PUT', scale, { body: cur });
    if (r.status === 409 && i < 3) continue;
    check(id, `update deployments/scale in ${ns}`, at('update', 'apps', 'deployments', 'scale', 'mx-deploy'), r, [200]);
    break;
  }
  check(id, `patch deployments/scale in ${ns}`, at('patch', 'apps', 'deployments', 'scale', 'mx-deploy'), await req('PATCH', scale, { body: { spec: { replicas: 0 } }, ctype: 'application/merge-patch+json' }), [200]);
}

/** namespaces: objects whose namespace attribute is their own name */
async function namespaceCells(id: Identity): Promise<void> {
  const opts = id.opts();
  const req = (method: string, path: string, more: { body?: unknown; ctype?: string; watch?: boolean } = {}) => send(method, path, { ...opts, ...more });
  const at = (verb: string, name?: string): Attrs => ({ verb, group: '', resource: 'namespaces', namespace: name, name });
  const nsBody = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'mx-ns': id.key } } });
  for (const ns of NS) {
    check(id, `get namespace ${ns}`, at('get', ns), await req('GET', `/api/v1/namespaces/${ns}`), [200]);
    for (let i = 0; ; i++) {
      const cur = await adminOK('GET', `/api/v1/namespaces/${ns}`);
      cur.metadata.labels = { ...cur.metadata.labels, [`mx-${id.key}`]: 'updated' };
      const r = await req('PUT', `/api/v1/namespaces/${ns}`, { body: cur });
      if (r.status === 409 && i < 3) continue;
      check(id, `update namespace ${ns}`, at('update', ns), r, [200]);
      break;
    }
    check(id, `patch namespace ${ns}`, at('patch', ns), await req('PATCH', `/api/v1/namespaces/${ns}`, { body: { metadata: { labels: { [`mx-${id.key}`]: 'patched' } } }, ctype: 'application/merge-patch+json' }), [200]);
  }
  check(id, 'list namespaces', { verb: 'list', group: '', resource: 'namespaces' }, await req('GET', '/api/v1/namespaces?labelSelector=mx-ns'), [200]);
  check(id, 'watch namespaces', { verb: 'watch', group: '', resource: 'namespaces' }, await req('GET', '/api/v1/namespaces?watch=1&labelSelector=mx-ns', { watch: true }), [200]);
  check(id, 'create namespace', { verb: 'create', group: '', resource: 'namespaces' }, await req('POST', '/api/v1/namespaces', { body: nsBody(`mx-new-${id.key}`) }), [201]);
  check(id, 'create namespace (dry run)', { verb: 'create', group: '', resource: 'namespaces' }, await req('POST', '/api/v1/namespaces?dryRun=All', { body: nsBody(`mx-dry-${id.key}`) }), [201]);
  // no create on update for namespaces: 404 once update is allowed
  const putName = `mx-put-${id.key}`;
  const put = await req('PUT', `/api/v1/namespaces/${putName}`, { body: nsBody(putName) });
  check(id, 'create namespace via PUT', at('update', putName), put, [404]);
  const ssa = `mx-ssa-${id.key}`;
  const apply = await req('PATCH', `/api/v1/namespaces/${ssa}?fieldManager=mx`, { body: nsBody(ssa), ctype: 'application/apply-patch+yaml' });
  if (!allows(id.grants, at('patch', ssa))) check(id, 'apply namespace (create)', at('patch', ssa), apply, []);
  else check(id, 'apply namespace (create)', at('create', ssa), apply, [201], `namespaces "${ssa}" is forbidden: `);
  // namespaces have no deletecollection: 405 once authorized
  check(id, 'deletecollection namespaces', { verb: 'deletecollection', group: '', resource: 'namespaces' }, await req('DELETE', '/api/v1/namespaces?labelSelector=mx-none'), [405]);
  const del = `mx-del-${id.key}`;
  await adminOK('POST', '/api/v1/namespaces', nsBody(del));
  check(id, 'delete namespace', at('delete', del), await req('DELETE', `/api/v1/namespaces/${del}`), [200]);
}

// ---------------------------------------------------------------- set-up

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-mx-'));
  clientCA = await makeCert({ subject: 'CN=mx-client-ca', isCA: true });
  const unknownCA = await makeCert({ subject: 'CN=mx-unknown-ca', isCA: true });
  const hour = 3600_000;
  certs.good = await makeCert({ subject: 'CN=carl, O=mx-team', issuer: clientCA });
  certs.expired = await makeCert({ subject: 'CN=carl', issuer: clientCA, notBefore: new Date(Date.now() - 48 * hour), notAfter: new Date(Date.now() - 24 * hour) });
  certs.notYet = await makeCert({ subject: 'CN=carl', issuer: clientCA, notBefore: new Date(Date.now() + 24 * hour), notAfter: new Date(Date.now() + 48 * hour) });
  certs.unknownCA = await makeCert({ subject: 'CN=kubernetes-admin, O=system:masters', issuer: unknownCA });
  certs.serverOnly = await makeCert({ subject: 'CN=carl', issuer: clientCA, eku: ['1.3.6.1.5.5.7.3.1'] });
  writeFileSync(join(dir, 'client-ca.crt'), clientCA.pem);
  const proxyCA = await makeCert({ subject: 'CN=mx-front-proxy-ca', isCA: true });
  certs.proxy = await makeCert({ subject: 'CN=mx-proxy', issuer: proxyCA });
  certs.otherProxy = await makeCert({ subject: 'CN=mx-other-proxy', issuer: proxyCA });
  writeFileSync(join(dir, 'proxy-ca.crt'), proxyCA.pem);
  writeFileSync(join(dir, 'tokens.csv'), `${ALICE_TOKEN},alice,alice-uid,"mx-team"\n${EVE_TOKEN},eve,eve-uid\n${NODE_TOKEN},system:node:mx-node,mx-node-uid,"system:nodes"\n`);
  saKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  writeFileSync(join(dir, 'sa.key'), saKey.export({ type: 'pkcs1', format: 'pem' }));
  writeFileSync(join(dir, 'sa.pub'), createPublicKey(saKey).export({ type: 'spki', format: 'pem' }));
  c = await startCluster({
    args: [
      '--authorization-mode=Node,RBAC',
      '--enable-admission-plugins=NodeRestriction',
      '--client-ca-file', join(dir, 'client-ca.crt'),
      '--token-auth-file', join(dir, 'tokens.csv'),
      '--service-account-issuer', ISSUER,
      '--service-account-key-file', join(dir, 'sa.pub'),
      '--service-account-signing-key-file', join(dir, 'sa.key'),
      '--requestheader-client-ca-file', join(dir, 'proxy-ca.crt'),
      '--requestheader-allowed-names', 'mx-proxy',
      '--requestheader-username-headers', 'X-Remote-User',
      '--requestheader-group-headers', 'X-Remote-Group',
      '--requestheader-extra-headers-prefix', 'X-Remote-Extra-',
      '--requestheader-uid-headers', 'X-Remote-Uid',
    ],
  });
  adminAgent = new https.Agent({ ca: c.credentials.ca, cert: c.credentials.cert, key: c.credentials.key, keepAlive: true, maxSockets: 32 });

  for (const ns of [...NS, 'mx-esc']) await adminOK('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await until('default service accounts', async () => {
    for (const ns of NS) if ((await admin('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`)).status !== 200) return false;
    return true;
  });
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const subject = (kind: string, name: string, namespace?: string) => (kind === 'ServiceAccount' ? { kind, name, namespace } : { kind, name, apiGroup: 'rbac.authorization.k8s.io' });
  await adminOK('POST', `${rbac}/namespaces/mx-view/rolebindings`, { metadata: { name: 'alice-view' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [subject('User', 'alice')] });
  await adminOK('POST', `${rbac}/namespaces/mx-custom/roles`, { metadata: { name: 'mx-custom' }, rules: toYAMLRules(CUSTOM_ROLE) });
  await adminOK('POST', `${rbac}/namespaces/mx-custom/rolebindings`, { metadata: { name: 'team-custom' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'mx-custom' }, subjects: [subject('Group', 'mx-team')] });
  await adminOK('POST', `${rbac}/clusterroles`, { metadata: { name: 'mx-cluster' }, rules: toYAMLRules(CUSTOM_CLUSTER_ROLE) });
  await adminOK('POST', `${rbac}/clusterrolebindings`, { metadata: { name: 'alice-mx-cluster' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'mx-cluster' }, subjects: [subject('User', 'alice')] });
  await adminOK('POST', '/api/v1/namespaces/mx-a/serviceaccounts', { metadata: { name: 'robot' } });
  await adminOK('POST', `${rbac}/namespaces/mx-a/rolebindings`, { metadata: { name: 'robot-edit' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' }, subjects: [subject('ServiceAccount', 'robot', 'mx-a')] });
  const t = c.kubectl(['create', 'token', 'robot', '-n', 'mx-a']);
  assert.equal(t.code, 0, t.stderr);
  robotToken = t.stdout.trim();
  robotUID = (await adminOK('GET', '/api/v1/namespaces/mx-a/serviceaccounts/robot')).metadata.uid;
  for (const ns of NS) {
    await adminOK('POST', `/api/v1/namespaces/${ns}/pods`, KINDS[0]!.body('mx-pod', ns, {}));
    await adminOK('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'mx-deploy' },
      spec: { replicas: 0, selector: { matchLabels: { app: 'mx' } }, template: { metadata: { labels: { app: 'mx' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    });
  }
  // the bindings reach the authorizer through its informers
  const ssar = (headers: Record<string, string>, attrs: any) =>
    send('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { headers, body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: attrs } } });
  await until('bindings in effect', async () => {
    const a = await ssar({ authorization: `Bearer ${ALICE_TOKEN}` }, { verb: 'patch', group: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'mx-custom' });
    const b = await ssar({ authorization: `Bearer ${ALICE_TOKEN}` }, { verb: 'update', group: 'rbac.authorization.k8s.io', resource: 'clusterroles' });
    const r = await ssar({ authorization: `Bearer ${robotToken}` }, { verb: 'create', resource: 'secrets', namespace: 'mx-a' });
    return [a, b, r].every((x) => x.status === 201 && x.json().status.allowed === true);
  });
});

after(async () => {
  adminAgent?.destroy();
  anonAgent.destroy();
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------- the matrix

describe('the matrix: users by verbs and resources', () => {
  test('impersonated identities are who the headers say (SelfSubjectReview)', async () => {
    // (system:anonymous may not ask: system:basic-user is bound to authenticated users only)
    const anon = await send('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { cert: true, headers: { 'Impersonate-User': 'system:anonymous', 'Impersonate-Group': 'system:unauthenticated' }, body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
    assert.equal(anon.status, 403, anon.text);
    assert.equal(anon.json().message, 'selfsubjectreviews.authentication.k8s.io is forbidden: User "system:anonymous" cannot create resource "selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope');
    for (const id of IDENTITIES.filter((i) => i.whoami)) {
      const o = id.opts();
      const r = await send('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { ...o, body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
      assert.equal(r.status, 201, `${id.key}: ${r.text}`);
      assert.deepEqual(r.json().status.userInfo, id.whoami, id.key);
    }
    const robot = await send('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { headers: { authorization: `Bearer ${robotToken}` }, body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
    assert.equal(robot.status, 201, robot.text);
    assert.equal(robot.json().status.userInfo.username, ROBOT);
    assert.equal(robot.json().status.userInfo.uid, robotUID);
  });

  test('every answer is what the bindings grant, every 403 in Kubernetes\' words', async (t) => {
    for (const id of IDENTITIES) {
      const jobs: Promise<void>[] = [];
      for (const k of KINDS) {
        if (k.namespaced) for (const ns of NS) jobs.push(kindCells(id, k, ns));
        else jobs.push(kindCells(id, k, undefined));
      }
      for (const ns of NS) jobs.push(subresourceCells(id, ns));
      jobs.push(namespaceCells(id));
      await Promise.all(jobs);
    }
    for (const id of IDENTITIES) {
      const mine = results.filter((r) => r.who === id.key);
      t.diagnostic(`${id.key} (${id.user}): ${mine.length} requests, ${mine.filter((r) => r.expected).length} allowed, ${mine.filter((r) => !r.expected).length} refused`);
    }
    assert.deepEqual(failures, []);
    // the matrix is not trivially one-sided for anyone but the admin and anonymous
    for (const key of ['ali', 'rob', 'ial', 'iro']) {
      const mine = results.filter((r) => r.who === key);
      assert.ok(mine.some((r) => r.expected) && mine.some((r) => !r.expected), key);
    }
    assert.ok(results.length > 8 * 100, `${results.length} answers`);
  });

  test('access reviews and kubectl auth can-i agree with the raw answers', async () => {
    assert.ok(results.length > 0, 'the matrix ran');
    const byKey = new Map(IDENTITIES.map((i) => [i.key, i]));
    // one question per (identity, verb, resource, name, namespace) the matrix asked
    const seen = new Set<string>();
    const questions: { id: Identity; attrs: Attrs; args: string[]; allowed: boolean; what: string }[] = [];
    for (const r of results) {
      const id = byKey.get(r.who)!;
      const a = r.attrs;
      const res = a.group ? `${a.resource}.${a.group}` : a.resource;
      const target = a.name && !a.sub ? `${res}/${a.name}` : res;
      const args = [a.verb, target, ...(a.sub ? [`--subresource=${a.sub}`] : []), ...(a.namespace ? ['-n', a.namespace] : [])];
      const key = `${r.who} ${args.join(' ')}`;
      if (seen.has(key)) continue;
      seen.add(key);
      // the raw answer: allowed unless refused by the authorizer
      questions.push({ id, attrs: a, args, allowed: r.status !== 403, what: `${key} (raw ${r.status} for ${r.cell})` });
    }
    const bad: string[] = [];
    // every question as a SelfSubjectAccessReview of the same identity (anonymous may not ask
    // for itself: a SubjectAccessReview by the admin then)
    const review = async (q: (typeof questions)[number]) => {
      const a = q.attrs;
      const resourceAttributes = { verb: a.verb, group: a.group, resource: a.resource, subresource: a.sub, namespace: a.namespace, name: a.name };
      const anonymous = q.id.user === 'system:anonymous';
      const r = anonymous
        ? await admin('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'system:anonymous', groups: ['system:unauthenticated'], resourceAttributes } })
        : await send('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { ...q.id.opts(), body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes } } });
      if (r.status !== 201) bad.push(`${q.what}: review answered ${r.status} ${r.text.slice(0, 200)}`);
      else if (r.json().status.allowed !== q.allowed) bad.push(`${q.what}: the review says allowed=${r.json().status.allowed}`);
    };
    for (let i = 0; i < questions.length; i += 32) await Promise.all(questions.slice(i, i + 32).map(review));
    // kubectl auth can-i for a sample: every identity kubectl can act as, allowed and refused
    const sample: typeof questions = [];
    for (const id of IDENTITIES.filter((i) => i.kubectl)) {
      for (const allowed of [true, false]) {
        const mine = questions.filter((q) => q.id === id && q.allowed === allowed).sort((x, y) => x.what.localeCompare(y.what));
        const step = Math.max(1, Math.floor(mine.length / 3));
        for (let i = 0; i < mine.length && sample.length < 100; i += step) sample.push(mine[i]!);
      }
    }
    let next = 0;
    const worker = async () => {
      while (next < sample.length) {
        const q = sample[next++]!;
        const k = q.id.kubectl!();
        const r = await kubectlAsync(['auth', 'can-i', ...q.args, ...k.args], k.kubeconfig);
        const out = r.stdout.trim();
        const yes = out.startsWith('yes');
        if (!yes && !out.startsWith('no')) bad.push(`${q.what}: kubectl said ${r.stdout} ${r.stderr}`);
        else if (yes !== q.allowed) bad.push(`${q.what}: kubectl auth can-i says ${out}`);
        else if ((r.code === 0) !== yes) bad.push(`${q.what}: exit code ${r.code} with ${out}`);
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    assert.deepEqual(bad, []);
    assert.ok(questions.length > 800, `${questions.length} reviews`);
    for (const key of ['adm', 'ali', 'rob', 'ial', 'iro']) {
      assert.ok(sample.some((q) => q.id.key === key && q.allowed), `kubectl asked an allowed question as ${key}`);
      if (key !== 'adm') assert.ok(sample.some((q) => q.id.key === key && !q.allowed), `kubectl asked a refused question as ${key}`);
    }
  });

  test('kubectl auth can-i --list agrees with the bindings', async () => {
    const resources: [string, string, string][] = [
      ['pods', '', 'pods'],
      ['pods/status', '', 'pods/status'],
      ['pods/log', '', 'pods/log'],
      ['secrets', '', 'secrets'],
      ['configmaps', '', 'configmaps'],
      ['deployments.apps/scale', 'apps', 'deployments/scale'],
      ['namespaces', '', 'namespaces'],
      ['clusterroles.rbac.authorization.k8s.io', 'rbac.authorization.k8s.io', 'clusterroles'],
      ['nodes', '', 'nodes'],
    ];
    const verbs = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];
    const bad: string[] = [];
    await Promise.all(
      IDENTITIES.filter((i) => i.kubectl).flatMap((id) =>
        NS.map(async (ns) => {
          const k = id.kubectl!();
          const r = await kubectlAsync(['auth', 'can-i', '--list', '-n', ns, ...k.args], k.kubeconfig);
          if (r.code !== 0) {
            bad.push(`${id.key} -n ${ns}: ${r.stderr}`);
            return;
          }
          const rows = r.stdout
            .split('\n')
            .slice(1)
            .map((l) => /^(\S*)\s+(\[[^\]]*\])\s+(\[[^\]]*\])\s+(\[[^\]]*\])\s*$/.exec(l))
            .filter((m): m is RegExpExecArray => !!m && m[1] !== '')
            .map((m) => ({ resource: m[1]!, names: m[3]!, verbs: m[4]!.slice(1, -1).split(' ').filter(Boolean) }));
          for (const [listed, group, res] of resources) {
            const [resource, sub] = res.split('/');
            const got = new Set<string>();
            for (const row of rows) {
              if (row.names !== '[]') continue;
              const star = row.resource === '*.*' || row.resource === '*';
              if (!star && row.resource !== listed) continue;
              for (const v of row.verbs) {
                if (v === '*') verbs.forEach((x) => got.add(x));
                else got.add(v);
              }
            }
            // rules of the namespace plus cluster-wide rules (cluster-scoped kinds too)
            const want = verbs.filter((v) => allows(id.grants, { verb: v, group, resource: resource!, sub, namespace: ns }));
            const have = verbs.filter((v) => got.has(v));
            if (want.join(' ') !== have.join(' ')) bad.push(`${id.key} -n ${ns} ${listed}: listed [${have.join(' ')}], granted [${want.join(' ')}]\n${r.stdout}`);
          }
        }),
      ),
    );
    assert.deepEqual(bad, []);
  });
});

// ---------------------------------------------------------------- impersonation without the verb

describe('impersonation needs the impersonate verb', () => {
  const forbidden = async (who: Record<string, string>, headers: Record<string, string>, message: string, details: any) => {
    const r = await send('GET', '/api/v1/namespaces/mx-a/configmaps', { headers: { ...who, ...headers } });
    assert.equal(r.status, 403, r.text);
    const s = r.json();
    assert.equal(s.message, message);
    assert.deepEqual(sortKeys(s.details), sortKeys(details));
  };
  const alice = { authorization: `Bearer ${ALICE_TOKEN}` };
  const robot = () => ({ authorization: `Bearer ${robotToken}` });

  test('a token user may impersonate nobody', async () => {
    await forbidden(alice, { 'Impersonate-User': 'kubernetes-admin' }, 'users "kubernetes-admin" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope', { name: 'kubernetes-admin', kind: 'users' });
    await forbidden(alice, { 'Impersonate-User': ROBOT }, 'serviceaccounts "robot" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "mx-a"', { name: 'robot', kind: 'serviceaccounts' });
    await forbidden({}, { 'Impersonate-User': 'alice' }, 'users "alice" is forbidden: User "system:anonymous" cannot impersonate resource "users" in API group "" at the cluster scope', { name: 'alice', kind: 'users' });
    // kubectl --as says the same
    const r = await kubectlAsync(['get', 'configmaps', '-n', 'mx-view', '--as=bob'], tokenKubeconfig('alice', ALICE_TOKEN));
    assert.notEqual(r.code, 0);
    assert.equal(r.stderr, 'Error from server (Forbidden): users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope\n');
  });

  test('edit lets a service account impersonate service accounts of its namespace, nothing more', async () => {
    const who = await send('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      headers: { ...robot(), 'Impersonate-User': 'system:serviceaccount:mx-a:default' },
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    assert.equal(who.status, 201, who.text);
    assert.deepEqual(who.json().status.userInfo, { username: 'system:serviceaccount:mx-a:default', groups: ['system:serviceaccounts', 'system:serviceaccounts:mx-a', 'system:authenticated'] });
    // as the default service account (no bindings) the request is refused for that account
    const as = await send('GET', '/api/v1/namespaces/mx-a/configmaps', { headers: { ...robot(), 'Impersonate-User': 'system:serviceaccount:mx-a:default' } });
    assert.equal(as.status, 403);
    assert.equal(as.json().message, 'configmaps is forbidden: User "system:serviceaccount:mx-a:default" cannot list resource "configmaps" in API group "" in the namespace "mx-a"');
    await forbidden(robot(), { 'Impersonate-User': 'system:serviceaccount:mx-view:default' }, `serviceaccounts "default" is forbidden: User "${ROBOT}" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "mx-view"`, { name: 'default', kind: 'serviceaccounts' });
    await forbidden(robot(), { 'Impersonate-User': 'system:serviceaccount:mx-a:default', 'Impersonate-Group': 'system:masters' }, `groups "system:masters" is forbidden: User "${ROBOT}" cannot impersonate resource "groups" in API group "" at the cluster scope`, { name: 'system:masters', kind: 'groups' });
    await forbidden(robot(), { 'Impersonate-User': 'system:serviceaccount:mx-a:default', 'Impersonate-Uid': 'u-1' }, `uids.authentication.k8s.io "u-1" is forbidden: User "${ROBOT}" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope`, {
      name: 'u-1',
      group: 'authentication.k8s.io',
      kind: 'uids',
    });
    await forbidden(robot(), { 'Impersonate-User': 'system:serviceaccount:mx-a:default', 'Impersonate-Extra-Scopes': 'view' }, `userextras.authentication.k8s.io "view" is forbidden: User "${ROBOT}" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope`, {
      name: 'view',
      group: 'authentication.k8s.io',
      kind: 'userextras',
    });
  });
});

// ---------------------------------------------------------------- bad credentials

function b64(s: string | Buffer): string {
  return Buffer.from(s).toString('base64url');
}

function signRS256(header: object, payload: object, key: KeyObject): string {
  const input = `${b64(JSON.stringify(header))}.${b64(JSON.stringify(payload))}`;
  return `${input}.${createSign('RSA-SHA256').update(input).sign(key).toString('base64url')}`;
}

function claims(over: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: ISSUER,
    aud: [ISSUER],
    sub: ROBOT,
    iat: now,
    nbf: now,
    exp: now + 3600,
    jti: 'mx-jti',
    'kubernetes.io': { namespace: 'mx-a', serviceaccount: { name: 'robot', uid: robotUID } },
    ...over,
  };
}

const WHOAMI = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
const whoamiBody = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };

async function expect401(what: string, o: { cert?: TestCert; headers?: Record<string, string> }): Promise<void> {
  const r = await send('POST', WHOAMI, { ...o, body: whoamiBody });
  assert.equal(r.status, 401, `${what}: ${r.status} ${r.text.slice(0, 300)}`);
  assert.deepEqual(r.json(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 }, what);
  const ready = await send('GET', '/readyz');
  assert.equal(ready.status, 200, `${what}: /readyz after it: ${ready.text}`);
}

describe('bad credentials: 401, and the server stays ready', () => {
  test('a good client certificate and a good token authenticate (the baseline)', async () => {
    const r = await send('POST', WHOAMI, { cert: certs.good, body: whoamiBody });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json().status.userInfo.username, 'carl');
    const t = await send('POST', WHOAMI, { headers: { authorization: `Bearer ${signRS256({ alg: 'RS256', kid: '' }, claims(), saKey)}` }, body: whoamiBody });
    assert.equal(t.status, 201, t.text);
    assert.equal(t.json().status.userInfo.username, ROBOT);
  });

  test('client certificates: expired, not yet valid, from an unknown CA, not for client auth', async () => {
    await expect401('expired certificate', { cert: certs.expired });
    await expect401('not yet valid certificate', { cert: certs.notYet });
    await expect401('certificate of an unknown CA', { cert: certs.unknownCA });
    await expect401('certificate for server auth only', { cert: certs.serverOnly });
  });

  test('service account tokens: wrong audience, expired, wrong key, tampered, unknown account', async () => {
    const aud = c.kubectl(['create', 'token', 'robot', '-n', 'mx-a', '--audience', 'https://vault.example.com']);
    assert.equal(aud.code, 0, aud.stderr);
    await expect401('token for another audience', { headers: { authorization: `Bearer ${aud.stdout.trim()}` } });
    await expect401('token for another audience (signed here)', { headers: { authorization: `Bearer ${signRS256({ alg: 'RS256' }, claims({ aud: ['other'] }), saKey)}` } });
    const now = Math.floor(Date.now() / 1000);
    await expect401('expired token', { headers: { authorization: `Bearer ${signRS256({ alg: 'RS256' }, claims({ iat: now - 7200, nbf: now - 7200, exp: now - 3600 }), saKey)}` } });
    await expect401('token not valid before tomorrow', { headers: { authorization: `Bearer ${signRS256({ alg: 'RS256' }, claims({ nbf: now + 86400, exp: now + 2 * 86400 }), saKey)}` } });
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    await expect401('token signed by another key', { headers: { authorization: `Bearer ${signRS256({ alg: 'RS256' }, claims(), other)}` } });
    await expect401('token of another issuer', { headers: { authorization: `Bearer ${signRS256({ alg: 'RS256' }, claims({ iss: 'https://evil.example.com' }), saKey)}` } });
    const good = signRS256({ alg: 'RS256' }, claims(), saKey).split('.');
    await expect401('tampered payload', { headers: { authorization: `Bearer ${good[0]}.${b64(JSON.stringify(claims({ sub: 'system:serviceaccount:kube-system:default' })))}.${good[2]}` } });
    await expect401('account that does not exist', {
      headers: { authorization: `Bearer ${signRS256({ alg: 'RS256' }, claims({ sub: 'system:serviceaccount:mx-a:ghost', 'kubernetes.io': { namespace: 'mx-a', serviceaccount: { name: 'ghost', uid: 'ghost-uid' } } }), saKey)}` },
    });
  });

  test('malformed JWTs: bad base64, missing parts, alg none, HMAC with the public key, huge header, junk', async () => {
    const payload = b64(JSON.stringify(claims()));
    const pub = createPublicKey(saKey).export({ type: 'spki', format: 'pem' });
    const hsInput = `${b64(JSON.stringify({ alg: 'HS256' }))}.${payload}`;
    const variants: [string, string][] = [
      ['bad base64', `eyJ!!!.${payload}.c2ln`],
      ['bad base64 in the signature', `${b64('{"alg":"RS256"}')}.${payload}.***`],
      ['two parts', `${b64('{"alg":"RS256"}')}.${payload}`],
      ['four parts', `${b64('{"alg":"RS256"}')}.${payload}.c2ln.c2ln`],
      ['empty parts', '..'],
      ['alg none', `${b64('{"alg":"none","typ":"JWT"}')}.${payload}.`],
      ['HS256 keyed with the public key', `${hsInput}.${createHmac('sha256', pub).update(hsInput).digest('base64url')}`],
      ['header not JSON', `${b64('not json')}.${payload}.c2ln`],
      ['header a JSON array', `${b64('[1,2]')}.${payload}.c2ln`],
      ['payload not JSON', `${b64('{"alg":"RS256"}')}.${b64('{{{{')}.c2ln`],
      ['huge header', `${b64(JSON.stringify({ alg: 'RS256', kid: 'k'.repeat(9000) }))}.${payload}.c2ln`],
      ['a 200 KiB header (Go serves headers up to 1 MiB)', `${b64(JSON.stringify({ alg: 'RS256', kid: 'k'.repeat(150_000) }))}.${payload}.c2ln`],
      ['alg RS512 over an RS256 signature', (() => {
        const t = signRS256({ alg: 'RS256' }, claims(), saKey).split('.');
        return `${b64(JSON.stringify({ alg: 'RS512' }))}.${t[1]}.${t[2]}`;
      })()],
      ['ES256 claimed for an RSA key', `${b64(JSON.stringify({ alg: 'ES256' }))}.${payload}.${b64(Buffer.alloc(64, 1))}`],
      ['deeply nested header', `${b64('{"alg":"RS256","x":' + '['.repeat(2000) + ']'.repeat(2000) + '}')}.${payload}.c2ln`],
      ['non-ASCII', 'tökén'],
      ['a JSON object', '{"iss":"x"}'],
    ];
    for (const [what, token] of variants) {
      const header = `Bearer ${token}`;
      if (/[^\x20-\x7e]/.test(header)) {
        // Node refuses to send a non-ASCII header value; send its UTF-8 bytes as latin1
        await expect401(what, { headers: { authorization: Buffer.from(header, 'utf8').toString('latin1') } });
      } else await expect401(what, { headers: { authorization: header } });
    }
  });

  test('Authorization headers: a bearer token that fails is 401; other schemes are no credentials (anonymous)', async () => {
    for (const h of ['Bearer not-a-token', 'bearer not-a-token', 'BEARER not-a-token', 'Bearer not-a-token extra words', `Bearer ${ALICE_TOKEN}x`, `Bearer ${ALICE_TOKEN.slice(0, -1)}`]) {
      await expect401(h, { headers: { authorization: h } });
    }
    // as kube-apiserver: no bearer token is no credentials, so the request is anonymous (RBAC
    // then refuses it); with --anonymous-auth=false it is 401 (below)
    for (const h of ['Basic YWxpY2U6YWxpY2UtdG9rZW4tbXgtMDEyMzQ1Njc4OQ==', 'Bearer', 'Bearer ', `Negotiate ${ALICE_TOKEN}`, `Token ${ALICE_TOKEN}`, ALICE_TOKEN]) {
      const r = await send('GET', '/api/v1/namespaces/mx-view/configmaps', { headers: { authorization: h } });
      assert.equal(r.status, 403, `${h}: ${r.text}`);
      assert.equal(r.json().message, 'configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "mx-view"', h);
    }
    // a space too many before the token: anonymous, with Kubernetes' warning
    const spaced = await send('GET', '/api/v1/namespaces/mx-view/configmaps', { headers: { authorization: `Bearer  ${ALICE_TOKEN}` } });
    assert.equal(spaced.status, 403, spaced.text);
    assert.equal(spaced.json().message, 'configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "mx-view"');
    assert.equal(spaced.headers.warning, '299 - "the provided Authorization header contains extra space before the bearer token, and is ignored"');
    // surrounding space is trimmed, the scheme is case-insensitive
    for (const h of [`  Bearer ${ALICE_TOKEN}  `, `bearer ${ALICE_TOKEN}`]) {
      const r = await send('GET', '/api/v1/namespaces/mx-view/configmaps', { headers: { authorization: h } });
      assert.equal(r.status, 200, `${JSON.stringify(h)}: ${r.text}`);
    }
    assert.equal((await send('GET', '/readyz')).status, 200);
  });

  test('--anonymous-auth=false: no credentials, Basic auth and an empty bearer are 401', async () => {
    const c2 = await startCluster({ args: ['--anonymous-auth=false', '--authorization-mode=Node,RBAC'] });
    try {
      for (const h of [undefined, 'Basic dXNlcjpwYXNz', 'Bearer', 'Negotiate abc', 'Bearer junk']) {
        const r = await c2.rawNoAuth('GET', '/api/v1/namespaces/default/configmaps', { headers: h === undefined ? {} : { authorization: h } });
        assert.equal(r.status, 401, `${h}: ${r.text}`);
        assert.equal(r.json().reason, 'Unauthorized');
      }
      assert.equal((await c2.raw('GET', '/readyz')).status, 200);
    } finally {
      await c2.stop();
    }
  });

  test('--authorization-mode=AlwaysAllow: anonymous requests are turned off (401), any authenticated user may do anything', async () => {
    const c3 = await startCluster({ args: ['--authorization-mode=AlwaysAllow', '--token-auth-file', join(dir, 'tokens.csv'), '--service-account-jwks-uri=https://keys.example.com/cluster/jwks'] });
    try {
      const anon = await c3.rawNoAuth('GET', '/api/v1/namespaces/kube-system/secrets');
      assert.equal(anon.status, 401, anon.text);
      assert.match(c3.logs, /AnonymousAuth is not allowed with the AlwaysAllow authorizer/);
      const alice = { authorization: `Bearer ${ALICE_TOKEN}` };
      assert.equal((await c3.rawNoAuth('GET', '/api/v1/namespaces/kube-system/secrets', { headers: alice })).status, 200);
      const node = await c3.rawNoAuth('POST', '/api/v1/nodes', { headers: { ...alice, 'content-type': 'application/json' }, body: JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'by-alice' } }) });
      assert.equal(node.status, 201, node.text);
      const junk = await c3.rawNoAuth('GET', '/api/v1/nodes', { headers: { authorization: 'Bearer junk' } });
      assert.equal(junk.status, 401);
      // (and the issuer discovery document names the --service-account-jwks-uri given)
      const doc = await c3.rawNoAuth('GET', '/.well-known/openid-configuration', { headers: alice });
      assert.equal(doc.json().jwks_uri, 'https://keys.example.com/cluster/jwks');
    } finally {
      await c3.stop();
    }
  });
});

describe('TokenRequest', () => {
  test('the answer in Kubernetes\' field order, whatever the order sent; the token is the service account', async () => {
    const r = await admin('POST', '/api/v1/namespaces/mx-a/serviceaccounts/robot/token', { spec: { expirationSeconds: 1200, audiences: [] }, kind: 'TokenRequest', apiVersion: 'authentication.k8s.io/v1' });
    assert.equal(r.status, 201, r.text);
    const tr = r.json();
    assert.deepEqual(Object.keys(tr), ['kind', 'apiVersion', 'metadata', 'spec', 'status']);
    assert.deepEqual(Object.keys(tr.metadata), ['name', 'namespace', 'creationTimestamp']);
    assert.deepEqual(tr.spec, { audiences: [ISSUER], expirationSeconds: 1200, boundObjectRef: null });
    assert.deepEqual(Object.keys(tr.status), ['token', 'expirationTimestamp']);
    const who = await send('POST', WHOAMI, { headers: { authorization: `Bearer ${tr.status.token}` }, body: whoamiBody });
    assert.equal(who.status, 201, who.text);
    assert.equal(who.json().status.userInfo.username, ROBOT);
  });
});

describe('service account issuer discovery', () => {
  test('/.well-known/openid-configuration and /openid/v1/jwks, for service accounts; the key set verifies their tokens', async () => {
    const robot = { authorization: `Bearer ${robotToken}` };
    const conf = await send('GET', '/.well-known/openid-configuration', { headers: robot });
    assert.equal(conf.status, 200, conf.text);
    assert.equal(conf.headers['content-type'], 'application/json');
    assert.equal(conf.headers['cache-control'], 'public, max-age=3600');
    const doc = conf.json();
    assert.deepEqual(Object.keys(doc), ['issuer', 'jwks_uri', 'response_types_supported', 'subject_types_supported', 'id_token_signing_alg_values_supported']);
    assert.equal(doc.issuer, ISSUER);
    assert.match(doc.jwks_uri, new RegExp(`^https://[^/]+:${c.port}/openid/v1/jwks$`));
    assert.deepEqual([doc.response_types_supported, doc.subject_types_supported, doc.id_token_signing_alg_values_supported], [['id_token'], ['public'], ['RS256']]);
    const jwks = await send('GET', '/openid/v1/jwks', { headers: robot });
    assert.equal(jwks.status, 200, jwks.text);
    assert.equal(jwks.headers['content-type'], 'application/jwk-set+json');
    const keys = jwks.json().keys;
    assert.equal(keys.length, 1);
    const kid = createHash('sha256').update(createPublicKey(saKey).export({ type: 'spki', format: 'der' })).digest('base64url');
    assert.deepEqual(Object.keys(keys[0]), ['use', 'kty', 'kid', 'alg', 'n', 'e']);
    assert.deepEqual({ use: keys[0].use, kty: keys[0].kty, kid: keys[0].kid, alg: keys[0].alg }, { use: 'sig', kty: 'RSA', kid, alg: 'RS256' });
    // a relying party checks a token with the published key
    const [h, p, sig] = robotToken.split('.');
    assert.equal(JSON.parse(Buffer.from(h!, 'base64url').toString()).kid, kid);
    const pub = createPublicKey({ key: keys[0], format: 'jwk' });
    assert.ok(createVerify('RSA-SHA256').update(`${h}.${p}`).verify(pub, Buffer.from(sig!, 'base64url')), 'the token verifies with the published key');
    // others may not read them (system:service-account-issuer-discovery is bound to service accounts)
    const alice = await send('GET', '/.well-known/openid-configuration', { headers: { authorization: `Bearer ${ALICE_TOKEN}` } });
    assert.equal(alice.status, 403);
    assert.equal(alice.json().message, 'forbidden: User "alice" cannot get path "/.well-known/openid-configuration"');
    const anon = await send('GET', '/openid/v1/jwks');
    assert.equal(anon.status, 403);
    assert.equal(anon.json().message, 'forbidden: User "system:anonymous" cannot get path "/openid/v1/jwks"');
  });

  test('--service-account-jwks-uri: named in the document; it must be https', async () => {
    await assert.rejects(startCluster({ args: ['--service-account-jwks-uri=http://keys.example.com/jwks'] }), (e: Error) => {
      assert.match(e.message, /service-account-jwks-uri requires https scheme, parsed as: http:\/\/keys\.example\.com\/jwks/);
      return true;
    });
  });
});

// ---------------------------------------------------------------- front proxy

describe('front proxy (--requestheader-*)', () => {
  const headers = { 'X-Remote-User': 'alice', 'X-Remote-Group': ['mx-team', 'proxied'], 'X-Remote-Uid': 'alice-from-proxy', 'X-Remote-Extra-Acme.com%2fProject': 'p1' };
  test('the proxy\'s identity headers, with the uid header, are the user RBAC sees', async () => {
    const who = await send('POST', WHOAMI, { cert: certs.proxy, headers, body: whoamiBody });
    assert.equal(who.status, 201, who.text);
    assert.deepEqual(who.json().status.userInfo, { username: 'alice', uid: 'alice-from-proxy', groups: ['mx-team', 'proxied', 'system:authenticated'], extra: { 'acme.com/project': ['p1'] } });
    const ok = await send('GET', '/api/v1/namespaces/mx-custom/configmaps', { cert: certs.proxy, headers });
    assert.equal(ok.status, 200, ok.text);
    const no = await send('GET', '/api/v1/namespaces/mx-a/configmaps', { cert: certs.proxy, headers });
    assert.equal(no.status, 403);
    assert.equal(no.json().message, 'configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "mx-a"');
  });
  test('a proxy certificate whose name is not allowed is refused (401)', async () => {
    await expect401('proxy not in --requestheader-allowed-names', { cert: certs.otherProxy, headers: { 'X-Remote-User': 'kubernetes-admin', 'X-Remote-Group': 'system:masters' } as Record<string, string> });
  });
});

// ---------------------------------------------------------------- access reviews

describe('access reviews', () => {
  const AUTHZ = '/apis/authorization.k8s.io/v1';
  const sar = (spec: any) => admin('POST', `${AUTHZ}/subjectaccessreviews`, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec });
  const lsar = (ns: string, spec: any) => admin('POST', `${AUTHZ}/namespaces/${ns}/localsubjectaccessreviews`, { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', spec });

  test('SubjectAccessReview: allowed with the binding that allows, groups as given', async () => {
    const yes = await sar({ user: 'alice', groups: ['mx-team'], resourceAttributes: { verb: 'list', resource: 'configmaps', namespace: 'mx-custom' } });
    assert.equal(yes.status, 201, yes.text);
    assert.deepEqual(yes.json().status, { allowed: true, reason: 'RBAC: allowed by RoleBinding "team-custom/mx-custom" of Role "mx-custom" to Group "mx-team"' });
    const noGroup = await sar({ user: 'alice', resourceAttributes: { verb: 'list', resource: 'configmaps', namespace: 'mx-custom' } });
    assert.deepEqual(noGroup.json().status, { allowed: false });
    const sa = await sar({ user: ROBOT, groups: ['system:serviceaccounts'], resourceAttributes: { verb: 'create', group: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'mx-a', name: 'x' } });
    assert.deepEqual(sa.json().status, { allowed: true, reason: 'RBAC: allowed by RoleBinding "robot-edit/mx-a" of ClusterRole "edit" to ServiceAccount "robot/mx-a"' });
    const path = await sar({ user: 'alice', groups: ['system:authenticated'], nonResourceAttributes: { verb: 'get', path: '/healthz' } });
    assert.equal(path.json().status.allowed, true);
    const metrics = await sar({ user: 'alice', groups: ['system:authenticated'], nonResourceAttributes: { verb: 'get', path: '/metrics' } });
    assert.deepEqual(metrics.json().status, { allowed: false });
    const empty = await sar({ user: 'alice' });
    assert.equal(empty.status, 422);
    assert.equal(empty.json().message, 'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified');
    const nobody = await sar({ resourceAttributes: { verb: 'get', resource: 'pods' } });
    assert.equal(nobody.status, 422);
    assert.equal(nobody.json().message, 'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified');
  });

  test('LocalSubjectAccessReview: the namespace of the URL, which the attributes must name', async () => {
    const ok = await lsar('mx-custom', { user: 'alice', groups: ['mx-team'], resourceAttributes: { verb: 'update', resource: 'pods', subresource: 'status', namespace: 'mx-custom' } });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.json().metadata.namespace, 'mx-custom');
    assert.equal(ok.json().status.allowed, true);
    for (const [ns, what] of [['mx-view', 'another namespace'], [undefined, 'no namespace']] as const) {
      const r = await lsar('mx-custom', { user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods', ...(ns ? { namespace: ns } : {}) } });
      assert.equal(r.status, 422, `${what}: ${r.text}`);
      assert.equal(r.json().message, `LocalSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "${ns ?? ''}": must match metadata.namespace`, what);
    }
    const nonResource = await lsar('mx-custom', { user: 'alice', nonResourceAttributes: { verb: 'get', path: '/healthz' } });
    assert.equal(nonResource.status, 422, nonResource.text);
    assert.match(nonResource.json().message, /spec\.nonResourceAttributes: Invalid value: .*: disallowed on this kind of request$/);
    // edit does not grant local reviews (admin does)
    const robot = await send('POST', `${AUTHZ}/namespaces/mx-a/localsubjectaccessreviews`, {
      headers: { authorization: `Bearer ${robotToken}` },
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', spec: { user: 'x', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'mx-a' } } },
    });
    assert.equal(robot.status, 403);
    assert.equal(robot.json().message, `localsubjectaccessreviews.authorization.k8s.io is forbidden: User "${ROBOT}" cannot create resource "localsubjectaccessreviews" in API group "authorization.k8s.io" in the namespace "mx-a"`);
  });

  test('access reviews: selectors and metadata are validated; selector requirements Kubernetes cannot use are named in evaluationError', async () => {
    const base = { verb: 'list', resource: 'configmaps', namespace: 'mx-custom' };
    const both = await sar({ user: 'alice', resourceAttributes: { ...base, fieldSelector: { rawSelector: 'a=b', requirements: [{ key: '', operator: 'In' }] }, labelSelector: {} } });
    assert.equal(both.status, 422, both.text);
    assert.equal(
      both.json().message,
      'SubjectAccessReview.authorization.k8s.io "" is invalid: [spec.resourceAttributes.fieldSelector.rawSelector: Invalid value: "a=b": may not specified at the same time as requirements, ' +
        "spec.resourceAttributes.fieldSelector.requirements[0].key: Required value: must be specified, spec.resourceAttributes.fieldSelector.requirements[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn', " +
        'spec.resourceAttributes.labelSelector.requirements: Required value: when spec.resourceAttributes.labelSelector is specified, requirements or rawSelector is required]',
    );
    const badLabel = await sar({ user: 'alice', resourceAttributes: { ...base, labelSelector: { requirements: [{ key: 'a b', operator: 'Exists', values: ['x'] }] } } });
    assert.equal(badLabel.status, 422, badLabel.text);
    assert.deepEqual(
      badLabel.json().details.causes.map((c: any) => c.field),
      ['spec.resourceAttributes.labelSelector.requirements[0].values', 'spec.resourceAttributes.labelSelector.requirements[0].key'],
    );
    // an unknown operator passes validation (newer clients) and is left out of the check
    const self = await send('POST', `${AUTHZ}/selfsubjectaccessreviews`, {
      headers: { authorization: `Bearer ${ALICE_TOKEN}` },
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { ...base, fieldSelector: { requirements: [{ key: 'a', operator: 'Exists' }, { key: 'b', operator: 'In', values: ['x'] }] }, labelSelector: { requirements: [{ key: 'a', operator: 'Near' }] } } } },
    });
    assert.equal(self.status, 201, self.text);
    assert.equal(self.json().status.evaluationError, 'spec.resourceAttributes.fieldSelector partially ignored due to parse error; spec.resourceAttributes.labelSelector ignored due to parse error');
    const raw = await sar({ user: 'alice', resourceAttributes: { ...base, labelSelector: { rawSelector: 'a in (b' } } });
    assert.equal(raw.status, 201, raw.text);
    assert.equal(raw.json().status.evaluationError, 'spec.resourceAttributes.labelSelector ignored due to parse error');
    // metadata must be empty (a local review's may name its namespace)
    const named = await admin('POST', `${AUTHZ}/subjectaccessreviews`, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: { name: 'x' }, spec: { user: 'alice', resourceAttributes: base } });
    assert.equal(named.status, 422, named.text);
    assert.match(named.json().message, /is invalid: metadata: Invalid value: .*: must be empty$/);
    const clusterNs = await admin('POST', `${AUTHZ}/subjectaccessreviews`, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: { namespace: 'x' }, spec: { user: 'alice', resourceAttributes: base } });
    assert.equal(clusterNs.status, 201, 'a cluster-scoped review sheds a namespace, as any cluster-scoped create does');
    const labelled = await admin('POST', `${AUTHZ}/namespaces/mx-custom/localsubjectaccessreviews`, { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: { namespace: 'mx-custom', labels: { a: 'b' } }, spec: { user: 'alice', resourceAttributes: base } });
    assert.equal(labelled.status, 422, labelled.text);
    assert.match(labelled.json().message, /metadata: Invalid value: .*: must be empty except for namespace$/);
    const elsewhere = await admin('POST', `${AUTHZ}/namespaces/mx-custom/localsubjectaccessreviews`, { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: { namespace: 'mx-view' }, spec: { user: 'alice', resourceAttributes: base } });
    assert.equal(elsewhere.status, 400, elsewhere.text);
    assert.equal(elsewhere.json().message, 'the namespace of the provided object does not match the namespace sent on the request');
  });

  test('SelfSubjectRulesReview: the rules of the namespace and the cluster-wide ones', async () => {
    const r = await send('POST', `${AUTHZ}/selfsubjectrulesreviews`, { headers: { authorization: `Bearer ${ALICE_TOKEN}` }, body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'mx-custom' } } });
    assert.equal(r.status, 201, r.text);
    const st = r.json().status;
    assert.equal(st.incomplete, false);
    const has = (rule: any) => st.resourceRules.some((x: any) => JSON.stringify(x) === JSON.stringify(rule));
    for (const rule of [...toYAMLRules(CUSTOM_ROLE), ...toYAMLRules(CUSTOM_CLUSTER_ROLE)]) assert.ok(has({ verbs: rule.verbs, apiGroups: rule.apiGroups, resources: rule.resources }), JSON.stringify(rule));
    assert.ok(!st.resourceRules.some((x: any) => (x.resources ?? []).includes('secrets') && x.verbs.includes('get')), 'no get on secrets');
    const none = await send('POST', `${AUTHZ}/selfsubjectrulesreviews`, { headers: { authorization: `Bearer ${ALICE_TOKEN}` }, body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: {} } });
    assert.equal(none.status, 400);
    assert.equal(none.json().message, 'no namespace on request');
  });
});

// ---------------------------------------------------------------- escalation

describe('escalation prevention', () => {
  const eve = { authorization: `Bearer ${EVE_TOKEN}` };
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const rb = (name: string, kind: string, role: string) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: role },
    subjects: [{ kind: 'User', name: 'bob', apiGroup: 'rbac.authorization.k8s.io' }],
  });
  const role = (name: string, rules: any[]) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name }, rules });
  const grant = async (name: string, rules: any[]) => {
    await adminOK('POST', `${rbac}/namespaces/mx-esc/roles`, role(name, rules));
    await adminOK('POST', `${rbac}/namespaces/mx-esc/rolebindings`, { ...rb(`eve-${name}`, 'Role', name), subjects: [{ kind: 'User', name: 'eve', apiGroup: 'rbac.authorization.k8s.io' }] });
  };
  const can = async (attrs: any) => {
    const r = await send('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { headers: eve, body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { namespace: 'mx-esc', ...attrs } } } });
    return r.status === 201 && r.json().status.allowed === true;
  };
  const PREFIX = 'user "eve" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n';

  test('create rolebindings without holding edit: binding edit is refused until bind on it', async () => {
    await grant('rbac-writer', [
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings', 'roles'], verbs: ['create', 'get', 'update'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
    ]);
    await until('eve may create rolebindings', () => can({ verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'rolebindings' }));
    // a small role: the exact list of what is missing
    await adminOK('POST', `${rbac}/clusterroles`, { metadata: { name: 'mx-secret-reader' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'] }, { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] });
    const small = await send('POST', `${rbac}/namespaces/mx-esc/rolebindings`, { headers: eve, body: rb('bob-secrets', 'ClusterRole', 'mx-secret-reader') });
    assert.equal(small.status, 403, small.text);
    assert.deepEqual(small.json(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `rolebindings.rbac.authorization.k8s.io "bob-secrets" is forbidden: ${PREFIX}{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`,
      reason: 'Forbidden',
      details: { name: 'bob-secrets', group: 'rbac.authorization.k8s.io', kind: 'rolebindings' },
      code: 403,
    });
    const edit = await send('POST', `${rbac}/namespaces/mx-esc/rolebindings`, { headers: eve, body: rb('bob-edit', 'ClusterRole', 'edit') });
    assert.equal(edit.status, 403, edit.text);
    const msg: string = edit.json().message;
    assert.ok(msg.startsWith(`rolebindings.rbac.authorization.k8s.io "bob-edit" is forbidden: ${PREFIX}`), msg);
    const lines = msg.slice(msg.indexOf('\n') + 1).split('\n');
    for (const l of lines) assert.match(l, /^\{APIGroups:\["[^"]*"(?: "[^"]*")*\], Resources:\["[^"]*"(?: "[^"]*")*\](?:, ResourceNames:\[[^\]]*\])?, Verbs:\["[a-z]+"(?: "[a-z]+")*\]\}$/, l);
    assert.deepEqual([...lines].sort(), lines, 'sorted, as Kubernetes lists them');
    assert.ok(lines.some((l) => l.startsWith('{APIGroups:[""], Resources:["secrets"]')), msg);
    assert.ok(!lines.some((l) => l.includes('Resources:["configmaps"], Verbs:["get"') || l.includes('Resources:["configmaps"], Verbs:["list"')), 'what eve holds is not listed');
    // a dry run is checked the same way
    const dry = await send('POST', `${rbac}/namespaces/mx-esc/rolebindings?dryRun=All`, { headers: eve, body: rb('bob-edit', 'ClusterRole', 'edit') });
    assert.equal(dry.status, 403);
    assert.equal(dry.json().message, msg);
    // bind on the edit ClusterRole (by name) lifts it; other roles still need their permissions
    await grant('bind-edit', [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['edit'] }]);
    await until('eve may bind edit', () => can({ verb: 'bind', group: 'rbac.authorization.k8s.io', resource: 'clusterroles', name: 'edit' }));
    const ok = await send('POST', `${rbac}/namespaces/mx-esc/rolebindings`, { headers: eve, body: rb('bob-edit', 'ClusterRole', 'edit') });
    assert.equal(ok.status, 201, ok.text);
    const still = await send('POST', `${rbac}/namespaces/mx-esc/rolebindings`, { headers: eve, body: rb('bob-admin', 'ClusterRole', 'admin') });
    assert.equal(still.status, 403, still.text);
    assert.ok(still.json().message.startsWith(`rolebindings.rbac.authorization.k8s.io "bob-admin" is forbidden: ${PREFIX}`));
    // no create on clusterrolebindings at all: the filter's answer
    const crb = await send('POST', `${rbac}/clusterrolebindings`, { headers: eve, body: { ...rb('bob-edit', 'ClusterRole', 'edit'), kind: 'ClusterRoleBinding' } });
    assert.equal(crb.status, 403);
    assert.equal(crb.json().message, 'clusterrolebindings.rbac.authorization.k8s.io is forbidden: User "eve" cannot create resource "clusterrolebindings" in API group "rbac.authorization.k8s.io" at the cluster scope');
  });

  test('a Role with rules the user lacks is refused unless escalate', async () => {
    await until('eve may create roles', () => can({ verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'roles' }));
    const held = await send('POST', `${rbac}/namespaces/mx-esc/roles`, { headers: eve, body: role('cm-reader', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }]) });
    assert.equal(held.status, 201, held.text);
    const more = await send('POST', `${rbac}/namespaces/mx-esc/roles`, { headers: eve, body: role('deleter', [{ apiGroups: [''], resources: ['configmaps', 'pods'], verbs: ['get', 'delete'] }]) });
    assert.equal(more.status, 403, more.text);
    assert.equal(more.json().message, `roles.rbac.authorization.k8s.io "deleter" is forbidden: ${PREFIX}{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}\n{APIGroups:[""], Resources:["pods"], Verbs:["get" "delete"]}`);
    // an update that adds rules is checked too
    const cur = await adminOK('GET', `${rbac}/namespaces/mx-esc/roles/cm-reader`);
    cur.rules.push({ apiGroups: [''], resources: ['secrets'], verbs: ['get'] });
    const upd = await send('PUT', `${rbac}/namespaces/mx-esc/roles/cm-reader`, { headers: eve, body: cur });
    assert.equal(upd.status, 403, upd.text);
    assert.equal(upd.json().message, `roles.rbac.authorization.k8s.io "cm-reader" is forbidden: ${PREFIX}{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`);
    await grant('escalate', [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['escalate'] }]);
    await until('eve may escalate', () => can({ verb: 'escalate', group: 'rbac.authorization.k8s.io', resource: 'roles' }));
    const now = await send('POST', `${rbac}/namespaces/mx-esc/roles`, { headers: eve, body: role('deleter', [{ apiGroups: [''], resources: ['configmaps', 'pods'], verbs: ['get', 'delete'] }]) });
    assert.equal(now.status, 201, now.text);
  });
});

describe('ClusterRoles: escalation and aggregation rules', () => {
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const alice = { authorization: `Bearer ${ALICE_TOKEN}` };
  const aliceCan = async (verb: string, resource: string, namespace: string) => {
    const r = await send('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { headers: alice, body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb, resource, namespace } } } });
    return r.json().status.allowed === true;
  };
  test('a ClusterRole labelled to aggregate to view extends what view grants, while labelled', async () => {
    assert.equal(await aliceCan('list', 'podtemplates', 'mx-view'), false);
    await adminOK('POST', `${rbac}/clusterroles`, { metadata: { name: 'mx-podtemplates-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }, rules: [{ apiGroups: [''], resources: ['podtemplates'], verbs: ['get', 'list'] }] });
    await until('view aggregates the new rules', async () => (await aliceCan('list', 'podtemplates', 'mx-view')) || undefined);
    const list = await send('GET', '/api/v1/namespaces/mx-view/podtemplates', { headers: alice });
    assert.equal(list.status, 200, list.text);
    const view = await adminOK('GET', `${rbac}/clusterroles/view`);
    assert.ok(view.rules.some((r: any) => (r.resources ?? []).includes('podtemplates')), 'the rules are in view itself');
    // view is labelled to aggregate to edit, and edit to admin: the rules travel along
    for (const role of ['edit', 'admin']) {
      await until(`${role} has the rules too`, async () => (await adminOK('GET', `${rbac}/clusterroles/${role}`)).rules.some((r: any) => (r.resources ?? []).includes('podtemplates')));
    }
    // still refused elsewhere, in Kubernetes' words
    const other = await send('GET', '/api/v1/namespaces/mx-a/podtemplates', { headers: alice });
    assert.equal(other.json().message, 'podtemplates is forbidden: User "alice" cannot list resource "podtemplates" in API group "" in the namespace "mx-a"');
    // without the label the rules leave view
    const r = await send('PATCH', `${rbac}/clusterroles/mx-podtemplates-view`, { cert: true, body: { metadata: { labels: { 'rbac.authorization.k8s.io/aggregate-to-view': null } } }, ctype: 'application/merge-patch+json' });
    assert.equal(r.status, 200, r.text);
    await until('view drops the rules', async () => !(await aliceCan('list', 'podtemplates', 'mx-view')) || undefined);
  });
  test('updating a ClusterRole (alice may update clusterroles): no rules beyond hers, no aggregationRule', async () => {
    const role = await adminOK('POST', `${rbac}/clusterroles`, { metadata: { name: 'mx-esc-target' }, rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }] });
    const more = structuredClone(role);
    more.rules.push({ apiGroups: [''], resources: ['nodes'], verbs: ['delete'] });
    const r = await send('PUT', `${rbac}/clusterroles/mx-esc-target`, { headers: alice, body: more });
    assert.equal(r.status, 403, r.text);
    assert.equal(r.json().message, 'clusterroles.rbac.authorization.k8s.io "mx-esc-target" is forbidden: user "alice" (groups=["mx-team" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["nodes"], Verbs:["delete"]}');
    const agg = structuredClone(role);
    agg.aggregationRule = { clusterRoleSelectors: [{ matchLabels: { 'mx-aggregate': 'true' } }] };
    const a = await send('PUT', `${rbac}/clusterroles/mx-esc-target`, { headers: alice, body: agg });
    assert.equal(a.status, 403, a.text);
    assert.equal(a.json().message, 'clusterroles.rbac.authorization.k8s.io "mx-esc-target" is forbidden: must have cluster-admin privileges to use the aggregationRule');
    const held = structuredClone(role);
    held.metadata.labels = { updated: 'by-alice' };
    const ok = await send('PUT', `${rbac}/clusterroles/mx-esc-target`, { headers: alice, body: held });
    assert.equal(ok.status, 200, ok.text);
  });
});

// ---------------------------------------------------------------- NodeRestriction

describe('NodeRestriction (--enable-admission-plugins=NodeRestriction) with the Node authorizer', () => {
  const node = { authorization: `Bearer ${NODE_TOKEN}` };
  const nodeBody = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels } });
  const podBody = (name: string, nodeName: string, annotations: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, annotations }, spec: { nodeName, containers: [{ name: 'c', image: 'nginx' }] } });
  const refused = async (method: string, path: string, body: unknown, message: string, ctype?: string) => {
    const r = await send(method, path, { headers: node, body, ctype });
    assert.equal(r.status, 403, `${method} ${path}: ${r.text}`);
    assert.equal(r.json().message, message);
  };
  test('a kubelet registers its own Node only, without restricted labels, and cannot change taints or labels', async () => {
    await refused('POST', '/api/v1/nodes', nodeBody('mx-other-node'), 'nodes "mx-other-node" is forbidden: node "mx-node" is not allowed to modify node "mx-other-node"');
    await refused('POST', '/api/v1/nodes', nodeBody('mx-node', { 'node-restriction.kubernetes.io/pool': 'a' }), 'nodes "mx-node" is forbidden: node "mx-node" is not allowed to set the following labels: node-restriction.kubernetes.io/pool');
    const own = await send('POST', '/api/v1/nodes', { headers: node, body: nodeBody('mx-node', { 'kubernetes.io/hostname': 'mx-node' }) });
    assert.equal(own.status, 201, own.text);
    await refused('PATCH', '/api/v1/nodes/mx-node', { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '' } } }, 'nodes "mx-node" is forbidden: is not allowed to modify labels: node-role.kubernetes.io/control-plane', 'application/merge-patch+json');
    await refused('PATCH', '/api/v1/nodes/mx-node', { spec: { taints: [{ key: 'mx', effect: 'NoSchedule' }] } }, 'nodes "mx-node" is forbidden: node "mx-node" is not allowed to modify taints', 'application/merge-patch+json');
    // the Node authorizer: another node's object is not its to read
    const other = await send('GET', '/api/v1/nodes/ali-cl-nodes-a', { headers: node });
    assert.equal(other.status, 403);
    assert.equal(other.json().message, 'nodes "ali-cl-nodes-a" is forbidden: User "system:node:mx-node" cannot get resource "nodes" in API group "" at the cluster scope: node \'mx-node\' cannot read \'ali-cl-nodes-a\', only its own Node object');
  });
  test('a kubelet creates only mirror pods bound to itself and owned by its Node', async () => {
    await refused('POST', '/api/v1/namespaces/mx-a/pods', podBody('plain', 'mx-node'), 'pods "plain" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "mx-node" can only create mirror pods');
    await refused('POST', '/api/v1/namespaces/mx-a/pods', podBody('elsewhere', 'mx-other-node', { 'kubernetes.io/config.mirror': 'x' }), 'pods "elsewhere" is forbidden: node "mx-node" can only create pods with spec.nodeName set to itself');
    await refused('POST', '/api/v1/namespaces/mx-a/pods', podBody('orphan', 'mx-node', { 'kubernetes.io/config.mirror': 'x' }), 'pods "orphan" is forbidden: node "mx-node" can only create pods with an owner reference set to itself');
  });
});

// ---------------------------------------------------------------- webhooks and dry runs

describe('dry runs and webhooks with side effects', () => {
  // Kubernetes' v1 validation takes only None and NoneOnDryRun (an update keeps what the stored
  // object had); configurations with Unknown or Some exist only when kept from older versions. The
  // test makes such objects the way they come to exist: written into the store, behind the API
  // server's back, while it is stopped.
  let w: Cluster;
  let hooks: WebhookServer;
  const SIDE_EFFECTS = [
    ['Validating', 'Unknown', 'Fail'],
    ['Validating', 'Some', 'Ignore'],
    ['Mutating', 'Unknown', 'Ignore'],
  ] as const;
  const nameOf = (kind: string, sideEffects: string) => `mx-${kind.toLowerCase()}-${sideEffects.toLowerCase()}`;
  /** each webhook selects its own namespace: a dry run there reaches that webhook alone */
  const nsOf = (kind: string, sideEffects: string) => `hooks-${kind.toLowerCase()}-${sideEffects.toLowerCase()}`;
  const resourceOf = (kind: string) => `${kind.toLowerCase()}webhookconfigurations`;
  const config = (kind: 'Validating' | 'Mutating', name: string, ns: string, hook: any) => ({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: `${kind}WebhookConfiguration`,
    metadata: { name },
    webhooks: [
      {
        name: `${name}.mx.example.com`,
        admissionReviewVersions: ['v1'],
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        clientConfig: { url: hooks.url('/allow'), caBundle: hooks.caBundle },
        ...hook,
      },
    ],
  });
  const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
  const calls = () => hooks.received.get('/allow')?.length ?? 0;

  before(async () => {
    hooks = await startWebhookServer();
    hooks.handle('/allow', (r) => respond(r, { allowed: true }));
    w = await startCluster();
    for (const [kind, sideEffects, failurePolicy] of SIDE_EFFECTS) {
      const name = nameOf(kind, sideEffects);
      const ns = nsOf(kind, sideEffects);
      assert.equal((await w.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status, 201);
      const refused = await w.raw('POST', `/apis/admissionregistration.k8s.io/v1/${resourceOf(kind)}`, { body: config(kind, name, ns, { sideEffects, failurePolicy }) });
      assert.equal(refused.status, 422, refused.text);
      assert.equal(refused.json().message, `${kind}WebhookConfiguration.admissionregistration.k8s.io "${name}" is invalid: webhooks[0].sideEffects: Unsupported value: "${sideEffects}": supported values: "None", "NoneOnDryRun"`);
      const created = await w.raw('POST', `/apis/admissionregistration.k8s.io/v1/${resourceOf(kind)}`, { body: config(kind, name, ns, { sideEffects: 'None', failurePolicy }) });
      assert.equal(created.status, 201, created.text);
      // nor may an update bring side effects in
      const cur = created.json();
      cur.webhooks[0].sideEffects = sideEffects;
      const upd = await w.raw('PUT', `/apis/admissionregistration.k8s.io/v1/${resourceOf(kind)}/${name}`, { body: cur });
      assert.equal(upd.status, 422, upd.text);
    }
    await w.stopProcess();
    const db = new Database(join(w.dataDir, 'db', 'state.db'));
    try {
      for (const [kind, sideEffects] of SIDE_EFFECTS) {
        const key = `/registry/${resourceOf(kind)}/${nameOf(kind, sideEffects)}`;
        const row = db.prepare('SELECT rev, value FROM kv WHERE key = ? ORDER BY rev DESC LIMIT 1').get(key) as { rev: number; value: Buffer };
        const obj = JSON.parse(row.value.toString('utf8'));
        obj.webhooks[0].sideEffects = sideEffects;
        db.prepare('UPDATE kv SET value = ? WHERE rev = ?').run(Buffer.from(JSON.stringify(obj)), row.rev);
      }
    } finally {
      db.close();
    }
    await w.launch();
  });
  after(async () => {
    await w?.stop();
    await hooks?.close();
  });

  for (const [kind, sideEffects, failurePolicy] of SIDE_EFFECTS) {
    test(`a dry run that would reach a ${kind.toLowerCase()} webhook with sideEffects ${sideEffects} (failurePolicy ${failurePolicy}) fails`, async () => {
      const name = nameOf(kind, sideEffects);
      const ns = nsOf(kind, sideEffects);
      const stored = await w.raw('GET', `/apis/admissionregistration.k8s.io/v1/${resourceOf(kind)}/${name}`);
      assert.equal(stored.json().webhooks[0].sideEffects, sideEffects, 'the stored configuration has side effects');
      const dry = await w.raw('POST', `/api/v1/namespaces/${ns}/configmaps?dryRun=All`, { body: cm(`${name}-dry`) });
      assert.equal(dry.status, 400, dry.text);
      assert.deepEqual(dry.json(), {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `admission webhook "${name}.mx.example.com" does not support dry run`,
        reason: 'BadRequest',
        code: 400,
      });
      // kubectl says so
      const k = await w.kubectlAsync(['create', 'configmap', `${name}-k`, '-n', ns, '--dry-run=server']);
      assert.notEqual(k.code, 0);
      assert.match(k.stderr, new RegExp(`admission webhook "${name}\\.mx\\.example\\.com" does not support dry run`));
      // a dry run the webhooks' rules do not select is fine
      const elsewhere = await w.raw('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { body: cm(`${name}-dry`) });
      assert.equal(elsewhere.status, 201, elsewhere.text);
      const otherKind = await w.raw('POST', `/api/v1/namespaces/${ns}/secrets?dryRun=All`, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'dry' } } });
      assert.equal(otherKind.status, 201, otherKind.text);
    });
  }

  test('the webhooks were never called for the dry runs; real requests reach them', async () => {
    for (const [kind, sideEffects] of SIDE_EFFECTS) {
      const before = calls();
      const r = await w.raw('POST', `/api/v1/namespaces/${nsOf(kind, sideEffects)}/configmaps`, { body: cm('real') });
      assert.equal(r.status, 201, r.text);
      assert.equal(calls() - before, 1, `the ${kind} webhook with ${sideEffects} side effects saw the real request`);
    }
    assert.ok(hooks.received.get('/allow')!.every((x) => x.review.request.dryRun === false), 'no dry run reached a webhook with side effects');
  });

  test('webhook configurations are validated as Kubernetes validates them', async () => {
    const post = async (hook: any) => {
      const body = config('Validating', 'mx-invalid', 'default', { sideEffects: 'None', ...hook });
      const r = await w.raw('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', { body });
      assert.equal(r.status, 422, r.text);
      return r.json().message.replace('ValidatingWebhookConfiguration.admissionregistration.k8s.io "mx-invalid" is invalid: ', '');
    };
    assert.equal(await post({ sideEffects: undefined }), 'webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun');
    assert.equal(
      await post({ name: 'short.name', timeoutSeconds: 31, failurePolicy: 'Maybe' }),
      '[webhooks[0].name: Invalid value: "short.name": should be a domain with at least three segments separated by dots, webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore", webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds]',
    );
    assert.equal(
      await post({ clientConfig: { url: 'http://user:pw@example.com/y?q=1#f' } }),
      "[webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path], webhooks[0].clientConfig.url: Invalid value: \"user:pw\": user information is not permitted in the URL, webhooks[0].clientConfig.url: Invalid value: \"f\": fragments are not permitted in the URL, webhooks[0].clientConfig.url: Invalid value: \"q=1\": query parameters are not permitted in the URL]",
    );
    assert.equal(await post({ clientConfig: {} }), 'webhooks[0].clientConfig: Required value: exactly one of url or service is required');
    assert.equal(
      await post({ admissionReviewVersions: ['v2', 'v2'], rules: [{ operations: ['*', 'CREATE'], apiGroups: [], apiVersions: ['*', 'v1'], resources: ['*', 'pods'] }] }),
      '[webhooks[0].rules[0].operations: Invalid value: []admissionregistration.OperationType{"*", "CREATE"}: if \'*\' is present, must not specify other operations, webhooks[0].rules[0].apiGroups: Required value, webhooks[0].rules[0].apiVersions: Invalid value: []string{"*", "v1"}: if \'*\' is present, must not specify other API versions, webhooks[0].rules[0].resources: Invalid value: []string{"*", "pods"}: if \'*\' is present, must not specify other resources without subresources, webhooks[0].admissionReviewVersions[1]: Invalid value: "v2": duplicate version, webhooks[0].admissionReviewVersions: Invalid value: []string{"v2", "v2"}: must include at least one of v1, v1beta1]',
    );
  });

  test('sideEffects NoneOnDryRun: the webhook sees dryRun true', async () => {
    const created = await w.raw('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', { body: config('Validating', 'mx-none-on-dry-run', 'default', { sideEffects: 'NoneOnDryRun' }) });
    assert.equal(created.status, 201, created.text);
    await until('the webhook sees a dry run', async () => {
      const r = await w.raw('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { body: cm('nodry') });
      assert.equal(r.status, 201, r.text);
      return hooks.received.get('/allow')?.at(-1)?.review.request.dryRun === true;
    });
  });
});

// ---------------------------------------------------------------- flags

/** the flags of a --help text: name -> type and help */
function helpFlags(args: string[]): Map<string, string> {
  const r = spawnSync(process.execPath, [KEELSON, ...args, '--help'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const flags = new Map<string, string>();
  for (const line of r.stdout.split('\n')) {
    const m = /^\s+(?:-[a-zA-Z], )?--([a-z0-9-]+)(?: ([a-zA-Z0-9<>=.:]+))?\s{2,}(.*)$/.exec(line) ?? /^\s+(?:-[a-zA-Z], )?--([a-z0-9-]+)(?: ([a-zA-Z0-9<>=.:]+))?$/.exec(line);
    if (m) flags.set(m[1]!, `${m[2] ?? 'bool'}  ${m[3] ?? ''}`);
  }
  return flags;
}

test('keelson server takes every flag keelson apiserver takes, with the same type and help', () => {
  const apiserver = helpFlags(['apiserver']);
  const server = helpFlags(['server']);
  for (const f of ['token-auth-file', 'client-ca-file', 'authorization-mode', 'service-account-key-file', 'requestheader-client-ca-file', 'enable-admission-plugins', 'anonymous-auth']) {
    assert.ok(apiserver.has(f), `keelson apiserver --help lists --${f}`);
  }
  const missing = [...apiserver.keys()].filter((f) => !server.has(f));
  assert.deepEqual(missing, [], 'flags of keelson apiserver that keelson server lacks');
  // same type everywhere; same help but for Keelson's own --data-dir (the all-in-one keeps more there)
  const types = [...apiserver.entries()].filter(([f, v]) => server.get(f)!.split('  ')[0] !== v.split('  ')[0]).map(([f]) => f);
  assert.deepEqual(types, [], 'flags whose type differs');
  const differ = [...apiserver.entries()].filter(([f, v]) => server.get(f) !== v && f !== 'help' && f !== 'data-dir').map(([f, v]) => `--${f}:\n  apiserver: ${v}\n  server:    ${server.get(f)}`);
  // the authorization mode and --allow-privileged defaults differ on purpose (Node,RBAC and privileged
  // containers allowed for the all-in-one cluster, as k3s sets them); the help is the same.
  // keelson server also issues its own kubelet client certificate when none is given, and reaches
  // node agents by InternalIP first, as k3s does (both said in its help and checked below)
  const onPurpose = ['--authorization-mode:', '--allow-privileged:', '--kubelet-client-certificate:', '--kubelet-preferred-address-types:'];
  assert.deepEqual(differ.filter((d) => !onPurpose.some((p) => d.startsWith(p))), []);
  assert.match(server.get('kubelet-client-certificate')!, /^string  Path to a client cert file for TLS\. \(keelson server, without it and --kubelet-client-key: a certificate of the cluster CA/);
  assert.match(server.get('kubelet-preferred-address-types')!, /\(default \[InternalIP,ExternalIP,Hostname,InternalDNS,ExternalDNS\]\)$/);
  assert.match(apiserver.get('kubelet-preferred-address-types')!, /\(default \[Hostname,InternalDNS,InternalIP,ExternalDNS,ExternalIP\]\)$/);
  assert.equal(server.get('allow-privileged'), `${apiserver.get('allow-privileged')} (default true)`);
  assert.match(server.get('enable-garbage-collector')!, /\(default true\)$/, 'on in both, as in kube-apiserver');
});
