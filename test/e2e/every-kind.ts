// Test fixture: one object of every built-in kind, for the tests that walk every kind
// (tables.test.ts with kubectl, representations-matrix.test.ts in every encoding).
import { spawnSync } from 'node:child_process';

/** a PEM certificate request (for a CertificateSigningRequest), made by openssl */
export function certificateRequestPEM(): string {
  const r = spawnSync('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', '/dev/null', '-subj', '/CN=tbl'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl req: ${r.stderr}`);
  return r.stdout;
}

const podSpec = `containers: [{name: web, image: "nginx:1.27"}]`;
const tpl = (app: string) => `template: {metadata: {labels: {app: ${app}}}, spec: {${podSpec}}}`;

/**
 * One object of every built-in kind the server serves (besides the virtual review kinds), as one
 * multi-document YAML for `kubectl create -f -`: namespaced ones in `ns`, each labelled with the
 * `key=value` of `selector` and app=web, tier=front. Cluster-scoped names are fixed (tbl-...), so
 * one cluster holds one set.
 */
export function everyKindManifest(NS: string, selector: string, csrPEM: string): string {
  const [key, value] = selector.split('=');
  const L = `labels: {${key}: "${value}", app: web, tier: front}`;
  const m = (apiVersion: string, kind: string, name: string, rest = '', namespaced = true) =>
    `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata: {name: ${name}, ${namespaced ? `namespace: ${NS}, ` : ''}${L}}\n${rest}`;
  return [
    m('v1', 'Namespace', NS, '', false),
    m('v1', 'Pod', 'p1', `spec: {${podSpec}}`),
    m('v1', 'PodTemplate', 'pt1', `template: {metadata: {labels: {app: pt}}, spec: {${podSpec}}}`),
    m('v1', 'ReplicationController', 'rc1', `spec: {replicas: 1, selector: {app: rc}, ${tpl('rc')}}`),
    m('v1', 'Service', 'svc1', 'spec: {selector: {app: web}, ports: [{port: 80}]}'),
    m('v1', 'Endpoints', 'ep1', 'subsets: [{addresses: [{ip: 10.1.2.3}], ports: [{port: 80}]}]'),
    m('v1', 'Node', 'tbl-node', '', false),
    m('v1', 'Secret', 's1', 'stringData: {k: v}'),
    m('v1', 'ServiceAccount', 'sa1'),
    m('v1', 'PersistentVolume', 'pv1', 'spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /tmp/pv1}}', false),
    m('v1', 'PersistentVolumeClaim', 'pvc1', 'spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}'),
    m('v1', 'ConfigMap', 'cm1', 'data: {a: b}'),
    m('v1', 'ResourceQuota', 'rq1', 'spec: {hard: {pods: "10"}}'),
    m('v1', 'LimitRange', 'lr1', 'spec: {limits: [{type: Container, max: {cpu: "2"}}]}'),
    m('apps/v1', 'Deployment', 'd1', `spec: {replicas: 1, selector: {matchLabels: {app: d1}}, ${tpl('d1')}}`),
    m('apps/v1', 'ReplicaSet', 'rs1', `spec: {replicas: 1, selector: {matchLabels: {app: rs1}}, ${tpl('rs1')}}`),
    m('apps/v1', 'StatefulSet', 'sts1', `spec: {serviceName: svc1, replicas: 1, selector: {matchLabels: {app: sts1}}, ${tpl('sts1')}}`),
    m('apps/v1', 'DaemonSet', 'ds1', `spec: {selector: {matchLabels: {app: ds1}}, ${tpl('ds1')}}`),
    m('apps/v1', 'ControllerRevision', 'cr1', 'revision: 1\ndata: {a: 1}'),
    m('batch/v1', 'Job', 'job1', `spec: {template: {spec: {restartPolicy: Never, ${podSpec}}}}`),
    // (suspended: at a five-minute mark it would make a Job and a pod, whose FailedScheduling
    // event lands among the events a test lists)
    m('batch/v1', 'CronJob', 'cj1', `spec: {schedule: "*/5 * * * *", suspend: true, jobTemplate: {spec: {template: {spec: {restartPolicy: Never, ${podSpec}}}}}}`),
    m('autoscaling/v2', 'HorizontalPodAutoscaler', 'hpa1', 'spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: d1}, minReplicas: 1, maxReplicas: 3}'),
    m('coordination.k8s.io/v1', 'Lease', 'lease1', 'spec: {holderIdentity: me}'),
    m('discovery.k8s.io/v1', 'EndpointSlice', 'es1', 'addressType: IPv4\nendpoints: [{addresses: [10.1.2.3]}]\nports: [{port: 80}]'),
    m('policy/v1', 'PodDisruptionBudget', 'pdb1', 'spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}'),
    m('scheduling.k8s.io/v1', 'PriorityClass', 'pc1', 'value: 1000', false),
    m('storage.k8s.io/v1', 'StorageClass', 'sc1', 'provisioner: example.com/none', false),
    m('storage.k8s.io/v1', 'CSIDriver', 'csi.example.com', 'spec: {attachRequired: true}', false),
    m('storage.k8s.io/v1', 'CSINode', 'tbl-node', 'spec: {drivers: [{name: csi.example.com, nodeID: n1}]}', false),
    m('storage.k8s.io/v1', 'CSIStorageCapacity', 'csc1', 'storageClassName: sc1'),
    m('storage.k8s.io/v1', 'VolumeAttachment', 'va1', 'spec: {attacher: csi.example.com, nodeName: tbl-node, source: {persistentVolumeName: pv1}}', false),
    m('networking.k8s.io/v1', 'Ingress', 'ing1', 'spec: {rules: [{host: example.com}]}'),
    m('networking.k8s.io/v1', 'IngressClass', 'ic1', 'spec: {controller: example.com/ingress}', false),
    m('networking.k8s.io/v1', 'NetworkPolicy', 'np1', 'spec: {podSelector: {matchLabels: {app: web}}}'),
    m('networking.k8s.io/v1', 'ServiceCIDR', 'cidr1', 'spec: {cidrs: [10.200.0.0/24]}', false),
    m('networking.k8s.io/v1', 'IPAddress', '10.96.200.200', `spec: {parentRef: {group: "", resource: services, namespace: ${NS}, name: svc1}}`, false),
    m('node.k8s.io/v1', 'RuntimeClass', 'rtc1', 'handler: runc', false),
    m('certificates.k8s.io/v1', 'CertificateSigningRequest', 'csr1', `spec: {signerName: example.com/signer, usages: [digital signature], request: ${Buffer.from(csrPEM).toString('base64')}}`, false),
    m('rbac.authorization.k8s.io/v1', 'Role', 'role1', 'rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]'),
    m('rbac.authorization.k8s.io/v1', 'ClusterRole', 'tbl-crole', 'rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]', false),
    m('rbac.authorization.k8s.io/v1', 'RoleBinding', 'rb1', 'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: role1}\nsubjects: [{kind: User, name: alice}]'),
    m(
      'rbac.authorization.k8s.io/v1',
      'ClusterRoleBinding',
      'tbl-crb',
      'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: tbl-crole}\nsubjects: [{kind: Group, name: devs, apiGroup: rbac.authorization.k8s.io}]',
      false,
    ),
    m(
      'admissionregistration.k8s.io/v1',
      'MutatingWebhookConfiguration',
      'tbl-mwh',
      'webhooks: [{name: m.example.com, clientConfig: {url: "https://127.0.0.1:1/m"}, rules: [{apiGroups: [example.com], apiVersions: [v1], operations: [CREATE], resources: [widgets]}], sideEffects: None, admissionReviewVersions: [v1], failurePolicy: Ignore}]',
      false,
    ),
    m(
      'admissionregistration.k8s.io/v1',
      'ValidatingWebhookConfiguration',
      'tbl-vwh',
      'webhooks: [{name: v.example.com, clientConfig: {url: "https://127.0.0.1:1/v"}, rules: [{apiGroups: [example.com], apiVersions: [v1], operations: [CREATE], resources: [widgets]}], sideEffects: None, admissionReviewVersions: [v1], failurePolicy: Ignore}]',
      false,
    ),
    m(
      'admissionregistration.k8s.io/v1',
      'ValidatingAdmissionPolicy',
      'tbl-vap',
      'spec: {matchConstraints: {resourceRules: [{apiGroups: [example.com], apiVersions: [v1], operations: [CREATE], resources: [widgets]}]}, validations: [{expression: "true"}]}',
      false,
    ),
    m('admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicyBinding', 'tbl-vapb', 'spec: {policyName: tbl-vap, validationActions: [Deny]}', false),
    m(
      'apiextensions.k8s.io/v1',
      'CustomResourceDefinition',
      'widgets.tables.example.com',
      'spec: {group: tables.example.com, scope: Namespaced, names: {plural: widgets, singular: widget, kind: Widget}, versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]}',
      false,
    ),
    m(
      'flowcontrol.apiserver.k8s.io/v1',
      'PriorityLevelConfiguration',
      'tbl-plc',
      'spec: {type: Limited, limited: {nominalConcurrencyShares: 5, limitResponse: {type: Queue, queuing: {queues: 16, handSize: 4, queueLengthLimit: 50}}}}',
      false,
    ),
    m(
      'flowcontrol.apiserver.k8s.io/v1',
      'FlowSchema',
      'tbl-fs',
      'spec: {priorityLevelConfiguration: {name: tbl-plc}, matchingPrecedence: 5000, distinguisherMethod: {type: ByUser}, rules: [{subjects: [{kind: Group, group: {name: devs}}], resourceRules: [{verbs: ["*"], apiGroups: ["*"], resources: ["*"], namespaces: ["*"]}]}]}',
      false,
    ),
    // (not the CRD's group: its APIService is registered by the server itself, as in Kubernetes)
    m('apiregistration.k8s.io/v1', 'APIService', 'v1.fixture.example.com', 'spec: {group: fixture.example.com, version: v1, groupPriorityMinimum: 1000, versionPriority: 15}', false),
    m(
      'v1',
      'Event',
      'ev1',
      `involvedObject: {kind: Pod, namespace: ${NS}, name: p1, fieldPath: "spec.containers{web}"}\nreason: Pulled\nmessage: pulled the image\ntype: Normal\nsource: {component: kubelet, host: tbl-node}\ncount: 2\nfirstTimestamp: "2026-01-01T00:00:00Z"\nlastTimestamp: "2026-01-01T00:01:00Z"`,
    ),
  ].join('\n---\n');
}

