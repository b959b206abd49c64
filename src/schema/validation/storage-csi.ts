// storage.k8s.io/v1 CSIDriver, CSINode, VolumeAttachment and CSIStorageCapacity: the checks of
// Kubernetes 1.33's pkg/apis/storage/validation, combined the way each kind's registry strategy
// combines them (so an update repeats the create checks where the strategy runs them twice, as
// Kubernetes reports them). ObjectMeta (the object's own name, labels, ...) is the generic
// store's; everything here is kind-specific. Feature gates at their 1.33 defaults.
import { posix } from 'node:path';
import { child, duplicate, forbidden, goPtr, goQuote, GoRepr, goStrings, goStruct, goLabelSelector, idx, invalid, notSupported, required, tooLong, type Errs } from './errs.js';
import { arr, FIELD_IMMUTABLE, IS_NEGATIVE, inclusiveRangeError, isDNS1123Subdomain, isSet, obj, qsign, qstr, str, validateLabelSelector, validateNonnegative, validateQualifiedName } from './util.js';
import { validateCSIDriverName, validatePersistentVolumeSpec } from './volumes.js';
import { semEqual, semEqualRef, T } from './semantic.js';

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** NameIsDNSSubdomain as an Invalid per message (ValidateNodeName, ValidateClassName, ValidatePersistentVolumeName) */
function subdomainErrs(value: string, path: string): Errs {
  return isDNS1123Subdomain(value).map((m) => invalid(path, value, m));
}

// ---- CSIDriver ----

const FS_GROUP_POLICIES = ['File', 'None', 'ReadWriteOnceWithFSType']; // sorted, as sets.List gives them
const LIFECYCLE_MODES = ['Persistent', 'Ephemeral'];
const MIN_TOKEN_SECONDS = 600;
const MAX_TOKEN_SECONDS = 2 ** 32;

function validateTokenRequests(list: any[], path: string): Errs {
  const errs: Errs = [];
  const seen = new Set<string>();
  list.forEach((tr0: any, i: number) => {
    const tr = obj(tr0);
    const p = idx(path, i);
    const audience = str(tr.audience);
    if (seen.has(audience)) {
      errs.push(duplicate(child(p, 'audience'), audience));
      return;
    }
    seen.add(audience);
    if (!isSet(tr.expirationSeconds)) return;
    const secs = Number(tr.expirationSeconds);
    if (secs < MIN_TOKEN_SECONDS) errs.push(invalid(child(p, 'expirationSeconds'), secs, 'may not specify a duration less than 10 minutes'));
    if (secs > MAX_TOKEN_SECONDS) errs.push(invalid(child(p, 'expirationSeconds'), secs, 'may not specify a duration larger than 2^32 seconds'));
  });
  return errs;
}

/** validateCSIDriverSpec */
function validateCSIDriverSpec(spec: any): Errs {
  const errs: Errs = [];
  // Kubernetes' path says "attachedRequired" (sic)
  if (!isSet(spec.attachRequired)) errs.push(required('spec.attachedRequired'));
  if (!isSet(spec.podInfoOnMount)) errs.push(required('spec.podInfoOnMount'));
  if (!isSet(spec.storageCapacity)) errs.push(required('spec.storageCapacity'));
  if (isSet(spec.fsGroupPolicy) && !FS_GROUP_POLICIES.includes(spec.fsGroupPolicy)) errs.push(notSupported('spec.fsGroupPolicy', str(spec.fsGroupPolicy), FS_GROUP_POLICIES));
  errs.push(...validateTokenRequests(arr(spec.tokenRequests), 'spec.tokenRequests'));
  for (const m of arr(spec.volumeLifecycleModes)) if (!LIFECYCLE_MODES.includes(m)) errs.push(notSupported('spec.volumeLifecycleModes', str(m), LIFECYCLE_MODES));
  // SELinuxMountReadWriteOncePod is on (beta) in 1.33
  if (!isSet(spec.seLinuxMount)) errs.push(required('spec.seLinuxMount'));
  if (isSet(spec.nodeAllocatableUpdatePeriodSeconds) && Number(spec.nodeAllocatableUpdatePeriodSeconds) < 10)
    errs.push(invalid('spec.nodeAllocatableUpdatePeriodSeconds', Number(spec.nodeAllocatableUpdatePeriodSeconds), 'must be greater than or equal to 10 seconds'));
  return errs;
}

/** CSIDriver create: ValidateCSIDriver without its ObjectMeta part */
export function validateCSIDriver(o: any): Errs {
  return validateCSIDriverSpec(obj(o?.spec));
}

