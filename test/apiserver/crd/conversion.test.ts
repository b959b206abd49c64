// The CRD conversion webhook client (src/apiserver/crd/conversion.ts) against a real HTTPS server on
// 127.0.0.1: the review it sends, and each answer kube-apiserver refuses, in its words.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ConversionFailedError, WebhookConverter } from '../../../src/apiserver/crd/conversion.js';
import { startWebhookServer, type WebhookServer } from '../../admission/webhookserver.js';

let hooks: WebhookServer;
/** the test's answer to the review it receives */
let answer: (review: any) => any = () => ({});

before(async () => {
  hooks = await startWebhookServer();
  hooks.handle('/c', (review) => answer(review));
});
after(async () => {
  await hooks?.close();
});

const obj = (name: string, apiVersion = 'g.example.com/v1', extra: Record<string, unknown> = {}) => ({
  apiVersion,
  kind: 'Thing',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, labels: { a: '1' }, generation: 3 },
  spec: { n: 1 },
  ...extra,
});

function converter(versions: unknown = ['v1']): WebhookConverter {
  return new WebhookConverter({ clientConfig: { url: hooks.url('/c'), caBundle: hooks.caBundle }, conversionReviewVersions: versions }, () => {
    throw new Error('no services here');
  });
}

const ok = (review: any, objects: any[]) => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid: review.request.uid, result: { status: 'Success' }, convertedObjects: objects } });
const to = (o: any, v: string, change: (x: any) => void = () => {}) => {
  const x = structuredClone(o);
  x.apiVersion = v;
  change(x);
  return x;
};

function message(r: unknown): string {
  assert.ok(r instanceof ConversionFailedError, `expected a failure, got ${JSON.stringify(r)}`);
  return r.message;
}

test('objects in the wanted version are not sent; the others go in one review, metadata restored but labels', async () => {
  answer = (review) => ok(review, review.request.objects.map((o: any) => to(o, review.request.desiredAPIVersion, (x) => {
    x.metadata.labels = { a: '2', b: 'new' };
    x.metadata.generation = 7;
    x.spec = { m: x.spec.n };
  })));
  const before = hooks.received.get('/c')?.length ?? 0;
  const input = [obj('a'), obj('b', 'g.example.com/v2'), obj('c')];
  const out = await converter().convert(input, 'g.example.com/v2');
  assert.equal(out[1], input[1], 'already in v2: itself');
  assert.deepEqual(out[0], { ...obj('a'), apiVersion: 'g.example.com/v2', metadata: { ...obj('a').metadata, labels: { a: '2', b: 'new' } }, spec: { m: 1 } });
  assert.equal(out[2].metadata.generation, 3);
  assert.deepEqual(input[0], obj('a'), 'the input is not changed');
  const sent = hooks.received.get('/c')!.slice(before);
  assert.equal(sent.length, 1);
  const r = sent[0].review;
  assert.equal(r.apiVersion, 'apiextensions.k8s.io/v1');
  assert.equal(r.request.desiredAPIVersion, 'g.example.com/v2');
  assert.deepEqual(r.request.objects.map((o: any) => o.metadata.name), ['a', 'c']);
  assert.equal(sent[0].query, '', 'no ?timeout= on a conversion request');
  // nothing to convert: no call at all
  await converter().convert([obj('d', 'g.example.com/v2')], 'g.example.com/v2');
  assert.equal(hooks.received.get('/c')!.length, before + 1);
});

