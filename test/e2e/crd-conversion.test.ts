// CRD conversion webhooks end to end: a real keelson, a CRD with two versions (v1 stored, with
// spec.hostPort "host:port"; v2 served, with spec.host and spec.port) converted by a real HTTPS
// webhook that this test runs on 127.0.0.1. Objects written in either version are read, listed,
// watched and patched in the other, through raw HTTPS and kubectl; the webhook sees
// ConversionReviews as kube-apiserver sends them; a webhook that fails or answers badly gives
// kube-apiserver's errors, and once it works again the objects read again without a write.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, expectStatus, until, crdBody, createCRD, type Cluster } from './harness.js';
import { patchResponse, respond, startWebhookServer, type WebhookServer } from '../admission/webhookserver.js';

let c: Cluster;
let hooks: WebhookServer;
const NS = 'conv-e2e';
const GROUP = 'conv.example.com';
const V1 = `/apis/${GROUP}/v1/namespaces/${NS}/widgets`;
const V2 = `/apis/${GROUP}/v2/namespaces/${NS}/widgets`;

/** what the webhook does now: convert, or misbehave as the test asks */
let mode: 'convert' | 'fail' | 'rename' | 'wronguid' = 'convert';

function convertOne(o: any, desired: string): any {
  const out = structuredClone(o);
  out.apiVersion = desired;
  const spec = o.spec ?? {};
  if (desired.endsWith('/v2') && o.apiVersion.endsWith('/v1')) {
    const [host, port] = String(spec.hostPort ?? ':0').split(':');
    out.spec = { host, port: Number(port) };
    if (spec.color) out.spec.color = spec.color;
  } else if (desired.endsWith('/v1') && o.apiVersion.endsWith('/v2')) {
    out.spec = { hostPort: `${spec.host}:${spec.port}` };
    if (spec.color) out.spec.color = spec.color;
  }
  out.metadata = { ...out.metadata, labels: { ...(out.metadata?.labels ?? {}), 'converted-to': desired.split('/')[1] }, generation: 99 };
  return out;
}

const schema = (spec: Record<string, unknown>) => ({
  openAPIV3Schema: {
    type: 'object',
    properties: { spec: { type: 'object', properties: { ...spec, color: { type: 'string', default: 'blue' } } }, status: { type: 'object', properties: { ready: { type: 'boolean' } } } },
  },
});

before(async () => {
  hooks = await startWebhookServer();
  hooks.handle('/convert', (review) => {
    const req = review.request;
    const base = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' };
    if (mode === 'fail') return { ...base, response: { uid: req.uid, result: { status: 'Failure', message: 'the test webhook refuses' } } };
    if (mode === 'wronguid') return { ...base, response: { uid: 'not-the-uid', result: { status: 'Success' }, convertedObjects: req.objects.map((o: any) => convertOne(o, req.desiredAPIVersion)) } };
    const convertedObjects = req.objects.map((o: any) => {
      const out = convertOne(o, req.desiredAPIVersion);
      if (mode === 'rename') out.metadata.name = 'other';
      return out;
    });
    return { ...base, response: { uid: req.uid, result: { status: 'Success' }, convertedObjects } };
  });
  c = await startCluster();
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
  const versions = [
    { name: 'v1', served: true, storage: true, schema: schema({ hostPort: { type: 'string' } }), subresources: { status: {} } },
    { name: 'v2', served: true, storage: false, schema: schema({ host: { type: 'string' }, port: { type: 'integer' } }), subresources: { status: {} } },
  ];
  const conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: hooks.url('/convert'), caBundle: hooks.caBundle } } };
  await createCRD(c, crdBody(GROUP, 'widgets', 'Widget', versions, { conversion }));
});

after(async () => {
  await c?.stop();
  await hooks?.close();
});

const reviews = () => (hooks.received.get('/convert') ?? []).map((x) => x.review);

