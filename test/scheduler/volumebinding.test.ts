// VolumeBinding's PreFilter and Filter with hand-made claims, volumes, classes and nodes (no server).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ANN_BIND_COMPLETED,
  ANN_SELECTED_NODE,
  ERR_BIND_CONFLICT,
  ERR_NODE_CONFLICT,
  ERR_PV_NOT_EXIST,
  ERR_UNBOUND_IMMEDIATE,
  findMatchingVolume,
  localVolumeNodeNames,
  volumeBindingFilter,
  volumeBindingPreFilter,
  type VolumeListers,
} from '../../src/scheduler/volumebinding.js';

const node = (name: string, zone: string) => ({ metadata: { name, labels: { 'kubernetes.io/hostname': name, zone } } });
const pod = (...claims: string[]) => ({ metadata: { namespace: 'ns', name: 'p', uid: 'u1' }, spec: { volumes: claims.map((c, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: c } })) } });
const pvc = (name: string, o: { cls?: string; volumeName?: string; bound?: boolean; storage?: string; annotations?: Record<string, string> } = {}) => ({
  metadata: { namespace: 'ns', name, uid: `uid-${name}`, annotations: { ...(o.bound ? { [ANN_BIND_COMPLETED]: 'yes' } : {}), ...(o.annotations ?? {}) } },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: o.storage ?? '1Gi' } }, storageClassName: o.cls ?? '', ...(o.volumeName ? { volumeName: o.volumeName } : {}) },
});
const pv = (name: string, o: { cls?: string; storage?: string; zone?: string; hostname?: string; phase?: string; claimRef?: any } = {}) => ({
  metadata: { name },
  spec: {
    capacity: { storage: o.storage ?? '1Gi' },
    accessModes: ['ReadWriteOnce'],
    storageClassName: o.cls ?? '',
    local: { path: '/x' },
    ...(o.zone || o.hostname ? { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [o.hostname ? { key: 'kubernetes.io/hostname', operator: 'In', values: [o.hostname] } : { key: 'zone', operator: 'In', values: [o.zone] }] }] } } } : {}),
    ...(o.claimRef ? { claimRef: o.claimRef } : {}),
  },
  status: { phase: o.phase ?? 'Available' },
});

function listers(pvcs: any[], pvs: any[], classes: any[] = []): VolumeListers {
  return {
    pvc: (ns, name) => pvcs.find((x) => x.metadata.namespace === ns && x.metadata.name === name),
    pv: (name) => pvs.find((x) => x.metadata.name === name),
    storageClass: (name) => classes.find((x) => x.metadata.name === name),
    pvs: () => pvs,
  };
}

const WFFC = { metadata: { name: 'wffc' }, provisioner: 'example.com/x', volumeBindingMode: 'WaitForFirstConsumer' };
const LOCAL = { metadata: { name: 'local' }, provisioner: 'kubernetes.io/no-provisioner', volumeBindingMode: 'WaitForFirstConsumer' };
const IMMEDIATE = { metadata: { name: 'fast' }, provisioner: 'example.com/x', volumeBindingMode: 'Immediate' };

test('PreFilter: no claims skips; a missing, lost or unbound immediate claim rejects every node', () => {
  assert.deepEqual(volumeBindingPreFilter({ spec: { volumes: [{ name: 'e', emptyDir: {} }] } }, listers([], [])), { skip: true });
  const msg = (p: any, l: VolumeListers) => {
    const r = volumeBindingPreFilter(p, l);
    assert.ok('status' in r);
    assert.equal(r.status.code, 'UnschedulableAndUnresolvable');
    return r.status.reasons.join(', ');
  };
  assert.equal(msg(pod('a'), listers([], [])), 'persistentvolumeclaim "a" not found');
  const lost = pvc('a', { volumeName: 'gone' });
  (lost as any).status = { phase: 'Lost' };
  assert.equal(msg(pod('a'), listers([lost], [])), 'persistentvolumeclaim "a" bound to non-existent persistentvolume "gone"');
  assert.equal(msg(pod('a'), listers([pvc('a')], [])), ERR_UNBOUND_IMMEDIATE);
  assert.equal(msg(pod('a'), listers([pvc('a', { cls: 'fast' })], [], [IMMEDIATE])), ERR_UNBOUND_IMMEDIATE);
  // pre-bound (volumeName without the PV controller's bind-completed) is immediate too, even of a WaitForFirstConsumer class
  assert.equal(msg(pod('a'), listers([pvc('a', { cls: 'wffc', volumeName: 'v' })], [], [WFFC])), ERR_UNBOUND_IMMEDIATE);
  const eph = { metadata: { namespace: 'ns', name: 'p', uid: 'u1' }, spec: { volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: {} } }] } };
  assert.equal(msg(eph, listers([], [])), 'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"');
});

