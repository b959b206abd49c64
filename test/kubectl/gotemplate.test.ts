// Go templates as kubectl 1.33 runs them: the recorded cases (kubectl-cases.ts) and the rules
// they rest on, tested on the engine directly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GoTemplate, KUBECTL_FUNCS, TemplateError, TemplateExecError, base64DecodeStd } from '../../src/kubectl/gotemplate.js';
import { jsonMarshal, toUnstructuredValues, GoInt } from '../../src/kubectl/gofmt.js';
import { GO_TEMPLATE_CASES, OBJECT } from './kubectl-cases.js';

/** The data kubectl's go-template printer hands the engine: a JSON round trip, whole numbers as int64. */
const data = () => toUnstructuredValues(JSON.parse(jsonMarshal(OBJECT)));

function exec(text: string, d: unknown = data(), missingKey: 'default' | 'error' = 'default'): string {
  return GoTemplate.parse('output', text, KUBECTL_FUNCS).execute(d, { missingKey });
}

test('recorded kubectl 1.33 go-template cases', () => {
  let n = 0;
  for (const c of GO_TEMPLATE_CASES) {
    const where = `template ${JSON.stringify(c.template)} (allowMissingKeys=${c.allowMissingKeys})`;
    let t: GoTemplate;
    try {
      t = GoTemplate.parse('output', c.template, KUBECTL_FUNCS);
    } catch (e) {
      assert.ok(e instanceof TemplateError, where);
      assert.equal(e.message, c.parseError, where);
      n++;
      continue;
    }
    assert.equal(c.parseError, undefined, `${where}: expected a parse error`);
    try {
      const out = t.execute(data(), { missingKey: c.allowMissingKeys ? 'default' : 'error' });
      assert.equal(out, c.output, where);
    } catch (e) {
      assert.ok(e instanceof TemplateExecError, `${where}: ${(e as Error).stack}`);
      assert.equal(e.message, c.execError, where);
      assert.equal(e.partial, c.partial, where);
    }
    n++;
  }
  assert.ok(n > 200);
});

test('numbers: int64 from the data, Go constants, float formatting', () => {
  assert.equal(exec('{{.spec.replicas}} {{.spec.big}} {{.spec.f}}'), '3 1000000 1.5');
  assert.equal(exec('{{1000000.0}} {{1e21}} {{0x10}} {{\'a\'}} {{1_000}}'), '1e+06 1e+21 16 97 1000');
  assert.equal(exec('{{eq .spec.replicas 3}} {{lt .spec.f 2.0}}'), 'true true');
  assert.throws(() => exec('{{eq .spec.f 1}}'), /error calling eq: incompatible types for comparison/);
});

test('missing keys: <no value> by default, an error with missingkey=error', () => {
  assert.equal(exec('{{.nope}}|{{.spec.nope}}|{{index .data "zz"}}'), '<no value>|<no value>|<no value>');
  assert.throws(() => exec('{{.nope}}', data(), 'error'), (e: Error) => e.message === 'template: output:1:2: executing "output" at <.nope>: map has no entry for key "nope"');
  assert.throws(() => exec('{{.nope.x}}', data(), 'error'), /map has no entry for key "nope"/);
});

test('control structures, variables, break and continue, define/template/block', () => {
  assert.equal(exec('{{range $i, $e := .spec.items}}{{if eq $e.name "two"}}{{continue}}{{end}}{{$i}}={{$e.name}};{{end}}'), '0=one;2=three;');
  assert.equal(exec('{{range .spec.items}}{{if eq .name "two"}}{{break}}{{end}}{{.name}}{{end}}'), 'one');
  assert.equal(exec('{{with .nope}}x{{else with .spec.f}}{{.}}{{end}}'), '1.5');
  assert.equal(exec('{{if .spec.fa}}a{{else if .spec.t}}b{{else}}c{{end}}'), 'b');
  assert.equal(exec('{{range $k, $v := .metadata.labels}}{{$k}}={{$v}},{{end}}'), 'app=web,tier=1,');
  assert.equal(exec('{{range 3}}{{.}}{{end}}'), '012');
  assert.equal(exec('{{$x := 1}}{{$x = 2}}{{$x}}'), '2');
  assert.equal(exec('{{define "T"}}[{{.}}]{{end}}{{template "T" .metadata.name}}{{block "B" 1}}<{{.}}>{{end}}'), '[x]<1>');
  assert.equal(exec('a  {{- " b " -}}  c'), 'a b c');
  assert.equal(exec('{{/* comment */}}d'), 'd');
});

test('functions kubectl adds: exists and base64decode', () => {
  assert.equal(exec('{{exists . "spec" "items" 1}} {{exists . "spec" "nope"}}'), 'true false');
  assert.equal(exec('{{base64decode .data.enc}}'), 'hello');
  assert.throws(() => exec('{{base64decode "!!"}}'), /error calling base64decode: base64 decode failed: illegal base64 data at input byte 0/);
  assert.equal(base64DecodeStd('YWJj\nZA==').toString(), 'abcd');
  assert.throws(() => base64DecodeStd('YQ=x'), /input byte 2/);
});

test('printf verbs and Go fmt notations', () => {
  assert.equal(exec('{{printf "%5.2f|%-4s|%03d|%x|%q|%v|%T" 3.14159 "ab" 7 255 "é" .spec.list .spec.replicas}}'), ' 3.14|ab  |007|ff|"é"|[1 a map[x:1] <nil> true]|int64');
  assert.equal(exec('{{printf "%d %s" 1}}'), '1 %!s(MISSING)');
  assert.equal(exec('{{printf "%d" "x"}}'), '%!d(string=x)');
  assert.equal(exec('{{printf "%s" 1 2}}'), '%!s(int=1)%!(EXTRA int=2)');
});

test('parse errors carry Go\'s position and wording', () => {
  assert.throws(() => GoTemplate.parse('output', '{{.x', {}), (e: Error) => e.message === 'template: output:1: unclosed action');
  assert.throws(() => GoTemplate.parse('output', '{{foo}}', {}), (e: Error) => e.message === 'template: output:1: function "foo" not defined');
  assert.throws(() => GoTemplate.parse('output', '\n{{end}}', {}), (e: Error) => e.message === 'template: output:2: unexpected {{end}}');
});

test('values of the model print as Go prints them', () => {
  assert.equal(exec('{{.}}', { a: new GoInt(1n, 'int64'), b: [1.5, null], c: { d: true } }), 'map[a:1 b:[1.5 <nil>] c:map[d:true]]');
});
