// The cluster DNS (src/dns/) against a real `keelson server`: Services, EndpointSlices and
// Namespaces watched through the API as the DNS's own user (system:coredns, impersonated, with k3s'
// ClusterRole), queried with Node's resolver (c-ares) and raw UDP/TCP packets on 127.0.0.1. Names
// outside the zone go to a second, local test resolver, never off the machine.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import { promises as dnsp } from 'node:dns';
import dnsPacket, { type DecodedPacket } from 'dns-packet';

/** dns-packet decodes the rcode, its types do not name it */
const rcodeOf = (p: DecodedPacket): string => (p as unknown as { rcode: string }).rcode;
import { startCluster, until, type Cluster } from './harness.js';
import { startClusterDNS, type ClusterDNS } from '../../src/dns/server.js';
import { startEmbeddedDNS } from '../../src/dns/embedded.js';
import { CLUSTER_DNS_USER, ensureDNSRBAC, ensureDNSService, nthAddress, removeDNSService } from '../../src/dns/service.js';
import { RESTClient } from '../../src/client/rest.js';

let c: Cluster;
let dns: ClusterDNS;
let upstream: dgram.Socket;
let upstreamQueries: string[] = [];
let admin: RESTClient;
const stops: (() => Promise<void> | void)[] = [];

/** a small resolver standing in for the host's: example.test A 192.0.2.1 (and a CNAME chain), NXDOMAIN otherwise */
async function startUpstream(): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  s.on('message', (msg, rinfo) => {
    let q: DecodedPacket;
    try {
      q = dnsPacket.decode(msg);
    } catch {
      return;
    }
    const question = q.questions![0]!;
    upstreamQueries.push(`${question.type} ${question.name}`);
    const name = question.name.toLowerCase();
    const answers: any[] = [];
    if (name === 'example.test' && question.type === 'A') answers.push({ name: question.name, type: 'A', ttl: 60, data: '192.0.2.1' });
    if (name === 'alias.example.test' && question.type === 'A') answers.push({ name: question.name, type: 'CNAME', ttl: 60, data: 'example.test' }, { name: 'example.test', type: 'A', ttl: 60, data: '192.0.2.1' });
    const known = name === 'example.test' || name === 'alias.example.test';
    const r = dnsPacket.encode({ type: 'response', id: q.id, flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (known ? 0 : 3), questions: q.questions, answers });
    s.send(r, rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return s;
}

function resolver(port: number): dnsp.Resolver {
  const r = new dnsp.Resolver({ timeout: 3000, tries: 1 });
  r.setServers([`127.0.0.1:${port}`]);
  return r;
}

async function apply(obj: any): Promise<void> {
  const r = c.kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });
  assert.equal(r.code, 0, r.stderr);
}

function udpQuery(port: number, packet: Buffer, timeoutMs = 2000): Promise<Buffer | undefined> {
  const s = dgram.createSocket('udp4');
  return new Promise((resolve) => {
    const t = setTimeout(() => (s.close(), resolve(undefined)), timeoutMs);
    s.on('message', (m) => {
      clearTimeout(t);
      s.close();
      resolve(m);
    });
    s.send(packet, port, '127.0.0.1');
  });
}

function tcpQuery(port: number, packet: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    sock.on('error', reject);
    sock.on('connect', () => {
      const len = Buffer.alloc(2);
      len.writeUInt16BE(packet.length);
      sock.write(Buffer.concat([len, packet]));
    });
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        sock.destroy();
        resolve(buf.subarray(2, 2 + buf.readUInt16BE(0)));
      }
    });
  });
}

const query = (name: string, type: any, extra: any = {}) => dnsPacket.encode({ type: 'query', id: 4242, flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type, class: 'IN' }], ...extra });

