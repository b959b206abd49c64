// CRD validation rules (x-kubernetes-validations) end to end: a real keelson, a CRD whose schema
// carries CEL rules at the root, on an object, on the items of a map list and on map values, then
// custom resources written through raw HTTPS and kubectl 1.33 and 1.27: the rules' field errors in
// Kubernetes' words (the node's type as the value, message, messageExpression, fieldPath, reason),
// transition rules on updates (oldSelf, optionalOldSelf, map-list items matched by key), ratcheting
// (an unchanged invalid value does not fail an update: it comes back as a warning), the status subresource, and the CRD's own
// validation of its rules (syntax, undeclared names, reason, fieldPath, optionalOldSelf).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, expectStatus, until, warningsOf, crdBody, createCRD, type Cluster } from './harness.js';

let c: Cluster;
const NS = 'rules-e2e';
const BASE = `/apis/rules.example.com/v1/namespaces/${NS}/gadgets`;

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.rules.example.com' },
  spec: {
    group: 'rules.example.com',
    scope: 'Namespaced',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            'x-kubernetes-validations': [{ rule: "self.metadata.name.startsWith('g-')", message: 'name must start with g-' }],
            properties: {
              spec: {
                type: 'object',
                'x-kubernetes-validations': [
                  { rule: 'self.minReplicas <= self.replicas', message: 'replicas should be greater than or equal to minReplicas' },
                  { rule: 'self.mode == oldSelf.mode', message: 'mode is immutable' },
                  { rule: '!has(self.size) || self.size <= 10', messageExpression: "'size ' + string(self.size) + ' is over 10'", fieldPath: '.size', reason: 'FieldValueForbidden' },
                  { rule: 'self.replicas < 100' },
                  { rule: '!oldSelf.hasValue() || !has(oldSelf.value().owner) || (has(self.owner) && self.owner == oldSelf.value().owner)', optionalOldSelf: true, message: 'owner cannot change once set' },
                ],
                properties: {
                  mode: { type: 'string' },
                  owner: { type: 'string' },
                  size: { type: 'integer' },
                  replicas: { type: 'integer' },
                  minReplicas: { type: 'integer' },
                  ports: {
                    type: 'array',
                    'x-kubernetes-list-type': 'map',
                    'x-kubernetes-list-map-keys': ['name'],
                    items: {
                      type: 'object',
                      required: ['name'],
                      'x-kubernetes-validations': [{ rule: 'self.port > 0' }, { rule: 'self.port == oldSelf.port', message: 'a named port keeps its number' }],
                      properties: { name: { type: 'string' }, port: { type: 'integer' } },
                    },
                  },
                  tags: { type: 'object', additionalProperties: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.size() < 5', reason: 'FieldValueRequired', message: 'tags are short' }] } },
                },
              },
              status: { type: 'object', properties: { phase: { type: 'string', 'x-kubernetes-validations': [{ rule: "self != 'Broken'" }] } } },
            },
          },
        },
      },
    ],
  },
};

const gadget = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'rules.example.com/v1', kind: 'Gadget', metadata: { name, namespace: NS }, spec });

/** the causes of a 422, as [field, message] pairs, sorted */
function causes(s: any): [string, string][] {
  return (s.details?.causes ?? []).map((x: any) => [x.field, `${x.reason}: ${x.message}`]).sort();
}

before(async () => {
  c = await startCluster();
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
  const r = await c.raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRD });
  assert.equal(r.status, 201, r.text);
  const k = c.kubectl(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/gadgets.rules.example.com']);
  assert.equal(k.code, 0, k.stderr);
});

after(async () => {
  await c?.stop();
});

