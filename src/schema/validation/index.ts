// Kind-specific validation of the built-in kinds, with Kubernetes 1.33's rules, field paths,
// order and wording (kubectl prints the server's messages as they come). Objects arrive defaulted
// and in the Go shape; the generic store has already checked metadata name, namespace, labels
// and annotations, so validation here adds the rest of ObjectMeta (owner references,
// finalizers) and everything a kind's own ValidateX / ValidateXUpdate functions check.
import type { FieldError } from '../../machinery/errors.js';
import type { NameRule } from '../../machinery/validation.js';
import { forbidden, goStrings, type Errs } from './errs.js';
import { validateMetaExtras } from './meta.js';
import { arr } from './util.js';
import { validatePodCreate, validatePodEphemeralContainersUpdate, validatePodResize, validatePodStatusUpdate, validatePodUpdate } from './pod.js';
import { normalizeService, validateEndpoints, validateService, validateServiceStatusUpdate, validateServiceUpdate } from './service.js';
import {
  eventAsCore,
  validateBinding,
  validateConfigMap,
  validateConfigMapUpdate,
  validateEventCreate,
  validateEventUpdate,
  validateLimitRange,
  validateNamespace,
  validateNamespaceFinalize,
  validateNamespaceStatusUpdate,
  validateNode,
  validateNodeUpdate,
  validatePersistentVolume,
  validatePersistentVolumeClaim,
  validatePersistentVolumeClaimStatusUpdate,
  validatePersistentVolumeClaimUpdate,
  validatePersistentVolumeUpdate,
  validateReplicaCountsStatus,
  validateReplicationControllerSpec,
  validateResourceQuota,
  validateResourceQuotaStatusUpdate,
  validateResourceQuotaUpdate,
  validateSecret,
  validateSecretUpdate,
} from './core.js';
import {
  validateControllerRevision,
  validateControllerRevisionUpdate,
  validateDaemonSet,
  validateDaemonSetStatusUpdate,
  validateDaemonSetUpdate,
  validateDeployment,
  validateDeploymentStatusUpdate,
  validateDeploymentUpdate,
  validateReplicaSet,
  validateReplicaSetStatusUpdate,
  validateReplicaSetUpdate,
  validateStatefulSet,
  validateStatefulSetStatusUpdate,
  validateStatefulSetUpdate,
} from './apps.js';
import { validateWebhookConfiguration, validateWebhookConfigurationUpdate } from './admissionregistration.js';
import {
  ipAddressNameErrors,
  validateIPAddress,
  validateIPAddressUpdate,
  validatePodTemplate,
  validatePodTemplateUpdate,
  validateRuntimeClass,
  validateRuntimeClassUpdate,
  validateServiceCIDR,
  validateServiceCIDRStatusUpdate,
  validateServiceCIDRUpdate,
} from './node-net.js';
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
} from './storage-csi.js';
import {
  validateFlowSchema,
  validateFlowSchemaStatusUpdate,
  validateFlowSchemaUpdate,
  validatePriorityLevelConfiguration,
  validatePriorityLevelConfigurationStatusUpdate,
  validatePriorityLevelConfigurationUpdate,
} from './flowcontrol.js';
import { validateHorizontalPodAutoscaler, validateHorizontalPodAutoscalerStatusUpdate, validateHorizontalPodAutoscalerUpdate } from './autoscaling.js';
import { validateCronJob, validateCronJobUpdate, validateJob, validateJobStatusUpdate, validateJobUpdate } from './batch.js';
import { validateIngressClass, validateIngressClassUpdate, validateIngressCreate, validateIngressStatusUpdate, validateIngressUpdate, validateNetworkPolicy } from './networking.js';
import {
  validateCSR,
  validateEndpointSlice,
  validateEndpointSliceUpdate,
  validateLease,
  validatePodDisruptionBudget,
  validatePodDisruptionBudgetStatusUpdate,
  validatePriorityClass,
  validatePriorityClassUpdate,
  validateRole,
  validateRoleBinding,
  validateRoleBindingUpdate,
  validateStorageClass,
  validateStorageClassUpdate,
} from './other.js';

type Create = (obj: any) => Errs;
type Update = (obj: any, old: any) => Errs;

