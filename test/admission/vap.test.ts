// ValidatingAdmissionPolicy through the admission chain, on a cluster held in memory: matching,
// params, variables, messages, validation actions, failure policy, audit annotations; and the CEL
// libraries the policies use (quantity, lists, regex, strings, authorizer).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Attributes, Authorizer } from '../../src/apiserver/authz.js';
import { buildAdmissionChain } from '../../src/apiserver/admission/chain.js';
import { celAuthorizer, evaluateCEL } from '../../src/apiserver/admission/cel.js';
import { BUILTIN_KINDS } from '../../src/schema/kinds.js';
import { MemoryCluster, attrs, rejection } from './fake.js';

const G = 'admissionregistration.k8s.io';

function setup(policies: any[], bindings: any[]) {
  const m = new MemoryCluster();
  m.namespace('prod', { env: 'prod' });
  m.namespace('dev');
  for (const p of policies) m.add(G, 'validatingadmissionpolicies', { metadata: { name: p.name }, spec: p.spec });
  for (const b of bindings) m.add(G, 'validatingadmissionpolicybindings', { metadata: { name: b.name }, spec: b.spec });
  const chain = buildAdmissionChain({ enable: [], disable: [], reader: m, writer: m, kinds: () => BUILTIN_KINDS });
  return { m, chain };
}

const deployRules = { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }] };
const deploy = (name: string, ns: string, replicas: number, labels: Record<string, string> = {}) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: ns, labels }, spec: { replicas } });

test('VAP: Deny with the validation message, reason and code; Warn and Audit', async () => {
  const { chain } = setup(
    [{ name: 'max', spec: { matchConstraints: deployRules, validations: [{ expression: 'object.spec.replicas <= 5', message: 'too many', reason: 'Forbidden' }] } }],
    [
      { name: 'deny', spec: { policyName: 'max', validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { env: 'prod' } } } } },
      { name: 'warn', spec: { policyName: 'max', validationActions: ['Warn', 'Audit'] } },
    ],
  );
  const a = attrs('deployments', 'CREATE', { object: deploy('web', 'prod', 9) });
  const e = await rejection(() => chain.validate(a));
  assert.equal(e.code, 403);
  assert.equal(e.reason, 'Forbidden');
  assert.equal(e.message, `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'max' with binding 'deny' denied request: too many`);
  assert.deepEqual(a.warnings, ["Validation failed for ValidatingAdmissionPolicy 'max' with binding 'warn': too many"]);
  assert.deepEqual(JSON.parse(a.auditAnnotations!['validation.policy.admission.k8s.io/validation_failure']!), [
    { message: 'too many', policy: 'max', binding: 'warn', expressionIndex: 0, validationActions: ['Warn', 'Audit'] },
  ]);
  // the deny binding does not match dev; small deployments pass everywhere
  const b = attrs('deployments', 'CREATE', { object: deploy('web', 'dev', 9) });
  await chain.validate(b);
  assert.equal(b.warnings!.length, 1);
  await chain.validate(attrs('deployments', 'CREATE', { object: deploy('web', 'prod', 2) }));
  // other resources are not matched
  await chain.validate(attrs('configmaps', 'CREATE', { object: { metadata: { name: 'c', namespace: 'prod' } } }));
});

