// Encryption at rest (--encryption-provider-config) and the unsafe delete of objects that cannot
// be read back, end to end: a real keelson on one data directory, restarted with one
// configuration after another; what is on disk is read from the SQLite database directly.
//
// 1. aescbc for secrets and configmaps, secretbox for '*.apps': no plaintext in the database
//    files, Kubernetes' prefixes on the stored values, other kinds stored as they are.
// 2. rotation: a new key first, the old one after it; old objects read, `kubectl replace`
//    rewrites them with the new key.
// 3. identity first: encrypted objects still read, new ones stored plain.
// 4. the keys lost: GET fails with 500 in Kubernetes' words (gate off, then on), lists of the
//    collection fail, other collections and watches go on; the unsafe delete with each of its
//    preconditions (gate, other options, authorization, readable object) and its success on an
//    object with finalizers; an object whose bytes do not decode.
// 5. a configuration kube-apiserver refuses stops the start; automatic reload.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startCluster, type Cluster, type RawResponse } from './harness.js';

const dataDir = mkdtempSync(join(tmpdir(), 'keelson-enc-data-'));
const confDir = mkdtempSync(join(tmpdir(), 'keelson-enc-conf-'));
const tokenFile = join(confDir, 'tokens.csv');
writeFileSync(tokenFile, ['alice-token,alice,alice-uid', 'bob-token,bob,bob-uid', 'carol-token,carol,carol-uid'].join('\n') + '\n');
const DB = join(dataDir, 'db', 'state.db');

const key = (n: number, len = 32) => Buffer.alloc(len, n).toString('base64');
const KEY1 = key(1);
const KEY2 = key(2);
const KEY3 = key(3);
const SBKEY = key(9);
const PASSWORD = 'hunter2-rosebud';
const CM_MARKER = 'cm-plain-marker-42';
const SA_MARKER = 'sa-plain-marker-7';
const IDENTITY_MARKER = 'identity-plain-marker';
const b64 = (s: string) => Buffer.from(s).toString('base64');

function configFile(name: string, body: string): string {
  const p = join(confDir, name);
  writeFileSync(p, `apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n${body}`);
  return p;
}

const APPS = `- resources: ['*.apps']\n  providers:\n  - secretbox: {keys: [{name: sb1, secret: ${SBKEY}}]}\n`;
const V1 = configFile('v1.yaml', `- resources: [secrets, configmaps]\n  providers:\n  - aescbc: {keys: [{name: key1, secret: ${KEY1}}]}\n${APPS}`);
const V2 = configFile('v2.yaml', `- resources: [secrets, configmaps]\n  providers:\n  - aescbc: {keys: [{name: key2, secret: ${KEY2}}, {name: key1, secret: ${KEY1}}]}\n${APPS}`);
const V3 = configFile(
  'v3.yaml',
  `- resources: [secrets]\n  providers:\n  - identity: {}\n  - aescbc: {keys: [{name: key2, secret: ${KEY2}}, {name: key1, secret: ${KEY1}}]}\n- resources: [configmaps]\n  providers:\n  - aescbc: {keys: [{name: key2, secret: ${KEY2}}, {name: key1, secret: ${KEY1}}]}\n${APPS}`,
);
// the keys of secrets lost: only a new aesgcm key is left
const LOST = configFile(
  'lost.yaml',
  `- resources: [secrets]\n  providers:\n  - aesgcm: {keys: [{name: key3, secret: ${KEY3}}]}\n- resources: [configmaps]\n  providers:\n  - aescbc: {keys: [{name: key2, secret: ${KEY2}}, {name: key1, secret: ${KEY1}}]}\n${APPS}`,
);

let c: Cluster | undefined;

async function start(config: string, opts: { gate?: boolean; extra?: string[] } = {}): Promise<Cluster> {
  // (stop: the data directory is the test's own, kept by keepData; the cluster's home goes)
  await c?.stop();
  const args = [`--encryption-provider-config=${config}`, `--token-auth-file=${tokenFile}`, ...(opts.extra ?? [])];
  if (opts.gate) args.push('--feature-gates=AllowUnsafeMalformedObjectDeletion=true');
  c = await startCluster({ dataDir, keepData: true, args });
  return c;
}

after(async () => {
  await c?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(confDir, { recursive: true, force: true });
});

function ok(r: RawResponse, what: string, code = 200): any {
  assert.equal(r.status, code, `${what}: ${r.status} ${r.text.slice(0, 600)}`);
  return r.json();
}

