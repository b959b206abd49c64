// kubectl logs through a real keelson server to a kubelet: the kubelet's ports are started in
// this process from cli/kubeletserving.ts' serveKubelet over a small NodeAgentView backed by
// hand-written CRI log files (standing in for the pod workers), with the kubelet's real
// authentication (--client-ca-file: the cluster CA, so that the API server's own kubelet client
// certificate is known; TokenReview) and Webhook authorization (SubjectAccessReviews answered by
// the server's RBAC). Real kubectl 1.33 and 1.32 read logs with -c, --tail, --timestamps, --since,
// --limit-bytes, --previous and -f (appends, a rotation, the container's end); the kubelet's ports
// are checked raw: 401 without credentials, 403 for a user without nodes/proxy (then allowed once
// RBAC grants it), the read-only port and the health port.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import http from 'node:http';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectStatus, freePort, startCluster, until, type Cluster } from './harness.js';
import { inProcessKubeletOptions } from './kubeletharness.js';
import { serveKubelet, type KubeletServing } from '../../src/cli/kubeletserving.js';
import type { NodeAgentView } from '../../src/nodeagent/server.js';
import { issueClientCert, loadCA } from '../../src/apiserver/pki.js';
import { nopLogger } from '../../src/client/log.js';

let c: Cluster;
let kubelet: KubeletServing;
let dir: string;
const NS = 'logs';
const NODE = 'logs-node';
let pods: any[] = [];
let mainRunning = true;
const verbosities: number[] = [];
/** how often the kubelet asked about the side container (a followed log asks each time it waits) */
let sideAsked = 0;
let alice: { cert: string; key: string };

/** RFC3339 with nine fraction digits, as a runtime writes it, `ms` ago */
function ago(ms: number): string {
  return new Date(Date.now() - ms).toISOString().replace(/\.(\d{3})Z$/, '.$1456789Z');
}
const T = { old: ago(2 * 3600_000), r1: ago(120_000), r2: ago(90_000), r3: ago(60_000) };
const MAIN_LOG = [`${T.old} stdout F hello from the past\n`, `${T.r1} stdout P hello \n`, `${T.r1} stdout F world\n`, `${T.r2} stderr F an error\n`, `${T.r3} stdout F last line\n`].join('');
const MAIN_TEXT = 'hello from the past\nhello world\nan error\nlast line\n';

function writeLogs(): void {
  mkdirSync(join(dir, 'main'), { recursive: true });
  writeFileSync(join(dir, 'main', '1.log'), MAIN_LOG);
  writeFileSync(join(dir, 'main', '0.log'), `${T.old} stdout F previous life\n`);
  writeFileSync(join(dir, 'side.log'), `${T.r1} stdout F side car\n`);
}

const view: NodeAgentView = {
  nodeName: NODE,
  pods: () => pods,
  runningPods: async () => pods.map((p) => ({ metadata: { name: p.metadata.name, namespace: p.metadata.namespace, uid: p.metadata.uid }, spec: { containers: p.spec.containers.map((x: any) => ({ name: x.name, image: x.image })) } })),
  configz: () => ({ kubeletconfig: { kind: 'KubeletConfiguration', apiVersion: 'kubelet.config.k8s.io/v1beta1', port: kubelet?.port } }),
  healthChecks: () => ({ ping: () => undefined, log: () => undefined, syncloop: () => undefined }),
  async containerLogPath(namespace, pod, container, previous) {
    if (namespace !== NS || pod !== 'app') return { error: `pod "${pod}" cannot be found - no logs available`, code: 400 };
    if (container === 'main') return previous ? { path: join(dir, 'main', '0.log'), running: false } : { path: join(dir, 'main', '1.log'), running: mainRunning };
    if (previous) return { error: `previous terminated container "${container}" in pod "${pod}" not found`, code: 400 };
    sideAsked++;
    return { path: join(dir, 'side.log'), running: true };
  },
};

