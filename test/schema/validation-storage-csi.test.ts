// storage.k8s.io/v1 CSIDriver, CSINode, VolumeAttachment and CSIStorageCapacity validation: valid
// objects pass, and each rule gives the exact field error Kubernetes 1.33 gives, in its order
// (updates repeat the create checks where Kubernetes' strategies run them twice).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  validateCSIDriver,
  validateCSIDriverUpdate,
  validateCSINode,
  validateCSINodeUpdate,
  validateCSIStorageCapacity,
  validateCSIStorageCapacityUpdate,
  validateVolumeAttachment,
  validateVolumeAttachmentStatusUpdate,
  validateVolumeAttachmentUpdate,
} from '../../src/schema/validation/storage-csi.js';
import { IMMUTABLE, LABEL_VALUE_MSG, NAME_PART_MSG, SUBDOMAIN_MSG, clone, mutate, strs } from './validation-helpers.js';

// ---- CSIDriver ----

/** a CSIDriver as it reaches validation: defaulted */
function csiDriver(spec: Record<string, unknown> = {}): any {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSIDriver',
    metadata: { name: 'ebs.csi.aws.com' },
    spec: {
      attachRequired: true,
      podInfoOnMount: false,
      volumeLifecycleModes: ['Persistent'],
      storageCapacity: false,
      fsGroupPolicy: 'ReadWriteOnceWithFSType',
      requiresRepublish: false,
      seLinuxMount: false,
      ...spec,
    },
  };
}

test('CSIDriver: a valid driver passes', () => {
  assert.deepEqual(strs(validateCSIDriver(csiDriver())), []);
  const full = csiDriver({
    tokenRequests: [{ audience: 'sts.amazonaws.com', expirationSeconds: 600 }, { audience: '' }, { audience: 'vault', expirationSeconds: 4294967296 }],
    volumeLifecycleModes: ['Persistent', 'Ephemeral'],
    fsGroupPolicy: 'File',
    nodeAllocatableUpdatePeriodSeconds: 10,
  });
  assert.deepEqual(strs(validateCSIDriver(full)), []);
});

test('CSIDriver: unset booleans are required (the attachRequired path is spelled attachedRequired)', () => {
  assert.deepEqual(strs(validateCSIDriver({ metadata: { name: 'x' }, spec: {} })), [
    'spec.attachedRequired: Required value',
    'spec.podInfoOnMount: Required value',
    'spec.storageCapacity: Required value',
    'spec.seLinuxMount: Required value',
  ]);
});

test('CSIDriver: fsGroupPolicy and volumeLifecycleModes are enums', () => {
  assert.deepEqual(strs(validateCSIDriver(csiDriver({ fsGroupPolicy: 'Always', volumeLifecycleModes: ['Persistent', 'Inline', 'Ephemeral'] }))), [
    'spec.fsGroupPolicy: Unsupported value: "Always": supported values: "File", "None", "ReadWriteOnceWithFSType"',
    'spec.volumeLifecycleModes: Unsupported value: "Inline": supported values: "Persistent", "Ephemeral"',
  ]);
});

test('CSIDriver: token requests have distinct audiences and bounded lifetimes', () => {
  const d = csiDriver({
    tokenRequests: [
      { audience: 'a', expirationSeconds: 599 },
      { audience: 'a', expirationSeconds: 1 },
      { audience: 'b', expirationSeconds: 4294967297 },
      { audience: 'c' },
    ],
  });
  assert.deepEqual(strs(validateCSIDriver(d)), [
    'spec.tokenRequests[0].expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes',
    'spec.tokenRequests[1].audience: Duplicate value: "a"',
    'spec.tokenRequests[2].expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds',
  ]);
});

test('CSIDriver: nodeAllocatableUpdatePeriodSeconds is at least 10', () => {
  assert.deepEqual(strs(validateCSIDriver(csiDriver({ nodeAllocatableUpdatePeriodSeconds: 5 }))), [
    'spec.nodeAllocatableUpdatePeriodSeconds: Invalid value: 5: must be greater than or equal to 10 seconds',
  ]);
});

