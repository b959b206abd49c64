// The structural schema at work on custom resources (src/apiserver/crd/schema.ts): pruning,
// defaulting and validation with Kubernetes' wording; and the simple JSONPath of printer columns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applySchemaDefaults, prune, UNCORRELATED, validateValue, type JSONSchemaProps } from '../../../src/apiserver/crd/schema.js';
import { evalJSONPath, parseJSONPath } from '../../../src/apiserver/crd/jsonpath.js';
import { validateCRD } from '../../../src/apiserver/crd/validation.js';
import { compareVersions, customPrinter, customTypeName } from '../../../src/apiserver/crd/customkind.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string', minLength: 2, maxLength: 5, pattern: '^[a-z]+$' },
        count: { type: 'integer', minimum: 1, maximum: 3, default: 1 },
        ratio: { type: 'number', exclusiveMaximum: true, maximum: 1 },
        mode: { type: 'string', enum: ['A', 'B'], default: 'A' },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 2, minItems: 1, 'x-kubernetes-list-type': 'set' },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['port'],
          items: { type: 'object', properties: { port: { type: 'integer' }, name: { type: 'string', default: 'p' } } },
        },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        port: { 'x-kubernetes-int-or-string': true },
        when: { type: 'string', format: 'date-time' },
        maybe: { type: 'string', nullable: true },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } } },
      },
    },
  },
};

