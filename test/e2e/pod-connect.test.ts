// A Pod's log, exec, attach and portforward subresources against a real keelson, driven by
// kubectl 1.33, 1.32 and 1.27 and by raw HTTPS: what kube-apiserver answers before it connects to
// the node's kubelet (options parsed and validated, admission CONNECT, the pod and its container,
// the node and its address); then log, exec, attach and portforward connect to the node's kubelet
// (here a closed port: the connection error, as kube-apiserver answers it; exec and friends first
// need an upgrade request, 400 without one; test/e2e/pod-logs.test.ts reads logs from a kubelet,
// test/e2e/kubelet-streaming.test.ts execs through one). A real HTTPS webhook server, started by
// the test on 127.0.0.1, sees the CONNECT admission.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { expectStatus, startCluster, type Cluster } from './harness.js';
import { respond, startWebhookServer, type WebhookServer } from '../admission/webhookserver.js';

let c: Cluster;
let hooks: WebhookServer;
const NS = 'connect';

before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory'] });
  hooks = await startWebhookServer();
  hooks.handle('/deny-exec', (r) =>
    (r.request.object?.command ?? []).includes('forbidden') ? respond(r, { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'no forbidden commands' } }) : respond(r, { allowed: true }),
  );
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
  const sa = await c.raw('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } } });
  assert.ok(sa.status === 201 || sa.status === 409, sa.text);
  await pod('one', { containers: [{ name: 'main', image: 'nginx' }] });
  await pod('two', { initContainers: [{ name: 'init', image: 'busybox' }], containers: [{ name: 'a', image: 'nginx' }, { name: 'b', image: 'nginx' }] });
  // nodes: one with an address and a kubelet port, one with neither
  assert.equal((await c.raw('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'addressed' } } })).status, 201);
  const st = await c.raw('PATCH', '/api/v1/nodes/addressed/status', {
    body: JSON.stringify({ status: { addresses: [{ type: 'ExternalIP', address: '127.0.0.2' }, { type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: 10999 } } } }),
    headers: { 'content-type': 'application/merge-patch+json' },
  });
  assert.equal(st.status, 200, st.text);
  assert.equal((await c.raw('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'bare' } } })).status, 201);
  await pod('on-addressed', { nodeName: 'addressed', containers: [{ name: 'main', image: 'nginx' }] });
  await pod('on-bare', { nodeName: 'bare', containers: [{ name: 'main', image: 'nginx' }] });
  await pod('on-gone', { nodeName: 'gone', containers: [{ name: 'main', image: 'nginx' }] });
});

after(async () => {
  await hooks?.close();
  await c?.stop();
});

async function pod(name: string, spec: object): Promise<void> {
  const r = await c.raw('POST', `/api/v1/namespaces/${NS}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec } });
  assert.equal(r.status, 201, r.text);
}

const path = (name: string, sub: string, query = '') => `/api/v1/namespaces/${NS}/pods/${name}/${sub}${query}`;

test('kubectl logs of a pod on no node prints nothing and succeeds (204 No Content, as kube-apiserver answers); 1.33, 1.32 and 1.27', async () => {
  for (const version of ['1.33', '1.32', '1.27']) {
    const r = c.kubectl(['logs', '-n', NS, 'one'], { version });
    assert.equal(r.code, 0, `${version}: ${r.stderr}`);
    assert.equal(r.stdout, '', version);
    assert.equal(r.stderr, '', version);
  }
  const raw = await c.raw('GET', path('one', 'log', '?container=main&follow=true&timestamps=1'));
  assert.equal(raw.status, 204);
  assert.equal(raw.text, '');
});

test('kubectl exec and attach of a pod on no node: 400 "does not have a host assigned", over WebSocket (1.33, 1.32) and SPDY (1.27)', async () => {
  for (const version of ['1.33', '1.32', '1.27']) {
    const r = c.kubectl(['exec', '-n', NS, 'one', '--', 'ls', '-l'], { version });
    assert.equal(r.code, 1, version);
    assert.equal(r.stderr, 'Error from server (BadRequest): pod one does not have a host assigned\n', version);
  }
  const a = c.kubectl(['attach', '-n', NS, 'one'], { version: '1.33' });
  assert.equal(a.code, 1);
  assert.match(a.stderr, /Error from server \(BadRequest\): pod one does not have a host assigned\n$/);
  // the upgrade requests as kubectl sends them, and a plain POST and GET of portforward
  const ws = await c.raw('GET', path('one', 'exec', '?command=ls&container=main&stdout=true&stderr=true'), {
    headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', 'sec-websocket-protocol': 'v5.channel.k8s.io' },
  });
  assert.equal(expectStatus(ws, 400, 'BadRequest', 'exec over websocket').message, 'pod one does not have a host assigned');
  const spdy = await c.raw('POST', path('one', 'exec', '?command=ls&stdout=true'), { headers: { connection: 'Upgrade', upgrade: 'SPDY/3.1', 'x-stream-protocol-version': 'v4.channel.k8s.io', 'content-length': '0' } });
  expectStatus(spdy, 400, 'BadRequest', 'exec over SPDY');
  for (const method of ['GET', 'POST']) {
    const pf = await c.raw(method, path('one', 'portforward', '?ports=80&ports=443'));
    assert.equal(expectStatus(pf, 400, 'BadRequest', `portforward ${method}`).message, 'pod one does not have a host assigned');
  }
});

test('the container: a pod of several containers needs one named (the names listed, init ones first); a named one must be the pod\'s', async () => {
  for (const sub of ['log', 'exec', 'attach']) {
    const r = await c.raw(sub === 'log' ? 'GET' : 'POST', path('two', sub, sub === 'exec' ? '?command=ls' : ''));
    assert.equal(expectStatus(r, 400, 'BadRequest', sub).message, 'a container name must be specified for pod two, choose one of: [init a b]');
    const bad = await c.raw(sub === 'log' ? 'GET' : 'POST', path('two', sub, '?container=zz&command=ls'));
    assert.equal(expectStatus(bad, 400, 'BadRequest', sub).message, 'container zz is not valid for pod two');
  }
  // an init container is a container of the pod; portforward names none
  assert.equal((await c.raw('GET', path('two', 'log', '?container=init'))).status, 204);
  expectStatus(await c.raw('POST', path('two', 'portforward', '?container=zz')), 400, 'BadRequest');
  const r = c.kubectl(['logs', '-n', NS, 'two', '-c', 'b']);
  assert.equal(r.code, 0, r.stderr);
});

test('log options: malformed numbers and times are 400; kube-apiserver\'s checks are 422 PodLogOptions; a missing pod is 404 after them', async () => {
  const bad = async (query: string, message: string) => {
    const r = await c.raw('GET', path('one', 'log', query));
    assert.equal(expectStatus(r, 400, 'BadRequest', query).message, message);
  };
  await bad('?tailLines=x', 'strconv.ParseInt: parsing "x": invalid syntax');
  await bad('?limitBytes=', 'strconv.ParseInt: parsing "": invalid syntax');
  await bad('?sinceSeconds=99999999999999999999', 'strconv.ParseInt: parsing "99999999999999999999": value out of range');
  await bad('?sinceTime=yesterday', 'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"');
  const invalid = async (query: string, message: string, causes: object[]) => {
    const r = await c.raw('GET', path('one', 'log', query));
    const s = expectStatus(r, 422, 'Invalid', query);
    assert.equal(s.message, message);
    assert.deepEqual(s.details, { name: 'one', kind: 'PodLogOptions', causes });
  };
  await invalid('?tailLines=-1&limitBytes=0', 'PodLogOptions "one" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0]', [
    { reason: 'FieldValueInvalid', message: 'Invalid value: -1: must be greater than or equal to 0', field: 'tailLines' },
    { reason: 'FieldValueInvalid', message: 'Invalid value: 0: must be greater than 0', field: 'limitBytes' },
  ]);
  await invalid('?sinceSeconds=0', 'PodLogOptions "one" is invalid: sinceSeconds: Invalid value: 0: must be greater than 0', [
    { reason: 'FieldValueInvalid', message: 'Invalid value: 0: must be greater than 0', field: 'sinceSeconds' },
  ]);
  await invalid('?sinceSeconds=5&sinceTime=2024-01-02T03:04:05Z', 'PodLogOptions "one" is invalid: : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified', [
    { reason: 'FieldValueForbidden', message: 'Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified', field: '' },
  ]);
  // valid options on a pod that is not there
  const missing = await c.raw('GET', `/api/v1/namespaces/${NS}/pods/nope/log?tailLines=10&sinceTime=2024-01-02T03:04:05Z`);
  assert.equal(expectStatus(missing, 404, 'NotFound').message, 'pods "nope" not found');
  expectStatus(await c.raw('POST', `/api/v1/namespaces/${NS}/pods/nope/exec?command=ls`), 404, 'NotFound');
  expectStatus(await c.raw('POST', path('one', 'portforward', '?ports=http')), 400, 'BadRequest');
});

test('other methods are 405: log takes GET only, exec, attach and portforward GET and POST', async () => {
  for (const [method, sub] of [['POST', 'log'], ['PUT', 'log'], ['DELETE', 'exec'], ['PATCH', 'attach'], ['PUT', 'portforward']] as const) {
    const r = await c.raw(method, path('one', sub), method === 'DELETE' ? {} : { body: '{}', headers: { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' } });
    expectStatus(r, 405, 'MethodNotAllowed', `${method} ${sub}`);
  }
});

test('a pod on a node: the node must exist (404) and report an address (500); log, exec, attach and portforward then dial the kubelet (a closed port: the dial error, 500); exec and friends need an upgrade (400)', async () => {
  const spdy = { connection: 'Upgrade', upgrade: 'SPDY/3.1', 'x-stream-protocol-version': 'v4.channel.k8s.io' };
  for (const [sub, method] of [['log', 'GET'], ['exec', 'POST'], ['attach', 'GET'], ['portforward', 'POST']] as const) {
    const gone = await c.raw(method, path('on-gone', sub, sub === 'exec' ? '?command=ls' : ''));
    assert.equal(expectStatus(gone, 404, 'NotFound', sub).message, 'nodes "gone" not found');
    const bare = await c.raw(method, path('on-bare', sub, sub === 'exec' ? '?command=ls' : ''));
    assert.equal(bare.status, 500, bare.text);
    assert.deepEqual(bare.json(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'no preferred addresses found; known addresses: []', code: 500 });
    if (sub === 'log') continue;
    // no upgrade asked for: kube-apiserver's UpgradeAwareHandler (UpgradeRequired) refuses it before dialling
    const plain = await c.raw(method, path('on-addressed', sub, sub === 'exec' ? '?command=ls' : ''));
    assert.equal(expectStatus(plain, 400, 'BadRequest', sub).message, 'Upgrade request required');
    // an upgrade: dialled at the node's InternalIP (before its ExternalIP in kube-apiserver's
    // preferred address types) and its kubelet's port; a dial error is 500 with no reason
    const up = await c.raw(method, path('on-addressed', sub, sub === 'exec' ? '?command=ls&stdout=true' : ''), { headers: spdy });
    assert.equal(up.status, 500, up.text);
    assert.deepEqual(up.json(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'error dialing backend: dial tcp 127.0.0.1:10999: connect: connection refused', code: 500 });
  }
  // kubectl prints it (1.33 tries a WebSocket first, gets the same 500 and falls back to SPDY)
  for (const version of ['1.33', '1.27']) {
    const r = c.kubectl(['exec', '-n', NS, 'on-addressed', '--', 'ls'], { version });
    assert.deepEqual([r.code, r.stderr], [1, 'Error from server: error dialing backend: dial tcp 127.0.0.1:10999: connect: connection refused\n'], version);
  }
  // log: kube-apiserver's LocationStreamer dials https://<address>:<kubelet port>/containerLogs/...; an
  // error that is not a Status is 500 with no reason, the url.Error's text
  const log = await c.raw('GET', path('on-addressed', 'log', '?follow=true&tailLines=3&timestamps=true'));
  assert.equal(log.status, 500, log.text);
  assert.deepEqual(log.json(), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Get "https://127.0.0.1:10999/containerLogs/connect/on-addressed/main?follow=true&tailLines=3&timestamps=true": dial tcp 127.0.0.1:10999: connect: connection refused',
    code: 500,
  });
  const r = c.kubectl(['logs', '-n', NS, 'on-addressed']);
  assert.equal(r.code, 1);
  assert.equal(r.stderr, 'Error from server: Get "https://127.0.0.1:10999/containerLogs/connect/on-addressed/main": dial tcp 127.0.0.1:10999: connect: connection refused\n');
});

test('admission: exec is admitted as CONNECT with its PodExecOptions (a webhook may refuse it); a log is not admitted', async () => {
  const cfg = await c.raw('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
    body: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'connect-exec' },
      webhooks: [
        {
          name: 'exec.connect.example.com',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          clientConfig: { url: hooks.url('/deny-exec'), caBundle: hooks.caBundle },
          rules: [{ operations: ['CONNECT'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/exec', 'pods/log'] }],
        },
      ],
    },
  });
  assert.equal(cfg.status, 201, cfg.text);
  try {
    const denied = await c.raw('POST', path('one', 'exec', '?command=cat&command=forbidden&stdin=true&tty=1&container=main'));
    assert.equal(expectStatus(denied, 403, 'Forbidden').message, 'admission webhook "exec.connect.example.com" denied the request: no forbidden commands');
    const seen = hooks.received.get('/deny-exec')!.at(-1)!.review.request;
    assert.equal(seen.operation, 'CONNECT');
    assert.equal(seen.subResource, 'exec');
    assert.equal(seen.name, 'one');
    assert.equal(seen.namespace, NS);
    assert.deepEqual(seen.kind, { group: '', version: 'v1', kind: 'PodExecOptions' });
    assert.deepEqual(seen.object, { kind: 'PodExecOptions', apiVersion: 'v1', stdin: true, tty: true, container: 'main', command: ['cat', 'forbidden'] });
    // allowed: on to the pod (no host assigned)
    expectStatus(await c.raw('POST', path('one', 'exec', '?command=ls')), 400, 'BadRequest');
    const calls = hooks.received.get('/deny-exec')!.length;
    assert.equal((await c.raw('GET', path('one', 'log'))).status, 204);
    assert.equal(hooks.received.get('/deny-exec')!.length, calls, 'a log is a get, not a connect: no admission');
  } finally {
    await c.raw('DELETE', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/connect-exec');
  }
});

test('proxy of pods, services and nodes: the location resolved as kube-apiserver resolves it, and its refusals (the proxying itself: kubelet-streaming.test.ts, with real pods)', async () => {
  // a pod with a container port and a loopback IP; a pod with no IP
  await pod('loop', { containers: [{ name: 'main', image: 'nginx', ports: [{ containerPort: 8080 }] }] });
  const s = await c.raw('PATCH', path('loop', 'status'), { body: JSON.stringify({ status: { podIP: '127.0.0.1', podIPs: [{ ip: '127.0.0.1' }] } }), headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(s.status, 200, s.text);
  const unavailable = async (p: string, message: string, method = 'GET') => assert.equal(expectStatus(await c.raw(method, p), 503, 'ServiceUnavailable', p).message, message);
  assert.equal(expectStatus(await c.raw('GET', path('loop', 'proxy', '/metrics')), 400, 'BadRequest').message, 'address not allowed');
  assert.equal(expectStatus(await c.raw('POST', `/api/v1/namespaces/${NS}/pods/https:loop:9443/proxy/`), 400, 'BadRequest').message, 'address not allowed');
  assert.equal(expectStatus(await c.raw('GET', path('one', 'proxy')), 400, 'BadRequest').message, 'address not allowed', 'a pod without an IP');
  assert.equal(expectStatus(await c.raw('GET', `/api/v1/namespaces/${NS}/pods/ftp:loop:21/proxy`), 400, 'BadRequest').message, 'invalid pod request "ftp:loop:21"');
  assert.equal(expectStatus(await c.raw('GET', `/api/v1/namespaces/${NS}/pods/nope/proxy/a/b`), 404, 'NotFound').message, 'pods "nope" not found');
  expectStatus(await c.raw('TRACE', path('loop', 'proxy')), 405, 'MethodNotAllowed');
  // a service: a port by number or by name, an address of its Endpoints on that port that is its pod's
  const svc = await c.raw('POST', `/api/v1/namespaces/${NS}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] } } });
  assert.equal(svc.status, 201, svc.text);
  const svcPath = (id: string, rest = '') => `/api/v1/namespaces/${NS}/services/${id}/proxy${rest}`;
  assert.equal(expectStatus(await c.raw('GET', svcPath('web:80')), 404, 'NotFound').message, 'endpoints "web" not found');
  const ep = await c.raw('POST', `/api/v1/namespaces/${NS}/endpoints`, { body: { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'web' } } });
  assert.equal(ep.status, 201, ep.text);
  await unavailable(svcPath('web:http'), 'no endpoints available for service "web"');
  // addresses that are no pod's (no targetRef; a pod whose IP differs) are passed over
  const put = await c.raw('PUT', `/api/v1/namespaces/${NS}/endpoints/web`, {
    body: {
      apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'web' },
      subsets: [{ addresses: [{ ip: '10.1.2.3' }, { ip: '10.1.2.4', targetRef: { kind: 'Pod', namespace: NS, name: 'loop' } }], ports: [{ name: 'http', port: 8080 }] }],
    },
  });
  assert.equal(put.status, 200, put.text);
  await unavailable(svcPath('web:80', '/index.html'), 'no endpoints available for service "web:80"');
  await unavailable(svcPath('http:web:http'), 'no endpoints available for service "http:web:http"');
  await unavailable(svcPath('web:81'), 'no service port 81 found for service "web"');
  await unavailable(svcPath('web'), 'no endpoints available for service "web"', 'DELETE');
  assert.equal(expectStatus(await c.raw('GET', svcPath('nope:80')), 404, 'NotFound').message, 'services "nope" not found');
  // a node: its kubelet, whose address must not be a loopback one
  assert.equal(expectStatus(await c.raw('GET', '/api/v1/nodes/addressed/proxy/metrics'), 400, 'BadRequest').message, 'address not allowed');
  assert.equal(expectStatus(await c.raw('GET', '/api/v1/nodes/http:addressed:8080/proxy/'), 400, 'BadRequest').message, 'address not allowed');
  assert.equal(expectStatus(await c.raw('GET', '/api/v1/nodes/gone/proxy'), 404, 'NotFound').message, 'nodes "gone" not found');
  // kubectl reaches them through get --raw
  const r = c.kubectl(['get', '--raw', `/api/v1/namespaces/${NS}/services/web:80/proxy/`]);
  assert.equal(r.code, 1);
  assert.equal(r.stderr, 'Error from server (ServiceUnavailable): no endpoints available for service "web:80"\n');
  // a path below any other subresource is not found
  expectStatus(await c.raw('GET', path('web', 'status', '/extra')), 404, 'NotFound');
});
