// JSON patch: RFC 6902 Appendix A, the behaviour of evanphx/json-patch v4 (its own test tables
// are facts here) and what kube-apiserver adds around it (decoding, limits, status codes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyJSONPatch,
  escapePointerToken,
  goJSONSize,
  jsonPatchStrictErrors,
  jsonPointer,
  JSON_PATCH_MAX_COPY_BYTES,
  MAX_JSON_PATCH_OPERATIONS,
  type JSONPatchOptions,
} from '../../src/patch/jsonpatch.js';
import { asRequestError, GENERIC_422_MESSAGE, PANIC_MESSAGE, PatchError } from '../../src/patch/errors.js';
import { StatusError } from '../../src/machinery/errors.js';

const j = (s: string) => JSON.parse(s);

/** Expects a 422 PatchError whose detail (the library's words) is exactly `detail`. */
function fails(doc: unknown, patch: unknown, detail: string, options?: JSONPatchOptions): void {
  assert.throws(
    () => applyJSONPatch(doc, patch, options),
    (e: unknown) => {
      assert.ok(e instanceof PatchError);
      assert.equal(e.code, 422);
      assert.equal(e.reason, 'Invalid');
      assert.equal(e.message, GENERIC_422_MESSAGE);
      assert.equal(e.detail, detail);
      return true;
    },
  );
}

function badRequest(patch: unknown, message: string, options?: JSONPatchOptions): void {
  assert.throws(() => applyJSONPatch({}, patch, options), (e: unknown) => {
    assert.ok(e instanceof PatchError);
    assert.equal(e.code, 400);
    assert.equal(e.reason, 'BadRequest');
    assert.equal(e.message, message);
    return true;
  });
}

// ---- RFC 6902 Appendix A ----

const appendixA: { name: string; doc: string; patch: string; result?: string; error?: string }[] = [
  { name: 'A.1 adding an object member', doc: '{"foo":"bar"}', patch: '[{"op":"add","path":"/baz","value":"qux"}]', result: '{"baz":"qux","foo":"bar"}' },
  { name: 'A.2 adding an array element', doc: '{"foo":["bar","baz"]}', patch: '[{"op":"add","path":"/foo/1","value":"qux"}]', result: '{"foo":["bar","qux","baz"]}' },
  { name: 'A.3 removing an object member', doc: '{"baz":"qux","foo":"bar"}', patch: '[{"op":"remove","path":"/baz"}]', result: '{"foo":"bar"}' },
  { name: 'A.4 removing an array element', doc: '{"foo":["bar","qux","baz"]}', patch: '[{"op":"remove","path":"/foo/1"}]', result: '{"foo":["bar","baz"]}' },
  { name: 'A.5 replacing a value', doc: '{"baz":"qux","foo":"bar"}', patch: '[{"op":"replace","path":"/baz","value":"boo"}]', result: '{"baz":"boo","foo":"bar"}' },
  {
    name: 'A.6 moving a value',
    doc: '{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}',
    patch: '[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]',
    result: '{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}',
  },
  {
    name: 'A.7 moving an array element',
    doc: '{"foo":["all","grass","cows","eat"]}',
    patch: '[{"op":"move","from":"/foo/1","path":"/foo/3"}]',
    result: '{"foo":["all","cows","eat","grass"]}',
  },
  {
    name: 'A.8 testing a value: success',
    doc: '{"baz":"qux","foo":["a",2,"c"]}',
    patch: '[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]',
    result: '{"baz":"qux","foo":["a",2,"c"]}',
  },
  { name: 'A.9 testing a value: error', doc: '{"baz":"qux"}', patch: '[{"op":"test","path":"/baz","value":"bar"}]', error: 'testing value /baz failed: test failed' },
  {
    name: 'A.10 adding a nested member object',
    doc: '{"foo":"bar"}',
    patch: '[{"op":"add","path":"/child","value":{"grandchild":{}}}]',
    result: '{"foo":"bar","child":{"grandchild":{}}}',
  },
  {
    name: 'A.11 ignoring unrecognized elements',
    doc: '{"foo":"bar"}',
    patch: '[{"op":"add","path":"/baz","value":"qux","xyz":123}]',
    result: '{"foo":"bar","baz":"qux"}',
  },
  {
    name: 'A.12 adding to a nonexistent target',
    doc: '{"foo":"bar"}',
    patch: '[{"op":"add","path":"/baz/bat","value":"qux"}]',
    error: 'add operation does not apply: doc is missing path: "/baz/bat": missing value',
  },
  {
    // the RFC asks for an error; Go (and JSON.parse) keep the last "op", so this removes /baz
    name: 'A.13 invalid JSON patch document (duplicate op: the last one wins)',
    doc: '{"foo":"bar"}',
    patch: '[{"op":"add","path":"/baz","value":"qux","op":"remove"}]',
    error: "error in remove for path: '/baz': Unable to remove nonexistent key: baz: missing value",
  },
  { name: 'A.14 ~ escape ordering', doc: '{"/":9,"~1":10}', patch: '[{"op":"test","path":"/~01","value":10}]', result: '{"/":9,"~1":10}' },
  { name: 'A.15 comparing strings and numbers', doc: '{"/":9,"~1":10}', patch: '[{"op":"test","path":"/~01","value":"10"}]', error: 'testing value /~01 failed: test failed' },
  { name: 'A.16 adding an array value', doc: '{"foo":["bar"]}', patch: '[{"op":"add","path":"/foo/-","value":["abc","def"]}]', result: '{"foo":["bar",["abc","def"]]}' },
];

