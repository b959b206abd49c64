// kubectl's JSONPath dialect: the recorded kubectl 1.33 cases (kubectl-cases.ts) and the rules
// behind them, tested on the engine directly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JSONPath, JSONPathError } from '../../src/kubectl/jsonpath.js';
import { toUnstructuredValues } from '../../src/kubectl/gofmt.js';
import { JSONPATH_CASES, OBJECT } from './kubectl-cases.js';

const data = () => toUnstructuredValues(OBJECT);

function run(text: string, opts: { allowMissingKeys?: boolean; outputJSON?: boolean } = {}, d: unknown = data()): string {
  return JSONPath.parse('out', text).execute(d, opts);
}

test('recorded kubectl 1.33 jsonpath and jsonpath-as-json cases', () => {
  let n = 0;
  for (const c of JSONPATH_CASES) {
    const where = `${c.json ? 'jsonpath-as-json' : 'jsonpath'} ${JSON.stringify(c.template)} (allowMissingKeys=${c.allowMissingKeys})`;
    let jp: JSONPath;
    try {
      jp = JSONPath.parse('out', c.template);
    } catch (e) {
      assert.ok(e instanceof JSONPathError, where);
      assert.equal(e.message, c.parseError, where);
      n++;
      continue;
    }
    assert.equal(c.parseError, undefined, `${where}: expected a parse error`);
    try {
      assert.equal(jp.execute(data(), { allowMissingKeys: c.allowMissingKeys, outputJSON: !!c.json }), c.output, where);
    } catch (e) {
      assert.ok(e instanceof JSONPathError, `${where}: ${(e as Error).stack}`);
      assert.equal(e.message, c.execError, where);
    }
    n++;
  }
  assert.ok(n > 150);
});

test('fields, indexes, slices, wildcards and unions', () => {
  assert.equal(run('{.spec.items[*].name}'), 'one two three');
  assert.equal(run('{.spec.items[-1:].name} {.spec.items[0:3:2].name}'), 'three one three');
  assert.equal(run("{.spec.items[0]['name','v']}"), 'one 1');
  assert.equal(run('{.spec.items[0,2].v}'), '1 3');
  assert.throws(() => run('{.spec.items[5].name}'), /array index out of bounds: index 5, length 3/);
});

test('range, filters, recursive descent, quoted keys and literals', () => {
  assert.equal(run('{range .spec.items[*]}[{.name}={.v}]{end}'), '[one=1][two=2][three=3]');
  assert.equal(run('{.spec.items[?(@.v>=2)].name}'), 'two three');
  assert.equal(run("{.spec.items[?(@.name=='two')].v}"), '2');
  assert.throws(() => run('{.spec.items[?(@.v>1.5)].name}'), /incompatible types for comparison/);
  assert.equal(run('{..c}'), 'deep');
  assert.equal(run("{.spec.nested['a']['b'].c}"), 'deep');
  assert.equal(run('{"a\\tb"} {\'x\'}'), 'a\tb x');
});

test('wildcards over maps visit keys in sorted order (kubectl: Go map order)', () => {
  assert.equal(run('{.metadata.labels.*}'), 'web 1');
});

test('missing keys and printing rules', () => {
  assert.equal(run('{.nope}'), '');
  assert.throws(() => run('{.nope}', { allowMissingKeys: false }), (e: Error) => e.message === 'nope is not found');
  assert.equal(run('{.spec.list}'), '[1,"a",{"x":1},null,true]');
  assert.equal(run('{.spec.nul} {.spec.f} {.spec.big}'), 'null 1.5 1000000');
  assert.equal(run('{.data.html}'), "<a href='x'>&</a>");
  assert.equal(run('{.spec.items[0]}', { outputJSON: true }), '[\n    {\n        "name": "one",\n        "v": 1\n    }\n]\n');
});

test('parse errors', () => {
  assert.throws(() => JSONPath.parse('out', '{.a'), (e: Error) => e.message === 'unclosed action');
  assert.throws(() => JSONPath.parse('out', '{#}'), (e: Error) => e.message === "unrecognized character in action: U+0023 '#'");
  assert.throws(() => JSONPath.parse('out', '{.a[x]}'), (e: Error) => e.message === 'invalid array index x');
});
