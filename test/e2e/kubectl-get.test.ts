// kubectl api-resources and kubectl get in every form, with real kubectl 1.33, 1.32 and 1.27,
// against one keelson server. Expectations are what the same commands print against a
// Kubernetes 1.33 cluster: every header and cell (ages and allocated addresses by pattern), the
// tab-aligned layout kubectl's tabwriter produces, messages and exit codes.
//
// Objects are created once (before()); the tests only read, so the three kubectl versions see
// the same objects. Pods are bound to Node objects the suite creates (no kubelet runs them), so
// no scheduler or node agent can change what the tables show.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, type Cluster, type RunResult } from './harness.js';

const VERSIONS = ['1.33', '1.32', '1.27'] as const;
type Version = (typeof VERSIONS)[number];

let c: Cluster;
const NS = 'kget';
const NS2 = 'kget2';
const NS_EV = 'kget-events';
const NS_EMPTY = 'kget-empty';

// ---------------------------------------------------------------------------------------------
// kubectl's table layout: k8s.io/cli-runtime/pkg/printers/tabwriter.go configures text/tabwriter
// with minwidth 6, padding 3, pad char ' '. A column is as wide as its widest cell plus 3 (at
// least 6); the last cell of a line is not padded.

type Cell = string | RegExp;
interface Table {
  headers: string[];
  rows: string[][];
}

function tabwrite(lines: string[][]): string {
  const n = Math.max(...lines.map((l) => l.length));
  const widths: number[] = [];
  for (let i = 0; i < n - 1; i++) widths[i] = Math.max(6, ...lines.map((l) => (i < l.length - 1 ? l[i].length + 3 : 0)));
  return lines.map((l) => l.map((cell, i) => (i < l.length - 1 ? cell.padEnd(widths[i]) : cell)).join('')).join('\n');
}

/** Split kubectl's human-readable output into its tables (one per resource kind, separated by a
 * blank line), read the cells by the header's column positions, and check the layout is exactly
 * what kubectl's tabwriter produces for those cells. */
function tables(out: string): Table[] {
  assert.ok(out.endsWith('\n'), `output ends with a newline: ${JSON.stringify(out)}`);
  const blocks = out.slice(0, -1).split('\n\n');
  return blocks.map((block) => {
    const lines = block.split('\n');
    const headerLine = lines[0];
    const headers = headerLine.trimEnd().split(/ {3,}/);
    const starts: number[] = [];
    let from = 0;
    for (const h of headers) {
      const at = headerLine.indexOf(h, from);
      assert.ok(at >= 0, `header ${h} in ${JSON.stringify(headerLine)}`);
      starts.push(at);
      from = at + h.length;
    }
    const rows = lines.slice(1).map((line) => starts.map((s, i) => (i + 1 < starts.length ? line.slice(s, starts[i + 1]) : line.slice(s)).trimEnd()));
    assert.equal(tabwrite([headers, ...rows]), block, 'the table is laid out as kubectl lays out these cells');
    return { headers, rows };
  });
}

function table(out: string): Table {
  const t = tables(out);
  assert.equal(t.length, 1, `one table in ${JSON.stringify(out)}`);
  return t[0];
}

/** compare rows; a RegExp cell must match the whole cell */
function assertRows(actual: string[][], expected: Cell[][], msg?: string): void {
  const norm = actual.map((row, r) =>
    row.map((cell, i) => {
      const e = expected[r]?.[i];
      return e instanceof RegExp && e.test(cell) ? String(e) : cell;
    }),
  );
  assert.deepEqual(
    norm,
    expected.map((row) => row.map((e) => (e instanceof RegExp ? String(e) : e))),
    msg,
  );
}

function assertTable(out: string, headers: string[], rows: Cell[][], msg?: string): void {
  const t = table(out);
  assert.deepEqual(t.headers, headers, msg);
  assertRows(t.rows, rows, msg);
}

const AGE = /^(\d+s|\d+m(\d+s)?)$/;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const NODEPORT80 = /^80:(3[0-2]\d{3})\/TCP$/;
const RV = /^\d+$/;
const UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

