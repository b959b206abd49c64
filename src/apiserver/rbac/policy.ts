// The bootstrap RBAC policy: the ClusterRoles, ClusterRoleBindings, Roles and RoleBindings every
// cluster starts with, as kube-apiserver's `rbac/bootstrap-roles` post-start hook creates them
// (Kubernetes 1.33 with its default feature gates: no Dynamic Resource Allocation roles). Every
// object carries the label `kubernetes.io/bootstrapping: rbac-defaults` and the annotation
// `rbac.authorization.kubernetes.io/autoupdate: "true"`; rule lists are stored sorted, as the
// API server stores them.
//
// The rules are written here in a small notation of our own: `r(verbs, groups, resources, names?)`
// for resource rules, `u(verbs, urls)` for non-resource rules.
import type { PolicyRule } from './rules.js';

export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.kubernetes.io/autoupdate';
export const BOOTSTRAP_LABEL = 'kubernetes.io/bootstrapping';
export const BOOTSTRAP_LABEL_VALUE = 'rbac-defaults';
const RBAC_API = 'rbac.authorization.k8s.io/v1';
const RBAC = 'rbac.authorization.k8s.io';

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const READ_WRITE = [...READ, ...WRITE];
const EVENTS = ['create', 'patch', 'update'];

const sorted = (l: readonly string[]) => [...new Set(l)].sort();

/** a resource rule (lists sorted, as stored) */
function r(verbs: string | readonly string[], groups: readonly string[], resources: readonly string[], names?: readonly string[]): PolicyRule {
  const rule: PolicyRule = { verbs: sorted(typeof verbs === 'string' ? [verbs] : verbs), apiGroups: sorted(groups), resources: sorted(resources) };
  if (names && names.length) rule.resourceNames = sorted(names);
  return rule;
}

/** a non-resource rule */
function u(verbs: string | readonly string[], urls: readonly string[]): PolicyRule {
  return { verbs: sorted(typeof verbs === 'string' ? [verbs] : verbs), nonResourceURLs: sorted(urls) };
}

/** create, update and patch of events in both event groups (every controller has it) */
const events = () => r(EVENTS, ['', 'events.k8s.io'], ['events']);

interface RoleSpec {
  name: string;
  labels?: Record<string, string>;
  rules?: PolicyRule[];
  aggregate?: string[];
}

function meta(name: string, labels: Record<string, string> = {}, namespace?: string): any {
  const m: any = {
    name,
    labels: { ...labels, [BOOTSTRAP_LABEL]: BOOTSTRAP_LABEL_VALUE },
    annotations: { [AUTOUPDATE_ANNOTATION]: 'true' },
  };
  if (namespace) m.namespace = namespace;
  return m;
}

function clusterRole(s: RoleSpec): any {
  const o: any = { apiVersion: RBAC_API, kind: 'ClusterRole', metadata: meta(s.name, s.labels) };
  if (s.aggregate) o.aggregationRule = { clusterRoleSelectors: s.aggregate.map((k) => ({ matchLabels: { [k]: 'true' } })) };
  // an aggregated role starts without rules: the aggregation controller fills them
  if (s.rules) o.rules = s.rules;
  return o;
}

function role(namespace: string, name: string, rules: PolicyRule[]): any {
  return { apiVersion: RBAC_API, kind: 'Role', metadata: meta(name, {}, namespace), rules };
}

type SubjectSpec = string; // 'User:name' | 'Group:name' | 'SA:namespace/name'

function subject(s: SubjectSpec): any {
  const i = s.indexOf(':');
  const kind = s.slice(0, i);
  const rest = s.slice(i + 1);
  if (kind === 'SA') {
    const [ns, name] = rest.split('/') as [string, string];
    return { kind: 'ServiceAccount', name, namespace: ns };
  }
  return { apiGroup: RBAC, kind, name: rest };
}

function clusterRoleBinding(roleName: string, subjects: SubjectSpec[], name = roleName): any {
  const o: any = { apiVersion: RBAC_API, kind: 'ClusterRoleBinding', metadata: meta(name), roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: roleName } };
  if (subjects.length) o.subjects = subjects.map(subject);
  return o;
}

