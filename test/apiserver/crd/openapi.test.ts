// The OpenAPI definitions of custom resources (src/apiserver/crd/openapi.ts) and the shape
// server-side apply gives them (src/apiserver/crd/ssashape.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kindDefinition, listDefinition, type CustomTypeInfo } from '../../../src/apiserver/crd/openapi.js';
import { shapeOf } from '../../../src/apiserver/crd/ssashape.js';
import { fieldShape, type StructShape } from '../../../src/patch/ssa/shape.js';

const info: CustomTypeInfo = {
  group: 'stable.example.com',
  version: 'v1',
  kind: 'CronTab',
  listKind: 'CronTabList',
  plural: 'crontabs',
  schema: {
    type: 'object',
    description: 'A CronTab.',
    properties: {
      spec: { type: 'object', properties: { n: { type: 'integer', nullable: true, default: 1 }, p: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } } },
    },
  },
};
const ref = (n: string) => ({ $ref: `#/x/${n}` });

test('v3: apiVersion, kind and ObjectMeta added, the schema kept, x-kubernetes-group-version-kind', () => {
  const d: any = kindDefinition(info, 'v3', ref);
  assert.deepEqual(Object.keys(d.properties), ['apiVersion', 'kind', 'metadata', 'spec']);
  assert.deepEqual(d.properties.metadata.allOf, [{ $ref: '#/x/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }]);
  assert.equal(d.description, 'A CronTab.');
  assert.equal(d.properties.spec.properties.n.nullable, true);
  assert.equal(d.properties.spec.properties.n.default, 1);
  assert.deepEqual(d['x-kubernetes-group-version-kind'], [{ group: 'stable.example.com', kind: 'CronTab', version: 'v1' }]);
});

test('v2: no nullable or anyOf; $ref with its description beside it', () => {
  const d: any = kindDefinition(info, 'v2', ref);
  assert.equal(d.properties.metadata.$ref, '#/x/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  assert.equal(d.properties.spec.properties.n.nullable, undefined);
  assert.equal(d.properties.spec.properties.p.anyOf, undefined);
  assert.equal(d.properties.spec.properties.p['x-kubernetes-int-or-string'], true);
});

test('the list type', () => {
  const l: any = listDefinition(info, ref('com.example.stable.v1.CronTab'), 'v3', ref);
  assert.deepEqual(l.required, ['items']);
  assert.deepEqual(l.properties.items.items, { $ref: '#/x/com.example.stable.v1.CronTab' });
  assert.deepEqual(l['x-kubernetes-group-version-kind'], [{ group: 'stable.example.com', kind: 'CronTabList', version: 'v1' }]);
});

test('server-side apply shapes: list types, maps, preserved subtrees, ObjectMeta at the root', () => {
  const root = shapeOf(
    {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name', 'protocol'], items: { type: 'object', properties: { name: { type: 'string' }, protocol: { type: 'string', default: 'TCP' } } } },
            tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
            args: { type: 'array', items: { type: 'string' } },
            labels: { type: 'object', additionalProperties: { type: 'string' } },
            free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            sel: { type: 'object', 'x-kubernetes-map-type': 'atomic', properties: { a: { type: 'string' } } },
          },
        },
      },
    },
    true,
  ) as StructShape;
  assert.equal(root.k, 'struct');
  assert.equal(fieldShape(root, 'metadata').k, 'struct');
  const spec = fieldShape(root, 'spec') as StructShape;
  const ports: any = fieldShape(spec, 'ports');
  assert.deepEqual([ports.rel, ports.keys], ['map', ['name', 'protocol']]);
  assert.equal(ports.items.fields.get('protocol').default, 'TCP');
  assert.equal((fieldShape(spec, 'tags') as any).rel, 'set');
  assert.equal((fieldShape(spec, 'args') as any).rel, 'atomic');
  assert.equal(fieldShape(spec, 'labels').k, 'map');
  assert.equal(fieldShape(spec, 'free').k, 'deduced');
  assert.equal((fieldShape(spec, 'sel') as any).atomic, true);
});
