// The URL rewriting of kube-apiserver's proxy (k8s.io/apimachinery's proxy.Transport), for the
// proxy subresources of pods, services and nodes: a backend that answers a page of its own with
// absolute links (`<a href="/metrics">`) or redirects to one (`Location: /login`) knows nothing of
// the API server's path it is reached by (/api/v1/namespaces/<ns>/services/<name>/proxy). The
// proxy rewrites such a URL to go through itself again:
// - a URL naming another host (neither the backend's address nor the Host the client asked for),
//   or a relative one (its path not beginning with '/'), is left as it is;
// - otherwise its scheme and host go (a server-side request has neither to put there), unless its
//   host is the one the client asked for, and the proxy's path is put before its path, unless the
//   path begins with it already (a trailing slash is kept).
// HTML pages (Content-Type text/html, plain, gzip or deflate) have the URL-valued attributes of
// their tags rewritten so, the tags and attributes kube-apiserver knows; a Location header always.
//
// The pages are tokenized by parse5's SAX parser (the WHATWG tokenizer, as Go's html package is),
// whose source locations let each attribute be replaced where it stands, the rest of the page
// going through byte for byte.
import { SAXParser } from 'parse5-sax-parser';
import { deflateRawSync, gunzipSync, gzipSync, inflateRawSync } from 'node:zlib';

/** the tags whose attributes hold URLs, and those attributes (kube-apiserver's list) */
const URL_ATTRS: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries({
    a: ['href'],
    applet: ['codebase'],
    area: ['href'],
    audio: ['src'],
    base: ['href'],
    blockquote: ['cite'],
    body: ['background'],
    button: ['formaction'],
    command: ['icon'],
    del: ['cite'],
    embed: ['src'],
    form: ['action'],
    frame: ['longdesc', 'src'],
    head: ['profile'],
    html: ['manifest'],
    iframe: ['longdesc', 'src'],
    img: ['longdesc', 'src', 'usemap'],
    input: ['src', 'usemap', 'formaction'],
    ins: ['cite'],
    link: ['href'],
    object: ['classid', 'codebase', 'data', 'usemap'],
    q: ['cite'],
    script: ['src'],
    source: ['src'],
    video: ['poster', 'src'],
  }).map(([tag, attrs]) => [tag, new Set(attrs)]),
);

/** where the proxy is: the path before the backend's, as the client asked for it */
export interface RewriteContext {
  /** the API server's path of the proxy, e.g. /api/v1/namespaces/default/pods/web/proxy */
  pathPrepend: string;
  /** the backend's host:port, as dialled */
  backendHost: string;
  /** the Host the client asked for (its Host header or :authority) */
  requestHost: string;
}

/** a URL in Go's parts (url.Parse); undefined where Go's parser refuses it */
interface GoURL {
  scheme: string;
  /** "//" and an authority came */
  authority: boolean;
  host: string;
  path: string;
  query: string | undefined;
  fragment: string | undefined;
}

function parseURL(s: string): GoURL | undefined {
  // (control bytes and spaces in a host make Go's url.Parse fail; a bad escape too)
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(s)) return undefined;
  let rest = s;
  let fragment: string | undefined;
  const hash = rest.indexOf('#');
  if (hash >= 0) {
    fragment = rest.slice(hash + 1);
    rest = rest.slice(0, hash);
  }
  let scheme = '';
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(rest);
  if (m) {
    scheme = m[1]!;
    rest = rest.slice(m[0].length);
  } else if (/^[^/?]*:/.test(rest)) {
    // "first path segment in URL cannot contain colon"
    return undefined;
  }
  let query: string | undefined;
  const q = rest.indexOf('?');
  if (q >= 0) {
    query = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  let host = '';
  let authority = false;
  if (rest.startsWith('//') && (scheme !== '' || !rest.startsWith('///'))) {
    authority = true;
    const end = rest.indexOf('/', 2);
    host = end < 0 ? rest.slice(2) : rest.slice(2, end);
    rest = end < 0 ? '' : rest.slice(end);
    const at = host.lastIndexOf('@');
    if (at >= 0) host = host.slice(at + 1);
    if (/\s/.test(host)) return undefined;
  }
  if (/%(?![0-9A-Fa-f]{2})/.test(rest)) return undefined;
  return { scheme, authority, host, path: rest, query, fragment };
}

