// The admission webhooks against a real HTTPS webhook server on 127.0.0.1 (its CA made by the
// test with src/apiserver/pki.ts): the AdmissionReview sent, a mutating patch, a denial, timeouts
// under failurePolicy Fail and Ignore, the dry-run rule, selectors and rules, warnings and audit
// annotations, reinvocation, service references and broken responses.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildAdmissionChain, DEFAULT_ENABLED_ADMISSION_PLUGINS } from '../../src/apiserver/admission/chain.js';
import { ruleMatches } from '../../src/apiserver/admission/webhook.js';
import { MemoryCluster, attrs, pod, rejection } from './fake.js';
import { patchResponse, respond, startWebhookServer, type WebhookServer } from './webhookserver.js';

let srv: WebhookServer;

before(async () => {
  srv = await startWebhookServer(['hooks.webhooks.svc']);
  srv.handle('/add-label', (r) => patchResponse(r, [{ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }]));
  srv.handle('/allow', (r) => respond(r, { allowed: true }));
  srv.handle('/deny', (r) => respond(r, { allowed: false, status: { code: 403, message: 'pods named bad are not welcome' } }));
  srv.handle('/deny-bare', (r) => respond(r, { allowed: false }));
  // (the denial's Status is AdmissionResponse.Result, `status` on the wire: a webhook's `result` is not read)
  srv.handle('/deny-invalid', (r) => respond(r, { allowed: false, status: { code: 422, reason: 'Invalid', message: 'bad thing' }, result: { code: 418, message: 'not this' } }));
  srv.handle('/slow', async (r) => {
    await new Promise((x) => setTimeout(x, 2500));
    return respond(r, { allowed: true });
  });
  srv.handle('/warn', (r) => respond(r, { allowed: true, warnings: ['this image is old'], auditAnnotations: { checked: 'true' } }));
  srv.handle('/wrong-uid', (r) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'not-' + r.request.uid, allowed: true } }));
  srv.handle('/boom', () => ({ __status: 500, body: 'boom' }));
  srv.handle('/annotate', (r) =>
    r.request.object.metadata.annotations?.seen
      ? respond(r, { allowed: true })
      : patchResponse(r, [{ op: 'add', path: '/metadata/annotations', value: { seen: String(Object.keys(r.request.object.metadata.labels ?? {}).length) } }]),
  );
  srv.handle('/replace-image', (r) => patchResponse(r, [{ op: 'replace', path: '/spec/containers/0/image', value: 'registry.local/nginx' }]));
  srv.handle('/bad-patch', (r) => patchResponse(r, [{ op: 'remove', path: '/spec/nothing' }]));
});

after(async () => {
  await srv?.close();
});

const WEBHOOKS_ONLY = DEFAULT_ENABLED_ADMISSION_PLUGINS.filter((n) => n !== 'MutatingAdmissionWebhook' && n !== 'ValidatingAdmissionWebhook');

function setup() {
  const c = new MemoryCluster();
  c.namespace('apps', { env: 'prod' });
  c.namespace('dev', { env: 'dev' });
  const chain = buildAdmissionChain({ enable: [], disable: [...WEBHOOKS_ONLY], reader: c, writer: c });
  return { c, chain };
}

function hook(name: string, path: string, extra: any = {}): any {
  return {
    name,
    clientConfig: { url: srv.url(path), caBundle: srv.caBundle },
    rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' }],
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    namespaceSelector: {},
    objectSelector: {},
    sideEffects: 'None',
    timeoutSeconds: 10,
    admissionReviewVersions: ['v1'],
    ...extra,
  };
}

function mutatingConfig(c: MemoryCluster, name: string, ...hooks: any[]) {
  c.add('admissionregistration.k8s.io', 'mutatingwebhookconfigurations', { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name }, webhooks: hooks.map((h) => ({ reinvocationPolicy: 'Never', ...h })) });
}

