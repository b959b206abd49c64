// The kubelet's /logs/ (enableSystemLogHandler, on by default with the debugging handlers): the
// node's own log directory, /var/log, served as Go's http.FileServer serves a directory, which is
// what the kubelet mounts there. `kubectl get --raw /api/v1/nodes/<node>/proxy/logs/` lists it and
// `.../proxy/logs/syslog` reads a file:
//   - a directory named without its trailing slash is redirected (301) to it;
//   - a directory is listed (`<!doctype html>`, `<pre>`, one `<a href>` per entry sorted by name,
//     directories with a trailing slash), or its index.html served;
//   - a file is sent with Last-Modified and a Content-Type from its extension or its first bytes
//     (text/plain; charset=utf-8 for text, application/octet-stream else);
//   - what is not there is `404 page not found`.
// The path is cleaned as Go cleans it (`..` stops at the root). Unlike Go's http.Dir, a symbolic
// link that leads out of the directory is not followed (404).
import { createReadStream } from 'node:fs';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, posix, sep } from 'node:path';

export const SYSTEM_LOG_DIR = '/var/log';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.json': 'application/json',
  '.xml': 'text/xml; charset=utf-8',
  '.gz': 'application/gzip',
  '.zip': 'application/zip',
};

function notFound(res: ServerResponse): void {
  res.statusCode = 404;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end('404 page not found\n');
}

function redirect(res: ServerResponse, to: string): void {
  res.statusCode = 301;
  res.setHeader('Location', to);
  res.end();
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' };

/** http.DetectContentType, for what a log directory holds: text, or not */
async function sniff(file: string): Promise<string> {
  const h = await open(file, 'r');
  try {
    const buf = Buffer.alloc(512);
    const { bytesRead } = await h.read(buf, 0, 512, 0);
    const head = buf.subarray(0, bytesRead);
    if (head[0] === 0x1f && head[1] === 0x8b) return 'application/x-gzip';
    for (const b of head) if (b < 0x09 || (b > 0x0d && b < 0x20 && b !== 0x1b)) return 'application/octet-stream';
    return 'text/plain; charset=utf-8';
  } finally {
    await h.close();
  }
}

/** serve `urlPath` (the request's path, /logs/...) from `root` */
export async function serveSystemLogs(req: IncomingMessage, res: ServerResponse, urlPath: string, root = SYSTEM_LOG_DIR): Promise<void> {
  if (urlPath === '/logs') return redirect(res, '/logs/');
  const rel = posix.normalize('/' + urlPath.slice('/logs/'.length));
  let base: string;
  let full: string;
  try {
    base = await realpath(root);
    full = await realpath(join(base, rel));
  } catch {
    return notFound(res);
  }
  if (full !== base && !full.startsWith(base + sep)) return notFound(res);
  let st;
  try {
    st = await stat(full);
  } catch {
    return notFound(res);
  }
  const head = req.method === 'HEAD';
  if (st.isDirectory()) {
    if (!urlPath.endsWith('/')) return redirect(res, `${urlPath.split('/').pop()}/`);
    const index = join(full, 'index.html');
    const ist = await stat(index).catch(() => undefined);
    if (ist?.isFile()) return sendFile(res, index, ist.size, ist.mtime, head);
    let entries;
    try {
      entries = await readdir(full, { withFileTypes: true });
    } catch {
      res.statusCode = 500;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.end('Error reading directory\n');
      return;
    }
    const names = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort((a, b) => (a.replace(/\/$/, '') < b.replace(/\/$/, '') ? -1 : 1));
    let body = '<!doctype html>\n<meta name="viewport" content="width=device-width">\n<pre>\n';
    for (const n of names) {
      const href = encodeURI(n).replace(/\?/g, '%3F').replace(/#/g, '%23');
      body += `<a href="${href}">${n.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!)}</a>\n`;
    }
    body += '</pre>\n';
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.setHeader('Last-Modified', st.mtime.toUTCString());
    res.end(head ? undefined : body);
    return;
  }
  if (!st.isFile()) return notFound(res);
  if (urlPath.endsWith('/')) return redirect(res, `../${urlPath.replace(/\/+$/, '').split('/').pop()}`);
  return sendFile(res, full, st.size, st.mtime, head);
}

async function sendFile(res: ServerResponse, file: string, size: number, mtime: Date, head: boolean): Promise<void> {
  let type = TYPES[extname(file).toLowerCase()];
  try {
    type ??= await sniff(file);
  } catch {
    return notFound(res);
  }
  res.statusCode = 200;
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', size);
  res.setHeader('Last-Modified', mtime.toUTCString());
  res.setHeader('Accept-Ranges', 'bytes');
  if (head) {
    res.end();
    return;
  }
  await new Promise<void>((resolve) => {
    // (a file that grows while it is read: what was there when it was stat'ed is sent)
    const s = createReadStream(file, { start: 0, end: Math.max(0, size - 1) });
    if (size === 0) {
      s.destroy();
      res.end();
      return resolve();
    }
    s.on('error', () => {
      res.destroy();
      resolve();
    });
    s.on('end', resolve);
    s.pipe(res);
  });
}
