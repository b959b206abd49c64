// A seeded, reproducible request fuzz against one keelson (with the CBOR gate on): random methods
// (odd tokens too), paths of every URL shape (cluster-scoped, namespaced, all namespaces,
// subresources, discovery, OpenAPI, health, nonsense, bytes >= 0x80), query parameters with valid
// and invalid values, media types, and bodies (objects of every kind, mutated, cut, deep, noise),
// over HTTP/1.1 as raw TLS bytes (some requests split across writes) and over HTTP/2. Every
// answer must come within the timeout; no 5xx but 503/504 and the documented 500s; every non-2xx
// answer to an API path is a Status whose code is the HTTP status (outside the API, the plain-text
// 404; an unparseable request line, Go's plain 400); the server stays up and logs no "Unhandled".
// KEELSON_FUZZ_SEED picks the seed (default fixed), KEELSON_FUZZ_COUNT the number of requests; a
// failure prints the seed and each failing request as it went on the wire.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import tls from 'node:tls';
import http2 from 'node:http2';
import YAML from 'yaml';
import { startCluster, type Cluster } from './harness.js';
import { everyKindManifest, certificateRequestPEM } from './every-kind.js';
import { decodeEnvelope, decodeMessage } from '../../src/codec/protobuf.js';
import * as gen from './fuzzgen.js';

const SEED = Number(process.env.KEELSON_FUZZ_SEED ?? 20261203);
const COUNT = Number(process.env.KEELSON_FUZZ_COUNT ?? 2400);
/** requests under way at once */
const PARALLEL = 6;
const TIMEOUT_MS = 15_000;

let c: Cluster;
before(async () => {
  c = await startCluster({ args: ['--feature-gates=CBORServingAndStorage=true'] });
});
after(async () => {
  await c?.stop();
});

interface Req {
  i: number;
  h2: boolean;
  method: string;
  /** the request target as bytes (latin1) */
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** the HTTP/1.1 bytes split at these offsets, each piece its own write */
  splits: number[];
  /** Go's server refuses the request line itself (plain 400) */
  badLine: boolean;
}

interface Answer {
  status: number;
  type: string;
  body: Buffer;
  /** the head only was read (a watch's stream) */
  headOnly?: boolean;
}

function objects(): unknown[] {
  return YAML.parseAllDocuments(everyKindManifest('default', 'probe=1', certificateRequestPEM()))
    .map((d) => d.toJSON())
    .filter((d) => d && d.kind !== 'Namespace');
}

function generate(seed: number, count: number, objs: unknown[]): Req[] {
  const r = gen.random(seed);
  const out: Req[] = [];
  for (let i = 0; i < count; i++) {
    const res = r.pick(gen.RESOURCES);
    let target = r.rnd() < 0.2 ? r.pick(gen.OTHER_PATHS) : gen.resourcePath(r, res) + gen.query(r);
    const h2 = r.rnd() < 0.3;
    let badLine = false;
    if (!h2 && r.rnd() < 0.04) {
      // raw bytes: a UTF-8 name, a lone byte >= 0x80, or a control byte (Go: 400)
      const odd = r.pick(['caf\u00c3\u00a9', 'a\u00e9b', 'a\u0001b', 'a\u007fb']);
      target = `/api/v1/namespaces/default/configmaps/${odd}`;
      badLine = /[\u0000-\u001f\u007f]/.test(odd);
    }
    if (!h2 && /^\/[^?]*%(?![0-9A-Fa-f]{2})/.test(target)) badLine = true;
    const method = r.rnd() < 0.06 ? r.pick(gen.ODD_METHODS) : r.pick(gen.METHODS);
    const headers: Record<string, string> = {};
    const accept = r.pick(gen.ACCEPTS);
    if (accept) headers.accept = accept;
    let body: Buffer | undefined;
    if (!['GET', 'HEAD', 'OPTIONS', 'get', 'TRACE', 'CONNECT'].includes(method) && r.rnd() < 0.95) {
      const type = r.pick(gen.CONTENT_TYPES);
      body = gen.body(r, type, res, method, objs);
      if (type) headers['content-type'] = type;
    }
    const splits: number[] = [];
    if (!h2 && r.rnd() < 0.15) for (let k = 1 + r.int(3); k > 0; k--) splits.push(1 + r.int(target.length + 12));
    out.push({ i, h2, method, target, headers, body, splits: [...new Set(splits)].sort((a, b) => a - b), badLine });
  }
  return out;
}

/** the request as HTTP/1.1 bytes */
function wire(q: Req): Buffer {
  let head = `${q.method} ${q.target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n`;
  for (const [k, v] of Object.entries(q.headers)) head += `${k}: ${v}\r\n`;
  if (q.body) head += `Content-Length: ${q.body.length}\r\n`;
  return Buffer.concat([Buffer.from(head + '\r\n', 'latin1'), q.body ?? Buffer.alloc(0)]);
}

