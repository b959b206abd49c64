// The in-process metadata source (src/apiserver/localwatch.ts) over a real store and watch cache:
// PartialObjectMetadata lists and watches with the cache's resourceVersion rules, a namespace's
// scope, 410 for a version out of the history, and an informer on it that lists, follows and
// watches again. (The garbage collector of `keelson server` uses it: test/e2e/garbage-collector.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryBackend } from '../../src/storage/memory.js';
import { BUILTIN_KINDS } from '../../src/schema/kinds.js';
import { ResourceStore } from '../../src/apiserver/registry/store.js';
import { strategyFor } from '../../src/apiserver/registry/strategies.js';
import { LocalMetadataSource } from '../../src/apiserver/localwatch.js';
import { Informer } from '../../src/client/informer.js';
import { isNotFound, isResourceExpired } from '../../src/client/rest.js';

const kind = BUILTIN_KINDS.find((k) => k.group === '' && k.resource === 'configmaps')!;
const gvr = { group: '', version: 'v1', resource: 'configmaps' };

async function setup(historyWindowMs?: number) {
  const store = new ResourceStore(kind, strategyFor(kind), new MemoryBackend(), {}, { historyWindowMs });
  await store.start();
  const source = new LocalMetadataSource((g, r) => (g === '' && r === 'configmaps' ? store : undefined), gvr);
  const cm = (ns: string, name: string, extra: Record<string, unknown> = {}) => store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, ...extra }, data: { a: '1' } }, { dryRun: false });
  return { store, source, cm };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// (the source's timers do not hold a process open, as in a server whose listener does; a test
// that waits on nothing else holds it open with this)
function keepAlive(): () => void {
  const t = setInterval(() => undefined, 1000);
  return () => clearInterval(t);
}

