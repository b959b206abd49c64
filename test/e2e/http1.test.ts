// HTTP/1.1 on the secure port, byte by byte (src/apiserver/http1.ts): raw TLS connections that
// offer only http/1.1 send requests as clients put them on the wire, and the answers are read as
// they come back. Keep-alive, pipelining (and its back-pressure), HEAD, Expect: 100-continue, chunked request bodies,
// HTTP/1.0, Connection: close, unparseable requests (400) and oversized headers (431), a watch
// stream and a client that goes away mid-request; request lines as Go's server reads them (any
// token as a method, bytes >= 0x80 in the target, lines split across reads).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import tls from 'node:tls';
import { startCluster, type Cluster } from './harness.js';

let c: Cluster;
before(async () => {
  c = await startCluster();
});
after(async () => {
  await c?.stop();
});

interface Conn {
  sock: tls.TLSSocket;
  /** everything received so far, as latin1 text */
  text(): string;
  /** waits until the received text satisfies `ok` (or the connection closes: then it throws) */
  until(ok: (t: string) => boolean, what: string, ms?: number): Promise<string>;
  closed: Promise<void>;
  isClosed(): boolean;
}

function connect(): Promise<Conn> {
  const t = c.credentials;
  return new Promise((resolve, reject) => {
    const sock = tls.connect({ host: '127.0.0.1', port: c.port, ca: t.ca, cert: t.cert, key: t.key, servername: 'localhost', ALPNProtocols: ['http/1.1'] });
    let buf = '';
    let closedFlag = false;
    const waiters = new Set<() => void>();
    const closed = new Promise<void>((r) => sock.once('close', () => r()));
    sock.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      for (const w of [...waiters]) w();
    });
    sock.on('error', () => {});
    sock.once('close', () => {
      closedFlag = true;
      for (const w of [...waiters]) w();
    });
    sock.once('secureConnect', () => {
      assert.equal(sock.alpnProtocol, 'http/1.1');
      resolve({
        sock,
        text: () => buf,
        closed,
        isClosed: () => closedFlag,
        until(ok, what, ms = 10_000) {
          return new Promise<string>((res, rej) => {
            const check = (): void => {
              if (ok(buf)) {
                done();
                res(buf);
              } else if (closedFlag) {
                done();
                rej(new Error(`connection closed before ${what}; got:\n${buf}`));
              }
            };
            const timer = setTimeout(() => {
              done();
              rej(new Error(`timed out waiting for ${what}; got:\n${buf}`));
            }, ms);
            const done = (): void => {
              clearTimeout(timer);
              waiters.delete(check);
            };
            waiters.add(check);
            check();
          });
        },
      });
    });
    sock.once('error', reject);
  });
}

/** the complete responses (Content-Length framed) at the start of `t` */
function responses(t: string): { status: number; head: string; body: string }[] {
  const out: { status: number; head: string; body: string }[] = [];
  let at = 0;
  for (;;) {
    const end = t.indexOf('\r\n\r\n', at);
    if (end < 0) return out;
    const head = t.slice(at, end);
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
    if (status === 100) {
      at = end + 4;
      continue;
    }
    const len = /\r\ncontent-length: (\d+)/i.exec(head);
    const bodiless = status === 204 || status === 304;
    const n = len ? Number(len[1]) : bodiless ? 0 : -1;
    if (n < 0) return out; // not framed by length (chunked): the caller reads it
    if (t.length < end + 4 + n) return out;
    out.push({ status, head, body: t.slice(end + 4, end + 4 + n) });
    at = end + 4 + n;
  }
}