before(async () => {
  c = await startCluster();
  const t = c.credentials;
  admin = new RESTClient({ server: c.url, ca: t.ca, cert: t.cert, key: t.key, servername: 'localhost' });
  await ensureDNSRBAC(admin);
  upstream = await startUpstream();
  await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'db' } });
  await apply({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'default' },
    spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }, { name: 'metrics', port: 9090, protocol: 'UDP' }] },
  });
  await apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext', namespace: 'default' }, spec: { type: 'ExternalName', externalName: 'example.test' } });
  await apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'pg', namespace: 'db' }, spec: { clusterIP: 'None', ports: [{ name: 'pg', port: 5432 }] } });
  await apply({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'pg-a', namespace: 'db', labels: { 'kubernetes.io/service-name': 'pg' } },
    addressType: 'IPv4',
    endpoints: [
      { addresses: ['10.42.0.5'], hostname: 'pg-0', conditions: { ready: true } },
      { addresses: ['10.42.0.6'], hostname: 'pg-1', conditions: { ready: true } },
      { addresses: ['10.42.0.7'], hostname: 'pg-2', conditions: { ready: false } },
    ],
    ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }],
  });
  // a headless Service whose answer does not fit 512 bytes
  await apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'many', namespace: 'db' }, spec: { clusterIP: 'None', ports: [{ name: 'x', port: 1 }] } });
  await apply({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'many-a', namespace: 'db', labels: { 'kubernetes.io/service-name': 'many' } },
    addressType: 'IPv4',
    endpoints: Array.from({ length: 40 }, (_, i) => ({ addresses: [`10.43.0.${i + 1}`], conditions: { ready: true } })),
    ports: [{ name: 'x', port: 1, protocol: 'TCP' }],
  });
  dns = await startClusterDNS({
    host: '127.0.0.1',
    port: 0,
    rest: { server: c.url, ca: t.ca, cert: t.cert, key: t.key, servername: 'localhost', headers: { 'Impersonate-User': CLUSTER_DNS_USER } },
    upstreams: [`127.0.0.1:${upstream.address().port}`],
  });
  stops.push(() => dns.stop());
});

after(async () => {
  for (const s of stops.reverse()) await s();
  upstream?.close();
  admin?.close();
  await c?.stop();
});

test('the DNS synced its caches as system:coredns (k3s ClusterRole) and listens on UDP and TCP', () => {
  assert.equal(dns.synced(), true);
  assert.ok(dns.port > 0);
  assert.deepEqual(dns.upstreams, [{ host: '127.0.0.1', port: upstream.address().port }]);
});

test('A, SRV and PTR of a ClusterIP Service; NODATA for AAAA; NXDOMAIN for unknown names', async () => {
  const r = resolver(dns.port);
  const ip = JSON.parse(c.kubectl(['get', 'svc', 'web', '-o', 'json']).stdout).spec.clusterIP;
  assert.deepEqual(await r.resolve4('web.default.svc.cluster.local'), [ip]);
  assert.deepEqual(await r.resolve4('WEB.DEFAULT.svc.cluster.local.'), [ip]);
  assert.deepEqual(await r.resolveSrv('_http._tcp.web.default.svc.cluster.local'), [{ name: 'web.default.svc.cluster.local', port: 80, priority: 0, weight: 100 }]);
  assert.deepEqual(await r.resolveSrv('_metrics._udp.web.default.svc.cluster.local'), [{ name: 'web.default.svc.cluster.local', port: 9090, priority: 0, weight: 100 }]);
  assert.deepEqual(await r.reverse(ip), ['web.default.svc.cluster.local']);
  await assert.rejects(r.resolve6('web.default.svc.cluster.local'), { code: 'ENODATA' });
  await assert.rejects(r.resolve4('nosuch.default.svc.cluster.local'), { code: 'ENOTFOUND' });
  await assert.rejects(r.resolve4('web.nosuch.svc.cluster.local'), { code: 'ENOTFOUND' });
  await assert.rejects(r.resolveSrv('_http._udp.web.default.svc.cluster.local'), { code: 'ENOTFOUND' });
  assert.deepEqual(await r.resolveTxt('dns-version.cluster.local'), [['1.1.0']]);
  // NXDOMAIN and NODATA carry the zone's SOA, authoritative, TTL 5
  const nx = dnsPacket.decode((await udpQuery(dns.port, query('nosuch.default.svc.cluster.local', 'A')))!);
  assert.equal(rcodeOf(nx), 'NXDOMAIN');
  assert.equal(nx.flag_aa, true);
  assert.equal(nx.id, 4242);
  assert.equal(nx.authorities![0]!.type, 'SOA');
  assert.equal((nx.authorities![0] as any).name, 'cluster.local');
  const a = dnsPacket.decode((await udpQuery(dns.port, query('web.default.svc.cluster.local', 'A')))!);
  assert.equal((a.answers![0] as any).ttl, 5);
});

