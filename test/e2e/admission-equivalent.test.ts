// matchPolicy Equivalent end to end: webhooks and ValidatingAdmissionPolicies whose rules name one
// version of a resource see the writes through its other versions, converted to the version they
// named, as kube-apiserver 1.33 sends them: HorizontalPodAutoscalers (autoscaling/v2 and v1),
// Events (v1 and events.k8s.io/v1) and a custom resource served at two versions. matchPolicy
// Exact keeps them out. A real HTTPS webhook server on 127.0.0.1; kubectl and raw HTTPS clients.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, until, expectStatus, type Cluster } from './harness.js';
import { patchResponse, respond, startWebhookServer, type WebhookServer } from '../admission/webhookserver.js';

let c: Cluster;
let hooks: WebhookServer;
const NS = 'equiv';
const V1 = `/apis/autoscaling/v1/namespaces/${NS}/horizontalpodautoscalers`;
const V2 = `/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers`;

before(async () => {
  c = await startCluster();
  hooks = await startWebhookServer();
  hooks.handle('/allow', (r) => respond(r, { allowed: true }));
  // refuses an HPA (in v2 form) whose first metric targets less than 50% cpu
  hooks.handle('/hpa-floor', (r) => {
    const m = r.request.object?.spec?.metrics?.[0]?.resource?.target?.averageUtilization;
    return typeof m === 'number' && m < 50 ? respond(r, { allowed: false, status: { code: 403, reason: 'Forbidden', message: `utilization ${m} is under 50` } }) : respond(r, { allowed: true });
  });
  // a v2 patch: one more replica at most, and a label
  hooks.handle('/hpa-mutate', (r) =>
    patchResponse(r, [
      { op: 'replace', path: '/spec/maxReplicas', value: r.request.object.spec.maxReplicas + 1 },
      { op: 'add', path: '/metadata/labels', value: { mutated: r.request.kind.version } },
    ]),
  );
  hooks.handle('/gadget', (r) => patchResponse(r, [{ op: 'add', path: '/spec/seenAs', value: r.request.object.apiVersion }]));
  const ns = await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  assert.equal(ns.status, 201, ns.text);
});

after(async () => {
  await hooks?.close();
  await c?.stop();
});

async function webhookConfig(kind: 'Validating' | 'Mutating', name: string, hook: any): Promise<() => Promise<void>> {
  const resource = kind === 'Validating' ? 'validatingwebhookconfigurations' : 'mutatingwebhookconfigurations';
  const r = await c.raw('POST', `/apis/admissionregistration.k8s.io/v1/${resource}`, {
    body: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: `${kind}WebhookConfiguration`,
      metadata: { name },
      webhooks: [{ name: `${name}.example.com`, admissionReviewVersions: ['v1'], sideEffects: 'None', ...hook }],
    },
  });
  assert.equal(r.status, 201, r.text);
  return async () => {
    await c.raw('DELETE', `/apis/admissionregistration.k8s.io/v1/${resource}/${name}`);
  };
}

const hpaV1 = (name: string, cpu?: number) => ({
  apiVersion: 'autoscaling/v1',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name },
  spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3, ...(cpu === undefined ? {} : { targetCPUUtilizationPercentage: cpu }) },
});

const hpaV2 = (name: string, cpu?: number) => ({
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name },
  spec: {
    scaleTargetRef: { kind: 'Deployment', name: 'web' },
    maxReplicas: 3,
    ...(cpu === undefined ? {} : { metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: cpu } } }] }),
  },
});

const HPA_V2_RULE = { operations: ['CREATE', 'UPDATE'], apiGroups: ['autoscaling'], apiVersions: ['v2'], resources: ['horizontalpodautoscalers'] };

