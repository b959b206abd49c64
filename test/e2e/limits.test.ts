// The request limits driven past their bounds on a real server: --max-mutating-requests-inflight
// and --max-requests-inflight (429 with Retry-After, watches exempt, system:masters never
// refused), --request-timeout and the `timeout` parameter (504 Timeout while a slow admission
// webhook holds the request, and nothing written afterwards), --min-request-timeout (watches end
// after a randomized time), bodies over 3 MiB (413 with Content-Length and chunked), objects
// larger than etcd accepts (500 with etcd's message), and the flags' checks. The server stays
// healthy throughout.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectStatus, KEELSON, ROOT, startCluster, type Cluster, type RawResponse } from './harness.js';
import { respond, startWebhookServer, type WebhookServer } from '../admission/webhookserver.js';

let c: Cluster;
let hooks: WebhookServer;
let dir: string;
/** when the slow webhook saw a request, per configmap name */
const arrived = new Map<string, () => void>();

const TOKEN = 'alice-token-0123456789';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-limits-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, `${TOKEN},alice,uid-alice,"devs"\n`);
  hooks = await startWebhookServer();
  const sleeper = (ms: number) => async (r: any) => {
    arrived.get(r.request?.object?.metadata?.name)?.();
    await new Promise((x) => setTimeout(x, ms));
    return respond(r, { allowed: true });
  };
  hooks.handle('/slow', sleeper(2000));
  hooks.handle('/sleep', sleeper(4500));
  c = await startCluster({
    args: [
      '--max-requests-inflight=1',
      '--max-mutating-requests-inflight=1',
      '--request-timeout=3s',
      '--min-request-timeout=1',
      `--token-auth-file=${tokens}`,
      '--authorization-mode=AlwaysAllow',
      // no controller writes compete for the one mutating slot
      '--controllers=-namespace-controller,-serviceaccount-controller,-root-ca-certificate-publisher-controller',
      '--leader-elect=false',
    ],
  });
  for (const ns of ['limits-slow', 'limits-timeout']) {
    const r = await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
    assert.equal(r.status, 201, r.text);
  }
  for (const [name, path, ns] of [
    ['limits-slow', '/slow', 'limits-slow'],
    ['limits-sleep', '/sleep', 'limits-timeout'],
  ]) {
    const r = await c.raw('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      body: {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name },
        webhooks: [
          {
            name: `${name}.e2e.example.com`,
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            timeoutSeconds: 10,
            failurePolicy: 'Fail',
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
            clientConfig: { url: hooks.url(path), caBundle: hooks.caBundle },
          },
        ],
      },
    });
    assert.equal(r.status, 201, r.text);
  }
});

