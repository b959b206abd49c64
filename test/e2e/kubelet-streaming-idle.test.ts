// The kubelet's --streaming-connection-idle-timeout end to end: kubectl -> `keelson server` ->
// `keelson kubelet --streaming-connection-idle-timeout=2s` -> a private containerd 1.6's streaming
// server (test/nodeagent/containerd.ts). A stream the kubelet proxies (exec, port forward; SPDY
// from kubectl, a raw WebSocket v4.channel.k8s.io) that carries nothing either way is closed by the
// kubelet once idle for the timeout; one that keeps carrying data stays open well past it.
// (containerd's own stream_idle_timeout is its default 4h: what closes the streams here is the
// kubelet.) The setup follows kubelet-streaming.test.ts; every process started here is stopped
// here.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import tls from 'node:tls';
import { freePort, startCluster, until, ROOT, type Cluster, stopProcess } from './harness.js';
import { joiningKubeletArgs, writeJoiningKubeletConfig } from './kubeletharness.js';
import { startContainerd, type Containerd } from '../nodeagent/containerd.js';

let c: Cluster;
let ctd: Containerd;
let kubelet: ChildProcess | undefined;
let kubeletLogs = '';
let dir: string;
const NODE = 'keelson-idle-node';
const BUSYBOX = 'docker.io/library/busybox:local';
const IDLE_MS = 2_000;
/** how long the busy streams keep sending: three times the timeout */
const BUSY_MS = 3 * IDLE_MS;
/** processes started in the background (kubectl), stopped in `after` */
const background = new Set<ChildProcess>();

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-kubelet-idle-'));
  ctd = await startContainerd();
  c = await startCluster({ args: ['--storage-backend=memory'] });
  writeJoiningKubeletConfig(c, dir);
  const args = [...joiningKubeletArgs({ cluster: c, dir, endpoint: ctd.endpoint, node: NODE, port: await freePort() }), '--streaming-connection-idle-timeout=2s', '-v', '2'];
  kubelet = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  kubelet.stdout!.on('data', (d) => (kubeletLogs += d));
  kubelet.stderr!.on('data', (d) => (kubeletLogs += d));
  await until('node Ready', async () => {
    const r = c.kubectl(['get', 'node', NODE, '--no-headers']);
    return r.code === 0 && /\sReady\s/.test(r.stdout) ? r.stdout : undefined;
  }, 60_000).catch((e) => {
    throw new Error(`${(e as Error).message}\n${kubeletLogs.slice(-4000)}`);
  });
  // a shell with an echo server on 8080 (every connection gets its own cat)
  const pod = {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'shell' },
    spec: { nodeName: NODE, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'nc -ll -p 8080 -e cat & sleep 3600'], ports: [{ containerPort: 8080 }] }] },
  };
  const r = c.kubectl(['apply', '-f', '-'], { input: JSON.stringify(pod) });
  assert.equal(r.code, 0, r.stderr);
  await until('pod shell Running', async () => {
    const p = await c.raw('GET', '/api/v1/namespaces/default/pods/shell');
    return p.status === 200 && (p.json() as any).status?.phase === 'Running';
  }, 60_000).catch((e) => {
    throw new Error(`${(e as Error).message}\n${kubeletLogs.slice(-4000)}`);
  });
});

