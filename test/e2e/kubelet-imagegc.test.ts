// The kubelet's image garbage collection end to end: a real `keelson server`, a private containerd
// and `keelson kubelet`, with images built here (nothing pulled). A pod runs the busybox image; an
// image no pod uses is removed by imageMaximumGCAge, another by the disk thresholds (a high
// threshold of 1% that cannot be met, with the kubelet's FreeDiskSpaceFailed and ImageGCFailed
// events), while the busybox image in use and the runtime's sandbox image (pause) stay.
// KEELSON_IMAGE_GC_PERIOD shortens the collection's 5 minutes to 1 s.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster, freePort, until, ROOT, type Cluster, stopProcess } from './harness.js';
import { joiningKubeletArgs } from './kubeletharness.js';
import { packImage, startContainerd, type Containerd } from '../nodeagent/containerd.js';

let c: Cluster;
let ctd: Containerd;
let kubelet: ChildProcess | undefined;
let kubeletLogs = '';
let dir: string;
/** the runtime's ID of the pod's container, which uses the busybox image throughout */
let containerID = '';
const NODE = 'keelson-imagegc-node';
const BUSYBOX = 'docker.io/library/busybox:local';
const PAUSE = 'registry.k8s.io/pause:local';

/** an OCI image-layout tarball of one small layer, named `name`; returns its path and image ID
 * (the digest of its config, as the runtime names it) */
function buildImage(name: string): { tar: string; id: string } {
  const w = mkdtempSync(join(dir, 'img-'));
  try {
    const rootfs = join(w, 'rootfs');
    mkdirSync(rootfs);
    writeFileSync(join(rootfs, 'hello'), `an image no pod uses: ${name}\n`);
    const tar = join(dir, `${createHash('sha256').update(name).digest('hex').slice(0, 12)}.tar`);
    return { tar, id: packImage(w, rootfs, tar, name, { Cmd: ['/hello'] }) };
  } finally {
    rmSync(w, { recursive: true, force: true });
  }
}

/** the runtime's image names */
function images(): string[] {
  return ctd.ctr('images', 'ls', '-q').split('\n').filter(Boolean);
}

function writeConfig(gc: Record<string, unknown>): string {
  const lines = ['apiVersion: kubelet.config.k8s.io/v1beta1', 'kind: KubeletConfiguration', `podLogsDir: ${join(dir, 'logs')}`];
  for (const [k, v] of Object.entries(gc)) lines.push(`${k}: ${typeof v === 'string' ? JSON.stringify(v) : v}`);
  const file = join(dir, `kubelet-${Object.values(gc).join('-').replace(/[^\w-]/g, '')}.yaml`);
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

async function startKubelet(config: string, env: Record<string, string> = {}): Promise<void> {
  await stopKubelet();
  const args = [...joiningKubeletArgs({ cluster: c, dir, endpoint: ctd.endpoint, node: NODE, port: await freePort(), healthzPort: await freePort(), config }), '-v', '2'];
  kubeletLogs = '';
  const p = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  p.stdout!.on('data', (d) => (kubeletLogs += d));
  p.stderr!.on('data', (d) => (kubeletLogs += d));
  kubelet = p;
}

async function stopKubelet(): Promise<void> {
  const p = kubelet;
  kubelet = undefined;
  await stopProcess(p);
}

/** the pod's container is the one started at first, running */
function assertContainerKept(): void {
  const id = containerID.replace(/^containerd:\/\//, '');
  const tasks = ctd.ctr('tasks', 'ls');
  assert.match(tasks, new RegExp(`^${id}\\s+\\d+\\s+RUNNING`, 'm'), `the pod's container runs on: ${tasks}`);
}

async function nodeEvents(reason: string): Promise<any[]> {
  const r = await c.raw('GET', `/api/v1/namespaces/default/events?fieldSelector=reason=${reason},involvedObject.name=${NODE}`);
  return r.json().items;
}

/** waits for a line of the kubelet's log (klog writes its buffer out every few seconds) */
async function logged(re: RegExp): Promise<void> {
  await until(`the kubelet to log ${re}`, () => re.test(kubeletLogs), 30_000).catch(withLogs);
}

const withLogs = (e: Error) => {
  throw new Error(`${e.message}; the kubelet's log ends:\n${kubeletLogs.slice(-4000)}`);
};

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-imagegc-'));
  ctd = await startContainerd();
  c = await startCluster({ args: ['--storage-backend=memory'] });
  // a kubelet without image garbage collection runs the pod, so that the busybox image is in use
  // from the start of every collecting kubelet below (the pod goes on across their restarts)
  await startKubelet(writeConfig({ imageGCHighThresholdPercent: 100, imageGCLowThresholdPercent: 80 }));
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'uses-busybox' }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: BUSYBOX, imagePullPolicy: 'Never', command: ['sleep', '3600'] }] } };
  const r = c.kubectl(['apply', '-f', '-'], { input: JSON.stringify(pod) });
  assert.equal(r.code, 0, r.stderr);
  containerID = await until('the pod Running', async () => {
    const p = await c.raw('GET', '/api/v1/namespaces/default/pods/uses-busybox');
    return p.status === 200 && p.json().status?.phase === 'Running' && p.json().status.containerStatuses?.[0]?.containerID;
  }, 90_000).catch(withLogs);
  await stopKubelet();
});

