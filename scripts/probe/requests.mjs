// Random requests: methods, paths of every resource, subresources and odd names, query parameters
// with odd values, media types, and bodies (random objects, random bytes, cut JSON, JSON patches,
// odd YAML). No answer may be a 5xx (but 503 and 504, which Kubernetes sends for load and for a
// future resourceVersion), an error in JSON must be a Status, and every request must be answered
// (a watch is answered by its first bytes).
import http2 from 'node:http2';
import { client, report } from './common.mjs';

// the generators are the fuzz test's (test/e2e/fuzzgen.ts, compiled)
const gen = await import(new URL('../../dist/test/e2e/fuzzgen.js', import.meta.url).href);
const { RESOURCES, CONTENT_TYPES: TYPES, ACCEPTS } = gen;

export async function run({ port, kubeconfig, seed, count = 2000, h2 = false }) {
  const c = await client(port, kubeconfig);
  const r = gen.random(seed);
  const { rnd, pick } = r;
  let session;
  const over2 = (method, path, headers, b) =>
    new Promise((resolve) => {
      if (!session || session.closed || session.destroyed) session = http2.connect(`https://127.0.0.1:${port}`, { ca: c.tls.ca, cert: c.tls.cert, key: c.tls.key, servername: 'localhost' });
      const s = session.request({ ':method': method, ':path': path, ...headers, ...(b ? { 'content-length': b.length } : {}) }, { endStream: !b });
      let head;
      const chunks = [];
      let settled = false;
      const done = (r) => {
        if (!settled) {
          settled = true;
          clearTimeout(timer);
          resolve(r);
        }
      };
      const timer = setTimeout(() => {
        s.close();
        done({ status: -1, text: 'no answer in 15 s' });
      }, 15_000);
      const answer = () => done({ status: head?.[':status'] ?? -3, type: head?.['content-type'], text: Buffer.concat(chunks).toString('utf8') });
      s.on('response', (h) => (head = h));
      s.on('data', (d) => {
        chunks.push(d);
        if (/[?&]watch=/.test(path)) s.close();
      });
      s.on('end', answer);
      s.on('close', answer);
      s.on('error', (e) => done({ status: -2, text: String(e) }));
      if (b) s.end(b);
    });
  const problems = [];
  for (let i = 0; i < count; i++) {
    const res = pick(RESOURCES);
    const path = gen.resourcePath(r, res) + gen.query(r);
    const method = pick(gen.METHODS);
    const type = pick(TYPES);
    const headers = { accept: pick(ACCEPTS) };
    let b;
    if (!['GET', 'HEAD', 'OPTIONS'].includes(method) && rnd() < 0.95) {
      b = gen.body(r, type, res, method);
      if (type) headers['content-type'] = type;
    }
    const out = h2 ? await over2(method, path, headers, b) : await c.request(method, path, { headers, body: b });
    // a watch without events is held open by design: its answer is its headers, which this client does not wait for
    const heldWatch = out.status === -1 && /[?&]watch=(1|true|[^&0f][^&]*)/i.test(path);
    let problem;
    if (out.status < 0 && !heldWatch) problem = 'no answer';
    else if (out.status >= 500 && out.status !== 503 && out.status !== 504) problem = '5xx';
    else if (out.status >= 400 && method !== 'HEAD' && out.status !== 406 && String(out.type).includes('json') && !/"kind":\s*"Status"/.test(out.text)) problem = 'an error that is not a Status';
    if (problem) problems.push({ problem, method, path, headers, status: out.status, body: b?.toString('utf8').slice(0, 300), answer: out.text?.slice(0, 300) });
  }
  session?.close();
  c.close();
  return report(`requests${h2 ? ' (HTTP/2)' : ''}`, { requests: count, problems: problems.length }, problems);
}
