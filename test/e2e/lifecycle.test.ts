// Health endpoints, graceful shutdown on SIGTERM, restart on the same data directory, and the
// command line (--help, --version, flag errors).
import { test, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster, until, freePort, KEELSON, ROOT, type Cluster } from './harness.js';

const clusters: Cluster[] = [];
after(async () => {
  for (const c of clusters) await c.stop();
});

describe('health', () => {
  test('/healthz, /livez, /readyz with verbose, exclude and single checks', async () => {
    const c = await startCluster({ args: ['--storage-backend=memory'] });
    clusters.push(c);
    for (const p of ['/healthz', '/livez', '/readyz']) {
      const r = await c.rawNoAuth('GET', p);
      assert.equal(r.status, 200, p);
      assert.equal(r.text, 'ok');
      assert.match(String(r.headers['content-type']), /^text\/plain/);
    }
    const v = await c.raw('GET', '/readyz?verbose');
    const lines = v.text.trim().split('\n');
    // kube-apiserver 1.33's checks, in its order, for the parts Keelson has (the specification
    // names the post-start hooks of the API extensions, the aggregator and the authentication info)
    const HOOKS = [
      'start-kube-apiserver-admission-initializer',
      'generic-apiserver-start-informers',
      'max-in-flight-filter',
      'storage-object-count-tracker-hook',
      'start-apiextensions-informers',
      'start-apiextensions-controllers',
      'crd-informer-synced',
      'start-system-namespaces-controller',
      'start-cluster-authentication-info-controller',
      'start-kube-apiserver-identity-lease-controller',
      'start-service-ip-repair-controllers',
      'rbac/bootstrap-roles',
      'scheduling/bootstrap-system-priority-classes',
      'priority-and-fairness-config-producer',
      'bootstrap-controller',
      'start-kubernetes-service-cidr-controller',
      // (keelson server presents a front-proxy client certificate of its own)
      'aggregator-reload-proxy-client-cert',
      'start-kube-aggregator-informers',
      'apiservice-status-available-controller',
      'apiservice-registration-controller',
      'apiservice-discovery-controller',
      'kube-apiserver-autoregistration',
    ];
    const checks = [...HOOKS.map((h) => `poststarthook/${h}`), 'autoregister-completion', 'poststarthook/apiservice-openapi-controller'];
    assert.deepEqual(
      lines,
      [...['ping', 'log', 'etcd', 'etcd-readiness', 'informer-sync', ...checks, 'shutdown'].map((n) => `[+]${n} ok`), 'readyz check passed'],
    );
    const lv = await c.raw('GET', '/livez?verbose');
    assert.deepEqual(lv.text.trim().split('\n'), [...['ping', 'log', 'etcd', ...checks].map((n) => `[+]${n} ok`), 'livez check passed']);
    assert.equal((await c.raw('GET', '/healthz?verbose')).text, lv.text.replace('livez check passed', 'healthz check passed'));
    assert.equal((await c.raw('GET', '/readyz/autoregister-completion')).text, 'ok');
    const ex = await c.raw('GET', '/livez?verbose&exclude=etcd');
    assert.match(ex.text, /\[\+\]etcd excluded: ok/);
    const one = await c.raw('GET', '/livez/ping');
    assert.equal(one.status, 200);
    assert.equal(one.text, 'ok');
    const ps = await c.raw('GET', '/readyz/poststarthook/bootstrap-controller');
    assert.equal(ps.status, 200);
    const nope = await c.raw('GET', '/readyz/nope');
    assert.equal(nope.status, 404);
    assert.equal((await c.raw('GET', '/readyz?exclude=nosuch')).text, 'ok');
    const unmatched = await c.raw('GET', '/readyz?verbose&exclude=nosuch');
    assert.equal(unmatched.status, 200);
    assert.match(unmatched.text, /warn: some health checks cannot be excluded: no matches for "nosuch"/);
    // one check per exclude parameter: "etcd,log" names no check, so both run (getExcludedChecks)
    const joined = await c.raw('GET', '/readyz?verbose&exclude=etcd,log&exclude=zz&exclude=aa');
    assert.match(joined.text, /^\[\+\]etcd ok$/m);
    assert.match(joined.text, /^\[\+\]log ok$/m);
    assert.match(joined.text, /warn: some health checks cannot be excluded: no matches for "aa","etcd,log","zz"/);
    const both = await c.raw('GET', '/readyz?verbose&exclude=etcd&exclude=log');
    assert.match(both.text, /^\[\+\]etcd excluded: ok$/m);
    assert.match(both.text, /^\[\+\]log excluded: ok$/m);
    // /metrics/slis: every check run by a root health endpoint, by check and endpoint (component SLIs)
    const slis = await c.raw('GET', '/metrics/slis');
    assert.equal(slis.status, 200);
    assert.match(slis.headers['content-type'] as string, /^text\/plain/);
    assert.match(slis.text, /^# HELP kubernetes_healthcheck \[STABLE\] This metric records the result of a single healthcheck\.\n# TYPE kubernetes_healthcheck gauge\n/);
    assert.match(slis.text, /^kubernetes_healthcheck\{name="etcd",type="readyz"\} 1$/m);
    assert.match(slis.text, /^kubernetes_healthcheck\{name="ping",type="livez"\} 1$/m);
    assert.match(slis.text, /^# HELP kubernetes_healthchecks_total \[STABLE\] This metric records the results of all healthcheck\.$/m);
    assert.match(slis.text, /^kubernetes_healthchecks_total\{name="ping",status="success",type="readyz"\} \d+$/m);
    // /livez/ is not a path kube-apiserver registers
    for (const p of ['/livez/', '/readyz/', '/healthz/']) {
      const r = await c.raw('GET', p);
      assert.equal(r.status, 404, p);
      assert.equal(r.text, '404 page not found\n');
    }
  });
});

describe('metrics', () => {
  test('/metrics serves Prometheus text with kube-apiserver metric names', async () => {
    const c = await startCluster({ args: ['--storage-backend=memory'] });
    clusters.push(c);
    assert.equal((await c.raw('GET', '/api/v1/namespaces/kube-public/configmaps')).status, 200);
    assert.equal((await c.raw('GET', '/api/v1/namespaces/kube-public/configmaps/nope')).status, 404);
    assert.equal((await c.rawNoAuth('GET', '/metrics')).status, 403, 'anonymous may not read metrics');
    const m = await c.raw('GET', '/metrics');
    assert.equal(m.status, 200);
    assert.match(String(m.headers['content-type']), /^text\/plain/);
    assert.match(m.text, /apiserver_request_total\{verb="LIST",dry_run="",group="",version="v1",resource="configmaps",subresource="",scope="namespace",component="apiserver",code="200"\} 1/);
    assert.match(m.text, /apiserver_request_total\{verb="GET",dry_run="",group="",version="v1",resource="configmaps",subresource="",scope="resource",component="apiserver",code="404"\} 1/);
    assert.match(m.text, /apiserver_request_duration_seconds_bucket\{/);
    assert.match(m.text, /apiserver_storage_objects\{resource="namespaces"\} 4/);
  });

  test('/metrics reports storage requests as the etcd3 store does (etcd_request_duration_seconds, etcd_requests_total, etcd_request_errors_total) and the store size', async () => {
    const c = await startCluster({ args: [] });
    clusters.push(c);
    const deploy = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'm' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } };
    assert.equal((await c.raw('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deploy })).status, 201);
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'm' } };
    assert.equal((await c.raw('POST', '/api/v1/namespaces/default/configmaps', { body: cm })).status, 201);
    assert.equal((await c.raw('POST', '/api/v1/namespaces/default/configmaps', { body: cm })).status, 409);
    const m = (await c.raw('GET', '/metrics')).text;
    assert.match(m, /^etcd_requests_total\{operation="create",type="deployments\.apps"\} 1$/m);
    assert.match(m, /^etcd_request_duration_seconds_bucket\{operation="create",type="deployments\.apps",le="0\.005"\} \d+$/m);
    assert.match(m, /^etcd_request_duration_seconds_count\{operation="list",type="configmaps"\} \d+$/m);
    // AlreadyExists is the store's answer, not a failed request
    assert.ok(!/etcd_request_errors_total\{operation="create",type="configmaps"\}/.test(m), 'a create that found the key is not an error');
    const size = /^apiserver_storage_size_bytes\{storage_cluster_id="etcd-0"\} (\d+)$/m.exec(m);
    assert.ok(size && Number(size[1]) > 0, 'the store size');
  });

  test("/metrics reports writes with kube-apiserver's verbs and scopes: POST (a resource-scoped route), PUT, PATCH, APPLY, DELETE", async () => {
    const c = await startCluster({ args: ['--storage-backend=memory'] });
    clusters.push(c);
    // Secrets: no controller writes them (the root CA publisher's ConfigMaps would add POSTs of their own)
    const path = '/api/v1/namespaces/default/secrets';
    const created = await c.raw('POST', path, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'm1' }, data: { a: 'MQ==' } } });
    assert.equal(created.status, 201);
    const rv = (JSON.parse(created.text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    assert.equal((await c.raw('PUT', `${path}/m1`, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'm1', resourceVersion: rv }, data: { a: 'Mg==' } } })).status, 200);
    assert.equal((await c.raw('PATCH', `${path}/m1`, { body: '{"data":{"b":"Mw=="}}', headers: { 'content-type': 'application/merge-patch+json' } })).status, 200);
    const apply = 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: m1\ndata:\n  c: NA==\n';
    assert.equal((await c.raw('PATCH', `${path}/m1?fieldManager=test`, { body: apply, headers: { 'content-type': 'application/apply-patch+yaml' } })).status, 200);
    assert.equal((await c.raw('PATCH', `${path}/m1?fieldManager=test&dryRun=All`, { body: apply, headers: { 'content-type': 'application/apply-patch+yaml' } })).status, 200);
    assert.equal((await c.raw('DELETE', `${path}/m1`)).status, 200);
    const m = await c.raw('GET', '/metrics');
    const series = (verb: string, scope: string, code: number, dryRun = '') =>
      `apiserver_request_total{verb="${verb}",dry_run="${dryRun}",group="",version="v1",resource="secrets",subresource="",scope="${scope}",component="apiserver",code="${code}"} 1`;
    for (const want of [series('POST', 'resource', 201), series('PUT', 'resource', 200), series('PATCH', 'resource', 200), series('APPLY', 'resource', 200), series('APPLY', 'resource', 200, 'All'), series('DELETE', 'resource', 200)]) {
      assert.ok(m.text.includes(want), `missing: ${want}\nseries of secrets:\n${m.text.split('\n').filter((l) => l.startsWith('apiserver_request_total') && l.includes('"secrets"')).join('\n')}`);
    }
    assert.doesNotMatch(m.text, /verb="(CREATE|UPDATE)"/, "RequestInfo's verbs are not the metrics' verbs");
  });

  test('/metrics counts the health endpoints as kube-apiserver does: GET, the path as subresource, empty scope and component; single checks are not counted', async () => {
    const c = await startCluster({ args: ['--storage-backend=memory'] });
    clusters.push(c);
    for (const path of ['/readyz', '/readyz', '/livez?verbose', '/healthz', '/readyz/ping']) assert.equal((await c.raw('GET', path)).status, 200, path);
    const m = await c.raw('GET', '/metrics');
    const series = (path: string) => `apiserver_request_total{verb="GET",dry_run="",group="",version="",resource="",subresource="${path}",scope="",component="",code="200"}`;
    const count = (line: string) => Number(m.text.split('\n').find((l) => l.startsWith(line + ' '))?.slice(line.length + 1));
    // the harness polls /readyz until the server is ready: at least the two asked here
    assert.ok(count(series('/readyz')) >= 2, m.text.split('\n').filter((l) => l.includes('subresource="/')).join('\n'));
    assert.equal(count(series('/livez')), 1);
    assert.equal(count(series('/healthz')), 1);
    assert.ok(!m.text.includes('subresource="/readyz/ping"'));
    assert.match(m.text, /apiserver_request_duration_seconds_count\{verb="GET",dry_run="",group="",version="",resource="",subresource="\/livez",scope="",component=""\} 1/);
  });

  test("/metrics counts OpenAPI v3 requests as kube-apiserver's aggregator does: subresource openapi/v3 for the list, openapi/v3/ for a document", async () => {
    const c = await startCluster({ args: ['--storage-backend=memory'] });
    clusters.push(c);
    assert.equal((await c.raw('GET', '/openapi/v3')).status, 200);
    assert.equal((await c.raw('GET', '/openapi/v3/api/v1')).status, 200);
    assert.equal((await c.raw('GET', '/openapi/v3/apis/apps/v1')).status, 200);
    const m = await c.raw('GET', '/metrics');
    const series = (sub: string) => `apiserver_request_total{verb="GET",dry_run="",group="",version="",resource="",subresource="${sub}",scope="",component="",code="200"} `;
    assert.ok(m.text.includes(series('openapi/v3') + '1'), m.text.split('\n').filter((l) => l.includes('openapi')).join('\n'));
    assert.ok(m.text.includes(series('openapi/v3/') + '2'));
  });
});

