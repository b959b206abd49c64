// The built-in Resource Metrics API (metrics.k8s.io/v1beta1) of `keelson server`, end to end: a
// real keelson server scrapes a kubelet served in this process (cli/kubeletserving.ts' serveKubelet,
// with the kubelet's real authentication and Webhook authorization) whose view answers
// /metrics/resource with chosen figures: cumulative CPU that grows by fixed amounts per sample and
// sample times 15.043 s (node) and 15.5 s (containers) apart, so that every rate is known. Checked:
// registration (the Local APIService, discovery in every form, the aggregated ClusterRole), the
// exact JSON of gets and lists, selectors, Table, the Protobuf answers (decoded by protobufjs
// from the field numbers of k8s.io/metrics' generated.proto) and the CBOR ones (decoded by cborg,
// the CBORServingAndStorage gate on; 406 without it), the list options as k8s.io/apiserver decodes
// and validates them (400s) and those metrics-server's storage ignores, metrics-server's errors,
// kubectl top (1.33 and 1.27, over Protobuf and JSON) and kubectl get --raw, RBAC (403 without rights, view can top), a real metrics-server's APIService taking over
// (proxied to an extension server in this process) and giving back, and --disable=metrics-server.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import protobuf from 'protobufjs';
import { freePort, KEELSON, ROOT, startCluster, until, type Cluster, type RunResult } from './harness.js';
import { inProcessKubeletOptions } from './kubeletharness.js';
import { serveKubelet, type KubeletServing } from '../../src/cli/kubeletserving.js';
import type { NodeAgentView } from '../../src/nodeagent/server.js';
import type { ResourceSample } from '../../src/nodeagent/stats.js';
import { createCA, issueClientCert, issueServingCert, loadCA } from '../../src/apiserver/pki.js';
import { nopLogger } from '../../src/client/log.js';
import { cborDecode } from './cborread.js';

const NODE = 'metrics-node';
const IDLE = 'idle-node';
const NS_A = 'metrics-a';
const NS_B = 'metrics-b';
const VERSIONS = ['1.33', '1.27'] as const;
const AGG = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

let c: Cluster;
let kubelet: KubeletServing;
let dir: string;
/** the time of sample 0 (ms); sample k is taken at T0 + k * 15043 (node) and T0 + k * 15500 (containers) */
const T0 = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
const START = T0 - 3_600_000;
/** the samples the kubelet served */
const served: number[] = [];
let users: Record<'viewer' | 'nobody', string>;

function sample(k: number): ResourceSample {
  const nodeTime = T0 + k * 15_043;
  const cTime = T0 + k * 15_500;
  const container = (namespace: string, pod: string, name: string, cpuBase: number, cpuStep: number, memory: number) => ({
    namespace,
    pod,
    podUID: `${pod}-uid`,
    container: name,
    startTime: START,
    cpu: { time: cTime, usageCoreNanoSeconds: (cpuBase + k * cpuStep) * 1e9 },
    memory: { time: cTime, workingSetBytes: memory },
  });
  return {
    node: { cpu: { time: nodeTime, usageCoreNanoSeconds: (100 + k * 2.25) * 1e9 }, memory: { time: nodeTime, workingSetBytes: 1234567 * 1024 } },
    containers: [
      container(NS_A, 'web', 'main', 10, 0.5, 52428800),
      container(NS_A, 'web', 'side', 1, 0.125, 1000000),
      container(NS_B, 'db', 'postgres', 50, 3, 104857600),
      // a pod the API does not know: never reported
      container(NS_A, 'ghost', 'main', 1, 1, 1048576),
    ],
  };
}

// the rates those figures make (metrics-server's arithmetic: the CPU delta over the window, truncated to nanocores)
const NODE_CPU = '149571229n'; // 2.25 s / 15.043 s
const WEB_MAIN_CPU = '32258064n'; // 0.5 s / 15.5 s
const WEB_SIDE_CPU = '8064516n'; // 0.125 s / 15.5 s
const DB_CPU = '193548387n'; // 3 s / 15.5 s

const view: NodeAgentView = {
  nodeName: NODE,
  pods: () => [],
  runningPods: async () => [],
  configz: () => ({}),
  healthChecks: () => ({ ping: () => undefined }),
  containerLogPath: async () => ({ error: 'no logs here', code: 400 }),
  resourceSample: async () => {
    const k = served.length;
    served.push(k);
    return sample(k);
  },
};

const timeOf = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
/** the timestamps a node / a pod's metrics may carry (any sample after the first) */
const nodeTimes = () => served.slice(1).map((k) => timeOf(T0 + k * 15_043));
const podTimes = () => served.slice(1).map((k) => timeOf(T0 + k * 15_500));

// (kubectl runs as a child process this one waits for without blocking: this process serves the
// node's /metrics/resource too, and a scrape it cannot answer in time makes the node's and its
// pods' metrics go away until the next, as in metrics-server)
function kubectl(args: string[], v?: string, kubeconfig?: string): Promise<RunResult> {
  return c.kubectlAsync(args, { version: v, kubeconfig });
}
async function ok(args: string[], v?: string, kubeconfig?: string): Promise<string> {
  const r = await kubectl(args, v, kubeconfig);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
/** kubectl's table as rows of cells */
function rows(out: string): string[][] {
  return out
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s{2,}/));
}

