// Dry-run (POST, PUT, PATCH, DELETE; nothing stored, no watch event), fieldValidation
// (Ignore, Warn, Strict for JSON and YAML bodies and for patches; the first fatal error wins;
// invalid option values), validation (names, labels, annotations, required fields, enums,
// immutable fields) and defaulting, as a Kubernetes 1.33 API server answers them.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, NO_CA_PUBLISHER, expectStatus, warningsOf, type Cluster, type RawResponse, type RunResult } from './harness.js';

let c: Cluster;
const NS = 'default';
const cms = `/api/v1/namespaces/${NS}/configmaps`;
const deploys = `/apis/apps/v1/namespaces/${NS}/deployments`;
const pods = `/api/v1/namespaces/${NS}/pods`;
const svcs = `/api/v1/namespaces/${NS}/services`;

before(async () => {
  // (the deployment controller off: tests compare Deployments before and after a patch)
  c = await startCluster({ args: [NO_CA_PUBLISHER, '--controllers=*,-deployment-controller'] });
});

after(async () => {
  await c?.stop();
});

function ok(r: RawResponse, code: number, what: string): any {
  assert.equal(r.status, code, `${what}: ${r.status} ${r.text.slice(0, 800)}`);
  return r.json();
}
async function get(path: string): Promise<any> {
  return ok(await c.raw('GET', path), 200, `GET ${path}`);
}
async function create(collection: string, obj: any): Promise<any> {
  return ok(await c.raw('POST', collection, { body: obj }), 201, `POST ${collection}`);
}
function run(r: RunResult): { code: number; stdout: string; stderr: string } {
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}
const cm = (name: string, data: Record<string, string> = { a: '1' }, extra: any = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data });
const DEPLOYMENT = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } } },
});

