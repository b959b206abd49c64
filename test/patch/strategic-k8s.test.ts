// Kubernetes' own strategic merge patch tables (strategic-k8s-cases.test.ts, from
// k8s.io/apimachinery/pkg/util/strategicpatch/patch_test.go) run against our implementation,
// with our declaration of the test's MergeItem Go type. The checks follow the Go tests':
// - raw cases compare exact JSON (list order included) of the two-way patch, its result, the
//   three-way patch (overwrite=false; a conflict is expected iff the description says so, and
//   then the forced patch is checked) and its result on current, or an expected error;
// - YAML cases compare after sorting merging lists by merge key (sortMergeListsByName).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FieldDecl, TypeDecl, TypeRef } from '../../src/schema/model.js';
import {
  applyStrategicMergePatch,
  createThreeWayMergePatch,
  createTwoWayMergePatch,
} from '../../src/patch/strategic.js';
import { isConflict, goSprint, goStringCompare } from '../../src/patch/errors.js';
import { createCases, customCases, customRawCases, rawCases, rawExtensionCases, type K8sCase } from './strategic-k8s-cases.test.js';

const MERGE_ITEM = 'test.MergeItem';
const RETAIN_ITEM = 'test.RetainKeysMergeItem';
// struct{ Raw []byte }: an anonymous Go struct, whose name is empty
const JSON_ITEM = 'test.';

const str: TypeRef = { kind: 'scalar', scalar: 'string' };
const int: TypeRef = { kind: 'scalar', scalar: 'int64' };
const item: TypeRef = { kind: 'object', name: MERGE_ITEM };

function f(name: string, type: TypeRef, extra: Partial<FieldDecl> = {}): FieldDecl {
  return { name, type, optional: true, omitEmpty: true, nullable: type.kind !== 'scalar' && type.kind !== 'object', ...extra };
}

const TYPES = new Map<string, TypeDecl>([
  [
    MERGE_ITEM,
    {
      name: MERGE_ITEM,
      protoName: MERGE_ITEM,
      fields: [
        f('name', str),
        f('value', str),
        f('other', str),
        f('mergingList', { kind: 'array', items: item }, { patchStrategy: 'merge', patchMergeKey: 'name' }),
        f('nonMergingList', { kind: 'array', items: item }),
        f('mergingIntList', { kind: 'array', items: int }, { patchStrategy: 'merge' }),
        f('nonMergingIntList', { kind: 'array', items: int }),
        f('mergeItemPtr', item, { nullable: true, patchStrategy: 'merge', patchMergeKey: 'name' }),
        f('simpleMap', { kind: 'map', values: str }),
        f('replacingItem', { kind: 'special', special: 'RawExtension' }, { patchStrategy: 'replace' }),
        f('jsonItem', { kind: 'object', name: JSON_ITEM }),
        f('retainKeysMap', { kind: 'object', name: RETAIN_ITEM }, { patchStrategy: 'retainKeys' }),
        f('retainKeysMergingList', { kind: 'array', items: item }, { patchStrategy: 'merge,retainKeys', patchMergeKey: 'name' }),
      ],
    },
  ],
  [
    RETAIN_ITEM,
    {
      name: RETAIN_ITEM,
      protoName: RETAIN_ITEM,
      fields: [
        f('name', str),
        f('value', str),
        f('other', str),
        f('simpleMap', { kind: 'map', values: str }),
        f('mergingIntList', { kind: 'array', items: int }, { patchStrategy: 'merge' }),
        f('mergingList', { kind: 'array', items: item }, { patchStrategy: 'merge', patchMergeKey: 'name' }),
        f('nonMergingList', { kind: 'array', items: item }),
      ],
    },
  ],
  [JSON_ITEM, { name: JSON_ITEM, protoName: JSON_ITEM, fields: [f('Raw', { kind: 'scalar', scalar: 'bytes' })] }],
]);
const getType = (n: string) => TYPES.get(n);
const opts = { getType };

const apply = (doc: unknown, patch: unknown) => applyStrategicMergePatch(doc ?? {}, patch ?? {}, MERGE_ITEM, opts);
const twoWay = (o: unknown, m: unknown) => createTwoWayMergePatch(o, m, MERGE_ITEM, opts);
const threeWay = (o: unknown, m: unknown, c: unknown, overwrite: boolean) => createThreeWayMergePatch(o, m, c, MERGE_ITEM, overwrite, opts);

