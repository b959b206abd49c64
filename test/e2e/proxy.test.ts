// `keelson proxy` end to end: a real `keelson server` with a service range of its own, a private
// containerd with its bridge, `keelson kubelet`, and `keelson proxy` as a child process keeping a
// table of its own (--nftables-table-name). Pods and the host reach a Service's ClusterIP, spread
// over its ready endpoints (a backend reaches itself too; ClientIP affinity keeps a client on one);
// a Service without endpoints refuses; a NodePort, an external IP and a load-balancer IP answer on
// the test's bridge address; the
// `kubernetes` Service answers from a pod; the proxy serves /healthz and /metrics; it leaves its
// table when stopped, and --cleanup removes it. The test removes its table itself at the end,
// whatever happened.
//
// The `kubernetes` Service: Kubernetes refuses a loopback address as its endpoint, and the test's
// API server listens on 127.0.0.1 only. So the cluster advertises the gateway address of the test's
// own bridge (10.N.0.1, reachable only from this host and the test's pods), and once the bridge is
// up the test relays that address's port to the API server on 127.0.0.1, standing in for an API
// server listening on every address as in a real cluster.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KEELSON, ROOT, freePort, startCluster, stopProcess, until, type Cluster } from './harness.js';
import { joiningKubeletArgs, writeJoiningKubeletConfig, KubeletProcess } from './kubeletharness.js';
import { startContainerd, type Containerd } from '../nodeagent/containerd.js';

const NODE = 'keelson-proxy-node';
const BUSYBOX = 'docker.io/library/busybox:local';
// a /24 of 10.200.0.0 .. 10.250.255.0 (the containerd harness's pods are in 10.100-199.0.0/16)
const NET = `10.${randomInt(200, 251)}.${randomInt(0, 256)}`;
const SERVICE_CIDR = `${NET}.0/24`;
const TABLE = `keelson-test-${process.pid}-${randomBytes(3).toString('hex')}`;

let c: Cluster;
let ctd: Containerd;
let kubelet: KubeletProcess | undefined;
let dir: string;
let proxy: ChildProcess | undefined;
let proxyLogs = '';
let healthzPort: number;
let metricsPort: number;
let relay: net.Server | undefined;
const relayed = new Set<net.Socket>();

function deleteTable(): void {
  spawnSync('nft', ['delete', 'table', 'ip', TABLE], { stdio: 'ignore' });
}
// (also if the test process ends without its after hook: the proxy first, or it writes the table again)
process.on('exit', () => {
  if (proxy && proxy.exitCode === null && proxy.signalCode === null) proxy.kill('SIGKILL');
  deleteTable();
});

/** the address the CNI bridge plugin gives the bridge: the subnet's first */
function gateway(): string {
  return ctd.subnet.replace(/\.0\.0\/16$/, '.0.1');
}

/** relays <gateway>:<API server port> to the API server on 127.0.0.1 */
function startRelay(): Promise<void> {
  const server = net.createServer((inbound) => {
    const out = net.connect(c.port, '127.0.0.1');
    relayed.add(inbound).add(out);
    inbound.on('close', () => relayed.delete(inbound));
    out.on('close', () => relayed.delete(out));
    inbound.pipe(out).pipe(inbound);
    inbound.on('error', () => out.destroy());
    out.on('error', () => inbound.destroy());
  });
  relay = server;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(c.port, gateway(), () => resolve());
  });
}

function tableExists(): boolean {
  return spawnSync('nft', ['list', 'table', 'ip', TABLE], { stdio: 'ignore' }).status === 0;
}

