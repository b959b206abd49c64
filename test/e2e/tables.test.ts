// kubectl get for every built-in kind the server serves, with kubectl 1.33 and 1.27: the column
// headers of the default table and of -o wide, with -A, -L and --show-labels, against what a
// Kubernetes 1.33 API server sends. The expected headers below are written from Kubernetes'
// printers (pkg/printers/internalversion/printers.go, AddHandlers: column names in order, `*`
// marking the priority 1 columns that only -o wide shows); kubectl prints them upper-cased.
// Every kind gets one object of its own, labelled, so that one `kubectl get a,b,c -l ...` prints
// one table per kind (the first cell of each row names kind.group/name).
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { startCluster, type Cluster } from './harness.js';

const NS = 'tbl';
const SEL = 'keelson-table-test=yes';

/** kind.group (as kubectl prefixes a name when it prints several kinds) -> the resource and its columns */
const COLUMNS: Record<string, { resource: string; columns: string }> = {
  // core/v1
  pod: { resource: 'pods', columns: 'Name|Ready|Status|Restarts|Age|*IP|*Node|*Nominated Node|*Readiness Gates' },
  podtemplate: { resource: 'podtemplates', columns: 'Name|Containers|Images|Pod Labels' },
  replicationcontroller: { resource: 'replicationcontrollers', columns: 'Name|Desired|Current|Ready|Age|*Containers|*Images|*Selector' },
  service: { resource: 'services', columns: 'Name|Type|Cluster-IP|External-IP|Port(s)|Age|*Selector' },
  endpoints: { resource: 'endpoints', columns: 'Name|Endpoints|Age' },
  node: { resource: 'nodes', columns: 'Name|Status|Roles|Age|Version|*Internal-IP|*External-IP|*OS-Image|*Kernel-Version|*Container-Runtime' },
  namespace: { resource: 'namespaces', columns: 'Name|Status|Age' },
  secret: { resource: 'secrets', columns: 'Name|Type|Data|Age' },
  serviceaccount: { resource: 'serviceaccounts', columns: 'Name|Secrets|Age' },
  persistentvolume: {
    resource: 'persistentvolumes',
    columns: 'Name|Capacity|Access Modes|Reclaim Policy|Status|Claim|StorageClass|VolumeAttributesClass|Reason|Age|*VolumeMode',
  },
  persistentvolumeclaim: { resource: 'persistentvolumeclaims', columns: 'Name|Status|Volume|Capacity|Access Modes|StorageClass|VolumeAttributesClass|Age|*VolumeMode' },
  configmap: { resource: 'configmaps', columns: 'Name|Data|Age' },
  resourcequota: { resource: 'resourcequotas', columns: 'Name|Request|Limit|Age' },
  // no printer in Kubernetes: the default table
  limitrange: { resource: 'limitranges', columns: 'Name|Created At' },
  // apps/v1
  'deployment.apps': { resource: 'deployments.apps', columns: 'Name|Ready|Up-to-date|Available|Age|*Containers|*Images|*Selector' },
  'replicaset.apps': { resource: 'replicasets.apps', columns: 'Name|Desired|Current|Ready|Age|*Containers|*Images|*Selector' },
  'statefulset.apps': { resource: 'statefulsets.apps', columns: 'Name|Ready|Age|*Containers|*Images' },
  'daemonset.apps': { resource: 'daemonsets.apps', columns: 'Name|Desired|Current|Ready|Up-to-date|Available|Node Selector|Age|*Containers|*Images|*Selector' },
  'controllerrevision.apps': { resource: 'controllerrevisions.apps', columns: 'Name|Controller|Revision|Age' },
  // batch/v1
  'job.batch': { resource: 'jobs.batch', columns: 'Name|Status|Completions|Duration|Age|*Containers|*Images|*Selector' },
  'cronjob.batch': { resource: 'cronjobs.batch', columns: 'Name|Schedule|Timezone|Suspend|Active|Last Schedule|Age|*Containers|*Images|*Selector' },
  'horizontalpodautoscaler.autoscaling': { resource: 'horizontalpodautoscalers.autoscaling', columns: 'Name|Reference|Targets|MinPods|MaxPods|Replicas|Age' },
  'lease.coordination.k8s.io': { resource: 'leases.coordination.k8s.io', columns: 'Name|Holder|Age' },
  'endpointslice.discovery.k8s.io': { resource: 'endpointslices.discovery.k8s.io', columns: 'Name|AddressType|Ports|Endpoints|Age' },
  'poddisruptionbudget.policy': { resource: 'poddisruptionbudgets.policy', columns: 'Name|Min Available|Max Unavailable|Allowed Disruptions|Age' },
  'priorityclass.scheduling.k8s.io': { resource: 'priorityclasses.scheduling.k8s.io', columns: 'Name|Value|Global-Default|Age|PreemptionPolicy' },
  'storageclass.storage.k8s.io': { resource: 'storageclasses.storage.k8s.io', columns: 'Name|Provisioner|ReclaimPolicy|VolumeBindingMode|AllowVolumeExpansion|Age' },
  'csidriver.storage.k8s.io': {
    resource: 'csidrivers.storage.k8s.io',
    columns: 'Name|AttachRequired|PodInfoOnMount|StorageCapacity|TokenRequests|RequiresRepublish|Modes|Age',
  },
  'csinode.storage.k8s.io': { resource: 'csinodes.storage.k8s.io', columns: 'Name|Drivers|Age' },
  'csistoragecapacity.storage.k8s.io': { resource: 'csistoragecapacities.storage.k8s.io', columns: 'Name|StorageClassName|Capacity' },
  'volumeattachment.storage.k8s.io': { resource: 'volumeattachments.storage.k8s.io', columns: 'Name|Attacher|PV|Node|Attached|Age' },
  'ingress.networking.k8s.io': { resource: 'ingresses.networking.k8s.io', columns: 'Name|Class|Hosts|Address|Ports|Age' },
  'ingressclass.networking.k8s.io': { resource: 'ingressclasses.networking.k8s.io', columns: 'Name|Controller|Parameters|Age' },
  'networkpolicy.networking.k8s.io': { resource: 'networkpolicies.networking.k8s.io', columns: 'Name|Pod-Selector|Age' },
  'servicecidr.networking.k8s.io': { resource: 'servicecidrs.networking.k8s.io', columns: 'Name|CIDRs|Age' },
  'ipaddress.networking.k8s.io': { resource: 'ipaddresses.networking.k8s.io', columns: 'Name|ParentRef' },
  'runtimeclass.node.k8s.io': { resource: 'runtimeclasses.node.k8s.io', columns: 'Name|Handler|Age' },
  'certificatesigningrequest.certificates.k8s.io': {
    resource: 'certificatesigningrequests.certificates.k8s.io',
    columns: 'Name|Age|SignerName|Requestor|RequestedDuration|Condition',
  },
  'role.rbac.authorization.k8s.io': { resource: 'roles.rbac.authorization.k8s.io', columns: 'Name|Created At' },
  'clusterrole.rbac.authorization.k8s.io': { resource: 'clusterroles.rbac.authorization.k8s.io', columns: 'Name|Created At' },
  'rolebinding.rbac.authorization.k8s.io': { resource: 'rolebindings.rbac.authorization.k8s.io', columns: 'Name|Role|Age|*Users|*Groups|*ServiceAccounts' },
  'clusterrolebinding.rbac.authorization.k8s.io': {
    resource: 'clusterrolebindings.rbac.authorization.k8s.io',
    columns: 'Name|Role|Age|*Users|*Groups|*ServiceAccounts',
  },
  'mutatingwebhookconfiguration.admissionregistration.k8s.io': { resource: 'mutatingwebhookconfigurations.admissionregistration.k8s.io', columns: 'Name|Webhooks|Age' },
  'validatingwebhookconfiguration.admissionregistration.k8s.io': { resource: 'validatingwebhookconfigurations.admissionregistration.k8s.io', columns: 'Name|Webhooks|Age' },
  'validatingadmissionpolicy.admissionregistration.k8s.io': {
    resource: 'validatingadmissionpolicies.admissionregistration.k8s.io',
    columns: 'Name|Validations|ParamKind|Age',
  },
  'validatingadmissionpolicybinding.admissionregistration.k8s.io': {
    resource: 'validatingadmissionpolicybindings.admissionregistration.k8s.io',
    columns: 'Name|PolicyName|ParamRef|Age',
  },
  'customresourcedefinition.apiextensions.k8s.io': { resource: 'customresourcedefinitions.apiextensions.k8s.io', columns: 'Name|Created At' },
  'flowschema.flowcontrol.apiserver.k8s.io': {
    resource: 'flowschemas.flowcontrol.apiserver.k8s.io',
    columns: 'Name|PriorityLevel|MatchingPrecedence|DistinguisherMethod|Age|MissingPL',
  },
  'prioritylevelconfiguration.flowcontrol.apiserver.k8s.io': {
    resource: 'prioritylevelconfigurations.flowcontrol.apiserver.k8s.io',
    columns: 'Name|Type|NominalConcurrencyShares|Queues|HandSize|QueueLengthLimit|Age',
  },
  'apiservice.apiregistration.k8s.io': { resource: 'apiservices.apiregistration.k8s.io', columns: 'Name|Service|Available|Age' },
};
/** Events: Name is a wide column, so they are read on their own */
const EVENT_COLUMNS = 'Last Seen|Type|Reason|Object|*Subobject|*Source|Message|*First Seen|*Count|*Name';
const COMPONENT_STATUS_COLUMNS = 'Name|Status|Message|Error';

