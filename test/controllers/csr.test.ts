// When the CSR cleaner deletes a request (cleanupReason), as kube-controller-manager's csrcleaner.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cleanupReason } from '../../src/controllers/csrapproving.js';

const now = Date.parse('2026-12-05T12:00:00Z');
const ago = (ms: number) => new Date(now - ms).toISOString().replace(/\.\d+Z$/, 'Z');
const csr = (conditions: any[], created = ago(60_000), certificate?: string) => ({ metadata: { name: 'x', creationTimestamp: created }, status: { conditions, ...(certificate ? { certificate } : {}) } });

test('denied, failed, and approved-and-issued requests go an hour after; pending ones a day after', async () => {
  assert.equal(await cleanupReason(csr([{ type: 'Denied', status: 'True', lastUpdateTime: ago(2 * 3600_000) }]), now), 'more than 1h0m0s old and denied');
  assert.equal(await cleanupReason(csr([{ type: 'Denied', status: 'True', lastUpdateTime: ago(30 * 60_000) }]), now), undefined);
  assert.equal(await cleanupReason(csr([{ type: 'Failed', status: 'True', lastUpdateTime: ago(2 * 3600_000) }]), now), 'more than 1h0m0s old and failed');
  // approved long ago but not issued yet: kept
  assert.equal(await cleanupReason(csr([{ type: 'Approved', status: 'True', lastUpdateTime: ago(2 * 3600_000) }]), now), undefined);
  assert.equal(await cleanupReason(csr([], ago(25 * 3600_000)), now), 'more than 24h0m0s old and unhandled');
  assert.equal(await cleanupReason(csr([], ago(23 * 3600_000)), now), undefined);
});
