// splitPlaceholder / fillPlaceholder: one serialization of a write gives the stored JSON (as
// serializing the object without resourceVersion gives it) and the answer's JSON (as serializing
// it with its resourceVersion gives it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fillPlaceholder, FRAGMENT_PLACEHOLDER, RV_PLACEHOLDER, splitPlaceholder } from '../../src/codec/resourceversion.js';

function withRV(obj: any, rv: string | undefined): string {
  const o = structuredClone(obj);
  o.metadata.resourceVersion = rv;
  return JSON.stringify(o);
}

const cases: [string, any][] = [
  ['a new object: resourceVersion last', { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', labels: { x: 'y' } }, data: { k: 'v' } }],
  ['resourceVersion first in metadata', { kind: 'X', metadata: { resourceVersion: '7', name: 'z' }, spec: { n: null } }],
  ['resourceVersion between members', { kind: 'X', metadata: { name: 'z', resourceVersion: '7', uid: 'u' } }],
  ['resourceVersion the only member', { kind: 'X', metadata: { resourceVersion: '7' } }],
  ['metadata first', { metadata: { name: 'a', namespace: 'default' }, kind: 'ConfigMap', apiVersion: 'v1', data: { k: 'v' } }],
  [
    'a nested resourceVersion (a template) and awkward strings',
    {
      spec: { template: { metadata: { name: 'inner', resourceVersion: '3' } }, s: '"resourceVersion":"keelson"' },
      data: { 'we"ird}': 'a\\"}{[]",\\', ünï: 'çødé 🚀 \u0000\u001f' },
      metadata: { name: 'outer' },
    },
  ],
];

for (const [name, obj] of cases) {
  test(`one serialization gives the stored and the answer's JSON: ${name}`, () => {
    const p = splitPlaceholder(withRV(obj, RV_PLACEHOLDER));
    assert.ok(p);
    assert.equal(p.stored.toString('utf8'), withRV(obj, undefined));
    assert.equal(fillPlaceholder(p, '12345').toString('utf8'), withRV(obj, '12345'));
  });
}

test('the placeholder member missing or found twice: not splittable (the caller serializes again)', () => {
  assert.equal(splitPlaceholder(JSON.stringify({ metadata: { name: 'a' } })), undefined);
  const twice = { spec: { x: { resourceVersion: RV_PLACEHOLDER } }, metadata: { name: 'a', resourceVersion: RV_PLACEHOLDER } };
  assert.equal(splitPlaceholder(JSON.stringify(twice)), undefined);
  // the placeholder's text inside another string, before or after the member
  for (const where of ['before', 'after']) {
    const o: any = where === 'before' ? { a: `x${RV_PLACEHOLDER}`, metadata: { name: 'a', resourceVersion: RV_PLACEHOLDER } } : { metadata: { name: 'a', resourceVersion: RV_PLACEHOLDER }, z: RV_PLACEHOLDER };
    assert.equal(splitPlaceholder(JSON.stringify(o)), undefined, where);
  }
});

// a fragment: a member serialized as FRAGMENT_PLACEHOLDER, its known JSON text put in its place
const FRAGMENTS = [
  [{ manager: 'm', operation: 'Update', fieldsV1: { 'f:data': { '.': {}, 'f:a"b': {} } } }],
  [{ manager: 'mänäger 🚀', fieldsV1: { 'f:\u0001keelson:resourceVersion\u0001': {} } }],
  // shorter than the placeholder's JSON (the stored bytes are shorter than the text), and longer
  [],
  [{ manager: 'kubectl-client-side-apply', operation: 'Update', fieldsV1: { 'f:data': Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f:key-${i}`, {}])) } }],
];

for (const [name, obj] of cases) {
  for (const [i, fragment] of FRAGMENTS.entries()) {
    for (const where of ['managedFields', 'zz']) {
      test(`a known fragment in its placeholder's place (${where}, fragment ${i}): the stored and the answer's JSON of the object holding it: ${name}`, () => {
        const withFragment = structuredClone(obj);
        withFragment.metadata[where] = fragment;
        const withPlaceholder = structuredClone(obj);
        withPlaceholder.metadata[where] = FRAGMENT_PLACEHOLDER;
        const p = splitPlaceholder(withRV(withPlaceholder, RV_PLACEHOLDER), JSON.stringify(fragment));
        assert.ok(p);
        assert.equal(p.stored.toString('utf8'), withRV(withFragment, undefined));
        assert.equal(fillPlaceholder(p, '9').toString('utf8'), withRV(withFragment, '9'));
      });
    }
  }
}

test('the fragment placeholder missing, twice, or inside another string: not splittable (the caller serializes again)', () => {
  const f = JSON.stringify(FRAGMENTS[0]);
  const split = (o: any) => splitPlaceholder(withRV(o, RV_PLACEHOLDER), f);
  assert.equal(split({ metadata: { name: 'a' } }), undefined);
  assert.equal(split({ metadata: { name: 'a', managedFields: FRAGMENT_PLACEHOLDER }, data: { k: FRAGMENT_PLACEHOLDER } }), undefined);
  assert.equal(split({ data: { k: `x${FRAGMENT_PLACEHOLDER}` }, metadata: { name: 'a', managedFields: FRAGMENT_PLACEHOLDER } }), undefined);
  assert.equal(split({ data: { k: `x${FRAGMENT_PLACEHOLDER}` }, metadata: { name: 'a' } }), undefined);
});

test('one fragment text written again and again, then another: each write has its own fragment', () => {
  const obj = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', managedFields: FRAGMENT_PLACEHOLDER as unknown }, data: { k: 'v' } };
  for (const fragment of [FRAGMENTS[0], FRAGMENTS[0], FRAGMENTS[2], FRAGMENTS[3], FRAGMENTS[0]]) {
    const text = JSON.stringify(fragment);
    for (let i = 0; i < 3; i++) {
      const p = splitPlaceholder(withRV(obj, RV_PLACEHOLDER), text);
      assert.ok(p);
      assert.equal(p.stored.toString('utf8'), withRV({ ...obj, metadata: { ...obj.metadata, managedFields: fragment } }, undefined));
    }
  }
});

test('the fragment and the member apart, in either order, with long members between and around: the pieces move without overwriting each other', () => {
  const long = (c: string) => c.repeat(120);
  const orders: string[][] = [
    ['F', 'a', 'RV', 'b'],
    ['a', 'RV', 'b', 'F', 'c'],
    ['RV', 'a', 'F'],
    ['F', 'RV'],
    ['RV', 'F'],
    ['a', 'F', 'b', 'c', 'RV', 'd'],
  ];
  for (const order of orders) {
    for (const [i, fragment] of FRAGMENTS.entries()) {
      const build = (f: unknown, rv: string | undefined) => {
        const m: any = {};
        for (const k of order) {
          if (k === 'F') m.managedFields = f;
          else if (k === 'RV') m.resourceVersion = rv;
          else m[k] = long(k);
        }
        return JSON.stringify({ kind: 'X', metadata: m, spec: { z: 'z'.repeat(2000) } });
      };
      const p = splitPlaceholder(build(FRAGMENT_PLACEHOLDER, RV_PLACEHOLDER), JSON.stringify(fragment));
      assert.ok(p, `${order.join(',')} fragment ${i}`);
      assert.equal(p.stored.toString('utf8'), build(fragment, undefined), `${order.join(',')} fragment ${i}`);
      assert.equal(fillPlaceholder(p, '42').toString('utf8'), build(fragment, '42'), `${order.join(',')} fragment ${i}`);
    }
  }
});