describe('metrics of responses, watches, limits and the build', () => {
  test("apiserver_response_sizes (GET and LIST: the bytes sent), apiserver_watch_events_total and _sizes, apiserver_current_inflight_requests and kubernetes_build_info, as kube-apiserver names them", async () => {
    const c = await startCluster({ args: ['--storage-backend=memory', '--max-requests-inflight=50', '--max-mutating-requests-inflight=20'] });
    clusters.push(c);
    const path = '/api/v1/namespaces/default/secrets';
    // a watch that sees two creates and ends after its timeout
    const watching = c.raw('GET', `${path}?watch=1&timeoutSeconds=2`);
    await new Promise((r) => setTimeout(r, 300));
    for (const name of ['w1', 'w2']) assert.equal((await c.raw('POST', path, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: { a: 'MQ==' } } })).status, 201);
    const got = await c.raw('GET', `${path}/w1`);
    const listed = await c.raw('GET', path);
    const watched = await watching;
    const lines = watched.text.split('\n').filter(Boolean);
    assert.equal(lines.length, 2, watched.text);

    const m = (await c.raw('GET', '/metrics')).text;
    const value = (line: string) => Number(m.split('\n').find((l) => l.startsWith(line + ' '))?.slice(line.length + 1));
    const labels = (verb: string, scope: string) => `{verb="${verb}",group="",version="v1",resource="secrets",subresource="",scope="${scope}",component="apiserver"}`;
    assert.equal(value(`apiserver_response_sizes_sum${labels('GET', 'resource')}`), Buffer.byteLength(got.text));
    assert.equal(value(`apiserver_response_sizes_count${labels('LIST', 'namespace')}`), 1);
    assert.equal(value(`apiserver_response_sizes_sum${labels('LIST', 'namespace')}`), Buffer.byteLength(listed.text));
    assert.match(m, /apiserver_response_sizes_bucket\{verb="GET",[^}]*resource="secrets"[^}]*,le="1e\+06"\} 1/);
    assert.ok(!m.includes('apiserver_response_sizes_count{verb="POST"'), 'only reads are measured');
    // each event sent, with its size
    const w = '{group="",version="v1",kind="Secret"}';
    assert.equal(value(`apiserver_watch_events_total${w}`), 2);
    assert.equal(value(`apiserver_watch_events_sizes_sum${w}`), lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0));
    assert.match(m, /apiserver_watch_events_sizes_bucket\{group="",version="v1",kind="Secret",le="131072"\} 2/);
    assert.match(m, /# TYPE apiserver_current_inflight_requests gauge\napiserver_current_inflight_requests\{request_kind="mutating"\} \d+\napiserver_current_inflight_requests\{request_kind="readOnly"\} \d+/);
    const v = (await c.raw('GET', '/version')).json();
    assert.ok(
      m.includes(
        `kubernetes_build_info{build_date="${v.buildDate}",compiler="${v.compiler}",git_commit="${v.gitCommit}",git_tree_state="${v.gitTreeState}",git_version="${v.gitVersion}",go_version="${v.goVersion}",major="${v.major}",minor="${v.minor}",platform="${v.platform}"} 1`,
      ),
      m.split('\n').filter((l) => l.startsWith('kubernetes_build_info')).join('\n'),
    );
  });
});

