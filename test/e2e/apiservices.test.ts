// apiregistration.k8s.io/v1 APIService: the local APIServices the server keeps for the group
// versions it serves (as kube-apiserver's autoregister controller does), their priorities, their
// Available=True (Local) status, the kind's rules, and what a restart puts back. The first tests
// check the functions of src/apiserver/apiservices.ts on their own; the rest run a real keelson
// and read it with kubectl and raw HTTPS.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  AUTOMANAGED_LABEL,
  LOCAL_API_SERVICE_PRIORITIES,
  apiServiceName,
  localAPIServices,
  servedGroupVersions,
  syncLocalAPIServices,
  validateAPIService,
  validateAPIServiceStatus,
  type APIServiceStore,
} from '../../src/apiserver/apiservices.js';
import { BUILTIN_KINDS } from '../../src/schema/kinds.js';
import { startCluster, type Cluster } from './harness.js';

const GROUP = 'apiregistration.k8s.io';
const NOW = Date.UTC(2025, 0, 2, 3, 4, 5, 678);

/** the group versions the server serves, apiregistration.k8s.io itself left out (it never has one) */
const SERVED = servedGroupVersions(BUILTIN_KINDS).filter((gv) => gv.group !== GROUP);

// ---------------------------------------------------------------------------------------------
// The functions on their own

test('a local APIService per served group version, named <version>.<group>, with kube-apiserver\'s priorities', () => {
  const all = localAPIServices(SERVED, NOW);
  assert.deepEqual(
    all.map((o) => o.metadata.name),
    SERVED.map(apiServiceName).sort(),
  );
  const byName = new Map(all.map((o) => [o.metadata.name, o]));
  const expect: [string, number, number][] = [
    ['v1.', 18000, 1],
    ['v1.apps', 17800, 15],
    ['v1.events.k8s.io', 17750, 15],
    ['v1.authentication.k8s.io', 17700, 15],
    ['v1.authorization.k8s.io', 17600, 15],
    ['v2.autoscaling', 17500, 30],
    ['v1.batch', 17400, 15],
    ['v1.certificates.k8s.io', 17300, 15],
    ['v1.networking.k8s.io', 17200, 15],
    ['v1.policy', 17100, 15],
    ['v1.rbac.authorization.k8s.io', 17000, 15],
    ['v1.storage.k8s.io', 16800, 15],
    ['v1.admissionregistration.k8s.io', 16700, 15],
    ['v1.apiextensions.k8s.io', 16700, 15],
    ['v1.scheduling.k8s.io', 16600, 15],
    ['v1.coordination.k8s.io', 16500, 15],
    ['v1.node.k8s.io', 16300, 15],
    ['v1.discovery.k8s.io', 16200, 15],
    ['v1.flowcontrol.apiserver.k8s.io', 16100, 21],
  ];
  for (const [name, g, v] of expect) {
    const o = byName.get(name);
    assert.ok(o, name);
    assert.equal(o.spec.groupPriorityMinimum, g, name);
    assert.equal(o.spec.versionPriority, v, name);
  }
  // the core group's spec has no group (Go omits the empty string)
  assert.deepEqual(byName.get('v1.')!.spec, { version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 });
  const apps = byName.get('v1.apps')!;
  assert.deepEqual(apps, {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: 'v1.apps', labels: { [AUTOMANAGED_LABEL]: 'onstart' } },
    spec: { group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 },
    status: {
      conditions: [{ type: 'Available', status: 'True', lastTransitionTime: '2025-01-02T03:04:05Z', reason: 'Local', message: 'Local APIServices are always available' }],
    },
  });
  // the groups in the order discovery lists them: highest group priority first, then by name
  const groups = [...new Set([...all].sort((a, b) => b.spec.groupPriorityMinimum - a.spec.groupPriorityMinimum || (a.metadata.name < b.metadata.name ? -1 : 1)).map((o) => o.spec.group ?? ''))];
  assert.deepEqual(groups.slice(0, 4), ['', 'apps', 'events.k8s.io', 'authentication.k8s.io']);
  // the aggregator's own group has none; a group version kube-apiserver does not know has none
  assert.deepEqual(localAPIServices([{ group: GROUP, version: 'v1' }, { group: 'example.com', version: 'v1' }]), []);
  // every entry of the table is a valid APIService
  for (const key of LOCAL_API_SERVICE_PRIORITIES.keys()) {
    const [group, version] = key.split('/') as [string, string];
    for (const o of localAPIServices([{ group, version }])) assert.deepEqual(validateAPIService(o).map(String), [], key);
  }
});

