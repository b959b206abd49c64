// The Summary API's system containers and the pods' own cgroups end to end: a real `keelson
// server`, a private containerd (runc, the cgroupfs driver) and `keelson kubelet` on this machine's
// cgroups, under the containerd harness's own cgroup root. As the kubelet's summary provider
// (GetSystemContainersStats) lists them: "pods" (<cgroup-root>/kubepods) always, "kubelet" (its own
// cgroup, or --kubelet-cgroups), "runtime" (--runtime-cgroups) and "misc" (--system-cgroups) when
// they have a cgroup name, each with the cgroup's CPU, memory and swap as cAdvisor reads them. A
// pod's CPU and memory are its cgroup's (the sandbox's included), no longer its containers' sums.
// --system-cgroups moves the root cgroup's processes into that cgroup: here the "root" is a cgroup
// of the test's (KEELSON_SYSTEM_CGROUPS_SOURCE), never the machine's. Tested on cgroup v1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster, freePort, until, ROOT, type Cluster } from './harness.js';
import { joiningKubeletArgs, writeJoiningKubeletConfig, KubeletProcess, kubeletGet } from './kubeletharness.js';
import { startContainerd, type Containerd } from '../nodeagent/containerd.js';
import { cgroupMounts, createCgroupRoot } from '../nodeagent/cgrouproot.js';

let c: Cluster;
let ctd: Containerd;
let kubelet: KubeletProcess | undefined;
let dir: string;
let kubeletPort: number;
const NODE = 'keelson-syscontainers-node';
const BUSYBOX = 'docker.io/library/busybox:local';
const V2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
const helpers: ChildProcess[] = [];
/** the clock around the kubelet's first start, which makes the kubepods cgroup */
const firstStart = { before: 0, after: 0 };

function startKubelet(extra: string[] = []): KubeletProcess {
  return new KubeletProcess([...joiningKubeletArgs({ cluster: c, dir, endpoint: ctd.endpoint, node: NODE, port: kubeletPort }), '-v', '3', ...extra]);
}

async function stopKubelet(): Promise<void> {
  const k = kubelet;
  kubelet = undefined;
  await k?.stop();
}

/** the kubelet (again) with these flags, started and Ready */
async function restartKubelet(extra: string[] = []): Promise<KubeletProcess> {
  await stopKubelet();
  const k = startKubelet(extra);
  kubelet = k;
  await until('the kubelet started', () => k.logs.includes('Started kubelet'), 60_000).catch((e) => {
    throw new Error(`${(e as Error).message}; the kubelet's log ends:\n${k.tail(3000)}`);
  });
  await k.ready(c, NODE, 90_000);
  return k;
}

const get = (path: string): Promise<string> => kubeletGet(c, kubeletPort, path);
const summary = async (query = ''): Promise<any> => JSON.parse(await get(`/stats/summary${query}`));

/** a cgroup file under the test's cgroup root (v1: in `controller`'s hierarchy) */
function cgFile(controller: string, rel: string, file: string): string {
  return join(V2 ? '/sys/fs/cgroup' : `/sys/fs/cgroup/${controller}`, ctd.cgroupRoot, rel, file);
}
const cgRead = (controller: string, rel: string, file: string) => readFileSync(cgFile(controller, rel, file), 'utf8').trim();

/** a `sleep` of the test's, moved into the cgroup `rel` (under the test's root) in every hierarchy */
function sleeperIn(rel: string): number {
  createCgroupRoot(`${ctd.cgroupRoot}/${rel}`);
  const p = spawn('sleep', ['600'], { stdio: 'ignore' });
  helpers.push(p);
  for (const m of cgroupMounts()) {
    if (m.v2 !== V2) continue;
    writeFileSync(join(m.path, ctd.cgroupRoot, rel, 'cgroup.procs'), String(p.pid));
  }
  return p.pid!;
}

/** a process's cgroup in each v1 hierarchy (controller -> path), or the unified one ('' -> path) */
function membership(pid: number): Map<string, string> {
  const out = new Map<string, string>();
  for (const l of readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(l);
    if (m) for (const ctl of m[1]!.split(',')) out.set(ctl, m[2]!);
  }
  return out;
}