test('a headless Service: ready endpoints, their hostnames, SRV per endpoint, PTR', async () => {
  const r = resolver(dns.port);
  assert.deepEqual((await r.resolve4('pg.db.svc.cluster.local')).sort(), ['10.42.0.5', '10.42.0.6']);
  assert.deepEqual(await r.resolve4('pg-1.pg.db.svc.cluster.local'), ['10.42.0.6']);
  await assert.rejects(r.resolve4('pg-2.pg.db.svc.cluster.local'), { code: 'ENOTFOUND' }, 'not ready');
  const srv = (await r.resolveSrv('_pg._tcp.pg.db.svc.cluster.local')).map((s) => `${s.port} ${s.name}`).sort();
  assert.deepEqual(srv, ['5432 pg-0.pg.db.svc.cluster.local', '5432 pg-1.pg.db.svc.cluster.local']);
  assert.deepEqual(await r.reverse('10.42.0.5'), ['pg-0.pg.db.svc.cluster.local']);
  // pods (insecure mode): the address in the name, for an existing namespace
  assert.deepEqual(await r.resolve4('10-42-0-99.db.pod.cluster.local'), ['10.42.0.99']);
  await assert.rejects(r.resolve4('10-42-0-99.nosuch.pod.cluster.local'), { code: 'ENOTFOUND' });
});

test("a StatefulSet's pods through Keelson's EndpointSlice controller: <hostname>.<subdomain> records", async () => {
  const r = resolver(dns.port);
  await apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'sts', namespace: 'default' }, spec: { clusterIP: 'None', selector: { app: 'sts' }, ports: [{ name: 'peer', port: 7000 }] } });
  for (const [i, ip] of [[0, '10.44.0.5'], [1, '10.44.0.6']] as const) {
    const name = `sts-${i}`;
    await apply({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app: 'sts' } }, spec: { hostname: name, subdomain: 'sts', containers: [{ name: 'c', image: 'busybox', ports: [{ name: 'peer', containerPort: 7000 }] }] } });
    const status = { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] };
    const p = await c.raw('PATCH', `/api/v1/namespaces/default/pods/${name}/status`, { body: JSON.stringify({ status }), headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(p.status, 200, p.text);
  }
  assert.deepEqual(await until('sts-1 resolves', () => r.resolve4('sts-1.sts.default.svc.cluster.local').catch(() => undefined), 15_000), ['10.44.0.6']);
  await until('both pods in the headless answer', async () => (await r.resolve4('sts.default.svc.cluster.local').catch(() => [])).length === 2, 15_000);
  const srv = (await r.resolveSrv('_peer._tcp.sts.default.svc.cluster.local')).map((s) => `${s.port} ${s.name}`).sort();
  assert.deepEqual(srv, ['7000 sts-0.sts.default.svc.cluster.local', '7000 sts-1.sts.default.svc.cluster.local']);
  assert.deepEqual(await r.reverse('10.44.0.5'), ['sts-0.sts.default.svc.cluster.local']);
  // a pod that stops being ready leaves the answers
  const notReady = { status: { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] } };
  assert.equal((await c.raw('PATCH', '/api/v1/namespaces/default/pods/sts-0/status', { body: JSON.stringify(notReady), headers: { 'content-type': 'application/merge-patch+json' } })).status, 200);
  await until('sts-0 is gone', () => r.resolve4('sts-0.sts.default.svc.cluster.local').then(() => false, (e) => e.code === 'ENOTFOUND'), 15_000);
  assert.deepEqual(await r.resolve4('sts.default.svc.cluster.local'), ['10.44.0.6']);
});

