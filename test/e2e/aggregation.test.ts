// The API aggregation layer: a real keelson server and an extension API server this test runs on
// 127.0.0.1 (node:https, a certificate for api.wardle.svc from a CA of its own), reached through
// an ExternalName Service `wardle/api` whose external name is localhost. Checked: the Available
// condition of remote APIServices with each reason, the proxying of get, list, create and watch
// with the front-proxy headers and client certificate, 503 when unavailable, the group in /apis,
// /apis/<group> and aggregated discovery (Stale when the extension server is down), its OpenAPI
// documents in /openapi/v3 and /openapi/v2 (kubectl explain 1.32 and 1.27), and kubectl.
// kubectl runs asynchronously throughout: a blocking child process would stop this process's
// extension server from answering the server's checks.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { createCA, issueServingCert } from '../../src/apiserver/pki.js';
import { startCluster, until, type Cluster } from './harness.js';
import { listenLocal } from '../admission/webhookserver.js';

const GROUP = 'wardle.example.com';
const GV = `${GROUP}/v1alpha1`;
const AGG_ACCEPT = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  clientCert?: { subject: string; issuer: string };
  sni?: string;
}

const FLUNDER_DEF = 'com.example.wardle.v1alpha1.Flunder';
const flunderSchema = {
  type: 'object',
  description: 'A Flunder is the test kind of the wardle extension server.',
  properties: {
    apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' },
    kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' },
    metadata: { type: 'object', description: 'Standard object metadata.' },
    spec: { type: 'object', description: 'What the flunder should be.', properties: { reference: { type: 'string', description: 'The name of another flunder this one refers to.' } } },
  },
  'x-kubernetes-group-version-kind': [{ group: GROUP, kind: 'Flunder', version: 'v1alpha1' }],
};
/** the extension server's OpenAPI documents: v3 of its group version, and v2 with a path and a definition outside it */
const EXT_V3 = {
  openapi: '3.0.0',
  info: { title: 'Wardle', version: 'v0.1' },
  paths: { [`/apis/${GV}/namespaces/{namespace}/flunders/{name}`]: { get: { 'x-kubernetes-action': 'get', 'x-kubernetes-group-version-kind': { group: GROUP, version: 'v1alpha1', kind: 'Flunder' }, responses: { '200': { description: 'OK', content: { 'application/json': { schema: { $ref: `#/components/schemas/${FLUNDER_DEF}` } } } } } } } },
  components: { schemas: { [FLUNDER_DEF]: flunderSchema } },
};
const EXT_V2 = {
  swagger: '2.0',
  info: { title: 'Wardle', version: 'v0.1' },
  paths: {
    [`/apis/${GV}/namespaces/{namespace}/flunders/{name}`]: { get: { operationId: 'readWardleV1alpha1NamespacedFlunder', responses: { '200': { description: 'OK', schema: { $ref: `#/definitions/${FLUNDER_DEF}` } } } } },
    '/apis/other.example.com/v1/things': { get: { operationId: 'listThings', responses: { '200': { description: 'OK' } } } },
  },
  definitions: { [FLUNDER_DEF]: flunderSchema, 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': { type: 'object', description: 'the extension server\'s copy' } },
};

const flunder = (name: string, ns = 'default') => ({ apiVersion: GV, kind: 'Flunder', metadata: { name, namespace: ns, resourceVersion: '1' } });

