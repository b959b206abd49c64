// Field sets and their fieldsV1 form: path element syntax and order, round trips of documents
// Kubernetes writes, set operations, and the field set of typed values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FieldSet } from '../../src/patch/ssa/fieldset.js';
import { comparePE, fieldPE, keyPE, parsePE, pathString, valuePE, indexPE, type PathElement } from '../../src/patch/ssa/pathelement.js';
import { rootShape } from '../../src/patch/ssa/shape.js';
import { compare, merge, toFieldSet } from '../../src/patch/ssa/typed.js';
import { goJSON } from '../../src/machinery/gostrings.js';

const f = fieldPE;
const k = (o: Record<string, unknown>) => keyPE(Object.entries(o));

test('path elements: serialized form', () => {
  const table: [PathElement, string][] = [
    [f('spec'), 'f:spec'],
    [f('kubectl.kubernetes.io/last-applied-configuration'), 'f:kubectl.kubernetes.io/last-applied-configuration'],
    [k({ name: 'nginx' }), 'k:{"name":"nginx"}'],
    // key fields sorted by name whatever the listMapKeys order
    [k({ protocol: 'TCP', containerPort: 80 }), 'k:{"containerPort":80,"protocol":"TCP"}'],
    [k({ whenUnsatisfiable: 'DoNotSchedule', topologyKey: 'zone' }), 'k:{"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}'],
    [valuePE('example.com/foo'), 'v:"example.com/foo"'],
    [valuePE(3), 'v:3'],
    [valuePE(3.1415), 'v:3.1415'],
    [valuePE(false), 'v:false'],
    [indexPE(5), 'i:5'],
    // Go's encoding/json escapes HTML characters
    [k({ name: 'a<b>&c' }), 'k:{"name":"a\\u003cb\\u003e\\u0026c"}'],
  ];
  for (const [pe, s] of table) assert.equal(pe.s, s);
});

test('path elements: parse, including unknown types and errors', () => {
  assert.deepEqual(parsePE('f:a.b'), f('a.b'));
  assert.equal(parsePE('k:{"protocol":"TCP","containerPort":80}')!.s, 'k:{"containerPort":80,"protocol":"TCP"}');
  assert.equal(parsePE('v:"x"')!.s, 'v:"x"');
  assert.equal(parsePE('i:7')!.s, 'i:7');
  assert.equal(parsePE('z:whatever'), undefined); // unknown element types are dropped
  assert.throws(() => parsePE('f'), /key must be 2 characters long/);
  assert.throws(() => parsePE('fx'), /missing colon: fx/);
  assert.throws(() => parsePE('k:[1]'));
  assert.throws(() => parsePE('v:{'));
  assert.throws(() => parsePE('i:x'));
  // strconv.Atoi's error quotes with %q (not as JSON: `<` stays)
  assert.throws(() => parsePE('i:<x\t'), { message: 'strconv.Atoi: parsing "<x\\t": invalid syntax' });
});

test('path elements: order (fields, keys, values, indexes; values: numbers, strings, booleans)', () => {
  const sorted = [
    f('a'),
    f('b'),
    k({ name: 'a' }),
    k({ name: 'b' }),
    k({ name: 'b', x: 1 }),
    valuePE(1),
    valuePE(2.5),
    valuePE(10),
    valuePE('a'),
    valuePE('b'),
    valuePE(false),
    valuePE(true),
    indexPE(0),
    indexPE(2),
  ];
  const shuffled = [...sorted].reverse();
  shuffled.sort(comparePE);
  assert.deepEqual(
    shuffled.map((p) => p.s),
    sorted.map((p) => p.s),
  );
});

test('human-readable paths as conflicts print them', () => {
  assert.equal(pathString([f('data'), f('a')]), '.data.a');
  assert.equal(pathString([f('spec'), f('containers'), k({ name: 'nginx' }), f('image')]), '.spec.containers[name="nginx"].image');
  assert.equal(pathString([f('spec'), f('ports'), k({ port: 80, protocol: 'TCP' }), f('targetPort')]), '.spec.ports[port=80,protocol="TCP"].targetPort');
  assert.equal(pathString([f('metadata'), f('finalizers'), valuePE('a/b')]), '.metadata.finalizers[="a/b"]');
  assert.equal(pathString([f('x'), indexPE(3)]), '.x[3]');
});

