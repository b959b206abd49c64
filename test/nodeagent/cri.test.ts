// The CRI v1 client against a real containerd (a private one, see containerd.ts): the calls the
// kubelet makes over a pod's life, the error mapping, and connect() failures.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CRIClient, CRIError, isCRINotFound, parseCRIEndpoint } from '../../src/nodeagent/cri.js';
import type { ContainerConfig, PodSandboxConfig } from '../../src/nodeagent/cri.js';
import { startContainerd, type Containerd } from './containerd.js';

let ctd: Containerd;
let cri: CRIClient;
let sandboxId = '';
let containerId = '';
let sandboxConfig: PodSandboxConfig;

before(async () => {
  ctd = await startContainerd();
  cri = await CRIClient.connect({ endpoint: ctd.endpoint, timeoutMs: 60_000 });
});

after(async () => {
  if (cri) {
    if (containerId) await cri.removeContainer(containerId).catch(() => {});
    if (sandboxId) {
      await cri.stopPodSandbox(sandboxId).catch(() => {});
      await cri.removePodSandbox(sandboxId).catch(() => {});
    }
    cri.close();
  }
  await ctd?.stop();
});

function inSubnet(ip: string, cidr: string): boolean {
  const [net, len] = cidr.split('/');
  const n = (s: string) => s.split('.').reduce((a, x) => a * 256 + Number(x), 0);
  const size = 2 ** (32 - Number(len));
  return Math.floor(n(ip) / size) === Math.floor(n(net!) / size);
}

async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('endpoints: unix:///, unix:/ and absolute paths; other schemes are refused', () => {
  assert.equal(parseCRIEndpoint('unix:///run/containerd/containerd.sock'), '/run/containerd/containerd.sock');
  assert.equal(parseCRIEndpoint('unix:/run/x.sock'), '/run/x.sock');
  assert.equal(parseCRIEndpoint('/run/x.sock'), '/run/x.sock');
  assert.throws(() => parseCRIEndpoint('tcp://127.0.0.1:1234'), /tcp scheme is not supported/);
  assert.throws(() => parseCRIEndpoint('npipe:////./pipe/containerd'), /npipe scheme is not supported/);
  assert.throws(() => parseCRIEndpoint('unix://relative/x.sock'), /must be absolute/);
  assert.throws(() => parseCRIEndpoint('x.sock'), /expected unix:/);
});

test('Version and Status', async () => {
  assert.equal(cri.runtimeName, 'containerd');
  assert.match(cri.runtimeVersion, /\d+\.\d+/);
  assert.ok(cri.runtimeApiVersion.length > 0);
  const v = await cri.version();
  assert.equal(v.runtimeName, 'containerd');
  assert.equal(v.version, '0.1.0');

  const s = await cri.status(true);
  const cond = (t: string) => s.status?.conditions?.find((c) => c.type === t);
  assert.equal(cond('RuntimeReady')?.status, true);
  assert.equal(cond('NetworkReady')?.status, true, JSON.stringify(s.status));
  assert.equal(typeof s.info, 'object'); // verbose: containerd's config as JSON strings
});

test('ImageStatus, ListImages and ImageFsInfo', async () => {
  const img = await cri.imageStatus(ctd.images.busybox);
  assert.ok(img, 'busybox:local is present');
  assert.ok(img.repoTags?.includes(ctd.images.busybox), JSON.stringify(img.repoTags));
  assert.match(img.id ?? '', /^sha256:[0-9a-f]{64}$/);
  assert.ok((img.size ?? 0) > 0);
  assert.equal(await cri.imageStatus('docker.io/library/not-there:never'), undefined);

  const all = await cri.listImages();
  const tags = all.flatMap((i) => i.repoTags ?? []);
  assert.ok(tags.includes(ctd.images.busybox) && tags.includes(ctd.images.pause), tags.join(' '));
  // containerd 1.6 ignores ListImages' filter: only check that the call takes one
  assert.ok((await cri.listImages({ image: { image: ctd.images.pause } })).length >= 1);

  const fs = await cri.imageFsInfo();
  assert.ok(Array.isArray(fs.imageFilesystems));
});