for (const c of appendixA) {
  test(`RFC 6902 ${c.name}`, () => {
    if (c.error) fails(j(c.doc), j(c.patch), c.error);
    else assert.deepEqual(applyJSONPatch(j(c.doc), j(c.patch)), j(c.result!));
  });
}

test('A.11: the unknown member is a strict decoding error (a warning by default)', () => {
  assert.deepEqual(jsonPatchStrictErrors(j('[{"op":"add","path":"/baz","value":"qux","xyz":123}]')), ['json patch unknown field "[0].xyz"']);
  assert.deepEqual(jsonPatchStrictErrors(j('[{"op":"add","path":"/a","value":1},{"op":"remove","path":"/b","Path":"/c","extra":{}}]')), [
    'json patch unknown field "[1].Path"',
    'json patch unknown field "[1].extra"',
  ]);
  assert.deepEqual(jsonPatchStrictErrors(j('[{"op":"test","path":"/a","value":{"x":1},"from":"/b"}]')), []);
});

// ---- evanphx/json-patch v4's own tables ----

const A48 = 'A'.repeat(48);
const evanphxCases: [doc: string, patch: string, result: string][] = [
  ['{ "foo": "bar"}', '[{ "op": "add", "path": "/baz", "value": "qux" }]', '{"baz":"qux","foo":"bar"}'],
  ['{ "foo": [ "bar", "baz" ] }', '[{ "op": "add", "path": "/foo/1", "value": "qux" }]', '{ "foo": [ "bar", "qux", "baz" ] }'],
  ['{ "foo": [ "bar", "baz" ] }', '[{ "op": "add", "path": "/foo/-1", "value": "qux" }]', '{ "foo": [ "bar", "baz", "qux" ] }'],
  ['{ "foo": [ "bar", "qux", "baz" ] }', '[ { "op": "remove", "path": "/foo/1" } ]', '{ "foo": [ "bar", "baz" ] }'],
  ['{ "foo": [ "all", "grass", "cows", "eat" ] }', '[ { "op": "move", "from": "/foo/1", "path": "/foo/2" } ]', '{ "foo": [ "all", "cows", "grass", "eat" ] }'],
  ['{ "foo": "bar", "qux": { "baz": 1, "bar": null } }', '[ { "op": "remove", "path": "/qux/bar" } ]', '{ "foo": "bar", "qux": { "baz": 1 } }'],
  ['{ "foo": "bar" }', '[ { "op": "add", "path": "/baz", "value": null } ]', '{ "baz": null, "foo": "bar" }'],
  ['{ "foo": ["bar","qux","baz"]}', '[ { "op": "replace", "path": "/foo/1", "value": "bum"}]', '{ "foo": ["bar", "bum","baz"]}'],
  ['[ {"foo": ["bar","qux","baz"]}]', '[ { "op": "replace", "path": "/0/foo/0", "value": "bum"}]', '[ {"foo": ["bum","qux","baz"]}]'],
  ['[ {"foo": ["bar","qux","baz"], "bar": ["qux","baz"]}]', '[ { "op": "copy", "from": "/0/foo/0", "path": "/0/bar/0"}]', '[ {"foo": ["bar","qux","baz"], "bar": ["bar", "qux", "baz"]}]'],
  ['[ {"foo": ["bar","qux","baz"], "bar": ["qux","baz"]}]', '[ { "op": "copy", "from": "/0/foo/0", "path": "/0/bar"}]', '[ {"foo": ["bar","qux","baz"], "bar": "bar"}]'],
  ['{ "foo": ["bar"]}', '[{"op": "copy", "path": "/foo/0", "from": "/foo"}]', '{ "foo": [["bar"], "bar"]}'],
  ['{ "foo": ["bar","qux","baz"]}', '[ { "op": "remove", "path": "/foo/-2"}]', '{ "foo": ["bar", "baz"]}'],
  ['{ "foo": []}', '[ { "op": "add", "path": "/foo/-1", "value": "qux"}]', '{ "foo": ["qux"]}'],
  ['{ "bar": [{"baz": null}]}', '[ { "op": "replace", "path": "/bar/0/baz", "value": 1 } ]', '{ "bar": [{"baz": 1}]}'],
  ['{ "bar": [1]}', '[ { "op": "replace", "path": "/bar/0", "value": null } ]', '{ "bar": [null]}'],
  [
    '{"id":"00000000-0000-0000-0000-000000000000","parentID":"00000000-0000-0000-0000-000000000000"}',
    '[{"op":"test","path":"","value":{"id":"00000000-0000-0000-0000-000000000000","parentID":"00000000-0000-0000-0000-000000000000"}},{"op":"replace","path":"","value":{"id":"759981e8","originalID":"bar","parentID":"00000000-0000-0000-0000-000000000000"}}]',
    '{"id":"759981e8","originalID":"bar","parentID":"00000000-0000-0000-0000-000000000000"}',
  ],
];