function roleBinding(namespace: string, name: string, roleName: string, subjects: SubjectSpec[]): any {
  return { apiVersion: RBAC_API, kind: 'RoleBinding', metadata: meta(name, {}, namespace), roleRef: { apiGroup: RBAC, kind: 'Role', name: roleName }, subjects: subjects.map(subject) };
}

const AGG_ADMIN = 'rbac.authorization.k8s.io/aggregate-to-admin';
const AGG_EDIT = 'rbac.authorization.k8s.io/aggregate-to-edit';
const AGG_VIEW = 'rbac.authorization.k8s.io/aggregate-to-view';

/** the rules of the system:node role, also the static rules of the Node authorizer */
export function nodeRules(): PolicyRule[] {
  return [
    r('create', ['authentication.k8s.io'], ['tokenreviews']),
    r('create', ['authorization.k8s.io'], ['subjectaccessreviews', 'localsubjectaccessreviews']),
    r(READ, [''], ['services']),
    r(['create', 'get', 'list', 'watch'], [''], ['nodes']),
    r(['update', 'patch'], [''], ['nodes/status']),
    r(['update', 'patch'], [''], ['nodes']),
    r(EVENTS, [''], ['events']),
    r(READ, [''], ['pods']),
    r(['create', 'delete'], [''], ['pods']),
    r(['update', 'patch'], [''], ['pods/status']),
    r('create', [''], ['pods/eviction']),
    r(READ, [''], ['secrets', 'configmaps']),
    r('get', [''], ['persistentvolumeclaims', 'persistentvolumes']),
    r('get', [''], ['endpoints']),
    r(['create', 'get', 'list', 'watch'], ['certificates.k8s.io'], ['certificatesigningrequests']),
    r(['get', 'create', 'update', 'patch', 'delete'], ['coordination.k8s.io'], ['leases']),
    r('get', ['storage.k8s.io'], ['volumeattachments']),
    r('create', [''], ['serviceaccounts/token']),
    r(['get', 'update', 'patch'], [''], ['persistentvolumeclaims/status']),
    r(READ, ['storage.k8s.io'], ['csidrivers']),
    r(['get', 'create', 'update', 'patch', 'delete'], ['storage.k8s.io'], ['csinodes']),
    r(READ, ['node.k8s.io'], ['runtimeclasses']),
  ];
}

