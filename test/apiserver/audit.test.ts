// The audit policy (decoding, validation in Kubernetes' words, rule matching), the legacy
// one-line format, the log backend's truncation and batching, and lumberjack-style rotation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parsePolicy, PolicyRuleEvaluator, type AuditAttributes } from '../../src/apiserver/audit/policy.js';
import { defaultAuditLogOptions, legacyLine, LogBackend, RotatingFile, validateAuditLogOptions } from '../../src/apiserver/audit/log.js';
import { microTime, type AuditEvent } from '../../src/apiserver/audit/event.js';

const HEAD = 'apiVersion: audit.k8s.io/v1\nkind: Policy\n';

function attrs(a: Partial<AuditAttributes>): AuditAttributes {
  return { user: { name: 'alice', groups: ['devs', 'system:authenticated'] }, verb: 'get', isResourceRequest: true, path: '/api/v1/namespaces/ns/pods/p', apiGroup: '', resource: 'pods', subresource: '', namespace: 'ns', name: 'p', ...a };
}

test('policy: the first matching rule decides; no match is None', () => {
  const { policy } = parsePolicy(
    HEAD +
      `omitStages: [RequestReceived]
omitManagedFields: true
rules:
- level: None
  users: [system:kube-proxy]
  verbs: [watch]
- level: RequestResponse
  userGroups: [admins]
  omitManagedFields: false
- level: Request
  resources:
  - group: ""
    resources: ["pods/log", "*/status"]
- level: Metadata
  resources:
  - group: apps
    resources: ["deployments/*"]
  - group: ""
    resources: [configmaps]
    resourceNames: [controller-leader]
- level: Request
  namespaces: [kube-system, ""]
  omitStages: [ResponseStarted]
- level: Metadata
  nonResourceURLs: ["/healthz*", /version]
`,
  );
  const e = new PolicyRuleEvaluator(policy);
  const level = (a: Partial<AuditAttributes>) => e.evaluate(attrs(a)).level;
  assert.equal(level({ user: { name: 'system:kube-proxy', groups: [] }, verb: 'watch' }), 'None');
  assert.equal(level({ user: { name: 'system:kube-proxy', groups: [] }, verb: 'list' }), 'None', 'nothing else matches');
  assert.equal(level({ user: { name: 'root', groups: ['admins'] } }), 'RequestResponse');
  assert.equal(level({ subresource: 'log' }), 'Request');
  assert.equal(level({ resource: 'nodes', subresource: 'status', namespace: '' }), 'Request', '*/status');
  assert.equal(level({ resource: 'pods' }), 'None', 'pods without a subresource match nothing');
  assert.equal(level({ apiGroup: 'apps', resource: 'deployments', subresource: 'scale' }), 'Metadata', 'deployments/*');
  assert.equal(level({ apiGroup: 'apps', resource: 'deployments' }), 'Metadata', 'deployments/* matches the resource itself too (as Kubernetes matches it)');
  assert.equal(level({ apiGroup: 'apps', resource: 'replicasets' }), 'None');
  assert.equal(level({ resource: 'configmaps', name: 'controller-leader' }), 'Metadata');
  assert.equal(level({ resource: 'configmaps', name: 'other' }), 'None');
  assert.equal(level({ resource: 'configmaps', name: 'other', namespace: 'kube-system' }), 'Request');
  assert.equal(level({ resource: 'namespaces', name: 'x', namespace: '' }), 'Request', 'cluster-scoped is the namespace ""');
  assert.equal(level({ isResourceRequest: false, path: '/healthz/etcd', verb: 'get', resource: '', namespace: '', name: '' }), 'Metadata');
  assert.equal(level({ isResourceRequest: false, path: '/version', verb: 'get', resource: '', namespace: '', name: '' }), 'Metadata');
  assert.equal(level({ isResourceRequest: false, path: '/metrics', verb: 'get', resource: '', namespace: '', name: '' }), 'None');
  // omitStages: the policy's joined to the rule's; omitManagedFields: the rule's overrides the policy's
  const ks = e.evaluate(attrs({ resource: 'configmaps', namespace: 'kube-system', name: '' }));
  assert.deepEqual([...ks.omitStages].sort(), ['RequestReceived', 'ResponseStarted']);
  assert.equal(ks.omitManagedFields, true);
  assert.equal(e.evaluate(attrs({ user: { name: 'root', groups: ['admins'] } })).omitManagedFields, false);
  const none = e.evaluate(attrs({ resource: 'pods' }));
  assert.deepEqual([...none.omitStages], ['RequestReceived']);
  // a request without a user (failed authentication) matches no user rule
  assert.equal(e.evaluate({ ...attrs({}), user: undefined }).level, 'None');
});