after(async () => {
  if (c && ctd) {
    // the pod's containers stopped by a kubelet, then everything else
    if (!kubelet) await startKubelet(writeConfig({ imageGCHighThresholdPercent: 100, imageGCLowThresholdPercent: 80 })).catch(() => undefined);
    c.kubectl(['delete', 'pods', '--all', '--wait=true', '--timeout=60s']);
  }
  await stopKubelet();
  await ctd?.stop();
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('imageMaximumGCAge: an image no pod uses is removed once the kubelet has run longer than it; the image in use and the sandbox image stay', async (t) => {
  const unused = buildImage('example.com/keelson/unused-by-age:1');
  ctd.ctr('images', 'import', unused.tar);
  assert.ok(images().includes('example.com/keelson/unused-by-age:1'));
  const started = Date.now();
  // (the thresholds cannot be reached: only the maximum age removes images)
  t.after(stopKubelet);
  await startKubelet(writeConfig({ imageGCHighThresholdPercent: 100, imageGCLowThresholdPercent: 80, imageMinimumGCAge: '1s', imageMaximumGCAge: '8s' }), { KEELSON_IMAGE_GC_PERIOD: '1s' });
  await until('the unused image removed', () => !images().includes('example.com/keelson/unused-by-age:1'), 60_000).catch(withLogs);
  assert.ok(Date.now() - started > 8_000, 'not before the kubelet has run for the maximum age');
  await logged(new RegExp(`"Removing image to free bytes" imageID="${unused.id}" size=\\d+ runtimeHandler=""`));
  // two more collections: the images of the running pod and of its sandbox are kept
  await new Promise((r) => setTimeout(r, 2500));
  const left = images();
  assert.ok(left.includes(BUSYBOX), `the image in use stays: ${left.join(' ')}\n${kubeletLogs.slice(-6000)}`);
  assert.ok(left.includes(PAUSE), `the sandbox image stays: ${left.join(' ')}\n${kubeletLogs.slice(-6000)}`);
  assert.doesNotMatch(kubeletLogs, /Image garbage collection failed/);
  assertContainerKept();
});

test('the disk thresholds: over imageGCHighThresholdPercent unused images are removed, and freeing too little is the kubelet\'s FreeDiskSpaceFailed and ImageGCFailed', async (t) => {
  const unused = buildImage('example.com/keelson/unused-by-space:1');
  ctd.ctr('images', 'import', unused.tar);
  assert.ok(images().includes('example.com/keelson/unused-by-space:1'));
  // any use of the file system is over 1%, and freeing down to 0% cannot succeed
  t.after(stopKubelet);
  await startKubelet(writeConfig({ imageGCHighThresholdPercent: 1, imageGCLowThresholdPercent: 0, imageMinimumGCAge: '2s' }), { KEELSON_IMAGE_GC_PERIOD: '1s' });
  await until('the unused image removed', () => !images().includes('example.com/keelson/unused-by-space:1'), 60_000).catch(withLogs);
  await logged(/"Disk usage on image filesystem is over the high threshold, trying to free bytes down to the low threshold" usage=\d+ highThreshold=1 amountToFree=\d+ lowThreshold=0/);
  await logged(new RegExp(`"Removing image to free bytes" imageID="${unused.id}" size=\\d+ runtimeHandler=""`));
  const failed = await until('a FreeDiskSpaceFailed event', async () => (await nodeEvents('FreeDiskSpaceFailed'))[0], 30_000).catch(withLogs);
  assert.equal(failed.type, 'Warning');
  assert.equal(failed.involvedObject.kind, 'Node');
  assert.equal(failed.source.component, 'kubelet');
  assert.match(failed.message, /^Failed to garbage collect required amount of images\. Attempted to free \d+ bytes, but only found \d+ bytes eligible to free\.$/);
  // (the loop makes an event of a failure that follows another)
  const gcFailed = await until('an ImageGCFailed event', async () => (await nodeEvents('ImageGCFailed'))[0], 30_000).catch(withLogs);
  assert.equal(gcFailed.type, 'Warning');
  assert.match(gcFailed.message, /^Failed to garbage collect required amount of images\. /);
  await logged(/"Image garbage collection failed multiple times in a row" err="Failed to garbage collect required amount of images\./);
  const left = images();
  assert.ok(left.includes(BUSYBOX), `the image in use stays: ${left.join(' ')}\n${kubeletLogs.slice(-6000)}`);
  assert.ok(left.includes(PAUSE), `the sandbox image stays: ${left.join(' ')}\n${kubeletLogs.slice(-6000)}`);
  assertContainerKept();
});