test('evanphx cases apply', () => {
  for (const [doc, patch, result] of evanphxCases) assert.deepEqual(applyJSONPatch(j(doc), j(patch)), j(result), patch);
});

test('evanphx copy size: each copy of a 48-char string costs 50 bytes; a 100-byte limit allows two', () => {
  const doc = { foo: ['A', A48] };
  const two = [
    { op: 'copy', path: '/foo/-', from: '/foo/1' },
    { op: 'copy', path: '/foo/-', from: '/foo/1' },
  ];
  assert.deepEqual(applyJSONPatch(doc, two, { maxCopyBytes: 100 }), { foo: ['A', A48, A48, A48] });
  fails({ foo: ['A', 'A'.repeat(49)] }, two, 'Unable to complete the copy, the accumulated size increase of copy is 102, exceeding the limit 100', {
    maxCopyBytes: 100,
  });
});

const evanphxBad: [doc: string, patch: string, detail: string][] = [
  ['{ "foo": "bar" }', '[ { "op": "add", "path": "/baz/bat", "value": "qux" } ]', 'add operation does not apply: doc is missing path: "/baz/bat": missing value'],
  ['{ "a": { "b": { "d": 1 } } }', '[ { "op": "remove", "path": "/a/b/c" } ]', "error in remove for path: '/a/b/c': Unable to remove nonexistent key: c: missing value"],
  ['{ "a": { "b": { "d": 1 } } }', '[ { "op": "move", "from": "/a/b/c", "path": "/a/b/e" } ]', "error in move for path: 'c': Unable to remove nonexistent key: c: missing value"],
  ['{ "a": { "b": [1] } }', '[ { "op": "remove", "path": "/a/b/1" } ]', "error in remove for path: '/a/b/1': Unable to access invalid index: 1: invalid index referenced"],
  ['{ "a": { "b": [1] } }', '[ { "op": "move", "from": "/a/b/1", "path": "/a/b/2" } ]', "error in move for path: '1': Unable to access invalid index: 1: invalid index referenced"],
  ['{ "foo": "bar" }', '[ { "op": "add", "pathz": "/baz", "value": "qux" } ]', 'add operation failed to decode path: missing value'],
  ['{ "foo": "bar" }', '[ { "op": "add", "path": "", "value": "qux" } ]', 'add operation does not apply: doc is missing path: "": missing value'],
  ['{ "foo": ["bar","baz"]}', '[ { "op": "replace", "path": "/foo/2", "value": "bum"}]', 'replace operation does not apply: doc is missing key: /foo/2: missing value'],
  ['{ "foo": ["bar","baz"]}', '[ { "op": "add", "path": "/foo/-4", "value": "bum"}]', "error in add for path: '/foo/-4': Unable to access invalid index: -4: invalid index referenced"],
  ['{ "name":{ "foo": "bat", "qux": "bum"}}', '[ { "op": "replace", "path": "/foo/bar", "value":"baz"}]', 'replace operation does not apply: doc is missing path: /foo/bar: missing value'],
  ['{ "foo": ["bar"]}', '[ {"op": "add", "path": "/foo/2", "value": "bum"}]', "error in add for path: '/foo/2': Unable to access invalid index: 2: invalid index referenced"],
  ['{ "foo": []}', '[ {"op": "remove", "path": "/foo/-"}]', `error in remove for path: '/foo/-': strconv.Atoi: parsing "-": invalid syntax`],
  ['{ "foo": []}', '[ {"op": "remove", "path": "/foo/-1"}]', "error in remove for path: '/foo/-1': Unable to access invalid index: -1: invalid index referenced"],
  ['{ "foo": ["bar"]}', '[ {"op": "remove", "path": "/foo/-2"}]', "error in remove for path: '/foo/-2': Unable to access invalid index: -2: invalid index referenced"],
  ['{}', '[ {"op":null,"path":""} ]', 'Unexpected kind: unknown'],
  ['{}', '[ {"op":"add","path":null} ]', 'add operation failed to decode path: missing value'],
  ['{}', '[ { "op": "copy", "from": null }]', 'copy operation failed to decode from: operation, missing from field: missing value'],
  ['{ "foo": ["bar"]}', '[{"op": "copy", "path": "/foo/6666666666", "from": "/"}]', 'error while adding value during copy: Unable to access invalid index: 6666666666: invalid index referenced'],
  ['{ "foo": ["bar"]}', '[{"op": "copy", "path": "/foo/2", "from": "/foo/0"}]', 'error while adding value during copy: Unable to access invalid index: 2: invalid index referenced'],
  [
    '{ "foo": [ "all", "grass", "cows", "eat" ] }',
    '[ { "op": "move", "from": "/foo/1", "path": "/foo/4" } ]',
    "error in move for path: '/foo/4': Unable to access invalid index: 4: invalid index referenced",
  ],
];

