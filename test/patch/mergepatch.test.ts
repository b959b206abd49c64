// JSON merge patch: RFC 7386 Appendix A (in both modes), Kubernetes' handling around it
// (evanphx/json-patch v4 MergePatch, the API server's decoding), and the merge patches kubectl
// computes (CreateMergePatch, CreateThreeWayJSONMergePatch).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyMergePatch,
  createMergePatch,
  createThreeWayJSONMergePatch,
  hasConflicts,
  mergeMergePatches,
} from '../../src/patch/mergepatch.js';
import { PatchError, isConflict, isPreconditionFailed } from '../../src/patch/errors.js';
import { requireKeyUnchanged, requireMetadataKeyUnchanged } from '../../src/patch/strategic.js';

const j = (s: string) => JSON.parse(s);

// RFC 7386 Appendix A: [target, patch, result]
const appendixA: [string, string, string][] = [
  ['{"a":"b"}', '{"a":"c"}', '{"a":"c"}'],
  ['{"a":"b"}', '{"b":"c"}', '{"a":"b","b":"c"}'],
  ['{"a":"b"}', '{"a":null}', '{}'],
  ['{"a":"b","b":"c"}', '{"a":null}', '{"b":"c"}'],
  ['{"a":["b"]}', '{"a":"c"}', '{"a":"c"}'],
  ['{"a":"c"}', '{"a":["b"]}', '{"a":["b"]}'],
  ['{"a":{"b":"c"}}', '{"a":{"b":"d","c":null}}', '{"a":{"b":"d"}}'],
  ['{"a":[{"b":"c"}]}', '{"a":[1]}', '{"a":[1]}'],
  ['["a","b"]', '["c","d"]', '["c","d"]'],
  ['{"a":"b"}', '["c"]', '["c"]'],
  ['{"a":"foo"}', 'null', 'null'],
  ['{"a":"foo"}', '"bar"', '"bar"'],
  ['{"e":null}', '{"a":1}', '{"e":null,"a":1}'],
  ['[1,2]', '{"a":"b","c":null}', '{"a":"b"}'],
  ['{}', '{"a":{"bb":{"ccc":null}}}', '{"a":{"bb":{}}}'],
];

test('RFC 7386 Appendix A, literally (rfc7386 mode)', () => {
  for (const [t, p, r] of appendixA) assert.deepEqual(applyMergePatch(j(t), j(p), { rfc7386: true }), j(r), `${t} + ${p}`);
});

test('RFC 7386 Appendix A as Kubernetes applies it: object patches as the RFC says', () => {
  for (const [t, p, r] of appendixA) {
    if (!p.startsWith('{')) continue;
    assert.deepEqual(applyMergePatch(j(t), j(p)), j(r), `${t} + ${p}`);
  }
});

test('Kubernetes: a null, string, number or bool patch is 400 "Invalid JSON Patch"', () => {
  for (const p of [null, 'bar', 5, true]) {
    assert.throws(() => applyMergePatch({ a: 'foo' }, p, { fieldValidation: 'Ignore' }), (e: unknown) => {
      assert.ok(e instanceof PatchError);
      assert.equal(e.code, 400);
      assert.equal(e.reason, 'BadRequest');
      assert.equal(e.message, 'Invalid JSON Patch');
      return true;
    });
  }
  // with the default fieldValidation, null decodes into the handler's map and still reaches the library
  assert.throws(() => applyMergePatch({ a: 'foo' }, null), { code: 400, message: 'Invalid JSON Patch' });
});

test('Kubernetes: with fieldValidation Warn/Strict a non-object patch fails the handler decode', () => {
  const cases: [unknown, string][] = [
    [['c'], 'array'],
    ['bar', 'string'],
    [5, 'number'],
    [false, 'bool'],
  ];
  for (const [p, kind] of cases) {
    for (const fieldValidation of ['Warn', 'Strict'] as const) {
      assert.throws(() => applyMergePatch({ a: 'b' }, p, { fieldValidation }), {
        code: 400,
        reason: 'BadRequest',
        message: `error decoding patch: json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`,
      });
    }
  }
});

test('Kubernetes with fieldValidation Ignore: an array patch replaces the document (nulls pruned from its objects)', () => {
  assert.deepEqual(applyMergePatch({ a: 'b' }, ['c'], { fieldValidation: 'Ignore' }), ['c']);
  assert.deepEqual(applyMergePatch({ a: 'b' }, [{ x: null, y: 1 }, null], { fieldValidation: 'Ignore' }), [{ y: 1 }, null]);
});