test('a create that breaks rules gets 422 with each rule as a field error in Kubernetes words', async () => {
  const r = await c.raw('POST', BASE, { body: gadget('bad', { mode: 'a', replicas: 1, minReplicas: 3, size: 12, ports: [{ name: 'http', port: 0 }], tags: { x: 'too-long' } }) });
  const s = expectStatus(r, 422, 'Invalid', 'create');
  assert.deepEqual(causes(s), [
    ['<nil>', 'FieldValueInvalid: Invalid value: "object": name must start with g-'],
    ['spec', 'FieldValueInvalid: Invalid value: "object": replicas should be greater than or equal to minReplicas'],
    ['spec.ports[0]', 'FieldValueInvalid: Invalid value: "object": failed rule: self.port > 0'],
    ['spec.size', 'FieldValueForbidden: Forbidden: size 12 is over 10'],
    ['spec.tags[x]', 'FieldValueRequired: Required value: tags are short'],
  ]);
  assert.match(s.message, /^Gadget\.rules\.example\.com "bad" is invalid: \[/);
  assert.ok(s.message.includes('spec: Invalid value: "object": replicas should be greater than or equal to minReplicas'), s.message);
  assert.equal((await c.raw('GET', `${BASE}/bad`)).status, 404, 'nothing was stored');
});

test('a rule that cannot be evaluated fails with the evaluation error; schema type errors skip the rules', async () => {
  // no minReplicas: `self.minReplicas` has no such key
  const r = await c.raw('POST', BASE, { body: gadget('g-nokey', { mode: 'a', replicas: 1 }) });
  const s = expectStatus(r, 422, 'Invalid', 'no such key');
  assert.deepEqual(causes(s), [['spec', 'FieldValueInvalid: Invalid value: "object": no such key: minReplicas evaluating rule: replicas should be greater than or equal to minReplicas']]);
  // a value of the wrong type: Kubernetes reports it and does not run the rules
  const t = await c.raw('POST', BASE, { body: gadget('g-type', { mode: 'a', replicas: 'many', minReplicas: 1 }) });
  const st = expectStatus(t, 422, 'Invalid', 'type');
  assert.deepEqual(causes(st).map(([f]) => f), ['<nil>', 'spec.replicas']);
  assert.ok(st.message.includes('<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation'), st.message);
});

test('a valid create passes, and transition rules hold on updates (oldSelf, map-list items by key, optionalOldSelf)', async () => {
  const created = await c.raw('POST', BASE, { body: gadget('g-1', { mode: 'a', owner: 'ann', replicas: 2, minReplicas: 1, ports: [{ name: 'http', port: 80 }], tags: { x: 'ok' } }) });
  assert.equal(created.status, 201, created.text);
  const mode = await c.raw('PATCH', `${BASE}/g-1`, { body: { spec: { mode: 'b' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.deepEqual(causes(expectStatus(mode, 422, 'Invalid', 'mode')), [['spec', 'FieldValueInvalid: Invalid value: "object": mode is immutable']]);
  const port = await c.raw('PATCH', `${BASE}/g-1`, { body: [{ op: 'replace', path: '/spec/ports/0/port', value: 81 }], headers: { 'content-type': 'application/json-patch+json' } });
  assert.deepEqual(causes(expectStatus(port, 422, 'Invalid', 'port')), [['spec.ports[0]', 'FieldValueInvalid: Invalid value: "object": a named port keeps its number']]);
  // a new item has no old value: its transition rule does not run
  const added = await c.raw('PATCH', `${BASE}/g-1`, { body: [{ op: 'add', path: '/spec/ports/0', value: { name: 'https', port: 443 } }], headers: { 'content-type': 'application/json-patch+json' } });
  assert.equal(added.status, 200, added.text);
  const owner = await c.raw('PATCH', `${BASE}/g-1`, { body: { spec: { owner: 'bob' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.deepEqual(causes(expectStatus(owner, 422, 'Invalid', 'owner')), [['spec', 'FieldValueInvalid: Invalid value: "object": owner cannot change once set']]);
  const status = await c.raw('PATCH', `${BASE}/g-1/status`, { body: { status: { phase: 'Broken' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.deepEqual(causes(expectStatus(status, 422, 'Invalid', 'status')), [['status.phase', `FieldValueInvalid: Invalid value: "string": failed rule: self != 'Broken'`]]);
  const fine = await c.raw('PATCH', `${BASE}/g-1/status`, { body: { status: { phase: 'Ready' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(fine.status, 200, fine.text);
});

test('ratcheting: an object that broke a rule before the rule existed can still be updated where it is unchanged', async () => {
  // the rule `self.replicas < 100` is bypassed by creating through a CRD version without it
  const noRules = structuredClone(CRD) as any;
  noRules.metadata.name = 'legacies.rules.example.com';
  noRules.spec.names = { plural: 'legacies', singular: 'legacy', kind: 'Legacy' };
  delete noRules.spec.versions[0].schema.openAPIV3Schema['x-kubernetes-validations'];
  const rules = noRules.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'];
  noRules.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = rules.filter((r: any) => r.rule !== 'self.replicas < 100');
  assert.equal((await c.raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: noRules })).status, 201);
  assert.equal(c.kubectl(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/legacies.rules.example.com']).code, 0);
  const LBASE = `/apis/rules.example.com/v1/namespaces/${NS}/legacies`;
  const obj = { apiVersion: 'rules.example.com/v1', kind: 'Legacy', metadata: { name: 'old', namespace: NS }, spec: { mode: 'a', replicas: 500, minReplicas: 1 } };
  assert.equal((await c.raw('POST', LBASE, { body: obj })).status, 201);
  // the rule arrives
  const crd = (await c.raw('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/legacies.rules.example.com')).json();
  crd.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = rules;
  const upd = await c.raw('PUT', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/legacies.rules.example.com', { body: crd });
  assert.equal(upd.status, 200, upd.text);
  // (the custom resources' handler takes the new schema as the CRD's watch delivers it: a dry run tells when)
  await until('the new rule is in force', async () => (await c.raw('PATCH', `${LBASE}/old?dryRun=All`, { body: { spec: { replicas: 400 } }, headers: { 'content-type': 'application/merge-patch+json' } })).status === 422);
  // a label change leaves spec as it was: allowed, with the rule's error as a warning
  const label = await c.raw('PATCH', `${LBASE}/old`, { body: { metadata: { labels: { a: 'b' } } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(label.status, 200, label.text);
  assert.deepEqual(warningsOf(label), ['299 - "spec: Invalid value: \\"object\\": failed rule: self.replicas < 100"']);
  // a spec change that keeps it broken: refused
  const spec = await c.raw('PATCH', `${LBASE}/old`, { body: { spec: { replicas: 400 } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.deepEqual(causes(expectStatus(spec, 422, 'Invalid', 'ratchet')), [['spec', 'FieldValueInvalid: Invalid value: "object": failed rule: self.replicas < 100']]);
  const fixed = await c.raw('PATCH', `${LBASE}/old`, { body: { spec: { replicas: 50 } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(fixed.status, 200, fixed.text);
});

test('kubectl 1.33 and 1.27 print the rules errors; a dry run is checked too', () => {
  for (const v of ['1.33', '1.27']) {
    const doc = `apiVersion: rules.example.com/v1\nkind: Gadget\nmetadata: {name: g-k${v.replace('.', '')}, namespace: ${NS}}\nspec: {mode: a, replicas: 1, minReplicas: 3}\n`;
    const r = c.kubectl(['apply', '-f', '-'], { version: v, input: doc });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /The Gadget "g-k\d+" is invalid: spec: Invalid value: "object": replicas should be greater than or equal to minReplicas/);
    const d = c.kubectl(['create', '--dry-run=server', '-f', '-'], { version: v, input: doc });
    assert.notEqual(d.code, 0);
    assert.match(d.stderr, /replicas should be greater than or equal to minReplicas/);
    const good = c.kubectl(['apply', '-f', '-'], { version: v, input: doc.replace('replicas: 1,', 'replicas: 4,') });
    assert.equal(good.code, 0, good.stderr);
  }
});

test('the CRD itself is refused when its rules are not valid', async () => {
  const bad = structuredClone(CRD) as any;
  bad.metadata.name = 'bads.rules.example.com';
  bad.spec.names = { plural: 'bads', singular: 'bad', kind: 'Bad' };
  bad.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [
    { rule: 'self.replicas >' },
    { rule: 'foo.bar == 1' },
    { rule: 'self.replicas == 1', reason: 'Bogus', fieldPath: '.nope' },
    { rule: 'self.replicas == 1', optionalOldSelf: true },
    { rule: ' ' },
    { rule: 'self.replicas == 1', messageExpression: 'self.' },
    { rule: 'self.replicaz > 1' },
    { rule: "has(self.ports) && self.ports.all(p, p.nmae != '')" },
  ];
  bad.spec.versions[0].schema.openAPIV3Schema['x-kubernetes-validations'] = [{ rule: "has(self.metadata.labels) || self.metadata.name != ''" }];
  const r = await c.raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: bad });
  const s = expectStatus(r, 422, 'Invalid', 'crd');
  const root = 'spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations';
  const at = 'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations';
  const got = (s.details.causes as any[]).map((x) => `${x.field} ${x.reason}`);
  assert.deepEqual(got, [
    `${root}[0].rule FieldValueInvalid`,
    `${at}[0].rule FieldValueInvalid`,
    `${at}[1].rule FieldValueInvalid`,
    `${at}[2].reason FieldValueNotSupported`,
    `${at}[2].fieldPath FieldValueInvalid`,
    `${at}[3].optionalOldSelf FieldValueInvalid`,
    `${at}[4].rule FieldValueRequired`,
    `${at}[5].messageExpression FieldValueInvalid`,
    `${at}[6].rule FieldValueInvalid`,
    `${at}[7].rule FieldValueInvalid`,
  ]);
  const all = s.details.causes as any[];
  const msg = (i: number) => all[i + 1].message as string;
  // the fields a rule selects must be in the schema (at the root, metadata has only name and generateName)
  assert.equal(all[0].message.split(': compilation failed: ')[1], "ERROR: <input>:1:4: undefined field 'labels'\n | has(self.metadata.labels) || self.metadata.name != ''\n | ...^");
  assert.equal(msg(7).split(': compilation failed: ')[1], "ERROR: <input>:1:5: undefined field 'replicaz'\n | self.replicaz > 1\n | ....^");
  assert.equal(msg(8).split(': compilation failed: ')[1].split('\n')[0], "ERROR: <input>:1:39: undefined field 'nmae'");
  assert.match(msg(0), /^Invalid value: apiextensions\.ValidationRule\{Rule:"self\.replicas >", Message:"", MessageExpression:"", Reason:\(\*apiextensions\.FieldValueErrorReason\)\(nil\), FieldPath:"", OptionalOldSelf:\(\*bool\)\(nil\)\}: compilation failed: /);
  assert.equal(msg(1).split('\n')[0], `Invalid value: apiextensions.ValidationRule{Rule:"foo.bar == 1", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')`);
  assert.equal(msg(2), 'Unsupported value: "Bogus": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"');
  assert.equal(msg(3), 'Invalid value: ".nope": fieldPath must be a valid path');
  assert.equal(msg(4), 'Invalid value: true: may not be set if oldSelf is not used in rule');
  assert.equal(msg(5), 'Required value: rule is not specified');
});

test("rules calling Kubernetes' CEL libraries (ip, cidr, url, sets, named formats, format) are evaluated", async () => {
  const rules = [
    { rule: 'isIP(self.address) && ip.isCanonical(self.address)', message: 'address must be a canonical IP address' },
    { rule: 'cidr(self.network).containsIP(self.address)', messageExpression: "'%s is not in %s'.format([self.address, self.network])" },
    { rule: "url(self.endpoint).getScheme() == 'https'", message: 'endpoint must be https' },
    { rule: "sets.contains(['tcp', 'udp'], self.protocols)", message: 'protocols are tcp and udp' },
    { rule: '!format.dns1123Label().validate(self.service).hasValue()', messageExpression: 'format.dns1123Label().validate(self.service).value()[0]' },
  ];
  const str = { type: 'string' };
  const spec = { type: 'object', 'x-kubernetes-validations': rules, properties: { address: str, network: str, endpoint: str, protocols: { type: 'array', items: str }, service: str } };
  await createCRD(c, crdBody('rules.example.com', 'endpoints', 'Endpoint', [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }]));
  const base = `/apis/rules.example.com/v1/namespaces/${NS}/endpoints`;
  const ep = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'rules.example.com/v1', kind: 'Endpoint', metadata: { name }, spec });
  const good = await c.raw('POST', base, { body: ep('ok', { address: '10.1.2.3', network: '10.0.0.0/8', endpoint: 'https://example.com/x', protocols: ['tcp'], service: 'web' }) });
  assert.equal(good.status, 201, good.text);
  const bad = await c.raw('POST', base, { body: ep('bad', { address: '2001:DB8::1', network: '10.0.0.0/8', endpoint: 'http://example.com', protocols: ['tcp', 'sctp'], service: 'Web_1' }) });
  const s = expectStatus(bad, 422, 'Invalid', 'library rules');
  assert.deepEqual(
    (s.details.causes as any[]).map((x) => x.message),
    [
      'Invalid value: "object": address must be a canonical IP address',
      'Invalid value: "object": 2001:DB8::1 is not in 10.0.0.0/8',
      'Invalid value: "object": endpoint must be https',
      'Invalid value: "object": protocols are tcp and udp',
      `Invalid value: "object": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
    ],
  );
});

test('schema checks ratchet: an update keeps values a tightened schema refuses as long as it leaves them as they were', async () => {
  const str = { type: 'string' };
  const spec = (tight: boolean) => ({
    type: 'object',
    properties: {
      size: { type: 'integer', ...(tight ? { maximum: 10 } : {}) },
      mode: { type: 'string', ...(tight ? { enum: ['a', 'b'] } : {}) },
      note: str,
      ports: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object', required: ['name'], properties: { name: str, port: { type: 'integer', ...(tight ? { minimum: 1 } : {}) } } },
      },
      tags: { type: 'array', items: { type: 'string', ...(tight ? { pattern: '^[a-z]+$' } : {}) } },
    },
  });
  const versions = (tight: boolean) => [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: spec(tight) } } } }];
  const body = crdBody('rules.example.com', 'limits', 'Limit', versions(false));
  await createCRD(c, body);
  const base = `/apis/rules.example.com/v1/namespaces/${NS}/limits`;
  const made = await c.raw('POST', base, { body: { apiVersion: 'rules.example.com/v1', kind: 'Limit', metadata: { name: 'old' }, spec: { size: 50, mode: 'z', note: 'x', ports: [{ name: 'p', port: 0 }, { name: 'q', port: 5 }], tags: ['OK'] } } });
  assert.equal(made.status, 201, made.text);
  // the schema is tightened: size, mode, the port of p and the tag are now invalid
  const cur = (await c.raw('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${body.metadata.name}`)).json();
  const put = await c.raw('PUT', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${body.metadata.name}`, { body: { ...cur, spec: { ...cur.spec, versions: versions(true) } } });
  assert.equal(put.status, 200, put.text);
  const patch = (p: unknown) => c.raw('PATCH', `${base}/old`, { body: JSON.stringify(p), headers: { 'content-type': 'application/merge-patch+json' } });
  await until('the tightened schema to be in force', async () => (await c.raw('POST', `${base}?dryRun=All`, { body: { apiVersion: 'rules.example.com/v1', kind: 'Limit', metadata: { name: 'new' }, spec: { size: 50 } } })).status === 422);
  // another field changes: the old invalid values stay (q's port changes, p's does not)
  let r = await c.raw('PATCH', `${base}/old`, {
    body: JSON.stringify([
      { op: 'replace', path: '/spec/note', value: 'y' },
      { op: 'replace', path: '/spec/ports/1/port', value: 6 },
    ]),
    headers: { 'content-type': 'application/json-patch+json' },
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json().spec.size, 50);
  // a changed value is checked
  r = await patch({ spec: { size: 60 } });
  const s = expectStatus(r, 422, 'Invalid', 'a changed invalid value');
  assert.deepEqual((s.details.causes as any[]).map((x) => x.field), ['spec.size']);
  // a new object gets every check
  r = await c.raw('POST', base, { body: { apiVersion: 'rules.example.com/v1', kind: 'Limit', metadata: { name: 'new' }, spec: { size: 50, mode: 'z', ports: [{ name: 'p', port: 0 }], tags: ['OK'] } } });
  const n = expectStatus(r, 422, 'Invalid', 'a new object');
  assert.deepEqual((n.details.causes as any[]).map((x) => x.field).sort(), ['spec.mode', 'spec.ports[0].port', 'spec.size', 'spec.tags[0]']);
  // the items of an atomic list do not correspond: a changed tag list is checked whole
  r = await patch({ spec: { tags: ['OK', 'fine'] } });
  const t = expectStatus(r, 422, 'Invalid', 'an atomic list changed');
  assert.deepEqual((t.details.causes as any[]).map((x) => x.field), ['spec.tags[0]']);
});

test('a rule too costly for the object is refused with cel-go\'s error (the per-call limit), not run to the end', async () => {
  await createCRD(
    c,
    crdBody('cost.example.com', 'ledgers', 'Ledger', [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                'x-kubernetes-validations': [{ rule: 'self.entries.all(x, self.entries.all(y, x == y || x != y))', message: 'entries are comparable' }],
                properties: { entries: { type: 'array', items: { type: 'integer' } } },
              },
            },
          },
        },
      },
    ]),
  );
  const base = `/apis/cost.example.com/v1/namespaces/${NS}/ledgers`;
  const ledger = (name: string, n: number) => ({ apiVersion: 'cost.example.com/v1', kind: 'Ledger', metadata: { name, namespace: NS }, spec: { entries: Array.from({ length: n }, (_, i) => i) } });
  // 100,000 entries would be 10^10 evaluations of the comparison: the limit stops it at 1,000,000
  const r = await c.raw('POST', base, { body: ledger('big', 100_000) });
  const s = expectStatus(r, 422, 'Invalid', 'over the limit');
  assert.deepEqual(causes(s), [['spec', "FieldValueInvalid: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: entries are comparable"]]);
  assert.equal((await c.raw('GET', `${base}/big`)).status, 404);
  const ok = await c.raw('POST', base, { body: ledger('small', 50) });
  assert.equal(ok.status, 201, ok.text);
});
