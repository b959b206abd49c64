// The cluster DNS's records (src/dns/records.ts) from Services, EndpointSlices and Namespaces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DNSIndex, addressOfReverseName, canonicalIP, podLabelIP, reverseName, type Lookup, type LookupResult } from '../../src/dns/records.js';
import { nthAddress } from '../../src/dns/service.js';

const ns = (name: string) => ({ metadata: { name } });
const svc = (namespace: string, name: string, spec: any) => ({ metadata: { namespace, name }, spec });
const slice = (namespace: string, service: string, name: string, endpoints: any[], ports: any[], addressType = 'IPv4') => ({
  metadata: { namespace, name, labels: { 'kubernetes.io/service-name': service } },
  addressType,
  endpoints,
  ports,
});

const index = new DNSIndex({
  namespaces: [ns('default'), ns('kube-system'), ns('db'), ns('empty')],
  services: [
    svc('default', 'web', { type: 'ClusterIP', clusterIP: '10.96.0.20', clusterIPs: ['10.96.0.20', 'fd00::20'], ports: [{ name: 'http', port: 80, protocol: 'TCP' }, { port: 8125, protocol: 'UDP' }] }),
    svc('kube-system', 'kube-dns', { clusterIP: '10.96.0.10', ports: [{ name: 'dns', port: 53, protocol: 'UDP' }] }),
    svc('db', 'pg', { clusterIP: 'None', ports: [{ name: 'pg', port: 5432 }] }),
    svc('db', 'nobody', { clusterIP: 'None' }),
    svc('default', 'ext', { type: 'ExternalName', externalName: 'Example.COM.' }),
  ],
  endpointSlices: [
    slice('db', 'pg', 'pg-1', [
      { addresses: ['10.42.0.5'], hostname: 'pg-0', conditions: { ready: true } },
      { addresses: ['10.42.0.6'], conditions: {} },
      { addresses: ['10.42.0.7'], hostname: 'pg-2', conditions: { ready: false } },
    ], [{ name: 'pg', port: 5432, protocol: 'TCP' }]),
    slice('db', 'pg', 'pg-2', [{ addresses: ['fd00::5'], hostname: 'pg-0' }], [{ name: 'pg', port: 5432, protocol: 'TCP' }], 'IPv6'),
  ],
}, { clusterDomain: 'cluster.local' });

function res(l: Lookup): LookupResult {
  assert.ok(!('forward' in l), 'answered, not forwarded');
  return l as LookupResult;
}
const data = (l: Lookup) => res(l).answers.map((a: any) => a.data);

test('ClusterIP Service: A and AAAA per family, NODATA for other types, SOA in authority', () => {
  assert.deepEqual(data(index.lookup('web.default.svc.cluster.local', 'A')), ['10.96.0.20']);
  assert.deepEqual(data(index.lookup('WEB.Default.svc.cluster.local.', 'AAAA')), ['fd00::20']);
  const r = res(index.lookup('web.default.svc.cluster.local', 'MX'));
  assert.equal(r.rcode, 'NOERROR');
  assert.equal(r.answers.length, 0);
  assert.equal(r.authorities[0]!.type, 'SOA');
  // the owner name is the name as asked
  assert.equal(res(index.lookup('WEB.default.svc.cluster.local', 'A')).answers[0]!.name, 'WEB.default.svc.cluster.local');
  assert.equal((res(index.lookup('web.default.svc.cluster.local', 'A')).answers[0] as any).ttl, 5);
});

