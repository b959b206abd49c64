// admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
// validation: Kubernetes' documentation examples (defaulted as the server defaults them) pass, and
// each rule gives the exact field error Kubernetes 1.33 gives, in its order. A CEL syntax error is
// worded "compilation failed: " (Kubernetes') followed by our parser's message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyDefaults } from '../../src/schema/defaults/index.js';
import {
  validateValidatingAdmissionPolicy,
  validateValidatingAdmissionPolicyBinding,
  validateValidatingAdmissionPolicyBindingUpdate,
  validateValidatingAdmissionPolicyStatusUpdate,
  validateValidatingAdmissionPolicyUpdate,
} from '../../src/apiserver/admission/vap-validation.js';
import { DNS1035_MSG, LABEL_VALUE_MSG, NAME_PART_MSG, SUBDOMAIN_MSG, clone, mutate, strs } from '../schema/validation-helpers.js';

const ONE_ITEM = 'validations or auditAnnotations must contain at least one item';
const EXCLUSIVE = 'name and selector are mutually exclusive';
const DENY_AND_WARN = 'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)';

const G = 'admissionregistration.k8s.io';

/** an object as it reaches validation: decoded, then defaulted by Keelson's v1 defaulting */
function defaulted(kind: 'ValidatingAdmissionPolicy' | 'ValidatingAdmissionPolicyBinding', o: any): any {
  const x = { apiVersion: `${G}/v1`, kind, ...clone(o) };
  applyDefaults(G, 'v1', kind, x);
  return x;
}
const policy = (name: string, spec: any): any => defaulted('ValidatingAdmissionPolicy', { metadata: { name }, spec });
const binding = (name: string, spec: any): any => defaulted('ValidatingAdmissionPolicyBinding', { metadata: { name }, spec });

const deployments = { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }] };

/** a valid, defaulted policy with the given spec fields over a minimal one */
const base = (spec: any = {}, name = 'p'): any => policy(name, { matchConstraints: deployments, validations: [{ expression: 'object.spec.replicas <= 5' }], ...spec });
/** a valid, defaulted binding with the given spec fields over a minimal one */
const bbase = (spec: any = {}): any => binding('b', { policyName: 'p', validationActions: ['Deny'], ...spec });

// ---- valid policies: Kubernetes' documentation examples ----

