// The kubelet's port and time: serveKubelet in this process over a small NodeAgentView whose
// "runtime" streaming server is a plain HTTP server here that accepts any upgrade (101) and echoes
// what it is sent. Shows, with short times:
//   - streamingConnectionIdleTimeout: a stream is closed once it has carried nothing either way for
//     the timeout; one that carries data stays open; 0 never closes one;
//   - the kubelet's 4 h bound on a request (Go's ReadTimeout/WriteTimeout; `requestMaxMs` here): a
//     request still unanswered then has its connection closed, while a stream, which Go hijacks
//     (clearing the deadlines), is not bound by it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import tls from 'node:tls';
import type { Socket } from 'node:net';
import { serveKubelet, type KubeletServing } from '../../src/cli/kubeletserving.js';
import type { NodeAgentView } from '../../src/nodeagent/server.js';
import { nopLogger } from '../../src/client/log.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** the runtime's streaming server: every upgrade is taken (101) and echoed */
const runtime = http.createServer((_req, res) => res.writeHead(400).end());
const runtimeSockets = new Set<Socket>();
runtime.on('upgrade', (req, sock: Socket, head: Buffer) => {
  runtimeSockets.add(sock);
  sock.on('close', () => runtimeSockets.delete(sock));
  sock.on('error', () => {});
  sock.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${req.headers['upgrade']}\r\n\r\n`);
  if (head.length) sock.write(head);
  sock.pipe(sock);
});
const runtimeReady = new Promise<number>((resolve) => runtime.listen(0, '127.0.0.1', () => resolve((runtime.address() as { port: number }).port)));

const servers: KubeletServing[] = [];
after(async () => {
  for (const s of servers) await s.close();
  for (const s of runtimeSockets) s.destroy();
  await new Promise((r) => runtime.close(r));
});

async function kubeletWith(o: { idleMs: number; requestMaxMs?: number }): Promise<KubeletServing> {
  const rt = await runtimeReady;
  const view: NodeAgentView = {
    nodeName: 'n',
    pods: () => [{ metadata: { namespace: 'default', name: 'p', uid: 'u' }, spec: { containers: [{ name: 'main' }] } }],
    // (never answers: a request that outlives the bound)
    runningPods: () => new Promise(() => {}),
    configz: () => ({}),
    containerLogPath: async () => ({ error: 'none', code: 404 }),
    healthChecks: () => ({}),
    streamingURL: async (kind) => `http://127.0.0.1:${rt}/${kind}/token`,
  };
  const s = await serveKubelet(
    {
      address: '127.0.0.1', port: 0, readOnlyPort: 0, healthzBindAddress: '127.0.0.1', healthzPort: 0,
      tlsCertFile: '', tlsPrivateKeyFile: '', tlsCipherSuites: [], tlsMinVersion: '', certDir: '',
      anonymousAuth: true, clientCAFile: '', webhookAuthn: false, webhookAuthnCacheTTLms: 0,
      authorizationMode: 'AlwaysAllow', authzAuthorizedTTLms: 0, authzUnauthorizedTTLms: 0,
      enableDebuggingHandlers: true, hostnames: ['localhost'], ips: ['127.0.0.1'],
      streamingConnectionIdleTimeoutMs: o.idleMs,
      requestMaxMs: o.requestMaxMs,
    },
    view,
    undefined,
    nopLogger,
  );
  servers.push(s);
  return s;
}

interface Conn {
  s: tls.TLSSocket;
  text: () => string;
  closed: () => boolean;
  close: Promise<void>;
}

/** an HTTP/1.1 request over TLS to the kubelet, its connection kept */
async function request(port: number, head: string): Promise<Conn> {
  const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
  let text = '';
  let closed = false;
  s.on('data', (d) => (text += d));
  s.on('error', () => {});
  const close = new Promise<void>((r) => s.once('close', () => ((closed = true), r())));
  await new Promise<void>((r) => s.once('secureConnect', () => r()));
  s.write(head);
  return { s, text: () => text, closed: () => closed, close };
}

async function stream(port: number, path = '/exec/default/p/main?command=cat&input=1&output=1'): Promise<Conn> {
  const c = await request(port, `GET ${path} HTTP/1.1\r\nHost: k\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n`);
  for (let i = 0; i < 100 && !c.text().includes('\r\n\r\n'); i++) await sleep(20);
  assert.match(c.text(), /^HTTP\/1\.1 101 Switching Protocols\r\n/);
  return c;
}

const within = <T>(p: Promise<T>, ms: number) => Promise.race([p.then(() => 'done' as const), sleep(ms).then(() => 'running' as const)]);

test('streamingConnectionIdleTimeout: an idle stream (exec, port forward) is closed, never before the timeout; a busy one stays open', async () => {
  const k = await kubeletWith({ idleMs: 300 });
  for (const path of ['/exec/default/p/main?command=cat&input=1&output=1', '/portForward/default/p']) {
    const idle = await stream(k.port, path);
    const started = Date.now();
    assert.equal(await within(idle.close, 5_000), 'done', `${path}: the idle stream was not closed`);
    assert.ok(Date.now() - started >= 250, `${path}: closed after ${Date.now() - started} ms`);
  }
  // data in one direction is echoed back: both directions carry it; three timeouts long
  const busy = await stream(k.port);
  const before = busy.text().length;
  for (let i = 0; i < 18; i++) {
    busy.s.write(`x${i}\n`);
    await sleep(50);
    assert.equal(busy.closed(), false, 'the busy stream was closed');
  }
  assert.ok(busy.text().length > before, 'nothing came back');
  // and once it stops, it is closed
  assert.equal(await within(busy.close, 5_000), 'done');
  // the runtime's side goes with it
  for (let i = 0; i < 50 && runtimeSockets.size > 0; i++) await sleep(20);
  assert.equal(runtimeSockets.size, 0);
});

test('streamingConnectionIdleTimeout 0: an idle stream is never closed', async () => {
  const k = await kubeletWith({ idleMs: 0, requestMaxMs: 200 });
  const idle = await stream(k.port);
  assert.equal(await within(idle.close, 1_000), 'running');
  idle.s.write('still there\n');
  for (let i = 0; i < 50 && !idle.text().includes('still there\n'); i++) await sleep(20);
  assert.match(idle.text(), /still there\n$/);
  idle.s.destroy();
});

test('a request not answered within the bound (the kubelet\'s 4 h) has its connection closed; a stream is exempt', async () => {
  const k = await kubeletWith({ idleMs: 0, requestMaxMs: 300 });
  const slow = await request(k.port, 'GET /runningpods/ HTTP/1.1\r\nHost: k\r\n\r\n');
  const started = Date.now();
  assert.equal(await within(slow.close, 5_000), 'done', 'the unanswered request was not cut');
  assert.ok(Date.now() - started >= 250);
  assert.equal(slow.text(), '');
  // answered requests go on on the same connection past the bound
  const quick = await request(k.port, 'GET /healthz HTTP/1.1\r\nHost: k\r\n\r\n');
  await sleep(400);
  quick.s.write('GET /healthz HTTP/1.1\r\nHost: k\r\n\r\n');
  for (let i = 0; i < 50 && (quick.text().match(/200 OK/g) ?? []).length < 2; i++) await sleep(20);
  assert.equal((quick.text().match(/200 OK/g) ?? []).length, 2, quick.text());
  quick.s.destroy();
  // (the stream above, in the idle-timeout-0 test, outlived its 200 ms bound: streams are exempt)
});
