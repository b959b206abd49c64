// Strategic merge patch on real kinds, driven by Keelson's schema (Kubernetes' patchStrategy and
// patchMergeKey struct tags). Expected results follow Kubernetes' algorithm (strategicpatch), whose
// own tables run in strategic-k8s.test.ts; here: the kinds and directives clients really use.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  APPLY_PRECONDITIONS,
  applyStrategicMergePatch,
  createThreeWayMergePatch,
  createTwoWayMergePatch,
  mergeKeyOf,
  mergeStrategicMergePatches,
  patchMetaOf,
  patchStrategyOf,
} from '../../src/patch/strategic.js';
import { GENERIC_422_MESSAGE, PatchError, isConflict, isPreconditionFailed } from '../../src/patch/errors.js';

const POD = 'io.k8s.api.core.v1.Pod';
const SERVICE = 'io.k8s.api.core.v1.Service';
const DEPLOYMENT = 'io.k8s.api.apps.v1.Deployment';
const PDB = 'io.k8s.api.policy.v1.PodDisruptionBudget';
const REVISION = 'io.k8s.api.apps.v1.ControllerRevision';

type Obj = Record<string, any>;

function pod(): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web',
      namespace: 'default',
      labels: { app: 'web', tier: 'frontend' },
      annotations: { 'example.com/a': '1' },
      finalizers: ['example.com/a', 'example.com/b'],
    },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'nginx:1',
          ports: [
            { containerPort: 80, protocol: 'TCP' },
            { containerPort: 443, protocol: 'TCP' },
          ],
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
        { name: 'sidecar', image: 'busybox', command: ['sleep', '3600'] },
      ],
      volumes: [
        { name: 'data', emptyDir: {} },
        { name: 'cfg', configMap: { name: 'cfg' } },
      ],
      tolerations: [
        { key: 'k1', operator: 'Exists', effect: 'NoSchedule' },
        { key: 'k2', operator: 'Exists' },
      ],
      nodeSelector: { disk: 'ssd' },
    },
  };
}

const smp = (doc: Obj, patch: unknown, type = POD) => applyStrategicMergePatch(doc, patch, type) as Obj;
const names = (list: Obj[]) => list.map((x) => x.name);

function fails(doc: Obj, patch: unknown, code: number, message: string, type = POD): PatchError {
  let err: PatchError | undefined;
  assert.throws(
    () => applyStrategicMergePatch(doc, patch, type),
    (e: unknown) => {
      assert.ok(e instanceof PatchError, String(e));
      assert.equal(e.code, code);
      assert.equal(e.message, message);
      err = e;
      return true;
    },
  );
  return err!;
}

// ---- merging lists by key ----

test('containers merge by name: a changed field, the rest kept', () => {
  const out = smp(pod(), { spec: { containers: [{ name: 'app', image: 'nginx:2' }] } });
  assert.deepEqual(names(out.spec.containers), ['app', 'sidecar']);
  assert.equal(out.spec.containers[0].image, 'nginx:2');
  assert.deepEqual(out.spec.containers[0].ports, pod().spec.containers[0].ports);
  assert.deepEqual(out.spec.containers[1], pod().spec.containers[1]);
});

test('a new container goes before the ones the patch does not mention (no $setElementOrder)', () => {
  const out = smp(pod(), { spec: { containers: [{ name: 'logger', image: 'fluentd' }] } });
  assert.deepEqual(names(out.spec.containers), ['logger', 'app', 'sidecar']);
  const out2 = smp(pod(), { spec: { containers: [{ name: 'sidecar', image: 'b2' }, { name: 'logger', image: 'fluentd' }] } });
  assert.deepEqual(names(out2.spec.containers), ['app', 'sidecar', 'logger']);
});