function clusterRoleSpecs(): RoleSpec[] {
  return [
    { name: 'admin', aggregate: [AGG_ADMIN] },
    { name: 'cluster-admin', rules: [r('*', ['*'], ['*']), u('*', ['*'])] },
    { name: 'edit', labels: { [AGG_ADMIN]: 'true' }, aggregate: [AGG_EDIT] },
    {
      name: 'system:aggregate-to-admin',
      labels: { [AGG_ADMIN]: 'true' },
      rules: [r('create', ['authorization.k8s.io'], ['localsubjectaccessreviews']), r(READ_WRITE, [RBAC], ['roles', 'rolebindings'])],
    },
    {
      name: 'system:aggregate-to-edit',
      labels: { [AGG_EDIT]: 'true' },
      rules: [
        r(READ, [''], ['pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward', 'secrets', 'services/proxy']),
        r('impersonate', [''], ['serviceaccounts']),
        r(WRITE, [''], ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward']),
        r('create', [''], ['pods/eviction']),
        r(WRITE, [''], ['replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/proxy', 'persistentvolumeclaims', 'configmaps', 'secrets', 'events']),
        r('create', [''], ['serviceaccounts/token']),
        r(WRITE, ['apps'], ['statefulsets', 'statefulsets/scale', 'daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'replicasets', 'replicasets/scale']),
        r(WRITE, ['autoscaling'], ['horizontalpodautoscalers']),
        r(WRITE, ['batch'], ['jobs', 'cronjobs']),
        r(WRITE, ['extensions'], ['daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'ingresses', 'replicasets', 'replicasets/scale', 'replicationcontrollers/scale', 'networkpolicies']),
        r(WRITE, ['policy'], ['poddisruptionbudgets']),
        r(WRITE, ['networking.k8s.io'], ['networkpolicies', 'ingresses']),
        r(READ_WRITE, ['coordination.k8s.io'], ['leases']),
      ],
    },
    {
      name: 'system:aggregate-to-view',
      labels: { [AGG_VIEW]: 'true' },
      rules: [
        r(READ, [''], ['pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'configmaps']),
        r(READ, [''], ['limitranges', 'resourcequotas', 'bindings', 'events', 'pods/status', 'resourcequotas/status', 'namespaces/status', 'replicationcontrollers/status', 'pods/log']),
        r(READ, [''], ['namespaces']),
        r(READ, ['discovery.k8s.io'], ['endpointslices']),
        r(READ, ['apps'], ['controllerrevisions', 'statefulsets', 'statefulsets/scale', 'statefulsets/status', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status']),
        r(READ, ['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
        r(READ, ['batch'], ['jobs', 'cronjobs', 'cronjobs/status', 'jobs/status']),
        r(READ, ['extensions'], ['daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'ingresses', 'ingresses/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'replicationcontrollers/scale', 'networkpolicies']),
        r(READ, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
        r(READ, ['networking.k8s.io'], ['ingresses', 'ingresses/status', 'networkpolicies']),
      ],
    },
    { name: 'system:auth-delegator', rules: [r('create', ['authentication.k8s.io'], ['tokenreviews']), r('create', ['authorization.k8s.io'], ['subjectaccessreviews'])] },
    {
      name: 'system:basic-user',
      rules: [r('create', ['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']), r('create', ['authentication.k8s.io'], ['selfsubjectreviews'])],
    },
    { name: 'system:certificates.k8s.io:certificatesigningrequests:nodeclient', rules: [r('create', ['certificates.k8s.io'], ['certificatesigningrequests/nodeclient'])] },
    { name: 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', rules: [r('create', ['certificates.k8s.io'], ['certificatesigningrequests/selfnodeclient'])] },
    { name: 'system:certificates.k8s.io:kube-apiserver-client-approver', rules: [r('approve', ['certificates.k8s.io'], ['signers'], ['kubernetes.io/kube-apiserver-client'])] },
    { name: 'system:certificates.k8s.io:kube-apiserver-client-kubelet-approver', rules: [r('approve', ['certificates.k8s.io'], ['signers'], ['kubernetes.io/kube-apiserver-client-kubelet'])] },
    { name: 'system:certificates.k8s.io:kubelet-serving-approver', rules: [r('approve', ['certificates.k8s.io'], ['signers'], ['kubernetes.io/kubelet-serving'])] },
    { name: 'system:certificates.k8s.io:legacy-unknown-approver', rules: [r('approve', ['certificates.k8s.io'], ['signers'], ['kubernetes.io/legacy-unknown'])] },
    {
      name: 'system:discovery',
      rules: [u('get', ['/livez', '/readyz', '/healthz', '/version', '/version/', '/openapi', '/openapi/*', '/api', '/api/*', '/apis', '/apis/*'])],
    },
    { name: 'system:heapster', rules: [r(READ, [''], ['events', 'pods', 'nodes', 'namespaces']), r(READ, ['extensions'], ['deployments'])] },
    { name: 'system:kube-aggregator', rules: [r(READ, [''], ['services', 'endpoints'])] },
    {
      name: 'system:kube-controller-manager',
      rules: [
        events(),
        r('create', ['coordination.k8s.io'], ['leases']),
        r(['get', 'update'], ['coordination.k8s.io'], ['leases'], ['kube-controller-manager']),
        r('create', [''], ['secrets', 'serviceaccounts']),
        r('delete', [''], ['secrets']),
        r('get', [''], ['namespaces', 'secrets', 'serviceaccounts', 'configmaps']),
        r('update', [''], ['secrets', 'serviceaccounts']),
        r('create', ['authentication.k8s.io'], ['tokenreviews']),
        r('create', ['authorization.k8s.io'], ['subjectaccessreviews']),
        r(['list', 'watch'], ['*'], ['*']),
        r('create', [''], ['serviceaccounts/token']),
      ],
    },
    { name: 'system:kube-dns', rules: [r(['list', 'watch'], [''], ['endpoints', 'services'])] },
    {
      name: 'system:kube-scheduler',
      rules: [
        events(),
        r('create', ['coordination.k8s.io'], ['leases']),
        r(['get', 'list', 'update', 'watch'], ['coordination.k8s.io'], ['leases'], ['kube-scheduler']),
        r(READ, [''], ['nodes']),
        r(['get', 'list', 'watch', 'delete'], [''], ['pods']),
        r('create', [''], ['pods/binding', 'bindings']),
        r(['patch', 'update'], [''], ['pods/status']),
        r(READ, [''], ['replicationcontrollers', 'services']),
        r(READ, ['apps', 'extensions'], ['replicasets']),
        r(READ, ['apps'], ['statefulsets']),
        r(READ, ['policy'], ['poddisruptionbudgets']),
        r(READ, [''], ['persistentvolumeclaims', 'persistentvolumes']),
        r('create', ['authentication.k8s.io'], ['tokenreviews']),
        r('create', ['authorization.k8s.io'], ['subjectaccessreviews']),
        r(READ, ['storage.k8s.io'], ['csinodes']),
        r(READ, ['storage.k8s.io'], ['volumeattachments']),
        r(READ, [''], ['namespaces']),
        r(READ, ['storage.k8s.io'], ['csidrivers']),
        r(READ, ['storage.k8s.io'], ['csistoragecapacities']),
      ],
    },
    {
      name: 'system:kubelet-api-admin',
      rules: [r(READ, [''], ['nodes']), r('proxy', [''], ['nodes']), r('*', [''], ['nodes/proxy', 'nodes/metrics', 'nodes/stats', 'nodes/log'])],
    },
    { name: 'system:monitoring', rules: [u('get', ['/metrics', '/metrics/slis', '/livez', '/readyz', '/healthz', '/livez/*', '/readyz/*', '/healthz/*'])] },
    { name: 'system:node', rules: nodeRules() },
    { name: 'system:node-bootstrapper', rules: [r(['create', 'get', 'list', 'watch'], ['certificates.k8s.io'], ['certificatesigningrequests'])] },
    { name: 'system:node-problem-detector', rules: [r('get', [''], ['nodes']), r('patch', [''], ['nodes/status']), events()] },
    {
      name: 'system:node-proxier',
      rules: [r(['list', 'watch'], [''], ['services', 'endpoints']), r(READ, [''], ['nodes']), events(), r(['list', 'watch'], ['discovery.k8s.io'], ['endpointslices'])],
    },
    {
      name: 'system:persistent-volume-provisioner',
      rules: [
        r(['get', 'list', 'watch', 'create', 'delete'], [''], ['persistentvolumes']),
        r(['get', 'list', 'watch', 'update'], [''], ['persistentvolumeclaims']),
        r(READ, ['storage.k8s.io'], ['storageclasses']),
        r('watch', [''], ['events']),
        events(),
      ],
    },
    { name: 'system:public-info-viewer', rules: [u('get', ['/livez', '/readyz', '/healthz', '/version', '/version/'])] },
    {
      name: 'system:service-account-issuer-discovery',
      rules: [u('get', ['/.well-known/openid-configuration', '/.well-known/openid-configuration/', '/openid/v1/jwks', '/openid/v1/jwks/'])],
    },
    {
      name: 'system:volume-scheduler',
      rules: [
        r(['get', 'list', 'patch', 'update', 'watch'], [''], ['persistentvolumes']),
        r(READ, ['storage.k8s.io'], ['storageclasses']),
        r(['get', 'list', 'patch', 'update', 'watch'], [''], ['persistentvolumeclaims']),
      ],
    },
    { name: 'view', labels: { [AGG_EDIT]: 'true' }, aggregate: [AGG_VIEW] },
  ];
}

/** the roles of the controllers of kube-controller-manager, each bound to its service account in kube-system */
function controllerRoleSpecs(): { name: string; rules: PolicyRule[] }[] {
  const c = (name: string, rules: PolicyRule[]) => ({ name: `system:controller:${name}`, rules });
  return [
    c('attachdetach-controller', [
      r(['list', 'watch'], [''], ['persistentvolumes', 'persistentvolumeclaims']),
      r(READ, [''], ['nodes']),
      r(['patch', 'update'], [''], ['nodes/status']),
      r(['list', 'watch'], [''], ['pods']),
      events(),
      r(['get', 'create', 'delete', 'list', 'watch'], ['storage.k8s.io'], ['volumeattachments']),
      r(READ, ['storage.k8s.io'], ['csidrivers']),
      r(READ, ['storage.k8s.io'], ['csinodes']),
    ]),
    c('certificate-controller', [
      r(['get', 'list', 'watch', 'delete'], ['certificates.k8s.io'], ['certificatesigningrequests']),
      r('update', ['certificates.k8s.io'], ['certificatesigningrequests/status', 'certificatesigningrequests/approval']),
      r('approve', ['certificates.k8s.io'], ['signers'], ['kubernetes.io/kube-apiserver-client-kubelet']),
      r('sign', ['certificates.k8s.io'], ['signers'], ['kubernetes.io/legacy-unknown', 'kubernetes.io/kube-apiserver-client', 'kubernetes.io/kube-apiserver-client-kubelet', 'kubernetes.io/kubelet-serving']),
      r('create', ['authorization.k8s.io'], ['subjectaccessreviews']),
      events(),
    ]),
    c('clusterrole-aggregation-controller', [r(['escalate', 'get', 'list', 'watch', 'update', 'patch'], [RBAC], ['clusterroles'])]),
    c('cronjob-controller', [
      r(['get', 'list', 'watch', 'update'], ['batch'], ['cronjobs']),
      r(['get', 'list', 'watch', 'create', 'update', 'delete', 'patch'], ['batch'], ['jobs']),
      r('update', ['batch'], ['cronjobs/status']),
      r('update', ['batch'], ['cronjobs/finalizers']),
      r(['list', 'delete'], [''], ['pods']),
      events(),
    ]),
    c('daemon-set-controller', [
      r(READ, ['extensions', 'apps'], ['daemonsets']),
      r('update', ['extensions', 'apps'], ['daemonsets/status']),
      r('update', ['extensions', 'apps'], ['daemonsets/finalizers']),
      r(['list', 'watch'], [''], ['nodes']),
      r(['list', 'watch', 'create', 'delete', 'patch'], [''], ['pods']),
      r('create', [''], ['pods/binding']),
      r(['get', 'list', 'watch', 'create', 'delete', 'update', 'patch'], ['apps'], ['controllerrevisions']),
      events(),
    ]),
    c('deployment-controller', [
      r(['get', 'list', 'watch', 'update'], ['extensions', 'apps'], ['deployments']),
      r('update', ['extensions', 'apps'], ['deployments/status']),
      r('update', ['extensions', 'apps'], ['deployments/finalizers']),
      r(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], ['apps', 'extensions'], ['replicasets']),
      r(['get', 'list', 'watch', 'update'], [''], ['pods']),
      events(),
    ]),
    c('disruption-controller', [
      r(READ, ['extensions', 'apps'], ['deployments']),
      r(READ, ['apps', 'extensions'], ['replicasets']),
      r(READ, [''], ['replicationcontrollers']),
      r(READ, ['policy'], ['poddisruptionbudgets']),
      r(READ, ['apps'], ['statefulsets']),
      r('update', ['policy'], ['poddisruptionbudgets/status']),
      r(['patch', 'update'], [''], ['pods/status']),
      r('get', ['*'], ['*/scale']),
      events(),
    ]),
    c('endpoint-controller', [
      r(READ, [''], ['services', 'pods']),
      r(['get', 'list', 'create', 'update', 'delete'], [''], ['endpoints']),
      r('create', [''], ['endpoints/restricted']),
      events(),
    ]),
    c('endpointslice-controller', [
      r(READ, [''], ['services', 'pods', 'nodes']),
      r('update', [''], ['services/finalizers']),
      r(['get', 'list', 'create', 'update', 'delete'], ['discovery.k8s.io'], ['endpointslices']),
      events(),
    ]),
    c('endpointslicemirroring-controller', [
      r(READ, [''], ['services', 'endpoints']),
      r('update', [''], ['services/finalizers']),
      r('update', [''], ['endpoints/finalizers']),
      r(['get', 'list', 'create', 'update', 'delete'], ['discovery.k8s.io'], ['endpointslices']),
      events(),
    ]),
    c('ephemeral-volume-controller', [
      r(READ, [''], ['pods']),
      r('update', [''], ['pods/finalizers']),
      r(['get', 'list', 'watch', 'create'], [''], ['persistentvolumeclaims']),
      events(),
    ]),
    c('expand-controller', [
      r(['get', 'list', 'watch', 'update', 'patch'], [''], ['persistentvolumes']),
      r(['update', 'patch'], [''], ['persistentvolumeclaims/status']),
      r(READ, [''], ['persistentvolumeclaims']),
      events(),
      r('get', [''], ['services']),
    ]),
    c('generic-garbage-collector', [r(['get', 'list', 'watch', 'patch', 'update', 'delete'], ['*'], ['*']), events()]),
    c('horizontal-pod-autoscaler', [
      r(READ, ['autoscaling'], ['horizontalpodautoscalers']),
      r('update', ['autoscaling'], ['horizontalpodautoscalers/status']),
      r(['get', 'update'], ['*'], ['*/scale']),
      r('list', [''], ['pods']),
      r('list', ['metrics.k8s.io'], ['pods']),
      r(['get', 'list'], ['custom.metrics.k8s.io'], ['*']),
      r(['get', 'list'], ['external.metrics.k8s.io'], ['*']),
      events(),
    ]),
    c('job-controller', [
      r(['get', 'list', 'watch', 'update', 'patch'], ['batch'], ['jobs']),
      r('update', ['batch'], ['jobs/status']),
      r('update', ['batch'], ['jobs/finalizers']),
      r(['list', 'watch', 'create', 'delete', 'patch'], [''], ['pods']),
      events(),
    ]),
    c('legacy-service-account-token-cleaner', [
      r('get', [''], ['configmaps'], ['kube-apiserver-legacy-service-account-token-tracking']),
      r(['delete', 'patch'], [''], ['secrets']),
    ]),
    c('namespace-controller', [
      r(['get', 'list', 'watch', 'delete'], [''], ['namespaces']),
      r('update', [''], ['namespaces/finalize', 'namespaces/status']),
      r(['get', 'list', 'delete', 'deletecollection'], ['*'], ['*']),
    ]),
    c('node-controller', [
      r(['get', 'list', 'update', 'delete', 'patch'], [''], ['nodes']),
      r(['patch', 'update'], [''], ['nodes/status']),
      r(['patch', 'update'], [''], ['pods/status']),
      r(['list', 'delete', 'get'], [''], ['pods']),
      events(),
    ]),
    c('persistent-volume-binder', [
      r(['get', 'list', 'watch', 'update', 'create', 'delete'], [''], ['persistentvolumes']),
      r('update', [''], ['persistentvolumes/status']),
      r(['get', 'list', 'watch', 'update'], [''], ['persistentvolumeclaims']),
      r('update', [''], ['persistentvolumeclaims/status']),
      r(['list', 'watch', 'get', 'create', 'delete'], [''], ['pods']),
      r(READ, ['storage.k8s.io'], ['storageclasses']),
      r(['list', 'watch'], [''], ['nodes']),
      events(),
      r('watch', [''], ['events']),
      r('get', [''], ['services']),
    ]),
    c('pod-garbage-collector', [r(['list', 'watch', 'delete'], [''], ['pods']), r(['get', 'list'], [''], ['nodes']), r('patch', [''], ['pods/status'])]),
    c('pv-protection-controller', [r(['get', 'list', 'watch', 'update'], [''], ['persistentvolumes']), events()]),
    c('pvc-protection-controller', [r(['get', 'list', 'watch', 'update'], [''], ['persistentvolumeclaims']), r(READ, [''], ['pods']), events()]),
    c('replicaset-controller', [
      r(['get', 'list', 'watch', 'update'], ['apps', 'extensions'], ['replicasets']),
      r('update', ['apps', 'extensions'], ['replicasets/status']),
      r('update', ['apps', 'extensions'], ['replicasets/finalizers']),
      r(['list', 'watch', 'patch', 'create', 'delete'], [''], ['pods']),
      events(),
    ]),
    c('replication-controller', [
      r(['get', 'list', 'watch', 'update'], [''], ['replicationcontrollers']),
      r('update', [''], ['replicationcontrollers/status']),
      r('update', [''], ['replicationcontrollers/finalizers']),
      r(['list', 'watch', 'patch', 'create', 'delete'], [''], ['pods']),
      events(),
    ]),
    c('resourcequota-controller', [r(['list', 'watch'], ['*'], ['*']), r('update', [''], ['resourcequotas/status']), events()]),
    c('root-ca-cert-publisher', [r(['create', 'update'], [''], ['configmaps']), events()]),
    c('route-controller', [r(['list', 'watch'], [''], ['nodes']), r('patch', [''], ['nodes/status']), events()]),
    c('service-account-controller', [r('create', [''], ['serviceaccounts']), events()]),
    c('service-cidrs-controller', [
      r(['get', 'list', 'watch', 'patch', 'update'], ['networking.k8s.io'], ['servicecidrs']),
      r(['patch', 'update'], ['networking.k8s.io'], ['servicecidrs/finalizers']),
      r(['patch', 'update'], ['networking.k8s.io'], ['servicecidrs/status']),
      r(READ, ['networking.k8s.io'], ['ipaddresses']),
      events(),
    ]),
    c('service-controller', [r(READ, [''], ['services']), r(['patch', 'update'], [''], ['services/status']), r(['list', 'watch'], [''], ['nodes']), events()]),
    c('statefulset-controller', [
      r(['list', 'watch'], [''], ['pods']),
      r(READ, ['apps'], ['statefulsets']),
      r('update', ['apps'], ['statefulsets/status']),
      r('update', ['apps'], ['statefulsets/finalizers']),
      r(['get', 'create', 'delete', 'update', 'patch'], [''], ['pods']),
      r(['get', 'create', 'delete', 'update', 'patch', 'list', 'watch'], ['apps'], ['controllerrevisions']),
      r(['get', 'create', 'list', 'watch'], [''], ['persistentvolumeclaims']),
      events(),
      r(['update', 'delete'], [''], ['persistentvolumeclaims']),
      r('update', [''], ['pods/finalizers']),
    ]),
    c('ttl-after-finished-controller', [r(['get', 'list', 'watch', 'delete'], ['batch'], ['jobs']), events()]),
    c('ttl-controller', [r(['update', 'patch', 'list', 'watch'], [''], ['nodes']), events()]),
    c('validatingadmissionpolicy-status-controller', [
      r(READ, ['admissionregistration.k8s.io'], ['validatingadmissionpolicies']),
      r(['get', 'patch', 'update'], ['admissionregistration.k8s.io'], ['validatingadmissionpolicies/status']),
      events(),
    ]),
  ];
}

export interface BootstrapPolicy {
  clusterRoles: any[];
  clusterRoleBindings: any[];
  /** Roles in kube-system and kube-public */
  roles: any[];
  /** RoleBindings in kube-system and kube-public */
  roleBindings: any[];
}

const LEADER_LOCKING = [
  r(['create', 'get', 'list', 'update', 'watch'], ['coordination.k8s.io'], ['leases']),
  r(['create', 'get', 'list', 'update', 'watch'], ['coordination.k8s.io'], ['leasecandidates']),
];

/** the whole bootstrap policy, as fresh objects (callers may change them) */
export function bootstrapPolicy(): BootstrapPolicy {
  const controllers = controllerRoleSpecs();
  const clusterRoles = [...clusterRoleSpecs().map(clusterRole), ...controllers.map((c) => clusterRole({ name: c.name, rules: c.rules }))];
  const clusterRoleBindings = [
    clusterRoleBinding('cluster-admin', ['Group:system:masters']),
    clusterRoleBinding('system:monitoring', ['Group:system:monitoring']),
    clusterRoleBinding('system:discovery', ['Group:system:authenticated']),
    clusterRoleBinding('system:basic-user', ['Group:system:authenticated']),
    clusterRoleBinding('system:public-info-viewer', ['Group:system:authenticated', 'Group:system:unauthenticated']),
    clusterRoleBinding('system:node-proxier', ['User:system:kube-proxy']),
    clusterRoleBinding('system:kube-controller-manager', ['User:system:kube-controller-manager']),
    clusterRoleBinding('system:kube-dns', ['SA:kube-system/kube-dns']),
    clusterRoleBinding('system:kube-scheduler', ['User:system:kube-scheduler']),
    clusterRoleBinding('system:volume-scheduler', ['User:system:kube-scheduler']),
    // kept with no subjects: nodes are authorized by the Node authorizer
    clusterRoleBinding('system:node', []),
    clusterRoleBinding('system:service-account-issuer-discovery', ['Group:system:serviceaccounts']),
    ...controllers.map((c) => clusterRoleBinding(c.name, [`SA:kube-system/${c.name.slice('system:controller:'.length)}`])),
  ];
  const roles = [
    role('kube-public', 'system:controller:bootstrap-signer', [r(READ, [''], ['configmaps']), r('update', [''], ['configmaps'], ['cluster-info']), events()]),
    role('kube-system', 'extension-apiserver-authentication-reader', [r(READ, [''], ['configmaps'], ['extension-apiserver-authentication'])]),
    role('kube-system', 'system::leader-locking-kube-controller-manager', LEADER_LOCKING),
    role('kube-system', 'system::leader-locking-kube-scheduler', LEADER_LOCKING),
    role('kube-system', 'system:controller:bootstrap-signer', [r(READ, [''], ['secrets'])]),
    role('kube-system', 'system:controller:cloud-provider', [r(['create', 'get', 'list', 'watch'], [''], ['configmaps'])]),
    role('kube-system', 'system:controller:token-cleaner', [r(['delete', 'get', 'list', 'watch'], [''], ['secrets']), events()]),
  ];
  const roleBindings = [
    roleBinding('kube-public', 'system:controller:bootstrap-signer', 'system:controller:bootstrap-signer', ['SA:kube-system/bootstrap-signer']),
    roleBinding('kube-system', 'system::extension-apiserver-authentication-reader', 'extension-apiserver-authentication-reader', ['User:system:kube-controller-manager', 'User:system:kube-scheduler']),
    roleBinding('kube-system', 'system::leader-locking-kube-controller-manager', 'system::leader-locking-kube-controller-manager', [
      'User:system:kube-controller-manager',
      'SA:kube-system/kube-controller-manager',
      'SA:kube-system/leader-election-controller',
    ]),
    roleBinding('kube-system', 'system::leader-locking-kube-scheduler', 'system::leader-locking-kube-scheduler', ['User:system:kube-scheduler', 'SA:kube-system/kube-scheduler']),
    roleBinding('kube-system', 'system:controller:bootstrap-signer', 'system:controller:bootstrap-signer', ['SA:kube-system/bootstrap-signer']),
    roleBinding('kube-system', 'system:controller:cloud-provider', 'system:controller:cloud-provider', ['SA:kube-system/cloud-provider']),
    roleBinding('kube-system', 'system:controller:token-cleaner', 'system:controller:token-cleaner', ['SA:kube-system/token-cleaner']),
  ];
  return { clusterRoles, clusterRoleBindings, roles, roleBindings };
}