function ok(r: RunResult, what: string): string {
  assert.equal(r.code, 0, `${what}: exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r.stdout;
}

function kubectl(v: Version | undefined, args: string[], input?: string): RunResult {
  return c.kubectl(args, { version: v, input });
}

/** kubectl that must succeed with nothing on stderr; returns stdout */
function run(v: Version | undefined, args: string[], input?: string): string {
  const r = kubectl(v, args, input);
  ok(r, `kubectl ${args.join(' ')}`);
  assert.equal(r.stderr, '', `kubectl ${args.join(' ')}: nothing on stderr`);
  return r.stdout;
}

// ---------------------------------------------------------------------------------------------
// api-resources as `kubectl api-resources` prints it against a Kubernetes 1.33 kube-apiserver with
// its default APIs (GA groups; preferred versions only) and metrics-server's metrics.k8s.io (which
// keelson server serves itself, as k3s bundles metrics-server): name, short names, group/version,
// namespaced, kind, verbs, categories.

const ALL8 = 'create,delete,deletecollection,get,list,patch,update,watch';
type Res = [name: string, short: string, gv: string, namespaced: boolean, kind: string, verbs: string, categories: string];
const UPSTREAM: Res[] = [
  ['bindings', '', 'v1', true, 'Binding', 'create', ''],
  ['componentstatuses', 'cs', 'v1', false, 'ComponentStatus', 'get,list', ''],
  ['configmaps', 'cm', 'v1', true, 'ConfigMap', ALL8, ''],
  ['endpoints', 'ep', 'v1', true, 'Endpoints', ALL8, ''],
  ['events', 'ev', 'v1', true, 'Event', ALL8, ''],
  ['limitranges', 'limits', 'v1', true, 'LimitRange', ALL8, ''],
  ['namespaces', 'ns', 'v1', false, 'Namespace', 'create,delete,get,list,patch,update,watch', ''],
  ['nodes', 'no', 'v1', false, 'Node', ALL8, ''],
  ['persistentvolumeclaims', 'pvc', 'v1', true, 'PersistentVolumeClaim', ALL8, ''],
  ['persistentvolumes', 'pv', 'v1', false, 'PersistentVolume', ALL8, ''],
  ['pods', 'po', 'v1', true, 'Pod', ALL8, 'all'],
  ['podtemplates', '', 'v1', true, 'PodTemplate', ALL8, ''],
  ['replicationcontrollers', 'rc', 'v1', true, 'ReplicationController', ALL8, 'all'],
  ['resourcequotas', 'quota', 'v1', true, 'ResourceQuota', ALL8, ''],
  ['secrets', '', 'v1', true, 'Secret', ALL8, ''],
  ['serviceaccounts', 'sa', 'v1', true, 'ServiceAccount', ALL8, ''],
  ['services', 'svc', 'v1', true, 'Service', ALL8, 'all'],
  ['mutatingwebhookconfigurations', '', 'admissionregistration.k8s.io/v1', false, 'MutatingWebhookConfiguration', ALL8, 'api-extensions'],
  ['validatingadmissionpolicies', '', 'admissionregistration.k8s.io/v1', false, 'ValidatingAdmissionPolicy', ALL8, 'api-extensions'],
  ['validatingadmissionpolicybindings', '', 'admissionregistration.k8s.io/v1', false, 'ValidatingAdmissionPolicyBinding', ALL8, 'api-extensions'],
  ['validatingwebhookconfigurations', '', 'admissionregistration.k8s.io/v1', false, 'ValidatingWebhookConfiguration', ALL8, 'api-extensions'],
  ['customresourcedefinitions', 'crd,crds', 'apiextensions.k8s.io/v1', false, 'CustomResourceDefinition', ALL8, 'api-extensions'],
  ['apiservices', '', 'apiregistration.k8s.io/v1', false, 'APIService', ALL8, 'api-extensions'],
  ['controllerrevisions', '', 'apps/v1', true, 'ControllerRevision', ALL8, ''],
  ['daemonsets', 'ds', 'apps/v1', true, 'DaemonSet', ALL8, 'all'],
  ['deployments', 'deploy', 'apps/v1', true, 'Deployment', ALL8, 'all'],
  ['replicasets', 'rs', 'apps/v1', true, 'ReplicaSet', ALL8, 'all'],
  ['statefulsets', 'sts', 'apps/v1', true, 'StatefulSet', ALL8, 'all'],
  ['selfsubjectreviews', '', 'authentication.k8s.io/v1', false, 'SelfSubjectReview', 'create', ''],
  ['tokenreviews', '', 'authentication.k8s.io/v1', false, 'TokenReview', 'create', ''],
  ['localsubjectaccessreviews', '', 'authorization.k8s.io/v1', true, 'LocalSubjectAccessReview', 'create', ''],
  ['selfsubjectaccessreviews', '', 'authorization.k8s.io/v1', false, 'SelfSubjectAccessReview', 'create', ''],
  ['selfsubjectrulesreviews', '', 'authorization.k8s.io/v1', false, 'SelfSubjectRulesReview', 'create', ''],
  ['subjectaccessreviews', '', 'authorization.k8s.io/v1', false, 'SubjectAccessReview', 'create', ''],
  ['horizontalpodautoscalers', 'hpa', 'autoscaling/v2', true, 'HorizontalPodAutoscaler', ALL8, 'all'],
  ['cronjobs', 'cj', 'batch/v1', true, 'CronJob', ALL8, 'all'],
  ['jobs', '', 'batch/v1', true, 'Job', ALL8, 'all'],
  ['certificatesigningrequests', 'csr', 'certificates.k8s.io/v1', false, 'CertificateSigningRequest', ALL8, ''],
  ['leases', '', 'coordination.k8s.io/v1', true, 'Lease', ALL8, ''],
  ['endpointslices', '', 'discovery.k8s.io/v1', true, 'EndpointSlice', ALL8, ''],
  ['events', 'ev', 'events.k8s.io/v1', true, 'Event', ALL8, ''],
  ['flowschemas', '', 'flowcontrol.apiserver.k8s.io/v1', false, 'FlowSchema', ALL8, ''],
  ['prioritylevelconfigurations', '', 'flowcontrol.apiserver.k8s.io/v1', false, 'PriorityLevelConfiguration', ALL8, ''],
  ['nodes', '', 'metrics.k8s.io/v1beta1', false, 'NodeMetrics', 'get,list', ''],
  ['pods', '', 'metrics.k8s.io/v1beta1', true, 'PodMetrics', 'get,list', ''],
  ['ingressclasses', '', 'networking.k8s.io/v1', false, 'IngressClass', ALL8, ''],
  ['ingresses', 'ing', 'networking.k8s.io/v1', true, 'Ingress', ALL8, ''],
  ['ipaddresses', 'ip', 'networking.k8s.io/v1', false, 'IPAddress', ALL8, ''],
  ['networkpolicies', 'netpol', 'networking.k8s.io/v1', true, 'NetworkPolicy', ALL8, ''],
  ['servicecidrs', '', 'networking.k8s.io/v1', false, 'ServiceCIDR', ALL8, ''],
  ['runtimeclasses', '', 'node.k8s.io/v1', false, 'RuntimeClass', ALL8, ''],
  ['poddisruptionbudgets', 'pdb', 'policy/v1', true, 'PodDisruptionBudget', ALL8, ''],
  ['clusterrolebindings', '', 'rbac.authorization.k8s.io/v1', false, 'ClusterRoleBinding', ALL8, ''],
  ['clusterroles', '', 'rbac.authorization.k8s.io/v1', false, 'ClusterRole', ALL8, ''],
  ['rolebindings', '', 'rbac.authorization.k8s.io/v1', true, 'RoleBinding', ALL8, ''],
  ['roles', '', 'rbac.authorization.k8s.io/v1', true, 'Role', ALL8, ''],
  ['priorityclasses', 'pc', 'scheduling.k8s.io/v1', false, 'PriorityClass', ALL8, ''],
  ['csidrivers', '', 'storage.k8s.io/v1', false, 'CSIDriver', ALL8, ''],
  ['csinodes', '', 'storage.k8s.io/v1', false, 'CSINode', ALL8, ''],
  ['csistoragecapacities', '', 'storage.k8s.io/v1', true, 'CSIStorageCapacity', ALL8, ''],
  ['storageclasses', 'sc', 'storage.k8s.io/v1', false, 'StorageClass', ALL8, ''],
  ['volumeattachments', '', 'storage.k8s.io/v1', false, 'VolumeAttachment', ALL8, ''],
];

const resKey = (name: string, gv: string) => `${name} ${gv}`;
const UPSTREAM_BY_KEY = new Map(UPSTREAM.map((r) => [resKey(r[0], r[2]), r]));

function rowOf(r: Res, wide: boolean): string[] {
  const base = [r[0], r[1], r[2], String(r[3]), r[4]];
  return wide ? [...base, r[5], r[6]] : base;
}

/** Check an api-resources table: first that each printed row is the row Kubernetes prints for
 * that resource (a wrong short name, scope or verb shows here), then that no resource of a
 * Kubernetes 1.33 API server is missing (the list of missing resources shows here). */
function assertApiResources(out: string, wide: boolean, filter: (r: Res) => boolean): void {
  const t = table(out);
  const headers = ['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND'];
  assert.deepEqual(t.headers, wide ? [...headers, 'VERBS', 'CATEGORIES'] : headers);
  const wrong: string[] = [];
  for (const row of t.rows) {
    const up = UPSTREAM_BY_KEY.get(resKey(row[0], row[2]));
    if (!up) wrong.push(`${row.join(' | ')}   (Kubernetes 1.33 serves no such resource)`);
    else if (!filter(up)) wrong.push(`${row.join(' | ')}   (not selected by the flags)`);
    else if (rowOf(up, wide).join('\t') !== row.join('\t')) wrong.push(`${row.join(' | ')}   (Kubernetes: ${rowOf(up, wide).join(' | ')})`);
  }
  assert.deepEqual(wrong, [], 'rows that differ from Kubernetes 1.33');
  const printed = new Set(t.rows.map((row) => resKey(row[0], row[2])));
  const missing = UPSTREAM.filter(filter)
    .filter((r) => !printed.has(resKey(r[0], r[2])))
    .map((r) => `${r[0]} (${r[2]})`);
  assert.deepEqual(missing, [], 'resources a Kubernetes 1.33 API server lists that keelson does not');
  // kubectl sorts by group, then name; same rows, same order
  assert.deepEqual(
    t.rows,
    UPSTREAM.filter(filter).map((r) => rowOf(r, wide)),
  );
}

// ---------------------------------------------------------------------------------------------
// fixtures

const nodeYaml = (name: string) => `apiVersion: v1
kind: Node
metadata:
  name: ${name}
  labels:
    suite: get
`;

function podYaml(name: string, ns: string, node: string, labels: Record<string, string>): string {
  const l = Object.entries(labels)
    .map(([k, v]) => `    ${k}: ${v}`)
    .join('\n');
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${ns}
  labels:
${l}
spec:
  nodeName: ${node}
  containers:
  - name: main
    image: nginx:1.27
    ports:
    - containerPort: 8080
`;
}

function daysAgo(d: number): string {
  return new Date(Date.now() - d * 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z');
}

before(async () => {
  c = await startCluster();
  run('1.33', ['create', 'namespace', NS]);
  run('1.33', ['create', 'namespace', NS2]);
  run('1.33', ['create', 'namespace', NS_EV]);
  run('1.33', ['create', 'namespace', NS_EMPTY]);
  run('1.33', ['create', '-f', '-'], ['node-a', 'node-b', 'node-c'].map(nodeYaml).join('---\n'));
  run(
    '1.33',
    ['create', '-f', '-'],
    [
      podYaml('p-a', NS, 'node-b', { app: 'web', tier: 'front', env: 'prod', suite: 'get' }),
      podYaml('p-b', NS, 'node-a', { app: 'web', tier: 'back', suite: 'get' }),
      podYaml('p-c', NS, 'node-c', { app: 'db', tier: 'back', suite: 'get' }),
      podYaml('p-d', NS2, 'node-a', { app: 'web', suite: 'get' }),
    ].join('---\n'),
  );
  // p-b runs: its status is written through the status subresource, as a kubelet writes it
  const pb = (await c.raw('GET', `/api/v1/namespaces/${NS}/pods/p-b`)).json();
  pb.status = {
    phase: 'Running',
    hostIP: '192.168.10.1',
    hostIPs: [{ ip: '192.168.10.1' }],
    podIP: '10.244.1.5',
    podIPs: [{ ip: '10.244.1.5' }],
    startTime: daysAgo(0),
    conditions: [
      { type: 'Initialized', status: 'True', lastTransitionTime: daysAgo(0) },
      { type: 'Ready', status: 'True', lastTransitionTime: daysAgo(0) },
      { type: 'ContainersReady', status: 'True', lastTransitionTime: daysAgo(0) },
      { type: 'PodScheduled', status: 'True', lastTransitionTime: daysAgo(0) },
    ],
    containerStatuses: [
      { name: 'main', ready: true, started: true, restartCount: 0, image: 'docker.io/library/nginx:1.27', imageID: '', state: { running: { startedAt: daysAgo(0) } } },
    ],
  };
  const put = await c.raw('PUT', `/api/v1/namespaces/${NS}/pods/p-b/status`, { body: pb });
  assert.equal(put.status, 200, put.text);

  run(
    '1.33',
    ['create', '-n', NS, '-f', '-'],
    `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  labels:
    app: api
spec:
  replicas: 0
  selector:
    matchLabels:
      app: api
  template:
    metadata:
      labels:
        app: api
    spec:
      containers:
      - name: api
        image: busybox:1.36
      - name: sidecar
        image: envoyproxy/envoy:v1.33.0
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - name: http
    port: 80
    targetPort: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: web-np
spec:
  type: NodePort
  selector:
    app: web
  ports:
  - port: 80
    targetPort: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: web-hl
spec:
  clusterIP: None
  selector:
    app: web
  ports:
  - port: 80
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg-a
data:
  a: "1"
  b: "2"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg-b
binaryData:
  blob: AAEC
---
apiVersion: v1
kind: Secret
metadata:
  name: s-opaque
stringData:
  password: hunter2
---
apiVersion: v1
kind: Secret
metadata:
  name: s-tls
type: kubernetes.io/tls
data:
  tls.crt: Y2VydA==
  tls.key: a2V5
`,
  );
  run(
    '1.33',
    ['create', '-n', NS_EV, '-f', '-'],
    `apiVersion: v1
kind: Event
metadata:
  name: web.17a1
involvedObject:
  apiVersion: v1
  kind: Pod
  name: web
  namespace: ${NS_EV}
  fieldPath: spec.containers{nginx}
reason: Pulled
message: Container image "nginx:1.27" already present on machine
type: Normal
source:
  component: kubelet
  host: node-a
firstTimestamp: "${daysAgo(4)}"
lastTimestamp: "${daysAgo(3)}"
count: 3
---
apiVersion: v1
kind: Event
metadata:
  name: web.17a2
involvedObject:
  apiVersion: v1
  kind: Pod
  name: web
  namespace: ${NS_EV}
reason: BackOff
message: "Back-off restarting failed container  "
type: Warning
source:
  component: kubelet
firstTimestamp: "${daysAgo(2)}"
lastTimestamp: "${daysAgo(2)}"
count: 1
`,
  );
});

after(async () => {
  await c?.stop();
});

// ---------------------------------------------------------------------------------------------
// api-resources

for (const v of VERSIONS) {
  test(`kubectl ${v}: api-resources prints the full table of a Kubernetes 1.33 API server`, () => {
    assertApiResources(run(v, ['api-resources']), false, () => true);
  });

  test(`kubectl ${v}: api-resources -o wide adds verbs and categories`, () => {
    assertApiResources(run(v, ['api-resources', '-o', 'wide']), true, () => true);
  });

  test(`kubectl ${v}: api-resources --namespaced=false`, () => {
    assertApiResources(run(v, ['api-resources', '--namespaced=false']), false, (r) => !r[3]);
  });

  test(`kubectl ${v}: api-resources --api-group=apps (and -o wide)`, () => {
    assertApiResources(run(v, ['api-resources', '--api-group=apps']), false, (r) => r[2] === 'apps/v1');
    assertApiResources(run(v, ['api-resources', '--api-group=apps', '-o', 'wide']), true, (r) => r[2] === 'apps/v1');
  });

  test(`kubectl ${v}: api-resources -o name`, () => {
    const names = UPSTREAM.map((r) => (r[2].includes('/') ? `${r[0]}.${r[2].split('/')[0]}` : r[0]));
    assert.equal(run(v, ['api-resources', '-o', 'name', '--api-group=apps']), names.filter((n) => n.endsWith('.apps')).join('\n') + '\n');
  });
}

// ---------------------------------------------------------------------------------------------
// get: the default table of each kind, and -o wide

const POD_HEADERS = ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'];
const POD_WIDE = [...POD_HEADERS, 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES'];
const PODS: Cell[][] = [
  ['p-a', '0/1', 'Pending', '0', AGE],
  ['p-b', '1/1', 'Running', '0', AGE],
  ['p-c', '0/1', 'Pending', '0', AGE],
];
const PODS_WIDE: Cell[][] = [
  ['p-a', '0/1', 'Pending', '0', AGE, '<none>', 'node-b', '<none>', '<none>'],
  ['p-b', '1/1', 'Running', '0', AGE, '10.244.1.5', 'node-a', '<none>', '<none>'],
  ['p-c', '0/1', 'Pending', '0', AGE, '<none>', 'node-c', '<none>', '<none>'],
];
const pick = (rows: Cell[][], ...names: string[]) => names.map((n) => rows.find((r) => r[0] === n)!);

for (const v of VERSIONS) {
  test(`kubectl ${v}: get pods (table and -o wide)`, () => {
    assertTable(run(v, ['get', 'pods', '-n', NS]), POD_HEADERS, PODS);
    assertTable(run(v, ['get', 'po', '-n', NS, '-o', 'wide']), POD_WIDE, PODS_WIDE);
    assertTable(run(v, ['get', 'pod', 'p-b', '-n', NS]), POD_HEADERS, pick(PODS, 'p-b'));
    assertTable(run(v, ['get', 'pods', 'p-c', 'p-a', '-n', NS]), POD_HEADERS, pick(PODS, 'p-c', 'p-a'));
    // --no-headers: the same rows, laid out without the header line
    const bare = run(v, ['get', 'pods', '-n', NS, '--no-headers']);
    const rows = bare.trimEnd().split('\n').map((l) => l.split(/ {3,}/));
    assert.equal(tabwrite(rows) + '\n', bare);
    assertRows(rows, PODS);
  });

  test(`kubectl ${v}: get deployments (table and -o wide)`, () => {
    assertTable(run(v, ['get', 'deployments', '-n', NS]), ['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE'], [['api', '0/0', '0', '0', AGE]]);
    assertTable(
      run(v, ['get', 'deploy', '-n', NS, '-o', 'wide']),
      ['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE', 'CONTAINERS', 'IMAGES', 'SELECTOR'],
      [['api', '0/0', '0', '0', AGE, 'api,sidecar', 'busybox:1.36,envoyproxy/envoy:v1.33.0', 'app=api']],
    );
  });

  test(`kubectl ${v}: get services (table and -o wide): cluster IPs and node ports are allocated`, () => {
    const headers = ['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE'];
    assertTable(run(v, ['get', 'services', '-n', NS]), headers, [
      ['web', 'ClusterIP', IPV4, '<none>', '80/TCP', AGE],
      ['web-hl', 'ClusterIP', 'None', '<none>', '80/TCP', AGE],
      ['web-np', 'NodePort', IPV4, '<none>', NODEPORT80, AGE],
    ]);
    assertTable(run(v, ['get', 'svc', '-n', NS, '-o', 'wide']), [...headers, 'SELECTOR'], [
      ['web', 'ClusterIP', IPV4, '<none>', '80/TCP', AGE, 'app=web'],
      ['web-hl', 'ClusterIP', 'None', '<none>', '80/TCP', AGE, 'app=web'],
      ['web-np', 'NodePort', IPV4, '<none>', NODEPORT80, AGE, 'app=web'],
    ]);
  });

  test(`kubectl ${v}: get service kubernetes -n default (the API server's own service)`, () => {
    assertTable(run(v, ['get', 'service', 'kubernetes', '-n', 'default']), ['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE'], [
      ['kubernetes', 'ClusterIP', /^\d+\.\d+\.\d+\.1$/, '<none>', '443/TCP', AGE],
    ]);
  });

  test(`kubectl ${v}: get configmaps`, () => {
    assertTable(run(v, ['get', 'configmaps', 'cfg-a', 'cfg-b', '-n', NS]), ['NAME', 'DATA', 'AGE'], [
      ['cfg-a', '2', AGE],
      ['cfg-b', '1', AGE],
    ]);
  });

  test(`kubectl ${v}: get secrets (an untyped secret is Opaque)`, () => {
    assertTable(run(v, ['get', 'secrets', '-n', NS]), ['NAME', 'TYPE', 'DATA', 'AGE'], [
      ['s-opaque', 'Opaque', '1', AGE],
      ['s-tls', 'kubernetes.io/tls', '2', AGE],
    ]);
  });

  test(`kubectl ${v}: get namespaces`, () => {
    assertTable(run(v, ['get', 'namespaces', NS, NS2, 'default', 'kube-system']), ['NAME', 'STATUS', 'AGE'], [
      [NS, 'Active', AGE],
      [NS2, 'Active', AGE],
      ['default', 'Active', AGE],
      ['kube-system', 'Active', AGE],
    ]);
    const all = table(run(v, ['get', 'ns']));
    for (const n of ['default', 'kube-node-lease', 'kube-public', 'kube-system', NS, NS2]) assert.ok(all.rows.some((r) => r[0] === n && r[1] === 'Active'), n);
  });

  test(`kubectl ${v}: get events (table and -o wide)`, () => {
    assertTable(run(v, ['get', 'events', '-n', NS_EV]), ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'], [
      ['3d', 'Normal', 'Pulled', 'pod/web', 'Container image "nginx:1.27" already present on machine'],
      ['2d', 'Warning', 'BackOff', 'pod/web', 'Back-off restarting failed container'],
    ]);
    assertTable(
      run(v, ['get', 'events', '-n', NS_EV, '-o', 'wide']),
      ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'SUBOBJECT', 'SOURCE', 'MESSAGE', 'FIRST SEEN', 'COUNT', 'NAME'],
      [
        ['3d', 'Normal', 'Pulled', 'pod/web', 'spec.containers{nginx}', 'kubelet, node-a', 'Container image "nginx:1.27" already present on machine', '4d', '3', 'web.17a1'],
        ['2d', 'Warning', 'BackOff', 'pod/web', '', 'kubelet', 'Back-off restarting failed container', '2d', '1', 'web.17a2'],
      ],
    );
  });

  test(`kubectl ${v}: get of several kinds prints one table per kind, with kind/name`, () => {
    const t = tables(run(v, ['get', 'pods,deployments,services', '-n', NS]));
    assert.equal(t.length, 3);
    assert.deepEqual(
      t.map((x) => x.rows.map((r) => r[0])),
      [['pod/p-a', 'pod/p-b', 'pod/p-c'], ['deployment.apps/api'], ['service/web', 'service/web-hl', 'service/web-np']],
    );
  });

  test(`kubectl ${v}: get in an empty namespace says so on stderr and exits 0`, () => {
    const r = kubectl(v, ['get', 'pods', '-n', NS_EMPTY]);
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, '', `No resources found in ${NS_EMPTY} namespace.\n`]);
    const r2 = kubectl(v, ['get', 'pods', '-n', 'kget-no-such-namespace']);
    assert.deepEqual([r2.code, r2.stdout, r2.stderr], [0, '', 'No resources found in kget-no-such-namespace namespace.\n']);
  });
}

