// The PersistentVolume binder's pure parts: the volume a claim gets (index.go's findBestMatchForClaim
// over component-helpers' FindMatchingVolume), the default StorageClass, and why a named volume
// does not fit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkVolumeSatisfyClaim, defaultStorageClass, findBestMatchForClaim } from '../../src/controllers/pvbinder.js';

const pv = (name: string, size: string, spec: any = {}, meta: any = {}, phase = 'Available') => ({ metadata: { name, ...meta }, spec: { capacity: { storage: size }, accessModes: ['ReadWriteOnce'], ...spec }, status: { phase } });
const pvc = (size: string, spec: any = {}, meta: any = {}) => ({ metadata: { namespace: 'ns', name: 'c', uid: 'u1', ...meta }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } }, ...spec } });
const best = (claim: any, vols: any[], delay = false) => findBestMatchForClaim(claim, vols, delay)?.metadata.name;

test('the smallest Available volume big enough, of the claim\'s class, volume mode and selector', () => {
  const vols = [pv('big', '10Gi'), pv('mid', '2Gi'), pv('small', '500Mi'), pv('bound', '1Gi', { claimRef: { namespace: 'ns', name: 'other', uid: 'x' } }), pv('pending', '1Gi', {}, {}, 'Pending'), pv('gone', '1Gi', {}, { deletionTimestamp: '2026-01-01T00:00:00Z' }), pv('block', '1Gi', { volumeMode: 'Block' }), pv('gold', '1Gi', { storageClassName: 'gold' })];
  assert.equal(best(pvc('1Gi'), vols), 'mid');
  assert.equal(best(pvc('1Gi', { storageClassName: 'gold' }), vols), 'gold');
  assert.equal(best(pvc('1Gi', { volumeMode: 'Block' }), vols), 'block');
  assert.equal(best(pvc('20Gi'), vols), undefined);
  // (quantities compare by value: 1024Mi is 1Gi)
  assert.equal(best(pvc('1024Mi'), [pv('a', '1Gi'), pv('b', '1025Mi')]), 'a');
  const labelled = [pv('l1', '1Gi', {}, { labels: { tier: 'slow' } }), pv('l2', '5Gi', {}, { labels: { tier: 'fast' } })];
  assert.equal(best(pvc('1Gi', { selector: { matchLabels: { tier: 'fast' } } }), labelled), 'l2');
  // (the beta class annotation wins over the field)
  assert.equal(best(pvc('1Gi', { storageClassName: 'x' }, { annotations: { 'volume.beta.kubernetes.io/storage-class': 'gold' } }), vols), 'gold');
});

test('access modes: the groups with the fewest modes are searched first; a volume lacking a mode is never taken', () => {
  const vols = [pv('rwo-rox', '1Gi', { accessModes: ['ReadOnlyMany', 'ReadWriteOnce'] }), pv('rwo', '5Gi'), pv('rwx', '1Gi', { accessModes: ['ReadWriteMany'] })];
  assert.equal(best(pvc('1Gi'), vols), 'rwo');
  assert.equal(best(pvc('1Gi', { accessModes: ['ReadOnlyMany'] }), vols), 'rwo-rox');
  assert.equal(best(pvc('1Gi', { accessModes: ['ReadWriteOnce', 'ReadWriteMany'] }), vols), undefined);
});

test('a volume pre-bound to the claim wins; with delayed binding only it is taken', () => {
  const vols = [pv('free', '1Gi'), pv('pre', '9Gi', { claimRef: { namespace: 'ns', name: 'c' } }, {}, 'Available')];
  assert.equal(best(pvc('1Gi'), vols), 'pre');
  assert.equal(best(pvc('1Gi'), vols, true), 'pre');
  assert.equal(best(pvc('1Gi'), [pv('free', '1Gi')], true), undefined);
  // (a reference with another uid is another claim's)
  assert.equal(best(pvc('1Gi'), [pv('pre', '9Gi', { claimRef: { namespace: 'ns', name: 'c', uid: 'old' } })]), undefined);
});

test('the default StorageClass: annotated true (either key), the newest, then by name', () => {
  const sc = (name: string, t: string, ann: Record<string, string> = { 'storageclass.kubernetes.io/is-default-class': 'true' }) => ({ metadata: { name, creationTimestamp: t, annotations: ann } });
  assert.equal(defaultStorageClass([sc('a', '2026-01-01T00:00:00Z', {})]), undefined);
  assert.equal(defaultStorageClass([sc('old', '2026-01-01T00:00:00Z'), sc('new', '2026-02-01T00:00:00Z', { 'storageclass.beta.kubernetes.io/is-default-class': 'true' })]).metadata.name, 'new');
  assert.equal(defaultStorageClass([sc('b', '2026-01-01T00:00:00Z'), sc('a', '2026-01-01T00:00:00Z')]).metadata.name, 'a');
});

test('why a volume named by a claim does not fit, in Kubernetes\' words', () => {
  assert.equal(checkVolumeSatisfyClaim(pv('v', '1Gi'), pvc('1Gi')), '');
  assert.equal(checkVolumeSatisfyClaim(pv('v', '1Gi'), pvc('2Gi')), 'requested PV is too small');
  assert.equal(checkVolumeSatisfyClaim(pv('v', '1Gi', { storageClassName: 'a' }), pvc('1Gi')), 'storageClassName does not match');
  assert.equal(checkVolumeSatisfyClaim(pv('v', '1Gi', { volumeMode: 'Block' }), pvc('1Gi')), 'incompatible volumeMode');
  assert.equal(checkVolumeSatisfyClaim(pv('v', '1Gi'), pvc('1Gi', { accessModes: ['ReadWriteMany'] })), 'incompatible accessMode');
  assert.equal(checkVolumeSatisfyClaim(pv('v', '1Gi', {}, { deletionTimestamp: 'x' }), pvc('1Gi')), 'the volume is marked for deletion "v"');
});