test('evanphx bad cases fail with its words (422 from the API server)', () => {
  for (const [doc, patch, detail] of evanphxBad) fails(j(doc), j(patch), detail, { fieldValidation: 'Ignore' });
});

test('evanphx test operation table', () => {
  const pass: [string, string][] = [
    ['{"baz":"qux","foo":["a",2,"c"]}', '[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]'],
    ['{"baz":"qux"}', '[{"op":"test","path":"/foo","value":null}]'],
    ['{"foo":null}', '[{"op":"test","path":"/foo","value":null}]'],
    ['{"baz/foo":"qux"}', '[{"op":"test","path":"/baz~1foo","value":"qux"}]'],
    ['{"baz":[]}', '[{"op":"test","path":"/foo"}]'],
  ];
  for (const [doc, patch] of pass) assert.deepEqual(applyJSONPatch(j(doc), j(patch)), j(doc), patch);
  const fail: [string, string, string][] = [
    ['{"baz":"qux"}', '[{"op":"test","path":"/baz","value":"bar"}]', '/baz'],
    ['{"baz":"qux","foo":["a",2,"c"]}', '[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":"c"}]', '/foo/1'],
    ['{"baz":"qux"}', '[{"op":"test","path":"/foo","value":42}]', '/foo'],
    ['{"foo":{}}', '[{"op":"test","path":"/foo","value":null}]', '/foo'],
    ['{"foo":[]}', '[{"op":"test","path":"/foo","value":null}]', '/foo'],
    ['{"foo":[]}', '[{"op":"test","path":"/foo"}]', '/foo'],
  ];
  for (const [doc, patch, path] of fail) fails(j(doc), j(patch), `testing value ${path} failed: test failed`);
});