function validatingConfig(c: MemoryCluster, name: string, ...hooks: any[]) {
  c.add('admissionregistration.k8s.io', 'validatingwebhookconfigurations', { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name }, webhooks: hooks });
}

function calls(path: string): any[] {
  return srv.received.get(path) ?? [];
}

function reset(): void {
  srv.received.clear();
}

test('mutating webhook: the AdmissionReview sent, the JSON patch applied, the audit annotations', async () => {
  reset();
  const { c, chain } = setup();
  mutatingConfig(c, 'labels', hook('label.example.com', '/add-label'));
  const obj = pod('web', 'apps');
  const a = attrs('pods', 'CREATE', { object: obj, options: { fieldManager: 'kubectl-create' } });
  await chain.mutate(a);
  await chain.validate(a);
  assert.deepEqual(obj.metadata.labels, { mutated: 'yes' });
  assert.equal(a.object, obj, 'the caller keeps its reference to the object');
  const [{ review, query, headers }] = calls('/add-label');
  assert.equal(query, 'timeout=10s');
  assert.equal(headers['content-type'], 'application/json');
  assert.equal(review.apiVersion, 'admission.k8s.io/v1');
  assert.equal(review.kind, 'AdmissionReview');
  const req = review.request;
  assert.match(req.uid, /^[0-9a-f-]{36}$/);
  assert.deepEqual(
    { ...req, uid: undefined, object: undefined },
    {
      uid: undefined,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      name: 'web',
      namespace: 'apps',
      operation: 'CREATE',
      userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
      object: undefined,
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'kubectl-create' },
    },
  );
  assert.equal(req.object.metadata.name, 'web');
  assert.deepEqual(a.auditAnnotations, {
    'patch.webhook.admission.k8s.io/round_0_index_0': JSON.stringify({ configuration: 'labels', webhook: 'label.example.com', patch: [{ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }], patchType: 'JSONPatch' }),
    'mutation.webhook.admission.k8s.io/round_0_index_0': JSON.stringify({ configuration: 'labels', webhook: 'label.example.com', mutated: true }),
  });
});

test('mutating webhook: a patched object is decoded and defaulted again; a patch that does not apply is a 500', async () => {
  reset();
  const { c, chain } = setup();
  mutatingConfig(c, 'images', hook('image.example.com', '/replace-image'));
  const obj = pod('web', 'apps', { containers: [{ name: 'app', image: 'nginx' }] });
  await chain.mutate(attrs('pods', 'CREATE', { object: obj }));
  assert.equal(obj.spec.containers[0].image, 'registry.local/nginx');
  const { c: c2, chain: chain2 } = setup();
  mutatingConfig(c2, 'bad', hook('bad.example.com', '/bad-patch'));
  const err = await rejection(() => chain2.mutate(attrs('pods', 'CREATE', { object: pod('web', 'apps') })));
  assert.equal(err.code, 500);
  assert.match(err.message, /^Internal error occurred: /);
});

test('validating webhook: a denial carries the webhook\'s status, with Kubernetes\' prefix', async () => {
  reset();
  const { c, chain } = setup();
  validatingConfig(c, 'policy', hook('deny.example.com', '/deny'));
  const err = await rejection(() => chain.validate(attrs('pods', 'CREATE', { object: pod('bad', 'apps') })));
  assert.equal(err.code, 403);
  assert.equal(err.message, 'admission webhook "deny.example.com" denied the request: pods named bad are not welcome');
  const { c: c2, chain: chain2 } = setup();
  validatingConfig(c2, 'policy', hook('bare.example.com', '/deny-bare'));
  const err2 = await rejection(() => chain2.validate(attrs('pods', 'CREATE', { object: pod('bad', 'apps') })));
  assert.equal(err2.code, 400);
  assert.equal(err2.message, 'admission webhook "bare.example.com" denied the request without explanation');
  const { c: c4, chain: chain4 } = setup();
  validatingConfig(c4, 'policy', hook('invalid.example.com', '/deny-invalid'));
  const err4 = await rejection(() => chain4.validate(attrs('pods', 'CREATE', { object: pod('bad', 'apps') })));
  assert.equal(err4.code, 422);
  assert.equal(err4.reason, 'Invalid');
  assert.equal(err4.message, 'admission webhook "invalid.example.com" denied the request: bad thing');
  // a mutating webhook denies the same way
  const { c: c3, chain: chain3 } = setup();
  mutatingConfig(c3, 'policy', hook('deny.example.com', '/deny'));
  const err3 = await rejection(() => chain3.mutate(attrs('pods', 'CREATE', { object: pod('bad', 'apps') })));
  assert.equal(err3.message, 'admission webhook "deny.example.com" denied the request: pods named bad are not welcome');
});

