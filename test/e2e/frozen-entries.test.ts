// The watch cache keeps only its most recently used objects decoded; the others are held as their
// JSON and decoded again when read (storage/cacher.ts, CacheEntry). This server keeps one
// (KEELSON_DECODED_ENTRIES=1), so that every read below meets frozen entries: gets and lists in
// every representation, label and field selectors, a watch's replay and its selector transitions,
// writes of every kind, and a restart, through kubectl and raw HTTP. The answers must be those of
// the objects as written.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster, NO_CA_PUBLISHER, type Cluster, NO_POD_GC } from './harness.js';
import { decodeEnvelope, decodeMessage } from '../../src/codec/protobuf.js';

let c: Cluster;
const dataDir = mkdtempSync(join(tmpdir(), 'keelson-frozen-'));
const NS = 'frozen';
const pods = `/api/v1/namespaces/${NS}/pods`;
const PB = 'application/vnd.kubernetes.protobuf';

before(async () => {
  c = await startCluster({ args: [NO_CA_PUBLISHER, NO_POD_GC], dataDir, keepData: true, env: { KEELSON_DECODED_ENTRIES: '1' } });
  const r = await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  assert.equal(r.status, 201, r.text);
});
after(async () => {
  await c?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const pod = (i: number) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: `p${i}`, labels: { app: i % 2 ? 'odd' : 'even', n: String(i) } },
  spec: { nodeName: `node-${i % 3}`, containers: [{ name: 'c', image: 'busybox', env: [{ name: 'BIG', value: 'x'.repeat(200) }] }] },
});

/** what each pod's create answered, by name: the bytes every later read must give back */
const created = new Map<string, string>();

test('creates, then gets of frozen objects answer the bytes the creates answered (JSON), and the same object in Protobuf and YAML', async () => {
  for (let i = 0; i < 12; i++) {
    const r = await c.raw('POST', pods, { body: pod(i) });
    assert.equal(r.status, 201, r.text);
    created.set(`p${i}`, r.text);
  }
  for (const [name, text] of created) {
    const r = await c.raw('GET', `${pods}/${name}`);
    assert.equal(r.status, 200);
    assert.equal(r.text, text, `GET ${name}`);
    const p = await c.raw('GET', `${pods}/${name}`, { headers: { accept: PB } });
    assert.equal(p.status, 200);
    const env = decodeEnvelope(p.body);
    assert.deepEqual([env.apiVersion, env.kind], ['v1', 'Pod']);
    const { apiVersion: _a, kind: _k, ...rest } = JSON.parse(text);
    assert.deepEqual(decodeMessage('io.k8s.api.core.v1.Pod', env.raw), rest);
  }
  const y = c.kubectl(['get', 'pod', 'p3', '-n', NS, '-o', 'yaml']);
  assert.equal(y.code, 0, y.stderr);
  assert.match(y.stdout, /nodeName: node-0/);
});

