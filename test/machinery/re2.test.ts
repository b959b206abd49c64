// Go regular expressions as JavaScript RegExps (src/machinery/re2.ts): the RE2 syntax real CRD
// patterns and CEL rules use where JavaScript's differs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { re2, RE2SyntaxError } from '../../src/machinery/re2.js';

const m = (p: string, s: string) => re2(p).test(s);

test('flag groups: leading ones become the RegExp flags; scoped and later ones spell letters both ways', () => {
  // the Gateway API's gRPC service rule
  const svc = '^(?i)\\.?[a-z_][a-z_0-9]*(\\.[a-z_][a-z_0-9]*)*$';
  assert.ok(m(svc, 'helloworld.Greeter'));
  assert.ok(m(svc, '.Foo_1.Bar'));
  assert.ok(!m(svc, 'hello-world'));
  assert.equal(re2(svc).flags.includes('i'), true);
  assert.ok(m('(?i)abc', 'ABC'));
  assert.ok(m('a(?i:bc)d', 'aBCd'));
  assert.ok(!m('a(?i:bc)d', 'ABCd'));
  assert.ok(m('x(?i)y[a-c]', 'xYB'));
  assert.ok(!m('x(?i)y[a-c]', 'XYB'));
  assert.ok(m('(?s)a.b', 'a\nb'));
  assert.ok(!m('a.b', 'a\nb'));
  assert.ok(m('a(?s:.)b', 'a\nb'));
  assert.throws(() => re2('(?U)a+'), RE2SyntaxError);
});

test('Go-only syntax: named groups, \\A and \\z, \\Q..\\E, \\x{..}, ASCII classes, escaped punctuation', () => {
  assert.deepEqual({ ...re2('(?P<year>\\d{4})-(?P<m>\\d\\d)').exec('2026-12')?.groups }, { year: '2026', m: '12' });
  assert.ok(m('\\Aab\\z', 'ab'));
  assert.ok(!m('\\Aab\\z', 'xab'));
  assert.ok(m('^\\Qa.b*\\E$', 'a.b*'));
  assert.ok(!m('^\\Qa.b*\\E$', 'axbbb'));
  assert.ok(m('^\\x{263a}$', '\u263a'));
  assert.ok(m('^[[:alpha:]][[:digit:]_]+$', 'a1_2'));
  assert.ok(!m('^[[:alpha:]]+$', 'a1'));
  assert.ok(m('^\\#\\:\\-\\@$', '#:-@'));
  assert.ok(m('^[\\w\\-]+$', 'a-b_c'));
  assert.ok(m('^\\pL+$', 'héllo'));
  assert.throws(() => re2('[a-'), RE2SyntaxError);
});

test('plain patterns behave as before', () => {
  assert.ok(m('^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$', '* * * * */5'));
  assert.ok(m('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', 'my-name'));
  assert.deepEqual([...'a1b22c333'.matchAll(re2('\\d+', 'g'))].map((x) => x[0]), ['1', '22', '333']);
});
