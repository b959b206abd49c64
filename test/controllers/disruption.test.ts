// The disruption controller's pieces that need no server (the controller itself is tested end to
// end in test/e2e/disruption.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { selectorString } from '../../src/controllers/disruption.js';

test('a budget selector as a labelSelector query: null selects nothing, {} everything', () => {
  assert.equal(selectorString(undefined), undefined);
  assert.equal(selectorString(null), undefined);
  assert.equal(selectorString({}), '');
  assert.equal(
    selectorString({
      matchLabels: { app: 'web', tier: 'front' },
      matchExpressions: [
        { key: 'env', operator: 'In', values: ['a', 'b'] },
        { key: 'zone', operator: 'NotIn', values: ['x'] },
        { key: 'canary', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    }),
    'app=web,tier=front,env in (a,b),zone notin (x),canary,!legacy',
  );
});
