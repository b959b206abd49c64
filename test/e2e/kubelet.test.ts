// The node agent end to end: a real `keelson server`, a private containerd (CRI v1, runc, a CNI
// bridge), and `keelson kubelet` joining with --bootstrap-kubeconfig (its client certificate
// requested, approved by the approving controller and signed by the cluster CA), then driven by
// real kubectl: the node registers and is Ready, pods run with their IPs, logs, environment,
// volumes, probes, restarts with back-off, run to completion or failure, and graceful deletion.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import YAML from 'yaml';
import { tmpdir, hostname } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { startCluster, freePort, until, KEELSON, ROOT, type Cluster, stopProcess } from './harness.js';
import { joiningKubeletArgs, writeJoiningKubeletConfig } from './kubeletharness.js';
import { startContainerd, type Containerd } from '../nodeagent/containerd.js';

let c: Cluster;
let ctd: Containerd;
let kubelet: ChildProcess | undefined;
let kubeletLogs = '';
let dir: string;
let healthzPort: number;
let kubeletPort: number;
const NODE = 'keelson-node-1';
const BUSYBOX = 'docker.io/library/busybox:local';

function startKubelet(extra: string[] = []): ChildProcess {
  const args = [
    ...joiningKubeletArgs({ cluster: c, dir, endpoint: ctd.endpoint, node: NODE, port: kubeletPort, healthzPort }),
    '--sync-frequency', '10s',
    '--node-labels', 'keelson.dev/test=yes',
    '--pod-manifest-path', join(dir, 'manifests'),
    '--file-check-frequency', '1s',
    '--rotate-server-certificates',
    '--container-log-max-size', '64Ki',
    '--pods-per-core', '50',
    '--allowed-unsafe-sysctls', 'net.core.somaxconn',
    '--container-log-max-files', '3',
    '-v', '2',
    ...extra,
  ];
  const p = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  p.stdout!.on('data', (d) => (kubeletLogs += d));
  p.stderr!.on('data', (d) => (kubeletLogs += d));
  return p;
}

async function stopKubelet(): Promise<void> {
  const p = kubelet;
  kubelet = undefined;
  await stopProcess(p);
}

function pod(name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, ...extra }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 2, ...spec } });
}

function container(name: string, script: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, image: BUSYBOX, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script], ...extra };
}

function apply(json: string): void {
  const r = c.kubectl(['apply', '-f', '-'], { input: json });
  assert.equal(r.code, 0, r.stderr);
}

async function podJSON(name: string): Promise<any> {
  const r = await c.raw('GET', `/api/v1/namespaces/default/pods/${name}`);
  return r.status === 200 ? r.json() : undefined;
}

async function waitPhase(name: string, phase: string, timeoutMs = 60_000): Promise<any> {
  return until(`pod ${name} ${phase}`, async () => {
    const p = await podJSON(name);
    return p?.status?.phase === phase ? p : undefined;
  }, timeoutMs);
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-kubelet-'));
  ctd = await startContainerd();
  c = await startCluster({ args: ['--storage-backend=memory'] });
  // (the pods' logs under the test's directory, not /var/log/pods: podLogsDir is a config-file field only)
  writeJoiningKubeletConfig(c, dir, ['containerLogMonitorInterval: 3s', 'volumeStatsAggPeriod: 1s']);
  mkdirSync(join(dir, 'manifests'));
  writeFileSync(join(dir, 'manifests', 'static-web.yaml'), YAML.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'static-web', labels: { tier: 'static' } }, spec: { terminationGracePeriodSeconds: 1, containers: [container('main', 'echo static; sleep 3600')] } }));
  writeFileSync(join(dir, 'manifests', '.hidden.yaml'), 'not: a pod');
  kubeletPort = await freePort();
  healthzPort = await freePort();
  kubelet = startKubelet();
});

