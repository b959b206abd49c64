// The items of a list carry no apiVersion and kind, as kube-apiserver writes its typed lists
// (kubernetes/kubernetes#3030: a GET, a write's answer and a watch event carry both; a list's items
// do not); custom resources' items keep theirs, as Kubernetes' unstructured lists do. A real
// keelson, raw HTTPS: JSON (small, and large enough to be written item by item), YAML, CBOR, and
// kubectl, which adds both back on its side for -o json.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, NO_CA_PUBLISHER, type Cluster } from './harness.js';

let c: Cluster;
const NS = 'items';

before(async () => {
  c = await startCluster({ args: [NO_CA_PUBLISHER, '--storage-backend=memory', '--feature-gates=CBORServingAndStorage=true'] });
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
});

after(async () => {
  await c?.stop();
});

const cm = (name: string, data: Record<string, string> = { k: 'v' }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

test('list items have no apiVersion or kind (small and item-by-item JSON, YAML); a GET and watch events have both', async () => {
  const one = await c.raw('POST', `/api/v1/namespaces/${NS}/configmaps`, { body: cm('a') });
  assert.equal(one.status, 201);
  assert.equal(one.json().kind, 'ConfigMap');
  const small = (await c.raw('GET', `/api/v1/namespaces/${NS}/configmaps`)).json();
  assert.equal(small.kind, 'ConfigMapList');
  assert.deepEqual(Object.keys(small.items[0]), ['metadata', 'data']);
  assert.equal((await c.raw('GET', `/api/v1/namespaces/${NS}/configmaps/a`)).json().kind, 'ConfigMap');
  // over 256 KiB: written item by item from the cached encodings
  const big = 'x'.repeat(20_000);
  for (let i = 0; i < 20; i++) assert.equal((await c.raw('POST', `/api/v1/namespaces/${NS}/configmaps`, { body: cm(`big-${i}`, { big }) })).status, 201);
  const large = await c.raw('GET', `/api/v1/namespaces/${NS}/configmaps`);
  assert.ok(large.body.length > 256 * 1024);
  const l = large.json();
  assert.equal(l.items.length, 21);
  for (const it of l.items) {
    assert.equal(it.kind, undefined);
    assert.equal(it.apiVersion, undefined);
    assert.ok(it.metadata.name);
  }
  const y = await c.raw('GET', `/api/v1/namespaces/${NS}/configmaps?limit=1`, { headers: { accept: 'application/yaml' } });
  assert.match(y.text, /^kind: ConfigMapList\napiVersion: v1\n/);
  assert.match(y.text, /\nitems:\n {2}- metadata:\n/);
  const w = c.stream(`/api/v1/namespaces/${NS}/configmaps?watch=1&resourceVersion=0&fieldSelector=metadata.name%3Da`);
  const evs = await w.until((e) => e.length >= 1);
  assert.equal(evs[0].object.kind, 'ConfigMap');
  assert.equal(evs[0].object.apiVersion, 'v1');
});

test('CBOR lists too; custom resources keep apiVersion and kind on their items; kubectl -o json adds them back', async () => {
  // (an independent CBOR library, not the server's codec; Kubernetes writes strings as byte strings)
  const { decode } = await import('cborg');
  const tags: any[] = [];
  tags[55799] = (d: any) => d(); // self-described CBOR
  const plain = (v: any): any => {
    if (v instanceof Map) return Object.fromEntries([...v.entries()].map(([k, x]) => [k instanceof Uint8Array ? Buffer.from(k).toString('utf8') : String(k), plain(x)]));
    if (Array.isArray(v)) return v.map(plain);
    if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
    return v;
  };
  const r = await c.raw('GET', `/api/v1/namespaces/${NS}/configmaps?limit=2`, { headers: { accept: 'application/cbor' } });
  assert.equal(r.status, 200);
  const list = plain(decode(r.body, { tags, useMaps: true } as any));
  assert.equal(list.kind, 'ConfigMapList');
  assert.equal(list.items[0].kind, undefined);
  assert.ok(list.items[0].metadata.name);

  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      scope: 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
  assert.equal((await c.raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd })).status, 201);
  const wait = c.kubectl(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/widgets.example.com']);
  assert.equal(wait.code, 0, wait.stderr);
  const made = await c.raw('POST', `/apis/example.com/v1/namespaces/${NS}/widgets`, { body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, size: 3 } });
  assert.equal(made.status, 201, made.text);
  const widgets = (await c.raw('GET', `/apis/example.com/v1/namespaces/${NS}/widgets`)).json();
  assert.equal(widgets.items[0].kind, 'Widget');
  assert.equal(widgets.items[0].apiVersion, 'example.com/v1');

  const k = c.kubectl(['get', 'configmaps', '-n', NS, '-o', 'json']);
  assert.equal(k.code, 0, k.stderr);
  assert.ok(JSON.parse(k.stdout).items.every((i: any) => i.kind === 'ConfigMap' && i.apiVersion === 'v1'));
});