function startProxy(): void {
  proxyLogs = '';
  const p = spawn(process.execPath, [
    KEELSON, 'proxy',
    '--kubeconfig', c.kubeconfig,
    '--hostname-override', NODE,
    '--cluster-cidr', ctd.subnet,
    '--nftables-table-name', TABLE,
    '--healthz-bind-address', `127.0.0.1:${healthzPort}`,
    '--metrics-bind-address', `127.0.0.1:${metricsPort}`,
    '--min-sync-period', '200ms',
    // (NodePorts on the test's own bridge address only)
    '--nodeport-addresses', ctd.subnet,
    '-v', '2',
  ], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  p.stdout!.on('data', (d) => (proxyLogs += d));
  p.stderr!.on('data', (d) => (proxyLogs += d));
  proxy = p;
}

const logs = () => `the proxy's log ends:\n${proxyLogs.slice(-3000)}\nthe kubelet's log ends:\n${kubelet?.tail(2000) ?? ''}`;

function apply(yaml: string): void {
  const r = c.kubectl(['apply', '-f', '-'], { input: yaml });
  assert.equal(r.code, 0, r.stderr);
}

function get(port: number, path: string): Promise<{ status: number; body: string; type: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, type: String(res.headers['content-type']) }));
      })
      .on('error', reject);
  });
}

/**
 * An HTTP/1.0 GET from the client pod, with busybox's nc (busybox-static's wget crashes here; nc
 * connects within 5 s):
 * the response's body, or nc's error
 */
async function fromPod(host: string, port = 80, path = '/', pod = 'client'): Promise<{ ok: boolean; out: string }> {
  // (not blocking this process: the relay of the last test runs in it)
  const r = await c.kubectlAsync(['exec', pod, '--', 'sh', '-c', `printf 'GET ${path} HTTP/1.0\\r\\n\\r\\n' | nc -w 5 ${host} ${port}`]);
  const ok = r.code === 0 && r.stdout.startsWith('HTTP/');
  return { ok, out: ok ? r.stdout.slice(r.stdout.indexOf('\r\n\r\n') + 4) : r.stderr + r.stdout };
}

/** a GET from this process (the host's output hook): the body */
function fromTheHost(host: string, port: number, tls: boolean, path = '/'): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = (tls ? https : http).get({ host, port, path, rejectUnauthorized: false, timeout: 5000, agent: false }, (res) => {
      let b = '';
      res.on('data', (d) => (b += d));
      res.on('end', () => resolve(b));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${host}:${port}${path} timed out`)));
    req.on('error', reject);
  });
}

async function clusterIP(name: string, ns = 'default'): Promise<string> {
  const r = await c.raw('GET', `/api/v1/namespaces/${ns}/services/${name}`);
  assert.equal(r.status, 200, r.text);
  return r.json().spec.clusterIP;
}

async function readyPods(selector: string): Promise<string[]> {
  const r = await c.raw('GET', `/api/v1/namespaces/default/pods?labelSelector=${encodeURIComponent(selector)}`);
  return r.json().items.filter((p: any) => !p.metadata.deletionTimestamp && p.status?.conditions?.some((x: any) => x.type === 'Ready' && x.status === 'True')).map((p: any) => p.metadata.name);
}

const deployment = (replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      nodeName: ${NODE}
      terminationGracePeriodSeconds: 0
      containers:
      - name: httpd
        image: ${BUSYBOX}
        imagePullPolicy: Never
        command: [sh, -c, "mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www"]
        ports:
        - {name: http, containerPort: 8080}
        readinessProbe:
          tcpSocket: {port: 8080}
          periodSeconds: 1
`;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-proxy-'));
  ctd = await startContainerd();
  c = await startCluster({ args: ['--storage-backend=memory', `--service-cluster-ip-range=${SERVICE_CIDR}`, `--advertise-address=${gateway()}`] });
  writeJoiningKubeletConfig(c, dir);
  const k = new KubeletProcess(joiningKubeletArgs({ cluster: c, dir, endpoint: ctd.endpoint, node: NODE, port: await freePort() }));
  kubelet = k;
  await k.ready(c, NODE, 90_000);
  healthzPort = await freePort();
  metricsPort = await freePort();
  startProxy();
});