/** the Status of a failed request, with its code, reason (absent when '') and message */
function failed(r: RawResponse, code: number, reason: string, message: string | RegExp, what: string): any {
  const s = JSON.parse(r.text);
  assert.equal(r.status, code, `${what}: ${r.text}`);
  assert.equal(s.kind, 'Status', what);
  assert.equal(s.status, 'Failure', what);
  assert.equal(s.code, code, what);
  assert.equal(s.reason, reason === '' ? undefined : reason, `${what}: reason: ${r.text}`);
  if (typeof message === 'string') assert.equal(s.message, message, what);
  else assert.match(s.message, message, what);
  return s;
}

function kubectl(args: string[], input?: string): string {
  const r = c!.kubectl(args, { input });
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

function asUser(token: string, method: string, path: string, body?: object): Promise<RawResponse> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body) headers['content-type'] = 'application/json';
  return c!.rawNoAuth(method, path, { headers, body: body ? JSON.stringify(body) : undefined });
}

/** the newest stored value of a key (the server stopped: the database is ours) */
function stored(k: string): Buffer {
  const db = new Database(DB, { readonly: true });
  try {
    const row = db.prepare('SELECT value FROM kv WHERE key = ? AND deleted = 0 ORDER BY rev DESC LIMIT 1').get(k) as { value: Buffer } | undefined;
    assert.ok(row, `no stored value for ${k}`);
    return Buffer.from(row.value);
  } finally {
    db.close();
  }
}

/** every stored value (all revisions) of keys with the prefix */
function allStored(prefix: string): { key: string; value: Buffer }[] {
  const db = new Database(DB, { readonly: true });
  try {
    return (db.prepare('SELECT key, value FROM kv WHERE key >= ? AND key < ?').all(prefix, prefix + '\uffff') as { key: string; value: Buffer }[]).map((r) => ({ key: r.key, value: Buffer.from(r.value) }));
  } finally {
    db.close();
  }
}

/** the raw bytes of every database file (the WAL too), where plaintext must not be found */
function databaseBytes(): Buffer {
  const dir = join(dataDir, 'db');
  return Buffer.concat(readdirSync(dir).map((f) => readFileSync(join(dir, f))));
}

const SECRETS = '/api/v1/namespaces/enc/secrets';
const unsafe = '?ignoreStoreReadErrorWithClusterBreakingPotential=true';

test('aescbc and secretbox: stored values carry Kubernetes\' prefixes, no plaintext on disk, reads decrypt', async () => {
  await start(V1, { gate: true });
  kubectl(['create', 'namespace', 'enc']);
  kubectl(['create', 'secret', 'generic', 's1', '-n', 'enc', `--from-literal=password=${PASSWORD}`]);
  ok(await c!.raw('POST', SECRETS, { body: { metadata: { name: 'fin', finalizers: ['example.com/hold'] }, stringData: { k: 'v' } } }), 'create fin', 201);
  kubectl(['create', 'configmap', 'cm1', '-n', 'enc', `--from-literal=marker=${CM_MARKER}`]);
  kubectl(['create', 'deployment', 'web', '-n', 'enc', '--image=nginx']);
  ok(await c!.raw('POST', '/api/v1/namespaces/enc/serviceaccounts', { body: { metadata: { name: 'plain-sa', annotations: { marker: SA_MARKER } } } }), 'create sa', 201);
  const s1 = ok(await c!.raw('GET', `${SECRETS}/s1`), 'get s1');
  assert.equal(s1.data.password, b64(PASSWORD));
  assert.equal(kubectl(['get', 'configmap', 'cm1', '-n', 'enc', '-o', 'jsonpath={.data.marker}']), CM_MARKER);
  assert.equal(kubectl(['get', 'deployment', 'web', '-n', 'enc', '-o', 'jsonpath={.spec.template.spec.containers[0].image}']), 'nginx');
  await c!.stopProcess();

  for (const { key: k, value } of allStored('/registry/secrets/enc/')) assert.equal(value.subarray(0, 23).toString(), 'k8s:enc:aescbc:v1:key1:', k);
  for (const { key: k, value } of allStored('/registry/configmaps/enc/')) assert.equal(value.subarray(0, 23).toString(), 'k8s:enc:aescbc:v1:key1:', k);
  assert.equal(stored('/registry/deployments/enc/web').subarray(0, 25).toString(), 'k8s:enc:secretbox:v1:sb1:');
  const disk = databaseBytes();
  for (const plain of [PASSWORD, b64(PASSWORD), CM_MARKER]) assert.ok(!disk.includes(plain), `plaintext ${plain} found in the database files`);
  // kinds no rule names are stored as they are
  const sa = stored('/registry/serviceaccounts/enc/plain-sa');
  assert.equal(sa[0], '{'.charCodeAt(0));
  assert.ok(sa.includes(SA_MARKER));
});

