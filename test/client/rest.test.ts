// The REST client: typed errors and discovery against a real `keelson server`; retries,
// timeouts and rate limiting against a bare HTTP fixture that answers what a test needs
// (429/503 with Retry-After, a hang) — a transport fixture, not a stand-in for the API server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startCluster, NO_CA_PUBLISHER, type Cluster } from '../e2e/harness.js';
import { TokenBucket } from '../../src/client/flowcontrol.js';
import {
  APIError,
  defaultUserAgent,
  goDuration,
  isAlreadyExists,
  isConflict,
  isInvalid,
  isNotFound,
  parseRetryAfter,
  RESTClient,
  TransportError,
} from '../../src/client/rest.js';
import { DiscoveryClient, gvr, resource, resourcePath, parseGroupVersion } from '../../src/client/resources.js';

let cluster: Cluster;
let rest: RESTClient;

before(async () => {
  cluster = await startCluster({ args: [NO_CA_PUBLISHER] });
  const t = cluster.credentials;
  rest = new RESTClient({ server: cluster.url, ca: t.ca, cert: t.cert, key: t.key, qps: Infinity });
});

after(async () => {
  rest?.close();
  await cluster?.stop();
});

test('helpers: paths, group versions, durations, Retry-After, user agent', () => {
  assert.equal(resourcePath(gvr('v1', 'pods'), 'ns', 'p', 'status'), '/api/v1/namespaces/ns/pods/p/status');
  assert.equal(resourcePath(gvr('apps/v1', 'deployments')), '/apis/apps/v1/deployments');
  assert.deepEqual(parseGroupVersion('apps/v1'), { group: 'apps', version: 'v1' });
  assert.throws(() => parseGroupVersion('a/b/c'), /unexpected GroupVersion string: a\/b\/c/);
  assert.equal(goDuration(32_000), '32s');
  assert.equal(goDuration(60_000), '1m0s');
  assert.equal(goDuration(3_723_500), '1h2m3.5s');
  assert.equal(goDuration(250), '250ms');
  assert.equal(parseRetryAfter('3'), 3);
  assert.equal(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT'), undefined);
  assert.match(defaultUserAgent(), /^[^/]+\/v0\.0\.0 \([a-z0-9]+\/[a-z0-9]+\) kubernetes\/\$Format$/);
});

test('errors carry the server Status: NotFound, AlreadyExists, Conflict, Invalid', async () => {
  const cms = resource(rest, gvr('v1', 'configmaps'), 'default');
  const e404 = await cms.get('does-not-exist').catch((e) => e);
  assert.ok(e404 instanceof APIError);
  assert.equal(e404.code, 404);
  assert.equal(e404.reason, 'NotFound');
  assert.equal(e404.message, 'configmaps "does-not-exist" not found');
  assert.equal(e404.status.details?.kind, 'configmaps');
  assert.ok(isNotFound(e404));

  const c = await cms.create({ metadata: { name: 'rest-errors' }, data: { a: '1' } });
  assert.ok(isAlreadyExists(await cms.create({ metadata: { name: 'rest-errors' } }).catch((e) => e)));

  const updated = await cms.update({ ...c, data: { a: '2' } });
  assert.notEqual(updated.metadata.resourceVersion, c.metadata.resourceVersion);
  const stale = await cms.update({ ...c, data: { a: '3' } }).catch((e) => e);
  assert.ok(isConflict(stale), String(stale));
  assert.equal(stale.code, 409);

  const bad = await cms.create({ metadata: { name: 'Not_Valid' } }).catch((e) => e);
  assert.ok(isInvalid(bad));
  assert.equal(bad.code, 422);
  assert.ok(bad.details?.causes?.some((x: { field?: string }) => x.field === 'metadata.name'));

  const st = await cms.delete('rest-errors');
  assert.equal((st as { kind?: string }).kind, 'Status');
});

test('list paging collects every page; deleteCollection empties the collection', async () => {
  const ns = 'rest-paging';
  await resource(rest, gvr('v1', 'namespaces')).create({ metadata: { name: ns } });
  const cms = resource(rest, gvr('v1', 'configmaps'), ns);
  for (let i = 0; i < 7; i++) await cms.create({ metadata: { name: `cm-${i}`, labels: { i: String(i % 2) } } });
  const page = await cms.list({ limit: 3 });
  assert.equal(page.items.length, 3);
  assert.ok(page.metadata.continue);
  const all = await cms.listAll({ pageSize: 3 });
  assert.equal(all.items.length, 7);
  assert.equal(all.metadata.continue, undefined);
  const meta = await cms.listMetadata({ labelSelector: 'i=1' });
  assert.equal(meta.kind, 'PartialObjectMetadataList');
  assert.equal(meta.items.length, 3);
  await cms.deleteCollection({ propagationPolicy: 'Background' }, { labelSelector: 'i=0' });
  assert.equal((await cms.list()).items.length, 3);
});

test('discovery: preferred namespaced resources with their verbs, no subresources', async () => {
  const d = new DiscoveryClient(rest);
  const groups = await d.serverGroups();
  assert.equal(groups[0]!.name, '');
  assert.ok(groups.some((g) => g.name === 'apps'));
  const { lists, error } = await d.serverPreferredNamespacedResources();
  assert.equal(error, undefined);
  const find = (gv: string, name: string) => lists.find((l) => l.groupVersion === gv)?.resources.find((r) => r.name === name);
  assert.ok(find('v1', 'configmaps')?.verbs.includes('deletecollection'));
  assert.ok(find('apps/v1', 'deployments'));
  assert.equal(find('v1', 'namespaces'), undefined, 'cluster-scoped');
  assert.ok(lists.every((l) => l.resources.every((r) => r.namespaced && !r.name.includes('/'))));
});

// ── transport behaviour, against a bare HTTP fixture ─────────────────────────

async function fixture(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const srv = http.createServer(handler);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((r) => { srv.closeAllConnections(); srv.close(() => r()); }),
  };
}

