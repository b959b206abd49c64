// The node agent without an API server (standalone mode: no --kubeconfig) and with --runonce,
// against a private containerd: the static pods of --pod-manifest-path run, their status is the
// kubelet's own (its /pods), what needs the API server fails with the kubelet's words, a restarted
// kubelet keeps the containers it finds, a removed manifest stops its pod, and --runonce starts
// the pods, waits for them and exits.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import https from 'node:https';
import YAML from 'yaml';
import { freePort, until, KEELSON, ROOT, stopProcess } from './harness.js';
import { startContainerd, type Containerd } from '../nodeagent/containerd.js';

let ctd: Containerd;
let dir: string;
let kubelet: ChildProcess | undefined;
let logs = '';
let port: number;
let readOnlyPort: number;
let healthzPort: number;
const NODE = 'keelson-standalone';
const BUSYBOX = 'docker.io/library/busybox:local';

function staticPod(name: string, spec: Record<string, unknown>): string {
  return YAML.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { terminationGracePeriodSeconds: 1, ...spec } });
}

function container(name: string, script: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, image: BUSYBOX, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script], ...extra };
}

function kubeletArgs(extra: string[]): string[] {
  return [
    KEELSON, 'kubelet',
    '--config', join(dir, 'kubelet.yaml'),
    '--root-dir', join(dir, 'root'),
    '--cert-dir', join(dir, 'pki'),
    '--container-runtime-endpoint', ctd.endpoint,
    '--hostname-override', NODE,
    '--node-ip', '127.0.0.1',
    '--address', '127.0.0.1',
    '--port', String(port),
    '--read-only-port', String(readOnlyPort),
    '--healthz-port', String(healthzPort),
    '--fail-swap-on=false',
    // (the containerd harness's own cgroup root: no other test's kubelet shares it)
    '--cgroup-root', ctd.cgroupRoot,
    '--file-check-frequency', '1s',
    '--sync-frequency', '10s',
    '-v', '2',
    ...extra,
  ];
}

function startKubelet(extra: string[] = []): ChildProcess {
  const p = spawn(process.execPath, kubeletArgs(['--pod-manifest-path', join(dir, 'manifests'), ...extra]), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  p.stdout!.on('data', (d) => (logs += d));
  p.stderr!.on('data', (d) => (logs += d));
  return p;
}

async function stopKubelet(): Promise<void> {
  const p = kubelet;
  kubelet = undefined;
  await stopProcess(p);
}

/** the kubelet's /pods, on its read-only port */
async function pods(): Promise<any[]> {
  const r = await fetch(`http://127.0.0.1:${readOnlyPort}/pods`).catch(() => undefined);
  return r?.status === 200 ? ((await r.json()) as any).items ?? [] : [];
}

async function podNamed(name: string): Promise<any | undefined> {
  return (await pods()).find((p) => p.metadata.name === `${name}-${NODE}`);
}

/** GET on the kubelet's authenticated port (anonymous, AlwaysAllow in this test's configuration) */
function kubeletGet(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    https
      .get({ host: '127.0.0.1', port, path, rejectUnauthorized: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

/** the runtime's containers of a pod, as `ctr` lists them, with their task status */
function runtimeContainers(podName: string): { id: string; status: string }[] {
  // (containerd's CRI labels its containers with their kind: sandbox or container)
  const ids = ctd.ctr('containers', 'ls', '--quiet', `labels."io.kubernetes.pod.name"==${podName},labels."io.cri-containerd.kind"==container`).split('\n').map((l) => l.trim()).filter(Boolean);
  const tasks = new Map(ctd.ctr('tasks', 'ls').split('\n').slice(1).map((l) => l.trim().split(/\s+/)).filter((f) => f.length >= 3).map((f) => [f[0]!, f[2]!]));
  return ids.map((id) => ({ id, status: tasks.get(id) ?? 'NONE' }));
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-standalone-'));
  ctd = await startContainerd();
  // the configuration of a standalone kubelet (its file defaults ask for webhook authentication and
  // authorization, which need an API server)
  writeFileSync(join(dir, 'kubelet.yaml'), YAML.stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    podLogsDir: join(dir, 'logs'),
    podCIDR: '10.244.7.0/24',
    authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
    authorization: { mode: 'AlwaysAllow' },
    // (no image garbage collection: the test's images are imported, not pullable)
    imageGCHighThresholdPercent: 100,
  }));
  mkdirSync(join(dir, 'manifests'));
  writeFileSync(join(dir, 'manifests', 'web.yaml'), staticPod('web', {
    containers: [container('main', 'echo "hello from $POD_NAME"; echo kept > /data/f; sleep 3600', {
      env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
      volumeMounts: [{ name: 'data', mountPath: '/data' }],
    })],
    volumes: [{ name: 'data', emptyDir: {} }],
  }));
  writeFileSync(join(dir, 'manifests', 'needs-cm.yaml'), staticPod('needs-cm', {
    containers: [container('main', 'sleep 3600', { env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'x' } } }] })],
  }));
  writeFileSync(join(dir, 'manifests', 'needs-secret.yaml'), staticPod('needs-secret', {
    containers: [container('main', 'sleep 3600', { volumeMounts: [{ name: 's', mountPath: '/s' }] })],
    volumes: [{ name: 's', secret: { secretName: 'creds' } }],
  }));
  [port, readOnlyPort, healthzPort] = [await freePort(), await freePort(), await freePort()];
  kubelet = startKubelet();
});