/** CSIDriver update (the strategy runs ValidateCSIDriverUpdate alone): the spec again, then attachRequired and volumeLifecycleModes are immutable */
export function validateCSIDriverUpdate(o: any, old: any): Errs {
  const spec = obj(o?.spec);
  const oldSpec = obj(old?.spec);
  const errs = validateCSIDriverSpec(spec);
  if (!semEqualRef({ kind: 'scalar', scalar: 'bool' }, spec.attachRequired, oldSpec.attachRequired, true))
    errs.push(invalid('spec.attachedRequired', isSet(spec.attachRequired) ? Boolean(spec.attachRequired) : null, FIELD_IMMUTABLE));
  if (!semEqualRef({ kind: 'array', items: { kind: 'scalar', scalar: 'string' } }, spec.volumeLifecycleModes, oldSpec.volumeLifecycleModes, true))
    errs.push(invalid('spec.volumeLifecycleModes', goStrings(Array.isArray(spec.volumeLifecycleModes) ? spec.volumeLifecycleModes.map(str) : null, '[]storage.VolumeLifecycleMode'), FIELD_IMMUTABLE));
  return errs;
}

// ---- CSINode ----

/** 1.33's strategy validates with AllowLongNodeID on create and update */
const CSI_NODE_ID_MAX = 256;

function validateCSINodeDriver(d: any, names: Set<string>, path: string): Errs {
  const errs = validateCSIDriverName(str(d.name), child(path, 'name'));
  const nodeID = str(d.nodeID);
  if (!nodeID) errs.push(required(child(path, 'nodeID')));
  if (bytes(nodeID) > CSI_NODE_ID_MAX) errs.push(invalid(child(path, 'nodeID'), nodeID, `must be ${CSI_NODE_ID_MAX} characters or less`));
  const alloc = d.allocatable;
  if (alloc != null && isSet(alloc.count)) errs.push(...validateNonnegative(Number(alloc.count), child(path, 'allocatable', 'count')));
  const name = str(d.name);
  if (names.has(name)) errs.push(duplicate(child(path, 'name'), name));
  names.add(name);
  const keys = new Set<string>();
  for (const k0 of arr(d.topologyKeys)) {
    const k = str(k0);
    // these three report on the driver's own path
    if (!k) errs.push(required(path));
    if (keys.has(k)) errs.push(duplicate(path, k));
    keys.add(k);
    errs.push(...validateQualifiedName(k, path));
  }
  return errs;
}

/** ValidateCSINode without its ObjectMeta part */
function validateCSINodeSpec(o: any): Errs {
  const errs: Errs = [];
  const names = new Set<string>();
  arr(obj(o?.spec).drivers).forEach((d: any, i: number) => errs.push(...validateCSINodeDriver(obj(d), names, idx('spec.drivers', i))));
  return errs;
}

/** storage.CSINodeDriver as %#v prints it */
function goCSINodeDriver(d: any): GoRepr {
  return goStruct('storage.CSINodeDriver', [
    ['Name', goQuote(str(d.name))],
    ['NodeID', goQuote(str(d.nodeID))],
    ['TopologyKeys', goStrings(Array.isArray(d.topologyKeys) ? d.topologyKeys.map(str) : null).repr],
    ['Allocatable', goPtr('storage.VolumeNodeResources', d.allocatable != null)],
  ]);
}

/** CSINode create */
export function validateCSINode(o: any): Errs {
  return validateCSINodeSpec(o);
}

/**
 * CSINode update: the strategy runs ValidateCSINode and then ValidateCSINodeUpdate, which runs
 * ValidateCSINode again (so each spec error is reported twice), and then no driver already
 * present (by name) may change at all (MutableCSINodeAllocatableCount is off in 1.33).
 */
export function validateCSINodeUpdate(o: any, old: any): Errs {
  const errs = [...validateCSINodeSpec(o), ...validateCSINodeSpec(o)];
  const newDrivers = arr(obj(o?.spec).drivers).map(obj);
  for (const od of arr(obj(old?.spec).drivers).map(obj))
    for (const nd of newDrivers)
      if (str(od.name) === str(nd.name) && !semEqual('io.k8s.api.storage.v1.CSINodeDriver', nd, od)) errs.push(invalid('spec.drivers', goCSINodeDriver(nd), FIELD_IMMUTABLE));
  return errs;
}

// ---- VolumeAttachment ----

const MAX_ATTACHED_METADATA = 256 * 1024;
const MAX_VOLUME_ERROR_MESSAGE = 1024;
const MAX_INT32 = 2147483647;

