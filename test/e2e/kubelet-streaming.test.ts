// kubectl exec, attach and port-forward end to end, as Kubernetes runs them: kubectl -> `keelson
// server` (pods/exec|attach|portforward: an HTTP/1.1 upgrade, SPDY/3.1 or WebSocket, proxied to
// the node's kubelet) -> `keelson kubelet` (/exec, /attach, /portForward: proxied to the URL the
// runtime's CRI Exec, Attach or PortForward gives) -> the streaming server of a private containerd
// 1.6 (test/nodeagent/containerd.ts). The kubelet joins with --bootstrap-kubeconfig, authenticates
// the API server by the cluster CA and authorizes it by SubjectAccessReview (nodes/proxy).
//
// Driven by real kubectl 1.33, 1.32 and 1.27: 1.30 and later first try a WebSocket
// (v5.channel.k8s.io, or the port forward's SPDY tunnel), which containerd 1.6 refuses (403) and
// the kubelet refuses when it names no port (400), and fall back to SPDY; 1.27 speaks SPDY only.
// Raw upgrades show that the two proxies pass a WebSocket through untouched (v4.channel.k8s.io,
// which containerd does speak). Errors are the kubelet's and kube-apiserver's words.
//
// The proxy subresources are driven here too, against a busybox httpd in a pod and its Service:
// kubectl get --raw, kubectl proxy, and raw requests for what the backend receives and returns;
// and @kubernetes/client-node's Exec (WebSocket), Log and PortForward; a grpc readiness probe; and
// the kubelet's /metrics/resource and /stats/summary.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { expectStatus, freePort, kubectlArgv0, kubectlBinary, startCluster, until, ROOT, type Cluster, stopProcess } from './harness.js';
import { joiningKubeletArgs, writeJoiningKubeletConfig } from './kubeletharness.js';
import http from 'node:http';
import { Readable, Writable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import * as k8s from '@kubernetes/client-node';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { startContainerd, type Containerd } from '../nodeagent/containerd.js';

let c: Cluster;
let ctd: Containerd;
let kubelet: ChildProcess | undefined;
let kubeletLogs = '';
let dir: string;
let kubeletPort: number;
const NODE = 'keelson-stream-node';
const BUSYBOX = 'docker.io/library/busybox:local';
/** kubectl processes started in the background (port-forward), stopped in `after` */
const background = new Set<ChildProcess>();

function container(name: string, command: string[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, image: BUSYBOX, imagePullPolicy: 'IfNotPresent', command, ...extra };
}

function apply(name: string, spec: Record<string, unknown>): void {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 1, ...spec } };
  const r = c.kubectl(['apply', '-f', '-'], { input: JSON.stringify(pod) });
  assert.equal(r.code, 0, r.stderr);
}

async function podJSON(name: string): Promise<any> {
  const r = await c.raw('GET', `/api/v1/namespaces/default/pods/${name}`);
  return r.status === 200 ? r.json() : undefined;
}

async function waitFor(name: string, what: string, ok: (p: any) => boolean, timeoutMs = 60_000): Promise<any> {
  return until(`pod ${name} ${what}`, async () => {
    const p = await podJSON(name);
    return p && ok(p) ? p : undefined;
  }, timeoutMs).catch((e) => {
    throw new Error(`${(e as Error).message}\n${kubeletLogs.slice(-4000)}`);
  });
}

/** the web pod's page: links the proxy rewrites (absolute ones) and leaves (relative, another host's) */
const WEB_PAGE = '<html><head><link href="/style.css" rel=stylesheet></head><body><a href="/hello.txt">hello</a> <img src="sub/y.png"> <a href="http://example.com/z">z</a> <form action="/cgi-bin/echo"></form></body></html>';