test('timeoutSeconds: with failurePolicy Fail the request fails, with Ignore it goes on', async () => {
  reset();
  const { c, chain } = setup();
  validatingConfig(c, 'slow', hook('slow.example.com', '/slow', { timeoutSeconds: 1 }));
  const started = Date.now();
  const err = await rejection(() => chain.validate(attrs('pods', 'CREATE', { object: pod('web', 'apps') })));
  assert.ok(Date.now() - started < 2400, 'the call is abandoned after timeoutSeconds');
  assert.equal(err.code, 500);
  assert.equal(err.reason, 'InternalError');
  assert.equal(err.message, `Internal error occurred: failed calling webhook "slow.example.com": failed to call webhook: Post "https://127.0.0.1:${srv.port}/slow?timeout=1s": context deadline exceeded`);
  assert.equal(calls('/slow')[0].query, 'timeout=1s');

  const { c: c2, chain: chain2 } = setup();
  validatingConfig(c2, 'slow', hook('slow.example.com', '/slow', { timeoutSeconds: 1, failurePolicy: 'Ignore' }));
  const a = attrs('pods', 'CREATE', { object: pod('web', 'apps') });
  await chain2.validate(a);
  assert.equal(a.auditAnnotations!['failed-open.validating.webhook.admission.k8s.io/round_0_index_0'], 'slow.example.com');

  const { c: c3, chain: chain3 } = setup();
  mutatingConfig(c3, 'slow', hook('slow.example.com', '/slow', { timeoutSeconds: 1, failurePolicy: 'Ignore' }), hook('label.example.com', '/add-label'));
  const b = attrs('pods', 'CREATE', { object: pod('web', 'apps') });
  await chain3.mutate(b);
  assert.equal(b.auditAnnotations!['failed-open.mutation.webhook.admission.k8s.io/round_0_index_0'], 'slow.example.com');
  assert.deepEqual(b.object.metadata.labels, { mutated: 'yes' }, 'the webhooks after it still run');
});

test('dry run: a webhook with side effects refuses the request before it is called; None and NoneOnDryRun are called', async () => {
  reset();
  for (const sideEffects of ['Some', 'Unknown']) {
    const { c, chain } = setup();
    validatingConfig(c, 'effects', hook('effects.example.com', '/allow', { sideEffects }));
    const err = await rejection(() => chain.validate(attrs('pods', 'CREATE', { object: pod('web', 'apps'), dryRun: true })));
    assert.equal(err.code, 400);
    assert.equal(err.reason, 'BadRequest');
    assert.equal(err.message, 'admission webhook "effects.example.com" does not support dry run');
    // the same webhook is called for a real request
    await chain.validate(attrs('pods', 'CREATE', { object: pod('web', 'apps') }));
  }
  assert.equal(calls('/allow').length, 2);
  for (const sideEffects of ['None', 'NoneOnDryRun']) {
    const { c, chain } = setup();
    mutatingConfig(c, 'ok', hook('ok.example.com', '/add-label', { sideEffects }));
    const a = attrs('pods', 'CREATE', { object: pod('web', 'apps'), dryRun: true });
    await chain.mutate(a);
    assert.deepEqual(a.object.metadata.labels, { mutated: 'yes' });
  }
  assert.deepEqual(
    calls('/add-label').map((x) => x.review.request.dryRun),
    [true, true],
  );
  // failurePolicy does not turn the dry-run refusal into a pass
  const { c, chain } = setup();
  mutatingConfig(c, 'effects', hook('effects.example.com', '/add-label', { sideEffects: 'Some', failurePolicy: 'Ignore' }));
  const err = await rejection(() => chain.mutate(attrs('pods', 'CREATE', { object: pod('web', 'apps'), dryRun: true })));
  assert.equal(err.message, 'admission webhook "effects.example.com" does not support dry run');
});