after(async () => {
  // pods first (the kubelet stops their containers), then the kubelet, the runtime and the server
  if (c && kubelet) c.kubectl(['delete', 'pods', '--all', '--wait=true', '--timeout=60s']);
  await stopKubelet();
  await ctd?.stop();
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the kubelet bootstraps its client certificate and registers a Ready node with its lease', async () => {
  await until('node Ready', async () => {
    const r = c.kubectl(['get', 'node', NODE, '--no-headers']);
    return r.code === 0 && /\sReady\s/.test(r.stdout) ? r.stdout : undefined;
  }, 60_000).catch((e) => {
    throw new Error(`${e.message}\n${kubeletLogs.slice(-4000)}`);
  });
  assert.ok(existsSync(join(dir, 'pki', 'kubelet-client-current.pem')), 'the issued certificate is kept in --cert-dir');
  const csrs = c.kubectl(['get', 'csr', '-o', 'jsonpath={range .items[*]}{.spec.signerName} {.status.conditions[0].type}{"\\n"}{end}']);
  assert.match(csrs.stdout, /kubernetes\.io\/kube-apiserver-client-kubelet Approved/);
  const node = (await c.raw('GET', `/api/v1/nodes/${NODE}`)).json();
  assert.equal(node.metadata.labels['kubernetes.io/hostname'], NODE);
  assert.equal(node.metadata.labels['kubernetes.io/os'], 'linux');
  assert.equal(node.metadata.labels['keelson.dev/test'], 'yes');
  assert.ok(Number(node.status.capacity.cpu) >= 1);
  assert.match(node.status.capacity.memory, /^\d+Ki$/);
  // (--pods-per-core 50: at most 50 a core, below --max-pods' 110)
  assert.equal(node.status.capacity.pods, String(Math.min(110, 50 * Number(node.status.capacity.cpu))));
  assert.deepEqual(node.status.addresses.find((a: any) => a.type === 'InternalIP'), { type: 'InternalIP', address: '127.0.0.1' });
  assert.equal(node.status.daemonEndpoints.kubeletEndpoint.Port, kubeletPort);
  assert.match(node.status.nodeInfo.containerRuntimeVersion, /^containerd:\/\//);
  assert.match(node.status.nodeInfo.kubeletVersion, /^v1\.\d+/);
  assert.ok(node.status.images.some((i: any) => i.names.includes(BUSYBOX)), 'the runtime\'s images are listed');
  const ready = node.status.conditions.find((x: any) => x.type === 'Ready');
  assert.equal(ready.reason, 'KubeletReady');
  const lease = (await c.raw('GET', `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${NODE}`)).json();
  assert.equal(lease.spec.holderIdentity, NODE);
  assert.equal(lease.metadata.ownerReferences[0].uid, node.metadata.uid);
  // the node's identity is its own: the kubelet's writes are made as system:node:<name>
  const pem = readFileSync(join(dir, 'pki', 'kubelet-client-current.pem'), 'utf8');
  assert.match(pem, /BEGIN CERTIFICATE/);
  // the health port
  const h = await new Promise<string>((resolve, reject) => http.get(`http://127.0.0.1:${healthzPort}/healthz`, (res) => {
    let b = '';
    res.on('data', (d) => (b += d));
    res.on('end', () => resolve(`${res.statusCode} ${b}`));
  }).on('error', reject));
  assert.equal(h, '200 ok');
  void hostname;
});

test('--rotate-server-certificates: the kubelet asks for a serving certificate and, once it is approved, serves with it', async () => {
  const csr = await until('a kubelet-serving CSR', async () => {
    const l = (await c.raw('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests')).json();
    return l.items.find((x: any) => x.spec.signerName === 'kubernetes.io/kubelet-serving');
  }, 60_000);
  assert.equal(csr.spec.username, `system:node:${NODE}`);
  assert.deepEqual([...csr.spec.usages].sort(), ['digital signature', 'server auth']);
  assert.equal(csr.status?.certificate, undefined, 'nobody approves serving certificates by default');
  const req = c.kubectl(['get', 'csr', csr.metadata.name, '-o', 'jsonpath={.spec.request}']);
  const pem = Buffer.from(req.stdout, 'base64').toString('utf8');
  const text = spawnSync('openssl', ['req', '-noout', '-text'], { input: pem, encoding: 'utf8' }).stdout;
  assert.match(text, /Subject: O ?= ?system:nodes, CN ?= ?system:node:keelson-node-1/);
  assert.match(text, /DNS:keelson-node-1/);
  assert.match(text, /IP Address:127\.0\.0\.1/);
  const ok = c.kubectl(['certificate', 'approve', csr.metadata.name]);
  assert.equal(ok.code, 0, ok.stderr);
  const ca = new X509Certificate(readFileSync(join(c.dataDir, 'pki', 'ca.crt')));
  const served = await until('the issued certificate served', async () => {
    const raw = await new Promise<Buffer | undefined>((resolve) => {
      const s = tls.connect({ host: '127.0.0.1', port: kubeletPort, rejectUnauthorized: false }, () => {
        const pc = s.getPeerCertificate();
        s.destroy();
        resolve(pc?.raw);
      });
      s.on('error', () => resolve(undefined));
    });
    if (!raw) return undefined;
    const cert = new X509Certificate(raw);
    return cert.verify(ca.publicKey) ? cert : undefined;
  }, 30_000);
  assert.equal(served.subject.split('\n').find((l) => l.startsWith('CN=')), `CN=system:node:${NODE}`);
  assert.match(served.subjectAltName ?? '', /DNS:keelson-node-1/);
  assert.match(served.subjectAltName ?? '', /IP Address:127\.0\.0\.1/);
  assert.ok(existsSync(join(dir, 'pki', 'kubelet-server-current.pem')), 'kept in --cert-dir');
});

test('a pod runs: Running with an IP on the bridge, Ready, its logs through kubectl logs, its environment and volumes', async () => {
  c.kubectl(['create', 'configmap', 'cfg', '--from-literal=greeting=hello-from-configmap']);
  apply(pod('web', {
    containers: [container('main', 'echo "ns=$MY_NS greeting=$GREETING"; cat /etc/cfg/greeting; echo; nc -ll -p 8080 -e echo pong & sleep 3600', {
      env: [
        { name: 'MY_NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'greeting' } } },
      ],
      volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg' }],
      ports: [{ containerPort: 8080, name: 'pong' }],
      readinessProbe: { tcpSocket: { port: 'pong' }, periodSeconds: 1 },
    })],
    volumes: [{ name: 'cfg', configMap: { name: 'cfg' } }],
  }));
  const p = await waitPhase('web', 'Running').catch((e) => {
    throw new Error(`${e.message}\n${kubeletLogs.slice(-4000)}`);
  });
  const subnetPrefix = ctd.subnet.split('.').slice(0, 2).join('.') + '.';
  assert.ok(p.status.podIP.startsWith(subnetPrefix), `${p.status.podIP} in ${ctd.subnet}`);
  assert.equal(p.status.hostIP, '127.0.0.1');
  assert.match(p.status.containerStatuses[0].containerID, /^containerd:\/\//);
  await until('Ready', async () => ((await podJSON('web'))?.status?.conditions ?? []).some((x: any) => x.type === 'Ready' && x.status === 'True'));
  const wide = c.kubectl(['get', 'pod', 'web', '-o', 'wide', '--no-headers']);
  assert.match(wide.stdout, new RegExp(`^web\\s+1/1\\s+Running\\s+0\\s+\\S+\\s+${p.status.podIP.replace(/\./g, '\\.')}\\s+${NODE}\\s`));
  // the container answers on its IP
  const answer = await new Promise<string>((resolve, reject) => {
    const s = net.connect({ host: p.status.podIP, port: 8080 });
    let b = '';
    s.on('data', (d) => (b += d));
    s.on('end', () => resolve(b));
    s.on('error', reject);
  });
  assert.equal(answer.trim(), 'pong');
  const logs = await until('logs', () => {
    const r = c.kubectl(['logs', 'web']);
    return r.code === 0 && r.stdout.includes('hello-from-configmap') ? r.stdout : undefined;
  });
  assert.match(logs, /^ns=default greeting=hello-from-configmap\nhello-from-configmap\n/);
  const events = c.kubectl(['get', 'events', '--field-selector', 'involvedObject.name=web', '-o', 'jsonpath={range .items[*]}{.reason}{" "}{.source.component}{"\\n"}{end}']);
  for (const reason of ['Pulled', 'Created', 'Started']) assert.match(events.stdout, new RegExp(`${reason} kubelet`));
});

test('a restarted kubelet keeps the pods it runs: it waits for its pod sources before it removes what it does not know', async () => {
  const web = await waitPhase('web', 'Running');
  const staticWeb = await waitPhase(`static-web-${NODE}`, 'Running');
  const ids = [web, staticWeb].map((p) => String(p.status.containerStatuses[0].containerID).replace('containerd://', ''));
  const running = () => {
    const tasks = new Map(ctd.ctr('tasks', 'ls').split('\n').slice(1).map((l) => l.trim().split(/\s+/)).filter((f) => f.length >= 3).map((f) => [f[0]!, f[2]!]));
    return ids.map((id) => tasks.get(id) ?? 'NONE');
  };
  assert.deepEqual(running(), ['RUNNING', 'RUNNING']);
  await stopKubelet();
  kubelet = startKubelet();
  await until('the kubelet healthy again', async () => (await fetch(`http://127.0.0.1:${healthzPort}/healthz`).catch(() => undefined))?.status === 200, 60_000);
  // (the new kubelet's first relists and syncs have run: a pod taken for an orphan would be stopping)
  await new Promise((r) => setTimeout(r, 5000));
  assert.deepEqual(running(), ['RUNNING', 'RUNNING'], 'the same containers run');
  const after = await podJSON('web');
  assert.equal(after.status.containerStatuses[0].restartCount, 0);
});

test('container logs are rotated past --container-log-max-size, keeping --container-log-max-files, older ones gzipped; kubectl logs goes on', async () => {
  // ~100 KB a second
  apply(pod('chatty', { restartPolicy: 'Never', containers: [container('talk', 'i=0; while true; do i=$((i+1)); head -c 10000 /dev/zero | tr "\\0" x; echo " line $i"; sleep 0.1; done')] }));
  const p = await waitPhase('chatty', 'Running');
  const logDir = join(dir, 'logs', `default_chatty_${p.metadata.uid}`, 'talk');
  // A look at the directory can fall between the rename of 0.log and the runtime's reopening of
  // it (as with Kubernetes' kubelet), or inside a compression: the files are read until the current
  // one, a gzipped one and a newer plain one (the newest rotated file stays plain) are seen together,
  // and that view is checked.
  const files = await until('rotated logs, the older ones gzipped', async () => {
    const names = existsSync(logDir) ? readdirSync(logDir).sort() : [];
    const gz = names.filter((n) => /^0\.log\.\d{8}-\d{6}\.gz$/.test(n)).map((n) => n.slice(0, -3));
    const plain = names.filter((n) => /^0\.log\.\d{8}-\d{6}$/.test(n));
    return names.includes('0.log') && gz.length > 0 && plain.some((p) => gz.every((g) => g < p)) ? names : undefined;
  }, 60_000).catch((e) => {
    const names = existsSync(logDir) ? readdirSync(logDir).join(' ') : `(no ${logDir})`;
    throw new Error(`${e.message}; files: ${names}; kubelet: ${kubeletLogs.split('\n').filter((l) => /rotat|log/i.test(l)).slice(-10).join('\n')}`);
  });
  assert.ok(files.includes('0.log'), files.join(' '));
  assert.ok(files.filter((n) => n.startsWith('0.log')).length <= 3, `at most 3 files: ${files.join(' ')}`);
  const l = c.kubectl(['logs', 'chatty', '--tail=1']);
  assert.equal(l.code, 0, l.stderr);
  assert.match(l.stdout, /^x+ line \d+\n$/);
  c.kubectl(['delete', 'pod', 'chatty', '--wait=false']);
});

test('sysctls: a pod asking for one not allowlisted fails with SysctlForbidden; safe ones and --allowed-unsafe-sysctls run', async () => {
  const withSysctls = (name: string, sysctls: Record<string, string>) =>
    pod(name, { restartPolicy: 'Never', securityContext: { sysctls: Object.entries(sysctls).map(([n, value]) => ({ name: n, value })) }, containers: [container('main', 'cat /proc/sys/net/core/somaxconn; sleep 3600')] });
  apply(withSysctls('sysctl-bad', { 'kernel.msgmax': '65536' }));
  const bad = await waitPhase('sysctl-bad', 'Failed');
  assert.equal(bad.status.reason, 'SysctlForbidden');
  assert.equal(bad.status.message, 'Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted');
  apply(withSysctls('sysctl-ok', { 'net.ipv4.tcp_syncookies': '1', 'net.core.somaxconn': '1234' }));
  await waitPhase('sysctl-ok', 'Running');
  const out = await until('the sysctl in the pod', async () => {
    const l = c.kubectl(['logs', 'sysctl-ok']);
    return l.code === 0 && l.stdout.trim() ? l.stdout.trim() : undefined;
  }, 30_000);
  assert.equal(out, '1234', 'set in the pod\'s network namespace by the runtime');
  c.kubectl(['delete', 'pod', 'sysctl-bad', 'sysctl-ok', '--wait=false']);
});

test('restartPolicy: a failing container restarts with back-off; Never gives Succeeded or Failed with the exit code', async () => {
  apply(pod('crash', { containers: [container('main', 'echo crashing; exit 1')] }));
  apply(pod('done', { restartPolicy: 'Never', containers: [container('main', 'echo finished')] }));
  apply(pod('fail', { restartPolicy: 'Never', containers: [container('main', 'echo failing; exit 3')] }));
  const done = await waitPhase('done', 'Succeeded');
  assert.equal(done.status.containerStatuses[0].state.terminated.reason, 'Completed');
  assert.equal(done.status.containerStatuses[0].state.terminated.exitCode, 0);
  const failed = await waitPhase('fail', 'Failed');
  assert.equal(failed.status.containerStatuses[0].state.terminated.exitCode, 3);
  assert.equal(failed.status.containerStatuses[0].state.terminated.reason, 'Error');
  const crash = await until('CrashLoopBackOff', async () => {
    const p = await podJSON('crash');
    const s = p?.status?.containerStatuses?.[0];
    return s?.restartCount >= 1 && s?.state?.waiting?.reason === 'CrashLoopBackOff' ? p : undefined;
  }, 60_000);
  const s = crash.status.containerStatuses[0];
  assert.match(s.state.waiting.message, /^back-off \d+s restarting failed container=main pod=crash_default\(/);
  assert.equal(s.lastState.terminated.exitCode, 1);
  assert.equal(crash.status.phase, 'Running');
  const get = c.kubectl(['get', 'pod', 'crash', '--no-headers']);
  assert.match(get.stdout, /CrashLoopBackOff/);
  const prev = c.kubectl(['logs', 'crash', '--previous']);
  assert.equal(prev.stdout, 'crashing\n', prev.stderr);
});

test('activeDeadlineSeconds: the kubelet ends a pod that outlives it (Failed, DeadlineExceeded), stopping its containers', async () => {
  apply(pod('deadline', { activeDeadlineSeconds: 3, containers: [container('main', 'trap "exit 0" TERM; while true; do sleep 1; done')] }));
  const running = await waitPhase('deadline', 'Running');
  const failed = await waitPhase('deadline', 'Failed', 30_000);
  assert.equal(failed.status.reason, 'DeadlineExceeded');
  assert.equal(failed.status.message, 'Pod was active on the node longer than the specified deadline');
  assert.ok(Date.parse(failed.status.conditions.find((x: any) => x.type === 'Ready').lastTransitionTime) - Date.parse(running.status.startTime) >= 3000, 'not before the deadline');
  const st = failed.status.containerStatuses[0];
  assert.equal(st.ready, false);
  assert.ok(st.state.terminated, JSON.stringify(st.state));
  // the container is stopped in the runtime
  const id = st.containerID.split('://')[1];
  await until('the container stopped', () => !ctd.ctr('tasks', 'ls').split('\n').some((l) => l.startsWith(id) && l.includes('RUNNING')));
  // (kubectl's STATUS column shows the container's terminated reason over the pod's, as in Kubernetes)
  const get = c.kubectl(['get', 'pod', 'deadline', '--no-headers']);
  assert.match(get.stdout, new RegExp(`^deadline\\s+0/1\\s+${st.state.terminated.reason}\\s`));
  assert.equal(c.kubectl(['get', 'pod', 'deadline', '-o', 'jsonpath={.status.reason}']).stdout, 'DeadlineExceeded');
  const ev = await until('the DeadlineExceeded event', async () => {
    const r = (await c.raw('GET', '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=deadline,reason=DeadlineExceeded')).json();
    return r.items?.[0];
  });
  assert.equal(ev.message, 'Pod was active on the node longer than the specified deadline');
  // a pod that ended stays so: the kubelet does not start it again
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal((await podJSON('deadline')).status.phase, 'Failed');
});

test('a deleted pod is stopped within its grace period and removed; its containers are gone from the runtime', async () => {
  apply(pod('bye', { containers: [container('main', 'trap "echo bye; exit 0" TERM; while true; do sleep 1; done')] }));
  const p = await waitPhase('bye', 'Running');
  const uid = p.metadata.uid;
  const t0 = Date.now();
  const del = c.kubectl(['delete', 'pod', 'bye', '--wait=true', '--timeout=60s']);
  assert.equal(del.code, 0, del.stderr);
  assert.ok(Date.now() - t0 < 30_000, 'deleted within the grace period');
  // (the runtime's containers of the pod, sandbox included, by the label the kubelet puts on them)
  await until('containers removed', () => ctd.ctr('containers', 'ls', '-q', `labels."io.kubernetes.pod.uid"==${uid}`).trim() === '');
  // (the pod's directories go after its containers)
  await until('the pod\'s logs removed', () => !existsSync(join(dir, 'logs', `default_bye_${uid}`)));
  await until('pod directory removed', () => !existsSync(join(dir, 'root', 'pods', uid)));
});

test('a static pod of --pod-manifest-path runs, with a mirror pod in the API that comes back when deleted and goes with its file', async () => {
  const name = `static-web-${NODE}`;
  const mirror = await waitPhase(name, 'Running');
  assert.ok(mirror.metadata.annotations['kubernetes.io/config.mirror'], 'a mirror pod');
  assert.equal(mirror.metadata.annotations['kubernetes.io/config.source'], 'file');
  assert.deepEqual(mirror.metadata.ownerReferences.map((o: any) => `${o.kind}/${o.name}`), [`Node/${NODE}`]);
  assert.equal(mirror.metadata.labels.tier, 'static');
  const containerID = mirror.status.containerStatuses[0].containerID;
  const logs = c.kubectl(['logs', name]);
  assert.equal(logs.stdout, 'static\n', logs.stderr);
  // the mirror deleted: made again, and the pod it stands for is not restarted
  const del = c.kubectl(['delete', 'pod', name, '--wait=false']);
  assert.equal(del.code, 0, del.stderr);
  const again = await until('the mirror pod again', async () => {
    const p = await podJSON(name);
    return p && p.metadata.uid !== mirror.metadata.uid && !p.metadata.deletionTimestamp && p.status?.containerStatuses?.[0]?.containerID ? p : undefined;
  });
  assert.equal(again.status.containerStatuses[0].containerID, containerID, 'the same container runs');
  assert.equal(again.status.containerStatuses[0].restartCount, 0);
  // the file removed: the pod is stopped and its mirror deleted
  rmSync(join(dir, 'manifests', 'static-web.yaml'));
  await until('the mirror pod gone', async () => (await podJSON(name)) === undefined);
  const uid = again.metadata.annotations['kubernetes.io/config.hash'];
  await until('its containers removed', () => ctd.ctr('containers', 'ls', '-q', `labels."io.kubernetes.pod.uid"==${uid}`).trim() === '');
});

test('local storage limits: a pod over its emptyDir sizeLimit, its ephemeral-storage limit, or a container over its own is evicted (no DisruptionTarget)', async () => {
  const write = (path: string, kb: number) => `dd if=/dev/zero of=${path} bs=1024 count=${kb} 2>/dev/null; sync; sleep 3600`;
  apply(pod('fill-scratch', { restartPolicy: 'Never', containers: [container('main', write('/scratch/f', 3072), { volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] })], volumes: [{ name: 'scratch', emptyDir: { sizeLimit: '1Mi' } }] }));
  apply(pod('fill-pod', { restartPolicy: 'Never', containers: [container('main', write('/scratch/f', 3072), { volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }], resources: { limits: { 'ephemeral-storage': '2Mi' } } })], volumes: [{ name: 'scratch', emptyDir: {} }] }));
  apply(pod('fill-container', {
    restartPolicy: 'Never',
    containers: [
      container('main', write('/tmp/f', 3072), { resources: { limits: { 'ephemeral-storage': '2Mi' } } }),
      container('idle', 'sleep 3600', { resources: { limits: { 'ephemeral-storage': '10Mi' } } }),
    ],
  }));
  apply(pod('within-limits', { restartPolicy: 'Never', containers: [container('main', write('/scratch/f', 512), { volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }], resources: { limits: { 'ephemeral-storage': '8Mi' } } })], volumes: [{ name: 'scratch', emptyDir: { sizeLimit: '4Mi' } }] }));
  const expected: Record<string, string> = {
    'fill-scratch': 'Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". ',
    'fill-pod': 'Pod ephemeral local storage usage exceeds the total limit of containers 2Mi. ',
    'fill-container': 'Container main exceeded its local ephemeral storage limit "2Mi". ',
  };
  for (const [name, message] of Object.entries(expected)) {
    const p = await waitPhase(name, 'Failed', 90_000).catch((e) => {
      throw new Error(`${e.message}\n${kubeletLogs.split('\n').filter((l) => /evict|storage/i.test(l)).slice(-10).join('\n')}`);
    });
    assert.equal(p.status.reason, 'Evicted', name);
    assert.equal(p.status.message, message, name);
    assert.ok(!(p.status.conditions ?? []).some((x: any) => x.type === 'DisruptionTarget'), `${name}: no DisruptionTarget condition`);
  }
  const events = (await c.raw('GET', '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=fill-scratch,reason=Evicted')).json().items;
  assert.equal(events[0]?.type, 'Warning');
  assert.equal(events[0]?.message, expected['fill-scratch']);
  // the pod within its limits runs on
  assert.equal((await podJSON('within-limits'))?.status?.phase, 'Running');
  c.kubectl(['delete', 'pod', 'fill-scratch', 'fill-pod', 'fill-container', 'within-limits', '--wait=false']);
});