test('VAP: params by name and by selector, variables, messageExpression, parameterNotFoundAction', async () => {
  const { m, chain } = setup(
    [
      {
        name: 'limit',
        spec: {
          paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
          matchConstraints: deployRules,
          variables: [{ name: 'max', expression: 'int(params.data.max)' }],
          validations: [{ expression: 'object.spec.replicas <= variables.max', messageExpression: "'at most ' + string(variables.max) + ' replicas'" }],
        },
      },
    ],
    [
      { name: 'by-name', spec: { policyName: 'limit', validationActions: ['Deny'], paramRef: { name: 'limits', namespace: 'prod', parameterNotFoundAction: 'Deny' }, matchResources: { namespaceSelector: { matchLabels: { env: 'prod' } } } } },
      { name: 'by-selector', spec: { policyName: 'limit', validationActions: ['Warn'], paramRef: { selector: { matchLabels: { kind: 'limit' } }, parameterNotFoundAction: 'Allow' } } },
    ],
  );
  const e = await rejection(() => chain.validate(attrs('deployments', 'CREATE', { object: deploy('web', 'prod', 1) })));
  assert.equal(e.code, 422);
  assert.equal(e.reason, 'Invalid');
  assert.match(e.message, /with binding 'by-name' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction$/);
  m.add('', 'configmaps', { metadata: { name: 'limits', namespace: 'prod' }, data: { max: '3' } });
  await chain.validate(attrs('deployments', 'CREATE', { object: deploy('web', 'prod', 3) }));
  const e2 = await rejection(() => chain.validate(attrs('deployments', 'CREATE', { object: deploy('web', 'prod', 4) })));
  assert.match(e2.message, /denied request: at most 3 replicas$/);
  // the selector binding: each matching ConfigMap of the request's namespace is evaluated
  m.add('', 'configmaps', { metadata: { name: 'a', namespace: 'dev', labels: { kind: 'limit' } }, data: { max: '1' } });
  m.add('', 'configmaps', { metadata: { name: 'b', namespace: 'dev', labels: { kind: 'limit' } }, data: { max: '2' } });
  const a = attrs('deployments', 'CREATE', { object: deploy('web', 'dev', 2) });
  await chain.validate(a);
  assert.deepEqual(a.warnings, ["Validation failed for ValidatingAdmissionPolicy 'limit' with binding 'by-selector': at most 1 replicas"]);
});

test('VAP: matchConditions, failurePolicy, excludeResourceRules, resourceNames, objectSelector, auditAnnotations', async () => {
  const policy = (name: string, extra: any) => ({ name, spec: { matchConstraints: deployRules, validations: [{ expression: 'object.spec.replicas < 10' }], ...extra } });
  const { chain } = setup(
    [
      policy('cond', { matchConditions: [{ name: 'not-system', expression: "!object.metadata.name.startsWith('system-')" }] }),
      policy('broken', { failurePolicy: 'Ignore', validations: [{ expression: 'object.spec.missing.x == 1' }] }),
      policy('audited', { auditAnnotations: [{ key: 'replicas', valueExpression: "string(object.spec.replicas)" }], validations: [] }),
    ],
    [
      { name: 'cond', spec: { policyName: 'cond', validationActions: ['Deny'], matchResources: { objectSelector: { matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }] }, excludeResourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['*'], resources: ['deployments'], resourceNames: ['excluded'] }] } } },
      { name: 'broken', spec: { policyName: 'broken', validationActions: ['Deny'] } },
      { name: 'audited', spec: { policyName: 'audited', validationActions: ['Audit'] } },
    ],
  );
  const e = await rejection(() => chain.validate(attrs('deployments', 'CREATE', { object: deploy('web', 'dev', 12) })));
  assert.equal(e.message, `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'cond' with binding 'cond' denied request: failed expression: object.spec.replicas < 10`);
  const a = attrs('deployments', 'CREATE', { object: deploy('system-web', 'dev', 12) });
  await chain.validate(a);
  assert.equal(a.auditAnnotations!['audited/replicas'], '12');
  await chain.validate(attrs('deployments', 'CREATE', { object: deploy('web', 'dev', 12, { skip: 'yes' }) }));
  await chain.validate(attrs('deployments', 'UPDATE', { name: 'excluded', object: deploy('excluded', 'dev', 12), oldObject: deploy('excluded', 'dev', 1) }));
});

test('VAP: an evaluation error under failurePolicy Fail denies with the CEL error', async () => {
  const { chain } = setup(
    [{ name: 'p', spec: { matchConstraints: deployRules, validations: [{ expression: 'object.spec.nothing > 1' }] } }],
    [{ name: 'b', spec: { policyName: 'p', validationActions: ['Deny'] } }],
  );
  const e = await rejection(() => chain.validate(attrs('deployments', 'CREATE', { object: deploy('web', 'dev', 1) })));
  assert.equal(e.message, `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: expression 'object.spec.nothing > 1' resulted in error: no such key: nothing`);
});