test('CSIDriver: errors come in the order of the spec checks', () => {
  const d = csiDriver({ podInfoOnMount: null, fsGroupPolicy: 'x', tokenRequests: [{ audience: '', expirationSeconds: 60 }], volumeLifecycleModes: ['y'], seLinuxMount: null, nodeAllocatableUpdatePeriodSeconds: 0 });
  assert.deepEqual(strs(validateCSIDriver(d)), [
    'spec.podInfoOnMount: Required value',
    'spec.fsGroupPolicy: Unsupported value: "x": supported values: "File", "None", "ReadWriteOnceWithFSType"',
    'spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    'spec.volumeLifecycleModes: Unsupported value: "y": supported values: "Persistent", "Ephemeral"',
    'spec.seLinuxMount: Required value',
    'spec.nodeAllocatableUpdatePeriodSeconds: Invalid value: 0: must be greater than or equal to 10 seconds',
  ]);
});

test('CSIDriver update: attachRequired and volumeLifecycleModes are immutable, the rest may change', () => {
  const old = csiDriver();
  assert.deepEqual(strs(validateCSIDriverUpdate(clone(old), old)), []);
  const changedMutable = csiDriver({
    podInfoOnMount: true,
    storageCapacity: true,
    fsGroupPolicy: 'None',
    requiresRepublish: true,
    seLinuxMount: true,
    tokenRequests: [{ audience: 'x', expirationSeconds: 3600 }],
  });
  assert.deepEqual(strs(validateCSIDriverUpdate(changedMutable, old)), []);
  const changed = mutate(old, (d) => {
    d.spec.attachRequired = false;
    d.spec.volumeLifecycleModes = ['Persistent', 'Ephemeral'];
  });
  assert.deepEqual(strs(validateCSIDriverUpdate(changed, old)), [
    'spec.attachedRequired: Invalid value: false: field is immutable',
    'spec.volumeLifecycleModes: Invalid value: []storage.VolumeLifecycleMode{"Persistent", "Ephemeral"}: field is immutable',
  ]);
});

test('CSIDriver update: the spec is checked once, before the immutable fields', () => {
  const old = csiDriver();
  const bad = mutate(old, (d) => {
    d.spec.fsGroupPolicy = 'Bad';
    d.spec.attachRequired = false;
  });
  assert.deepEqual(strs(validateCSIDriverUpdate(bad, old)), [
    'spec.fsGroupPolicy: Unsupported value: "Bad": supported values: "File", "None", "ReadWriteOnceWithFSType"',
    `spec.attachedRequired: Invalid value: false: ${IMMUTABLE}`,
  ]);
});

// ---- CSINode ----

function csiNode(drivers: unknown[]): any {
  return { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name: 'node-1' }, spec: { drivers } };
}
const ebs = { name: 'ebs.csi.aws.com', nodeID: 'i-0123456789abcdef0', topologyKeys: ['topology.ebs.csi.aws.com/zone'], allocatable: { count: 25 } };

test('CSINode: valid drivers pass', () => {
  assert.deepEqual(strs(validateCSINode(csiNode([]))), []);
  assert.deepEqual(strs(validateCSINode(csiNode([ebs, { name: 'Efs.CSI.aws.com', nodeID: 'n'.repeat(256), allocatable: { count: 0 } }]))), []);
});

test('CSINode: driver names are CSI driver names, node IDs are required and at most 256 bytes', () => {
  assert.deepEqual(strs(validateCSINode(csiNode([{ name: '', nodeID: '' }]))), [
    'spec.drivers[0].name: Required value',
    `spec.drivers[0].name: Invalid value: "": ${SUBDOMAIN_MSG}`,
    'spec.drivers[0].nodeID: Required value',
  ]);
  const long = 'n'.repeat(257);
  assert.deepEqual(strs(validateCSINode(csiNode([{ name: 'a'.repeat(64), nodeID: long }, { name: 'my_driver', nodeID: 'x' }]))), [
    'spec.drivers[0].name: Too long: may not be more than 63 bytes',
    `spec.drivers[0].nodeID: Invalid value: "${long}": must be 256 characters or less`,
    `spec.drivers[1].name: Invalid value: "my_driver": ${SUBDOMAIN_MSG}`,
  ]);
});

test('CSINode: allocatable count is non-negative and driver names are unique', () => {
  assert.deepEqual(strs(validateCSINode(csiNode([{ ...ebs, allocatable: { count: -1 } }, { ...ebs, nodeID: 'other' }]))), [
    'spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0',
    'spec.drivers[1].name: Duplicate value: "ebs.csi.aws.com"',
  ]);
});