test('test compares structurally (key order does not matter, extra keys do)', () => {
  const doc = { a: { x: 1, y: [1, { z: null }] } };
  applyJSONPatch(doc, [{ op: 'test', path: '/a', value: { y: [1, { z: null }], x: 1 } }]);
  fails(doc, [{ op: 'test', path: '/a', value: { x: 1 } }], 'testing value /a failed: test failed');
  fails(doc, [{ op: 'test', path: '/a/y', value: [{ z: null }, 1] }], 'testing value /a/y failed: test failed');
  applyJSONPatch(doc, [{ op: 'test', path: '', value: doc }]);
  fails(doc, [{ op: 'test', path: '', value: null }], 'testing value  failed: test failed');
});

// ---- Kubernetes-visible quirks of the library ----

test('replace of a missing object member adds it; of a missing index fails', () => {
  assert.deepEqual(applyJSONPatch({ metadata: {} }, [{ op: 'replace', path: '/metadata/labels', value: { a: 'b' } }]), { metadata: { labels: { a: 'b' } } });
  fails({ a: [] }, [{ op: 'replace', path: '/a/0', value: 1 }], 'replace operation does not apply: doc is missing key: /a/0: missing value');
  fails({ a: [] }, [{ op: 'replace', path: '/a/-', value: 1 }], 'replace operation does not apply: doc is missing key: /a/-: missing value');
});

test('a missing value is null; copy from a missing member copies null', () => {
  assert.deepEqual(applyJSONPatch({}, [{ op: 'add', path: '/a' }]), { a: null });
  assert.deepEqual(applyJSONPatch({ a: 1 }, [{ op: 'replace', path: '/a' }]), { a: null });
  assert.deepEqual(applyJSONPatch({ a: 1 }, [{ op: 'copy', from: '/nope', path: '/b' }]), { a: 1, b: null });
});

test('indices: negative from the end, Atoi parsing, "-" only for add', () => {
  assert.deepEqual(applyJSONPatch({ a: [1, 2, 3] }, [{ op: 'replace', path: '/a/-1', value: 9 }]), { a: [1, 2, 9] });
  assert.deepEqual(applyJSONPatch({ a: [1, 2, 3] }, [{ op: 'add', path: '/a/-4', value: 0 }]), { a: [0, 1, 2, 3] });
  assert.deepEqual(applyJSONPatch({ a: [1, 2, 3] }, [{ op: 'remove', path: '/a/+1' }]), { a: [1, 3] });
  assert.deepEqual(applyJSONPatch({ a: [1, 2, 3] }, [{ op: 'remove', path: '/a/01' }]), { a: [1, 3] });
  assert.deepEqual(applyJSONPatch({ a: [[1], [2]] }, [{ op: 'add', path: '/a/-1/-', value: 3 }]), { a: [[1], [2, 3]] });
  fails({ a: [1] }, [{ op: 'add', path: '/a/x', value: 0 }], `error in add for path: '/a/x': value was not a proper array index: 'x': strconv.Atoi: parsing "x": invalid syntax`);
  fails({ a: [1] }, [{ op: 'add', path: '/a/ 1', value: 0 }], `error in add for path: '/a/ 1': value was not a proper array index: ' 1': strconv.Atoi: parsing " 1": invalid syntax`);
  fails(
    { a: [1] },
    [{ op: 'remove', path: '/a/99999999999999999999' }],
    `error in remove for path: '/a/99999999999999999999': strconv.Atoi: parsing "99999999999999999999": value out of range`,
  );
  fails({ a: [1] }, [{ op: 'add', path: '/a/x/y', value: 0 }], 'add operation does not apply: doc is missing path: "/a/x/y": missing value');
  fails({ a: [1] }, [{ op: 'test', path: '/a/3', value: 0 }], "error in test for path: '/a/3': Unable to access invalid index: 3: invalid index referenced");
  fails({ a: [1] }, [{ op: 'copy', from: '/a/3', path: '/b' }], "error in copy for from: '/a/3': Unable to access invalid index: 3: invalid index referenced");
});