test('an object written in the storage version reads in the other through the webhook, as kube-apiserver sends it', async () => {
  const before = reviews().length;
  const created = await c.raw('POST', V1, { body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w1', labels: { app: 'x' } }, spec: { hostPort: 'example.org:8080' } } });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.json().spec, { hostPort: 'example.org:8080', color: 'blue' }, 'written in v1: no conversion, the v1 defaults');
  const got = await c.raw('GET', `${V2}/w1`);
  assert.equal(got.status, 200, got.text);
  assert.equal(got.json().apiVersion, `${GROUP}/v2`);
  assert.deepEqual(got.json().spec, { host: 'example.org', port: 8080, color: 'blue' });
  // metadata stays the stored object's, except the labels the webhook set
  assert.deepEqual(got.json().metadata.labels, { app: 'x', 'converted-to': 'v2' });
  assert.equal(got.json().metadata.generation, 1);
  assert.equal(got.json().metadata.resourceVersion, created.json().metadata.resourceVersion);
  assert.equal(got.json().metadata.uid, created.json().metadata.uid);
  // the review: v1, a uid, the desired version, the stored object (no resourceVersion)
  const sent = reviews().slice(before);
  assert.ok(sent.length >= 1);
  const review = sent.find((r) => r.request.desiredAPIVersion === `${GROUP}/v2`);
  assert.ok(review, JSON.stringify(sent));
  assert.equal(review.apiVersion, 'apiextensions.k8s.io/v1');
  assert.equal(review.kind, 'ConversionReview');
  assert.match(review.request.uid, /^[0-9a-f-]{36}$/);
  assert.equal(review.request.objects.length, 1);
  assert.equal(review.request.objects[0].apiVersion, `${GROUP}/v1`);
  assert.equal(review.request.objects[0].metadata.name, 'w1');
  assert.equal(review.request.objects[0].metadata.resourceVersion, undefined);
  // the v1 read needs no conversion
  const v1 = await c.raw('GET', `${V1}/w1`);
  assert.deepEqual(v1.json().spec, { hostPort: 'example.org:8080', color: 'blue' });
  assert.equal(v1.json().metadata.labels['converted-to'], undefined);
});

test('an object written in the other version is stored converted, and answered as read back', async () => {
  const created = await c.raw('POST', V2, { body: { apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: 'w2' }, spec: { host: 'a.example', port: 443, color: 'red' } } });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json().apiVersion, `${GROUP}/v2`);
  assert.deepEqual(created.json().spec, { host: 'a.example', port: 443, color: 'red' });
  assert.equal(created.json().metadata.labels['converted-to'], 'v2', 'the answer went to v1 and back');
  const v1 = await c.raw('GET', `${V1}/w2`);
  assert.deepEqual(v1.json().spec, { hostPort: 'a.example:443', color: 'red' });
  assert.equal(v1.json().metadata.labels['converted-to'], 'v1');
  assert.equal(v1.json().metadata.resourceVersion, created.json().metadata.resourceVersion);
  // a merge patch in v2 lands in v1's field
  const patched = await c.raw('PATCH', `${V2}/w2`, { body: JSON.stringify({ spec: { port: 8443 } }), headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(patched.status, 200, patched.text);
  assert.deepEqual(patched.json().spec, { host: 'a.example', port: 8443, color: 'red' });
  assert.equal((await c.raw('GET', `${V1}/w2`)).json().spec.hostPort, 'a.example:8443');
});

test('a dry-run write in the other version is answered converted to the storage version and back, and stores nothing', async () => {
  const before = reviews().length;
  const r = await c.raw('POST', `${V2}?dryRun=All`, { body: { apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: 'dry' }, spec: { host: 'd.example', port: 7 } } });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json().spec, { host: 'd.example', port: 7, color: 'blue' });
  assert.equal(r.json().metadata.labels['converted-to'], 'v2', 'to v1 and back');
  assert.deepEqual(reviews().slice(before).map((x) => x.request.desiredAPIVersion), [`${GROUP}/v1`, `${GROUP}/v2`]);
  assert.equal((await c.raw('GET', `${V2}/dry`)).status, 404);
});

test('the status subresource and server-side apply through the other version', async () => {
  const cur = (await c.raw('GET', `${V2}/w2`)).json();
  const st = await c.raw('PUT', `${V2}/w2/status`, { body: { ...cur, status: { ready: true } } });
  assert.equal(st.status, 200, st.text);
  assert.equal(st.json().status.ready, true);
  assert.equal((await c.raw('GET', `${V1}/w2`)).json().status.ready, true);
  // (kubectl runs beside this process, whose webhook server must answer meanwhile)
  const apply = (port: number) => {
    const file = c.file('applied.json', JSON.stringify({ apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: 'applied', namespace: NS }, spec: { host: 'ssa.example', port } }));
    return c.kubectlAsync(['apply', '--server-side', '-f', file]);
  };
  let r = await apply(1);
  assert.equal(r.code, 0, r.stderr);
  assert.equal((await c.raw('GET', `${V1}/applied`)).json().spec.hostPort, 'ssa.example:1');
  r = await apply(2);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `widget.${GROUP}/applied serverside-applied\n`);
  const v1 = (await c.raw('GET', `${V1}/applied`)).json();
  assert.equal(v1.spec.hostPort, 'ssa.example:2');
  assert.ok(v1.metadata.managedFields.some((m: any) => m.manager === 'kubectl' && m.operation === 'Apply' && m.apiVersion === `${GROUP}/v2`), JSON.stringify(v1.metadata.managedFields));
  assert.equal((await c.raw('DELETE', `${V2}/applied`)).status, 200);
});