test('pruning drops undeclared fields (reported by path), keeps apiVersion, kind, metadata and preserved subtrees', () => {
  const obj: any = {
    apiVersion: 'x/v1',
    kind: 'K',
    metadata: { name: 'n' },
    top: 1,
    spec: { name: 'ab', extra: true, ports: [{ port: 1, junk: 2 }], labels: { a: 'b' }, free: { any: { thing: 1 } }, template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x', bogus: 1 }, spec: { a: 'b', c: 'd' } } },
  };
  const unknown = prune(obj, schema);
  assert.deepEqual(unknown.sort(), ['spec.extra', 'spec.ports[0].junk', 'spec.template.metadata.bogus', 'spec.template.spec.c', 'top']);
  assert.deepEqual(obj.spec.free, { any: { thing: 1 } });
  assert.deepEqual(obj.spec.template, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' }, spec: { a: 'b' } });
  assert.deepEqual(obj.metadata, { name: 'n' });
});

test('defaults fill missing fields and nulls that are not nullable, inside lists too', () => {
  const obj: any = { spec: { name: 'ab', mode: null, maybe: null, ports: [{ port: 80 }] } };
  applySchemaDefaults(obj, schema);
  assert.equal(obj.spec.count, 1);
  assert.equal(obj.spec.mode, 'A');
  assert.equal(obj.spec.maybe, null);
  assert.deepEqual(obj.spec.ports, [{ port: 80, name: 'p' }]);
});

test('validation: each rule, in Kubernetes\' wording', () => {
  const msgs = (spec: any) => validateValue({ spec }, schema, '', [], true).map((e) => e.toString());
  assert.deepEqual(msgs({ name: 'ab' }), []);
  assert.deepEqual(msgs({}), ['spec.name: Required value']);
  assert.deepEqual(msgs({ name: 5 }), ['spec.name: Invalid value: "integer": spec.name in body must be of type string: "integer"']);
  assert.deepEqual(msgs({ name: 'abcdef' }), ['spec.name: Too long: may not be more than 5 bytes']);
  assert.deepEqual(msgs({ name: 'a' }), ['spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long']);
  assert.deepEqual(msgs({ name: 'AB' }), ["spec.name: Invalid value: \"AB\": spec.name in body should match '^[a-z]+$'"]);
  assert.deepEqual(msgs({ name: 'ab', count: 0 }), ['spec.count: Invalid value: 0: spec.count in body should be greater than or equal to 1']);
  assert.deepEqual(msgs({ name: 'ab', count: 4 }), ['spec.count: Invalid value: 4: spec.count in body should be less than or equal to 3']);
  assert.deepEqual(msgs({ name: 'ab', ratio: 1 }), ['spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1']);
  assert.deepEqual(msgs({ name: 'ab', mode: 'C' }), ['spec.mode: Unsupported value: "C": supported values: "A", "B"']);
  assert.deepEqual(msgs({ name: 'ab', tags: [] }), ['spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items']);
  assert.deepEqual(msgs({ name: 'ab', tags: ['a', 'b', 'c'] }), ['spec.tags: Too many: 3: must have at most 2 items']);
  assert.deepEqual(msgs({ name: 'ab', tags: ['a', 'a'] }), ['spec.tags[1]: Duplicate value: "a"']);
  assert.deepEqual(msgs({ name: 'ab', ports: [{ port: 1 }, { port: 1 }] }), ['spec.ports[1]: Duplicate value: {"port":1}']);
  assert.deepEqual(msgs({ name: 'ab', port: 'http' }), []);
  assert.deepEqual(msgs({ name: 'ab', port: 8080 }), []);
  assert.deepEqual(msgs({ name: 'ab', port: true }), ['spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"']);
  assert.deepEqual(msgs({ name: 'ab', when: 'yesterday' }), ['spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"']);
  assert.deepEqual(msgs({ name: 'ab', when: '2024-01-02T03:04:05Z' }), []);
  assert.deepEqual(msgs({ name: 'ab', maybe: null }), []);
  assert.deepEqual(msgs({ name: 'ab', labels: { a: 1 } }), ['spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"']);
  // an embedded resource as Kubernetes' objectmeta validation checks it
  assert.deepEqual(msgs({ name: 'ab', template: { spec: {} } }), ['spec.template.apiVersion: Required value', 'spec.template.kind: Required value']);
  assert.deepEqual(msgs({ name: 'ab', template: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { app: 'x' } } } }), []);
  assert.deepEqual(msgs({ name: 'ab', template: { apiVersion: 'a/b/c', kind: 'Bad Kind', metadata: { name: 'a/b', namespace: 'No', labels: { 'a b': 'c' } } } }), [
    'spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
    'spec.template.kind: Invalid value: "Bad Kind": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or \'-\', start with an alphabetic character, and end with an alphanumeric character (e.g. \'my-name\',  or \'abc-123\', regex used for validation is \'[a-z]([-a-z0-9]*[a-z0-9])?\')',
    'spec.template.metadata.name: Invalid value: "a/b": may not contain \'/\'',
    'spec.template.metadata.namespace: Invalid value: "No": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character (e.g. \'my-name\',  or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\')',
    'spec.template.metadata.labels: Invalid value: "a b": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')',
  ]);
});

test('the schema may restrict metadata.name, and nothing else of metadata', () => {
  const s: JSONSchemaProps = { type: 'object', properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 5 } } } } };
  assert.deepEqual(validateValue({ metadata: { name: 'abcdef', labels: { a: 'b' } } }, s, '', [], true).map(String), ['metadata.name: Too long: may not be more than 5 bytes']);
  assert.deepEqual(validateValue({ metadata: { name: 'abc' } }, s, '', [], true), []);
});