const cm = (name: string): string => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } });
const post = (path: string, body: string, extra = ''): string =>
  `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
const get = (path: string, extra = '', method = 'GET'): string => `${method} ${path} HTTP/1.1\r\nHost: localhost\r\n${extra}\r\n`;

describe('HTTP/1.1 on the secure port', () => {
  test('keep-alive: requests one after another on one connection, framed by Content-Length, with Date and no Connection header', async () => {
    const k = await connect();
    k.sock.write(get('/version'));
    await k.until((t) => responses(t).length === 1, 'the first answer');
    k.sock.write(get('/api/v1/namespaces/default'));
    const t = await k.until((x) => responses(x).length === 2, 'the second answer');
    const [a, b] = responses(t);
    assert.equal(a!.status, 200);
    assert.equal(JSON.parse(a!.body).major, '1');
    assert.equal(b!.status, 200);
    assert.equal(JSON.parse(b!.body).metadata.name, 'default');
    assert.match(a!.head, /\r\nDate: \w{3}, \d{2} \w{3} \d{4} /);
    assert.doesNotMatch(a!.head, /\r\nConnection:/i);
    assert.match(a!.head, /\r\nAudit-Id: [0-9a-f-]{36}/);
    assert.equal(k.isClosed(), false);
    k.sock.destroy();
  });

  test('pipelining: three requests in one write are answered in order, a write among them included', async () => {
    const k = await connect();
    k.sock.write(get('/api/v1/namespaces/default/configmaps/pipe-1') + post('/api/v1/namespaces/default/configmaps', cm('pipe-1')) + get('/api/v1/namespaces/default/configmaps/pipe-1'));
    const t = await k.until((x) => responses(x).length === 3, 'three answers');
    const [a, b, d] = responses(t);
    assert.equal(a!.status, 404);
    assert.equal(JSON.parse(a!.body).reason, 'NotFound');
    assert.equal(b!.status, 201);
    assert.equal(d!.status, 200);
    assert.equal(JSON.parse(d!.body).metadata.uid, JSON.parse(b!.body).metadata.uid);
    k.sock.destroy();
  });

  test('pipelining: 300 requests in one write, writes among them, are all answered in order', async () => {
    const k = await connect();
    let wire = '';
    const expect: number[] = [];
    for (let i = 0; i < 100; i++) {
      wire += get(`/api/v1/namespaces/default/configmaps/many-${i}`) + post('/api/v1/namespaces/default/configmaps', cm(`many-${i}`)) + get(`/api/v1/namespaces/default/configmaps/many-${i}`);
      expect.push(404, 201, 200);
    }
    k.sock.write(wire);
    const t = await k.until((x) => responses(x).length === 300, 'three hundred answers', 30_000);
    const rs = responses(t);
    assert.deepEqual(
      rs.map((r) => r.status),
      expect,
    );
    for (let i = 0; i < 100; i++) assert.equal(JSON.parse(rs[3 * i + 2]!.body).metadata.name, `many-${i}`);
    k.sock.destroy();
  });

  test('pipelining without reading the answers: the server stops reading, and serves others meanwhile', async () => {
    const k = await connect();
    // the client reads nothing: the server's answers back up, then its reading stops, and the
    // requests stay in the client's own buffer
    k.sock.pause();
    const one = get('/version', `X-Pad: ${'p'.repeat(1000)}\r\n`);
    const total = 32 * 1024 * 1024;
    k.sock.write(Buffer.from(one.repeat(Math.ceil(total / one.length)), 'latin1'));
    let last = -1;
    let still = 0;
    for (let i = 0; i < 50 && still < 3; i++) {
      await new Promise((r) => setTimeout(r, 200));
      const now = k.sock.writableLength;
      still = now === last ? still + 1 : 0;
      last = now;
    }
    assert.ok(last > 8 * 1024 * 1024, `most of the requests wait on the client's side (${last} bytes of ${total} unsent)`);
    // the server goes on serving other connections
    const other = await connect();
    other.sock.write(get('/version'));
    const t = await other.until((x) => responses(x).length === 1, 'an answer on another connection');
    assert.equal(responses(t)[0]!.status, 200);
    other.sock.destroy();
    // once the client reads, the answers come, in order
    k.sock.resume();
    const got = await k.until((x) => responses(x).length >= 100, 'answers once the client reads', 30_000);
    assert.ok(responses(got).every((r) => r.status === 200));
    k.sock.destroy();
  });

  test('HEAD: the headers of the GET and no body, and the next request on the connection is read correctly', async () => {
    const k = await connect();
    k.sock.write(get('/api/v1/namespaces/default', '', 'HEAD') + get('/version'));
    const t = await k.until((x) => /\r\n\r\n[\s\S]*"major"[\s\S]*\}\s*$/.test(x), 'the answer after the HEAD');
    const heads = t.split('HTTP/1.1 ').filter(Boolean);
    assert.equal(heads.length, 2, t);
    assert.match(heads[0]!, /^200 OK\r\n/);
    const len = Number(/\r\nContent-Length: (\d+)/i.exec(heads[0]!)?.[1]);
    assert.ok(len > 0, 'HEAD keeps the Content-Length of the GET');
    assert.ok(heads[0]!.endsWith('\r\n\r\n'), 'HEAD carries no body');
    assert.match(heads[1]!, /^200 OK\r\n/);
    k.sock.destroy();
  });

  test('Expect: 100-continue: the server asks for the body, then answers the request', async () => {
    const k = await connect();
    const body = cm('expect-1');
    k.sock.write(`POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`);
    await k.until((t) => t.startsWith('HTTP/1.1 100 Continue\r\n\r\n'), '100 Continue');
    k.sock.write(body);
    const t = await k.until((x) => responses(x).length === 1, 'the answer');
    assert.equal(responses(t)[0]!.status, 201);
    k.sock.destroy();
  });

  test('an unknown expectation is 417', async () => {
    const k = await connect();
    k.sock.write(get('/version', 'Expect: something-else\r\n'));
    const t = await k.until((x) => responses(x).length === 1, 'the answer');
    assert.equal(responses(t)[0]!.status, 417);
    k.sock.destroy();
  });

  test('a chunked request body, sent in pieces, is read whole', async () => {
    const k = await connect();
    const body = cm('chunked-1');
    const half = Math.floor(body.length / 2);
    k.sock.write(`POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    k.sock.write(`${half.toString(16)}\r\n${body.slice(0, half)}\r\n`);
    await new Promise((r) => setTimeout(r, 50));
    k.sock.write(`${(body.length - half).toString(16)}\r\n${body.slice(half)}\r\n0\r\n\r\n`);
    const t = await k.until((x) => responses(x).length === 1, 'the answer');
    const r = responses(t)[0]!;
    assert.equal(r.status, 201, r.body);
    assert.equal(JSON.parse(r.body).metadata.name, 'chunked-1');
    k.sock.destroy();
  });

  test('HTTP/1.0: the answer closes the connection; with keep-alive asked, it stays open and says so', async () => {
    const k = await connect();
    k.sock.write('GET /version HTTP/1.0\r\n\r\n');
    await k.closed;
    const r = responses(k.text())[0]!;
    assert.equal(r.status, 200);
    assert.match(r.head, /^HTTP\/1\.1 200 OK/);
    assert.match(r.head, /\r\nConnection: close/i);

    const k2 = await connect();
    k2.sock.write('GET /version HTTP/1.0\r\nConnection: keep-alive\r\n\r\n');
    const t = await k2.until((x) => responses(x).length === 1, 'the answer');
    assert.match(responses(t)[0]!.head, /\r\nConnection: keep-alive/i);
    k2.sock.write('GET /version HTTP/1.0\r\nConnection: keep-alive\r\n\r\n');
    await k2.until((x) => responses(x).length === 2, 'the second answer');
    k2.sock.destroy();
  });

  test('HTTP/1.0 watch: the stream is not chunked and ends with the connection', async () => {
    const k = await connect();
    k.sock.write('GET /api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1 HTTP/1.0\r\n\r\n');
    await k.closed;
    const t = k.text();
    assert.match(t, /^HTTP\/1\.1 200 OK/);
    assert.doesNotMatch(t, /Transfer-Encoding: chunked/i);
    const body = t.slice(t.indexOf('\r\n\r\n') + 4);
    const lines = body.split('\n').filter(Boolean);
    assert.ok(lines.length > 0);
    for (const l of lines) assert.ok(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK'].includes(JSON.parse(l).type), l);
  });

  test('Connection: close on a request: the answer says close and the server closes', async () => {
    const k = await connect();
    k.sock.write(get('/version', 'Connection: close\r\n'));
    await k.closed;
    const r = responses(k.text())[0]!;
    assert.equal(r.status, 200);
    assert.match(r.head, /\r\nConnection: close/i);
  });

  test('a request that cannot be parsed is 400, as Go words it, and the connection closes', async () => {
    const k = await connect();
    k.sock.write('THIS IS NOT HTTP\r\n\r\n');
    await k.closed;
    assert.match(k.text(), /^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*Connection: close\r\n\r\n400 Bad Request$/);
  });

  test('request headers over 1 MiB are 431', async () => {
    const k = await connect();
    k.sock.write(`GET /version HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat((1 << 20) + 10)}\r\n\r\n`);
    await k.closed;
    assert.match(k.text(), /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
  });

  test('a watch is a chunked stream; events arrive as they happen, and the client may leave at any time', async () => {
    const k = await connect();
    k.sock.write(get('/api/v1/namespaces/default/configmaps?watch=1&fieldSelector=metadata.name%3Dwatched-1'));
    await k.until((t) => t.includes('\r\n\r\n'), 'the head of the stream');
    assert.match(k.text(), /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(k.text(), /\r\nTransfer-Encoding: chunked\r\n/i);
    // (Go's server names no Connection on a kept-alive HTTP/1.1 answer, a stream's included)
    assert.doesNotMatch(k.text(), /\r\nConnection:/i);
    const r = await c.raw('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.parse(cm('watched-1')) });
    assert.equal(r.status, 201);
    const t = await k.until((x) => x.includes('"type":"ADDED"'), 'the ADDED event');
    const chunk = t.slice(t.indexOf('\r\n\r\n') + 4);
    assert.match(chunk, /^[0-9a-f]+\r\n\{"type":"ADDED","object":\{"kind":"ConfigMap"/);
    k.sock.destroy();
    // the server goes on: another connection is answered
    const k2 = await connect();
    k2.sock.write(get('/version'));
    await k2.until((x) => responses(x).length === 1, 'an answer after the watcher left');
    k2.sock.destroy();
  });

  test('watchers of one event get it in the same chunk framing, each chunk one whole event; an HTTP/2 watcher the same lines', async () => {
    const watch = '/api/v1/namespaces/default/configmaps?watch=1&fieldSelector=metadata.name%3Dshared-1';
    const ks = await Promise.all([connect(), connect(), connect()]);
    for (const k of ks) k.sock.write(get(watch));
    for (const k of ks) await k.until((t) => t.includes('\r\n\r\n'), 'the head of a stream');
    const session = c.http2Session();
    const h2 = c.stream(watch, {}, session);
    // (its head comes once the watch is registered: events written after it reach it)
    await h2.ready;
    assert.equal(h2.status, 200);
    const body = JSON.parse(cm('shared-1'));
    assert.equal((await c.raw('POST', '/api/v1/namespaces/default/configmaps', { body })).status, 201);
    body.data.k = 'w';
    assert.equal((await c.raw('PUT', '/api/v1/namespaces/default/configmaps/shared-1', { body })).status, 200);
    assert.equal((await c.raw('DELETE', '/api/v1/namespaces/default/configmaps/shared-1')).status, 200);
    /** the stream's chunks after its head, each checked to be framed right */
    const chunks = (t: string): string[] => {
      const out: string[] = [];
      let at = t.indexOf('\r\n\r\n') + 4;
      for (;;) {
        const eol = t.indexOf('\r\n', at);
        if (eol < 0) return out;
        const size = parseInt(t.slice(at, eol), 16);
        if (t.length < eol + 2 + size + 2) return out;
        assert.equal(t.slice(eol + 2 + size, eol + 4 + size), '\r\n');
        out.push(t.slice(eol + 2, eol + 2 + size));
        at = eol + 4 + size;
      }
    };
    const streams = [];
    for (const k of ks) streams.push(chunks(await k.until((t) => chunks(t).length === 3, 'three events')));
    for (const k of ks) k.sock.destroy();
    assert.deepEqual(streams[1], streams[0]);
    assert.deepEqual(streams[2], streams[0]);
    assert.deepEqual(
      streams[0]!.map((e) => [JSON.parse(e).type, JSON.parse(e).object.data.k]),
      [
        ['ADDED', 'v'],
        ['MODIFIED', 'w'],
        ['DELETED', 'w'],
      ],
    );
    assert.ok(streams[0]!.every((e) => e.endsWith('}\n')));
    await h2.until((events) => events.length === 3);
    const lines = h2.text.split('\n').filter(Boolean);
    h2.close();
    session.close();
    assert.deepEqual(lines, streams[0]!.map((e) => e.slice(0, -1)));
  });

  test('a watch asked with Connection: close says Connection: close, as Go answers any request that asks it', async () => {
    const k = await connect();
    k.sock.write(get('/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1', 'Connection: close\r\n'));
    await k.closed;
    const head = k.text().slice(0, k.text().indexOf('\r\n\r\n'));
    assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(head, /\r\nConnection: close(\r\n|$)/i);
    assert.doesNotMatch(head, /keep-alive/i);
  });

  test('a client that leaves in the middle of a body: nothing is created and the server goes on', async () => {
    const k = await connect();
    const body = cm('half-1');
    k.sock.write(`POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 20)}`);
    await new Promise((r) => setTimeout(r, 100));
    k.sock.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const g = await c.raw('GET', '/api/v1/namespaces/default/configmaps/half-1');
    assert.equal(g.status, 404);
  });

  test('a body that ends early because the client closed its side is not a request: no object, no crash', async () => {
    const k = await connect();
    const body = cm('half-2');
    k.sock.end(`POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 20)}`);
    await k.closed;
    const g = await c.raw('GET', '/api/v1/namespaces/default/configmaps/half-2');
    assert.equal(g.status, 404);
  });

  test('repeated request headers are joined as node:http joins them (impersonation reads each value)', async () => {
    const k = await connect();
    k.sock.write(get('/apis/authentication.k8s.io/v1/selfsubjectreviews', '', 'GET'));
    await k.until((x) => responses(x).length === 1, 'an answer');
    const body = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    k.sock.write(post('/apis/authentication.k8s.io/v1/selfsubjectreviews', body, 'Impersonate-User: jane\r\nImpersonate-Group: g1\r\nImpersonate-Group: g2\r\n'));
    const t = await k.until((x) => responses(x).length === 2, 'the review');
    const r = responses(t)[1]!;
    assert.equal(r.status, 201, r.body);
    const ui = JSON.parse(r.body).status.userInfo;
    assert.equal(ui.username, 'jane');
    assert.deepEqual(ui.groups.slice(0, 2), ['g1', 'g2']);
    k.sock.destroy();
  });

  /** writes the pieces one by one, each after the server has had time to read the one before */
  async function writeSplit(k: Conn, pieces: (string | Buffer)[]): Promise<void> {
    for (const p of pieces) {
      k.sock.write(typeof p === 'string' ? Buffer.from(p, 'latin1') : p);
      await new Promise((r) => setTimeout(r, 30));
    }
  }

  test('a method Go accepts and Kubernetes does not route (any token: FOO, get, PROPFIND) is 405 as a Status, and the connection goes on', async () => {
    const k = await connect();
    // Go's net/http takes any RFC 7230 token as a method; go-restful then has no route for it (405)
    k.sock.write(get('/api/v1/namespaces', '', 'FOO') + get('/api/v1/namespaces/default', '', 'get') + get('/api/v1/namespaces', '', 'PROPFIND') + get('/api/v1/namespaces/default/configmaps', '', 'X-Y!~') + get('/version'));
    const t = await k.until((x) => responses(x).length === 5, 'five answers');
    const rs = responses(t);
    assert.deepEqual(
      rs.map((r) => r.status),
      [405, 405, 405, 405, 200],
    );
    for (const r of rs.slice(0, 4)) {
      const s = JSON.parse(r.body);
      assert.equal(s.kind, 'Status');
      assert.equal(s.reason, 'MethodNotAllowed');
      assert.equal(s.code, 405);
    }
    k.sock.destroy();
  });

  test('a method that is no token, or a request line Go cannot split, is 400 as Go words it', async () => {
    for (const line of ['F\xe9O /version HTTP/1.1', 'FOO /version', 'FOO /a\x01b HTTP/1.1', 'FOO version HTTP/1.1', 'FOO /version HTTP/x.y']) {
      const k = await connect();
      k.sock.write(Buffer.from(`${line}\r\nHost: localhost\r\n\r\n`, 'latin1'));
      await k.closed;
      assert.match(k.text(), /^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*\r\n\r\n400 Bad Request$/, JSON.stringify(line));
    }
  });

  test('bytes >= 0x80 in the target are the bytes Go reads: UTF-8 names, and invalid UTF-8 as U+FFFD; escapes decode to the same bytes', async () => {
    const k = await connect();
    k.sock.write(Buffer.concat([Buffer.from('GET /api/v1/namespaces/caf', 'latin1'), Buffer.from('é', 'utf8'), Buffer.from(' HTTP/1.1\r\nHost: localhost\r\n\r\n', 'latin1')]));
    k.sock.write(get('/api/v1/namespaces/caf%C3%A9'));
    k.sock.write(Buffer.from('GET /api/v1/namespaces/a\xe9b HTTP/1.1\r\nHost: localhost\r\n\r\n', 'latin1'));
    k.sock.write(get('/api/v1/namespaces/a%e9b'));
    k.sock.write(Buffer.from('GET /api/v1/namespaces/default/configmaps?labelSelector=\xff HTTP/1.1\r\nHost: localhost\r\n\r\n', 'latin1'));
    const t = await k.until((x) => responses(x).length === 5, 'five answers');
    const rs = responses(t).map((r) => ({ status: r.status, body: JSON.parse(Buffer.from(r.body, 'latin1').toString('utf8')) }));
    assert.deepEqual(
      rs.map((r) => r.status),
      [404, 404, 404, 404, 400],
    );
    assert.equal(rs[0]!.body.message, 'namespaces "café" not found');
    assert.equal(rs[1]!.body.message, 'namespaces "café" not found');
    assert.equal(rs[2]!.body.message, 'namespaces "a\ufffdb" not found');
    assert.equal(rs[3]!.body.message, 'namespaces "a\ufffdb" not found');
    assert.equal(rs[4]!.body.reason, 'BadRequest');
    assert.match(rs[4]!.body.message, /unable to parse requirement/);
    k.sock.destroy();
  });

  test('a bad escape in the path is 400 as Go words it (url.ParseRequestURI fails); one in the query is not', async () => {
    const k = await connect();
    k.sock.write(get('/api/v1/namespaces/default?x=%zz') + get('/api/v1/namespaces/a%zzb'));
    await k.closed;
    const t = k.text();
    assert.equal(responses(t)[0]!.status, 200);
    // byte for byte Go's answer: no Content-Length, no Date, the body ends with the connection
    assert.equal(t.slice(t.indexOf('HTTP/1.1', 10)), 'HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request');
  });

  test('a request line split across reads is read whole: in the method, the target, the version, a method llhttp does not know, bytes >= 0x80', async () => {
    const rest = ' HTTP/1.1\r\nHost: localhost\r\n\r\n';
    const cases: { pieces: string[]; status: number }[] = [
      { pieces: ['GE', 'T /api/v1/namespaces/default', rest], status: 200 },
      { pieces: ['GET /api/v1/name', 'spaces/default', rest], status: 200 },
      { pieces: ['GET /api/v1/namespaces/default HT', 'TP/1', '.1\r\nHost: localhost\r\n\r\n'], status: 200 },
      { pieces: ['GET /api/v1/namespaces/default HTTP/1.1\r', '\nHost: localhost\r\n\r\n'], status: 200 },
      { pieces: ['FO', 'O /api/v1/namespaces', rest], status: 405 },
      { pieces: ['PROPFIN', 'X /api/v1/namespaces', rest], status: 405 },
      { pieces: ['GET /api/v1/namespaces/a', '\xe9', 'b', rest], status: 404 },
      { pieces: [...'FOO /api/v1/namespaces/default HTTP/1.1\r\nHost: localhost\r\n\r\n'], status: 405 },
    ];
    for (const { pieces, status } of cases) {
      const k = await connect();
      await writeSplit(k, pieces);
      k.sock.write(get('/version'));
      const t = await k.until((x) => responses(x).length === 2, `two answers to ${JSON.stringify(pieces)}`);
      assert.deepEqual(
        responses(t).map((r) => r.status),
        [status, 200],
        JSON.stringify(pieces),
      );
      k.sock.destroy();
    }
  });

  test('a method llhttp does not know after a pipelined request with a body is read from where that body ends', async () => {
    const k = await connect();
    const body = cm('after-body-1');
    k.sock.write(post('/api/v1/namespaces/default/configmaps', body) + get('/api/v1/namespaces/default/configmaps/after-body-1', '', 'FOO') + get('/api/v1/namespaces/default/configmaps/after-body-1'));
    const t = await k.until((x) => responses(x).length === 3, 'three answers');
    assert.deepEqual(
      responses(t).map((r) => r.status),
      [201, 405, 200],
    );
    k.sock.destroy();
  });
});