test('RunPodSandbox and PodSandboxStatus', async () => {
  const logDir = join(ctd.dir, 'logs', 'default_pod1_uid-1');
  mkdirSync(logDir, { recursive: true });
  sandboxConfig = {
    metadata: { name: 'pod1', uid: 'uid-1', namespace: 'default', attempt: 0 },
    hostname: 'pod1',
    logDirectory: logDir,
    labels: { 'io.kubernetes.pod.name': 'pod1', 'io.kubernetes.pod.namespace': 'default', 'io.kubernetes.pod.uid': 'uid-1' },
    annotations: { 'keelson.test/a': 'b' },
    linux: {
      securityContext: {
        namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' },
        seccomp: { profileType: 'Unconfined' },
      },
    },
  };
  sandboxId = await cri.runPodSandbox(sandboxConfig);
  assert.match(sandboxId, /^[0-9a-f]{64}$/);

  const st = await cri.podSandboxStatus(sandboxId);
  assert.equal(st.status?.id, sandboxId);
  assert.equal(st.status?.state, 'SANDBOX_READY');
  assert.deepEqual(st.status?.metadata, { name: 'pod1', uid: 'uid-1', namespace: 'default', attempt: 0 });
  assert.equal(st.status?.annotations?.['keelson.test/a'], 'b');
  const ip = st.status?.network?.ip ?? '';
  assert.ok(inSubnet(ip, ctd.subnet), `pod IP ${ip} in ${ctd.subnet}`);
  assert.ok((st.status?.createdAt ?? 0) > 1.6e18, 'createdAt is in nanoseconds');

  const pods = await cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-1' } });
  assert.deepEqual(pods.map((p) => p.id), [sandboxId]);
  assert.equal(pods[0]!.state, 'SANDBOX_READY');
});