test('/stats/summary: the node\'s file systems and process limits, each pod\'s volumes and ephemeral storage, each container\'s writable layer and logs', async () => {
  apply(pod('stats', { restartPolicy: 'Never', containers: [container('main', 'dd if=/dev/zero of=/scratch/f bs=1024 count=1024 2>/dev/null; echo written; sleep 3600', { volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] })], volumes: [{ name: 'scratch', emptyDir: {} }] }));
  const p = await waitPhase('stats', 'Running');
  const summary = async (query = '') =>
    new Promise<any>((resolve, reject) => {
      https
        .get({ host: '127.0.0.1', port: kubeletPort, path: `/stats/summary${query}`, rejectUnauthorized: false, cert: c.credentials.cert, key: c.credentials.key }, (res) => {
          let b = '';
          res.on('data', (d) => (b += d));
          res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(b)) : reject(new Error(`${res.statusCode} ${b}`))));
        })
        .on('error', reject);
    });
  const s = await until('the pod\'s volume measured', async () => {
    const s = await summary();
    const mine = s.pods.find((x: any) => x.podRef.uid === p.metadata.uid);
    return mine?.volume?.find((v: any) => v.name === 'scratch')?.usedBytes >= 1024 * 1024 ? s : undefined;
  }, 30_000);
  assert.ok(s.node.fs.capacityBytes > 0 && s.node.fs.availableBytes > 0 && s.node.fs.inodes > 0, JSON.stringify(s.node.fs));
  // (the image file system's use is the runtime's figure: containerd's snapshot usage, 0 until it has counted)
  assert.ok(s.node.runtime.imageFs.capacityBytes > 0 && typeof s.node.runtime.imageFs.usedBytes === 'number', JSON.stringify(s.node.runtime));
  assert.ok(s.node.rlimit.maxpid > 0 && s.node.rlimit.curproc > 0);
  const mine = s.pods.find((x: any) => x.podRef.uid === p.metadata.uid);
  assert.ok(mine['ephemeral-storage'].usedBytes >= 1024 * 1024, JSON.stringify(mine['ephemeral-storage']));
  const main = mine.containers.find((x: any) => x.name === 'main');
  assert.ok(main.logs.usedBytes > 0 && main.logs.capacityBytes > 0, JSON.stringify(main.logs));
  assert.equal(typeof main.rootfs.usedBytes, 'number');
  // /metrics/probes: the web pod's readiness probe (tcpSocket), counted as it answers
  const web = await podJSON('web');
  const probes = await new Promise<string>((resolve, reject) => {
    https.get({ host: '127.0.0.1', port: kubeletPort, path: '/metrics/probes', rejectUnauthorized: false, cert: c.credentials.cert, key: c.credentials.key }, (res) => {
      let b = '';
      res.on('data', (d) => (b += d));
      res.on('end', () => resolve(b));
    }).on('error', reject);
  });
  const series = new RegExp(`^prober_probe_total\\{container="main",namespace="default",pod="web",pod_uid="${web.metadata.uid}",probe_type="Readiness",result="successful"\\} (\\d+)$`, 'm').exec(probes);
  assert.ok(series && Number(series[1]) > 0, probes.slice(0, 2000));
  assert.match(probes, /^prober_probe_duration_seconds_bucket\{le="0\.005",container="main",namespace="default",pod="web",probe_type="Readiness"\} \d+$/m);
  // metrics-server's question: CPU and memory alone
  const light = await summary('?only_cpu_and_memory=true');
  assert.equal(light.node.fs, undefined);
  assert.equal(light.pods.find((x: any) => x.podRef.uid === p.metadata.uid)?.volume, undefined);
  c.kubectl(['delete', 'pod', 'stats', '--wait=false']);
});

