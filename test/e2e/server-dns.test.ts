// `keelson server` runs the cluster DNS (dns/, k3s' coredns) when it has its own node: the
// kube-system/kube-dns Service at the 10th address of the service range, its EndpointSlice naming
// the node's address and the port the DNS listens on, and the node's pods get it as their
// nameserver (the embedded kubelet's --cluster-dns and --cluster-domain); --disable=coredns deletes
// the Service and runs nothing. What the DNS answers is dns.test's part. No traffic goes to the
// node's address: the pod's resolv.conf is read from its log file on disk.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { until, KEELSON, ROOT, type Cluster } from './harness.js';
import type { Containerd } from '../nodeagent/containerd.js';
import { startServerNode, getIfExists, HOST_IPV4, type ServerNode } from './servernode.js';

let sn: ServerNode;
let c: Cluster;
let ctd: Containerd;
let dir: string;
const NODE = 'keelson-dns-node';
const NODE_IP = HOST_IPV4;

before(async () => {
  sn = await startServerNode({ node: NODE, nodeIP: NODE_IP, args: ['--storage-backend=memory', '--disable=local-storage'], prefix: 'keelson-server-dns-' });
  ({ c, ctd, dir } = sn);
});

after(async () => {
  await sn?.stop();
});

const get = (path: string) => getIfExists(c, path);

test('the kube-dns Service and its EndpointSlice name the DNS on the node; the node\'s pods use it as their nameserver', async () => {
  assert.ok(NODE_IP, 'the host has a non-loopback IPv4 address');
  await until('Serving the cluster DNS logged', () => /Serving the cluster DNS/.test(c.logs), 30_000);
  const port = Number(/Serving the cluster DNS.*?address="?[^"\s]*:(\d+)/.exec(c.logs)?.[1]);
  assert.ok(port > 0, c.logs.split('\n').filter((l) => /cluster DNS/.test(l)).join('\n'));
  const svc = await until('the kube-dns Service', () => get('/api/v1/namespaces/kube-system/services/kube-dns'), 30_000);
  assert.equal(svc.spec.clusterIP, sn.serviceIP(10));
  assert.equal(svc.metadata.labels['k8s-app'], 'kube-dns');
  assert.equal(svc.spec.selector, undefined, 'no selector: the EndpointSlice is Keelson\'s');
  assert.deepEqual(
    svc.spec.ports.map((p: any) => `${p.name} ${p.port}/${p.protocol} -> ${p.targetPort}`).sort(),
    [`dns 53/UDP -> ${port}`, `dns-tcp 53/TCP -> ${port}`],
  );
  const slices = await get('/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dkube-dns');
  assert.equal(slices.items.length, 1);
  assert.deepEqual(slices.items[0].endpoints.map((e: any) => e.addresses), [[NODE_IP]]);
  assert.ok(slices.items[0].ports.some((p: any) => p.name === 'dns' && p.port === port && p.protocol === 'UDP'));

  await until('the node Ready', () => /\sReady\s/.test(c.kubectl(['get', 'node', NODE, '--no-headers']).stdout), 60_000);
  await until('no NoSchedule taint', () => c.kubectl(['get', 'node', NODE, '-o', 'jsonpath={.spec.taints}']).stdout === '', 60_000);
  const log = await runPod('resolv', ['cat', '/etc/resolv.conf']);
  assert.ok(log.includes(`nameserver ${sn.serviceIP(10)}`), log.join('\n'));
  assert.ok(log.some((l) => l.startsWith('search default.svc.cluster.local svc.cluster.local cluster.local')), log.join('\n'));
  assert.ok(log.includes('options ndots:5'), log.join('\n'));
});

/** runs a pod of the node to its end and returns its log's lines */
async function runPod(name: string, command: string[]): Promise<string[]> {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: ctd.images.busybox, imagePullPolicy: 'Never', command }] } };
  const r = c.kubectl(['apply', '-f', '-'], { input: JSON.stringify(pod) });
  assert.equal(r.code, 0, r.stderr);
  await until(`the pod ${name} ended`, () => /^(Succeeded|Failed)$/.test(c.kubectl(['get', 'pod', name, '-o', 'jsonpath={.status.phase}']).stdout), 60_000);
  const podDir = readdirSync(sn.logs).find((d) => d.startsWith(`default_${name}_`));
  assert.ok(podDir, `the log directory of ${name}`);
  const lines = readFileSync(join(sn.logs, podDir, 'c', '0.log'), 'utf8').split('\n').filter(Boolean).map((l) => l.replace(/^\S+ std(out|err) [FP] /, ''));
  assert.equal(c.kubectl(['delete', 'pod', name, '--wait=true', '--timeout=60s']).code, 0);
  return lines;
}

test('a pod resolves cluster names through its nameserver: the service proxy carries the kube-dns cluster IP to the DNS', async () => {
  // (busybox's nslookup asks the resolv.conf nameserver, the kube-dns cluster IP, which the
  // server's service proxy DNATs to the DNS on the node's address)
  const out = await runPod('lookup', ['sh', '-c', '/bin/busybox nslookup kubernetes.default.svc.cluster.local; /bin/busybox nslookup kube-dns.kube-system.svc.cluster.local; /bin/busybox nslookup nothing-here.default.svc.cluster.local; true']);
  const text = out.join('\n');
  assert.match(text, new RegExp(`Name:\\s+kubernetes\\.default\\.svc\\.cluster\\.local\\nAddress:\\s+${sn.serviceIP(1).replace(/\./g, '\\.')}\\b`), text);
  assert.match(text, new RegExp(`Name:\\s+kube-dns\\.kube-system\\.svc\\.cluster\\.local\\nAddress:\\s+${sn.serviceIP(10).replace(/\./g, '\\.')}\\b`), text);
  assert.match(text, /NXDOMAIN/, text);
});

test('--disable=coredns: the kube-dns Service and its EndpointSlice are deleted and no DNS runs', async () => {
  assert.ok(await get('/api/v1/namespaces/kube-system/services/kube-dns'));
  assert.equal(await c.stopProcess(), 0);
  c.logs = '';
  await c.launch(['--disable=coredns']);
  await until('the Service deleted', async () => (await get('/api/v1/namespaces/kube-system/services/kube-dns')) === undefined, 30_000);
  const slices = await get('/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dkube-dns');
  assert.equal(slices.items.length, 0);
  assert.doesNotMatch(c.logs, /Serving the cluster DNS/);
});

test('--cluster-dns and --cluster-domain: in keelson server\'s help, and refused when invalid', () => {
  const help = spawnSync(process.execPath, [KEELSON, 'server', '--help'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /--cluster-dns string\s+The cluster IP of the kube-dns Service/);
  assert.match(help.stdout, /--cluster-domain string\s+The cluster's DNS domain.*\(default "cluster.local"\)/);
  assert.match(help.stdout, /coredns \(the cluster DNS and its kube-system\/kube-dns Service\)/);
  const data = join(dir, 'bad');
  for (const [flag, msg] of [
    ['--cluster-dns=10.96.0.x', /--cluster-dns: invalid IP address "10.96.0.x"/],
    ['--cluster-domain=Cluster_Local', /--cluster-domain: "Cluster_Local" is not a valid DNS subdomain/],
    ['--cluster-cidr=10.42.0.0/33', /--cluster-cidr: invalid CIDR address: 10.42.0.0\/33/],
  ] as const) {
    const bad = spawnSync(process.execPath, [KEELSON, 'server', '--data-dir', data, flag], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, msg);
  }
});