test('a validating webhook on autoscaling/v2 sees a v1 create in v2 form; matchPolicy Exact does not see it', async () => {
  const drop = await webhookConfig('Validating', 'hpa-floor', { clientConfig: { url: hooks.url('/hpa-floor'), caBundle: hooks.caBundle }, rules: [HPA_V2_RULE] });
  const dropExact = await webhookConfig('Validating', 'hpa-exact', { clientConfig: { url: hooks.url('/allow'), caBundle: hooks.caBundle }, rules: [HPA_V2_RULE], matchPolicy: 'Exact' });
  try {
    const denied = await c.raw('POST', V1, { body: hpaV1('low', 30) });
    const s = expectStatus(denied, 403, 'Forbidden');
    assert.equal(s.message, 'admission webhook "hpa-floor.example.com" denied the request: utilization 30 is under 50');
    const seen = hooks.received.get('/hpa-floor')!.at(-1)!.review.request;
    assert.deepEqual(seen.kind, { group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' });
    assert.deepEqual(seen.resource, { group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers' });
    assert.deepEqual(seen.requestKind, { group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' });
    assert.deepEqual(seen.requestResource, { group: 'autoscaling', version: 'v1', resource: 'horizontalpodautoscalers' });
    assert.equal(seen.object.apiVersion, 'autoscaling/v2');
    assert.deepEqual(seen.object.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 30 } } }]);
    assert.equal(seen.object.spec.targetCPUUtilizationPercentage, undefined);
    // kubectl autoscale (kubectl 1.27 writes autoscaling/v1) is refused the same way
    const k = await c.kubectlAsync(['create', 'deployment', 'web', '-n', NS, '--image=nginx']);
    assert.equal(k.code, 0, k.stderr);
    const r = await c.kubectlAsync(['autoscale', 'deployment', 'web', '-n', NS, '--max=3', '--cpu-percent=20'], { version: '1.27' });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /admission webhook "hpa-floor.example.com" denied the request: utilization 20 is under 50/);
    // the Exact webhook saw neither v1 write
    assert.equal(hooks.received.get('/allow')?.length ?? 0, 0);
    // a v2 write reaches both, as it came
    const ok = await c.raw('POST', V2, { body: hpaV2('high') });
    assert.equal(ok.status, 201, ok.text);
    const exact = hooks.received.get('/allow')!.at(-1)!.review.request;
    assert.deepEqual(exact.requestKind, exact.kind);
    // an update through v1 too: the old object in v2 form as well
    const cur = (await c.raw('GET', `${V1}/high`)).json();
    cur.spec.targetCPUUtilizationPercentage = 10;
    const upd = await c.raw('PUT', `${V1}/high`, { body: cur });
    assert.equal(expectStatus(upd, 403, 'Forbidden').message, 'admission webhook "hpa-floor.example.com" denied the request: utilization 10 is under 50');
    const seenUpdate = hooks.received.get('/hpa-floor')!.at(-1)!.review.request;
    assert.equal(seenUpdate.operation, 'UPDATE');
    assert.equal(seenUpdate.oldObject.apiVersion, 'autoscaling/v2');
    assert.equal(seenUpdate.oldObject.spec.metrics[0].resource.target.averageUtilization, 80);
  } finally {
    await drop();
    await dropExact();
  }
});

test('a mutating webhook on autoscaling/v2 patches a v1 write in v2 form; the change comes back in v1', async () => {
  const drop = await webhookConfig('Mutating', 'hpa-mutate', { clientConfig: { url: hooks.url('/hpa-mutate'), caBundle: hooks.caBundle }, rules: [HPA_V2_RULE] });
  try {
    const made = await c.raw('POST', V1, { body: hpaV1('mutated', 60) });
    assert.equal(made.status, 201, made.text);
    const o = made.json();
    assert.equal(o.apiVersion, 'autoscaling/v1');
    assert.equal(o.spec.maxReplicas, 4);
    assert.equal(o.spec.targetCPUUtilizationPercentage, 60);
    assert.deepEqual(o.metadata.labels, { mutated: 'v2' });
    const v2 = (await c.raw('GET', `${V2}/mutated`)).json();
    assert.equal(v2.spec.maxReplicas, 4);
    // the webhook was sent the object in v2 form
    const seen = hooks.received.get('/hpa-mutate')!.at(-1)!.review.request;
    assert.equal(seen.object.apiVersion, 'autoscaling/v2');
  } finally {
    await drop();
  }
});

test('a webhook on events.k8s.io/v1 Events sees a core v1 Event converted (note, regarding, reportingController)', async () => {
  const drop = await webhookConfig('Validating', 'events', {
    clientConfig: { url: hooks.url('/allow'), caBundle: hooks.caBundle },
    rules: [{ operations: ['CREATE'], apiGroups: ['events.k8s.io'], apiVersions: ['v1'], resources: ['events'] }],
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
  });
  try {
    const before = hooks.received.get('/allow')?.length ?? 0;
    const r = await c.raw('POST', `/api/v1/namespaces/${NS}/events`, {
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'ev1' },
        involvedObject: { kind: 'Pod', name: 'p', namespace: NS },
        reason: 'Tested',
        message: 'hello',
        type: 'Normal',
        source: { component: 'tester' },
      },
    });
    assert.equal(r.status, 201, r.text);
    // (the namespace's controllers may record Events of their own meanwhile: ours is the one named ev1)
    const got = hooks.received.get('/allow')!.slice(before).filter((x: any) => x.review.request.name === 'ev1' || x.review.request.object?.metadata?.name === 'ev1');
    assert.equal(got.length, 1);
    const seen = got[0]!.review.request;
    assert.deepEqual(seen.kind, { group: 'events.k8s.io', version: 'v1', kind: 'Event' });
    assert.deepEqual(seen.requestKind, { group: '', version: 'v1', kind: 'Event' });
    assert.equal(seen.object.apiVersion, 'events.k8s.io/v1');
    assert.equal(seen.object.note, 'hello');
    assert.equal(seen.object.regarding.name, 'p');
    assert.equal(seen.object.deprecatedSource.component, 'tester');
  } finally {
    await drop();
  }
});

