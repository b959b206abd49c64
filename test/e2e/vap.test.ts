// ValidatingAdmissionPolicy end to end with kubectl: a policy that limits Deployments' replicas to
// a maximum read from a ConfigMap (paramKind + paramRef), bound to the namespaces labelled
// environment=test, refuses with Kubernetes' message; a second policy bound with the Warn action
// shows as a kubectl warning; matchConditions, variables and messageExpression take part.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, until, type Cluster } from './harness.js';

let c: Cluster;

function ok(args: string[], input?: string) {
  const r = c.kubectl(args, { input, version: '1.33' });
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r;
}

const DEPLOYMENTS = '{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}';

const POLICIES = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replica-limit}
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints: {resourceRules: [${DEPLOYMENTS}]}
  matchConditions:
  - name: not-exempt
    expression: "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)"
  variables:
  - name: max
    expression: "int(params.data.maxReplicas)"
  validations:
  - expression: "object.spec.replicas <= variables.max"
    messageExpression: "'replicas must be no greater than ' + string(variables.max)"
    reason: Invalid
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replica-limit-binding}
spec:
  policyName: replica-limit
  validationActions: [Deny]
  paramRef: {name: replica-limits, namespace: policy-params, parameterNotFoundAction: Deny}
  matchResources:
    namespaceSelector:
      matchLabels: {environment: test}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replica-warn}
spec:
  matchConstraints: {resourceRules: [${DEPLOYMENTS}]}
  validations:
  - expression: "object.spec.replicas <= 3"
    message: more than 3 replicas
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replica-warn-binding}
spec:
  policyName: replica-warn
  validationActions: [Warn]
  matchResources:
    namespaceSelector:
      matchLabels: {environment: test}
`;

function deployment(name: string, ns: string, replicas: number, labels: Record<string, string> = { app: name }): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns, labels },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } },
  });
}

const DENIED = "ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-binding' denied request: replicas must be no greater than 5";

before(async () => {
  c = await startCluster();
  ok(['create', 'namespace', 'policy-params']);
  ok(['create', 'namespace', 'test-env']);
  ok(['label', 'namespace', 'test-env', 'environment=test']);
  ok(['create', 'namespace', 'other']);
  ok(['create', 'configmap', 'replica-limits', '-n', 'policy-params', '--from-literal=maxReplicas=5']);
  ok(['apply', '-f', '-'], POLICIES);
  // the policies reach the plugin through the watch caches
  await until('policy in force', () => c.kubectl(['create', '-f', '-', '--dry-run=server'], { input: deployment('probe', 'test-env', 9) }).code !== 0);
});

after(async () => {
  await c?.stop();
});

test('Deny: a Deployment over the ConfigMap maximum is refused in a labelled namespace', () => {
  const r = c.kubectl(['create', '-f', '-'], { input: deployment('big', 'test-env', 7), version: '1.33' });
  assert.notEqual(r.code, 0, r.stdout);
  // kubectl prints a 422 with one cause and no field as Kubernetes' documentation shows it
  assert.ok(r.stderr.includes(`The deployments "big" is invalid: : ${DENIED}`), r.stderr);
  // an update past the maximum too
  ok(['create', '-f', '-'], deployment('small', 'test-env', 2));
  const p = c.kubectl(['patch', 'deployment', 'small', '-n', 'test-env', '-p', '{"spec":{"replicas":6}}'], { version: '1.33' });
  assert.notEqual(p.code, 0);
  assert.ok(p.stderr.includes(DENIED), p.stderr);
  // other namespaces are not bound; matchConditions exempt labelled Deployments
  ok(['create', '-f', '-'], deployment('big', 'other', 7));
  ok(['create', '-f', '-'], deployment('exempt', 'test-env', 7, { app: 'exempt', exempt: 'yes' }));
});

test('the Status: reason Invalid, code 422, the message as a cause', async () => {
  const r = await c.raw('POST', '/apis/apps/v1/namespaces/test-env/deployments', { body: JSON.parse(deployment('raw', 'test-env', 8)) });
  assert.equal(r.status, 422, r.text);
  const st = r.json();
  assert.equal(st.reason, 'Invalid');
  assert.equal(st.message, `deployments.apps "raw" is forbidden: ${DENIED}`);
  assert.deepEqual(st.details.causes, [{ message: DENIED }]);
});

test('Warn: a kubectl warning, the request goes through', () => {
  const r = ok(['create', '-f', '-'], deployment('four', 'test-env', 4));
  assert.ok(r.stderr.includes("Warning: Validation failed for ValidatingAdmissionPolicy 'replica-warn' with binding 'replica-warn-binding': more than 3 replicas"), r.stderr);
  const quiet = ok(['create', '-f', '-'], deployment('three', 'test-env', 3));
  assert.ok(!quiet.stderr.includes('Warning'), quiet.stderr);
});

test('params: a new maximum in the ConfigMap applies; a missing ConfigMap denies', async () => {
  ok(['patch', 'configmap', 'replica-limits', '-n', 'policy-params', '-p', '{"data":{"maxReplicas":"10"}}']);
  await until('new maximum', () => c.kubectl(['create', '-f', '-'], { input: deployment('seven', 'test-env', 7) }).code === 0);
  ok(['delete', 'configmap', 'replica-limits', '-n', 'policy-params']);
  const r = await until('no params', () => {
    const x = c.kubectl(['create', '-f', '-'], { input: deployment('lost', 'test-env', 1) });
    return x.code !== 0 ? x : undefined;
  });
  assert.ok(r.stderr.includes("ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"), r.stderr);
});

test('params of a custom resource kind', async () => {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'replicalimits.policy.example.com' },
    spec: {
      group: 'policy.example.com',
      scope: 'Cluster',
      names: { plural: 'replicalimits', singular: 'replicalimit', kind: 'ReplicaLimit' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { maxReplicas: { type: 'integer' } } } } }],
    },
  };
  ok(['apply', '-f', '-'], JSON.stringify(crd));
  await until('CRD served', () => c.kubectl(['get', 'replicalimits']).code === 0);
  ok(['apply', '-f', '-'], `
apiVersion: policy.example.com/v1
kind: ReplicaLimit
metadata: {name: strict}
maxReplicas: 1
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: crd-limit}
spec:
  paramKind: {apiVersion: policy.example.com/v1, kind: ReplicaLimit}
  matchConstraints: {resourceRules: [${DEPLOYMENTS}]}
  validations:
  - expression: "object.spec.replicas <= params.maxReplicas"
    messageExpression: "'at most ' + string(params.maxReplicas) + ' by ' + params.metadata.name"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: crd-limit-binding}
spec: {policyName: crd-limit, validationActions: [Deny], paramRef: {name: strict, parameterNotFoundAction: Deny}, matchResources: {namespaceSelector: {matchLabels: {strict: "yes"}}}}
`);
  ok(['create', 'namespace', 'strict']);
  ok(['label', 'namespace', 'strict', 'strict=yes']);
  const r = await until('custom params in force', () => {
    const x = c.kubectl(['create', '-f', '-'], { input: deployment('two', 'strict', 2) });
    return x.code !== 0 ? x : undefined;
  });
  assert.ok(r.stderr.includes("ValidatingAdmissionPolicy 'crd-limit' with binding 'crd-limit-binding' denied request: at most 1 by strict"), r.stderr);
  ok(['create', '-f', '-'], deployment('one', 'strict', 1));
});