test('bound claims: the PV must exist and its node affinity match; hostname terms narrow the nodes', () => {
  const claims = [pvc('a', { volumeName: 'za', bound: true })];
  const l = listers(claims, [pv('za', { zone: 'z1' })]);
  const r = volumeBindingPreFilter(pod('a'), l);
  assert.ok('state' in r && r.eligibleNodes === undefined);
  assert.deepEqual(volumeBindingFilter(r.state, node('n1', 'z1'), l), { volumes: { staticBindings: [], dynamicProvisions: [] } });
  assert.deepEqual(volumeBindingFilter(r.state, node('n2', 'z2'), l).status?.reasons, [ERR_NODE_CONFLICT]);
  assert.deepEqual(volumeBindingFilter(r.state, node('n1', 'z1'), listers(claims, [])).status?.reasons, [ERR_PV_NOT_EXIST]);
  const h = listers([pvc('a', { volumeName: 'ha', bound: true })], [pv('ha', { hostname: 'n2' })]);
  const rh = volumeBindingPreFilter(pod('a'), h);
  assert.ok('state' in rh);
  assert.deepEqual([...(rh.eligibleNodes ?? [])], ['n2']);
  assert.deepEqual(localVolumeNodeNames(pv('x', { zone: 'z1' })), []);
});

test('WaitForFirstConsumer: the smallest Available PV that fits the node, else provisioning where the class can, else a bind conflict', () => {
  const claim = pvc('w', { cls: 'local', storage: '2Gi' });
  const vols = [pv('small', { cls: 'local', storage: '1Gi', zone: 'z1' }), pv('big', { cls: 'local', storage: '10Gi', zone: 'z1' }), pv('mid', { cls: 'local', storage: '5Gi', zone: 'z1' }), pv('other', { cls: 'local', storage: '3Gi', zone: 'z2', phase: 'Bound', claimRef: { namespace: 'ns', name: 'x' } })];
  assert.equal(findMatchingVolume(claim, vols, node('n1', 'z1'), new Set())?.metadata.name, 'mid');
  assert.equal(findMatchingVolume(claim, vols, node('n1', 'z1'), new Set(['mid']))?.metadata.name, 'big');
  assert.equal(findMatchingVolume(claim, vols, node('n2', 'z2'), new Set()), undefined);
  const l = listers([claim], vols, [LOCAL]);
  const r = volumeBindingPreFilter(pod('w'), l);
  assert.ok('state' in r);
  assert.equal(volumeBindingFilter(r.state, node('n1', 'z1'), l).volumes?.staticBindings[0]?.pv.metadata.name, 'mid');
  assert.deepEqual(volumeBindingFilter(r.state, node('n2', 'z2'), l).status?.reasons, [ERR_BIND_CONFLICT]);
  // a class with a provisioner provisions where no PV fits
  const pc = pvc('w', { cls: 'wffc' });
  const lp = listers([pc], [], [WFFC]);
  const rp = volumeBindingPreFilter(pod('w'), lp);
  assert.ok('state' in rp);
  assert.deepEqual(volumeBindingFilter(rp.state, node('n2', 'z2'), lp).volumes?.dynamicProvisions.map((x) => x.metadata.name), ['w']);
  // a claim whose node was selected already fits that node only
  const sel = pvc('w', { cls: 'wffc', annotations: { [ANN_SELECTED_NODE]: 'n1' } });
  const ls = listers([sel], [], [WFFC]);
  const rs = volumeBindingPreFilter(pod('w'), ls);
  assert.ok('state' in rs);
  assert.equal(volumeBindingFilter(rs.state, node('n1', 'z1'), ls).status, undefined);
  assert.deepEqual(volumeBindingFilter(rs.state, node('n2', 'z2'), ls).status?.reasons, [ERR_BIND_CONFLICT]);
});
