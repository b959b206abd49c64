// FindMatchingVolume, shared by the PV controller (no node) and the scheduler (a node): what each
// path checks, as component-helpers' FindMatchingVolume does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { claimClass, findMatchingVolume, isVolumeBoundToClaim, volumeClass } from '../../src/schema/pvmatch.js';

const pv = (name: string, size: string, spec: any = {}, meta: any = {}, phase = 'Available') => ({ metadata: { name, ...meta }, spec: { capacity: { storage: size }, accessModes: ['ReadWriteOnce'], ...spec }, status: { phase } });
const pvc = (size: string, spec: any = {}, meta: any = {}) => ({ metadata: { namespace: 'ns', name: 'c', uid: 'u1', ...meta }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } }, ...spec } });
const name = (v: any) => v?.metadata.name;
const zoneOf = (want: string) => (v: any) => v.metadata.labels?.zone === undefined || v.metadata.labels.zone === want;

test('no node: access modes are not checked; delayBinding takes only a pre-bound volume', () => {
  const rwx = pv('rwx', '1Gi', { accessModes: ['ReadWriteMany'] });
  assert.equal(name(findMatchingVolume(pvc('1Gi'), [rwx], undefined, undefined, false)), 'rwx');
  assert.equal(findMatchingVolume(pvc('1Gi'), [rwx], undefined, undefined, true), undefined);
  const pre = pv('pre', '1Gi', { claimRef: { namespace: 'ns', name: 'c' } });
  assert.equal(name(findMatchingVolume(pvc('1Gi'), [rwx, pre], undefined, undefined, true)), 'pre');
});

test('a node: access modes and node affinity are checked, delayBinding does not apply; excluded volumes are skipped', () => {
  const vols = [pv('rwx', '1Gi', { accessModes: ['ReadWriteMany'] }), pv('z2', '1Gi', {}, { labels: { zone: 'z2' } }), pv('z1', '2Gi', {}, { labels: { zone: 'z1' } }), pv('z1b', '3Gi', {}, { labels: { zone: 'z1' } })];
  assert.equal(name(findMatchingVolume(pvc('1Gi'), vols, zoneOf('z1'), undefined, true)), 'z1');
  assert.equal(name(findMatchingVolume(pvc('1Gi'), vols, zoneOf('z1'), new Set(['z1']), false)), 'z1b');
  // a pre-bound volume the node cannot reach: no volume at all
  const pre = pv('pre', '1Gi', { claimRef: { namespace: 'ns', name: 'c', uid: 'u1' } }, { labels: { zone: 'z2' } });
  assert.equal(findMatchingVolume(pvc('1Gi'), [pre, ...vols], zoneOf('z1'), undefined, false), undefined);
  assert.equal(name(findMatchingVolume(pvc('1Gi'), [pre, ...vols], zoneOf('z2'), undefined, false)), 'pre');
});

test('classes (the beta annotation first) and claim references', () => {
  assert.equal(claimClass(pvc('1Gi', { storageClassName: 'x' }, { annotations: { 'volume.beta.kubernetes.io/storage-class': 'gold' } })), 'gold');
  assert.equal(claimClass(pvc('1Gi')), '');
  assert.equal(volumeClass(pv('v', '1Gi', { storageClassName: 'x' })), 'x');
  assert.equal(isVolumeBoundToClaim(pv('v', '1Gi', { claimRef: { namespace: 'ns', name: 'c', uid: 'other' } }), pvc('1Gi')), false);
  assert.equal(isVolumeBoundToClaim(pv('v', '1Gi', { claimRef: { namespace: 'ns', name: 'c' } }), pvc('1Gi')), true);
});
