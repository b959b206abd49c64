// Errors over raw HTTPS: every failure is a Status with the right code and reason; bad input never
// crashes, hangs or half-writes. Also the encodings of requests and responses.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { startCluster, type Cluster } from './harness.js';
import { decodeEnvelope, decodeMessage, encodeEnvelope, encodeMessage, PROTOBUF_PREFIX } from '../../src/codec/protobuf.js';

let c: Cluster;
const cms = '/api/v1/namespaces/default/configmaps';

function status(r: { status: number; json(): any }, code: number, reason: string): any {
  assert.equal(r.status, code);
  const s = r.json();
  assert.equal(s.kind, 'Status');
  assert.equal(s.apiVersion, 'v1');
  assert.equal(s.status, 'Failure');
  assert.equal(s.code, code);
  assert.equal(s.reason, reason);
  return s;
}

before(async () => {
  c = await startCluster();
  const r = await c.raw('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keep' }, data: { a: '1' } } });
  assert.equal(r.status, 201);
});

after(async () => {
  await c?.stop();
});

async function keepUnchanged(): Promise<void> {
  const r = await c.raw('GET', `${cms}/keep`);
  assert.equal(r.status, 200);
  assert.deepEqual(r.json().data, { a: '1' });
}

describe('errors', () => {
  test('without credentials: the anonymous user, whom RBAC allows only the public paths; 401 with anonymous auth off', async () => {
    const f = status(await c.rawNoAuth('GET', '/api/v1/namespaces'), 403, 'Forbidden');
    assert.equal(f.message, 'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope');
    status(await c.rawNoAuth('GET', '/api'), 403, 'Forbidden');
    assert.equal((await c.rawNoAuth('GET', '/livez')).status, 200);
    assert.equal((await c.rawNoAuth('GET', '/version')).status, 200);
    // the public-info-viewer rules name the paths exactly: a single check is not public
    status(await c.rawNoAuth('GET', '/livez/ping'), 403, 'Forbidden');
    assert.equal((await c.raw('GET', '/livez/ping')).status, 200);
    const closed = await startCluster({ args: ['--storage-backend=memory', '--anonymous-auth=false'] });
    try {
      status(await closed.rawNoAuth('GET', '/api/v1/namespaces'), 401, 'Unauthorized');
      status(await closed.rawNoAuth('GET', '/api'), 401, 'Unauthorized');
      // health and /version are authenticated as every path (system:public-info-viewer lets anonymous
      // clients in only while anonymous auth is on), as in Kubernetes
      status(await closed.rawNoAuth('GET', '/livez'), 401, 'Unauthorized');
      status(await closed.rawNoAuth('GET', '/version'), 401, 'Unauthorized');
      assert.equal((await closed.raw('GET', '/livez')).status, 200);
    } finally {
      await closed.stop();
    }
  });

  test('404 for an object, for an unknown resource type and for an unknown path', async () => {
    const s = status(await c.raw('GET', `${cms}/nope`), 404, 'NotFound');
    assert.equal(s.message, 'configmaps "nope" not found');
    assert.deepEqual(s.details, { name: 'nope', kind: 'configmaps' });
    const d = status(await c.raw('GET', '/apis/apps/v1/namespaces/default/deployments/nope'), 404, 'NotFound');
    assert.equal(d.message, 'deployments.apps "nope" not found');
    assert.equal(d.details.group, 'apps');
    for (const p of ['/api/v1/foos', '/apis/nope.example.com/v1/things', '/api/v2/pods', '/api/v1/namespaces/default/nodes']) {
      const u = status(await c.raw('GET', p), 404, 'NotFound');
      assert.equal(u.message, 'the server could not find the requested resource', p);
    }
    // a path outside the API reaches kube-apiserver's NotFoundHandler: Go's http.NotFound, in text
    // (/debug/pprof/ is served with --profiling, kube-apiserver's default: pprof.test.ts)
    for (const p of ['/nonsense', '/metrics/', '/debug/']) {
      const r = await c.raw('GET', p);
      assert.equal(r.status, 404, p);
      assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(r.text, '404 page not found\n');
    }
  });

  test('405 for a verb the resource does not have', async () => {
    status(await c.raw('DELETE', '/api/v1/namespaces'), 405, 'MethodNotAllowed');
    status(await c.raw('POST', `${cms}/keep`, { body: {} }), 405, 'MethodNotAllowed');
    // the routes of a collection: no PUT or PATCH; across namespaces only list and watch (a DELETE
    // there must not delete the collections of every namespace)
    status(await c.raw('PUT', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } } }), 405, 'MethodNotAllowed');
    status(await c.raw('PATCH', cms, { body: '{}', headers: { 'content-type': 'application/merge-patch+json' } }), 405, 'MethodNotAllowed');
    status(await c.raw('PUT', '/api/v1/namespaces', { body: {} }), 405, 'MethodNotAllowed');
    status(await c.raw('DELETE', '/api/v1/configmaps'), 405, 'MethodNotAllowed');
    status(await c.raw('DELETE', '/apis/apps/v1/deployments?dryRun=All'), 405, 'MethodNotAllowed');
    status(await c.raw('POST', '/api/v1/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' } } }), 405, 'MethodNotAllowed');
    assert.equal((await c.raw('GET', `${cms}/keep`)).status, 200, 'nothing was deleted');
    // a cluster-scoped collection takes create and deletecollection
    assert.equal((await c.raw('DELETE', '/apis/scheduling.k8s.io/v1/priorityclasses?dryRun=All&labelSelector=none%3Dnone')).status, 200);
    // subresources with no read: 405 before the object is looked for (the pod does not exist)
    for (const p of ['/api/v1/namespaces/default/finalize', '/api/v1/namespaces/default/pods/nopod/eviction', '/api/v1/namespaces/default/pods/nopod/binding', '/api/v1/namespaces/default/serviceaccounts/nosa/token']) {
      const r = status(await c.raw('GET', p), 405, 'MethodNotAllowed');
      assert.equal(r.message, 'the server does not allow this method on the requested resource', p);
    }
  });

  test('409 AlreadyExists and Conflict', async () => {
    const s = status(await c.raw('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keep' } } }), 409, 'AlreadyExists');
    assert.equal(s.message, 'configmaps "keep" already exists');
    const cur = (await c.raw('GET', `${cms}/keep`)).json();
    const stale = { ...cur, metadata: { ...cur.metadata, resourceVersion: '1' }, data: { a: 'stale' } };
    const cf = status(await c.raw('PUT', `${cms}/keep`, { body: stale }), 409, 'Conflict');
    assert.equal(cf.message, 'Operation cannot be fulfilled on configmaps "keep": the object has been modified; please apply your changes to the latest version and try again');
    await keepUnchanged();
  });

  test('413 for a body over 3 MiB, without reading it all', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024 + 10);
    const s = status(await c.raw('POST', cms, { body: big, headers: { 'content-type': 'application/json' } }), 413, 'RequestEntityTooLarge');
    assert.match(s.message, /limit is 3145728/);
  });

  test('415 for an unsupported Content-Type', async () => {
    const s = status(await c.raw('POST', cms, { body: 'hello', headers: { 'content-type': 'text/plain' } }), 415, 'UnsupportedMediaType');
    assert.match(s.message, /the body of the request was in an unknown format - accepted media types include: application\/json, application\/yaml, application\/vnd.kubernetes.protobuf/);
  });

  test('406 when no requested type is served', async () => {
    status(await c.raw('GET', `${cms}/keep`, { headers: { accept: 'text/html' } }), 406, 'NotAcceptable');
    // only a Table of a list as PartialObjectMetadata (not a list form): 406
    status(await c.raw('GET', cms, { headers: { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' } }), 406, 'NotAcceptable');
    // with a fallback too: kube-apiserver takes the first metadata-only clause whatever its shape
    // (RequestScope.AllowsMediaTypeTransform) and the transform fails
    const r = await c.raw('GET', cms, { headers: { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json;q=0.5' } });
    assert.equal(status(r, 406, 'NotAcceptable').message, 'you requested PartialObjectMetadata, but the requested object is a list (*v1.ConfigMapList)');
  });

  test('422 Invalid with causes for a bad name, and for a missing name', async () => {
    const s = status(await c.raw('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Bad_Name' } } }), 422, 'Invalid');
    assert.match(s.message, /^ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of/);
    assert.equal(s.details.kind, 'ConfigMap');
    assert.equal(s.details.causes[0].field, 'metadata.name');
    assert.equal(s.details.causes[0].reason, 'FieldValueInvalid');
    const m = status(await c.raw('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} } }), 422, 'Invalid');
    assert.match(m.message, /metadata.name: Required value: name or generateName is required/);
    const l = status(await c.raw('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ok', labels: { 'bad key!': 'v' } } } }), 422, 'Invalid');
    assert.match(l.message, /metadata.labels: Invalid value: "bad key!"/);
    const ns = status(await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a.b' } } }), 422, 'Invalid');
    assert.match(ns.message, /must not contain dots|RFC 1123 label/);
  });

  test('400 for malformed bodies and mismatched kinds, and the stored object is untouched', async () => {
    const bodies: [string, string, RegExp][] = [
      ['{bad json', 'application/json', /json parse error/],
      ['[1,2]', 'application/json', /unrecognized/],
      ['"text"', 'application/json', /unrecognized/],
      ['null', 'application/json', /unrecognized/],
      ['{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"x"}}', 'application/json', /the API version in the data \(apps\/v1\) does not match the expected API version \(v1\)/],
      ['{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}', 'application/json', /Secret in version "v1" cannot be handled as a ConfigMap/],
      ['{"apiVersion":"v1","kind":"ConfigMap","metadata":"nope"}', 'application/json', /metadata/],
      ['a: [unclosed', 'application/yaml', /yaml/],
      ['not protobuf at all', 'application/vnd.kubernetes.protobuf', /.+/],
    ];
    for (const [b, t, re] of bodies) {
      const s = status(await c.raw('POST', cms, { body: b, headers: { 'content-type': t } }), 400, 'BadRequest');
      assert.match(s.message, re, b);
      const u = await c.raw('PUT', `${cms}/keep`, { body: b, headers: { 'content-type': t } });
      assert.equal(u.status, 400, b);
    }
    await keepUnchanged();
  });

  test('namespaced creates need an existing namespace; a body namespace must match the URL', async () => {
    const s = status(await c.raw('POST', '/api/v1/namespaces/ghost/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } } }), 404, 'NotFound');
    assert.equal(s.message, 'namespaces "ghost" not found');
    const m = status(await c.raw('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'other' } } }), 400, 'BadRequest');
    assert.equal(m.message, 'the namespace of the provided object does not match the namespace sent on the request');
    const n = status(await c.raw('PUT', `${cms}/keep`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other' } } }), 400, 'BadRequest');
    assert.equal(n.message, 'the name of the object (other) does not match the name on the URL (keep)');
  });

  test('bad query parameters are 400 (an invalid fieldValidation, 422 as in Kubernetes), never a crash', async () => {
    const invalid = await c.raw('POST', `${cms}?fieldValidation=Loose`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'q' } } });
    assert.equal(invalid.status, 422, invalid.text);
    for (const q of ['limit=abc', 'resourceVersion=-1', 'timeoutSeconds=x&watch=1', 'continue=%%%', 'labelSelector=%3D%3D', 'dryRun=Sometimes']) {
      const r = await c.raw(q.startsWith('dryRun') || q.startsWith('fieldValidation') ? 'POST' : 'GET', `${cms}?${q}`, {
        body: q.startsWith('dryRun') || q.startsWith('fieldValidation') ? { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'q' } } : undefined,
      });
      assert.equal(r.status, 400, `${q}: ${r.text}`);
    }
    const huge = status(await c.raw('GET', `${cms}?limit=99999999999999999999`), 400, 'BadRequest');
    assert.equal(huge.message, 'strconv.ParseInt: parsing "99999999999999999999": value out of range');
    // an object of a namespaced resource has no path outside its namespace
    const outside = status(await c.raw('GET', '/api/v1/configmaps/keep'), 404, 'NotFound');
    assert.equal(outside.message, 'the server could not find the requested resource');
    // a continue token is read as Go reads it: base64url without padding, then JSON
    const notBase64 = status(await c.raw('GET', `${cms}?limit=1&continue=ab.c`), 400, 'BadRequest');
    assert.equal(notBase64.message, 'invalid continue token: continue key is not valid: illegal base64 data at input byte 2');
    const notJSON = status(await c.raw('GET', `${cms}?limit=1&continue=abc`), 400, 'BadRequest');
    assert.equal(notJSON.message, "invalid continue token: continue key is not valid: invalid character 'i' looking for beginning of value");
    assert.equal((await c.raw('GET', '/livez')).status, 200);
  });

  test('garbage never takes the server down', async () => {
    const junk = [Buffer.from([0, 1, 2, 3, 255, 254]), Buffer.concat([PROTOBUF_PREFIX as Buffer, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f])]), Buffer.from('{"metadata":{"name":' + '['.repeat(5000))];
    for (const b of junk) {
      for (const t of ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']) {
        const r = await c.raw('POST', cms, { body: b, headers: { 'content-type': t } });
        assert.ok(r.status === 400 || r.status === 422, `${t}: ${r.status} ${r.text}`);
      }
    }
    assert.equal((await c.raw('GET', '/readyz')).status, 200);
    await keepUnchanged();
  });

  // Found by a randomized probe: a TokenRequest whose expirationSeconds was a string or an object
  // was a 500 (the body was decoded but not typed)
  test('the bodies of the token and binding subresources are typed: a value of the wrong type is 400 in Kubernetes\' words', async () => {
    assert.equal((await c.raw('POST', '/api/v1/namespaces/default/serviceaccounts', { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'typed' } } })).status, 201);
    for (const [v, what] of [['"x"', 'string'], ['{}', 'object'], ['1.5', 'number 1.5']] as const) {
      const r = await c.raw('POST', '/api/v1/namespaces/default/serviceaccounts/typed/token', { body: `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"audiences":["x"],"expirationSeconds":${v}}}`, headers: { 'content-type': 'application/json' } });
      const s = status(r, 400, 'BadRequest');
      assert.equal(s.message, `TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot unmarshal ${what} into Go struct field TokenRequestSpec.spec.expirationSeconds of type int64`);
    }
    assert.equal((await c.raw('POST', '/api/v1/namespaces/default/serviceaccounts/typed/token', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } } })).status, 201);
    assert.equal((await c.raw('POST', '/api/v1/namespaces/default/pods', { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'typed' }, spec: { containers: [{ name: 'c', image: 'x' }] } } })).status, 201);
    const b = await c.raw('POST', '/api/v1/namespaces/default/pods/typed/binding', { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'typed' }, target: { kind: 'Node', name: 7 } } });
    assert.match(status(b, 400, 'BadRequest').message, /^Binding in version "v1" cannot be handled as a Binding: json: cannot unmarshal number into Go struct field .*target\.name of type string/);
  });

  // Found by a randomized probe: a JSON body nested 100,000 levels deep was a 500 (the strict
  // scan ran out of stack), and a YAML one a few hundred levels deep sent to server-side apply
  // ended the whole process (V8 fails fatally when the stack runs out while it compiles a regular
  // expression of the yaml library). src/codec/depth.ts bounds the nesting before parsing.
  test('integers out of range are 400 in Go\'s words: the number beyond int32 or int64, an IntOrString\'s int as an int32, the Go struct and field named', async () => {
    const deploy = (spec: string, meta = '') =>
      `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"ints"${meta}},"spec":{${spec}"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`;
    const cases: [string, string][] = [
      [deploy('"replicas":99999999999,'), 'number 99999999999 into Go struct field DeploymentSpec.spec.replicas of type int32'],
      [deploy('"replicas":-2147483649,'), 'number -2147483649 into Go struct field DeploymentSpec.spec.replicas of type int32'],
      [deploy('"replicas":1.5,'), 'number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32'],
      [deploy('"replicas":"3",'), 'string into Go struct field DeploymentSpec.spec.replicas of type int32'],
      [deploy('"strategy":{"rollingUpdate":{"maxSurge":99999999999}},'), 'number 99999999999 into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32'],
      [deploy('"strategy":{"rollingUpdate":{"maxSurge":2.5}},'), 'number 2.5 into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32'],
      [deploy('"strategy":{"rollingUpdate":{"maxSurge":true}},'), 'bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32'],
      [deploy('', ',"generation":100000000000000000000'), 'number 100000000000000000000 into Go struct field ObjectMeta.metadata.generation of type int64'],
    ];
    for (const [body, want] of cases) {
      const r = await c.raw('POST', '/apis/apps/v1/namespaces/default/deployments', { body, headers: { 'content-type': 'application/json' } });
      const s = status(r, 400, 'BadRequest');
      assert.equal(s.message, `Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal ${want}`);
    }
    // the largest values that fit are taken
    const r = await c.raw('POST', '/apis/apps/v1/namespaces/default/deployments?dryRun=All', {
      body: deploy('"replicas":2147483647,"strategy":{"rollingUpdate":{"maxSurge":2147483647}},', ',"generation":4611686018427387904'),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json().spec.replicas, 2147483647);
  });

  test('bodies nested too deeply: 400 before any parser sees them, in every encoding and patch type; the server stays up', async () => {
    const deep = (d: number) => '['.repeat(d) + ']'.repeat(d);
    const cm = (value: string) => `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"keep"},"data":{"a":${value}}}`;
    const tooDeep = 'the request body is nested too deeply: more than 400 levels';
    const tooDeepYAML = 'the request body is nested too deeply: more than 200 levels (YAML, and every server-side apply body)';
    const cases: [string, string, string, string][] = [
      ['POST', cms, 'application/json', cm(deep(100_000))],
      // without the strict-field scan (which bounds the depth as it goes), a pass of its own does
      ['POST', `${cms}?fieldValidation=Ignore`, 'application/json', cm(deep(100_000))],
      ['PUT', `${cms}/keep`, 'application/json', cm(deep(450))],
      ['POST', cms, 'application/yaml', cm(deep(100_000))],
      ['PATCH', `${cms}/keep`, 'application/merge-patch+json', cm(deep(500))],
      ['PATCH', `${cms}/keep`, 'application/strategic-merge-patch+json', cm(deep(500))],
      ['PATCH', `${cms}/keep`, 'application/json-patch+json', `[{"op":"add","path":"/data/x","value":${deep(1000)}}]`],
      // a server-side apply body is read as YAML: the ~990 levels that ended the process
      ['PATCH', `${cms}/keep?fieldManager=deep`, 'application/apply-patch+yaml', cm(deep(990))],
      ['PATCH', `${cms}/keep?fieldManager=deep`, 'application/apply-patch+yaml', cm(deep(250))],
      // block nesting in YAML: compact sequences, several levels a line
      ['POST', cms, 'application/yaml', `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keep}\ndata:\n  a:\n    ${'- '.repeat(150)}x\n`],
    ];
    for (const [method, path, type, body] of cases) {
      const r = await c.raw(method, path, { body, headers: { 'content-type': type } });
      const s = status(r, 400, 'BadRequest');
      assert.equal(s.message, type.includes('yaml') ? tooDeepYAML : tooDeep, `${method} ${type}`);
    }
    // a DeleteOptions body too
    status(await c.raw('DELETE', `${cms}/keep`, { body: `{"kind":"DeleteOptions","apiVersion":"v1","x":${deep(1000)}}`, headers: { 'content-type': 'application/json' } }), 400, 'BadRequest');
    assert.equal((await c.raw('GET', '/readyz')).status, 200);
    await keepUnchanged();
    // within the bound, a free-form field takes it, and the object reads back in every form
    const d = 390;
    const data = '{"a":'.repeat(d) + '1' + '}'.repeat(d);
    const made = await c.raw('POST', '/apis/apps/v1/namespaces/default/controllerrevisions', { body: `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"deep"},"revision":1,"data":${data}}`, headers: { 'content-type': 'application/json' } });
    assert.equal(made.status, 201, made.text.slice(0, 300));
    for (const accept of ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'application/json;as=Table;v=v1;g=meta.k8s.io']) {
      const g = await c.raw('GET', '/apis/apps/v1/namespaces/default/controllerrevisions/deep', { headers: { accept } });
      assert.equal(g.status, 200, `${accept}: ${g.text.slice(0, 300)}`);
    }
    const back = (await c.raw('GET', '/apis/apps/v1/namespaces/default/controllerrevisions/deep', { headers: { accept: 'application/yaml' } })).text;
    let v = (YAML.parse(back) as any).data;
    for (let i = 0; i < d; i++) v = v.a;
    assert.equal(v, 1);
  });
});

