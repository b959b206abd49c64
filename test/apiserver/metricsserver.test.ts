// The built-in Resource Metrics API's storage (src/apiserver/metricsserver/storage.ts): a kubelet's
// /metrics/resource text decoded as metrics-server decodes it, and usage computed from the two
// latest points as metrics-server's storage does (rates, windows, restarts, fresh containers,
// incomplete series, quantities in their canonical form).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeBatch, MetricsStorage, cpuQuantity, memoryQuantity } from '../../src/apiserver/metricsserver/storage.js';
import { goFormatDuration } from '../../src/machinery/gostrings.js';

const T = 1_700_000_000_000;

/** a kubelet's text: node and containers (name, cpu seconds, memory bytes, start s) at time ms */
function text(at: number, node: [number, number] | undefined, containers: [string, string, string, number | undefined, number | undefined, number][]): string {
  let s = '# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds\n# TYPE container_cpu_usage_seconds_total counter\n';
  for (const [ns, pod, c, cpu] of containers) if (cpu !== undefined) s += `container_cpu_usage_seconds_total{container="${c}",namespace="${ns}",pod="${pod}"} ${cpu} ${at}\n`;
  for (const [ns, pod, c, , mem] of containers) if (mem !== undefined) s += `container_memory_working_set_bytes{container="${c}",namespace="${ns}",pod="${pod}"} ${mem} ${at}\n`;
  for (const [ns, pod, c, , , start] of containers) s += `container_start_time_seconds{container="${c}",namespace="${ns}",pod="${pod}"} ${start} ${start * 1000}\n`;
  if (node) s += `node_cpu_usage_seconds_total ${node[0]} ${at}\nnode_memory_working_set_bytes ${node[1]} ${at}\n`;
  return s + 'resource_scrape_error 0\n';
}

test('canonical quantities: nanocores and bytes as Kubernetes prints them', () => {
  assert.equal(cpuQuantity(149571229n), '149571229n');
  assert.equal(cpuQuantity(2_000_000n), '2m');
  assert.equal(cpuQuantity(1_500_000_000n), '1500m');
  assert.equal(cpuQuantity(2_000_000_000n), '2');
  assert.equal(cpuQuantity(0n), '0');
  assert.equal(memoryQuantity(1234567n * 1024n), '1234567Ki');
  assert.equal(memoryQuantity(52428800n), '50Mi');
  assert.equal(memoryQuantity(1000000n), '1000000');
  assert.equal(memoryQuantity(1000n), '1k');
  assert.equal(goFormatDuration(15_043_000_000n), '15.043s');
});

test('two scrapes make the rates; the first makes none', () => {
  const st = new MetricsStorage(15_000_000_000n);
  const start = T / 1000 - 3600;
  st.store(decodeBatch(text(T, [100, 2 ** 31], [['ns', 'web', 'main', 10, 52428800, start]]), T, 'n1'));
  assert.equal(st.node('n1'), undefined);
  assert.equal(st.pod('ns', 'web'), undefined);
  st.store(decodeBatch(text(T + 15_043, [102.25, 2 ** 31], [['ns', 'web', 'main', 10.5, 52428800, start]]), T + 20_000, 'n1'));
  const n = st.node('n1')!;
  assert.deepEqual(n.usage, { cpu: '149571229n', memory: '2Gi' });
  assert.equal(goFormatDuration(n.window), '15.043s');
  assert.equal(n.timestamp, BigInt(T + 15_043) * 1_000_000n);
  const p = st.pod('ns', 'web')!;
  assert.deepEqual(p.containers.map((c) => [c.name, c.usage]), [['main', { cpu: '33238050n', memory: '50Mi' }]]);
  // a node or pod missing from a scrape is forgotten
  st.store(decodeBatch(text(T + 30_000, undefined, []), T + 30_000, 'n1'));
  assert.equal(st.node('n1'), undefined);
  assert.equal(st.pod('ns', 'web'), undefined);
});

test('series without a timestamp take the request time; incomplete node or container series leave them out', () => {
  const b = decodeBatch('node_cpu_usage_seconds_total 5\nnode_memory_working_set_bytes 100\n', T, 'n1');
  assert.equal(b.nodes.get('n1')!.timestamp, BigInt(T) * 1_000_000n);
  assert.equal(decodeBatch('node_cpu_usage_seconds_total 0 1\nnode_memory_working_set_bytes 100 1\n', T, 'n1').nodes.size, 0);
  // a pod one of whose containers has no memory is left out whole
  const p = decodeBatch(text(T, [1, 1], [['ns', 'a', 'one', 1, 10, 1], ['ns', 'a', 'two', 1, undefined, 1], ['ns', 'b', 'x', 1, 10, 1]]), T, 'n1');
  assert.deepEqual([...p.pods.keys()], ['ns/b']);
  // escaped label values
  const e = decodeBatch('container_cpu_usage_seconds_total{container="c",namespace="n\\"s",pod="p"} 1 5\ncontainer_memory_working_set_bytes{container="c",namespace="n\\"s",pod="p"} 1 5\n', T, 'n1');
  assert.deepEqual([...e.pods.keys()], ['n"s/p']);
});

test('a restarted container starts over; a pod shows only when all its containers have two points', () => {
  const st = new MetricsStorage(15_000_000_000n);
  const old = T / 1000 - 3600;
  st.store(decodeBatch(text(T, [1, 1], [['ns', 'p', 'a', 100, 10, old], ['ns', 'p', 'b', 100, 10, old]]), T, 'n1'));
  st.store(decodeBatch(text(T + 10_000, [2, 1], [['ns', 'p', 'a', 101, 10, old], ['ns', 'p', 'b', 101, 10, old]]), T, 'n1'));
  assert.equal(st.pod('ns', 'p')!.containers.length, 2);
  // b restarted (started after a's last point): no earlier point for it, so no pod metrics
  const restarted = (T + 15_000) / 1000;
  st.store(decodeBatch(text(T + 20_000, [3, 1], [['ns', 'p', 'a', 102, 10, old], ['ns', 'p', 'b', 1, 10, restarted]]), T, 'n1'));
  assert.equal(st.pod('ns', 'p'), undefined);
  st.store(decodeBatch(text(T + 30_000, [4, 1], [['ns', 'p', 'a', 103, 10, old], ['ns', 'p', 'b', 2, 10, restarted]]), T, 'n1'));
  const u = st.pod('ns', 'p')!;
  assert.deepEqual(u.containers.map((c) => c.usage.cpu), ['100m', '100m']);
  assert.equal(goFormatDuration(u.window), '10s');
});

test('a container started less than a resolution ago (10 s or more) counts from its start, with one scrape', () => {
  const st = new MetricsStorage(15_000_000_000n);
  const start = (T - 12_500) / 1000;
  st.store(decodeBatch(text(T, [1, 1], [['ns', 'fresh', 'c', 2.5, 1024, start], ['ns', 'new', 'c', 1, 1024, (T - 5_000) / 1000]]), T, 'n1'));
  const u = st.pod('ns', 'fresh')!;
  assert.equal(goFormatDuration(u.window), '12.5s');
  assert.deepEqual(u.containers[0]!.usage, { cpu: '200m', memory: '1Ki' });
  assert.equal(st.pod('ns', 'new'), undefined, 'younger than 10 s: not yet');
});