const running = (name: string) => waitFor(name, 'Running', (p) => p.status?.phase === 'Running');

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-kubelet-streaming-'));
  ctd = await startContainerd();
  c = await startCluster({ args: ['--storage-backend=memory'] });
  writeJoiningKubeletConfig(c, dir);
  kubeletPort = await freePort();
  const args = [...joiningKubeletArgs({ cluster: c, dir, endpoint: ctd.endpoint, node: NODE, port: kubeletPort }), '-v', '2'];
  kubelet = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  kubelet.stdout!.on('data', (d) => (kubeletLogs += d));
  kubelet.stderr!.on('data', (d) => (kubeletLogs += d));
  await until('node Ready', async () => {
    const r = c.kubectl(['get', 'node', NODE, '--no-headers']);
    return r.code === 0 && /\sReady\s/.test(r.stdout) ? r.stdout : undefined;
  }, 60_000).catch((e) => {
    throw new Error(`${(e as Error).message}\n${kubeletLogs.slice(-4000)}`);
  });
  // a shell that also answers "pong" on 8080; three containers, one of them done (OnFailure keeps it
  // so); a container that reads its stdin once; a container whose image is not there
  apply('shell', { containers: [container('main', ['sh', '-c', 'nc -ll -p 8080 -e echo pong & sleep 3600'], { ports: [{ containerPort: 8080 }] })] });
  apply('multi', {
    restartPolicy: 'OnFailure',
    containers: [
      container('a', ['sleep', '3600'], { env: [{ name: 'WHO', value: 'a' }] }),
      container('b', ['sleep', '3600'], { env: [{ name: 'WHO', value: 'b' }] }),
      container('done', ['true']),
    ],
  });
  apply('cat', { restartPolicy: 'Never', containers: [container('main', ['cat'], { stdin: true, stdinOnce: true })] });
  apply('pending', { containers: [{ name: 'main', image: 'docker.io/library/absent:local', imagePullPolicy: 'Never' }] });
  // a web server (busybox httpd) behind a Service, for the proxy subresources: a page with links, a
  // file, a CGI script that answers with what it was sent, one that redirects
  const web = [
    'mkdir -p /www/cgi-bin /www/sub',
    'echo hello > /www/hello.txt',
    `printf '%s' '${WEB_PAGE}' > /www/index.html`,
    // (the same page gzipped: busybox httpd sends z.html.gz for z.html to a client that accepts gzip)
    'cp /www/index.html /www/z.html && gzip -c /www/z.html > /www/z.html.gz',
    `printf '%s\\n' '#!/bin/sh' 'printf "Content-Type: text/plain\\r\\nAccess-Control-Allow-Origin: *\\r\\nX-Backend: yes\\r\\n\\r\\n"' 'echo "method=$REQUEST_METHOD uri=$REQUEST_URI"' 'echo "xfu=$HTTP_X_FORWARDED_URI xff=$HTTP_X_FORWARDED_FOR auth=$HTTP_AUTHORIZATION"' 'echo "body=$(cat)"' > /www/cgi-bin/echo`,
    `printf '%s\\n' '#!/bin/sh' 'printf "Status: 302 Found\\r\\nLocation: /hello.txt\\r\\n\\r\\n"' > /www/cgi-bin/go`,
    'chmod +x /www/cgi-bin/*',
    'echo serving /www',
    'exec httpd -f -p 8080 -h /www',
  ].join(' && ');
  const webPod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', labels: { app: 'web' } }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 1, containers: [container('main', ['sh', '-c', web], { ports: [{ name: 'http', containerPort: 8080 }] })] } };
  const webSvc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } };
  for (const o of [webPod, webSvc]) {
    const r = c.kubectl(['apply', '-f', '-'], { input: JSON.stringify(o) });
    assert.equal(r.code, 0, r.stderr);
  }
  for (const name of ['shell', 'multi', 'cat', 'web']) await running(name);
  await waitFor('multi', 'with its done container terminated', (p) => (p.status?.containerStatuses ?? []).some((s: any) => s.name === 'done' && s.state?.terminated));
  await waitFor('pending', 'waiting for its image', (p) => p.status?.containerStatuses?.[0]?.state?.waiting !== undefined);
});

after(async () => {
  for (const p of background) if (p.exitCode === null) p.kill('SIGKILL');
  // pods first (the kubelet stops their containers), then the kubelet, the runtime and the server
  if (c && kubelet) c.kubectl(['delete', 'pods', '--all', '--wait=true', '--timeout=60s']);
  const k = kubelet;
  kubelet = undefined;
  await stopProcess(k);
  await ctd?.stop();
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('kubectl exec runs a command in the container: 1.33 and 1.32 (WebSocket refused by containerd 1.6, then SPDY) and 1.27 (SPDY)', () => {
  for (const version of ['1.33', '1.32', '1.27']) {
    const r = c.kubectl(['exec', 'shell', '--', 'echo', 'hi', version], { version });
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, `hi ${version}\n`, ''], version);
  }
  // what 1.33 does: the WebSocket upgrade reaches containerd, which knows no v5.channel.k8s.io and
  // answers 403; kubectl takes that for an upgrade failure and goes on with SPDY
  const v = c.kubectl(['exec', 'shell', '-v=6', '--', 'true'], { version: '1.33' });
  assert.equal(v.code, 0, v.stderr);
  assert.match(v.stderr, /RemoteCommand fallback: unable to upgrade streaming request: websocket: bad handshake \(403 Forbidden\)/);
  assert.match(v.stderr, /verb="POST" url="https:\/\/127\.0\.0\.1:\d+\/api\/v1\/namespaces\/default\/pods\/shell\/exec\?command=true&container=main&stderr=true&stdout=true" status="101 Switching Protocols"/);
});

test('kubectl exec: the exit code, stdin, stdout and stderr apart, megabytes both ways', async () => {
  for (const version of ['1.33', '1.27']) {
    const r = c.kubectl(['exec', 'shell', '--', 'sh', '-c', 'exit 3'], { version });
    assert.deepEqual([r.code, r.stdout, r.stderr], [3, '', 'command terminated with exit code 3\n'], version);
    const cat = c.kubectl(['exec', '-i', 'shell', '--', 'cat'], { version, input: 'data\nmore data\n' });
    assert.deepEqual([cat.code, cat.stdout], [0, 'data\nmore data\n'], `${version}: ${cat.stderr}`);
  }
  const both = c.kubectl(['exec', 'shell', '--', 'sh', '-c', 'echo out; echo err >&2']);
  assert.deepEqual([both.code, both.stdout, both.stderr], [0, 'out\n', 'err\n']);
  // 4 MiB in (checked by the container's md5sum), 8 MB out
  const input = randomBytes(4 << 20).toString('base64');
  const sum = c.kubectl(['exec', '-i', 'shell', '--', 'busybox', 'md5sum'], { input });
  assert.equal(sum.code, 0, sum.stderr);
  assert.equal(sum.stdout, `${createHash('md5').update(input).digest('hex')}  -\n`);
  // (kubectlAsync: more output than spawnSync buffers)
  const big = await c.kubectlAsync(['exec', 'shell', '--', 'busybox', 'head', '-c', '8000000', '/dev/zero']);
  assert.equal(big.code, 0, big.stderr);
  assert.equal(big.stdout.length, 8_000_000);
});