test('policy: the documentation examples pass', () => {
  const examples = [
    // the first example of the ValidatingAdmissionPolicy page
    policy('demo-policy.example.com', { failurePolicy: 'Fail', matchConstraints: deployments, validations: [{ expression: 'object.spec.replicas <= 5' }] }),
    // parameter resources, a message and a reason
    policy('replicalimit-policy.example.com', {
      failurePolicy: 'Fail',
      paramKind: { apiVersion: 'rules.example.com/v1', kind: 'ReplicaLimit' },
      matchConstraints: deployments,
      validations: [
        { expression: 'object.spec.replicas <= params.maxReplicas', messageExpression: "'object.spec.replicas must be no greater than ' + string(params.maxReplicas)", reason: 'Invalid' },
      ],
    }),
    // params of a core kind
    policy('replica-limit', {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConstraints: deployments,
      validations: [{ expression: 'object.spec.replicas <= int(params.data.maxReplicas)', message: 'too many replicas', reason: 'Forbidden' }],
    }),
    // matchConditions
    policy('demo-policy.example.com', {
      matchConstraints: { resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['*'] }] },
      matchConditions: [
        { name: 'exclude-leases', expression: '!(request.resource.group == "coordination.k8s.io" && request.resource.resource == "leases")' },
        { name: 'exclude-kubelet-requests', expression: '!("system:nodes" in request.userInfo.groups)' },
        { name: 'rbac', expression: 'request.resource.group != "rbac.authorization.k8s.io"' },
      ],
      validations: [{ expression: "!object.metadata.name.contains('demo') || object.metadata.namespace == 'demo'" }],
    }),
    // auditAnnotations
    policy('demo-policy.example.com', {
      failurePolicy: 'Fail',
      matchConstraints: deployments,
      validations: [{ expression: 'object.spec.replicas > 50', messageExpression: "'Deployment spec.replicas set to ' + string(object.spec.replicas)" }],
      auditAnnotations: [{ key: 'high-replica-count', valueExpression: "'Deployment spec.replicas set to ' + string(object.spec.replicas)" }],
    }),
    // variables (composition)
    policy('image-matches-namespace-environment.policy.example.com', {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }] },
      variables: [
        { name: 'environment', expression: "'environment' in namespaceObject.metadata.labels ? namespaceObject.metadata.labels['environment'] : 'prod'" },
        { name: 'exempt', expression: "has(object.metadata.labels) && 'exempt' in object.metadata.labels && object.metadata.labels['exempt'] == 'true'" },
        { name: 'containers', expression: 'object.spec.template.spec.containers' },
        { name: 'containersToCheck', expression: "variables.containers.filter(c, c.image.contains('example.com/'))" },
      ],
      validations: [
        {
          expression: "variables.exempt || variables.containersToCheck.all(c, c.image.startsWith(variables.environment + '.'))",
          messageExpression: "'only ' + variables.environment + ' images are allowed in namespace ' + namespaceObject.metadata.name",
        },
      ],
    }),
    // audit annotations alone, an empty validations list, exclusions, selectors, a scope
    policy('audit-only', {
      failurePolicy: 'Ignore',
      matchConstraints: {
        matchPolicy: 'Exact',
        namespaceSelector: { matchExpressions: [{ key: 'environment', operator: 'In', values: ['test', 'prod'] }] },
        objectSelector: { matchLabels: { app: 'web' } },
        resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['*'], resources: ['pods', 'pods/status', '*/scale'], scope: 'Namespaced' }],
        excludeResourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['DELETE'], resources: ['pods'], resourceNames: ['keep', 'also-keep'] }],
      },
      validations: [],
      auditAnnotations: [
        { key: 'replicas', valueExpression: 'string(object.spec.?replicas.orValue(1))' },
        { key: 'image', valueExpression: '  object.spec.containers.map(c, c.image).join(",")  ' },
      ],
    }),
  ];
  for (const p of examples) assert.deepEqual(strs(validateValidatingAdmissionPolicy(p)), [], p.metadata.name);
});

test('policy: the defaulting supplies what the validation requires of the v1 form', () => {
  const p = base();
  assert.equal(p.spec.failurePolicy, 'Fail');
  assert.deepEqual([p.spec.matchConstraints.matchPolicy, p.spec.matchConstraints.namespaceSelector, p.spec.matchConstraints.objectSelector], ['Equivalent', {}, {}]);
  // undefaulted, the same object is refused as Kubernetes refuses its internal form without defaults
  const raw = { metadata: { name: 'p' }, spec: { matchConstraints: { resourceRules: deployments.resourceRules }, validations: [{ expression: 'true' }] } };
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(raw)), [
    'spec.failurePolicy: Required value',
    'spec.matchConstraints.matchPolicy: Required value',
    'spec.matchConstraints.namespaceSelector: Required value',
    'spec.matchConstraints.objectSelector: Required value',
  ]);
});

// ---- policy rules ----

test('policy: an empty spec', () => {
  assert.deepEqual(strs(validateValidatingAdmissionPolicy({ metadata: { name: 'p' }, spec: {} })), [
    'spec.failurePolicy: Required value',
    'spec.matchConstraints: Required value',
    `spec.validations: Required value: ${ONE_ITEM}`,
    `spec.auditAnnotations: Required value: ${ONE_ITEM}`,
  ]);
  // defaulted: failurePolicy is set
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(policy('p', { validations: [], auditAnnotations: [] }))), [
    'spec.matchConstraints: Required value',
    `spec.validations: Required value: ${ONE_ITEM}`,
    `spec.auditAnnotations: Required value: ${ONE_ITEM}`,
  ]);
});

