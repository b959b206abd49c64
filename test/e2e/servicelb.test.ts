// ServiceLB of `keelson server` (k3s' servicelb): a server with its own node on a private containerd
// (servernode.ts: a service range and an nftables table of its own). A LoadBalancer Service gets the
// node's address as its ingress (ipMode VIP, its ports), shown by kubectl under EXTERNAL-IP, and the
// server's service proxy carries <node address>:<port> to its endpoints, from a pod and from the
// host; a second Service on the same port gets a Warning Event and no ingress until the first is
// gone; a type change back to ClusterIP clears the ingress; a Service with a loadBalancerClass is
// left alone; --disable=servicelb (on a restart) clears the ingresses ServiceLB wrote and not another
// implementation's.
//
// The node's address is the host's first non-loopback IPv4 address (as server-dns.test's): traffic
// to it stays on this host. The Services' ports are random ones of 20000-28999, so that the rules
// for that address and port take nothing else of the host's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { until, type Cluster } from './harness.js';
import type { Containerd } from '../nodeagent/containerd.js';
import { startServerNode, getIfExists, HOST_IPV4, type ServerNode } from './servernode.js';

let sn: ServerNode;
let c: Cluster;
let ctd: Containerd;
const NODE = 'keelson-servicelb-node';
const NODE_IP = HOST_IPV4;
const P1 = randomInt(20000, 29000);
const P2 = P1 + 1;

before(async () => {
  sn = await startServerNode({ node: NODE, nodeIP: NODE_IP, args: ['--disable=local-storage'], prefix: 'keelson-servicelb-' });
  ({ c, ctd } = sn);
});

after(async () => {
  if (c?.proc?.exitCode === null) c.kubectl(['delete', 'deployment', '--all', '--wait=true', '--timeout=60s']);
  await sn?.stop();
});

const get = (path: string) => getIfExists(c, path);

const svcPath = (name: string) => `/api/v1/namespaces/default/services/${name}`;
const ingressOf = async (name: string) => (await get(svcPath(name)))?.status?.loadBalancer?.ingress;

function apply(obj: object): void {
  const r = c.kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });
  assert.equal(r.code, 0, r.stderr);
}

const lbService = (name: string, port: number, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ name: 'http', port, targetPort: 8080 }], ...extra },
});

