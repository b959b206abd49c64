// The kubelet's resource figures (nodeagent/stats.ts) from one sample: /metrics/resource's lines
// and /stats/summary's pods, each pod the sum of its containers at its latest sample's time. (The
// figures of real containers: test/e2e/kubelet-streaming.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resourceMetricsText, summaryJSON, type ResourceSample } from '../../src/nodeagent/stats.js';

const T = Date.parse('2026-12-05T10:00:00.000Z');
const sample: ResourceSample = {
  node: { cpu: { time: T, usageCoreNanoSeconds: 9e9, usageNanoCores: 5e8 }, memory: { time: T, workingSetBytes: 1000, usageBytes: 1200, availableBytes: 3000 } },
  containers: [
    { namespace: 'ns', pod: 'p', podUID: 'u1', container: 'a', startTime: T - 5000, cpu: { time: T - 10, usageCoreNanoSeconds: 2e9 }, memory: { time: T - 10, workingSetBytes: 100 } },
    { namespace: 'ns', pod: 'p', podUID: 'u1', container: 'b', startTime: T - 9000, cpu: { time: T, usageCoreNanoSeconds: 1e9 }, memory: { time: T - 20, workingSetBytes: 50 } },
    { namespace: 'ns', pod: 'q', podUID: 'u2', container: 'c', startTime: T - 1000 },
  ],
};

test('/metrics/resource: a line per container, and per pod the sums of its containers', () => {
  const text = resourceMetricsText(sample);
  assert.match(text, /^container_cpu_usage_seconds_total\{container="a",namespace="ns",pod="p"\} 2 \d+$/m);
  assert.match(text, new RegExp(`^pod_cpu_usage_seconds_total\\{namespace="ns",pod="p"\\} 3 ${T}$`, 'm'));
  assert.match(text, new RegExp(`^pod_memory_working_set_bytes\\{namespace="ns",pod="p"\\} 150 ${T - 10}$`, 'm'));
  // a pod without figures has no pod line, its container's start time all the same
  assert.doesNotMatch(text, /^pod_\w+\{namespace="ns",pod="q"\}/m);
  assert.match(text, /^container_start_time_seconds\{container="c",namespace="ns",pod="q"\} /m);
  assert.match(text, /^resource_scrape_error 0$/m);
});

test('/stats/summary: each pod with its containers, its first start, and the sums of its containers', () => {
  const s = summaryJSON(sample, 'n1', T - 60_000) as any;
  assert.equal(s.node.nodeName, 'n1');
  assert.deepEqual(s.pods.map((p: any) => p.podRef), [{ name: 'p', namespace: 'ns', uid: 'u1' }, { name: 'q', namespace: 'ns', uid: 'u2' }]);
  const [p, q] = s.pods;
  assert.equal(p.startTime, new Date(T - 9000).toISOString());
  assert.deepEqual(p.containers.map((c: any) => c.name), ['a', 'b']);
  assert.deepEqual(p.cpu, { time: new Date(T).toISOString(), usageCoreNanoSeconds: 3e9 });
  assert.deepEqual(p.memory, { time: new Date(T - 10).toISOString(), workingSetBytes: 150 });
  assert.deepEqual(p.containers[0].memory, { time: new Date(T - 10).toISOString(), workingSetBytes: 100 });
  assert.equal(q.cpu, undefined);
  assert.deepEqual(q.containers, [{ name: 'c', startTime: new Date(T - 1000).toISOString() }]);
});