const headersOf = (columns: string, wide: boolean) =>
  columns
    .split('|')
    .filter((c) => wide || !c.startsWith('*'))
    .map((c) => c.replace(/^\*/, '').toUpperCase());

const CLUSTER_SCOPED = new Set([
  'node',
  'namespace',
  'persistentvolume',
  'priorityclass.scheduling.k8s.io',
  'storageclass.storage.k8s.io',
  'csidriver.storage.k8s.io',
  'csinode.storage.k8s.io',
  'volumeattachment.storage.k8s.io',
  'ingressclass.networking.k8s.io',
  'servicecidr.networking.k8s.io',
  'ipaddress.networking.k8s.io',
  'runtimeclass.node.k8s.io',
  'certificatesigningrequest.certificates.k8s.io',
  'clusterrole.rbac.authorization.k8s.io',
  'clusterrolebinding.rbac.authorization.k8s.io',
  'mutatingwebhookconfiguration.admissionregistration.k8s.io',
  'validatingwebhookconfiguration.admissionregistration.k8s.io',
  'validatingadmissionpolicy.admissionregistration.k8s.io',
  'validatingadmissionpolicybinding.admissionregistration.k8s.io',
  'customresourcedefinition.apiextensions.k8s.io',
  'flowschema.flowcontrol.apiserver.k8s.io',
  'prioritylevelconfiguration.flowcontrol.apiserver.k8s.io',
  'apiservice.apiregistration.k8s.io',
]);