// ---------------------------------------------------------------------------------------------
// get -o json, -o yaml, -o name, -o jsonpath

for (const v of VERSIONS) {
  test(`kubectl ${v}: get configmap -o json and -o yaml print the object as stored`, () => {
    const out = run(v, ['get', 'configmap', 'cfg-a', '-n', NS, '-o', 'json']);
    const o = JSON.parse(out);
    assert.match(o.metadata.uid, UID);
    assert.match(o.metadata.resourceVersion, RV);
    assert.match(o.metadata.creationTimestamp, TIME);
    assert.deepEqual(o, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      data: { a: '1', b: '2' },
      metadata: { name: 'cfg-a', namespace: NS, uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion, creationTimestamp: o.metadata.creationTimestamp },
    });
    assert.equal(
      out,
      `{
    "apiVersion": "v1",
    "data": {
        "a": "1",
        "b": "2"
    },
    "kind": "ConfigMap",
    "metadata": {
        "creationTimestamp": "${o.metadata.creationTimestamp}",
        "name": "cfg-a",
        "namespace": "${NS}",
        "resourceVersion": "${o.metadata.resourceVersion}",
        "uid": "${o.metadata.uid}"
    }
}
`,
    );
    assert.equal(
      run(v, ['get', 'configmap', 'cfg-a', '-n', NS, '-o', 'yaml']),
      `apiVersion: v1
data:
  a: "1"
  b: "2"
kind: ConfigMap
metadata:
  creationTimestamp: "${o.metadata.creationTimestamp}"
  name: cfg-a
  namespace: ${NS}
  resourceVersion: "${o.metadata.resourceVersion}"
  uid: ${o.metadata.uid}
`,
    );
  });

  test(`kubectl ${v}: get pods -o json is a List with every pod`, () => {
    const l = JSON.parse(run(v, ['get', 'pods', '-n', NS, '-o', 'json']));
    assert.equal(l.apiVersion, 'v1');
    assert.equal(l.kind, 'List');
    assert.deepEqual(l.metadata, { resourceVersion: '' });
    assert.deepEqual(
      l.items.map((p: any) => [p.apiVersion, p.kind, p.metadata.name, p.spec.nodeName]),
      [
        ['v1', 'Pod', 'p-a', 'node-b'],
        ['v1', 'Pod', 'p-b', 'node-a'],
        ['v1', 'Pod', 'p-c', 'node-c'],
      ],
    );
  });

  test(`kubectl ${v}: get pod -o yaml shows the fields the API server defaults`, async () => {
    const YAML = (await import('yaml')).default;
    const p = YAML.parse(run(v, ['get', 'pod', 'p-a', '-n', NS, '-o', 'yaml']));
    assert.equal(p.kind, 'Pod');
    assert.deepEqual(p.metadata.labels, { app: 'web', env: 'prod', suite: 'get', tier: 'front' });
    assert.deepEqual(p.status, { phase: 'Pending', qosClass: 'BestEffort' });
    const defaults = {
      dnsPolicy: p.spec.dnsPolicy,
      enableServiceLinks: p.spec.enableServiceLinks,
      restartPolicy: p.spec.restartPolicy,
      schedulerName: p.spec.schedulerName,
      securityContext: p.spec.securityContext,
      terminationGracePeriodSeconds: p.spec.terminationGracePeriodSeconds,
      container: {
        imagePullPolicy: p.spec.containers[0].imagePullPolicy,
        resources: p.spec.containers[0].resources,
        terminationMessagePath: p.spec.containers[0].terminationMessagePath,
        terminationMessagePolicy: p.spec.containers[0].terminationMessagePolicy,
        ports: p.spec.containers[0].ports,
      },
    };
    assert.deepEqual(defaults, {
      dnsPolicy: 'ClusterFirst',
      enableServiceLinks: true,
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      securityContext: {},
      terminationGracePeriodSeconds: 30,
      container: {
        imagePullPolicy: 'IfNotPresent',
        resources: {},
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        ports: [{ containerPort: 8080, protocol: 'TCP' }],
      },
    });
  });

  test(`kubectl ${v}: get service -o yaml shows the allocated cluster IP and the defaults`, async () => {
    const YAML = (await import('yaml')).default;
    const s = YAML.parse(run(v, ['get', 'service', 'web', '-n', NS, '-o', 'yaml']));
    assert.match(String(s.spec.clusterIP), IPV4);
    assert.deepEqual(s.spec, {
      clusterIP: s.spec.clusterIP,
      clusterIPs: [s.spec.clusterIP],
      internalTrafficPolicy: 'Cluster',
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }],
      selector: { app: 'web' },
      sessionAffinity: 'None',
      type: 'ClusterIP',
    });
    assert.deepEqual(s.status, { loadBalancer: {} });
  });

  test(`kubectl ${v}: get deployment -o yaml shows the defaults`, async () => {
    const YAML = (await import('yaml')).default;
    const d = YAML.parse(run(v, ['get', 'deployment', 'api', '-n', NS, '-o', 'yaml']));
    assert.equal(d.metadata.generation, 1);
    const { template, ...spec } = d.spec;
    assert.deepEqual(spec, {
      progressDeadlineSeconds: 600,
      replicas: 0,
      revisionHistoryLimit: 10,
      selector: { matchLabels: { app: 'api' } },
      strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' }, type: 'RollingUpdate' },
    });
    assert.equal(template.spec.restartPolicy, 'Always');
    assert.equal(template.spec.dnsPolicy, 'ClusterFirst');
    assert.equal(template.spec.terminationGracePeriodSeconds, 30);
    assert.equal(template.spec.containers[0].imagePullPolicy, 'IfNotPresent');
  });

  test(`kubectl ${v}: get events -o yaml`, async () => {
    const YAML = (await import('yaml')).default;
    const l = YAML.parse(run(v, ['get', 'events', '-n', NS_EV, '-o', 'yaml']));
    const e = l.items[0];
    // Event.eventTime is a MicroTime struct: a zero value is written as null, never left out
    assert.ok('eventTime' in e, 'eventTime: null is printed');
    assert.equal(e.eventTime, null);
    assert.equal(e.reportingComponent, '');
    assert.equal(e.reportingInstance, '');
    assert.equal(e.count, 3);
  });

  test(`kubectl ${v}: get -o name`, () => {
    assert.equal(run(v, ['get', 'pods', '-n', NS, '-o', 'name']), 'pod/p-a\npod/p-b\npod/p-c\n');
    assert.equal(run(v, ['get', 'deployments,services', '-n', NS, '-o', 'name']), 'deployment.apps/api\nservice/web\nservice/web-hl\nservice/web-np\n');
    assert.equal(run(v, ['get', 'pod', 'p-b', '-n', NS, '-o', 'name']), 'pod/p-b\n');
  });

  test(`kubectl ${v}: get -o jsonpath`, () => {
    assert.equal(run(v, ['get', 'pods', '-n', NS, '-o', 'jsonpath={.items[*].metadata.name}']), 'p-a p-b p-c');
    assert.equal(
      run(v, ['get', 'pods', '-n', NS, '-o', 'jsonpath={range .items[*]}{.metadata.name}{"\\t"}{.spec.nodeName}{"\\t"}{.status.phase}{"\\n"}{end}']),
      'p-a\tnode-b\tPending\np-b\tnode-a\tRunning\np-c\tnode-c\tPending\n',
    );
    assert.equal(run(v, ['get', 'pod', 'p-b', '-n', NS, '-o', 'jsonpath={.status.podIP}']), '10.244.1.5');
    assert.equal(run(v, ['get', 'configmap', 'cfg-a', '-n', NS, '-o', "jsonpath={.data['a']}"]), '1');
    assert.equal(run(v, ['get', 'deployment', 'api', '-n', NS, '-o', 'jsonpath={.spec.template.spec.containers[*].image}']), 'busybox:1.36 envoyproxy/envoy:v1.33.0');
  });
}

