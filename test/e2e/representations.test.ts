// Representations beyond plain JSON: response compression (and, as issue 4 lands, CBOR and the
// rest of the negotiation rules), over raw HTTPS.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { startCluster, type Cluster } from './harness.js';

let c: Cluster;
const cms = '/api/v1/namespaces/default/configmaps';

before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory'] });
  const big = 'x'.repeat(20_000);
  for (let i = 0; i < 10; i++) {
    const r = await c.raw('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}` }, data: { v: big } } });
    assert.equal(r.status, 201);
  }
});
after(async () => {
  await c?.stop();
});

describe('compression', () => {
  test('a response over 128 KiB is gzipped for a client that accepts gzip', async () => {
    const r = await c.raw('GET', cms, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-encoding'], 'gzip');
    const list = JSON.parse(zlib.gunzipSync(r.body).toString('utf8'));
    assert.equal(list.kind, 'ConfigMapList');
    assert.equal(list.items.length, 10);
  });
  test('not without Accept-Encoding, and not for small responses', async () => {
    const r = await c.raw('GET', cms);
    assert.equal(r.headers['content-encoding'], undefined);
    assert.equal(r.json().items.length, 10);
    const one = await c.raw('GET', `${cms}/big-0`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(one.headers['content-encoding'], undefined);
    assert.equal(one.json().metadata.name, 'big-0');
  });
  test('off with the APIResponseCompression gate', async () => {
    const off = await startCluster({ args: ['--storage-backend=memory', '--feature-gates=APIResponseCompression=false'] });
    try {
      const big = 'y'.repeat(70_000);
      for (let i = 0; i < 3; i++) {
        await off.raw('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `b-${i}` }, data: { v: big } } });
      }
      const r = await off.raw('GET', cms, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(r.headers['content-encoding'], undefined);
      assert.equal(r.json().items.length, 3);
    } finally {
      await off.stop();
    }
  });
});
