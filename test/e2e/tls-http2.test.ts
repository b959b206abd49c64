// The secure port end to end: TLS versions and cipher suites as negotiated on the wire, SNI
// certificates, HTTP/2 beside HTTP/1.1 (ALPN), kubectl 1.27, 1.32 and 1.33 on h2, client-node on
// HTTP/1.1, client certificates, impersonation, Warning headers, watches and gzip over h2, a
// graceful shutdown while an h2 watch is open, and the start-up errors of bad TLS flags.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http2 from 'node:http2';
import tls from 'node:tls';
import net from 'node:net';
import zlib from 'node:zlib';
import { startCluster, kubectlArgv0, kubectlBinary, KEELSON, ROOT, type Cluster } from './harness.js';
import { createCA, ensurePKI, issueServingCert, type CertKey } from '../../src/apiserver/pki.js';

interface H2Response {
  status: number;
  headers: http2.IncomingHttpHeaders;
  raw: string[];
  body: Buffer;
  json(): any;
}

function h2req(s: http2.ClientHttp2Session, method: string, path: string, opts: { headers?: Record<string, string | string[]>; body?: unknown } = {}): Promise<H2Response> {
  return new Promise((resolve, reject) => {
    const headers: http2.OutgoingHttpHeaders = { ':method': method, ':path': path, ...opts.headers };
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const st = s.request(headers, { endStream: body === undefined });
    let status = 0;
    let hs: http2.IncomingHttpHeaders = {};
    let raw: string[] = [];
    const chunks: Buffer[] = [];
    st.on('response', (h: http2.IncomingHttpHeaders, _flags: number, r?: string[]) => {
      status = Number(h[':status']);
      hs = h;
      raw = r ?? [];
    });
    st.on('data', (d: Buffer) => chunks.push(d));
    st.on('end', () => {
      const b = Buffer.concat(chunks);
      resolve({ status, headers: hs, raw, body: b, json: () => JSON.parse(b.toString('utf8')) });
    });
    st.on('error', reject);
    if (body !== undefined) st.end(body);
  });
}

/** the values of a header field, one per field line */
function rawValues(raw: string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) out.push(raw[i + 1]!);
  return out;
}

function handshake(port: number, opts: tls.ConnectionOptions): Promise<{ alpn: string | false; protocol: string | null; cipher: string; cn: string; issuer: string }> {
  return new Promise((resolve, reject) => {
    const sock = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...opts }, () => {
      const peer = sock.getPeerCertificate();
      const r = { alpn: sock.alpnProtocol ?? false, protocol: sock.getProtocol(), cipher: sock.getCipher().name, cn: String(peer.subject?.CN ?? ''), issuer: String(peer.issuer?.CN ?? '') };
      sock.end();
      resolve(r);
    });
    sock.on('error', reject);
  });
}

const KUBECTLS = ['1.27', '1.32', '1.33'];