function cleanPath(p: string): string {
  if (p === '') return '.';
  const c = posix.normalize(p);
  return c.length > 1 && c.endsWith('/') ? c.slice(0, -1) : c;
}

/**
 * ValidatePersistentVolumeSpec with validateInlinePersistentVolumeSpec set (and empty options, so
 * volumeAttributesClassName goes unchecked): the shared part is volumes.ts' check of a spec
 * stripped of what inline volumes check differently, with the inline rules around it in
 * Kubernetes' order.
 */
function validateInlineVolumeSpec(spec: any, path: string): Errs {
  const errs: Errs = [];
  if (spec.claimRef != null) errs.push(forbidden(child(path, 'claimRef'), 'may not be specified in the context of inline volumes'));
  if (Object.keys(obj(spec.capacity)).length !== 0) errs.push(forbidden(child(path, 'capacity'), 'may not be specified in the context of inline volumes'));
  if (spec.csi == null) errs.push(required(child(path, 'csi'), 'has to be specified in the context of inline volumes'));

  const shared: Record<string, any> = { ...spec, capacity: { storage: '1' } };
  for (const k of ['persistentVolumeReclaimPolicy', 'nodeAffinity', 'storageClassName', 'volumeMode', 'volumeAttributesClassName']) delete shared[k];
  const base = validatePersistentVolumeSpec(shared, '', path);
  // access-mode errors come first; the reclaim policy and node affinity rules go between them and the volume sources
  const accessPath = child(path, 'accessModes');
  let split = 0;
  while (split < base.length && base[split]!.field === accessPath) split++;
  errs.push(...base.slice(0, split));
  const policy = str(spec.persistentVolumeReclaimPolicy);
  if (policy && policy !== 'Retain') errs.push(forbidden(child(path, 'persistentVolumeReclaimPolicy'), 'may only be Retain in the context of inline volumes'));
  if (spec.nodeAffinity != null) errs.push(forbidden(child(path, 'nodeAffinity'), 'may not be specified in the context of inline volumes'));
  errs.push(...base.slice(split));
  if (spec.hostPath != null && cleanPath(str(spec.hostPath.path)) === '/' && policy === 'Recycle')
    errs.push(forbidden(child(path, 'persistentVolumeReclaimPolicy'), "may not be 'recycle' for a hostPath mount of '/'"));
  if (str(spec.storageClassName)) errs.push(forbidden(child(path, 'storageClassName'), 'may not be specified in the context of inline volumes'));
  if (isSet(spec.volumeMode) && spec.volumeMode !== 'Filesystem')
    errs.push(forbidden(child(path, 'volumeMode'), 'may not specify volumeMode other than Filesystem in the context of inline volumes'));
  return errs;
}

function validateVolumeError(e: any, path: string): Errs {
  if (e == null) return [];
  const errs: Errs = [];
  // Kubernetes reports the metadata limit here, not the message limit it checks
  if (bytes(str(e.message)) > MAX_VOLUME_ERROR_MESSAGE) errs.push(tooLong(child(path, 'message'), MAX_ATTACHED_METADATA));
  if (isSet(e.errorCode) && Number(e.errorCode) < 0) errs.push(invalid(child(path, 'errorCode'), Number(e.errorCode), inclusiveRangeError(0, MAX_INT32)));
  return errs;
}

