// The quick duplicate check of JSON bodies (jsonHasNoDuplicates, codec/duplicates.ts): it must say
// "no duplicates" exactly when the full scan finds none, bound the depth as the scan does, and note
// the same long values for the verbatim splice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonDuplicateFields, jsonHasNoDuplicates, jsonStrictProblems } from '../../src/codec/duplicates.js';
import { MAX_JSON_DEPTH } from '../../src/codec/depth.js';
import { VERBATIM_MIN_CHARS, type VerbatimSpan } from '../../src/codec/verbatim.js';

const LONG = 'y'.repeat(VERBATIM_MIN_CHARS + 3);

function quick(text: string): { ok: boolean; spans: VerbatimSpan[] } {
  const spans: VerbatimSpan[] = [];
  return { ok: jsonHasNoDuplicates(text, JSON.parse(text), spans), spans };
}

function scanSpans(text: string): VerbatimSpan[] {
  const spans: VerbatimSpan[] = [];
  jsonStrictProblems(text, undefined, false, spans);
  return spans;
}

test('quick check: duplicated keys anywhere are caught, whatever the values', () => {
  const dups = [
    '{"a":1,"a":1}',
    '{"a":"x","a":"x"}',
    '{"a":{"b":"c"},"a":{}}',
    '{"a":{},"a":{"b":"c"}}',
    '{"m":{"k":[1,{"z":"q","z":2}]}}',
    '{"a":null,"b":[],"a":null}',
    '{"__proto__":1,"__proto__":2}',
    '{"k\\u0061":1,"ka":2}',
    '{"a\\"b":1,"a\\"b":"v\\\\"}',
    '[{"x":1},{"y":2,"y":3}]',
    ` { "a" : "${LONG}" , "a" : "${LONG}" } `,
  ];
  for (const t of dups) {
    assert.ok(jsonDuplicateFields(t).length > 0, `the full scan finds a duplicate in ${t.slice(0, 60)}`);
    assert.equal(quick(t).ok, false, `the quick check finds a duplicate in ${t.slice(0, 60)}`);
  }
  const clean = [
    '{}',
    '[]',
    '"a string"',
    '{"a":"\\"","b":"\\\\","c":"\\\\\\"\\\\"}',
    '{"a":"x\\u0022y","b":{"a":["a","a",{"a":"a"}]}}',
    '{"1":"a","0":"b","x":{"10":1,"9":2}}',
    '{"__proto__":{"__proto__":1}}',
    '{"a" :\n\t"b" , "c":[ "d" ,"e" ] }',
    `{"data":{"p":"${LONG}","q":"${LONG}"},"list":["${LONG}"]}`,
  ];
  for (const t of clean) {
    assert.equal(jsonDuplicateFields(t).length, 0);
    assert.equal(quick(t).ok, true, `no duplicate in ${t.slice(0, 60)}`);
  }
});

test('quick check: random documents agree with the full scan', () => {
  let seed = 12345;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const keys = ['a', 'b', 'c', '0', '12', 'k"q', 'back\\slash', 'ü', LONG.slice(0, 300)];
  const strs = ['', 'x', 'with "quotes"', 'tab\there', '\\', LONG, `${LONG}\n`, 'é🚀'];
  const value = (depth: number): string => {
    const r = rnd(depth > 4 ? 3 : 6);
    if (r === 0) return JSON.stringify(strs[rnd(strs.length)]);
    if (r === 1) return String(rnd(1000));
    if (r === 2) return ['true', 'false', 'null'][rnd(3)]!;
    if (r === 3) return `[${Array.from({ length: rnd(4) }, () => value(depth + 1)).join(',')}]`;
    // an object, its keys sometimes repeated
    const n = rnd(5);
    const members: string[] = [];
    for (let i = 0; i < n; i++) members.push(`${JSON.stringify(keys[rnd(keys.length)])}${rnd(2) ? ' : ' : ':'}${value(depth + 1)}`);
    return `{${members.join(rnd(2) ? ', ' : ',')}}`;
  };
  let withDups = 0;
  for (let i = 0; i < 3000; i++) {
    const t = value(0);
    const expected = jsonDuplicateFields(t).length === 0;
    if (!expected) withDups++;
    const q = quick(t);
    assert.equal(q.ok, expected, t);
    if (q.ok) {
      // the spans it notes are the scan's, by path and place (objects whose integer-like keys
      // JSON.parse reorders may pair fewer: the splice checks every pair anyway)
      const s = scanSpans(t);
      const parsed = JSON.parse(t);
      for (const span of q.spans) {
        let v: any = parsed;
        for (const k of span.path) v = v[k];
        if (v === t.slice(span.start, span.end)) assert.ok(s.some((x) => x.start === span.start && JSON.stringify(x.path) === JSON.stringify(span.path)), t);
      }
      if (!/"\d+"\s*:/.test(t)) assert.deepEqual(q.spans, s, t);
    }
  }
  assert.ok(withDups > 100, `the documents held duplicates often enough (${withDups})`);
});

test('quick check: a text nested deeper than the bound is left to the full scan', () => {
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
  assert.equal(quick(deep(MAX_JSON_DEPTH)).ok, true);
  assert.equal(quick(deep(MAX_JSON_DEPTH + 1)).ok, false);
  const deepObj = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
  assert.equal(quick(deepObj(MAX_JSON_DEPTH)).ok, true);
  assert.equal(quick(deepObj(MAX_JSON_DEPTH + 1)).ok, false);
  assert.equal(quick(deepObj(100_000)).ok, false);
});
