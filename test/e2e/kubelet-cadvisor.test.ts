// The kubelet's /metrics/cadvisor and the Summary's start times end to end: a real `keelson
// server`, a private containerd (runc, the cgroupfs driver) and `keelson kubelet` on this machine's
// cgroups, under the containerd harness's own cgroup root. As the kubelet's cAdvisor gives them:
// a series per cgroup under the pods' root (the QoS cgroups, each pod's cgroup labelled with its
// pod, its containers and its sandbox's pause container labelled with the runtime's ID and image),
// and the root "/", each with id its cgroup; the Summary's node startTime the machine's boot
// (/proc/stat's btime), a pod's its sandbox's creation, every time to the second. Tested on cgroup v1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster, freePort, until, type Cluster } from './harness.js';
import { joiningKubeletArgs, writeJoiningKubeletConfig, KubeletProcess, kubeletGet } from './kubeletharness.js';
import { startContainerd, type Containerd } from '../nodeagent/containerd.js';
import { CRIClient } from '../../src/nodeagent/cri.js';

let c: Cluster;
let ctd: Containerd;
let cri: CRIClient;
let kubelet: KubeletProcess;
let dir: string;
let kubeletPort: number;
const NODE = 'keelson-cadvisor-node';

const get = (path: string): Promise<string> => kubeletGet(c, kubeletPort, path);

/** a regular expression's text for a literal */
const re = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** metav1.Time's JSON form: RFC 3339 to the second */
const rfc3339 = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-kubelet-cadvisor-'));
  ctd = await startContainerd();
  cri = await CRIClient.connect({ endpoint: ctd.endpoint, timeoutMs: 30_000 });
  c = await startCluster({ args: ['--storage-backend=memory'] });
  writeJoiningKubeletConfig(c, dir);
  kubeletPort = await freePort();
  kubelet = new KubeletProcess([...joiningKubeletArgs({ cluster: c, dir, endpoint: ctd.endpoint, node: NODE, port: kubeletPort }), '-v', '2']);
  await kubelet.ready(c, NODE, 90_000);
  // a Burstable pod with a CPU limit (a CFS quota on its cgroups) and a memory limit
  const r = c.kubectl(['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'cad', namespace: 'default' },
      spec: {
        nodeName: NODE,
        terminationGracePeriodSeconds: 0,
        containers: [{ name: 'main', image: 'docker.io/library/busybox:local', imagePullPolicy: 'Never', command: ['sh', '-c', 'while true; do i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; sleep 1; done'], resources: { requests: { cpu: '10m' }, limits: { cpu: '100m', memory: '64Mi' } } }],
      },
    }),
  });
  assert.equal(r.code, 0, r.stderr);
});

