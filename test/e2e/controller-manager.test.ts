// `keelson controller-manager`, the controller manager as a daemon of its own, against a real
// keelson API server (whose embedded manager is off): its flags and their validation, the Lease,
// its secure port (/healthz with a check per controller, /metrics) behind authentication and
// authorization delegated to the API server (client certificates through the published client CA,
// bearer tokens through TokenReview, paths through SubjectAccessReview), the controllers doing
// their work, a clean stop on SIGTERM, and an exit when the Lease is taken away.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import https from 'node:https';
import { startCluster, until, freePort, KEELSON, ROOT, type Cluster, takeOverLease } from './harness.js';

let c: Cluster;
let cm: ChildProcess | undefined;
let cmLogs = '';
let port = 0;
const LEASE = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager';

before(async () => {
  // (the embedded manager runs nothing and takes no Lease: the daemon below is the controller manager)
  c = await startCluster({ args: ['--storage-backend=memory', '--controllers=-*', '--leader-elect=false'] });
});
after(async () => {
  if (cm && cm.exitCode === null) {
    cm.kill('SIGKILL');
    await new Promise((r) => cm!.once('exit', r));
  }
  await c?.stop();
});

function startManager(extra: string[] = []): ChildProcess {
  const args = [
    KEELSON, 'controller-manager', '--kubeconfig', c.kubeconfig, '--secure-port', String(port), '--bind-address', '127.0.0.1',
    '--authentication-kubeconfig', c.kubeconfig, '--authorization-kubeconfig', c.kubeconfig,
    '--leader-elect-lease-duration=4s', '--leader-elect-renew-deadline=3s', '--leader-elect-retry-period=500ms', ...extra,
  ];
  cmLogs = '';
  const p = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  p.stdout!.on('data', (d) => (cmLogs += d));
  p.stderr!.on('data', (d) => (cmLogs += d));
  return p;
}