test('$patch: delete removes a container; deleting a missing one is no error', () => {
  const out = smp(pod(), { spec: { containers: [{ name: 'sidecar', $patch: 'delete' }] } });
  assert.deepEqual(names(out.spec.containers), ['app']);
  const same = smp(pod(), { spec: { containers: [{ name: 'nope', $patch: 'delete' }] } });
  assert.deepEqual(same.spec.containers, pod().spec.containers);
});

test('$patch: replace in a list replaces the whole list with the other elements', () => {
  const out = smp(pod(), { spec: { containers: [{ $patch: 'replace' }, { name: 'only', image: 'x' }] } });
  assert.deepEqual(out.spec.containers, [{ name: 'only', image: 'x' }]);
  const empty = smp(pod(), { spec: { volumes: [{ $patch: 'replace' }] } });
  assert.deepEqual(empty.spec.volumes, []);
});

test('container ports merge by containerPort', () => {
  const out = smp(pod(), { spec: { containers: [{ name: 'app', ports: [{ containerPort: 443, name: 'https' }, { containerPort: 8080 }] }] } });
  assert.deepEqual(out.spec.containers[0].ports, [
    { containerPort: 80, protocol: 'TCP' },
    { containerPort: 443, protocol: 'TCP', name: 'https' },
    { containerPort: 8080 },
  ]);
  const del = smp(pod(), { spec: { containers: [{ name: 'app', ports: [{ containerPort: 80, $patch: 'delete' }] }] } });
  assert.deepEqual(del.spec.containers[0].ports, [{ containerPort: 443, protocol: 'TCP' }]);
});