test('a custom resource served at two versions: a webhook on v1 gets a v2beta1 write as v1, and its patch lands', async () => {
  const crd = await c.raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    body: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.equiv.example.com' },
      spec: {
        group: 'equiv.example.com',
        scope: 'Namespaced',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
        versions: [
          { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } } },
          { name: 'v2beta1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } } },
        ],
      },
    },
  });
  assert.equal(crd.status, 201, crd.text);
  const path = (v: string) => `/apis/equiv.example.com/${v}/namespaces/${NS}/gadgets`;
  await until('the CRD is served', async () => (await c.raw('GET', path('v2beta1'))).status === 200);
  const drop = await webhookConfig('Mutating', 'gadget', {
    clientConfig: { url: hooks.url('/gadget'), caBundle: hooks.caBundle },
    rules: [{ operations: ['CREATE'], apiGroups: ['equiv.example.com'], apiVersions: ['v1'], resources: ['gadgets'] }],
  });
  try {
    const r = await c.raw('POST', path('v2beta1'), { body: { apiVersion: 'equiv.example.com/v2beta1', kind: 'Gadget', metadata: { name: 'g' }, spec: { size: 1 } } });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json().apiVersion, 'equiv.example.com/v2beta1');
    assert.deepEqual(r.json().spec, { size: 1, seenAs: 'equiv.example.com/v1' });
    const seen = hooks.received.get('/gadget')!.at(-1)!.review.request;
    assert.deepEqual(seen.kind, { group: 'equiv.example.com', version: 'v1', kind: 'Gadget' });
    assert.deepEqual(seen.requestKind, { group: 'equiv.example.com', version: 'v2beta1', kind: 'Gadget' });
    assert.deepEqual(seen.resource, { group: 'equiv.example.com', version: 'v1', resource: 'gadgets' });
    // a write through v1 is sent as it came
    const direct = await c.raw('POST', path('v1'), { body: { apiVersion: 'equiv.example.com/v1', kind: 'Gadget', metadata: { name: 'h' }, spec: {} } });
    assert.deepEqual(direct.json().spec, { seenAs: 'equiv.example.com/v1' });
    assert.deepEqual(hooks.received.get('/gadget')!.at(-1)!.review.request.requestKind.version, 'v1');
  } finally {
    await drop();
  }
});

test('a ValidatingAdmissionPolicy on autoscaling/v2 judges a v1 write by its v2 form; request names v2; Exact and exclusions keep it out', async () => {
  const policy = (name: string, constraints: any) => ({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      matchConstraints: constraints,
      validations: [{ expression: "object.spec.metrics.all(m, m.resource.target.averageUtilization >= 40) && request.kind.version == 'v2'", message: `${name}: utilization under 40` }],
    },
  });
  const binding = (name: string) => ({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: `${name}-binding` },
    spec: { policyName: name, validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } } } },
  });
  const RULE = { ...HPA_V2_RULE };
  const made: string[] = [];
  const add = async (name: string, constraints: any) => {
    for (const [res, body] of [
      ['validatingadmissionpolicies', policy(name, constraints)],
      ['validatingadmissionpolicybindings', binding(name)],
    ] as const) {
      const r = await c.raw('POST', `/apis/admissionregistration.k8s.io/v1/${res}`, { body });
      assert.equal(r.status, 201, r.text);
    }
    made.push(name);
  };
  try {
    await add('floor-equivalent', { resourceRules: [RULE] });
    await add('floor-exact', { resourceRules: [RULE], matchPolicy: 'Exact' });
    await add('floor-excluded', { resourceRules: [RULE], excludeResourceRules: [{ ...RULE, apiVersions: ['v1'] }] });
    const r = await until('the policy is in force', async () => {
      const x = await c.raw('POST', `${V1}?dryRun=All`, { body: hpaV1('vap', 20) });
      return x.status === 422 ? x : undefined;
    });
    const s = expectStatus(r, 422, 'Invalid');
    assert.equal(s.message, "horizontalpodautoscalers.autoscaling \"vap\" is forbidden: ValidatingAdmissionPolicy 'floor-equivalent' with binding 'floor-equivalent-binding' denied request: floor-equivalent: utilization under 40");
    // the same object through v2 is judged by all three; only the Exact one is left once the
    // first two are gone
    const v2 = await c.raw('POST', `${V2}?dryRun=All`, { body: hpaV2('vap', 20) });
    assert.match(expectStatus(v2, 422, 'Invalid').message, /ValidatingAdmissionPolicy 'floor-equivalent'/);
    for (const name of ['floor-equivalent']) {
      await c.raw('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${name}-binding`);
      await c.raw('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${name}`);
      made.splice(made.indexOf(name), 1);
    }
    const passes = await until('the equivalent policy is gone', async () => {
      const x = await c.raw('POST', `${V1}?dryRun=All`, { body: hpaV1('vap', 20) });
      return x.status === 201 ? x : undefined;
    });
    assert.equal(passes.status, 201);
    const v2again = await c.raw('POST', `${V2}?dryRun=All`, { body: hpaV2('vap', 20) });
    assert.match(expectStatus(v2again, 422, 'Invalid').message, /ValidatingAdmissionPolicy 'floor-e(xact|xcluded)'/);
  } finally {
    for (const name of made) {
      await c.raw('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${name}-binding`);
      await c.raw('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${name}`);
    }
  }
});