const podSpec = `containers: [{name: web, image: "nginx:1.27"}]`;
const tpl = (app: string) => `template: {metadata: {labels: {app: ${app}}}, spec: {${podSpec}}}`;

function manifests(csrPEM: string): string {
  const L = `labels: {keelson-table-test: "yes", app: web, tier: front}`;
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
    m('batch/v1', 'CronJob', 'cj1', `spec: {schedule: "*/5 * * * *", jobTemplate: {spec: {template: {spec: {restartPolicy: Never, ${podSpec}}}}}}`),
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
    m('networking.k8s.io/v1', 'IPAddress', '10.96.200.200', 'spec: {parentRef: {group: "", resource: services, namespace: tbl, name: svc1}}', false),
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
    m('apiregistration.k8s.io/v1', 'APIService', 'v1.tables.example.com', 'spec: {group: tables.example.com, version: v1, groupPriorityMinimum: 1000, versionPriority: 15}', false),
    m(
      'v1',
      'Event',
      'ev1',
      'involvedObject: {kind: Pod, namespace: tbl, name: p1, fieldPath: "spec.containers{web}"}\nreason: Pulled\nmessage: pulled the image\ntype: Normal\nsource: {component: kubelet, host: tbl-node}\ncount: 2\nfirstTimestamp: "2026-01-01T00:00:00Z"\nlastTimestamp: "2026-01-01T00:01:00Z"',
    ),
  ].join('\n---\n');
}

let c: Cluster;

before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory'] });
  const csr = spawnSync('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', '/dev/null', '-subj', '/CN=tbl'], { encoding: 'utf8' });
  assert.equal(csr.status, 0, csr.stderr);
  const r = c.kubectl(['create', '-f', '-'], { input: manifests(csr.stdout) });
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
});
after(async () => {
  await c?.stop();
});

interface Block {
  /** kind.group of the rows (from their kind.group/name first cell), or '' for a single kind */
  key: string;
  headers: string[];
  rows: string[][];
}

/** kubectl's output: one block per kind, separated by a blank line; cells split on 3+ spaces (kubectl's tabwriter pads by 3) */
function blocks(out: string, nameColumn = 0): Block[] {
  return out
    .trimEnd()
    .split('\n\n')
    .map((b) => {
      const lines = b.split('\n');
      const headers = lines[0]!.trim().split(/ {3,}/);
      const rows = lines.slice(1).map((l) => l.trim().split(/ {3,}/));
      const first = rows[0]?.[nameColumn] ?? '';
      return { key: first.includes('/') ? first.slice(0, first.lastIndexOf('/')) : '', headers, rows };
    });
}