// ---- sortMergeListsByName, for the order-insensitive YAML cases ----

function fieldOf(typeName: string | undefined, key: string): FieldDecl | undefined {
  return typeName ? TYPES.get(typeName)?.fields.find((x) => x.name === key) : undefined;
}

function elemTypeName(fd: FieldDecl | undefined): string | undefined {
  if (!fd) return undefined;
  let t = fd.type;
  if (t.kind === 'array') t = t.items;
  return t.kind === 'object' ? t.name : undefined;
}

function sortScalars(s: unknown[]): unknown[] {
  const dedup: unknown[] = [];
  for (const v of s) if (!dedup.some((x) => x === v)) dedup.push(v);
  return dedup.sort((a, b) => goStringCompare(goSprint(a), goSprint(b)));
}

function sortMap(m: Record<string, unknown>, typeName: string | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(m)) {
    if (k === '$retainKeys' || k.startsWith('$deleteFromPrimitiveList')) out[k] = sortScalars(v as unknown[]);
    else if (k.startsWith('$setElementOrder') || k === '$patch') out[k] = v;
    else if (v && typeof v === 'object' && !Array.isArray(v)) out[k] = sortMap(v as Record<string, unknown>, elemTypeName(fieldOf(typeName, k)));
    else if (Array.isArray(v)) {
      const fd = fieldOf(typeName, k);
      if (fd?.patchStrategy?.split(',').includes('merge')) {
        if (v.length > 0 && v.every((x) => x && typeof x === 'object' && !Array.isArray(x))) {
          const sub = elemTypeName(fd);
          const key = fd.patchMergeKey ?? '';
          out[k] = v
            .map((x) => sortMap(x as Record<string, unknown>, sub))
            .sort((a, b) => goStringCompare(goSprint(a[key] ?? null), goSprint(b[key] ?? null)));
        } else out[k] = sortScalars(v);
      } else out[k] = v;
    } else out[k] = v;
  }
  return out;
}

const sorted = (v: unknown) => (v && typeof v === 'object' ? sortMap(v as Record<string, unknown>, MERGE_ITEM) : v);

// ---- the checks ----

function checkApply(c: K8sCase, original: unknown, patch: unknown, expected: unknown, canon: (v: unknown) => unknown = (v) => v): void {
  if (c.expectedError) {
    assert.throws(() => apply(original, patch), (e: Error) => e.message.includes(c.expectedError!), `expected error containing ${c.expectedError}`);
    return;
  }
  assert.deepEqual(canon(apply(original, patch)), canon(expected ?? null));
}

function runTwoWay(c: K8sCase, canon: (v: unknown) => unknown): void {
  const expectedResult = c.twoWayResult ?? c.modified;
  const patch = twoWay(c.original, c.modified);
  assert.deepEqual(canon(patch), canon(c.twoWay ?? null), 'two-way patch');
  checkApply(c, c.original, patch, expectedResult, canon);
}

function runThreeWay(c: K8sCase, canon: (v: unknown) => unknown): void {
  let patch: Record<string, unknown>;
  try {
    patch = threeWay(c.original, c.modified, c.current, false);
  } catch (e) {
    if (!isConflict(e)) throw e;
    assert.ok(c.description.includes('conflict'), `unexpected conflict: ${(e as Error).message}`);
    if (c.result === undefined) return;
    patch = threeWay(c.original, c.modified, c.current, true);
    assert.deepEqual(canon(patch), canon(c.threeWay ?? null), 'forced three-way patch');
    checkApply(c, c.current, patch, c.result, canon);
    return;
  }
  assert.ok(!c.description.includes('conflict') && c.result !== undefined, 'expected a conflict');
  assert.deepEqual(canon(patch), canon(c.threeWay ?? null), 'three-way patch');
  checkApply(c, c.current, patch, c.result, canon);
}

for (const c of rawCases.concat(rawExtensionCases)) {
  test(`k8s raw: ${c.description} / two-way`, () => runTwoWay(c, (v) => v));
  test(`k8s raw: ${c.description} / three-way`, () => runThreeWay(c, (v) => v));
}

for (const c of createCases) {
  test(`k8s: ${c.description} / two-way`, () => runTwoWay(c, sorted));
  test(`k8s: ${c.description} / three-way`, () => runThreeWay(c, sorted));
}