test('selectors and rules decide which requests are sent', async () => {
  reset();
  const { c, chain } = setup();
  validatingConfig(
    c,
    'sel',
    hook('prod-only.example.com', '/allow', { namespaceSelector: { matchLabels: { env: 'prod' } } }),
    hook('labeled.example.com', '/warn', { objectSelector: { matchExpressions: [{ key: 'team', operator: 'Exists' }] } }),
  );
  await chain.validate(attrs('pods', 'CREATE', { object: pod('a', 'apps') }));
  await chain.validate(attrs('pods', 'CREATE', { object: pod('b', 'dev') }));
  await chain.validate(attrs('pods', 'CREATE', { object: pod('c', 'dev', {}, { labels: { team: 'x' } }) }));
  // the old object's labels count too (an update removing the label)
  await chain.validate(attrs('pods', 'UPDATE', { object: pod('d', 'dev'), oldObject: pod('d', 'dev', {}, { labels: { team: 'x' } }) }));
  // a delete is not in the rules' operations
  await chain.validate(attrs('pods', 'DELETE', { namespace: 'apps', name: 'a', oldObject: pod('a', 'apps') }));
  assert.deepEqual(
    calls('/allow').map((x) => x.review.request.name),
    ['a'],
  );
  assert.deepEqual(
    calls('/warn').map((x) => x.review.request.name),
    ['c', 'd'],
  );
  // a namespace selector on a missing namespace is a 404 once the rules match
  const err = await rejection(() => chain.validate(attrs('pods', 'CREATE', { object: pod('e', 'gone') })));
  assert.equal(err.message, 'namespaces "gone" not found');
});

test('rules: operations, groups, versions, resources and subresources, scope', () => {
  const a = (resource: string, subresource = '', namespace = 'apps', group = '', operation: any = 'CREATE') => ({ operation, resource: { group, version: 'v1', resource }, subresource, namespace });
  const rule = (resources: string[], extra: any = {}) => ({ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources, ...extra });
  assert.equal(ruleMatches(rule(['pods']), a('pods')), true);
  assert.equal(ruleMatches(rule(['pods']), a('pods', 'status')), false);
  assert.equal(ruleMatches(rule(['pods/status']), a('pods', 'status')), true);
  assert.equal(ruleMatches(rule(['pods/*']), a('pods', 'exec')), true);
  assert.equal(ruleMatches(rule(['*/status']), a('deployments', 'status')), true);
  assert.equal(ruleMatches(rule(['*']), a('pods', 'status')), false);
  assert.equal(ruleMatches(rule(['*/*']), a('pods', 'status')), true);
  assert.equal(ruleMatches(rule(['pods'], { apiGroups: ['apps'] }), a('pods')), false);
  assert.equal(ruleMatches(rule(['pods'], { operations: ['UPDATE'] }), a('pods')), false);
  assert.equal(ruleMatches(rule(['pods'], { scope: 'Cluster' }), a('pods')), false);
  assert.equal(ruleMatches(rule(['namespaces'], { scope: 'Cluster' }), a('namespaces', '', 'apps')), true);
  assert.equal(ruleMatches(rule(['namespaces'], { scope: 'Namespaced' }), a('namespaces', '', 'apps')), false);
  assert.equal(ruleMatches(rule(['nodes'], { scope: 'Namespaced' }), a('nodes', '', '')), false);
});