// ---------------------------------------------------------------------------------------------
// chunking, selectors, -A, labels, sorting

for (const v of VERSIONS) {
  test(`kubectl ${v}: get --chunk-size=1 prints every object once`, () => {
    assertTable(run(v, ['get', 'pods', '-n', NS, '--chunk-size=1']), POD_HEADERS, PODS);
    assert.equal(run(v, ['get', 'pods', '-n', NS, '--chunk-size=1', '-o', 'name']), 'pod/p-a\npod/p-b\npod/p-c\n');
    const l = JSON.parse(run(v, ['get', 'pods', '-A', '-l', 'suite=get', '--chunk-size=1', '-o', 'json']));
    assert.deepEqual(
      l.items.map((p: any) => `${p.metadata.namespace}/${p.metadata.name}`),
      [`${NS}/p-a`, `${NS}/p-b`, `${NS}/p-c`, `${NS2}/p-d`],
    );
    assert.equal(run(v, ['get', 'nodes', '-l', 'suite=get', '--chunk-size=2', '-o', 'name']), 'node/node-a\nnode/node-b\nnode/node-c\n');
  });

  test(`kubectl ${v}: get -l with equality-based selectors`, () => {
    const names = (sel: string) => run(v, ['get', 'pods', '-n', NS, '-l', sel, '-o', 'name']);
    assert.equal(names('app=web'), 'pod/p-a\npod/p-b\n');
    assert.equal(names('app==web,tier=back'), 'pod/p-b\n');
    assert.equal(names('app!=web'), 'pod/p-c\n');
    assertTable(run(v, ['get', 'pods', '-n', NS, '-l', 'env=prod']), POD_HEADERS, pick(PODS, 'p-a'));
  });

  test(`kubectl ${v}: get -l with set-based selectors`, () => {
    const names = (sel: string) => run(v, ['get', 'pods', '-n', NS, '--selector', sel, '-o', 'name']);
    assert.equal(names('tier in (back)'), 'pod/p-b\npod/p-c\n');
    assert.equal(names('tier notin (back)'), 'pod/p-a\n');
    assert.equal(names('env'), 'pod/p-a\n');
    assert.equal(names('!env'), 'pod/p-b\npod/p-c\n');
    assert.equal(names('app in (web,db),tier notin (front),!env'), 'pod/p-b\npod/p-c\n');
    const r = kubectl(v, ['get', 'pods', '-n', NS, '-l', 'app in (nothing)']);
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, '', `No resources found in ${NS} namespace.\n`]);
  });

  test(`kubectl ${v}: get --field-selector metadata.name, status.phase, spec.nodeName`, () => {
    const names = (sel: string, kind = 'pods') => run(v, ['get', kind, '-n', NS, '--field-selector', sel, '-o', 'name']);
    assert.equal(names('metadata.name=p-b'), 'pod/p-b\n');
    assert.equal(names('metadata.name!=p-b'), 'pod/p-a\npod/p-c\n');
    assert.equal(names('status.phase=Running'), 'pod/p-b\n');
    assert.equal(names('status.phase=Pending'), 'pod/p-a\npod/p-c\n');
    assert.equal(names('spec.nodeName=node-c'), 'pod/p-c\n');
    assert.equal(names('status.phase=Pending,spec.nodeName=node-b'), 'pod/p-a\n');
    assert.equal(names('metadata.namespace=' + NS), 'pod/p-a\npod/p-b\npod/p-c\n');
    assert.equal(names('type=kubernetes.io/tls', 'secrets'), 'secret/s-tls\n');
    assertTable(run(v, ['get', 'pods', '-n', NS, '--field-selector=status.phase=Running', '-o', 'wide']), POD_WIDE, pick(PODS_WIDE, 'p-b'));
    const all = run(v, ['get', 'pods', '-A', '--field-selector', 'spec.nodeName=node-a', '-o', 'name']);
    assert.equal(all, 'pod/p-b\npod/p-d\n');
    const none = kubectl(v, ['get', 'pods', '-n', NS, '--field-selector', 'status.phase=Running,spec.nodeName=node-c']);
    assert.deepEqual([none.code, none.stdout, none.stderr], [0, '', `No resources found in ${NS} namespace.\n`]);
  });

  test(`kubectl ${v}: get --field-selector on a field the kind does not support: the server's error`, () => {
    const r = kubectl(v, ['get', 'pods', '-n', NS, '--field-selector', 'spec.foo=bar']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      'Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label selector "", field selector "spec.foo=bar": field label not supported: spec.foo\n',
    );
    // kinds without field label conversions of their own (ConfigMap) answer with apimachinery's default
    const r2 = kubectl(v, ['get', 'configmaps', '-n', NS, '-l', 'a=b', '--field-selector', 'data.a=1']);
    assert.equal(r2.code, 1);
    assert.equal(
      r2.stderr,
      'Error from server (BadRequest): Unable to find "/v1, Resource=configmaps" that match label selector "a=b", field selector "data.a=1": "data.a" is not a known field selector: only "metadata.name", "metadata.namespace"\n',
    );
  });

  test(`kubectl ${v}: get -A adds the NAMESPACE column`, () => {
    assertTable(run(v, ['get', 'pods', '-A', '-l', 'suite=get']), ['NAMESPACE', ...POD_HEADERS], [
      [NS, 'p-a', '0/1', 'Pending', '0', AGE],
      [NS, 'p-b', '1/1', 'Running', '0', AGE],
      [NS, 'p-c', '0/1', 'Pending', '0', AGE],
      [NS2, 'p-d', '0/1', 'Pending', '0', AGE],
    ]);
    assertTable(run(v, ['get', 'pods', '--all-namespaces', '-l', 'suite=get', '-o', 'wide', '--field-selector', 'metadata.namespace=' + NS2]), ['NAMESPACE', ...POD_WIDE], [
      [NS2, 'p-d', '0/1', 'Pending', '0', AGE, '<none>', 'node-a', '<none>', '<none>'],
    ]);
  });

  test(`kubectl ${v}: get --show-labels and -L`, () => {
    assertTable(run(v, ['get', 'pods', '-n', NS, '--show-labels']), [...POD_HEADERS, 'LABELS'], [
      ['p-a', '0/1', 'Pending', '0', AGE, 'app=web,env=prod,suite=get,tier=front'],
      ['p-b', '1/1', 'Running', '0', AGE, 'app=web,suite=get,tier=back'],
      ['p-c', '0/1', 'Pending', '0', AGE, 'app=db,suite=get,tier=back'],
    ]);
    assertTable(run(v, ['get', 'pods', '-n', NS, '-L', 'tier', '-L', 'env']), [...POD_HEADERS, 'TIER', 'ENV'], [
      ['p-a', '0/1', 'Pending', '0', AGE, 'front', 'prod'],
      ['p-b', '1/1', 'Running', '0', AGE, 'back', ''],
      ['p-c', '0/1', 'Pending', '0', AGE, 'back', ''],
    ]);
    assertTable(run(v, ['get', 'deployments', '-n', NS, '-L', 'app', '--show-labels']), ['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE', 'APP', 'LABELS'], [
      ['api', '0/0', '0', '0', AGE, 'api', 'app=api'],
    ]);
  });

  test(`kubectl ${v}: get --sort-by`, () => {
    assertTable(run(v, ['get', 'pods', '-n', NS, '--sort-by=.spec.nodeName', '-o', 'wide']), POD_WIDE, pick(PODS_WIDE, 'p-b', 'p-a', 'p-c'));
    assertTable(run(v, ['get', 'pods', '-n', NS, '--sort-by={.metadata.labels.tier}']), POD_HEADERS, pick(PODS, 'p-b', 'p-c', 'p-a'));
    assert.equal(run(v, ['get', 'pods', '-n', NS, '--sort-by=.spec.nodeName', '-o', 'name']), 'pod/p-b\npod/p-a\npod/p-c\n');
    assert.equal(run(v, ['get', 'services', '-n', NS, '--sort-by=.spec.type', '-o', 'name']), 'service/web\nservice/web-hl\nservice/web-np\n');
    assert.equal(run(v, ['get', 'events', '-n', NS_EV, '--sort-by=.lastTimestamp', '-o', 'name']), 'event/web.17a1\nevent/web.17a2\n');
  });
}

