// A container image registry of a test's own: the OCI distribution API's pull side (the manifest
// and blob reads a runtime makes), over plain HTTP on 127.0.0.1, serving the one image of an OCI
// image-layout tarball (test/nodeagent/containerd.ts builds them) under a repository and tag of
// the test's choosing, behind HTTP Basic authentication. It records each request and the user it
// came as, so that a test can tell which credentials a pull presented.
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, createReadStream, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';

export interface RegistryRequest {
  method: string;
  path: string;
  /** the user of a valid Authorization header; '' for none, `!<user>` for a wrong password */
  user: string;
}

export interface TestRegistry {
  /** host:port, as image references name it */
  host: string;
  requests: RegistryRequest[];
  stop(): Promise<void>;
}

export interface RegistryOptions {
  /** an OCI image-layout tarball (index.json, blobs/sha256/...) holding one image */
  layoutTar: string;
  /** the repository (`team/busybox`) the image is served under, at every tag */
  repository: string;
  /** user name -> password; a request without a valid one is 401 */
  users: Record<string, string>;
}

const MANIFEST_TYPE = 'application/vnd.oci.image.manifest.v1+json';

export async function startRegistry(o: RegistryOptions): Promise<TestRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'keelson-registry-'));
  execFileSync('tar', ['-xf', o.layoutTar, '-C', dir]);
  const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8'));
  const manifestDigest: string = index.manifests[0].digest;
  const blobPath = (digest: string) => join(dir, 'blobs', 'sha256', digest.replace(/^sha256:/, ''));
  const manifest = readFileSync(blobPath(manifestDigest));
  const requests: RegistryRequest[] = [];

  const userOf = (req: http.IncomingMessage): string => {
    const h = req.headers.authorization ?? '';
    const m = /^Basic (.+)$/.exec(h);
    if (!m) return '';
    const [user, ...rest] = Buffer.from(m[1]!, 'base64').toString('utf8').split(':');
    return o.users[user!] !== undefined && o.users[user!] === rest.join(':') ? user! : `!${user}`;
  };
  const error = (res: http.ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}) => {
    const body = JSON.stringify({ errors: [{ code, message, detail: null }] });
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Docker-Distribution-API-Version': 'registry/2.0', ...headers });
    res.end(body);
  };

  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const user = userOf(req);
    requests.push({ method: req.method ?? '', path, user });
    req.resume();
    if (user === '' || user.startsWith('!')) {
      error(res, 401, 'UNAUTHORIZED', 'authentication required', { 'WWW-Authenticate': 'Basic realm="keelson-test-registry"' });
      return;
    }
    if (path === '/v2/' || path === '/v2') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Docker-Distribution-API-Version': 'registry/2.0' });
      res.end('{}');
      return;
    }
    const m = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(path);
    if (!m || m[1] !== o.repository) {
      error(res, 404, 'NAME_UNKNOWN', 'repository name not known to registry');
      return;
    }
    const head = req.method === 'HEAD';
    if (m[2] === 'manifests') {
      if (m[3]!.startsWith('sha256:') && m[3] !== manifestDigest) {
        error(res, 404, 'MANIFEST_UNKNOWN', 'manifest unknown');
        return;
      }
      res.writeHead(200, { 'Content-Type': MANIFEST_TYPE, 'Content-Length': manifest.length, 'Docker-Content-Digest': manifestDigest });
      res.end(head ? undefined : manifest);
      return;
    }
    const file = blobPath(m[3]!);
    if (!/^sha256:[0-9a-f]{64}$/.test(m[3]!) || !existsSync(file)) {
      error(res, 404, 'BLOB_UNKNOWN', 'blob unknown to registry');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': statSync(file).size, 'Docker-Content-Digest': m[3]! });
    if (head) res.end();
    else createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    host: `127.0.0.1:${port}`,
    requests,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** containerd's hosts.toml for a plain-HTTP registry at `host` (host:port), under its registry config directory */
export function registryHostsToml(host: string): string {
  return `server = "http://${host}"\n\n[host."http://${host}"]\n  capabilities = ["pull", "resolve"]\n`;
}
