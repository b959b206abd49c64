// The proxy's link rewriting (apiserver/proxyhtml.ts), case by case as kube-apiserver's
// proxy.Transport rewrites: which URLs go through the proxy, which stay, and HTML left byte for
// byte around the attributes it rewrites. (The proxy itself: test/e2e/kubelet-streaming.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rewriteHTML, rewriteHTMLBody, rewriteURL, type RewriteContext } from '../../src/apiserver/proxyhtml.js';
import { deflateRawSync, deflateSync, gunzipSync, gzipSync, inflateRawSync } from 'node:zlib';
import { joinPreserveTrailingSlash } from '../../src/apiserver/proxy.js';

const ctx: RewriteContext = { pathPrepend: '/api/v1/namespaces/ns/services/web:80/proxy', backendHost: '10.1.0.5:8080', requestHost: '127.0.0.1:8001' };
const P = ctx.pathPrepend;

test('rewriteURL: absolute paths of the backend go through the proxy; other hosts, relative URLs and paths already under it stay', () => {
  for (const [from, to] of [
    ['/metrics', `${P}/metrics`],
    ['/a/b/?x=1#top', `${P}/a/b/?x=1#top`],
    ['/', `${P}/`],
    ['/a/../b', `${P}/b`],
    ['http://10.1.0.5:8080/login?next=/', `${P}/login?next=/`],
    // the host the client asked for keeps its scheme and host
    ['http://127.0.0.1:8001/x', `http://127.0.0.1:8001${P}/x`],
    ['https://example.com/x', 'https://example.com/x'],
    ['//cdn.example.com/x.js', '//cdn.example.com/x.js'],
    ['style.css', 'style.css'],
    ['../up', '../up'],
    ['mailto:someone@example.com', 'mailto:someone@example.com'],
    ['#frag', '#frag'],
    [`${P}/already`, `${P}/already`],
  ]) assert.equal(rewriteURL(from!, ctx), to, from);
  // Go's url.Parse refuses these: the caller leaves them (HTML) or answers 500 (a Location)
  assert.equal(rewriteURL('/bad%zz', ctx), undefined);
  assert.equal(rewriteURL('a:b/c:d', ctx), 'a:b/c:d');
  assert.equal(rewriteURL('x y:z', ctx), undefined);
});

test('rewriteHTML: only the URL attributes of the tags kube-apiserver knows, the rest of the page as it was', () => {
  const page = '<!DOCTYPE html>\r\n<HTML manifest=/app.appcache><body background="/bg.png">\n<a HREF=\'/x\' title="/not-a-url">é</a><div data-src="/no"></div>' +
    '<script>var u = "<a href=\\"/in-script\\">";</script><img src="/i.png" alt="/alt"><form action="/post"><button formaction="/b">b</button></form><!-- <a href="/comment"> --></body></HTML>';
  const want = `<!DOCTYPE html>\r\n<HTML manifest="${P}/app.appcache"><body background="${P}/bg.png">\n<a href="${P}/x" title="/not-a-url">é</a><div data-src="/no"></div>` +
    `<script>var u = "<a href=\\"/in-script\\">";</script><img src="${P}/i.png" alt="/alt"><form action="${P}/post"><button formaction="${P}/b">b</button></form><!-- <a href="/comment"> --></body></HTML>`;
  assert.equal(rewriteHTML(page, ctx), want);
  // a page with nothing to rewrite is the same string
  const plain = '<p>no links <a href="rel">r</a></p>';
  assert.equal(rewriteHTML(plain, ctx), plain);
  // a value with quotes is written escaped, as Go's tokenizer writes it
  assert.equal(rewriteHTML('<a href=\'/q"x\'>', ctx), `<a href="${P}/q&#34;x">`);
});

test('joinPreserveTrailingSlash: Go\'s path.Join, cleaned, keeping the last part\'s trailing slash', () => {
  assert.equal(joinPreserveTrailingSlash('', ''), '');
  assert.equal(joinPreserveTrailingSlash('', '/a/b/'), '/a/b/');
  assert.equal(joinPreserveTrailingSlash('', '/a//b/../c'), '/a/c');
  assert.equal(joinPreserveTrailingSlash('', '/../../etc/passwd'), '/etc/passwd');
  assert.equal(joinPreserveTrailingSlash('/a', ''), '/a');
  assert.equal(joinPreserveTrailingSlash('', '/'), '/');
});

test('rewriteHTMLBody: a plain, gzip or deflate page is rewritten and sent in its encoding; another encoding as it came; a body that does not decompress throws', () => {
  const page = '<a href="/x">é</a>';
  const want = `<a href="${P}/x">é</a>`;
  assert.equal(rewriteHTMLBody(Buffer.from(page), '', ctx).toString(), want);
  assert.equal(gunzipSync(rewriteHTMLBody(gzipSync(page), 'gzip', ctx)).toString(), want);
  // (deflate as Go's compress/flate reads it: raw DEFLATE, no zlib header)
  assert.equal(inflateRawSync(rewriteHTMLBody(deflateRawSync(page), 'deflate', ctx)).toString(), want);
  const br = Buffer.from('not rewritten');
  assert.equal(rewriteHTMLBody(br, 'br', ctx), br);
  assert.throws(() => rewriteHTMLBody(Buffer.from(page), 'gzip', ctx));
  assert.throws(() => rewriteHTMLBody(deflateSync(Buffer.alloc(0)).subarray(0, 1), 'deflate', ctx));
});