// Documents from Kubernetes' managedfields round-trip tests: decoding and encoding gives them back.
const ROUND_TRIP: object[] = [
  { 'v:3': { 'f:alsoPi': {} }, 'v:3.1415': { 'f:pi': {} }, 'v:false': { 'f:notTrue': {} } },
  { 'i:5': { 'f:i': {} } },
  { 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { 'f:image': {}, 'f:name': {} } } } },
  {
    'f:apiVersion': {},
    'f:kind': {},
    'f:metadata': { 'f:labels': { 'f:app': {} }, 'f:name': {} },
    'f:spec': {
      'f:replicas': {},
      'f:selector': { 'f:matchLabels': { 'f:app': {} } },
      'f:template': {
        'f:medatada': { 'f:labels': { 'f:app': {} } },
        'f:spec': {
          'f:containers': {
            'k:{"name":"nginx"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:ports': { 'i:0': { 'f:containerPort': {} } } },
          },
        },
      },
    },
  },
  {
    'f:allowVolumeExpansion': {},
    'f:apiVersion': {},
    'f:kind': {},
    'f:metadata': { 'f:name': {}, 'f:parameters': { 'f:resturl': {}, 'f:restuser': {}, 'f:secretName': {}, 'f:secretNamespace': {} } },
    'f:provisioner': {},
  },
  {
    'f:apiVersion': {},
    'f:kind': {},
    'f:metadata': { 'f:name': {} },
    'f:spec': {
      'f:group': {},
      'f:names': { 'f:kind': {}, 'f:plural': {}, 'f:shortNames': { 'i:0': {} }, 'f:singular': {} },
      'f:scope': {},
      'f:versions': { 'k:{"name":"v1"}': { 'f:name': {}, 'f:served': {}, 'f:storage': {} } },
    },
  },
];

test('fieldsV1 documents round-trip unchanged', () => {
  for (const doc of ROUND_TRIP) {
    const set = FieldSet.fromFieldsV1(doc);
    assert.equal(JSON.stringify(set.toFieldsV1()), JSON.stringify(doc));
  }
});

test('fieldsV1: keys are written in element order, whatever order they were read in', () => {
  const doc = { 'v:"b"': {}, 'k:{"name":"x"}': {}, 'f:z': {}, 'v:"a"': {}, 'f:a': { 'f:y': {}, '.': {}, 'f:b': {} } };
  const out = FieldSet.fromFieldsV1(doc).toFieldsV1();
  assert.equal(JSON.stringify(out), '{"f:a":{".":{},"f:b":{},"f:y":{}},"f:z":{},"k:{\\"name\\":\\"x\\"}":{},"v:\\"a\\"":{},"v:\\"b\\"":{}}');
});

test('fieldsV1: malformed documents are rejected, unknown elements dropped', () => {
  assert.throws(() => FieldSet.fromFieldsV1({ 'f:a': 1 }));
  assert.throws(() => FieldSet.fromFieldsV1({ 'f:a': [] }));
  assert.throws(() => FieldSet.fromFieldsV1({ x: {} }));
  assert.throws(() => FieldSet.fromFieldsV1([]));
  assert.equal(JSON.stringify(FieldSet.fromFieldsV1({ 'f:a': {}, 'q:zz': { 'f:b': {} } }).toFieldsV1()), '{"f:a":{}}');
  assert.ok(FieldSet.fromFieldsV1({}).empty());
  assert.ok(FieldSet.fromFieldsV1(null).empty());
});