test('paths: the first segment is ignored, ~0 and ~1 decode, traversing a scalar or null fails', () => {
  assert.deepEqual(applyJSONPatch({ a: 1 }, [{ op: 'add', path: 'x/b', value: 2 }]), { a: 1, b: 2 });
  fails({ a: 1 }, [{ op: 'add', path: 'b', value: 2 }], 'add operation does not apply: doc is missing path: "b": missing value');
  assert.deepEqual(applyJSONPatch({ 'a/b': { '~c': 1 } }, [{ op: 'remove', path: '/a~1b/~0c' }]), { 'a/b': {} });
  assert.deepEqual(applyJSONPatch({}, [{ op: 'add', path: '/~01', value: 1 }]), { '~1': 1 });
  fails({ a: 'str' }, [{ op: 'add', path: '/a/b', value: 1 }], 'add operation does not apply: doc is missing path: "/a/b": missing value');
  fails({ a: null }, [{ op: 'add', path: '/a/b', value: 1 }], 'add operation does not apply: doc is missing path: "/a/b": missing value');
  assert.deepEqual(applyJSONPatch({}, [{ op: 'add', path: '/', value: 1 }]), { '': 1 });
  assert.equal(jsonPointer(['metadata', 'annotations', 'example.com/a~b']), '/metadata/annotations/example.com~1a~0b');
  assert.equal(escapePointerToken('a/b~c'), 'a~1b~0c');
});

test('the whole document: replace and test work, add and remove do not', () => {
  assert.deepEqual(applyJSONPatch({ a: 1 }, [{ op: 'replace', path: '', value: { b: 2 } }]), { b: 2 });
  assert.deepEqual(applyJSONPatch({ a: 1 }, [{ op: 'replace', path: '', value: [1] }]), [1]);
  fails({ a: 1 }, [{ op: 'replace', path: '', value: 'x' }], 'replace operation value must be object or array: %!w(<nil>)');
  fails({ a: 1 }, [{ op: 'replace', path: '', value: null }], 'replace operation value must be object or array: %!w(<nil>)');
  fails({ a: 1 }, [{ op: 'remove', path: '' }], 'remove operation does not apply: doc is missing path: "": missing value');
  // Go dereferences a nil value here: kube-apiserver's panic handler answers a plain-text 500
  assert.throws(() => applyJSONPatch({ a: 1 }, [{ op: 'replace', path: '' }]), { code: 500, message: PANIC_MESSAGE, type: 'Panic' });
  assert.throws(() => applyJSONPatch({ a: 1 }, [{ op: 'test', path: '' }]), { code: 500, message: PANIC_MESSAGE });
});

test('the API server answers the failures Kubernetes answers with 500 (or a panic) as 400 BadRequest', () => {
  const caught = (f: () => unknown): unknown => {
    try {
      f();
    } catch (e) {
      return e;
    }
    throw new Error('no error');
  };
  const panic = asRequestError(caught(() => applyJSONPatch({ a: 1 }, [{ op: 'replace', path: '' }]))) as PatchError;
  assert.deepEqual([panic.code, panic.reason, panic.message], [400, 'BadRequest', 'the patch cannot be applied: the replace operation of the whole document (path "") has no value']);
  const plain = asRequestError(PatchError.internal('unknown patch type: x in map: map[$patch:x]')) as PatchError;
  assert.deepEqual([plain.code, plain.reason, plain.message], [400, 'BadRequest', 'unknown patch type: x in map: map[$patch:x]']);
  // every other error passes as it is: the 422 of a patch that does not apply, a 400, anything else
  const invalid = caught(() => applyJSONPatch({ a: 1 }, [{ op: 'remove', path: '/b' }]));
  assert.equal(asRequestError(invalid), invalid);
  const bad = PatchError.badRequest('Invalid JSON Patch');
  assert.equal(asRequestError(bad), bad);
  const other = new Error('x');
  assert.equal(asRequestError(other), other);
});