test('warnings and audit annotations of a webhook response reach the request', async () => {
  reset();
  const { c, chain } = setup();
  validatingConfig(c, 'warn', hook('warn.example.com', '/warn'));
  const a = attrs('pods', 'CREATE', { object: pod('web', 'apps') });
  await chain.validate(a);
  assert.deepEqual(a.warnings, ['this image is old']);
  assert.deepEqual(a.auditAnnotations, { 'warn.example.com/checked': 'true' });
});

test('reinvocationPolicy IfNeeded: an earlier webhook runs again when a later one changed the object', async () => {
  for (const [policy, expected] of [
    ['IfNeeded', ['0', '1']],
    ['Never', ['0']],
  ] as const) {
    reset();
    const { c, chain } = setup();
    mutatingConfig(c, 'a-annotate', { ...hook('annotate.example.com', '/annotate'), reinvocationPolicy: policy });
    mutatingConfig(c, 'b-label', hook('label.example.com', '/add-label'));
    const a = attrs('pods', 'CREATE', { object: pod('web', 'apps') });
    await chain.mutate(a);
    assert.deepEqual(
      calls('/annotate').map((x) => String(Object.keys(x.review.request.object.metadata.labels ?? {}).length)),
      expected,
    );
    assert.equal(calls('/add-label').length, 1, 'a webhook is not reinvoked for its own change');
    if (policy === 'IfNeeded') {
      // the first round set seen=0; the second round saw the label and changed nothing
      assert.deepEqual(a.object.metadata.annotations, { seen: '0' });
      assert.ok(a.auditAnnotations!['mutation.webhook.admission.k8s.io/round_1_index_0']);
    }
  }
});

test('failures to call: TLS trust, an HTTP error, a wrong response uid, no AdmissionReview version', async () => {
  reset();
  const run = async (h: any) => {
    const { c, chain } = setup();
    validatingConfig(c, 'x', h);
    return rejection(() => chain.validate(attrs('pods', 'CREATE', { object: pod('web', 'apps') })));
  };
  let err = await run(hook('tls.example.com', '/allow', { clientConfig: { url: srv.url('/allow') } }));
  assert.equal(err.message, `Internal error occurred: failed calling webhook "tls.example.com": failed to call webhook: Post "https://127.0.0.1:${srv.port}/allow?timeout=10s": tls: failed to verify certificate: x509: certificate signed by unknown authority`);
  err = await run(hook('boom.example.com', '/boom'));
  assert.equal(err.message, 'Internal error occurred: failed calling webhook "boom.example.com": failed to call webhook: an error on the server ("boom") has prevented the request from succeeding');
  err = await run(hook('uid.example.com', '/wrong-uid'));
  assert.match(err.message, /^Internal error occurred: failed calling webhook "uid\.example\.com": received invalid webhook response: expected response\.uid="[0-9a-f-]{36}", got "not-[0-9a-f-]{36}"$/);
  err = await run(hook('old.example.com', '/allow', { admissionReviewVersions: ['v2'] }));
  assert.equal(err.message, 'Internal error occurred: failed calling webhook "old.example.com": could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)');
  err = await run(hook('refused.example.com', '/allow', { clientConfig: { url: 'https://127.0.0.1:1/x', caBundle: srv.caBundle } }));
  assert.equal(err.message, 'Internal error occurred: failed calling webhook "refused.example.com": failed to call webhook: Post "https://127.0.0.1:1/x?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused');
});