test('kubectl lists and gets either version', async () => {
  let r = c.kubectl(['get', `widgets.v2.${GROUP}`, '-n', NS, '-o', 'jsonpath={range .items[*]}{.metadata.name}={.spec.host}:{.spec.port} {end}']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'w1=example.org:8080 w2=a.example:8443 ');
  r = c.kubectl(['get', `widgets.v1.${GROUP}`, 'w1', '-n', NS, '-o', 'jsonpath={.apiVersion} {.spec.hostPort}']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `${GROUP}/v1 example.org:8080`);
  r = c.kubectl(['get', `widgets.v2.${GROUP}`, '-n', NS], { version: '1.27' });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^NAME\s+AGE\nw1\s+\S+\nw2\s+\S+\n$/);
});

test('a watch in the other version gets each change converted, in order', async () => {
  const list = await c.raw('GET', V2);
  const s = c.stream(`${V2}?watch=1&resourceVersion=${list.json().metadata.resourceVersion}`);
  try {
    await s.ready;
    assert.equal(s.status, 200);
    const cur = await c.raw('GET', `${V1}/w1`);
    const put = await c.raw('PUT', `${V1}/w1`, { body: { ...cur.json(), spec: { hostPort: 'example.org:9090' } } });
    assert.equal(put.status, 200, put.text);
    await c.raw('POST', V1, { body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w3' }, spec: { hostPort: 'c.example:1' } } });
    await c.raw('DELETE', `${V1}/w3`);
    const evs = await s.until((e) => e.length >= 3);
    assert.deepEqual(
      evs.map((e) => [e.type, e.object.metadata.name, e.object.apiVersion, e.object.spec?.port]),
      [
        ['MODIFIED', 'w1', `${GROUP}/v2`, 9090],
        ['ADDED', 'w3', `${GROUP}/v2`, 1],
        ['DELETED', 'w3', `${GROUP}/v2`, 1],
      ],
    );
  } finally {
    s.close();
  }
});

test('a webhook that fails: reads of unconverted objects are 500 with its error; they read again once it works', async () => {
  mode = 'fail';
  try {
    // a write in v2 cannot be stored
    const w = await c.raw('POST', V2, { body: { apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: 'w4' }, spec: { host: 'd', port: 4 } } });
    expectStatus(w, 500, 'InternalError', 'create through a failing webhook');
    assert.equal(w.json().message, `Internal error occurred: conversion webhook for ${GROUP}/v2, Kind=Widget failed: the test webhook refuses`);
    assert.equal((await c.raw('GET', `${V1}/w4`)).status, 404, 'nothing stored');
    // a write in v1 is stored, but the v2 cache cannot convert it
    const cur = await c.raw('GET', `${V1}/w1`);
    const put = await c.raw('PUT', `${V1}/w1`, { body: { ...cur.json(), spec: { hostPort: 'example.org:7070' } } });
    assert.equal(put.status, 200, put.text);
    const got = await c.raw('GET', `${V2}/w1`);
    expectStatus(got, 500, 'InternalError', 'get through a failing webhook');
    assert.equal(got.json().message, `Internal error occurred: conversion webhook for ${GROUP}/v1, Kind=Widget failed: the test webhook refuses`);
    expectStatus(await c.raw('GET', V2), 500, 'InternalError', 'list through a failing webhook');
    assert.equal((await c.raw('GET', `${V1}/w1`)).status, 200, 'the storage version still reads');
  } finally {
    mode = 'convert';
  }
  const back = await until('w1 to read in v2 again', async () => {
    const r = await c.raw('GET', `${V2}/w1`);
    return r.status === 200 ? r : undefined;
  });
  assert.equal(back.json().spec.port, 7070);
  assert.equal((await c.raw('GET', V2)).status, 200);
});

test('a webhook answer kube-apiserver would refuse is refused with its words', async () => {
  for (const [m, want] of [
    ['rename', `Internal error occurred: conversion webhook for ${GROUP}/v2, Kind=Widget returned invalid object: must have the same name: w5 != other`],
    ['wronguid', new RegExp(`^Internal error occurred: conversion webhook for ${GROUP}/v2, Kind=Widget failed: expected response\\.uid="[0-9a-f-]{36}", got "not-the-uid"$`)],
  ] as const) {
    mode = m;
    try {
      const r = await c.raw('POST', V2, { body: { apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: 'w5' }, spec: { host: 'e', port: 5 } } });
      expectStatus(r, 500, 'InternalError', m);
      if (typeof want === 'string') assert.equal(r.json().message, want);
      else assert.match(r.json().message, want);
    } finally {
      mode = 'convert';
    }
  }
});

