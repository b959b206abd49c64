// The rules of the taint eviction and node lifecycle controllers (tainteviction.ts,
// nodelifecycle.ts), case by case: which toleration tolerates which taint, when a pod goes, and a
// zone's state. (The controllers at work: test/e2e/node-lifecycle.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evictionDelayMs, tolerates } from '../../src/controllers/tainteviction.js';
import { zoneOf, zoneState } from '../../src/controllers/nodelifecycle.js';

const taint = { key: 'k', value: 'v', effect: 'NoExecute' };

test('tolerates: key, value, operator and effect as v1 Toleration.ToleratesTaint', () => {
  assert.ok(tolerates({ key: 'k', operator: 'Equal', value: 'v', effect: 'NoExecute' }, taint));
  assert.ok(tolerates({ key: 'k', value: 'v' }, taint), 'Equal is the default; an empty effect matches every effect');
  assert.ok(tolerates({ key: 'k', operator: 'Exists' }, taint));
  assert.ok(tolerates({ operator: 'Exists' }, taint), 'an empty key with Exists tolerates everything');
  assert.ok(!tolerates({ key: 'k', value: 'w' }, taint));
  assert.ok(!tolerates({ key: 'k', operator: 'Exists', effect: 'NoSchedule' }, taint));
  assert.ok(!tolerates({ key: 'other', operator: 'Exists' }, taint));
  assert.ok(!tolerates({ key: 'k', operator: 'Lt', value: 'v' }, taint));
});

test('evictionDelayMs: at once, after the least tolerationSeconds, or never', () => {
  const pod = (tolerations: any[]) => ({ spec: { tolerations } });
  assert.equal(evictionDelayMs(pod([]), [taint]), 0);
  assert.equal(evictionDelayMs(pod([{ key: 'k', operator: 'Exists', tolerationSeconds: 30 }]), [taint]), 30_000);
  assert.equal(evictionDelayMs(pod([{ key: 'k', operator: 'Exists' }]), [taint]), -1);
  assert.equal(evictionDelayMs(pod([{ key: 'k', operator: 'Exists', tolerationSeconds: -5 }]), [taint]), 0);
  const two = [taint, { key: 'j', effect: 'NoExecute' }];
  assert.equal(evictionDelayMs(pod([{ key: 'k', operator: 'Exists', tolerationSeconds: 30 }]), two), 0, 'one taint not tolerated');
  assert.equal(evictionDelayMs(pod([{ key: 'k', operator: 'Exists', tolerationSeconds: 30 }, { key: 'j', operator: 'Exists', tolerationSeconds: 10 }]), two), 10_000);
  assert.equal(evictionDelayMs(pod([{ key: 'k', operator: 'Exists', tolerationSeconds: 30 }, { key: 'j', operator: 'Exists' }]), two), 30_000, 'the ones with seconds decide');
});

test('zoneState and zoneOf: ComputeZoneState\'s thresholds, GetZoneKey\'s labels', () => {
  assert.equal(zoneState(0, 1, 0.55), 'FullDisruption');
  assert.equal(zoneState(0, 0, 0.55), 'Normal');
  assert.equal(zoneState(1, 2, 0.55), 'Normal', 'two not ready is never partial');
  assert.equal(zoneState(2, 3, 0.55), 'PartialDisruption');
  assert.equal(zoneState(3, 3, 0.55), 'Normal');
  assert.equal(zoneOf({ metadata: {} }), '');
  assert.equal(zoneOf({ metadata: { labels: { 'topology.kubernetes.io/region': 'r', 'topology.kubernetes.io/zone': 'a' } } }), 'r:\0:a');
  assert.equal(zoneOf({ metadata: { labels: { 'failure-domain.beta.kubernetes.io/zone': 'b' } } }), ':\0:b');
});