test('move and copy', () => {
  assert.deepEqual(applyJSONPatch({ a: { b: 1 }, c: {} }, [{ op: 'move', from: '/a/b', path: '/c/d' }]), { a: {}, c: { d: 1 } });
  assert.deepEqual(applyJSONPatch({ a: [1, 2, 3] }, [{ op: 'move', from: '/a/0', path: '/a/-' }]), { a: [2, 3, 1] });
  // into its own child: the source is gone before the destination is looked up
  fails({ a: { b: {} } }, [{ op: 'move', from: '/a', path: '/a/b/c' }], 'move operation does not apply: doc is missing destination path: /a/b/c: missing value');
  fails({ a: 1 }, [{ op: 'move', path: '/b' }], 'move operation failed to decode from: operation, missing from field: missing value');
  fails({ a: 1 }, [{ op: 'move', from: '/a' }], 'move operation failed to decode path: operation missing path field: missing value');
  fails({ a: 1 }, [{ op: 'copy', from: '/a' }], 'copy operation failed to decode path: missing value');
  fails({ a: 1 }, [{ op: 'copy', from: '/x/y', path: '/b' }], 'copy operation does not apply: doc is missing from path: /x/y: missing value');
  fails({ a: 1 }, [{ op: 'copy', from: '/a', path: '/x/y' }], 'copy operation does not apply: doc is missing destination path: /x/y: missing value');
  fails({ a: 1 }, [{ op: 'move', from: '/x/y', path: '/b' }], 'move operation does not apply: doc is missing from path: /x/y: missing value');
  // a copy is a copy: changing it leaves the source alone
  assert.deepEqual(applyJSONPatch({ a: { x: 1 } }, [{ op: 'copy', from: '/a', path: '/b' }, { op: 'replace', path: '/b/x', value: 2 }]), {
    a: { x: 1 },
    b: { x: 2 },
  });
});

test('operation names and path types', () => {
  fails({}, [{ op: 'frobnicate', path: '/a' }], 'Unexpected kind: frobnicate');
  fails({}, [{ path: '/a' }], 'Unexpected kind: unknown');
  fails({}, [{ op: 'ADD', path: '/a', value: 1 }], 'Unexpected kind: ADD');
  fails({}, [null], 'Unexpected kind: unknown');
  fails({ a: 1 }, [{ op: 'replace', path: 5, value: 1 }], 'replace operation failed to decode path: json: cannot unmarshal number into Go value of type string', {
    fieldValidation: 'Ignore',
  });
  fails({ a: 1 }, [{ op: 'test', value: 1 }], 'test operation failed to decode path: operation missing path field: missing value');
});

// ---- atomicity ----

test('a failing operation leaves nothing changed (the input is never modified)', () => {
  const doc = { metadata: { name: 'x', labels: { a: '1' } }, spec: { list: [1, 2] } };
  const before = structuredClone(doc);
  fails(
    doc,
    [
      { op: 'add', path: '/metadata/labels/b', value: '2' },
      { op: 'remove', path: '/spec/list/0' },
      { op: 'test', path: '/metadata/name', value: 'y' },
    ],
    'testing value /metadata/name failed: test failed',
  );
  assert.deepEqual(doc, before);
  const out = applyJSONPatch(doc, [{ op: 'add', path: '/metadata/labels/b', value: '2' }]) as typeof doc;
  assert.deepEqual(doc, before);
  assert.equal(out.metadata.labels.a, '1');
  // values inserted are copies of the patch's
  const value = { deep: [1] };
  const patched = applyJSONPatch({}, [
    { op: 'add', path: '/v', value },
    { op: 'add', path: '/v/deep/-', value: 2 },
  ]);
  assert.deepEqual(value, { deep: [1] });
  assert.deepEqual(patched, { v: { deep: [1, 2] } });
});

test('a test guarding an update (optimistic check of a field)', () => {
  const pod = { metadata: { resourceVersion: '5' }, spec: { replicas: 1 } };
  assert.deepEqual(
    applyJSONPatch(pod, [
      { op: 'test', path: '/metadata/resourceVersion', value: '5' },
      { op: 'replace', path: '/spec/replicas', value: 3 },
    ]),
    { metadata: { resourceVersion: '5' }, spec: { replicas: 3 } },
  );
  fails(pod, [{ op: 'test', path: '/metadata/resourceVersion', value: '4' }, { op: 'replace', path: '/spec/replicas', value: 3 }], 'testing value /metadata/resourceVersion failed: test failed');
});

test('keys named like Object.prototype members are plain keys', () => {
  const out = applyJSONPatch(JSON.parse('{"__proto__":{"a":1}}'), [
    { op: 'add', path: '/__proto__/b', value: 2 },
    { op: 'add', path: '/constructor', value: 3 },
  ]) as Record<string, unknown>;
  assert.equal(JSON.stringify(out), '{"__proto__":{"a":1,"b":2},"constructor":3}');
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  fails({}, [{ op: 'remove', path: '/toString' }], "error in remove for path: '/toString': Unable to remove nonexistent key: toString: missing value");
});

// ---- the API server around the library ----

