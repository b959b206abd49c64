// PATCH over raw HTTP: JSON patch (every op, atomic failure), JSON merge patch, strategic merge
// patch on built-in kinds (merge keys, $patch, $retainKeys, $deleteFromPrimitiveList,
// $setElementOrder), the same on status, and malformed or failing patches: each answered with
// Kubernetes' Status, and the stored object exactly as it was.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, expectStatus, type Cluster, type RawResponse } from './harness.js';

let c: Cluster;
const NS = 'default';
const cms = `/api/v1/namespaces/${NS}/configmaps`;
const deploys = `/apis/apps/v1/namespaces/${NS}/deployments`;
const JSONP = 'application/json-patch+json';
const MERGE = 'application/merge-patch+json';
const SMP = 'application/strategic-merge-patch+json';

before(async () => {
  // (the deployment controller would write the Deployments these tests compare before and after)
  c = await startCluster({ args: ['--controllers=*,-deployment-controller'] });
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
function patch(path: string, type: string, body: unknown): Promise<RawResponse> {
  return c.raw('PATCH', path, { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': type } });
}
/** the stored object, unchanged: same resourceVersion and content */
async function unchanged(path: string, before: any, what: string): Promise<void> {
  const now = await get(path);
  assert.deepEqual(now, before, `${what}: the stored object changed`);
}

const DEPLOYMENT = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels: { app: name } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        containers: [
          { name: 'a', image: 'nginx:1', ports: [{ containerPort: 80 }], env: [{ name: 'X', value: '1' }, { name: 'Y', value: '2' }] },
          { name: 'b', image: 'busybox:1', command: ['sleep', '3600'] },
        ],
      },
    },
  },
});

describe('JSON patch', () => {
  test('add, remove, replace, move, copy and test', async () => {
    await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'jp-ops', labels: { keep: 'yes' } }, data: { a: '1', b: '2' } });
    const out = ok(
      await patch(`${cms}/jp-ops`, JSONP, [
        { op: 'add', path: '/data/c', value: '3' },
        { op: 'remove', path: '/data/b' },
        { op: 'replace', path: '/data/a', value: '10' },
        { op: 'move', from: '/data/c', path: '/data/d' },
        { op: 'copy', from: '/data/a', path: '/data/e' },
        { op: 'test', path: '/data/a', value: '10' },
        { op: 'add', path: '/metadata/labels/new~1key', value: 'v' },
      ]),
      200,
      'json patch',
    );
    assert.deepEqual(out.data, { a: '10', d: '3', e: '10' });
    assert.deepEqual(out.metadata.labels, { keep: 'yes', 'new/key': 'v' });
    assert.deepEqual((await get(`${cms}/jp-ops`)).data, { a: '10', d: '3', e: '10' });
  });

  test('a failing test rejects the whole patch and changes nothing', async () => {
    await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'jp-test' }, data: { a: '1' } });
    const before = await get(`${cms}/jp-test`);
    const r = await patch(`${cms}/jp-test`, JSONP, [
      { op: 'replace', path: '/data/a', value: '99' },
      { op: 'add', path: '/data/z', value: 'z' },
      { op: 'test', path: '/data/a', value: 'nope' },
    ]);
    const s = expectStatus(r, 422, 'Invalid', 'failing test');
    assert.equal(s.message, 'the server rejected our request due to an error in our request');
    await unchanged(`${cms}/jp-test`, before, 'failing test');
  });

  test('a path that does not exist: 422 and nothing changes', async () => {
    await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'jp-missing' }, data: { a: '1' } });
    const before = await get(`${cms}/jp-missing`);
    for (const ops of [
      [{ op: 'remove', path: '/data/nope' }],
      [{ op: 'add', path: '/spec/nothing/here', value: 1 }],
      [{ op: 'replace', path: '/metadata/annotations/x', value: 'y' }],
      [{ op: 'move', from: '/data/nope', path: '/data/b' }],
      [{ op: 'test', path: '/data/nope', value: 'x' }],
      [
        { op: 'add', path: '/data/b', value: '2' },
        { op: 'remove', path: '/data/nope' },
      ],
    ]) {
      const s = expectStatus(await patch(`${cms}/jp-missing`, JSONP, ops), 422, 'Invalid', JSON.stringify(ops));
      assert.equal(s.message, 'the server rejected our request due to an error in our request');
    }
    await unchanged(`${cms}/jp-missing`, before, 'missing paths');
  });

  test('malformed JSON patches: 400 and nothing changes', async () => {
    await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'jp-bad' }, data: { a: '1' } });
    const before = await get(`${cms}/jp-bad`);
    const cases: [string, string][] = [
      ['{bad', 'error decoding patch: invalid character \'b\' looking for beginning of object key string'],
      ['{"op":"add","path":"/data/b","value":"2"}', 'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp'],
    ];
    for (const [body, message] of cases) {
      assert.equal(expectStatus(await patch(`${cms}/jp-bad`, JSONP, body), 400, 'BadRequest', body).message, message);
    }
    // well-formed JSON, but an operation the library cannot apply: 422
    for (const body of ['[{"op":"frobnicate","path":"/data/a"}]', '[{"op":"add","value":"x"}]', '[{"op":"move","path":"/data/b"}]']) {
      const s = expectStatus(await patch(`${cms}/jp-bad`, JSONP, body), 422, 'Invalid', body);
      assert.equal(s.message, 'the server rejected our request due to an error in our request');
    }
    await unchanged(`${cms}/jp-bad`, before, 'malformed');
  });

  test('on the status subresource, only status changes', async () => {
    await create(deploys, DEPLOYMENT('jp-status'));
    const out = ok(
      await patch(`${deploys}/jp-status/status`, JSONP, [
        { op: 'add', path: '/status/replicas', value: 3 },
        { op: 'replace', path: '/spec/replicas', value: 9 },
      ]),
      200,
      'json patch status',
    );
    assert.equal(out.status.replicas, 3);
    assert.equal(out.spec.replicas, 1);
  });
});