test('CSINode: topology keys are non-empty, unique qualified names, reported on the driver', () => {
  assert.deepEqual(strs(validateCSINode(csiNode([{ ...ebs, topologyKeys: ['', 'zone', 'zone', 'bad key'] }]))), [
    'spec.drivers[0]: Required value',
    'spec.drivers[0]: Invalid value: "": name part must be non-empty',
    `spec.drivers[0]: Invalid value: "": ${NAME_PART_MSG}`,
    'spec.drivers[0]: Duplicate value: "zone"',
    `spec.drivers[0]: Invalid value: "bad key": ${NAME_PART_MSG}`,
  ]);
});

test('CSINode update: drivers may come and go, an existing one may not change', () => {
  const old = csiNode([ebs]);
  assert.deepEqual(strs(validateCSINodeUpdate(clone(old), old)), []);
  assert.deepEqual(strs(validateCSINodeUpdate(csiNode([ebs, { name: 'efs.csi.aws.com', nodeID: 'n' }]), old)), []);
  assert.deepEqual(strs(validateCSINodeUpdate(csiNode([]), old)), []);
  // an empty list of topology keys equals an absent one
  const noKeys = csiNode([{ name: 'a.csi', nodeID: 'n' }]);
  assert.deepEqual(strs(validateCSINodeUpdate(csiNode([{ name: 'a.csi', nodeID: 'n', topologyKeys: [] }]), noKeys)), []);

  assert.deepEqual(strs(validateCSINodeUpdate(csiNode([{ ...ebs, nodeID: 'i-new' }]), old)), [
    `spec.drivers: Invalid value: storage.CSINodeDriver{Name:"ebs.csi.aws.com", NodeID:"i-new", TopologyKeys:[]string{"topology.ebs.csi.aws.com/zone"}, Allocatable:(*storage.VolumeNodeResources)(0xc000010000)}: ${IMMUTABLE}`,
  ]);
  // MutableCSINodeAllocatableCount is off in 1.33: the count is immutable too
  assert.deepEqual(strs(validateCSINodeUpdate(csiNode([{ ...ebs, allocatable: { count: 24 } }]), old)), [
    `spec.drivers: Invalid value: storage.CSINodeDriver{Name:"ebs.csi.aws.com", NodeID:"i-0123456789abcdef0", TopologyKeys:[]string{"topology.ebs.csi.aws.com/zone"}, Allocatable:(*storage.VolumeNodeResources)(0xc000010000)}: ${IMMUTABLE}`,
  ]);
  assert.deepEqual(strs(validateCSINodeUpdate(csiNode([{ name: 'a.csi', nodeID: 'm' }]), noKeys)), [
    `spec.drivers: Invalid value: storage.CSINodeDriver{Name:"a.csi", NodeID:"m", TopologyKeys:[]string(nil), Allocatable:(*storage.VolumeNodeResources)(nil)}: ${IMMUTABLE}`,
  ]);
});

test('CSINode update: the spec checks run twice, as the strategy runs them', () => {
  const o = csiNode([{ name: 'a.csi', nodeID: '' }]);
  assert.deepEqual(strs(validateCSINodeUpdate(o, clone(o))), ['spec.drivers[0].nodeID: Required value', 'spec.drivers[0].nodeID: Required value']);
});

// ---- VolumeAttachment ----

function attachment(spec: Record<string, unknown> = {}, status: Record<string, unknown> = { attached: false }): any {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'VolumeAttachment',
    metadata: { name: 'csi-0123' },
    spec: { attacher: 'ebs.csi.aws.com', source: { persistentVolumeName: 'pv-1' }, nodeName: 'node-1', ...spec },
    status,
  };
}
const inlineSpec = (o: Record<string, unknown> = {}): any => ({
  accessModes: ['ReadWriteOnce'],
  csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-1' },
  persistentVolumeReclaimPolicy: 'Retain',
  volumeMode: 'Filesystem',
  ...o,
});
const IN = 'spec.source.inlineVolumeSpec';

test('VolumeAttachment: valid attachments pass', () => {
  assert.deepEqual(strs(validateVolumeAttachment(attachment())), []);
  assert.deepEqual(strs(validateVolumeAttachment(attachment({ source: { inlineVolumeSpec: inlineSpec() } }))), []);
  assert.deepEqual(strs(validateVolumeAttachment(attachment({ attacher: 'EBS.csi.AWS.com' }))), []);
});