interface KindRules {
  create?: Create;
  update?: Update;
  status?: Update;
  /** the kind's validation does not go through ValidateObjectMeta (legacy events, bindings) */
  noMeta?: boolean;
}

const RC: KindRules = {
  create: (o) => validateReplicationControllerSpec(o.spec ?? {}),
  // the strategy validates the new object and then the update, which validates the spec again
  update: (o) => [...validateReplicationControllerSpec(o.spec ?? {}), ...validateReplicationControllerSpec(o.spec ?? {})],
  status: (o) => validateReplicaCountsStatus(o.status ?? {}, []),
};

const RULES: Record<string, KindRules> = {
  // core/v1
  '/Pod': { create: validatePodCreate, update: validatePodUpdate, status: validatePodStatusUpdate },
  '/Service': {
    create: (o) => validateService(normalizeService(o)),
    update: (o, old) => validateServiceUpdate(normalizeService(o, old), old),
    status: validateServiceStatusUpdate,
  },
  '/ConfigMap': { create: validateConfigMap, update: validateConfigMapUpdate },
  '/Secret': { create: validateSecret, update: validateSecretUpdate },
  '/Namespace': { create: validateNamespace, update: () => [], status: validateNamespaceStatusUpdate },
  '/Node': { create: validateNode, update: (o, old) => [...validateNode(o), ...validateNodeUpdate(o, old)], status: validateNodeUpdate },
  '/PersistentVolume': { create: validatePersistentVolume, update: validatePersistentVolumeUpdate, status: () => [] },
  '/PersistentVolumeClaim': { create: validatePersistentVolumeClaim, update: validatePersistentVolumeClaimUpdate, status: validatePersistentVolumeClaimStatusUpdate },
  '/Endpoints': { create: validateEndpoints, update: validateEndpoints },
  '/LimitRange': { create: validateLimitRange, update: validateLimitRange },
  '/ResourceQuota': { create: validateResourceQuota, update: validateResourceQuotaUpdate, status: validateResourceQuotaStatusUpdate },
  '/ServiceAccount': { create: () => [], update: () => [] },
  '/ReplicationController': RC,
  '/Event': { create: (o) => validateEventCreate(o, false), update: (o, old) => validateEventUpdate(o, old, false), noMeta: true },
  '/Binding': { create: validateBinding, noMeta: true },
  // events.k8s.io/v1 (the same objects as core/v1 events, validated strictly)
  'events.k8s.io/Event': {
    create: (o) => validateEventCreate(eventAsCore(o), true),
    update: (o, old) => validateEventUpdate(eventAsCore(o), eventAsCore(old), true),
  },
  // apps/v1
  'apps/Deployment': { create: validateDeployment, update: validateDeploymentUpdate, status: validateDeploymentStatusUpdate },
  'apps/ReplicaSet': { create: validateReplicaSet, update: validateReplicaSetUpdate, status: validateReplicaSetStatusUpdate },
  'apps/StatefulSet': { create: validateStatefulSet, update: validateStatefulSetUpdate, status: validateStatefulSetStatusUpdate },
  'apps/DaemonSet': { create: validateDaemonSet, update: validateDaemonSetUpdate, status: validateDaemonSetStatusUpdate },
  'apps/ControllerRevision': { create: validateControllerRevision, update: validateControllerRevisionUpdate },
  // core/v1 PodTemplate, node.k8s.io/v1 RuntimeClass, networking.k8s.io/v1 IPAddress and ServiceCIDR
  '/PodTemplate': { create: validatePodTemplate, update: validatePodTemplateUpdate },
  'node.k8s.io/RuntimeClass': { create: validateRuntimeClass, update: (o, old) => [...validateRuntimeClass(o), ...validateRuntimeClassUpdate(o, old)] },
  'networking.k8s.io/IPAddress': { create: validateIPAddress, update: (o, old) => [...validateIPAddress(o), ...validateIPAddressUpdate(o, old)] },
  'networking.k8s.io/ServiceCIDR': { create: validateServiceCIDR, update: validateServiceCIDRUpdate, status: validateServiceCIDRStatusUpdate },
  // storage.k8s.io/v1: the CSI kinds (each function is the whole check of its operation)
  'storage.k8s.io/CSIDriver': { create: validateCSIDriver, update: validateCSIDriverUpdate },
  'storage.k8s.io/CSINode': { create: validateCSINode, update: validateCSINodeUpdate },
  'storage.k8s.io/VolumeAttachment': { create: validateVolumeAttachment, update: validateVolumeAttachmentUpdate, status: validateVolumeAttachmentStatusUpdate },
  'storage.k8s.io/CSIStorageCapacity': { create: validateCSIStorageCapacity, update: validateCSIStorageCapacityUpdate },
  // flowcontrol.apiserver.k8s.io/v1
  'flowcontrol.apiserver.k8s.io/FlowSchema': { create: validateFlowSchema, update: validateFlowSchemaUpdate, status: validateFlowSchemaStatusUpdate },
  'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration': {
    create: validatePriorityLevelConfiguration,
    update: validatePriorityLevelConfigurationUpdate,
    status: validatePriorityLevelConfigurationStatusUpdate,
  },
  // autoscaling/v2 and v1 (a v1 object is validated in its stored v2 form)
  'autoscaling/HorizontalPodAutoscaler': { create: validateHorizontalPodAutoscaler, update: validateHorizontalPodAutoscalerUpdate, status: validateHorizontalPodAutoscalerStatusUpdate },
  // batch/v1
  'batch/Job': { create: validateJob, update: validateJobUpdate, status: validateJobStatusUpdate },
  'batch/CronJob': { create: validateCronJob, update: validateCronJobUpdate, status: () => [] },
  // networking.k8s.io/v1
  'networking.k8s.io/Ingress': { create: validateIngressCreate, update: validateIngressUpdate, status: validateIngressStatusUpdate },
  'networking.k8s.io/IngressClass': { create: validateIngressClass, update: validateIngressClassUpdate },
  'networking.k8s.io/NetworkPolicy': { create: validateNetworkPolicy, update: validateNetworkPolicy },
  // admissionregistration.k8s.io/v1
  'admissionregistration.k8s.io/MutatingWebhookConfiguration': { create: (o) => validateWebhookConfiguration(o, true), update: (o, old) => validateWebhookConfigurationUpdate(o, old, true) },
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration': { create: (o) => validateWebhookConfiguration(o, false), update: (o, old) => validateWebhookConfigurationUpdate(o, old, false) },
  // rbac.authorization.k8s.io/v1
  'rbac.authorization.k8s.io/Role': { create: (o) => validateRole(o, true), update: (o) => validateRole(o, true) },
  'rbac.authorization.k8s.io/ClusterRole': { create: (o) => validateRole(o, false), update: (o) => validateRole(o, false) },
  'rbac.authorization.k8s.io/RoleBinding': { create: (o) => validateRoleBinding(o, true), update: (o, old) => validateRoleBindingUpdate(o, old, true) },
  'rbac.authorization.k8s.io/ClusterRoleBinding': { create: (o) => validateRoleBinding(o, false), update: (o, old) => validateRoleBindingUpdate(o, old, false) },
  // policy/v1
  'policy/PodDisruptionBudget': { create: validatePodDisruptionBudget, update: validatePodDisruptionBudget, status: validatePodDisruptionBudgetStatusUpdate },
  // scheduling.k8s.io/v1
  'scheduling.k8s.io/PriorityClass': { create: validatePriorityClass, update: (o, old) => [...validatePriorityClass(o), ...validatePriorityClassUpdate(o, old)] },
  // storage.k8s.io/v1
  'storage.k8s.io/StorageClass': { create: validateStorageClass, update: (o, old) => [...validateStorageClass(o), ...validateStorageClassUpdate(o, old)] },
  // discovery.k8s.io/v1
  'discovery.k8s.io/EndpointSlice': { create: (o) => validateEndpointSlice(o, false), update: validateEndpointSliceUpdate },
  // coordination.k8s.io/v1
  'coordination.k8s.io/Lease': { create: validateLease, update: validateLease },
  // certificates.k8s.io/v1
  'certificates.k8s.io/CertificateSigningRequest': {
    create: (o) => validateCSR(o),
    update: (o, old) => validateCSR(o, old),
    status: (o, old) => validateCSR(o, old, { allowSettingCertificate: true }),
  },
};