test('rotation: a new key first, the old one after it; old objects read, a replace rewrites them with the new key', async () => {
  await start(V2, { gate: true });
  assert.equal(ok(await c!.raw('GET', `${SECRETS}/s1`), 'get s1 (key1)').data.password, b64(PASSWORD));
  assert.equal(kubectl(['get', 'configmap', 'cm1', '-n', 'enc', '-o', 'jsonpath={.data.marker}']), CM_MARKER);
  kubectl(['create', 'secret', 'generic', 's2', '-n', 'enc', '--from-literal=a=b']);
  // Kubernetes' way to move every object to the new key: read them all, write them back unchanged
  kubectl(['replace', '-f', '-'], kubectl(['get', 'secrets', '-n', 'enc', '-o', 'json']));
  // an update that changes nothing still rewrites a value of the old key (once), as in Kubernetes
  const CM = '/api/v1/namespaces/enc/configmaps/cm1';
  const cm = ok(await c!.raw('GET', CM), 'get cm1');
  const same = ok(await c!.raw('PUT', `${CM}?fieldManager=kubectl-create`, { body: cm }), 'put cm1 unchanged');
  assert.notEqual(same.metadata.resourceVersion, cm.metadata.resourceVersion, 'a stale value is rewritten');
  const again = ok(await c!.raw('PUT', `${CM}?fieldManager=kubectl-create`, { body: same }), 'put cm1 unchanged again');
  assert.equal(again.metadata.resourceVersion, same.metadata.resourceVersion, 'a current value is not rewritten');
  await c!.stopProcess();
  for (const name of ['s1', 's2', 'fin']) assert.equal(stored(`/registry/secrets/enc/${name}`).subarray(0, 23).toString(), 'k8s:enc:aescbc:v1:key2:', name);
  assert.equal(stored('/registry/configmaps/enc/cm1').subarray(0, 23).toString(), 'k8s:enc:aescbc:v1:key2:');
  // an object nobody wrote again keeps the old key
  assert.equal(stored('/registry/deployments/enc/web').subarray(0, 25).toString(), 'k8s:enc:secretbox:v1:sb1:');
});

test('identity first: encrypted objects still read, new ones are stored plain', async () => {
  await start(V3, { gate: true });
  assert.equal(ok(await c!.raw('GET', `${SECRETS}/s1`), 'get s1 (key2)').data.password, b64(PASSWORD));
  kubectl(['create', 'secret', 'generic', 's3', '-n', 'enc', `--from-literal=m=${IDENTITY_MARKER}`]);
  const list = ok(await c!.raw('GET', SECRETS), 'list');
  assert.deepEqual(list.items.map((i: any) => i.metadata.name), ['fin', 's1', 's2', 's3']);
  await c!.stopProcess();
  const s3 = stored('/registry/secrets/enc/s3');
  assert.equal(s3[0], '{'.charCodeAt(0));
  assert.ok(s3.includes(b64(IDENTITY_MARKER)));
  assert.equal(stored('/registry/secrets/enc/s1').subarray(0, 23).toString(), 'k8s:enc:aescbc:v1:key2:');
});

