// core/v1 Event and events.k8s.io/v1 Event are two views of the same stored events.
import { test, before, after, describe } from 'node:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { KEELSON, startCluster, until, type Cluster } from './harness.js';

let c: Cluster;
before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory'] });
});
after(async () => {
  await c?.stop();
});

test('an events.k8s.io/v1 Event is a core/v1 Event, and back', async () => {
  const ev = {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: 'e1' },
    eventTime: '2026-01-02T03:04:05.123456Z',
    reportingController: 'example.com/ctl',
    reportingInstance: 'ctl-1',
    action: 'Tested',
    reason: 'Testing',
    regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
    note: 'hello',
    type: 'Normal',
  };
  const r = await c.raw('POST', '/apis/events.k8s.io/v1/namespaces/default/events', { body: ev });
  assert.equal(r.status, 201, r.text);
  const created = r.json();
  assert.equal(created.apiVersion, 'events.k8s.io/v1');
  assert.equal(created.note, 'hello');
  const core = (await c.raw('GET', '/api/v1/namespaces/default/events/e1')).json();
  assert.equal(core.apiVersion, 'v1');
  assert.equal(core.message, 'hello');
  assert.deepEqual(core.involvedObject, { kind: 'Pod', namespace: 'default', name: 'p' });
  assert.equal(core.reportingComponent, 'example.com/ctl');
  assert.equal(core.metadata.resourceVersion, created.metadata.resourceVersion);
  const sel = (await c.raw('GET', '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dp')).json();
  assert.deepEqual(sel.items.map((i: any) => i.metadata.name), ['e1']);

  const coreEv = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e2' }, involvedObject: { kind: 'Node', name: 'n1' }, reason: 'Up', message: 'node is up', count: 3, type: 'Normal', source: { component: 'kubelet' } };
  assert.equal((await c.raw('POST', '/api/v1/namespaces/default/events', { body: coreEv })).status, 201);
  const asNew = (await c.raw('GET', '/apis/events.k8s.io/v1/namespaces/default/events/e2')).json();
  assert.equal(asNew.note, 'node is up');
  assert.equal(asNew.deprecatedCount, 3);
  assert.deepEqual(asNew.deprecatedSource, { component: 'kubelet' });
  assert.deepEqual(asNew.regarding, { kind: 'Node', name: 'n1' });
  const list = (await c.raw('GET', '/apis/events.k8s.io/v1/events')).json();
  assert.equal(list.kind, 'EventList');
  // (the controller manager writes events of its own in kube-system: its LeaderElection event)
  assert.deepEqual(list.items.filter((i: any) => i.metadata.namespace === 'default').map((i: any) => i.metadata.name).sort(), ['e1', 'e2']);
});

describe('--event-ttl', () => {
  let t: Cluster;
  const dataDir = mkdtempSync(join(tmpdir(), 'keelson-eventttl-'));
  before(async () => {
    t = await startCluster({ args: ['--event-ttl=2s'], dataDir, keepData: true });
  });
  after(async () => {
    await t?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const events = '/api/v1/namespaces/default/events';
  const event = (name: string, extra: any = {}) => ({ apiVersion: 'v1', kind: 'Event', metadata: { name, ...extra }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'R', message: name });

  test('an Event not written for the TTL is deleted (finalizers or not, with a DELETED watch event); each write renews it', async () => {
    const start = (await t.raw('GET', events)).json().metadata.resourceVersion;
    const w = t.stream(`${events}?watch=true&resourceVersion=${start}`);
    await w.ready;
    for (const e of [event('old'), event('held', { finalizers: ['example.com/hold'] }), event('renewed')]) assert.equal((await t.raw('POST', events, { body: e })).status, 201);
    // 'renewed' is written every half second for longer than the TTL
    const began = Date.now();
    let n = 0;
    while (Date.now() - began < 3500) {
      await new Promise((r) => setTimeout(r, 500));
      const p = await t.raw('PATCH', `${events}/renewed`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { count: ++n } });
      assert.equal(p.status, 200, p.text);
    }
    const names = (await t.raw('GET', events)).json().items.map((i: any) => i.metadata.name);
    assert.deepEqual(names, ['renewed'], 'the Events not written for 2s are gone');
    const deleted = w.events().filter((e) => e.type === 'DELETED').map((e) => e.object.metadata.name).sort();
    assert.deepEqual(deleted, ['held', 'old']);
    // left alone, it goes too
    await until('renewed expires', async () => (await t.raw('GET', `${events}/renewed`)).status === 404, 10_000);
    w.close();
  });

  test('--event-ttl must be greater than 0', () => {
    const r = spawnSync(process.execPath, [KEELSON, 'apiserver', '--event-ttl=0s'], { encoding: 'utf8', timeout: 20_000, cwd: dataDir });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /--event-ttl must be greater than 0/);
  });
});

// (a server of its own with a TTL longer than a stop and a start take on a loaded machine: with
// the 2 s above, the Event could expire, rightly, before the restarted server was asked for it)
describe('--event-ttl across a restart', () => {
  let t: Cluster;
  const dataDir = mkdtempSync(join(tmpdir(), 'keelson-eventttl-restart-'));
  before(async () => {
    // (10 s: a stop and a start took over 6 s with four test files at a time on two cores)
    t = await startCluster({ args: ['--event-ttl=10s'], dataDir, keepData: true });
  });
  after(async () => {
    await t?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const events = '/api/v1/namespaces/default/events';

  test('after a restart, an Event expires one TTL after the last write it records', async () => {
    const body = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'before-restart' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'R', message: 'm' };
    assert.equal((await t.raw('POST', events, { body })).status, 201);
    const written = Date.now();
    await t.stopProcess();
    await t.launch();
    assert.equal((await t.raw('GET', `${events}/before-restart`)).status, 200, 'still there right after the restart');
    await until('the Event from before the restart expires', async () => (await t.raw('GET', `${events}/before-restart`)).status === 404, 30_000);
    // (after a restart the write's time is the latest the Event records, whose timestamps keep whole seconds)
    const lived = Date.now() - written;
    assert.ok(lived >= 10_000 - 1000, `expired ${lived} ms after its write: not before one TTL, less the second its timestamps drop`);
  });
});
