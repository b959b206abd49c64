// The node agent's cgroups (nodeagent/cgroups.ts): the kubelet's computations (MilliCPUToShares,
// MilliCPUToQuota, ResourceConfigForPod, the QoS and node allocatable settings, the cgroup names)
// and the cgroupfs manager over a directory tree standing in for the cgroup mounts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  burstableCPUShares, CgroupManager, cgroupfs, ContainerManager, detectCgroupSubsystems, milliCPUToQuota, milliCPUToShares, nodeAllocatableConfig, parseCgroupfs,
  podCgroupName, podUIDOf, qosCgroupNames, resourceConfigForPod, sharesToWeight, weightToShares, type CgroupSubsystems,
} from '../../src/nodeagent/cgroups.js';
import { linuxResources, sandboxConfig } from '../../src/nodeagent/podspec.js';

const silent: any = { info() {}, error() {}, warn() {}, v: () => silent };

function pod(containers: any[], extra: Record<string, unknown> = {}): any {
  return { metadata: { name: 'p', namespace: 'default', uid: 'u-1' }, spec: { containers, ...extra } };
}
const c = (name: string, requests?: Record<string, string>, limits?: Record<string, string>, more: Record<string, unknown> = {}) => ({ name, resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) }, ...more });

test('MilliCPUToShares and MilliCPUToQuota: 2 shares at the least, 262144 at the most; a quota of 1 ms at the least', () => {
  assert.equal(milliCPUToShares(0), 2);
  assert.equal(milliCPUToShares(1), 2);
  assert.equal(milliCPUToShares(100), 102);
  assert.equal(milliCPUToShares(1000), 1024);
  assert.equal(milliCPUToShares(1_000_000), 262144);
  assert.equal(milliCPUToQuota(0, 100000), 0);
  assert.equal(milliCPUToQuota(5, 100000), 1000);
  assert.equal(milliCPUToQuota(250, 100000), 25000);
  assert.equal(milliCPUToQuota(250, 50000), 12500);
  assert.equal(sharesToWeight(2), 1);
  assert.equal(sharesToWeight(1024), 39);
  assert.equal(sharesToWeight(262144), 10000);
  assert.equal(weightToShares(1), 2);
  assert.equal(weightToShares(39), 998);
  assert.equal(weightToShares(10000), 262144);
});

test('ResourceConfigForPod: Guaranteed, Burstable with and without every limit, BestEffort; cpuCFSQuota off', () => {
  const g = pod([c('a', { cpu: '500m', memory: '64Mi' }, { cpu: '500m', memory: '64Mi' }), c('b', { cpu: '250m', memory: '32Mi' }, { cpu: '250m', memory: '32Mi' })]);
  assert.deepEqual(resourceConfigForPod(g, true, 100000), { cpuShares: 768, cpuQuota: 75000, cpuPeriod: 100000, memory: 96 * 1024 * 1024 });
  assert.deepEqual(resourceConfigForPod(g, false, 100000), { cpuShares: 768, cpuQuota: -1, cpuPeriod: 100000, memory: 96 * 1024 * 1024 });
  // every container limited: quota and memory; a request defaulted from its limit
  const all = pod([c('a', { cpu: '100m', memory: '32Mi' }, { cpu: '200m', memory: '64Mi' }), c('b', undefined, { cpu: '100m', memory: '32Mi' })]);
  assert.deepEqual(resourceConfigForPod(all, true, 100000), { cpuShares: 204, cpuQuota: 30000, cpuPeriod: 100000, memory: 96 * 1024 * 1024 });
  // one container without a CPU limit: no quota; without a memory limit: no memory limit
  const someCPU = pod([c('a', { cpu: '100m' }, { cpu: '200m', memory: '64Mi' }), c('b', { cpu: '100m' }, { memory: '32Mi' })]);
  assert.deepEqual(resourceConfigForPod(someCPU, true, 100000), { cpuShares: 204, memory: 96 * 1024 * 1024 });
  const none = pod([c('a', { cpu: '100m' }), c('b', undefined, { cpu: '1' })]);
  assert.deepEqual(resourceConfigForPod(none, true, 100000), { cpuShares: 1126 });
  // BestEffort
  assert.deepEqual(resourceConfigForPod(pod([c('a'), c('b')]), true, 100000), { cpuShares: 2 });
});