test('kubectl cp: a file and a directory into the container and back (tar over exec, both ways), 1.33 and 1.27', async () => {
  const local = mkdtempSync(join(tmpdir(), 'keelson-cp-'));
  try {
    const tree = join(local, 'tree');
    mkdirSync(join(tree, 'sub'), { recursive: true });
    const blob = randomBytes(300_000);
    writeFileSync(join(local, 'one.bin'), blob);
    writeFileSync(join(tree, 'a.txt'), 'alpha\n');
    writeFileSync(join(tree, 'sub', 'b.txt'), 'beta\n');
    for (const version of ['1.33', '1.27']) {
      const dest = `/tmp/cp-${version}`;
      const mk = c.kubectl(['exec', 'shell', '--', 'mkdir', '-p', dest], { version });
      assert.equal(mk.code, 0, mk.stderr);
      const up = c.kubectl(['cp', join(local, 'one.bin'), `default/shell:${dest}/one.bin`, '-c', 'main'], { version });
      assert.equal(up.code, 0, `${version}: ${up.stderr}`);
      const sum = c.kubectl(['exec', 'shell', '--', 'busybox', 'md5sum', `${dest}/one.bin`], { version });
      assert.equal(sum.stdout, `${createHash('md5').update(blob).digest('hex')}  ${dest}/one.bin\n`, version);
      const upDir = c.kubectl(['cp', tree, `shell:${dest}/tree`], { version });
      assert.equal(upDir.code, 0, `${version}: ${upDir.stderr}`);
      const ls = c.kubectl(['exec', 'shell', '--', 'sh', '-c', `cat ${dest}/tree/a.txt ${dest}/tree/sub/b.txt`], { version });
      assert.equal(ls.stdout, 'alpha\nbeta\n', version);
      // and back out, a file and the directory
      const back = join(local, `back-${version}`);
      const down = c.kubectl(['cp', `shell:${dest}/one.bin`, `${back}.bin`], { version });
      assert.equal(down.code, 0, `${version}: ${down.stderr}`);
      assert.ok(readFileSync(`${back}.bin`).equals(blob), version);
      const downDir = c.kubectl(['cp', `shell:${dest}/tree`, back], { version });
      assert.equal(downDir.code, 0, `${version}: ${downDir.stderr}`);
      assert.equal(readFileSync(join(back, 'sub', 'b.txt'), 'utf8'), 'beta\n', version);
    }
    // (a path that is not there is not tested: busybox tar still writes an empty archive, which
    // ends kubectl's untar, so kubectl may exit 0, before tar's complaint and exit status arrive,
    // as it does against any Kubernetes)
  } finally {
    rmSync(local, { recursive: true, force: true });
  }
});

test('kubectl debug node/<node>: a pod on the node in its host namespaces, the host\'s root at /host', async () => {
  const marker = join(dir, 'debug-marker');
  writeFileSync(marker, 'seen from the node\n');
  const d = c.kubectl(['debug', `node/${NODE}`, `--image=${BUSYBOX}`, '--image-pull-policy=IfNotPresent', '--', 'sh', '-c', `cat /host${marker}; sleep 3600`]);
  assert.equal(d.code, 0, d.stderr);
  const name = /Creating debugging pod (\S+) with container debugger on node/.exec(d.stdout + d.stderr)?.[1];
  assert.ok(name, d.stdout + d.stderr);
  const p = await running(name!);
  assert.equal(p.spec.nodeName, NODE);
  assert.equal(p.spec.hostNetwork, true);
  assert.equal(p.spec.hostPID, true);
  await until('the host\'s file in the debug pod\'s log', async () => {
    const l = await c.kubectlAsync(['logs', name!]);
    return l.stdout.includes('seen from the node') ? l : undefined;
  });
  // (in the host's PID namespace: the node's processes are visible, the kubelet's among them)
  const ps = c.kubectl(['exec', name!, '--', 'sh', '-c', 'cat /proc/*/cmdline 2>/dev/null | tr "\\0" " "']);
  assert.equal(ps.code, 0, ps.stderr);
  assert.match(ps.stdout, /keelson kubelet/);
  const del = c.kubectl(['delete', 'pod', name!, '--wait=false']);
  assert.equal(del.code, 0, del.stderr);
});

test('kubectl exec -it: a terminal in the container (kubectl run under script(1) for a terminal of its own)', () => {
  const r = spawnSync('script', ['-qec', `${kubectlBinary('1.33')} exec -it shell -- sh -c 'tty; echo done'`, '/dev/null'], {
    env: { PATH: process.env.PATH ?? '', HOME: c.home, KUBECONFIG: c.kubeconfig, },
    encoding: 'utf8',
    input: '',
    timeout: 60_000,
  });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  // (a terminal's lines end \r\n; the terminal may echo what script(1) makes of its empty input, ^@)
  assert.match(r.stdout, /\/dev\/pts\/\d+\r\n(\^@)?done\r\n/);
});

