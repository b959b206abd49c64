// The built-in kinds the API server serves: one entry per group/version/kind, with its resource
// name, scope, short names, categories, verbs, subresources and selectable fields, as
// Kubernetes' discovery documents them. The fields of each kind are in schema/gen (TypeDecl).
import type { KindDecl, SubresourceDecl } from './model.js';

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const STATUS_VERBS = ['get', 'patch', 'update'];

function typeName(group: string, version: string, kind: string): string {
  if (group === '') return `io.k8s.api.core.${version}.${kind}`;
  // io.k8s.api.<first label of the group>.<version>.<kind>, as the OpenAPI definitions name them
  const pkg = group.replace(/\.k8s\.io$/, '').replace(/\.authorization$/, '').split('.')[0];
  const special: Record<string, string> = {
    'rbac.authorization.k8s.io': 'rbac',
    'apiextensions.k8s.io': 'apiextensions-apiserver.pkg.apis.apiextensions',
  };
  const p = special[group] ?? pkg;
  if (group === 'apiextensions.k8s.io') return `io.k8s.${p}.${version}.${kind}`;
  if (group === 'apiregistration.k8s.io') return `io.k8s.kube-aggregator.pkg.apis.apiregistration.${version}.${kind}`;
  return `io.k8s.api.${p}.${version}.${kind}`;
}

interface KindOpts {
  short?: string[];
  categories?: string[];
  verbs?: string[];
  sub?: SubresourceDecl[];
  fields?: string[];
  storage?: string;
  singular?: string;
  virtual?: boolean;
}

function k(group: string, version: string, kind: string, resource: string, namespaced: boolean, o: KindOpts = {}): KindDecl {
  return {
    group,
    version,
    kind,
    listKind: `${kind}List`,
    resource,
    singular: o.singular ?? kind.toLowerCase(),
    namespaced,
    shortNames: o.short ?? [],
    categories: o.categories ?? [],
    verbs: o.verbs ?? ALL_VERBS,
    type: typeName(group, version, kind),
    subresources: o.sub ?? [],
    selectableFields: o.fields ?? [],
    storagePrefix: o.storage ?? resource,
    virtual: o.virtual,
  };
}

function status(group: string, version: string, kind: string): SubresourceDecl {
  return { name: 'status', group, version, kind, verbs: STATUS_VERBS };
}
function scale(): SubresourceDecl {
  return { name: 'scale', group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: STATUS_VERBS };
}

