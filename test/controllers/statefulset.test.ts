// The StatefulSet controller's pieces that need no server (the controller itself is tested end to
// end in test/e2e/statefulset-controller.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  claimOwners,
  claimsFor,
  equalRevision,
  newStatefulPod,
  ordinalOf,
  replicaStatus,
  revisionData,
  revisionHash,
  revisionsToTrim,
  startOrdinal,
  templateOfRevision,
} from '../../src/controllers/statefulset.js';
import { defaultControllerManagerOptions, isControllerEnabled, otherKubeController, validateControllerManagerOptions } from '../../src/controllers/options.js';

const set = (extra: Record<string, unknown> = {}): any => ({
  metadata: { name: 'web', namespace: 'ns', uid: 'u1' },
  spec: {
    replicas: 2,
    serviceName: 'nginx',
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' }, annotations: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx' }], volumes: [{ name: 'data', emptyDir: {} }, { name: 'other', emptyDir: {} }] } },
    volumeClaimTemplates: [{ metadata: { name: 'data', labels: { disk: 'yes' } }, spec: { accessModes: ['ReadWriteOnce'] } }],
    ...extra,
  },
});

test('ordinals: a pod belongs to the set only under the name <set>-<n>', () => {
  const s = set();
  assert.equal(ordinalOf(s, { metadata: { name: 'web-0' } }), 0);
  assert.equal(ordinalOf(s, { metadata: { name: 'web-12' } }), 12);
  assert.equal(ordinalOf(s, { metadata: { name: 'web-x' } }), -1);
  assert.equal(ordinalOf(s, { metadata: { name: 'webby-1' } }), -1);
  assert.equal(ordinalOf(s, { metadata: { name: 'web-web-1' } }), -1);
  assert.equal(startOrdinal(s), 0);
  assert.equal(startOrdinal(set({ ordinals: { start: 5 } })), 5);
});

test('a pod: identity, labels, the claim template volumes replaced by the pod claims', () => {
  const s = set();
  const ref = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'u1', controller: true, blockOwnerDeletion: true };
  const p = newStatefulPod(s, s.spec.template, 'web-abc', 1, ref);
  assert.equal(p.metadata.name, 'web-1');
  assert.deepEqual(p.metadata.labels, { app: 'web', 'statefulset.kubernetes.io/pod-name': 'web-1', 'apps.kubernetes.io/pod-index': '1', 'controller-revision-hash': 'web-abc' });
  assert.deepEqual(p.metadata.annotations, { a: 'b' });
  assert.deepEqual(p.metadata.ownerReferences, [ref]);
  assert.equal(p.spec.hostname, 'web-1');
  assert.equal(p.spec.subdomain, 'nginx');
  assert.deepEqual(p.spec.volumes, [
    { name: 'other', emptyDir: {} },
    { name: 'data', persistentVolumeClaim: { claimName: 'data-web-1' } },
  ]);
  // (the set's template is not changed)
  assert.equal(s.spec.template.spec.volumes.length, 2);
  assert.equal(s.spec.template.spec.hostname, undefined);
});