test('CEL libraries: quantity, lists, regex, strings', () => {
  const e = (x: string) => evaluateCEL(x, { object: { spec: { cpu: '500m', mem: '1Gi', items: [3, 1, 2] } } });
  assert.equal(e("quantity(object.spec.cpu).isLessThan(quantity('1'))"), true);
  assert.equal(e("quantity(object.spec.mem).compareTo(quantity('1024Mi'))"), 0);
  assert.equal(e("quantity('2').add(quantity('500m')).asApproximateFloat()"), 2.5);
  assert.equal(e("quantity('3k').asInteger()"), 3000);
  assert.equal(e("isQuantity('1x')"), false);
  assert.equal(e("string(quantity('1000m'))"), '1');
  assert.equal(e('object.spec.items.sum()'), 6);
  assert.equal(e('object.spec.items.max()'), 3);
  assert.equal(e('object.spec.items.min()'), 1);
  assert.equal(e('object.spec.items.isSorted()'), false);
  assert.equal(e('[1, 2, 2].isSorted()'), true);
  assert.equal(e('object.spec.items.indexOf(2)'), 2);
  assert.equal(e("'abc123def45'.find('[0-9]+')"), '123');
  assert.deepEqual(e("'abc123def45'.findAll('[0-9]+')"), ['123', '45']);
  assert.equal(e("'a-b-c'.replace('-', '+')"), 'a+b+c');
  assert.equal(e("'a-b-c'.replace('-', '+', 1)"), 'a+b-c');
  assert.equal(e("'hello'.substring(1, 3)"), 'el');
  assert.equal(e("'hello'.charAt(4)"), 'o');
});

test('CEL optionals', () => {
  const e = (x: string) => evaluateCEL(x, { object: { metadata: { labels: { app: 'web' } }, spec: { ports: [80] } } });
  assert.equal(e('object.spec.?replicas.orValue(1)'), 1);
  assert.equal(e("object.metadata.?labels.?app.orValue('none')"), 'web');
  assert.equal(e("object.metadata.?annotations.?owner.hasValue()"), false);
  assert.equal(e("object.metadata.labels[?'tier'].orValue('front')"), 'front');
  assert.equal(e('object.spec.ports[?0].value()'), 80);
  assert.equal(e('object.spec.ports[?3].hasValue()'), false);
  assert.equal(e('optional.of(2).value() + optional.none().orValue(3)'), 5);
  assert.equal(e("optional.ofNonZeroValue('').hasValue()"), false);
  assert.equal(e('object.spec.?replicas.or(optional.of(4)).value()'), 4);
  assert.equal(e('true ?.5 : 1.0'), 0.5);
});

test('CEL authorizer library', () => {
  const asked: Attributes[] = [];
  const authz: Authorizer = {
    authorize: (a) => (asked.push(a), a.verb === 'get' ? { decision: 'allow', reason: '' } : { decision: 'noOpinion', reason: 'no rule' }),
    rulesFor: () => ({ resourceRules: [], nonResourceRules: [], incomplete: false }),
  };
  const authorizer = celAuthorizer(authz, { name: 'alice', groups: [] }, { group: 'apps', resource: 'deployments', subresource: '', namespace: 'dev', name: 'web' });
  const e = (x: string) => evaluateCEL(x, { authorizer });
  assert.equal(e("authorizer.group('').resource('pods').namespace('dev').check('get').allowed()"), true);
  assert.deepEqual([asked[0]!.apiGroup, asked[0]!.resource, asked[0]!.namespace, asked[0]!.verb, asked[0]!.user.name], ['', 'pods', 'dev', 'get', 'alice']);
  assert.equal(e("authorizer.requestResource.check('delete').reason()"), 'no rule');
  assert.deepEqual([asked[1]!.apiGroup, asked[1]!.resource, asked[1]!.name], ['apps', 'deployments', 'web']);
  assert.equal(e("authorizer.serviceAccount('dev', 'ci').path('/healthz').check('get').allowed()"), true);
  assert.equal(asked[2]!.user.name, 'system:serviceaccount:dev:ci');
  assert.equal(asked[2]!.path, '/healthz');
});
