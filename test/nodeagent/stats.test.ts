// The kubelet's resource figures (nodeagent/stats.ts) from one sample: /metrics/resource's lines
// and /stats/summary's pods, each pod the sum of its containers at its latest sample's time; the
// Summary's times as metav1.Time writes them (RFC 3339 to the second); /metrics/cadvisor's text as
// the kubelet's cAdvisor collectors write it. (The figures of real containers and cgroups:
// test/e2e/kubelet-streaming.test.ts, test/e2e/kubelet-cadvisor.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootTime, cadvisorMetricsText, cgroupOfCgroupsPath, iso, resourceMetricsText, summaryJSON, type ResourceSample } from '../../src/nodeagent/stats.js';
import { goFloat } from '../../src/machinery/gostrings.js';

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
  // figures in Go's float form, as the kubelet's Prometheus text writes them
  const big = resourceMetricsText({ ...sample, node: { ...sample.node, memory: { ...sample.node.memory, workingSetBytes: 1003548672 } } });
  assert.match(big, new RegExp(`^node_memory_working_set_bytes 1.003548672e\\+09 ${T}$`, 'm'));
});

test('/stats/summary: each pod with its containers, its first start, and the sums of its containers', () => {
  const s = summaryJSON(sample, 'n1', T - 60_000) as any;
  assert.equal(s.node.nodeName, 'n1');
  assert.deepEqual(s.pods.map((p: any) => p.podRef), [{ name: 'p', namespace: 'ns', uid: 'u1' }, { name: 'q', namespace: 'ns', uid: 'u2' }]);
  const [p, q] = s.pods;
  // (metav1.Time: RFC 3339 to the second, the milliseconds dropped, not rounded)
  assert.equal(p.startTime, '2026-12-05T09:59:51Z');
  assert.deepEqual(p.containers.map((c: any) => c.name), ['a', 'b']);
  assert.deepEqual(p.cpu, { time: '2026-12-05T10:00:00Z', usageCoreNanoSeconds: 3e9 });
  assert.deepEqual(p.memory, { time: '2026-12-05T09:59:59Z', workingSetBytes: 150 });
  assert.deepEqual(p.containers[0].memory, { time: '2026-12-05T09:59:59Z', workingSetBytes: 100 });
  assert.equal(q.cpu, undefined);
  assert.deepEqual(q.containers, [{ name: 'c', startTime: '2026-12-05T09:59:59Z' }]);
  assert.equal(s.node.startTime, '2026-12-05T09:59:00Z');
});