test('ExternalName: a CNAME, and A followed through the upstream', async () => {
  const r = resolver(dns.port);
  assert.deepEqual(await r.resolveCname('ext.default.svc.cluster.local'), ['example.test']);
  assert.deepEqual(await r.resolve4('ext.default.svc.cluster.local'), ['192.0.2.1']);
});

test('names outside the zone go to the upstream; reverse names the cluster does not know too', async () => {
  const r = resolver(dns.port);
  upstreamQueries = [];
  assert.deepEqual(await r.resolve4('example.test'), ['192.0.2.1']);
  assert.deepEqual(await r.resolve4('alias.example.test'), ['192.0.2.1']);
  await assert.rejects(r.resolve4('nosuch.example.test'), { code: 'ENOTFOUND' });
  await assert.rejects(r.reverse('192.0.2.77'), { code: 'ENOTFOUND' });
  assert.ok(upstreamQueries.includes('A example.test'), upstreamQueries.join());
  assert.ok(upstreamQueries.includes('PTR 77.2.0.192.in-addr.arpa'), upstreamQueries.join());
  assert.ok(dns.stats().forwards >= 4);
});

test('no upstream answering: SERVFAIL for outside names, cluster names still answered', async () => {
  const silent = dgram.createSocket('udp4');
  await new Promise<void>((r) => silent.bind(0, '127.0.0.1', () => r()));
  const t = c.credentials;
  const d2 = await startClusterDNS({ port: 0, rest: { server: c.url, ca: t.ca, cert: t.cert, key: t.key, servername: 'localhost' }, upstreams: [`127.0.0.1:${silent.address().port}`], forwardTimeoutMs: 300 });
  try {
    const r = resolver(d2.port);
    await assert.rejects(r.resolve4('example.test'), { code: 'ESERVFAIL' });
    assert.equal((await r.resolve4('web.default.svc.cluster.local')).length, 1);
    assert.match(d2.metricsText(), /coredns_dns_responses_total\{rcode="SERVFAIL"\} [1-9]/);
  } finally {
    await d2.stop();
    silent.close();
  }
});

test('forwarding only for the clients of forwardFrom: others get REFUSED for outside names (no open resolver), cluster names still answered', async () => {
  const t = c.credentials;
  // (127.0.0.1 is outside this list: the test's resolver stands for a client on the node's network)
  const d2 = await startClusterDNS({ port: 0, rest: { server: c.url, ca: t.ca, cert: t.cert, key: t.key, servername: 'localhost' }, upstreams: [`127.0.0.1:${upstream.address().port}`], forwardFrom: ['10.0.0.0/8', 'fd00::/8'] });
  try {
    const r = resolver(d2.port);
    upstreamQueries = [];
    await assert.rejects(r.resolve4('example.test'), { code: 'EREFUSED' });
    assert.deepEqual(upstreamQueries, [], 'nothing forwarded');
    assert.equal((await r.resolve4('web.default.svc.cluster.local')).length, 1);
    // (an ExternalName's CNAME is answered; its target outside the zone is not looked up for such a client)
    assert.deepEqual(await r.resolveCname('ext.default.svc.cluster.local'), ['example.test']);
    assert.deepEqual(upstreamQueries, []);
    assert.match(d2.metricsText(), /coredns_dns_responses_total\{rcode="REFUSED"\} [1-9]/);
  } finally {
    await d2.stop();
  }
  await assert.rejects(startClusterDNS({ port: 0, rest: { server: c.url, ca: t.ca, cert: t.cert, key: t.key, servername: 'localhost' }, forwardFrom: ['10.0.0.0'] }), /forwardFrom: invalid CIDR "10.0.0.0"/);
});

