// A metadata-only list (PartialObjectMetadataList, what client-go's metadata informers and the
// garbage collector read) is written from the bytes the watch cache's entries keep: in JSON, each
// item's metadata is its span of the entry's JSON; in Protobuf, the first field of the entry's
// Protobuf encoding when it has one (ObjectMeta is field 1 of every kind's message), else the
// object's metadata encoded. The server keeps one object decoded (KEELSON_DECODED_ENTRIES=1), so
// the entries are frozen. The answers must be those of the general path (`?pretty=true` for JSON)
// and of the objects as a GET answers them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, until, NO_CA_PUBLISHER, type Cluster } from './harness.js';
import { decodeEnvelope, decodeMessage } from '../../src/codec/protobuf.js';

let c: Cluster;
const NS = 'metalists';
const pods = `/api/v1/namespaces/${NS}/pods`;
const POML = (v: string) => `application/json;as=PartialObjectMetadataList;v=${v};g=meta.k8s.io`;
const POML_PB = 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io';

before(async () => {
  // (no scheduler: it would write the pods' PodScheduled condition, no node being there, while the
  // tests compare lists with the gets before them)
  c = await startCluster({ args: [NO_CA_PUBLISHER, '--disable-scheduler'], env: { KEELSON_DECODED_ENTRIES: '1' } });
  const r = await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  assert.equal(r.status, 201, r.text);
  // (a pod is refused until the service account controller has made the namespace's default
  // service account, as in Kubernetes: under load that can take a moment)
  await until('the default service account', async () => (await c.raw('GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`)).status === 200);
  for (let i = 0; i < 6; i++) {
    const p = await c.raw('POST', pods, {
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `m${i}`, labels: { n: String(i) }, annotations: { note: `a "quoted" {brace} value ${i}`, path: 'C:\\dir\\ "x" \\', uni: 'é ✓ \u2028 ]}' }, finalizers: i === 2 ? ['example.com/keep'] : undefined },
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
      },
    });
    assert.equal(p.status, 201, p.text);
  }
});
after(async () => {
  // m2's finalizer would hold the namespace's deletion: take it off (the cluster is stopped anyway)
  await c?.raw('PATCH', `${pods}/m2`, { headers: { 'Content-Type': 'application/merge-patch+json' }, body: '{"metadata":{"finalizers":null}}' });
  await c?.stop();
});

/**
 * two lists of the same objects taken one after the other are equal, but for the list's
 * resourceVersion (and the continue token that holds it): any write elsewhere in the cluster
 * between them (a lease renewed) moves it on, never back
 */
function assertSameList(first: any, second: any, what: string): void {
  const { resourceVersion: rv1, continue: c1, ...m1 } = first.metadata;
  const { resourceVersion: rv2, continue: c2, ...m2 } = second.metadata;
  assert.deepEqual({ ...first, metadata: m1 }, { ...second, metadata: m2 }, what);
  assert.ok(Number(rv2) >= Number(rv1), `${what}: the second list's resourceVersion ${rv2}, the first's ${rv1}`);
  assert.equal(c1 === undefined, c2 === undefined, `${what}: continue ${c1} and ${c2}`);
  if (rv1 === rv2) assert.equal(c1, c2, what);
}

async function metadataOfGets(): Promise<any[]> {
  const out = [];
  for (let i = 0; i < 6; i++) out.push((await c.raw('GET', `${pods}/m${i}`)).json().metadata);
  return out;
}

test('a JSON metadata list is the general path\'s, item by item the metadata of each object (v1 and v1beta1, pages, selectors)', async () => {
  const gets = await metadataOfGets();
  for (const v of ['v1', 'v1beta1']) {
    for (const q of ['', '?limit=4', '?labelSelector=n%20in%20(1%2C2)']) {
      // twice: the answers must not change once the entries have been read
      for (let round = 0; round < 2; round++) {
        const fast = await c.raw('GET', pods + q, { headers: { accept: POML(v) } });
        assert.equal(fast.status, 200, fast.text);
        assert.ok(!fast.text.includes('\n'));
        const general = await c.raw('GET', pods + q + (q ? '&' : '?') + 'pretty=true', { headers: { accept: POML(v) } });
        assertSameList(fast.json(), general.json(), `${v} ${q}`);
        const list = fast.json();
        assert.equal(list.kind, 'PartialObjectMetadataList');
        assert.equal(list.apiVersion, `meta.k8s.io/${v}`);
        for (const item of list.items) {
          assert.deepEqual(Object.keys(item), ['kind', 'apiVersion', 'metadata']);
          assert.equal(item.apiVersion, `meta.k8s.io/${v}`);
          assert.deepEqual(item.metadata, gets[Number(item.metadata.name.slice(1))]);
        }
      }
    }
  }
  const empty = await c.raw('GET', `${pods}?labelSelector=n%3D99`, { headers: { accept: POML('v1') } });
  assert.deepEqual(empty.json().items, []);
});

test('a Protobuf metadata list holds each object\'s metadata, whether the entries keep their Protobuf encoding or not', async () => {
  const gets = await metadataOfGets();
  const decode = (body: Buffer) => {
    const env = decodeEnvelope(body);
    assert.deepEqual([env.apiVersion, env.kind], ['meta.k8s.io/v1', 'PartialObjectMetadataList']);
    return decodeMessage('io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList', env.raw) as any;
  };
  const first = await c.raw('GET', pods, { headers: { accept: POML_PB } });
  assert.equal(first.status, 200);
  // a Protobuf list makes each entry's Protobuf encoding, which the metadata list then reads
  assert.equal((await c.raw('GET', pods, { headers: { accept: 'application/vnd.kubernetes.protobuf' } })).status, 200);
  const second = await c.raw('GET', pods, { headers: { accept: POML_PB } });
  assert.equal(second.status, 200);
  for (const r of [first, second]) {
    const list = decode(r.body);
    assert.deepEqual(
      list.items.map((x: any) => x.metadata),
      gets,
    );
  }
  // the items are the same bytes either way (the list's resourceVersion may have moved on)
  const itemsOf = (b: Buffer) => decode(b).items.map((x: any) => JSON.stringify(x));
  assert.deepEqual(itemsOf(first.body), itemsOf(second.body));
  // a page
  const page = decode((await c.raw('GET', `${pods}?limit=2`, { headers: { accept: POML_PB } })).body);
  assert.deepEqual(page.items.map((x: any) => x.metadata.name), ['m0', 'm1']);
  assert.ok(page.metadata.continue);
});