/** an APIService store in memory, with uids and the preconditions of the real one */
function memoryStore(initial: any[] = []): APIServiceStore & { objects: Map<string, any>; writes: string[] } {
  let n = 0;
  const objects = new Map<string, any>();
  const writes: string[] = [];
  const put = (o: any) => {
    o.metadata.uid ??= `uid-${++n}`;
    objects.set(o.metadata.name, o);
  };
  for (const o of initial) put(structuredClone(o));
  return {
    objects,
    writes,
    list: () => [...objects.values()].map((o) => structuredClone(o)),
    async create(obj) {
      if (objects.has(obj.metadata.name)) throw Object.assign(new Error('exists'), { code: 409 });
      writes.push(`create ${obj.metadata.name}`);
      put(obj);
    },
    async replaceSpec(name, uid, spec) {
      const cur = objects.get(name);
      if (!cur) throw Object.assign(new Error('gone'), { code: 404 });
      if (cur.metadata.uid !== uid) throw Object.assign(new Error('replaced'), { code: 409 });
      writes.push(`update ${name}`);
      cur.spec = structuredClone(spec);
    },
    async delete(name, uid) {
      const cur = objects.get(name);
      if (!cur) throw Object.assign(new Error('gone'), { code: 404 });
      if (cur.metadata.uid !== uid) throw Object.assign(new Error('replaced'), { code: 409 });
      writes.push(`delete ${name}`);
      objects.delete(name);
    },
  };
}

test('the sync at start creates what is missing, puts back the spec of what it manages, removes what it managed and no longer serves, and leaves the rest alone', async () => {
  const gvs = [
    { group: '', version: 'v1' },
    { group: 'apps', version: 'v1' },
    { group: 'batch', version: 'v1' },
  ];
  const managed = (name: string, spec: any) => ({ apiVersion: `${GROUP}/v1`, kind: 'APIService', metadata: { name, labels: { [AUTOMANAGED_LABEL]: 'onstart' } }, spec });
  const store = memoryStore([
    // managed, with a spec someone changed
    managed('v1.apps', { group: 'apps', version: 'v1', groupPriorityMinimum: 100, versionPriority: 1 }),
    // managed, for a group version no longer served
    managed('v1beta1.batch', { group: 'batch', version: 'v1beta1', groupPriorityMinimum: 17400, versionPriority: 9 }),
    // registered by someone else: never touched, even for a served group version
    { apiVersion: `${GROUP}/v1`, kind: 'APIService', metadata: { name: 'v1.batch' }, spec: { group: 'batch', version: 'v1', groupPriorityMinimum: 5, versionPriority: 5 } },
    { apiVersion: `${GROUP}/v1`, kind: 'APIService', metadata: { name: 'v1alpha1.example.com' }, spec: { group: 'example.com', version: 'v1alpha1', groupPriorityMinimum: 1000, versionPriority: 15 } },
  ]);
  const r = await syncLocalAPIServices(store, gvs, NOW);
  assert.deepEqual(r, { created: ['v1.'], updated: ['v1.apps'], deleted: ['v1beta1.batch'] });
  assert.deepEqual(store.objects.get('v1.apps').spec, { group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 });
  assert.deepEqual(store.objects.get('v1.batch').spec.groupPriorityMinimum, 5);
  assert.ok(store.objects.has('v1alpha1.example.com'));
  assert.deepEqual([...store.objects.keys()].sort(), ['v1.', 'v1.apps', 'v1.batch', 'v1alpha1.example.com']);
  // a second run finds nothing to do
  store.writes.length = 0;
  assert.deepEqual(await syncLocalAPIServices(store, gvs, NOW), { created: [], updated: [], deleted: [] });
  assert.deepEqual(store.writes, []);
  // another server that got there first is not an error
  const racing = memoryStore();
  const create = racing.create.bind(racing);
  racing.create = async (obj) => {
    await create(structuredClone(obj));
    throw Object.assign(new Error('exists'), { code: 409 });
  };
  assert.deepEqual((await syncLocalAPIServices(racing, gvs, NOW)).created, []);
  assert.equal(racing.objects.size, 3);
});

