// Representations beyond plain JSON: response compression (and, as issue 4 lands, CBOR and the
// rest of the negotiation rules), over raw HTTPS.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { startCluster, NO_CA_PUBLISHER, type Cluster } from './harness.js';

let c: Cluster;
const cms = '/api/v1/namespaces/default/configmaps';

before(async () => {
  c = await startCluster({ args: [NO_CA_PUBLISHER, '--storage-backend=memory'] });
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
    const off = await startCluster({ args: [NO_CA_PUBLISHER, '--storage-backend=memory', '--feature-gates=APIResponseCompression=false'] });
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

describe('CBOR (CBORServingAndStorage)', () => {
  // an independent CBOR library, not the server's codec
  const cborgP = import('cborg');
  const decodeIndependent = async (b: Uint8Array): Promise<any> => {
    const { decode, Token, Type } = await cborgP;
    const tags: any[] = [];
    // cborg hands a tag decoder a control whose decode() yields the tagged content
    tags[55799] = (d: any) => d(); // self-described CBOR
    tags[22] = (d: any) => d(); // Go []byte (base64 when encoded as JSON)
    void Token;
    void Type;
    // Kubernetes writes strings as byte strings and maps with byte-string keys: mapToObj reads them
    return decode(b, { tags, useMaps: true, rejectDuplicateMapKeys: true } as any);
  };
  const mapToObj = (v: any): any => {
    if (v instanceof Map) return Object.fromEntries([...v.entries()].map(([k, x]) => [k instanceof Uint8Array ? Buffer.from(k).toString('utf8') : String(k), mapToObj(x)]));
    if (Array.isArray(v)) return v.map(mapToObj);
    if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
    return v;
  };

  test('off by default: application/cbor is 406 on responses and 415 on requests', async () => {
    const r = await c.raw('GET', `${cms}/big-0`, { headers: { accept: 'application/cbor' } });
    assert.equal(r.status, 406);
    const p = await c.raw('POST', cms, { body: Buffer.from([0xa0]), headers: { 'content-type': 'application/cbor' } });
    assert.equal(p.status, 415);
    const a = await c.raw('PATCH', `${cms}/big-0?fieldManager=t`, { body: Buffer.from([0xa0]), headers: { 'content-type': 'application/apply-patch+cbor' } });
    assert.equal(a.status, 415);
  });

  test('on: objects, lists, errors, watch sequences and apply in CBOR, read back by another CBOR library', async () => {
    const on = await startCluster({ args: [NO_CA_PUBLISHER, '--storage-backend=memory', '--feature-gates=CBORServingAndStorage=true'] });
    try {
      const { encode, Token, Type } = (await cborgP) as any;
      // a request body in CBOR (text strings are accepted; a []byte field holds raw bytes tagged
      // 22 (expected later encoding: base64), as Kubernetes' encoder writes them)
      const body = encode(
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' }, data: { k: new Uint8Array([1, 2, 3]) } },
        { typeEncoders: { Uint8Array: (b: Uint8Array) => [new Token(Type.tag, 22), new Token(Type.bytes, b)] } },
      );
      const cr = await on.raw('POST', '/api/v1/namespaces/default/secrets', { body: Buffer.from(body), headers: { 'content-type': 'application/cbor', accept: 'application/cbor' } });
      assert.equal(cr.status, 201, cr.text);
      assert.equal(cr.headers['content-type'], 'application/cbor');
      assert.deepEqual([...cr.body.subarray(0, 3)], [0xd9, 0xd9, 0xf7], 'self-described CBOR');
      const created = mapToObj(await decodeIndependent(cr.body));
      assert.equal(created.kind, 'Secret');
      const asJSON = (await on.raw('GET', '/api/v1/namespaces/default/secrets/s1')).json();
      assert.equal(asJSON.data.k, Buffer.from([1, 2, 3]).toString('base64'));
      assert.equal(created.metadata.uid, asJSON.metadata.uid);
      // a list
      const l = await on.raw('GET', '/api/v1/namespaces/default/secrets', { headers: { accept: 'application/cbor' } });
      const list = mapToObj(await decodeIndependent(l.body));
      assert.equal(list.kind, 'SecretList');
      assert.deepEqual(list.items.map((i: any) => i.metadata.name), ['s1']);
      // an error
      const nf = await on.raw('GET', '/api/v1/namespaces/default/secrets/nope', { headers: { accept: 'application/cbor' } });
      assert.equal(nf.status, 404);
      const st = mapToObj(await decodeIndependent(nf.body));
      assert.equal(st.reason, 'NotFound');
      // a watch: application/cbor-seq, one data item per event
      const rv = (await on.raw('GET', '/api/v1/namespaces/default/secrets')).json().metadata.resourceVersion;
      const w = on.stream(`/api/v1/namespaces/default/secrets?watch=1&resourceVersion=${rv}`, { accept: 'application/cbor' });
      await w.ready;
      assert.equal(w.headers['content-type'], 'application/cbor-seq');
      await on.raw('POST', '/api/v1/namespaces/default/secrets', { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's2' } } });
      for (let i = 0; i < 100 && Buffer.concat(w.chunks).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      w.close();
      const { decodeFirst } = (await cborgP) as any;
      const seq = Buffer.concat(w.chunks);
      const [first] = decodeFirst(seq, { tags: Object.assign([], { 55799: (d: any) => d() }), useMaps: true });
      const ev = mapToObj(first);
      assert.equal(ev.type, 'ADDED');
      // apply in CBOR
      const ap = await on.raw('PATCH', '/api/v1/namespaces/default/configmaps/applied?fieldManager=cbor-test', {
        body: Buffer.from(encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' }, data: { a: 'b' } })),
        headers: { 'content-type': 'application/apply-patch+cbor' },
      });
      assert.equal(ap.status, 201, ap.text);
      assert.equal(ap.json().data.a, 'b');
    } finally {
      await on.stop();
    }
  });
});
