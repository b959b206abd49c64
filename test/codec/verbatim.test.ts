// Long string values written into the stored JSON from the request's text (codec/verbatim.ts):
// the strict scan notes exactly the long values without escapes, and the spliced text is always
// what JSON.stringify of the object gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonStrictProblems } from '../../src/codec/duplicates.js';
import { stringifyWithVerbatim, VERBATIM_MIN_CHARS, type Verbatim, type VerbatimSpan } from '../../src/codec/verbatim.js';

const LONG = 'x'.repeat(VERBATIM_MIN_CHARS);
const LONG_UTF8 = 'çødé 🚀 '.repeat(60);

/** the scan of a request text: its spans */
function scan(text: string, typeName?: string): Verbatim {
  const spans: VerbatimSpan[] = [];
  jsonStrictProblems(text, typeName, false, spans);
  return { text, spans };
}

/** what the store does: parse, (maybe change), then serialize with the spans */
function roundTrip(text: string, change?: (o: any) => void, typeName?: string): { out: string; plain: string; v: Verbatim } {
  const v = scan(text, typeName);
  const obj = JSON.parse(text);
  change?.(obj);
  const plain = JSON.stringify(obj);
  const out = stringifyWithVerbatim(obj, v, () => JSON.stringify(obj));
  // the object is as it was
  assert.equal(JSON.stringify(obj), plain);
  return { out, plain, v };
}

test('verbatim: the scan notes long string values without a backslash, by path, and nothing else', () => {
  const body = {
    kind: 'ConfigMap',
    metadata: { name: 'n', annotations: { long: LONG } },
    data: { a: LONG, short: 'x'.repeat(VERBATIM_MIN_CHARS - 1), esc: `${LONG}\\n`.replace('\\n', '\n'), quote: `${LONG}"`, u: LONG_UTF8 },
    list: [{ v: LONG }, LONG],
    [LONG]: 'a long key is not a value',
  };
  const text = JSON.stringify(body);
  const { spans } = scan(text);
  const paths = spans.map((s) => JSON.stringify(s.path));
  assert.deepEqual(paths, ['["metadata","annotations","long"]', '["data","a"]', '["data","u"]', '["list",0,"v"]', '["list",1]']);
  for (const s of spans) {
    let v: any = body;
    for (const k of s.path) v = v[k];
    assert.equal(text.slice(s.start, s.end), v, `the span of ${JSON.stringify(s.path)} is the value's text`);
  }
  // with a type: a value under an unknown field is skipped whole, as the field is
  const typed = scan(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'n' }, data: { a: LONG }, nope: { b: LONG } }), 'io.k8s.api.core.v1.ConfigMap');
  assert.deepEqual(typed.spans.map((s) => s.path), [['data', 'a']]);
  // whitespace around values and a string at the root
  assert.deepEqual(scan(`{ "data" : {\n  "a" :  "${LONG}"  } }`).spans.map((s) => s.path), [['data', 'a']]);
  assert.deepEqual(scan(JSON.stringify(LONG)).spans, []);
});

test('verbatim: the spliced text is JSON.stringify of the object', () => {
  const cases: [string, unknown, ((o: any) => void)?][] = [
    ['one long value', { kind: 'ConfigMap', metadata: { name: 'a' }, data: { payload: LONG } }],
    ['several, in arrays and nested objects, ASCII and not', { a: [LONG, { b: LONG_UTF8 }], c: { d: { e: LONG + 'e' } }, f: 'short' }],
    ['values with escapes beside', { data: { a: LONG, b: `${LONG}\n"\\\u0001`, c: LONG_UTF8 } }],
    ['a value changed after the parse (an admission plugin)', { data: { a: LONG, b: LONG } }, (o) => (o.data.a = `${LONG}\n`)],
    ['a value changed to another of the same length', { data: { a: LONG } }, (o) => (o.data.a = 'y'.repeat(LONG.length))],
    ['a value moved elsewhere', { data: { a: LONG } }, (o) => ((o.data.b = o.data.a), (o.data.a = 1))],
    ['a container replaced by a string', { data: { a: LONG } }, (o) => (o.data = 'gone')],
    ['an item removed: the index is past the end', { list: ['s', LONG] }, (o) => o.list.pop()],
    ['a member deleted', { data: { a: LONG } }, (o) => delete o.data.a],
    ['another string equal to a placeholder (ambiguous: serialized whole)', { data: { a: LONG, b: '\u00030\u0003' } }],
    ['a key equal to a placeholder', { data: { a: LONG, '\u00030\u0003': 1 } }],
    ['a frozen holder', { data: { a: LONG } }, (o) => Object.freeze(o.data)],
  ];
  for (const [name, body, change] of cases) {
    const { out, plain } = roundTrip(JSON.stringify(body), change);
    assert.equal(out, plain, name);
    JSON.parse(out);
  }
});