test('in-place resize (kubectl patch --subresource resize): applied to the running container without a restart, a RestartContainer policy restarts it, an infeasible one is PodResizePending', async () => {
  const res = (cpu: string, cpuLim: string, mem: string, memLim: string) => ({ requests: { cpu, memory: mem }, limits: { cpu: cpuLim, memory: memLim } });
  apply(pod('resizable', {
    containers: [
      container('main', 'sleep 3600', { resources: res('100m', '200m', '32Mi', '64Mi') }),
      container('side', 'sleep 3600', { resources: res('50m', '100m', '16Mi', '32Mi'), resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }] }),
    ],
  }));
  const p = await waitPhase('resizable', 'Running');
  const statusOf = (q: any, name: string) => q.status.containerStatuses.find((x: any) => x.name === name);
  await until('status.resources reported', async () => statusOf(await podJSON('resizable'), 'main')?.resources?.limits?.cpu === '200m');
  const before = statusOf(await podJSON('resizable'), 'main');
  assert.deepEqual(before.resources, res('100m', '200m', '32Mi', '64Mi'));
  const patch = (body: unknown) => {
    const r = c.kubectl(['patch', 'pod', 'resizable', '--subresource', 'resize', '-p', JSON.stringify(body)]);
    assert.equal(r.code, 0, r.stderr);
  };
  // CPU of main: in place, same container, no restart; the cgroup has the new quota
  patch({ spec: { containers: [{ name: 'main', resources: { requests: { cpu: '150m' }, limits: { cpu: '300m' } } }] } });
  const resized = await until('main resized', async () => {
    const q = await podJSON('resizable');
    return statusOf(q, 'main')?.resources?.limits?.cpu === '300m' && !(q.status.conditions ?? []).some((x: any) => x.type.startsWith('PodResize')) ? q : undefined;
  }, 60_000).catch((e) => {
    throw new Error(`${e.message}\n${kubeletLogs.split('\n').filter((l) => /resiz|resources/i.test(l)).slice(-10).join('\n')}`);
  });
  const main = statusOf(resized, 'main');
  assert.equal(main.containerID, before.containerID, 'the same container');
  assert.equal(main.restartCount, 0);
  assert.deepEqual(main.resources.requests, { cpu: '150m', memory: '32Mi' });
  const quota = c.kubectl(['exec', 'resizable', '-c', 'main', '--', 'sh', '-c', 'cat /sys/fs/cgroup/cpu.max 2>/dev/null || cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us']);
  assert.equal(quota.code, 0, quota.stderr);
  assert.match(quota.stdout.trim(), /^30000( 100000)?$/);
  // memory of side, whose policy restarts it
  const sideBefore = statusOf(resized, 'side');
  patch({ spec: { containers: [{ name: 'side', resources: { requests: { memory: '24Mi' }, limits: { memory: '48Mi' } } }] } });
  const restarted = await until('side restarted with its new memory', async () => {
    const s = statusOf(await podJSON('resizable'), 'side');
    return s?.restartCount === 1 && s.state.running && s.resources?.limits?.memory === '48Mi' ? s : undefined;
  }, 60_000);
  assert.notEqual(restarted.containerID, sideBefore.containerID);
  // more CPU than the node has: Infeasible, nothing applied; asking for what it has clears it
  patch({ spec: { containers: [{ name: 'main', resources: { requests: { cpu: '1000' }, limits: { cpu: '1000' } } }] } });
  const pending = await until('PodResizePending', async () => (await podJSON('resizable'))?.status?.conditions?.find((x: any) => x.type === 'PodResizePending'));
  assert.equal(pending.reason, 'Infeasible');
  assert.match(pending.message, /^Node didn't have enough capacity: cpu, requested: 1000050, capacity: \d+$/);
  assert.equal(statusOf(await podJSON('resizable'), 'main').resources.limits.cpu, '300m');
  patch({ spec: { containers: [{ name: 'main', resources: { requests: { cpu: '150m' }, limits: { cpu: '300m' } } }] } });
  await until('PodResizePending gone', async () => !((await podJSON('resizable'))?.status?.conditions ?? []).some((x: any) => x.type === 'PodResizePending'));
  assert.equal(statusOf(await podJSON('resizable'), 'main').restartCount, 0);
  void p;
  c.kubectl(['delete', 'pod', 'resizable', '--wait=false']);
});

