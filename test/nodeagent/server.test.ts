// The kubelet's handlers (src/nodeagent/server.ts) and its request attributes
// (src/cli/kubeletserving.ts) without listeners: healthz's words, PodLogOptions from the query,
// the subresources and verbs a request is authorized as.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { encodePods, podLogOptionsFromQuery, serveHealthz } from '../../src/nodeagent/server.js';
import { kubeletSubresources, kubeletVerb } from '../../src/cli/kubeletserving.js';

function fakeRes(): ServerResponse & { body: string; headers: Record<string, unknown> } {
  const r: any = { statusCode: 200, body: '', headers: {}, headersSent: false };
  r.setHeader = (k: string, v: unknown) => (r.headers[k.toLowerCase()] = v);
  r.end = (b?: string) => (r.body += b ?? '');
  return r;
}

test('healthz: ok, verbose, a failed check (500, reason withheld), exclude, one check', () => {
  const checks = { ping: () => undefined, log: () => undefined, syncloop: () => 'sync Loop took longer than expected' };
  let r = fakeRes();
  assert.ok(serveHealthz(r, '/healthz', new URLSearchParams(), { ping: () => undefined }));
  assert.deepEqual([r.statusCode, r.body], [200, 'ok']);
  r = fakeRes();
  serveHealthz(r, '/healthz', new URLSearchParams('verbose'), checks);
  assert.deepEqual([r.statusCode, r.body], [500, '[+]ping ok\n[+]log ok\n[-]syncloop failed: reason withheld\nhealthz check failed\n']);
  r = fakeRes();
  serveHealthz(r, '/healthz', new URLSearchParams('exclude=syncloop&exclude=nope'), checks);
  assert.deepEqual([r.statusCode, r.body], [200, 'ok']);
  r = fakeRes();
  serveHealthz(r, '/healthz', new URLSearchParams('verbose&exclude=syncloop&exclude=nope'), checks);
  assert.equal(r.body, '[+]ping ok\n[+]log ok\n[+]syncloop excluded: ok\nwarn: some health checks cannot be excluded: no matches for "nope"\nhealthz check passed\n');
  r = fakeRes();
  serveHealthz(r, '/healthz/syncloop', new URLSearchParams(), checks);
  assert.deepEqual([r.statusCode, r.body], [500, 'internal server error: sync Loop took longer than expected\n']);
  assert.equal(serveHealthz(fakeRes(), '/healthz/nope', new URLSearchParams(), checks), false);
  assert.equal(serveHealthz(fakeRes(), '/healthzz', new URLSearchParams(), checks), false);
});

test('a PodList as the kubelet encodes it (items null when empty)', () => {
  assert.equal(encodePods([]), '{"kind":"PodList","apiVersion":"v1","metadata":{},"items":null}\n');
  assert.deepEqual(JSON.parse(encodePods([{ metadata: { name: 'a' } }])).items, [{ metadata: { name: 'a' } }]);
});

test('PodLogOptions from the query: the API server\'s parameters, the old `tail`, 400 for what does not decode, 422 for what does not validate', () => {
  const ok = (q: string) => {
    const r = podLogOptionsFromQuery(new URLSearchParams(q));
    assert.ok(r.ok, q);
    return r.opts;
  };
  assert.deepEqual(ok('follow=true&limitBytes=10&previous=true&sinceSeconds=5&tailLines=3&timestamps=true'), {
    follow: true, previous: true, timestamps: true, tailLines: 3, limitBytes: 10, sinceSeconds: 5,
  });
  assert.equal(ok('sinceTime=2024-01-02T03:04:05Z').sinceTime, '2024-01-02T03:04:05Z');
  assert.equal(ok('tail=7').tailLines, 7);
  assert.equal(ok('tail=all&tailLines=3').tailLines, undefined);
  assert.equal(ok('follow=0').follow, false);
  assert.equal(ok('follow=yes').follow, true);
  assert.deepEqual(podLogOptionsFromQuery(new URLSearchParams('tailLines=x')), { ok: false, code: 400, text: '{"message": "Unable to decode query."}' });
  assert.deepEqual(podLogOptionsFromQuery(new URLSearchParams('sinceTime=yesterday')), { ok: false, code: 400, text: '{"message": "Unable to decode query."}' });
  for (const q of ['tailLines=-1', 'limitBytes=0', 'sinceSeconds=0', 'sinceSeconds=1&sinceTime=2024-01-02T03:04:05Z', 'stream=Both', 'stream=Stdout&tailLines=1']) {
    assert.deepEqual(podLogOptionsFromQuery(new URLSearchParams(q)), { ok: false, code: 422, text: '{"message": "Invalid request."}' }, q);
  }
});

test('the kubelet\'s authorization attributes: subresources by path (fine-grained first, then proxy), verbs by method', () => {
  assert.deepEqual(kubeletSubresources('/pods'), ['pods', 'proxy']);
  assert.deepEqual(kubeletSubresources('/runningpods/'), ['pods', 'proxy']);
  assert.deepEqual(kubeletSubresources('/healthz/ping'), ['healthz', 'proxy']);
  assert.deepEqual(kubeletSubresources('/configz'), ['configz', 'proxy']);
  assert.deepEqual(kubeletSubresources('/stats/summary'), ['stats']);
  assert.deepEqual(kubeletSubresources('/metrics/cadvisor'), ['metrics']);
  assert.deepEqual(kubeletSubresources('/logs/syslog'), ['log']);
  assert.deepEqual(kubeletSubresources('/checkpoint/ns/p/c'), ['checkpoint']);
  assert.deepEqual(kubeletSubresources('/containerLogs/ns/p/c'), ['proxy']);
  assert.deepEqual(kubeletSubresources('/podsx'), ['proxy']);
  assert.deepEqual(kubeletSubresources('/metricsx'), ['proxy']);
  assert.deepEqual(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'].map(kubeletVerb), ['get', 'create', 'update', 'patch', 'delete', '', '']);
});
