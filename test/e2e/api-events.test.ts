// core/v1 Event and events.k8s.io/v1 Event are two views of the same stored events.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, type Cluster } from './harness.js';

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
  assert.deepEqual(list.items.map((i: any) => i.metadata.name).sort(), ['e1', 'e2']);
});