test('set operations', () => {
  const A = FieldSet.of([f('a')], [f('b'), f('c')], [f('b'), f('d')], [f('e')]);
  const B = FieldSet.of([f('b'), f('c')], [f('e')], [f('x')]);
  assert.equal(JSON.stringify(A.union(B).toFieldsV1()), '{"f:a":{},"f:b":{"f:c":{},"f:d":{}},"f:e":{},"f:x":{}}');
  assert.equal(JSON.stringify(A.intersection(B).toFieldsV1()), '{"f:b":{"f:c":{}},"f:e":{}}');
  assert.equal(JSON.stringify(A.difference(B).toFieldsV1()), '{"f:a":{},"f:b":{"f:d":{}}}');
  // difference: a parent member removes only itself; recursiveDifference removes what is below it too
  const P = FieldSet.of([f('b')]);
  const C = FieldSet.of([f('b')], [f('b'), f('c')]);
  assert.equal(JSON.stringify(C.difference(P).toFieldsV1()), '{"f:b":{"f:c":{}}}');
  assert.equal(JSON.stringify(C.recursiveDifference(P).toFieldsV1()), '{}');
  assert.ok(A.has([f('b'), f('d')]));
  assert.ok(!A.has([f('b')]));
  assert.equal(A.size(), 4);
  assert.ok(A.union(B).difference(B).equals(A.difference(B)));
  // subsets: by paths (a member does not stand for the paths below it)
  assert.ok(A.intersection(B).isSubsetOf(A) && A.intersection(B).isSubsetOf(B));
  assert.ok(A.isSubsetOf(A.union(B)) && !A.isSubsetOf(B) && !A.union(B).isSubsetOf(A));
  assert.ok(new FieldSet().isSubsetOf(B));
  assert.ok(!C.isSubsetOf(P) && P.isSubsetOf(C));
  assert.deepEqual(
    A.paths().map(pathString),
    ['.a', '.e', '.b.c', '.b.d'], // members first, then children (fieldpath.Set.Iterate)
  );
});

const POD = 'io.k8s.api.core.v1.Pod';
const DEPLOYMENT = 'io.k8s.api.apps.v1.Deployment';

test('toFieldSet: struct fields are not members, map keys are, list items are', () => {
  const shape = rootShape(POD);
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', labels: { app: 'x' }, finalizers: ['example.com/a'], annotations: {} },
    spec: {
      containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP' }], resources: {} }],
      tolerations: [{ key: 'k', operator: 'Exists' }],
      nodeSelector: { disk: 'ssd' },
      affinity: null,
    },
  };
  assert.deepEqual(toFieldSet(shape, pod).toFieldsV1(), {
    'f:apiVersion': {},
    'f:kind': {},
    'f:metadata': {
      'f:annotations': {}, // an empty object is a member
      'f:finalizers': { 'v:"example.com/a"': {} },
      'f:labels': { 'f:app': {} },
      'f:name': {},
    },
    'f:spec': {
      'f:affinity': {}, // null is a member
      'f:containers': {
        'k:{"name":"c"}': {
          '.': {},
          'f:image': {},
          'f:name': {},
          'f:ports': {
            'k:{"containerPort":53,"protocol":"UDP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} },
            // the key takes the default protocol when the item leaves it out
            'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} },
          },
          'f:resources': {},
        },
      },
      'f:nodeSelector': {}, // mapType=atomic
      'f:tolerations': {}, // listType=atomic
    },
  });
});

test('toFieldSet: duplicated list items are owned as one leaf', () => {
  const shape = rootShape(POD);
  const set = toFieldSet(shape, { spec: { containers: [{ name: 'a', image: '1' }, { name: 'a', image: '2' }, { name: 'b' }] } });
  assert.deepEqual(set.toFieldsV1(), { 'f:spec': { 'f:containers': { 'k:{"name":"a"}': {}, 'k:{"name":"b"}': { '.': {}, 'f:name': {} } } } });
});

test('compare: added subtrees list every node, modified lists leaves, removed lists what went', () => {
  const shape = rootShape(DEPLOYMENT);
  const old = { spec: { replicas: 1, strategy: {}, template: { spec: { containers: [{ name: 'a', image: 'x' }] } } } };
  const neu = { spec: { replicas: 2, strategy: { rollingUpdate: { maxSurge: 1 } }, template: { spec: { containers: [{ name: 'b', image: 'y' }] } } } };
  const c = compare(shape, old, neu);
  assert.deepEqual(c.modified.toFieldsV1(), { 'f:spec': { 'f:replicas': {} } });
  assert.deepEqual(c.added.toFieldsV1(), {
    'f:spec': {
      'f:strategy': { 'f:rollingUpdate': { '.': {}, 'f:maxSurge': {} } },
      'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"b"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } },
    },
  });
  assert.deepEqual(c.removed.toFieldsV1(), { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"a"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } } } });
});