describe('dry-run', () => {
  test('dryRun=All on POST, PUT, PATCH and DELETE answers what would be stored, stores nothing and sends no watch event', async () => {
    const live = await create(cms, cm('dry-live', { a: '1' }));
    const list = await get(cms);
    const w = c.stream(`${cms}?watch=1&resourceVersion=${list.metadata.resourceVersion}`);
    await w.ready;

    // POST with generateName: a generated name, no resourceVersion, 201
    const p = ok(await c.raw('POST', `${cms}?dryRun=All`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'dry-gen-' }, data: { x: '1' } } }), 201, 'dry POST');
    assert.match(p.metadata.name, /^dry-gen-[a-z0-9]{5}$/);
    assert.equal(p.metadata.generateName, 'dry-gen-');
    assert.ok(p.metadata.uid);
    assert.ok(p.metadata.creationTimestamp);
    assert.equal(p.metadata.resourceVersion, undefined, 'a dry-run create has no resourceVersion');
    expectStatus(await c.raw('GET', `${cms}/${p.metadata.name}`), 404, 'NotFound', 'dry POST stored nothing');
    // a named dry-run create of an existing name: AlreadyExists
    expectStatus(await c.raw('POST', `${cms}?dryRun=All`, { body: cm('dry-live') }), 409, 'AlreadyExists', 'dry POST of an existing name');

    // PUT
    const u = ok(await c.raw('PUT', `${cms}/dry-live?dryRun=All`, { body: { ...live, data: { a: 'put' } } }), 200, 'dry PUT');
    assert.deepEqual(u.data, { a: 'put' });
    assert.equal(u.metadata.resourceVersion, live.metadata.resourceVersion);
    // PATCH of each type
    for (const [type, body] of [
      ['application/merge-patch+json', '{"data":{"a":"merge"}}'],
      ['application/strategic-merge-patch+json', '{"data":{"a":"smp"}}'],
      ['application/json-patch+json', '[{"op":"replace","path":"/data/a","value":"json"}]'],
    ]) {
      const r = ok(await c.raw('PATCH', `${cms}/dry-live?dryRun=All`, { body, headers: { 'content-type': type } }), 200, `dry ${type}`);
      assert.notEqual(r.data.a, '1', type);
    }
    const a = ok(
      await c.raw('PATCH', `${cms}/dry-live?dryRun=All&fieldManager=dry-applier`, { body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dry-live"},"data":{"b":"2"}}', headers: { 'content-type': 'application/apply-patch+yaml' } }),
      200,
      'dry apply',
    );
    assert.deepEqual(a.data, { a: '1', b: '2' });
    const ac = ok(
      await c.raw('PATCH', `${cms}/dry-new?dryRun=All&fieldManager=dry-applier`, { body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dry-new"},"data":{"b":"2"}}', headers: { 'content-type': 'application/apply-patch+yaml' } }),
      201,
      'dry apply create',
    );
    assert.equal(ac.metadata.name, 'dry-new');
    expectStatus(await c.raw('GET', `${cms}/dry-new`), 404, 'NotFound', 'dry apply stored nothing');
    const stored = await get(`${cms}/dry-live`);
    assert.deepEqual(stored, live, 'nothing was stored');

    // the watch saw none of it: a real write after all of them is the first event
    await create(cms, cm('dry-marker'));
    const ev = await w.until((e) => e.some((x) => x.object?.metadata?.name === 'dry-marker'));
    w.close();
    assert.deepEqual(
      ev.map((e) => `${e.type} ${e.object.metadata.name}`),
      ['ADDED dry-marker'],
    );
  });

  test('dryRun=All on DELETE (query or DeleteOptions body) and deletecollection deletes nothing', async () => {
    const live = await create(cms, cm('dry-del', { a: '1' }, { labels: { dry: 'del' } }));
    const list = await get(cms);
    const w = c.stream(`${cms}?watch=1&resourceVersion=${list.metadata.resourceVersion}`);
    await w.ready;
    // a ConfigMap's registry answers an immediate delete with a Success Status, dry run or not
    const d1 = ok(await c.raw('DELETE', `${cms}/dry-del?dryRun=All`), 200, 'dry DELETE query');
    assert.deepEqual(d1, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'dry-del', kind: 'configmaps', uid: live.metadata.uid } });
    const d2 = ok(await c.raw('DELETE', `${cms}/dry-del`, { body: { dryRun: ['All'] } }), 200, 'dry DELETE body');
    assert.deepEqual(d2, d1);
    const dc = ok(await c.raw('DELETE', `${cms}?dryRun=All&labelSelector=dry%3Ddel`), 200, 'dry deletecollection');
    assert.equal(dc.kind, 'ConfigMapList');
    assert.deepEqual(
      dc.items.map((i: any) => i.metadata.name),
      ['dry-del'],
    );
    assert.deepEqual(await get(`${cms}/dry-del`), live);
    await create(cms, cm('dry-del-marker'));
    const ev = await w.until((e) => e.some((x) => x.object?.metadata?.name === 'dry-del-marker'));
    w.close();
    assert.deepEqual(
      ev.map((e) => `${e.type} ${e.object.metadata.name}`),
      ['ADDED dry-del-marker'],
    );
  });

  test('a dry-run Service gets the network address of the range as its cluster IP, as kube-apiserver\'s allocator answers a dry run, and nothing is kept', async () => {
    const body = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'dry-svc' }, spec: { selector: { app: 'x' }, ports: [{ port: 80 }] } };
    const s = ok(await c.raw('POST', `${svcs}?dryRun=All`, { body }), 201, 'dry service');
    assert.equal(s.spec.clusterIP, '10.96.0.0');
    assert.deepEqual(s.spec.clusterIPs, ['10.96.0.0']);
    expectStatus(await c.raw('GET', `${svcs}/dry-svc`), 404, 'NotFound', 'dry service stored nothing');
    // a dry run with a chosen address checks its range only, and holds nothing
    const chosen = ok(await c.raw('POST', `${svcs}?dryRun=All`, { body: { ...body, spec: { ...body.spec, clusterIP: '10.96.7.7' } } }), 201, 'dry service on a chosen IP');
    assert.equal(chosen.spec.clusterIP, '10.96.7.7');
    expectStatus(await c.raw('GET', '/apis/networking.k8s.io/v1/ipaddresses/10.96.7.7'), 404, 'NotFound', 'no IPAddress for a dry run');
    const real = ok(await c.raw('POST', svcs, { body: { ...body, metadata: { name: 'real-svc' }, spec: { ...body.spec, clusterIP: '10.96.7.7' } } }), 201, 'real service on that IP');
    assert.equal(real.spec.clusterIP, '10.96.7.7');
  });

  test('an invalid dryRun value is 400 (the issue asks 400 where Kubernetes answers 422), worded as Kubernetes words it', async () => {
    const p = expectStatus(await c.raw('POST', `${cms}?dryRun=Bogus`, { body: cm('dry-bogus') }), 400, 'BadRequest', 'POST');
    assert.match(p.message, /^CreateOptions\.meta\.k8s\.io "" is invalid: dryRun: Unsupported value: \[\]string\{"Bogus"\}: supported values: "All"$/);
    await create(cms, cm('dry-bogus'));
    const u = expectStatus(await c.raw('PUT', `${cms}/dry-bogus?dryRun=Bogus`, { body: cm('dry-bogus') }), 400, 'BadRequest', 'PUT');
    assert.match(u.message, /^UpdateOptions\.meta\.k8s\.io "" is invalid: dryRun: Unsupported value: /);
    const pa = expectStatus(await c.raw('PATCH', `${cms}/dry-bogus?dryRun=Bogus`, { body: '{}', headers: { 'content-type': 'application/merge-patch+json' } }), 400, 'BadRequest', 'PATCH');
    assert.match(pa.message, /^PatchOptions\.meta\.k8s\.io "" is invalid: dryRun: Unsupported value: /);
    const d = expectStatus(await c.raw('DELETE', `${cms}/dry-bogus`, { body: { dryRun: ['Bogus'] } }), 400, 'BadRequest', 'DELETE');
    assert.match(d.message, /^DeleteOptions\.meta\.k8s\.io "" is invalid: dryRun: Unsupported value: /);
    await get(`${cms}/dry-bogus`);
  });

  test('kubectl --dry-run=server for create, patch and delete (1.33 and 1.27)', async () => {
    for (const v of ['1.33', '1.27']) {
      const tag = v.replace('.', '');
      const f = c.file(`dry-${tag}.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dryk-${tag}\ndata:\n  a: "1"\n`);
      assert.deepEqual(run(c.kubectl(['create', '-f', f, '--dry-run=server'], { version: v })), { code: 0, stdout: `configmap/dryk-${tag} created (server dry run)\n`, stderr: '' });
      expectStatus(await c.raw('GET', `${cms}/dryk-${tag}`), 404, 'NotFound', 'kubectl create dry run');
      assert.equal(c.kubectl(['create', '-f', f], { version: v }).code, 0);
      const before = await get(`${cms}/dryk-${tag}`);
      // kubectl patch prints no dry-run suffix (a client behaviour)
      assert.deepEqual(run(c.kubectl(['patch', 'configmap', `dryk-${tag}`, '-p', '{"data":{"a":"2"}}', '--dry-run=server'], { version: v })), {
        code: 0,
        stdout: `configmap/dryk-${tag} patched\n`,
        stderr: '',
      });
      assert.deepEqual(run(c.kubectl(['delete', 'configmap', `dryk-${tag}`, '--dry-run=server'], { version: v })), { code: 0, stdout: `configmap "dryk-${tag}" deleted (server dry run)\n`, stderr: '' });
      assert.deepEqual(await get(`${cms}/dryk-${tag}`), before);
    }
  });
});