const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** a system container's or a pod's figures, as the kubelet gives a cgroup's (cadvisorInfoToContainerStats) */
function assertCgroupFigures(what: string, x: any): void {
  const j = JSON.stringify(x);
  assert.match(x.cpu.time, iso, `${what}: ${j}`);
  assert.equal(typeof x.cpu.usageCoreNanoSeconds, 'number', `${what}: ${j}`);
  assert.equal(typeof x.cpu.usageNanoCores, 'number', `${what}: ${j}`);
  for (const f of ['usageBytes', 'workingSetBytes', 'rssBytes', 'pageFaults', 'majorPageFaults']) assert.equal(typeof x.memory[f], 'number', `${what} memory.${f}: ${j}`);
  assert.ok(x.memory.workingSetBytes <= x.memory.usageBytes, `${what}: ${j}`);
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-kubelet-syscontainers-'));
  ctd = await startContainerd();
  c = await startCluster({ args: ['--storage-backend=memory'] });
  writeJoiningKubeletConfig(c, dir);
  kubeletPort = await freePort();
  // (--oom-score-adj=0: the default -999 needs CAP_SYS_RESOURCE, and without it the kubelet does not look for its cgroup)
  firstStart.before = Date.now();
  await restartKubelet(['--oom-score-adj=0']);
  firstStart.after = Date.now();
});

after(async () => {
  if (c && kubelet) c.kubectl(['delete', 'pods', '--all', '--wait=true', '--timeout=60s']);
  await stopKubelet();
  for (const p of helpers) p.kill('SIGKILL');
  await ctd?.stop();
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the default configuration: "pods" is the kubepods cgroup; "kubelet" only when its cgroup is found; no "runtime" or "misc"', async () => {
  const pid = kubelet!.proc.pid!;
  const s = await summary();
  const names = s.node.systemContainers.map((x: any) => x.name).sort();
  const pods = s.node.systemContainers.find((x: any) => x.name === 'pods');
  assert.ok(pods, JSON.stringify(s.node.systemContainers));
  assertCgroupFigures('pods', pods);
  // no file systems for a system container; kubepods is limited to the node's allocatable memory
  assert.equal(pods.rootfs, undefined);
  assert.equal(pods.logs, undefined);
  const limit = Number(V2 ? cgRead('memory', 'kubepods', 'memory.max') : cgRead('memory', 'kubepods', 'memory.limit_in_bytes'));
  assert.equal(pods.memory.availableBytes + pods.memory.workingSetBytes, limit, JSON.stringify(pods.memory));
  assert.equal(typeof pods.swap?.swapUsageBytes, 'number', JSON.stringify(pods));
  // its start: the cgroup's making (cAdvisor: its directories' times), by the kubelet's first start
  const podsStart = Date.parse(pods.startTime);
  assert.ok(podsStart >= firstStart.before - 1000 && podsStart <= firstStart.after + 1000, `${pods.startTime}: the kubelet started between ${new Date(firstStart.before).toISOString()} and ${new Date(firstStart.after).toISOString()}`);
  // "kubelet": first its PID namespace must be readable (the host's or not: ensureProcessInContainerWithOOMScore),
  // then its cgroup (getContainer) is its v2 cgroup, or its v1 cpu cgroup when that is its memory cgroup too
  const m = membership(pid);
  let initNS = true;
  try {
    readlinkSync('/proc/1/ns/pid');
  } catch {
    initNS = false;
  }
  const unified = V2 || m.get('cpu') === m.get('memory');
  const logged = (...texts: string[]) =>
    until(`the kubelet's log: ${texts.join(', ')}`, () => texts.every((t) => kubelet!.logs.includes(t))).catch((e) => {
      throw new Error(`${(e as Error).message}; the kubelet's log ends:\n${kubelet?.tail(3000)}`);
    });
  if (!initNS) {
    assert.deepEqual(names, ['pods']);
    await logged('"Failed to ensure process in container with oom score"', 'failed to find pid namespace of init process');
  } else if (!unified) {
    assert.deepEqual(names, ['pods']);
    await logged('"Failed to find cgroups of kubelet"', `cpu and memory cgroup hierarchy not unified.  cpu: ${m.get('cpu')}, memory: ${m.get('memory')}`);
  } else {
    assert.deepEqual(names, ['kubelet', 'pods']);
  }
  // metrics-server's question has them too
  const light = await summary('?only_cpu_and_memory=true');
  assert.deepEqual(light.node.systemContainers.map((x: any) => x.name).sort(), names);
});