test('VolumeAttachment: attacher, source and node name, then the v1 checks', () => {
  assert.deepEqual(strs(validateVolumeAttachment(attachment({ attacher: '', source: {}, nodeName: '' }))), [
    'spec.attacher: Required value',
    'spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName',
    `spec.nodeName: Invalid value: "": ${SUBDOMAIN_MSG}`,
    'spec.attacher: Required value',
    `spec.attacher: Invalid value: "": ${SUBDOMAIN_MSG}`,
  ]);
  assert.deepEqual(strs(validateVolumeAttachment(attachment({ attacher: 'Bad_Attacher', source: { persistentVolumeName: '' }, nodeName: 'Node_1' }))), [
    'spec.source.persistentVolumeName: Required value: must specify non empty persistentVolumeName',
    `spec.nodeName: Invalid value: "Node_1": ${SUBDOMAIN_MSG}`,
    `spec.attacher: Invalid value: "Bad_Attacher": ${SUBDOMAIN_MSG}`,
    `spec.source.persistentVolumeName: Invalid value: "": ${SUBDOMAIN_MSG}`,
  ]);
  assert.deepEqual(strs(validateVolumeAttachment(attachment({ attacher: 'a'.repeat(64), source: { persistentVolumeName: 'PV_1' } }))), [
    'spec.attacher: Too long: may not be more than 63 bytes',
    `spec.source.persistentVolumeName: Invalid value: "PV_1": ${SUBDOMAIN_MSG}`,
  ]);
});

test('VolumeAttachment: exactly one source', () => {
  assert.deepEqual(strs(validateVolumeAttachment(attachment({ source: { persistentVolumeName: 'pv-1', inlineVolumeSpec: {} } }))), [
    'spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName',
  ]);
});

test('VolumeAttachment: the inline volume spec follows the rules of inline volumes', () => {
  const spec = { capacity: { storage: '1Gi' }, claimRef: { name: 'claim' }, persistentVolumeReclaimPolicy: 'Delete', nodeAffinity: { required: { nodeSelectorTerms: [] } }, storageClassName: 'fast', volumeMode: 'Block' };
  assert.deepEqual(strs(validateVolumeAttachment(attachment({ source: { inlineVolumeSpec: spec } }))), [
    `${IN}.claimRef: Forbidden: may not be specified in the context of inline volumes`,
    `${IN}.capacity: Forbidden: may not be specified in the context of inline volumes`,
    `${IN}.csi: Required value: has to be specified in the context of inline volumes`,
    `${IN}.accessModes: Required value`,
    `${IN}.persistentVolumeReclaimPolicy: Forbidden: may only be Retain in the context of inline volumes`,
    `${IN}.nodeAffinity: Forbidden: may not be specified in the context of inline volumes`,
    `${IN}: Required value: must specify a volume type`,
    `${IN}.storageClassName: Forbidden: may not be specified in the context of inline volumes`,
    `${IN}.volumeMode: Forbidden: may not specify volumeMode other than Filesystem in the context of inline volumes`,
  ]);
});

test('VolumeAttachment: the inline volume source is checked as a persistent volume source', () => {
  assert.deepEqual(strs(validateVolumeAttachment(attachment({ source: { inlineVolumeSpec: inlineSpec({ accessModes: ['ReadWriteOnce', 'Sometimes'], csi: { driver: '', volumeHandle: '' } }) } }))), [
    `${IN}.accessModes: Unsupported value: "Sometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`,
    `${IN}.csi.driver: Required value`,
    `${IN}.csi.driver: Invalid value: "": ${SUBDOMAIN_MSG}`,
    `${IN}.csi.volumeHandle: Required value`,
  ]);
  // node affinity never counts for inline volumes, so a local volume lacks it even when given
  const local = inlineSpec({ local: { path: '/mnt/disk' }, nodeAffinity: { required: { nodeSelectorTerms: [] } } });
  assert.deepEqual(strs(validateVolumeAttachment(attachment({ source: { inlineVolumeSpec: local } }))), [
    `${IN}.nodeAffinity: Forbidden: may not be specified in the context of inline volumes`,
    `${IN}.nodeAffinity: Required value: Local volume requires node affinity`,
    `${IN}.csi: Forbidden: may not specify more than 1 volume type`,
  ]);
  const root = inlineSpec({ hostPath: { path: '/' }, persistentVolumeReclaimPolicy: 'Recycle' });
  assert.deepEqual(strs(validateVolumeAttachment(attachment({ source: { inlineVolumeSpec: root } }))), [
    `${IN}.persistentVolumeReclaimPolicy: Forbidden: may only be Retain in the context of inline volumes`,
    `${IN}.csi: Forbidden: may not specify more than 1 volume type`,
    `${IN}.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'`,
  ]);
});

