// The audit log of a real server (--audit-policy-file, --audit-log-path): events in the
// audit.k8s.io/v1 form for kubectl and raw requests, the policy's levels (Metadata, Request,
// RequestResponse, None), rules by user, verb, resource, resourceNames, namespace and
// non-resource URL, omitStages and omitManagedFields, the stages of plain and long-running
// requests, failed authentication, authorization decisions, impersonation, admission
// annotations, the Audit-ID header, and the checks of the audit flags.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KEELSON, ROOT, startCluster, type Cluster } from './harness.js';

let c: Cluster;
let dir: string;
let logPath: string;

const TOKEN = 'bob-token-0123456789';

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  users: ["system:kube-controller-manager"]
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*"]
- level: RequestResponse
  resources: [{group: "", resources: ["configmaps"]}]
  namespaces: ["audit-rr"]
- level: Request
  resources: [{group: "", resources: ["configmaps"]}]
  namespaces: ["audit-req"]
  omitManagedFields: true
- level: Metadata
  resources: [{group: "", resources: ["secrets"], resourceNames: ["logged"]}]
- level: None
  resources: [{group: "", resources: ["secrets"]}]
- level: Metadata
  verbs: ["get", "list", "watch"]
  nonResourceURLs: ["/api*"]
- level: Metadata
  omitStages: ["RequestReceived"]