test('a pod\'s CPU and memory are its cgroup\'s (its sandbox included), in /stats/summary and /metrics/resource', async () => {
  const r = c.kubectl(['apply', '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'idle' }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'], resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '64Mi' } } }] } }),
  });
  assert.equal(r.code, 0, r.stderr);
  const p = await until('pod idle Running', async () => {
    const x = await c.raw('GET', '/api/v1/namespaces/default/pods/idle');
    const j = x.status === 200 ? x.json() : undefined;
    return j?.status?.containerStatuses?.[0]?.state?.running ? j : undefined;
  }, 60_000);
  const uid = p.metadata.uid;
  const rel = `kubepods/burstable/pod${uid}`;
  const mine = await until('the pod in the summary', async () => (await summary()).pods.find((x: any) => x.podRef.uid === uid && x.containers.some((k: any) => k.memory)), 30_000);
  assertCgroupFigures('pod', mine);
  // the pod cgroup's memory limit (64Mi): available is what the working set leaves of it
  assert.equal(mine.memory.availableBytes + mine.memory.workingSetBytes, 64 * 1024 * 1024, JSON.stringify(mine.memory));
  assert.equal(typeof mine.swap?.swapUsageBytes, 'number', JSON.stringify(mine));
  // the cgroup's working set now (memory use less inactive file pages), near the summary's
  if (!V2) {
    const usage = Number(cgRead('memory', rel, 'memory.usage_in_bytes'));
    const inactive = Number(/^total_inactive_file (\d+)$/m.exec(cgRead('memory', rel, 'memory.stat'))![1]);
    assert.ok(Math.abs(usage - inactive - mine.memory.workingSetBytes) < 1024 * 1024, `${usage - inactive} vs ${mine.memory.workingSetBytes}`);
    assert.ok(Number(cgRead('cpuacct', rel, 'cpuacct.usage')) >= mine.cpu.usageCoreNanoSeconds);
  }
  // more than its one container: the sandbox's pause process is in the pod's cgroup too
  const main = mine.containers.find((k: any) => k.name === 'main');
  assert.ok(mine.memory.workingSetBytes > main.memory.workingSetBytes, `pod ${mine.memory.workingSetBytes}, container ${main.memory.workingSetBytes}`);
  const text = await get('/metrics/resource');
  const podWS = Number(/^pod_memory_working_set_bytes\{namespace="default",pod="idle"\} ([\d.e+]+) \d+$/m.exec(text)?.[1]);
  const ctrWS = Number(/^container_memory_working_set_bytes\{container="main",namespace="default",pod="idle"\} ([\d.e+]+) \d+$/m.exec(text)?.[1]);
  assert.ok(podWS > ctrWS && ctrWS > 0, `${podWS} vs ${ctrWS}:\n${text}`);
  assert.match(text, /^pod_cpu_usage_seconds_total\{namespace="default",pod="idle"\} [\d.e+-]+ \d+$/m);
  const del = c.kubectl(['delete', 'pod', 'idle', '--wait=true', '--timeout=60s']);
  assert.equal(del.code, 0, del.stderr);
});

test('--kubelet-cgroups, --runtime-cgroups and --system-cgroups: "kubelet", "runtime" and "misc"; the root\'s processes moved into the system cgroup', async () => {
  const root = ctd.cgroupRoot;
  // the runtime's cgroup is only read; the "root" whose processes --system-cgroups moves is the test's host/
  const runtimeBefore = Date.now();
  const runtimePid = sleeperIn('runtime');
  const runtimeAfter = Date.now();
  const hostPid = sleeperIn('host');
  process.env['KEELSON_SYSTEM_CGROUPS_SOURCE'] = `${root}/host`;
  const startedAt = Date.now();
  let k: KubeletProcess;
  try {
    k = await restartKubelet([`--kubelet-cgroups=${root}/kubelet`, `--runtime-cgroups=${root}/runtime`, `--system-cgroups=${root}/system`, '--oom-score-adj=0']);
  } finally {
    delete process.env['KEELSON_SYSTEM_CGROUPS_SOURCE'];
  }
  // the host's process: in the system cgroup in every hierarchy but devices (the kubelet's SkipDevices)
  const m = membership(hostPid);
  for (const ctl of V2 ? [''] : ['cpu', 'cpuacct', 'memory', 'pids']) assert.equal(m.get(ctl), `${root}/system`, `${ctl}: ${JSON.stringify([...m])}`);
  if (!V2) assert.equal(m.get('devices'), `${root}/host`);
  // the runtime's was not moved
  assert.equal(membership(runtimePid).get(V2 ? '' : 'memory'), `${root}/runtime`);
  const s = await summary();
  const by = new Map<string, any>(s.node.systemContainers.map((x: any) => [x.name, x]));
  assert.deepEqual([...by.keys()].sort(), ['kubelet', 'misc', 'pods', 'runtime']);
  for (const [name, x] of by) assertCgroupFigures(name, x);
  // the kubelet's start is its own (the summary provider's making), the others' their cgroups'
  const kubeletStart = Date.parse(by.get('kubelet').startTime);
  assert.ok(kubeletStart >= startedAt - 1000 && kubeletStart <= Date.now(), `${by.get('kubelet').startTime}`);
  // (the cgroup's making: between the test's two readings of the clock around it, a second either side for timestamps' granularity)
  const runtimeStart = Date.parse(by.get('runtime').startTime);
  assert.ok(runtimeStart >= runtimeBefore - 1000 && runtimeStart <= runtimeAfter + 1000, `${by.get('runtime').startTime}: made between ${new Date(runtimeBefore).toISOString()} and ${new Date(runtimeAfter).toISOString()}`);
  // the kubelet's CPU is counted in its cgroup from its move on
  const later = await until('the kubelet\'s CPU time counted', async () => {
    const x = (await summary()).node.systemContainers.find((y: any) => y.name === 'kubelet');
    return x?.cpu.usageCoreNanoSeconds > 0 ? x : undefined;
  });
  assert.ok(later.cpu.usageCoreNanoSeconds > 0);
  // a runtime cgroup that is not there: left out, and logged as the kubelet logs it
  const absent = `${root}/absent`;
  k = await restartKubelet([`--runtime-cgroups=${absent}`, '--oom-score-adj=0']);
  const again = await summary();
  assert.ok(!again.node.systemContainers.some((x: any) => x.name === 'runtime' || x.name === 'misc'), JSON.stringify(again.node.systemContainers));
  const q = JSON.stringify(absent);
  await until('the missing cgroup logged', () => k.logs.includes('"Failed to get system container stats"') && k.logs.includes(`unknown container ${q.replace(/"/g, '\\"')}`)).catch((e) => {
    throw new Error(`${(e as Error).message}; the kubelet's log ends:\n${k.tail(3000)}`);
  });
  firstStart.before = Date.now();
  await restartKubelet(['--oom-score-adj=0']);
  firstStart.after = Date.now();
});

