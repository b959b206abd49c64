// trackUpdate's memo of create fields by object structure: every answer it gives must be the
// answer computed without it, whatever object of the same type was created before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { trackUpdate, clearCreateMemo, managedFieldsText, type ManagerInfo } from '../../src/patch/ssa/fieldmanager.js';
import { normalize } from '../../src/codec/json.js';
import { setCustomRootShape } from '../../src/patch/ssa/shape.js';
import { shapeOf } from '../../src/apiserver/crd/ssashape.js';

const T = '2026-11-22T10:00:00Z';
const INFO: ManagerInfo = { manager: 'kubectl-create', apiVersion: 'v1', time: T };

function pod(name: string, containers: { name: string; image: string; ports?: number[] }[], extra: Record<string, unknown> = {}): any {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: name.split('-')[0] } },
    spec: { containers: containers.map((c) => ({ name: c.name, image: c.image, ...(c.ports ? { ports: c.ports.map((p) => ({ containerPort: p, protocol: 'TCP' })) } : {}) })), ...extra },
  };
}

const CASES: { type: string; info?: Partial<ManagerInfo>; variants: any[] }[] = [
  {
    type: 'io.k8s.api.core.v1.ConfigMap',
    variants: [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', labels: { app: 'x' } }, data: { payload: 'one' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b', labels: { app: 'y' } }, data: { payload: 'two' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { tier: 'y' } }, data: { payload: '' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'd', labels: {} }, data: { payload: 'x' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'e' }, data: { payload: 'x' }, immutable: false },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'f' }, data: { payload: 'x' }, immutable: true },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'g', finalizers: ['a/b'] } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'h', finalizers: ['c/d'] } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'i', finalizers: ['a/b', 'c/d'] } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'j', creationTimestamp: null } },
    ],
  },
  {
    type: 'io.k8s.api.core.v1.Pod',
    variants: [
      pod('web-1', [{ name: 'web', image: 'nginx' }]),
      pod('web-2', [{ name: 'web', image: 'nginx:2' }]),
      pod('db-1', [{ name: 'db', image: 'postgres' }]),
      pod('web-3', [{ name: 'web', image: 'nginx', ports: [80] }]),
      pod('web-4', [{ name: 'web', image: 'nginx', ports: [8080] }]),
      pod('web-5', [{ name: 'web', image: 'nginx', ports: [80, 443] }]),
      pod('web-6', [{ name: 'a', image: 'x' }, { name: 'b', image: 'y' }]),
      pod('web-7', [{ name: 'b', image: 'x' }, { name: 'a', image: 'y' }]),
      pod('web-8', [{ name: 'web', image: 'nginx' }], { nodeName: 'n1' }),
      pod('web-9', [{ name: 'web', image: 'nginx' }], { nodeName: '' }),
      pod('web-10', [{ name: 'web', image: 'nginx' }], { hostNetwork: false }),
      pod('web-11', [{ name: 'web', image: 'nginx' }], { hostNetwork: true }),
    ],
  },
  {
    type: 'io.k8s.api.apps.v1.ReplicaSet',
    info: { apiVersion: 'apps/v1', resetFields: [['status']] },
    variants: [0, 1, 2].flatMap((r) => [
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: `rs-${r}` }, spec: { replicas: r, selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } }, status: { replicas: r } },
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: `rs-${r}b` }, spec: { replicas: r, selector: { matchLabels: { app: 'b' } }, template: { metadata: { labels: { app: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } } },
    ]),
  },
  {
    type: 'io.k8s.api.core.v1.Service',
    variants: [
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 's1' }, spec: { ports: [{ port: 80, protocol: 'TCP' }], selector: { app: 'a' } } },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 's2' }, spec: { ports: [{ port: 81, protocol: 'TCP' }], selector: { app: 'a' } } },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 's3' }, spec: { ports: [{ port: 80, protocol: 'UDP' }], selector: { app: 'b' } } },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 's4' }, spec: { ports: [{ port: 80, protocol: 'TCP' }, { port: 80, protocol: 'UDP' }] } },
    ],
  },
];

for (const c of CASES) {
  test(`a create's managed fields are the same with and without the memo: ${c.type.split('.').pop()}`, () => {
    const info = { ...INFO, ...c.info };
    const objs = c.variants.map((v) => normalize(c.type, structuredClone(v)).obj);
    const computed = objs.map((o) => {
      clearCreateMemo(c.type);
      return trackUpdate(undefined, o, c.type, info);
    });
    for (let a = 0; a < objs.length; a++) {
      for (let b = 0; b < objs.length; b++) {
        clearCreateMemo(c.type);
        trackUpdate(undefined, objs[a], c.type, info);
        const got = trackUpdate(undefined, objs[b], c.type, info);
        assert.deepEqual(got, computed[b], `variant ${b} after variant ${a}`);
      }
    }
    // the arguments are never changed, and the documents are shared
    clearCreateMemo(c.type);
    const first = trackUpdate(undefined, objs[0], c.type, info);
    const again = trackUpdate(undefined, objs[0], c.type, info);
    assert.equal(again.metadata.managedFields[0].fieldsV1, first.metadata.managedFields[0].fieldsV1);
    assert.ok(Object.isFrozen(first.metadata.managedFields[0].fieldsV1));
    assert.equal(objs[0].metadata.managedFields, undefined);
  });
}