/** a chunked body's content, or undefined while incomplete */
function dechunk(b: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const nl = b.indexOf('\r\n', at);
    if (nl < 0) return undefined;
    const n = parseInt(b.toString('latin1', at, nl), 16);
    if (Number.isNaN(n)) return b.subarray(at);
    if (n === 0) return Buffer.concat(parts);
    if (b.length < nl + 2 + n + 2) return undefined;
    parts.push(b.subarray(nl + 2, nl + 2 + n));
    at = nl + 2 + n + 2;
  }
}

/** a stream (a watch, a followed log): its answer is its head. A parameter is true unless 0 or false, as Go's query conversion reads it (watch= is a watch) */
const isWatch = (q: Req) => /[?&](watch|follow)(=(?!0(&|$)|false(&|$))|&|$)/i.test(q.target) || /\/watch\//.test(q.target);

function overH1(q: Req): Promise<Answer | string> {
  const t = c.credentials;
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    let done = false;
    const finish = (a: Answer | string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(a);
    };
    const parse = (closed: boolean): void => {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        if (closed) finish(buf.length ? `a head without its end: ${JSON.stringify(buf.toString('latin1').slice(0, 300))}` : 'the connection closed without an answer');
        return;
      }
      const head = buf.toString('latin1', 0, end);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? -1);
      const type = /\r\ncontent-type: ([^\r]*)/i.exec(head)?.[1] ?? '';
      const rest = buf.subarray(end + 4);
      if (status < 200 && status >= 100) {
        buf = rest;
        return parse(closed);
      }
      if (q.method === 'HEAD' || status === 204 || status === 304) return finish({ status, type, body: Buffer.alloc(0) });
      if (status === 200 && isWatch(q)) return finish({ status, type, body: rest, headOnly: true });
      const len = /\r\ncontent-length: (\d+)/i.exec(head);
      if (len) {
        if (rest.length >= Number(len[1])) return finish({ status, type, body: rest.subarray(0, Number(len[1])) });
      } else if (/\r\ntransfer-encoding: chunked/i.test(head)) {
        const b = dechunk(rest);
        if (b) return finish({ status, type, body: b });
      } else if (closed) return finish({ status, type, body: rest });
      if (closed) finish(`the connection closed inside the body: ${JSON.stringify(head)}`);
    };
    const timer = setTimeout(() => finish(`no answer in ${TIMEOUT_MS} ms; got ${JSON.stringify(buf.toString('latin1').slice(0, 300))}`), TIMEOUT_MS);
    const sock = tls.connect({ host: '127.0.0.1', port: c.port, ca: t.ca, cert: t.cert, key: t.key, servername: 'localhost', ALPNProtocols: ['http/1.1'] });
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      parse(false);
    });
    sock.on('error', () => {});
    sock.on('close', () => parse(true));
    sock.once('secureConnect', async () => {
      const w = wire(q);
      let at = 0;
      for (const s of q.splits) {
        if (s >= w.length) break;
        sock.write(w.subarray(at, s));
        at = s;
        await new Promise((r) => setTimeout(r, 5));
      }
      sock.write(w.subarray(at));
    });
  });
}

let session: http2.ClientHttp2Session | undefined;
function overH2(q: Req): Promise<Answer | string> {
  return new Promise((resolve) => {
    if (!session || session.closed || session.destroyed) {
      const t = c.credentials;
      session = http2.connect(c.url, { ca: t.ca, cert: t.cert, key: t.key, servername: 'localhost' });
      session.on('error', () => {});
    }
    let done = false;
    const finish = (a: Answer | string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(a);
    };
    const timer = setTimeout(() => {
      s.close();
      finish(`no answer in ${TIMEOUT_MS} ms`);
    }, TIMEOUT_MS);
    let s: http2.ClientHttp2Stream;
    try {
      s = session.request({ ':method': q.method, ':path': q.target, ...q.headers, ...(q.body ? { 'content-length': String(q.body.length) } : {}) }, { endStream: !q.body });
    } catch (e) {
      clearTimeout(timer);
      resolve({ status: 0, type: `client refused: ${(e as Error).message}`, body: Buffer.alloc(0) });
      return;
    }
    let head: http2.IncomingHttpHeaders | undefined;
    const chunks: Buffer[] = [];
    s.on('response', (h) => {
      head = h;
      if (h[':status'] === 200 && isWatch(q)) {
        finish({ status: 200, type: String(h['content-type'] ?? ''), body: Buffer.alloc(0), headOnly: true });
        s.close();
      }
    });
    s.on('data', (d: Buffer) => chunks.push(d));
    const answer = () => (head ? finish({ status: Number(head[':status']), type: String(head['content-type'] ?? ''), body: Buffer.concat(chunks) }) : finish('the stream ended without an answer'));
    s.on('end', answer);
    s.on('close', answer);
    s.on('error', (e) => finish(`stream error: ${e.message}`));
    if (q.body) s.end(q.body);
  });
}

