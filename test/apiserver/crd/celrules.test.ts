// CRD validation rules (src/apiserver/crd/celrules.ts) on their own: rule field paths, where rules
// run (embedded resources, lists that are not map lists, maps), and ratcheting under a changed
// ancestor. The end-to-end cases are in test/e2e/crd-validation-rules.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ruleDefinitionErrors, ruleFieldPath, validationRuleErrors, hasRules } from '../../../src/apiserver/crd/celrules.js';
import type { FieldError } from '../../../src/machinery/errors.js';
import type { JSONSchemaProps } from '../../../src/apiserver/crd/schema.js';

const lines = (errs: { toString(): string }[]) => errs.map(String);

test('rule field paths: properties, map keys, quoted steps, and the invalid ones', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: { a: { type: 'object', properties: { b: { type: 'string' } } }, m: { type: 'object', additionalProperties: { type: 'object', properties: { x: { type: 'integer' } } } } },
  };
  assert.deepEqual(ruleFieldPath('.a.b', s), { path: 'a.b' });
  assert.deepEqual(ruleFieldPath("['a'].b", s), { path: 'a.b' });
  assert.deepEqual(ruleFieldPath(".m['k.1'].x", s), { path: 'm[k.1].x' });
  assert.deepEqual(ruleFieldPath('.nope', s), { error: 'does not refer to a valid field' });
  assert.deepEqual(ruleFieldPath('a', s), { error: 'expected [ or . but got: a' });
  assert.deepEqual(ruleFieldPath('.a.', s), { error: 'unexpected end of JSON path' });
});

test('rules of an embedded resource see its type and only its name of the metadata; rules under plain lists have no oldSelf', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          template: {
            type: 'object',
            'x-kubernetes-embedded-resource': true,
            'x-kubernetes-preserve-unknown-fields': true,
            'x-kubernetes-validations': [{ rule: "self.kind == 'Pod' && !has(self.metadata.labels)" }],
          } as JSONSchemaProps,
          items: {
            type: 'array',
            items: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'never runs' }, { rule: "self != ''" }] } as JSONSchemaProps,
          },
        },
      },
    },
  };
  assert.ok(hasRules(s));
  const obj = { spec: { template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { a: 'b' } } }, items: ['x', ''] } };
  assert.deepEqual(lines(validationRuleErrors(obj, undefined, s)), ['spec.items[1]: Invalid value: "string": failed rule: self != \'\'']);
  const old = { spec: { template: obj.spec.template, items: ['y', 'z'] } };
  const upd = { spec: { template: obj.spec.template, items: ['x', 'w'] } };
  assert.deepEqual(lines(validationRuleErrors(upd, old, s)), []);
});

test('ratcheting follows the nearest ancestor with an old value: a changed sibling does not unlock an unchanged value', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          a: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self < 10' }] } as JSONSchemaProps,
          b: { type: 'integer' },
          list: { type: 'array', items: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self < 10' }] } as JSONSchemaProps },
        },
      },
    },
  };
  const old = { spec: { a: 50, b: 1, list: [20] } };
  // a unchanged (ratcheted); the atomic list changed, so its items are checked
  assert.deepEqual(lines(validationRuleErrors({ spec: { a: 50, b: 2, list: [20, 1] } }, old, s)), ['spec.list[0]: Invalid value: "integer": failed rule: self < 10']);
  // the list unchanged: its items take their list's equality
  assert.deepEqual(lines(validationRuleErrors({ spec: { a: 50, b: 3, list: [20] } }, old, s)), []);
  // a create has nothing to ratchet against
  assert.equal(validationRuleErrors({ spec: { a: 50 } }, undefined, s).length, 1);
});

test('a rule calling a function the interpreter lacks is not evaluated (the object passes it); other rules still run', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        'x-kubernetes-validations': [
          { rule: 'isURL(self.url)' },
          { rule: "sets.contains(self.tags, ['a'])" },
          { rule: "duration(self.timeout) < duration('1h')" },
          { rule: "self.url.startsWith('https://')", message: 'https only' },
        ],
        properties: { url: { type: 'string' }, timeout: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } },
      },
    },
  };
  assert.deepEqual(lines(validationRuleErrors({ spec: { url: 'http://x', timeout: '2h', tags: ['b'] } }, undefined, s)), ['spec: Invalid value: "object": https only']);
});

test('a property CEL cannot spell is selected by its escaped name', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: { spec: { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.max__dash__size > self.__namespace__' }], properties: { 'max-size': { type: 'integer' }, namespace: { type: 'integer' } } } },
  };
  assert.deepEqual(lines(validationRuleErrors({ spec: { 'max-size': 5, namespace: 3 } }, undefined, s)), []);
  assert.deepEqual(lines(validationRuleErrors({ spec: { 'max-size': 1, namespace: 3 } }, undefined, s)), ['spec: Invalid value: "object": failed rule: self.max__dash__size > self.__namespace__']);
  const errs: FieldError[] = [];
  ruleDefinitionErrors(s.properties!.spec!, 'p', errs);
  assert.deepEqual(lines(errs), []);
});