// ---- Protobuf, read by protobufjs ----
// The messages as k8s.io/metrics' v1beta1 generated.proto and apimachinery's declare them (only the
// fields looked at; protobufjs skips the others): the test reads the bytes with its own schema.
const PB = 'application/vnd.kubernetes.protobuf';
const PB_SCHEMA = `
syntax = "proto2";
package t;
message TypeMeta { optional string apiVersion = 1; optional string kind = 2; }
message Unknown { optional TypeMeta typeMeta = 1; optional bytes raw = 2; optional string contentEncoding = 3; optional string contentType = 4; }
message Time { optional int64 seconds = 1; optional int32 nanos = 2; }
message Duration { optional int64 duration = 1; }
message Quantity { optional string string = 1; }
message ObjectMeta { optional string name = 1; optional string namespace = 3; optional string uid = 5; optional string resourceVersion = 6; optional Time creationTimestamp = 8; map<string, string> labels = 11; }
message ListMeta { optional string selfLink = 1; optional string resourceVersion = 2; optional string continue = 3; optional int64 remainingItemCount = 4; }
message ContainerMetrics { optional string name = 1; map<string, Quantity> usage = 2; }
message NodeMetrics { optional ObjectMeta metadata = 1; optional Time timestamp = 2; optional Duration window = 3; map<string, Quantity> usage = 4; }
message NodeMetricsList { optional ListMeta metadata = 1; repeated NodeMetrics items = 2; }
message PodMetrics { optional ObjectMeta metadata = 1; optional Time timestamp = 2; optional Duration window = 3; repeated ContainerMetrics containers = 4; }
message PodMetricsList { optional ListMeta metadata = 1; repeated PodMetrics items = 2; }
message PartialObjectMetadata { optional ObjectMeta metadata = 1; }
message PartialObjectMetadataList { optional ListMeta metadata = 1; repeated PartialObjectMetadata items = 2; }
`;
const pbRoot = protobuf.parse(PB_SCHEMA, { keepCase: true }).root;
/** a message of the schema above as a plain object (int64 as strings, absent fields left out) */
function pbDecode(type: string, b: Uint8Array): any {
  const t = pbRoot.lookupType(`t.${type}`);
  return t.toObject(t.decode(b), { longs: String, defaults: false, arrays: true });
}
/** the "k8s\\0" prefix and the runtime.Unknown envelope of a Protobuf answer */
function pbEnvelope(body: Buffer): { apiVersion: string; kind: string; raw: Uint8Array; contentEncoding?: string; contentType?: string } {
  assert.deepEqual([...body.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00], 'the k8s\\0 prefix');
  const u = pbDecode('Unknown', body.subarray(4));
  return { apiVersion: u.typeMeta?.apiVersion, kind: u.typeMeta?.kind, raw: Buffer.from(u.raw ?? []), contentEncoding: u.contentEncoding, contentType: u.contentType };
}
/** an empty ListMeta as Go writes it: its strings, empty (remainingItemCount, a pointer, not at all) */
const EMPTY_LIST_META = { selfLink: '', resourceVersion: '', continue: '' };
/** a metav1.Time as RFC 3339 (whole seconds, as Go writes it) */
const pbTime = (t: any) => new Date(Number(t.seconds) * 1000).toISOString().replace('.000Z', 'Z');
/** usage as JSON has it: {cpu: '...', memory: '...'} */
const pbUsage = (u: any) => Object.fromEntries(Object.entries(u ?? {}).map(([k, v]: [string, any]) => [k, v.string]));

/** a NodeMetrics without its two times (the sample's and now), to compare */
const timeless = (m: any) => ({ ...m, metadata: { ...m.metadata, creationTimestamp: '' }, timestamp: '' });
/** the node's NodeMetrics as timeless() leaves it */
const nodeMetricsTimeless = () => ({
  kind: 'NodeMetrics',
  apiVersion: 'metrics.k8s.io/v1beta1',
  metadata: { name: NODE, creationTimestamp: '', labels: { 'kubernetes.io/hostname': NODE, tier: 'metrics' } },
  timestamp: '',
  window: '15.043s',
  usage: { cpu: NODE_CPU, memory: '1234567Ki' },
});

/** metrics-server's APIResourceList of metrics.k8s.io/v1beta1 (the built-in one answers the same) */
const METRICS_RESOURCE_LIST = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: 'metrics.k8s.io/v1beta1',
  resources: [
    { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
    { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
  ],
};

// ---- CBOR, read by cborg (cborread.ts) ----

async function post(path: string, body: any, code = 201): Promise<any> {
  const r = await c.raw('POST', path, { body });
  assert.equal(r.status, code, `POST ${path}: ${r.text}`);
  return r.json();
}

function userKubeconfig(name: string, cert: string, key: string): string {
  const kc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'keelson', cluster: { server: c.url, 'certificate-authority-data': c.credentials.ca.toString('base64'), 'tls-server-name': 'localhost' } }],
    users: [{ name, user: { 'client-certificate-data': Buffer.from(cert).toString('base64'), 'client-key-data': Buffer.from(key).toString('base64') } }],
    contexts: [{ name, context: { cluster: 'keelson', user: name } }],
    'current-context': name,
  };
  return c.file(`${name}.kubeconfig`, YAML.stringify(kc));
}