test('CreateContainer, StartContainer, ContainerStatus and the log file', async () => {
  mkdirSync(join(sandboxConfig.logDirectory!, 'c1'), { recursive: true });
  const config: ContainerConfig = {
    metadata: { name: 'c1', attempt: 0 },
    image: { image: ctd.images.busybox },
    command: ['sh', '-c', 'echo hello; sleep 30'],
    logPath: 'c1/0.log',
    labels: { 'io.kubernetes.container.name': 'c1' },
    linux: { securityContext: { namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' }, seccomp: { profileType: 'Unconfined' } } },
  };
  containerId = await cri.createContainer(sandboxId, config, sandboxConfig);
  assert.match(containerId, /^[0-9a-f]{64}$/);
  assert.equal((await cri.containerStatus(containerId)).status?.state, 'CONTAINER_CREATED');
  await cri.startContainer(containerId);

  const st = await cri.containerStatus(containerId);
  assert.equal(st.status?.state, 'CONTAINER_RUNNING');
  assert.equal(st.status?.metadata?.name, 'c1');
  assert.equal(st.status?.logPath, join(sandboxConfig.logDirectory!, 'c1/0.log'));
  assert.ok((st.status?.startedAt ?? 0) > 0);
  assert.equal(st.status?.finishedAt, 0);
  assert.ok(st.status?.imageRef?.startsWith('sha256:'), st.status?.imageRef);

  const listed = await cri.listContainers({ podSandboxId: sandboxId });
  assert.deepEqual(listed.map((c) => [c.id, c.state]), [[containerId, 'CONTAINER_RUNNING']]);
  assert.deepEqual((await cri.listContainers({ state: { state: 'CONTAINER_EXITED' }, podSandboxId: sandboxId })), []);

  const logFile = join(sandboxConfig.logDirectory!, 'c1', '0.log');
  const log = await until('the log line', async () => {
    const t = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
    return t.includes('hello') ? t : undefined;
  });
  assert.match(log, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d) stdout F hello\n/);
});

test('ExecSync, Exec and ContainerStats', async () => {
  const r = await cri.execSync(containerId, ['echo', 'hi'], 10);
  assert.equal(r.stdout.toString(), 'hi\n');
  assert.equal(r.stderr.length, 0);
  assert.equal(r.exitCode, 0);
  const f = await cri.execSync(containerId, ['sh', '-c', 'echo oops >&2; exit 3'], 10);
  assert.equal(f.stderr.toString(), 'oops\n');
  assert.equal(f.exitCode, 3);

  const url = await cri.exec({ containerId, cmd: ['sh'], stdout: true, stderr: true });
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/exec\//);

  const stats = await cri.listContainerStats({ podSandboxId: sandboxId });
  assert.deepEqual(stats.map((s) => s.attributes?.id), [containerId]);
});

test('StopContainer, RemoveContainer and a NotFound error', async () => {
  // sh as the container's first process ignores SIGTERM: killed when the grace period ends
  await cri.stopContainer(containerId, 2);
  const st = await cri.containerStatus(containerId);
  assert.equal(st.status?.state, 'CONTAINER_EXITED');
  assert.ok([137, 143].includes(st.status?.exitCode ?? -1), `exit code ${st.status?.exitCode}`);
  assert.ok((st.status?.finishedAt ?? 0) >= (st.status?.startedAt ?? 0));
  await cri.stopContainer(containerId, 0); // idempotent

  await cri.removeContainer(containerId);
  const id = containerId;
  containerId = '';
  await cri.removeContainer(id); // idempotent
  const e = await cri.containerStatus(id).then(
    () => assert.fail('ContainerStatus of a removed container succeeded'),
    (x: unknown) => x,
  );
  assert.ok(e instanceof CRIError, String(e));
  assert.equal(e.codeName, 'NotFound');
  assert.equal(e.code, 5);
  assert.equal(e.method, 'ContainerStatus');
  assert.match(e.message, /^rpc error: code = NotFound desc = .+/);
  assert.ok(isCRINotFound(e));
  assert.ok(!isCRINotFound(new Error('not found')));
});

test('StopPodSandbox and RemovePodSandbox', async () => {
  await cri.stopPodSandbox(sandboxId);
  assert.equal((await cri.podSandboxStatus(sandboxId)).status?.state, 'SANDBOX_NOTREADY');
  await cri.stopPodSandbox(sandboxId); // idempotent
  await cri.removePodSandbox(sandboxId);
  const id = sandboxId;
  sandboxId = '';
  await assert.rejects(cri.podSandboxStatus(id), (e: unknown) => isCRINotFound(e));
  assert.deepEqual(await cri.listPodSandbox(), []);
});

test('connect() to a missing socket fails at once, naming the endpoint', async () => {
  const endpoint = `unix://${join(ctd.dir, 'nothing-here.sock')}`;
  const t0 = Date.now();
  await assert.rejects(CRIClient.connect({ endpoint }), (e: Error) => {
    assert.ok(e.message.includes(endpoint), e.message);
    assert.match(e.message, /ENOENT/);
    return true;
  });
  assert.ok(Date.now() - t0 < 2000, `took ${Date.now() - t0} ms`);
  await assert.rejects(CRIClient.connect({ endpoint: 'tcp://127.0.0.1:1' }), /tcp scheme is not supported/);
});

test('a closed client refuses calls', async () => {
  const c = await CRIClient.connect({ endpoint: ctd.endpoint });
  c.close();
  await assert.rejects(c.version(), (e: unknown) => e instanceof CRIError && e.codeName === 'Canceled');
});

test('stop() removes the containerd, its directory and its bridge', async () => {
  cri.close();
  const { dir, bridge } = ctd;
  await ctd.stop();
  assert.equal(existsSync(dir), false);
  assert.equal(existsSync(`/sys/class/net/${bridge}`), false);
  const procs = readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(dir);
    } catch {
      return false;
    }
  });
  assert.deepEqual(procs, []);
  await ctd.stop(); // idempotent
});
