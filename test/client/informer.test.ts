// Watch streams and informers against a real `keelson server` whose history is compacted every
// second (--etcd-compaction-interval=1s), so that 410 Gone can be provoked: a watch from a
// compacted resourceVersion fails with Expired, and an informer lists again and carries on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, NO_CA_PUBLISHER, type Cluster } from '../e2e/harness.js';
import { RESTClient, isResourceExpired, APIError } from '../../src/client/rest.js';
import { gvr, resource, type KubeObject } from '../../src/client/resources.js';
import { DeletedFinalStateUnknown, Informer } from '../../src/client/informer.js';

let cluster: Cluster;
let rest: RESTClient;

before(async () => {
  cluster = await startCluster({ args: [NO_CA_PUBLISHER, '--etcd-compaction-interval=1s'] });
  const t = cluster.credentials;
  rest = new RESTClient({ server: cluster.url, ca: t.ca, cert: t.cert, key: t.key, qps: Infinity });
  for (const ns of ['inf-a', 'inf-b', 'inf-c', 'inf-t', 'inf-w']) await resource(rest, gvr('v1', 'namespaces')).create({ metadata: { name: ns } });
});

after(async () => {
  rest?.close();
  await cluster?.stop();
});

async function until(what: string, pred: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Writes in another namespace until stopped, so that history moves on and gets compacted. */
function churn(): { stop(): Promise<void> } {
  const cms = resource(rest, gvr('v1', 'configmaps'), 'inf-w');
  let on = true;
  const done = (async () => {
    await cms.create({ metadata: { name: 'churn' }, data: { n: '0' } }).catch(() => undefined);
    for (let i = 1; on; i++) {
      const cur = await cms.get('churn');
      await cms.update({ ...cur, data: { n: String(i) } }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    stop: async () => {
      on = false;
      await done;
    },
  };
}

test('watch: events in order, clean end at timeoutSeconds, ERROR 410 for a compacted resourceVersion', async () => {
  const cms = resource(rest, gvr('v1', 'configmaps'), 'inf-a');
  const first = await cms.create({ metadata: { name: 'w1' } });
  const w = await cms.watch({ resourceVersion: first.metadata.resourceVersion, timeoutSeconds: 2 });
  const got: string[] = [];
  const reading = (async () => {
    for await (const ev of w) got.push(`${ev.type} ${ev.object.metadata.name}`);
  })();
  const second = await cms.create({ metadata: { name: 'w2' } });
  await cms.update({ ...second, data: { x: 'y' } });
  await cms.delete('w2');
  await reading;
  assert.deepEqual(got, ['ADDED w2', 'MODIFIED w2', 'DELETED w2']);
  assert.equal(w.endedBy, 'server');

  // let history move past `first` and be compacted
  const c = churn();
  try {
    await until('a 410 for an old resourceVersion', async () => {
      try {
        const old = await cms.watch({ resourceVersion: first.metadata.resourceVersion, timeoutSeconds: 1 });
        for await (const _ of old) {
          /* events until the error */
        }
        return false;
      } catch (e) {
        if (isResourceExpired(e)) {
          assert.ok(e instanceof APIError);
          assert.ok(e.code === 410);
          return true;
        }
        throw e;
      }
    });
  } finally {
    await c.stop();
  }
});

test('informer: initial list, then add/update/delete events from the watch', async () => {
  const cms = resource(rest, gvr('v1', 'configmaps'), 'inf-b');
  for (const n of ['a', 'b', 'c']) await cms.create({ metadata: { name: n } });
  const inf = new Informer(cms, { pageSize: 2 });
  const log: string[] = [];
  inf.addEventHandler({
    add: (o, initial) => log.push(`add ${o.metadata.name} ${initial}`),
    update: (o, n) => log.push(`update ${o.metadata.name} ${o.metadata.resourceVersion !== n.metadata.resourceVersion}`),
    delete: (o) => log.push(`delete ${o instanceof DeletedFinalStateUnknown ? `tombstone ${o.key}` : o.metadata.name}`),
  });
  assert.equal(inf.hasSynced(), false);
  inf.run();
  try {
    assert.equal(await inf.waitForSync({ timeoutMs: 10_000 }), true);
    assert.equal(inf.hasSynced(), true);
    assert.deepEqual(inf.keys().sort(), ['inf-b/a', 'inf-b/b', 'inf-b/c']);
    assert.deepEqual(log.sort(), ['add a true', 'add b true', 'add c true']);
    log.length = 0;
    // a list's items carry no kind of their own: the informer gives them the list's (an event
    // recorder names its involvedObject by it)
    assert.deepEqual([inf.get('inf-b/a')?.kind, inf.get('inf-b/a')?.apiVersion], ['ConfigMap', 'v1']);

    const d = await cms.create({ metadata: { name: 'd' } });
    await until('add d', () => log.includes('add d false'));
    await cms.update({ ...d, data: { k: 'v' } });
    await until('update d', () => log.includes('update d true'));
    assert.deepEqual(inf.get('inf-b/d')?.data, { k: 'v' });
    await cms.delete('a');
    await until('delete a', () => log.includes('delete a'));
    assert.equal(inf.get('inf-b/a'), undefined);
    assert.equal(inf.getByName('inf-b', 'd')?.metadata.name, 'd');

    // a handler added late gets the cache as adds
    const late: string[] = [];
    inf.addEventHandler({ add: (o) => late.push(o.metadata.name!) });
    assert.deepEqual(late.sort(), ['b', 'c', 'd']);
  } finally {
    await inf.stop();
  }
});

test('informer: trimManagedFields drops the managed fields of the listed and the watched objects, as kube-controller-manager\'s informers', async () => {
  const cms = resource(rest, gvr('v1', 'configmaps'), 'inf-t');
  await cms.create({ metadata: { name: 'trim-listed' }, data: { k: 'v' } });
  const got = await cms.get('trim-listed');
  assert.ok(got.metadata.managedFields?.length, `the server keeps them: ${JSON.stringify(got.metadata)}`);
  const trimmed = new Informer(cms, { trimManagedFields: true });
  const plain = new Informer(cms, {});
  const seen: (unknown[] | undefined)[] = [];
  trimmed.addEventHandler({ add: (o) => seen.push(o.metadata.managedFields) });
  trimmed.run();
  plain.run();
  try {
    assert.equal(await trimmed.waitForSync({ timeoutMs: 10_000 }), true);
    assert.equal(await plain.waitForSync({ timeoutMs: 10_000 }), true);
    await cms.create({ metadata: { name: 'trim-watched' }, data: { k: 'v' } });
    await until('both in the trimmed informer', () => trimmed.get('inf-t/trim-watched') !== undefined && plain.get('inf-t/trim-watched') !== undefined);
    for (const k of ['inf-t/trim-listed', 'inf-t/trim-watched']) {
      assert.equal(trimmed.get(k)?.metadata.managedFields, undefined, k);
      assert.ok(plain.get(k)?.metadata.managedFields?.length, `${k} kept without the option`);
    }
    assert.ok(seen.length >= 2 && seen.every((m) => m === undefined), 'the handlers get them trimmed');
  } finally {
    await trimmed.stop();
    await plain.stop();
  }
});

test('informer: re-lists after 410 and resumes; a relist reports missed deletions as tombstones', async () => {
  const cms = resource<KubeObject>(rest, gvr('v1', 'configmaps'), 'inf-c');
  await cms.create({ metadata: { name: 'keep' } });
  await cms.create({ metadata: { name: 'doomed' } });
  // short watches without bookmarks: the informer's resourceVersion only moves with events in
  // its own namespace, so while other namespaces churn it falls behind the compacted history
  // and the next watch is answered 410
  const inf = new Informer(cms, { minWatchTimeoutMs: 1000, allowWatchBookmarks: false, initialBackoffMs: 50 });
  const log: string[] = [];
  inf.addEventHandler({
    add: (o) => log.push(`add ${o.metadata.name}`),
    delete: (o) => log.push(o instanceof DeletedFinalStateUnknown ? `tombstone ${o.key}` : `delete ${o.metadata.name}`),
  });
  inf.run();
  const c = churn();
  try {
    assert.equal(await inf.waitForSync({ timeoutMs: 10_000 }), true);
    await until('a watch answered 410 Expired', () => inf.stats.expired > 0, 30_000);
    await until('a relist after the 410', () => inf.stats.lists >= 2);
    // still watching after the relist
    await cms.create({ metadata: { name: 'after-410' } });
    await until('the event after the relist', () => log.includes('add after-410'));
    assert.deepEqual(inf.keys().sort(), ['inf-c/after-410', 'inf-c/doomed', 'inf-c/keep']);

    // a deletion the informer does not see (it is stopped) comes back as a tombstone on relist
    await inf.stop();
    await cms.delete('doomed');
    await cms.create({ metadata: { name: 'born-while-away' } });
    log.length = 0;
    inf.run();
    await until('the relist', () => log.includes('tombstone inf-c/doomed') && log.includes('add born-while-away'));
    assert.deepEqual(inf.keys().sort(), ['inf-c/after-410', 'inf-c/born-while-away', 'inf-c/keep']);
  } finally {
    await c.stop();
    await inf.stop();
  }
});