function rulesFor(group: string, kind: string): KindRules {
  return RULES[`${group}/${kind}`] ?? {};
}

/** ValidateObjectMetaUpdate's finalizer rule: none may be added once deletion has begun */
function validateNoNewFinalizers(obj: any, old: any): Errs {
  if (!old?.metadata?.deletionTimestamp) return [];
  const oldSet = new Set(arr<string>(old.metadata.finalizers));
  const extra = [...new Set(arr<string>(obj?.metadata?.finalizers).filter((f) => !oldSet.has(f)))].sort();
  if (extra.length === 0) return [];
  return [forbidden('metadata.finalizers', `no new finalizers can be added if the object is being deleted, found new finalizers ${goStrings(extra).repr}`)];
}

/** kind-specific validation of a new object (metadata name/namespace/labels/annotations are checked by the server already) */
export function validateCreate(group: string, kind: string, obj: any): FieldError[] {
  const r = rulesFor(group, kind);
  const errs: Errs = r.noMeta ? [] : validateMetaExtras(obj);
  if (r.create) errs.push(...r.create(obj ?? {}));
  return errs;
}

/** kind-specific validation of an update of the main resource, including immutable fields */
export function validateUpdate(group: string, kind: string, obj: any, old: any): FieldError[] {
  const r = rulesFor(group, kind);
  const errs: Errs = r.noMeta ? [] : [...validateMetaExtras(obj), ...validateNoNewFinalizers(obj, old)];
  const fn = r.update ?? r.create;
  if (fn) errs.push(...fn(obj ?? {}, old ?? {}));
  return errs;
}

