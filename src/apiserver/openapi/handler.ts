// Serving the OpenAPI documents: GET /openapi/v2 (JSON or gnostic protobuf, by Accept),
// GET /openapi/v3 (the index of documents with their hashes) and GET /openapi/v3/<name>
// (one document; with ?hash= it is immutable, a stale hash is redirected to the current one).
// Bodies are answered with an ETag (the SHA-512 of the body, as Kubernetes does), 304 on a
// matching If-None-Match, and gzip when the client accepts it and the body is large.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { OpenAPIDocs } from './index.js';
import { openapiHash } from './json.js';

const PROTO_V2_CONTENT_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
/** the form clients put in Accept; it is never sent back: Go's mime parser rejects the '@' */
const PROTO_V2_ACCEPT = 'com.github.proto-openapi.spec.v2@v1.0+protobuf';
const PROTO_V2_SUBTYPE = 'com.github.proto-openapi.spec.v2.v1.0+protobuf';

/** bodies smaller than this are sent uncompressed */
const GZIP_MIN_BYTES = 1024;
const ONE_YEAR_SECONDS = 365 * 24 * 60 * 60;

const gzipCache = new WeakMap<Uint8Array, Buffer>();
const etagCache = new WeakMap<Uint8Array, string>();

function etagOf(body: Uint8Array, hash?: string): string {
  if (hash) return `"${hash}"`;
  let e = etagCache.get(body);
  if (!e) etagCache.set(body, (e = `"${openapiHash(body)}"`));
  return e;
}

interface Clause {
  type: string;
  subtype: string;
  q: number;
}

/** The clauses of an Accept header, best first; clauses with q=0 are dropped. */
export function parseAccept(header: string | undefined): Clause[] {
  const raw = header && header.trim() !== '' ? header : '*/*';
  const out: (Clause & { i: number })[] = [];
  raw.split(',').forEach((part, i) => {
    const [mt, ...params] = part.split(';').map((s) => s.trim());
    if (!mt) return;
    const slash = mt.indexOf('/');
    const type = (slash < 0 ? mt : mt.slice(0, slash)).toLowerCase();
    const subtype = (slash < 0 ? '*' : mt.slice(slash + 1)).toLowerCase();
    let q = 1;
    for (const p of params) {
      const m = /^q\s*=\s*([0-9.]+)$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (!(q > 0)) return;
    out.push({ type, subtype, q, i });
  });
  // higher q first; among equals, more specific first, then header order
  const spec = (c: Clause) => (c.type === '*' ? 0 : c.subtype === '*' ? 1 : 2);
  out.sort((a, b) => b.q - a.q || spec(b) - spec(a) || a.i - b.i);
  return out;
}

function acceptsGzip(req: IncomingMessage): boolean {
  const h = req.headers['accept-encoding'];
  if (!h) return false;
  for (const part of String(h).split(',')) {
    const [enc, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (enc !== 'gzip' && enc !== '*') continue;
    const q = params.map((p) => /^q=([0-9.]+)$/.exec(p)).find((m) => m);
    if (!q || Number(q[1]) > 0) return true;
  }
  return false;
}

function etagMatches(req: IncomingMessage, etag: string): boolean {
  const h = req.headers['if-none-match'];
  if (!h) return false;
  for (const t of String(h).split(',')) {
    const v = t.trim();
    if (v === '*' || v === etag || v === `W/${etag}`) return true;
  }
  return false;
}

function sendStatus(res: ServerResponse, code: number, reason: string, message: string, head: boolean): void {
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-cache, private',
  });
  res.end(head ? undefined : body);
}

function sendBody(
  req: IncomingMessage,
  res: ServerResponse,
  body: Uint8Array,
  headers: Record<string, string>,
  etag: string,
): void {
  const head = req.method === 'HEAD';
  const h: Record<string, string | number> = { ...headers, ETag: etag, Vary: headers.Vary ? `${headers.Vary}, Accept-Encoding` : 'Accept-Encoding' };
  if (etagMatches(req, etag)) {
    delete h['Content-Type'];
    res.writeHead(304, h);
    res.end();
    return;
  }
  let out: Uint8Array = body;
  if (body.length >= GZIP_MIN_BYTES && acceptsGzip(req)) {
    let gz = gzipCache.get(body);
    if (!gz) gzipCache.set(body, (gz = gzipSync(body)));
    out = gz;
    h['Content-Encoding'] = 'gzip';
  }
  h['Content-Length'] = out.length;
  res.writeHead(200, h);
  res.end(head ? undefined : out);
}