test('printer columns: JSONPath, types, the Age default', () => {
  assert.deepEqual(evalJSONPath({ status: { conditions: [{ type: 'A', status: 'x' }, { type: 'Ready', status: 'True' }] } }, '.status.conditions[?(@.type=="Ready")].status'), ['True']);
  assert.deepEqual(evalJSONPath({ spec: { l: [1, 2, 3] } }, '.spec.l[-1]'), [3]);
  assert.deepEqual(evalJSONPath({ metadata: { labels: { 'app.kubernetes.io/name': 'web' } } }, '.metadata.labels.app\\.kubernetes\\.io/name'), ['web']);
  assert.equal(parseJSONPath('.spec[('), undefined);
  const p = customPrinter({ name: 'v1', additionalPrinterColumns: [{ name: 'N', type: 'integer', jsonPath: '.spec.n' }, { name: 'Ok', type: 'boolean', jsonPath: '.spec.ok' }, { name: 'S', type: 'string', jsonPath: '.spec.o' }] });
  assert.deepEqual(p.columns.map((c) => c.name), ['Name', 'N', 'Ok', 'S']);
  assert.deepEqual(p.cells({ metadata: { name: 'x' }, spec: { n: 2.7, ok: 'no', o: { a: 1 } } }, 0), ['x', 2, null, '{"a":1}']);
  const age = customPrinter({ name: 'v1' });
  assert.deepEqual(age.columns.map((c) => [c.name, c.type]), [['Name', 'string'], ['Age', 'date']]);
  assert.deepEqual(age.cells({ metadata: { name: 'x', creationTimestamp: '2024-01-01T00:00:00Z' } }, Date.parse('2024-01-01T00:05:00Z')), ['x', '5m']);
});

test('names and version order', () => {
  assert.equal(customTypeName('stable.example.com', 'v1', 'CronTab'), 'com.example.stable.v1.CronTab');
  assert.deepEqual(['v1alpha1', 'v2beta1', 'v1', 'foo', 'v2', 'v1beta2'].sort(compareVersions), ['v2', 'v1', 'v2beta1', 'v1beta2', 'v1alpha1', 'foo']);
});

test('CRD validation: names, scope, versions, schemas', () => {
  const crd = (spec: any, name = 'things.example.com') => ({ metadata: { name }, spec });
  const good = { group: 'example.com', scope: 'Namespaced', names: { plural: 'things', kind: 'Thing' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }] };
  assert.deepEqual(validateCRD(crd(good)), []);
  const msgs = (spec: any, name?: string) => validateCRD(crd(spec, name)).map((e) => e.toString());
  assert.deepEqual(msgs({ ...good, group: 'example' }, 'things.example'), ['spec.group: Invalid value: "example": should be a domain with at least one dot']);
  assert.deepEqual(msgs(good, 'x.example.com'), ['metadata.name: Invalid value: "x.example.com": must be spec.names.plural+"."+spec.group']);
  assert.deepEqual(msgs({ ...good, scope: 'Global' }), ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"']);
  assert.deepEqual(msgs({ ...good, versions: [{ ...good.versions[0], schema: undefined }] }), ['spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required']);
  assert.deepEqual(msgs({ ...good, versions: [{ ...good.versions[0], schema: { openAPIV3Schema: { type: 'object', properties: { spec: { properties: {} } } } } }] }), [
    'spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
  ]);
  const withSchema = (openAPIV3Schema: any) => msgs({ ...good, versions: [{ ...good.versions[0], schema: { openAPIV3Schema } }] });
  assert.deepEqual(withSchema({ type: 'object', properties: { l: { type: 'array', items: { properties: {} } } } }), ['spec.versions[0].schema.openAPIV3Schema.properties[l].items.type: Required value: must not be empty for specified array items']);
  assert.deepEqual(withSchema({ type: 'object', properties: { l: { type: 'array', uniqueItems: true, items: { type: 'string' } } } }), [
    'spec.versions[0].schema.openAPIV3Schema.properties[l].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
  ]);
  assert.deepEqual(withSchema({ type: 'object', properties: { e: { 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } } }), [
    'spec.versions[0].schema.openAPIV3Schema.properties[e].type: Required value: must be object if x-kubernetes-embedded-resource is true',
  ]);
  assert.deepEqual(withSchema({ type: 'string' }), ['spec.versions[0].schema.openAPIV3Schema.type: Invalid value: "string": must be object at the root']);
  assert.deepEqual(withSchema({ type: 'object', properties: { free: { 'x-kubernetes-preserve-unknown-fields': true } } }), []);
  assert.deepEqual(withSchema({ type: 'object', properties: { n: { type: 'integer', maximum: 3, default: 5 } } }), [
    'spec.versions[0].schema.openAPIV3Schema.properties[n].default: Invalid value: 5: in body should be less than or equal to 3',
  ]);
  assert.deepEqual(withSchema({ type: 'object', properties: { s: { type: 'string', default: 1 } } }), [
    'spec.versions[0].schema.openAPIV3Schema.properties[s].default: Invalid value: "integer": in body must be of type string: "integer"',
  ]);
  assert.deepEqual(msgs({ ...good, names: { plural: 'things', kind: 'Th_ing' } }).map((m) => m.split(': ').slice(0, 3).join(': ')), ['spec.names.kind: Invalid value: "Th_ing"']);
  // community groups need the API approval annotation
  const k8s = { ...good, group: 'x.k8s.io' };
  assert.deepEqual(msgs(k8s, 'things.x.k8s.io'), [
    'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
  ]);
  const annotated = (v: string) => validateCRD({ metadata: { name: 'things.x.k8s.io', annotations: { 'api-approved.kubernetes.io': v } }, spec: k8s }).map(String);
  assert.deepEqual(annotated('https://github.com/kubernetes/kubernetes/pull/1'), []);
  assert.deepEqual(annotated('unapproved, experimental'), []);
  assert.equal(annotated('yes').length, 1);
  const two = msgs({ ...good, versions: [good.versions[0], { ...good.versions[0] }] });
  assert.ok(two.some((m) => m.endsWith('must have exactly one version marked as storage version')), two.join('\n'));
  assert.ok(two.some((m) => m.endsWith('must contain unique version names')), two.join('\n'));
  assert.deepEqual(msgs({ ...good, names: { plural: 'Things', kind: 'Thing' } }, 'Things.example.com'), [
    'spec.names.plural: Invalid value: "Things": a DNS-1035 label must consist of lower case alphanumeric characters or \'-\', start with an alphabetic character, and end with an alphanumeric character (e.g. \'my-name\',  or \'abc-123\', regex used for validation is \'[a-z]([-a-z0-9]*[a-z0-9])?\')',
  ]);
});