test('a service reference: https://<service>.<namespace>.svc:<port><path>, connected through the Service\'s endpoints', async () => {
  reset();
  const { c, chain } = setup();
  c.namespace('webhooks');
  c.add('', 'services', { metadata: { name: 'hooks', namespace: 'webhooks' }, spec: { type: 'ClusterIP', clusterIP: '10.96.0.50', ports: [{ name: 'https', port: 443, targetPort: 8443 }] } });
  c.add('discovery.k8s.io', 'endpointslices', {
    metadata: { name: 'hooks-abcde', namespace: 'webhooks', labels: { 'kubernetes.io/service-name': 'hooks' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    ports: [{ name: 'https', port: srv.port, protocol: 'TCP' }],
  });
  mutatingConfig(c, 'svc', hook('svc.example.com', '/add-label', { clientConfig: { service: { namespace: 'webhooks', name: 'hooks', path: '/add-label' }, caBundle: srv.caBundle } }));
  const a = attrs('pods', 'CREATE', { object: pod('web', 'apps') });
  await chain.mutate(a);
  assert.deepEqual(a.object.metadata.labels, { mutated: 'yes' });
  assert.equal(calls('/add-label')[0].headers.host, 'hooks.webhooks.svc:443');

  const { c: c2, chain: chain2 } = setup();
  mutatingConfig(c2, 'svc', hook('svc.example.com', '/add-label', { clientConfig: { service: { namespace: 'webhooks', name: 'hooks', path: '/add-label' }, caBundle: srv.caBundle } }));
  const err = await rejection(() => chain2.mutate(attrs('pods', 'CREATE', { object: pod('web', 'apps') })));
  assert.equal(err.message, 'Internal error occurred: failed calling webhook "svc.example.com": failed to call webhook: Post "https://hooks.webhooks.svc:443/add-label?timeout=10s": service "hooks" not found');
});

test('webhook configurations themselves are never sent to webhooks', async () => {
  reset();
  const { c, chain } = setup();
  validatingConfig(c, 'all', hook('all.example.com', '/deny', { rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }] }));
  await chain.validate(attrs('mutatingwebhookconfigurations', 'CREATE', { object: { metadata: { name: 'x' } } }));
  await rejection(() => chain.validate(attrs('configmaps', 'CREATE', { object: { metadata: { name: 'x', namespace: 'apps' } } })));
});

test('validating webhooks run in parallel', async () => {
  reset();
  const { c, chain } = setup();
  validatingConfig(c, 'slow', hook('slow-1.example.com', '/slow', { timeoutSeconds: 5 }), hook('slow-2.example.com', '/slow', { timeoutSeconds: 5 }));
  const started = Date.now();
  await chain.validate(attrs('pods', 'CREATE', { object: pod('web', 'apps') }));
  const took = Date.now() - started;
  assert.ok(took < 4500, `two 2.5 s webhooks took ${took} ms`);
});

test('matchConditions: only matching requests are sent; an error fails the request (Fail) or skips the webhook (Ignore)', async () => {
  reset();
  const { c, chain } = setup();
  validatingConfig(c, 'cond', hook('cond.example.com', '/allow', { matchConditions: [{ name: 'labeled', expression: "has(object.metadata.labels) && 'team' in object.metadata.labels" }] }));
  await chain.validate(attrs('pods', 'CREATE', { object: pod('plain', 'apps') }));
  await chain.validate(attrs('pods', 'CREATE', { object: pod('team', 'apps', {}, { labels: { team: 'a' } }) }));
  assert.deepEqual(
    calls('/allow').map((x) => x.review.request.name),
    ['team'],
  );
  const { c: c2, chain: chain2 } = setup();
  validatingConfig(c2, 'cond', hook('cond.example.com', '/allow', { matchConditions: [{ name: 'broken', expression: 'object.metadata.annotations.owner == "me"' }] }));
  const err = await rejection(() => chain2.validate(attrs('pods', 'CREATE', { object: pod('web', 'apps') })));
  assert.equal(err.code, 403);
  assert.equal(err.message, `pods "web" is forbidden: expression 'object.metadata.annotations.owner == "me"' resulted in error: no such key: annotations`);
  const { c: c3, chain: chain3 } = setup();
  validatingConfig(c3, 'cond', hook('cond.example.com', '/deny', { failurePolicy: 'Ignore', matchConditions: [{ name: 'broken', expression: 'object.metadata.annotations.owner == "me"' }] }));
  await chain3.validate(attrs('pods', 'CREATE', { object: pod('web', 'apps') }));
});