describe('JSON merge patch', () => {
  test('maps merge, null removes, lists are replaced whole', async () => {
    await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mp', labels: { a: '1', b: '2' } }, data: { a: '1', b: '2' } });
    const out = ok(await patch(`${cms}/mp`, MERGE, { metadata: { labels: { b: null, c: '3' } }, data: { a: null, z: '26' } }), 200, 'merge');
    assert.deepEqual(out.metadata.labels, { a: '1', c: '3' });
    assert.deepEqual(out.data, { b: '2', z: '26' });

    await create(deploys, DEPLOYMENT('mp-list'));
    const d = ok(await patch(`${deploys}/mp-list`, MERGE, { spec: { template: { spec: { containers: [{ name: 'only', image: 'x:1' }] } } } }), 200, 'merge list');
    assert.deepEqual(
      d.spec.template.spec.containers.map((x: any) => [x.name, x.image]),
      [['only', 'x:1']],
    );
  });

  test('malformed merge patches: 400 and nothing changes', async () => {
    await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mp-bad' }, data: { a: '1' } });
    const before = await get(`${cms}/mp-bad`);
    for (const [body, message] of [
      ['{bad', 'error decoding patch: invalid character \'b\' looking for beginning of object key string'],
      ['[1,2]', 'error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}'],
    ]) {
      const s = expectStatus(await patch(`${cms}/mp-bad`, MERGE, body), 400, 'BadRequest', body);
      assert.equal(s.message, message);
    }
    await unchanged(`${cms}/mp-bad`, before, 'malformed merge');
  });

  test('a merge patch that makes the object invalid: 422 with the kind\'s causes, nothing changes', async () => {
    await create(deploys, DEPLOYMENT('mp-invalid'));
    const before = await get(`${deploys}/mp-invalid`);
    const s = expectStatus(await patch(`${deploys}/mp-invalid`, MERGE, { spec: { replicas: -2 } }), 422, 'Invalid', 'negative replicas');
    assert.equal(s.message, 'Deployment.apps "mp-invalid" is invalid: spec.replicas: Invalid value: -2: must be greater than or equal to 0');
    assert.deepEqual(s.details, { name: 'mp-invalid', group: 'apps', kind: 'Deployment', causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: -2: must be greater than or equal to 0', field: 'spec.replicas' }] });
    const t = expectStatus(await patch(`${deploys}/mp-invalid`, MERGE, { spec: { replicas: 'three' } }), 422, 'Invalid', 'replicas of the wrong type');
    assert.match(t.message, /^ "" is invalid: patch: Invalid value: ".*": json: cannot unmarshal string into Go struct field DeploymentSpec\.spec\.replicas of type int32$/s);
    await unchanged(`${deploys}/mp-invalid`, before, 'invalid merge');
    // a strategic merge patch names the patch itself, as Go prints its map (kubectl edit shows it)
    const sm = expectStatus(
      await patch(`${deploys}/mp-invalid`, 'application/strategic-merge-patch+json', { spec: { replicas: 'x', template: { metadata: { labels: { b: '1', a: 2.5 } } } } }),
      422,
      'Invalid',
      'strategic, replicas of the wrong type',
    );
    // (its result reaches the Go type through the unstructured converter, in the converter's words)
    assert.equal(sm.message, ' "" is invalid: patch: Invalid value: "map[spec:map[replicas:x template:map[metadata:map[labels:map[a:2.5 b:1]]]]]": unrecognized type: int32');
    for (const [body, msg] of [
      [{ spec: { replicas: 2.5 } }, 'cannot convert float64 to int32'],
      [{ spec: { paused: 'yes' } }, 'unrecognized type: bool'],
      [{ spec: { template: { spec: { serviceAccountName: 7 } } } }, 'cannot convert int64 to string'],
      [{ spec: { template: { spec: { hostname: 1.5 } } } }, 'unrecognized type: string'],
      [{ spec: { selector: 'app' } }, 'cannot restore struct from: string'],
      [{ spec: { template: { spec: { containers: { name: 'c' } } } } }, 'cannot restore slice from map'],
      [{ spec: { template: { metadata: { labels: ['a'] } } } }, 'cannot restore map from slice'],
    ] as const) {
      const e = expectStatus(await patch(`${deploys}/mp-invalid`, SMP, body), 422, 'Invalid', JSON.stringify(body));
      assert.ok(e.message.endsWith(`]": ${msg}`), e.message);
    }
    await unchanged(`${deploys}/mp-invalid`, before, 'invalid strategic merge');
    // a whole float64 converts
    const whole = await patch(`${deploys}/mp-invalid`, SMP, '{"spec":{"revisionHistoryLimit":3.0}}');
    assert.equal(whole.status, 200, whole.text);
    assert.equal(JSON.parse(whole.text).spec.revisionHistoryLimit, 3);
  });

  test('an integer written 3.0 or 2e0: merge and JSON patches keep the literal and are refused, as Kubernetes applies them to JSON text; a strategic merge patch takes it', async () => {
    await create(deploys, DEPLOYMENT('mp-literal'));
    const before = await get(`${deploys}/mp-literal`);
    const refused = (s: any, lit: string) => {
      // (the Invalid value is the patched JSON, Go-quoted, with the literal as it was sent)
      assert.ok(s.message.startsWith(' "" is invalid: patch: Invalid value: "{'), s.message);
      assert.ok(s.message.includes(`\\"replicas\\":${lit},`) || s.message.includes(`\\"replicas\\":${lit}}`), s.message);
      assert.ok(s.message.endsWith(`}": json: cannot unmarshal number ${lit} into Go struct field DeploymentSpec.spec.replicas of type int32`), s.message);
      assert.equal(s.details.causes[0].field, 'patch');
    };
    refused(expectStatus(await patch(`${deploys}/mp-literal`, MERGE, '{"metadata":{"annotations":{"n":"1.0"}},"spec":{"replicas":3.0}}'), 422, 'Invalid', 'merge 3.0'), '3.0');
    refused(expectStatus(await patch(`${deploys}/mp-literal`, JSONP, '[{"op":"replace","path":"/spec/replicas","value":2e0}]'), 422, 'Invalid', 'json patch 2e0'), '2e0');
    const port = expectStatus(
      await patch(`${deploys}/mp-literal`, JSONP, '[{"op":"add","path":"/spec/template/spec/containers/0/ports","value":[{"containerPort":8.0e1}]}]'),
      422,
      'Invalid',
      'a port 8.0e1 in an added list',
    );
    assert.match(port.message, /json: cannot unmarshal number 8\.0e1 into Go struct field ContainerPort\.spec\.template\.spec\.containers\.ports\.containerPort of type int32$/);
    // kubectl sends a merge patch as it was given
    const k = c.kubectl(['patch', 'deployment', 'mp-literal', '--type', 'merge', '-p', '{"spec":{"replicas":3.0}}']);
    assert.notEqual(k.code, 0);
    assert.match(k.stderr, /json: cannot unmarshal number 3\.0 into Go struct field DeploymentSpec\.spec\.replicas of type int32/);
    await unchanged(`${deploys}/mp-literal`, before, 'fractional literals');
    // a merge patch's member written twice: the last one counts, as Kubernetes decodes the patch into a map
    const dup = await patch(`${deploys}/mp-literal`, MERGE, '{"spec":{"replicas":3.0,"replicas":2}}');
    assert.equal(dup.status, 200, dup.text);
    assert.equal(dup.json().spec.replicas, 2);
    refused(expectStatus(await patch(`${deploys}/mp-literal`, MERGE, '{"spec":{"replicas":2,"replicas":3.0}}'), 422, 'Invalid', 'merge 2 then 3.0'), '3.0');
    // a literal that a later op replaces, removes or moves away is not in the result
    const ok1 = await patch(`${deploys}/mp-literal`, JSONP, '[{"op":"replace","path":"/spec/replicas","value":2e0},{"op":"replace","path":"/spec/replicas","value":2}]');
    assert.equal(ok1.status, 200, ok1.text);
    const ok2 = await patch(
      `${deploys}/mp-literal`,
      JSONP,
      '[{"op":"add","path":"/spec/template/spec/containers/0/ports","value":[{"containerPort":8.0e1}]},{"op":"remove","path":"/spec/template/spec/containers/0/ports/0"},{"op":"add","path":"/spec/template/spec/containers/0/ports/-","value":{"containerPort":81}}]',
    );
    assert.equal(ok2.status, 200, ok2.text);
    assert.equal(JSON.parse(ok2.text).spec.template.spec.containers[0].ports[0].containerPort, 81);
    // numbers inside strings are no literals; a strategic merge patch decodes 4.0 as Go's float64 4 and takes it
    const ok3 = await patch(`${deploys}/mp-literal`, MERGE, '{"metadata":{"annotations":{"n":"3.0"}},"spec":{"replicas":3}}');
    assert.equal(ok3.status, 200, ok3.text);
    const ok4 = await patch(`${deploys}/mp-literal`, SMP, '{"spec":{"replicas":4.0}}');
    assert.equal(ok4.status, 200, ok4.text);
    assert.equal(JSON.parse(ok4.text).spec.replicas, 4);
  });
});

describe('strategic merge patch', () => {
  const containers = (d: any) => d.spec.template.spec.containers;
  const spec = (s: any) => ({ spec: { template: { spec: s } } });

  test('containers merge by name: change one, add one, delete one with $patch: delete', async () => {
    await create(deploys, DEPLOYMENT('smp-c'));
    let d = ok(await patch(`${deploys}/smp-c`, SMP, spec({ containers: [{ name: 'b', image: 'busybox:2' }] })), 200, 'change b');
    assert.deepEqual(
      containers(d).map((x: any) => [x.name, x.image]),
      [
        ['a', 'nginx:1'],
        ['b', 'busybox:2'],
      ],
    );
    assert.deepEqual(containers(d)[1].command, ['sleep', '3600'], 'fields not in the patch stay');
    d = ok(await patch(`${deploys}/smp-c`, SMP, spec({ containers: [{ name: 'c', image: 'redis:7' }] })), 200, 'add c');
    // an element the live list does not have goes before the live ones (normalizeElementOrder)
    assert.deepEqual(
      containers(d).map((x: any) => x.name),
      ['c', 'a', 'b'],
    );
    assert.equal(containers(d)[0].imagePullPolicy, 'IfNotPresent', 'the new container is defaulted');
    d = ok(await patch(`${deploys}/smp-c`, SMP, spec({ containers: [{ name: 'c', $patch: 'delete' }] })), 200, 'delete c');
    assert.deepEqual(
      containers(d).map((x: any) => x.name),
      ['a', 'b'],
    );
    // env merges by name, ports by containerPort
    d = ok(
      await patch(`${deploys}/smp-c`, SMP, spec({ containers: [{ name: 'a', env: [{ name: 'Y', value: '22' }, { name: 'Z', value: '3' }], ports: [{ containerPort: 443 }] }] })),
      200,
      'env and ports',
    );
    assert.deepEqual(
      containers(d)[0].env,
      [
        { name: 'X', value: '1' },
        { name: 'Y', value: '22' },
        { name: 'Z', value: '3' },
      ],
    );
    assert.deepEqual(
      containers(d)[0].ports.map((p: any) => p.containerPort),
      [443, 80],
    );
    // a list without a merge key (command) is replaced
    d = ok(await patch(`${deploys}/smp-c`, SMP, spec({ containers: [{ name: 'b', command: ['true'] }] })), 200, 'command');
    assert.deepEqual(containers(d)[1].command, ['true']);
    // $patch: replace on a list replaces it whole
    d = ok(await patch(`${deploys}/smp-c`, SMP, spec({ containers: [{ name: 'solo', image: 'x:1' }, { $patch: 'replace' }] })), 200, 'replace list');
    assert.deepEqual(
      containers(d).map((x: any) => x.name),
      ['solo'],
    );
  });

  test('$setElementOrder orders the merged list', async () => {
    await create(deploys, DEPLOYMENT('smp-order'));
    const d = ok(
      await patch(`${deploys}/smp-order`, SMP, spec({ '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }], containers: [{ name: 'a', image: 'nginx:2' }] })),
      200,
      'setElementOrder',
    );
    assert.deepEqual(
      containers(d).map((x: any) => [x.name, x.image]),
      [
        ['b', 'busybox:1'],
        ['a', 'nginx:2'],
      ],
    );
  });

  test('$retainKeys clears the fields of a union it does not name', async () => {
    await create(deploys, { ...DEPLOYMENT('smp-retain'), spec: { ...DEPLOYMENT('smp-retain').spec, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 2 } } } });
    const before = await get(`${deploys}/smp-retain`);
    // without $retainKeys, rollingUpdate stays and the object is invalid
    const s = expectStatus(await patch(`${deploys}/smp-retain`, SMP, { spec: { strategy: { type: 'Recreate' } } }), 422, 'Invalid', 'Recreate with rollingUpdate');
    assert.equal(s.message, "Deployment.apps \"smp-retain\" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'");
    await unchanged(`${deploys}/smp-retain`, before, 'invalid strategy');
    const d = ok(await patch(`${deploys}/smp-retain`, SMP, { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } }), 200, 'retainKeys');
    assert.deepEqual(d.spec.strategy, { type: 'Recreate' });
  });

  test('$deleteFromPrimitiveList and merging of a primitive list (finalizers)', async () => {
    await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'smp-fin', finalizers: ['example.com/a', 'example.com/b'] } });
    let cm = ok(await patch(`${cms}/smp-fin`, SMP, { metadata: { finalizers: ['example.com/c'] } }), 200, 'merge finalizers');
    assert.deepEqual(cm.metadata.finalizers, ['example.com/c', 'example.com/a', 'example.com/b']);
    cm = ok(await patch(`${cms}/smp-fin`, SMP, { metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/a', 'example.com/c'] } }), 200, 'deleteFromPrimitiveList');
    assert.deepEqual(cm.metadata.finalizers, ['example.com/b']);
    // a merge patch of the same list replaces it
    cm = ok(await patch(`${cms}/smp-fin`, MERGE, { metadata: { finalizers: null } }), 200, 'clear finalizers');
    assert.equal(cm.metadata.finalizers, undefined);
  });

  test('$patch: replace and $patch: delete on maps; null removes a key', async () => {
    await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'smp-map', annotations: { a: '1', b: '2' } }, data: { a: '1', b: '2' } });
    let cm = ok(await patch(`${cms}/smp-map`, SMP, { metadata: { annotations: { $patch: 'replace', only: 'this' } }, data: { b: null } }), 200, 'replace map');
    assert.deepEqual(cm.metadata.annotations, { only: 'this' });
    assert.deepEqual(cm.data, { a: '1' });
    cm = ok(await patch(`${cms}/smp-map`, SMP, { data: { $patch: 'delete' } }), 200, 'delete map');
    assert.equal(cm.data, undefined);
  });

  test('lists of kinds without merge keys are replaced (Role rules)', async () => {
    const roles = `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`;
    await create(roles, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'smp-role' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] });
    const r = ok(await patch(`${roles}/smp-role`, SMP, { rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }] }), 200, 'rules');
    assert.deepEqual(r.rules, [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }]);
  });

  // Kubernetes answers the failures of its strategic merge code that it does not classify with
  // 500 (a plain Go error); they are the patch's fault, and Keelson answers 400 BadRequest with
  // the library's words (src/patch/errors.ts, asRequestError)
  test('an element without its merge key: 400 with the library\'s message, nothing changes', async () => {
    await create(deploys, DEPLOYMENT('smp-nokey'));
    const before = await get(`${deploys}/smp-nokey`);
    const s = expectStatus(await patch(`${deploys}/smp-nokey`, SMP, spec({ containers: [{ image: 'busybox:9' }] })), 400, 'BadRequest', 'missing merge key');
    assert.equal(s.message, 'map: map[image:busybox:9] does not contain declared merge key: name');
    await unchanged(`${deploys}/smp-nokey`, before, 'missing merge key');
  });

  test('patches Kubernetes\' own code fails on (500, or a panic, there): 400 with words a person can act on, nothing changes', async () => {
    await create(deploys, DEPLOYMENT('smp-types'));
    const before = await get(`${deploys}/smp-types`);
    // a list of containers holding a string: the list's elements are not all of one type
    const t = expectStatus(await patch(`${deploys}/smp-types`, SMP, spec({ containers: ['*'] })), 400, 'BadRequest', 'mixed list');
    assert.match(t.message, /^list element types are not identical: \[\[map\[.*name:a .*\]\] \[\*\]\]$/);
    // a list of scalars holding an object where it is compared (Go panics comparing maps)
    await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'smp-scalars', finalizers: ['example.com/keep'] } });
    const beforeCM = await get(`${cms}/smp-scalars`);
    const orderOfMaps = { metadata: { finalizers: [{ a: 1 }], '$setElementOrder/finalizers': [{ a: 1 }] } };
    const f = expectStatus(await patch(`${cms}/smp-scalars`, SMP, orderOfMaps), 400, 'BadRequest', 'objects in finalizers');
    assert.equal(f.message, 'the patch cannot be applied: a list of scalars (in the patch or the object) holds objects or lists where they are compared (map[string]interface {})');
    await unchanged(`${cms}/smp-scalars`, beforeCM, 'objects in finalizers');
    // a JSON patch replacing the whole document without a value (Go: a nil pointer)
    const j = expectStatus(await patch(`${deploys}/smp-types`, JSONP, [{ op: 'replace', path: '' }]), 400, 'BadRequest', 'replace root');
    assert.equal(j.message, 'the patch cannot be applied: the replace operation of the whole document (path "") has no value');
    await unchanged(`${deploys}/smp-types`, before, 'patches the code fails on');
    // what kubectl prints of it
    const k = c.kubectl(['patch', 'deployment', 'smp-types', '-p', '{"spec":{"template":{"spec":{"containers":["*"]}}}}']);
    assert.notEqual(k.code, 0);
    assert.match(k.stderr, /^Error from server \(BadRequest\): list element types are not identical/m);
  });

  test('malformed strategic patches: 400, nothing changes', async () => {
    await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'smp-bad' }, data: { a: '1' } });
    const before = await get(`${cms}/smp-bad`);
    const cases: [string, number, string, string][] = [
      ['{bad', 400, 'BadRequest', "invalid character 'b' looking for beginning of object key string"],
      ['[1]', 400, 'BadRequest', 'json: cannot unmarshal array into Go value of type map[string]interface {}'],
      ['{"data":{"$retainKeys":"a"}}', 400, 'BadRequest', 'invalid patch format of retainKeys'],
      ['{"data":{"$retainKeys":["a"],"b":"2"}}', 400, 'BadRequest', 'invalid patch format of retainKeys'],
    ];
    for (const [body, code, reason, message] of cases) {
      const s = expectStatus(await patch(`${cms}/smp-bad`, SMP, body), code, reason, body);
      assert.equal(s.message, message, body);
    }
    // an unknown $patch directive: Kubernetes answers its library's plain error with 500, Keelson
    // with 400 and the same text (wording checked against apimachinery's strategicpatch on the same input)
    const u = expectStatus(await patch(`${cms}/smp-bad`, SMP, '{"data":{"$patch":"frobnicate"}}'), 400, 'BadRequest', '$patch: frobnicate');
    assert.equal(u.message, 'unknown patch type: frobnicate in map: map[$patch:frobnicate]');
    await unchanged(`${cms}/smp-bad`, before, 'malformed smp');
  });

  test('on the status subresource: conditions merge by type, spec is ignored', async () => {
    await create(deploys, DEPLOYMENT('smp-status'));
    ok(await patch(`${deploys}/smp-status/status`, SMP, { status: { conditions: [{ type: 'Available', status: 'True', reason: 'A' }] } }), 200, 'first condition');
    const d = ok(await patch(`${deploys}/smp-status/status`, SMP, { spec: { replicas: 7 }, status: { conditions: [{ type: 'Progressing', status: 'True', reason: 'P' }] } }), 200, 'second condition');
    assert.deepEqual(
      d.status.conditions.map((x: any) => [x.type, x.status, x.reason]),
      [
        ['Progressing', 'True', 'P'],
        ['Available', 'True', 'A'],
      ],
    );
    assert.equal(d.spec.replicas, 1);
    const m = ok(await patch(`${deploys}/smp-status/status`, SMP, { status: { conditions: [{ type: 'Available', status: 'False', reason: 'B' }] } }), 200, 'change a condition');
    assert.deepEqual(
      m.status.conditions.map((x: any) => [x.type, x.status, x.reason]),
      [
        ['Progressing', 'True', 'P'],
        ['Available', 'False', 'B'],
      ],
    );
  });
});

