// Server-side apply over raw HTTP (create when absent, managedFields as Kubernetes writes them,
// conflicts naming managers and fields, force, removal of fields the applier alone owned, list
// types, the status subresource, bad apply requests) and kubectl apply: client-side (created,
// configured, unchanged, the last-applied annotation), server-side (serverside-applied,
// --force-conflicts), the client-side to server-side migration, and kubectl diff.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, expectStatus, type Cluster, type RawResponse, type RunResult } from './harness.js';

let c: Cluster;
const NS = 'default';
const cms = `/api/v1/namespaces/${NS}/configmaps`;
const deploys = `/apis/apps/v1/namespaces/${NS}/deployments`;
const APPLY = 'application/apply-patch+yaml';

before(async () => {
  c = await startCluster();
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
function apply(path: string, manager: string | undefined, body: unknown, query = ''): Promise<RawResponse> {
  const q = [manager !== undefined ? `fieldManager=${manager}` : '', query].filter(Boolean).join('&');
  return c.raw('PATCH', `${path}${q ? `?${q}` : ''}`, { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': APPLY } });
}
const cm = (name: string, data: Record<string, string>, extra: any = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data });
const managers = (o: any) => Object.fromEntries((o.metadata.managedFields ?? []).map((m: any) => [`${m.manager}/${m.operation}${m.subresource ? `/${m.subresource}` : ''}`, m.fieldsV1]));
function run(r: RunResult): { code: number; stdout: string; stderr: string } {
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}

describe('server-side apply', () => {
  test('creates an absent object (201) with managedFields as Kubernetes writes them; a YAML body works too', async () => {
    const r = await apply(`${cms}/ssa-create`, 'mgr-a', cm('ssa-create', { a: '1' }, { labels: { x: 'y' } }));
    const out = ok(r, 201, 'apply create');
    assert.deepEqual(out.data, { a: '1' });
    assert.equal(out.metadata.managedFields.length, 1);
    const mf = out.metadata.managedFields[0];
    assert.deepEqual(Object.keys(mf), ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1']);
    assert.equal(mf.manager, 'mgr-a');
    assert.equal(mf.operation, 'Apply');
    assert.equal(mf.apiVersion, 'v1');
    assert.match(mf.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(mf.fieldsType, 'FieldsV1');
    assert.deepEqual(mf.fieldsV1, { 'f:data': { 'f:a': {} }, 'f:metadata': { 'f:labels': { 'f:x': {} } } });

    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa-yaml\ndata:\n  k: v\n';
    const y = ok(await apply(`${cms}/ssa-yaml`, 'mgr-y', yaml), 201, 'yaml apply');
    assert.deepEqual(y.data, { k: 'v' });
    // applying again with a change: 200
    const again = ok(await apply(`${cms}/ssa-yaml`, 'mgr-y', yaml.replace('k: v', 'k: w')), 200, 'yaml apply again');
    assert.deepEqual(again.data, { k: 'w' });
  });

  test('a conflict is 409 naming the manager and the field; force=true takes the field over', async () => {
    ok(await apply(`${cms}/ssa-conflict`, 'mgr-a', cm('ssa-conflict', { a: '1', keep: 'k' })), 201, 'create');
    const before = await get(`${cms}/ssa-conflict`);
    const r = await apply(`${cms}/ssa-conflict`, 'mgr-b', cm('ssa-conflict', { a: '2', b: '3' }));
    const s = expectStatus(r, 409, 'Conflict', 'conflict');
    assert.equal(s.message, 'Apply failed with 1 conflict: conflict with "mgr-a": .data.a');
    assert.deepEqual(s.details, { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "mgr-a"', field: '.data.a' }] });
    assert.deepEqual(await get(`${cms}/ssa-conflict`), before, 'a conflicting apply changes nothing');
    // the same value is shared ownership, not a conflict
    ok(await apply(`${cms}/ssa-conflict`, 'mgr-c', cm('ssa-conflict', { a: '1' })), 200, 'same value');
    const forced = ok(await apply(`${cms}/ssa-conflict`, 'mgr-b', cm('ssa-conflict', { a: '2', b: '3' }), 'force=true'), 200, 'force');
    assert.deepEqual(forced.data, { a: '2', b: '3', keep: 'k' });
    const m = managers(forced);
    assert.deepEqual(m['mgr-a/Apply'], { 'f:data': { 'f:keep': {} } });
    assert.deepEqual(m['mgr-b/Apply'], { 'f:data': { 'f:a': {}, 'f:b': {} } });
    assert.equal(m['mgr-c/Apply'], undefined, 'a manager that owned nothing any more is gone');
  });

  test('an apply to /scale conflicts with the parent\'s owner of replicas, and a forced one takes replicas over in the parent\'s managedFields (ScaleHandler)', async () => {
    const dep = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'ssa-owner' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'ssa-owner' } }, template: { metadata: { labels: { app: 'ssa-owner' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    };
    ok(await apply(`${deploys}/ssa-owner`, 'a', dep), 201, 'create');
    const scale = { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'ssa-owner', namespace: NS }, spec: { replicas: 3 } };
    const conflict = expectStatus(await apply(`${deploys}/ssa-owner/scale`, 'b', scale), 409, 'Conflict', 'scale conflict');
    assert.equal(conflict.message, 'Apply failed with 1 conflict: conflict with "a": .spec.replicas');
    const forced = ok(await apply(`${deploys}/ssa-owner/scale`, 'b', scale, 'force=true'), 200, 'forced');
    assert.equal(forced.kind, 'Scale');
    assert.deepEqual(forced.spec, { replicas: 3 });
    const after = await get(`${deploys}/ssa-owner`);
    assert.equal(after.spec.replicas, 3);
    const m = managers(after);
    assert.deepEqual(m['b/Apply/scale'], { 'f:spec': { 'f:replicas': {} } });
    assert.equal(after.metadata.managedFields.find((e: any) => e.manager === 'b').apiVersion, 'apps/v1');
    assert.equal(m['a/Apply']['f:spec']['f:replicas'], undefined, 'a no longer owns replicas');
    assert.ok(m['a/Apply']['f:spec']['f:template'], 'a keeps the rest');
  });

  test('a conflict with an Update manager names its apiVersion; several conflicts are listed per manager', async () => {
    ok(await c.raw('POST', `${cms}?fieldManager=updater`, { body: cm('ssa-upd', { c: '1', d: '2' }) }), 201, 'create by update');
    const one = expectStatus(await apply(`${cms}/ssa-upd`, 'mgr-a', cm('ssa-upd', { c: 'x' })), 409, 'Conflict', 'one conflict');
    assert.equal(one.message, 'Apply failed with 1 conflict: conflict with "updater" using v1: .data.c');
    const two = expectStatus(await apply(`${cms}/ssa-upd`, 'mgr-a', cm('ssa-upd', { c: 'x', d: 'y' })), 409, 'Conflict', 'two conflicts');
    assert.equal(two.message, 'Apply failed with 2 conflicts: conflicts with "updater" using v1:\n- .data.c\n- .data.d');
    assert.deepEqual(two.details.causes, [
      { reason: 'FieldManagerConflict', message: 'conflict with "updater" using v1', field: '.data.c' },
      { reason: 'FieldManagerConflict', message: 'conflict with "updater" using v1', field: '.data.d' },
    ]);
  });

  test('fields the applier owned alone and no longer applies are removed; shared ones stay', async () => {
    ok(await apply(`${cms}/ssa-prune`, 'mgr-r', cm('ssa-prune', { a: '1', b: '2', s: '3' }, { labels: { l1: 'a', l2: 'b' } })), 201, 'create');
    ok(await apply(`${cms}/ssa-prune`, 'mgr-s', cm('ssa-prune', { s: '3' })), 200, 'share s');
    ok(await c.raw('PATCH', `${cms}/ssa-prune?fieldManager=editor`, { body: '{"data":{"e":"9"}}', headers: { 'content-type': 'application/merge-patch+json' } }), 200, 'editor adds e');
    const out = ok(await apply(`${cms}/ssa-prune`, 'mgr-r', cm('ssa-prune', { a: '1' }, { labels: { l1: 'a' } })), 200, 'apply less');
    assert.deepEqual(out.data, { a: '1', s: '3', e: '9' });
    assert.deepEqual(out.metadata.labels, { l1: 'a' });
    assert.deepEqual(managers(out)['mgr-r/Apply'], { 'f:data': { 'f:a': {} }, 'f:metadata': { 'f:labels': { 'f:l1': {} } } });
  });

  test('list types: containers are a map keyed by name, finalizers a set, command atomic', async () => {
    const base = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'ssa-lists', finalizers: ['example.com/a'] },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'ssa-lists' } },
        template: { metadata: { labels: { app: 'ssa-lists' } }, spec: { containers: [{ name: 'a', image: 'nginx:1', command: ['sleep', '1'] }] } },
      },
    };
    const made = ok(await apply(`${deploys}/ssa-lists`, 'mgr-a', base), 201, 'create');
    assert.deepEqual(managers(made)['mgr-a/Apply'], {
      'f:metadata': { 'f:finalizers': { 'v:"example.com/a"': {} } },
      'f:spec': {
        'f:replicas': {},
        'f:selector': {},
        'f:template': {
          'f:metadata': { 'f:labels': { 'f:app': {} } },
          'f:spec': { 'f:containers': { 'k:{"name":"a"}': { '.': {}, 'f:command': {}, 'f:image': {}, 'f:name': {} } } },
        },
      },
    });
    const other = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'ssa-lists', finalizers: ['example.com/b'] },
      spec: { template: { spec: { containers: [{ name: 'b', image: 'busybox:1' }] } } },
    };
    const both = ok(await apply(`${deploys}/ssa-lists`, 'mgr-b', other), 200, 'second applier');
    assert.deepEqual(
      both.spec.template.spec.containers.map((x: any) => x.name),
      ['a', 'b'],
    );
    assert.deepEqual(both.metadata.finalizers, ['example.com/a', 'example.com/b']);
    const atomic = { ...other, metadata: { name: 'ssa-lists' }, spec: { template: { spec: { containers: [{ name: 'a', command: ['sleep', '2'] }] } } } };
    const s = expectStatus(await apply(`${deploys}/ssa-lists`, 'mgr-b', atomic), 409, 'Conflict', 'atomic list');
    assert.equal(s.message, 'Apply failed with 1 conflict: conflict with "mgr-a": .spec.template.spec.containers[name="a"].command');
    // mgr-b drops its container and finalizer: only what it owned goes
    const less = ok(await apply(`${deploys}/ssa-lists`, 'mgr-b', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'ssa-lists' } }), 200, 'apply nothing');
    assert.deepEqual(
      less.spec.template.spec.containers.map((x: any) => x.name),
      ['a'],
    );
    assert.deepEqual(less.metadata.finalizers, ['example.com/a']);
    ok(await c.raw('PATCH', `${deploys}/ssa-lists`, { body: '{"metadata":{"finalizers":null}}', headers: { 'content-type': 'application/merge-patch+json' } }), 200, 'clear finalizers');
  });

  test('apply on the status subresource sets status only, tracked with subresource "status"', async () => {
    ok(
      await apply(`${deploys}/ssa-status`, 'mgr-a', {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'ssa-status' },
        spec: { replicas: 1, selector: { matchLabels: { app: 's' } }, template: { metadata: { labels: { app: 's' } }, spec: { containers: [{ name: 'a', image: 'nginx:1' }] } } },
      }),
      201,
      'create',
    );
    const out = ok(
      await apply(`${deploys}/ssa-status/status`, 'status-mgr', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'ssa-status' }, spec: { replicas: 9 }, status: { replicas: 2, observedGeneration: 1 } }),
      200,
      'status apply',
    );
    assert.equal(out.status.replicas, 2);
    assert.equal(out.spec.replicas, 1);
    const entry = out.metadata.managedFields.find((m: any) => m.manager === 'status-mgr');
    assert.deepEqual(
      { operation: entry.operation, apiVersion: entry.apiVersion, subresource: entry.subresource, fieldsV1: entry.fieldsV1 },
      { operation: 'Apply', apiVersion: 'apps/v1', subresource: 'status', fieldsV1: { 'f:status': { 'f:observedGeneration': {}, 'f:replicas': {} } } },
    );
    assert.deepEqual(Object.keys(entry), ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1', 'subresource']);
  });

  test('apply on the scale subresource takes an autoscaling/v1 Scale', async () => {
    ok(
      await apply(`${deploys}/ssa-scale`, 'mgr-a', {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'ssa-scale' },
        spec: { replicas: 1, selector: { matchLabels: { app: 'sc' } }, template: { metadata: { labels: { app: 'sc' } }, spec: { containers: [{ name: 'a', image: 'nginx:1' }] } } },
      }),
      201,
      'create',
    );
    const scaled = ok(await apply(`${deploys}/ssa-scale/scale`, 'scaler', { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'ssa-scale' }, spec: { replicas: 4 } }, 'force=true'), 200, 'scale apply');
    assert.equal(scaled.kind, 'Scale');
    assert.equal(scaled.spec.replicas, 4);
    assert.equal((await c.raw('GET', `${deploys}/ssa-scale`)).json().spec.replicas, 4);
    const wrong = await apply(`${deploys}/ssa-scale/scale`, 'scaler', { apiVersion: 'apps/v1', kind: 'Scale', metadata: { name: 'ssa-scale' }, spec: { replicas: 5 } }, 'force=true');
    assert.equal(expectStatus(wrong, 400, 'BadRequest').message, 'invalid object type: apps/v1, Kind=Scale');
  });

  test('bad apply requests: 400/422 and nothing stored', async () => {
    ok(await apply(`${cms}/ssa-bad`, 'mgr-a', cm('ssa-bad', { a: '1' })), 201, 'create');
    const before = await get(`${cms}/ssa-bad`);
    const arr = expectStatus(await apply(`${cms}/ssa-bad`, 'mgr-a', '[1,2]'), 400, 'BadRequest', 'array body');
    assert.equal(arr.message, 'error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}');
    const str = expectStatus(await apply(`${cms}/ssa-bad`, 'mgr-a', '"text"'), 400, 'BadRequest', 'string body');
    assert.equal(str.message, 'error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go value of type map[string]interface {}');
    const noMgr = expectStatus(await apply(`${cms}/ssa-bad`, undefined, cm('ssa-bad', { a: '2' })), 422, 'Invalid', 'no fieldManager');
    assert.equal(noMgr.message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
    const force = expectStatus(
      await c.raw('PATCH', `${cms}/ssa-bad?force=true`, { body: '{"data":{"a":"2"}}', headers: { 'content-type': 'application/merge-patch+json' } }),
      422,
      'Invalid',
      'force on a merge patch',
    );
    assert.equal(force.message, 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
    const mf = expectStatus(await apply(`${cms}/ssa-bad`, 'mgr-a', cm('ssa-bad', { a: '2' }, { managedFields: [{ manager: 'x', operation: 'Apply' }] })), 400, 'BadRequest', 'managedFields in the body');
    assert.equal(mf.message, 'metadata.managedFields must be nil');
    const name = expectStatus(await apply(`${cms}/ssa-bad`, 'mgr-a', cm('ssa-other', { a: '2' })), 400, 'BadRequest', 'another name');
    assert.equal(name.message, 'the name of the object (ssa-other) does not match the name on the URL (ssa-bad)');
    expectStatus(await apply(`${cms}/ssa-bad`, 'mgr-b', cm('ssa-bad', { a: '2' })), 409, 'Conflict', 'conflict');
    assert.deepEqual(await get(`${cms}/ssa-bad`), before);
    // an apply that would create an invalid object creates nothing
    const inv = expectStatus(await apply(`${cms}/Bad_Name`, 'mgr-a', cm('Bad_Name', { a: '1' })), 422, 'Invalid', 'invalid name');
    assert.match(inv.message, /^ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);
    expectStatus(await c.raw('GET', `${cms}/Bad_Name`), 404, 'NotFound', 'nothing created');
  });

  // Kubernetes answers an applied configuration its type converter refuses with 500 (a plain
  // error: kubernetes/kubernetes#139253); it is the client's error, and Keelson answers 400 with
  // Kubernetes' words
  test('a configuration of the wrong types or with duplicate list keys: 400 in Kubernetes\' words, nothing stored', async () => {
    ok(await apply(`${cms}/ssa-typed`, 'mgr-a', cm('ssa-typed', { a: '1' })), 201, 'create');
    const before = await get(`${cms}/ssa-typed`);
    const labels = expectStatus(await apply(`${cms}/ssa-typed`, 'mgr-a', { ...cm('ssa-typed', { a: '1' }), metadata: { name: 'ssa-typed', labels: { x: 1 } } }), 400, 'BadRequest', 'a number as a label');
    assert.equal(labels.message, 'failed to create typed patch object (/ssa-typed; /v1, Kind=ConfigMap): .metadata.labels.x: expected string, got &value.valueUnstructured{Value:1}');
    const data = expectStatus(await apply(`${cms}/ssa-typed`, 'mgr-a', { ...cm('ssa-typed', { a: '1' }), data: ['a'] }), 400, 'BadRequest', 'a list as data');
    assert.equal(data.message, 'failed to create typed patch object (/ssa-typed; /v1, Kind=ConfigMap): .data: expected map, got &{[a]}');
    assert.deepEqual(await get(`${cms}/ssa-typed`), before);
    // the same for an apply that would create the object
    const dup = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'ssa-dup' }, spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'a', image: 'x' }, { name: 'a', image: 'y' }] } } } };
    const d = expectStatus(await apply(`${deploys}/ssa-dup`, 'mgr-a', dup), 400, 'BadRequest', 'duplicate containers');
    assert.equal(d.message, 'failed to create typed patch object (/ssa-dup; apps/v1, Kind=Deployment): .spec.template.spec.containers: duplicate entries for key [name="a"]');
    expectStatus(await c.raw('GET', `${deploys}/ssa-dup`), 404, 'NotFound', 'nothing created');
    // what kubectl prints of it
    const k = run(c.kubectl(['apply', '--server-side', '-n', NS, '-f', '-'], { input: JSON.stringify(dup) }));
    assert.notEqual(k.code, 0);
    assert.match(k.stderr, /Error from server \(BadRequest\): .*failed to create typed patch object .*duplicate entries for key \[name="a"\]/);
  });

  test('duplicate fields in an applied configuration: Strict 400, Warn one warning per field, Ignore silent', async () => {
    const body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ssa-dup"},"data":{"a":"1","a":"2"}}';
    const s = expectStatus(await apply(`${cms}/ssa-dup`, 'mgr', body, 'fieldValidation=Strict'), 400, 'BadRequest', 'strict');
    assert.equal(s.message, 'error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 1: key "a" already set in map');
    expectStatus(await c.raw('GET', `${cms}/ssa-dup`), 404, 'NotFound', 'not created');
    const w = await apply(`${cms}/ssa-dup`, 'mgr', body, 'fieldValidation=Warn');
    ok(w, 201, 'warn');
    assert.deepEqual(w.headersDistinct['warning'], ['299 - "line 1: key \\"a\\" already set in map"']);
    const i = await apply(`${cms}/ssa-dup`, 'mgr', body, 'fieldValidation=Ignore');
    ok(i, 200, 'ignore');
    assert.equal(i.headersDistinct['warning'], undefined);
  });
});

