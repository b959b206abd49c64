// CRD validation rules (src/apiserver/crd/celrules.ts) on their own: rule field paths, where rules
// run (embedded resources, lists that are not map lists, maps), and ratcheting under a changed
// ancestor. The end-to-end cases are in test/e2e/crd-validation-rules.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ruleDefinitionErrors, ruleFieldPath, validationRuleErrors, hasRules } from '../../../src/apiserver/crd/celrules.js';
import type { FieldError } from '../../../src/machinery/errors.js';
import type { JSONSchemaProps } from '../../../src/apiserver/crd/schema.js';
import { validateCRD } from '../../../src/apiserver/crd/validation.js';

const lines = (errs: { toString(): string }[]) => errs.map(String);

/** a root schema whose spec object carries `rules` and `properties` */
const specSchema = (rules: object[], properties: Record<string, JSONSchemaProps>): JSONSchemaProps => ({
  type: 'object',
  properties: { spec: { type: 'object', 'x-kubernetes-validations': rules, properties } as JSONSchemaProps },
});

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
  const s = specSchema(
    [{ rule: 'isURL(self.url)' }, { rule: "sets.contains(self.tags, ['a'])" }, { rule: "format('%s', [self.url]) != ''" }, { rule: "math.greatest(1, 2) == 1" }, { rule: "self.url.startsWith('https://')", message: 'https only' }],
    { url: { type: 'string' }, timeout: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } },
  );
  // (isURL and sets.contains are Kubernetes' and evaluated; a global format() and math.* are not
  // functions Kubernetes has, which its compiler refuses and this interpreter skips)
  assert.deepEqual(lines(validationRuleErrors({ spec: { url: 'http://x', timeout: '2h', tags: ['b'] } }, undefined, s)), [
    `spec: Invalid value: "object": failed rule: sets.contains(self.tags, ['a'])`,
    'spec: Invalid value: "object": https only',
  ]);
});

test('two-variable comprehensions: all, exists, existsOne and the transforms over lists and maps', () => {
  const s = specSchema(
    [
      { rule: 'self.ports.all(i, p, p.port > i)', message: 'ports grow' },
      { rule: "self.labels.exists(k, v, k == 'app' && v != '')", message: 'an app label' },
      { rule: "self.ports.transformList(i, p, p.port > 100, p.name) == ['b']", message: 'one high port, b' },
      { rule: "self.labels.transformMap(k, v, v.size()) == {'app': 3}", message: 'app of three letters' },
    ],
    { ports: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } } }, labels: { type: 'object', additionalProperties: { type: 'string' } } },
  );
  assert.deepEqual(lines(validationRuleErrors({ spec: { ports: [{ name: 'a', port: 80 }, { name: 'b', port: 443 }], labels: { app: 'web' } } }, undefined, s)), []);
  assert.deepEqual(lines(validationRuleErrors({ spec: { ports: [{ name: 'a', port: 0 }], labels: { tier: 'x' } } }, undefined, s)), [
    'spec: Invalid value: "object": ports grow',
    'spec: Invalid value: "object": an app label',
    'spec: Invalid value: "object": one high port, b',
    'spec: Invalid value: "object": app of three letters',
  ]);
  const errs: FieldError[] = [];
  ruleDefinitionErrors(s.properties!.spec!, 'p', errs);
  assert.deepEqual(lines(errs), []);
  const typo = specSchema([{ rule: 'self.ports.all(i, p, p.prot > 0)' }], { ports: { type: 'array', items: { type: 'object', properties: { port: { type: 'integer' } } } } });
  const bad: FieldError[] = [];
  ruleDefinitionErrors(typo.properties!.spec!, 'p', bad);
  assert.match(lines(bad)[0] ?? '', /undefined field 'prot'/);
});

test('a property CEL cannot spell is selected by its escaped name', () => {
  const s = specSchema([{ rule: 'self.max__dash__size > self.__namespace__' }], { 'max-size': { type: 'integer' }, namespace: { type: 'integer' } });
  assert.deepEqual(lines(validationRuleErrors({ spec: { 'max-size': 5, namespace: 3 } }, undefined, s)), []);
  assert.deepEqual(lines(validationRuleErrors({ spec: { 'max-size': 1, namespace: 3 } }, undefined, s)), ['spec: Invalid value: "object": failed rule: self.max__dash__size > self.__namespace__']);
  const errs: FieldError[] = [];
  ruleDefinitionErrors(s.properties!.spec!, 'p', errs);
  assert.deepEqual(lines(errs), []);
});