`;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-audit-'));
  logPath = join(dir, 'logs', 'audit.log');
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
  writeFileSync(join(dir, 'tokens.csv'), `${TOKEN},bob,uid-bob,"devs"\n`);
  c = await startCluster({
    args: [`--audit-policy-file=${join(dir, 'policy.yaml')}`, `--audit-log-path=${logPath}`, `--token-auth-file=${join(dir, 'tokens.csv')}`],
  });
  for (const ns of ['audit-rr', 'audit-req']) assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status, 201);
});

after(async () => {
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function events(): any[] {
  if (!existsSync(logPath)) return [];
  // only whole lines: the server may be in the middle of appending the last one
  const text = readFileSync(logPath, 'utf8');
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((l) => l)
    .map((l) => JSON.parse(l));
}

/** the events of one request (waits for its ResponseComplete, or for `stages`) */
async function eventsOf(auditID: string, stages = ['ResponseComplete']): Promise<any[]> {
  for (let i = 0; i < 100; i++) {
    const evs = events().filter((e) => e.auditID === auditID);
    if (stages.every((s) => evs.some((e) => e.stage === s))) return evs;
    await new Promise((r) => setTimeout(r, 50));
  }
  return events().filter((e) => e.auditID === auditID);
}

const MICRO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

test('the log file: created with mode 0600 in a new directory, one JSON event per line', () => {
  assert.ok(existsSync(logPath));
  assert.equal(statSync(logPath).mode & 0o777, 0o600);
  for (const e of events()) {
    assert.equal(e.kind, 'Event');
    assert.equal(e.apiVersion, 'audit.k8s.io/v1');
  }
});

test('RequestResponse: both stages, the request and response objects, objectRef completed from the body, the decision', async () => {
  const r = await c.raw('POST', '/api/v1/namespaces/audit-rr/configmaps?fieldManager=audit-test', {
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'rr1' }, data: { k: 'v' } },
    headers: { 'user-agent': 'audit-e2e/1.0' },
  });
  assert.equal(r.status, 201, r.text);
  const id = String(r.headers['audit-id']);
  const evs = await eventsOf(id, ['RequestReceived', 'ResponseComplete']);
  assert.deepEqual(
    evs.map((e) => e.stage),
    ['RequestReceived', 'ResponseComplete'],
  );
  const [received, done] = evs;
  assert.deepEqual(Object.keys(done), [
    'kind',
    'apiVersion',
    'level',
    'auditID',
    'stage',
    'requestURI',
    'verb',
    'user',
    'sourceIPs',
    'userAgent',
    'objectRef',
    'responseStatus',
    'requestObject',
    'responseObject',
    'requestReceivedTimestamp',
    'stageTimestamp',
    'annotations',
  ]);
  assert.equal(done.level, 'RequestResponse');
  assert.equal(done.requestURI, '/api/v1/namespaces/audit-rr/configmaps?fieldManager=audit-test');
  assert.equal(done.verb, 'create');
  assert.equal(done.user.username, 'kubernetes-admin');
  assert.deepEqual(done.user.groups, ['system:masters', 'system:authenticated']);
  assert.deepEqual(done.sourceIPs, ['127.0.0.1']);
  assert.equal(done.userAgent, 'audit-e2e/1.0');
  assert.deepEqual(done.objectRef, { resource: 'configmaps', namespace: 'audit-rr', name: 'rr1', apiVersion: 'v1' });
  assert.deepEqual(done.responseStatus, { metadata: {}, code: 201 });
  assert.deepEqual(done.requestObject, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'rr1' }, data: { k: 'v' } });
  assert.equal(done.responseObject.metadata.uid, r.json().metadata.uid);
  assert.equal(done.annotations['authorization.k8s.io/decision'], 'allow');
  assert.ok('authorization.k8s.io/reason' in done.annotations);
  assert.match(done.requestReceivedTimestamp, MICRO);
  assert.match(done.stageTimestamp, MICRO);
  assert.equal(received.stageTimestamp, received.requestReceivedTimestamp);
  assert.equal(received.responseStatus, undefined);
  assert.ok(done.stageTimestamp >= done.requestReceivedTimestamp);

  // kubectl (HTTP/2 and Protobuf) is recorded the same way
  const k = c.kubectl(['get', 'configmap', 'rr1', '-n', 'audit-rr', '-o', 'name']);
  assert.equal(k.code, 0, k.stderr);
  let got: any[] = [];
  for (let i = 0; i < 50 && !got.length; i++) {
    got = events().filter((e) => e.verb === 'get' && e.objectRef?.name === 'rr1' && e.stage === 'ResponseComplete');
    if (!got.length) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(got.length >= 1, 'the kubectl get is recorded');
  assert.match(got[0].userAgent, /^kubectl\//);
  assert.equal(got[0].responseObject.metadata.name, 'rr1');
});

test('Request level with omitManagedFields: the request object without managedFields, no response object', async () => {
  const created = await c.raw('POST', '/api/v1/namespaces/audit-req/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'req1' }, data: { a: '1' } } });
  assert.equal(created.status, 201);
  const obj = created.json();
  assert.ok(obj.metadata.managedFields?.length, 'the object has managedFields');
  obj.data.a = '2';
  const upd = await c.raw('PUT', '/api/v1/namespaces/audit-req/configmaps/req1', { body: obj });
  assert.equal(upd.status, 200, upd.text);
  const [, done] = await eventsOf(String(upd.headers['audit-id']));
  assert.equal(done.level, 'Request');
  assert.equal(done.verb, 'update');
  assert.equal(done.requestObject.data.a, '2');
  assert.equal(done.requestObject.metadata.managedFields, undefined);
  assert.equal(done.responseObject, undefined);
  assert.deepEqual(done.objectRef, { resource: 'configmaps', namespace: 'audit-req', name: 'req1', uid: obj.metadata.uid, apiVersion: 'v1', resourceVersion: obj.metadata.resourceVersion });
  // a patch: the patch document is the request object
  const p = await c.raw('PATCH', '/api/v1/namespaces/audit-req/configmaps/req1', { body: '{"data":{"b":"3"}}', headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(p.status, 200);
  const [, pd] = await eventsOf(String(p.headers['audit-id']));
  assert.equal(pd.verb, 'patch');
  assert.deepEqual(pd.requestObject, { data: { b: '3' } });
});

test('rules by resourceNames and None: one secret is recorded (Metadata, no objects), another is not', async () => {
  const mk = (name: string) => c.raw('POST', '/api/v1/namespaces/default/secrets', { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { password: 'hunter2' } } });
  // a create has no name in its URL: resourceNames rules do not match it (as in Kubernetes)
  const created = await mk('logged');
  assert.equal(created.status, 201);
  assert.equal((await mk('not-logged')).status, 201);
  const a = await c.raw('GET', '/api/v1/namespaces/default/secrets/logged');
  const b = await c.raw('GET', '/api/v1/namespaces/default/secrets/not-logged');
  const evs = await eventsOf(String(a.headers['audit-id']));
  const done = evs.find((e) => e.stage === 'ResponseComplete');
  assert.equal(done.level, 'Metadata');
  assert.deepEqual(done.objectRef, { resource: 'secrets', namespace: 'default', name: 'logged', apiVersion: 'v1' });
  assert.equal(done.requestObject, undefined);
  assert.equal(done.responseObject, undefined);
  await new Promise((r) => setTimeout(r, 200));
  for (const id of [created.headers['audit-id'], b.headers['audit-id']]) assert.equal(events().filter((e) => e.auditID === id).length, 0);
  assert.ok(!readFileSync(logPath, 'utf8').includes('hunter2'), 'no secret data in the log');
});

test('omitStages of the catch-all rule; non-resource URLs; health probes not recorded', async () => {
  const v = await c.raw('GET', '/api');
  const evs = await eventsOf(String(v.headers['audit-id']));
  assert.deepEqual(
    evs.map((e) => e.stage),
    ['RequestReceived', 'ResponseComplete'],
  );
  assert.equal(evs[1].verb, 'get');
  assert.equal(evs[1].objectRef, undefined);
  // namespaces are caught by the last rule: RequestReceived omitted
  const l = await c.raw('GET', '/api/v1/namespaces/default');
  const le = await eventsOf(String(l.headers['audit-id']));
  assert.deepEqual(
    le.map((e) => e.stage),
    ['ResponseComplete'],
  );
  const h = await c.raw('GET', '/readyz');
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(events().filter((e) => e.auditID === h.headers['audit-id']).length, 0);
});

test('the client Audit-ID is kept; the response echoes it', async () => {
  const r = await c.raw('GET', '/api/v1/namespaces/audit-rr/configmaps/rr1', { headers: { 'Audit-ID': 'client-chosen-id-42' } });
  assert.equal(r.status, 200);
  assert.equal(r.headers['audit-id'], 'client-chosen-id-42');
  const evs = await eventsOf('client-chosen-id-42');
  assert.ok(evs.length >= 2);
});

test('failed authentication: one ResponseStarted event with no user; forbidden requests carry the decision', async () => {
  const bad = await c.rawNoAuth('GET', '/api/v1/namespaces/audit-rr/configmaps', { headers: { authorization: 'Bearer not-a-valid-token' } });
  assert.equal(bad.status, 401);
  const [ev] = await eventsOf(String(bad.headers['audit-id']), ['ResponseStarted']);
  assert.equal(ev.stage, 'ResponseStarted');
  assert.deepEqual(ev.user, {});
  assert.deepEqual(ev.responseStatus, { metadata: {}, message: 'Authentication failed, attempted: bearer', code: 401 });
  assert.equal(ev.level, 'RequestResponse');

  const denied = await c.rawNoAuth('GET', '/api/v1/namespaces/audit-rr/configmaps', { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(denied.status, 403);
  const [, dd] = await eventsOf(String(denied.headers['audit-id']));
  assert.equal(dd.user.username, 'bob');
  assert.equal(dd.annotations['authorization.k8s.io/decision'], 'forbid');
  assert.equal(dd.responseStatus.code, 403);
  assert.equal(dd.responseStatus.reason, 'Forbidden');
  assert.equal(dd.responseStatus.status, 'Failure');
  assert.match(dd.responseStatus.message, /User "bob" cannot list resource "configmaps"/);
  assert.equal(dd.responseObject, undefined, 'an error is the responseStatus');
});

test('impersonation: the user and the impersonated user', async () => {
  const r = await c.raw('GET', '/api/v1/namespaces/audit-rr/configmaps', { headers: { 'Impersonate-User': 'carol', 'Impersonate-Group': 'qa' } });
  assert.equal(r.status, 403, 'carol may not list');
  const [, done] = await eventsOf(String(r.headers['audit-id']));
  assert.equal(done.user.username, 'kubernetes-admin');
  assert.equal(done.impersonatedUser.username, 'carol');
  assert.ok(done.impersonatedUser.groups.includes('qa'));
  assert.equal(done.annotations['authorization.k8s.io/decision'], 'forbid');
});

test('a watch: RequestReceived, ResponseStarted, ResponseComplete, no response object', async () => {
  const r = await c.raw('GET', '/api/v1/namespaces/audit-rr/configmaps?watch=true&timeoutSeconds=1');
  assert.equal(r.status, 200);
  const evs = await eventsOf(String(r.headers['audit-id']), ['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
  assert.deepEqual(
    evs.map((e) => e.stage),
    ['RequestReceived', 'ResponseStarted', 'ResponseComplete'],
  );
  assert.equal(evs[1].responseStatus.code, 200);
  assert.equal(evs[2].verb, 'watch');
  assert.equal(evs[2].responseObject, undefined);
});

test('admission annotations: PodSecurity records the policy it enforced', async () => {
  const ns = await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'audit-psa', labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } } } });
  assert.equal(ns.status, 201);
  const pod = await c.raw('POST', '/api/v1/namespaces/audit-psa/pods', { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } });
  assert.equal(pod.status, 201, pod.text);
  const [done] = await eventsOf(String(pod.headers['audit-id']));
  assert.equal(done.stage, 'ResponseComplete');
  assert.equal(done.annotations['pod-security.kubernetes.io/enforce-policy'], 'baseline:latest');
  assert.equal(done.annotations['authorization.k8s.io/decision'], 'allow');
  assert.deepEqual(Object.keys(done.annotations), [...Object.keys(done.annotations)].sort(), 'annotation keys sorted, as Go writes maps');
});

test('the audit flags: --help, bad policy files and options stop the start in kube-apiserver words', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [KEELSON, 'apiserver', '--data-dir', join(dir, 'flags'), '--secure-port', '1', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  const help = run(['--help']);
  for (const f of ['--audit-policy-file string', '--audit-log-path string', '--audit-log-format string', '--audit-log-maxage int', '--audit-log-maxbackup int', '--audit-log-maxsize int', '--audit-log-mode string', '--audit-log-compress'])
    assert.ok(help.stdout.includes(f), `--help lists ${f}`);
  assert.match(help.stdout, /--audit-log-format string\s+.*\(default "json"\)/);
  assert.match(help.stdout, /--audit-log-mode string\s+.*\(default "blocking"\)/);
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n- level: None\n  nonResourceURLs: ["healthz"]\n');
  const r1 = run([`--audit-policy-file=${bad}`, `--audit-log-path=${join(dir, 'x.log')}`]);
  assert.notEqual(r1.status, 0);
  assert.ok(
    r1.stderr.includes(
      `loading audit policy file: [rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse", rules[1].nonResourceURLs[0]: Invalid value: "healthz": non-resource URL rules must begin with a '/' character]: from file ${bad}`,
    ),
    r1.stderr,
  );
  const empty = join(dir, 'empty.yaml');
  writeFileSync(empty, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n');
  assert.match(run([`--audit-policy-file=${empty}`]).stderr, /loading audit policy file: loaded illegal policy with 0 rules: from file /);
  const beta = join(dir, 'beta.yaml');
  writeFileSync(beta, 'apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: Metadata\n');
  assert.match(run([`--audit-policy-file=${beta}`]).stderr, /loading audit policy file: failed decoding: no kind "Policy" is registered for version "audit.k8s.io\/v1beta1"/);
  const r2 = run([`--audit-log-path=${join(dir, 'y.log')}`, '--audit-log-format=xml', '--audit-log-mode=sometimes', '--audit-log-maxage=-1']);
  assert.notEqual(r2.status, 0);
  for (const m of ['invalid audit log mode sometimes, allowed modes are "batch,blocking,blocking-strict"', 'invalid audit log format xml, allowed formats are "legacy,json"', "--audit-log-maxage -1 can't be a negative number"])
    assert.ok(r2.stderr.includes(m), `${m}: ${r2.stderr}`);
});