test('SRV: named ports only under _port._proto; the plain name lists every port', () => {
  const r = res(index.lookup('_http._tcp.web.default.svc.cluster.local', 'SRV'));
  assert.deepEqual(r.answers.map((a: any) => a.data), [{ priority: 0, weight: 100, port: 80, target: 'web.default.svc.cluster.local' }]);
  assert.deepEqual(r.additionals.map((a: any) => a.data).sort(), ['10.96.0.20', 'fd00::20']);
  assert.equal(res(index.lookup('_http._udp.web.default.svc.cluster.local', 'SRV')).rcode, 'NXDOMAIN');
  assert.equal(res(index.lookup('_nope._tcp.web.default.svc.cluster.local', 'SRV')).rcode, 'NXDOMAIN');
  // an existing SRV name asked for A: NODATA; _tcp alone: an empty non-terminal
  assert.equal(res(index.lookup('_http._tcp.web.default.svc.cluster.local', 'A')).rcode, 'NOERROR');
  assert.equal(res(index.lookup('_tcp.web.default.svc.cluster.local', 'A')).rcode, 'NOERROR');
  assert.deepEqual(data(index.lookup('web.default.svc.cluster.local', 'SRV')).map((d: any) => d.port), [80, 8125]);
});

test('headless Service: ready endpoints, their hostnames (or dashed addresses), SRV per endpoint', () => {
  assert.deepEqual(data(index.lookup('pg.db.svc.cluster.local', 'A')).sort(), ['10.42.0.5', '10.42.0.6']);
  assert.deepEqual(data(index.lookup('pg.db.svc.cluster.local', 'AAAA')), ['fd00::5']);
  assert.deepEqual(data(index.lookup('pg-0.pg.db.svc.cluster.local', 'A')), ['10.42.0.5']);
  assert.deepEqual(data(index.lookup('pg-0.pg.db.svc.cluster.local', 'AAAA')), ['fd00::5']);
  assert.deepEqual(data(index.lookup('10-42-0-6.pg.db.svc.cluster.local', 'A')), ['10.42.0.6']);
  assert.equal(res(index.lookup('pg-2.pg.db.svc.cluster.local', 'A')).rcode, 'NXDOMAIN', 'not ready');
  const srv = data(index.lookup('_pg._tcp.pg.db.svc.cluster.local', 'SRV')).map((d: any) => `${d.port} ${d.target}`).sort();
  assert.deepEqual(srv, ['5432 10-42-0-6.pg.db.svc.cluster.local', '5432 pg-0.pg.db.svc.cluster.local']);
  // a headless Service without endpoints exists: NODATA
  const none = res(index.lookup('nobody.db.svc.cluster.local', 'A'));
  assert.equal(none.rcode, 'NOERROR');
  assert.equal(none.answers.length, 0);
  // a ClusterIP Service has no endpoint names
  assert.equal(res(index.lookup('x.web.default.svc.cluster.local', 'A')).rcode, 'NXDOMAIN');
});

test('ExternalName: a CNAME, followed for other types', () => {
  const r = res(index.lookup('ext.default.svc.cluster.local', 'A'));
  assert.deepEqual(r.answers.map((a) => [a.type, (a as any).data]), [['CNAME', 'example.com']]);
  assert.equal(r.chase, 'example.com');
  assert.equal(res(index.lookup('ext.default.svc.cluster.local', 'CNAME')).chase, undefined);
});

test('PTR for ClusterIPs and endpoints; unknown reverse names go upstream', () => {
  assert.deepEqual(data(index.lookup('20.0.96.10.in-addr.arpa', 'PTR')), ['web.default.svc.cluster.local']);
  assert.deepEqual(data(index.lookup(reverseName('fd00::20'), 'PTR')), ['web.default.svc.cluster.local']);
  assert.deepEqual(data(index.lookup('5.0.42.10.in-addr.arpa.', 'PTR')), ['pg-0.pg.db.svc.cluster.local']);
  assert.deepEqual(data(index.lookup('6.0.42.10.in-addr.arpa', 'PTR')), ['10-42-0-6.pg.db.svc.cluster.local']);
  assert.deepEqual(index.lookup('1.1.168.192.in-addr.arpa', 'PTR'), { forward: true });
  assert.deepEqual(index.lookup('0.96.10.in-addr.arpa', 'PTR'), { forward: true });
});