test('policy: failurePolicy is Fail or Ignore', () => {
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(base({ failurePolicy: 'Never' }))), ['spec.failurePolicy: Unsupported value: "Never": supported values: "Fail", "Ignore"']);
});

test('policy: paramKind names a group/version and a kind', () => {
  const v = (paramKind: any) => strs(validateValidatingAdmissionPolicy(base({ paramKind })));
  assert.deepEqual(v({}), ['spec.paramKind.apiVersion: Required value', 'spec.paramKind.kind: Required value']);
  assert.deepEqual(v({ apiVersion: 'a/b/c', kind: 'K' }), ['spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c']);
  assert.deepEqual(v({ apiVersion: 'Example.com/v1', kind: 'K' }), [`spec.paramKind.apiVersion: Invalid value: "Example.com": ${SUBDOMAIN_MSG}`]);
  assert.deepEqual(v({ apiVersion: 'example.com/', kind: 'K' }), ['spec.paramKind.apiVersion: Invalid value: "example.com/": version must be specified']);
  assert.deepEqual(v({ apiVersion: '/', kind: 'K' }), ['spec.paramKind.apiVersion: Invalid value: "/": version must be specified']);
  assert.deepEqual(v({ apiVersion: 'example.com/v1_beta', kind: 'K' }), [`spec.paramKind.apiVersion: Invalid value: "v1_beta": ${DNS1035_MSG}`]);
  assert.deepEqual(v({ apiVersion: 'v1', kind: 'Replica_Limit' }), [`spec.paramKind.kind: Invalid value: "Replica_Limit": may have mixed case, but should otherwise match: ${DNS1035_MSG}`]);
  // mixed case is fine; a core version alone is fine
  assert.deepEqual(v({ apiVersion: 'v1', kind: 'ConfigMap' }), []);
});

test('policy: matchConstraints needs a resource rule; its selectors are validated strictly', () => {
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(base({ matchConstraints: {} }))), ['spec.matchConstraints.resourceRules: Required value']);
  const p = base({
    matchConstraints: {
      ...deployments,
      matchPolicy: 'Loose',
      namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'Is', values: ['a'] }] },
      objectSelector: { matchLabels: { app: 'b c' } },
    },
  });
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(p)), [
    'spec.matchConstraints.matchPolicy: Unsupported value: "Loose": supported values: "Equivalent", "Exact"',
    'spec.matchConstraints.namespaceSelector.matchExpressions[0].operator: Invalid value: "Is": not a valid selector operator',
    `spec.matchConstraints.objectSelector.matchLabels: Invalid value: "b c": ${LABEL_VALUE_MSG}`,
  ]);
});

test('policy: resource rules and exclusions (names, operations, groups, versions, resources, scope)', () => {
  const p = base({
    matchConstraints: {
      resourceRules: [{ resourceNames: ['a', 'a', 'x/y', '..'], operations: ['*', 'CREATE'], apiGroups: [], apiVersions: ['v1', ''], resources: ['*', 'pods'], scope: 'Global' }],
      excludeResourceRules: [{ operations: ['PATCH'], apiGroups: ['apps', '*'], apiVersions: ['*', 'v1'], resources: [] }],
    },
  });
  const r = 'spec.matchConstraints.resourceRules[0]';
  const x = 'spec.matchConstraints.excludeResourceRules[0]';
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(p)), [
    `${r}.resourceNames[1]: Duplicate value: "a"`,
    `${r}.resourceNames[2]: Invalid value: "x/y": may not contain '/'`,
    `${r}.resourceNames[3]: Invalid value: "..": may not be '..'`,
    `${r}.operations: Invalid value: []admissionregistration.OperationType{"*", "CREATE"}: if '*' is present, must not specify other operations`,
    `${r}.apiGroups: Required value`,
    `${r}.apiVersions[1]: Required value`,
    `${r}.resources: Invalid value: []string{"*", "pods"}: if '*' is present, must not specify other resources without subresources`,
    `${r}.scope: Unsupported value: "Global": supported values: "*", "Cluster", "Namespaced"`,
    `${x}.operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"`,
    `${x}.apiGroups: Invalid value: []string{"apps", "*"}: if '*' is present, must not specify other API groups`,
    `${x}.apiVersions: Invalid value: []string{"*", "v1"}: if '*' is present, must not specify other API versions`,
    `${x}.resources: Required value`,
  ]);
});