const pods = k('', 'v1', 'Pod', 'pods', true, {
  short: ['po'],
  categories: ['all'],
  sub: [
    { name: 'attach', group: '', version: 'v1', kind: 'PodAttachOptions', verbs: ['create', 'get'] },
    { name: 'binding', group: '', version: 'v1', kind: 'Binding', verbs: ['create'] },
    { name: 'ephemeralcontainers', group: '', version: 'v1', kind: 'Pod', verbs: STATUS_VERBS },
    { name: 'eviction', group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] },
    { name: 'exec', group: '', version: 'v1', kind: 'PodExecOptions', verbs: ['create', 'get'] },
    { name: 'log', group: '', version: 'v1', kind: 'Pod', verbs: ['get'] },
    { name: 'portforward', group: '', version: 'v1', kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
    { name: 'proxy', group: '', version: 'v1', kind: 'PodProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] },
    { name: 'resize', group: '', version: 'v1', kind: 'Pod', verbs: STATUS_VERBS },
    status('', 'v1', 'Pod'),
  ],
  fields: [
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'spec.hostNetwork',
    'status.phase',
    'status.podIP',
    'status.nominatedNodeName',
  ],
});

export const BUILTIN_KINDS: KindDecl[] = [
  // core/v1
  k('', 'v1', 'Binding', 'bindings', true, { verbs: ['create'], virtual: true }),
  k('', 'v1', 'ComponentStatus', 'componentstatuses', false, { short: ['cs'], verbs: ['get', 'list'], virtual: true }),
  k('', 'v1', 'ConfigMap', 'configmaps', true, { short: ['cm'] }),
  k('', 'v1', 'Endpoints', 'endpoints', true, { short: ['ep'], singular: 'endpoints', storage: 'services/endpoints' }),
  k('', 'v1', 'Event', 'events', true, {
    short: ['ev'],
    fields: [
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'source=source.component',
      'type',
    ],
  }),
  k('', 'v1', 'LimitRange', 'limitranges', true, { short: ['limits'] }),
  k('', 'v1', 'Namespace', 'namespaces', false, {
    short: ['ns'],
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    sub: [{ name: 'finalize', group: '', version: 'v1', kind: 'Namespace', verbs: ['update'] }, status('', 'v1', 'Namespace')],
    fields: ['status.phase'],
  }),
  k('', 'v1', 'Node', 'nodes', false, {
    short: ['no'],
    sub: [
      { name: 'proxy', group: '', version: 'v1', kind: 'NodeProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] },
      status('', 'v1', 'Node'),
    ],
    fields: ['spec.unschedulable'],
    storage: 'minions',
  }),
  k('', 'v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', true, { short: ['pvc'], sub: [status('', 'v1', 'PersistentVolumeClaim')] }),
  k('', 'v1', 'PersistentVolume', 'persistentvolumes', false, { short: ['pv'], sub: [status('', 'v1', 'PersistentVolume')] }),
  pods,
  k('', 'v1', 'PodTemplate', 'podtemplates', true),
  k('', 'v1', 'ReplicationController', 'replicationcontrollers', true, {
    short: ['rc'],
    categories: ['all'],
    sub: [scale(), status('', 'v1', 'ReplicationController')],
    fields: ['status.replicas'],
    storage: 'controllers',
  }),
  k('', 'v1', 'ResourceQuota', 'resourcequotas', true, { short: ['quota'], sub: [status('', 'v1', 'ResourceQuota')] }),
  k('', 'v1', 'Secret', 'secrets', true, { fields: ['type'] }),
  k('', 'v1', 'ServiceAccount', 'serviceaccounts', true, {
    short: ['sa'],
    sub: [{ name: 'token', group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] }],
  }),
  k('', 'v1', 'Service', 'services', true, {
    short: ['svc'],
    categories: ['all'],
    sub: [
      { name: 'proxy', group: '', version: 'v1', kind: 'ServiceProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] },
      status('', 'v1', 'Service'),
    ],
    fields: ['spec.clusterIP', 'spec.type'],
    storage: 'services/specs',
  }),
  // admissionregistration.k8s.io/v1
  k('admissionregistration.k8s.io', 'v1', 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', false, { categories: ['api-extensions'] }),
  k('admissionregistration.k8s.io', 'v1', 'ValidatingAdmissionPolicy', 'validatingadmissionpolicies', false, {
    categories: ['api-extensions'],
    sub: [status('admissionregistration.k8s.io', 'v1', 'ValidatingAdmissionPolicy')],
  }),
  k('admissionregistration.k8s.io', 'v1', 'ValidatingAdmissionPolicyBinding', 'validatingadmissionpolicybindings', false, { categories: ['api-extensions'] }),
  k('admissionregistration.k8s.io', 'v1', 'ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', false, { categories: ['api-extensions'] }),
  // apiextensions.k8s.io/v1
  k('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'customresourcedefinitions', false, {
    short: ['crd', 'crds'],
    categories: ['api-extensions'],
    sub: [status('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition')],
    storage: 'apiextensions.k8s.io/customresourcedefinitions',
  }),
  // apiregistration.k8s.io/v1
  k('apiregistration.k8s.io', 'v1', 'APIService', 'apiservices', false, {
    categories: ['api-extensions'],
    sub: [status('apiregistration.k8s.io', 'v1', 'APIService')],
    storage: 'apiregistration.k8s.io/apiservices',
  }),
  // apps/v1
  k('apps', 'v1', 'ControllerRevision', 'controllerrevisions', true),
  k('apps', 'v1', 'DaemonSet', 'daemonsets', true, { short: ['ds'], categories: ['all'], sub: [status('apps', 'v1', 'DaemonSet')] }),
  k('apps', 'v1', 'Deployment', 'deployments', true, {
    short: ['deploy'],
    categories: ['all'],
    sub: [scale(), status('apps', 'v1', 'Deployment')],
  }),
  k('apps', 'v1', 'ReplicaSet', 'replicasets', true, {
    short: ['rs'],
    categories: ['all'],
    sub: [scale(), status('apps', 'v1', 'ReplicaSet')],
    fields: ['status.replicas'],
  }),
  k('apps', 'v1', 'StatefulSet', 'statefulsets', true, {
    short: ['sts'],
    categories: ['all'],
    sub: [scale(), status('apps', 'v1', 'StatefulSet')],
  }),
  // authentication.k8s.io/v1 and authorization.k8s.io/v1: reviews, answered and never stored
  k('authentication.k8s.io', 'v1', 'SelfSubjectReview', 'selfsubjectreviews', false, { verbs: ['create'], virtual: true }),
  k('authentication.k8s.io', 'v1', 'TokenReview', 'tokenreviews', false, { verbs: ['create'], virtual: true }),
  k('authorization.k8s.io', 'v1', 'LocalSubjectAccessReview', 'localsubjectaccessreviews', true, { verbs: ['create'], virtual: true }),
  k('authorization.k8s.io', 'v1', 'SelfSubjectAccessReview', 'selfsubjectaccessreviews', false, { verbs: ['create'], virtual: true }),
  k('authorization.k8s.io', 'v1', 'SelfSubjectRulesReview', 'selfsubjectrulesreviews', false, { verbs: ['create'], virtual: true }),
  k('authorization.k8s.io', 'v1', 'SubjectAccessReview', 'subjectaccessreviews', false, { verbs: ['create'], virtual: true }),
  // autoscaling/v2
  k('autoscaling', 'v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', true, {
    short: ['hpa'],
    categories: ['all'],
    sub: [status('autoscaling', 'v2', 'HorizontalPodAutoscaler')],
  }),
  // autoscaling/v1: the same stored objects as autoscaling/v2, in the older representation
  // (schema/autoscaling.ts converts); kubectl 1.31 and older create theirs through it
  k('autoscaling', 'v1', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', true, {
    short: ['hpa'],
    categories: ['all'],
    sub: [status('autoscaling', 'v1', 'HorizontalPodAutoscaler')],
  }),
  // batch/v1
  k('batch', 'v1', 'CronJob', 'cronjobs', true, { short: ['cj'], categories: ['all'], sub: [status('batch', 'v1', 'CronJob')] }),
  k('batch', 'v1', 'Job', 'jobs', true, { categories: ['all'], sub: [status('batch', 'v1', 'Job')], fields: ['status.successful'] }),
  // coordination.k8s.io/v1
  k('coordination.k8s.io', 'v1', 'Lease', 'leases', true),
  // discovery.k8s.io/v1
  k('discovery.k8s.io', 'v1', 'EndpointSlice', 'endpointslices', true, { fields: ['addressType'] }),
  // events.k8s.io/v1: the same stored objects as core/v1 events, in another representation
  k('events.k8s.io', 'v1', 'Event', 'events', true, { short: ['ev'], storage: 'events' }),
  // flowcontrol.apiserver.k8s.io/v1
  k('flowcontrol.apiserver.k8s.io', 'v1', 'FlowSchema', 'flowschemas', false, { sub: [status('flowcontrol.apiserver.k8s.io', 'v1', 'FlowSchema')] }),
  k('flowcontrol.apiserver.k8s.io', 'v1', 'PriorityLevelConfiguration', 'prioritylevelconfigurations', false, {
    sub: [status('flowcontrol.apiserver.k8s.io', 'v1', 'PriorityLevelConfiguration')],
  }),
  // node.k8s.io/v1
  k('node.k8s.io', 'v1', 'RuntimeClass', 'runtimeclasses', false),
  // rbac.authorization.k8s.io/v1
  k('rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'clusterrolebindings', false),
  k('rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', false),
  k('rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings', true),
  k('rbac.authorization.k8s.io', 'v1', 'Role', 'roles', true),
  // policy/v1
  k('policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true, { short: ['pdb'], sub: [status('policy', 'v1', 'PodDisruptionBudget')] }),
  // scheduling.k8s.io/v1
  k('scheduling.k8s.io', 'v1', 'PriorityClass', 'priorityclasses', false, { short: ['pc'] }),
  // storage.k8s.io/v1
  k('storage.k8s.io', 'v1', 'CSIDriver', 'csidrivers', false),
  k('storage.k8s.io', 'v1', 'CSINode', 'csinodes', false),
  k('storage.k8s.io', 'v1', 'CSIStorageCapacity', 'csistoragecapacities', true),
  k('storage.k8s.io', 'v1', 'StorageClass', 'storageclasses', false, { short: ['sc'] }),
  k('storage.k8s.io', 'v1', 'VolumeAttachment', 'volumeattachments', false, { sub: [status('storage.k8s.io', 'v1', 'VolumeAttachment')] }),
  // networking.k8s.io/v1
  k('networking.k8s.io', 'v1', 'IngressClass', 'ingressclasses', false),
  k('networking.k8s.io', 'v1', 'Ingress', 'ingresses', true, { short: ['ing'], sub: [status('networking.k8s.io', 'v1', 'Ingress')], storage: 'ingress' }),
  k('networking.k8s.io', 'v1', 'IPAddress', 'ipaddresses', false, { short: ['ip'] }),
  k('networking.k8s.io', 'v1', 'NetworkPolicy', 'networkpolicies', true, { short: ['netpol'] }),
  k('networking.k8s.io', 'v1', 'ServiceCIDR', 'servicecidrs', false, { sub: [status('networking.k8s.io', 'v1', 'ServiceCIDR')] }),
  // certificates.k8s.io/v1
  k('certificates.k8s.io', 'v1', 'CertificateSigningRequest', 'certificatesigningrequests', false, {
    short: ['csr'],
    sub: [
      { name: 'approval', group: 'certificates.k8s.io', version: 'v1', kind: 'CertificateSigningRequest', verbs: STATUS_VERBS },
      status('certificates.k8s.io', 'v1', 'CertificateSigningRequest'),
    ],
    fields: ['spec.signerName'],
  }),
];

/** The order in which groups appear in discovery, as kube-apiserver orders them. */
export const GROUP_ORDER = [
  '',
  'apiregistration.k8s.io',
  'apps',
  'events.k8s.io',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'networking.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'storage.k8s.io',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'scheduling.k8s.io',
  'coordination.k8s.io',
  'node.k8s.io',
  'discovery.k8s.io',
  'flowcontrol.apiserver.k8s.io',
];
