// Server-side Table printing (the `application/json;as=Table;g=meta.k8s.io;v=v1` representation)
// for every built-in kind.
//
// kubectl prints the columns and cells of a Table verbatim, so each printer reproduces what a
// Kubernetes 1.33 API server sends for its kind: the same columns in the same order with the same
// names, types, formats and priorities (priority 1 columns appear only with `-o wide`), and cells
// computed by the same rules. The server always renders the wide form; kubectl drops the priority
// 1 columns itself. Column descriptions are our own words.
//
// Objects are plain JS values in their JSON form. `now` (ms since the epoch) is the moment ages
// are measured from, so a whole table is rendered against one clock.
import { nameOf, rfc3339 } from './format.js';
import { podPrinter } from './pod.js';
import {
  configMapPrinter,
  endpointsPrinter,
  eventPrinter,
  eventsV1EventPrinter,
  namespacePrinter,
  nodePrinter,
  persistentVolumeClaimPrinter,
  persistentVolumePrinter,
  podTemplatePrinter,
  replicationControllerPrinter,
  resourceQuotaPrinter,
  secretPrinter,
  serviceAccountPrinter,
  servicePrinter,
} from './core.js';
import {
  controllerRevisionPrinter,
  cronJobPrinter,
  daemonSetPrinter,
  deploymentPrinter,
  jobPrinter,
  replicaSetPrinter,
  statefulSetPrinter,
} from './workloads.js';
import {
  apiServicePrinter,
  certificateSigningRequestPrinter,
  clusterRoleBindingPrinter,
  csiDriverPrinter,
  csiNodePrinter,
  csiStorageCapacityPrinter,
  endpointSlicePrinter,
  flowSchemaPrinter,
  horizontalPodAutoscalerPrinter,
  ingressClassPrinter,
  ingressPrinter,
  ipAddressPrinter,
  leasePrinter,
  componentStatusPrinter,
  scalePrinter,
  mutatingAdmissionPolicyBindingPrinter,
  mutatingAdmissionPolicyPrinter,
  mutatingWebhookConfigurationPrinter,
  networkPolicyPrinter,
  podDisruptionBudgetPrinter,
  priorityClassPrinter,
  priorityLevelConfigurationPrinter,
  roleBindingPrinter,
  runtimeClassPrinter,
  serviceCIDRPrinter,
  storageClassPrinter,
  validatingAdmissionPolicyBindingPrinter,
  validatingAdmissionPolicyPrinter,
  validatingWebhookConfigurationPrinter,
  volumeAttachmentPrinter,
} from './other.js';
import { col, NAME_COLUMN, type Printer } from './types.js';

export type { ColumnDefinition, Printer, RowCondition } from './types.js';
export { humanDuration, recordTimes, TIME_MARK } from './format.js';
export { canonicalQuantity } from './quantity.js';
export { summarizePod } from './pod.js';

/**
 * The table of a kind without a printer of its own, as Kubernetes' default table convertor makes
 * it: NAME and CREATED AT, the creation time in RFC 3339 UTC.
 */
export const DEFAULT_PRINTER: Printer = {
  columns: [NAME_COLUMN, col('Created At', 'date', 'When the object was created, from metadata.creationTimestamp.')],
  cells: (obj: any) => [nameOf(obj), rfc3339(obj?.metadata?.creationTimestamp)],
};