after(async () => {
  await hooks?.close();
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** a request as alice (a static token user, not in system:masters) */
function asAlice(method: string, path: string, body?: object, headers: Record<string, string> = {}): Promise<RawResponse> {
  return c.rawNoAuth(method, path, {
    headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
}

function cm(name: string, data: Record<string, string> = { k: 'v' }): object {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data };
}

/** resolves when the slow webhook has received the review of this configmap */
function webhookSaw(name: string): Promise<void> {
  return new Promise((r) => arrived.set(name, r));
}

async function healthy(): Promise<void> {
  const r = await c.raw('GET', '/readyz');
  assert.equal(r.status, 200, r.text);
}

test('a mutating request over --max-mutating-requests-inflight gets 429 with Retry-After; reads, system:masters and later requests go through', async () => {
  const seen = webhookSaw('held');
  const held = asAlice('POST', '/api/v1/namespaces/limits-slow/configmaps', cm('held'));
  await seen; // the one mutating slot is taken until the webhook answers

  const refused = await asAlice('POST', '/api/v1/namespaces/default/configmaps', cm('refused'));
  assert.equal(refused.status, 429, refused.text);
  assert.equal(refused.headers['retry-after'], '1');
  assert.equal(refused.text, 'Too many requests, please try again later.\n');
  assert.match(String(refused.headers['content-type']), /^text\/plain/);
  assert.ok(refused.headers['audit-id'], 'every response carries Audit-Id');
  // a delete and a patch are mutating too
  assert.equal((await asAlice('DELETE', '/api/v1/namespaces/default/configmaps/nothing')).status, 429);

  // reads have their own pool; the cluster admin (system:masters) is never refused
  assert.equal((await asAlice('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
  const admin = await c.raw('POST', '/api/v1/namespaces/default/configmaps', { body: cm('by-admin') });
  assert.equal(admin.status, 201, admin.text);
  await healthy();

  const first = await held;
  assert.equal(first.status, 201, first.text);
  // the slot is free again
  const again = await asAlice('POST', '/api/v1/namespaces/default/configmaps', cm('refused'));
  assert.equal(again.status, 201, again.text);
});

test('watches take no in-flight slot (--max-requests-inflight=1)', async () => {
  const agent = new https.Agent({ rejectUnauthorized: false });
  const watches: import('node:http').ClientRequest[] = [];
  const statuses = await Promise.all(
    [0, 1, 2].map(
      () =>
        new Promise<number>((resolve, reject) => {
          const req = https.request(
            { host: '127.0.0.1', port: c.port, path: '/api/v1/namespaces/default/configmaps?watch=true', headers: { authorization: `Bearer ${TOKEN}` }, agent },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          req.on('error', reject);
          req.end();
          watches.push(req);
        }),
    ),
  );
  try {
    assert.deepEqual(statuses, [200, 200, 200]);
    const r = await asAlice('GET', '/api/v1/namespaces/default/configmaps');
    assert.equal(r.status, 200, r.text);
  } finally {
    for (const w of watches) w.destroy();
    agent.destroy();
  }
});

test('--request-timeout and the timeout parameter: 504 Timeout while a webhook is slow, and the write never lands', async () => {
  const started = Date.now();
  const [byFlag, byParam, tooLong] = await Promise.all([
    c.raw('POST', '/api/v1/namespaces/limits-timeout/configmaps', { body: cm('by-flag') }),
    c.raw('POST', '/api/v1/namespaces/limits-timeout/configmaps?timeout=1s', { body: cm('by-param') }),
    // a timeout longer than --request-timeout is capped by it
    c.raw('POST', '/api/v1/namespaces/limits-timeout/configmaps?timeout=1h', { body: cm('capped') }),
  ]);
  for (const r of [byFlag, byParam, tooLong]) {
    assert.equal(r.status, 504, r.text);
    assert.deepEqual(r.json(), { metadata: {}, status: 'Failure', message: 'Timeout: request did not complete within the allotted timeout', reason: 'Timeout', details: {}, code: 504 });
    assert.ok(r.headers['audit-id']);
  }
  assert.ok(Date.now() - started < 4400, 'answered at the deadline, not when the webhook returned');
  await healthy();
  // the webhook answers after 4.5 s: the handlers go on, but nothing is stored
  await new Promise((r) => setTimeout(r, 4500 - (Date.now() - started) + 700));
  for (const name of ['by-flag', 'by-param', 'capped']) {
    const g = await c.raw('GET', `/api/v1/namespaces/limits-timeout/configmaps/${name}`);
    assert.equal(g.status, 404, `${name} must not be written after its deadline: ${g.text}`);
  }
  // an invalid timeout is a 400 in Kubernetes' words
  const bad = await c.raw('GET', '/api/v1/namespaces?timeout=soon');
  const s = expectStatus(bad, 400, 'BadRequest', 'bad timeout');
  assert.equal(s.message, 'invalid timeout specified in the request URL - time: invalid duration "soon"');
  // a fast request with a short timeout is fine
  assert.equal((await c.raw('GET', '/api/v1/namespaces?timeout=2s')).status, 200);
});

test('--min-request-timeout: a watch without timeoutSeconds ends after a randomized time in [min, 2*min)', async () => {
  const took = await Promise.all(
    [0, 1].map(async () => {
      const t0 = Date.now();
      const r = await c.raw('GET', '/api/v1/namespaces/default/configmaps?watch=true');
      assert.equal(r.status, 200);
      return Date.now() - t0;
    }),
  );
  for (const ms of took) assert.ok(ms >= 950 && ms < 4000, `watch lasted ${ms} ms (at most 2 s, with slack for a busy machine)`);
});

test('bodies over 3 MiB: 413 RequestEntityTooLarge, with Content-Length and chunked', async () => {
  const big = Buffer.alloc(4 * 1024 * 1024, 'x');
  const withLength = await c.raw('POST', '/api/v1/namespaces/default/configmaps', { body: big, headers: { 'content-type': 'application/json' } });
  const s = expectStatus(withLength, 413, 'RequestEntityTooLarge', 'content-length');
  assert.equal(s.message, 'Request entity too large: limit is 3145728');
  // chunked: no length announced, refused once the limit is passed
  const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const { ca, cert, key } = c.credentials;
    const req = https.request(
      { host: '127.0.0.1', port: c.port, method: 'POST', path: '/api/v1/namespaces/default/configmaps', ca, cert, key, servername: 'localhost', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    for (let i = 0; i < 64; i++) req.write(big.subarray(i * 65536, (i + 1) * 65536));
    req.end();
  });
  assert.equal(chunked.status, 413, chunked.body);
  assert.equal(JSON.parse(chunked.body).message, 'Request entity too large: limit is 3145728');
  // a patch too
  const p = await c.raw('PATCH', '/api/v1/namespaces/default/configmaps/by-admin', { body: big, headers: { 'content-type': 'application/merge-patch+json' } });
  expectStatus(p, 413, 'RequestEntityTooLarge', 'patch');
  await healthy();
});

test('objects larger than etcd accepts fail as kube-apiserver fails them; a 2 MiB ConfigMap is invalid', async () => {
  const revision = (name: string, size: number) => ({ apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name }, revision: 1, data: { blob: 'x'.repeat(size) } });
  const over = await c.raw('POST', '/apis/apps/v1/namespaces/default/controllerrevisions', { body: revision('over-etcd', 1_700_000) });
  assert.equal(over.status, 500, over.text);
  assert.deepEqual(over.json(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'etcdserver: request is too large', code: 500 });
  const overClient = await c.raw('POST', '/apis/apps/v1/namespaces/default/controllerrevisions', { body: revision('over-grpc', 2_500_000) });
  assert.equal(overClient.status, 500, overClient.text);
  assert.match(overClient.json().message, /^rpc error: code = ResourceExhausted desc = trying to send message larger than max \(\d+ vs\. 2097152\)$/);
  // nothing was stored; a write of the limit's size works
  assert.equal((await c.raw('GET', '/apis/apps/v1/namespaces/default/controllerrevisions/over-etcd')).status, 404);
  const fits = await c.raw('POST', '/apis/apps/v1/namespaces/default/controllerrevisions', { body: revision('fits', 1_400_000) });
  assert.equal(fits.status, 201, fits.text.slice(0, 300));
  // an update past the limit fails the same way and keeps the stored object
  const tpl = (args: string[]) => ({ apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'grows' }, template: { spec: { containers: [{ name: 'c', image: 'busybox', args }] } } });
  const small = await c.raw('POST', '/api/v1/namespaces/default/podtemplates', { body: tpl(['small']) });
  assert.equal(small.status, 201, small.text);
  const upd = await c.raw('PUT', '/api/v1/namespaces/default/podtemplates/grows', { body: { ...tpl(['y'.repeat(1_700_000)]), metadata: small.json().metadata } });
  assert.equal(upd.status, 500, upd.text.slice(0, 300));
  assert.equal(upd.json().message, 'etcdserver: request is too large');
  const kept = await c.raw('GET', '/api/v1/namespaces/default/podtemplates/grows');
  assert.deepEqual(kept.json().template.spec.containers[0].args, ['small']);
  // ConfigMaps are limited to 1 MiB of data by validation before storage is reached
  const bigCM = await c.raw('POST', '/api/v1/namespaces/default/configmaps', { body: cm('two-mib', { blob: 'z'.repeat(2 * 1024 * 1024) }) });
  const s = expectStatus(bigCM, 422, 'Invalid', '2 MiB ConfigMap');
  assert.match(s.message, /Too long/);
  await healthy();
});

test('the limit flags: kube-apiserver names, int seconds for --min-request-timeout, negative values refused', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [KEELSON, 'apiserver', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  const help = run(['--help']);
  for (const f of ['--max-requests-inflight int', '--max-mutating-requests-inflight int', '--request-timeout duration', '--min-request-timeout int']) assert.ok(help.stdout.includes(f), `--help lists ${f}`);
  assert.match(help.stdout, /--max-requests-inflight int\s+.*\(default 400\)/);
  assert.match(help.stdout, /--max-mutating-requests-inflight int\s+.*\(default 200\)/);
  assert.match(help.stdout, /--request-timeout duration\s+.*\(default 1m0s\)/);
  assert.match(help.stdout, /--min-request-timeout int\s+.*\(default 1800\)/);
  const d = mkdtempSync(join(tmpdir(), 'keelson-limits-flags-'));
  try {
    const neg = run(['--data-dir', d, '--max-requests-inflight=-1', '--max-mutating-requests-inflight=-2', '--request-timeout=-1s', '--min-request-timeout=-5']);
    assert.notEqual(neg.status, 0);
    for (const m of [
      '--max-requests-inflight can not be negative value',
      '--max-mutating-requests-inflight can not be negative value',
      '--request-timeout can not be negative value',
      '--min-request-timeout can not be negative value',
    ])
      assert.ok(neg.stderr.includes(m), `${m}: ${neg.stderr}`);
    const dur = run(['--data-dir', d, '--min-request-timeout=30m']);
    assert.notEqual(dur.status, 0);
    assert.match(dur.stderr, /min-request-timeout/);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});