after(async () => {
  for (const p of background) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  if (c && kubelet) c.kubectl(['delete', 'pods', '--all', '--wait=true', '--timeout=60s']);
  const k = kubelet;
  kubelet = undefined;
  await stopProcess(k);
  await ctd?.stop();
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** a kubectl in the background, its stdin a pipe kept open; resolves `exited` with its code and output */
function kubectlBackground(args: string[], version?: string): { proc: ChildProcess; out: () => string; err: () => string; exited: Promise<number | null> } {
  const s = c.kubectlSpawn(args, { version });
  background.add(s.proc);
  const exited = new Promise<number | null>((resolve) => s.proc.once('exit', (code) => resolve(code)));
  return { ...s, exited };
}

/** resolves with what `p` resolves with, or with 'running' if it has not after `ms` */
function within<T>(p: Promise<T>, ms: number): Promise<T | 'running'> {
  return Promise.race([p, sleep(ms).then(() => 'running' as const)]);
}

test('an idle kubectl exec -i (stdin open, nothing written; SPDY: 1.33 after its WebSocket is refused, and 1.27) is closed by the kubelet after the idle timeout', async () => {
  for (const version of ['1.33', '1.27']) {
    const started = Date.now();
    const k = kubectlBackground(['exec', '-i', 'shell', '--', 'cat'], version);
    const code = await within(k.exited, 30_000);
    assert.notEqual(code, 'running', `${version}: the idle exec is still open after 30 s: ${k.err()}\n${kubeletLogs.slice(-2000)}`);
    // (never before the timeout: the kubelet closes a stream only once it has been idle that long)
    assert.ok(Date.now() - started >= IDLE_MS, `${version}: ended after ${Date.now() - started} ms: ${k.err()}`);
    assert.equal(k.out(), '', version);
    background.delete(k.proc);
  }
  assert.match(kubeletLogs, /Closing an idle streaming connection.*kind="exec".*pod="default\/shell".*container="main".*idleTimeout="2s"/);
});

test('a kubectl exec -i that keeps writing stays open past the idle timeout, and ends as asked', async () => {
  for (const version of ['1.33', '1.27']) {
    const k = kubectlBackground(['exec', '-i', 'shell', '--', 'cat'], version);
    let sent = '';
    const stop = Date.now() + BUSY_MS;
    for (let i = 0; Date.now() < stop; i++) {
      const line = `line ${i}\n`;
      k.proc.stdin!.write(line);
      sent += line;
      await sleep(250);
      assert.equal(k.proc.exitCode, null, `${version}: exec ended while busy: ${k.err()}`);
    }
    // everything echoed, and the session still open three timeouts on
    await until_(() => k.out() === sent, `${version}: the echo of what was sent (got ${JSON.stringify(k.out())})`);
    assert.equal(await within(k.exited, 0), 'running', version);
    k.proc.stdin!.end();
    assert.equal(await k.exited, 0, `${version}: ${k.err()}`);
    assert.equal(k.out(), sent, version);
    background.delete(k.proc);
  }
});

async function until_(ok: () => boolean, what: string, ms = 10_000): Promise<void> {
  await until(what, () => ok() || undefined, ms);
}

test('kubectl port-forward: an idle tunnel is closed by the kubelet (kubectl loses it); a connection that keeps sending keeps it open', async () => {
  // busy: an echoed TCP connection through the tunnel, written to every 250 ms for three timeouts
  const local = await freePort();
  const pf = kubectlBackground(['port-forward', 'pod/shell', `${local}:8080`]);
  await until_(() => pf.out().includes(`Forwarding from 127.0.0.1:${local} ->`) || pf.proc.exitCode !== null, 'port-forward listening', 30_000);
  assert.equal(pf.proc.exitCode, null, pf.err());
  const conn = net.connect({ host: '127.0.0.1', port: local });
  let echoed = '';
  let ended = false;
  conn.on('data', (d) => (echoed += d));
  conn.on('close', () => (ended = true));
  conn.on('error', () => {});
  let sent = '';
  const stop = Date.now() + BUSY_MS;
  for (let i = 0; Date.now() < stop; i++) {
    const line = `ping ${i}\n`;
    conn.write(line);
    sent += line;
    await sleep(250);
    assert.ok(!ended && pf.proc.exitCode === null, `the busy tunnel was closed: ${pf.err()}`);
  }
  await until_(() => echoed === sent, `the echo through the tunnel (got ${JSON.stringify(echoed)})`);
  // idle from now on (the connection left open, nothing sent): the kubelet closes the tunnel, and
  // kubectl, having lost it, ends with it
  const code = await within(pf.exited, 30_000);
  assert.notEqual(code, 'running', `port-forward still running 30 s after its tunnel went idle: ${pf.err()}`);
  assert.match(pf.err(), /lost connection to pod/);
  background.delete(pf.proc);
  await until_(() => ended, 'the local connection closed');
  conn.destroy();
  assert.match(kubeletLogs, /Closing an idle streaming connection.*kind="portForward".*pod="default\/shell"/);
});

// ---- a raw WebSocket (v4.channel.k8s.io, which containerd 1.6 speaks) through both proxies ----

const WS = { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Protocol': 'v4.channel.k8s.io' };

/** an upgraded connection to the API server as the admin: its 101 head, what came after it, and whether it closed */
async function wsExec(path: string): Promise<{ s: tls.TLSSocket; head: () => string; body: () => Buffer; closed: Promise<void> }> {
  const t = c.credentials;
  const s = tls.connect({ host: '127.0.0.1', port: c.port, ca: t.ca, cert: t.cert, key: t.key, servername: 'localhost', rejectUnauthorized: false });
  let buf = Buffer.alloc(0);
  s.on('data', (d: Buffer) => (buf = Buffer.concat([buf, d])));
  s.on('error', () => {});
  const closed = new Promise<void>((r) => s.once('close', () => r()));
  await new Promise<void>((r) => s.once('secureConnect', () => r()));
  const lines = Object.entries({ Host: `127.0.0.1:${c.port}`, ...WS }).map(([k, v]) => `${k}: ${v}\r\n`);
  s.write(`GET ${path} HTTP/1.1\r\n${lines.join('')}\r\n`);
  await until('the 101', () => buf.includes('\r\n\r\n') || undefined, 15_000);
  const i = buf.indexOf('\r\n\r\n');
  return { s, head: () => buf.subarray(0, i).toString('latin1'), body: () => buf.subarray(i + 4), closed };
}

/** a masked binary WebSocket frame of `payload` (a client's frames are masked) */
function clientFrame(payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x82, 0x80 | len]) : Buffer.from([0x82, 0x80 | 126, len >> 8, len & 0xff]);
  return Buffer.concat([head, mask, masked]);
}

test('a raw WebSocket exec (v4.channel.k8s.io): closed by the kubelet once idle; kept open while stdin is written', async () => {
  const path = '/api/v1/namespaces/default/pods/shell/exec?command=cat&stdin=true&stdout=true';
  const idle = await wsExec(path);
  assert.match(idle.head(), /^HTTP\/1\.1 101 Switching Protocols\r\n/);
  const started = Date.now();
  assert.equal(await within(idle.closed, 30_000), undefined, 'the idle WebSocket was not closed within 30 s');
  assert.ok(Date.now() - started >= IDLE_MS - 100, `closed after ${Date.now() - started} ms`);

  const busy = await wsExec(path);
  assert.match(busy.head(), /^HTTP\/1\.1 101 Switching Protocols\r\n/);
  let gone = false;
  void busy.closed.then(() => (gone = true));
  let sent = '';
  const stop = Date.now() + BUSY_MS;
  for (let i = 0; Date.now() < stop; i++) {
    const line = `ws ${i}\n`;
    // channel 0 is stdin
    busy.s.write(clientFrame(Buffer.concat([Buffer.from([0]), Buffer.from(line)])));
    sent += line;
    await sleep(250);
    assert.equal(gone, false, 'the busy WebSocket was closed');
  }
  // the echo came back on channel 1 (stdout): each frame's payload after its channel byte
  await until_(() => stdoutOf(busy.body()) === sent, 'the echo on stdout');
  busy.s.destroy();
  await busy.closed;
});

/** the stdout channel (1) of the server's unmasked frames */
function stdoutOf(b: Buffer): string {
  let out = '';
  let i = 0;
  while (i + 2 <= b.length) {
    let len = b[i + 1]! & 0x7f;
    let at = i + 2;
    if (len === 126) {
      if (at + 2 > b.length) break;
      len = b.readUInt16BE(at);
      at += 2;
    } else if (len === 127) {
      if (at + 8 > b.length) break;
      len = Number(b.readBigUInt64BE(at));
      at += 8;
    }
    if (at + len > b.length) break;
    const payload = b.subarray(at, at + len);
    if ((b[i]! & 0x0f) === 2 && payload[0] === 1) out += payload.subarray(1).toString('utf8');
    i = at + len;
  }
  return out;
}