test('claims: names, labels, and the owner under the retention policy', () => {
  const [c] = claimsFor(set(), 3);
  assert.equal(c.metadata.name, 'data-web-3');
  assert.equal(c.metadata.namespace, 'ns');
  assert.deepEqual(c.metadata.labels, { disk: 'yes', app: 'web' });
  assert.equal(c.metadata.ownerReferences, undefined);
  const [d] = claimsFor(set({ persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' } }), 0);
  assert.deepEqual(d.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'u1', controller: true, blockOwnerDeletion: true }]);
});

test('revisions: the data replaces the template, equal templates are equal revisions, the hash depends on the collision count', () => {
  const s = set();
  const data = revisionData(s);
  assert.equal(data.spec.template.$patch, 'replace');
  assert.deepEqual(templateOfRevision({ data }), s.spec.template);
  const other = set();
  other.spec.template.spec.containers[0].image = 'nginx:2';
  assert.ok(equalRevision({ data }, { data: revisionData(set()) }));
  assert.ok(!equalRevision({ data }, { data: revisionData(other) }));
  assert.match(revisionHash(data), /^[bcdfghjklmnpqrstvwxz2456789]+$/);
  assert.equal(revisionHash(data), revisionHash(revisionData(set())));
  assert.notEqual(revisionHash(data), revisionHash(data, 1));
});

test('history: the oldest revisions neither live nor within the limit go', () => {
  const rev = (name: string, revision: number) => ({ metadata: { name }, revision });
  const revs = [rev('a', 1), rev('b', 2), rev('c', 3), rev('d', 4), rev('e', 5)];
  assert.deepEqual(revisionsToTrim(revs, new Set(['e', 'a']), 1).map((r) => r.metadata.name), ['b', 'c']);
  assert.deepEqual(revisionsToTrim(revs, new Set(['e']), 10), []);
  assert.deepEqual(revisionsToTrim(revs, new Set(['e']), 0).map((r) => r.metadata.name), ['a', 'b', 'c', 'd']);
});

test('status counts: ready, available after minReadySeconds, current and updated revisions', () => {
  const now = Date.parse('2026-01-01T00:01:00Z');
  const pod = (rev: string, ready: boolean, since = '2026-01-01T00:00:00Z', extra: any = {}) => ({
    metadata: { labels: { 'controller-revision-hash': rev }, ...extra },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: since }] },
  });
  const s = replicaStatus([pod('r1', true), pod('r2', true, '2026-01-01T00:00:59Z'), pod('r2', false), pod('r1', true, undefined, { deletionTimestamp: 'x' })], 'r1', 'r2', 10, now);
  assert.deepEqual(s, { replicas: 4, readyReplicas: 3, availableReplicas: 2, currentReplicas: 1, updatedReplicas: 2, currentRevision: 'r1', updateRevision: 'r2' });
});

test('claim owners under each retention policy: the set, the scaled-down pod, or nobody; another controller wins', () => {
  const setRef = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'u1', controller: true, blockOwnerDeletion: true };
  const podOf = (ord: number) => ({ metadata: { name: `web-${ord}`, uid: `p${ord}` } });
  const podRef = (ord: number) => ({ apiVersion: 'v1', kind: 'Pod', name: `web-${ord}`, uid: `p${ord}`, controller: true, blockOwnerDeletion: true });
  const withPolicy = (whenDeleted: string, whenScaled: string) => set({ persistentVolumeClaimRetentionPolicy: { whenDeleted, whenScaled } });
  // (replicas 2: web-0 and web-1 in range, web-2 scaled down)
  assert.deepEqual(claimOwners(withPolicy('Retain', 'Retain'), podOf(2), [setRef]), []);
  assert.deepEqual(claimOwners(withPolicy('Delete', 'Retain'), podOf(2), undefined), [setRef]);
  assert.deepEqual(claimOwners(withPolicy('Retain', 'Delete'), podOf(2), undefined), [podRef(2)]);
  assert.deepEqual(claimOwners(withPolicy('Retain', 'Delete'), podOf(1), [podRef(1)]), []);
  assert.deepEqual(claimOwners(withPolicy('Delete', 'Delete'), podOf(2), [setRef]), [podRef(2)]);
  assert.deepEqual(claimOwners(withPolicy('Delete', 'Delete'), podOf(1), [{ ...podRef(1), uid: 'old' }]), [setRef]);
  const other = { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: 'x1' };
  assert.deepEqual(claimOwners(withPolicy('Delete', 'Retain'), podOf(0), [other]), [other, setRef]);
  const ctl = { ...other, controller: true };
  assert.deepEqual(claimOwners(withPolicy('Delete', 'Retain'), podOf(0), [ctl, setRef]), [ctl]);
});

test('statefulset-controller (alias statefulset) is on by default, and --concurrent-statefulset-syncs is validated', () => {
  assert.equal(isControllerEnabled('statefulset-controller', ['*']), true);
  assert.equal(isControllerEnabled('statefulset-controller', ['*', '-statefulset']), false);
  assert.equal(isControllerEnabled('statefulset', ['statefulset-controller']), true);
  assert.equal(otherKubeController('statefulset'), undefined);
  assert.equal(defaultControllerManagerOptions().concurrentStatefulSetSyncs, 5);
  assert.deepEqual(validateControllerManagerOptions({ ...defaultControllerManagerOptions(), concurrentStatefulSetSyncs: 0 }), ['--concurrent-statefulset-syncs must be at least 1']);
});