describe('patch errors that are not about the body', () => {
  test('an unsupported patch Content-Type: 415', async () => {
    await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pt-415' } });
    const s = expectStatus(await patch(`${cms}/pt-415`, 'application/json', '{}'), 415, 'UnsupportedMediaType', 'json');
    assert.equal(
      s.message,
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml',
    );
  });

  test('a patch of an absent object: 404 for every patch type but apply', async () => {
    for (const [type, body] of [
      [JSONP, '[{"op":"add","path":"/data","value":{}}]'],
      [MERGE, '{"data":{"a":"1"}}'],
      [SMP, '{"data":{"a":"1"}}'],
    ]) {
      const s = expectStatus(await patch(`${cms}/pt-absent`, type, body), 404, 'NotFound', type);
      assert.equal(s.message, 'configmaps "pt-absent" not found');
    }
  });

  // Found by a randomized concurrent-writes probe: a patch without a resourceVersion answered 409
  // whenever another write landed between its read and its commit (the copy it patched carried the
  // stored resourceVersion, taken for the client's precondition); and an apply racing a create or
  // a delete of its object answered 409 AlreadyExists or 404. Kubernetes makes such a write again
  // from the new state.
  test('concurrent patches without a resourceVersion all apply, none is lost; applies racing creates and deletes never 404 or 409', async () => {
    await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pt-race' }, data: { seed: '0' } });
    const types: [string, (i: number) => unknown][] = [
      [MERGE, (i) => ({ data: { [`m${i}`]: String(i) } })],
      [SMP, (i) => ({ data: { [`s${i}`]: String(i) } })],
      [JSONP, (i) => [{ op: 'add', path: `/data/j${i}`, value: String(i) }]],
    ];
    const sends: Promise<RawResponse>[] = [];
    for (let i = 0; i < 24; i++) {
      const [type, body] = types[i % 3]!;
      sends.push(patch(`${cms}/pt-race`, type, body(i)));
    }
    const answers = await Promise.all(sends);
    answers.forEach((r, i) => assert.equal(r.status, 200, `patch ${i}: ${r.status} ${r.text.slice(0, 300)}`));
    const data = (await get(`${cms}/pt-race`)).data;
    for (let i = 0; i < 24; i++) assert.equal(data[`${'msj'[i % 3]}${i}`], String(i), `patch ${i} is in the object`);

    // applies by several managers while the object is deleted and created again
    const APPLY = 'application/apply-patch+yaml';
    const applyAs = (m: number, round: number) =>
      c.raw('PATCH', `${cms}/pt-flux?fieldManager=mgr-${m}`, { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pt-flux' }, data: { [`k${m}`]: String(round) } }), headers: { 'content-type': APPLY } });
    for (let round = 0; round < 6; round++) {
      const work: Promise<RawResponse>[] = [];
      for (let m = 0; m < 5; m++) work.push(applyAs(m, round));
      work.push(c.raw('DELETE', `${cms}/pt-flux`));
      work.push(c.raw('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pt-flux' } } }));
      const rs = await Promise.all(work);
      rs.slice(0, 5).forEach((r, m) => assert.ok(r.status === 200 || r.status === 201, `round ${round}, apply by mgr-${m}: ${r.status} ${r.text.slice(0, 300)}`));
    }
  });

  test('a patch carrying a stale resourceVersion: 409', async () => {
    const made = await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pt-rv' }, data: { a: '1' } });
    ok(await patch(`${cms}/pt-rv`, MERGE, { data: { a: '2' } }), 200, 'first');
    const s = expectStatus(await patch(`${cms}/pt-rv`, MERGE, { metadata: { resourceVersion: made.metadata.resourceVersion }, data: { a: '3' } }), 409, 'Conflict', 'stale rv');
    assert.equal(s.message, 'Operation cannot be fulfilled on configmaps "pt-rv": the object has been modified; please apply your changes to the latest version and try again');
    assert.deepEqual((await get(`${cms}/pt-rv`)).data, { a: '2' });
  });

  test('a patch may not change the name or the uid', async () => {
    const made = await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pt-name' }, data: { a: '1' } });
    const before = await get(`${cms}/pt-name`);
    const n = expectStatus(await patch(`${cms}/pt-name`, MERGE, { metadata: { name: 'other' } }), 400, 'BadRequest', 'rename');
    assert.equal(n.message, 'the name of the object (other) does not match the name on the URL (pt-name)');
    const u = expectStatus(await patch(`${cms}/pt-name`, MERGE, { metadata: { uid: '00000000-0000-0000-0000-000000000000' } }), 422, 'Invalid', 'uid');
    assert.equal(u.message, 'ConfigMap "pt-name" is invalid: metadata.uid: Invalid value: "00000000-0000-0000-0000-000000000000": field is immutable');
    assert.ok(made.metadata.uid);
    await unchanged(`${cms}/pt-name`, before, 'rename');
  });

  test('a JSON or merge patch that changes apiVersion or kind is 422 on "patch", as Kubernetes decodes the result into the endpoint\'s type; removing them, or a strategic merge patch, keeps the type', async () => {
    await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pt-type' }, data: { a: '1' } });
    const before = await get(`${cms}/pt-type`);
    const scheme = '"k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"';
    const refused: [string, unknown, string][] = [
      [MERGE, { apiVersion: 'v2' }, `no kind "ConfigMap" is registered for version "v2" in scheme ${scheme}`],
      [MERGE, { apiVersion: 'apps/v1' }, `no kind "ConfigMap" is registered for version "apps/v1" in scheme ${scheme}`],
      [MERGE, { kind: 'Foo' }, `no kind "Foo" is registered for version "v1" in scheme ${scheme}`],
      [JSONP, [{ op: 'replace', path: '/kind', value: 'Secret' }], 'converting (v1.Secret) to (core.ConfigMap): unknown conversion'],
      [JSONP, [{ op: 'replace', path: '/apiVersion', value: 7 }], "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .apiVersion of type string"],
      [JSONP, [{ op: 'remove', path: '/apiVersion' }, { op: 'replace', path: '/kind', value: 'Nope' }], `no kind "Nope" is registered for the internal version of group "" in scheme ${scheme}`],
    ];
    for (const [type, body, why] of refused) {
      const s = expectStatus(await patch(`${cms}/pt-type`, type, body), 422, 'Invalid', JSON.stringify(body));
      assert.match(s.message, /^ "" is invalid: patch: Invalid value: "\{/, JSON.stringify(body));
      assert.ok(s.message.endsWith(`": ${why}`), `${JSON.stringify(body)}: ${s.message}`);
      assert.equal(s.details.causes[0].field, 'patch');
    }
    await unchanged(`${cms}/pt-type`, before, 'type meta refused');
    // Kubernetes decodes these into the endpoint's type: the object keeps its apiVersion and kind
    const kept: [string, unknown][] = [
      [MERGE, { apiVersion: null, data: { a: '2' } }],
      [JSONP, [{ op: 'remove', path: '/kind' }]],
      [MERGE, { apiVersion: '' }],
      [SMP, { kind: 'Secret', data: { a: '3' } }],
    ];
    for (const [type, body] of kept) {
      const out = ok(await patch(`${cms}/pt-type`, type, body), 200, JSON.stringify(body));
      assert.equal(out.kind, 'ConfigMap', JSON.stringify(body));
      assert.equal(out.apiVersion, 'v1', JSON.stringify(body));
      const now = await get(`${cms}/pt-type`);
      assert.equal(now.kind, 'ConfigMap');
      assert.equal(now.apiVersion, 'v1');
    }
    assert.deepEqual((await get(`${cms}/pt-type`)).data, { a: '3' });
  });
});

