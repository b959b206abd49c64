// kubectl get for every built-in kind the server serves, with kubectl 1.33 and 1.27: the column
// headers of the default table and of -o wide, with -A, -L and --show-labels, against what a
// Kubernetes 1.33 API server sends. The expected headers below are written from Kubernetes'
// printers (pkg/printers/internalversion/printers.go, AddHandlers: column names in order, `*`
// marking the priority 1 columns that only -o wide shows); kubectl prints them upper-cased.
// Every kind gets one object of its own, labelled, so that one `kubectl get a,b,c -l ...` prints
// one table per kind (the first cell of each row names kind.group/name).
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, type Cluster } from './harness.js';
import { everyKindManifest, certificateRequestPEM } from './every-kind.js';

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

let c: Cluster;

before(async () => {
  // (the workload controllers off: the fixtures' tables are what this file checks, and a ReplicaSet's
  // pods and status would change the rows the controllers' own tests check; the endpoints
  // controllers too: the fixture Service's selector would add an Endpoints and an EndpointSlice
  // with its labels next to the fixture's own)
  c = await startCluster({ args: ['--storage-backend=memory', '--controllers=*,-replicaset-controller,-replicationcontroller-controller,-deployment-controller,-statefulset-controller,-endpoints-controller,-endpointslice-controller,-pod-garbage-collector-controller'] });
  const r = c.kubectl(['create', '-f', '-'], { input: everyKindManifest(NS, SEL, certificateRequestPEM()) });
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

    test('the scale subresource prints as autoscaling/v1 Scale: Name, Desired, Available, Age', () => {
      for (const [resource, name, desired] of [
        ['deployments.apps', 'd1', '1'],
        ['replicasets.apps', 'rs1', '1'],
        ['statefulsets.apps', 'sts1', '1'],
        ['replicationcontrollers', 'rc1', '1'],
      ]) {
        for (const wide of [false, true]) {
          const b = blocks(run(version, ['get', resource!, name!, '-n', NS, '--subresource=scale', ...(wide ? ['-o', 'wide'] : [])]));
          assert.deepEqual(b[0]!.headers, ['NAME', 'DESIRED', 'AVAILABLE', 'AGE'], resource);
          assert.deepEqual(b[0]!.rows[0]!.slice(0, 3), [name, desired, '0'], resource);
        }
      }
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
