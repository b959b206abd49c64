import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { handleOpenAPI } from '../../src/apiserver/openapi/index.js';
import { docs } from './helpers.js';

let server: http.Server;
let base = '';

before(async () => {
  server = http.createServer((req, res) => {
    if (!handleOpenAPI(req, res, docs())) {
      res.writeHead(418);
      res.end('not openapi');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const a = server.address();
  base = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
});

after(() => {
  server.close();
});

interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

function status(r: Res): Record<string, unknown> {
  assert.equal(r.headers['content-type'], 'application/json');
  return JSON.parse(r.body.toString('utf8')) as Record<string, unknown>;
}

test('GET /openapi/v3 lists the documents; their links are immutable, a stale hash is redirected', async () => {
  const idx = await get('/openapi/v3?timeout=32s', { Accept: 'application/json, */*' });
  assert.equal(idx.status, 200);
  assert.equal(idx.headers['content-type'], 'application/json');
  assert.match(String(idx.headers.etag), /^"[0-9A-F]{128}"$/);
  const paths = JSON.parse(idx.body.toString('utf8')).paths as Record<string, { serverRelativeURL: string }>;
  const url = paths['api/v1'].serverRelativeURL;
  const hash = new URL(url, base).searchParams.get('hash')!;

  const doc = await get(`${url}&timeout=32s`, { Accept: 'application/json' });
  assert.equal(doc.status, 200);
  assert.equal(doc.headers['content-type'], 'application/json');
  assert.match(String(doc.headers['cache-control']), /^public, immutable, max-age=\d{7,}$/);
  assert.ok(doc.headers.expires);
  assert.equal(doc.headers.etag, `"${hash}"`);
  assert.equal(JSON.parse(doc.body.toString('utf8')).openapi, '3.0.0');

  const stale = await get('/openapi/v3/api/v1?hash=0123ABCD', { Accept: 'application/json' });
  assert.equal(stale.status, 301);
  assert.equal(stale.headers.location, url);

  const noHash = await get('/openapi/v3/apis/apps/v1', { Accept: 'application/json' });
  assert.equal(noHash.status, 200);
  assert.match(String(noHash.headers['cache-control']), /no-cache/);

  const notModified = await get('/openapi/v3/api/v1', { Accept: 'application/json', 'If-None-Match': `"${hash}"` });
  assert.equal(notModified.status, 304);
  assert.equal(notModified.body.length, 0);
  assert.equal(notModified.headers.etag, `"${hash}"`);

  const head = await get(url, { Accept: 'application/json' }, 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.body.length, 0);
  assert.equal(Number(head.headers['content-length']), doc.body.length);
});

test('gzip when the client accepts it', async () => {
  const plain = await get('/openapi/v3/api/v1', { Accept: 'application/json' });
  const gz = await get('/openapi/v3/api/v1', { Accept: 'application/json', 'Accept-Encoding': 'gzip' });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.ok(gz.body.length < plain.body.length / 3);
  assert.deepEqual(gunzipSync(gz.body), plain.body);
  assert.match(String(gz.headers.vary), /Accept-Encoding/);
  const small = await get('/openapi/v3', { 'Accept-Encoding': 'gzip;q=0' });
  assert.equal(small.headers['content-encoding'], undefined);
});

test('GET /openapi/v2 answers protobuf or JSON by Accept, never with @ in the Content-Type', async () => {
  const pb = await get('/openapi/v2?timeout=32s', { Accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'Accept-Encoding': 'gzip' });
  assert.equal(pb.status, 200);
  assert.equal(pb.headers['content-type'], 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
  assert.ok(!String(pb.headers['content-type']).includes('@'));
  assert.equal(pb.headers['content-encoding'], 'gzip');
  assert.deepEqual(new Uint8Array(gunzipSync(pb.body)), docs().v2Proto());
  assert.match(String(pb.headers.etag), /^"[0-9A-F]{128}"$/);
  assert.match(String(pb.headers.vary), /Accept/);

  const pb2 = await get('/openapi/v2', { Accept: 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf' });
  assert.equal(pb2.headers['content-type'], 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');

  const json = await get('/openapi/v2', {});
  assert.equal(json.headers['content-type'], 'application/json');
  assert.equal(JSON.parse(json.body.toString('utf8')).swagger, '2.0');
  const q = await get('/openapi/v2', { Accept: 'application/json;q=0.5, application/com.github.proto-openapi.spec.v2@v1.0+protobuf' });
  assert.equal(q.headers['content-type'], 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');

  const again = await get('/openapi/v2', { 'If-None-Match': String(json.headers.etag) });
  assert.equal(again.status, 304);

  const none = await get('/openapi/v2', { Accept: 'text/html' });
  assert.equal(none.status, 406);
  assert.equal(status(none).reason, 'NotAcceptable');
});

test('errors are Kubernetes Status objects; other paths are left alone', async () => {
  const nf = await get('/openapi/v3/apis/nope/v1', { Accept: 'application/json' });
  assert.equal(nf.status, 404);
  assert.deepEqual(status(nf), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'the server could not find the requested resource',
    reason: 'NotFound',
    code: 404,
  });
  const post = await get('/openapi/v2', {}, 'POST');
  assert.equal(post.status, 405);
  assert.equal(status(post).reason, 'MethodNotAllowed');
  const other = await get('/openapi/v4');
  assert.equal(other.status, 418);
  const api = await get('/api/v1');
  assert.equal(api.status, 418);
});