/** the extension API server: discovery of wardle.example.com/v1alpha1 (flunders) and a few answers */
async function startExtension() {
  const ca = await createCA('wardle-test-ca');
  const serving = await issueServingCert(ca, 'api', { dns: ['api.wardle.svc', 'localhost'], ips: ['127.0.0.1'] });
  const seen: Seen[] = [];
  const resources = {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: GV,
    resources: [{ name: 'flunders', singularName: 'flunder', namespaced: true, kind: 'Flunder', verbs: ['create', 'get', 'list', 'watch'], shortNames: ['fl'] }],
  };
  const group = { name: GROUP, versions: [{ groupVersion: GV, version: 'v1alpha1' }], preferredVersion: { groupVersion: GV, version: 'v1alpha1' } };
  const server = https.createServer({ cert: serving.certPEM, key: serving.keyPEM, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const sock = req.socket as import('node:tls').TLSSocket;
      const pc = sock.getPeerCertificate();
      const raw = pc?.raw ? new X509Certificate(pc.raw) : undefined;
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), clientCert: raw ? { subject: raw.subject, issuer: raw.issuer } : undefined, sni: (sock as any).servername });
      const u = new URL(req.url!, 'https://x');
      const json = (code: number, body: unknown, type = 'application/json') => {
        res.writeHead(code, { 'content-type': type });
        res.end(JSON.stringify(body));
      };
      if (u.pathname === '/apis') {
        if (String(req.headers.accept ?? '').includes('as=APIGroupDiscoveryList')) {
          return json(200, {
            kind: 'APIGroupDiscoveryList',
            apiVersion: 'apidiscovery.k8s.io/v2',
            metadata: {},
            items: [
              {
                metadata: { name: GROUP },
                versions: [
                  {
                    version: 'v1alpha1',
                    resources: [{ resource: 'flunders', responseKind: { group: GROUP, version: 'v1alpha1', kind: 'Flunder' }, scope: 'Namespaced', singularResource: 'flunder', verbs: ['create', 'get', 'list', 'watch'], shortNames: ['fl'] }],
                    freshness: 'Current',
                  },
                ],
              },
            ],
          }, `${AGG_ACCEPT}`);
        }
        return json(200, { kind: 'APIGroupList', apiVersion: 'v1', groups: [group] });
      }
      if (u.pathname === `/apis/${GV}`) return json(200, resources);
      if (u.pathname === '/openapi/v3') return json(200, { paths: { [`apis/${GV}`]: { serverRelativeURL: `/openapi/v3/apis/${GV}?hash=EXT` } } });
      if (u.pathname === `/openapi/v3/apis/${GV}`) return json(200, EXT_V3);
      if (u.pathname === '/openapi/v2') return json(200, EXT_V2);
      if (u.pathname === `/apis/${GROUP}`) return json(200, { kind: 'APIGroup', apiVersion: 'v1', ...group });
      const m = /^\/apis\/wardle\.example\.com\/v1alpha1\/(?:namespaces\/([^/]+)\/)?flunders(?:\/([^/]+))?$/.exec(u.pathname);
      if (!m) return json(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
      if (req.method === 'POST') {
        const obj = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        return json(201, { ...obj, metadata: { ...obj.metadata, namespace: m[1], uid: 'u-1', resourceVersion: '2' } });
      }
      if (m[2]) return json(200, flunder(m[2], m[1]));
      if (u.searchParams.get('watch') === 'true') {
        // a watch: one event now, one a little later, open until the client goes
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(JSON.stringify({ type: 'ADDED', object: flunder('f1') }) + '\n');
        const t = setTimeout(() => res.write(JSON.stringify({ type: 'ADDED', object: flunder('f2') }) + '\n'), 300);
        res.on('close', () => clearTimeout(t));
        return;
      }
      return json(200, { kind: 'FlunderList', apiVersion: GV, metadata: { resourceVersion: '1' }, items: [flunder('f1')] });
    });
  });
  // an upgrade (an extension's own console or exec): 101, then what comes is echoed upper-cased
  server.on('upgrade', (req, sock: import('node:net').Socket) => {
    const tsock = sock as import('node:tls').TLSSocket;
    const pc = tsock.getPeerCertificate();
    const raw = pc?.raw ? new X509Certificate(pc.raw) : undefined;
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: '', clientCert: raw ? { subject: raw.subject, issuer: raw.issuer } : undefined, sni: (tsock as any).servername });
    sock.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
    sock.on('data', (d: Buffer) => sock.write(d.toString().toUpperCase()));
    sock.on('error', () => sock.destroy());
  });
  const { port, close } = await listenLocal(server);
  return { port, caBundle: Buffer.from(ca.certPEM).toString('base64'), seen, close };
}