test('env merges by name; null inside an element deletes that field', () => {
  const out = smp(pod(), { spec: { containers: [{ name: 'app', env: [{ name: 'B', value: '3' }, { name: 'C', value: '4' }] }] } });
  assert.deepEqual(out.spec.containers[0].env, [
    { name: 'A', value: '1' },
    { name: 'B', value: '3' },
    { name: 'C', value: '4' },
  ]);
  const vf = smp(pod(), { spec: { containers: [{ name: 'app', env: [{ name: 'A', value: null, valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] }] } });
  assert.deepEqual(vf.spec.containers[0].env[0], { name: 'A', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });
});

test('volumes merge by name, and $retainKeys (merge,retainKeys) switches a volume source', () => {
  const naive = smp(pod(), { spec: { volumes: [{ name: 'data', hostPath: { path: '/mnt' } }] } });
  assert.deepEqual(naive.spec.volumes[0], { name: 'data', emptyDir: {}, hostPath: { path: '/mnt' } });
  const retained = smp(pod(), { spec: { volumes: [{ name: 'data', $retainKeys: ['hostPath', 'name'], hostPath: { path: '/mnt' } }] } });
  assert.deepEqual(retained.spec.volumes, [
    { name: 'data', hostPath: { path: '/mnt' } },
    { name: 'cfg', configMap: { name: 'cfg' } },
  ]);
  // a patched field missing from $retainKeys is a bad patch
  fails(pod(), { spec: { volumes: [{ name: 'data', $retainKeys: ['name'], hostPath: { path: '/mnt' } }] } }, 400, 'invalid patch format of retainKeys');
  fails(pod(), { spec: { volumes: [{ name: 'data', $retainKeys: 'name' }] } }, 400, 'invalid patch format of retainKeys');
});

test('tolerations are atomic (no patch strategy): replaced whole', () => {
  const out = smp(pod(), { spec: { tolerations: [{ key: 'k3', operator: 'Exists' }] } });
  assert.deepEqual(out.spec.tolerations, [{ key: 'k3', operator: 'Exists' }]);
  // command too
  const cmd = smp(pod(), { spec: { containers: [{ name: 'sidecar', command: ['sh'] }] } });
  assert.deepEqual(cmd.spec.containers[1].command, ['sh']);
});

test('a list without merge strategy keeps $patch elements verbatim (the decoder drops the unknown field later)', () => {
  const out = smp(pod(), { spec: { tolerations: [{ key: 'k1', $patch: 'delete' }] } });
  assert.deepEqual(out.spec.tolerations, [{ key: 'k1', $patch: 'delete' }]);
});

test('Service ports merge by port alone, as Kubernetes does (same port, other protocol: merged into the first)', () => {
  const svc = {
    spec: {
      ports: [
        { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
        { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
        { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: 9153 },
      ],
    },
  };
  const out = smp(svc, { spec: { ports: [{ port: 53, protocol: 'UDP', name: 'dns', targetPort: 5353 }] } }, SERVICE);
  assert.deepEqual(out.spec.ports, [
    { name: 'dns', port: 53, protocol: 'UDP', targetPort: 5353 },
    { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
    { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: 9153 },
  ]);
  const del = smp(svc, { spec: { ports: [{ port: 53, $patch: 'delete' }] } }, SERVICE);
  assert.deepEqual(del.spec.ports, [{ name: 'metrics', port: 9153, protocol: 'TCP', targetPort: 9153 }]);
  const add = smp(svc, { spec: { ports: [{ port: 8080, protocol: 'TCP', name: 'http' }] } }, SERVICE);
  assert.deepEqual(
    add.spec.ports.map((p: Obj) => p.name),
    ['http', 'dns-tcp', 'dns', 'metrics'],
  );
  // the selector is a plain map: merged
  const sel = smp({ spec: { selector: { app: 'a' } } }, { spec: { selector: { tier: 'b' } } }, SERVICE);
  assert.deepEqual(sel.spec.selector, { app: 'a', tier: 'b' });
});

// ---- maps ----

test('labels and annotations merge; null deletes a key', () => {
  const out = smp(pod(), { metadata: { labels: { tier: null, env: 'prod' }, annotations: { 'example.com/b': '2' } } });
  assert.deepEqual(out.metadata.labels, { app: 'web', env: 'prod' });
  assert.deepEqual(out.metadata.annotations, { 'example.com/a': '1', 'example.com/b': '2' });
  const gone = smp(pod(), { metadata: { annotations: null } });
  assert.equal('annotations' in gone.metadata, false);
  // deleting a missing key, or a missing map, is no error and adds nothing
  const same = smp(pod(), { metadata: { labels: { nope: null } }, spec: { affinity: null } });
  assert.deepEqual(same, pod());
});

test('$patch: replace and $patch: delete on maps', () => {
  const out = smp(pod(), { metadata: { labels: { $patch: 'replace', only: 'x' } } });
  assert.deepEqual(out.metadata.labels, { only: 'x' });
  const del = smp(pod(), { metadata: { labels: { $patch: 'delete' } } });
  assert.deepEqual(del.metadata.labels, {});
  // a $patch map for a field the object lacks is dropped entirely
  const none = smp(pod(), { spec: { securityContext: { $patch: 'replace', runAsUser: 1 } } });
  assert.equal('securityContext' in none.spec, false);
});

test('nodeSelector (mapType atomic, no patch strategy) still merges under strategic merge patch', () => {
  const out = smp(pod(), { spec: { nodeSelector: { zone: 'a' } } });
  assert.deepEqual(out.spec.nodeSelector, { disk: 'ssd', zone: 'a' });
});

test('patchStrategy replace on a map (PodDisruptionBudget selector) replaces it', () => {
  const pdb = { spec: { minAvailable: 1, selector: { matchLabels: { a: '1' }, matchExpressions: [{ key: 'x', operator: 'Exists' }] } } };
  const out = smp(pdb, { spec: { selector: { matchLabels: { b: '2' } } } }, PDB);
  assert.deepEqual(out.spec, { minAvailable: 1, selector: { matchLabels: { b: '2' } } });
});

test('$retainKeys on a Deployment strategy clears rollingUpdate', () => {
  const d = { spec: { replicas: 1, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } } } };
  const naive = smp(d, { spec: { strategy: { type: 'Recreate' } } }, DEPLOYMENT);
  assert.deepEqual(naive.spec.strategy, { type: 'Recreate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } });
  const out = smp(d, { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } }, DEPLOYMENT);
  assert.deepEqual(out.spec, { replicas: 1, strategy: { type: 'Recreate' } });
  const back = smp(out, { spec: { strategy: { $retainKeys: ['rollingUpdate', 'type'], type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } }, DEPLOYMENT);
  assert.deepEqual(back.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } });
  // a null for a field not listed is allowed (it deletes)
  const nul = smp(d, { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate', rollingUpdate: null } } }, DEPLOYMENT);
  assert.deepEqual(nul.spec.strategy, { type: 'Recreate' });
});

// ---- lists of scalars ----

test('finalizers (merge, no key) merge as a set: new values first, present ones in place', () => {
  assert.deepEqual(smp(pod(), { metadata: { finalizers: ['example.com/c'] } }).metadata.finalizers, ['example.com/c', 'example.com/a', 'example.com/b']);
  assert.deepEqual(smp(pod(), { metadata: { finalizers: ['example.com/b'] } }).metadata.finalizers, ['example.com/a', 'example.com/b']);
  assert.deepEqual(smp(pod(), { metadata: { finalizers: ['example.com/b', 'example.com/b', 'x'] } }).metadata.finalizers, [
    'example.com/a',
    'example.com/b',
    'x',
  ]);
  assert.deepEqual(smp({ metadata: {} }, { metadata: { finalizers: ['a'] } }).metadata.finalizers, ['a']);
});

test('$deleteFromPrimitiveList/finalizers removes values', () => {
  const out = smp(pod(), { metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/a', 'nope'] } });
  assert.deepEqual(out.metadata.finalizers, ['example.com/b']);
  const both = smp(pod(), { metadata: { finalizers: ['example.com/c'], '$deleteFromPrimitiveList/finalizers': ['example.com/a'] } });
  assert.deepEqual(both.metadata.finalizers, ['example.com/c', 'example.com/b']);
  // on a missing list: nothing is added
  const none = smp({ metadata: {} }, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } });
  assert.deepEqual(none, { metadata: {} });
  // it works on a list without merge strategy too (container args)
  const args = smp({ spec: { containers: [{ name: 'a', args: ['-v', '-x'] }] } }, { spec: { containers: [{ name: 'a', '$deleteFromPrimitiveList/args': ['-v'] }] } });
  assert.deepEqual(args.spec.containers[0].args, ['-x']);
  fails(pod(), { metadata: { $deleteFromPrimitiveListfinalizers: ['a'] } }, 400, 'invalid patch format of primitive list');
});

// ---- $setElementOrder ----

test('$setElementOrder reorders a merging list', () => {
  const out = smp(pod(), { spec: { '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'app' }] } });
  assert.deepEqual(names(out.spec.containers), ['sidecar', 'app']);
  assert.deepEqual(out.spec.containers[1], pod().spec.containers[0]);
  const fin = smp(pod(), { metadata: { '$setElementOrder/finalizers': ['example.com/b', 'example.com/a'] } });
  assert.deepEqual(fin.metadata.finalizers, ['example.com/b', 'example.com/a']);
});

test('$setElementOrder places a new element where the order says', () => {
  const out = smp(pod(), {
    spec: {
      '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'logger' }, { name: 'app' }],
      containers: [{ name: 'logger', image: 'fluentd' }],
    },
  });
  assert.deepEqual(names(out.spec.containers), ['sidecar', 'logger', 'app']);
});

test('$setElementOrder keeps server-only elements in their relative place', () => {
  const p = pod();
  p.spec.containers.push({ name: 'injected', image: 'proxy' });
  const out = smp(p, { spec: { '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'app' }] } });
  assert.deepEqual(names(out.spec.containers), ['sidecar', 'app', 'injected']);
  const p2 = pod();
  p2.spec.containers.unshift({ name: 'injected', image: 'proxy' });
  const out2 = smp(p2, { spec: { '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'app' }] } });
  assert.deepEqual(names(out2.spec.containers), ['injected', 'sidecar', 'app']);
});

test('$setElementOrder with a deletion and an addition (as kubectl apply sends them)', () => {
  const out = smp(pod(), {
    spec: {
      '$setElementOrder/containers': [{ name: 'logger' }, { name: 'app' }],
      containers: [{ name: 'logger', image: 'fluentd' }, { name: 'sidecar', $patch: 'delete' }],
    },
  });
  assert.deepEqual(names(out.spec.containers), ['logger', 'app']);
});

test('$setElementOrder that contradicts the patch list is an error', () => {
  fails(
    pod(),
    { spec: { '$setElementOrder/containers': [{ name: 'app' }], containers: [{ name: 'sidecar', image: 'y' }] } },
    500,
    "The order in patch list:\n[map[image:y name:sidecar]]\n doesn't match $setElementOrder list:\n[map[name:app]]\n",
  );
  fails(pod(), { spec: { $setElementOrdercontainers: [] } }, 400, 'invalid patch format of setElementOrder list');
  fails(pod(), { spec: { '$setElementOrder/containers': 'x' } }, 500, 'expected a []interface {}, but received a string');
  fails(pod(), { spec: { '$setElementOrder/nodeSelector': [] } }, 500, 'expected a []interface {}, but received a map[string]interface {}');
});

// ---- errors, worded and coded as the API server answers them ----

test('errors of the directives', () => {
  fails(pod(), { spec: { containers: [{ name: 'app', $patch: 'merge' }] } }, 500, 'merging lists cannot yet be specified in the patch');
  fails(pod(), { spec: { containers: [{ name: 'app', $patch: 'frob' }] } }, 500, 'unknown patch type: frob in map: map[$patch:frob name:app]');
  fails(pod(), { metadata: { labels: { $patch: 'merge' } } }, 500, 'unknown patch type: merge in map: map[$patch:merge]');
  fails(pod(), { spec: { containers: [{ $patch: 'delete' }] } }, 500, 'map: map[$patch:delete] does not contain declared merge key: name');
  fails(pod(), { spec: { containers: [{ image: 'x' }] } }, 500, 'map: map[image:x] does not contain declared merge key: name');
  fails({ spec: { containers: [{ name: 'b' }] } }, { spec: { containers: [{ name: 'a' }, 'x'] } }, 500, 'list element types are not identical: [[map[name:b]] [map[name:a] x]]');
  fails({ metadata: { finalizers: ['a'] } }, { metadata: { finalizers: [1] } }, 500, 'list element types are not identical: [[a] [1]]');
});

test('a list of lists is 422 with the generic message', () => {
  const err = fails({ metadata: { finalizers: [] } }, { metadata: { finalizers: [['x']] } }, 422, GENERIC_422_MESSAGE);
  assert.equal(err.detail, 'lists of lists are not supported');
  assert.equal(err.reason, 'Invalid');
});

test('a patch that is not an object is 400; null changes nothing', () => {
  fails(pod(), [1], 400, 'json: cannot unmarshal array into Go value of type map[string]interface {}');
  fails(pod(), 'x', 400, 'json: cannot unmarshal string into Go value of type map[string]interface {}');
  assert.deepEqual(smp(pod(), null), pod());
  assert.deepEqual(smp(pod(), {}), pod());
});

test('internal errors have no reason (Go errors reach the API server unwrapped)', () => {
  const err = fails({ spec: { bogus: { a: 1 } } }, { spec: { bogus: { a: 2 } } }, 500, 'unable to find api field in struct PodSpec for the json field "bogus"');
  assert.deepEqual(err.toStatus(), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'unable to find api field in struct PodSpec for the json field "bogus"',
    code: 500,
  });
  // looking into a map of strings as a struct
  fails({ metadata: { labels: { a: { x: 1 } } } }, { metadata: { labels: { a: { y: 1 } } } }, 500, 'merging an object in json but data type is not struct, instead is: map');
  // an unknown field whose value is a new map or scalar is simply set (the decoder prunes it later)
  assert.deepEqual(smp({ spec: {} }, { spec: { bogus: { a: 1 } } }).spec, { bogus: { a: 1 } });
});

test('JSON field names are matched exactly, then case-insensitively, as Go does', () => {
  const out = smp({ spec: { Containers: [{ name: 'a', image: 'x' }] } }, { spec: { Containers: [{ name: 'a', image: 'y' }] } });
  assert.deepEqual(out.spec.Containers, [{ name: 'a', image: 'y' }]);
});

test('values of another JSON type replace, with nulls and directives dropped', () => {
  const out = smp({ spec: { nodeSelector: 'x' } }, { spec: { nodeSelector: { a: '1', b: null, c: { $patch: 'delete' } } } });
  assert.deepEqual(out.spec.nodeSelector, { a: '1' });
});

test('types without a declaration patch without schema: maps merge, lists are replaced', () => {
  const out = smp({ a: { b: 1, c: [1, 2] }, d: [{ name: 'x' }] }, { a: { e: 2, c: [3] }, d: [{ name: 'y' }] }, 'example.com.v1.Widget');
  assert.deepEqual(out, { a: { b: 1, c: [3], e: 2 }, d: [{ name: 'y' }] });
  const free = applyStrategicMergePatch({ a: { b: 1 } }, { a: { $patch: 'replace', c: 1 } }, undefined);
  assert.deepEqual(free, { a: { c: 1 } });
  // RawExtension contents (a ControllerRevision's data) too
  const rev = smp({ data: { spec: { template: { a: 1 } } } }, { data: { spec: { template: { b: 2 } } } }, REVISION);
  assert.deepEqual(rev, { data: { spec: { template: { a: 1, b: 2 } } } });
});

test('inputs are not modified', () => {
  const doc = pod();
  const patch = { metadata: { labels: { $patch: 'replace', x: '1' } }, spec: { containers: [{ name: 'app', $patch: 'delete' }, { name: 'n', image: 'i' }] } };
  const before = [structuredClone(doc), structuredClone(patch)];
  smp(doc, patch);
  assert.deepEqual([doc, patch], before);
});

// ---- computing patches as kubectl does ----

test('createTwoWayMergePatch (kubectl edit): deletions, $setElementOrder, parallel lists', () => {
  const original = pod();
  const modified = pod();
  delete modified.metadata.labels.tier;
  modified.metadata.finalizers = ['example.com/b', 'example.com/c'];
  modified.spec.containers[0].image = 'nginx:2';
  modified.spec.containers[0].env = [{ name: 'B', value: '2' }];
  const patch = createTwoWayMergePatch(original, modified, POD);
  assert.deepEqual(patch, {
    metadata: {
      labels: { tier: null },
      finalizers: ['example.com/c'],
      '$deleteFromPrimitiveList/finalizers': ['example.com/a'],
      '$setElementOrder/finalizers': ['example.com/b', 'example.com/c'],
    },
    spec: {
      containers: [{ name: 'app', image: 'nginx:2', env: [{ name: 'A', $patch: 'delete' }], '$setElementOrder/env': [{ name: 'B' }] }],
      '$setElementOrder/containers': [{ name: 'app' }, { name: 'sidecar' }],
    },
  });
  assert.deepEqual(smp(original, patch), modified);
  assert.deepEqual(original, pod(), 'inputs are not modified');
});

test('createTwoWayMergePatch: reordering only sends $setElementOrder; no change sends {}', () => {
  const modified = pod();
  modified.spec.containers.reverse();
  const patch = createTwoWayMergePatch(pod(), modified, POD);
  assert.deepEqual(patch, { spec: { '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'app' }] } });
  assert.deepEqual(smp(pod(), patch), modified);
  assert.deepEqual(createTwoWayMergePatch(pod(), pod(), POD), {});
});

test('createTwoWayMergePatch: $retainKeys for a retainKeys field', () => {
  const a = { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } };
  const b = { spec: { strategy: { type: 'Recreate' } } };
  const patch = createTwoWayMergePatch(a, b, DEPLOYMENT);
  assert.deepEqual(patch, { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: null, type: 'Recreate' } } });
  assert.deepEqual(smp(a, patch, DEPLOYMENT), b);
});

function deployment(image: string, env: Obj[], extra: Obj[] = []): Obj {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image, env }, ...extra] } },
    },
  };
}

/** The live object: the last applied configuration plus what the server added. */
function live(): Obj {
  const d = deployment('nginx:1', [{ name: 'A', value: '1' }]);
  d.metadata.uid = 'u1';
  d.metadata.resourceVersion = '10';
  d.metadata.annotations = { 'deployment.kubernetes.io/revision': '1' };
  d.spec.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } };
  d.spec.revisionHistoryLimit = 10;
  Object.assign(d.spec.template.spec.containers[0], { imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log' });
  d.status = { replicas: 2 };
  return d;
}

test('createThreeWayMergePatch (kubectl apply) on a Deployment, and the server applying it', () => {
  const original = deployment('nginx:1', [{ name: 'A', value: '1' }]);
  const modified = deployment('nginx:2', [{ name: 'B', value: '2' }], [{ name: 'sidecar', image: 'busybox' }]);
  modified.spec.strategy = { type: 'Recreate' };
  const current = live();
  const patch = createThreeWayMergePatch(original, modified, current, DEPLOYMENT, true, { preconditions: APPLY_PRECONDITIONS });
  assert.deepEqual(patch, {
    spec: {
      strategy: { $retainKeys: ['type'], type: 'Recreate' },
      template: {
        spec: {
          '$setElementOrder/containers': [{ name: 'app' }, { name: 'sidecar' }],
          containers: [
            {
              name: 'app',
              image: 'nginx:2',
              env: [{ name: 'B', value: '2' }, { name: 'A', $patch: 'delete' }],
              '$setElementOrder/env': [{ name: 'B' }],
            },
            { name: 'sidecar', image: 'busybox' },
          ],
        },
      },
    },
  });
  const result = smp(current, patch, DEPLOYMENT);
  const expected = live();
  expected.spec.strategy = { type: 'Recreate' };
  Object.assign(expected.spec.template.spec.containers[0], { image: 'nginx:2', env: [{ name: 'B', value: '2' }] });
  expected.spec.template.spec.containers.push({ name: 'sidecar', image: 'busybox' });
  assert.deepEqual(result, expected);
});

test('createThreeWayMergePatch: fields removed from the configuration are deleted, fields others set are kept', () => {
  const original = deployment('nginx:1', []);
  original.metadata.labels.team = 'a';
  const modified = deployment('nginx:1', []);
  const current = live();
  current.metadata.labels.team = 'a';
  current.metadata.labels.other = 'set-by-someone-else';
  const patch = createThreeWayMergePatch(original, modified, current, DEPLOYMENT, true);
  assert.deepEqual(patch, { metadata: { labels: { team: null } } });
  const out = smp(current, patch, DEPLOYMENT);
  assert.deepEqual(out.metadata.labels, { app: 'web', other: 'set-by-someone-else' });
});

test('createThreeWayMergePatch: overwrite=false reports a conflict with changes made since the last apply', () => {
  const original = deployment('nginx:1', []);
  const modified = deployment('nginx:1', []);
  modified.spec.replicas = 3;
  const current = deployment('nginx:1', []);
  current.spec.replicas = 5; // scaled by someone else
  assert.throws(
    () => createThreeWayMergePatch(original, modified, current, DEPLOYMENT, false),
    (e: unknown) => {
      assert.ok(isConflict(e));
      assert.equal((e as PatchError).message, 'patch:\nspec:\n  replicas: 3\n\nconflicts with changes made from original to current:\nspec:\n  replicas: 5\n\n');
      return true;
    },
  );
  assert.deepEqual(createThreeWayMergePatch(original, modified, current, DEPLOYMENT, true), { spec: { replicas: 3 } });
  // no conflict when the live change is the same one
  current.spec.replicas = 3;
  assert.deepEqual(createThreeWayMergePatch(original, modified, current, DEPLOYMENT, false), {});
});

test('createThreeWayMergePatch: kubectl apply preconditions (kind, apiVersion, name)', () => {
  const original = deployment('nginx:1', []);
  const modified = deployment('nginx:1', []);
  modified.metadata.name = 'other';
  assert.throws(
    () => createThreeWayMergePatch(original, modified, live(), DEPLOYMENT, true, { preconditions: APPLY_PRECONDITIONS }),
    (e: unknown) => isPreconditionFailed(e),
  );
});

test('mergeStrategicMergePatches: applying the merged patch equals applying each in turn (maps)', () => {
  const p1 = { metadata: { labels: { a: '1', tier: null } }, spec: { nodeSelector: { disk: null } } };
  const p2 = { metadata: { labels: { b: '2' }, annotations: { x: 'y' } }, spec: { nodeSelector: { zone: 'z' } } };
  const merged = mergeStrategicMergePatches(POD, [p1, p2]);
  assert.deepEqual(merged, { metadata: { labels: { a: '1', tier: null, b: '2' }, annotations: { x: 'y' } }, spec: { nodeSelector: { disk: null, zone: 'z' } } });
  assert.deepEqual(smp(pod(), merged), smp(smp(pod(), p1), p2));
});

test('schema helpers: merge keys and strategies by path', () => {
  assert.equal(mergeKeyOf(POD, ['spec', 'containers']), 'name');
  assert.equal(mergeKeyOf(POD, ['spec', 'containers', 'ports']), 'containerPort');
  assert.equal(mergeKeyOf(SERVICE, ['spec', 'ports']), 'port');
  assert.equal(mergeKeyOf(POD, ['metadata', 'finalizers']), '');
  assert.equal(mergeKeyOf(POD, ['spec', 'nope']), undefined);
  assert.equal(patchStrategyOf(POD, ['spec', 'volumes']), 'merge,retainKeys');
  assert.equal(patchStrategyOf(DEPLOYMENT, ['spec', 'strategy']), 'retainKeys');
  assert.equal(patchStrategyOf(POD, ['spec', 'tolerations']), '');
  assert.deepEqual(patchMetaOf(POD, ['metadata', 'ownerReferences']), { strategies: ['merge'], mergeKey: 'uid' });
});

test('$setElementOrder after a deletion and an addition sees the list as Go does (shared backing array)', () => {
  // Go deletes from the live list in place and appends into the freed slot, so the live order it
  // consults afterwards is [b c d], not [a b c]: the server-only c lands before the new d.
  const out = smp(
    { spec: { containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] } },
    { spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'd' }], containers: [{ name: 'a', $patch: 'delete' }, { name: 'd' }] } },
  );
  assert.deepEqual(names(out.spec.containers), ['b', 'c', 'd']);
});

test('messages print values as Go does (%v and %s of decoded JSON)', () => {
  fails({ spec: {} }, { spec: { $patch: ['b', null, 1, 1.5, true] } }, 500, 'unknown patch type: [b <nil> %!s(int64=1) %!s(float64=1.5) %!s(bool=true)] in map: map[$patch:[b <nil> 1 1.5 true]]');
  fails({ spec: {} }, { spec: { $patch: null } }, 500, 'unknown patch type: %!s(<nil>) in map: map[$patch:<nil>]');
  fails({ spec: {} }, { spec: { $patch: { x: 1234567.5 } } }, 500, 'unknown patch type: map[x:%!s(float64=1.2345675e+06)] in map: map[$patch:map[x:1.2345675e+06]]');
});