after(async () => {
  cri?.close();
  await kubelet?.stop();
  await ctd?.stop();
  await c?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('/metrics/cadvisor: a series for each cgroup under the pods\' root and for the root, id the cgroup; the containers\' name the runtime\'s ID, with image and pod labels', async () => {
  const pod = await until('the pod running', () => {
    const p = JSON.parse(c.kubectl(['get', 'pod', 'cad', '-o', 'json']).stdout || '{}');
    return p.status?.phase === 'Running' ? p : undefined;
  }, 60_000).catch((e) => {
    throw new Error(`${(e as Error).message}; the kubelet's log ends:\n${kubelet.tail(3000)}`);
  });
  const uid = pod.metadata.uid as string;
  const cid = String(pod.status.containerStatuses[0].containerID).split('://')[1]!;
  const sandbox = (await cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': uid } })).find((x) => x.state === 'SANDBOX_READY')!;
  assert.ok(sandbox?.id, 'the pod\'s sandbox');
  const root = ctd.cgroupRoot;
  const kubepods = `${root}/kubepods`;
  const podCg = `${kubepods}/burstable/pod${uid}`;
  // (the container uses CPU: a usage series once cAdvisor's figure is above 0)
  const text = await until('the container\'s CPU series', async () => {
    const t = await get('/metrics/cadvisor');
    return t.includes(`id="${podCg}/${cid}"`) && /container_cpu_usage_seconds_total\{container="main"/.test(t) ? t : undefined;
  }, 30_000);
  const empty = (id: string) => `\\{container="",id="${re(id)}",image="",name="",namespace="",pod=""\\}`;
  // the root and the system cgroups under the pods' root: no pod, no container, no image
  for (const id of ['/', kubepods, `${kubepods}/besteffort`, `${kubepods}/burstable`]) {
    assert.match(text, new RegExp(`^container_memory_working_set_bytes${empty(id)} [\\d.e+]+ \\d{13}$`, 'm'), id);
    assert.match(text, new RegExp(`^container_start_time_seconds${empty(id)} [\\d.e+]+$`, 'm'), id);
  }
  assert.match(text, new RegExp(`^container_cpu_usage_seconds_total\\{container="",cpu="total",id="/",image="",name="",namespace="",pod=""\\} [\\d.e+]+ \\d{13}$`, 'm'));
  // (the harness's cgroup root itself is not under a cgroup the kubelet's cAdvisor watches)
  assert.doesNotMatch(text, new RegExp(`id="${re(root)}"`));
  // the pod's cgroup, labelled with its pod
  assert.match(text, new RegExp(`^container_memory_usage_bytes\\{container="",id="${re(podCg)}",image="",name="",namespace="default",pod="cad"\\} [\\d.e+]+ \\d{13}$`, 'm'));
  // its container: id its cgroup, name the runtime's ID, the image's name
  const mine = `container="main",cpu="total",id="${re(`${podCg}/${cid}`)}",image="docker\\.io/library/busybox:local",name="${cid}",namespace="default",pod="cad"`;
  assert.match(text, new RegExp(`^container_cpu_usage_seconds_total\\{${mine}\\} [\\d.e+-]+ \\d{13}$`, 'm'));
  const labels = mine.replace(',cpu="total"', '');
  assert.match(text, new RegExp(`^container_memory_working_set_bytes\\{${labels}\\} [\\d.e+]+ \\d{13}$`, 'm'));
  // its spec: the memory limit, the CFS quota (100m of a 100ms period) and throttling counted
  assert.match(text, new RegExp(`^container_spec_memory_limit_bytes\\{${labels}\\} 6\\.7108864e\\+07$`, 'm'));
  assert.match(text, new RegExp(`^container_spec_cpu_quota\\{${labels}\\} 10000$`, 'm'));
  assert.match(text, new RegExp(`^container_cpu_cfs_periods_total\\{${labels}\\} [\\d.e+]+ \\d{13}$`, 'm'));
  // started when the runtime made it, in whole seconds
  const created = Math.floor(Number((await cri.containerStatus(cid)).status?.createdAt ?? 0) / 1e9);
  const start = new RegExp(`^container_start_time_seconds\\{${labels}\\} (\\S+)$`, 'm').exec(text);
  assert.equal(Number(start?.[1]), created, start?.[0]);
  // the sandbox's pause container: its ID and the pause image, no container name
  assert.match(text, new RegExp(`^container_memory_working_set_bytes\\{container="",id="${re(`${podCg}/${sandbox.id}`)}",image="registry\\.k8s\\.io/pause:local",name="${sandbox.id}",namespace="default",pod="cad"\\} [\\d.e+]+ \\d{13}$`, 'm'));
  // the machine's series with the machine's labels
  const bootID = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  assert.match(text, new RegExp(`^machine_cpu_cores\\{boot_id="${bootID}",machine_id="[^"]*",system_uuid="[^"]*"\\} [1-9]\\d* \\d{13}$`, 'm'));
  // families in name order (client_golang's registry sorts them)
  const names = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!);
  assert.deepEqual(names, [...names].sort());
  assert.match(text, /^container_scrape_error 0$/m);
});

test('/stats/summary: the node\'s startTime the machine\'s boot (the root cgroup\'s with only_cpu_and_memory), a pod\'s its sandbox\'s creation, every time to the second', async () => {
  const uid = JSON.parse(c.kubectl(['get', 'pod', 'cad', '-o', 'json']).stdout).metadata.uid;
  const sandbox = (await cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': uid } })).find((x) => x.state === 'SANDBOX_READY')!;
  const text = await get('/stats/summary');
  const s = JSON.parse(text);
  const btime = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))![1]);
  assert.equal(s.node.startTime, rfc3339(btime * 1000));
  const mine = s.pods.find((p: any) => p.podRef.uid === uid);
  assert.equal(mine.startTime, rfc3339(Number(sandbox.createdAt) / 1e6));
  // every time a metav1.Time: no fraction of a second
  const times = [...text.matchAll(/"(time|startTime)": "([^"]*)"/g)].map((m) => m[2]!);
  assert.ok(times.length > 10, text.slice(0, 2000));
  for (const t of times) assert.match(t, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  // metrics-server's question: the node's start the root cgroup's making (GetCPUAndMemoryStats), not before the boot
  const light = JSON.parse(await get('/stats/summary?only_cpu_and_memory=true'));
  assert.match(light.node.startTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.ok(Date.parse(light.node.startTime) >= btime * 1000 && Date.parse(light.node.startTime) <= Date.now(), light.node.startTime);
  assert.equal(light.pods.find((p: any) => p.podRef.uid === uid).startTime, mine.startTime);
  c.kubectl(['delete', 'pod', 'cad', '--wait=false']);
});