describe('fieldValidation', () => {
  // unknown and duplicate fields, in document order
  const bodyJSON = (name: string) =>
    `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"${name}","bogusMeta":"x"},"spec":{"replicas":1,"replicas":2,"foo":"bar","selector":{"matchLabels":{"app":"fv"}},"template":{"metadata":{"labels":{"app":"fv"}},"spec":{"containers":[{"name":"c","image":"nginx:1","bar":1,"image":"nginx:2"}]}}}}`;
  const JSON_ERRS = [
    'unknown field "metadata.bogusMeta"',
    'duplicate field "spec.replicas"',
    'unknown field "spec.foo"',
    'unknown field "spec.template.spec.containers[0].bar"',
    'duplicate field "spec.template.spec.containers[0].image"',
  ];
  const bodyYAML = (name: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  bogusMeta: x
spec:
  replicas: 1
  replicas: 2
  foo: bar
  selector:
    matchLabels:
      app: fv
  template:
    metadata:
      labels:
        app: fv
    spec:
      containers:
      - name: c
        image: nginx:1
        bar: 1
        image: nginx:2
`;
  const YAML_ERRS = [
    'line 8: key "replicas" already set in map',
    'line 22: key "image" already set in map',
    'unknown field "metadata.bogusMeta"',
    'unknown field "spec.foo"',
    'unknown field "spec.template.spec.containers[0].bar"',
  ];
  const header = (e: string) => `299 - ${JSON.stringify(e)}`;

  test('POST with a JSON body: Strict 400 listing all, Warn one Warning per field (the default), Ignore silent', async () => {
    const s = expectStatus(await c.raw('POST', `${deploys}?fieldValidation=Strict`, { body: bodyJSON('fv-strict'), headers: { 'content-type': 'application/json' } }), 400, 'BadRequest', 'strict');
    assert.equal(s.message, `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: ${JSON_ERRS.join(', ')}`);
    expectStatus(await c.raw('GET', `${deploys}/fv-strict`), 404, 'NotFound', 'strict stored nothing');
    for (const q of ['?fieldValidation=Warn', '']) {
      const name = `fv-warn${q ? '' : '-default'}`;
      const r = await c.raw('POST', `${deploys}${q}`, { body: bodyJSON(name), headers: { 'content-type': 'application/json' } });
      const o = ok(r, 201, `warn ${q}`);
      assert.deepEqual(warningsOf(r), JSON_ERRS.map(header), q);
      assert.equal(o.spec.replicas, 2, 'the last duplicate wins');
      assert.equal(o.spec.template.spec.containers[0].image, 'nginx:2');
    }
    const i = await c.raw('POST', `${deploys}?fieldValidation=Ignore`, { body: bodyJSON('fv-ignore'), headers: { 'content-type': 'application/json' } });
    ok(i, 201, 'ignore');
    assert.deepEqual(warningsOf(i), []);
  });

  test('POST with a YAML body: duplicates reported by line, then unknown fields', async () => {
    const s = expectStatus(await c.raw('POST', `${deploys}?fieldValidation=Strict`, { body: bodyYAML('fvy-strict'), headers: { 'content-type': 'application/yaml' } }), 400, 'BadRequest', 'strict yaml');
    assert.equal(
      s.message,
      `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: yaml: unmarshal errors:\n  ${YAML_ERRS[0]}\n  ${YAML_ERRS[1]}, ${YAML_ERRS.slice(2).join(', ')}`,
    );
    const r = await c.raw('POST', `${deploys}?fieldValidation=Warn`, { body: bodyYAML('fvy-warn'), headers: { 'content-type': 'application/yaml' } });
    ok(r, 201, 'warn yaml');
    assert.deepEqual(warningsOf(r), YAML_ERRS.map(header));
  });

  test('PUT: the same levels', async () => {
    // the stored object has the body's selector: the PUT changes no immutable field
    const made = await create(deploys, JSON.parse(bodyJSON('fv-put')));
    const body = bodyJSON('fv-put').replace('"metadata":{', `"metadata":{"resourceVersion":"${made.metadata.resourceVersion}",`);
    const s = expectStatus(await c.raw('PUT', `${deploys}/fv-put?fieldValidation=Strict`, { body, headers: { 'content-type': 'application/json' } }), 400, 'BadRequest', 'strict put');
    assert.equal(s.message, `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: ${JSON_ERRS.join(', ')}`);
    const r = await c.raw('PUT', `${deploys}/fv-put`, { body, headers: { 'content-type': 'application/json' } });
    ok(r, 200, 'warn put');
    assert.deepEqual(warningsOf(r), JSON_ERRS.map(header));
  });

  test('merge and strategic patches: Strict is 422 naming the patch, Warn warns, Ignore drops', async () => {
    await create(deploys, DEPLOYMENT('fv-patch'));
    const before = await get(`${deploys}/fv-patch`);
    const body = '{"spec":{"paused":true,"paused":false,"foo":"x","template":{"spec":{"containers":[{"name":"c","image":"nginx:1.27","bar":1}]}}}}';
    const errs = ['duplicate field "spec.paused"', 'unknown field "spec.foo"', 'unknown field "spec.template.spec.containers[0].bar"'];
    for (const type of ['application/merge-patch+json', 'application/strategic-merge-patch+json']) {
      const s = expectStatus(await c.raw('PATCH', `${deploys}/fv-patch?fieldValidation=Strict`, { body, headers: { 'content-type': type } }), 422, 'Invalid', `strict ${type}`);
      assert.ok(s.message.startsWith(' "" is invalid: patch: Invalid value: "'), s.message);
      assert.ok(s.message.endsWith(`": strict decoding error: ${errs.join(', ')}`), s.message);
      assert.equal(s.details.causes.length, 1);
      assert.equal(s.details.causes[0].field, 'patch');
      assert.equal(s.details.causes[0].reason, 'FieldValueInvalid');
      assert.deepEqual(await get(`${deploys}/fv-patch`), before, `strict ${type} changed nothing`);
      const w = await c.raw('PATCH', `${deploys}/fv-patch?fieldValidation=Warn`, { body, headers: { 'content-type': type } });
      ok(w, 200, `warn ${type}`);
      assert.deepEqual(warningsOf(w), errs.map(header), type);
      const i = await c.raw('PATCH', `${deploys}/fv-patch?fieldValidation=Ignore`, { body, headers: { 'content-type': type } });
      ok(i, 200, `ignore ${type}`);
      assert.deepEqual(warningsOf(i), [], type);
    }
  });

  test('JSON patch: unknown and duplicate fields of the operations, and unknown fields of the result', async () => {
    await create(deploys, DEPLOYMENT('fv-jp'));
    const before = await get(`${deploys}/fv-jp`);
    const body = '[{"op":"add","path":"/spec/foo","value":"x","extra":1},{"op":"add","path":"/spec/paused","path":"/spec/paused","value":true}]';
    const errs = ['json patch unknown field "[0].extra"', 'json patch duplicate field "[1].path"', 'unknown field "spec.foo"'];
    const s = expectStatus(await c.raw('PATCH', `${deploys}/fv-jp?fieldValidation=Strict`, { body, headers: { 'content-type': 'application/json-patch+json' } }), 422, 'Invalid', 'strict json patch');
    assert.ok(s.message.endsWith(`": strict decoding error: ${errs.join(', ')}`), s.message);
    assert.deepEqual(await get(`${deploys}/fv-jp`), before);
    const w = await c.raw('PATCH', `${deploys}/fv-jp`, { body, headers: { 'content-type': 'application/json-patch+json' } });
    ok(w, 200, 'warn json patch');
    assert.deepEqual(warningsOf(w), errs.map(header));
  });

  test('another fatal error is the only one reported, at every level', async () => {
    const body = '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"fv-fatal","bogus":1},"spec":{"replicas":"two"}}';
    for (const level of ['Strict', 'Warn', 'Ignore']) {
      const r = await c.raw('POST', `${deploys}?fieldValidation=${level}`, { body, headers: { 'content-type': 'application/json' } });
      const s = expectStatus(r, 400, 'BadRequest', level);
      assert.equal(s.message, 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32');
      assert.deepEqual(warningsOf(r), [], level);
    }
  });

  // Found by a randomized probe: an unknown field whose name held a character above U+00FF
  // made the Warning header unsendable, and the exception thrown while writing the answer ended
  // the whole process
  test('warnings naming fields with any characters: sent as Kubernetes sends them (UTF-8), and the server stays up', async () => {
    const name = 'ünknöwn€😀"\\\n';
    const body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fv-utf8"},${JSON.stringify(name)}:1,"data":{"a":"1"}}`;
    for (const [method, path, type] of [
      ['POST', cms, 'application/json'],
      ['PATCH', `${cms}/fv-utf8`, 'application/merge-patch+json'],
    ] as const) {
      const r = await c.raw(method, path, { body, headers: { 'content-type': type } });
      assert.ok(r.status === 200 || r.status === 201, `${method} ${type}: ${r.status} ${r.text.slice(0, 300)}`);
      const ws = warningsOf(r).map((w) => Buffer.from(w, 'latin1').toString('utf8'));
      // the text of the header: " and \ escaped, the line break a space, every other character as it is
      assert.deepEqual(ws, ['299 - "unknown field \\"ünknöwn€😀\\"\\\\ \\""'], `${method} ${type}`);
    }
    // server-side apply fails on a field the type lacks, whatever the field validation (the field manager's error)
    const applied = await c.raw('PATCH', `${cms}/fv-utf8?fieldManager=fv`, { body, headers: { 'content-type': 'application/apply-patch+yaml' } });
    assert.equal(expectStatus(applied, 400, 'BadRequest').message, `failed to create typed patch object (/fv-utf8; /v1, Kind=ConfigMap): .${name}: field not declared in schema`);
    // kubectl prints it as it was
    const k = c.kubectl(['create', '-f', '-', '--validate=warn'], { input: body.replace('fv-utf8', 'fv-utf8-k') });
    assert.equal(k.code, 0, k.stderr);
    assert.match(k.stderr, /unknown field "ünknöwn€😀/);
    assert.equal((await c.raw('GET', '/readyz')).status, 200);
  });

  test('an invalid fieldValidation value is 422 naming the option', async () => {
    const p = expectStatus(await c.raw('POST', `${cms}?fieldValidation=Loud`, { body: cm('fv-loud') }), 422, 'Invalid', 'POST');
    assert.equal(p.message, 'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"');
    assert.deepEqual(p.details, {
      group: 'meta.k8s.io',
      kind: 'CreateOptions',
      causes: [{ reason: 'FieldValueNotSupported', message: 'Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"', field: 'fieldValidation' }],
    });
    await create(cms, cm('fv-loud'));
    const u = expectStatus(await c.raw('PUT', `${cms}/fv-loud?fieldValidation=Loud`, { body: cm('fv-loud') }), 422, 'Invalid', 'PUT');
    assert.equal(u.message, 'UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"');
    const pa = expectStatus(await c.raw('PATCH', `${cms}/fv-loud?fieldValidation=Loud`, { body: '{}', headers: { 'content-type': 'application/merge-patch+json' } }), 422, 'Invalid', 'PATCH');
    assert.equal(pa.message, 'PatchOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"');
  });
});

describe('validation', () => {
  test('names: DNS subdomain for most kinds, DNS label for namespaces, DNS-1035 label for services', async () => {
    await create(cms, cm('a.b-c'));
    const ns = expectStatus(await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a.b' } } }), 422, 'Invalid', 'namespace');
    assert.equal(ns.message, 'Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots');
    const ns2 = expectStatus(await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'A_b' } } }), 422, 'Invalid', 'namespace');
    assert.equal(
      ns2.message,
      `Namespace "A_b" is invalid: metadata.name: Invalid value: "A_b": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
    );
    const svc = expectStatus(await c.raw('POST', svcs, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: '1svc' }, spec: { ports: [{ port: 80 }] } } }), 422, 'Invalid', 'service');
    assert.equal(
      svc.message,
      `Service "1svc" is invalid: metadata.name: Invalid value: "1svc": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    );
    const long = 'x'.repeat(254);
    const l = expectStatus(await c.raw('POST', cms, { body: cm(long) }), 422, 'Invalid', 'too long');
    assert.equal(l.message, `ConfigMap "${long}" is invalid: metadata.name: Invalid value: "${long}": must be no more than 253 characters`);
  });

  test('label and annotation keys and values', async () => {
    const v = expectStatus(await c.raw('POST', cms, { body: cm('lv', {}, { labels: { ok: 'bad value!' } }) }), 422, 'Invalid', 'label value');
    assert.equal(
      v.message,
      `ConfigMap "lv" is invalid: metadata.labels: Invalid value: "bad value!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
    );
    const a = expectStatus(await c.raw('POST', cms, { body: cm('ak', {}, { annotations: { 'bad key': 'v' } }) }), 422, 'Invalid', 'annotation key');
    assert.equal(
      a.message,
      `ConfigMap "ak" is invalid: metadata.annotations: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    );
    const both = expectStatus(await c.raw('POST', cms, { body: cm('both', {}, { labels: { 'a/b/c': 'x' }, annotations: { '': 'y' } }) }), 422, 'Invalid', 'two causes');
    assert.deepEqual(
      both.details.causes.map((x: any) => x.field),
      ['metadata.labels', 'metadata.annotations', 'metadata.annotations'],
    );
    assert.match(both.details.causes[0].message, /^Invalid value: "a\/b\/c": a (qualified name|valid label key) must consist of alphanumeric characters/);
    assert.deepEqual(
      both.details.causes.map((x: any) => x.message),
      [
        both.details.causes[0].message,
        'Invalid value: "": name part must be non-empty',
        `Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
      ],
    );
  });

  test('required fields and enums', async () => {
    const r = expectStatus(await c.raw('POST', pods, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'req' }, spec: { containers: [{ name: 'c' }], restartPolicy: 'Sometimes' } } }), 422, 'Invalid', 'pod');
    assert.deepEqual(
      r.details.causes.map((x: any) => [x.field, x.message]),
      [
        ['spec.containers[0].image', 'Required value'],
        ['spec.restartPolicy', 'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'],
      ],
    );
    const s = expectStatus(await c.raw('POST', svcs, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'enum' }, spec: { type: 'Bogus', ports: [{ port: 80 }] } } }), 422, 'Invalid', 'service type');
    assert.equal(s.message, 'Service "enum" is invalid: spec.type: Unsupported value: "Bogus": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"');
  });

  test('immutable fields: 422 with one cause per field, and the stored object unchanged', async () => {
    // a Pod's spec
    const pod = await create(pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'imm-pod' }, spec: { schedulerName: 'manual', containers: [{ name: 'c', image: 'nginx:1', command: ['a'] }] } });
    const pe = expectStatus(await c.raw('PUT', `${pods}/imm-pod`, { body: { ...pod, spec: { ...pod.spec, containers: [{ ...pod.spec.containers[0], command: ['b'] }] } } }), 422, 'Invalid', 'pod spec');
    assert.match(pe.message, /^Pod "imm-pod" is invalid: spec: Forbidden: pod updates may not change fields other than `spec\.containers\[\*\]\.image`/);
    assert.deepEqual(
      pe.details.causes.map((x: any) => [x.reason, x.field]),
      [['FieldValueForbidden', 'spec']],
    );
    // the image may change
    const img = ok(await c.raw('PATCH', `${pods}/imm-pod`, { body: '{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}', headers: { 'content-type': 'application/strategic-merge-patch+json' } }), 200, 'pod image');
    assert.equal(img.spec.containers[0].image, 'nginx:2');
    assert.deepEqual((await get(`${pods}/imm-pod`)).spec.containers[0].command, ['a']);

    // a Service's clusterIP
    const svc = await create(svcs, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'imm-svc' }, spec: { selector: { a: 'b' }, ports: [{ port: 80 }] } });
    const other = svc.spec.clusterIP.replace(/\.\d+$/, (m: string) => (m === '.7' ? '.8' : '.7'));
    const se = expectStatus(await c.raw('PUT', `${svcs}/imm-svc`, { body: { ...svc, spec: { ...svc.spec, clusterIP: other, clusterIPs: [other] } } }), 422, 'Invalid', 'clusterIP');
    assert.match(se.message, /^Service "imm-svc" is invalid: spec\.clusterIPs\[0\]: Invalid value: .*may not change once set/);
    assert.equal((await get(`${svcs}/imm-svc`)).spec.clusterIP, svc.spec.clusterIP);

    // an immutable ConfigMap and Secret
    await create(cms, { ...cm('imm-cm'), immutable: true });
    const ce = expectStatus(await c.raw('PATCH', `${cms}/imm-cm`, { body: '{"data":{"a":"2"}}', headers: { 'content-type': 'application/merge-patch+json' } }), 422, 'Invalid', 'immutable cm');
    assert.equal(ce.message, 'ConfigMap "imm-cm" is invalid: data: Forbidden: field is immutable when `immutable` is set');
    const cf = expectStatus(await c.raw('PATCH', `${cms}/imm-cm`, { body: '{"immutable":false}', headers: { 'content-type': 'application/merge-patch+json' } }), 422, 'Invalid', 'unset immutable');
    assert.equal(cf.message, 'ConfigMap "imm-cm" is invalid: immutable: Forbidden: field is immutable when `immutable` is set');
    ok(await c.raw('PATCH', `${cms}/imm-cm`, { body: '{"metadata":{"labels":{"x":"y"}}}', headers: { 'content-type': 'application/merge-patch+json' } }), 200, 'metadata of an immutable cm');
    const secrets = `/api/v1/namespaces/${NS}/secrets`;
    await create(secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'imm-secret' }, immutable: true, stringData: { a: '1' } });
    const sec = expectStatus(await c.raw('PATCH', `${secrets}/imm-secret`, { body: '{"stringData":{"a":"2"}}', headers: { 'content-type': 'application/merge-patch+json' } }), 422, 'Invalid', 'immutable secret');
    assert.equal(sec.message, 'Secret "imm-secret" is invalid: data: Forbidden: field is immutable when `immutable` is set');

    // a Job's selector and template
    const jobs = `/apis/batch/v1/namespaces/${NS}/jobs`;
    await create(jobs, { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'imm-job' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1' }] } } } });
    const je = expectStatus(
      await c.raw('PATCH', `${jobs}/imm-job`, { body: '{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox:2"}]}}}}', headers: { 'content-type': 'application/strategic-merge-patch+json' } }),
      422,
      'Invalid',
      'job template',
    );
    assert.match(je.message, /^Job\.batch "imm-job" is invalid: spec\.template: Invalid value: .*: field is immutable$/s);
    const js = expectStatus(
      await c.raw('PATCH', `${jobs}/imm-job`, { body: '{"spec":{"selector":{"matchLabels":{"x":"y"}}}}', headers: { 'content-type': 'application/merge-patch+json' } }),
      422,
      'Invalid',
      'job selector',
    );
    assert.ok(js.details.causes.some((x: any) => x.field === 'spec.selector' && /field is immutable$/.test(x.message)), JSON.stringify(js.details.causes));

    // a Deployment's selector
    await create(deploys, DEPLOYMENT('imm-deploy'));
    const de = expectStatus(
      await c.raw('PATCH', `${deploys}/imm-deploy`, {
        body: '{"spec":{"selector":{"matchLabels":{"app":"other"}},"template":{"metadata":{"labels":{"app":"other"}}}}}',
        headers: { 'content-type': 'application/merge-patch+json' },
      }),
      422,
      'Invalid',
      'deployment selector',
    );
    assert.match(de.message, /^Deployment\.apps "imm-deploy" is invalid: spec\.selector: Invalid value: .*: field is immutable$/s);
    assert.deepEqual((await get(`${deploys}/imm-deploy`)).spec.selector, { matchLabels: { app: 'imm-deploy' } });
  });

  test('kubectl replace with a changed immutable field prints the 422 as Kubernetes words it', async () => {
    await create(cms, { ...cm('imm-k'), immutable: true });
    const f = c.file('imm-k.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: imm-k\nimmutable: true\ndata:\n  a: "2"\n');
    for (const v of ['1.33', '1.27']) {
      assert.deepEqual(run(c.kubectl(['replace', '-f', f], { version: v })), {
        code: 1,
        stdout: '',
        stderr: 'The ConfigMap "imm-k" is invalid: data: Forbidden: field is immutable when `immutable` is set\n',
      });
    }
    assert.deepEqual((await get(`${cms}/imm-k`)).data, { a: '1' });
  });
});

describe('defaulting', () => {
  test('a Pod: restartPolicy, dnsPolicy, terminationGracePeriodSeconds, schedulerName, imagePullPolicy from the tag', async () => {
    const p = await create(pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'defaults' },
      spec: {
        containers: [
          { name: 'latest', image: 'nginx:latest' },
          { name: 'untagged', image: 'nginx' },
          { name: 'tagged', image: 'nginx:1.27' },
          { name: 'digest', image: 'nginx@sha256:0000000000000000000000000000000000000000000000000000000000000000' },
        ],
      },
    });
    assert.equal(p.spec.restartPolicy, 'Always');
    assert.equal(p.spec.dnsPolicy, 'ClusterFirst');
    assert.equal(p.spec.terminationGracePeriodSeconds, 30);
    assert.equal(p.spec.schedulerName, 'default-scheduler');
    assert.deepEqual(p.spec.securityContext, {});
    assert.equal(p.spec.enableServiceLinks, true);
    assert.equal(p.spec.preemptionPolicy, 'PreemptLowerPriority');
    assert.equal(p.spec.priority, 0);
    assert.deepEqual(
      p.spec.containers.map((x: any) => x.imagePullPolicy),
      ['Always', 'Always', 'IfNotPresent', 'IfNotPresent'],
    );
    assert.equal(p.spec.containers[0].terminationMessagePath, '/dev/termination-log');
    assert.equal(p.spec.containers[0].terminationMessagePolicy, 'File');
    assert.equal(p.status.phase, 'Pending');
    assert.equal(p.status.qosClass, 'BestEffort');
  });

  test('a Deployment: replicas, strategy, revisionHistoryLimit, progressDeadlineSeconds', async () => {
    const d = await create(deploys, DEPLOYMENT('defaults'));
    assert.equal(d.spec.replicas, 1);
    assert.deepEqual(d.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
    assert.equal(d.spec.revisionHistoryLimit, 10);
    assert.equal(d.spec.progressDeadlineSeconds, 600);
    assert.equal(d.spec.template.spec.restartPolicy, 'Always');
  });

  test('a Service: type, sessionAffinity, clusterIP from the range, protocol, targetPort, node ports from their range', async () => {
    const s = await create(svcs, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'defaults' }, spec: { selector: { a: 'b' }, ports: [{ port: 80 }] } });
    assert.equal(s.spec.type, 'ClusterIP');
    assert.equal(s.spec.sessionAffinity, 'None');
    assert.match(s.spec.clusterIP, /^10\.(9[6-9]|10[0-9]|11[01])\.\d+\.\d+$/);
    assert.deepEqual(s.spec.clusterIPs, [s.spec.clusterIP]);
    assert.deepEqual(s.spec.ipFamilies, ['IPv4']);
    assert.equal(s.spec.ipFamilyPolicy, 'SingleStack');
    assert.equal(s.spec.internalTrafficPolicy, 'Cluster');
    assert.deepEqual(s.spec.ports, [{ protocol: 'TCP', port: 80, targetPort: 80 }]);
    const n = await create(svcs, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'defaults-np' }, spec: { type: 'NodePort', selector: { a: 'b' }, ports: [{ port: 80, name: 'http' }, { port: 443, name: 'https' }] } });
    for (const p of n.spec.ports) assert.ok(p.nodePort >= 30000 && p.nodePort <= 32767, String(p.nodePort));
    assert.notEqual(n.spec.ports[0].nodePort, n.spec.ports[1].nodePort);
    assert.equal(n.spec.externalTrafficPolicy, 'Cluster');
    // a node port outside the range
    const bad = expectStatus(
      await c.raw('POST', svcs, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'np-bad' }, spec: { type: 'NodePort', ports: [{ port: 80, nodePort: 80 }] } } }),
      422,
      'Invalid',
      'node port out of range',
    );
    assert.equal(bad.message, 'Service "np-bad" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767');
  });
});

describe('--allow-privileged', () => {
  const privileged = (name: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'c', image: 'busybox', securityContext: { privileged: true } }], initContainers: [{ name: 'i', image: 'busybox', securityContext: { privileged: true } }] },
  });
  test('keelson server allows privileged containers (as k3s and kubeadm set the flag)', async () => {
    ok(await c.raw('POST', pods, { body: privileged('priv-allowed') }), 201, 'privileged pod on the default server');
  });
  test('with --allow-privileged=false, a privileged container (of a pod or a template) is Forbidden "disallowed by cluster policy"', async () => {
    const strict = await startCluster({ args: ['--storage-backend=memory', '--allow-privileged=false'] });
    try {
      const r = await strict.raw('POST', pods, { body: privileged('priv') });
      const st = expectStatus(r, 422, 'Invalid');
      assert.equal(
        st.message,
        'Pod "priv" is invalid: [spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy, spec.initContainers[0].securityContext.privileged: Forbidden: disallowed by cluster policy]',
      );
      const d = await strict.raw('POST', deploys, {
        body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'priv' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: privileged('x').spec } } },
      });
      assert.match(expectStatus(d, 422, 'Invalid').message, /spec\.template\.spec\.containers\[0\]\.securityContext\.privileged: Forbidden: disallowed by cluster policy/);
      const plain = await strict.raw('POST', pods, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'plain' }, spec: { containers: [{ name: 'c', image: 'busybox', securityContext: { privileged: false } }] } } });
      assert.equal(plain.status, 201, plain.text);
    } finally {
      await strict.stop();
    }
  });
});

describe('Services: IP families, type changes, status defaults', () => {
  const svc = (name: string, spec: any) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { selector: { a: 'b' }, ports: [{ port: 80 }], ...spec } });
  test('IP family fields this single-stack cluster cannot serve are 422, as the allocator words them', async () => {
    const cases: [any, string][] = [
      [{ ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv4', 'IPv6'] }, '[spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services, spec.ipFamilies[1]: Invalid value: "IPv6": not configured on this cluster]'],
      [{ ipFamilyPolicy: 'SingleStack', ipFamilies: ['IPv4', 'IPv6'] }, `spec.ipFamilyPolicy: Invalid value: "SingleStack": must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified`],
      [{ ipFamilyPolicy: 'PreferDualStack', ipFamilies: ['IPv4', 'IPv6'] }, 'spec.ipFamilies[1]: Invalid value: "IPv6": not configured on this cluster'],
      [{ ipFamilyPolicy: 'RequireDualStack' }, 'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services'],
      [{ ipFamilies: ['IPv6'] }, 'spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster'],
      // the loose check of the cluster IP fields comes first, alone
      [{ clusterIP: '10.96.0.50', clusterIPs: ['10.96.0.51'], externalIPs: ['bad'] }, 'spec.clusterIPs: Invalid value: []string{"10.96.0.51"}: first value must match `clusterIP`'],
    ];
    for (const [spec, message] of cases) {
      const st = expectStatus(await c.raw('POST', `${svcs}?dryRun=All`, { body: svc('fam', spec) }), 422, 'Invalid', JSON.stringify(spec));
      assert.equal(st.message, `Service "fam" is invalid: ${message}`, JSON.stringify(spec));
    }
  });

  test('changing only the type clears the fields the new type has no use for (kubectl patch and a PUT of the object read)', async () => {
    ok(await c.raw('POST', svcs, { body: svc('np', { type: 'NodePort' }) }), 201, 'NodePort');
    const toCluster = c.kubectl(['patch', 'svc', 'np', '-p', '{"spec":{"type":"ClusterIP"}}']);
    assert.equal(toCluster.code, 0, toCluster.stderr);
    const np = await get(`${svcs}/np`);
    assert.equal(np.spec.type, 'ClusterIP');
    assert.equal(np.spec.ports[0].nodePort, undefined, 'node port released');
    assert.equal(np.spec.externalTrafficPolicy, undefined);

    const lb = ok(await c.raw('POST', svcs, { body: svc('lb', { type: 'LoadBalancer', externalTrafficPolicy: 'Local' }) }), 201, 'LoadBalancer');
    assert.ok(lb.spec.healthCheckNodePort > 0);
    // the allocated fields in ServiceSpec's order, as Go writes the struct
    assert.deepEqual(Object.keys(lb.spec), ['ports', 'selector', 'clusterIP', 'clusterIPs', 'type', 'sessionAffinity', 'externalTrafficPolicy', 'healthCheckNodePort', 'ipFamilies', 'ipFamilyPolicy', 'allocateLoadBalancerNodePorts', 'internalTrafficPolicy']);
    ok(await c.raw('PATCH', `${svcs}/lb/status`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { status: { loadBalancer: { ingress: [{ ip: '34.5.6.7' }] } } } }), 200, 'status without ipMode');
    const withStatus = await get(`${svcs}/lb`);
    assert.deepEqual(withStatus.status.loadBalancer.ingress, [{ ip: '34.5.6.7', ipMode: 'VIP' }], 'ipMode defaulted on a status write');
    withStatus.spec.type = 'NodePort';
    const put = ok(await c.raw('PUT', `${svcs}/lb`, { body: withStatus }), 200, 'PUT with only the type changed');
    assert.equal(put.spec.allocateLoadBalancerNodePorts, undefined);
    assert.equal(put.spec.healthCheckNodePort, undefined);
    assert.equal(put.spec.ports[0].nodePort, lb.spec.ports[0].nodePort, 'NodePort keeps its node port');
    assert.deepEqual(put.status, { loadBalancer: {} }, 'the load balancer status goes with the type');

    ok(await c.raw('POST', svcs, { body: svc('toext', {}) }), 201, 'ClusterIP');
    const ext = c.kubectl(['patch', 'svc', 'toext', '-p', '{"spec":{"type":"ExternalName","externalName":"a.example.com"}}', '-o', 'json']);
    assert.equal(ext.code, 0, ext.stderr);
    const e = JSON.parse(ext.stdout);
    for (const f of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy']) assert.equal(e.spec[f], undefined, f);
    // a changed node port is the user's: not cleared, and refused for the new type
    ok(await c.raw('POST', svcs, { body: svc('np2', { type: 'NodePort' }) }), 201, 'NodePort 2');
    const bad = await c.raw('PATCH', `${svcs}/np2`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { spec: { type: 'ClusterIP', ports: [{ port: 80, nodePort: 30999 }] } } });
    assert.match(expectStatus(bad, 422, 'Invalid').message, /spec\.ports\[0\]\.nodePort: Forbidden: may not be used when `type` is 'ClusterIP'/);
  });
});

describe('validation values as Kubernetes 1.33 prints and bounds them', () => {
  test('user and group IDs stop at 2147483647; a selector in an error is Go\'s %#v of the struct; a namespace gets the kubernetes finalizer beside its own', async () => {
    const big = await c.raw('POST', `${pods}?dryRun=All`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'uid' }, spec: { securityContext: { runAsUser: 3000000000, fsGroup: 3000000000 }, containers: [{ name: 'c', image: 'x' }] } } });
    assert.equal(
      expectStatus(big, 422, 'Invalid').message,
      'Pod "uid" is invalid: [spec.securityContext.fsGroup: Invalid value: 3000000000: must be between 0 and 2147483647, inclusive, spec.securityContext.runAsUser: Invalid value: 3000000000: must be between 0 and 2147483647, inclusive]',
    );
    const d = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'sel' }, spec: { selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a', b: 'c' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } };
    ok(await c.raw('POST', deploys, { body: d }), 201, 'deployment');
    const moved = await c.raw('PATCH', `${deploys}/sel`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { spec: { selector: { matchLabels: { b: 'c' } } } } });
    assert.equal(
      expectStatus(moved, 422, 'Invalid').message,
      'Deployment.apps "sel" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"a", "b":"c"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
    );
    // quantities are parsed as resource.ParseQuantity parses them, when the body is decoded (400)
    const FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
    for (const [q, why] of [['1.5.5', FORMAT], ['1..5', FORMAT], ['0.5.m', FORMAT], ['abc', FORMAT], ['5Gi6', "unable to parse quantity's suffix"], ['1e', "unable to parse quantity's suffix"]]) {
      const r = await c.raw('POST', `${pods}?dryRun=All`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'q' }, spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: q } } }] } } });
      assert.equal(expectStatus(r, 400, 'BadRequest', q).message, `Pod in version "v1" cannot be handled as a Pod: ${why}`, q);
    }
    for (const [q, stored] of [['1.5', '1500m'], ['1e3', '1e3'], ['1.G', '1G'], ['+2Ki', '2Ki']]) {
      const r = ok(await c.raw('POST', `${pods}?dryRun=All`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'q' }, spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: q } } }] } } }), 201, q);
      assert.equal(r.spec.containers[0].resources.requests.cpu, stored, q);
    }
    const ns = ok(await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'own-finalizer' }, spec: { finalizers: ['example.com/fin'] } } }), 201, 'namespace');
    assert.deepEqual(ns.spec.finalizers, ['example.com/fin', 'kubernetes']);
  });
});

describe('fields of feature gates Kubernetes 1.33 has off', () => {
  test('are dropped on create (pods, templates, claims, leases), and kept on update only where already in use', async () => {
    const podSpec = {
      resources: { limits: { cpu: '1' } },
      resourceClaims: [{ name: 'gpu', resourceClaimName: 'x' }],
      volumes: [
        { name: 'iv', image: { reference: 'busybox:1' } },
        { name: 'e', emptyDir: {} },
      ],
      containers: [{ name: 'c', image: 'x', lifecycle: { stopSignal: 'SIGUSR1' }, resources: { claims: [{ name: 'gpu' }] }, volumeMounts: [{ name: 'iv', mountPath: '/iv' }, { name: 'e', mountPath: '/e' }] }],
    };
    const check = (spec: any, what: string) => {
      assert.equal(spec.resources, undefined, `${what}: pod-level resources`);
      assert.equal(spec.resourceClaims, undefined, `${what}: resource claims`);
      assert.deepEqual(spec.volumes.map((v: any) => v.name).filter((n: string) => !n.startsWith('kube-api-access')), ['e'], `${what}: image volume`);
      const c0 = spec.containers[0];
      assert.equal(c0.lifecycle, undefined, `${what}: stop signal`);
      assert.equal(c0.resources?.claims, undefined, `${what}: container claims`);
      assert.deepEqual(c0.volumeMounts.map((m: any) => m.name).filter((n: string) => !n.startsWith('kube-api-access')), ['e'], `${what}: image volume mount`);
    };
    const p = ok(await c.raw('POST', `${pods}?dryRun=All`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'gated' }, spec: podSpec } }), 201, 'pod');
    check(p.spec, 'pod');
    const d = ok(
      await c.raw('POST', `${deploys}?dryRun=All`, { body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'gated' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: podSpec } } } }),
      201,
      'deployment',
    );
    check(d.spec.template.spec, 'deployment template');
    // a Lease's strategy is dropped before validation: an unknown one is no error
    const l = ok(await c.raw('POST', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`, { body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'gated' }, spec: { strategy: 'Weird', preferredHolder: 'x', holderIdentity: 'h' } } }), 201, 'lease');
    assert.deepEqual(l.spec, { holderIdentity: 'h' });
    const pvc = ok(
      await c.raw('POST', `/api/v1/namespaces/${NS}/persistentvolumeclaims?dryRun=All`, { body: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'gated' }, spec: { volumeAttributesClassName: 'gold', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } }),
      201,
      'claim',
    );
    assert.equal(pvc.spec.volumeAttributesClassName, undefined);
    // an update may not add them either
    const upd = ok(await c.raw('PATCH', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/gated`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { spec: { preferredHolder: 'y' } } }), 200, 'lease update');
    assert.equal(upd.spec.preferredHolder, undefined);
  });
});