/** updates through the status subresource */
export function validateStatusUpdate(group: string, kind: string, obj: any, old: any): FieldError[] {
  const r = rulesFor(group, kind);
  const errs: Errs = r.noMeta ? [] : [...validateMetaExtras(obj), ...validateNoNewFinalizers(obj, old)];
  if (r.status) errs.push(...r.status(obj ?? {}, old ?? {}));
  return errs;
}

/**
 * Updates through other subresources that change the main object: a Namespace's `finalize`,
 * a CertificateSigningRequest's `approval`, and a Pod's `ephemeralcontainers` and `resize`.
 */
export function validateSubresourceUpdate(group: string, kind: string, subresource: string, obj: any, old: any): FieldError[] {
  const errs: Errs = [...validateMetaExtras(obj), ...validateNoNewFinalizers(obj, old)];
  if (group === '' && kind === 'Namespace' && subresource === 'finalize') errs.push(...validateNamespaceFinalize(obj));
  else if (group === 'certificates.k8s.io' && kind === 'CertificateSigningRequest' && subresource === 'approval') errs.push(...validateCSR(obj, old, { allowSettingApproval: true }));
  else if (group === '' && kind === 'Pod' && subresource === 'ephemeralcontainers') errs.push(...validatePodEphemeralContainersUpdate(obj, old));
  else if (group === '' && kind === 'Pod' && subresource === 'resize') errs.push(...validatePodResize(obj, old));
  else if (subresource === 'status') return validateStatusUpdate(group, kind, obj, old);
  return errs;
}

const NAME_RULES: Record<string, NameRule> = {
  '/Namespace': 'label',
  '/Service': 'dns1035',
  '/Event': 'path',
  'apps/StatefulSet': 'label',
  'rbac.authorization.k8s.io/Role': 'path',
  'rbac.authorization.k8s.io/ClusterRole': 'path',
  'rbac.authorization.k8s.io/RoleBinding': 'path',
  'rbac.authorization.k8s.io/ClusterRoleBinding': 'path',
  'certificates.k8s.io/CertificateSigningRequest': 'path',
  // (its own check, for the name and the generateName prefix alike)
  'networking.k8s.io/IPAddress': (name) => ipAddressNameErrors(name),
};

/** the object-name rule of a kind: 'subdomain' | 'label' | 'dns1035' | 'path' or its own check (Namespace: label, Service: dns1035, RBAC: path segment, IPAddress: an IP address, ...) */
export function nameRuleFor(group: string, kind: string): NameRule {
  return NAME_RULES[`${group}/${kind}`] ?? 'subdomain';
}