test('ResourceConfigForPod: init containers and sidecars count as the kubelet sums them; the overhead is added', () => {
  // the largest init container beats the containers' sum; a sidecar adds to both
  const p = pod([c('main', { cpu: '100m', memory: '10Mi' }, { cpu: '100m', memory: '10Mi' })], {
    initContainers: [
      c('side', { cpu: '50m', memory: '5Mi' }, { cpu: '50m', memory: '5Mi' }, { restartPolicy: 'Always' }),
      c('init', { cpu: '1', memory: '100Mi' }, { cpu: '1', memory: '100Mi' }),
    ],
  });
  const rc = resourceConfigForPod(p, true, 100000);
  // init (1050m with the sidecar) > main + side (150m)
  assert.deepEqual(rc, { cpuShares: milliCPUToShares(1050), cpuQuota: 105000, cpuPeriod: 100000, memory: 105 * 1024 * 1024 });
  // an init container without limits: no quota and no memory limit for the pod
  const q = pod([c('main', { cpu: '100m' }, { cpu: '200m', memory: '10Mi' })], { initContainers: [c('init', { cpu: '10m' })] });
  assert.deepEqual(resourceConfigForPod(q, true, 100000), { cpuShares: 102 });
  // overhead: added to the requests, and to the limits the pod has
  const o = pod([c('main', { cpu: '100m', memory: '10Mi' }, { cpu: '100m', memory: '10Mi' })], { overhead: { cpu: '10m', memory: '1Mi' } });
  assert.deepEqual(resourceConfigForPod(o, true, 100000), { cpuShares: milliCPUToShares(110), cpuQuota: 11000, cpuPeriod: 100000, memory: 11 * 1024 * 1024 });
});

test('a container\'s resources: memory.oom.group=1 in its cgroup on cgroup v2 unless singleProcessOOMKill (the kubelet\'s generateLinuxContainerResources)', () => {
  const pod = { metadata: { name: 'p', uid: 'u' }, spec: { containers: [{ name: 'c', resources: { limits: { cpu: '500m', memory: '64Mi' } } }] } };
  const settings = { cpuCFSQuota: true, cpuCFSQuotaPeriodUs: 100_000, memoryCapacity: 8 * 2 ** 30, seccompDefault: false };
  const v1 = linuxResources(pod, pod.spec.containers[0], settings);
  assert.deepEqual(v1, { cpuShares: 512, memoryLimitInBytes: 64 * 2 ** 20, oomScoreAdj: -997, cpuPeriod: 100_000, cpuQuota: 50_000 });
  const v2 = linuxResources(pod, pod.spec.containers[0], { ...settings, memoryOOMGroup: true });
  assert.deepEqual(v2.unified, { 'memory.oom.group': '1' });
});

test('the QoS cgroups: burstable shares of its pods\' requests; kubepods of the node allocatable', () => {
  const pods = [
    pod([c('a', { cpu: '100m' })]),
    pod([c('a', { cpu: '300m', memory: '1Mi' }, { cpu: '300m', memory: '1Mi' })]), // Guaranteed: not counted
    pod([c('a', { cpu: '250m' }, { cpu: '1' })]),
    pod([c('a')]),
  ];
  assert.equal(burstableCPUShares(pods), milliCPUToShares(350));
  assert.equal(burstableCPUShares([]), 2);
  const cap = { cpu: 4000, memory: 8 * 1024 ** 3, pid: 4194304 };
  const reserved: Record<string, string>[] = [{ cpu: '500m', memory: '1Gi', pid: '1000' }, { cpu: '250m', memory: '512Mi' }];
  assert.deepEqual(nodeAllocatableConfig(cap, reserved, true), { memory: 8 * 1024 ** 3 - 1.5 * 1024 ** 3, cpuShares: milliCPUToShares(3250), pidsLimit: 4193304 });
  assert.deepEqual(nodeAllocatableConfig(cap, reserved, false), { memory: 8 * 1024 ** 3, cpuShares: 4096, pidsLimit: 4194304 });
  assert.deepEqual(nodeAllocatableConfig({ cpu: 1000, memory: 100 }, [{ memory: '1Ki' }], true), { memory: 0, cpuShares: 1024 });
});