describe('encodings', () => {
  test('YAML responses and YAML request bodies', async () => {
    const r = await c.raw('GET', `${cms}/keep`, { headers: { accept: 'application/yaml' } });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/yaml');
    assert.equal(YAML.parse(r.text).data.a, '1');
    const l = await c.raw('GET', cms, { headers: { accept: 'application/yaml' } });
    assert.equal(YAML.parse(l.text).kind, 'ConfigMapList');
    const y = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  b: "2"\n';
    const cr = await c.raw('POST', cms, { body: y, headers: { 'content-type': 'application/yaml' } });
    assert.equal(cr.status, 201, cr.text);
    assert.equal(cr.json().data.b, '2');
    // the first document is the body, as Kubernetes' YAML decoder takes it: a trailing '---', or more
    // documents (even a broken one), are not read
    for (const [name, tail] of [['yaml-dashes', '---\n'], ['yaml-more', '---\napiVersion: v1\nkind: Secret\n: : bad [\n']]) {
      const m = await c.raw('POST', `${cms}?dryRun=All`, { body: y.replace('from-yaml', name) + tail, headers: { 'content-type': 'application/yaml' } });
      assert.equal(m.status, 201, `${name}: ${m.text}`);
      assert.equal(m.json().metadata.name, name);
    }
  });

  test('Protobuf requests and responses: object, list, Status', async () => {
    const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-pb' }, data: { x: 'y' } };
    const body = Buffer.from(encodeEnvelope('v1', 'ConfigMap', encodeMessage('io.k8s.api.core.v1.ConfigMap', obj)));
    const cr = await c.raw('POST', cms, { body, headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/vnd.kubernetes.protobuf' } });
    assert.equal(cr.status, 201);
    assert.equal(cr.headers['content-type'], 'application/vnd.kubernetes.protobuf');
    const env = decodeEnvelope(cr.body);
    assert.equal(env.kind, 'ConfigMap');
    const back = decodeMessage('io.k8s.api.core.v1.ConfigMap', env.raw) as any;
    assert.deepEqual(back.data, { x: 'y' });
    assert.ok(back.metadata.uid);
    const lr = await c.raw('GET', cms, { headers: { accept: 'application/vnd.kubernetes.protobuf, application/json' } });
    const lenv = decodeEnvelope(lr.body);
    assert.equal(lenv.kind, 'ConfigMapList');
    const list = decodeMessage('io.k8s.api.core.v1.ConfigMapList', lenv.raw) as any;
    assert.ok(list.items.some((i: any) => i.metadata.name === 'from-pb'));
    const nf = await c.raw('GET', `${cms}/nope`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    assert.equal(nf.status, 404);
    const senv = decodeEnvelope(nf.body);
    assert.equal(senv.kind, 'Status');
    const st = decodeMessage('io.k8s.apimachinery.pkg.apis.meta.v1.Status', senv.raw) as any;
    assert.equal(st.reason, 'NotFound');
    assert.equal(st.code, 404);
  });

  test('Table and metadata-only forms', async () => {
    const t = await c.raw('GET', cms, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json' } });
    const table = t.json();
    assert.equal(table.kind, 'Table');
    assert.equal(table.apiVersion, 'meta.k8s.io/v1');
    assert.deepEqual(
      table.columnDefinitions.map((d: any) => d.name),
      ['Name', 'Data', 'Age'],
    );
    const row = table.rows.find((r: any) => r.cells[0] === 'keep');
    assert.equal(row.cells[1], 1);
    assert.equal(row.object.kind, 'PartialObjectMetadata');
    for (const [io, kind] of [['Object', 'ConfigMap'], ['None', undefined]] as const) {
      const r = (await c.raw('GET', `${cms}?includeObject=${io}`, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).json();
      assert.equal(r.rows[0].object?.kind, kind);
    }
    const pom = await c.raw('GET', `${cms}/keep`, { headers: { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' } });
    assert.equal(pom.json().kind, 'PartialObjectMetadata');
    assert.equal(pom.json().data, undefined);
    const poml = await c.raw('GET', cms, { headers: { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' } });
    assert.equal(poml.json().kind, 'PartialObjectMetadataList');
  });

  test('pretty JSON', async () => {
    const r = await c.raw('GET', `${cms}/keep?pretty=true`);
    assert.match(r.text, /^\{\n  "kind": "ConfigMap",/);
  });
});

describe('discovery and version', () => {
  test('GET / lists the paths served, sorted (kubectl get --raw /)', async () => {
    const r = c.kubectl(['get', '--raw', '/']);
    assert.equal(r.code, 0, r.stderr);
    const { paths } = JSON.parse(r.stdout);
    assert.deepEqual(paths, [...paths].sort());
    for (const p of ['/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/apis/autoscaling/v2', '/healthz', '/livez/ping', '/readyz/shutdown', '/metrics', '/openapi/v2', '/openapi/v3', '/version', '/.well-known/openid-configuration', '/openid/v1/jwks']) {
      assert.ok(paths.includes(p), p);
    }
    assert.ok(!paths.includes('/livez/shutdown'), 'shutdown is a readyz check only');
  });

  test('/version', async () => {
    const v = (await c.raw('GET', '/version')).json();
    assert.match(v.gitVersion, /^v1\.\d+\.\d+/);
    assert.equal(v.major, '1');
  });
  test('legacy and aggregated discovery, chosen by Accept', async () => {
    const api = await c.raw('GET', '/api');
    assert.equal(api.headers['content-type'], 'application/json');
    assert.deepEqual(api.json().versions, ['v1']);
    const apis = (await c.raw('GET', '/apis')).json();
    assert.equal(apis.kind, 'APIGroupList');
    assert.ok(apis.groups.some((g: any) => g.name === 'apps'));
    for (const v of ['v2', 'v2beta1']) {
      const r = await c.raw('GET', '/apis', { headers: { accept: `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList,application/json` } });
      assert.equal(r.headers['content-type'], `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList`);
      assert.equal(r.json().apiVersion, `apidiscovery.k8s.io/${v}`);
    }
    const core = (await c.raw('GET', '/api', { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } })).json();
    const pods = core.items[0].versions[0].resources.find((r: any) => r.resource === 'pods');
    assert.deepEqual(pods.shortNames, ['po']);
    assert.ok(pods.subresources.some((s: any) => s.subresource === 'status'));
    // responseKind names a group and version only where the APIResource does (kube-apiserver's
    // installer): a subresource of another kind (eviction: policy/v1)
    assert.deepEqual(pods.responseKind, { group: '', version: '', kind: 'Pod' });
    assert.deepEqual(pods.subresources.find((s: any) => s.subresource === 'status').responseKind, { group: '', version: '', kind: 'Pod' });
    assert.deepEqual(pods.subresources.find((s: any) => s.subresource === 'eviction').responseKind, { group: 'policy', version: 'v1', kind: 'Eviction' });
    const v1 = (await c.raw('GET', '/api/v1')).json();
    assert.equal(v1.kind, 'APIResourceList');
    assert.ok(v1.resources.some((r: any) => r.name === 'pods/status'));
    const apps = (await c.raw('GET', '/apis/apps/v1')).json();
    assert.equal(apps.groupVersion, 'apps/v1');
    const g = (await c.raw('GET', '/apis/apps')).json();
    assert.equal(g.kind, 'APIGroup');
  });

  test('aggregated discovery: one ETag for v2 and v2beta1, JSON and Protobuf, with Cache-Control public; 304 on a match', async () => {
    const etags = new Set<string>();
    for (const v of ['v2', 'v2beta1']) {
      for (const enc of ['application/json', 'application/vnd.kubernetes.protobuf']) {
        const r = await c.raw('GET', '/apis', { headers: { accept: `${enc};g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList` } });
        assert.equal(r.status, 200);
        assert.equal(r.headers['cache-control'], 'public');
        assert.equal(r.headers['vary'], 'Accept');
        etags.add(String(r.headers['etag']));
      }
    }
    assert.equal(etags.size, 1, [...etags].join(' '));
    const again = await c.raw('GET', '/apis', { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList', 'if-none-match': [...etags][0]! } });
    assert.equal(again.status, 304);
    assert.equal(again.headers['cache-control'], 'public');
  });

  test('storageVersionHash is the hash of the version a resource is stored in (events.k8s.io as core, autoscaling/v1 as v2, networking v1 kinds new in 1.33 as v1beta1)', async () => {
    const hash = async (gv: string, resource: string) => (await c.raw('GET', gv === 'v1' ? '/api/v1' : `/apis/${gv}`)).json().resources.find((r: any) => r.name === resource).storageVersionHash;
    assert.equal(await hash('events.k8s.io/v1', 'events'), 'r2yiGXH7wu8=');
    assert.equal(await hash('v1', 'events'), 'r2yiGXH7wu8=');
    assert.equal(await hash('autoscaling/v1', 'horizontalpodautoscalers'), 'qwQve8ut294=');
    assert.equal(await hash('autoscaling/v2', 'horizontalpodautoscalers'), 'qwQve8ut294=');
    assert.equal(await hash('networking.k8s.io/v1', 'ipaddresses'), 'O4H8VxQhW5Y=');
    assert.equal(await hash('networking.k8s.io/v1', 'servicecidrs'), '8ufAXOnr3Yg=');
    assert.equal(await hash('v1', 'pods'), 'xPOwRZ+Yhw8=');
  });
});
