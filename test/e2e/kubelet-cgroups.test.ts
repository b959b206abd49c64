// The node agent's cgroups end to end (cgroupsPerQOS, --cgroup-root, --pod-max-pids): a real
// `keelson server`, a private containerd (runc, the cgroupfs driver) and `keelson kubelet`, on
// this machine's cgroups. Its cgroup root is the containerd harness's own (made and removed by it):
// the QoS hierarchy (kubepods, kubepods/burstable, kubepods/besteffort) under it, each pod in
// pod<uid> under its QoS class's cgroup with the kubelet's limits, the containers under the pod's
// cgroup, the pod cgroup gone with its pod, and an in-place resize reaching it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { startCluster, freePort, until, ROOT, type Cluster } from './harness.js';
import { joiningKubeletArgs, writeJoiningKubeletConfig, KubeletProcess } from './kubeletharness.js';
import { startContainerd, type Containerd } from '../nodeagent/containerd.js';
import { createCgroupRoot } from '../nodeagent/cgrouproot.js';

let c: Cluster;
let ctd: Containerd;
let kubelet: KubeletProcess | undefined;
let dir: string;
let kubeletPort: number;
const NODE = 'keelson-cgroups-node';
const BUSYBOX = 'docker.io/library/busybox:local';
const PIDS_LIMIT = 16;
/** a pure cgroup2 host (else v1: one hierarchy per controller) */
const V2 = existsSync('/sys/fs/cgroup/cgroup.controllers');

function startKubelet(extra: string[] = []): KubeletProcess {
  return new KubeletProcess([...joiningKubeletArgs({ cluster: c, dir, endpoint: ctd.endpoint, node: NODE, port: kubeletPort }), '--pod-max-pids', String(PIDS_LIMIT), '-v', '3', ...extra]);
}

/**
 * the kubelet again with the file's usual flags (after a test that ran it with others): started
 * (its "Started kubelet" line, since the Node is still Ready from the one before) and Ready
 */
async function restartKubelet(): Promise<void> {
  await stopKubelet();
  const k = startKubelet();
  kubelet = k;
  await until('the kubelet started again', () => k.logs.includes('Started kubelet'), 60_000).catch((e) => {
    throw new Error(`${(e as Error).message}; the kubelet's log ends:\n${k.tail(3000)}`);
  });
  await k.ready(c, NODE, 90_000);
}

async function stopKubelet(): Promise<void> {
  const k = kubelet;
  kubelet = undefined;
  await k?.stop();
}

/** a cgroup file of the kubelet's tree: `rel` under the cgroup root, in `controller`'s hierarchy (v1) or the unified one */
function cgPath(controller: string, rel: string, file?: string): string {
  const base = V2 ? '/sys/fs/cgroup' : `/sys/fs/cgroup/${controller}`;
  return join(base, ctd.cgroupRoot, rel, file ?? '');
}
function cgRead(controller: string, rel: string, file: string): string {
  return readFileSync(cgPath(controller, rel, file), 'utf8').trim();
}
/** the memory limit (bytes; 'max' when none) */
function memoryLimit(rel: string): string {
  if (V2) return cgRead('memory', rel, 'memory.max');
  const v = cgRead('memory', rel, 'memory.limit_in_bytes');
  return BigInt(v) >= 2n ** 62n ? 'max' : v;
}
/** the CFS quota (µs; 'max' when none) and period */
function cpuMax(rel: string): string {
  if (V2) return cgRead('cpu', rel, 'cpu.max');
  const q = cgRead('cpu', rel, 'cpu.cfs_quota_us');
  return `${q === '-1' ? 'max' : q} ${cgRead('cpu', rel, 'cpu.cfs_period_us')}`;
}
/** cpu.shares (v2: cpu.weight, as runc converts shares) */
function cpuShares(rel: string): number {
  if (V2) return Number(cgRead('cpu', rel, 'cpu.weight'));
  return Number(cgRead('cpu', rel, 'cpu.shares'));
}
const sharesAs = (shares: number) => (V2 ? 1 + Math.floor(((shares - 2) * 9999) / 262142) : shares);