test('--system-cgroups=/ and --system-cgroups without --cgroup-root are refused in the kubelet\'s words', async () => {
  const port = await freePort();
  const args = joiningKubeletArgs({ cluster: c, dir, endpoint: ctd.endpoint, node: NODE, port });
  const root = spawnSync(process.execPath, [...args, '--system-cgroups=/'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  assert.notEqual(root.status, 0);
  assert.ok(root.stderr.includes('Failed to start ContainerManager: system container cannot be root ("/")'), root.stderr.slice(-3000));
  const noRoot = spawnSync(process.execPath, [...args, '--system-cgroups=/system', '--cgroup-root=', '--cgroups-per-qos=false', '--enforce-node-allocatable='], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  assert.notEqual(noRoot.status, 0);
  assert.ok(noRoot.stderr.includes('systemCgroups (--system-cgroups) was specified and cgroupRoot (--cgroup-root) was not specified'), noRoot.stderr.slice(-3000));
});

test('without cgroupsPerQOS, --kubelet-cgroups and --system-cgroups are acted on all the same (setupNode\'s system containers do not need the pods\' cgroups)', async () => {
  const root = ctd.cgroupRoot;
  const hostPid = sleeperIn('host-noqos');
  process.env['KEELSON_SYSTEM_CGROUPS_SOURCE'] = `${root}/host-noqos`;
  let k: KubeletProcess;
  try {
    k = await restartKubelet(['--cgroups-per-qos=false', '--enforce-node-allocatable=', `--kubelet-cgroups=${root}/kubelet-noqos`, `--system-cgroups=${root}/system-noqos`, '--oom-score-adj=0']);
  } finally {
    delete process.env['KEELSON_SYSTEM_CGROUPS_SOURCE'];
  }
  const mine = membership(k.proc.pid!);
  const moved = membership(hostPid);
  for (const ctl of V2 ? [''] : ['cpu', 'cpuacct', 'memory', 'pids']) {
    assert.equal(mine.get(ctl), `${root}/kubelet-noqos`, `the kubelet, ${ctl}: ${JSON.stringify([...mine])}`);
    assert.equal(moved.get(ctl), `${root}/system-noqos`, `the root's process, ${ctl}: ${JSON.stringify([...moved])}`);
  }
  // the Summary reads those system containers from their cgroups
  const s = await summary();
  const by = new Map<string, any>(s.node.systemContainers.map((x: any) => [x.name, x]));
  assert.ok(by.has('kubelet') && by.has('misc'), JSON.stringify(s.node.systemContainers));
  for (const name of ['kubelet', 'misc']) assertCgroupFigures(name, by.get(name));
});