test('evanphx: nulls in arrays are values', () => {
  const cases: [string, string, string][] = [
    ['{"a": [ {"b":"c"} ] }', '{"a": [1]}', '{"a": [1]}'],
    ['{"a": [ {"b":"c"} ] }', '{"a": [null, 1]}', '{"a": [null, 1]}'],
    ['{"a":["b"]}', '{"a": ["b", null]}', '{"a":["b", null]}'],
    ['{"a":[]}', '{"a": ["b", null, null, "a"]}', '{"a":["b", null, null, "a"]}'],
  ];
  for (const [d, p, r] of cases) assert.deepEqual(applyMergePatch(j(d), j(p)), j(r));
});

test('evanphx: nulls inside objects the patch brings are pruned, except in an array replacing an object', () => {
  // added where nothing was (or null was): pruned, also inside arrays
  assert.deepEqual(applyMergePatch({}, { a: { b: null, c: [{ d: null, e: 1 }] } }), { a: { c: [{ e: 1 }] } });
  assert.deepEqual(applyMergePatch({ a: null }, { a: { b: null, c: 1 } }), { a: { c: 1 } });
  // replacing a scalar: pruned
  assert.deepEqual(applyMergePatch({ a: 1 }, { a: [{ x: null }] }), { a: [{}] });
  // replacing an object by an array: kept as sent (the library returns the patch value untouched)
  assert.deepEqual(applyMergePatch({ a: { b: 1 } }, { a: [{ x: null }] }), { a: [{ x: null }] });
  // the RFC keeps array contents whole in every case
  assert.deepEqual(applyMergePatch({}, { a: [{ x: null }] }, { rfc7386: true }), { a: [{ x: null }] });
});

test('evanphx table: replace, recurse, keep others, null document members', () => {
  assert.deepEqual(applyMergePatch(j('{ "title": "hello" }'), j('{ "title": "goodbye" }')), { title: 'goodbye' });
  assert.deepEqual(applyMergePatch(j('{ "title": "hello", "age": 18 }'), j('{ "title": "goodbye" }')), { title: 'goodbye', age: 18 });
  assert.deepEqual(applyMergePatch(j('{ "title": null }'), j('{ "title": {"foo": "bar"} }')), { title: { foo: 'bar' } });
  assert.deepEqual(applyMergePatch(j('{ "person": { "title": "hello", "age": 18 } }'), j('{ "person": { "title": "goodbye" } }')), {
    person: { title: 'goodbye', age: 18 },
  });
  assert.deepEqual(applyMergePatch(j('{ "array": ["one", "two"] }'), j('{ "array": [] }')), { array: [] });
  assert.deepEqual(applyMergePatch(j('[1]'), j('{ "a": 1 }')), { a: 1 });
  assert.deepEqual(applyMergePatch(j('{ "a": 1, "b": 1 }'), j('{ "a": 2 }')), { a: 2, b: 1 });
  assert.deepEqual(applyMergePatch(j('{"a":"b"}'), j('{"a/b~c":1}')), { a: 'b', 'a/b~c': 1 });
});

test('a null document is an internal error (500), as the library says "Invalid JSON Document"', () => {
  assert.throws(() => applyMergePatch(null, { a: 1 }), { code: 500, message: 'Invalid JSON Document' });
});

test('Kubernetes objects: labels, annotations, lists replaced whole', () => {
  const pod = {
    metadata: { name: 'p', labels: { app: 'a', tier: 'web' }, annotations: { 'example.com/x': '1' }, finalizers: ['a', 'b'] },
    spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }] }] },
  };
  const out = applyMergePatch(pod, {
    metadata: { labels: { tier: null, env: 'prod' }, annotations: null, finalizers: ['c'] },
    spec: { containers: [{ name: 'c', image: 'nginx:2' }] },
  });
  assert.deepEqual(out, {
    metadata: { name: 'p', labels: { app: 'a', env: 'prod' }, finalizers: ['c'] },
    spec: { containers: [{ name: 'c', image: 'nginx:2' }] },
  });
  assert.deepEqual(pod.metadata.labels, { app: 'a', tier: 'web' }, 'input untouched');
  // deleting what is not there is no error
  assert.deepEqual(applyMergePatch({ a: 1 }, { b: null }), { a: 1 });
  // an empty patch changes nothing
  assert.deepEqual(applyMergePatch(pod, {}), pod);
});