function formatURL(u: GoURL): string {
  let s = '';
  if (u.scheme) s += `${u.scheme}:`;
  if (u.host !== '' || (u.authority && u.scheme !== '')) s += `//${u.host}`;
  s += u.path;
  if (u.query !== undefined) s += `?${u.query}`;
  if (u.fragment !== undefined) s += `#${u.fragment}`;
  return s;
}

/** Go's path.Join of a directory and a path: cleaned (no "..", no "//"), no trailing slash but the root's */
export function goJoin(...parts: string[]): string {
  const segs: string[] = [];
  const joined = parts.filter((p) => p !== '').join('/');
  if (joined === '') return '';
  const rooted = joined.startsWith('/');
  for (const s of joined.split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..') {
      if (segs.length && segs[segs.length - 1] !== '..') segs.pop();
      else if (!rooted) segs.push('..');
      continue;
    }
    segs.push(s);
  }
  const out = (rooted ? '/' : '') + segs.join('/');
  return out === '' ? '.' : out;
}

/** a URL the backend gave, as the proxy hands it on (see the head of this file); undefined for a URL Go cannot parse */
export function rewriteURL(raw: string, ctx: RewriteContext): string | undefined {
  const u = parseURL(raw);
  if (!u) return undefined;
  const differentHost = u.host !== '' && u.host !== ctx.backendHost && u.host !== ctx.requestHost;
  if (differentHost || !u.path.startsWith('/')) return raw;
  if (u.host !== ctx.requestHost) {
    u.scheme = '';
    u.host = '';
    u.authority = false;
  }
  if (u.path.startsWith(ctx.pathPrepend)) return formatURL(u);
  const trailing = u.path.endsWith('/');
  u.path = goJoin(ctx.pathPrepend, u.path) + (trailing ? '/' : '');
  return formatURL(u);
}

/** an attribute value as Go's html.Token.String writes it, in double quotes */
function escapeAttr(v: string): string {
  return v.replace(/[&'<>"\r]/g, (c) => ({ '&': '&amp;', "'": '&#39;', '<': '&lt;', '>': '&gt;', '"': '&#34;', '\r': '&#13;' })[c]!);
}

/** an HTML page with the URL-valued attributes of its tags rewritten (see the head of this file) */
export function rewriteHTML(html: string, ctx: RewriteContext): string {
  const edits: { start: number; end: number; text: string }[] = [];
  const parser = new SAXParser({ sourceCodeLocationInfo: true });
  parser.on('startTag', (tag) => {
    const names = URL_ATTRS.get(tag.tagName);
    // (the parser gives a start tag's attributes their own locations; its type does not say so)
    const locs = (tag.sourceCodeLocation as { attrs?: Record<string, { startOffset: number; endOffset: number }> } | undefined)?.attrs;
    if (!names || !locs) return;
    for (const a of tag.attrs) {
      if (!names.has(a.name)) continue;
      const loc = locs[a.name];
      const v = rewriteURL(a.value, ctx);
      if (!loc || v === undefined || v === a.value) continue;
      edits.push({ start: loc.startOffset, end: loc.endOffset, text: `${a.name}="${escapeAttr(v)}"` });
    }
  });
  parser.end(html);
  if (edits.length === 0) return html;
  let out = '';
  let at = 0;
  for (const e of edits) {
    out += html.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + html.slice(at);
}

/**
 * A page's body with its links rewritten, in the Content-Encoding it came in: none, gzip, or
 * deflate (raw DEFLATE, as Go's compress/flate reads it in kube-apiserver's proxy); another
 * encoding is sent as it came. Throws when the body does not decompress.
 */
export function rewriteHTMLBody(body: Buffer, encoding: string, ctx: RewriteContext): Buffer {
  if (encoding === '') return Buffer.from(rewriteHTML(body.toString('utf8'), ctx), 'utf8');
  if (encoding === 'gzip') return gzipSync(rewriteHTML(gunzipSync(body).toString('utf8'), ctx));
  if (encoding === 'deflate') return deflateRawSync(rewriteHTML(inflateRawSync(body).toString('utf8'), ctx));
  return body;
}