after(async () => {
  try {
    if (c && kubelet) c.kubectl(['delete', 'deployment,pods', '--all', '--wait=true', '--timeout=60s']);
    await stopProcess(proxy);
    relay?.close();
    for (const s of relayed) s.destroy();
    await kubelet?.stop();
    await ctd?.stop();
    await c?.stop();
  } finally {
    deleteTable();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
});

test('the proxy syncs its table and serves /healthz, /livez and /metrics; iptables and ipvs modes are refused', async () => {
  await until('the table', () => tableExists(), 30_000).catch((e) => assert.fail(`${e.message}\n${logs()}`));
  const h = await until('healthz 200', async () => {
    const r = await get(healthzPort, '/healthz').catch(() => undefined);
    return r?.status === 200 ? r : undefined;
  });
  assert.equal(h.type, 'application/json');
  const body = JSON.parse(h.body);
  assert.equal(body.nodeEligible, true);
  assert.ok(Date.parse(body.lastUpdated) > 0, h.body);
  assert.equal((await get(healthzPort, '/livez')).status, 200);
  const m = await get(metricsPort, '/metrics');
  assert.equal(m.status, 200);
  assert.match(m.body, /^kubeproxy_sync_proxy_rules_last_timestamp_seconds [1-9]/m);
  assert.match(m.body, /^kubeproxy_sync_proxy_rules_duration_seconds_count [1-9]/m);
  assert.match(m.body, /^kubeproxy_proxy_healthz_total\{code="200"\} [1-9]/m);
  assert.equal((await get(metricsPort, '/proxyMode')).body, 'nftables');
  // the `kubernetes` Service is there from the start
  const listing = spawnSync('nft', ['list', 'table', 'ip', TABLE], { encoding: 'utf8' }).stdout;
  assert.match(listing, new RegExp(`${NET.replaceAll('.', '\\.')}\\.1 \\. tcp \\. 443 : goto service-[A-Z2-7]{8}-default/kubernetes/tcp/https`));
  for (const mode of ['iptables', 'ipvs']) {
    const r = spawnSync(process.execPath, [KEELSON, 'proxy', '--proxy-mode', mode, '--kubeconfig', c.kubeconfig], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`proxy mode "${mode}" is not supported by Keelson`));
  }
});

test('a ClusterIP sends pods\' and the host\'s connections to the ready endpoints; a second endpoint gets traffic too; none: refused', async () => {
  apply(deployment(1));
  apply('apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n  ports:\n  - {name: http, port: 80, targetPort: http}\n');
  apply(`apiVersion: v1\nkind: Pod\nmetadata:\n  name: client\nspec:\n  nodeName: ${NODE}\n  terminationGracePeriodSeconds: 0\n  containers:\n  - name: c\n    image: ${BUSYBOX}\n    imagePullPolicy: Never\n    command: [sleep, "3600"]\n`);
  const ip = await clusterIP('web');
  assert.ok(ip.startsWith(`${NET}.`), ip);
  const [first] = await until('a ready web pod', async () => ((await readyPods('app=web')).length === 1 ? readyPods('app=web') : undefined), 90_000).catch((e) => assert.fail(`${e.message}\n${logs()}`));
  await until('the client running', async () => (await c.raw('GET', '/api/v1/namespaces/default/pods/client')).json().status?.phase === 'Running', 90_000);

  const answer = await until('an answer through the ClusterIP from a pod', async () => {
    const r = await fromPod(ip);
    return r.ok ? r.out.trim() : undefined;
  }, 30_000).catch(async (e) => assert.fail(`${e.message}\n${(await fromPod(ip)).out}\n${logs()}`));
  assert.equal(answer, first);
  // the host's own connection (the output hook)
  const fromHost = (await fromTheHost(ip, 80, false)).trim();
  assert.equal(fromHost, first);
  // hairpin: the backend reaching itself through its Service (masqueraded, or its own address
  // would come back to it as the source)
  const self = await fromPod(ip, 80, '/', first!);
  assert.ok(self.ok, self.out);
  assert.equal(self.out.trim(), first);

  // a second endpoint: both answer in time
  assert.equal(c.kubectl(['scale', 'deployment/web', '--replicas=2']).code, 0);
  const both = await until('two ready web pods', async () => {
    const p = await readyPods('app=web');
    return p.length === 2 ? p : undefined;
  }, 90_000);
  const seen = new Set<string>();
  await until('answers from both endpoints', async () => {
    const r = await fromPod(ip);
    if (r.ok) seen.add(r.out.trim());
    return both.every((n) => seen.has(n));
  }, 60_000).catch((e) => assert.fail(`${e.message}: seen ${[...seen].join(', ')} of ${both.join(', ')}`));
  // sessionAffinity ClientIP: one client keeps its endpoint
  apply('apiVersion: v1\nkind: Service\nmetadata:\n  name: web-sticky\nspec:\n  selector: {app: web}\n  sessionAffinity: ClientIP\n  ports:\n  - {name: http, port: 80, targetPort: http}\n');
  const sticky = await clusterIP('web-sticky');
  const stuck = await until('an answer through the sticky Service', async () => {
    const r = await fromPod(sticky);
    return r.ok ? r.out.trim() : undefined;
  }, 30_000);
  for (let i = 0; i < 6; i++) assert.equal((await fromPod(sticky)).out.trim(), stuck);

  // no endpoints: the connection is refused (reject), at once
  assert.equal(c.kubectl(['scale', 'deployment/web', '--replicas=0']).code, 0);
  const refused = await until('a refused connection', async () => {
    const r = await fromPod(ip);
    return !r.ok && /refused/i.test(r.out) ? r.out : undefined;
  }, 60_000);
  assert.match(refused, /Connection refused/);
  // another port of the ClusterIP is refused too
  const other = await fromPod(ip, 81);
  assert.equal(other.ok, false);
  assert.match(other.out, /refused/i);
});

