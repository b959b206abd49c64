// What the PV controller (controllers/pvbinder.ts) and the scheduler's VolumeBinding plugin
// (scheduler/volumebinding.ts) both know of PersistentVolumes and their claims, written once as
// Kubernetes writes it once in k8s.io/component-helpers/storage/volume (helpers.go,
// pv_helpers.go): the annotations of a binding, a claim's and a volume's class, whether a volume
// is bound to a claim, the volume-mode and access-mode checks, and FindMatchingVolume, the volume
// a claim gets, on either path.
//
// FindMatchingVolume's node is the scheduler's: the node-selector matcher lives with the scheduler
// (scheduler/framework.ts), which this layer cannot import, so the scheduler hands in the question
// CheckNodeAffinity asks of its node (does the volume's required node affinity match its labels).
import { fromLabelSelector, matchLabels } from '../machinery/selectors.js';
import { parseQuantity } from './validation/quantity.js';

/** AnnBindCompleted: on a claim whose binding went through once (the value does not matter) */
export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
/** AnnBoundByController: on either side, the controller (not the user) made the pointer */
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
/** AnnSelectedNode: on a claim the scheduler wants provisioned, the node it chose */
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
/** NotSupportedProvisioner: a StorageClass' provisioner that provisions nothing */
export const NOT_SUPPORTED_PROVISIONER = 'kubernetes.io/no-provisioner';
/** AnnDynamicallyProvisioned: on a provisioned PV, the plugin that made it */
export const ANN_DYNAMICALLY_PROVISIONED = 'pv.kubernetes.io/provisioned-by';
/** AnnMigratedTo: on a claim or volume left to its CSI driver */
export const ANN_MIGRATED_TO = 'pv.kubernetes.io/migrated-to';
/** AnnStorageProvisioner (and its beta): on a claim to provision, the provisioner that should */
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
/** PVDeletionProtectionFinalizer: the external provisioner's */
export const PV_EXTERNAL_FINALIZER = 'external-provisioner.volume.kubernetes.io/finalizer';
/** PVDeletionInTreeProtectionFinalizer: in-tree provisioned volumes with reclaim policy Delete (HonorPVReclaimPolicy) */
export const PV_IN_TREE_FINALIZER = 'kubernetes.io/pv-controller';
/** v1.BetaStorageClassAnnotation: read before spec.storageClassName */
export const ANN_BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';

function annotations(obj: any): Record<string, unknown> {
  return obj?.metadata?.annotations ?? {};
}

/** GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName ('' when none) */
/** the reference to a claim that goes into pv.spec.claimRef (client-go's reference.GetReference) */
export function claimReference(claim: any): any {
  return {
    kind: 'PersistentVolumeClaim',
    namespace: claim.metadata.namespace,
    name: claim.metadata.name,
    uid: claim.metadata.uid,
    apiVersion: 'v1',
    resourceVersion: claim.metadata.resourceVersion,
  };
}

export function claimClass(claim: any): string {
  const a = annotations(claim);
  if (typeof a[ANN_BETA_STORAGE_CLASS] === 'string') return a[ANN_BETA_STORAGE_CLASS];
  return typeof claim?.spec?.storageClassName === 'string' ? claim.spec.storageClassName : '';
}

/** GetPersistentVolumeClass: the beta annotation first, then spec.storageClassName */
export function volumeClass(pv: any): string {
  const a = annotations(pv);
  if (typeof a[ANN_BETA_STORAGE_CLASS] === 'string') return a[ANN_BETA_STORAGE_CLASS];
  return typeof pv?.spec?.storageClassName === 'string' ? pv.spec.storageClassName : '';
}

/** IsVolumeBoundToClaim: pv.spec.claimRef names the claim (and its uid, when the reference has one) */
export function isVolumeBoundToClaim(pv: any, claim: any): boolean {
  const ref = pv?.spec?.claimRef;
  if (!ref) return false;
  if ((ref.name ?? '') !== (claim?.metadata?.name ?? '') || (ref.namespace ?? '') !== (claim?.metadata?.namespace ?? '')) return false;
  return !ref.uid || ref.uid === claim?.metadata?.uid;
}