test('the rules of an APIService, worded as kube-aggregator words them', () => {
  const local = (o: any) => ({ metadata: { name: 'v1.example.com' }, spec: { group: 'example.com', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 15, ...o } });
  const msgs = (o: any) => validateAPIService(o).map(String);
  assert.deepEqual(msgs(local({})), []);
  assert.deepEqual(msgs({ metadata: { name: 'v1.' }, spec: { version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 } }), []);
  assert.deepEqual(msgs({ ...local({}), metadata: { name: 'v1.wrong' } }), ['metadata.name: Invalid value: "v1.wrong": must be `spec.version+"."+spec.group`: "v1.example.com"']);
  assert.deepEqual(msgs({ metadata: { name: 'v2.' }, spec: { version: 'v2', groupPriorityMinimum: 1, versionPriority: 1 } }), [
    'spec.group: Required value: only v1 may have an empty group and it better be legacy kube',
  ]);
  assert.deepEqual(msgs(local({ groupPriorityMinimum: 0, versionPriority: 1001 })), [
    'spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000',
    'spec.versionPriority: Invalid value: 1001: must be positive and less than 1000',
  ]);
  assert.deepEqual(msgs(local({ caBundle: Buffer.from('abc').toString('base64'), insecureSkipTLSVerify: true })), [
    'spec.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle',
    'spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify',
  ]);
  assert.deepEqual(msgs(local({ service: { port: 0 } })), [
    'spec.service.namespace: Required value',
    'spec.service.name: Required value',
    'spec.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive',
  ]);
  assert.deepEqual(msgs(local({ service: { namespace: 'ns', name: 'api', port: 443 }, caBundle: 'YWJj', insecureSkipTLSVerify: true })), [
    'spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present',
  ]);
  assert.match(msgs({ metadata: { name: 'V1.Example' }, spec: { group: 'Example', version: 'V1', groupPriorityMinimum: 1, versionPriority: 1 } }).join('\n'), /spec\.group: Invalid value: "Example": a lowercase RFC 1123 subdomain[\s\S]*spec\.version: Invalid value: "V1": a DNS-1035 label/);
  assert.deepEqual(validateAPIServiceStatus({ status: { conditions: [{ type: 'Available', status: 'Maybe' }] } }).map(String), [
    'status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown"',
  ]);
});

// ---------------------------------------------------------------------------------------------
// Through a real server. These need the server to serve the kind and to write the local
// APIServices at start.