test('/stats/summary: every time is a metav1.Time, RFC 3339 in UTC to the second (Go\'s time.RFC3339 truncates)', () => {
  assert.equal(iso(Date.parse('2026-12-07T11:00:00.999Z')), '2026-12-07T11:00:00Z');
  assert.equal(iso(Date.parse('2026-12-07T11:00:00Z')), '2026-12-07T11:00:00Z');
  const withCgroups: ResourceSample = {
    ...sample,
    systemContainers: [{ name: 'pods', startTime: T - 1500, cpu: { time: T + 500, usageCoreNanoSeconds: 1, usageNanoCores: 0 }, memory: { time: T + 500, workingSetBytes: 1 }, swap: { time: T + 500, swapUsageBytes: 0 } }],
  };
  const text = JSON.stringify(summaryJSON(withCgroups, 'n1', T + 999, { rlimit: { time: T + 250, maxpid: 10, curproc: 1 }, pods: new Map(), nodeFs: { time: T + 750, availableBytes: 1, capacityBytes: 2, usedBytes: 1, inodesFree: 1, inodes: 2, inodesUsed: 1 } }));
  const times = [...text.matchAll(/"(?:time|startTime)":"([^"]*)"/g)].map((m) => m[1]);
  assert.ok(times.length >= 10, text);
  for (const t of times) assert.match(t!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
});

test('/stats/summary: a pod\'s startTime is its sandbox\'s creation (the CRI stats provider\'s buildPodStats), not its first container\'s start', () => {
  const withSandboxes: ResourceSample = {
    ...sample,
    containers: sample.containers.map((c) => ({ ...c, sandboxId: c.podUID === 'u1' ? 'sb1' : 'sb2' })),
    sandboxes: new Map([['sb1', { createdAt: T - 20_000 }]]),
  };
  const [p, q] = (summaryJSON(withSandboxes, 'n1', T) as any).pods;
  assert.equal(p.startTime, '2026-12-05T09:59:40Z');
  // (a sandbox the runtime did not list: the first container's start stands for it)
  assert.equal(q.startTime, '2026-12-05T09:59:59Z');
});

test('the node\'s boot time is /proc/stat\'s btime (the kubelet\'s GetBootTime)', () => {
  assert.equal(bootTime('cpu  1 2 3 4\nintr 5\nbtime 1764000000\nprocesses 9\n'), 1764000000 * 1000);
  // (none there: now less the uptime, to the second)
  const b = bootTime('cpu 1\n');
  assert.ok(b <= Date.now() && b % 1000 === 0);
});

test('/metrics/cadvisor: each cgroup labelled as the kubelet labels cAdvisor\'s containers, families and series sorted as client_golang gathers them', () => {
  const pod = '/kubepods/besteffort/pod0c1d';
  const cid = 'a'.repeat(64);
  const u = (cpuNanos: number, ws: number) => ({ time: T, creationTime: T - 60_500, cpuNanos, memory: { usageBytes: ws + 100, workingSetBytes: ws, rssBytes: 7, pageFaults: 11, majorPageFaults: 1, swapBytes: 0, limitBytes: undefined } });
  const detail = (quotaUs: number) => ({
    cpu: { userNanos: 2e9, systemNanos: 1e9, periods: 10, throttledPeriods: 3, throttledNanos: 5e8, shares: 2, periodUs: 100000, quotaUs },
    memory: { cache: 4096, mappedFile: 0, maxUsage: 2e6, failcnt: 0, kernelUsage: 0, activeFile: 1, inactiveFile: 2, limit: 2 ** 63, swapLimit: 2 ** 63, reservation: 2 ** 63 },
  });
  const s: ResourceSample = {
    node: sample.node,
    containers: [],
    cadvisor: [
      { id: `${pod}/${cid}`, name: cid, image: 'docker.io/library/busybox:local', namespace: 'ns', pod: 'p', container: 'main', startTime: T - 30_250, usage: u(3e9, 1234567), detail: detail(50000) },
      { id: '/', name: '', image: '', namespace: '', pod: '', container: '', startTime: T - 3_600_000, usage: u(9e9, 5e8), detail: detail(0) },
      { id: pod, name: '', image: '', namespace: 'ns', pod: 'p', container: '', startTime: T - 60_500, usage: u(0, 10), detail: detail(0) },
    ],
    machine: { time: T, cores: 2, physicalCores: 1, sockets: 1, memoryBytes: 8e9, swapBytes: 0, machineID: 'm1', systemUUID: 'u1', bootID: 'b1' },
  };
  const text = cadvisorMetricsText(s, undefined, T);
  // id: the cgroup; name: the runtime's ID; cpu="total" (no per-CPU series); Go's float format; the stats at their read time
  assert.match(text, new RegExp(`^container_cpu_usage_seconds_total\\{container="main",cpu="total",id="${pod}/${cid}",image="docker.io/library/busybox:local",name="${cid}",namespace="ns",pod="p"\\} 3 ${T}$`, 'm'));
  assert.match(text, new RegExp(`^container_memory_working_set_bytes\\{container="",id="${pod}",image="",name="",namespace="ns",pod="p"\\} 10 ${T}$`, 'm'));
  assert.match(text, new RegExp(`^container_memory_working_set_bytes\\{container="main",id="${pod}/${cid}",[^}]*\\} 1.234567e\\+06 ${T}$`, 'm'));
  assert.match(text, new RegExp(`^container_memory_usage_bytes\\{container="",id="/",image="",name="",namespace="",pod=""\\} 5.000001e\\+08 ${T}$`, 'm'));
  // (a cgroup with no CPU time has no usage series, as cAdvisor's)
  assert.doesNotMatch(text, new RegExp(`^container_cpu_usage_seconds_total\\{[^}]*id="${pod}"`, 'm'));
  // the spec series: whole seconds, no timestamp; the memory limit above 2^62 is 0; the quota only where set
  const started = goFloat(Math.floor((T - 30_250) / 1000)).replace('+', '\\+');
  assert.match(started, /^1\.\d+e\\\+09$/);
  assert.match(text, new RegExp(`^container_start_time_seconds\\{container="main",[^}]*\\} ${started}$`, 'm'));
  assert.match(text, /^container_spec_memory_limit_bytes\{container="main",[^}]*\} 0$/m);
  assert.match(text, /^container_spec_cpu_quota\{container="main",[^}]*\} 50000$/m);
  assert.doesNotMatch(text, /^container_spec_cpu_quota\{container="",/m);
  // CFS throttling where a quota is set; page faults by type and scope
  assert.match(text, new RegExp(`^container_cpu_cfs_throttled_seconds_total\\{container="main",[^}]*\\} 0.5 ${T}$`, 'm'));
  assert.doesNotMatch(text, /^container_cpu_cfs_periods_total\{container="",/m);
  assert.match(text, new RegExp(`^container_memory_failures_total\\{container="main",failure_type="pgmajfault",id="[^"]+",image="[^"]*",name="${cid}",namespace="ns",pod="p",scope="hierarchy"\\} 1 ${T}$`, 'm'));
  // the machine's series with its labels
  assert.match(text, new RegExp(`^machine_cpu_cores\\{boot_id="b1",machine_id="m1",system_uuid="u1"\\} 2 ${T}$`, 'm'));
  assert.match(text, new RegExp(`^machine_memory_bytes\\{boot_id="b1",machine_id="m1",system_uuid="u1"\\} 8e\\+09 ${T}$`, 'm'));
  assert.match(text, /^container_scrape_error 0$/m);
  // families in name order, each family's series by label values ("" and "/" first)
  const names = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!);
  assert.deepEqual(names, [...names].sort());
  const ws = [...text.matchAll(/^container_memory_working_set_bytes\{container="([^"]*)",id="([^"]*)"/gm)].map((m) => m[2]);
  assert.deepEqual(ws, ['/', pod, `${pod}/${cid}`]);
});

test('Go\'s float format and the systemd driver\'s cgroupsPath', () => {
  assert.deepEqual([0, 1, 0.5, 123456, 1234567, 1e6, 1.5e9, 0.0001, 0.00001, -2e7].map(goFloat), ['0', '1', '0.5', '123456', '1.234567e+06', '1e+06', '1.5e+09', '0.0001', '1e-05', '-2e+07']);
  assert.equal(cgroupOfCgroupsPath('/kubepods/burstable/pod1/abc'), '/kubepods/burstable/pod1/abc');
  assert.equal(cgroupOfCgroupsPath('kubepods-besteffort-pod1.slice:cri-containerd:abc'), '/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/cri-containerd-abc.scope');
  assert.equal(cgroupOfCgroupsPath(''), undefined);
});