test('VolumeAttachment: status metadata size, error messages and codes', () => {
  const status = {
    attached: true,
    attachmentMetadata: { k: 'x'.repeat(256 * 1024) },
    attachError: { message: 'e'.repeat(1025), errorCode: -1 },
    detachError: { message: 'short', errorCode: 5 },
  };
  assert.deepEqual(strs(validateVolumeAttachment(attachment({}, status))), [
    'status.attachmentMetadata: Too long: may not be more than 262144 bytes',
    // Kubernetes names the metadata limit in the message error
    'status.attachError.message: Too long: may not be more than 262144 bytes',
    'status.attachError.errorCode: Invalid value: -1: must be between 0 and 2147483647, inclusive',
  ]);
  assert.deepEqual(strs(validateVolumeAttachment(attachment({}, { attached: true, attachmentMetadata: { k: 'x'.repeat(256 * 1024 - 1) }, detachError: { message: 'd'.repeat(1024) } }))), []);
});

test('VolumeAttachment update: the spec is immutable, checks run twice, the v1 checks do not run', () => {
  const old = attachment();
  assert.deepEqual(strs(validateVolumeAttachmentUpdate(clone(old), old)), []);
  assert.deepEqual(strs(validateVolumeAttachmentUpdate(mutate(old, (v) => (v.spec.nodeName = 'node-2')), old)), [
    `spec: Invalid value: storage.VolumeAttachmentSpec{Attacher:"ebs.csi.aws.com", Source:storage.VolumeAttachmentSource{PersistentVolumeName:(*string)(0xc000010000), InlineVolumeSpec:(*core.PersistentVolumeSpec)(nil)}, NodeName:"node-2"}: ${IMMUTABLE}`,
  ]);
  const inline = attachment({ source: { inlineVolumeSpec: inlineSpec() } });
  assert.deepEqual(strs(validateVolumeAttachmentUpdate(mutate(inline, (v) => (v.spec.source.inlineVolumeSpec.csi.volumeHandle = 'vol-2')), inline)), [
    `spec: Invalid value: storage.VolumeAttachmentSpec{Attacher:"ebs.csi.aws.com", Source:storage.VolumeAttachmentSource{PersistentVolumeName:(*string)(nil), InlineVolumeSpec:(*core.PersistentVolumeSpec)(0xc000010000)}, NodeName:"node-1"}: ${IMMUTABLE}`,
  ]);
  // an attacher that is no CSI driver name is only refused on create
  const legacy = attachment({ attacher: 'Legacy_Attacher' });
  assert.deepEqual(strs(validateVolumeAttachmentUpdate(clone(legacy), legacy)), []);
  const badNode = attachment({ nodeName: 'Node_1' });
  assert.deepEqual(strs(validateVolumeAttachmentUpdate(clone(badNode), badNode)), [`spec.nodeName: Invalid value: "Node_1": ${SUBDOMAIN_MSG}`, `spec.nodeName: Invalid value: "Node_1": ${SUBDOMAIN_MSG}`]);
});

test('VolumeAttachment status update: the status is checked (twice, as the inherited update does)', () => {
  const old = attachment();
  const ok = mutate(old, (v) => (v.status = { attached: true, attachmentMetadata: { devicePath: '/dev/xvdba' }, detachError: { time: '2025-01-01T00:00:00Z', message: 'busy', errorCode: 9 } }));
  assert.deepEqual(strs(validateVolumeAttachmentStatusUpdate(ok, old)), []);
  const bad = mutate(old, (v) => (v.status = { attached: false, detachError: { message: 'busy', errorCode: -2 } }));
  assert.deepEqual(strs(validateVolumeAttachmentStatusUpdate(bad, old)), [
    'status.detachError.errorCode: Invalid value: -2: must be between 0 and 2147483647, inclusive',
    'status.detachError.errorCode: Invalid value: -2: must be between 0 and 2147483647, inclusive',
  ]);
});