test('validation ratcheting: unchanged values (through properties, map values, map-list and set items) are not checked again', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    required: ['a'],
    properties: {
      n: { type: 'integer', maximum: 1 },
      m: { type: 'object', additionalProperties: { type: 'string', maxLength: 2 } },
      l: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k'], items: { type: 'object', properties: { k: { type: 'string' }, v: { type: 'integer', minimum: 0 } } } },
      set: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string', pattern: '^[a-z]+$' } },
      atomic: { type: 'array', items: { type: 'integer', maximum: 1 } },
    },
  };
  const old = { n: 5, m: { x: 'long' }, l: [{ k: 'a', v: -1 }], set: ['A'], atomic: [5] };
  const fields = (v: unknown, o: unknown) => validateValue(v, s, '', [], false, o).map((e) => e.field).sort();
  // everything as it was, in another order of the map list and set: nothing to report but the
  // object's own required field (the object changed: a new member)
  assert.deepEqual(fields({ ...old, extra: 1 }, old), ['a']);
  assert.deepEqual(fields({ ...old, l: [{ k: 'b', v: 0 }, { k: 'a', v: -1 }], set: ['b', 'A'] }, old), ['a']);
  // changed values are checked; an atomic list's items do not correspond
  assert.deepEqual(fields({ ...old, n: 6, m: { x: 'long', y: 'also' }, l: [{ k: 'a', v: -2 }], set: ['B'], atomic: [5, 0] }, old), ['a', 'atomic[0]', 'l[0].v', 'm.y', 'n', 'set[0]']);
  // no old object: every check
  assert.deepEqual(fields(old, UNCORRELATED), ['a', 'atomic[0]', 'l[0].v', 'm.x', 'n', 'set[0]']);
});