test('the eviction manager under a threshold it cannot meet: MemoryPressure, a BestEffort pod refused, a running pod evicted (Evicted, DisruptionTarget); the condition goes with the threshold', async () => {
  // (only this test's pods: the static pod is critical and never evicted)
  const del = c.kubectl(['delete', 'pods', '--wait=true', '--timeout=60s', '--field-selector', 'metadata.name!=static-web-' + NODE]);
  assert.equal(del.code, 0, del.stderr);
  await stopKubelet();
  kubelet = startKubelet(['--eviction-hard=memory.available<1000Ti', '--eviction-pressure-transition-period=1s']);
  const memoryPressure = (n: any) => n?.status?.conditions?.find((x: any) => x.type === 'MemoryPressure');
  const nodeNow = async () => (await c.raw('GET', `/api/v1/nodes/${NODE}`)).json();
  const cond = await until('MemoryPressure True', async () => {
    const m = memoryPressure(await nodeNow());
    return m?.status === 'True' ? m : undefined;
  }, 60_000).catch((e) => {
    throw new Error(`${(e as Error).message}; the kubelet's log ends: ${kubeletLogs.slice(-4000)}`);
  });
  assert.deepEqual([cond.reason, cond.message], ['KubeletHasInsufficientMemory', 'kubelet has insufficient memory available']);
  // a BestEffort pod is not admitted
  apply(pod('besteffort', { containers: [container('main', 'sleep 3600')] }));
  const refused = await waitPhase('besteffort', 'Failed', 30_000);
  assert.deepEqual([refused.status.reason, refused.status.message], ['Evicted', 'Pod was rejected: The node had condition: [MemoryPressure]. ']);
  // a Burstable pod comes in, and is evicted at the next round (it requests cpu: under this
  // threshold the node's allocatable memory is 0, and a memory request would be refused, OutOfmemory)
  apply(pod('burstable', { containers: [container('main', 'sleep 3600', { resources: { requests: { cpu: '1m' } } })] }));
  const evicted = await waitPhase('burstable', 'Failed', 60_000);
  assert.equal(evicted.status.reason, 'Evicted');
  assert.match(evicted.status.message, /^The node was low on resource: memory\. Threshold quantity: 1000Ti, available: \d+(Ki|Mi|Gi)\. /);
  const dt = evicted.status.conditions.find((x: any) => x.type === 'DisruptionTarget');
  assert.deepEqual([dt?.status, dt?.reason, dt?.message], ['True', 'TerminationByKubelet', evicted.status.message]);
  const events = (await c.raw('GET', '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=burstable,reason=Evicted')).json().items;
  assert.equal(events[0]?.type, 'Warning');
  const nodeEvents = await until('EvictionThresholdMet on the node', async () => (await c.raw('GET', `/api/v1/namespaces/default/events?fieldSelector=reason=EvictionThresholdMet`)).json().items[0]);
  assert.deepEqual([nodeEvents.involvedObject.kind, nodeEvents.involvedObject.name, nodeEvents.message], ['Node', NODE, 'Attempting to reclaim memory']);
  // without the threshold the condition is False again
  await stopKubelet();
  kubelet = startKubelet();
  await until('MemoryPressure False', async () => memoryPressure(await nodeNow())?.status === 'False', 60_000);
});