test('policy: matchConditions are named, unique, at most 64, and compile', () => {
  const p = base({
    matchConditions: [
      { name: '', expression: '' },
      { name: 'a b', expression: 'true' },
      { name: 'x', expression: '  1 +  ' },
      { name: 'x', expression: 'true' },
    ],
  });
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(p)), [
    'spec.matchConditions[0].expression: Required value',
    'spec.matchConditions[0].name: Required value',
    `spec.matchConditions[1].name: Invalid value: "a b": ${NAME_PART_MSG}`,
    // compiled and shown trimmed
    'spec.matchConditions[2].expression: Invalid value: "1 +": compilation failed: Syntax error: unexpected end of expression',
    'spec.matchConditions[3].name: Duplicate value: "x"',
  ]);
  const many = base({ matchConditions: Array.from({ length: 65 }, (_, i) => ({ name: `c${i}`, expression: 'true' })) });
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(many)), ['spec.matchConditions: Too many: 65: must have at most 64 items']);
  const qualified = base({ matchConditions: [{ name: 'example.com/not-system', expression: "!object.metadata.name.startsWith('system-')" }] });
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(qualified)), []);
});

test('policy: variables have CEL identifiers for names and an expression', () => {
  const p = base({
    variables: [
      { name: '', expression: '' },
      { name: '1x', expression: 'object.' },
      { name: 'in', expression: ' ' },
      { name: '  ', expression: 'true' },
      { name: '_ok', expression: 'object.spec.replicas' },
    ],
  });
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(p)), [
    'spec.variables[0].name: Required value: name is not specified',
    'spec.variables[0].expression: Required value: expression is not specified',
    'spec.variables[1].name: Invalid value: "1x": name is not a valid CEL identifier',
    'spec.variables[1].expression: Invalid value: "object.": compilation failed: Syntax error: expected a field name at 7',
    'spec.variables[2].name: Invalid value: "in": name is not a valid CEL identifier',
    'spec.variables[2].expression: Required value: expression is not specified',
    'spec.variables[3].name: Required value: name is not specified',
  ]);
});

test('policy: validations (expression, messageExpression, message, reason)', () => {
  const p = base({
    validations: [
      { expression: ' ' },
      { expression: 'true', messageExpression: '  ', message: '   ', reason: 'Conflict' },
      { expression: 'true', message: 'line\nbreak' },
      { expression: 'true', messageExpression: "'a' + ", message: '  fine, once trimmed\n ' },
      { expression: ' object.spec.replicas >  ', message: 'x\ry' },
    ],
  });
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(p)), [
    'spec.validations[0].expression: Required value: expression is not specified',
    'spec.validations[1].messageExpression: Invalid value: "  ": must be non-empty if specified',
    'spec.validations[1].message: Invalid value: "   ": message must be non-empty if specified',
    'spec.validations[1].reason: Unsupported value: "Conflict": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"',
    'spec.validations[2].message: Invalid value: "line\\nbreak": message must not contain line breaks',
    `spec.validations[3].messageExpression: Invalid value: "'a' + ": compilation failed: Syntax error: unexpected end of expression`,
    // the expression is compiled and shown as given
    'spec.validations[4].expression: Invalid value: " object.spec.replicas >  ": compilation failed: Syntax error: unexpected end of expression',
    'spec.validations[4].message: Invalid value: "x\\ry": message must not contain line breaks',
  ]);
});