before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory'] });
  dir = mkdtempSync(join(tmpdir(), 'keelson-kubelet-logs-'));
  // the node's own logs (/logs/)
  mkdirSync(join(dir, 'varlog', 'apt'), { recursive: true });
  writeFileSync(join(dir, 'varlog', 'syslog'), 'Dec  6 21:00:00 node kernel: hello\n');
  writeFileSync(join(dir, 'varlog', 'syslog.1.gz'), gzipSync('older\n'));
  writeFileSync(join(dir, 'varlog', 'apt', 'history.log'), 'Start-Date: 2026-12-06\n');
  // services logging to files, for the node log query's heuristics
  writeFileSync(join(dir, 'varlog', 'kube-proxy.log'), 'proxy started\n');
  mkdirSync(join(dir, 'varlog', 'etcd'));
  writeFileSync(join(dir, 'varlog', 'etcd', 'etcd.log'), 'etcd ready\n');
  // a journalctl that knows the kubelet's unit and answers with the arguments it was given
  writeFileSync(join(dir, 'journalctl'), '#!/bin/sh\nif [ "$1" = "--field" ]; then echo kubelet.service; echo containerd.service; exit 0; fi\nprintf journal; for a in "$@"; do printf \' [%s]\' "$a"; done; echo\n', { mode: 0o755 });
  writeLogs();
  const pki = join(c.dataDir, 'pki');
  const t = c.credentials;
  kubelet = await serveKubelet(
    inProcessKubeletOptions(c, join(dir, 'pki'), await freePort(), {
      readOnlyPort: await freePort(),
      healthzPort: await freePort(),
      systemLogDir: join(dir, 'varlog'),
      enableSystemLogQuery: true,
      journalctl: join(dir, 'journalctl'),
      setVerbosity: (v) => verbosities.push(v),
    }),
    view,
    { server: c.url, ca: t.ca, cert: t.cert, key: t.key },
    nopLogger,
  );
  const ca = loadCA(readFileSync(join(pki, 'ca.crt'), 'utf8'), readFileSync(join(pki, 'ca.key'), 'utf8'));
  const a = await issueClientCert(ca, 'alice', ['devs']);
  alice = { cert: a.certPEM, key: a.keyPEM };

  const ok = async (method: string, path: string, body: object, code = 201, headers?: Record<string, string>) => {
    const r = await c.raw(method, path, headers ? { body: JSON.stringify(body), headers } : { body });
    assert.equal(r.status, code, `${method} ${path}: ${r.text}`);
    return r.json();
  };
  await ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await ok('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE } });
  await ok('PATCH', `/api/v1/nodes/${NODE}/status`, { status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: kubelet.port } } } }, 200, { 'content-type': 'application/merge-patch+json' });
  const sa = await c.raw('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } } });
  assert.ok(sa.status === 201 || sa.status === 409, sa.text);
  await ok('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'viewer' } });
  const app = await ok('POST', `/api/v1/namespaces/${NS}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'app' },
    spec: { nodeName: NODE, containers: [{ name: 'main', image: 'busybox' }, { name: 'side', image: 'busybox' }] },
  });
  await ok('POST', `/api/v1/namespaces/${NS}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'ghost' }, spec: { nodeName: NODE, containers: [{ name: 'main', image: 'busybox' }] } });
  pods = [app];
});

after(async () => {
  await kubelet?.close();
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function kubeletGet(port: number, path: string, opts: { cert?: string | Buffer; key?: string | Buffer; token?: string; method?: string; plain?: boolean; body?: string } = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = opts.token ? { authorization: `Bearer ${opts.token}` } : {};
    const cb = (res: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    };
    const req = opts.plain
      ? http.request({ host: '127.0.0.1', port, path, method: opts.method ?? 'GET', headers }, cb)
      : https.request({ host: '127.0.0.1', port, path, method: opts.method ?? 'GET', headers, rejectUnauthorized: false, cert: opts.cert, key: opts.key, agent: false }, cb);
    req.on('error', reject);
    req.end(opts.body);
  });
}