test('policy: validation and decoding errors in Kubernetes words', () => {
  const err = (body: string) => {
    try {
      parsePolicy(HEAD + body);
    } catch (e) {
      return (e as Error).message;
    }
    return 'no error';
  };
  assert.equal(err('rules:\n- level: Loud\n'), 'rules[0].level: Unsupported value: "Loud": supported values: "None", "Metadata", "Request", "RequestResponse"');
  assert.equal(err('rules:\n- users: [a]\n'), 'rules[0].level: Required value');
  assert.equal(err('rules:\n- level: None\n  nonResourceURLs: ["/a*b"]\n'), `rules[0].nonResourceURLs[0]: Invalid value: "/a*b": non-resource URL wildcards '*' must be the final character of the rule`);
  assert.equal(err('rules:\n- level: None\n  nonResourceURLs: ["/x"]\n  namespaces: [a]\n'), 'rules[0].nonResourceURLs: Invalid value: ["/x"]: rules cannot apply to both regular resources and non-resource URLs');
  assert.equal(err('rules:\n- level: None\n  resources: [{group: "", resourceNames: [x]}]\n'), 'rules[0].resources.resourceNames: Invalid value: ["x"]: using resourceNames requires at least one resource');
  assert.match(err('rules:\n- level: None\n  resources: [{group: "rbac.authorization.k8s.io/v1", resources: [roles]}]\n'), /^rules\[0\]\.resources\.group: Invalid value: "rbac.authorization.k8s.io\/v1": a lowercase RFC 1123 subdomain/);
  assert.equal(err('omitStages: [Sometime]\nrules:\n- level: None\n'), 'omitStages[0]: Invalid value: "Sometime": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic');
  assert.equal(err('rules: []\n'), 'loaded illegal policy with 0 rules');
  assert.equal(err('rules: 5\n'), 'failed decoding: json: cannot unmarshal number into Go struct field Policy.rules of type []v1.PolicyRule');
  assert.match(parsePolicy(HEAD + 'rules:\n- level: None\n  user: [x]\n').warnings[0]!, /unknown field "rules\[0\]\.user"/);
  assert.throws(() => parsePolicy('apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: None\n'), /no kind "Policy" is registered for version "audit.k8s.io\/v1beta1"/);
});

const EV: AuditEvent = {
  kind: 'Event',
  apiVersion: 'audit.k8s.io/v1',
  level: 'Metadata',
  auditID: 'id-1',
  stage: 'ResponseComplete',
  requestURI: '/api/v1/namespaces/default/pods?limit=500',
  verb: 'list',
  user: { username: 'admin', groups: ['system:masters', 'system:authenticated'] },
  sourceIPs: ['10.0.0.1', '127.0.0.1'],
  userAgent: 'kubectl/v1.33.0 "quoted"',
  objectRef: { resource: 'pods', namespace: 'default', apiVersion: 'v1' },
  responseStatus: { metadata: {}, code: 200 },
  requestReceivedTimestamp: '2025-01-02T03:04:05.123456Z',
  stageTimestamp: '2025-01-02T03:04:05.223456Z',
};