test('merge: associative list order (live-only items stay, shared items follow the applied order)', () => {
  const shape = rootShape(POD);
  const c = (...names: string[]) => ({ spec: { containers: names.map((name) => ({ name })) } });
  const order = (v: any) => v.spec.containers.map((x: any) => x.name).join('');
  assert.equal(order(merge(shape, c('a', 'b', 'c'), c('c', 'a'))), 'bca');
  assert.equal(order(merge(shape, c('a', 'b'), c('x', 'b', 'y'))), 'axby');
  assert.equal(order(merge(shape, c('a', 'b', 'c', 'd'), c('d', 'b'))), 'acdb');
  assert.equal(order(merge(shape, c(), c('a'))), 'a');
  // atomic lists and scalars: the applied value wins; maps merge by key
  const m = merge(shape, { spec: { tolerations: [{ key: 'a' }], nodeSelector: { x: '1' } }, metadata: { labels: { a: '1' } } }, {
    spec: { tolerations: [{ key: 'b' }], nodeSelector: { y: '2' } },
    metadata: { labels: { b: '2' } },
  }) as any;
  assert.deepEqual(m.spec.tolerations, [{ key: 'b' }]);
  assert.deepEqual(m.spec.nodeSelector, { y: '2' });
  assert.deepEqual(m.metadata.labels, { a: '1', b: '2' });
});

// structured-merge-diff's merge cases for a set of strings (typed/merge_test.go), as data:
// [live, applied, merged]
const SET_MERGES: [string[], string[], string[]][] = [
  [['a', 'b', 'c'], ['a', 'b'], ['a', 'b', 'c']],
  [['a', 'b'], ['a', 'b', 'c'], ['a', 'b', 'c']],
  [['a', 'b', 'c'], [], ['a', 'b', 'c']],
  [['a', 'b'], ['b', 'a'], ['b', 'a']],
  [['a', 'b', 'c', 'g', 'f'], ['c', 'd', 'e', 'f'], ['a', 'b', 'c', 'g', 'd', 'e', 'f']],
  [['c', 'd', 'e', 'f'], ['a', 'c', 'e'], ['a', 'c', 'd', 'e', 'f']],
  [['a', 'b', 'c', 'x', 'y', 'z'], ['d', 'e', 'f', 'x', 'y', 'z'], ['a', 'b', 'c', 'd', 'e', 'f', 'x', 'y', 'z']],
  [['a', 'b', 'c', 'd'], ['d', 'e', 'f', 'a'], ['b', 'c', 'd', 'e', 'f', 'a']],
  [['c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'], ['2', 'h', '3', 'e', '4', 'k', 'l'], ['c', 'd', 'f', 'g', '2', 'h', 'i', 'j', '3', 'e', '4', 'k', 'l']],
  [['a', 'b', 'b'], ['c'], ['a', 'b', 'b', 'c']],
  [['a', 'b', 'b'], ['b'], ['a', 'b']],
  [['a', 'b', 'c', 'd', 'e', 'c'], ['1', 'b', '2', 'e', 'd'], ['a', '1', 'b', 'c', '2', 'e', 'c', 'd']],
  [['a', 'a', 'b', 'b'], ['b', 'c', 'd'], ['a', 'a', 'b', 'c', 'd']],
  [['c', 'a', 'g', 'f', 'c', 'a'], ['c', 'f', 'a', 'g'], ['c', 'f', 'a', 'g']],
];

test('merge: set order and duplicates as structured-merge-diff merges them', () => {
  const shape = rootShape(POD);
  for (const [live, applied, want] of SET_MERGES) {
    const got = merge(shape, { metadata: { finalizers: live } }, { metadata: { finalizers: applied } }) as any;
    assert.deepEqual(got.metadata.finalizers, want, `${live} + ${applied}`);
  }
});

test('goJSON: sorted keys, Go escapes', () => {
  assert.equal(goJSON({ b: 1, a: [true, null, 'x<y'], c: { z: 1.5, y: 1e21 } }), '{"a":[true,null,"x\\u003cy"],"b":1,"c":{"y":1e+21,"z":1.5}}');
});