describe('API aggregation', () => {
  let c: Cluster;
  let ext: Awaited<ReturnType<typeof startExtension>>;
  let extOpen = true;
  const kubectl = async (args: string[]) => {
    const r = await c.kubectlAsync(args);
    return r;
  };
  const apply = async (obj: object) => {
    const r = await c.raw('POST', '/apis/apiregistration.k8s.io/v1/apiservices', { body: obj });
    assert.equal(r.status, 201, r.text);
  };
  const apiService = (version: string, service: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: `${version}.${GROUP}` },
    spec: { group: GROUP, version, groupPriorityMinimum: 1000, versionPriority: 15, service, ...extra },
  });
  const metrics = async () => {
    const r = await c.raw('GET', '/metrics');
    assert.equal(r.status, 200);
    return r.text;
  };
  const available = async (name: string, reason: string) =>
    until(`${name} Available ${reason}`, async () => {
      const r = await c.raw('GET', `/apis/apiregistration.k8s.io/v1/apiservices/${name}`);
      const cond = r.json().status?.conditions?.find((x: any) => x.type === 'Available');
      return cond?.reason === reason ? cond : undefined;
    }, 20_000);

  before(async () => {
    ext = await startExtension();
    c = await startCluster();
    const ns = await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'wardle' } } });
    assert.equal(ns.status, 201, ns.text);
  });
  after(async () => {
    if (extOpen) await ext?.close();
    await c?.stop();
  });

  test('ServiceNotFound, and 503 "service unavailable" while the APIService is not available', async () => {
    await apply(apiService('v1alpha1', { namespace: 'wardle', name: 'api', port: ext.port }, { caBundle: ext.caBundle }));
    const cond = await available(`v1alpha1.${GROUP}`, 'ServiceNotFound');
    assert.equal(cond.status, 'False');
    assert.equal(cond.message, 'service/api in "wardle" is not present');
    const r = await c.raw('GET', `/apis/${GV}/namespaces/default/flunders`);
    assert.equal(r.status, 503);
    assert.equal(r.text, 'service unavailable\n');
    assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
    const out = (await kubectl(['get', 'apiservices', `v1alpha1.${GROUP}`])).stdout;
    assert.match(out, /^v1alpha1\.wardle\.example\.com\s+wardle\/api\s+False \(ServiceNotFound\)\s+/m);
    // kube-aggregator's gauge: 1 for it, 0 for a local APIService
    const m = await metrics();
    assert.match(m, /^aggregator_unavailable_apiservice\{name="v1alpha1\.wardle\.example\.com"\} 1$/m);
    assert.match(m, /^aggregator_unavailable_apiservice\{name="v1\.apps"\} 0$/m);
    assert.doesNotMatch(m, /^aggregator_unavailable_apiservice_total\{/m, 'never available: not counted');
  });

  test('ServicePortError, EndpointsNotFound and MissingEndpoints for a ClusterIP Service', async () => {
    const svc = await c.raw('POST', '/api/v1/namespaces/wardle/services', {
      body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'cip' }, spec: { ports: [{ name: 'https', port: 443, targetPort: 8443 }] } },
    });
    assert.equal(svc.status, 201, svc.text);
    const name = `v1beta1.${GROUP}`;
    await apply(apiService('v1beta1', { namespace: 'wardle', name: 'cip', port: 444 }, { insecureSkipTLSVerify: true }));
    let cond = await available(name, 'ServicePortError');
    assert.equal(cond.message, 'service/cip in "wardle" is not listening on port 444');
    const cur = (await c.raw('GET', `/apis/apiregistration.k8s.io/v1/apiservices/${name}`)).json();
    cur.spec.service.port = 443;
    assert.equal((await c.raw('PUT', `/apis/apiregistration.k8s.io/v1/apiservices/${name}`, { body: cur })).status, 200);
    cond = await available(name, 'EndpointsNotFound');
    assert.equal(cond.message, 'cannot find endpoints for service/cip in "wardle"');
    // an address for another port name only (a documentation address: never dialled, the check stops here)
    const ep = await c.raw('POST', '/api/v1/namespaces/wardle/endpoints', {
      body: { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'cip' }, subsets: [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ name: 'metrics', port: 9090 }] }] },
    });
    assert.equal(ep.status, 201, ep.text);
    cond = await available(name, 'MissingEndpoints');
    assert.equal(cond.message, 'endpoints for service/cip in "wardle" have no addresses with port name "https"');
    assert.equal((await c.raw('DELETE', `/apis/apiregistration.k8s.io/v1/apiservices/${name}`)).status, 200);
  });

  test('Passed once the ExternalName Service leads to the extension server', async () => {
    const svc = await c.raw('POST', '/api/v1/namespaces/wardle/services', {
      body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'api' }, spec: { type: 'ExternalName', externalName: 'localhost' } },
    });
    assert.equal(svc.status, 201, svc.text);
    const cond = await available(`v1alpha1.${GROUP}`, 'Passed');
    assert.equal(cond.status, 'True');
    assert.equal(cond.message, 'all checks passed');
    // the check: a GET of the group version as system:kube-aggregator in system:masters
    const check = ext.seen.find((s) => s.url === `/apis/${GV}` && s.headers['x-remote-user'] === 'system:kube-aggregator');
    assert.ok(check, 'the discovery check reached the extension server');
    assert.equal(check.headers['x-remote-group'], 'system:masters');
    const out = (await kubectl(['get', 'apiservices', `v1alpha1.${GROUP}`])).stdout;
    assert.match(out, /^v1alpha1\.wardle\.example\.com\s+wardle\/api\s+True\s+/m);
    assert.match(await metrics(), /^aggregator_unavailable_apiservice\{name="v1alpha1\.wardle\.example\.com"\} 0$/m);
  });

  test('get, list and create are proxied with the user in the front-proxy headers and the front-proxy client certificate', async () => {
    const before = ext.seen.length;
    const list = await c.raw('GET', `/apis/${GV}/namespaces/default/flunders?limit=5&labelSelector=a%3Db`, { headers: { Accept: 'application/json' } });
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.json().items.map((i: any) => i.metadata.name), ['f1']);
    const got = ext.seen.slice(before).find((s) => s.url.startsWith(`/apis/${GV}/namespaces/default/flunders?`))!;
    assert.ok(got);
    assert.equal(got.url, `/apis/${GV}/namespaces/default/flunders?labelSelector=a%3Db&limit=5`);
    assert.equal(got.headers['x-remote-user'], 'kubernetes-admin');
    assert.equal(got.headers['x-remote-group'], 'system:masters, system:authenticated');
    assert.equal(got.headers.accept, 'application/json');
    assert.equal(got.headers.authorization, undefined);
    assert.ok(got.headers['audit-id']);
    assert.deepEqual(got.clientCert, { subject: 'CN=front-proxy-client', issuer: 'CN=front-proxy-ca' });
    assert.equal(got.sni, 'api.wardle.svc');
    // the request is authorized here first: alice may not get flunders
    const denied = await c.raw('GET', `/apis/${GV}/namespaces/default/flunders/f9`, { headers: { 'Impersonate-User': 'alice' } });
    assert.equal(denied.status, 403, denied.text);
    assert.equal(ext.seen.filter((s) => s.url.endsWith('/f9')).length, 0);
    // impersonation: the impersonated user goes on, the Impersonate-* headers do not
    const imp = await c.raw('GET', `/apis/${GV}/namespaces/default/flunders/f9`, { headers: { 'Impersonate-User': 'alice', 'Impersonate-Group': 'system:masters', 'Impersonate-Extra-Scopes': 'view' } });
    assert.equal(imp.status, 200, imp.text);
    assert.equal(imp.json().metadata.name, 'f9');
    const seenImp = ext.seen.find((s) => s.url === `/apis/${GV}/namespaces/default/flunders/f9`)!;
    assert.equal(seenImp.headers['x-remote-user'], 'alice');
    assert.equal(seenImp.headers['x-remote-group'], 'system:masters, system:authenticated');
    assert.equal(seenImp.headers['x-remote-extra-scopes'], 'view');
    assert.equal(Object.keys(seenImp.headers).filter((h) => h.startsWith('impersonate-')).length, 0);
    // a create: method, body and Content-Type go through, the answer comes back as it is
    const created = await c.raw('POST', `/apis/${GV}/namespaces/default/flunders`, { body: { apiVersion: GV, kind: 'Flunder', metadata: { name: 'made' } } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.json().metadata, { name: 'made', namespace: 'default', uid: 'u-1', resourceVersion: '2' });
    const seenPost = ext.seen.find((s) => s.method === 'POST')!;
    assert.equal(seenPost.headers['content-type'], 'application/json');
    assert.equal(JSON.parse(seenPost.body).metadata.name, 'made');
  });

  test('an upgrade is spliced through to the extension server, with the front-proxy headers and client certificate', async () => {
    const t = c.credentials;
    const path = `/apis/${GV}/namespaces/default/flunders/f1/console?tty=1`;
    const sock = tls.connect({ host: '127.0.0.1', port: c.port, ca: t.ca, cert: t.cert, key: t.key, servername: 'localhost', ALPNProtocols: ['http/1.1'] });
    try {
      let got = '';
      sock.on('data', (d) => (got += d.toString()));
      await new Promise<void>((r) => sock.once('secureConnect', () => r()));
      sock.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: echo\r\nX-Remote-User: mallory\r\n\r\n`);
      await until('the 101', async () => (got.includes('\r\n\r\n') ? true : undefined), 10_000);
      assert.match(got, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
      got = '';
      sock.write('hello through');
      await until('the echo', async () => (got === 'HELLO THROUGH' ? true : undefined), 10_000);
    } finally {
      sock.destroy();
    }
    const seenUp = ext.seen.find((s) => s.url === `/apis/${GV}/namespaces/default/flunders/f1/console?tty=1`)!;
    assert.ok(seenUp);
    assert.equal(seenUp.headers['x-remote-user'], 'kubernetes-admin', 'the client\'s own X-Remote-User does not go on');
    assert.equal(seenUp.headers.upgrade, 'echo');
    assert.ok(seenUp.headers['audit-id']);
    assert.deepEqual(seenUp.clientCert, { subject: 'CN=front-proxy-client', issuer: 'CN=front-proxy-ca' });
    assert.equal(seenUp.sni, 'api.wardle.svc');
  });

  test('a watch is streamed as the extension server writes it', async () => {
    const s = c.stream(`/apis/${GV}/namespaces/default/flunders?watch=true`);
    await s.ready;
    assert.equal(s.status, 200);
    const first = await s.until((ev) => ev.length >= 1);
    assert.equal(first[0].object.metadata.name, 'f1');
    const both = await s.until((ev) => ev.length >= 2);
    assert.deepEqual(both.map((e) => e.object.metadata.name), ['f1', 'f2']);
    s.close();
  });

  test('the group in /apis, /apis/<group> and aggregated discovery; kubectl lists and gets the resource', async () => {
    const legacy = (await c.raw('GET', '/apis')).json();
    const names = legacy.groups.map((g: any) => g.name);
    assert.ok(names.includes(GROUP), names.join(','));
    // groupPriorityMinimum 1000 ranks after every built-in group
    assert.equal(names.indexOf(GROUP), names.indexOf('flowcontrol.apiserver.k8s.io') + 1);
    const g = await c.raw('GET', `/apis/${GROUP}`);
    assert.deepEqual(g.json(), { kind: 'APIGroup', apiVersion: 'v1', name: GROUP, versions: [{ groupVersion: GV, version: 'v1alpha1' }], preferredVersion: { groupVersion: GV, version: 'v1alpha1' } });
    const rl = await c.raw('GET', `/apis/${GV}`);
    assert.equal(rl.json().resources[0].name, 'flunders');
    const agg = await until('aggregated discovery with the group', async () => {
      const r = (await c.raw('GET', '/apis', { headers: { Accept: AGG_ACCEPT } })).json();
      const item = r.items.find((i: any) => i.metadata.name === GROUP);
      return item?.versions?.[0]?.freshness === 'Current' ? item : undefined;
    });
    assert.equal(agg.versions[0].version, 'v1alpha1');
    assert.equal(agg.versions[0].resources[0].resource, 'flunders');
    const ar = await kubectl(['api-resources', '--api-group', GROUP]);
    assert.equal(ar.code, 0, ar.stderr);
    assert.match(ar.stdout, /^flunders\s+fl\s+wardle\.example\.com\/v1alpha1\s+true\s+Flunder$/m);
    const get = await kubectl(['get', 'flunders', '-n', 'default', '-o', 'name']);
    assert.equal(get.code, 0, get.stderr);
    assert.equal(get.stdout.trim(), 'flunder.wardle.example.com/f1');
  });

  test('OpenAPI: the extension server\'s v3 document in the index and served, its paths and definitions in v2; kubectl explain knows the kind', async () => {
    const index = await until('apis/<group>/<version> in the v3 index', async () => {
      const r = (await c.raw('GET', '/openapi/v3')).json();
      return r.paths?.[`apis/${GV}`] ? r : undefined;
    });
    assert.ok(index.paths['api/v1'], 'the server\'s own documents stay');
    const url: string = index.paths[`apis/${GV}`].serverRelativeURL;
    assert.match(url, /^\/openapi\/v3\/apis\/wardle\.example\.com\/v1alpha1\?hash=[0-9A-F]{128}$/);
    const doc = await c.raw('GET', url);
    assert.equal(doc.status, 200);
    assert.deepEqual(doc.json(), EXT_V3);
    assert.match(String(doc.headers['cache-control']), /immutable/);
    assert.equal(doc.headers.etag, `"${url.split('hash=')[1]}"`);
    const stale = await c.raw('GET', `/openapi/v3/apis/${GV}?hash=0`);
    assert.equal(stale.status, 301);
    assert.equal(stale.headers.location, url);
    const v2 = (await c.raw('GET', '/openapi/v2')).json();
    assert.ok(v2.paths[`/apis/${GV}/namespaces/{namespace}/flunders/{name}`], 'the group version\'s path');
    assert.equal(v2.paths['/apis/other.example.com/v1/things'], undefined, 'nothing outside the group version');
    assert.ok(v2.paths['/api/v1/namespaces'], 'the server\'s own paths stay');
    assert.deepEqual(v2.definitions[FLUNDER_DEF], flunderSchema);
    assert.notEqual(v2.definitions['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'].description, "the extension server's copy", 'a definition the server has is its own');
    // kubectl explain reads the v3 document (1.32) or the v2 protobuf document (1.27 without OpenAPI v3 for explain)
    for (const version of ['1.32', '1.27']) {
      const e = await c.kubectlAsync(['explain', 'flunders'], { version });
      assert.equal(e.code, 0, `${version}: ${e.stderr}`);
      assert.match(e.stdout, /KIND:\s+Flunder/, version);
      assert.match(e.stdout, /A Flunder is the test kind of the wardle extension server\./, version);
      const f = await c.kubectlAsync(['explain', 'flunders.spec.reference'], { version });
      assert.equal(f.code, 0, `${version}: ${f.stderr}`);
      assert.match(f.stdout, /The name of another flunder this one refers to\./, version);
    }
  });

  test('the extension server down: FailedDiscoveryCheck, 503, a Stale group version, kubectl fails to get the resource', async () => {
    await ext.close();
    extOpen = false;
    // a change of the Service runs the check now (it runs every 30 s besides)
    const p = await c.raw('PATCH', '/api/v1/namespaces/wardle/services/api', { headers: { 'content-type': 'application/merge-patch+json' }, body: JSON.stringify({ metadata: { annotations: { poke: '1' } } }) });
    assert.equal(p.status, 200, p.text);
    const cond = await available(`v1alpha1.${GROUP}`, 'FailedDiscoveryCheck');
    assert.equal(cond.status, 'False');
    const url = `https://localhost:${ext.port}/apis/${GV}`;
    assert.ok(cond.message.startsWith(`failing or missing response from ${url}: Get "${url}": dial tcp `), cond.message);
    assert.match(cond.message, /: connect: connection refused$/);
    const out = (await kubectl(['get', 'apiservices', `v1alpha1.${GROUP}`])).stdout;
    assert.match(out, /^v1alpha1\.wardle\.example\.com\s+wardle\/api\s+False \(FailedDiscoveryCheck\)\s+/m);
    const m = await metrics();
    assert.match(m, /^aggregator_unavailable_apiservice\{name="v1alpha1\.wardle\.example\.com"\} 1$/m);
    assert.match(m, /^aggregator_unavailable_apiservice_total\{name="v1alpha1\.wardle\.example\.com",reason="FailedDiscoveryCheck"\} 1$/m);
    const r = await c.raw('GET', `/apis/${GV}/namespaces/default/flunders`);
    assert.equal(r.status, 503);
    assert.equal(r.text, 'service unavailable\n');
    const stale = await until('a Stale entry', async () => {
      const d = (await c.raw('GET', '/apis', { headers: { Accept: AGG_ACCEPT } })).json();
      const item = d.items.find((i: any) => i.metadata.name === GROUP);
      return item?.versions?.[0]?.freshness === 'Stale' ? item : undefined;
    });
    assert.deepEqual(stale.versions, [{ version: 'v1alpha1', freshness: 'Stale' }]);
    // its OpenAPI documents go with it
    const index = (await c.raw('GET', '/openapi/v3')).json();
    assert.equal(index.paths[`apis/${GV}`], undefined);
    assert.equal((await c.raw('GET', `/openapi/v3/apis/${GV}`)).status, 404);
    assert.equal((await c.raw('GET', '/openapi/v2')).json().definitions[FLUNDER_DEF], undefined);
    // kubectl leaves the stale group version out of its resources (its cached discovery client
    // drops it silently), and a request for the resource is answered 503
    const ar = await kubectl(['api-resources']);
    assert.doesNotMatch(ar.stdout, /flunders/);
    const get = await kubectl(['get', `flunders.${GROUP}`, '-n', 'default']);
    assert.notEqual(get.code, 0);
    assert.match(get.stderr, /ServiceUnavailable|the server is currently unable to handle the request|the server doesn't have a resource type/);
  });

  test('keelson server publishes its front-proxy CA for extension servers', async () => {
    const r = await c.raw('GET', '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication');
    const data = r.json().data;
    assert.equal(data['requestheader-allowed-names'], '["front-proxy-client"]');
    assert.equal(new X509Certificate(data['requestheader-client-ca-file']).subject, 'CN=front-proxy-ca');
  });
});