describe('kubectl apply', () => {
  for (const v of ['1.33', '1.27']) {
    const tag = v.replace('.', '');
    test(`kubectl ${v}: client-side apply: created, unchanged, configured (3-way), the last-applied annotation`, async () => {
      const name = `csa-${tag}`;
      const f1 = c.file(`${name}-1.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n  b: "2"\n`);
      assert.deepEqual(run(c.kubectl(['apply', '-f', f1], { version: v })), { code: 0, stdout: `configmap/${name} created\n`, stderr: '' });
      const o = await get(`${cms}/${name}`);
      const last = o.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'];
      assert.ok(last.endsWith('\n'));
      assert.deepEqual(JSON.parse(last), { apiVersion: 'v1', data: { a: '1', b: '2' }, kind: 'ConfigMap', metadata: { annotations: {}, name, namespace: NS } });
      assert.deepEqual(managers(o)['kubectl-client-side-apply/Update'], {
        'f:data': { '.': {}, 'f:a': {}, 'f:b': {} },
        'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} } },
      });
      assert.deepEqual(run(c.kubectl(['apply', '-f', f1], { version: v })), { code: 0, stdout: `configmap/${name} unchanged\n`, stderr: '' });
      // someone else adds a key; the next apply keeps it, drops b, changes a
      ok(await c.raw('PATCH', `${cms}/${name}`, { body: '{"data":{"other":"x"}}', headers: { 'content-type': 'application/merge-patch+json' } }), 200, 'other writer');
      const f2 = c.file(`${name}-2.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "10"\n`);
      assert.deepEqual(run(c.kubectl(['apply', '-f', f2], { version: v })), { code: 0, stdout: `configmap/${name} configured\n`, stderr: '' });
      const o2 = await get(`${cms}/${name}`);
      assert.deepEqual(o2.data, { a: '10', other: 'x' });
      assert.deepEqual(JSON.parse(o2.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).data, { a: '10' });
      // --dry-run=server changes nothing
      const f3 = c.file(`${name}-3.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "11"\n`);
      assert.deepEqual(run(c.kubectl(['apply', '-f', f3, '--dry-run=server'], { version: v })), { code: 0, stdout: `configmap/${name} configured (server dry run)\n`, stderr: '' });
      assert.equal((await get(`${cms}/${name}`)).metadata.resourceVersion, o2.metadata.resourceVersion);
    });

    test(`kubectl ${v}: client-side apply to an object created without the annotation warns and patches it`, async () => {
      const name = `csa-noannot-${tag}`;
      ok(await c.raw('POST', cms, { body: cm(name, { a: '1' }) }), 201, 'create');
      const f = c.file(`${name}.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n`);
      const r = c.kubectl(['apply', '-f', f], { version: v });
      assert.deepEqual(run(r), {
        code: 0,
        stdout: `configmap/${name} configured\n`,
        stderr: `Warning: resource configmaps/${name} is missing the kubectl.kubernetes.io/last-applied-configuration annotation which is required by kubectl apply. kubectl apply should only be used on resources created declaratively by either kubectl create --save-config or kubectl apply. The missing annotation will be patched automatically.\n`,
      });
      assert.ok((await get(`${cms}/${name}`)).metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
    });

    test(`kubectl ${v}: apply --server-side: serverside-applied, conflicts, --force-conflicts, --dry-run=server`, async () => {
      const name = `ssa-k-${tag}`;
      const f1 = c.file(`${name}-1.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n`);
      assert.deepEqual(run(c.kubectl(['apply', '--server-side', '-f', f1], { version: v })), { code: 0, stdout: `configmap/${name} serverside-applied\n`, stderr: '' });
      const o = await get(`${cms}/${name}`);
      assert.deepEqual(managers(o), { 'kubectl/Apply': { 'f:data': { 'f:a': {} } } });
      assert.equal(o.metadata.annotations, undefined, 'server-side apply writes no last-applied annotation');
      // kubectl patch takes a; the next server-side apply of another value conflicts
      assert.equal(c.kubectl(['patch', 'configmap', name, '-p', '{"data":{"a":"p"}}'], { version: v }).code, 0);
      const f2 = c.file(`${name}-2.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "2"\n`);
      const r = c.kubectl(['apply', '--server-side', '-f', f2], { version: v });
      assert.equal(r.code, 1);
      assert.equal(r.stdout, '');
      assert.ok(r.stderr.startsWith('error: Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: .data.a\n'), r.stderr);
      assert.match(r.stderr, /--force-conflicts/);
      assert.equal((await get(`${cms}/${name}`)).data.a, 'p');
      assert.deepEqual(run(c.kubectl(['apply', '--server-side', '--dry-run=server', '--force-conflicts', '-f', f2], { version: v })), {
        code: 0,
        stdout: `configmap/${name} serverside-applied (server dry run)\n`,
        stderr: '',
      });
      assert.equal((await get(`${cms}/${name}`)).data.a, 'p');
      assert.deepEqual(run(c.kubectl(['apply', '--server-side', '--force-conflicts', '-f', f2], { version: v })), { code: 0, stdout: `configmap/${name} serverside-applied\n`, stderr: '' });
      const o2 = await get(`${cms}/${name}`);
      assert.equal(o2.data.a, '2');
      assert.equal(managers(o2)['kubectl-patch/Update'], undefined, 'the forced field left kubectl-patch with nothing');
    });

    test(`kubectl ${v}: client-side apply then server-side apply migrates the ownership`, async () => {
      const name = `migrate-${tag}`;
      const f1 = c.file(`${name}-1.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  labels:\n    l: x\ndata:\n  a: "1"\n  b: "2"\n`);
      assert.equal(c.kubectl(['apply', '-f', f1], { version: v }).code, 0);
      assert.deepEqual(run(c.kubectl(['apply', '--server-side', '-f', f1], { version: v })), { code: 0, stdout: `configmap/${name} serverside-applied\n`, stderr: '' });
      const o = await get(`${cms}/${name}`);
      const m = managers(o);
      assert.equal(m['kubectl-client-side-apply/Update'], undefined, JSON.stringify(o.metadata.managedFields));
      assert.ok(m['kubectl/Apply'], JSON.stringify(o.metadata.managedFields));
      assert.deepEqual(m['kubectl/Apply']['f:data'], { 'f:a': {}, 'f:b': {} });
      // now a field dropped from the manifest is removed by the next server-side apply
      const f2 = c.file(`${name}-2.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  labels:\n    l: x\ndata:\n  a: "1"\n`);
      assert.deepEqual(run(c.kubectl(['apply', '--server-side', '-f', f2], { version: v })), { code: 0, stdout: `configmap/${name} serverside-applied\n`, stderr: '' });
      assert.deepEqual((await get(`${cms}/${name}`)).data, { a: '1' });
    });

    test(`kubectl ${v}: diff shows a change (exit 1) and nothing for an unchanged object (exit 0), and writes nothing`, async () => {
      const name = `diff-${tag}`;
      const f1 = c.file(`${name}-1.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n`);
      assert.equal(c.kubectl(['apply', '-f', f1], { version: v }).code, 0);
      const before = await get(`${cms}/${name}`);
      const same = c.kubectl(['diff', '-f', f1], { version: v });
      assert.deepEqual(run(same), { code: 0, stdout: '', stderr: '' });
      const f2 = c.file(`${name}-2.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "2"\n`);
      const d = c.kubectl(['diff', '-f', f2], { version: v });
      assert.equal(d.code, 1, d.stderr);
      assert.equal(d.stderr, '');
      assert.match(d.stdout, /^diff -u -N /);
      assert.match(d.stdout, /\n-  a: "1"\n\+  a: "2"\n/);
      assert.doesNotMatch(d.stdout, /managedFields|resourceVersion|creationTimestamp|uid:/);
      const ss = c.kubectl(['diff', '--server-side', '-f', f2], { version: v });
      assert.equal(ss.code, 1, ss.stderr);
      assert.match(ss.stdout, /\n-  a: "1"\n\+  a: "2"\n/);
      // a new object diffs against nothing
      const f3 = c.file(`${name}-new.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}-new\ndata:\n  z: "9"\n`);
      const n = c.kubectl(['diff', '-f', f3], { version: v });
      assert.equal(n.code, 1, n.stderr);
      assert.match(n.stdout, /\n\+  z: "9"\n/);
      assert.deepEqual(await get(`${cms}/${name}`), before);
      expectStatus(await c.raw('GET', `${cms}/${name}-new`), 404, 'NotFound', 'diff created nothing');
    });
  }
});

describe('clearing the managed fields', () => {
  test('managedFields [] or [{}] in a PUT, a strategic merge patch or a JSON patch clears them; later updates do not start tracking again', async () => {
    const cases: [string, (name: string, read: any) => Promise<RawResponse>][] = [
      ['PUT []', (name, read) => c.raw('PUT', `${cms}/${name}`, { body: { ...read, metadata: { ...read.metadata, managedFields: [] }, data: { a: 'c' } } })],
      ['PUT [{}]', (name, read) => c.raw('PUT', `${cms}/${name}`, { body: { ...read, metadata: { ...read.metadata, managedFields: [{}] }, data: { a: 'c' } } })],
      ['strategic []', (name) => c.raw('PATCH', `${cms}/${name}`, { headers: { 'content-type': 'application/strategic-merge-patch+json' }, body: { metadata: { managedFields: [] } } })],
      ['json patch []', (name) => c.raw('PATCH', `${cms}/${name}`, { headers: { 'content-type': 'application/json-patch+json' }, body: JSON.stringify([{ op: 'replace', path: '/metadata/managedFields', value: [] }]) })],
    ];
    let i = 0;
    for (const [what, clear] of cases) {
      const name = `reset-${i++}`;
      const made = ok(await apply(`${cms}/${name}`, 'applier', cm(name, { a: 'b' })), 201, `${what}: apply`);
      assert.equal(made.metadata.managedFields.length, 1);
      const cleared = ok(await clear(name, made), 200, what);
      assert.equal(cleared.metadata.managedFields, undefined, `${what}: cleared`);
      const later = ok(await c.raw('PATCH', `${cms}/${name}`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { data: { z: '1' } } }), 200, `${what}: a later update`);
      assert.equal(later.metadata.managedFields, undefined, `${what}: not tracked again until an apply`);
    }
  });
});

test('server-side apply of a field the type lacks fails, whatever the field validation, in the field manager\'s words; kubectl apply --server-side shows it', async () => {
  for (const fv of ['', 'Ignore', 'Warn', 'Strict']) {
    const r = await apply(`${cms}/undeclared`, 'm', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'undeclared', foo: 1 }, data_error: { a: 'b' }, data: { x: 'y' } }, fv ? `fieldValidation=${fv}` : '');
    assert.equal(
      expectStatus(r, 400, 'BadRequest', fv).message,
      'failed to create typed patch object (/undeclared; /v1, Kind=ConfigMap): errors:\n  .metadata.foo: field not declared in schema\n  .data_error: field not declared in schema',
      fv,
    );
  }
  assert.equal((await c.raw('GET', `${cms}/undeclared`)).status, 404, 'nothing created');
  const k = c.kubectl(['apply', '--server-side', '--validate=false', '-f', '-'], { input: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typo\n  namespace: default\ndatta:\n  a: b\n' });
  assert.notEqual(k.code, 0);
  assert.match(k.stderr, /failed to create typed patch object \(default\/typo; \/v1, Kind=ConfigMap\): \.datta: field not declared in schema/);
});