/** group -> kind -> printer. Kinds listed with DEFAULT_PRINTER have no printer in Kubernetes either. */
const PRINTERS: Record<string, Record<string, Printer>> = {
  '': {
    Pod: podPrinter,
    PodTemplate: podTemplatePrinter,
    Node: nodePrinter,
    Service: servicePrinter,
    Endpoints: endpointsPrinter,
    Event: eventPrinter,
    Namespace: namespacePrinter,
    ConfigMap: configMapPrinter,
    Secret: secretPrinter,
    ServiceAccount: serviceAccountPrinter,
    PersistentVolume: persistentVolumePrinter,
    PersistentVolumeClaim: persistentVolumeClaimPrinter,
    ReplicationController: replicationControllerPrinter,
    ResourceQuota: resourceQuotaPrinter,
    LimitRange: DEFAULT_PRINTER,
    ComponentStatus: componentStatusPrinter,
  },
  apps: {
    Deployment: deploymentPrinter,
    ReplicaSet: replicaSetPrinter,
    StatefulSet: statefulSetPrinter,
    DaemonSet: daemonSetPrinter,
    ControllerRevision: controllerRevisionPrinter,
  },
  batch: {
    Job: jobPrinter,
    CronJob: cronJobPrinter,
  },
  autoscaling: {
    HorizontalPodAutoscaler: horizontalPodAutoscalerPrinter,
    // the scale subresource of the workloads
    Scale: scalePrinter,
  },
  'coordination.k8s.io': {
    Lease: leasePrinter,
  },
  'discovery.k8s.io': {
    EndpointSlice: endpointSlicePrinter,
  },
  'events.k8s.io': {
    Event: eventsV1EventPrinter,
  },
  'rbac.authorization.k8s.io': {
    Role: DEFAULT_PRINTER,
    ClusterRole: DEFAULT_PRINTER,
    RoleBinding: roleBindingPrinter,
    ClusterRoleBinding: clusterRoleBindingPrinter,
  },
  policy: {
    PodDisruptionBudget: podDisruptionBudgetPrinter,
  },
  'scheduling.k8s.io': {
    PriorityClass: priorityClassPrinter,
  },
  'storage.k8s.io': {
    StorageClass: storageClassPrinter,
    CSIDriver: csiDriverPrinter,
    CSINode: csiNodePrinter,
    CSIStorageCapacity: csiStorageCapacityPrinter,
    VolumeAttachment: volumeAttachmentPrinter,
  },
  'networking.k8s.io': {
    Ingress: ingressPrinter,
    IngressClass: ingressClassPrinter,
    NetworkPolicy: networkPolicyPrinter,
    ServiceCIDR: serviceCIDRPrinter,
    IPAddress: ipAddressPrinter,
  },
  'certificates.k8s.io': {
    CertificateSigningRequest: certificateSigningRequestPrinter,
  },
  'admissionregistration.k8s.io': {
    MutatingWebhookConfiguration: mutatingWebhookConfigurationPrinter,
    ValidatingWebhookConfiguration: validatingWebhookConfigurationPrinter,
    ValidatingAdmissionPolicy: validatingAdmissionPolicyPrinter,
    ValidatingAdmissionPolicyBinding: validatingAdmissionPolicyBindingPrinter,
    MutatingAdmissionPolicy: mutatingAdmissionPolicyPrinter,
    MutatingAdmissionPolicyBinding: mutatingAdmissionPolicyBindingPrinter,
  },
  'apiextensions.k8s.io': {
    CustomResourceDefinition: DEFAULT_PRINTER,
  },
  'node.k8s.io': {
    RuntimeClass: runtimeClassPrinter,
  },
  'flowcontrol.apiserver.k8s.io': {
    FlowSchema: flowSchemaPrinter,
    PriorityLevelConfiguration: priorityLevelConfigurationPrinter,
  },
  'apiregistration.k8s.io': {
    APIService: apiServicePrinter,
  },
};

/**
 * The printer of a built-in kind, or undefined for a kind this package does not know (callers then
 * use DEFAULT_PRINTER, as Kubernetes does for kinds without a printer). Kinds whose Kubernetes
 * table is the default one (Role, ClusterRole, LimitRange, CustomResourceDefinition) return
 * DEFAULT_PRINTER itself.
 */
export function printerFor(group: string, kind: string): Printer | undefined {
  const byKind = PRINTERS[group];
  return byKind !== undefined && Object.prototype.hasOwnProperty.call(byKind, kind) ? byKind[kind] : undefined;
}

/** Every (group, kind) with a printer, for discovery and for tests. */
export function printedKinds(): { group: string; kind: string }[] {
  const out: { group: string; kind: string }[] = [];
  for (const [group, byKind] of Object.entries(PRINTERS)) for (const kind of Object.keys(byKind)) out.push({ group, kind });
  return out;
}