const status = (code: number, reason: string, message: string) => JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code, reason, message });

test('Retry-After on 429 and 5xx is honoured; without it there is no retry', async () => {
  const seen: string[] = [];
  let n = 0;
  const f = await fixture((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers['user-agent']}`);
    n++;
    if (req.url!.startsWith('/retry') && n === 1) {
      res.writeHead(429, { 'Retry-After': '0', 'Content-Type': 'application/json' }).end(status(429, 'TooManyRequests', 'slow down'));
    } else if (req.url!.startsWith('/retry') && n === 2) {
      res.writeHead(503, { 'Retry-After': '0' }).end('unavailable');
    } else if (req.url!.startsWith('/noretry')) {
      res.writeHead(503, { 'Content-Type': 'application/json' }).end(status(503, 'ServiceUnavailable', 'down'));
    } else {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}');
    }
  });
  try {
    const c = new RESTClient({ server: f.url, qps: Infinity, userAgent: 'test-agent/v1' });
    assert.deepEqual(await c.json({ method: 'POST', path: '/retry', body: { a: 1 } }), { ok: true });
    assert.equal(n, 3);
    assert.ok(seen.every((s) => s.endsWith('test-agent/v1')));
    n = 0;
    const e = await c.json({ method: 'GET', path: '/noretry' }).catch((x) => x);
    assert.ok(e instanceof APIError);
    assert.equal(e.code, 503);
    assert.equal(e.reason, 'ServiceUnavailable');
    assert.equal(n, 1);
    c.close();
  } finally {
    await f.close();
  }
});

test('a non-Status error body: client-go\'s generic message, naming the resource and name the path asked for', async () => {
  const f = await fixture((_req, res) => void res.writeHead(400).end('Client sent an HTTP request to an HTTPS server.'));
  try {
    const c = new RESTClient({ server: f.url, qps: Infinity });
    const msg = async (path: string) => ((await c.json({ method: 'GET', path }).catch((x) => x)) as APIError).message;
    assert.equal(await msg('/api/v1/namespaces/ns/configmaps/c1'), 'the server rejected our request for an unknown reason (get configmaps c1)');
    assert.equal(await msg('/apis/apps/v1/namespaces/ns/deployments'), 'the server rejected our request for an unknown reason (get deployments.apps)');
    assert.equal(await msg('/api/v1/namespaces/ns'), 'the server rejected our request for an unknown reason (get namespaces ns)');
    assert.equal(await msg('/api/v1/nodes/n1/status'), 'the server rejected our request for an unknown reason (get nodes n1)');
    assert.equal(await msg('/api'), 'the server rejected our request for an unknown reason');
    c.close();
  } finally {
    await f.close();
  }
});

test('maxRetries bounds Retry-After retries; a non-Status error body gets a generic Status', async () => {
  let n = 0;
  const f = await fixture((_req, res) => {
    n++;
    res.writeHead(500, { 'Retry-After': '0' }).end('boom');
  });
  try {
    const c = new RESTClient({ server: f.url, qps: Infinity, maxRetries: 2 });
    const e = await c.json({ method: 'GET', path: '/x' }).catch((x) => x);
    assert.equal(n, 3);
    assert.ok(e instanceof APIError);
    assert.equal(e.code, 500);
    assert.equal(e.reason, 'InternalError');
    assert.match(e.message, /an error on the server \("boom"\) has prevented the request from succeeding/);
    c.close();
  } finally {
    await f.close();
  }
});

test('request timeout: sent as ?timeout= and enforced on the client', async () => {
  const urls: string[] = [];
  const f = await fixture((req) => {
    urls.push(req.url!);
    // never answers
  });
  try {
    const c = new RESTClient({ server: f.url, qps: Infinity, timeoutMs: 150 });
    const e = await c.json({ method: 'GET', path: '/api/v1/pods' }).catch((x) => x);
    assert.ok(e instanceof TransportError, String(e));
    assert.equal(e.code, 'ETIMEDOUT');
    assert.deepEqual(urls, ['/api/v1/pods?timeout=150ms']);
    c.close();
  } finally {
    await f.close();
  }
});

test('client-side rate limit: requests wait for tokens; waiting can be aborted', async () => {
  let n = 0;
  const f = await fixture((_req, res) => {
    n++;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
  });
  try {
    let t = 0;
    const bucket = new TokenBucket(0.001, 2, { now: () => t });
    const c = new RESTClient({ server: f.url, rateLimiter: bucket });
    await c.json({ method: 'GET', path: '/a' });
    await c.json({ method: 'GET', path: '/b' });
    assert.equal(n, 2);
    const ac = new AbortController();
    const third = c.json({ method: 'GET', path: '/c', signal: ac.signal });
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(n, 2, 'the third request waits for a token');
    ac.abort(new Error('gave up'));
    await assert.rejects(third, /gave up/);
    assert.equal(n, 2);
    t += 1000_000; // a token later
    await c.json({ method: 'GET', path: '/d' });
    assert.equal(n, 3);
    c.close();
  } finally {
    await f.close();
  }
});