test('legacy format: one line of Go-quoted fields', () => {
  const prev = process.env.TZ;
  const line = legacyLine(EV, Date.UTC(2025, 0, 2, 3, 4, 5, 120));
  assert.match(line, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.12(Z|[+-]\d{2}:\d{2}) AUDIT: /);
  assert.equal(
    line.slice(line.indexOf(' AUDIT: ')),
    ' AUDIT: id="id-1" stage="ResponseComplete" ip="10.0.0.1" method="list" user="admin" groups="\\"system:masters\\",\\"system:authenticated\\"" as="<self>" asgroups="<lookup>" user-agent="kubectl/v1.33.0 \\"quoted\\"" namespace="default" uri="/api/v1/namespaces/default/pods?limit=500" response="200"\n',
  );
  const anon = legacyLine({ ...EV, user: {}, impersonatedUser: { username: 'bob', groups: ['qa'] }, objectRef: undefined, responseStatus: undefined, sourceIPs: undefined }, 0);
  assert.match(anon, / ip="<unknown>" method="list" user="<none>" groups="<none>" as="bob" asgroups="\\"qa\\"" .* namespace="<none>" .* response="<deferred>"\n$/);
  assert.equal(process.env.TZ, prev);
});

test('MicroTime: six fractional digits in UTC', () => {
  assert.equal(microTime(Date.UTC(2025, 0, 2, 3, 4, 5, 7) + 0.008), '2025-01-02T03:04:05.007008Z');
  assert.equal(microTime(Date.UTC(2025, 11, 31, 23, 59, 59, 0)), '2025-12-31T23:59:59.000000Z');
});

test('log options are checked only with a path, in kube-apiserver words', () => {
  const o = { ...defaultAuditLogOptions(), format: 'xml' as any, mode: 'batch' as const, maxSize: -1 };
  assert.deepEqual(validateAuditLogOptions(o), []);
  o.path = '/tmp/x.log';
  o.batch = { ...o.batch, bufferSize: 0 };
  assert.deepEqual(validateAuditLogOptions(o), [
    'invalid audit batch log buffer size 0, must be a positive number',
    'invalid audit log format xml, allowed formats are "legacy,json"',
    "--audit-log-maxsize -1 can't be a negative number",
  ]);
});

test('truncation drops the objects first, then the event; batch mode writes after the request', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'keelson-audit-unit-'));
  try {
    const errors: string[] = [];
    const path = join(dir, 'a.log');
    const b = new LogBackend({ ...defaultAuditLogOptions(), path, mode: 'batch', truncate: { enabled: true, maxEventSize: 2000, maxBatchSize: 10_000 } }, (e) => errors.push(String(e)));
    assert.equal(b.process({ ...EV, requestObject: { blob: 'x'.repeat(5000) } }, 0), true);
    assert.equal(b.process({ ...EV, auditID: 'huge', userAgent: 'u'.repeat(5000) }, 0), false);
    assert.equal(readFileSync(path, 'utf8'), '', 'batch: nothing written yet');
    await new Promise((r) => setImmediate(r));
    b.shutdown();
    const lines = readFileSync(path, 'utf8').trim().split('\n');
    assert.equal(lines.length, 1);
    const ev = JSON.parse(lines[0]!);
    assert.equal(ev.requestObject, undefined);
    assert.equal(ev.annotations['audit.k8s.io/truncated'], 'true');
    assert.equal(errors.length, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('rotation: past --audit-log-maxsize the file becomes a time-stamped backup; --audit-log-maxbackup and --audit-log-compress', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'keelson-audit-rotate-'));
  try {
    const path = join(dir, 'logs', 'audit.log');
    const f = new RotatingFile(path, { maxSize: 1, maxBackups: 2, maxAge: 0, compress: true });
    const chunk = (c: string) => c.repeat(600 * 1024) + '\n';
    for (const c of ['a', 'b', 'c', 'd']) {
      f.write(chunk(c));
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.throws(() => f.write('z'.repeat(2 * 1024 * 1024)), /^Error: write length 2097152 exceeds maximum file size 1048576$/);
    f.close();
    const names = readdirSync(join(dir, 'logs')).sort();
    assert.equal(names.length, 3, names.join(' '));
    assert.equal(names[names.length - 1], 'audit.log');
    for (const n of names.slice(0, -1)) assert.match(n, /^audit-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}\.log\.gz$/);
    // the newest backups are kept: b and c; the current file holds d
    assert.equal(gunzipSync(readFileSync(join(dir, 'logs', names[0]!))).toString()[0], 'b');
    assert.equal(gunzipSync(readFileSync(join(dir, 'logs', names[1]!))).toString()[0], 'c');
    assert.equal(readFileSync(path, 'utf8')[0], 'd');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