test('keelson kubelet: --help, --version, and clear start-up errors', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [KEELSON, 'kubelet', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  const help = run(['--help']);
  assert.equal(help.status, 0, help.stderr);
  for (const flag of ['--bootstrap-kubeconfig', '--kubeconfig', '--config', '--config-dir', '--container-runtime-endpoint', '--pod-manifest-path', '--manifest-url', '--node-labels', '--register-with-taints', '--anonymous-auth', '--authorization-mode', '--read-only-port', '--healthz-port', '--kube-api-qps', '--max-pods', '--version']) {
    assert.ok(help.stdout.includes(`${flag} `) || help.stdout.includes(`${flag}=`), `--help lists ${flag}`);
  }
  const version = run(['--version']);
  assert.match(version.stdout, /^Keelson v1\.\d+\.\d+/);
  const bad = run(['--image-gc-high-threshold', '101', '--kubeconfig', join(dir, 'none')]);
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /imageGCHighThresholdPercent \(--image-gc-high-threshold\) 101 must be between 0 and 100, inclusive/);
  const noRuntime = run(['--kubeconfig', c.kubeconfig, '--container-runtime-endpoint', `unix://${join(dir, 'missing.sock')}`, '--root-dir', join(dir, 'root2'), '--cert-dir', join(dir, 'pki2')]);
  assert.notEqual(noRuntime.status, 0);
  assert.match(noRuntime.stderr, new RegExp(`cannot connect to the container runtime at unix://${join(dir, 'missing.sock').replace(/[.]/g, '\\.')}`));
});