function pod(name: string, containers: unknown[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 1, containers, ...extra } });
}
function container(name: string, script: string, resources?: unknown): Record<string, unknown> {
  return { name, image: BUSYBOX, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script], ...(resources ? { resources } : {}) };
}
const res = (cpu: string, cpuLim: string, mem: string, memLim: string) => ({ requests: { cpu, memory: mem }, limits: { cpu: cpuLim, memory: memLim } });

function apply(json: string): void {
  const r = c.kubectl(['apply', '-f', '-'], { input: json });
  assert.equal(r.code, 0, r.stderr);
}

async function podJSON(name: string): Promise<any> {
  const r = await c.raw('GET', `/api/v1/namespaces/default/pods/${name}`);
  return r.status === 200 ? r.json() : undefined;
}

async function running(name: string): Promise<any> {
  return until(`pod ${name} Running`, async () => {
    const p = await podJSON(name);
    return p?.status?.phase === 'Running' && p.status.containerStatuses?.every((s: any) => s.state?.running) ? p : undefined;
  }, 60_000).catch((e) => {
    throw new Error(`${(e as Error).message}; the kubelet's log ends:\n${kubelet?.tail(3000)}`);
  });
}

/** the container's /proc/self/cgroup lines, from its log */
async function loggedCgroups(name: string, container = 'main'): Promise<string> {
  return until(`the logs of ${name}`, () => {
    const r = c.kubectl(['logs', name, '-c', container]);
    return r.code === 0 && r.stdout.includes(':') ? r.stdout : undefined;
  });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-kubelet-cgroups-'));
  ctd = await startContainerd();
  c = await startCluster({ args: ['--storage-backend=memory'] });
  writeJoiningKubeletConfig(c, dir);
  kubeletPort = await freePort();
  kubelet = startKubelet();
  await kubelet.ready(c, NODE, 90_000);
});

after(async () => {
  // pods first (the kubelet stops their containers), then the kubelet, the runtime (which removes
  // the cgroup root with everything under it) and the server
  if (c && kubelet) c.kubectl(['delete', 'pods', '--all', '--wait=true', '--timeout=60s']);
  await stopKubelet();
  await ctd?.stop();
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (ctd) assert.equal(existsSync(join(V2 ? '/sys/fs/cgroup' : '/sys/fs/cgroup/cpu', ctd.cgroupRoot)), false, 'the test\'s cgroup root is removed');
});

test('the QoS hierarchy under --cgroup-root: kubepods with the node allocatable, burstable and besteffort', async () => {
  for (const ctl of V2 ? ['unified'] : ['cpu', 'cpuacct', 'cpuset', 'memory', 'pids', 'blkio', 'devices', 'freezer']) {
    for (const rel of ['kubepods', 'kubepods/burstable', 'kubepods/besteffort']) assert.ok(existsSync(cgPath(ctl, rel)), `${cgPath(ctl, rel)} exists`);
  }
  // kubepods: the node's CPUs as shares and its memory (enforceNodeAllocatable "pods", nothing reserved)
  const mem = Number(memoryLimit('kubepods'));
  assert.ok(Math.abs(mem - totalmem()) < 4096, `kubepods' memory limit ${mem} is the node's memory ${totalmem()}`);
  assert.equal(cpuShares('kubepods/besteffort'), sharesAs(2));
  if (!V2) assert.ok(cgRead('cpuset', 'kubepods/burstable', 'cpuset.cpus') !== '', 'cpuset.cpus copied down');
  await until('the container manager\'s log', () => kubelet?.logs.includes('Container manager verified user specified cgroup-root exists'), 10_000);
});