/** the Status in an answer's body, in whatever representation it came (undefined if it is none) */
async function statusOf(a: Answer): Promise<{ kind?: string; code?: number } | undefined> {
  try {
    if (a.type.startsWith('application/vnd.kubernetes.protobuf')) {
      const env = decodeEnvelope(a.body);
      return env.kind === 'Status' ? { kind: 'Status', ...(decodeMessage('io.k8s.apimachinery.pkg.apis.meta.v1.Status', env.raw) as object) } : undefined;
    }
    if (a.type.startsWith('application/cbor')) {
      const { decode } = (await import('cborg')) as any;
      const tags: any[] = [];
      tags[55799] = (d: any) => d();
      const v = decode(a.body, { tags, useMaps: true });
      const get = (k: string) => {
        for (const [key, x] of v as Map<any, any>) if ((key instanceof Uint8Array ? Buffer.from(key).toString() : String(key)) === k) return x instanceof Uint8Array ? Buffer.from(x).toString() : x;
        return undefined;
      };
      return { kind: get('kind'), code: Number(get('code')) };
    }
    if (a.type.startsWith('application/yaml')) return YAML.parse(a.body.toString('utf8'));
    return JSON.parse(a.body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Kubernetes' 500s: the connect subresources of a Pod whose Node has no address (connect.ts) */
const DOCUMENTED_500 = /no preferred addresses found/;

async function check(q: Req, a: Answer | string): Promise<string | undefined> {
  if (typeof a === 'string') return a;
  if (a.status === 0) return undefined; // the client library refused to send it (HTTP/2 header rules)
  const text = a.body.toString('utf8');
  if (a.status >= 500 && a.status !== 503 && a.status !== 504 && !DOCUMENTED_500.test(text)) return `a ${a.status}`;
  if (q.badLine) return a.status === 400 ? undefined : `Go refuses this request line with a plain 400, got ${a.status}`;
  if (a.status < 300 || a.status === 304 || q.method === 'HEAD' || a.headOnly) return undefined;
  const api = /^\/(api|apis)(\/|$|\?)/.test(q.target);
  if (!api) return undefined; // (outside the API: the plain-text 404 and the health checks' own words)
  const s = await statusOf(a);
  if (!s || s.kind !== 'Status') return `a ${a.status} that is not a Status`;
  if (Number(s.code) !== a.status) return `a Status with code ${s.code} in a ${a.status} answer`;
  return undefined;
}

function describeReq(q: Req): string {
  const body = q.body ? (q.body.every((b) => b >= 9 && b < 127) ? JSON.stringify(q.body.toString('latin1').slice(0, 600)) : `base64 ${q.body.toString('base64').slice(0, 800)}`) : 'none';
  return `#${q.i} over ${q.h2 ? 'HTTP/2' : 'HTTP/1.1'}${q.splits.length ? ` split at ${q.splits.join(',')}` : ''}: ${q.method} ${JSON.stringify(q.target)} headers ${JSON.stringify(q.headers)} body ${body}`;
}

test(`fuzz: ${COUNT} seeded random requests (seed ${SEED}) are answered, within the time, as Kubernetes answers them`, { timeout: 300_000 }, async () => {
  const reqs = generate(SEED, COUNT, objects());
  const failures: string[] = [];
  let next = 0;
  const statuses = new Map<number, number>();
  const worker = async () => {
    while (next < reqs.length) {
      const q = reqs[next++]!;
      const a = q.h2 ? await overH2(q) : await overH1(q);
      if (typeof a !== 'string') statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
      const problem = await check(q, a);
      if (problem) {
        const got = typeof a === 'string' ? '' : ` (answer ${a.status} ${a.type}: ${JSON.stringify(a.body.toString('utf8').slice(0, 400))})`;
        failures.push(`${problem}${got}\n    request ${describeReq(q)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  session?.close();
  // the server is still up, and logged nothing unhandled
  assert.equal(c.proc?.exitCode, null, `keelson exited:\n${c.logs.slice(-3000)}`);
  const ready = await c.raw('GET', '/readyz');
  assert.equal(ready.status, 200);
  const unhandled = c.logs.split('\n').filter((l) => /Unhandled/.test(l));
  assert.ok(
    failures.length === 0 && unhandled.length === 0,
    `seed ${SEED} (KEELSON_FUZZ_SEED=${SEED} KEELSON_FUZZ_COUNT=${COUNT} to reproduce): ${failures.length} bad answers, ${unhandled.length} unhandled errors in the log\n` +
      [...failures.slice(0, 15), ...unhandled.slice(0, 5)].join('\n'),
  );
  // (the spread of answers, so that a change that makes every request fail early shows)
  assert.ok((statuses.get(200) ?? 0) + (statuses.get(201) ?? 0) > COUNT / 20, `too few successes: ${JSON.stringify([...statuses])}`);
});