test('changes are seen through the watch: a new Service resolves, a deleted one is NXDOMAIN', async () => {
  const r = resolver(dns.port);
  await apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'later', namespace: 'db' }, spec: { ports: [{ port: 81 }] } });
  const got = await until('later resolves', () => r.resolve4('later.db.svc.cluster.local').catch(() => undefined), 10_000);
  assert.equal(got.length, 1);
  assert.equal(c.kubectl(['delete', 'svc', 'later', '-n', 'db']).code, 0);
  await until('later is gone', () => r.resolve4('later.db.svc.cluster.local').then(() => false, (e) => e.code === 'ENOTFOUND'), 10_000);
});

test('large answers: truncated over UDP without EDNS, whole with EDNS0 4096 and over TCP (c-ares retries)', async () => {
  const plain = dnsPacket.decode((await udpQuery(dns.port, query('many.db.svc.cluster.local', 'A')))!);
  assert.equal(plain.flag_tc, true);
  assert.equal(plain.answers!.length, 0);
  const edns = await udpQuery(dns.port, query('many.db.svc.cluster.local', 'A', { additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 4096, extendedRcode: 0, ednsVersion: 0, flags: 0, options: [] }] }));
  const e = dnsPacket.decode(edns!);
  assert.equal(e.flag_tc, false);
  assert.equal(e.answers!.length, 40);
  assert.ok(edns!.length > 512);
  assert.equal(e.additionals!.some((a) => a.type === 'OPT'), true);
  const overTCP = dnsPacket.decode(await tcpQuery(dns.port, query('many.db.svc.cluster.local', 'A')));
  assert.equal(overTCP.answers!.length, 40);
  assert.equal((await resolver(dns.port).resolve4('many.db.svc.cluster.local')).length, 40);
});