test('verbatim: many long values, serialized in another order than the request had them, and a string holding escaped MARKs', () => {
  const data: Record<string, string> = {};
  for (let i = 0; i < 1500; i++) data[`k${(i * 7919) % 1500}`] = `${i}`.padStart(VERBATIM_MIN_CHARS + (i % 50), 'v');
  const text = JSON.stringify({ data });
  const v = scan(text);
  assert.equal(v.spans.length, 1500);
  // the stored object has the keys sorted (as Go writes a map): the placeholders come in another order
  const parsed = JSON.parse(text);
  const sorted: Record<string, string> = {};
  for (const k of Object.keys(parsed.data).sort()) sorted[k] = parsed.data[k];
  const obj = { data: sorted };
  let seen = '';
  const out = stringifyWithVerbatim(obj, v, () => (seen = JSON.stringify(obj)));
  assert.ok(seen.length < text.length / 10, 'serialized with placeholders');
  assert.equal(out, JSON.stringify(obj));
  // a string holding the MARK control character elsewhere: not a placeholder, so the plain way
  for (const extra of ['\u0003', 'a\u00030\u0003', '\u00030\u0003b', '\u0003\u0003', '\u000399\u0003']) {
    const o = JSON.parse(text);
    o.other = extra;
    assert.equal(stringifyWithVerbatim(o, v, () => JSON.stringify(o)), JSON.stringify(o), JSON.stringify(extra));
  }
});

test('verbatim: a serialization that leaves a value out, with a placeholder inside another string, is the plain one', () => {
  const text = JSON.stringify({ data: { a: LONG } });
  const v = scan(text);
  // (a string equal to the placeholder while the value itself is left out cannot be told from it;
  // the store's serialization writes every value, where such a string makes two and is caught)
  for (const other of ['x\u00030\u0003', '\u00030\u0003y']) {
    const obj = JSON.parse(text);
    // (what serialize writes: not the object's value, but a string that holds the placeholder)
    const plain = () => JSON.stringify({ other });
    assert.equal(stringifyWithVerbatim(obj, v, plain), plain(), JSON.stringify(other));
  }
});

test('verbatim: a member named __proto__ or a path through the prototype is never written', () => {
  const text = `{"__proto__":{"polluted":"${LONG}"},"data":{"a":"${LONG}"}}`;
  const v = scan(text);
  assert.deepEqual(v.spans.map((s) => s.path), [['__proto__', 'polluted'], ['data', 'a']]);
  // an object without the own member: the step would reach Object.prototype
  const obj: any = { data: { a: LONG } };
  const out = stringifyWithVerbatim(obj, v, () => JSON.stringify(obj));
  assert.equal(out, JSON.stringify(obj));
  assert.equal(({} as any).polluted, undefined);
  assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false);
});

test('verbatim: without spans, serialize() is called once and returned', () => {
  let calls = 0;
  const s = () => (calls++, '{}');
  assert.equal(stringifyWithVerbatim({}, undefined, s), '{}');
  assert.equal(stringifyWithVerbatim({}, { text: '{}', spans: [] }, s), '{}');
  assert.equal(calls, 2);
});

test('verbatim: the placeholders are in the serialized text, and gone from the object after', () => {
  const text = JSON.stringify({ data: { a: LONG, b: LONG_UTF8 } });
  const v = scan(text);
  const obj = JSON.parse(text);
  let seen = '';
  const out = stringifyWithVerbatim(obj, v, () => (seen = JSON.stringify(obj)));
  assert.ok(seen.length < 100, `serialized with short placeholders: ${seen}`);
  assert.equal(out, text);
  assert.equal(obj.data.a, LONG);
  assert.equal(obj.data.b, LONG_UTF8);
});