test('decoding with fieldValidation Warn/Strict (the default): 400 with the handler words', () => {
  badRequest({}, 'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp');
  badRequest('x', 'error decoding patch: json: cannot unmarshal string into Go value of type []handlers.jsonPatchOp');
  badRequest([1], 'error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp');
  badRequest([{ op: 'add', path: 1 }], 'error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.path of type string');
  badRequest([{ op: true }], 'error decoding patch: json: cannot unmarshal bool into Go struct field jsonPatchOp.op of type string', { fieldValidation: 'Strict' });
  badRequest([{ op: 'move', from: ['x'], path: '/a' }], 'error decoding patch: json: cannot unmarshal array into Go struct field jsonPatchOp.from of type string');
});

test('decoding with fieldValidation Ignore: the library words', () => {
  badRequest({}, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch', { fieldValidation: 'Ignore' });
  badRequest([true], 'json: cannot unmarshal bool into Go value of type jsonpatch.Operation', { fieldValidation: 'Ignore' });
});

test('a null patch and an empty patch change nothing', () => {
  assert.deepEqual(applyJSONPatch({ a: 1 }, null), { a: 1 });
  assert.deepEqual(applyJSONPatch({ a: 1 }, []), { a: 1 });
});

test('more than 10000 operations: 413', () => {
  assert.equal(MAX_JSON_PATCH_OPERATIONS, 10000);
  const ops = Array.from({ length: 10000 }, () => ({ op: 'test', path: '/a', value: 1 }));
  assert.deepEqual(applyJSONPatch({ a: 1 }, ops), { a: 1 });
  ops.push({ op: 'test', path: '/a', value: 1 });
  assert.throws(
    () => applyJSONPatch({ a: 1 }, ops),
    (e: unknown) => {
      assert.ok(e instanceof PatchError && e instanceof StatusError);
      assert.equal(e.code, 413);
      assert.equal(e.reason, 'RequestEntityTooLarge');
      assert.equal(e.message, 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001');
      return true;
    },
  );
});

test('copies are capped at 3 MiB in total by default', () => {
  assert.equal(JSON_PATCH_MAX_COPY_BYTES, 3 * 1024 * 1024);
  const big = 'x'.repeat(1024 * 1024); // 1 MiB + 2 quote bytes per copy
  const doc = { big };
  const copy = (n: number) => ({ op: 'copy', from: '/big', path: `/c${n}` });
  assert.equal(Object.keys(applyJSONPatch(doc, [copy(1), copy(2)]) as object).length, 3);
  fails(doc, [copy(1), copy(2), copy(3)], `Unable to complete the copy, the accumulated size increase of copy is ${3 * (1024 * 1024 + 2)}, exceeding the limit 3145728`);
  assert.equal(Object.keys(applyJSONPatch(doc, [copy(1), copy(2), copy(3)], { maxCopyBytes: 0 }) as object).length, 4);
});

test('copy size is the size Go marshals (HTML characters escaped)', () => {
  assert.equal(goJSONSize('<a&b>'), '"\\u003ca\\u0026b\\u003e"'.length);
  assert.equal(goJSONSize({ b: 1, a: [true, null] }), '{"a":[true,null],"b":1}'.length);
  assert.equal(goJSONSize('é'), 4);
  assert.equal(goJSONSize(null), 0);
});

test('the error is a Status the API server can send as it is', () => {
  try {
    applyJSONPatch({}, [{ op: 'remove', path: '/x' }]);
    assert.fail('expected an error');
  } catch (e) {
    assert.ok(e instanceof StatusError);
    assert.deepEqual(e.toStatus(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server rejected our request due to an error in our request',
      reason: 'Invalid',
      details: {},
      code: 422,
    });
  }
});

test('test against arrays holding null: the library dereferences a nil element (panic, plain-text 500)', () => {
  assert.throws(() => applyJSONPatch({ a: [null, 1] }, [{ op: 'test', path: '/a', value: [null, 1] }]), { code: 500, type: 'Panic' });
  // arrays that differ in length are compared first, and nulls inside objects are fine
  fails({ a: [null] }, [{ op: 'test', path: '/a', value: [null, 1] }], 'testing value /a failed: test failed');
  applyJSONPatch({ a: [{ b: null }] }, [{ op: 'test', path: '/a', value: [{ b: null }] }]);
});