test('bad packets: dropped or FORMERR/NOTIMP/BADVERS, and the server goes on answering', async () => {
  // shorter than a header: no answer
  assert.equal(await udpQuery(dns.port, Buffer.from([1, 2, 3]), 300), undefined);
  // a response sent to it: no answer
  assert.equal(await udpQuery(dns.port, dnsPacket.encode({ type: 'response', id: 1, questions: [{ name: 'a', type: 'A' }] }), 300), undefined);
  // a header claiming questions that are not there: FORMERR
  const bad = Buffer.from([0x12, 0x34, 0x01, 0x00, 0x00, 0x05, 0, 0, 0, 0, 0, 0, 0x03, 0x61]);
  const f = dnsPacket.decode((await udpQuery(dns.port, bad))!);
  assert.equal(f.id, 0x1234);
  assert.equal(rcodeOf(f), 'FORMERR');
  // two questions: FORMERR
  const two = dnsPacket.decode((await udpQuery(dns.port, dnsPacket.encode({ type: 'query', id: 7, questions: [{ name: 'a.test', type: 'A' }, { name: 'b.test', type: 'A' }] })))!);
  assert.equal(rcodeOf(two), 'FORMERR');
  // an UPDATE: NOTIMP
  const upd = Buffer.from(query('web.default.svc.cluster.local', 'A'));
  upd.writeUInt16BE((5 << 11) | 0x0100, 2);
  assert.equal(rcodeOf(dnsPacket.decode((await udpQuery(dns.port, upd))!)), 'NOTIMP');
  // a zone transfer: REFUSED
  assert.equal(rcodeOf(dnsPacket.decode((await tcpQuery(dns.port, query('cluster.local', 'AXFR')))!)), 'REFUSED');
  // EDNS version 1: BADVERS (extended rcode 1)
  const v1 = dnsPacket.decode((await udpQuery(dns.port, query('web.default.svc.cluster.local', 'A', { additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 1, flags: 0, options: [] }] })))!);
  assert.equal((v1.additionals!.find((a) => a.type === 'OPT') as any).extendedRcode, 1);
  // random bytes, many of them, then garbage over TCP
  let seed = 12345;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 256);
  for (let i = 0; i < 200; i++) {
    const b = Buffer.from(Array.from({ length: 12 + (i % 60) }, rnd));
    const s = dgram.createSocket('udp4');
    await new Promise<void>((r) => s.send(b, dns.port, '127.0.0.1', () => r()));
    s.close();
  }
  // valid queries with bytes changed: every answer that comes back decodes
  const valid = query('_http._tcp.web.default.svc.cluster.local', 'SRV', { additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0, options: [] }] });
  for (let i = 0; i < 150; i++) {
    const b = Buffer.from(valid);
    for (let k = 0; k < 1 + (i % 4); k++) b[2 + (rnd() * 7 + i) % (b.length - 2)] = rnd();
    b[2]! &= 0x7f; // (a query, not a response: those get no answer)
    const reply = await udpQuery(dns.port, b, 500);
    if (reply) assert.doesNotThrow(() => dnsPacket.decode(reply), `the answer to ${b.toString('hex')}`);
  }
  await new Promise<void>((resolve) => {
    const sock = net.connect(dns.port, '127.0.0.1', () => sock.end(Buffer.from([0, 5, 1, 2, 3, 4, 5, 0, 40, 9, 9])));
    sock.on('close', () => resolve());
    sock.on('error', () => resolve());
    sock.resume();
  });
  assert.equal((await resolver(dns.port).resolve4('web.default.svc.cluster.local')).length, 1);
  assert.match(dns.metricsText(), /coredns_dns_responses_total\{rcode="FORMERR"\} [1-9]/);
  assert.match(dns.metricsText(), /coredns_dns_requests_total\{proto="tcp",type="A"\} [1-9]/);
});

test('ensureDNSService: kube-system/kube-dns at the 10th address, a selector-less Service with our EndpointSlice', async () => {
  const clusterIP = nthAddress('10.96.0.0/12', 10);
  assert.equal(clusterIP, '10.96.0.10');
  // (an address only written into the objects: nothing is sent to it; EndpointSlices refuse loopback ones)
  const nodeIP = '192.0.2.53';
  await assert.rejects(ensureDNSService(admin, { clusterIP, nodeIP: '127.0.0.1', port: dns.port }), /loopback/);
  const first = await ensureDNSService(admin, { clusterIP, nodeIP, port: dns.port, nodeName: 'n1' });
  assert.deepEqual(first, { service: 'created', slice: 'created' });
  const again = await ensureDNSService(admin, { clusterIP, nodeIP, port: dns.port, nodeName: 'n1' });
  assert.deepEqual(again, { service: 'unchanged', slice: 'unchanged' });
  const svc = JSON.parse(c.kubectl(['get', 'svc', 'kube-dns', '-n', 'kube-system', '-o', 'json']).stdout);
  assert.equal(svc.spec.clusterIP, '10.96.0.10');
  assert.equal(svc.spec.selector, undefined);
  assert.equal(svc.metadata.labels['k8s-app'], 'kube-dns');
  assert.deepEqual(svc.spec.ports.map((p: any) => [p.name, p.port, p.protocol, p.targetPort]), [['dns', 53, 'UDP', dns.port], ['dns-tcp', 53, 'TCP', dns.port]]);
  const slices = JSON.parse(c.kubectl(['get', 'endpointslices', '-n', 'kube-system', '-l', 'kubernetes.io/service-name=kube-dns', '-o', 'json']).stdout).items;
  assert.equal(slices.length, 1, 'no controller adds or removes slices of a selector-less Service');
  assert.deepEqual(slices[0].endpoints.map((e: any) => e.addresses), [[nodeIP]]);
  assert.deepEqual(slices[0].ports.map((p: any) => [p.name, p.port, p.protocol]), [['dns', dns.port, 'UDP'], ['dns-tcp', dns.port, 'TCP']]);
  // a new port (the DNS restarted elsewhere) updates the slice and the targetPorts
  const moved = await ensureDNSService(admin, { clusterIP, nodeIP, port: dns.port + 1, metricsPort: 9153 });
  assert.deepEqual(moved, { service: 'updated', slice: 'updated' });
  // the DNS answers for its own Service, and the zone's NS
  const r = resolver(dns.port);
  await until('kube-dns resolves', () => r.resolve4('kube-dns.kube-system.svc.cluster.local').catch(() => undefined), 10_000);
  assert.deepEqual(await r.resolve4('kube-dns.kube-system.svc.cluster.local'), ['10.96.0.10']);
  assert.deepEqual(await r.resolveNs('cluster.local'), ['ns.dns.cluster.local']);
  assert.deepEqual(await r.resolve4('ns.dns.cluster.local'), ['10.96.0.10']);
  assert.deepEqual(await r.resolveSrv('_dns-tcp._tcp.kube-dns.kube-system.svc.cluster.local'), [{ name: 'kube-dns.kube-system.svc.cluster.local', port: 53, priority: 0, weight: 100 }]);
  // --disable=coredns: both go
  await removeDNSService(admin);
  await removeDNSService(admin);
  assert.notEqual(c.kubectl(['get', 'svc', 'kube-dns', '-n', 'kube-system']).code, 0);
  assert.equal(c.kubectl(['get', 'endpointslices', '-n', 'kube-system', '-l', 'kubernetes.io/service-name=kube-dns', '-o', 'name']).stdout.trim(), '');
});