before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory', '--metric-resolution=10s', '--feature-gates=CBORServingAndStorage=true'] });
  dir = mkdtempSync(join(tmpdir(), 'keelson-metrics-api-'));
  const pki = join(c.dataDir, 'pki');
  kubelet = await serveKubelet(
    inProcessKubeletOptions(c, join(dir, 'pki'), await freePort()),
    view,
    { server: c.url, ca: c.credentials.ca, cert: c.credentials.cert, key: c.credentials.key },
    nopLogger,
  );
  const node = (name: string, labels: Record<string, string>) => post('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name, labels } });
  await node(NODE, { 'kubernetes.io/hostname': NODE, tier: 'metrics' });
  await node(IDLE, { 'kubernetes.io/hostname': IDLE });
  const status = (name: string, s: any) => c.raw('PATCH', `/api/v1/nodes/${name}/status`, { body: JSON.stringify({ status: s }), headers: { 'content-type': 'application/merge-patch+json' } });
  const resources = { cpu: '4', memory: '8Gi', pods: '110' };
  assert.equal((await status(NODE, { capacity: resources, allocatable: resources, addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: kubelet.port } } })).status, 200);
  // (a node whose kubelet is not there: no metrics, and no noise, as it is not Ready)
  assert.equal((await status(IDLE, { capacity: resources, allocatable: resources, addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: await freePort() } } })).status, 200);
  for (const ns of [NS_A, NS_B]) await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const pod = (ns: string, name: string, labels: Record<string, string>, containers: string[]) =>
    post(`/api/v1/namespaces/${ns}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { nodeName: NODE, containers: containers.map((n) => ({ name: n, image: 'busybox' })) } });
  await pod(NS_A, 'web', { app: 'web' }, ['main', 'side']);
  await pod(NS_A, 'lonely', { app: 'lonely' }, ['main']);
  await pod(NS_B, 'db', { app: 'db' }, ['postgres']);
  // users: one with view in metrics-a, one with nothing
  const ca = loadCA(readFileSync(join(pki, 'ca.crt'), 'utf8'), readFileSync(join(pki, 'ca.key'), 'utf8'));
  const viewer = await issueClientCert(ca, 'viewer', []);
  const nobody = await issueClientCert(ca, 'nobody', []);
  users = { viewer: userKubeconfig('viewer', viewer.certPEM, viewer.keyPEM), nobody: userKubeconfig('nobody', nobody.certPEM, nobody.keyPEM) };
  await post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS_A}/rolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'viewer-view' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'User', name: 'viewer', apiGroup: 'rbac.authorization.k8s.io' }],
  });
});

after(async () => {
  await kubelet?.close();
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('registration', () => {
  test('the APIService v1beta1.metrics.k8s.io is Local and Available; the group is in every discovery document', async () => {
    const api = (await c.raw('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io')).json();
    assert.deepEqual(api.spec, { group: 'metrics.k8s.io', version: 'v1beta1', groupPriorityMinimum: 100, versionPriority: 100 });
    assert.equal(api.status.conditions[0].type, 'Available');
    assert.equal(api.status.conditions[0].status, 'True');
    assert.equal(api.status.conditions[0].reason, 'Local');
    assert.match(await ok(['get', 'apiservices', 'v1beta1.metrics.k8s.io', '--no-headers']), /^v1beta1\.metrics\.k8s\.io\s+Local\s+True\s+/);
    // legacy: the group last (priority 100), its APIGroup and APIResourceList as metrics-server serves them
    const groups = (await c.raw('GET', '/apis')).json().groups;
    assert.deepEqual(groups.at(-1), { name: 'metrics.k8s.io', versions: [{ groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' }], preferredVersion: { groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' } });
    assert.deepEqual((await c.raw('GET', '/apis/metrics.k8s.io')).json(), { kind: 'APIGroup', apiVersion: 'v1', ...groups.at(-1) });
    assert.deepEqual((await c.raw('GET', '/apis/metrics.k8s.io/v1beta1')).json(), METRICS_RESOURCE_LIST);
    const agg = (await c.raw('GET', '/apis', { headers: { accept: AGG } })).json();
    assert.deepEqual(agg.items.at(-1), {
      metadata: { name: 'metrics.k8s.io', creationTimestamp: null },
      versions: [
        {
          version: 'v1beta1',
          resources: [
            { resource: 'nodes', responseKind: { group: '', version: '', kind: 'NodeMetrics' }, scope: 'Cluster', singularResource: '', verbs: ['get', 'list'] },
            { resource: 'pods', responseKind: { group: '', version: '', kind: 'PodMetrics' }, scope: 'Namespaced', singularResource: '', verbs: ['get', 'list'] },
          ],
          freshness: 'Current',
        },
      ],
    });
    assert.ok((await c.raw('GET', '/')).json().paths.includes('/apis/metrics.k8s.io/v1beta1'));
    for (const v of VERSIONS) {
      assert.deepEqual(rows(await ok(['api-resources', '--api-group=metrics.k8s.io'], v)), [
        ['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND'],
        ['nodes', 'metrics.k8s.io/v1beta1', 'false', 'NodeMetrics'],
        ['pods', 'metrics.k8s.io/v1beta1', 'true', 'PodMetrics'],
      ]);
    }
  });

  test('system:aggregated-metrics-reader is aggregated into view, edit and admin', async () => {
    const role = (await c.raw('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:aggregated-metrics-reader')).json();
    for (const r of ['view', 'edit', 'admin']) assert.equal(role.metadata.labels[`rbac.authorization.k8s.io/aggregate-to-${r}`], 'true');
    assert.deepEqual(role.rules, [{ apiGroups: ['metrics.k8s.io'], resources: ['pods', 'nodes'], verbs: ['get', 'list', 'watch'] }]);
    await until('view aggregated', async () => {
      const view = (await c.raw('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/view')).json();
      return view.rules.some((r: any) => r.apiGroups?.includes('metrics.k8s.io') && r.resources.includes('pods'));
    });
  });
});

describe('metrics', () => {
  before(async () => {
    // two scrapes (10 s apart) make the first rates
    await until('node metrics', async () => (await c.raw('GET', `/apis/metrics.k8s.io/v1beta1/nodes/${NODE}`)).status === 200, 40_000);
    await until('pod metrics', async () => (await c.raw('GET', `/apis/metrics.k8s.io/v1beta1/namespaces/${NS_B}/pods/db`)).status === 200, 15_000);
  });

  test('a node: the exact NodeMetrics', async () => {
    const r = await c.raw('GET', `/apis/metrics.k8s.io/v1beta1/nodes/${NODE}`);
    assert.equal(r.headers['content-type'], 'application/json');
    const m = r.json();
    assert.deepEqual(Object.keys(m), ['kind', 'apiVersion', 'metadata', 'timestamp', 'window', 'usage']);
    assert.deepEqual(Object.keys(m.metadata), ['name', 'creationTimestamp', 'labels']);
    assert.match(m.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.ok(Math.abs(Date.parse(m.metadata.creationTimestamp) - Date.now()) < 5000, 'created now');
    assert.ok(nodeTimes().includes(m.timestamp), `${m.timestamp} is a sample's time`);
    assert.deepEqual(timeless(m), nodeMetricsTimeless());
    // the list: items without kind, only nodes with metrics
    const list = (await c.raw('GET', '/apis/metrics.k8s.io/v1beta1/nodes')).json();
    assert.equal(list.kind, 'NodeMetricsList');
    assert.equal(list.apiVersion, 'metrics.k8s.io/v1beta1');
    assert.deepEqual(list.metadata, {});
    assert.deepEqual(list.items.map((i: any) => [Object.keys(i), i.metadata.name, i.usage]), [[['metadata', 'timestamp', 'window', 'usage'], NODE, { cpu: NODE_CPU, memory: '1234567Ki' }]]);
    // label and field selectors
    assert.equal((await c.raw('GET', '/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=tier%3Dmetrics')).json().items.length, 1);
    assert.equal((await c.raw('GET', '/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=tier%3Dother')).json().items.length, 0);
    assert.equal((await c.raw('GET', `/apis/metrics.k8s.io/v1beta1/nodes?fieldSelector=metadata.name%3D${NODE}`)).json().items.length, 1);
    assert.equal((await c.raw('GET', `/apis/metrics.k8s.io/v1beta1/nodes?fieldSelector=metadata.name!%3D${NODE}`)).json().items.length, 0);
  });

  test('pods: the exact PodMetrics, across namespaces, in one, selected', async () => {
    const all = (await c.raw('GET', '/apis/metrics.k8s.io/v1beta1/pods')).json();
    assert.equal(all.kind, 'PodMetricsList');
    assert.deepEqual(all.metadata, {});
    // sorted by namespace, then name; a pod without metrics (lonely) and one the API does not know (ghost) are not listed
    assert.deepEqual(all.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`), [`${NS_A}/web`, `${NS_B}/db`]);
    const web = all.items[0];
    assert.deepEqual(Object.keys(web), ['metadata', 'timestamp', 'window', 'containers']);
    assert.deepEqual(Object.keys(web.metadata), ['name', 'namespace', 'creationTimestamp', 'labels']);
    assert.ok(podTimes().includes(web.timestamp), `${web.timestamp} is a sample's time`);
    assert.deepEqual({ ...web, metadata: { ...web.metadata, creationTimestamp: '' }, timestamp: '' }, {
      metadata: { name: 'web', namespace: NS_A, creationTimestamp: '', labels: { app: 'web' } },
      timestamp: '',
      window: '15.5s',
      containers: [
        { name: 'main', usage: { cpu: WEB_MAIN_CPU, memory: '50Mi' } },
        { name: 'side', usage: { cpu: WEB_SIDE_CPU, memory: '1000000' } },
      ],
    });
    const one = (await c.raw('GET', `/apis/metrics.k8s.io/v1beta1/namespaces/${NS_B}/pods/db`)).json();
    assert.equal(one.kind, 'PodMetrics');
    assert.equal(one.apiVersion, 'metrics.k8s.io/v1beta1');
    assert.deepEqual(one.containers, [{ name: 'postgres', usage: { cpu: DB_CPU, memory: '100Mi' } }]);
    const inA = (await c.raw('GET', `/apis/metrics.k8s.io/v1beta1/namespaces/${NS_A}/pods`)).json();
    assert.deepEqual(inA.items.map((i: any) => i.metadata.name), ['web']);
    const sel = async (q: string) => (await c.raw('GET', `/apis/metrics.k8s.io/v1beta1/pods?${q}`)).json().items.map((i: any) => i.metadata.name);
    assert.deepEqual(await sel('labelSelector=app%3Ddb'), ['db']);
    assert.deepEqual(await sel('labelSelector=app%20in%20(web,lonely)'), ['web']);
    assert.deepEqual(await sel(`fieldSelector=metadata.namespace%3D${NS_B}`), ['db']);
    assert.deepEqual(await sel('fieldSelector=metadata.name%3Dweb'), ['web']);
  });

  test('Table, YAML and metadata-only answers', async () => {
    const t = (await c.raw('GET', '/apis/metrics.k8s.io/v1beta1/nodes', { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).json();
    assert.equal(t.kind, 'Table');
    assert.equal(t.apiVersion, 'meta.k8s.io/v1');
    assert.deepEqual(t.columnDefinitions, [
      { name: 'Name', type: 'string', format: 'name', description: 'Name of the resource', priority: 0 },
      { name: 'cpu', type: 'string', format: 'quantity', description: '', priority: 0 },
      { name: 'memory', type: 'string', format: 'quantity', description: '', priority: 0 },
      { name: 'Window', type: 'string', format: 'duration', description: '', priority: 0 },
    ]);
    assert.deepEqual(t.rows.map((r: any) => r.cells), [[NODE, NODE_CPU, '1234567Ki', '15.043s']]);
    assert.equal(t.rows[0].object.kind, 'PartialObjectMetadata');
    assert.equal(t.rows[0].object.metadata.name, NODE);
    // a pod's row sums its containers
    const pt = (await c.raw('GET', `/apis/metrics.k8s.io/v1beta1/namespaces/${NS_A}/pods/web?includeObject=None`, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).json();
    assert.deepEqual(pt.rows, [{ cells: ['web', '40322580n', '53428800', '15.5s'] }]);
    const y = await c.raw('GET', `/apis/metrics.k8s.io/v1beta1/nodes/${NODE}`, { headers: { accept: 'application/yaml' } });
    assert.equal(y.headers['content-type'], 'application/yaml');
    assert.equal(YAML.parse(y.text).usage.cpu, NODE_CPU);
    const pom = (await c.raw('GET', '/apis/metrics.k8s.io/v1beta1/pods', { headers: { accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' } })).json();
    assert.equal(pom.kind, 'PartialObjectMetadataList');
    assert.deepEqual(pom.items.map((i: any) => i.metadata.name), ['web', 'db']);
    const ui = (await c.raw('GET', `/apis/metrics.k8s.io/v1beta1/nodes?includeObject=All`, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).json();
    assert.equal(ui.code, 400);
  });

  test("metrics-server's errors: NotFound in its words, no watch, read-only", async () => {
    const status = async (method: string, path: string, code: number, message: string, details?: any) => {
      const r = await c.raw(method, path, method === 'POST' ? { body: {} } : {});
      assert.equal(r.status, code, `${method} ${path}: ${r.text}`);
      const s = r.json();
      assert.equal(s.kind, 'Status');
      assert.equal(s.message, message);
      if (details) assert.deepEqual(s.details, details);
    };
    await status('GET', `/apis/metrics.k8s.io/v1beta1/namespaces/${NS_A}/pods/nope`, 404, 'pods "nope" not found', { name: 'nope', kind: 'pods' });
    await status('GET', `/apis/metrics.k8s.io/v1beta1/namespaces/${NS_A}/pods/lonely`, 404, `podmetrics.metrics.k8s.io "${NS_A}/lonely" not found`, { name: `${NS_A}/lonely`, group: 'metrics.k8s.io', kind: 'podmetrics' });
    await status('GET', '/apis/metrics.k8s.io/v1beta1/nodes/nope', 404, 'node "nope" not found', { name: 'nope', kind: 'node' });
    await status('GET', `/apis/metrics.k8s.io/v1beta1/nodes/${IDLE}`, 404, `nodemetrics.metrics.k8s.io "${IDLE}" not found`);
    await status('GET', '/apis/metrics.k8s.io/v1beta1/nodes?watch=true', 405, 'watch is not supported on resources of kind "nodes.metrics.k8s.io"', { group: 'metrics.k8s.io', kind: 'nodes' });
    await status('GET', '/apis/metrics.k8s.io/v1beta1/pods?watch=1', 405, 'watch is not supported on resources of kind "pods.metrics.k8s.io"');
    await status('GET', '/apis/metrics.k8s.io/v1beta1/watch/pods', 404, 'the server could not find the requested resource');
    await status('POST', `/apis/metrics.k8s.io/v1beta1/namespaces/${NS_A}/pods`, 405, 'the server does not allow this method on the requested resource');
    await status('DELETE', `/apis/metrics.k8s.io/v1beta1/nodes/${NODE}`, 405, 'the server does not allow this method on the requested resource');
    await status('GET', '/apis/metrics.k8s.io/v1beta1/things', 404, 'the server could not find the requested resource');
    await status('GET', `/apis/metrics.k8s.io/v1beta1/namespaces/${NS_A}/nodes`, 404, 'the server could not find the requested resource');
    await status('GET', '/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=spec.nodeName%3Dx', 400, '"spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace"');
    await status('GET', '/apis/metrics.k8s.io/v1beta1/pods?labelSelector=a%3D%3D%3Db', 400, (await c.raw('GET', '/api/v1/pods?labelSelector=a%3D%3D%3Db')).json().message);
  });


  test('Protobuf: gets and lists in the envelope, each field where generated.proto puts it', async () => {
    const M = '/apis/metrics.k8s.io/v1beta1';
    const get = async (path: string, accept = PB) => {
      const r = await c.raw('GET', path, { headers: { accept } });
      assert.equal(r.status, 200, `${path}: ${r.text.slice(0, 300)}`);
      assert.equal(r.headers['content-type'], PB, path);
      return pbEnvelope(r.body);
    };
    // a node: NodeMetrics {1 metadata, 2 timestamp, 3 window, 4 usage}
    const n = await get(`${M}/nodes/${NODE}`);
    assert.deepEqual([n.apiVersion, n.kind, n.contentEncoding ?? '', n.contentType ?? ''], ['metrics.k8s.io/v1beta1', 'NodeMetrics', '', '']);
    const nm = pbDecode('NodeMetrics', n.raw);
    assert.deepEqual(Object.keys(nm).sort(), ['metadata', 'timestamp', 'usage', 'window']);
    assert.equal(nm.metadata.name, NODE);
    // (Go's generated marshallers write every string and integer of a value field, empty or not)
    assert.equal(nm.metadata.namespace, '');
    assert.equal(nm.metadata.uid, '');
    assert.deepEqual(nm.metadata.labels, { 'kubernetes.io/hostname': NODE, tier: 'metrics' });
    assert.ok(Math.abs(Number(nm.metadata.creationTimestamp.seconds) * 1000 - Date.now()) < 5000, 'created now');
    assert.equal(nm.metadata.creationTimestamp.nanos, 0);
    assert.equal(nm.timestamp.nanos, 0);
    assert.ok(nodeTimes().includes(pbTime(nm.timestamp)), `${pbTime(nm.timestamp)} is a sample's time`);
    assert.equal(nm.window.duration, '15043000000', 'the window in nanoseconds');
    assert.deepEqual(pbUsage(nm.usage), { cpu: NODE_CPU, memory: '1234567Ki' });
    // (Go writes the fields in order, and a map's entries by sorted key: cpu, then memory)
    assert.equal(n.raw[0], 0x0a, 'field 1 first');
    assert.ok(Buffer.from(n.raw).indexOf('cpu') < Buffer.from(n.raw).indexOf('memory'));
    // the same object as its JSON form says
    const j = (await c.raw('GET', `${M}/nodes/${NODE}`)).json();
    assert.deepEqual({ name: nm.metadata.name, labels: nm.metadata.labels, window: '15.043s', usage: pbUsage(nm.usage) }, { name: j.metadata.name, labels: j.metadata.labels, window: j.window, usage: j.usage });
    // the list: NodeMetricsList {1 metadata (empty), 2 items}, only nodes with metrics; selected
    const nl = await get(`${M}/nodes`);
    assert.deepEqual([nl.apiVersion, nl.kind], ['metrics.k8s.io/v1beta1', 'NodeMetricsList']);
    const nlm = pbDecode('NodeMetricsList', nl.raw);
    assert.deepEqual(nlm.metadata, EMPTY_LIST_META);
    assert.deepEqual(nlm.items.map((i: any) => [i.metadata.name, i.window.duration, pbUsage(i.usage)]), [[NODE, '15043000000', { cpu: NODE_CPU, memory: '1234567Ki' }]]);
    assert.deepEqual(pbDecode('NodeMetricsList', (await get(`${M}/nodes?labelSelector=tier%3Dnone`)).raw), { metadata: EMPTY_LIST_META, items: [] });
    // pods: PodMetrics {1 metadata, 2 timestamp, 3 window, 4 containers {1 name, 2 usage}}
    const pl = await get(`${M}/pods`);
    assert.deepEqual([pl.apiVersion, pl.kind], ['metrics.k8s.io/v1beta1', 'PodMetricsList']);
    const plm = pbDecode('PodMetricsList', pl.raw);
    assert.deepEqual(plm.metadata, EMPTY_LIST_META);
    assert.deepEqual(plm.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`), [`${NS_A}/web`, `${NS_B}/db`]);
    const web = plm.items[0];
    assert.deepEqual(web.metadata.labels, { app: 'web' });
    assert.ok(podTimes().includes(pbTime(web.timestamp)), `${pbTime(web.timestamp)} is a sample's time`);
    assert.equal(web.window.duration, '15500000000');
    assert.deepEqual(web.containers.map((x: any) => [x.name, pbUsage(x.usage)]), [
      ['main', { cpu: WEB_MAIN_CPU, memory: '50Mi' }],
      ['side', { cpu: WEB_SIDE_CPU, memory: '1000000' }],
    ]);
    const db = await get(`${M}/namespaces/${NS_B}/pods/db`);
    assert.deepEqual([db.apiVersion, db.kind], ['metrics.k8s.io/v1beta1', 'PodMetrics']);
    const dbm = pbDecode('PodMetrics', db.raw);
    assert.deepEqual([dbm.metadata.namespace, dbm.metadata.name, dbm.window.duration], [NS_B, 'db', '15500000000']);
    assert.deepEqual(dbm.containers.map((x: any) => [x.name, pbUsage(x.usage)]), [['postgres', { cpu: DB_CPU, memory: '100Mi' }]]);
    assert.deepEqual(pbDecode('PodMetricsList', (await get(`${M}/namespaces/${NS_A}/pods?fieldSelector=metadata.name%3Dweb`)).raw).items.map((i: any) => i.metadata.name), ['web']);
    // metadata-only, in Protobuf
    const pom = await get(`${M}/pods`, `${PB};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`);
    assert.deepEqual([pom.apiVersion, pom.kind], ['meta.k8s.io/v1', 'PartialObjectMetadataList']);
    assert.deepEqual(pbDecode('PartialObjectMetadataList', pom.raw).items.map((i: any) => [i.metadata.namespace, i.metadata.name, i.metadata.labels]), [
      [NS_A, 'web', { app: 'web' }],
      [NS_B, 'db', { app: 'db' }],
    ]);
    const po = await get(`${M}/nodes/${NODE}`, `${PB};as=PartialObjectMetadata;g=meta.k8s.io;v=v1`);
    assert.deepEqual([po.apiVersion, po.kind, pbDecode('PartialObjectMetadata', po.raw).metadata.name], ['meta.k8s.io/v1', 'PartialObjectMetadata', NODE]);
    // a Table has no Protobuf form: 406, or the next choice
    const t = await c.raw('GET', `${M}/nodes`, { headers: { accept: `${PB};as=Table;g=meta.k8s.io;v=v1` } });
    assert.equal(t.status, 406);
    const tj = await c.raw('GET', `${M}/nodes`, { headers: { accept: `${PB};as=Table;g=meta.k8s.io;v=v1, application/json;as=Table;g=meta.k8s.io;v=v1` } });
    assert.equal(tj.status, 200);
    assert.equal(tj.json().kind, 'Table');
    // an error is a Protobuf Status when Protobuf was asked for
    const nf = await c.raw('GET', `${M}/nodes/nope`, { headers: { accept: PB } });
    assert.equal(nf.status, 404);
    assert.deepEqual([pbEnvelope(nf.body).apiVersion, pbEnvelope(nf.body).kind], ['v1', 'Status']);
  });

  test('CBOR (the CBORServingAndStorage gate on): gets and lists, read by cborg', async () => {
    const M = '/apis/metrics.k8s.io/v1beta1';
    const get = async (path: string, accept = 'application/cbor') => {
      const r = await c.raw('GET', path, { headers: { accept } });
      assert.equal(r.status, 200, `${path}: ${r.text.slice(0, 300)}`);
      assert.equal(r.headers['content-type'], 'application/cbor', path);
      return cborDecode(r.body);
    };
    const n = await get(`${M}/nodes/${NODE}`);
    assert.ok(nodeTimes().includes(n.timestamp));
    assert.deepEqual(timeless(n), nodeMetricsTimeless());
    const pods = await get(`${M}/pods`);
    assert.deepEqual([pods.kind, pods.apiVersion, pods.metadata], ['PodMetricsList', 'metrics.k8s.io/v1beta1', {}]);
    assert.deepEqual(pods.items.map((i: any) => [i.metadata.name, i.window, i.containers]), [
      ['web', '15.5s', [{ name: 'main', usage: { cpu: WEB_MAIN_CPU, memory: '50Mi' } }, { name: 'side', usage: { cpu: WEB_SIDE_CPU, memory: '1000000' } }]],
      ['db', '15.5s', [{ name: 'postgres', usage: { cpu: DB_CPU, memory: '100Mi' } }]],
    ]);
    const pom = await get(`${M}/nodes`, 'application/cbor;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1');
    assert.deepEqual([pom.kind, pom.items.map((i: any) => i.metadata.name)], ['PartialObjectMetadataList', [NODE]]);
  });

  test("list options: decoded and validated as k8s.io/apiserver's list handler does; those its storage reads are ignored", async () => {
    const M = '/apis/metrics.k8s.io/v1beta1';
    const expect400 = async (path: string, message: string | RegExp) => {
      const r = await c.raw('GET', path);
      assert.equal(r.status, 400, `${path}: ${r.text}`);
      const s = r.json();
      assert.deepEqual([s.kind, s.status, s.reason, s.code], ['Status', 'Failure', 'BadRequest', 400], path);
      if (typeof message === 'string') assert.equal(s.message, message, path);
      else assert.match(s.message, message, path);
      return s.message as string;
    };
    const core = async (q: string) => (await c.raw('GET', `/api/v1/namespaces/${NS_A}/configmaps?${q}`)).json().message;
    for (const coll of [`${M}/nodes`, `${M}/pods`, `${M}/namespaces/${NS_A}/pods`]) {
      await expect400(`${coll}?limit=abc`, 'strconv.ParseInt: parsing "abc": invalid syntax');
      await expect400(`${coll}?limit=`, 'strconv.ParseInt: parsing "": invalid syntax');
      await expect400(`${coll}?limit=99999999999999999999`, 'strconv.ParseInt: parsing "99999999999999999999": value out of range');
      await expect400(`${coll}?timeoutSeconds=1.5`, 'strconv.ParseInt: parsing "1.5": invalid syntax');
      await expect400(`${coll}?fieldSelector=a`, "invalid selector: 'a'; can't understand 'a'");
      await expect400(`${coll}?fieldSelector=spec.nodeName%3Dx`, '"spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace"');
      // (the same words as every other list's)
      for (const q of ['labelSelector=a+in+(b', 'labelSelector=a>b', 'resourceVersionMatch=Exact', 'resourceVersion=0&resourceVersionMatch=Exact', 'resourceVersionMatch=Bogus&resourceVersion=1', 'sendInitialEvents=true']) {
        await expect400(`${coll}?${q}`, await core(q));
      }
      // a watch's options are decoded and validated before the watch is refused
      await expect400(`${coll}?watch=1&limit=abc`, 'strconv.ParseInt: parsing "abc": invalid syntax');
      await expect400(`${coll}?watch=1&labelSelector=(`, await core('labelSelector=('));
      await expect400(`${coll}?watch=1&sendInitialEvents=true`, /sendInitialEvents requires setting resourceVersionMatch to NotOlderThan/);
      await expect400(`${coll}?watch=1&resourceVersionMatch=Exact&sendInitialEvents=true`, /resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"/);
      const w = await c.raw('GET', `${coll}?watch=1&timeoutSeconds=5&labelSelector=a%3Db`);
      assert.equal(w.status, 405);
      assert.equal(w.json().reason, 'MethodNotAllowed');
    }
    // what metrics-server's storage would read (limit, continue, resourceVersion) it ignores: the whole list, now, no ListMeta
    const names = async (q: string) => {
      const r = await c.raw('GET', `${M}/pods?${q}`);
      assert.equal(r.status, 200, `${q}: ${r.text}`);
      assert.deepEqual(r.json().metadata, {}, q);
      return r.json().items.map((i: any) => i.metadata.name);
    };
    for (const q of ['limit=1', 'limit=-1', 'continue=garbage', 'limit=1&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MX0', 'resourceVersion=abc', 'resourceVersion=1&resourceVersionMatch=Exact', 'resourceVersion=99999999999', 'timeoutSeconds=-5', 'allowWatchBookmarks=xx']) {
      assert.deepEqual(await names(q), ['web', 'db'], q);
    }
    assert.equal((await c.raw('GET', `${M}/nodes/${NODE}?resourceVersion=abc`)).status, 200);
    // kubectl get --raw: the same answers
    const raw = await kubectl(['get', '--raw', `${M}/pods?limit=abc`]);
    assert.notEqual(raw.code, 0);
    assert.match(raw.stderr, /Error from server \(BadRequest\): strconv\.ParseInt: parsing "abc": invalid syntax/);
    const sel = JSON.parse(await ok(['get', '--raw', `${M}/namespaces/${NS_B}/pods?labelSelector=app%3Ddb&limit=1`]));
    assert.deepEqual(sel.items.map((i: any) => i.metadata.name), ['db']);
  });

  test('kubectl top reads the Protobuf answers (its default), and the JSON ones the same', async () => {
    const v9 = await kubectl(['top', 'node', NODE, '--no-headers', '-v=9'], '1.33');
    assert.equal(v9.code, 0, v9.stderr);
    // (its request of the NodeMetrics asks for Protobuf first; the answer's headers say Protobuf)
    assert.match(v9.stderr, new RegExp(`-H "Accept: application/vnd\\.kubernetes\\.protobuf, \\*/\\*" [^\\n]*'[^']*/apis/metrics\\.k8s\\.io/v1beta1/nodes/${NODE}'`));
    assert.match(v9.stderr, new RegExp(`"Response" verb="GET" url="[^"]*/apis/metrics\\.k8s\\.io/v1beta1/nodes/${NODE}" status="200 OK" headers=<\\n(?:\\t[^\\n]*\\n)*?\\tContent-Type: application/vnd\\.kubernetes\\.protobuf\\n`));
    for (const v of VERSIONS) {
      for (const args of [['top', 'node', '--no-headers'], ['top', 'pod', '-A', '--no-headers'], ['top', 'pod', '-n', NS_A, '--containers', '--no-headers']]) {
        assert.deepEqual(rows(await ok([...args, '--use-protocol-buffers=true'], v)), rows(await ok([...args, '--use-protocol-buffers=false'], v)), `${v} ${args.join(' ')}`);
      }
    }
  });

  for (const v of VERSIONS) {
    test(`kubectl ${v} top node, top pod -A, --containers, -l`, async () => {
      // kubectl rounds CPU up to millicores (149571229n is 150m, 3% of 4 cores) and memory down to Mi (1234567Ki is 1205Mi, 14% of 8Gi)
      assert.deepEqual(rows(await ok(['top', 'node'], v)), [
        ['NAME', 'CPU(cores)', v === '1.27' ? 'CPU%' : 'CPU(%)', 'MEMORY(bytes)', v === '1.27' ? 'MEMORY%' : 'MEMORY(%)'],
        [NODE, '150m', '3%', '1205Mi', '14%'],
        [IDLE, '<unknown>', '<unknown>', '<unknown>', '<unknown>'],
      ]);
      assert.deepEqual(rows(await ok(['top', 'node', NODE, '--no-headers'], v)), [[NODE, '150m', '3%', '1205Mi', '14%']]);
      assert.deepEqual(rows(await ok(['top', 'node', '-l', 'tier=metrics', '--no-headers'], v)), [[NODE, '150m', '3%', '1205Mi', '14%']]);
      // (in the API's order: by namespace, then name)
      assert.deepEqual(rows(await ok(['top', 'pod', '-A'], v)), [
        ['NAMESPACE', 'NAME', 'CPU(cores)', 'MEMORY(bytes)'],
        [NS_A, 'web', '41m', '50Mi'],
        [NS_B, 'db', '194m', '100Mi'],
      ]);
      assert.deepEqual(rows(await ok(['top', 'pod', '-n', NS_A, '--containers'], v)), [
        ['POD', 'NAME', 'CPU(cores)', 'MEMORY(bytes)'],
        ['web', 'main', '33m', '50Mi'],
        ['web', 'side', '9m', '0Mi'],
      ]);
      assert.deepEqual(rows(await ok(['top', 'pod', '-n', NS_B, '-l', 'app=db'], v)), [
        ['NAME', 'CPU(cores)', 'MEMORY(bytes)'],
        ['db', '194m', '100Mi'],
      ]);
      const none = await kubectl(['top', 'pod', '-n', NS_B, '-l', 'app=web'], v);
      assert.equal(none.code, 0, none.stderr);
      assert.match(none.stderr + none.stdout, /No resources found in metrics-b namespace\./);
      const lonely = await kubectl(['top', 'pod', 'lonely', '-n', NS_A], v);
      assert.notEqual(lonely.code, 0);
      assert.match(lonely.stderr, /podmetrics\.metrics\.k8s\.io "metrics-a\/lonely" not found/);
    });
  }

  test('RBAC: a user without rights gets 403; with view in a namespace, kubectl top pod there works', async () => {
    const no = await kubectl(['top', 'pod', '-n', NS_A], '1.33', users.nobody);
    assert.notEqual(no.code, 0);
    assert.match(no.stderr, /pods\.metrics\.k8s\.io is forbidden: User "nobody" cannot list resource "pods" in API group "metrics\.k8s\.io" in the namespace "metrics-a"/);
    for (const v of VERSIONS) {
      assert.deepEqual(rows(await ok(['top', 'pod', '-n', NS_A, '--no-headers'], v, users.viewer)), [['web', '41m', '50Mi']]);
      const other = await kubectl(['top', 'pod', '-n', NS_B], v, users.viewer);
      assert.notEqual(other.code, 0);
      assert.match(other.stderr, /pods\.metrics\.k8s\.io is forbidden: User "viewer" cannot list resource "pods" in API group "metrics\.k8s\.io" in the namespace "metrics-b"/);
    }
    assert.equal((await ok(['auth', 'can-i', 'list', 'pods.metrics.k8s.io', '-n', NS_A], '1.33', users.viewer)).trim(), 'yes');
    assert.equal((await kubectl(['auth', 'can-i', 'list', 'nodes.metrics.k8s.io'], '1.33', users.viewer)).stdout.trim(), 'no');
  });
});

describe('a real metrics-server takes over', () => {
  let ext: https.Server;
  const seen: string[] = [];

  before(async () => {
    const ca = await createCA('fake-metrics-server-ca');
    const serving = await issueServingCert(ca, 'metrics-server', { dns: ['metrics-server.kube-system.svc', 'localhost'], ips: ['127.0.0.1'] });
    const resources = METRICS_RESOURCE_LIST;
    ext = https.createServer({ cert: serving.certPEM, key: serving.keyPEM }, (req, res) => {
      const u = new URL(req.url!, 'https://x');
      seen.push(u.pathname);
      const json = (body: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (u.pathname === '/apis/metrics.k8s.io/v1beta1') return json(resources);
      if (u.pathname === '/apis') return json({ kind: 'APIGroupList', apiVersion: 'v1', groups: [] });
      const item = { metadata: { name: NODE, creationTimestamp: timeOf(Date.now()) }, timestamp: timeOf(Date.now()), window: '20s', usage: { cpu: '2', memory: '4Gi' } };
      if (u.pathname === '/apis/metrics.k8s.io/v1beta1/nodes') return json({ kind: 'NodeMetricsList', apiVersion: 'metrics.k8s.io/v1beta1', metadata: {}, items: [item] });
      if (u.pathname === `/apis/metrics.k8s.io/v1beta1/nodes/${NODE}`) return json({ kind: 'NodeMetrics', apiVersion: 'metrics.k8s.io/v1beta1', ...item });
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}');
    });
    await new Promise<void>((r) => ext.listen(0, '127.0.0.1', r));
  });

  after(() => new Promise<void>((r) => ext.close(() => r())));

  test('an APIService with a service is proxied to; without it again, or deleted, the built-in serves', async () => {
    const port = (ext.address() as import('node:net').AddressInfo).port;
    // (as metrics-server's manifest: a Service in kube-system; an extension on this machine is reached through an ExternalName Service)
    await ok(['apply', '-f', c.file('ms-svc.yaml', `apiVersion: v1\nkind: Service\nmetadata:\n  name: metrics-server\n  namespace: kube-system\nspec:\n  type: ExternalName\n  externalName: localhost\n`)]);
    await ok([
      'apply',
      '-f',
      c.file(
        'ms-apiservice.yaml',
        `apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: v1beta1.metrics.k8s.io\nspec:\n  service:\n    name: metrics-server\n    namespace: kube-system\n    port: ${port}\n  group: metrics.k8s.io\n  version: v1beta1\n  insecureSkipTLSVerify: true\n  groupPriorityMinimum: 100\n  versionPriority: 100\n`,
      ),
    ]);
    await until('the extension server answers', async () => {
      const r = await c.raw('GET', '/apis/metrics.k8s.io/v1beta1/nodes');
      return r.status === 200 && r.json().items[0]?.usage?.cpu === '2';
    });
    assert.ok(seen.includes('/apis/metrics.k8s.io/v1beta1/nodes'));
    assert.match(await ok(['get', 'apiservices', 'v1beta1.metrics.k8s.io', '--no-headers']), /^v1beta1\.metrics\.k8s\.io\s+kube-system\/metrics-server\s+True\s+/);
    // discovery now carries what the extension server says (its legacy list, converted: responseKind with its group version)
    await until('the extension server\'s discovery', async () => {
      const agg = (await c.raw('GET', '/apis', { headers: { accept: AGG } })).json();
      const ms = agg.items.filter((g: any) => g.metadata.name === 'metrics.k8s.io');
      return ms.length === 1 && ms[0].versions.length === 1 && ms[0].versions[0].freshness === 'Current' && ms[0].versions[0].resources[0].responseKind.group === 'metrics.k8s.io';
    });
    // (kubectl in the background: this process answers as the extension server)
    for (const v of VERSIONS) {
      const top = await c.kubectlAsync(['top', 'node', '--no-headers'], { version: v });
      assert.equal(top.code, 0, top.stderr);
      assert.deepEqual(rows(top.stdout), [
        [NODE, '2000m', '50%', '4096Mi', '50%'],
        [IDLE, '<unknown>', '<unknown>', '<unknown>', '<unknown>'],
      ]);
    }
    assert.ok(seen.includes('/apis/metrics.k8s.io/v1beta1/nodes'));
    // its discovery comes from the extension server (one metrics.k8s.io group, listed once)
    const groups = (await c.raw('GET', '/apis')).json().groups.filter((g: any) => g.name === 'metrics.k8s.io');
    assert.equal(groups.length, 1);
    assert.deepEqual(rows(await ok(['api-resources', '--api-group=metrics.k8s.io', '--no-headers'], '1.33')), [
      ['nodes', 'metrics.k8s.io/v1beta1', 'false', 'NodeMetrics'],
      ['pods', 'metrics.k8s.io/v1beta1', 'true', 'PodMetrics'],
    ]);
    // the service taken out: the built-in again
    await ok(['patch', 'apiservice', 'v1beta1.metrics.k8s.io', '--type=json', '-p', '[{"op":"remove","path":"/spec/service"},{"op":"remove","path":"/spec/insecureSkipTLSVerify"}]']);
    await until('the built-in answers again', async () => {
      const r = await c.raw('GET', `/apis/metrics.k8s.io/v1beta1/nodes/${NODE}`);
      return r.status === 200 && r.json().usage.cpu === NODE_CPU;
    });
    // deleted: made again, Local
    await ok(['delete', 'apiservice', 'v1beta1.metrics.k8s.io']);
    await until('the APIService made again', async () => {
      const r = await c.raw('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io');
      return r.status === 200 && r.json().status?.conditions?.[0]?.reason === 'Local';
    });
    await until('served', async () => (await c.raw('GET', `/apis/metrics.k8s.io/v1beta1/nodes/${NODE}`)).status === 200);
    assert.deepEqual(rows(await ok(['top', 'node', NODE, '--no-headers'], '1.33')), [[NODE, '150m', '3%', '1205Mi', '14%']]);
  });
});

describe('--disable=metrics-server and the flags', () => {
  test('--help documents the flags; a bad item or a resolution under 10s is refused', () => {
    const help = spawnSync(process.execPath, [KEELSON, 'server', '--help'], { cwd: ROOT, encoding: 'utf8' });
    assert.match(help.stdout, /--disable strings\s+Do not run these packaged components/);
    assert.match(help.stdout, /--metric-resolution duration\s+How often the built-in metrics-server scrapes/);
    const tmp = mkdtempSync(join(tmpdir(), 'keelson-metrics-flags-'));
    try {
      const bad = spawnSync(process.execPath, [KEELSON, 'server', '--data-dir', tmp, '--storage-backend=memory', '--disable=metrics'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
      assert.notEqual(bad.status, 0);
      assert.match(bad.stderr, /--disable: invalid value "metrics": valid items are metrics-server/);
      const fast = spawnSync(process.execPath, [KEELSON, 'server', '--data-dir', tmp, '--storage-backend=memory', '--metric-resolution=5s'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
      assert.notEqual(fast.status, 0);
      assert.match(fast.stderr, /metric-resolution should be a time duration at least 10s, but value 5s provided/);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  test('a restart with --disable=metrics-server deletes what the built-in made; kubectl top says the API is not available', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'keelson-metrics-disable-'));
    let d: Cluster | undefined;
    try {
      d = await startCluster({ dataDir, keepData: true });
      assert.equal((await d.raw('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io')).status, 200);
      // (without the CBORServingAndStorage gate: no CBOR, as no other group has it; Protobuf still)
      const cb = await d.raw('GET', '/apis/metrics.k8s.io/v1beta1/nodes', { headers: { accept: 'application/cbor' } });
      assert.equal(cb.status, 406);
      assert.equal(cb.json().message, 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf');
      const pb = await d.raw('GET', '/apis/metrics.k8s.io/v1beta1/nodes', { headers: { accept: PB } });
      assert.equal(pb.status, 200);
      assert.deepEqual(pbDecode('NodeMetricsList', pbEnvelope(pb.body).raw), { metadata: EMPTY_LIST_META, items: [] });
      await d.stop();
      d = await startCluster({ dataDir, keepData: true, args: ['--disable=metrics-server'] });
      assert.equal((await d.raw('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io')).status, 404);
      assert.equal((await d.raw('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:aggregated-metrics-reader')).status, 404);
      assert.ok(!(await d.raw('GET', '/apis')).json().groups.some((g: any) => g.name === 'metrics.k8s.io'));
      assert.equal((await d.raw('GET', '/apis/metrics.k8s.io/v1beta1/nodes')).status, 404);
      for (const v of VERSIONS) {
        const top = d.kubectl(['top', 'node'], { version: v });
        assert.notEqual(top.code, 0);
        assert.match(top.stderr, /Metrics API not available/);
      }
    } finally {
      await d?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