after(async () => {
  await stopKubelet();
  await ctd?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('standalone mode: the static pods run, their status served by the kubelet; what needs the API server fails as the kubelet says', async () => {
  const web = await until('web Running in /pods', async () => {
    const p = await podNamed('web');
    return p?.status?.phase === 'Running' ? p : undefined;
  }, 60_000).catch((e) => {
    throw new Error(`${e.message}\n${logs.slice(-4000)}`);
  });
  assert.match(logs, /Standalone mode, no API client/);
  assert.equal(web.metadata.annotations['kubernetes.io/config.source'], 'file');
  assert.equal(web.spec.nodeName, NODE);
  const subnet = ctd.subnet.split('.').slice(0, 2).join('.') + '.';
  assert.ok(web.status.podIP?.startsWith(subnet), `pod IP ${web.status.podIP} on ${ctd.subnet}`);
  assert.equal(web.status.containerStatuses[0].state.running !== undefined, true);
  assert.match(web.status.containerStatuses[0].containerID, /^containerd:\/\//);
  // its log, through the kubelet's own server
  const log = await until('the log', async () => {
    const r = await kubeletGet(`/containerLogs/default/web-${NODE}/main`);
    return r.status === 200 && r.body.includes('hello') ? r.body : undefined;
  });
  assert.equal(log, `hello from web-${NODE}\n`);
  // a ConfigMap reference cannot be resolved without an API server
  const cm = await until('needs-cm waiting', async () => {
    const p = await podNamed('needs-cm');
    return p?.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError' ? p : undefined;
  });
  assert.equal(cm.status.containerStatuses[0].state.waiting.message, "couldn't get configMap default/cfg, no kubeClient defined");
  // nor a Secret volume: the pod waits in ContainerCreating, the reason in the kubelet's log (events go nowhere)
  const secret = await podNamed('needs-secret');
  assert.equal(secret?.status?.phase, 'Pending');
  await until('the secret volume error in the log', () => /not supported due to running kubelet in standalone mode/.test(logs));
});

test('standalone mode: a restarted kubelet keeps the containers it finds; a removed manifest stops its pod', async () => {
  const before = (await podNamed('web')).status.containerStatuses[0].containerID;
  await stopKubelet();
  kubelet = startKubelet();
  await until('web Running again', async () => (await podNamed('web'))?.status?.phase === 'Running', 60_000);
  // (the first relists of the new kubelet have run; a container it took for an orphan would be stopping)
  await new Promise((r) => setTimeout(r, 4000));
  const after = (await podNamed('web')).status.containerStatuses[0];
  assert.equal(after.containerID, before, 'the same container');
  assert.equal(after.restartCount, 0);
  assert.deepEqual(runtimeContainers(`web-${NODE}`).map((c) => c.status), ['RUNNING']);

  unlinkSync(join(dir, 'manifests', 'web.yaml'));
  await until('web gone from /pods', async () => !(await pods()).some((p) => p.metadata.name === `web-${NODE}`), 30_000);
  await until('its containers removed from the runtime', () => runtimeContainers(`web-${NODE}`).length === 0, 30_000);
});

test('--runonce: the static pods are started and waited for, then the kubelet exits and the pods go on', async () => {
  // (the other pods go first, so that nothing of the long-running kubelet is left)
  for (const f of ['needs-cm.yaml', 'needs-secret.yaml']) unlinkSync(join(dir, 'manifests', f));
  await until('no pods left', async () => (await pods()).length === 0, 30_000);
  await stopKubelet();
  writeFileSync(join(dir, 'manifests', 'once.yaml'), staticPod('once', { containers: [container('a', 'sleep 3600'), container('b', 'sleep 3600')] }));
  const run = (extra: string[]) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const p = spawn(process.execPath, kubeletArgs(extra), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      p.stdout!.on('data', (d) => (out += d));
      p.stderr!.on('data', (d) => (out += d));
      const t = setTimeout(() => p.kill('SIGKILL'), 120_000);
      p.once('exit', (code) => {
        clearTimeout(t);
        resolve({ code, out });
      });
    });
  const once = await run(['--runonce', '--enable-server=false', '--pod-manifest-path', join(dir, 'manifests')]);
  assert.equal(once.code, 0, once.out.slice(-4000));
  assert.match(once.out, /"Processing manifest with pods" numPods=1/);
  assert.match(once.out, /"Pod's containers running" pod="default\/once-keelson-standalone"/);
  assert.match(once.out, /"Started kubelet as runonce"/);
  assert.doesNotMatch(once.out, /Starting to listen/, 'no server with --runonce');
  assert.deepEqual(runtimeContainers(`once-${NODE}`).map((c) => c.status), ['RUNNING', 'RUNNING'], 'both containers go on after the exit');
  // without a source of pods there is nothing to run
  const none = await run(['--runonce']);
  assert.equal(none.code, 1, none.out);
  assert.match(none.out, /runonce failed: no pod manifest update after 1s/);
});

test('standalone mode: clear start-up errors for what needs an API server', () => {
  const run = (args: string[]) => spawnSync(process.execPath, kubeletArgs(args), { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  const webhook = run(['--authorization-mode', 'Webhook', '--enable-server=true']);
  assert.notEqual(webhook.status, 0);
  assert.match(webhook.stderr, /no client provided, cannot use webhook authorization/);
  const boot = run(['--bootstrap-kubeconfig', join(dir, 'boot.kubeconfig')]);
  assert.notEqual(boot.status, 0);
  assert.match(boot.stderr, /--bootstrap-kubeconfig needs --kubeconfig/);
});