test('date-time, date and duration strings are timestamps and durations to the rules', () => {
  const s = specSchema(
    [
      { rule: 'self.end > self.start', message: 'end after start' },
      { rule: "self.every >= duration('1m')", message: 'at least a minute' },
      { rule: 'self.day.getDayOfWeek() != 0', message: 'not on Sundays' },
    ],
    { start: { type: 'string', format: 'date-time' }, end: { type: 'string', format: 'date-time' }, every: { type: 'string', format: 'duration' }, day: { type: 'string', format: 'date' } },
  );
  // (as strings, "2026-12-04T09:00:00+01:00" > "2026-12-04T08:30:00Z": as timestamps it is earlier)
  const obj = { spec: { start: '2026-12-04T08:30:00Z', end: '2026-12-04T09:00:00+01:00', every: '30s', day: '2026-03-01' } };
  assert.deepEqual(lines(validationRuleErrors(obj, undefined, s)), [
    'spec: Invalid value: "object": end after start',
    'spec: Invalid value: "object": at least a minute',
    'spec: Invalid value: "object": not on Sundays',
  ]);
  assert.deepEqual(lines(validationRuleErrors({ spec: { start: '2026-12-04T08:30:00Z', end: '2026-12-04T10:00:00+01:00', every: '1h', day: '2026-03-02' } }, undefined, s)), []);
});

test('a transition rule below a set or an atomic list is refused when the CRD is written; below a map list it is not', () => {
  const rule = { rule: 'self == oldSelf' };
  const list = (listType: string | undefined) => ({
    type: 'object',
    properties: {
      items: {
        type: 'array',
        ...(listType ? { 'x-kubernetes-list-type': listType } : {}),
        ...(listType === 'map' ? { 'x-kubernetes-list-map-keys': ['name'] } : {}),
        items: { type: 'object', properties: { name: { type: 'string' }, inner: { type: 'string', 'x-kubernetes-validations': [rule] } }, 'x-kubernetes-validations': [{ rule: 'has(self.name)' }] },
      },
    },
  });
  const crd = (schema: unknown) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'things.t.example.com' },
    spec: { group: 't.example.com', scope: 'Namespaced', names: { plural: 'things', kind: 'Thing' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: schema } } } }] },
  });
  const at = 'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[items]';
  for (const lt of [undefined, 'atomic', 'set']) {
    const errs = validateCRD(crd(list(lt)) as any).filter((e) => e.field.endsWith('.rule'));
    assert.deepEqual(
      errs.map((e) => e.toString()),
      [`${at}.items.properties[inner].x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${at}.items`],
      String(lt),
    );
  }
  assert.deepEqual(validateCRD(crd(list('map')) as any), []);
});

test('cost limits: a rule past the per-call limit stops validation with cel-go\'s error; rules past the budget stop it too', () => {
  // a quadratic rule over 1,500 items: some 2,250,000 evaluations of its body, past the per-call limit
  const items = Array.from({ length: 1500 }, (_, i) => i);
  const quadratic = specSchema([{ rule: 'self.items.all(x, self.items.all(y, x + y >= 0))' }, { rule: 'false', message: 'never reached' }], { items: { type: 'array', items: { type: 'integer' } } });
  assert.deepEqual(lines(validationRuleErrors({ spec: { items } }, undefined, quadratic)), [
    "spec: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.items.all(x, self.items.all(y, x + y >= 0))",
  ]);
  // the same rule on 100 items is well within the limit
  assert.deepEqual(lines(validationRuleErrors({ spec: { items: items.slice(0, 100) } }, undefined, quadratic)), ['spec: Invalid value: "object": never reached']);
  // rules at every item of a list: each cheap, together past a (small) budget
  const each: JSONSchemaProps = {
    type: 'object',
    properties: { spec: { type: 'object', properties: { list: { type: 'array', items: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self >= 0' }] } as JSONSchemaProps } } } },
  };
  const errs = lines(validationRuleErrors({ spec: { list: items.slice(0, 50) } }, undefined, each, undefined, 100));
  assert.equal(errs.length, 1);
  assert.match(errs[0]!, /^spec\.list\[\d+\]: Invalid value: "integer": validation failed due to running out of cost budget, no further validation rules will be run$/);
  assert.deepEqual(validationRuleErrors({ spec: { list: items.slice(0, 50) } }, undefined, each), [], 'within the default budget');
  // a messageExpression past the limit
  const msg = specSchema([{ rule: 'false', messageExpression: "self.items.all(x, self.items.all(y, true)) ? 'a' : 'b'" }], { items: { type: 'array', items: { type: 'integer' } } });
  assert.deepEqual(lines(validationRuleErrors({ spec: { items } }, undefined, msg)), [
    'spec: Invalid value: "object": no further validation rules will be run due to call cost exceeds limit for messageExpression: "self.items.all(x, self.items.all(y, true)) ? \'a\' : \'b\'"',
  ]);
});