test('a list and a watch of PartialObjectMetadata from the cache, in order, from the list resourceVersion; a namespace scopes both', async () => {
  const { store, source, cm } = await setup();
  try {
    const managedFields = [{ manager: 'test', operation: 'Update', apiVersion: 'v1', time: '2026-12-06T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': {} } }];
    const a = await cm('one', 'a', { labels: { x: 'y' }, managedFields });
    assert.equal(store.get('one', 'a')!.obj.metadata.managedFields.length, 1);
    await cm('two', 'b');
    const list = await source.listAll({});
    assert.equal(list.kind, 'PartialObjectMetadataList');
    assert.equal(list.apiVersion, 'meta.k8s.io/v1');
    assert.deepEqual(list.items.map((o: any) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`), ['PartialObjectMetadata one/a', 'PartialObjectMetadata two/b']);
    assert.equal(list.items[0].metadata.uid, a.metadata.uid);
    assert.deepEqual(list.items[0].metadata.labels, { x: 'y' });
    assert.equal((list.items[0] as any).data, undefined, 'metadata only');
    assert.equal(list.items[0].metadata.managedFields, undefined, 'managedFields trimmed, as kube-controller-manager trims them');
    const rv = list.metadata.resourceVersion!;
    assert.equal((await source.namespace('one').listAll({})).items.length, 1);

    const w = await source.watch({ resourceVersion: rv });
    const wOne = await source.namespace('one').watch({ resourceVersion: rv });
    const c = await cm('two', 'c', { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'a', uid: a.metadata.uid }] });
    await store.guaranteedUpdate('one', 'a', (o) => ({ ...o, metadata: { ...o.metadata, labels: { x: 'z' } } }), { dryRun: false });
    await store.delete('two', 'b', { dryRun: false });
    const seen: string[] = [];
    for await (const ev of w) {
      seen.push(`${ev.type} ${ev.object.metadata!.name} ${ev.object.metadata!.resourceVersion}`);
      if (ev.type === 'ADDED') assert.equal(ev.object.metadata!.ownerReferences![0].uid, a.metadata.uid);
      if (seen.length === 3) break;
    }
    const rvs = seen.map((s) => Number(s.split(' ')[2]));
    assert.deepEqual(seen.map((s) => s.split(' ').slice(0, 2).join(' ')), ['ADDED c', 'MODIFIED a', 'DELETED b']);
    assert.ok(rvs[0] === Number(c.metadata.resourceVersion) && rvs[0] < rvs[1] && rvs[1] < rvs[2], seen.join(', '));
    assert.equal(w.endedBy, 'stopped', 'leaving the loop stops the watch');
    const one: string[] = [];
    for await (const ev of wOne) {
      one.push(`${ev.type} ${ev.object.metadata!.name}`);
      break;
    }
    assert.deepEqual(one, ['MODIFIED a']);
    // a watch from a resourceVersion replays what came after it
    const again = await source.watch({ resourceVersion: String(rvs[0]) });
    const replay: string[] = [];
    for await (const ev of again) {
      replay.push(`${ev.type} ${ev.object.metadata!.name}`);
      if (replay.length === 2) break;
    }
    assert.deepEqual(replay, ['MODIFIED a', 'DELETED b']);
  } finally {
    store.stop();
  }
});

test('a resourceVersion out of the history is 410 Expired; a watch ends at its timeout; an unserved resource is 404; a stop ends the iteration', async () => {
  const { store, source, cm } = await setup(50);
  const release = keepAlive();
  try {
    const first = await cm('one', 'a');
    await sleep(120);
    await cm('one', 'b');
    await assert.rejects(source.watch({ resourceVersion: String(Number(first.metadata.resourceVersion) - 1) }), (e) => isResourceExpired(e));
    const timed = await source.watch({ resourceVersion: '', timeoutSeconds: 1 });
    const t0 = Date.now();
    for await (const _ of timed) assert.fail('no event');
    assert.equal(timed.endedBy, 'server');
    assert.ok(Date.now() - t0 >= 900);
    const gone = new LocalMetadataSource(() => undefined, { group: 'example.com', version: 'v1', resource: 'widgets' });
    await assert.rejects(gone.listAll({}), (e) => isNotFound(e));
    const abort = new AbortController();
    const w = await source.watch({ signal: abort.signal });
    setTimeout(() => abort.abort(), 20);
    for await (const _ of w) assert.fail('no event');
    assert.equal(w.endedBy, 'stopped');
  } finally {
    release();
    store.stop();
  }
});

test('an informer on the source syncs, follows adds, updates and deletes, and watches again after a timeout', async () => {
  const { store, source, cm } = await setup(50);
  const inf = new Informer<any>(source, { metadataOnly: true, minWatchTimeoutMs: 1000 });
  const release = keepAlive();
  const events: string[] = [];
  inf.addEventHandler({
    add: (o) => events.push(`add ${o.metadata.name}`),
    update: (_o, n) => events.push(`update ${n.metadata.name} ${n.metadata.labels?.v ?? ''}`),
    delete: (o: any) => events.push(`delete ${(o.obj ?? o).metadata.name}`),
  });
  try {
    await cm('one', 'a');
    inf.run();
    assert.ok(await inf.waitForSync({ timeoutMs: 5000 }));
    await cm('one', 'b');
    await store.guaranteedUpdate('one', 'a', (o) => ({ ...o, metadata: { ...o.metadata, labels: { v: '2' } } }), { dryRun: false });
    await store.delete('one', 'b', { dryRun: false });
    const until = async (what: string) => {
      for (let i = 0; i < 200 && !events.includes(what); i++) await sleep(10);
      assert.ok(events.includes(what), `${what} in ${events.join(', ')}`);
    };
    await until('delete b');
    assert.deepEqual(events, ['add a', 'add b', 'update a 2', 'delete b']);
    assert.deepEqual(inf.list().map((o) => o.metadata.name), ['a']);
    // quiet past the history window and the watch's timeout: the informer watches again from its
    // last resourceVersion and sees the next write
    await sleep(2200);
    await cm('one', 'c');
    await until('add c');
    assert.deepEqual(inf.list().map((o) => o.metadata.name).sort(), ['a', 'c']);
    // (watching again from its last resourceVersion, the latest one, is no 410: nothing was missed)
    assert.ok(inf.stats.watches >= 2, JSON.stringify(inf.stats));
    assert.equal(inf.stats.lists, 1);
  } finally {
    await inf.stop();
    release();
    store.stop();
  }
});
