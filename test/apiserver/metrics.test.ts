// The request metrics: a series found again by its request line (RequestInfo object) counts into
// the same exposition lines as the same labels reached by another line, per dry run and per code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { APIServerMetrics, type RequestLabels } from '../../src/apiserver/metrics.js';

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
  m.observe(a, false, 200, 0.001, labels(cm('get')));
  m.observe(a, false, 200, 0.03, labels(cm('get')));
  m.observe(a, false, 404, 0.001, labels(cm('get')));
  m.observe(a, true, 200, 0.001, labels(cm('get')));
  m.observe(b, false, 200, 0.001, labels(cm('get')));
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
  m.observe({}, false, 200, 12, () => cm('watch', 'namespace'));
  m.observe({}, false, 200, 0.002, () => cm('list', 'namespace'));
  m.observe({}, false, 201, 0.002, () => cm('create', 'namespace'));
  const text = await m.text();
  assert.equal(line(text, `apiserver_request_total{${base('WATCH', '', 'namespace')},code="200"}`), 1);
  assert.equal(line(text, `apiserver_request_duration_seconds_count{${base('WATCH', '', 'namespace')}}`), undefined);
  assert.equal(line(text, `apiserver_request_total{${base('LIST', '', 'namespace')},code="200"}`), 1);
  assert.equal(line(text, `apiserver_request_duration_seconds_count{${base('LIST', '', 'namespace')}}`), 1);
  assert.equal(line(text, `apiserver_request_total{${base('CREATE', '', 'namespace')},code="201"}`), 1);
});
