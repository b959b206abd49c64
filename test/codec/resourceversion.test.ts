// withResourceVersion: the stored JSON of an object with its resourceVersion inserted gives the
// same bytes as serializing the object with the resourceVersion set last in its metadata.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withResourceVersion } from '../../src/codec/resourceversion.js';

function expected(obj: any, rv: string): string {
  const o = structuredClone(obj);
  o.metadata.resourceVersion = rv;
  return JSON.stringify(o);
}

const cases: [string, any][] = [
  ['metadata first', { metadata: { name: 'a', namespace: 'default' }, kind: 'ConfigMap', apiVersion: 'v1', data: { k: 'v' } }],
  ['metadata after kind and apiVersion', { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', labels: { x: 'y' } }, data: { k: 'v' } }],
  ['metadata last', { kind: 'X', spec: { replicas: 3, paused: false, n: null, f: -1.5e-7 }, metadata: { name: 'z' } }],
  ['empty metadata', { kind: 'X', metadata: {}, spec: {} }],
  [
    'a nested metadata (a template) before the top-level one',
    { spec: { template: { metadata: { name: 'inner', labels: { a: 'b' } }, spec: { containers: [{ name: 'c', args: ['{', '}', '"metadata":{'] }] } } }, metadata: { name: 'outer' } },
  ],
  [
    'strings with quotes, backslashes, braces and other scripts',
    { kind: 'K', data: { 'we"ird}': 'a\\"}{[]",\\', '"metadata"': '{"metadata":{}}', ünï: 'çødé 🚀 \u0000\u001f' }, metadata: { name: 'n', annotations: { 'a/b': '}]"\\' } } },
  ],
  ['arrays of objects at the top level', { items: [{ metadata: { name: 'i' } }, [], [[{}]]], metadata: { name: 'm' } }],
];

for (const [name, obj] of cases) {
  test(`withResourceVersion: ${name}`, () => {
    const got = withResourceVersion(Buffer.from(JSON.stringify(obj)), '12345');
    assert.ok(got);
    assert.equal(got.toString('utf8'), expected(obj, '12345'));
    assert.deepEqual(JSON.parse(got.toString('utf8')).metadata.resourceVersion, '12345');
  });
}

test('withResourceVersion: no top-level metadata object: undefined (the caller serializes)', () => {
  assert.equal(withResourceVersion(Buffer.from(JSON.stringify({ kind: 'X', spec: { metadata: { name: 'inner' } } })), '1'), undefined);
  assert.equal(withResourceVersion(Buffer.from(JSON.stringify({ metadata: 'text' })), '1'), undefined);
  assert.equal(withResourceVersion(Buffer.from(JSON.stringify({ metadata: null })), '1'), undefined);
  assert.equal(withResourceVersion(Buffer.from('[]'), '1'), undefined);
  assert.equal(withResourceVersion(Buffer.from('{"metadata":{"name":"unterminated'), '1'), undefined);
});