test('policy: audit annotations (keys under the policy name, unique; a value expression of at most 5 KiB)', () => {
  const p = base({
    auditAnnotations: [
      { key: 'a', valueExpression: '1' },
      { key: 'a', valueExpression: '' },
      { key: 'bad key!', valueExpression: ' "x ' },
      { key: 'long', valueExpression: 'é'.repeat(2561) },
      // 5120 bytes once trimmed: allowed
      { key: 'edge', valueExpression: ` '${'a'.repeat(5118)}' ` },
    ],
  });
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(p)), [
    'spec.auditAnnotations[1].valueExpression: Required value: valueExpression is not specified',
    'spec.auditAnnotations[1].key: Duplicate value: "a"',
    `spec.auditAnnotations[2].key: Invalid value: "p/bad key!": ${NAME_PART_MSG}`,
    // compiled trimmed, shown as given
    'spec.auditAnnotations[2].valueExpression: Invalid value: " \\"x ": compilation failed: Syntax error: unterminated string at 0',
    // 5122 bytes in 2561 characters
    'spec.auditAnnotations[3].valueExpression: Required value: must not exceed 5120 bytes in length',
  ]);
  // the key needs the policy's name
  const unnamed = mutate(base({ auditAnnotations: [{ key: 'k', valueExpression: 'true' }] }), (x) => delete x.metadata.name);
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(unnamed)), ['spec.auditAnnotations[0].key: Invalid value: "k": requires metadata.name be non-empty']);
  // "<policy name>/<key>" must be one qualified name: a '/' in the key makes it two
  const slashed = base({ auditAnnotations: [{ key: 'a/b', valueExpression: 'true' }] }, 'demo.example.com');
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(slashed)), [
    `spec.auditAnnotations[0].key: Invalid value: "demo.example.com/a/b": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
  ]);
});

test('policy: at most 20 audit annotations, shown as Go prints the list', () => {
  const list = Array.from({ length: 21 }, (_, i) => ({ key: `k${i}`, valueExpression: 'true' }));
  const shown = `[]admissionregistration.AuditAnnotation{${list.map((a) => `admissionregistration.AuditAnnotation{Key:"${a.key}", ValueExpression:"true"}`).join(', ')}}`;
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(base({ validations: [], auditAnnotations: list }))), [
    `spec.auditAnnotations: Invalid value: ${shown}: must not have more than 20 auditAnnotations`,
  ]);
});

test('policy: errors come in the order of the spec checks', () => {
  const p = base({
    failurePolicy: 'x',
    paramKind: { apiVersion: '', kind: 'K' },
    matchConstraints: { resourceRules: [] },
    matchConditions: [{ name: 'c', expression: ')' }],
    variables: [{ name: 'v', expression: '(' }],
    validations: [{ expression: '[' }],
    auditAnnotations: [{ key: 'k', valueExpression: '{' }],
  });
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(p)), [
    'spec.failurePolicy: Unsupported value: "x": supported values: "Fail", "Ignore"',
    'spec.paramKind.apiVersion: Required value',
    'spec.matchConstraints.resourceRules: Required value',
    'spec.matchConditions[0].expression: Invalid value: ")": compilation failed: Syntax error: unexpected ")" at 0',
    'spec.variables[0].expression: Invalid value: "(": compilation failed: Syntax error: unexpected end of expression',
    'spec.validations[0].expression: Invalid value: "[": compilation failed: Syntax error: unexpected end of expression',
    'spec.auditAnnotations[0].valueExpression: Invalid value: "{": compilation failed: Syntax error: unexpected end of expression',
  ]);
});

test('policy: expressions of the CEL our interpreter reads compile (macros, optionals, literals)', () => {
  const p = base({
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    variables: [{ name: 'limits', expression: "{'cpu': quantity('500m'), 'n': [1, 2u, 3.5, b'x', r'\\d', '''multi''']}" }],
    validations: [
      { expression: "object.spec.template.spec.containers.all(c, c.image.matches('^[a-z./-]+:[0-9.]+$')) && object.spec.?replicas.orValue(1) >= 1" },
      { expression: "object.metadata.labels[?'tier'].hasValue() ? params.data.tier == object.metadata.labels.tier : true" },
      { expression: "authorizer.group('').resource('configmaps').namespace(request.namespace).check('get').allowed()" },
    ],
  });
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(p)), []);
});

// ---- policy updates ----

test('policy update: the create checks again', () => {
  const old = base();
  assert.deepEqual(strs(validateValidatingAdmissionPolicyUpdate(clone(old), old)), []);
  const bad = mutate(old, (x) => {
    x.spec.failurePolicy = 'Always';
    x.spec.validations = [{ expression: 'object.spec.replicas <' }];
  });
  assert.deepEqual(strs(validateValidatingAdmissionPolicyUpdate(bad, old)), [
    'spec.failurePolicy: Unsupported value: "Always": supported values: "Fail", "Ignore"',
    'spec.validations[0].expression: Invalid value: "object.spec.replicas <": compilation failed: Syntax error: unexpected end of expression',
  ]);
});

test('policy update: unchanged matchConditions and paramKind are not checked again', () => {
  const old = base({ paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, matchConditions: [{ name: 'Bad Name', expression: 'true' }] });
  const other = mutate(old, (x) => (x.spec.validations = [{ expression: 'object.spec.replicas <= 9' }]));
  assert.deepEqual(strs(validateValidatingAdmissionPolicyUpdate(other, old)), []);
  const err = `spec.matchConditions[0].name: Invalid value: "Bad Name": ${NAME_PART_MSG}`;
  // on create they are
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(old)), [err]);
  // a new paramKind, or changed conditions, and they are
  assert.deepEqual(strs(validateValidatingAdmissionPolicyUpdate(mutate(other, (x) => (x.spec.paramKind.kind = 'Secret')), old)), [err]);
  assert.deepEqual(strs(validateValidatingAdmissionPolicyUpdate(mutate(other, (x) => delete x.spec.paramKind), old)), [err]);
  assert.deepEqual(strs(validateValidatingAdmissionPolicyUpdate(mutate(other, (x) => (x.spec.matchConditions[0].expression = 'false')), old)), [err]);
  assert.deepEqual(
    strs(validateValidatingAdmissionPolicyUpdate(mutate(other, (x) => x.spec.matchConditions.push({ name: 'ok', expression: 'true' })), old)),
    [err],
  );
});

// ---- policy status ----

test('policy status: type-checking warnings and conditions', () => {
  const p = mutate(base(), (x) => {
    x.status = {
      observedGeneration: 1,
      typeChecking: { expressionWarnings: [{ fieldRef: 'spec.validations[0].expression', warning: "mismatched input '<EOF>'" }] },
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z', reason: 'Checked', message: '' }],
    };
  });
  assert.deepEqual(strs(validateValidatingAdmissionPolicyStatusUpdate(p, base())), []);
  const bad = mutate(p, (x) => {
    x.status.typeChecking.expressionWarnings = [{ fieldRef: '', warning: '' }, { fieldRef: ' spec.validations[0 ', warning: 'w' }, { warning: 'w' }];
    x.status.conditions.push({ type: 'Ready', status: 'Maybe', lastTransitionTime: '2025-01-01T00:00:00Z', reason: 'Bad reason' });
  });
  assert.deepEqual(strs(validateValidatingAdmissionPolicyStatusUpdate(bad, p)), [
    'status.typeChecking.expressionWarnings[0].warning: Required value',
    'status.typeChecking.expressionWarnings[0].fieldRef: Required value',
    'status.typeChecking.expressionWarnings[1].fieldRef: Invalid value: "spec.validations[0": invalid JSONPath: unterminated array',
    'status.typeChecking.expressionWarnings[2].fieldRef: Required value',
    'status.conditions[1].type: Duplicate value: "Ready"',
    'status.conditions[1].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
    "status.conditions[1].reason: Invalid value: \"Bad reason\": a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')",
  ]);
  // the spec is not looked at through the status subresource
  const badSpec = mutate(base(), (x) => (x.spec = {}));
  assert.deepEqual(strs(validateValidatingAdmissionPolicyStatusUpdate(badSpec, base())), []);
});

// ---- bindings ----

test('binding: the documentation examples pass', () => {
  const examples = [
    binding('demo-binding-test.example.com', {
      policyName: 'demo-policy.example.com',
      validationActions: ['Deny'],
      matchResources: { namespaceSelector: { matchLabels: { environment: 'test' } } },
    }),
    binding('replicalimit-binding-test.example.com', {
      policyName: 'replicalimit-policy.example.com',
      validationActions: ['Deny'],
      paramRef: { name: 'replica-limit-test.example.com', namespace: 'default', parameterNotFoundAction: 'Deny' },
      matchResources: { namespaceSelector: { matchLabels: { environment: 'test' } } },
    }),
    binding('replicalimit-binding-nontest', {
      policyName: 'replicalimit-policy.example.com',
      validationActions: ['Warn', 'Audit'],
      paramRef: { selector: { matchLabels: { environment: 'nontest' } }, parameterNotFoundAction: 'Allow' },
      matchResources: {
        namespaceSelector: { matchExpressions: [{ key: 'environment', operator: 'NotIn', values: ['test'] }] },
        resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }],
        excludeResourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['*'], resources: ['deployments'], resourceNames: ['system-web'] }],
      },
    }),
    binding('deny-and-audit', { policyName: 'p', validationActions: ['Deny', 'Audit'] }),
  ];
  for (const b of examples) assert.deepEqual(strs(validateValidatingAdmissionPolicyBinding(b)), [], b.metadata.name);
});

test('binding: policyName and validationActions are required', () => {
  assert.deepEqual(strs(validateValidatingAdmissionPolicyBinding({ metadata: { name: 'b' }, spec: {} })), [
    'spec.policyName: Required value',
    'spec.validationActions: Required value: at least one validation action is required',
  ]);
  assert.deepEqual(strs(validateValidatingAdmissionPolicyBinding(bbase({ policyName: 'Bad_Name', validationActions: [] }))), [
    `spec.policyName: Invalid value: "Bad_Name": ${SUBDOMAIN_MSG}`,
    'spec.validationActions: Required value: at least one validation action is required',
  ]);
});

test('binding: validationActions are Deny, Warn or Audit, unique, not Deny with Warn', () => {
  assert.deepEqual(strs(validateValidatingAdmissionPolicyBinding(bbase({ validationActions: ['Deny', 'Warn', 'Deny', 'Block'] }))), [
    'spec.validationActions[2]: Duplicate value: "Deny"',
    'spec.validationActions[3]: Unsupported value: "Block": supported values: "Audit", "Deny", "Warn"',
    `spec.validationActions: Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn", "Deny", "Block"}: ${DENY_AND_WARN}`,
  ]);
  assert.deepEqual(strs(validateValidatingAdmissionPolicyBinding(bbase({ validationActions: ['deny', 'deny'] }))), [
    'spec.validationActions[0]: Unsupported value: "deny": supported values: "Audit", "Deny", "Warn"',
    'spec.validationActions[1]: Unsupported value: "deny": supported values: "Audit", "Deny", "Warn"',
    'spec.validationActions[1]: Duplicate value: "deny"',
  ]);
});