describe('a real server', () => {
  let c: Cluster;

  before(async () => {
    c = await startCluster();
  });

  after(async () => {
    await c?.stop();
  });

  function kubectl(args: string[], input?: string): string {
    const r = c.kubectl(args, { input, timeoutMs: 120_000 });
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  }

  async function list(): Promise<any[]> {
    const r = await c.raw('GET', `/apis/${GROUP}/v1/apiservices`);
    assert.equal(r.status, 200, r.text);
    const body = r.json();
    assert.equal(body.kind, 'APIServiceList');
    assert.equal(body.apiVersion, `${GROUP}/v1`);
    return body.items;
  }

  test('every served group version has its local APIService, Available because Local', async () => {
    const items = await list();
    const want = localAPIServices(SERVED);
    // (and keelson server's built-in metrics-server's, local too but not automanaged: test/e2e/metrics-api.test.ts)
    assert.deepEqual(
      items.map((o) => o.metadata.name),
      [...want.map((o) => o.metadata.name), 'v1beta1.metrics.k8s.io'].sort(),
    );
    const byName = new Map(items.map((o) => [o.metadata.name, o]));
    for (const w of want) {
      const o = byName.get(w.metadata.name);
      assert.deepEqual(o.spec, w.spec, w.metadata.name);
      assert.equal(o.metadata.labels?.[AUTOMANAGED_LABEL], 'onstart', w.metadata.name);
      assert.ok(o.metadata.uid && o.metadata.resourceVersion && o.metadata.creationTimestamp, w.metadata.name);
      assert.equal(o.metadata.namespace, undefined);
      const conds = o.status?.conditions ?? [];
      assert.equal(conds.length, 1, w.metadata.name);
      assert.deepEqual({ ...conds[0], lastTransitionTime: undefined }, { type: 'Available', status: 'True', lastTransitionTime: undefined, reason: 'Local', message: 'Local APIServices are always available' });
      assert.match(conds[0].lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    }
    assert.ok(!byName.has(`v1.${GROUP}`), 'the aggregator group has no APIService');
    const one = await c.raw('GET', `/apis/${GROUP}/v1/apiservices/v1.apps`);
    assert.equal(one.status, 200);
    assert.deepEqual(one.json().spec, { group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 });
    const core = await c.raw('GET', `/apis/${GROUP}/v1/apiservices/v1.`);
    assert.equal(core.status, 200);
    assert.deepEqual(core.json().spec, { version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 });
  });

  test('discovery: apiservices is cluster-scoped with every verb, in the api-extensions category, with a status subresource', async () => {
    const r = await c.raw('GET', `/apis/${GROUP}/v1`);
    assert.equal(r.status, 200);
    const resources = r.json().resources as any[];
    const main = resources.find((x) => x.name === 'apiservices');
    assert.ok(main, JSON.stringify(resources));
    assert.equal(main.kind, 'APIService');
    assert.equal(main.singularName, 'apiservice');
    assert.equal(main.namespaced, false);
    assert.deepEqual([...main.verbs].sort(), ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    assert.deepEqual(main.categories, ['api-extensions']);
    assert.equal(main.shortNames, undefined);
    const status = resources.find((x) => x.name === 'apiservices/status');
    assert.ok(status);
    assert.deepEqual([...status.verbs].sort(), ['get', 'patch', 'update']);
    // the aggregator's group comes first among the groups
    const groups = (await c.raw('GET', '/apis')).json().groups as any[];
    assert.equal(groups[0].name, GROUP);
    assert.equal(groups[0].preferredVersion.groupVersion, `${GROUP}/v1`);
    const res = kubectl(['api-resources', `--api-group=${GROUP}`, '--no-headers']);
    assert.match(res, /^apiservices\s+apiregistration\.k8s\.io\/v1\s+false\s+APIService\s*$/m);
  });

  test('kubectl get apiservices prints SERVICE Local and AVAILABLE True; the api-extensions category includes them', () => {
    const out = kubectl(['get', 'apiservices']);
    const lines = out.trim().split('\n');
    assert.match(lines[0]!, /^NAME\s+SERVICE\s+AVAILABLE\s+AGE$/);
    assert.match(out, /^v1\.apps\s+Local\s+True\s+\S+$/m);
    assert.match(out, /^v1\.\s+Local\s+True\s+\S+$/m);
    assert.match(out, /^v2\.autoscaling\s+Local\s+True\s+\S+$/m);
    assert.match(out, /^v1beta1\.metrics\.k8s\.io\s+Local\s+True\s+\S+$/m);
    // (one per served group version, and the built-in metrics-server's)
    assert.equal(lines.length - 1, SERVED.length + 1);
    const y = JSON.parse(kubectl(['get', 'apiservice', 'v1.batch', '-o', 'json']));
    assert.equal(y.spec.groupPriorityMinimum, 17400);
    assert.equal(kubectl(['get', 'apiservice', 'v1.flowcontrol.apiserver.k8s.io', '-o', 'jsonpath={.spec.versionPriority}']), '21');
    const cat = kubectl(['get', 'api-extensions', '-o', 'name']);
    assert.match(cat, /^apiservice\.apiregistration\.k8s\.io\/v1\.apps$/m);
    const explain = kubectl(['explain', 'apiservices.spec']);
    assert.match(explain, /groupPriorityMinimum\s+<integer> -required-/);
    assert.match(explain, /versionPriority\s+<integer> -required-/);
    assert.match(explain, /service\s+<ServiceReference>/);
  });

  test('a user\'s APIService: the server owns its status, its name must be <version>.<group>, a status write keeps the spec', async () => {
    const path = `/apis/${GROUP}/v1/apiservices`;
    const body = (name: string, extra: any = {}) => ({
      apiVersion: `${GROUP}/v1`,
      kind: 'APIService',
      metadata: { name },
      spec: { group: 'widgets.example.com', version: 'v1alpha1', groupPriorityMinimum: 1000, versionPriority: 15 },
      status: { conditions: [{ type: 'Available', status: 'False', reason: 'Made', message: 'by the client' }] },
      ...extra,
    });
    const bad = await c.raw('POST', path, { body: body('v1.wrong') });
    assert.equal(bad.status, 422, bad.text);
    assert.match(bad.json().message, /metadata\.name: Invalid value: "v1\.wrong": must be `spec\.version\+"\."\+spec\.group`: "v1alpha1\.widgets\.example\.com"/);
    const created = await c.raw('POST', path, { body: body('v1alpha1.widgets.example.com') });
    assert.equal(created.status, 201, created.text);
    const o = created.json();
    assert.deepEqual(
      o.status.conditions.map((x: any) => [x.type, x.status, x.reason, x.message]),
      [['Available', 'True', 'Local', 'Local APIServices are always available']],
    );
    // a status write may change the conditions, not the spec
    const st = structuredClone(o);
    st.spec.groupPriorityMinimum = 1;
    st.status.conditions[0] = { type: 'Available', status: 'False', lastTransitionTime: o.status.conditions[0].lastTransitionTime, reason: 'Test', message: 'set through status' };
    const put = await c.raw('PUT', `${path}/${o.metadata.name}/status`, { body: st });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.json().spec.groupPriorityMinimum, 1000);
    assert.equal(put.json().status.conditions[0].reason, 'Test');
    // an update of the main resource keeps the status
    const main = put.json();
    main.spec.versionPriority = 20;
    main.status = {};
    const upd = await c.raw('PUT', `${path}/${o.metadata.name}`, { body: main });
    assert.equal(upd.status, 200, upd.text);
    assert.equal(upd.json().spec.versionPriority, 20);
    assert.equal(upd.json().status.conditions[0].reason, 'Test');
    // a remote APIService's port defaults to 443
    const remote = await c.raw('POST', path, {
      body: { ...body('v1beta1.widgets.example.com'), spec: { group: 'widgets.example.com', version: 'v1beta1', groupPriorityMinimum: 1000, versionPriority: 20, service: { namespace: 'default', name: 'widgets' } } },
    });
    assert.equal(remote.status, 201, remote.text);
    assert.equal(remote.json().spec.service.port, 443);
    assert.equal(remote.json().status.conditions, undefined);
    assert.match(kubectl(['get', 'apiservices']), /^v1beta1\.widgets\.example\.com\s+default\/widgets\s+/m);
  });

  test('at a restart the server puts back the local APIServices it keeps and leaves the others', async () => {
    const path = `/apis/${GROUP}/v1/apiservices`;
    const before = new Map((await list()).map((o) => [o.metadata.name, o]));
    // one deleted, one with a changed spec
    assert.equal((await c.raw('DELETE', `${path}/v1.batch`)).status, 200);
    const apps = before.get('v1.apps');
    const patched = await c.raw('PATCH', `${path}/v1.apps`, {
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ spec: { groupPriorityMinimum: 42 } }),
    });
    assert.equal(patched.status, 200, patched.text);
    await c.stopProcess();
    await c.launch();
    const after = new Map((await list()).map((o) => [o.metadata.name, o]));
    for (const w of localAPIServices(SERVED)) assert.ok(after.has(w.metadata.name), w.metadata.name);
    assert.notEqual(after.get('v1.batch').metadata.uid, before.get('v1.batch').metadata.uid, 'v1.batch is a new object');
    assert.equal(after.get('v1.apps').metadata.uid, apps.metadata.uid, 'v1.apps is the same object');
    assert.equal(after.get('v1.apps').spec.groupPriorityMinimum, 17800);
    assert.equal(after.get('v1.').metadata.uid, before.get('v1.').metadata.uid);
    assert.equal(after.get('v1.').metadata.resourceVersion, before.get('v1.').metadata.resourceVersion, 'an unchanged one is not written again');
    // the ones a user registered stay as they were
    assert.ok(after.has('v1alpha1.widgets.example.com'));
    assert.equal(after.get('v1alpha1.widgets.example.com').spec.versionPriority, 20);
  });
});