for (const version of ['1.33', '1.32']) {
  // (kubectl runs beside this process, whose kubelet must answer meanwhile: kubectlAsync)
  test(`kubectl ${version} logs through the API server and the kubelet: -c, --tail, --timestamps, --since, --limit-bytes, --previous`, async () => {
    const logs = async (...args: string[]) => {
      const r = await c.kubectlAsync(['logs', '-n', NS, 'app', ...args], { version });
      assert.equal(r.stderr, '', `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.code, 0, args.join(' '));
      return r.stdout;
    };
    assert.equal(await logs('-c', 'main'), MAIN_TEXT);
    assert.equal(await logs('-c', 'main', '--tail=2'), 'an error\nlast line\n');
    assert.equal(await logs('-c', 'main', '--tail=4', '--timestamps'), `${T.r1} hello world\n${T.r2} an error\n${T.r3} last line\n`);
    // (tail counts the file's records, as the kubelet does: the last 3 begin with the end of a split line)
    assert.equal(await logs('-c', 'main', '--tail=3', '--timestamps'), `${T.r1} world\n${T.r2} an error\n${T.r3} last line\n`);
    assert.equal(await logs('-c', 'main', '--since=1h'), 'hello world\nan error\nlast line\n');
    assert.equal(await logs('-c', 'main', `--since-time=${new Date(Date.parse(T.r2) - 1000).toISOString()}`), 'an error\nlast line\n');
    assert.equal(await logs('-c', 'main', '--limit-bytes=8'), 'hello fr');
    assert.equal(await logs('-c', 'side'), 'side car\n');
    assert.equal(await logs('-c', 'main', '--previous'), 'previous life\n');
    assert.equal(await logs('-c', 'main', '-p', '--timestamps'), `${T.old} previous life\n`);
  });
}

test('errors from the kubelet come back as kube-apiserver turns them into Statuses: a 400 as BadRequest with its text, a 404 as NotFound ( pods/log <name>)', async () => {
  for (const version of ['1.33', '1.32']) {
    const prev = await c.kubectlAsync(['logs', '-n', NS, 'app', '-c', 'side', '--previous'], { version });
    assert.equal(prev.code, 1);
    assert.equal(prev.stderr, 'Error from server (BadRequest): previous terminated container "side" in pod "app" not found\n', version);
    // a pod bound to the node that its kubelet does not know: the kubelet's 404
    const ghost = await c.kubectlAsync(['logs', '-n', NS, 'ghost'], { version });
    assert.equal(ghost.code, 1);
    assert.equal(ghost.stderr, 'Error from server (NotFound): the server could not find the requested resource ( pods/log ghost)\n', version);
  }
  const raw = await c.raw('GET', `/api/v1/namespaces/${NS}/pods/ghost/log`);
  assert.deepEqual(expectStatus(raw, 404, 'NotFound'), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'the server could not find the requested resource ( pods/log ghost)',
    reason: 'NotFound',
    details: { name: 'ghost', kind: 'pods/log' },
    code: 404,
  });
  const ok = await c.raw('GET', `/api/v1/namespaces/${NS}/pods/app/log?container=side`);
  assert.equal(ok.status, 200);
  assert.equal(ok.headers['content-type'], 'text/plain');
  assert.equal(ok.text, 'side car\n');
});

for (const version of ['1.33', '1.32']) {
  test(`kubectl ${version} logs -f: appends as they come, across a rotation, and the end when the container stops`, async () => {
    writeLogs();
    mainRunning = true;
    const k = c.kubectlSpawn(['logs', '-n', NS, 'app', '-c', 'main', '-f', '--tail=1'], { version });
    const exited = new Promise<number | null>((r) => k.proc.once('exit', (code) => r(code)));
    try {
      await until('the tail', () => k.out() === 'last line\n', 15_000);
      const file = join(dir, 'main', '1.log');
      appendFileSync(file, `${ago(0)} stdout F followed one\n`);
      await until('the append', () => k.out() === 'last line\nfollowed one\n', 15_000);
      // a partial record (written in two pieces), then the record that ends its line
      appendFileSync(file, `${ago(0)} stdout P hal`);
      appendFileSync(file, `f \n${ago(0)} stdout F and whole\n`);
      await until('the joined line', () => k.out().endsWith('followed one\nhalf and whole\n'), 15_000);
      // rotation: 1.log becomes 1.log.<time>, the runtime opens a new 1.log
      renameSync(file, `${file}.20240102-030405`);
      writeFileSync(file, `${ago(0)} stdout F after the rotation\n`);
      await until('the new file', () => k.out().endsWith('whole\nafter the rotation\n'), 15_000);
      // the container stops: what is left is written, and the stream ends
      appendFileSync(file, `${ago(0)} stdout F goodbye\n`);
      mainRunning = false;
      assert.equal(await exited, 0, k.err());
      assert.equal(k.out(), 'last line\nfollowed one\nhalf and whole\nafter the rotation\ngoodbye\n');
      assert.equal(k.err(), '');
    } finally {
      k.proc.kill();
      mainRunning = true;
    }
  });
}

test('a followed log ends at the kubelet when its client goes away', async () => {
  const st = c.stream(`/api/v1/namespaces/${NS}/pods/app/log?container=side&follow=true`);
  await st.ready;
  assert.equal(st.status, 200);
  assert.equal(st.headers['content-type'], 'text/plain');
  await until('the log', () => st.text === 'side car\n', 10_000);
  const asked = sideAsked;
  await until('the kubelet following', () => sideAsked >= asked + 2, 10_000);
  st.close();
  await new Promise((r) => setTimeout(r, 1500));
  const after = sideAsked;
  await new Promise((r) => setTimeout(r, 2500));
  assert.equal(sideAsked, after, 'the kubelet stopped following');
});

test('the API server presents its own kubelet client certificate (CN kube-apiserver-kubelet-client of the cluster CA), which the kubelet knows through --client-ca-file', async () => {
  const pki = join(c.dataDir, 'pki');
  const cert = readFileSync(join(pki, 'apiserver-kubelet-client.crt'));
  const x = new X509Certificate(cert);
  assert.deepEqual(x.subject.split('\n').sort(), ['CN=kube-apiserver-kubelet-client', 'O=system:masters']);
  assert.ok(x.checkIssued(new X509Certificate(readFileSync(join(pki, 'ca.crt')))));
  const r = await kubeletGet(kubelet.port, `/containerLogs/${NS}/app/side`, { cert, key: readFileSync(join(pki, 'apiserver-kubelet-client.key')) });
  assert.equal(r.status, 200);
  assert.equal(r.text, 'side car\n');
});

test('the kubelet\'s main port: 401 without credentials (anonymous off) or with a token the TokenReview refuses; 403 for a user without nodes/proxy, until RBAC grants it', async () => {
  for (const path of ['/pods', '/healthz', `/containerLogs/${NS}/app/main`, '/nothing']) {
    const r = await kubeletGet(kubelet.port, path);
    assert.equal(r.status, 401, path);
    assert.equal(r.text, 'Unauthorized');
  }
  assert.equal((await kubeletGet(kubelet.port, '/pods', { token: 'not-a-token' })).status, 401);
  // alice: a client certificate of the cluster CA, and no RBAC
  const forbidden = await kubeletGet(kubelet.port, '/pods', alice);
  assert.equal(forbidden.status, 403);
  assert.equal(forbidden.text, 'Forbidden (user=alice, verb=get, resource=nodes, subresource(s)=[pods proxy])');
  const logs = await kubeletGet(kubelet.port, `/containerLogs/${NS}/app/main`, alice);
  assert.equal(logs.text, 'Forbidden (user=alice, verb=get, resource=nodes, subresource(s)=[proxy])');
  const metrics = await kubeletGet(kubelet.port, '/metrics', { ...alice, method: 'POST' });
  assert.equal(metrics.text, 'Forbidden (user=alice, verb=create, resource=nodes, subresource(s)=[metrics])');
  // a service account's token (a TokenReview names it)
  const tr = await c.raw('POST', `/api/v1/namespaces/${NS}/serviceaccounts/viewer/token`, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} } });
  assert.equal(tr.status, 201, tr.text);
  const token = tr.json().status.token;
  const sa = await kubeletGet(kubelet.port, '/healthz', { token });
  assert.equal(sa.status, 403);
  assert.equal(sa.text, `Forbidden (user=system:serviceaccount:${NS}:viewer, verb=get, resource=nodes, subresource(s)=[healthz proxy])`);
  // RBAC: nodes/proxy for alice (the fallback of /pods), nodes/healthz alone for the service account
  const post = async (path: string, body: object) => assert.equal((await c.raw('POST', path, { body })).status, 201);
  await post('/apis/rbac.authorization.k8s.io/v1/clusterroles', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'kubelet-proxy' }, rules: [{ apiGroups: [''], resources: ['nodes/proxy'], verbs: ['get'] }] });
  await post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'alice-kubelet-proxy' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kubelet-proxy' }, subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }] });
  await post('/apis/rbac.authorization.k8s.io/v1/clusterroles', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'kubelet-healthz' }, rules: [{ apiGroups: [''], resources: ['nodes/healthz'], verbs: ['get'], resourceNames: [NODE] }] });
  await post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'viewer-kubelet-healthz' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kubelet-healthz' }, subjects: [{ kind: 'ServiceAccount', name: 'viewer', namespace: NS }] });
  const pods = await until('alice allowed', async () => {
    const r = await kubeletGet(kubelet.port, '/pods', alice);
    return r.status === 200 && r;
  }, 10_000);
  assert.equal(pods.headers['content-type'], 'application/json');
  const list = JSON.parse(pods.text);
  assert.equal(list.kind, 'PodList');
  assert.equal(list.apiVersion, 'v1');
  assert.deepEqual(list.items.map((p: any) => p.metadata.name), ['app']);
  assert.equal((await kubeletGet(kubelet.port, `/containerLogs/${NS}/app/side?tailLines=1`, alice)).text, 'side car\n');
  const h = await until('the service account allowed', async () => {
    const r = await kubeletGet(kubelet.port, '/healthz?verbose', { token });
    return r.status === 200 && r;
  }, 10_000);
  assert.equal(h.text, '[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n');
  // nodes/healthz does not give the pods
  assert.equal((await kubeletGet(kubelet.port, '/pods', { token })).status, 403);
});

test('the kubelet\'s handlers: /configz, /runningpods/, the kubelet\'s 404s and 400s for logs, exec and friends answered 501', async () => {
  const admin = { cert: c.credentials.cert, key: c.credentials.key };
  const configz = await kubeletGet(kubelet.port, '/configz', admin);
  assert.deepEqual(JSON.parse(configz.text), { kubeletconfig: { kind: 'KubeletConfiguration', apiVersion: 'kubelet.config.k8s.io/v1beta1', port: kubelet.port } });
  const running = JSON.parse((await kubeletGet(kubelet.port, '/runningpods/', admin)).text);
  assert.deepEqual(running.items.map((p: any) => p.spec.containers.map((x: any) => x.name)), [['main', 'side']]);
  const nopod = await kubeletGet(kubelet.port, `/containerLogs/${NS}/nope/main`, admin);
  assert.deepEqual([nopod.status, nopod.text], [404, 'pod "nope" does not exist']);
  const noctr = await kubeletGet(kubelet.port, `/containerLogs/${NS}/app/zz`, admin);
  assert.deepEqual([noctr.status, noctr.text], [404, 'container "zz" not found in pod "app"']);
  const badq = await kubeletGet(kubelet.port, `/containerLogs/${NS}/app/main?tailLines=x`, admin);
  assert.deepEqual([badq.status, badq.text], [400, '{"message": "Unable to decode query."}']);
  const invalid = await kubeletGet(kubelet.port, `/containerLogs/${NS}/app/main?limitBytes=0`, admin);
  assert.deepEqual([invalid.status, invalid.text], [422, '{"message": "Invalid request."}']);
  const exec = await kubeletGet(kubelet.port, `/exec/${NS}/app/main?command=ls`, { ...admin, method: 'POST' });
  assert.deepEqual([exec.status, exec.text], [501, 'exec is not supported by this node agent\n']);
  assert.equal((await kubeletGet(kubelet.port, `/exec/${NS}/nope/main?command=ls`, { ...admin, method: 'POST' })).text, 'pod does not exist');
  // /logs/: the node's log directory, as Go's file server lists and sends it
  const list = await kubeletGet(kubelet.port, '/logs/', admin);
  assert.equal(list.status, 200);
  assert.equal(list.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(list.text, '<!doctype html>\n<meta name="viewport" content="width=device-width">\n<pre>\n<a href="apt/">apt/</a>\n<a href="etcd/">etcd/</a>\n<a href="kube-proxy.log">kube-proxy.log</a>\n<a href="syslog">syslog</a>\n<a href="syslog.1.gz">syslog.1.gz</a>\n</pre>\n');
  const sys = await kubeletGet(kubelet.port, '/logs/syslog', admin);
  assert.deepEqual([sys.status, sys.text, sys.headers['content-type']], [200, 'Dec  6 21:00:00 node kernel: hello\n', 'text/plain; charset=utf-8']);
  assert.deepEqual([(await kubeletGet(kubelet.port, '/logs/apt', admin)).status, (await kubeletGet(kubelet.port, '/logs/apt', admin)).headers.location], [301, 'apt/']);
  assert.equal((await kubeletGet(kubelet.port, '/logs/apt/history.log', admin)).text, 'Start-Date: 2026-12-06\n');
  assert.equal((await kubeletGet(kubelet.port, '/logs/nope', admin)).text, '404 page not found\n');
  assert.equal((await kubeletGet(kubelet.port, '/logs/../../etc/passwd', admin)).status, 404, 'nothing above the directory');
  // PUT /debug/flags/v: the log verbosity, as the kubelet's flags handler sets it
  const v = await kubeletGet(kubelet.port, '/debug/flags/v', { ...admin, method: 'PUT', body: '4' });
  assert.deepEqual([v.status, v.text, v.headers['content-type']], [200, 'successfully set klog.logging.verbosity to 4\n', 'text/plain']);
  assert.deepEqual(verbosities, [4]);
  const badv = await kubeletGet(kubelet.port, '/debug/flags/v', { ...admin, method: 'PUT', body: 'loud' });
  assert.deepEqual([badv.status, badv.text], [400, 'failed set klog.logging.verbosity loud: strconv.ParseInt: parsing "loud": invalid syntax\n']);
  assert.deepEqual([(await kubeletGet(kubelet.port, '/debug/flags/v', admin)).status], [406]);
  // (kubectl get --raw /api/v1/nodes/<node>/proxy/logs/ reaches it on a node with a routable
  // address; this node's 127.0.0.1 is one the API server refuses to proxy to, as Kubernetes does)
  const raw = c.kubectl(['get', '--raw', `/api/v1/nodes/${NODE}/proxy/logs/syslog`]);
  assert.match(raw.stderr, /address not allowed/);
  const metrics = await kubeletGet(kubelet.port, '/metrics', admin);
  assert.match(metrics.text, /^kubelet_running_pods 1$/m);
  assert.match(metrics.text, /^kubelet_running_containers\{container_state="running"\} 2$/m);
  assert.match(metrics.text, new RegExp(`^kubelet_node_name\\{node="${NODE}"\\} 1$`, 'm'));
  assert.match(metrics.text, /^process_cpu_seconds_total /m);
  assert.equal((await kubeletGet(kubelet.port, '/nothing', admin)).text, '404 page not found\n');
});

test('the node log query (enableSystemLogQuery): /logs/?query= reads journald or the heuristics\' files, with the kubelet\'s checks', async () => {
  const admin = { cert: c.credentials.cert, key: c.credentials.key };
  const get = (q: string, extra: { gzip?: boolean } = {}) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port: kubelet.port, path: q, rejectUnauthorized: false, ...admin, agent: false, headers: extra.gzip ? { 'accept-encoding': 'gzip' } : {} }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    });
  const text = async (q: string) => {
    const r = await get(q);
    return [r.status, r.body.toString('utf8')];
  };
  // a service journald knows: journalctl with the query's options
  const j = await get('/logs/?query=kubelet&tailLines=5&sinceTime=2026-09-24T01:02:03Z&untilTime=2026-09-24T04:05:06%2B02:00&pattern=err&boot=-1');
  assert.equal(j.status, 200);
  assert.equal(j.headers['content-type'], 'text/plain;charset=UTF-8');
  assert.equal(j.body.toString(), 'journal [--utc] [--no-pager] [--output=short-precise] [--since=2026-9-24 1:2:3] [--until=2026-9-24 4:5:6] [--pager-end] [--lines=5] [--unit=kubelet] [--grep=err] [--boot] [-1]\n');
  const gz = await get('/logs/?query=kubelet&query=containerd', { gzip: true });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.equal(gunzipSync(gz.body).toString(), 'journal [--utc] [--no-pager] [--output=short-precise] [--unit=kubelet] [--unit=containerd]\n');
  // services that log to files: /var/log/<s>, <s>.log, <s>/<s>.log
  assert.deepEqual(await text('/logs/?query=kube-proxy'), [200, 'proxy started\n']);
  assert.deepEqual(await text('/logs/?query=etcd'), [200, 'etcd ready\n']);
  assert.deepEqual(await text('/logs/?query=nothing'), [200, '\nlog not found for nothing\n']);
  assert.deepEqual(await text('/logs/?query=kube-proxy&tailLines=2'), [200, '\noptions present and query resolved to log files for [kube-proxy]\ntry without specifying options\n']);
  // a file
  assert.deepEqual(await text('/logs/?query=/syslog'), [200, 'Dec  6 21:00:00 node kernel: hello\n']);
  assert.deepEqual(await text('/logs/?query=apt/history.log'), [200, 'Start-Date: 2026-12-06\n']);
  // what the kubelet refuses: 400 for a parameter that does not parse, 406 for a query that does not validate
  assert.deepEqual(await text('/logs/?tailLines=x'), [400, 'tailLines: Invalid value: "x": strconv.Atoi: parsing "x": invalid syntax\n']);
  assert.deepEqual(await text('/logs/?query=%20'), [400, 'query: Invalid value: []string{" "}: query cannot be empty\n']);
  assert.deepEqual(await text('/logs/?sinceTime=yesterday&query=kubelet'), [400, 'sinceTime: Invalid value: "yesterday": invalid time format\n']);
  assert.deepEqual(await text('/logs/syslog?query=kubelet'), [406, 'path not allowed in query mode\n']);
  assert.deepEqual(await text('/logs/?query=a&query=b/c'), [406, 'query: Invalid value: "[b/c], [a]": cannot specify a file and service\n']);
  assert.deepEqual(await text('/logs/?query=/syslog&tailLines=1'), [406, 'query: Invalid value: []string{"/syslog"}: cannot specify file with options\n']);
  assert.deepEqual(await text('/logs/?query=kubelet&boot=1'), [406, 'boot: Invalid value: 1: must be less than 1\n']);
  assert.deepEqual(await text('/logs/?query=kubelet&tailLines=100001'), [406, 'tailLines: Invalid value: 100001: must be between 0 and 100000, inclusive\n']);
  assert.deepEqual(await text('/logs/?query=k%3Brm'), [406, 'query: Invalid value: "k;rm": input contains unsupported characters\n']);
  assert.deepEqual(await text('/logs/?query=a&query=b&query=c&query=d&query=e'), [406, 'query: Too many: 5: must have at most 4 items\n']);
  assert.deepEqual(await text('/logs/?tailLines=3'), [406, 'query: Required value: cannot be empty with options\n']);
  assert.deepEqual(await text('/logs/?query=kubelet&sinceTime=2026-09-24T02:00:00Z&untilTime=2026-09-24T01:00:00Z'), [406, 'untilTime: Invalid value: "2026-09-24 01:00:00 +0000 UTC": must be after `sinceTime`\n']);
  const missing = await text('/logs/?query=/nope.log');
  assert.deepEqual(missing, [406, `query: Invalid value: []string{"/nope.log"}: stat ${join(dir, 'varlog', 'nope.log')}: no such file or directory\n`]);
  // without a query parameter /logs/ is the file server still
  assert.equal((await get('/logs/?other=1')).headers['content-type'], 'text/html; charset=utf-8');
});

test('the read-only port (plain HTTP, no authentication): /pods, /healthz, /metrics; the debugging handlers answer 405', async () => {
  const port = kubelet.readOnlyPort!;
  const pods = await kubeletGet(port, '/pods', { plain: true });
  assert.equal(pods.status, 200);
  assert.deepEqual(JSON.parse(pods.text).items.map((p: any) => p.metadata.name), ['app']);
  assert.equal((await kubeletGet(port, '/healthz', { plain: true })).text, 'ok');
  assert.match((await kubeletGet(port, '/metrics', { plain: true })).text, /^kubelet_running_pods 1$/m);
  const logs = await kubeletGet(port, `/containerLogs/${NS}/app/main`, { plain: true });
  assert.deepEqual([logs.status, logs.text], [405, 'Debug endpoints are disabled.\n']);
  assert.equal((await kubeletGet(port, '/configz', { plain: true })).status, 404);
});

test('the health port: /healthz with the ping check alone, nothing else', async () => {
  const port = kubelet.healthzPort!;
  assert.equal((await kubeletGet(port, '/healthz', { plain: true })).text, 'ok');
  assert.equal((await kubeletGet(port, '/healthz?verbose', { plain: true })).text, '[+]ping ok\nhealthz check passed\n');
  assert.equal((await kubeletGet(port, '/healthz/ping', { plain: true })).text, 'ok');
  assert.equal((await kubeletGet(port, '/pods', { plain: true })).status, 404);
});