function serveV2(req: IncomingMessage, res: ServerResponse, docs: OpenAPIDocs): void {
  const head = req.method === 'HEAD';
  for (const c of parseAccept(req.headers.accept)) {
    if (c.type !== 'application' && c.type !== '*') continue;
    if (c.subtype === 'json' || c.subtype === '*') {
      const body = docs.v2Json();
      sendBody(req, res, body, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', Vary: 'Accept' }, etagOf(body));
      return;
    }
    if (c.subtype === PROTO_V2_ACCEPT || c.subtype === PROTO_V2_SUBTYPE) {
      const body = docs.v2Proto();
      sendBody(req, res, body, { 'Content-Type': PROTO_V2_CONTENT_TYPE, 'Cache-Control': 'no-cache, private', Vary: 'Accept' }, etagOf(body));
      return;
    }
  }
  sendStatus(res, 406, 'NotAcceptable', `only the following media types are accepted: application/json, ${PROTO_V2_CONTENT_TYPE}`, head);
}

function acceptsJson(req: IncomingMessage): boolean {
  return parseAccept(req.headers.accept).some((c) => (c.type === 'application' || c.type === '*') && (c.subtype === 'json' || c.subtype === '*'));
}

function serveV3(req: IncomingMessage, res: ServerResponse, docs: OpenAPIDocs, name: string, url: URL): void {
  const head = req.method === 'HEAD';
  if (!acceptsJson(req)) {
    sendStatus(res, 406, 'NotAcceptable', 'only the following media types are accepted: application/json', head);
    return;
  }
  if (name === '') {
    const body = docs.v3Index();
    sendBody(req, res, body, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' }, etagOf(body));
    return;
  }
  const doc = docs.v3Doc(name);
  if (!doc) {
    sendStatus(res, 404, 'NotFound', 'the server could not find the requested resource', head);
    return;
  }
  const etag = etagOf(doc.body, doc.hash);
  const hash = url.searchParams.get('hash');
  if (hash !== null && hash !== '') {
    if (hash !== doc.hash) {
      // a stale link: send the client to the current document, as kube-apiserver does
      res.writeHead(301, {
        Location: `/openapi/v3/${name}?hash=${doc.hash}`,
        'Cache-Control': 'no-cache, private',
        'Content-Length': 0,
        Vary: 'Accept',
      });
      res.end();
      return;
    }
    sendBody(
      req,
      res,
      doc.body,
      {
        'Content-Type': 'application/json',
        'Cache-Control': `public, immutable, max-age=${ONE_YEAR_SECONDS}`,
        Expires: new Date(Date.now() + ONE_YEAR_SECONDS * 1000).toUTCString(),
        Vary: 'Accept',
      },
      etag,
    );
    return;
  }
  sendBody(req, res, doc.body, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', Vary: 'Accept' }, etag);
}

/**
 * Serves /openapi/v2 and /openapi/v3[/...]. Returns false, having done nothing, when the path
 * is not one of those.
 */
export function handleOpenAPI(req: IncomingMessage, res: ServerResponse, docs: OpenAPIDocs): boolean {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = url.pathname;
  let kind: 'v2' | 'v3';
  let name = '';
  if (path === '/openapi/v2' || path === '/openapi/v2/') kind = 'v2';
  else if (path === '/openapi/v3' || path === '/openapi/v3/') kind = 'v3';
  else if (path.startsWith('/openapi/v3/')) {
    kind = 'v3';
    name = path.slice('/openapi/v3/'.length).replace(/\/+$/, '');
  } else return false;

  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    sendStatus(res, 405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`, false);
    return true;
  }
  if (kind === 'v2') serveV2(req, res, docs);
  else serveV3(req, res, docs, name, url);
  return true;
}