describe('secure port: TLS and HTTP/2', () => {
  let c: Cluster;
  let ca: CertKey;
  let dir: string;
  let session: http2.ClientHttp2Session;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-tls-e2e-'));
    ca = await createCA('sni-e2e-ca');
    const foo = await issueServingCert(ca, 'foo.test', { dns: ['foo.test', '*.apps.test'], ips: [] });
    const bar = await issueServingCert(ca, 'bar-cert', { dns: ['bar.test'], ips: [] });
    for (const [n, ck] of [['foo', foo], ['bar', bar]] as const) {
      writeFileSync(join(dir, `${n}.crt`), ck.certPEM);
      writeFileSync(join(dir, `${n}.key`), ck.keyPEM);
    }
    c = await startCluster({
      args: [
        `--tls-sni-cert-key=${join(dir, 'foo.crt')},${join(dir, 'foo.key')}`,
        `--tls-sni-cert-key=${join(dir, 'bar.crt')},${join(dir, 'bar.key')}:alt.test,*.bar.test`,
        '--http2-max-streams-per-connection=7',
        '--shutdown-delay-duration=1s',
      ],
    });
    session = c.http2Session();
    session.on('error', () => {});
  });
  after(async () => {
    session?.destroy();
    await c?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('ALPN: h2 first, HTTP/1.1 for clients that ask for it or for nothing; TLS 1.3 with Go\'s first suite', async () => {
    const h2 = await handshake(c.port, { ALPNProtocols: ['h2', 'http/1.1'], servername: 'localhost' });
    assert.equal(h2.alpn, 'h2');
    assert.equal(h2.protocol, 'TLSv1.3');
    assert.equal(h2.cipher, 'TLS_AES_128_GCM_SHA256');
    assert.equal((await handshake(c.port, { ALPNProtocols: ['http/1.1'] })).alpn, 'http/1.1');
    assert.equal((await handshake(c.port, {})).alpn, false);
    // TLS 1.2 with the default suites: Go's first choice for an ECDSA certificate
    const t12 = await handshake(c.port, { maxVersion: 'TLSv1.2' });
    assert.equal(t12.protocol, 'TLSv1.2');
    assert.equal(t12.cipher, 'ECDHE-ECDSA-AES128-GCM-SHA256');
    // suites Go does not enable by default are not offered
    await assert.rejects(handshake(c.port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-SHA256:DHE-RSA-AES128-GCM-SHA256' }));
  });

  test('plain HTTP to the secure port: Go\'s 400 "Client sent an HTTP request to an HTTPS server.", at once; kubectl says BadRequest instead of retrying', async () => {
    // (the request's first bytes written alone, then the rest 100 ms later, when `split` is given)
    const raw = (text: string, split?: number) =>
      new Promise<string>((resolve, reject) => {
        const sock = net.connect(c.port, '127.0.0.1', () => {
          if (split === undefined) sock.write(text);
          else {
            sock.write(text.slice(0, split));
            setTimeout(() => sock.write(text.slice(split)), 100);
          }
        });
        let got = '';
        sock.on('data', (d) => (got += d));
        sock.on('close', () => resolve(got));
        sock.on('error', reject);
        sock.setTimeout(5000, () => reject(new Error(`no answer to ${JSON.stringify(text.slice(0, 10))}`)));
      });
    for (const req of ['GET /api HTTP/1.1\r\nHost: x\r\n\r\n', 'POST /api/v1/namespaces HTTP/1.1\r\n\r\n', 'PUT /x HTTP/1.1\r\n\r\n', 'HEAD / HTTP/1.0\r\n\r\n', 'OPTIONS * HTTP/1.1\r\n\r\n']) {
      assert.equal(await raw(req), 'HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n', req);
    }
    // a request line whose first five bytes come in more than one write is still recognised
    for (const split of [1, 2, 4]) assert.equal(await raw('GET /api HTTP/1.1\r\nHost: x\r\n\r\n', split), 'HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n', `split at ${split}`);
    // anything else is a failed TLS handshake: the connection is closed with nothing said
    assert.equal(await raw('DELETE /x HTTP/1.1\r\n\r\n'), '');
    const started = Date.now();
    const k = c.kubectl(['get', 'ns', '-s', `http://127.0.0.1:${c.port}`]);
    assert.equal(k.code, 1);
    assert.match(k.stderr, /BadRequest|the server rejected our request for an unknown reason/);
    assert.ok(Date.now() - started < 10_000, `kubectl gave up after ${Date.now() - started} ms`);
    // and the port still serves TLS
    assert.equal((await handshake(c.port, { ALPNProtocols: ['h2'] })).alpn, 'h2');
  });

  test('TLS 1.1 and 1.0 handshakes are refused (the minimum is TLS 1.2)', async () => {
    for (const v of ['TLSv1.1', 'TLSv1'] as const) {
      await assert.rejects(handshake(c.port, { minVersion: v, maxVersion: v, ciphers: 'DEFAULT:@SECLEVEL=0' }), (e: any) => /version|protocol/i.test(`${e.code} ${e.message}`));
    }
    const r = spawnSync('openssl', ['s_client', '-connect', `127.0.0.1:${c.port}`, '-tls1_1', '-cipher', 'DEFAULT:@SECLEVEL=0'], { input: '', encoding: 'utf8', timeout: 10_000 });
    if (r.error === undefined) assert.notEqual(r.status, 0, 'openssl s_client -tls1_1 fails');
  });

  test('SNI: names from a certificate (wildcards one label deep), explicit names, the default certificate otherwise', async () => {
    const served = async (servername?: string) => (await handshake(c.port, servername ? { servername } : {})).cn;
    assert.equal(await served('foo.test'), 'foo.test');
    assert.equal(await served('web.apps.test'), 'foo.test');
    assert.equal(await served('a.web.apps.test'), 'kube-apiserver');
    assert.equal(await served('alt.test'), 'bar-cert');
    assert.equal(await served('x.bar.test'), 'bar-cert');
    // bar.test is in bar's certificate, but explicit names replace the certificate's own
    assert.equal(await served('bar.test'), 'kube-apiserver');
    assert.equal(await served('localhost'), 'kube-apiserver');
    assert.equal(await served(undefined), 'kube-apiserver');
    const sni = await handshake(c.port, { servername: 'FOO.test', ALPNProtocols: ['h2'] });
    assert.equal(sni.cn, 'foo.test');
    assert.equal(sni.issuer, 'sni-e2e-ca');
    assert.equal(sni.alpn, 'h2', 'SNI certificates serve h2 too');
  });

  test('HTTP/2 settings: --http2-max-streams-per-connection and kube-apiserver\'s 256 KiB windows', async () => {
    await h2req(session, 'GET', '/version');
    const rs = session.remoteSettings;
    assert.equal(rs.maxConcurrentStreams, 7);
    assert.equal(rs.initialWindowSize, 256 * 1024);
    assert.equal(rs.maxFrameSize, 256 * 1024);
  });

  test('client certificates authenticate over h2; anonymous h2 requests are anonymous', async () => {
    const r = await h2req(session, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
    assert.equal(r.status, 201, r.body.toString());
    const u = r.json().status.userInfo;
    assert.equal(u.username, 'kubernetes-admin');
    assert.ok(u.groups.includes('system:masters'));
    assert.equal((await h2req(session, 'GET', '/api/v1/namespaces/default')).status, 200);
    const anon = http2.connect(c.url, { rejectUnauthorized: false });
    anon.on('error', () => {});
    try {
      const a = await h2req(anon, 'GET', '/api/v1/namespaces');
      assert.equal(a.status, 403);
      assert.match(a.json().message, /User "system:anonymous" cannot list resource "namespaces"/);
      assert.equal((await h2req(anon, 'GET', '/readyz')).status, 200);
    } finally {
      anon.destroy();
    }
  });

  test('a header repeated over h2 keeps each value (Impersonate-Group twice is two groups)', async () => {
    const r = await h2req(session, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      headers: { 'impersonate-user': 'alice', 'impersonate-group': ['team-a', 'team-b'] },
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    assert.equal(r.status, 201, r.body.toString());
    assert.deepEqual(r.json().status.userInfo, { username: 'alice', groups: ['team-a', 'team-b', 'system:authenticated'] });
  });

  test('a path with a bad %-escape resets its stream with PROTOCOL_ERROR, as Go\'s HTTP/2 server does; the session goes on', async () => {
    const st = session.request({ ':path': '/api/v1/namespaces/%zz/configmaps' });
    const code = await new Promise<number>((resolve) => {
      st.on('response', () => resolve(-1));
      st.on('error', () => {});
      st.on('close', () => resolve(st.rstCode));
    });
    assert.equal(code, http2.constants.NGHTTP2_PROTOCOL_ERROR);
    const r = await h2req(session, 'GET', '/version');
    assert.equal(r.status, 200);
  });

  test('Warning headers over h2: one field per warning', async () => {
    const r = await h2req(session, 'POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Warn', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'warned', bogus: 1, other: 2 } },
    });
    assert.equal(r.status, 201, r.body.toString());
    assert.deepEqual(rawValues(r.raw, 'warning'), ['299 - "unknown field \\"metadata.bogus\\""', '299 - "unknown field \\"metadata.other\\""']);
  });

  test('watch over h2: a stream of events, without HTTP/1.1 connection headers', async () => {
    const st = session.request({ ':path': '/api/v1/namespaces/default/configmaps?watch=1&fieldSelector=metadata.name%3Dwatched' });
    let headers: http2.IncomingHttpHeaders = {};
    let text = '';
    st.on('data', (d: Buffer) => (text += d.toString('utf8')));
    await new Promise<void>((r) => st.once('response', (h) => ((headers = h), r())));
    assert.equal(headers[':status'], 200);
    assert.equal(headers['content-type'], 'application/json');
    assert.equal(headers['transfer-encoding'], undefined);
    assert.equal(headers['connection'], undefined);
    const cm = await h2req(session, 'POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched' }, data: { a: '1' } } });
    assert.equal(cm.status, 201);
    await h2req(session, 'PATCH', '/api/v1/namespaces/default/configmaps/watched', { headers: { 'content-type': 'application/merge-patch+json' }, body: { data: { a: '2' } } });
    const deadline = Date.now() + 10_000;
    while (text.split('\n').filter(Boolean).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const events = text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert.deepEqual(events.map((e) => [e.type, e.object.data.a]), [['ADDED', '1'], ['MODIFIED', '2']]);
    st.close();
  });

  test('gzip over h2 for a large response', async () => {
    const big = 'x'.repeat(200 * 1024);
    assert.equal((await h2req(session, 'POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { big } } })).status, 201);
    const r = await h2req(session, 'GET', '/api/v1/namespaces/default/configmaps/big', { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-encoding'], 'gzip');
    assert.ok(r.body.length < 50 * 1024);
    assert.equal(JSON.parse(zlib.gunzipSync(r.body).toString('utf8')).data.big, big);
  });

  test('HTTP/1.1 still works on the same port (client-node)', async () => {
    const k8s = await import('@kubernetes/client-node');
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(c.kubeconfig);
    const api = kc.makeApiClient(k8s.CoreV1Api);
    const list = await api.listNamespacedConfigMap({ namespace: 'default' });
    assert.ok(list.items.some((i) => i.metadata?.name === 'watched'));
    const created = await api.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'from-client-node' }, data: { k: 'v' } } });
    assert.equal(created.metadata?.name, 'from-client-node');
    // and a watch over HTTP/1.1
    const events: string[] = [];
    const w = new k8s.Watch(kc);
    const req = await w.watch('/api/v1/namespaces/default/configmaps', { fieldSelector: 'metadata.name=from-client-node' }, (type) => events.push(type), () => {});
    const deadline = Date.now() + 10_000;
    while (!events.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    req.abort();
    assert.deepEqual(events, ['ADDED']);
  });

  for (const v of KUBECTLS) {
    test(`kubectl ${v} speaks h2: get, apply, watch`, async () => {
      const env = { GODEBUG: 'http2debug=1' };
      const g = c.kubectl(['get', 'ns', 'default', '-o', 'name'], { version: v, env });
      assert.equal(g.code, 0, g.stderr.slice(-2000));
      assert.equal(g.stdout.trim(), 'namespace/default');
      assert.match(g.stderr, /http2: Transport creating client conn/, 'kubectl negotiated h2');
      const name = `applied-${v.replace('.', '-')}`;
      const a = c.kubectl(['apply', '-f', '-'], { version: v, env, input: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n` });
      assert.equal(a.code, 0, a.stderr.slice(-2000));
      assert.match(a.stdout, new RegExp(`configmap/${name} created`));
      assert.match(a.stderr, /http2: Transport creating client conn/);
      const proc = spawn(kubectlBinary(v), ['get', 'cm', name, '-w', '-o', 'jsonpath={.data.a}{"\\n"}'], {
        ...kubectlArgv0(v),
        env: { PATH: process.env.PATH ?? '', HOME: c.home, KUBECONFIG: c.kubeconfig, ...env },
      });
      let out = '';
      let err = '';
      proc.stdout.on('data', (d) => (out += d));
      proc.stderr.on('data', (d) => (err += d));
      try {
        const deadline = Date.now() + 15_000;
        while (!out.includes('1') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        const p = c.kubectl(['patch', 'cm', name, '-p', '{"data":{"a":"2"}}'], { version: v });
        assert.equal(p.code, 0, p.stderr);
        while (!out.includes('2') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        assert.deepEqual(out.trim().split('\n'), ['1', '2'], err.slice(-2000));
        assert.match(err, /http2: Transport creating client conn/);
      } finally {
        proc.kill();
      }
    });
  }

  test('changed certificate files are loaded for new connections; a pair that does not match is refused and the old one stays', async () => {
    const cnFor = async () => (await handshake(c.port, { servername: 'foo.test' })).cn;
    const rotated = await issueServingCert(ca, 'foo-rotated', { dns: ['foo.test'], ips: [] });
    writeFileSync(join(dir, 'foo.key'), rotated.keyPEM);
    writeFileSync(join(dir, 'foo.crt'), rotated.certPEM);
    let deadline = Date.now() + 10_000;
    while ((await cnFor()) !== 'foo-rotated' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    assert.equal(await cnFor(), 'foo-rotated');
    // the names come from the new certificate: *.apps.test is gone
    assert.equal((await handshake(c.port, { servername: 'web.apps.test' })).cn, 'kube-apiserver');
    const mark = c.logs.length;
    const other = await issueServingCert(ca, 'foo-mismatch', { dns: ['foo.test'], ips: [] });
    writeFileSync(join(dir, 'foo.crt'), other.certPEM);
    deadline = Date.now() + 10_000;
    while (!c.logs.slice(mark).includes('Failed to load the changed serving certificates') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    assert.match(c.logs.slice(mark), /Failed to load the changed serving certificates.*failed to load SNI cert and key: tls: private key does not match public key/);
    assert.equal(await cnFor(), 'foo-rotated');
  });

  // last: the cluster stops
  test('SIGTERM with an h2 watch open: served through the delay, then the watch ends, GOAWAY, exit 0', async () => {
    const s = c.http2Session();
    s.on('error', () => {});
    const goaway = new Promise<number>((r) => s.once('goaway', (code) => r(code)));
    const st = s.request({ ':path': '/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true' });
    let ended = false;
    let errored: unknown;
    st.on('data', () => {});
    st.on('end', () => (ended = true));
    st.on('error', (e) => (errored = e));
    await new Promise<void>((r) => st.once('response', () => r()));
    const exited = new Promise<number | null>((r) => c.proc!.once('exit', (code) => r(code)));
    c.proc!.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    // during --shutdown-delay-duration: readyz fails, requests are served on the open connection
    const ready = await h2req(s, 'GET', '/readyz');
    assert.equal(ready.status, 500);
    assert.equal((await h2req(s, 'GET', '/api/v1/namespaces/default')).status, 200);
    assert.equal(await goaway, 0, 'GOAWAY with NO_ERROR');
    const deadline = Date.now() + 10_000;
    while (!ended && !errored && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(errored, undefined);
    assert.ok(ended, 'the watch ended cleanly');
    assert.equal(await exited, 0);
    s.destroy();
  });
});

describe('secure port: --tls-min-version, --tls-cipher-suites, --disable-http2-serving', () => {
  let c: Cluster;
  before(async () => {
    c = await startCluster({
      args: ['--tls-min-version=VersionTLS10', '--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,TLS_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', '--disable-http2-serving'],
    });
  });
  after(async () => {
    await c?.stop();
  });

  test('only the configured suites, in Go\'s order; TLS 1.0 accepted when asked for; insecure suites warned about', async () => {
    const t12 = await handshake(c.port, { maxVersion: 'TLSv1.2' });
    assert.equal(t12.cipher, 'ECDHE-ECDSA-AES256-GCM-SHA384');
    await assert.rejects(handshake(c.port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256' }));
    const t10 = await handshake(c.port, { minVersion: 'TLSv1', maxVersion: 'TLSv1', ciphers: 'DEFAULT:@SECLEVEL=0' });
    assert.equal(t10.protocol, 'TLSv1');
    assert.equal(t10.cipher, 'ECDHE-ECDSA-AES128-SHA');
    // TLS 1.3 suites are not configurable, as in Go
    assert.equal((await handshake(c.port, {})).cipher, 'TLS_AES_128_GCM_SHA256');
    assert.match(c.logs, /Use of insecure cipher 'TLS_RSA_WITH_AES_128_GCM_SHA256' detected\./);
    assert.doesNotMatch(c.logs, /insecure cipher 'TLS_ECDHE/);
  });

  test('--disable-http2-serving: h2 is not offered; kubectl falls back to HTTP/1.1', async () => {
    assert.equal((await handshake(c.port, { ALPNProtocols: ['h2', 'http/1.1'] })).alpn, 'http/1.1');
    const g = c.kubectl(['get', 'ns', 'default', '-o', 'name'], { env: { GODEBUG: 'http2debug=1' } });
    assert.equal(g.code, 0, g.stderr);
    assert.doesNotMatch(g.stderr, /http2: Transport creating client conn/);
    assert.match(c.logs, /Forcing use of http\/1\.1 only/);
  });
});

describe('secure port: --tls-min-version=VersionTLS13, --cert-dir, --tls-cert-file, an SNI certificate for an IP address', () => {
  test('TLS 1.2 is refused, TLS 1.3 served; the given serving certificate; a client without SNI gets the certificate of the address it reached', async () => {
    // the cluster CA made beforehand in --cert-dir, so that the certificates given are ones kubectl trusts
    const dataDir = mkdtempSync(join(tmpdir(), 'keelson-tls-ip-'));
    const certDir = join(dataDir, 'certs');
    const pki = await ensurePKI(certDir);
    const ip = await issueServingCert(pki.ca, 'ip-cert', { dns: [], ips: ['127.0.0.1'] });
    const serving = await issueServingCert(pki.ca, 'custom-serving', { dns: ['localhost'], ips: [] });
    for (const [n, ck] of [['ip', ip], ['serving', serving]] as const) {
      writeFileSync(join(dataDir, `${n}.crt`), ck.certPEM);
      writeFileSync(join(dataDir, `${n}.key`), ck.keyPEM);
    }
    const c = await startCluster({
      dataDir,
      args: [
        '--tls-min-version=VersionTLS13',
        `--cert-dir=${certDir}`,
        `--tls-cert-file=${join(dataDir, 'serving.crt')}`,
        `--tls-private-key-file=${join(dataDir, 'serving.key')}`,
        `--tls-sni-cert-key=${join(dataDir, 'ip.crt')},${join(dataDir, 'ip.key')}:127.0.0.1`,
      ],
    });
    try {
      assert.ok(!existsSync(join(dataDir, 'pki')), 'certificates live in --cert-dir');
      await assert.rejects(handshake(c.port, { maxVersion: 'TLSv1.2' }));
      assert.equal((await handshake(c.port, { ALPNProtocols: ['h2'] })).protocol, 'TLSv1.3');
      assert.equal((await handshake(c.port, {})).cn, 'ip-cert');
      assert.equal((await handshake(c.port, { servername: 'localhost' })).cn, 'custom-serving');
      assert.equal((await handshake(c.port, { servername: 'unknown.test' })).cn, 'custom-serving');
      const g = c.kubectl(['get', 'ns', 'default', '-o', 'name']);
      assert.equal(g.code, 0, g.stderr);
      // connections after that one get the default certificate again
      assert.equal((await handshake(c.port, { servername: 'localhost' })).cn, 'custom-serving');
    } finally {
      await c.stop();
    }
  });
});

describe('secure port: start-up errors', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'keelson-tls-errors-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));
  const run = (args: string[]) => spawnSync(process.execPath, [KEELSON, 'apiserver', '--data-dir', dataDir, '--secure-port', '1', '--bind-address', '127.0.0.1', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  const cases: [string[], string][] = [
    [['--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,ECDHE-RSA-AES128-GCM-SHA256'], "Error: Cipher suite ECDHE-RSA-AES128-GCM-SHA256 not supported or doesn't exist"],
    [['--tls-min-version=VersionTLS14'], 'Error: unknown tls version "VersionTLS14"'],
    [['--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384'], 'Error: error configuring http2: http2: TLSConfig.CipherSuites is missing an HTTP/2-required AES_128_GCM_SHA256 cipher (need at least one of TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 or TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)'],
    [['--tls-cert-file=/nonexistent/serving.crt'], 'Error: missing filename for serving cert'],
    [['--tls-cert-file=/nonexistent/serving.crt', '--tls-private-key-file=/nonexistent/serving.key'], 'Error: open /nonexistent/serving.crt: no such file or directory'],
    [['--tls-sni-cert-key=/nonexistent/a.crt,/nonexistent/a.key:a.test'], 'Error: failed to load SNI cert and key: open /nonexistent/a.crt: no such file or directory'],
    [['--tls-sni-cert-key=/nonexistent/a.crt'], 'expected comma separated certificate and key file paths'],
    [['--tls-sni-cert-key=/a.crt,/a.key:'], 'empty names list is not allowed'],
  ];
  for (const [args, want] of cases) {
    test(args.join(' '), () => {
      const r = run(args);
      assert.notEqual(r.status, 0);
      assert.ok(r.stderr.includes(want), `want ${JSON.stringify(want)} in:\n${r.stderr.slice(-1500)}`);
    });
  }
  test('--help lists the secure serving flags', () => {
    const r = spawnSync(process.execPath, [KEELSON, 'server', '--help'], { cwd: ROOT, encoding: 'utf8' });
    for (const f of ['--tls-min-version', '--tls-cipher-suites', '--tls-sni-cert-key namedCertKey', '--http2-max-streams-per-connection', '--disable-http2-serving', '--permit-port-sharing', '--permit-address-sharing']) {
      assert.ok(r.stdout.includes(f), f);
    }
    assert.match(r.stdout, /Insecure values: TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, /);
    assert.match(r.stdout, /Possible values: VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13/);
  });
});