test('kubectl exec -c picks a container of a pod of several; a container that is not running gets the kubelet\'s error', () => {
  const b = c.kubectl(['exec', 'multi', '-c', 'b', '--', 'sh', '-c', 'echo $WHO']);
  assert.deepEqual([b.code, b.stdout], [0, 'b\n'], b.stderr);
  const first = c.kubectl(['exec', 'multi', '--', 'sh', '-c', 'echo $WHO']);
  assert.deepEqual([first.code, first.stdout, first.stderr], [0, 'a\n', 'Defaulted container "a" out of: a, b, done\n']);
  for (const version of ['1.33', '1.32', '1.27']) {
    // the kubelet's GetExec finds no running container: 500, its text echoed by the API server
    const done = c.kubectl(['exec', 'multi', '-c', 'done', '--', 'ls'], { version });
    assert.deepEqual([done.code, done.stderr], [1, 'error: unable to upgrade connection: container not found ("done")\n'], version);
    // a pod that is not running (its image is not there): the same, for its container
    const pending = c.kubectl(['exec', 'pending', '--', 'ls'], { version });
    assert.deepEqual([pending.code, pending.stderr], [1, 'error: unable to upgrade connection: container not found ("main")\n'], version);
  }
  // a container the pod does not have is the API server's 400, before any kubelet
  const zz = c.kubectl(['exec', 'multi', '-c', 'zz', '--', 'ls']);
  assert.equal(zz.code, 1);
  assert.match(zz.stderr, /container zz is not valid for pod multi/);
});

/** kubectl port-forward in the background until it says it forwards; its process */
async function portForward(version: string, args: string[], localPort: number): Promise<ChildProcess> {
  const { proc, out, err } = c.kubectlSpawn(['port-forward', ...args], { version });
  background.add(proc);
  await until(`port-forward ${version} listening`, () => out().includes(`Forwarding from 127.0.0.1:${localPort} ->`) || (proc.exitCode !== null ? Promise.reject(new Error(`kubectl port-forward exited: ${err()}`)) : undefined), 30_000);
  return proc;
}

function readAll(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port });
    let b = '';
    s.setTimeout(15_000, () => s.destroy(new Error('no answer through the forwarded port')));
    s.on('data', (d) => (b += d));
    s.on('end', () => resolve(b));
    s.on('error', reject);
  });
}

test('kubectl port-forward: a TCP connection to the local port reaches the container\'s port (1.33, 1.32: their WebSocket tunnel refused, then SPDY; 1.27)', async () => {
  for (const version of ['1.33', '1.32', '1.27']) {
    const local = await freePort();
    const proc = await portForward(version, ['pod/shell', `${local}:8080`], local);
    try {
      assert.equal(await readAll(local), 'pong\n', version);
      assert.equal(await readAll(local), 'pong\n', `${version}, a second connection`);
    } finally {
      proc.kill('SIGTERM');
      background.delete(proc);
    }
  }
  // a Service: kubectl picks one of its pods and maps the port (svc/web's 80 is the pod's named port http, 8080)
  for (const target of [['svc/web', '80']] as const) {
    const local = await freePort();
    const proc = await portForward('1.33', [target[0], `${local}:${target[1]}`], local);
    try {
      const body = await new Promise<string>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port: local, path: '/hello.txt' }, (res) => {
          let b = '';
          res.on('data', (d) => (b += d));
          res.on('end', () => resolve(b));
        }).on('error', reject);
      });
      assert.equal(body, 'hello\n', target[0]);
    } finally {
      proc.kill('SIGTERM');
      background.delete(proc);
    }
  }
  // a pod that is not running: kubectl's own check
  const r = c.kubectl(['port-forward', 'pending', `${await freePort()}:80`]);
  assert.deepEqual([r.code, r.stderr], [1, 'error: unable to forward port because pod is not running. Current status=Pending\n']);
});

test('kubectl attach -i: the container\'s stdin and stdout (stdinOnce: its stdin closes with the first attach, and it ends)', async () => {
  const r = c.kubectl(['attach', '-i', 'cat'], { input: 'hello\nattached\n' });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'hello\nattached\n');
  await waitFor('cat', 'Succeeded', (p) => p.status?.phase === 'Succeeded');
  // attach finds no running container: the kubelet's GetAttach words it by the pod's full name
  for (const version of ['1.33', '1.27']) {
    const a = c.kubectl(['attach', 'pending'], { version });
    assert.equal(a.code, 1, version);
    assert.match(a.stderr, /error: unable to upgrade connection: container main not found in pod pending_default\n$/, version);
  }
});

/** an HTTP/1.1 upgrade request over TLS as the admin; everything the server sends until it closes */
function upgrade(port: number, path: string, headers: Record<string, string>, method = 'GET'): Promise<{ head: string; rest: Buffer }> {
  const t = c.credentials;
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, ca: t.ca, cert: t.cert, key: t.key, servername: 'localhost', rejectUnauthorized: false }, () => {
      const lines = Object.entries({ Host: `127.0.0.1:${port}`, ...headers }).map(([k, v]) => `${k}: ${v}\r\n`);
      s.write(`${method} ${path} HTTP/1.1\r\n${lines.join('')}\r\n`);
    });
    let buf = Buffer.alloc(0);
    s.setTimeout(20_000, () => s.destroy(new Error(`no end of ${path}: ${buf.toString('latin1')}`)));
    s.on('data', (d: Buffer) => (buf = Buffer.concat([buf, d])));
    s.on('error', reject);
    s.on('close', () => {
      const i = buf.indexOf('\r\n\r\n');
      resolve({ head: buf.subarray(0, i < 0 ? buf.length : i).toString('latin1'), rest: i < 0 ? Buffer.alloc(0) : buf.subarray(i + 4) });
    });
  });
}