for (const c of customCases) {
  test(`k8s custom: ${c.description}`, () => checkApply(c, sorted(c.original), sorted(c.twoWay), sorted(c.modified), sorted));
}

for (const c of customRawCases) {
  test(`k8s custom raw: ${c.description}`, () => checkApply(c, c.original, c.twoWay, c.modified));
}

// TestUnknownField: fields MergeItem does not declare
const unknownField: Record<string, { o: string; c: string; m: string; tw?: string; twr?: string; th?: string; thr?: string; err?: string }> = {
  'no diff': {
    o: '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
    c: '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
    m: '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
    tw: '{}',
    twr: '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
    th: '{}',
    thr: '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
  },
  'no diff even if modified null': {
    o: '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
    c: '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
    m: '{"array":[1,2,3],"complex":{"nested":true},"complex_nullable":{"key":null},"name":"foo","scalar":true}',
    tw: '{"complex_nullable":{"key":null}}',
    twr: '{"array":[1,2,3],"complex":{"nested":true},"complex_nullable":{},"name":"foo","scalar":true}',
    th: '{"complex_nullable":{"key":null}}',
    thr: '{"array":[1,2,3],"complex":{"nested":true},"complex_nullable":{},"name":"foo","scalar":true}',
  },
  'discard nulls in nested and adds not nulls': {
    o: '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
    c: '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
    m: '{"array":[1,2,3],"complex":{"nested":true},"complex_nullable":{"key":{"keynotnull":"value","keynull":null}},"name":"foo","scalar":true}',
    tw: '{"complex_nullable":{"key":{"keynotnull":"value","keynull":null}}}',
    twr: '{"array":[1,2,3],"complex":{"nested":true},"complex_nullable":{"key":{"keynotnull":"value"}},"name":"foo","scalar":true}',
    th: '{"complex_nullable":{"key":{"keynotnull":"value","keynull":null}}}',
    thr: '{"array":[1,2,3],"complex":{"nested":true},"complex_nullable":{"key":{"keynotnull":"value"}},"name":"foo","scalar":true}',
  },
  'discard if modified all nulls': {
    o: '{}',
    c: '{}',
    m: '{"complex":{"nested":null}}',
    tw: '{"complex":{"nested":null}}',
    twr: '{"complex":{}}',
    th: '{"complex":{"nested":null}}',
    thr: '{"complex":{}}',
  },
  'add only not nulls': {
    o: '{}',
    c: '{}',
    m: '{"complex":{"nested":null,"nested2":"foo"}}',
    tw: '{"complex":{"nested":null,"nested2":"foo"}}',
    twr: '{"complex":{"nested2":"foo"}}',
    th: '{"complex":{"nested":null,"nested2":"foo"}}',
    thr: '{"complex":{"nested2":"foo"}}',
  },
  'null values in original are preserved': {
    o: '{"thing":null}',
    c: '{"thing":null}',
    m: '{"nested":{"value":5},"thing":null}',
    tw: '{"nested":{"value":5}}',
    twr: '{"nested":{"value":5},"thing":null}',
    th: '{"nested":{"value":5}}',
    thr: '{"nested":{"value":5},"thing":null}',
  },
  'nested null values in original are preserved': {
    o: '{"complex":{"key":null},"thing":null}',
    c: '{"complex":{"key":null},"thing":null}',
    m: '{"complex":{"key":null},"nested":{"value":5},"thing":null}',
    tw: '{"nested":{"value":5}}',
    twr: '{"complex":{"key":null},"nested":{"value":5},"thing":null}',
    th: '{"nested":{"value":5}}',
    thr: '{"complex":{"key":null},"nested":{"value":5},"thing":null}',
  },
  'add empty slices': {
    o: '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
    c: '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
    m: '{"array":[1,2,3],"complex":{"nested":true},"complex_nullable":[],"name":"foo","scalar":true}',
    tw: '{"complex_nullable":[]}',
    twr: '{"array":[1,2,3],"complex":{"nested":true},"complex_nullable":[],"name":"foo","scalar":true}',
    th: '{"complex_nullable":[]}',
    thr: '{"array":[1,2,3],"complex":{"nested":true},"complex_nullable":[],"name":"foo","scalar":true}',
  },
  'filter nulls from nested slices': {
    o: '{}',
    c: '{}',
    m: '{"complex_nullable":[{"inner_one":{"key_one":"foo","key_two":null}}]}',
    tw: '{"complex_nullable":[{"inner_one":{"key_one":"foo","key_two":null}}]}',
    twr: '{"complex_nullable":[{"inner_one":{"key_one":"foo"}}]}',
    th: '{"complex_nullable":[{"inner_one":{"key_one":"foo","key_two":null}}]}',
    thr: '{"complex_nullable":[{"inner_one":{"key_one":"foo"}}]}',
  },
  'filter if slice is all empty': {
    o: '{}',
    c: '{}',
    m: '{"complex_nullable":[{"inner_one":{"key_one":null,"key_two":null}}]}',
    tw: '{"complex_nullable":[{"inner_one":{"key_one":null,"key_two":null}}]}',
    twr: '{"complex_nullable":[{"inner_one":{}}]}',
    th: '{"complex_nullable":[{"inner_one":{"key_one":null,"key_two":null}}]}',
    thr: '{"complex_nullable":[{"inner_one":{}}]}',
  },
  'not filter nulls from non-associative slice': {
    o: '{}',
    c: '{}',
    m: '{"complex_nullable":["key1",null,"key2"]}',
    tw: '{"complex_nullable":["key1",null,"key2"]}',
    twr: '{"complex_nullable":["key1",null,"key2"]}',
    th: '{"complex_nullable":["key1",null,"key2"]}',
    thr: '{"complex_nullable":["key1",null,"key2"]}',
  },
  'added only': {
    o: '{"name":"foo"}',
    c: '{"name":"foo"}',
    m: '{"name":"foo","scalar":true,"complex":{"nested":true},"array":[1,2,3]}',
    tw: '{"array":[1,2,3],"complex":{"nested":true},"scalar":true}',
    twr: '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
    th: '{"array":[1,2,3],"complex":{"nested":true},"scalar":true}',
    thr: '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
  },
  'removed only': {
    o: '{"name":"foo","scalar":true,"complex":{"nested":true}}',
    c: '{"name":"foo","scalar":true,"complex":{"nested":true},"array":[1,2,3]}',
    m: '{"name":"foo"}',
    tw: '{"complex":null,"scalar":null}',
    twr: '{"name":"foo"}',
    th: '{"complex":null,"scalar":null}',
    thr: '{"array":[1,2,3],"name":"foo"}',
  },
  diff: {
    o: '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
    c: '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
    m: '{"array":[1,2,3],"complex":{"nested":false},"name":"foo","scalar":true}',
    err: 'unable to find api field',
  },
  json: {
    o: '{"name":"foo","jsonItem":{"nested":{"nested2":{"nested3":{}}}}}',
    c: '{"name":"foo","jsonItem":{"nested":{"nested2":{"nested3":{}}}}}',
    m: '{"name":"foo","jsonItem":{"nested":{"nested2":{"nested3":{"a":"b"}}}}}',
    err: 'unable to find api field',
  },
};

