// The request metrics: a series found again by its request line (RequestInfo object) counts into
// the same exposition lines as the same labels reached by another line, per dry run and per code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { APIServerMetrics, metricScope, metricVerb, type RequestLabels } from '../../src/apiserver/metrics.js';
import { goFloat } from '../../src/machinery/gostrings.js';

const cm = (verb: string, scope = 'resource'): RequestLabels => ({ verb, group: '', version: 'v1', resource: 'configmaps', subresource: '', scope });

function line(text: string, name: string): number | undefined {
  const l = text.split('\n').find((x) => x.startsWith(name + ' '));
  return l === undefined ? undefined : Number(l.slice(name.length + 1));
}

const base = (verb: string, dry = '', scope = 'resource') => `verb="${verb}",dry_run="${dry}",group="",version="v1",resource="configmaps",subresource="",scope="${scope}",component="apiserver"`;

test('request metrics: counters by line object, dry run and code; two lines of the same labels share their series; labels asked once per line and dry run', async () => {
  const m = new APIServerMetrics();
  const a = {};
  const b = {};
  let asked = 0;
  const labels = (l: RequestLabels) => () => {
    asked++;
    return l;
  };
  m.observe(a, false, false, 200, 0.001, 0.001, labels(cm('GET')));
  m.observe(a, false, false, 200, 0.03, 0.03, labels(cm('GET')));
  m.observe(a, false, false, 404, 0.001, 0.001, labels(cm('GET')));
  m.observe(a, true, false, 200, 0.001, 0.001, labels(cm('GET')));
  m.observe(b, false, false, 200, 0.001, 0.001, labels(cm('GET')));
  assert.equal(asked, 3, 'labels built once for (a, no dry run), (a, dry run) and b');
  const text = await m.text();
  assert.equal(line(text, `apiserver_request_total{${base('GET')},code="200"}`), 3);
  assert.equal(line(text, `apiserver_request_total{${base('GET')},code="404"}`), 1);
  assert.equal(line(text, `apiserver_request_total{${base('GET', 'All')},code="200"}`), 1);
  assert.equal(line(text, `apiserver_request_duration_seconds_count{${base('GET')}}`), 4);
  assert.equal(line(text, `apiserver_request_duration_seconds_bucket{${base('GET')},le="0.005"}`), 3);
  assert.equal(line(text, `apiserver_request_duration_seconds_bucket{${base('GET')},le="0.05"}`), 4);
  assert.equal(line(text, `apiserver_request_duration_seconds_bucket{${base('GET')},le="+Inf"}`), 4);
  assert.equal(line(text, `apiserver_request_duration_seconds_count{${base('GET', 'All')}}`), 1);
});

test('request metrics: a watch is counted without a latency; other verbs and scopes are their own series', async () => {
  const m = new APIServerMetrics();
  m.observe({}, false, false, 200, 12, 12, () => cm('WATCH', 'namespace'));
  m.observe({}, false, false, 200, 0.002, 0.002, () => cm('LIST', 'namespace'));
  m.observe({}, false, false, 201, 0.002, 0.002, () => cm('POST', 'resource'));
  const text = await m.text();
  assert.equal(line(text, `apiserver_request_total{${base('WATCH', '', 'namespace')},code="200"}`), 1);
  assert.equal(line(text, `apiserver_request_duration_seconds_count{${base('WATCH', '', 'namespace')}}`), undefined);
  assert.equal(line(text, `apiserver_request_total{${base('LIST', '', 'namespace')},code="200"}`), 1);
  assert.equal(line(text, `apiserver_request_duration_seconds_count{${base('LIST', '', 'namespace')}}`), 1);
  assert.equal(line(text, `apiserver_request_total{${base('POST')},code="201"}`), 1);
});

test('request metrics: a patch line reported as PATCH and as APPLY keeps two series', async () => {
  const m = new APIServerMetrics();
  const patchLine = {};
  m.observe(patchLine, false, false, 200, 0.001, 0.001, () => cm('PATCH'));
  m.observe(patchLine, false, true, 200, 0.001, 0.001, () => cm('APPLY'));
  m.observe(patchLine, false, true, 200, 0.001, 0.001, () => cm('APPLY'));
  m.observe(patchLine, true, true, 200, 0.001, 0.001, () => cm('APPLY'));
  const text = await m.text();
  assert.equal(line(text, `apiserver_request_total{${base('PATCH')},code="200"}`), 1);
  assert.equal(line(text, `apiserver_request_total{${base('APPLY')},code="200"}`), 2);
  assert.equal(line(text, `apiserver_request_total{${base('APPLY', 'All')},code="200"}`), 1);
});