test('a Burstable pod with limits on every container: pod<uid> under kubepods/burstable with its CPU shares, quota, memory limit and pids.max; its containers under it', async () => {
  apply(pod('burst', [
    container('main', 'cat /proc/self/cgroup; sleep 3600', res('100m', '200m', '32Mi', '64Mi')),
    container('side', 'sleep 3600', res('50m', '100m', '16Mi', '32Mi')),
  ]));
  const p = await running('burst');
  const rel = `kubepods/burstable/pod${p.metadata.uid}`;
  assert.equal(p.status.qosClass, 'Burstable');
  assert.equal(memoryLimit(rel), String(96 * 1024 * 1024));
  assert.equal(cpuMax(rel), '30000 100000');
  assert.equal(cpuShares(rel), sharesAs(153)); // 150m
  assert.equal(cgRead('pids', rel, 'pids.max'), String(PIDS_LIMIT));
  // the burstable QoS cgroup has (at least) this pod's requests as shares
  assert.ok(cpuShares('kubepods/burstable') >= sharesAs(153), 'burstable shares of its pods\' requests');
  // the container's own cgroups are under the pod's: <root>/kubepods/burstable/pod<uid>/<container id>
  const lines = await loggedCgroups('burst');
  const id = p.status.containerStatuses.find((s: any) => s.name === 'main').containerID.replace(/^containerd:\/\//, '');
  const want = `${ctd.cgroupRoot}/${rel}/${id}`;
  const mine = lines.split('\n').filter((l) => V2 ? l.startsWith('0::') : /:(memory|cpu,cpuacct|cpu|pids):/.test(l));
  assert.ok(mine.length > 0, lines);
  for (const l of mine) assert.ok(l.endsWith(want), `${l} names ${want}`);
  // ... and the host sees the container's processes there
  assert.ok(readFileSync(cgPath('memory', `${rel}/${id}`, 'cgroup.procs'), 'utf8').trim().length > 0);
});

test('a Guaranteed pod lands directly under kubepods; a BestEffort pod under kubepods/besteffort with 2 CPU shares and no limits', async () => {
  apply(pod('guaranteed', [container('main', 'sleep 3600', res('100m', '100m', '32Mi', '32Mi'))]));
  apply(pod('besteffort', [container('main', 'sleep 3600')]));
  const g = await running('guaranteed');
  const b = await running('besteffort');
  assert.equal(g.status.qosClass, 'Guaranteed');
  assert.equal(b.status.qosClass, 'BestEffort');
  const grel = `kubepods/pod${g.metadata.uid}`;
  assert.ok(existsSync(cgPath('memory', grel)), `${grel} exists`);
  assert.equal(memoryLimit(grel), String(32 * 1024 * 1024));
  assert.equal(cpuMax(grel), '10000 100000');
  assert.equal(cpuShares(grel), sharesAs(102));
  const brel = `kubepods/besteffort/pod${b.metadata.uid}`;
  assert.equal(cpuShares(brel), sharesAs(2));
  assert.equal(memoryLimit(brel), 'max');
  assert.match(cpuMax(brel), /^max /);
  assert.equal(existsSync(cgPath('memory', `kubepods/burstable/pod${g.metadata.uid}`)), false);
});

test('--pod-max-pids is the pod cgroup\'s pids.max: forking past it fails inside the pod', async () => {
  // (the shell gives up at the first fork the kernel refuses: sh: can't fork)
  apply(pod('forker', [container('main', 'i=0; while [ $i -lt 40 ]; do sleep 600 & i=$((i+1)); echo started $i; done; echo forked all; sleep 3600')]));
  const p = await running('forker');
  const rel = `kubepods/besteffort/pod${p.metadata.uid}`;
  assert.equal(cgRead('pids', rel, 'pids.max'), String(PIDS_LIMIT));
  const logs = await until('a fork refused', () => {
    for (const prev of [[], ['--previous']]) {
      const r = c.kubectl(['logs', 'forker', ...prev]);
      if (r.code === 0 && /can't fork|Resource temporarily unavailable/.test(r.stdout)) return r.stdout;
    }
    return undefined;
  });
  assert.doesNotMatch(logs, /forked all/);
  const started = Math.max(0, ...[...logs.matchAll(/started (\d+)/g)].map((m) => Number(m[1])));
  assert.ok(started < PIDS_LIMIT, `${started} processes started, fewer than the limit of ${PIDS_LIMIT}`);
  assert.ok(Number(cgRead('pids', rel, 'pids.current')) <= PIDS_LIMIT);
  const events = c.kubectl(['get', 'events', '--field-selector', 'involvedObject.name=forker', '-o', 'jsonpath={.items[*].reason}']);
  assert.doesNotMatch(events.stdout, /FailedCreatePodContainer/);
});

test('in-place resize reaches the pod cgroup: widened as the containers grow, narrowed as they shrink', async () => {
  const p = await running('burst');
  const rel = `kubepods/burstable/pod${p.metadata.uid}`;
  const patch = (body: unknown) => {
    const r = c.kubectl(['patch', 'pod', 'burst', '--subresource', 'resize', '-p', JSON.stringify(body)]);
    assert.equal(r.code, 0, r.stderr);
  };
  patch({ spec: { containers: [{ name: 'main', resources: { requests: { cpu: '300m', memory: '32Mi' }, limits: { cpu: '400m', memory: '128Mi' } } }] } });
  await until('the pod cgroup widened', () => memoryLimit(rel) === String(160 * 1024 * 1024) && cpuMax(rel) === '50000 100000' && cpuShares(rel) === sharesAs(358), 60_000).catch((e) => {
    throw new Error(`${(e as Error).message}: memory ${memoryLimit(rel)}, cpu ${cpuMax(rel)}, shares ${cpuShares(rel)}`);
  });
  // (the API server refuses a smaller memory limit without the RestartContainer policy: CPU shrinks)
  patch({ spec: { containers: [{ name: 'main', resources: { requests: { cpu: '100m' }, limits: { cpu: '100m' } } }] } });
  await until('the pod cgroup narrowed', () => memoryLimit(rel) === String(160 * 1024 * 1024) && cpuMax(rel) === '20000 100000' && cpuShares(rel) === sharesAs(153), 60_000).catch((e) => {
    throw new Error(`${(e as Error).message}: memory ${memoryLimit(rel)}, cpu ${cpuMax(rel)}, shares ${cpuShares(rel)}`);
  });
  const q = await podJSON('burst');
  assert.equal(q.status.containerStatuses.find((s: any) => s.name === 'main').restartCount, 0);
});

test('a deleted pod\'s cgroup is removed once its containers are gone', async () => {
  const p = await running('guaranteed');
  const rel = `kubepods/pod${p.metadata.uid}`;
  assert.ok(existsSync(cgPath('memory', rel)));
  const r = c.kubectl(['delete', 'pod', 'guaranteed', '--wait=true', '--timeout=60s']);
  assert.equal(r.code, 0, r.stderr);
  await until('the pod cgroup removed', () => !existsSync(cgPath('memory', rel)) && !existsSync(cgPath('cpu', rel)) && !existsSync(cgPath('pids', rel)), 30_000);
});

test('start-up: --cgroup-driver=systemd is refused without systemd; a --cgroup-root that does not exist is refused', async () => {
  const port = await freePort();
  const run = (extra: string[]) =>
    spawnSync(process.execPath, [...joiningKubeletArgs({ cluster: c, dir, endpoint: ctd.endpoint, node: NODE, port }), ...extra], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  const systemd = run(['--cgroup-driver=systemd']);
  assert.notEqual(systemd.status, 0);
  assert.match(systemd.stderr, /Failed to start ContainerManager: systemd not running on this host, cannot use systemd cgroups manager/);
  const missing = `/keelson-missing-${process.pid}`;
  const noRoot = run(['--cgroup-root', missing]);
  assert.notEqual(noRoot.status, 0);
  const why = V2 ? `could not read controllers for cgroup ["keelson-missing-${process.pid}"]` : `cgroup ["keelson-missing-${process.pid}"] has some missing paths: /sys/fs/cgroup/`;
  assert.ok(noRoot.stderr.includes(`failed to run Kubelet: invalid configuration: ${why}`), noRoot.stderr);
  assert.equal(existsSync(`/sys/fs/cgroup/${V2 ? '' : 'memory/'}${missing}`), false);
});

test('enforceNodeAllocatable system-reserved and kube-reserved-compressible: the named cgroups get the reservations\' limits (CPU only for the compressible one); a cgroup that does not exist stops the start', async () => {
  const sys = `${ctd.cgroupRoot}/system-reserved`;
  const kube = `${ctd.cgroupRoot}/kube-reserved`;
  createCgroupRoot(sys);
  createCgroupRoot(kube);
  const reserved = ['--enforce-node-allocatable=pods,system-reserved,kube-reserved-compressible', '--system-reserved=cpu=100m,memory=100Mi,pid=1000', `--system-reserved-cgroup=${sys}`, '--kube-reserved=cpu=200m,memory=50Mi', `--kube-reserved-cgroup=${kube}`];
  await stopKubelet();
  kubelet = startKubelet(reserved);
  // (the Node is still Ready from the kubelet before: the new one's limits are what tells it started)
  const shares = () => (V2 ? cgRead('cpu', 'system-reserved', 'cpu.weight') : cgRead('cpu', 'system-reserved', 'cpu.shares'));
  // (milliCPUToShares: 100m is 102 shares, 200m 204)
  // (the kubelet writes one limit after the other: system-reserved's CPU, memory and pids, then kube-reserved's)
  const memory = String(100 * 1024 * 1024);
  const kubeShares = () => (V2 ? cgRead('cpu', 'kube-reserved', 'cpu.weight') : cgRead('cpu', 'kube-reserved', 'cpu.shares'));
  await until('the reserved cgroups limited', () => shares() === (V2 ? '4' : '102') && memoryLimit('system-reserved') === memory && cgRead('pids', 'system-reserved', 'pids.max') === '1000' && kubeShares() === (V2 ? '8' : '204'), 60_000).catch((e) => {
    throw new Error(`${(e as Error).message}: ${shares()}, ${memoryLimit('system-reserved')}; the kubelet's log ends:\n${kubelet?.tail(3000)}`);
  });
  assert.equal(memoryLimit('system-reserved'), memory);
  assert.equal(cgRead('pids', 'system-reserved', 'pids.max'), '1000');
  assert.equal(kubeShares(), V2 ? '8' : '204');
  assert.equal(memoryLimit('kube-reserved'), 'max', 'the compressible form limits CPU only');
  const ev = await until('the NodeAllocatableEnforced events', async () => {
    const r = await c.raw('GET', `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D${NODE},reason%3DNodeAllocatableEnforced`);
    const msgs = (r.json().items ?? []).map((e: any) => e.message as string);
    return msgs.includes(`Updated limits on system reserved cgroup ${sys}`) && msgs.includes(`Updated limits on kube reserved cgroup ${kube}`) ? msgs : undefined;
  });
  assert.ok(ev.includes('Updated Node Allocatable limit across pods'), JSON.stringify(ev));
  // a reserved cgroup that is not there: the kubelet does not start
  const absent = `${ctd.cgroupRoot}/absent`;
  const port = await freePort();
  const r = spawnSync(process.execPath, [...joiningKubeletArgs({ cluster: c, dir, endpoint: ctd.endpoint, node: NODE, port }), '--enforce-node-allocatable=pods,system-reserved', '--system-reserved=cpu=100m', `--system-reserved-cgroup=${absent}`], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  assert.notEqual(r.status, 0);
  const parts = absent.split('/').filter(Boolean).map((x) => JSON.stringify(x)).join(' ');
  assert.ok(r.stderr.includes(`Failed to start ContainerManager: Failed to enforce System Reserved Cgroup Limits on ${JSON.stringify(absent)}: [${parts}] cgroup does not exist`), r.stderr);
  // the kubelet as the other tests have it (its start puts the node allocatable back on kubepods)
  await restartKubelet();
});

test('--kubelet-cgroups: the kubelet moves itself into that cgroup (made when missing); --oom-score-adj is its own OOM score', async () => {
  const own = `${ctd.cgroupRoot}/kubelet`;
  await stopKubelet();
  // (a score above 0 needs no privilege; the default -999 does, which this machine refuses: logged, as in the kubelet)
  kubelet = startKubelet([`--kubelet-cgroups=${own}`, '--oom-score-adj=500']);
  const pid = kubelet.proc.pid!;
  const membership = () => readFileSync(`/proc/${pid}/cgroup`, 'utf8');
  await until('the kubelet in its cgroup', () => membership().split('\n').some((l) => l.endsWith(`:${own}`)), 60_000).catch((e) => {
    throw new Error(`${(e as Error).message}: ${membership()}; the kubelet's log ends:\n${kubelet?.tail(3000)}`);
  });
  for (const ctl of V2 ? [''] : ['memory', 'cpu', 'pids']) {
    // (v1: the line of each hierarchy names its controllers; v2: the one line's are empty)
    assert.ok(membership().split('\n').some((l) => l.split(':')[1]!.split(',').includes(ctl) && l.endsWith(`:${own}`)), `${ctl}: ${membership()}`);
  }
  assert.equal(readFileSync(`/proc/${pid}/oom_score_adj`, 'utf8').trim(), '500');
  await restartKubelet();
});

test('--qos-reserved=memory=50% (the QOSReserved gate): Burstable may not use half the Guaranteed pods\' memory requests, BestEffort also half the Burstable ones\'', async () => {
  const del = c.kubectl(['delete', 'pods', '--all', '--wait=true', '--timeout=60s']);
  assert.equal(del.code, 0, del.stderr);
  await stopKubelet();
  kubelet = startKubelet(['--feature-gates=QOSReserved=true', '--qos-reserved=memory=50%']);
  const kp = BigInt(memoryLimit('kubepods'));
  const limits = () => [memoryLimit('kubepods/burstable'), memoryLimit('kubepods/besteffort')];
  const want = async (what: string, burstable: bigint, besteffort: bigint) =>
    until(what, () => limits()[0] === String(burstable) && limits()[1] === String(besteffort), 60_000).catch((e) => {
      throw new Error(`${(e as Error).message}: ${limits().join(', ')} (kubepods ${kp}); the kubelet's log ends:\n${kubelet?.tail(3000)}`);
    });
  // no pods: both may use the whole allocatable memory
  await want('the QoS limits with no pods', kp, kp);
  const Mi = 1024n * 1024n;
  apply(pod('reserve-g', [container('main', 'sleep 3600', res('100m', '100m', '100Mi', '100Mi'))]));
  await running('reserve-g');
  await want('Burstable less half the Guaranteed requests', kp - 50n * Mi, kp - 50n * Mi);
  apply(pod('reserve-b', [container('main', 'sleep 3600', res('100m', '200m', '64Mi', '128Mi'))]));
  await running('reserve-b');
  await want('BestEffort less half the Burstable requests too', kp - 50n * Mi, kp - 50n * Mi - 32n * Mi);
  const again = c.kubectl(['delete', 'pods', '--all', '--wait=true', '--timeout=60s']);
  assert.equal(again.code, 0, again.stderr);
  await restartKubelet();
});

test('--cgroups-per-qos=false: no pod cgroups, and no cgroup parent (the runtime\'s own placement)', async () => {
  const del = c.kubectl(['delete', 'pods', '--all', '--wait=true', '--timeout=60s']);
  assert.equal(del.code, 0, del.stderr);
  await stopKubelet();
  kubelet = startKubelet(['--cgroups-per-qos=false', '--enforce-node-allocatable=']);
  apply(pod('flat', [container('main', 'cat /proc/self/cgroup; sleep 3600', res('100m', '200m', '32Mi', '64Mi'))]));
  const p = await running('flat');
  const lines = await loggedCgroups('flat');
  assert.doesNotMatch(lines, /kubepods/);
  assert.doesNotMatch(lines, new RegExp(ctd.cgroupRoot));
  assert.equal(existsSync(cgPath('memory', `kubepods/burstable/pod${p.metadata.uid}`)), false);
});