test('a NodePort answers on the node\'s addresses in --nodeport-addresses, from pods and from the host', async () => {
  assert.equal(c.kubectl(['scale', 'deployment/web', '--replicas=1']).code, 0);
  const [pod] = await until('a ready web pod', async () => {
    const p = await readyPods('app=web');
    return p.length === 1 ? p : undefined;
  }, 90_000);
  apply('apiVersion: v1\nkind: Service\nmetadata:\n  name: web-np\nspec:\n  type: NodePort\n  selector: {app: web}\n  ports:\n  - {name: http, port: 80, targetPort: http}\n');
  const nodePort = (await c.raw('GET', '/api/v1/namespaces/default/services/web-np')).json().spec.ports[0].nodePort;
  assert.ok(nodePort >= 30000 && nodePort <= 32767, String(nodePort));
  const answer = await until('an answer on the NodePort from a pod', async () => {
    const r = await fromPod(gateway(), nodePort);
    return r.ok ? r.out.trim() : undefined;
  }, 30_000).catch(async (e) => assert.fail(`${e.message}\n${(await fromPod(gateway(), nodePort)).out}\n${logs()}`));
  assert.equal(answer, pod);
  assert.equal((await fromTheHost(gateway(), nodePort, false)).trim(), pod);
  // no endpoints: refused
  assert.equal(c.kubectl(['scale', 'deployment/web', '--replicas=0']).code, 0);
  await until('a refused NodePort connection', async () => {
    const r = await fromPod(gateway(), nodePort);
    return !r.ok && /refused/i.test(r.out);
  }, 60_000);
});