function get(path: string, opts: { cert?: boolean; token?: string } = {}): Promise<{ status: number; text: string }> {
  const creds = opts.cert ? { cert: c.credentials.cert, key: c.credentials.key } : {};
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port, path, method: 'GET', rejectUnauthorized: false, ...creds, headers: opts.token ? { Authorization: `Bearer ${opts.token}` } : {} },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function exitOf(p: ChildProcess, timeoutMs = 20_000): Promise<number | null> {
  if (p.exitCode !== null) return p.exitCode;
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no exit within ${timeoutMs} ms:\n${cmLogs}`)), timeoutMs);
    p.once('exit', (code) => {
      clearTimeout(t);
      resolve(code);
    });
  });
}

test('--help has kube-controller-manager\'s sections and flags; options it cannot honour are refused with a reason', () => {
  const help = spawnSync(process.execPath, [KEELSON, 'controller-manager', '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  for (const section of ['Generic flags:', 'Secure serving flags:', 'Authentication flags:', 'Authorization flags:', 'Controllers flags:', 'Logs flags:', 'Global flags:']) assert.ok(help.stdout.includes(section), section);
  assert.match(help.stdout, /--secure-port int\s+The port on which to serve HTTPS with authentication and authorization.*\(default 10257\)/);
  // the description names every kind of loop that runs, and no list is left empty
  const intro = help.stdout.slice(0, help.stdout.indexOf('Usage:'));
  for (const loop of ['DaemonSets', 'StatefulSets', 'Jobs', 'CronJobs', 'EndpointSlices', 'node lifecycle', 'taint-based eviction', 'CertificateSigningRequests', 'pod garbage collector']) assert.ok(intro.includes(loop), `the description names ${loop}`);
  assert.match(help.stdout, /Disabled-by-default controllers: \S/);
  assert.match(help.stdout, /--authorization-always-allow-paths strings\s+.*\(default \[\/healthz,\/readyz,\/livez\]\)/);
  // the node lifecycle controller runs: its periods are real flags, not accepted-and-ignored ones
  assert.match(help.stdout, /--node-monitor-grace-period duration\s+Amount of time which we allow running Node to be unresponsive before marking it unhealthy\..*\(default 50s\)/);
  assert.doesNotMatch(help.stdout, /--node-monitor-(grace-)?period duration\s+[^\n]*no effect/);
  assert.match(help.stdout, /--allocate-node-cidrs\s+.*Keelson has no such controller: the flag is accepted and has no effect\./);
  assert.match(help.stdout, /--terminated-pod-gc-threshold int32\s+.*\(default 12500\)/);
  // the StatefulSet controller runs: its concurrency is a real flag
  assert.match(help.stdout, /--concurrent-statefulset-syncs int32\s+The number of statefulset objects that are allowed to sync concurrently\..*\(default 5\)/);
  assert.doesNotMatch(help.stdout, /--concurrent-statefulset-syncs int32\s+[^\n]*no effect/);
  assert.match(help.stdout, /--enable-garbage-collector\s+Enables the generic garbage collector.*\(default true\)/);
  const version = spawnSync(process.execPath, [KEELSON, 'controller-manager', '--version'], { encoding: 'utf8' });
  assert.equal(version.status, 0);
  assert.match(version.stdout, /^Keelson v1\.\d+\.\d+/);
  for (const [args, message] of [
    [['--cloud-provider=aws'], 'unknown cloud provider "aws"'],
    [['--controllers=*,nonsense'], '"nonsense" is not in the list of known controllers'],
    [['--concurrent-statefulset-syncs=0'], '--concurrent-statefulset-syncs must be at least 1'],
    [['--cluster-signing-cert-file=a', '--cluster-signing-kubelet-client-cert-file=b'], 'cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time'],
    [['--leader-elect-lease-duration=1s', '--leader-elect-renew-deadline=2s'], 'leaseDuration must be greater than renewDeadline'],
  ] as [string[], string][]) {
    const r = spawnSync(process.execPath, [KEELSON, 'controller-manager', '--kubeconfig', '/nonexistent', ...args], { encoding: 'utf8', timeout: 20_000 });
    assert.notEqual(r.status, 0, args.join(' '));
    assert.ok(r.stderr.includes(message), `${args.join(' ')}: ${r.stderr}`);
  }
});

test('the daemon leads, runs the controllers, and serves /healthz and /metrics behind delegated authentication and authorization', async () => {
  port = await freePort();
  cm = startManager(['--disabled-metrics=nodejs_eventloop_lag_seconds', '--controller-start-interval=10ms']);
  const healthz = await until('the healthz of the controller manager', async () => {
    try {
      const r = await get('/healthz?verbose');
      return r.status === 200 && r.text.includes('replicaset-controller') ? r.text : undefined;
    } catch {
      return undefined;
    }
  });
  assert.match(healthz, /^\[\+\]leaderElection ok\n\[\+\]serviceaccount-token-controller ok\n\[\+\]namespace-controller ok\n/);
  assert.match(healthz, /\[\+\]garbage-collector-controller ok\n/);
  assert.match(healthz, /healthz check passed\n$/);
  assert.equal((await get('/healthz')).text, 'ok');
  // (a single check's path is not in --authorization-always-allow-paths, which match exactly: anonymous may not)
  assert.equal((await get('/healthz/leaderElection')).status, 403);
  assert.equal((await get('/healthz/leaderElection', { cert: true })).text, 'ok');
  const lease = (await c.raw('GET', LEASE)).json();
  assert.match(lease.spec.holderIdentity, /_[0-9a-f-]{36}$/);

  // anonymous: the always-allowed paths only
  const anon = await get('/metrics');
  assert.equal(anon.status, 403, anon.text);
  const st = JSON.parse(anon.text);
  assert.equal(st.reason, 'Forbidden');
  assert.match(st.message, /^forbidden: User "system:anonymous" cannot get path "\/metrics"/);
  // a client certificate through the client CA the API server publishes (the admin is in system:masters)
  // (the shared informers' lists, GETs answered 200, follow the start of the last controller)
  const admin = await until('the informers\' requests in /metrics', async () => {
    const r = await get('/metrics', { cert: true });
    return r.status === 200 && /\nrest_client_requests_total\{code="200",[^}]*method="GET"\}/.test(r.text) ? r : undefined;
  });
  assert.match(admin.text, /\nleader_election_master_status\{name="kube-controller-manager"\} 1\n/);
  assert.match(admin.text, /\nrest_client_requests_total\{code="200",host="127\.0\.0\.1:\d+",method="GET"\} \d+\n/);
  assert.match(admin.text, /process_cpu_user_seconds_total/);
  assert.ok(!admin.text.includes('nodejs_eventloop_lag_seconds '), '--disabled-metrics leaves it out');
  // the controllers' work queues, as client-go reports them (the namespace and service account
  // controllers have had each namespace through theirs)
  const queues = await until('work queue metrics', async () => {
    const r = await get('/metrics', { cert: true });
    const m = /\nworkqueue_adds_total\{name="serviceaccount"\} (\d+)\n/.exec(r.text);
    return m && Number(m[1]) > 0 && /\nworkqueue_work_duration_seconds_count\{name="serviceaccount"\} [1-9]/.test(r.text) ? r.text : undefined;
  });
  for (const name of ['namespace', 'deployment', 'replicaset', 'replicationmanager', 'garbage_collector_attempt_to_delete', 'certificate']) {
    assert.match(queues, new RegExp(`\\nworkqueue_depth\\{name="${name}"\\} \\d+\\n`), name);
  }
  assert.match(queues, /\nworkqueue_queue_duration_seconds_bucket\{le="1e-8",name="serviceaccount"\} \d+\n/);
  assert.match(queues, /\nworkqueue_retries_total\{name="serviceaccount"\} \d+\n/);
  assert.match(queues, /\nworkqueue_unfinished_work_seconds\{name="serviceaccount"\} [\d.e-]+\n/);
  assert.match(queues, /\nworkqueue_longest_running_processor_seconds\{name="serviceaccount"\} [\d.e-]+\n/);
  // the health checks' SLIs, fed by the /healthz requests above
  const slis = await get('/metrics/slis', { cert: true });
  assert.equal(slis.status, 200);
  assert.match(slis.text, /\nkubernetes_healthcheck\{name="leaderElection",type="healthz"\} 1\n/);
  // a service account's token: TokenReview, then a SubjectAccessReview of the path
  const ns = '/api/v1/namespaces/default/serviceaccounts';
  assert.equal((await c.raw('POST', ns, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'scraper' } } })).status, 201);
  const tok = await c.raw('POST', `${ns}/scraper/token`, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} } });
  assert.equal(tok.status, 201, tok.text);
  const token = tok.json().status.token;
  const denied = await get('/metrics', { token });
  assert.equal(denied.status, 403);
  assert.match(JSON.parse(denied.text).message, /^forbidden: User "system:serviceaccount:default:scraper" cannot get path "\/metrics"/);
  assert.equal((await c.raw('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'scrape' }, rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] } })).status, 201);
  assert.equal((await c.raw('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'scrape' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'scrape' }, subjects: [{ kind: 'ServiceAccount', name: 'scraper', namespace: 'default' }] } })).status, 201);
  // (the denial is kept for --authorization-webhook-cache-unauthorized-ttl, 10 s)
  await until('the service account allowed', async () => (await get('/metrics', { token })).status === 200, 20_000);
  const bad = await get('/metrics', { token: 'not-a-token' });
  assert.equal(bad.status, 401);
  assert.equal(JSON.parse(bad.text).reason, 'Unauthorized');
  assert.equal((await get('/nothing-here', { cert: true })).status, 404);

  // the controllers at work: a ReplicaSet gets its pods
  const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'cmrs' }, spec: { replicas: 2, selector: { matchLabels: { app: 'cmrs' } }, template: { metadata: { labels: { app: 'cmrs' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } };
  assert.equal((await c.raw('POST', '/apis/apps/v1/namespaces/default/replicasets', { body: rs })).status, 201);
  await until('the pods of the ReplicaSet', async () => (await c.raw('GET', '/api/v1/namespaces/default/pods?labelSelector=app%3Dcmrs')).json().items.length === 2);

  // SIGTERM: the controllers stop, the Lease is given up, exit 0
  cm.kill('SIGTERM');
  assert.equal(await exitOf(cm), 0, cmLogs);
  const after = (await c.raw('GET', LEASE)).json();
  assert.ok(!after.spec.holderIdentity, JSON.stringify(after.spec));
});

test('--use-service-account-credentials: each controller acts as its own service account; a manager whose Lease is taken over exits', async () => {
  port = await freePort();
  cm = startManager(['--use-service-account-credentials']);
  const identity = await until('the identity in the log', () => /"Started the controller manager" identity="([^"]+)"/.exec(cmLogs)?.[1]);
  await until('the Lease held', async () => (await c.raw('GET', LEASE)).json().spec?.holderIdentity === identity);
  // the ReplicaSet controller makes pods as system:serviceaccount:kube-system:replicaset-controller
  // (made by the manager), which RBAC's bootstrap binding allows
  const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'sars' }, spec: { replicas: 1, selector: { matchLabels: { app: 'sars' } }, template: { metadata: { labels: { app: 'sars' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } };
  assert.equal((await c.raw('POST', '/apis/apps/v1/namespaces/default/replicasets', { body: rs })).status, 201);
  await until('the pod of the ReplicaSet', async () => (await c.raw('GET', '/api/v1/namespaces/default/pods?labelSelector=app%3Dsars')).json().items.length === 1);
  assert.equal((await c.raw('GET', '/api/v1/namespaces/kube-system/serviceaccounts/replicaset-controller')).status, 200);
  const ev = await until('the SuccessfulCreate event', async () => (await c.raw('GET', '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dsars')).json().items[0]);
  assert.equal(ev.reason, 'SuccessfulCreate');
  // the StatefulSet controller as system:serviceaccount:kube-system:statefulset-controller: its
  // ControllerRevision, claim, pod and status
  const sts = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'sasts' },
    spec: {
      replicas: 1,
      serviceName: 'sasts',
      selector: { matchLabels: { app: 'sasts' } },
      template: { metadata: { labels: { app: 'sasts' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
    },
  };
  assert.equal((await c.raw('POST', '/apis/apps/v1/namespaces/default/statefulsets', { body: sts })).status, 201);
  await until('the pod of the StatefulSet', async () => (await c.raw('GET', '/api/v1/namespaces/default/pods/sasts-0')).status === 200);
  assert.equal((await c.raw('GET', '/api/v1/namespaces/default/persistentvolumeclaims/data-sasts-0')).status, 200);
  const stsStatus = await until('the status of the StatefulSet', async () => {
    const s = (await c.raw('GET', '/apis/apps/v1/namespaces/default/statefulsets/sasts')).json().status;
    return s?.replicas === 1 && s.updateRevision ? s : undefined;
  });
  assert.equal((await c.raw('GET', `/apis/apps/v1/namespaces/default/controllerrevisions/${stsStatus.updateRevision}`)).status, 200);

  await takeOverLease(c, LEASE);
  assert.equal(await exitOf(cm), 1, cmLogs);
  assert.match(cmLogs, /leaderelection lost/);
});