/** the messages of unmasked WebSocket frames, joined by k8s channel (the first byte of each binary message); the close frame's code */
function channels(frames: Buffer): { data: Map<number, Buffer>; text(ch: number): string | undefined; close?: number } {
  const data = new Map<number, Buffer>();
  let close: number | undefined;
  let i = 0;
  while (i + 2 <= frames.length) {
    const op = frames[i]! & 0x0f;
    let len = frames[i + 1]! & 0x7f;
    let at = i + 2;
    if (len === 126) {
      len = frames.readUInt16BE(at);
      at += 2;
    } else if (len === 127) {
      len = Number(frames.readBigUInt64BE(at));
      at += 8;
    }
    const payload = frames.subarray(at, at + len);
    if (op === 8) close = payload.length >= 2 ? payload.readUInt16BE(0) : 0;
    else if (payload.length) data.set(payload[0]!, Buffer.concat([data.get(payload[0]!) ?? Buffer.alloc(0), payload.subarray(1)]));
    i = at + len;
  }
  return { data, text: (ch) => data.get(ch)?.toString('utf8'), close };
}

const WS = { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' };

test('raw: both proxies pass a WebSocket upgrade through as it came (containerd speaks v4.channel.k8s.io, refuses v5 with 403); no upgrade is 400', async () => {
  const exec = '/api/v1/namespaces/default/pods/shell/exec?command=sh&command=-c&command=echo+out%3B+echo+err+%3E%262&stdout=true&stderr=true';
  const v4 = await upgrade(c.port, exec, { ...WS, 'Sec-WebSocket-Protocol': 'v4.channel.k8s.io' });
  assert.match(v4.head, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
  assert.match(v4.head, /\r\nSec-WebSocket-Protocol: v4\.channel\.k8s\.io(\r\n|$)/);
  assert.match(v4.head, /\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=(\r\n|$)/);
  const got = channels(v4.rest);
  assert.equal(got.text(1), 'out\n');
  assert.equal(got.text(2), 'err\n');
  assert.deepEqual(JSON.parse(got.text(3)!), { metadata: {}, status: 'Success' });
  assert.equal(got.close, 1000);
  // v5 (what kubectl 1.30+ asks for): containerd 1.6's 403, echoed by the kubelet and the API server
  const v5 = await upgrade(c.port, exec, { ...WS, 'Sec-WebSocket-Protocol': 'v5.channel.k8s.io' });
  assert.match(v5.head, /^HTTP\/1\.1 403 Forbidden\r\n/);
  assert.match(v5.head, /\r\nConnection: close(\r\n|$)/);
  // no upgrade asked for: kube-apiserver's UpgradeAwareHandler with UpgradeRequired
  const plain = await c.raw('POST', '/api/v1/namespaces/default/pods/shell/exec?command=ls&stdout=true');
  assert.equal(expectStatus(plain, 400, 'BadRequest').message, 'Upgrade request required');
  // a WebSocket port forward naming its port goes through too (v4: a data and an error channel per
  // port, each opened with the port, little-endian)
  const pf = await upgrade(c.port, '/api/v1/namespaces/default/pods/shell/portforward?ports=8080', { ...WS, 'Sec-WebSocket-Protocol': 'v4.channel.k8s.io' });
  assert.match(pf.head, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
  const fwd = channels(pf.rest).data.get(0)!;
  assert.equal(fwd.readUInt16LE(0), 8080);
  assert.equal(fwd.subarray(2).toString(), 'pong\n');
});

/** a request to the kubelet's port as the cluster admin (authorized by SubjectAccessReview) */
function kubeletRequest(method: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  const t = c.credentials;
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: kubeletPort, method, path, headers, cert: t.cert, key: t.key, rejectUnauthorized: false, agent: false }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the kubelet\'s port: /run runs a command (ExecSync), the streams\' checks in the kubelet\'s words, and its own upgrade to the runtime', async () => {
  const run = await kubeletRequest('POST', '/run/default/shell/main?cmd=echo%20hi%20there');
  assert.deepEqual([run.status, run.text, run.headers['content-type']], [200, 'hi there\n', 'application/json']);
  const failed = await kubeletRequest('POST', '/run/default/shell/main?cmd=ls%20/nonexistent');
  assert.deepEqual([failed.status, failed.text], [500, "command 'ls /nonexistent' exited with 1: ls: /nonexistent: No such file or directory\n"]);
  assert.deepEqual(Object.values(await kubeletRequest('POST', '/run/default/multi/done?cmd=ls')).slice(0, 2), [500, 'container not found ("done")']);
  assert.deepEqual(Object.values(await kubeletRequest('POST', '/run/default/nope/main?cmd=ls')).slice(0, 2), [404, 'pod does not exist']);
  // exec: the streams first, then the pod, then the container; a request that is no upgrade is the proxy's 500
  const none = await kubeletRequest('POST', '/exec/default/shell/main?command=ls');
  assert.deepEqual([none.status, none.text], [400, 'you must specify at least 1 of stdin, stdout, stderr']);
  assert.deepEqual(Object.values(await kubeletRequest('POST', '/exec/default/nope/main?command=ls&output=1')).slice(0, 2), [404, 'pod does not exist']);
  const gone = await kubeletRequest('POST', '/exec/default/multi/done?command=ls&output=1', { Connection: 'Upgrade', Upgrade: 'SPDY/3.1' });
  assert.deepEqual([gone.status, gone.text], [500, 'container not found ("done")']);
  const noUpgrade = await kubeletRequest('POST', '/exec/default/shell/main?command=ls&output=1');
  assert.deepEqual([noUpgrade.status, noUpgrade.text], [500, 'Upgrade request required\n']);
  // portForward: a WebSocket names its ports (portforward.NewV4Options), a UID must be the pod's
  const ws = { Connection: 'Upgrade', Upgrade: 'websocket' };
  assert.deepEqual(Object.values(await kubeletRequest('GET', '/portForward/default/shell', ws)).slice(0, 2), [400, 'query parameter "port" is required']);
  assert.deepEqual(Object.values(await kubeletRequest('GET', '/portForward/default/shell?port=x,1', ws)).slice(0, 2), [400, 'unable to parse "x,1" as a port: strconv.ParseUint: parsing "x": invalid syntax']);
  assert.deepEqual(Object.values(await kubeletRequest('GET', '/portForward/default/shell?port=0', ws)).slice(0, 2), [400, 'port "0" must be > 0']);
  assert.deepEqual(Object.values(await kubeletRequest('GET', '/portForward/default/shell/not-its-uid', { Connection: 'Upgrade', Upgrade: 'SPDY/3.1' })).slice(0, 2), [404, 'pod not found']);
  // the kubelet's own proxy to containerd: a v4 WebSocket exec straight at the kubelet
  const direct = await upgrade(kubeletPort, '/exec/default/shell/main?command=echo&command=direct&output=1', { ...WS, 'Sec-WebSocket-Protocol': 'v4.channel.k8s.io' });
  assert.match(direct.head, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
  assert.equal(channels(direct.rest).text(1), 'direct\n');
});

test('pods/proxy and services/proxy reach the pod\'s web server: kubectl get --raw (1.33, 1.32, 1.27), kubectl proxy, the request as the backend sees it, links and redirects rewritten', async () => {
  const podBase = '/api/v1/namespaces/default/pods/web:8080/proxy';
  const svcBase = '/api/v1/namespaces/default/services/web:http/proxy';
  await until('the Service has its endpoint', async () => ((await c.raw('GET', `${svcBase}/hello.txt`)).status === 200 ? true : undefined));
  for (const version of ['1.33', '1.32', '1.27']) {
    for (const p of [`${podBase}/hello.txt`, '/api/v1/namespaces/default/pods/web/proxy/hello.txt', `${svcBase}/hello.txt`, '/api/v1/namespaces/default/services/web:80/proxy/hello.txt']) {
      const r = c.kubectl(['get', '--raw', p], { version });
      assert.deepEqual([r.code, r.stdout, r.stderr], [0, 'hello\n', ''], `${version} ${p}`);
    }
  }
  // the request as the backend gets it: method, path and query, body; the client's credentials gone,
  // X-Forwarded-For and X-Forwarded-Uri added; the backend's CORS headers removed, its others kept
  for (const base of [podBase, svcBase]) {
    const r = await c.raw('POST', `${base}/cgi-bin/echo?a=1&b=two`, { body: 'payload', headers: { 'content-type': 'text/plain', 'X-Forwarded-For': '192.0.2.7', authorization: 'Bearer unused-the-client-certificate-authenticates' } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.text, `method=POST uri=/cgi-bin/echo?a=1&b=two\nxfu=${base}/cgi-bin/echo xff=192.0.2.7, 127.0.0.1 auth=\nbody=payload\n`);
    assert.equal(r.headers['x-backend'], 'yes');
    assert.equal(r.headers['access-control-allow-origin'], undefined);
  }
  // a redirect to the backend's own path comes back through the proxy
  const go = await c.raw('GET', `${podBase}/cgi-bin/go`);
  assert.equal(go.status, 302);
  assert.equal(go.headers.location, `${podBase}/hello.txt`);
  // a page's absolute links go through the proxy; relative ones and other hosts' stay
  const page = await c.raw('GET', `${svcBase}/`);
  assert.equal(page.status, 200);
  assert.equal(page.text, WEB_PAGE.replace('href="/style.css"', `href="${svcBase}/style.css"`).replace('href="/hello.txt"', `href="${svcBase}/hello.txt"`).replace('action="/cgi-bin/echo"', `action="${svcBase}/cgi-bin/echo"`));
  assert.equal(page.headers['content-length'], String(Buffer.byteLength(page.text)));
  // a gzipped page is rewritten too, and sent gzipped
  const zipped = await c.raw('GET', `${svcBase}/z.html`, { headers: { 'accept-encoding': 'gzip' } });
  assert.equal(zipped.status, 200);
  assert.equal(zipped.headers['content-encoding'], 'gzip');
  assert.equal(zipped.headers['content-length'], String(zipped.body.length));
  assert.equal(gunzipSync(zipped.body).toString(), page.text);
  // the proxy's root redirects to itself with a slash; a path that climbs stays within the backend
  const root = await c.raw('GET', `${podBase}?x=1`);
  assert.deepEqual([root.status, root.headers.location], [301, `${podBase}/?x=1`]);
  assert.equal((await c.raw('GET', `${podBase}/sub/../../../hello.txt`)).text, 'hello\n');
  // nothing listening: 503 with Go's words
  const refused = await c.raw('GET', '/api/v1/namespaces/default/pods/web:9999/proxy/');
  assert.equal(expectStatus(refused, 503, 'ServiceUnavailable').message, `error trying to reach service: dial tcp ${(await podJSON('web')).status.podIP}:9999: connect: connection refused`);
  // the node: its kubelet is at 127.0.0.1, which kube-apiserver does not proxy to
  assert.equal(expectStatus(await c.raw('GET', `/api/v1/nodes/${NODE}/proxy/healthz`), 400, 'BadRequest').message, 'address not allowed');
  // kubectl proxy, as people browse a service: links that work through it
  const local = await freePort();
  const proxy = spawn(kubectlBinary(), ['proxy', '--address', '127.0.0.1', '--port', String(local)], { ...kubectlArgv0(), env: { PATH: process.env.PATH ?? '', HOME: dir, KUBECONFIG: c.kubeconfig }, stdio: 'ignore' });
  background.add(proxy);
  try {
    const get = (p: string) => new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port: local, path: p }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      });
      req.on('error', reject);
    });
    const index = await until('kubectl proxy serves', async () => get(`${svcBase}/`).catch(() => undefined));
    assert.equal(index.status, 200);
    const link = /<a href="([^"]+)">hello<\/a>/.exec(index.text)?.[1];
    assert.equal(link, `${svcBase}/hello.txt`);
    assert.deepEqual(await get(link!), { status: 200, text: 'hello\n' });
  } finally {
    proxy.kill('SIGTERM');
    background.delete(proxy);
  }
});