function run(version: string, args: string[]): string {
  const r = c.kubectl(args, { version });
  assert.equal(r.code, 0, `kubectl ${version} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const namespacedKeys = Object.keys(COLUMNS).filter((k) => !CLUSTER_SCOPED.has(k));
const clusterKeys = Object.keys(COLUMNS).filter((k) => CLUSTER_SCOPED.has(k));

for (const version of ['1.33', '1.27']) {
  describe(`kubectl ${version} get: the columns of every built-in kind`, () => {
    for (const wide of [false, true]) {
      for (const [scope, keys] of [
        ['namespaced', namespacedKeys],
        ['cluster-scoped', clusterKeys],
      ] as const) {
        test(`${scope} kinds${wide ? ', -o wide' : ''}`, () => {
          const args = ['get', keys.map((k) => COLUMNS[k]!.resource).join(','), '-l', SEL];
          if (scope === 'namespaced') args.push('-n', NS);
          if (wide) args.push('-o', 'wide');
          const got = blocks(run(version, args));
          const seen = new Set<string>();
          for (const b of got) {
            const spec = COLUMNS[b.key];
            assert.ok(spec, `a table for an unexpected kind ${b.key}`);
            seen.add(b.key);
            assert.deepEqual(b.headers, headersOf(spec.columns, wide), `${b.key} headers`);
            assert.equal(b.rows.length, 1, `${b.key}: one labelled object`);
          }
          assert.deepEqual([...seen].sort(), [...keys].sort(), 'a table for every kind');
        });
      }
    }

    test('events (Name only with -o wide) and component statuses', () => {
      for (const wide of [false, true]) {
        const ev = blocks(run(version, ['get', 'events', '-n', NS, ...(wide ? ['-o', 'wide'] : [])]));
        assert.equal(ev.length, 1);
        assert.deepEqual(ev[0]!.headers, headersOf(EVENT_COLUMNS, wide));
        const row = ev[0]!.rows[0]!;
        assert.deepEqual(row.slice(1, 4), ['Normal', 'Pulled', 'pod/p1']);
        if (wide) assert.deepEqual(row.slice(4), ['spec.containers{web}', 'kubelet, tbl-node', 'pulled the image', row[7]!, '2', 'ev1']);
      }
      const cs = c.kubectl(['get', 'componentstatuses'], { version });
      assert.equal(cs.code, 0, cs.stderr);
      assert.deepEqual(blocks(cs.stdout)[0]!.headers, headersOf(COMPONENT_STATUS_COLUMNS, false));
    });

    test('-A adds NAMESPACE first; -L adds a column per label key; --show-labels adds LABELS last', () => {
      const some = ['pods', 'deployments.apps', 'configmaps', 'jobs.batch', 'leases.coordination.k8s.io'];
      const all = blocks(run(version, ['get', some.join(','), '-A', '-l', SEL]), 1);
      assert.equal(all.length, some.length);
      for (const b of all) {
        assert.deepEqual(b.headers, ['NAMESPACE', ...headersOf(COLUMNS[b.key]!.columns, false)], b.key);
        assert.equal(b.rows[0]![0], NS);
      }
      const wideAll = blocks(run(version, ['get', 'pods', '-A', '-l', SEL, '-o', 'wide']));
      assert.deepEqual(wideAll[0]!.headers, ['NAMESPACE', ...headersOf(COLUMNS['pod']!.columns, true)]);

      const labelled = blocks(run(version, ['get', some.join(','), '-n', NS, '-l', SEL, '-L', 'app,tier,missing']));
      for (const b of labelled) {
        assert.deepEqual(b.headers, [...headersOf(COLUMNS[b.key]!.columns, false), 'APP', 'TIER', 'MISSING'], b.key);
        assert.deepEqual(b.rows[0]!.slice(-2), ['web', 'front'], `${b.key}: label values (an absent label prints an empty cell)`);
      }
      const shown = blocks(run(version, ['get', some.join(','), '-n', NS, '-l', SEL, '--show-labels']));
      for (const b of shown) {
        assert.deepEqual(b.headers, [...headersOf(COLUMNS[b.key]!.columns, false), 'LABELS'], b.key);
        assert.equal(b.rows[0]!.at(-1), 'app=web,keelson-table-test=yes,tier=front', b.key);
      }
      // cluster-scoped kinds: -A changes nothing, -L and --show-labels work the same
      const nodes = blocks(run(version, ['get', 'nodes', '-A', '-l', SEL, '-L', 'app', '--show-labels']));
      assert.deepEqual(nodes[0]!.headers, [...headersOf(COLUMNS['node']!.columns, false), 'APP', 'LABELS']);
    });
  });
}