test('keys lost, gate off: reads fail with InternalError, the collection\'s list fails, the rest goes on; the option is ignored', async () => {
  await start(LOST);
  failed(await c!.raw('GET', `${SECRETS}/s1`), 500, 'InternalError', 'Internal error occurred: no matching prefix found', 'get s1');
  failed(await c!.raw('GET', `${SECRETS}/s3`), 500, 'InternalError', 'Internal error occurred: no matching prefix found', 'get s3 (plain)');
  failed(await c!.raw('GET', SECRETS), 500, 'InternalError', 'Internal error occurred: unable to transform key "/registry/secrets/enc/fin": no matching prefix found', 'list');
  // other collections, other namespaces and new objects are served
  assert.equal(ok(await c!.raw('GET', '/api/v1/namespaces/enc/configmaps'), 'configmaps').items.length >= 1, true);
  kubectl(['create', 'namespace', 'other']);
  kubectl(['create', 'secret', 'generic', 'fresh', '-n', 'other', '--from-literal=a=b']);
  assert.deepEqual(ok(await c!.raw('GET', '/api/v1/namespaces/other/secrets'), 'other list').items.map((i: any) => i.metadata.name), ['fresh']);
  const w = c!.stream(`${SECRETS}?watch=1&resourceVersion=0`);
  await w.ready;
  assert.equal(w.status, 200);
  kubectl(['create', 'secret', 'generic', 's-new', '-n', 'enc', '--from-literal=a=b']);
  await w.until((evs) => evs.some((e) => e.type === 'ADDED' && e.object.metadata.name === 's-new'));
  assert.deepEqual(w.events().map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED s-new']);
  w.close();
  // without the gate the option is dropped: a plain delete, which cannot read the object
  failed(await c!.raw('DELETE', `${SECRETS}/s1${unsafe}`), 500, 'InternalError', 'Internal error occurred: no matching prefix found', 'unsafe delete, gate off');
  failed(await c!.raw('DELETE', `${SECRETS}/s1`), 500, 'InternalError', 'Internal error occurred: no matching prefix found', 'delete');
  // an update cannot read it either
  failed(await c!.raw('PATCH', `${SECRETS}/s1`, { body: '{"metadata":{"labels":{"a":"b"}}}', headers: { 'content-type': 'application/merge-patch+json' } }), 500, 'InternalError', 'Internal error occurred: no matching prefix found', 'patch');
});

test('keys lost, gate on: the corrupt-object errors, and the unsafe delete with each of its preconditions', async () => {
  const policy = join(confDir, 'audit-policy.yaml');
  writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources: [{group: "", resources: [secrets]}]\n- level: None\n');
  const auditLog = join(confDir, 'audit.log');
  await start(LOST, { gate: true, extra: [`--audit-policy-file=${policy}`, `--audit-log-path=${auditLog}`] });
  failed(
    await c!.raw('GET', `${SECRETS}/s1`),
    500,
    '',
    'StorageError: corrupt object, Code: 7, Key: /secrets/enc/s1, ResourceVersion: 0, AdditionalErrorMsg: data from the storage is not transformable revision=0: no matching prefix found',
    'get s1',
  );
  const list = failed(await c!.raw('GET', SECRETS), 500, 'StorageReadError', 'failed to read one or more secrets from the storage', 'list');
  assert.equal(list.details.name, 'list');
  assert.equal(list.details.kind, 'secrets');
  assert.deepEqual(
    list.details.causes.map((x: any) => [x.reason, x.field]),
    ['fin', 's1', 's2', 's3'].map((n) => ['UnexpectedServerResponse', `/registry/secrets/enc/${n}`]),
  );
  assert.equal(list.details.causes[1].message, 'StorageError: corrupt object, Code: 7, Key: /registry/secrets/enc/s1, ResourceVersion: 0, AdditionalErrorMsg: data from the storage is not transformable revision=0: no matching prefix found');
  const kg = c!.kubectl(['get', 'secrets', '-n', 'enc']);
  assert.notEqual(kg.code, 0);
  assert.match(kg.stderr, /failed to read one or more secrets from the storage/);

  // no other delete option may be set
  const invalidOption = (what: string) => `DeleteOptions.meta.k8s.io "" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .${what}`;
  failed(await c!.raw('DELETE', `${SECRETS}/s1${unsafe}&dryRun=All`), 422, 'Invalid', invalidOption('dryRun'), 'dryRun');
  failed(await c!.raw('DELETE', `${SECRETS}/s1${unsafe}&gracePeriodSeconds=0`), 422, 'Invalid', invalidOption('gracePeriodSeconds'), 'gracePeriodSeconds');
  failed(await c!.raw('DELETE', `${SECRETS}/s1${unsafe}&propagationPolicy=Background`), 422, 'Invalid', invalidOption('propagationPolicy'), 'propagationPolicy');
  failed(await c!.raw('DELETE', `${SECRETS}/s1${unsafe}&orphanDependents=false`), 422, 'Invalid', invalidOption('orphanDependents'), 'orphanDependents');
  failed(
    await c!.raw('DELETE', `${SECRETS}/s1`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', ignoreStoreReadErrorWithClusterBreakingPotential: true, preconditions: { uid: 'x' } } }),
    422,
    'Invalid',
    invalidOption('preconditions'),
    'preconditions',
  );

  failed(
    await c!.raw('DELETE', `${SECRETS}${unsafe}`),
    422,
    'Invalid',
    'DeleteOptions.meta.k8s.io "" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option',
    'deletecollection',
  );
  failed(await c!.raw('DELETE', SECRETS), 500, 'StorageReadError', 'failed to read one or more secrets from the storage', 'deletecollection without the option');

  // authorization: delete AND unsafe-delete-ignore-read-errors on the object
  const role = (name: string, verbs: string[]) => ({ metadata: { name }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs }] });
  const binding = (name: string, user: string) => ({ metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: user }] });
  for (const [name, user, verbs] of [
    ['deleter', 'alice', ['get', 'list', 'delete']],
    ['unsafe-deleter', 'bob', ['get', 'list', 'delete', 'unsafe-delete-ignore-read-errors']],
    ['unsafe-only', 'carol', ['unsafe-delete-ignore-read-errors']],
  ] as const) {
    ok(await c!.raw('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/enc/roles', { body: role(name, [...verbs]) }), `role ${name}`, 201);
    ok(await c!.raw('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/enc/rolebindings', { body: binding(name, user) }), `binding ${name}`, 201);
  }
  // the bindings reach the authorizer through its watch
  for (let i = 0; ; i++) {
    const r = await asUser('alice-token', 'DELETE', `${SECRETS}/s1${unsafe}`);
    if (r.status === 403 && JSON.parse(r.text).message.includes('unsafe-delete-ignore-read-errors')) break;
    assert.ok(i < 100, `alice's role did not take effect: ${r.text}`);
    await new Promise((res) => setTimeout(res, 50));
  }
  failed(await asUser('alice-token', 'DELETE', `${SECRETS}/s1${unsafe}`), 403, 'Forbidden', /^secrets "s1" is forbidden: not permitted to do "unsafe-delete-ignore-read-errors", reason: /, 'alice: delete without the unsafe verb');
  failed(await asUser('carol-token', 'DELETE', `${SECRETS}/s1${unsafe}`), 403, 'Forbidden', /^secrets "s1" is forbidden: User "carol" cannot delete resource "secrets" in API group "" in the namespace "enc"/, 'carol: the unsafe verb without delete');

  // an object that reads, or none at all: refused
  const readable = (n: string) => `secrets "${n}" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is exclusively used to delete corrupt object(s), try again by removing this option`;
  failed(await c!.raw('DELETE', `${SECRETS}/s-new${unsafe}`), 422, 'Invalid', readable('s-new'), 'readable object');
  failed(await c!.raw('DELETE', `${SECRETS}/nope${unsafe}`), 422, 'Invalid', readable('nope'), 'missing object');
  ok(await c!.raw('GET', `${SECRETS}/s-new`), 's-new still there');

  // bob may: the object goes, whatever it was
  const w = c!.stream(`/api/v1/namespaces/enc/secrets?watch=1&resourceVersion=0`);
  await w.ready;
  const done = ok(await asUser('bob-token', 'DELETE', `${SECRETS}/s1${unsafe}`), 'bob: unsafe delete');
  assert.deepEqual(done, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 's1', kind: 'Secret' }, code: 200 });
  failed(await c!.raw('GET', `${SECRETS}/s1`), 404, 'NotFound', 'secrets "s1" not found', 'get s1 after');
  // finalizers do not hold it back; the option as a DeleteOptions body works the same
  const fin = await c!.raw('DELETE', `${SECRETS}/fin`, { body: { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', ignoreStoreReadErrorWithClusterBreakingPotential: true } });
  assert.equal(ok(fin, 'unsafe delete of fin').status, 'Success');
  failed(await c!.raw('GET', `${SECRETS}/fin`), 404, 'NotFound', 'secrets "fin" not found', 'get fin after');
  // watchers learn of the removals
  await w.until((evs) => ['s1', 'fin'].every((n) => evs.some((e) => e.type === 'DELETED' && e.object.metadata.name === n)));
  w.close();
  for (const n of ['s2', 's3']) ok(await c!.raw('DELETE', `${SECRETS}/${n}${unsafe}`), `unsafe delete of ${n}`);
  // the audit events of the unsafe deletes say so
  // (whole lines only: the server may be in the middle of appending the last one)
  const log = readFileSync(auditLog, 'utf8');
  const events = log.slice(0, log.lastIndexOf('\n') + 1).split('\n').filter((l) => l).map((l) => JSON.parse(l));
  const s1Done = events.find((e) => e.verb === 'delete' && e.objectRef?.name === 's1' && e.user.username === 'bob' && e.stage === 'ResponseComplete');
  assert.ok(s1Done, 'audit event of bob\'s unsafe delete');
  assert.equal(s1Done.annotations?.['apiserver.k8s.io/unsafe-delete-ignore-read-error'], '');
  assert.equal(s1Done.responseStatus.code, 200);
  // with the corrupt objects gone the collection lists again
  assert.deepEqual(ok(await c!.raw('GET', SECRETS), 'list after').items.map((i: any) => i.metadata.name), ['s-new']);
});

test('an object whose stored bytes do not decode: a corrupt object too', async () => {
  await c!.stopProcess();
  const db = new Database(DB);
  try {
    db.prepare('UPDATE kv SET value = ? WHERE key = ? AND rev = (SELECT MAX(rev) FROM kv WHERE key = ?)').run(Buffer.from('{not json'), '/registry/serviceaccounts/enc/plain-sa', '/registry/serviceaccounts/enc/plain-sa');
  } finally {
    db.close();
  }
  await start(LOST, { gate: true });
  const SA = '/api/v1/namespaces/enc/serviceaccounts';
  failed(
    await c!.raw('GET', `${SA}/plain-sa`),
    500,
    '',
    /^StorageError: corrupt object, Code: 7, Key: \/serviceaccounts\/enc\/plain-sa, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=\d+: couldn't get version\/kind; json parse error: /,
    'get sa',
  );
  failed(await c!.raw('GET', SA), 500, 'StorageReadError', 'failed to read one or more serviceaccounts from the storage', 'list sa');
  ok(await c!.raw('DELETE', `${SA}/plain-sa${unsafe}`), 'unsafe delete of sa');
  failed(await c!.raw('GET', `${SA}/plain-sa`), 404, 'NotFound', 'serviceaccounts "plain-sa" not found', 'get sa after');
});

test('start-up: a configuration kube-apiserver refuses stops keelson with its words', async () => {
  await c!.stopProcess();
  const bad = configFile('bad.yaml', `- resources: [secrets]\n  providers:\n  - aescbc: {keys: [{name: k, secret: c2hvcnQ=}]}\n`);
  await assert.rejects(startCluster({ dataDir, keepData: true, args: [`--encryption-provider-config=${bad}`] }), (e: Error) => {
    assert.match(e.message, /error while parsing file: resources\[0\]\.providers\[0\]\.aescbc\.keys\[0\]\.secret: Invalid value: "REDACTED": secret is not of the expected length, got 5, expected one of \[16 24 32\]/);
    return true;
  });
  await assert.rejects(startCluster({ dataDir, keepData: true, args: ['--encryption-provider-config-automatic-reload'] }), /--encryption-provider-config-automatic-reload must be set with --encryption-provider-config/);
});

test('automatic reload: a changed file takes over without a restart', async () => {
  const live = configFile('live.yaml', `- resources: [secrets]\n  providers:\n  - aescbc: {keys: [{name: key1, secret: ${KEY1}}]}\n`);
  await start(live, { extra: ['--encryption-provider-config-automatic-reload'] });
  kubectl(['create', 'secret', 'generic', 'before', '-n', 'enc', '--from-literal=a=b']);
  assert.match((await c!.raw('GET', '/readyz?verbose')).text, /\[\+\]poststarthook\/start-encryption-provider-config-automatic-reload ok/);
  configFile('live.yaml', `- resources: [secrets]\n  providers:\n  - secretbox: {keys: [{name: sb2, secret: ${KEY2}}]}\n  - aescbc: {keys: [{name: key1, secret: ${KEY1}}]}\n`);
  for (let i = 0; !c!.logs.includes('Reloaded the encryption provider configuration'); i++) {
    assert.ok(i < 100, `no reload:\n${c!.logs}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  kubectl(['create', 'secret', 'generic', 'after', '-n', 'enc', '--from-literal=a=b']);
  assert.equal(kubectl(['get', 'secret', 'before', '-n', 'enc', '-o', 'jsonpath={.data.a}']), b64('b'));
  await c!.stopProcess();
  assert.equal(stored('/registry/secrets/enc/before').subarray(0, 23).toString(), 'k8s:enc:aescbc:v1:key1:');
  assert.equal(stored('/registry/secrets/enc/after').subarray(0, 25).toString(), 'k8s:enc:secretbox:v1:sb2:');
});