test("request metrics: verbs and scopes as kube-apiserver's routes report them", () => {
  const v = (verb: string, subresource = '', apply = false) => metricVerb({ verb, subresource }, apply);
  assert.equal(v('create'), 'POST');
  assert.equal(v('update'), 'PUT');
  assert.equal(v('update', 'status'), 'PUT');
  assert.equal(v('patch'), 'PATCH');
  assert.equal(v('patch', '', true), 'APPLY');
  assert.equal(v('delete'), 'DELETE');
  assert.equal(v('deletecollection'), 'DELETECOLLECTION');
  assert.equal(v('get'), 'GET');
  assert.equal(v('list'), 'LIST');
  assert.equal(v('watch'), 'WATCH');
  assert.equal(v('create', 'exec'), 'CONNECT');
  assert.equal(v('get', 'portforward'), 'CONNECT');
  assert.equal(v('get', 'log'), 'GET');
  assert.equal(v('create', 'eviction'), 'POST');
  const sc = (verb: string, namespace: string, name: string) => metricScope({ verb, namespace, name });
  assert.equal(sc('create', 'default', ''), 'resource', 'a create is a resource-scoped route, in a namespace or not');
  assert.equal(sc('create', '', ''), 'resource');
  assert.equal(sc('get', 'default', 'x'), 'resource');
  assert.equal(sc('list', 'default', ''), 'namespace');
  assert.equal(sc('deletecollection', 'default', ''), 'namespace');
  assert.equal(sc('list', '', ''), 'cluster');
  assert.equal(sc('watch', '', ''), 'cluster');
});

test('request metrics: the SLI histogram has no dry_run label, takes the latency without webhooks, and leaves watches out', async () => {
  const m = new APIServerMetrics();
  const l = {};
  m.observe(l, false, false, 201, 0.7, 0.03, () => cm('POST'));
  m.observe(l, true, false, 201, 0.02, 0.02, () => cm('POST'));
  m.observe({}, false, false, 200, 30, 30, () => cm('WATCH', 'namespace'));
  const text = await m.text();
  const sli = (verb: string, scope = 'resource') => `verb="${verb}",group="",version="v1",resource="configmaps",subresource="",scope="${scope}",component="apiserver"`;
  assert.equal(line(text, `apiserver_request_sli_duration_seconds_count{${sli('POST')}}`), 2);
  assert.equal(line(text, `apiserver_request_sli_duration_seconds_bucket{${sli('POST')},le="0.05"}`), 2);
  assert.equal(line(text, `apiserver_request_duration_seconds_bucket{${base('POST')},le="0.6"}`), 0);
  assert.equal(line(text, `apiserver_request_duration_seconds_count{${base('POST', 'All')}}`), 1);
  assert.equal(line(text, `apiserver_request_sli_duration_seconds_count{${sli('WATCH', 'namespace')}}`), undefined);
  assert.match(text, /# TYPE apiserver_request_sli_duration_seconds histogram/);
});

test("bucket bounds are written as Go's client writes them", () => {
  assert.deepEqual([0.005, 0.025, 1, 60, 1000, 100000, 131072, 1e6, 1e9, 1234567, 0.00001].map(goFloat), ['0.005', '0.025', '1', '60', '1000', '100000', '131072', '1e+06', '1e+09', '1.234567e+06', '1e-05']);
});

test('response sizes: GET and LIST only, labelled without dry_run and code', async () => {
  const m = new APIServerMetrics();
  const line = (verb: string): RequestLabels => ({ verb, group: '', version: 'v1', resource: 'pods', subresource: '', scope: 'namespace' });
  m.observe({}, false, false, 200, 0.01, 0.01, () => line('LIST'), 5000);
  m.observe({}, false, false, 201, 0.01, 0.01, () => line('POST'), 5000);
  const text = await m.text();
  assert.match(text, /apiserver_response_sizes_bucket\{verb="LIST",group="",version="v1",resource="pods",subresource="",scope="namespace",component="apiserver",le="1000"\} 0/);
  assert.match(text, /apiserver_response_sizes_bucket\{verb="LIST",[^}]*,le="10000"\} 1/);
  assert.match(text, /apiserver_response_sizes_sum\{verb="LIST",[^}]*\} 5000/);
  assert.doesNotMatch(text, /apiserver_response_sizes_count\{verb="POST"/);
});