test('cgroup names: the QoS hierarchy under --cgroup-root, pod<uid> by QoS class, the sandbox\'s cgroup parent', () => {
  assert.deepEqual(parseCgroupfs('/'), []);
  assert.deepEqual(parseCgroupfs('/a//b/'), ['a', 'b']);
  assert.equal(cgroupfs([]), '/');
  const q = qosCgroupNames('/');
  assert.deepEqual(q, { guaranteed: ['kubepods'], burstable: ['kubepods', 'burstable'], besteffort: ['kubepods', 'besteffort'] });
  const t = qosCgroupNames('/keelson-test');
  assert.equal(cgroupfs(podCgroupName(t, pod([c('a', { cpu: '1', memory: '1Mi' }, { cpu: '1', memory: '1Mi' })]))), '/keelson-test/kubepods/podu-1');
  assert.equal(cgroupfs(podCgroupName(t, pod([c('a', { cpu: '1' })]))), '/keelson-test/kubepods/burstable/podu-1');
  assert.equal(cgroupfs(podCgroupName(t, pod([c('a')]))), '/keelson-test/kubepods/besteffort/podu-1');
  assert.equal(podUIDOf('pod0f3c-11'), '0f3c-11');
  assert.equal(podUIDOf('burstable'), undefined);
  assert.equal(podUIDOf('xpod1'), undefined);
  assert.equal(podUIDOf('pod1pod2'), undefined);
  const dns = { servers: [], searches: [], options: [] };
  assert.equal(sandboxConfig(pod([c('a')]), 0, dns).linux.cgroupParent, '');
  assert.equal(sandboxConfig(pod([c('a')]), 0, dns, '/var/log/pods', '/kubepods/besteffort/podu-1').linux.cgroupParent, '/kubepods/besteffort/podu-1');
});