test('binding: paramRef has a name or a selector, and a parameterNotFoundAction', () => {
  const v = (paramRef: any) => strs(validateValidatingAdmissionPolicyBinding(bbase({ paramRef })));
  assert.deepEqual(v({}), ['spec.paramRef: Required value: one of name or selector must be specified', 'spec.paramRef.parameterNotFoundAction: Required value']);
  assert.deepEqual(v({ name: 'a/b', selector: {}, parameterNotFoundAction: 'Ignore' }), [
    `spec.paramRef.name: Invalid value: "a/b": may not contain '/'`,
    `spec.paramRef.name: Forbidden: ${EXCLUSIVE}`,
    `spec.paramRef.selector: Forbidden: ${EXCLUSIVE}`,
    'spec.paramRef.parameterNotFoundAction: Unsupported value: "Ignore": supported values: "Deny", "Allow"',
  ]);
  assert.deepEqual(v({ selector: { matchExpressions: [{ key: 'k', operator: 'In' }] }, parameterNotFoundAction: '' }), [
    "spec.paramRef.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
    'spec.paramRef.parameterNotFoundAction: Required value',
  ]);
  assert.deepEqual(v({ name: '..', namespace: 'any thing', parameterNotFoundAction: 'Allow' }), [`spec.paramRef.name: Invalid value: "..": may not be '..'`]);
  // an empty selector selects every object of the kind
  assert.deepEqual(v({ selector: {}, parameterNotFoundAction: 'Deny' }), []);
});