/** ValidateVolumeAttachment without its ObjectMeta part (the same for every API version) */
function validateVolumeAttachmentCommon(o: any): Errs {
  const errs: Errs = [];
  const spec = obj(o?.spec);
  const attacher = str(spec.attacher);
  if (!attacher) errs.push(required('spec.attacher'));
  const src = obj(spec.source);
  const hasPV = isSet(src.persistentVolumeName);
  const hasInline = src.inlineVolumeSpec != null;
  if (!hasPV && !hasInline) errs.push(required('spec.source', 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'));
  else if (hasPV && hasInline) errs.push(forbidden('spec.source', 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'));
  else if (hasPV) {
    if (!str(src.persistentVolumeName)) errs.push(required('spec.source.persistentVolumeName', 'must specify non empty persistentVolumeName'));
  } else errs.push(...validateInlineVolumeSpec(obj(src.inlineVolumeSpec), 'spec.source.inlineVolumeSpec'));
  errs.push(...subdomainErrs(str(spec.nodeName), 'spec.nodeName'));

  const status = obj(o?.status);
  let size = 0;
  for (const [k, v] of Object.entries(obj(status.attachmentMetadata))) size += bytes(k) + bytes(str(v));
  if (size > MAX_ATTACHED_METADATA) errs.push(tooLong('status.attachmentMetadata', MAX_ATTACHED_METADATA));
  errs.push(...validateVolumeError(status.attachError, 'status.attachError'));
  errs.push(...validateVolumeError(status.detachError, 'status.detachError'));
  return errs;
}

/** ValidateVolumeAttachmentV1: the stricter checks of a new v1 attachment */
function validateVolumeAttachmentV1(o: any): Errs {
  const spec = obj(o?.spec);
  const errs = validateCSIDriverName(str(spec.attacher), 'spec.attacher');
  const src = obj(spec.source);
  if (isSet(src.persistentVolumeName)) errs.push(...subdomainErrs(str(src.persistentVolumeName), 'spec.source.persistentVolumeName'));
  return errs;
}

/** storage.VolumeAttachmentSpec as %#v prints it */
function goVolumeAttachmentSpec(spec: any): GoRepr {
  const src = obj(spec.source);
  const source = goStruct('storage.VolumeAttachmentSource', [
    ['PersistentVolumeName', goPtr('string', isSet(src.persistentVolumeName))],
    ['InlineVolumeSpec', goPtr('core.PersistentVolumeSpec', src.inlineVolumeSpec != null)],
  ]);
  return goStruct('storage.VolumeAttachmentSpec', [
    ['Attacher', goQuote(str(spec.attacher))],
    ['Source', source.repr],
    ['NodeName', goQuote(str(spec.nodeName))],
  ]);
}

/** VolumeAttachment create: ValidateVolumeAttachment, then ValidateVolumeAttachmentV1 */
export function validateVolumeAttachment(o: any): Errs {
  return [...validateVolumeAttachmentCommon(o), ...validateVolumeAttachmentV1(o)];
}

/**
 * VolumeAttachment update: the strategy runs ValidateVolumeAttachment and then
 * ValidateVolumeAttachmentUpdate, which runs it again (errors come twice) and then forbids any
 * change of the spec.
 */
export function validateVolumeAttachmentUpdate(o: any, old: any): Errs {
  const errs = [...validateVolumeAttachmentCommon(o), ...validateVolumeAttachmentCommon(o)];
  if (!semEqual('io.k8s.api.storage.v1.VolumeAttachmentSpec', obj(o?.spec), obj(old?.spec))) errs.push(invalid('spec', goVolumeAttachmentSpec(obj(o?.spec)), FIELD_IMMUTABLE));
  return errs;
}

/**
 * The status subresource: its strategy inherits the main ValidateUpdate, so the checks are the
 * same; the spec is the old one by then (the strategy copies it), so only the status can fail.
 */
export function validateVolumeAttachmentStatusUpdate(o: any, old: any): Errs {
  return validateVolumeAttachmentUpdate(o, old);
}

// ---- CSIStorageCapacity ----

function validateCSIStorageCapacityWith(o: any, allowInvalidLabelValues: boolean): Errs {
  const c = obj(o);
  const errs = validateLabelSelector(c.nodeTopology ?? null, 'nodeTopology', allowInvalidLabelValues);
  errs.push(...subdomainErrs(str(c.storageClassName), 'storageClassName'));
  if (isSet(c.capacity) && qsign(c.capacity) < 0) errs.push(invalid('capacity', qstr(c.capacity), IS_NEGATIVE));
  return errs;
}

/** CSIStorageCapacity create: ValidateCSIStorageCapacity (label values in nodeTopology checked) */
export function validateCSIStorageCapacity(o: any): Errs {
  return validateCSIStorageCapacityWith(o, false);
}

/**
 * CSIStorageCapacity update: ValidateCSIStorageCapacity (invalid label values in nodeTopology
 * are let through when the old selector already fails validation), then nodeTopology and
 * storageClassName are immutable.
 */
export function validateCSIStorageCapacityUpdate(o: any, old: any): Errs {
  const oldSel = obj(old).nodeTopology ?? null;
  const errs = validateCSIStorageCapacityWith(o, validateLabelSelector(oldSel, 'nodeTopology').length > 0);
  const sel = obj(o).nodeTopology ?? null;
  if (!semEqualRef({ kind: 'object', name: T.labelSelector }, sel, oldSel, true)) errs.push(invalid('nodeTopology', goLabelSelector(sel), FIELD_IMMUTABLE));
  if (str(obj(o).storageClassName) !== str(obj(old).storageClassName)) errs.push(invalid('storageClassName', str(obj(o).storageClassName), FIELD_IMMUTABLE));
  return errs;
}