test('detectCgroupSubsystems: v1 hierarchies by controller (the shortest mount point), v2 by /sys/fs/cgroup', () => {
  const v1 = detectCgroupSubsystems([
    'tmpfs /sys/fs/cgroup tmpfs rw 0 0',
    'cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,relatime,cpu,cpuacct 0 0',
    'cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0',
    'cgroup /sys/fs/cgroup/again/memory cgroup rw,memory 0 0',
    'cgroup /sys/fs/cgroup/systemd cgroup rw,relatime,xattr,name=systemd 0 0',
    'cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0',
  ].join('\n'));
  assert.equal(v1.v2, false);
  assert.deepEqual(Object.fromEntries(v1.mountPoints), { cpu: '/sys/fs/cgroup/cpu,cpuacct', cpuacct: '/sys/fs/cgroup/cpu,cpuacct', memory: '/sys/fs/cgroup/memory', 'name=systemd': '/sys/fs/cgroup/systemd' });
  const d = mkdtempSync(join(tmpdir(), 'keelson-cg2-'));
  try {
    writeFileSync(join(d, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
    const v2 = detectCgroupSubsystems(`cgroup2 ${d} cgroup2 rw 0 0`, d);
    assert.equal(v2.v2, true);
    assert.deepEqual([...v2.mountPoints.keys()], ['cpuset', 'cpu', 'io', 'memory', 'pids']);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
  assert.throws(() => detectCgroupSubsystems('proc /proc proc rw 0 0'), /failed to find cgroup mounts/);
});

/** the cgroupfs manager over a directory tree: its directories hold the settings' files, which cgroupfs has no need to remove */
class TreeCgroups extends CgroupManager {
  protected override rmdir(dir: string): void {
    rmSync(dir, { recursive: true });
  }
}

/** a directory tree standing in for the v1 mounts: one directory per controller */
function fakeV1(): { root: string; subsystems: CgroupSubsystems } {
  const root = mkdtempSync(join(tmpdir(), 'keelson-cg1-'));
  const mountPoints = new Map<string, string>();
  for (const s of ['cpu', 'cpuacct', 'cpuset', 'memory', 'pids', 'freezer']) {
    mkdirSync(join(root, s));
    mountPoints.set(s, join(root, s));
  }
  writeFileSync(join(root, 'cpuset', 'cpuset.cpus'), '0-3\n');
  writeFileSync(join(root, 'cpuset', 'cpuset.mems'), '0\n');
  return { root, subsystems: { v2: false, mountPoints } };
}

test('the v1 cgroupfs manager: made in every hierarchy (cpuset copied down), its settings written, validated, found under its QoS cgroup, removed', () => {
  const { root, subsystems } = fakeV1();
  try {
    const m = new TreeCgroups(subsystems);
    const name = ['r', 'kubepods', 'burstable', 'podabc'];
    assert.match(m.validate(['r'])!, /^cgroup \["r"\] has some missing paths: .*\/cpu\/r, .*\/cpuacct\/r, .*\/cpuset\/r, .*\/memory\/r, .*\/pids\/r$/);
    m.create(name, { cpuShares: 204, cpuQuota: 30000, cpuPeriod: 100000, memory: 1 << 26, pidsLimit: 16 });
    for (const s of ['cpu', 'cpuacct', 'cpuset', 'memory', 'pids', 'freezer']) assert.ok(existsSync(join(root, s, 'r/kubepods/burstable/podabc')), s);
    const rd = (f: string) => readFileSync(join(root, f), 'utf8').trim();
    assert.equal(rd('cpuset/r/kubepods/cpuset.cpus'), '0-3');
    assert.equal(rd('cpuset/r/kubepods/burstable/podabc/cpuset.mems'), '0');
    assert.equal(rd('cpu/r/kubepods/burstable/podabc/cpu.shares'), '204');
    assert.equal(rd('cpu/r/kubepods/burstable/podabc/cpu.cfs_quota_us'), '30000');
    assert.equal(rd('cpu/r/kubepods/burstable/podabc/cpu.cfs_period_us'), '100000');
    assert.equal(rd('memory/r/kubepods/burstable/podabc/memory.limit_in_bytes'), String(1 << 26));
    assert.equal(rd('pids/r/kubepods/burstable/podabc/pids.max'), '16');
    assert.equal(m.validate(name), undefined);
    assert.deepEqual(m.get(name), { cpuShares: 204, cpuQuota: 30000, cpuPeriod: 100000, memory: 1 << 26 });
    m.set(name, { pidsLimit: -1, memory: -1 });
    assert.equal(rd('pids/r/kubepods/burstable/podabc/pids.max'), 'max');
    assert.equal(m.get(name).memory, Infinity);
    const q = qosCgroupNames('/r');
    mkdirSync(join(root, 'memory/r/kubepods/burstable/not-a-pod'));
    assert.deepEqual(Object.fromEntries(m.podCgroups([q.besteffort, q.burstable, q.guaranteed])), { abc: name });
    // (cgroup.procs of a fake tree: nothing runs in it)
    assert.deepEqual(m.pids(['r']), []);
    m.remove(['r', 'kubepods', 'burstable', 'podabc']);
    for (const s of ['cpu', 'memory', 'pids']) assert.equal(existsSync(join(root, s, 'r/kubepods/burstable/podabc')), false);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the container manager: refuses a missing --cgroup-root and the systemd driver without systemd; makes the QoS hierarchy; resizes and cleans up pod cgroups', async () => {
  const { root, subsystems } = fakeV1();
  try {
    const base = { cgroupManager: new TreeCgroups(subsystems), cgroupsPerQOS: true, cgroupDriver: 'cgroupfs', enforceNodeAllocatable: ['pods'], podPidsLimit: 32, cpuCFSQuota: true, cpuCFSQuotaPeriodUs: 100000, reserved: [{ memory: '1Gi' }], log: silent, subsystems, capacity: () => ({ cpu: 2000, memory: 4 * 1024 ** 3, pid: 1000 }) };
    assert.throws(() => new ContainerManager({ ...base, cgroupRoot: '/r' }), /^Error: invalid configuration: cgroup \["r"\] has some missing paths: /);
    assert.throws(() => new ContainerManager({ ...base, cgroupRoot: '' }), /cgroups-per-qos was specified and cgroup-root was not specified/);
    for (const s of subsystems.mountPoints.values()) mkdirSync(join(s, 'r'));
    assert.throws(() => new ContainerManager({ ...base, cgroupRoot: '/r', cgroupDriver: 'systemd', systemdRunning: false }).start(() => []), /^Error: systemd not running on this host, cannot use systemd cgroups manager$/);
    const off = new ContainerManager({ ...base, cgroupRoot: '/', cgroupsPerQOS: false });
    assert.equal(off.podCgroupParent(pod([c('a')])), '');
    assert.deepEqual(off.start(() => []), {});

    const cm = new ContainerManager({ ...base, cgroupRoot: '/r' });
    const burst = pod([c('a', { cpu: '100m', memory: '8Mi' }, { cpu: '200m', memory: '16Mi' })]);
    const r = cm.start(() => [burst]);
    cm.stop();
    assert.deepEqual(r.enforced, { ok: true, message: 'Updated Node Allocatable limit across pods' });
    const rd = (f: string) => readFileSync(join(root, f), 'utf8').trim();
    assert.equal(rd('memory/r/kubepods/memory.limit_in_bytes'), String(3 * 1024 ** 3));
    assert.equal(rd('cpu/r/kubepods/cpu.shares'), '2048');
    assert.equal(rd('pids/r/kubepods/pids.max'), '1000');
    assert.equal(rd('cpu/r/kubepods/besteffort/cpu.shares'), '2');
    assert.equal(rd('cpu/r/kubepods/burstable/cpu.shares'), '102');
    assert.equal(cm.podCgroupParent(burst), '/r/kubepods/burstable/podu-1');
    assert.equal(cm.podCgroupExists(burst), false);
    cm.ensurePodCgroup(burst);
    assert.equal(cm.podCgroupExists(burst), true);
    assert.equal(rd('pids/r/kubepods/burstable/podu-1/pids.max'), '32');
    assert.equal(rd('cpu/r/kubepods/burstable/podu-1/cpu.cfs_quota_us'), '20000');
    // a resize: what grows is written in the 'widen' phase only, what shrinks in 'narrow'
    const grown = pod([c('a', { cpu: '50m', memory: '8Mi' }, { cpu: '400m', memory: '32Mi' })]);
    assert.equal(cm.resizePodCgroup(grown, 'narrow'), true); // the shares shrink
    assert.equal(rd('cpu/r/kubepods/burstable/podu-1/cpu.shares'), '51');
    assert.equal(rd('cpu/r/kubepods/burstable/podu-1/cpu.cfs_quota_us'), '20000');
    assert.equal(cm.resizePodCgroup(grown, 'widen'), true);
    assert.equal(rd('cpu/r/kubepods/burstable/podu-1/cpu.cfs_quota_us'), '40000');
    assert.equal(rd('memory/r/kubepods/burstable/podu-1/memory.limit_in_bytes'), String(32 * 1024 * 1024));
    assert.equal(cm.resizePodCgroup(grown, 'widen'), false);
    assert.equal(cm.resizePodCgroup(grown, 'narrow'), false);
    // clean-up: a known pod's stays; an unknown pod's with mounted volumes gets 2 shares; else it goes
    assert.deepEqual(await cm.cleanupOrphanedPodCgroups(new Set(['u-1']), () => false), []);
    assert.deepEqual(await cm.cleanupOrphanedPodCgroups(new Set(), () => true), []);
    assert.equal(rd('cpu/r/kubepods/burstable/podu-1/cpu.shares'), '2');
    assert.deepEqual(await cm.cleanupOrphanedPodCgroups(new Set(), () => false), ['u-1']);
    assert.equal(existsSync(join(root, 'cpu/r/kubepods/burstable/podu-1')), false);
    assert.equal(existsSync(join(root, 'cpu/r/kubepods/burstable')), true, 'the QoS cgroups stay');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