test('binding: matchResources has no required resource rules, but what it has is validated', () => {
  assert.deepEqual(strs(validateValidatingAdmissionPolicyBinding(bbase({ matchResources: {} }))), []);
  assert.deepEqual(strs(validateValidatingAdmissionPolicyBinding({ metadata: { name: 'b' }, spec: { policyName: 'p', validationActions: ['Audit'], matchResources: {} } })), [
    'spec.matchResources.matchPolicy: Required value',
    'spec.matchResources.namespaceSelector: Required value',
    'spec.matchResources.objectSelector: Required value',
  ]);
  const b = bbase({
    matchResources: {
      objectSelector: { matchLabels: { 'bad key': 'v' } },
      resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: [], resources: ['deployments/*', 'deployments/scale'] }],
    },
  });
  assert.deepEqual(strs(validateValidatingAdmissionPolicyBinding(b)), [
    `spec.matchResources.objectSelector.matchLabels: Invalid value: "bad key": ${NAME_PART_MSG}`,
    'spec.matchResources.resourceRules[0].operations: Required value',
    "spec.matchResources.resourceRules[0].resources[1]: Invalid value: \"deployments/scale\": if 'deployments/*' is present, must not specify deployments/scale",
  ]);
});

test('binding: errors come in the order of the spec checks; an update checks the same', () => {
  const b = bbase({ policyName: '', paramRef: { name: 'x' }, matchResources: { matchPolicy: 'Any' }, validationActions: ['Nope'] });
  const want = [
    'spec.policyName: Required value',
    'spec.paramRef.parameterNotFoundAction: Required value',
    'spec.matchResources.matchPolicy: Unsupported value: "Any": supported values: "Equivalent", "Exact"',
    'spec.validationActions[0]: Unsupported value: "Nope": supported values: "Audit", "Deny", "Warn"',
  ];
  assert.deepEqual(strs(validateValidatingAdmissionPolicyBinding(b)), want);
  assert.deepEqual(strs(validateValidatingAdmissionPolicyBindingUpdate(b, bbase())), want);
  // nothing is immutable
  const old = bbase();
  const changed = bbase({ policyName: 'other', validationActions: ['Warn'], paramRef: { name: 'n', parameterNotFoundAction: 'Allow' } });
  assert.deepEqual(strs(validateValidatingAdmissionPolicyBindingUpdate(changed, old)), []);
});

test('an identifier a policy does not declare is a compile error in cel-go\'s checker\'s words: params without a paramKind, a misspelt variable', () => {
  const p = base({
    validations: [
      { expression: 'params.x == 1' },
      { expression: 'object.spec.containers.all(c, c.name != "") && objet.kind == "Pod"' },
      { expression: "object.spec.containers.exists(c, c.name == 'a') && variables.v == 1 && namespaceObject.metadata.name != '' && request.operation == 'CREATE'" },
    ],
  });
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(p)), [
    "spec.validations[0].expression: Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^",
    "spec.validations[1].expression: Invalid value: \"object.spec.containers.all(c, c.name != \\\"\\\") && objet.kind == \\\"Pod\\\"\": compilation failed: ERROR: <input>:1:48: undeclared reference to 'objet' (in container '')\n | object.spec.containers.all(c, c.name != \"\") && objet.kind == \"Pod\"\n | ...............................................^",
  ]);
  // with a paramKind, params is declared
  const withParams = base({ paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, validations: [{ expression: 'params.data.x == "1"' }] });
  assert.deepEqual(strs(validateValidatingAdmissionPolicy(withParams)), []);
});