test('@kubernetes/client-node: Exec (WebSocket, v4.channel.k8s.io through both proxies), its exit status, Log, and PortForward', async () => {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(c.kubeconfig);
  const collect = () => {
    const chunks: Buffer[] = [];
    const w = new Writable({ write(chunk, _enc, cb) { chunks.push(Buffer.from(chunk)); cb(); } });
    return { w, text: () => Buffer.concat(chunks).toString() };
  };
  const exec = new k8s.Exec(kc);
  const run = async (command: string[], stdin?: string) => {
    const out = collect();
    const err = collect();
    let protocol = '';
    const status = await new Promise<k8s.V1Status>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`exec ${command.join(' ')}: no status in 15 s; out ${JSON.stringify(out.text())} err ${JSON.stringify(err.text())}`)), 15_000);
      exec.exec('default', 'shell', 'main', command, out.w, err.w, stdin === undefined ? null : Readable.from([Buffer.from(stdin)]), false, (st) => (clearTimeout(t), resolve(st)))
        .then((ws) => (protocol = ws.protocol))
        .catch((e) => (clearTimeout(t), reject(e)));
    });
    // (client-node offers v5 first; containerd 1.6 answers with the newest it speaks)
    assert.equal(protocol, 'v4.channel.k8s.io');
    // (the status comes on its channel after the output)
    return { status, out: out.text(), err: err.text() };
  };
  const ok = await run(['sh', '-c', 'echo out; echo err >&2']);
  assert.equal(ok.status.status, 'Success');
  assert.equal(ok.out, 'out\n');
  assert.equal(ok.err, 'err\n');
  const failed = await run(['sh', '-c', 'exit 3']);
  assert.equal(failed.status.status, 'Failure');
  assert.equal(failed.status.reason, 'NonZeroExitCode');
  assert.deepEqual(failed.status.details?.causes, [{ reason: 'ExitCode', message: '3' }]);
  // Log: the container's output so far
  const log = collect();
  const ended = new Promise((r) => log.w.once('finish', r));
  await new k8s.Log(kc).log('default', 'web', 'main', log.w, { follow: false, timestamps: false });
  await ended;
  assert.equal(log.text(), 'serving /www\n');
  // PortForward: the shell pod's port 8080 answers pong
  const pf = collect();
  const ws = await new k8s.PortForward(kc).portForward('default', 'shell', [8080], pf.w, null, Readable.from([Buffer.from('hi\n')]));
  await until('pong through the port forward', async () => (pf.text().includes('pong') ? true : undefined), 10_000);
  (typeof ws === 'function' ? ws() : ws)?.close();
});