test('label and field selectors over frozen objects: kubectl tables, raw JSON, Protobuf and metadata lists', async () => {
  const t = c.kubectl(['get', 'pods', '-n', NS, '-l', 'app=odd', '--field-selector', 'spec.nodeName=node-1', '--no-headers', '-o', 'custom-columns=NAME:.metadata.name']);
  assert.equal(t.code, 0, t.stderr);
  // odd and on node-1: 1, 7
  assert.deepEqual(t.stdout.trim().split('\n'), ['p1', 'p7']);
  const w = c.kubectl(['get', 'pods', '-n', NS, '--field-selector', 'spec.nodeName!=node-0,status.phase=Pending', '-l', 'n in (0,1,2,3,4)']);
  assert.equal(w.code, 0, w.stderr);
  assert.deepEqual(
    w.stdout.trim().split('\n').slice(1).map((l) => l.split(/\s+/)[0]),
    ['p1', 'p2', 'p4'],
  );
  const l = await c.raw('GET', `${pods}?labelSelector=app%3Deven&fieldSelector=spec.nodeName%3Dnode-0`);
  assert.equal(l.status, 200);
  const items = l.json().items;
  assert.deepEqual(items.map((p: any) => p.metadata.name), ['p0', 'p6']);
  // a list's items are the objects as created, less their type meta
  const { apiVersion: _a, kind: _k, ...bare } = JSON.parse(created.get('p6')!);
  assert.deepEqual(items[1], bare);
  const pb = await c.raw('GET', `${pods}?labelSelector=app%3Dodd`, { headers: { accept: PB } });
  assert.equal(pb.status, 200);
  const list = decodeMessage('io.k8s.api.core.v1.PodList', decodeEnvelope(pb.body).raw) as any;
  assert.deepEqual(list.items.map((p: any) => p.metadata.name), ['p1', 'p11', 'p3', 'p5', 'p7', 'p9']);
  const meta = await c.raw('GET', `${pods}?fieldSelector=spec.nodeName%3Dnode-2`, { headers: { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' } });
  assert.equal(meta.status, 200);
  assert.deepEqual(meta.json().items.map((p: any) => [p.metadata.name, p.metadata.labels.n]), [['p11', '11'], ['p2', '2'], ['p5', '5'], ['p8', '8']]);
  const table = await c.raw('GET', `${pods}?labelSelector=n%3D4&includeObject=Object`, { headers: { accept: 'application/json;as=Table;g=meta.k8s.io;v=v1' } });
  assert.equal(table.status, 200);
  assert.deepEqual(table.json().rows.map((r: any) => [r.cells[0], r.object.spec.nodeName]), [['p4', 'node-1']]);
});

test('a watch with selectors replays frozen objects, then sees writes to frozen objects and their selector transitions', async () => {
  const s = c.stream(`${pods}?watch=true&resourceVersion=0&labelSelector=app%3Dodd&fieldSelector=spec.nodeName%3Dnode-2`);
  try {
    await s.until((evs) => evs.length === 2);
    assert.deepEqual(s.events().map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED p11', 'ADDED p5']);
    assert.equal(JSON.stringify(s.events()[1].object), JSON.stringify(JSON.parse(created.get('p5')!)));
    // a strategic merge patch of a frozen object: it stays selected (MODIFIED), then leaves (DELETED)
    const a = c.kubectl(['patch', 'pod', 'p5', '-n', NS, '-p', '{"metadata":{"annotations":{"seen":"yes"}}}']);
    assert.equal(a.code, 0, a.stderr);
    const b = c.kubectl(['label', 'pod', 'p11', '-n', NS, 'app=even', '--overwrite']);
    assert.equal(b.code, 0, b.stderr);
    // a server-side apply and a JSON patch of objects that were not selected: one joins (ADDED)
    const apply = c.kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=t', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p8', namespace: NS, labels: { app: 'odd' } } }) });
    assert.equal(apply.code, 0, apply.stderr);
    const j = await c.raw('PATCH', `${pods}/p2`, { headers: { 'content-type': 'application/json-patch+json' }, body: JSON.stringify([{ op: 'add', path: '/metadata/labels/extra', value: 'x' }]) });
    assert.equal(j.status, 200, j.text);
    const del = c.kubectl(['delete', 'pod', 'p5', '-n', NS, '--grace-period=0', '--force']);
    assert.equal(del.code, 0, del.stderr);
    // (a delete with no grace period sets the deletion timestamp, then removes the object, as kube-apiserver does)
    const evs = await s.until((e) => e.length === 7);
    assert.deepEqual(
      evs.map((e) => `${e.type} ${e.object.metadata.name}`),
      ['ADDED p11', 'ADDED p5', 'MODIFIED p5', 'DELETED p11', 'ADDED p8', 'MODIFIED p5', 'DELETED p5'],
    );
    assert.ok(evs[5].object.metadata.deletionTimestamp);
    assert.equal(evs[2].object.metadata.annotations.seen, 'yes');
    assert.equal(evs[2].object.spec.containers[0].env[0].value, 'x'.repeat(200));
    // the label change's DELETED carries the last state that matched, at the change's resourceVersion
    assert.equal(evs[3].object.metadata.labels.app, 'odd');
    assert.deepEqual(evs[4].object.metadata.labels, { app: 'odd', n: '8' });
    const managers = evs[4].object.metadata.managedFields.map((m: any) => m.manager);
    assert.ok(managers.includes('t'), JSON.stringify(managers));
  } finally {
    s.close();
  }
});

test('an update (PUT) of a frozen object with a stale resourceVersion is a conflict; with the current one it is written', async () => {
  const stale = JSON.parse(created.get('p0')!);
  stale.metadata.labels.app = 'changed';
  const cur = (await c.raw('GET', `${pods}/p0`)).json();
  const r0 = await c.raw('PUT', `${pods}/p0`, { body: { ...stale, metadata: { ...stale.metadata, resourceVersion: String(Number(cur.metadata.resourceVersion) - 1) } } });
  assert.equal(r0.status, 409, r0.text);
  const r1 = await c.raw('PUT', `${pods}/p0`, { body: stale });
  assert.equal(r1.status, 200, r1.text);
  assert.equal(r1.json().metadata.labels.app, 'changed');
});

test('after a restart (the cache loaded from storage, frozen soon after), every object reads back as before', async () => {
  const before = new Map<string, string>();
  const l = (await c.raw('GET', pods)).json();
  for (const p of l.items) before.set(p.metadata.name, JSON.stringify(p));
  await c.stopProcess();
  await c.launch();
  // (the entries of a load are frozen 2 s after it, keeping the stored values they came from)
  await new Promise((r) => setTimeout(r, 3000));
  // a Table list and a metadata list first: they read each stored value without keeping it
  // decoded (CacheEntry.peek) and make its JSON, which the later reads must give back as it was
  const table = await c.raw('GET', pods, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
  assert.equal(table.status, 200);
  assert.deepEqual(
    table.json().rows.map((r: any) => r.object.metadata),
    [...before.values()].map((p) => JSON.parse(p).metadata),
  );
  const metas = await c.raw('GET', pods, { headers: { accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' } });
  assert.deepEqual(
    metas.json().items.map((m: any) => m.metadata),
    [...before.values()].map((p) => JSON.parse(p).metadata),
  );
  const after = (await c.raw('GET', pods)).json();
  assert.deepEqual(
    after.items.map((p: any) => JSON.stringify(p)),
    [...before.values()],
  );
  const t = c.kubectl(['get', 'pods', '-n', NS, '-l', 'app=even', '--field-selector', 'spec.nodeName=node-0', '--no-headers', '-o', 'custom-columns=NAME:.metadata.name']);
  assert.equal(t.code, 0, t.stderr);
  assert.deepEqual(t.stdout.trim().split('\n'), ['p6']);
  const g = await c.raw('GET', `${pods}/p9`);
  assert.equal(g.text, created.get('p9'));
});