test('an external IP and a load-balancer IP (the test\'s bridge address) answer from pods and from the host; loadBalancerSourceRanges; without endpoints: refused', async () => {
  assert.equal(c.kubectl(['scale', 'deployment/web', '--replicas=1']).code, 0);
  const [pod] = await until('a ready web pod', async () => {
    const p = await readyPods('app=web');
    return p.length === 1 ? p : undefined;
  }, 90_000);
  // (the bridge's own address: reachable only from this host and the test's pods)
  apply(`apiVersion: v1\nkind: Service\nmetadata:\n  name: web-ext\nspec:\n  selector: {app: web}\n  externalIPs: [${gateway()}]\n  ports:\n  - {name: http, port: 8081, targetPort: http}\n`);
  apply('apiVersion: v1\nkind: Service\nmetadata:\n  name: web-lb\nspec:\n  type: LoadBalancer\n  selector: {app: web}\n  ports:\n  - {name: http, port: 8082, targetPort: http}\n');
  // (no load balancer runs for this cluster: the test writes the ingress as one would)
  const st = c.kubectl(['patch', 'service', 'web-lb', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { loadBalancer: { ingress: [{ ip: gateway(), ipMode: 'VIP' }] } } })]);
  assert.equal(st.code, 0, st.stderr);
  for (const port of [8081, 8082]) {
    const answer = await until(`an answer on ${gateway()}:${port} from a pod`, async () => {
      const r = await fromPod(gateway(), port);
      return r.ok ? r.out.trim() : undefined;
    }, 30_000).catch(async (e) => assert.fail(`${e.message}\n${(await fromPod(gateway(), port)).out}\n${logs()}`));
    assert.equal(answer, pod);
    assert.equal((await fromTheHost(gateway(), port, false)).trim(), pod);
  }
  const listing = spawnSync('nft', ['list', 'table', 'ip', TABLE], { encoding: 'utf8' }).stdout;
  assert.match(listing, new RegExp(`${gateway().replaceAll('.', '\\.')} \\. tcp \\. 8082 : goto external-[A-Z2-7]{8}-default/web-lb/tcp/http`));
  // loadBalancerSourceRanges: pods outside the ranges are dropped on the load-balancer IP (not on the external IP), inside them they answer again
  const ranges = (r: string[]) => assert.equal(c.kubectl(['patch', 'service', 'web-lb', '--type=merge', '-p', JSON.stringify({ spec: { loadBalancerSourceRanges: r } })]).code, 0);
  ranges(['192.0.2.0/24']);
  const dropped = await until('the pod dropped on the load-balancer IP', async () => {
    const r = await fromPod(gateway(), 8082);
    return !r.ok ? r.out : undefined;
  }, 30_000);
  assert.doesNotMatch(dropped, /refused/i);
  assert.equal((await fromPod(gateway(), 8081)).out.trim(), pod);
  ranges([ctd.subnet]);
  await until('the pod answered on the load-balancer IP again', async () => (await fromPod(gateway(), 8082)).ok, 30_000);
  // no endpoints: both refused
  assert.equal(c.kubectl(['scale', 'deployment/web', '--replicas=0']).code, 0);
  for (const port of [8081, 8082]) {
    await until(`a refused connection to ${gateway()}:${port}`, async () => {
      const r = await fromPod(gateway(), port);
      return !r.ok && /refused/i.test(r.out);
    }, 60_000);
  }
  c.kubectl(['delete', 'service', 'web-ext', 'web-lb']);
});

test('the kubernetes Service reaches the API server from a pod', async () => {
  // (the API server's endpoint is the bridge's address, relayed: see the file's comment; the
  // bridge is up since the pods of the test before)
  const slice = (await c.raw('GET', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes')).json();
  assert.deepEqual([slice.endpoints[0].addresses[0], slice.ports[0].port], [gateway(), c.port]);
  await startRelay();
  const ip = await clusterIP('kubernetes');
  assert.equal(ip, `${NET}.1`);
  // (busybox has no TLS client that works here: plain HTTP to the TLS port gets the API server's
  // answer to that, as Go's servers give it)
  const out = await until('an answer of the API server through the kubernetes Service', async () => {
    const r = await fromPod(ip, 443, '/version');
    return r.ok ? r.out : undefined;
  }, 30_000).catch(async (e) => assert.fail(`${e.message}\n${(await fromPod(ip, 443, '/version')).out}\n${logs()}`));
  assert.equal(out, 'Client sent an HTTP request to an HTTPS server.\n');
  // and from the host
  const v = JSON.parse(await fromTheHost(ip, 443, true, '/version'));
  assert.match(v.gitVersion, /^v1\.33\./);
});

test('stopped, the proxy leaves its table; --cleanup removes it', async () => {
  await stopProcess(proxy);
  assert.equal(proxy!.exitCode, 0, logs());
  assert.ok(tableExists(), 'the table stays after SIGTERM');
  const r = spawnSync(process.execPath, [KEELSON, 'proxy', '--cleanup', '--nftables-table-name', TABLE], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(tableExists(), false);
});