describe('writes to /status', () => {
  test('change the status and the metadata, not the spec: labels, annotations and finalizers sent are written (a Deployment keeps its labels); a custom resource keeps its status only', async () => {
    await create(`/api/v1/namespaces/${NS}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'st-svc' }, spec: { selector: { a: 'b' }, ports: [{ port: 80 }] } });
    const svc = ok(
      await patch(`/api/v1/namespaces/${NS}/services/st-svc/status`, MERGE, {
        metadata: { labels: { via: 'status' }, annotations: { via: 'status' } },
        spec: { type: 'NodePort' },
        status: { conditions: [{ type: 'X', status: 'True', reason: 'R', message: 'm', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
      }),
      200,
      'service status',
    );
    assert.deepEqual(svc.metadata.labels, { via: 'status' });
    assert.deepEqual(svc.metadata.annotations, { via: 'status' });
    assert.equal(svc.spec.type, 'ClusterIP', 'the spec is not the status writer\'s');
    assert.equal(svc.status.conditions[0].type, 'X');
    const owner = svc.metadata.managedFields.find((m: any) => m.subresource === 'status');
    assert.deepEqual(Object.keys(owner.fieldsV1).sort(), ['f:metadata', 'f:status'], 'the status writer owns no spec field');

    // PUT of the whole object read, with a finalizer added
    const read = await get(`/api/v1/namespaces/${NS}/services/st-svc`);
    read.metadata.finalizers = ['example.com/keep'];
    read.spec.sessionAffinity = 'ClientIP';
    const put = ok(await c.raw('PUT', `/api/v1/namespaces/${NS}/services/st-svc/status`, { body: read }), 200, 'PUT status');
    assert.deepEqual(put.metadata.finalizers, ['example.com/keep']);
    assert.equal(put.spec.sessionAffinity, 'None');
    ok(await patch(`/api/v1/namespaces/${NS}/services/st-svc`, MERGE, { metadata: { finalizers: null } }), 200, 'finalizer off');

    await create(deploys, DEPLOYMENT('st-deploy'));
    const applied = ok(
      await c.raw('PATCH', `${deploys}/st-deploy/status?fieldManager=st`, {
        headers: { 'content-type': 'application/apply-patch+yaml' },
        body: JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'st-deploy', labels: { z: '1' }, annotations: { an: '1' } }, spec: { replicas: 7 }, status: { observedGeneration: 9, replicas: 3 } }),
      }),
      200,
      'apply to deployments/status',
    );
    assert.deepEqual(applied.metadata.labels, { app: 'st-deploy' }, 'deployments/status resets the labels');
    assert.deepEqual(applied.metadata.annotations, { an: '1' });
    assert.equal(applied.spec.replicas, 1);
    const st = applied.metadata.managedFields.find((m: any) => m.manager === 'st');
    assert.deepEqual(st.fieldsV1, { 'f:metadata': { 'f:annotations': { 'f:an': {} } }, 'f:status': { 'f:observedGeneration': {}, 'f:replicas': {} } }, 'no ownership of what was reset');
  });
});