test('startEmbeddedDNS: RBAC, the DNS, kube-dns at the 10th address pointing at it; /metrics, /health, /ready', async () => {
  const t = c.credentials;
  const e = await startEmbeddedDNS({
    rest: { server: c.url, ca: t.ca, cert: t.cert, key: t.key, servername: 'localhost', headers: { 'Impersonate-User': CLUSTER_DNS_USER } },
    admin,
    serviceCIDR: '10.96.0.0/12',
    // (the node's address is only written into the EndpointSlice; the DNS listens on loopback)
    nodeIP: '192.0.2.53',
    listenHost: '127.0.0.1',
    port: 0,
    upstreams: [`127.0.0.1:${upstream.address().port}`],
    metricsAddress: '127.0.0.1:0',
  });
  try {
    assert.equal(e.clusterIP, '10.96.0.10');
    const r = resolver(e.port);
    await until('kube-dns resolves', () => r.resolve4('kube-dns.kube-system.svc.cluster.local').catch(() => undefined), 10_000);
    const svc = JSON.parse(c.kubectl(['get', 'svc', 'kube-dns', '-n', 'kube-system', '-o', 'json']).stdout);
    assert.deepEqual(svc.spec.ports.map((p: any) => [p.name, p.port, p.protocol, p.targetPort]), [['dns', 53, 'UDP', e.port], ['dns-tcp', 53, 'TCP', e.port], ['metrics', 9153, 'TCP', e.metricsPort]]);
    assert.deepEqual(await r.resolve4('kubernetes.default.svc.cluster.local'), [JSON.parse(c.kubectl(['get', 'svc', 'kubernetes', '-o', 'json']).stdout).spec.clusterIP]);
    const get = (path: string) => fetch(`http://127.0.0.1:${e.metricsPort}${path}`).then(async (res) => ({ status: res.status, text: await res.text() }));
    assert.equal((await get('/ready')).status, 200);
    assert.equal((await get('/health')).text, 'OK');
    assert.match((await get('/metrics')).text, /coredns_dns_requests_total\{proto="udp",type="A"\} [1-9]/);
    assert.equal((await get('/nope')).status, 404);
  } finally {
    await e.stop();
    await removeDNSService(admin);
  }
});