for (const [name, tc] of Object.entries(unknownField)) {
  test(`k8s unknown field: ${name}`, () => {
    const [o, c, m] = [JSON.parse(tc.o), JSON.parse(tc.c), JSON.parse(tc.m)];
    if (tc.err) {
      assert.throws(() => twoWay(o, m), (e: Error) => e.message.includes(tc.err!));
      assert.throws(() => threeWay(o, m, c, false), (e: Error) => e.message.includes(tc.err!));
      return;
    }
    const tw = twoWay(o, m);
    assert.deepEqual(tw, JSON.parse(tc.tw!));
    assert.deepEqual(apply(o, tw), JSON.parse(tc.twr!));
    const th = threeWay(o, m, c, false);
    assert.deepEqual(th, JSON.parse(tc.th!));
    assert.deepEqual(apply(c, th), JSON.parse(tc.thr!));
  });
}

test('k8s unknown field: the error names the Go struct (an anonymous struct has no name)', () => {
  const o = JSON.parse(unknownField.json!.o);
  const m = JSON.parse(unknownField.json!.m);
  assert.throws(() => twoWay(o, m), { message: 'unable to find api field in struct  for the json field "nested"' });
  assert.throws(() => apply(o, { jsonItem: { nested: { x: 1 } } }), { code: 500, message: 'unable to find api field in struct  for the json field "nested"' });
  assert.throws(() => apply({ complex: { a: 1 } }, { complex: { a: 2 } }), { code: 500, message: 'unable to find api field in struct MergeItem for the json field "complex"' });
});