test('grpc probes: a readiness probe calls grpc.health.v1.Health/Check; SERVING is ready, NOT_SERVING is not, with the kubelet\'s words', async () => {
  // the health server is this test's, on 127.0.0.1; the pod is on the host's network, so its IP
  // (the node's, 127.0.0.1) is where the kubelet probes
  let serving = 1;
  const seen: string[] = [];
  const HealthReq = protobuf.Root.fromJSON({ nested: { Req: { fields: { service: { type: 'string', id: 1 } } }, Res: { fields: { status: { type: 'int32', id: 1 } } } } });
  const Req = HealthReq.lookupType('Req');
  const Res = HealthReq.lookupType('Res');
  const server = new grpc.Server();
  server.addService({
    Check: {
      path: '/grpc.health.v1.Health/Check', requestStream: false, responseStream: false,
      requestDeserialize: (b: Buffer) => Req.toObject(Req.decode(b), { defaults: true }),
      responseSerialize: (o: any) => Buffer.from(Res.encode(Res.create(o)).finish()),
      requestSerialize: (o: any) => Buffer.from(Req.encode(Req.create(o)).finish()),
      responseDeserialize: (b: Buffer) => Res.decode(b),
    },
  } as grpc.ServiceDefinition, {
    Check: (call: grpc.ServerUnaryCall<any, any>, cb: grpc.sendUnaryData<any>) => {
      seen.push(`${call.request.service}|${call.metadata.get('user-agent')[0]}`);
      cb(null, { status: serving });
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve, reject) => server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));
  try {
    apply('grpc', {
      hostNetwork: true,
      containers: [container('main', ['sleep', '3600'], { readinessProbe: { grpc: { port, service: 'keelson.test' }, periodSeconds: 1, failureThreshold: 1 } })],
    });
    const ready = (want: boolean) => waitFor('grpc', want ? 'ready' : 'not ready', (p) => p.status?.containerStatuses?.[0]?.ready === want, 30_000);
    await ready(true);
    assert.match(seen[0]!, /^keelson\.test\|kube-probe\/1\.33 grpc-node-js\//);
    serving = 2;
    await ready(false);
    await until('the Unhealthy event', async () => {
      const r = c.kubectl(['get', 'events', '--field-selector', 'involvedObject.name=grpc,reason=Unhealthy', '-o', 'jsonpath={.items[*].message}']);
      return r.stdout.includes('Readiness probe failed: service unhealthy (responded with "NOT_SERVING")') ? true : undefined;
    }, 15_000);
    serving = 1;
    await ready(true);
  } finally {
    server.forceShutdown();
    c.kubectl(['delete', 'pod', 'grpc', '--wait=false']);
  }
});

test('the kubelet\'s resource usage: /metrics/resource and /stats/summary give the node\'s and each running container\'s CPU and memory (what metrics-server reads)', async () => {
  const m = await kubeletRequest('GET', '/metrics/resource');
  assert.equal(m.status, 200, m.text);
  assert.match(String(m.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  assert.match(m.text, /^# HELP node_cpu_usage_seconds_total \[STABLE\] Cumulative cpu time consumed by the node in core-seconds\n# TYPE node_cpu_usage_seconds_total counter\nnode_cpu_usage_seconds_total [\d.e+]+ \d{13}$/m);
  // (figures as Go's Prometheus text writes them: from 1e+06 up in exponent form)
  assert.match(m.text, /^node_memory_working_set_bytes [1-9](\.\d+)?e\+\d\d \d{13}$/m);
  assert.match(m.text, /^container_cpu_usage_seconds_total\{container="main",namespace="default",pod="shell"\} [\d.e+-]+ \d{13}$/m);
  assert.match(m.text, /^container_memory_working_set_bytes\{container="main",namespace="default",pod="shell"\} ([1-9]\d{0,5}|[1-9](\.\d+)?e\+\d\d) \d{13}$/m);
  assert.match(m.text, /^container_start_time_seconds\{container="main",namespace="default",pod="shell"\} [1-9](\.\d+)?e\+09 \d{13}$/m);
  assert.match(m.text, /^pod_memory_working_set_bytes\{namespace="default",pod="multi"\} ([1-9]\d{0,5}|[1-9](\.\d+)?e\+\d\d) \d{13}$/m);
  assert.match(m.text, /^resource_scrape_error 0$/m);
  // the summary: a second sample, so CPU rates are there
  await kubeletRequest('GET', '/stats/summary');
  const s = await kubeletRequest('GET', '/stats/summary?only_cpu_and_memory=true');
  assert.equal(s.status, 200, s.text);
  const summary = JSON.parse(s.text);
  assert.equal(summary.node.nodeName, NODE);
  assert.ok(summary.node.cpu.usageCoreNanoSeconds > 0 && summary.node.cpu.usageNanoCores >= 0, JSON.stringify(summary.node.cpu));
  assert.ok(summary.node.memory.workingSetBytes > 0 && summary.node.memory.availableBytes > 0);
  const shellPod = summary.pods.find((p: any) => p.podRef.name === 'shell');
  assert.equal(shellPod.podRef.uid, (await podJSON('shell')).metadata.uid);
  assert.deepEqual(shellPod.containers.map((x: any) => x.name), ['main']);
  assert.ok(shellPod.containers[0].memory.workingSetBytes > 0 && shellPod.memory.workingSetBytes > 0);
  assert.ok(typeof shellPod.containers[0].cpu.usageCoreNanoSeconds === 'number');
  // (GET only)
  assert.equal((await kubeletRequest('POST', '/stats/summary')).status, 405);
  // cAdvisor's series, as Prometheus scrapes /metrics/cadvisor: id the container's cgroup (under its
  // pod's), name the runtime's ID, CPU time as cpu="total", figures in Go's float format
  const shell = await podJSON('shell');
  const shellID = shell.status.containerStatuses[0].containerID.split('://')[1];
  const cad = await kubeletRequest('GET', '/metrics/cadvisor');
  assert.equal(cad.status, 200, cad.text);
  assert.match(String(cad.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  assert.match(cad.text, /^# TYPE machine_cpu_cores gauge\nmachine_cpu_cores\{boot_id="[^"]*",machine_id="[^"]*",system_uuid="[^"]*"\} [1-9]\d* \d{13}$/m);
  assert.match(cad.text, /^machine_memory_bytes\{[^}]*\} [1-9][\d.e+]* \d{13}$/m);
  assert.match(cad.text, /^container_cpu_usage_seconds_total\{container="",cpu="total",id="\/",image="",name="",namespace="",pod=""\} [\d.e+]+ \d{13}$/m);
  assert.match(cad.text, new RegExp(`^container_memory_working_set_bytes\\{container="main",id="/[^"]*/pod${shell.metadata.uid}/${shellID}",image="[^"]*busybox[^"]*",name="${shellID}",namespace="default",pod="shell"\\} [1-9][\\d.e+]* \\d{13}$`, 'm'));
  assert.match(cad.text, new RegExp(`^container_cpu_usage_seconds_total\\{container="main",cpu="total",id="/[^"]*/pod${shell.metadata.uid}/${shellID}",[^}]*pod="shell"\\} [\\d.e+-]+ \\d{13}$`, 'm'));
  assert.match(cad.text, /^# TYPE container_start_time_seconds gauge$/m);
});

test('a stream does not hold up the API server\'s graceful end (a hijacked connection is no request in flight); last, as it stops the server', async () => {
  const { proc } = c.kubectlSpawn(['exec', 'shell', '--', 'sleep', '120']);
  background.add(proc);
  await until('the exec runs', () => (c.kubectl(['exec', 'shell', '--', 'ps']).stdout.includes('sleep 120') ? true : undefined));
  const t0 = Date.now();
  assert.equal(await c.stopProcess(), 0);
  assert.ok(Date.now() - t0 < 10_000, `the server took ${Date.now() - t0} ms to stop`);
  // its connection closed, kubectl ends
  await until('kubectl exec ends', () => (proc.exitCode !== null ? true : undefined), 15_000);
});