test('pods (insecure), namespaces, the zone apex, the schema version, NXDOMAIN elsewhere; outside the zone: forward', () => {
  assert.deepEqual(data(index.lookup('10-42-0-99.default.pod.cluster.local', 'A')), ['10.42.0.99']);
  assert.deepEqual(data(index.lookup('fd00--99.default.pod.cluster.local', 'AAAA')), ['fd00::99']);
  assert.equal(res(index.lookup('10-42-0-99.nosuch.pod.cluster.local', 'A')).rcode, 'NXDOMAIN');
  assert.equal(res(index.lookup('not-an-ip.default.pod.cluster.local', 'A')).rcode, 'NXDOMAIN');
  assert.equal(res(index.lookup('empty.svc.cluster.local', 'A')).rcode, 'NOERROR');
  assert.equal(res(index.lookup('nosuch.svc.cluster.local', 'A')).rcode, 'NXDOMAIN');
  assert.equal(res(index.lookup('nosuch.default.svc.cluster.local', 'A')).rcode, 'NXDOMAIN');
  assert.equal(res(index.lookup('nosuch.default.svc.cluster.local', 'A')).authorities[0]!.type, 'SOA');
  assert.equal(res(index.lookup('svc.cluster.local', 'A')).rcode, 'NOERROR');
  assert.equal(res(index.lookup('foo.cluster.local', 'A')).rcode, 'NXDOMAIN');
  assert.deepEqual(data(index.lookup('dns-version.cluster.local', 'TXT')), ['1.1.0']);
  assert.equal(res(index.lookup('cluster.local', 'SOA')).answers[0]!.type, 'SOA');
  assert.deepEqual(data(index.lookup('cluster.local', 'NS')), ['ns.dns.cluster.local']);
  assert.deepEqual(data(index.lookup('ns.dns.cluster.local', 'A')), ['10.96.0.10']);
  assert.deepEqual(index.lookup('example.com', 'A'), { forward: true });
  assert.deepEqual(index.lookup('notcluster.local', 'A'), { forward: true });
});

test('verified and disabled pod modes; another cluster domain', () => {
  const v = new DNSIndex({ namespaces: [ns('a')], services: [], endpointSlices: [], pods: [{ metadata: { namespace: 'a', name: 'p' }, status: { podIP: '10.1.2.3', podIPs: [{ ip: '10.1.2.3' }] } }] }, { podsMode: 'verified', clusterDomain: 'Corp.Example' });
  assert.deepEqual(data(v.lookup('10-1-2-3.a.pod.corp.example', 'A')), ['10.1.2.3']);
  assert.equal(res(v.lookup('10-1-2-4.a.pod.corp.example', 'A')).rcode, 'NXDOMAIN');
  assert.deepEqual(v.lookup('10-1-2-3.a.pod.cluster.local', 'A'), { forward: true });
  const d = new DNSIndex({ namespaces: [ns('a')], services: [], endpointSlices: [] }, { podsMode: 'disabled' });
  assert.equal(res(d.lookup('10-1-2-3.a.pod.cluster.local', 'A')).rcode, 'NXDOMAIN');
});

test('addresses: canonical forms, reverse names, pod labels, the n-th address of a range', () => {
  assert.equal(canonicalIP('fd00::1'), 'fd00:0000:0000:0000:0000:0000:0000:0001');
  assert.equal(canonicalIP('::ffff:1.2.3.4'), '0000:0000:0000:0000:0000:ffff:0102:0304');
  assert.equal(addressOfReverseName(reverseName('fd00::1')), canonicalIP('fd00::1'));
  assert.equal(addressOfReverseName('4.3.2.1.in-addr.arpa'), '1.2.3.4');
  assert.equal(addressOfReverseName('300.3.2.1.in-addr.arpa'), undefined);
  assert.equal(podLabelIP('1-2-3-4'), '1.2.3.4');
  assert.equal(podLabelIP('fd00--1'), 'fd00::1');
  assert.equal(podLabelIP('a-b'), undefined);
  assert.equal(nthAddress('10.96.0.0/12', 10), '10.96.0.10');
  assert.equal(nthAddress('10.43.0.0/16', 10), '10.43.0.10');
  assert.equal(nthAddress('fd00:10:96::/108', 10), 'fd00:10:96::a');
  assert.equal(nthAddress('10.96.5.7/12', 10), '10.96.0.10');
});
