// meta.SetStatusCondition's rules for metav1.Condition lists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setStatusCondition } from '../../src/machinery/conditions.js';
import { rfc3339 } from '../../src/machinery/time.js';

const T0 = Date.parse('2026-01-01T00:00:00.700Z');
const T1 = Date.parse('2026-01-01T00:05:00Z');

test('rfc3339: whole seconds, UTC', () => {
  assert.equal(rfc3339(T0), '2026-01-01T00:00:00Z');
});

test('a new type is appended; the same status keeps its transition time; a new status moves it', () => {
  const a = setStatusCondition(undefined, { type: 'Ready', status: 'False', reason: 'A', message: 'm' }, T0);
  assert.deepEqual(a, [{ type: 'Ready', status: 'False', reason: 'A', message: 'm', lastTransitionTime: '2026-01-01T00:00:00Z' }]);
  const b = setStatusCondition(a, { type: 'Ready', status: 'False', reason: 'B', message: '', observedGeneration: 2 }, T1);
  assert.deepEqual(b, [{ type: 'Ready', status: 'False', reason: 'B', message: '', observedGeneration: 2, lastTransitionTime: '2026-01-01T00:00:00Z' }]);
  const c = setStatusCondition(b, { type: 'Ready', status: 'True', reason: 'C', message: '' }, T1);
  assert.equal(c[0].lastTransitionTime, '2026-01-01T00:05:00Z');
  assert.equal(a[0].reason, 'A', 'the list given is not changed');
  const d = setStatusCondition(c, { type: 'Other', status: 'True', reason: 'D', message: '' }, T1);
  assert.deepEqual(d.map((x) => x.type), ['Ready', 'Other']);
});