test('componentstatuses: label and field selectors filter the list as on any list (no labels; metadata.name, an empty metadata.namespace)', async () => {
  const names = async (q: string) => {
    const r = await c.raw('GET', `/api/v1/componentstatuses${q}`);
    assert.equal(r.status, 200, r.text);
    return (r.json().items as any[]).map((i) => i.metadata.name).sort();
  };
  const all = await names('');
  assert.deepEqual(all, ['controller-manager', 'etcd-0', 'scheduler']);
  assert.deepEqual(await names('?fieldSelector=metadata.name%3Dscheduler'), ['scheduler']);
  assert.deepEqual(await names('?fieldSelector=metadata.name!%3Dscheduler'), ['controller-manager', 'etcd-0']);
  assert.deepEqual(await names('?fieldSelector=metadata.namespace%3D'), all);
  assert.deepEqual(await names('?fieldSelector=metadata.namespace%3Ddefault'), []);
  // a component status has no labels: a requirement on one matches none, its negation every one
  assert.deepEqual(await names('?labelSelector=tier%3Dcontrol'), []);
  assert.deepEqual(await names('?labelSelector=!tier'), all);
  const k = c.kubectl(['get', 'cs', '--field-selector', 'metadata.name=etcd-0', '-o', 'name']);
  assert.equal(k.code, 0, k.stderr);
  assert.equal(k.stdout, 'componentstatus/etcd-0\n');
  const bad = await c.raw('GET', '/api/v1/componentstatuses?fieldSelector=spec.x%3Dy');
  assert.equal(bad.status, 400);
});