test('managed fields sent with a create are not taken from the memo', () => {
  const type = 'io.k8s.api.core.v1.ConfigMap';
  clearCreateMemo(type);
  const plain = normalize(type, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } }).obj;
  trackUpdate(undefined, plain, type, INFO);
  const sent = structuredClone(plain);
  sent.metadata.managedFields = [{ manager: 'other', operation: 'Apply', apiVersion: 'v1', time: T, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:k': {} } } }];
  const out = trackUpdate(undefined, sent, type, INFO);
  clearCreateMemo(type);
  assert.deepEqual(out, trackUpdate(undefined, sent, type, INFO));
  // the sent entry's fields all change with the create: they move to its manager, as in Kubernetes
  assert.deepEqual(out.metadata.managedFields.map((e: any) => e.manager), ['kubectl-create']);
  // fields the create does not touch stay with their manager
  sent.metadata.managedFields[0].fieldsV1 = { 'f:metadata': { 'f:annotations': {} } };
  const kept = trackUpdate(undefined, sent, type, INFO);
  assert.deepEqual(kept.metadata.managedFields.map((e: any) => e.manager).sort(), ['kubectl-create', 'other']);
});

test("a custom resource's new schema (a new root shape) is not answered from the old one's memo", () => {
  const type = 'test.keelson.memo.v1.Widget';
  const schema = (listType: 'atomic' | 'map') => ({
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: {
        type: 'object',
        properties: {
          ports: { type: 'array', 'x-kubernetes-list-type': listType, ...(listType === 'map' ? { 'x-kubernetes-list-map-keys': ['name'] } : {}), items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } } },
        },
      },
    },
  });
  const obj = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { ports: [{ name: 'http', port: 80 }] } };
  const info = { ...INFO, apiVersion: 'example.com/v1' };
  try {
    setCustomRootShape(type, shapeOf(schema('atomic') as any, true));
    const atomic = trackUpdate(undefined, obj, type, info).metadata.managedFields[0].fieldsV1;
    assert.deepEqual(atomic['f:spec']['f:ports'], {});
    setCustomRootShape(type, shapeOf(schema('map') as any, true));
    const map = trackUpdate(undefined, obj, type, info).metadata.managedFields[0].fieldsV1;
    assert.deepEqual(map['f:spec']['f:ports'], { '.': {}, 'k:{"name":"http"}': { '.': {}, 'f:name': {}, 'f:port': {} } });
  } finally {
    setCustomRootShape(type, undefined);
  }
});

test('creates of one structure by one manager in one second share one frozen managedFields list, with its JSON text', () => {
  const type = 'io.k8s.api.core.v1.ConfigMap';
  const cm = (name: string) => normalize(type, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: name } }, data: { k: name } }).obj;
  // (the first create of a structure computes its document; the later ones are answered by the memo)
  trackUpdate(undefined, cm('warm'), type, INFO);
  const a = trackUpdate(undefined, cm('a'), type, INFO);
  const b = trackUpdate(undefined, cm('b'), type, INFO);
  assert.equal(a.metadata.managedFields, b.metadata.managedFields);
  assert.ok(Object.isFrozen(a.metadata.managedFields) && Object.isFrozen(a.metadata.managedFields[0]));
  assert.equal(managedFieldsText(a.metadata.managedFields), JSON.stringify(a.metadata.managedFields));
  assert.deepEqual(a.metadata.managedFields, [
    { manager: 'kubectl-create', operation: 'Update', apiVersion: 'v1', time: T, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { '.': {}, 'f:k': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } } },
  ]);
  // another second, another manager: another list
  const later = trackUpdate(undefined, cm('c'), type, { ...INFO, time: '2026-11-22T10:00:01Z' });
  const other = trackUpdate(undefined, cm('d'), type, { ...INFO, manager: 'other' });
  assert.notEqual(later.metadata.managedFields, a.metadata.managedFields);
  assert.equal(later.metadata.managedFields[0].time, '2026-11-22T10:00:01Z');
  assert.equal(other.metadata.managedFields[0].manager, 'other');
  assert.equal(managedFieldsText(other.metadata.managedFields), JSON.stringify(other.metadata.managedFields));
  // an update's entries are its own, and have no kept text
  const updated = trackUpdate(a, { ...a, metadata: { ...a.metadata }, data: { k: 'changed' } }, type, { ...INFO, manager: 'editor' });
  assert.equal(managedFieldsText(updated.metadata.managedFields), undefined);
  assert.equal(managedFieldsText([...a.metadata.managedFields]), undefined);
});