describe('shutdown and restart', () => {
  test('SIGTERM fails readyz during the delay, ends watches, exits 0; a restart finds everything as it was', async () => {
    const c = await startCluster({ args: ['--shutdown-delay-duration=2s'] });
    clusters.push(c);
    const caBefore = readFileSync(`${c.dataDir}/pki/ca.crt`, 'utf8');
    const cms = '/api/v1/namespaces/default/configmaps';
    const made: any[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await c.raw('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `keep-${i}` }, data: { i: String(i) } } });
      assert.equal(r.status, 201);
      made.push(r.json());
    }
    const del = await c.raw('DELETE', `${cms}/keep-3`);
    assert.equal(del.status, 200);
    const before = (await c.raw('GET', cms)).json();
    const w = c.stream(`${cms}?watch=1&resourceVersion=${before.metadata.resourceVersion}`);
    await w.ready;

    const exited = c.stopProcess('SIGTERM');
    // during the delay: not ready, still live, still serving
    let sawNotReady = false;
    for (let i = 0; i < 20 && !sawNotReady; i++) {
      const r = await c.raw('GET', '/readyz?verbose');
      if (r.status === 500) {
        assert.match(r.text, /\[-\]shutdown failed: reason withheld/);
        assert.match(r.text, /readyz check failed/);
        sawNotReady = true;
      } else await new Promise((res) => setTimeout(res, 50));
    }
    assert.ok(sawNotReady, 'readyz fails once SIGTERM is received');
    assert.equal((await c.raw('GET', '/livez')).status, 200);
    assert.equal((await c.raw('GET', `${cms}/keep-1`)).status, 200);
    assert.equal(await exited, 0);
    await w.untilEnd(5000);

    // restart on the same data directory
    await c.launch();
    assert.equal(readFileSync(`${c.dataDir}/pki/ca.crt`, 'utf8'), caBefore, 'the CA is kept');
    const after = (await c.raw('GET', cms)).json();
    assert.deepEqual(
      after.items.map((i: any) => [i.metadata.name, i.metadata.resourceVersion, i.metadata.uid]),
      before.items.map((i: any) => [i.metadata.name, i.metadata.resourceVersion, i.metadata.uid]),
    );
    assert.ok(!after.items.some((i: any) => i.metadata.name === 'keep-3'));
    // read back from storage, an object's metadata is in ObjectMeta's order, resourceVersion in its place
    assert.deepEqual(Object.keys(after.items[0].metadata).slice(0, 4), ['name', 'namespace', 'uid', 'resourceVersion']);
    assert.deepEqual(Object.keys((await c.raw('GET', `${cms}/keep-1`)).json().metadata).slice(0, 5), ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp']);
    const n = await c.raw('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-restart' } } });
    assert.ok(Number(n.json().metadata.resourceVersion) > Number(before.metadata.resourceVersion));
    // the system namespaces are not created twice
    const ns = (await c.raw('GET', '/api/v1/namespaces/default')).json();
    assert.equal(ns.metadata.resourceVersion, (await c.raw('GET', '/api/v1/namespaces/default')).json().metadata.resourceVersion);
    await c.stop();
  });

  // A loop's pause that began after the stop (its request failed because of the stop) used to
  // listen for an abort that had already happened, and the manager waited 5 s for it
  test('SIGTERM right after the start stops every controller at once: no "did not stop in time"', async () => {
    const c = await startCluster();
    clusters.push(c);
    assert.equal(await c.stopProcess('SIGTERM'), 0);
    assert.doesNotMatch(c.logs, /did not stop in time/);
    assert.match(c.logs, /Shutting down GC controller/);
    assert.match(c.logs, /Shutdown complete/);
  });

  // A fault in one piece of work must not end the server: a rejected promise nobody handles (as
  // an exception thrown while writing an error answer once was) is reported and the server goes on
  test('a promise rejected with no handler is reported, and the server goes on serving', async () => {
    // (SIGUSR2, sent once the server is ready: Node.js takes SIGUSR1 for its inspector)
    const probe = 'process.on("SIGUSR2", () => { Promise.reject(new Error("probe: nobody handles this")); });';
    const c = await startCluster({ env: { NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(probe)}` } });
    try {
      c.proc!.kill('SIGUSR2');
      await until('the rejection is reported', () => c.logs.includes('probe: nobody handles this'), 10_000);
      assert.match(c.logs, /Unhandled rejection: a fault of the server, which goes on serving/);
      assert.equal((await c.raw('GET', '/readyz')).status, 200);
      assert.equal((await c.raw('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-fault' } } })).status, 201);
    } finally {
      await c.stop();
    }
  });
});

describe('command line', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [KEELSON, ...args], { cwd: ROOT, encoding: 'utf8' });

  test('-v=3 logs each request as kube-apiserver\'s httplog does; -v=2 does not', async () => {
    const c = await startCluster({ args: ['--storage-backend=memory', '-v=3'] });
    clusters.push(c);
    const r = await c.raw('GET', '/api/v1/namespaces/default/configmaps?limit=1', { headers: { 'user-agent': 'probe/1' } });
    const line = await until('the request log', () => c.logs.split('\n').find((l) => l.includes('"HTTP"') && l.includes('limit=1')));
    assert.match(
      line,
      // (the header names the server's own line, not a frame of Node's event loop)
      new RegExp(`^I\\d{4} [\\d:.]+ +\\d+ server\\.ts:\\d+\\] "HTTP" verb="LIST" URI="/api/v1/namespaces/default/configmaps\\?limit=1" latency="[\\d.]+(µs|ms|s)" userAgent="probe/1" audit-ID="${r.headers['audit-id']}" srcIP="127\\.0\\.0\\.1:\\d+" resp=200$`),
    );
    const quiet = await startCluster({ args: ['--storage-backend=memory', '-v=2'] });
    clusters.push(quiet);
    await quiet.raw('GET', '/api/v1/namespaces');
    assert.ok(!quiet.logs.includes('"HTTP"'));
  });

  test('a second keelson on a data directory in use refuses at once, naming the holder, and leaves the directory alone', async () => {
    const c = await startCluster({ args: ['--storage-backend=memory'] });
    clusters.push(c);
    const before = readFileSync(c.kubeconfig, 'utf8');
    const r = spawnSync(process.execPath, [KEELSON, 'server', '--data-dir', c.dataDir, '--secure-port', String(await freePort()), '--bind-address', '127.0.0.1'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`the data directory ${c.dataDir} is in use by another keelson process \\(pid ${c.proc!.pid}\\)`));
    assert.equal(readFileSync(c.kubeconfig, 'utf8'), before, 'the running server\'s kubeconfig is untouched');
    assert.equal((await c.raw('GET', '/readyz')).status, 200);
    // once it stops, the directory is free again
    await c.stopProcess();
    await c.launch();
    assert.equal((await c.raw('GET', '/readyz')).status, 200);
  });
  test('a store file that is not a database stops the start, naming the file and what to do', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keelson-corrupt-'));
    try {
      mkdirSync(join(dir, 'db'));
      writeFileSync(join(dir, 'db', 'state.db'), 'not a database, at all: '.repeat(200));
      const r = spawnSync(process.execPath, [KEELSON, 'server', '--data-dir', dir, '--secure-port', String(await freePort()), '--bind-address', '127.0.0.1'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`Error: failed to open the storage ${join(dir, 'db', 'state.db')}: file is not a database \\(restore it from a backup, or move the data directory aside to start a new cluster\\)`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  test('a store with a damaged page is refused at start (SQLite would drop the rows behind it silently)', async () => {
    const c = await startCluster();
    clusters.push(c);
    const body = (i: number) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `dmg-${i}` }, data: { k: 'x'.repeat(600) } });
    for (let i = 0; i < 150; i++) assert.equal((await c.raw('POST', '/api/v1/namespaces/default/configmaps', { body: body(i) })).status, 201);
    await c.stopProcess();
    const file = join(c.dataDir, 'db', 'state.db');
    const data = readFileSync(file);
    const pageSize = data.readUInt16BE(16) === 1 ? 65536 : data.readUInt16BE(16);
    const pages = Math.floor(data.length / pageSize);
    data.fill(0xff, Math.floor(pages / 2) * pageSize + 100, Math.floor(pages / 2) * pageSize + 2100);
    writeFileSync(file, data);
    const r = spawnSync(process.execPath, [KEELSON, 'server', '--data-dir', c.dataDir, '--secure-port', String(await freePort()), '--bind-address', '127.0.0.1'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`Error: failed to open the storage ${file}: database disk image is malformed \\(quick_check: [^]*\\(restore it from a backup, or move the data directory aside to start a new cluster\\)`));
  });
  test('a restart keeps the kubeconfig\'s own edits (kubeadm writes it only when missing) and takes over a PID file whose process is not keelson', async () => {
    const c = await startCluster({ args: ['--storage-backend=memory'] });
    clusters.push(c);
    const set = c.kubectl(['config', 'set-context', '--current', '--namespace=kube-system']);
    assert.equal(set.code, 0, set.stderr);
    const extra = c.kubectl(['config', 'set-context', 'mine', '--cluster=keelson', '--user=kubernetes-admin']);
    assert.equal(extra.code, 0, extra.stderr);
    await c.stopProcess();
    // a process id the crashed server held, now another program's
    const other = spawnSync('sh', ['-c', 'sleep 30 >/dev/null 2>&1 & echo $!'], { encoding: 'utf8' });
    const pid = Number(other.stdout.trim());
    try {
      writeFileSync(join(c.dataDir, 'keelson.pid'), String(pid));
      await c.launch();
      assert.equal((await c.raw('GET', '/readyz')).status, 200);
    } finally {
      try {
        process.kill(pid);
      } catch {
        /* gone */
      }
    }
    const view = c.kubectl(['config', 'view', '--minify', '-o', 'jsonpath={.contexts[0].context.namespace}']);
    assert.equal(view.stdout, 'kube-system');
    assert.match(c.kubectl(['config', 'get-contexts', '-o', 'name']).stdout, /^mine$/m);
    // (the context's namespace is used: kube-system's kube-root-ca.crt, which the memory store's new
    // cluster gets from the root CA publisher once the controllers run, a moment after /readyz)
    let get = c.kubectl(['get', 'configmap', 'kube-root-ca.crt', '-o', 'name']);
    await until('kube-root-ca.crt through the context\'s namespace', () => (get = c.kubectl(['get', 'configmap', 'kube-root-ca.crt', '-o', 'name'])).code === 0, 30_000).catch(() => undefined);
    assert.equal(get.code, 0, get.stderr);
    assert.equal(get.stdout, 'configmap/kube-root-ca.crt\n');
  });
  test('a port in use and a missing audit policy stop the start in kube-apiserver\'s words', async () => {
    const c = await startCluster({ args: ['--storage-backend=memory'] });
    clusters.push(c);
    const dir = mkdtempSync(join(tmpdir(), 'keelson-port-'));
    try {
      const r = spawnSync(process.execPath, [KEELSON, 'server', '--data-dir', dir, '--storage-backend=memory', '--secure-port', String(c.port), '--bind-address', '127.0.0.1'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`Error: failed to create listener: failed to listen on 127\\.0\\.0\\.1:${c.port}: listen tcp 127\\.0\\.0\\.1:${c.port}: bind: address already in use`));
      const a = spawnSync(process.execPath, [KEELSON, 'server', '--data-dir', dir, '--storage-backend=memory', '--secure-port', String(await freePort()), '--bind-address', '127.0.0.1', '--audit-policy-file', join(dir, 'nope.yaml'), '--audit-log-path', join(dir, 'a.log')], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
      assert.notEqual(a.status, 0);
      assert.ok(a.stderr.includes(`Error: loading audit policy file: failed to read file path "${join(dir, 'nope.yaml')}": open ${join(dir, 'nope.yaml')}: no such file or directory`), a.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  test('--controllers takes kube-controller-manager\'s other controllers (kubeadm\'s *,bootstrapsigner,tokencleaner) and says they do not run', async () => {
    const c = await startCluster({ args: ['--storage-backend=memory', '--controllers=*,bootstrapsigner,tokencleaner'] });
    clusters.push(c);
    await until('the warning', () => c.logs.includes('Controllers of kube-controller-manager that Keelson does not have were asked for and do not run'));
    assert.match(c.logs, /controllers=\["bootstrap-signer-controller","token-cleaner-controller"\]/);
  });
  test('--help lists every flag of the server', () => {
    const r = run(['server', '--help']);
    assert.equal(r.status, 0);
    for (const f of [
      '--data-dir',
      '--bind-address',
      '--secure-port',
      '--storage-backend',
      '--etcd-compaction-interval',
      '--feature-gates',
      '--livez-grace-period',
      '--shutdown-delay-duration',
      '-v, --v',
      '--version',
      '--cert-dir',
      '--tls-cert-file',
      '--tls-private-key-file',
      '--client-ca-file',
    ]) {
      assert.ok(r.stdout.includes(f), `${f} in help`);
    }
    const a = run(['apiserver', '--help']);
    assert.equal(a.status, 0);
    assert.ok(a.stdout.includes('--tls-cert-file'));
  });
  test('--version', () => {
    const r = run(['server', '--version']);
    assert.equal(r.status, 0);
    assert.match(r.stdout, /^Keelson v1\.\d+\.\d+/);
  });
  test('flag errors are reported as kube-apiserver reports them (the error alone, no usage) with a non-zero exit', () => {
    const r = run(['server', '--no-such-flag']);
    assert.equal(r.status, 1);
    assert.equal(r.stderr, 'Error: unknown flag: --no-such-flag\n');
    assert.equal(r.stdout, '');
    // --enable-priority-and-fairness: false (what Keelson does) is taken, true is refused with what to do
    const pf = run(['server', '--enable-priority-and-fairness=true', '--data-dir', '/tmp/keelson-never-created']);
    assert.equal(pf.status, 1);
    assert.match(pf.stderr, /^Error: --enable-priority-and-fairness=true is not supported: Keelson has no API Priority and Fairness; leave it out or set it to false/);
    // (--profiling=true, kube-apiserver's default, is taken: /debug/pprof/, pprof.test.ts)
    const prof = run(['apiserver', '--profiling=maybe']);
    assert.equal(prof.status, 1);
    assert.equal(prof.stderr, 'Error: invalid argument "maybe" for "--profiling" flag: strconv.ParseBool: parsing "maybe": invalid syntax\n');
    const a = run(['apiserver', '--secure-port=abc']);
    assert.equal(a.status, 1);
    assert.equal(a.stderr, 'Error: invalid argument "abc" for "--secure-port" flag: strconv.ParseInt: parsing "abc": invalid syntax\n');
    const b = run(['server', '--storage-backend=floppy', '--data-dir', '/tmp/keelson-never-created']);
    assert.notEqual(b.status, 0);
    assert.match(b.stderr, /storage-backend/);
    const cm = run(['server', '--controllers=foo,-bar', '--data-dir', '/tmp/keelson-never-created']);
    assert.notEqual(cm.status, 0);
    assert.match(cm.stderr, /Error: \["foo" is not in the list of known controllers, "bar" is not in the list of known controllers\]/);
    const g = run(['server', '--feature-gates=NoSuchGate=true']);
    assert.notEqual(g.status, 0);
    assert.match(g.stderr + g.stdout, /unrecognized feature gate: NoSuchGate/);
  });
});