test('admission webhooks and policies for the storage version see a write in the other version converted by the webhook (matchPolicy Equivalent)', async () => {
  hooks.handle('/admit-mutate', (review) => {
    const o = review.request.object;
    // made against v1: a v1 patch, converted back to v2 by the conversion webhook
    return o.spec.hostPort === 'mutate.example:1' ? patchResponse(review, [{ op: 'replace', path: '/spec/hostPort', value: 'mutated.example:2' }]) : respond(review, { allowed: true });
  });
  hooks.handle('/admit-validate', (review) => respond(review, { allowed: review.request.object.spec.hostPort !== 'deny.example:3', status: { code: 403, reason: 'Forbidden', message: 'no deny.example' } }));
  const hook = (name: string, path: string) => ({
    name,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    clientConfig: { url: hooks.url(path), caBundle: hooks.caBundle },
    rules: [{ operations: ['CREATE'], apiGroups: [GROUP], apiVersions: ['v1'], resources: ['widgets'] }],
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
  });
  const mw = await c.raw('POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', { body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'conv-e2e' }, webhooks: [hook('mutate.conv.example.com', '/admit-mutate')] } });
  assert.equal(mw.status, 201, mw.text);
  const vw = await c.raw('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', { body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'conv-e2e' }, webhooks: [hook('validate.conv.example.com', '/admit-validate')] } });
  assert.equal(vw.status, 201, vw.text);
  try {
    const v2 = (name: string, host: string, port: number) => ({ apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name }, spec: { host, port } });
    const before = hooks.received.get('/admit-validate')?.length ?? 0;
    const ok = await c.raw('POST', V2, { body: v2('a1', 'fine.example', 5) });
    assert.equal(ok.status, 201, ok.text);
    const seen = hooks.received.get('/admit-validate')!.slice(before).map((x) => x.review.request);
    assert.equal(seen.length, 1);
    assert.equal(seen[0].object.apiVersion, `${GROUP}/v1`);
    assert.deepEqual(seen[0].object.spec, { hostPort: 'fine.example:5', color: 'blue' });
    assert.deepEqual(seen[0].kind, { group: GROUP, version: 'v1', kind: 'Widget' });
    assert.deepEqual(seen[0].requestKind, { group: GROUP, version: 'v2', kind: 'Widget' });
    const mutated = await c.raw('POST', V2, { body: v2('a2', 'mutate.example', 1) });
    assert.equal(mutated.status, 201, mutated.text);
    assert.equal(mutated.json().apiVersion, `${GROUP}/v2`);
    assert.deepEqual([mutated.json().spec.host, mutated.json().spec.port], ['mutated.example', 2]);
    const denied = await c.raw('POST', V2, { body: v2('a3', 'deny.example', 3) });
    expectStatus(denied, 403, 'Forbidden', 'denied in v1');
    assert.equal(denied.json().message, 'admission webhook "validate.conv.example.com" denied the request: no deny.example');
  } finally {
    await c.raw('DELETE', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/conv-e2e');
    await c.raw('DELETE', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/conv-e2e');
  }
});

test('a ValidatingAdmissionPolicy for the storage version checks a write in the other version converted by the webhook', async () => {
  const AR = '/apis/admissionregistration.k8s.io/v1';
  const policy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'conv-e2e' },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: [GROUP], apiVersions: ['v1'], resources: ['widgets'] }] },
      validations: [{ expression: "object.spec.hostPort != 'vap.example:4'", message: 'no vap.example' }],
    },
  };
  const binding = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'conv-e2e' }, spec: { policyName: 'conv-e2e', validationActions: ['Deny'] } };
  assert.equal((await c.raw('POST', `${AR}/validatingadmissionpolicies`, { body: policy })).status, 201);
  assert.equal((await c.raw('POST', `${AR}/validatingadmissionpolicybindings`, { body: binding })).status, 201);
  try {
    const body = { apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: 'p1' }, spec: { host: 'vap.example', port: 4 } };
    const denied = await until('the policy to deny', async () => {
      const r = await c.raw('POST', `${V2}?dryRun=All`, { body });
      return r.status === 422 ? r : undefined;
    });
    assert.equal(denied.json().message, `widgets.${GROUP} "p1" is forbidden: ValidatingAdmissionPolicy 'conv-e2e' with binding 'conv-e2e' denied request: no vap.example`);
    const ok = await c.raw('POST', V2, { body: { ...body, metadata: { name: 'p2' }, spec: { host: 'vap.example', port: 5 } } });
    assert.equal(ok.status, 201, ok.text);
  } finally {
    await c.raw('DELETE', `${AR}/validatingadmissionpolicybindings/conv-e2e`);
    await c.raw('DELETE', `${AR}/validatingadmissionpolicies/conv-e2e`);
  }
});