/** CheckVolumeModeMismatches: the volume modes differ (an unset mode is Filesystem) */
export function volumeModeMismatch(claim: any, pv: any): boolean {
  return (claim?.spec?.volumeMode ?? 'Filesystem') !== (pv?.spec?.volumeMode ?? 'Filesystem');
}

/** CheckAccessModes: the volume has every access mode the claim asks for */
export function accessModesSatisfied(claim: any, pv: any): boolean {
  const have = new Set<string>(Array.isArray(pv?.spec?.accessModes) ? pv.spec.accessModes : []);
  return (Array.isArray(claim?.spec?.accessModes) ? claim.spec.accessModes : []).every((m: string) => have.has(m));
}

/** the storage quantity of a resource list, in nano units (0 when absent or unparseable, as Go's zero Quantity) */
export function storageNano(list: Record<string, unknown> | undefined): bigint {
  return parseQuantity(list?.storage)?.nano ?? 0n;
}

/** the storage a claim requests (spec.resources.requests.storage), in nano units */
export function claimStorageRequest(claim: any): bigint {
  return storageNano(claim?.spec?.resources?.requests);
}

/** a volume's capacity (spec.capacity.storage), in nano units */
export function volumeCapacity(pv: any): bigint {
  return storageNano(pv?.spec?.capacity);
}

/** CheckNodeAffinity(pv, node.Labels) for the node in question: the volume's required node affinity matches it */
export type VolumeNodeCheck = (pv: any) => boolean;

/**
 * FindMatchingVolume, used by the PV controller and the scheduler: a volume pre-bound to the claim
 * wins (none at all when a node is given and the pre-bound volume does not fit it); otherwise the
 * smallest Available volume big enough, of the claim's volume mode and class, not being deleted,
 * whose labels match the claim's selector.
 *   node          the scheduler's path: the volume's node affinity must match the node, and the
 *                 volume must have the claim's access modes. Without it (the PV controller's
 *                 path), access modes are left to the caller (index.go groups volumes by them).
 *   excluded      names of volumes already chosen for other claims of the same pod
 *   delayBinding  without a node: only a pre-bound volume is taken (WaitForFirstConsumer claims
 *                 are bound by the scheduler)
 * An invalid claim selector throws (Kubernetes returns an error; validation keeps it unreachable).
 */
export function findMatchingVolume(
  claim: any,
  volumes: Iterable<any>,
  node: VolumeNodeCheck | undefined,
  excluded: ReadonlySet<string> | undefined,
  delayBinding: boolean,
): any | undefined {
  const requested = claimStorageRequest(claim);
  const requestedClass = claimClass(claim);
  const selector = claim?.spec?.selector ? fromLabelSelector(claim.spec.selector) : null;
  let smallest: any;
  let smallestQty = 0n;
  for (const pv of volumes) {
    if (excluded?.has(String(pv?.metadata?.name ?? ''))) continue;
    if (pv?.spec?.claimRef && !isVolumeBoundToClaim(pv, claim)) continue;
    const qty = volumeCapacity(pv);
    if (qty < requested) continue;
    if (volumeModeMismatch(claim, pv)) continue;
    if (pv?.metadata?.deletionTimestamp) continue;
    const nodeAffinityValid = node ? node(pv) : true;
    if (isVolumeBoundToClaim(pv, claim)) return nodeAffinityValid ? pv : undefined;
    if (!node && delayBinding) continue;
    if (pv?.status?.phase !== 'Available') continue;
    if (selector && !matchLabels(selector, pv?.metadata?.labels ?? {})) continue;
    if (volumeClass(pv) !== requestedClass) continue;
    if (!nodeAffinityValid) continue;
    if (node && !accessModesSatisfied(claim, pv)) continue;
    if (smallest === undefined || smallestQty > qty) {
      smallest = pv;
      smallestQty = qty;
    }
  }
  return smallest;
}