// ---- CSIStorageCapacity ----

function capacity(o: Record<string, unknown> = {}): any {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSIStorageCapacity',
    metadata: { name: 'csisc-abcde', namespace: 'kube-system' },
    nodeTopology: { matchLabels: { 'topology.kubernetes.io/zone': 'us-east-1a' } },
    storageClassName: 'fast',
    capacity: '10Gi',
    maximumVolumeSize: '1Ti',
    ...o,
  };
}

test('CSIStorageCapacity: a valid capacity passes', () => {
  assert.deepEqual(strs(validateCSIStorageCapacity(capacity())), []);
  assert.deepEqual(strs(validateCSIStorageCapacity(capacity({ nodeTopology: undefined, capacity: undefined, maximumVolumeSize: undefined }))), []);
  assert.deepEqual(strs(validateCSIStorageCapacity(capacity({ capacity: '0' }))), []);
});

test('CSIStorageCapacity: node topology, storage class name and capacity', () => {
  const c = capacity({
    nodeTopology: { matchLabels: { zone: 'a b' }, matchExpressions: [{ key: 'k', operator: 'In', values: [] }] },
    storageClassName: '',
    capacity: '-1Gi',
  });
  assert.deepEqual(strs(validateCSIStorageCapacity(c)), [
    `nodeTopology.matchLabels: Invalid value: "a b": ${LABEL_VALUE_MSG}`,
    "nodeTopology.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
    `storageClassName: Invalid value: "": ${SUBDOMAIN_MSG}`,
    'capacity: Invalid value: "-1Gi": must be greater than or equal to 0',
  ]);
  assert.deepEqual(strs(validateCSIStorageCapacity(capacity({ storageClassName: 'Fast_Class' }))), [`storageClassName: Invalid value: "Fast_Class": ${SUBDOMAIN_MSG}`]);
});

test('CSIStorageCapacity update: nodeTopology and storageClassName are immutable', () => {
  const old = capacity();
  assert.deepEqual(strs(validateCSIStorageCapacityUpdate(clone(old), old)), []);
  assert.deepEqual(strs(validateCSIStorageCapacityUpdate(capacity({ capacity: '5Gi', maximumVolumeSize: '500Gi' }), old)), []);
  assert.deepEqual(strs(validateCSIStorageCapacityUpdate(capacity({ storageClassName: 'slow' }), old)), [`storageClassName: Invalid value: "slow": ${IMMUTABLE}`]);
  assert.deepEqual(strs(validateCSIStorageCapacityUpdate(capacity({ nodeTopology: { matchLabels: { 'topology.kubernetes.io/zone': 'us-east-1b' } } }), old)), [
    `nodeTopology: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"topology.kubernetes.io/zone":"us-east-1b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: ${IMMUTABLE}`,
  ]);
  assert.deepEqual(strs(validateCSIStorageCapacityUpdate(capacity({ nodeTopology: undefined }), old)), [`nodeTopology: Invalid value: "null": ${IMMUTABLE}`]);
  // a nil selector differs from an empty one
  assert.deepEqual(strs(validateCSIStorageCapacityUpdate(capacity({ nodeTopology: {} }), capacity({ nodeTopology: undefined }))), [
    `nodeTopology: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: ${IMMUTABLE}`,
  ]);
});

test('CSIStorageCapacity update: invalid label values already stored are let through', () => {
  const sel = { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a b'] }] };
  const stored = capacity({ nodeTopology: sel });
  assert.deepEqual(strs(validateCSIStorageCapacity(stored)), [`nodeTopology.matchExpressions[0].values[0]: Invalid value: "a b": ${LABEL_VALUE_MSG}`]);
  assert.deepEqual(strs(validateCSIStorageCapacityUpdate(capacity({ nodeTopology: sel, capacity: '1Gi' }), stored)), []);
  // a valid old selector allows nothing
  assert.deepEqual(strs(validateCSIStorageCapacityUpdate(stored, capacity())), [
    `nodeTopology.matchExpressions[0].values[0]: Invalid value: "a b": ${LABEL_VALUE_MSG}`,
    `nodeTopology: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"zone", Operator:"In", Values:[]string{"a b"}}}}: ${IMMUTABLE}`,
  ]);
});