test('answers kube-apiserver refuses, in its words', async () => {
  const cases: [string, (review: any) => any, string | RegExp][] = [
    ['failure with a message', (rv) => ({ ...ok(rv, []), response: { uid: rv.request.uid, result: { status: 'Failure', message: 'nope' } } }), 'conversion webhook for g.example.com/v1, Kind=Thing failed: nope'],
    ['failure without one', (rv) => ({ ...ok(rv, []), response: { uid: rv.request.uid, result: { status: 'Failure' } } }), "conversion webhook for g.example.com/v1, Kind=Thing failed: response.result.status was 'Failure', not 'Success'"],
    ['no response', () => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' }), 'conversion webhook for g.example.com/v1, Kind=Thing failed: no response provided'],
    ['another kind', (rv) => ({ ...ok(rv, []), kind: 'AdmissionReview' }), 'conversion webhook for g.example.com/v1, Kind=Thing failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got apiextensions.k8s.io/v1, Kind=AdmissionReview'],
    ['too few objects', (rv) => ok(rv, []), 'conversion webhook for g.example.com/v1, Kind=Thing returned 0 objects, expected 1'],
    ['wrong version', (rv) => ok(rv, [to(rv.request.objects[0], 'g.example.com/v3')]), 'conversion webhook for g.example.com/v1, Kind=Thing returned invalid object at index 0: invalid groupVersion (expected g.example.com/v2, received g.example.com/v3)'],
    ['wrong kind', (rv) => ok(rv, [to(rv.request.objects[0], 'g.example.com/v2', (x) => (x.kind = 'Other'))]), 'conversion webhook for g.example.com/v1, Kind=Thing returned invalid object at index 0: invalid kind (expected Thing, received Other)'],
    ['another uid', (rv) => ok(rv, [to(rv.request.objects[0], 'g.example.com/v2', (x) => (x.metadata.uid = 'x'))]), 'conversion webhook for g.example.com/v1, Kind=Thing returned invalid object: must have the same UID: uid-a != x'],
    ['no metadata', (rv) => ok(rv, [to(rv.request.objects[0], 'g.example.com/v2', (x) => delete x.metadata)]), 'conversion webhook for g.example.com/v1, Kind=Thing returned invalid object: must have the same name: a != '],
    ['a label that is not a string', (rv) => ok(rv, [to(rv.request.objects[0], 'g.example.com/v2', (x) => (x.metadata.labels = { a: 1 }))]), 'conversion webhook for g.example.com/v1, Kind=Thing returned invalid metadata: metadata.labels[a] must be a string, but is int64 in converted object'],
    ['a bad label', (rv) => ok(rv, [to(rv.request.objects[0], 'g.example.com/v2', (x) => (x.metadata.labels = { 'bad key!': 'x' }))]), /^conversion webhook for g\.example\.com\/v1, Kind=Thing returned invalid metadata: metadata\.labels: Invalid value: "bad key!": /],
    ['an HTTP error', () => ({ __status: 503, body: 'down' }), 'conversion webhook for g.example.com/v1, Kind=Thing failed: the server is currently unable to handle the request'],
  ];
  for (const [what, a, want] of cases) {
    answer = a;
    const [r] = await converter().convert([obj('a')], 'g.example.com/v2');
    if (typeof want === 'string') assert.equal(message(r), want, what);
    else assert.match(message(r), want, what);
  }
});

test('v1beta1 reviews skip the kind and uid checks; unknown review versions fail without a call', async () => {
  answer = (rv) => ({ apiVersion: 'apiextensions.k8s.io/v1beta1', kind: 'ConversionReview', response: { uid: 'whatever', result: { status: 'Success' }, convertedObjects: rv.request.objects.map((o: any) => to(o, rv.request.desiredAPIVersion)) } });
  const [r] = await converter(['v2', 'v1beta1', 'v1']).convert([obj('a')], 'g.example.com/v2');
  assert.equal(r.apiVersion, 'g.example.com/v2');
  assert.equal(hooks.received.get('/c')!.at(-1).review.apiVersion, 'apiextensions.k8s.io/v1beta1');
  const [bad] = await converter(['v9']).convert([obj('a')], 'g.example.com/v2');
  assert.equal(message(bad), 'no supported conversion review versions');
});

test('a batch answered badly is sent again object by object; a call that fails fails them all', async () => {
  // the webhook refuses any review that holds the object named "bad"
  answer = (rv) =>
    rv.request.objects.some((o: any) => o.metadata.name === 'bad')
      ? { ...ok(rv, []), response: { uid: rv.request.uid, result: { status: 'Failure', message: 'bad object' } } }
      : ok(rv, rv.request.objects.map((o: any) => to(o, rv.request.desiredAPIVersion)));
  const out = await converter().convert([obj('a'), obj('bad'), obj('c')], 'g.example.com/v2');
  assert.equal(out[0].apiVersion, 'g.example.com/v2');
  assert.equal(message(out[1]), 'conversion webhook for g.example.com/v1, Kind=Thing failed: bad object');
  assert.equal(out[2].apiVersion, 'g.example.com/v2');
  // nobody listening: every object fails with the dial error, in one call
  const down = new WebhookConverter({ clientConfig: { url: 'https://127.0.0.1:1/c', caBundle: hooks.caBundle }, conversionReviewVersions: ['v1'] }, () => ({ host: '', port: 0 }));
  const failed = await down.convert([obj('a'), obj('b')], 'g.example.com/v2');
  assert.equal(message(failed[0]), 'conversion webhook for g.example.com/v1, Kind=Thing failed: Post "https://127.0.0.1:1/c": dial tcp 127.0.0.1:1: connect: connection refused');
  assert.equal(message(failed[1]), message(failed[0]));
});