test('createMergePatch (evanphx CreateMergePatch)', () => {
  assert.deepEqual(createMergePatch({ title: 'hello' }, { title: 'goodbye' }), { title: 'goodbye' });
  assert.deepEqual(createMergePatch({ title: 'hello', age: 18 }, { title: 'hello' }), { age: null });
  assert.deepEqual(createMergePatch({ a: [1, 2] }, { a: [1, 2] }), {});
  assert.deepEqual(createMergePatch({ a: [1, 2] }, { a: [2, 1] }), { a: [2, 1] });
  assert.deepEqual(createMergePatch({ a: { b: 1, c: 2 } }, { a: { b: 1, c: 3, d: 4 } }), { a: { c: 3, d: 4 } });
  assert.deepEqual(createMergePatch({ a: { b: 1 } }, { a: 'x' }), { a: 'x' });
  assert.deepEqual(createMergePatch({ a: null }, { a: null }), {});
  assert.deepEqual(createMergePatch({ a: null }, { a: 1 }), { a: 1 });
  assert.deepEqual(createMergePatch({ a: 1 }, { a: null }), { a: null });
  assert.deepEqual(createMergePatch([{ a: 1 }, { b: 1 }], [{ a: 2 }, { b: 1 }]), [{ a: 2 }, {}]);
  assert.throws(() => createMergePatch([{ a: 1 }], [{ a: 1 }, {}]), { message: 'Invalid JSON Document' });
  assert.throws(() => createMergePatch([{ a: 1 }], { a: 1 }), { message: 'Mismatched JSON Documents' });
  // the patch turns original into modified
  const o = { a: 1, b: { c: [1], d: 'x' }, e: null };
  const m = { a: 2, b: { c: [1, 2] }, f: { g: true } };
  assert.deepEqual(applyMergePatch(o, createMergePatch(o, m)), m);
});

test('mergeMergePatches keeps the nulls of both', () => {
  assert.deepEqual(mergeMergePatches({ a: null, b: { c: 1 } }, { b: { c: null, d: 2 }, e: 3 }), { a: null, b: { c: null, d: 2 }, e: 3 });
});

test('createThreeWayJSONMergePatch: kubectl apply for custom resources', () => {
  const original = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1, color: 'red', tags: ['a'] } };
  const modified = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 2, tags: ['a', 'b'] } };
  const current = { ...original, metadata: { name: 'w', uid: 'u1', resourceVersion: '7' }, spec: { size: 1, color: 'red', tags: ['a'], extra: true } };
  const patch = createThreeWayJSONMergePatch(original, modified, current);
  assert.deepEqual(patch, { spec: { size: 2, color: null, tags: ['a', 'b'] } });
  assert.deepEqual(applyMergePatch(current, patch), {
    ...current,
    spec: { size: 2, tags: ['a', 'b'], extra: true },
  });
  // nothing to do
  assert.deepEqual(createThreeWayJSONMergePatch(original, original, current), {});
  // first apply (no last-applied): only additions and changes
  assert.deepEqual(createThreeWayJSONMergePatch(null, modified, current), { spec: { size: 2, tags: ['a', 'b'] } });
  // an explicitly empty map in modified is a value
  assert.deepEqual(createThreeWayJSONMergePatch({}, { spec: { m: {} } }, { spec: { m: { x: 1 } } }), {});
  assert.deepEqual(createThreeWayJSONMergePatch({}, { spec: { m: {} } }, {}), { spec: { m: {} } });
});

test('createThreeWayJSONMergePatch: conflicts and preconditions', () => {
  // modified sets a field that the deletions remove: only possible when modified both has and lacks it,
  // i.e. a deletion and an addition of the same key through different paths
  assert.equal(hasConflicts({ a: 1 }, { a: null }), true);
  assert.equal(hasConflicts({ a: { b: 1 } }, { a: { c: null } }), false);
  assert.equal(hasConflicts([1, 2], [1, 2]), false);
  assert.equal(hasConflicts([1, 2], [1]), true);
  try {
    createThreeWayJSONMergePatch({ a: 1 }, { b: 2 }, { a: 1 }, [requireKeyUnchanged('a')]);
    assert.fail('expected a precondition failure');
  } catch (e) {
    assert.ok(isPreconditionFailed(e));
    assert.equal((e as Error).message, 'precondition failed for: map[a:<nil> b:2]');
  }
  assert.throws(
    () => createThreeWayJSONMergePatch({ metadata: { name: 'a' } }, { metadata: { name: 'b' } }, { metadata: { name: 'a' } }, [requireMetadataKeyUnchanged('name')]),
    (e: unknown) => isPreconditionFailed(e),
  );
  assert.equal(isConflict(new Error('x')), false);
});