/** a GET from this process: the body */
function fromTheHost(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host, port, path: '/', timeout: 5000, agent: false }, (res) => {
      let b = '';
      res.on('data', (d) => (b += d));
      res.on('end', () => resolve(b));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${host}:${port} timed out`)));
    req.on('error', reject);
  });
}

/** runs a pod of the node to its end and returns its log (read from the file on disk) */
async function runPod(name: string, script: string): Promise<string> {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: ctd.images.busybox, imagePullPolicy: 'Never', command: ['sh', '-c', script] }] } };
  apply(pod);
  await until(`the pod ${name} ended`, () => /^(Succeeded|Failed)$/.test(c.kubectl(['get', 'pod', name, '-o', 'jsonpath={.status.phase}']).stdout), 90_000);
  const podDir = readdirSync(sn.logs).find((d) => d.startsWith(`default_${name}_`));
  assert.ok(podDir, `the log directory of ${name}`);
  const text = readFileSync(join(sn.logs, podDir, 'c', '0.log'), 'utf8').split('\n').filter(Boolean).map((l) => l.replace(/^\S+ std(out|err) [FP] /, '')).join('\n');
  c.kubectl(['delete', 'pod', name, '--wait=true', '--timeout=60s']);
  return text;
}

test('a LoadBalancer Service gets the node\'s address (kubectl shows it); the proxy carries <node address>:<port> to it from a pod and from the host', async () => {
  assert.ok(NODE_IP, 'the host has a non-loopback IPv4 address');
  await until('the node Ready', () => /\sReady\s/.test(c.kubectl(['get', 'node', NODE, '--no-headers']).stdout), 60_000);
  apply({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          terminationGracePeriodSeconds: 0,
          containers: [{ name: 'httpd', image: ctd.images.busybox, imagePullPolicy: 'Never', command: ['sh', '-c', 'mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www'], readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 } }],
        },
      },
    },
  });
  apply(lbService('lb1', P1));
  const ingress = await until('the ingress of lb1', () => ingressOf('lb1'), 30_000).catch((e) => assert.fail(`${e.message}\n${c.logs.slice(-3000)}`));
  assert.deepEqual(ingress, [{ ip: NODE_IP, ipMode: 'VIP', ports: [{ port: P1, protocol: 'TCP' }] }]);
  const svc = await get(svcPath('lb1'));
  assert.ok(svc.metadata.managedFields.some((m: any) => m.manager === 'keelson-servicelb' && m.subresource === 'status'), JSON.stringify(svc.metadata.managedFields));
  const row = c.kubectl(['get', 'svc', 'lb1', '--no-headers']).stdout;
  assert.match(row, new RegExp(`^lb1\\s+LoadBalancer\\s+\\S+\\s+${NODE_IP.replaceAll('.', '\\.')}\\s+${P1}:\\d+/TCP`), row);

  // the proxy: the node's address and the port go to the Service's external chain
  await until('the load-balancer IP in the node\'s table', () => new RegExp(`${NODE_IP.replaceAll('.', '\\.')} \\. tcp \\. ${P1} : goto external-`).test(spawnSync('nft', ['list', 'table', 'ip', sn.table], { encoding: 'utf8' }).stdout), 30_000);
  const [pod] = await until('a ready web pod', async () => {
    const items = (await get('/api/v1/namespaces/default/pods?labelSelector=app%3Dweb')).items;
    const ready = items.filter((p: any) => p.status?.conditions?.some((x: any) => x.type === 'Ready' && x.status === 'True')).map((p: any) => p.metadata.name);
    return ready.length === 1 ? ready : undefined;
  }, 90_000);
  const fromHost = await until('an answer on the node\'s address from the host', () => fromTheHost(NODE_IP, P1).catch(() => undefined), 30_000);
  assert.equal(fromHost.trim(), pod);
  const out = await runPod('client', `for i in 1 2 3 4 5 6 7 8 9 10; do out=$(printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 5 ${NODE_IP} ${P1}) && [ -n "$out" ] && break; sleep 1; done; echo "$out"`);
  assert.ok(out.includes(pod), out);
});

test('a second Service on the port gets a Warning Event and no ingress; when the first is deleted it gets the ingress', async () => {
  apply(lbService('lb2', P1));
  const event = await until('the Event of lb2', async () => {
    const evs = (await get('/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dlb2')).items;
    return evs.find((e: any) => e.reason === 'UnAvailableLoadBalancer');
  }, 30_000);
  assert.equal(event.type, 'Warning');
  assert.match(event.message, new RegExp(`port ${P1}/TCP .*default/lb1`));
  assert.equal(await ingressOf('lb2'), undefined);
  assert.equal(c.kubectl(['delete', 'service', 'lb1']).code, 0);
  const ingress = await until('the ingress of lb2', () => ingressOf('lb2'), 30_000);
  assert.deepEqual(ingress, [{ ip: NODE_IP, ipMode: 'VIP', ports: [{ port: P1, protocol: 'TCP' }] }]);
});

test('type ClusterIP again: the ingress is cleared; a loadBalancerClass: left alone', async () => {
  apply(lbService('lb3', P2));
  await until('the ingress of lb3', () => ingressOf('lb3'), 30_000);
  const r = c.kubectl(['patch', 'service', 'lb3', '--type=merge', '-p', JSON.stringify({ spec: { type: 'ClusterIP' } })]);
  assert.equal(r.code, 0, r.stderr);
  await until('the ingress of lb3 cleared', async () => (await ingressOf('lb3')) === undefined, 30_000);

  apply(lbService('other', P2, { loadBalancerClass: 'example.com/other' }));
  // (lb2 and lb3's changes are done by now: a Service of its own would have had its ingress too)
  await new Promise((r) => setTimeout(r, 3000));
  assert.equal(await ingressOf('other'), undefined);
  // what that implementation writes stays
  const st = c.kubectl(['patch', 'service', 'other', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { loadBalancer: { ingress: [{ ip: '192.0.2.7', ipMode: 'Proxy' }] } } })]);
  assert.equal(st.code, 0, st.stderr);
  await new Promise((r) => setTimeout(r, 2000));
  assert.deepEqual(await ingressOf('other'), [{ ip: '192.0.2.7', ipMode: 'Proxy' }]);
});

test('--disable=servicelb: the ingresses ServiceLB wrote are cleared, another implementation\'s stay, and none is written', async () => {
  assert.ok(await ingressOf('lb2'));
  assert.equal(await c.stopProcess(), 0);
  c.logs = '';
  await c.launch(['--disable=servicelb']);
  await until('the ingress of lb2 cleared', async () => (await ingressOf('lb2')) === undefined, 30_000);
  assert.deepEqual(await ingressOf('other'), [{ ip: '192.0.2.7', ipMode: 'Proxy' }]);
  apply(lbService('lb4', P2 + 2));
  await new Promise((r) => setTimeout(r, 3000));
  assert.equal(await ingressOf('lb4'), undefined);
  assert.doesNotMatch(c.logs, /Started ServiceLB/);
  assert.match(c.kubectl(['get', 'svc', 'lb4', '--no-headers']).stdout, /<pending>/);
});
