// The service proxy's pure parts: Services and EndpointSlices into service ports, the choice of
// endpoints, the ruleset text; and, where `nft` runs as root here, that nft takes the text
// (`nft -c`: checked, nothing committed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { buildRuleset, endpointChain, externalChain, firewallChain, hashName, renderCleanup, renderRuleset, serviceChain, type RulesetOptions } from '../../src/proxy/nftables.js';
import { categorize, servicePorts, usableEndpoints, type ProxyServicePort } from '../../src/proxy/services.js';
import { applyConfigFile, validateFlags } from '../../src/cli/proxy.js';
import { base32 } from '../../src/machinery/base32.js';

const svc = (name: string, spec: Record<string, unknown>, labels: Record<string, string> = {}) => ({ metadata: { namespace: 'ns1', name, labels }, spec: { type: 'ClusterIP', ...spec } });
const slice = (svcName: string, ports: unknown[], endpoints: unknown[], addressType = 'IPv4') => ({ metadata: { namespace: 'ns1', name: `${svcName}-abc`, labels: { 'kubernetes.io/service-name': svcName } }, addressType, ports, endpoints });
const ep = (ip: string, conditions: Record<string, boolean> = { ready: true }, nodeName = 'node-a') => ({ addresses: [ip], conditions, nodeName });

const OPTS: RulesetOptions = { table: 'kube-proxy', nodeName: 'node-a', clusterCIDR: '10.1.0.0/16', masqueradeAll: false, masqueradeBit: 14, nodePortAddresses: ['192.0.2.2'] };

function ports(services: any[], slices: any[]): ProxyServicePort[] {
  const by = new Map<string, any[]>();
  for (const s of slices) by.set(`ns1/${s.metadata.labels['kubernetes.io/service-name']}`, [...(by.get(`ns1/${s.metadata.labels['kubernetes.io/service-name']}`) ?? []), s]);
  return servicePorts(services, by);
}

test('base32 (RFC 4648\'s vectors, unpadded)', () => {
  assert.deepEqual(['', 'f', 'fo', 'foo', 'foob', 'fooba', 'foobar'].map((x) => base32(Buffer.from(x))), ['', 'MY', 'MZXQ', 'MZXW6', 'MZXW6YQ', 'MZXW6YTB', 'MZXW6YTBOI']);
});

test('service ports: matched to slice ports by name and protocol; headless, ExternalName, other proxies\' and IPv6 slices left out', () => {
  const sps = ports(
    [
      svc('web', { clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ports: [{ name: 'http', port: 80, protocol: 'TCP' }, { name: 'dns', port: 53, protocol: 'UDP' }] }),
      svc('headless', { clusterIP: 'None', ports: [{ port: 80 }] }),
      svc('ext', { type: 'ExternalName', externalName: 'example.com' }),
      svc('other', { clusterIP: '10.96.0.11', ports: [{ port: 80 }] }, { 'service.kubernetes.io/service-proxy-name': 'someone-else' }),
    ],
    [
      slice('web', [{ name: 'http', port: 8080, protocol: 'TCP' }, { name: 'dns', port: 5353, protocol: 'UDP' }], [ep('10.1.0.5'), ep('10.1.0.4', { ready: false, serving: true, terminating: true })]),
      slice('web', [{ name: 'http', port: 8080, protocol: 'TCP' }], [ep('fd00::1')], 'IPv6'),
    ],
  );
  assert.deepEqual(sps.map((p) => [p.name, p.portName, p.protocol, p.clusterIP, p.port, p.endpoints.map((e) => `${e.ip}:${e.port}`)]), [
    ['web', 'http', 'TCP', '10.96.0.10', 80, ['10.1.0.4:8080', '10.1.0.5:8080']],
    ['web', 'dns', 'UDP', '10.96.0.10', 53, ['10.1.0.4:5353', '10.1.0.5:5353']],
  ]);
});

test('endpoints: ready ones; with none ready, the serving terminating ones; internalTrafficPolicy Local: this node\'s only', () => {
  const mk = (ready: boolean, serving: boolean, terminating: boolean, ip: string, nodeName = 'node-a') => ({ ip, port: 80, ready, serving, terminating, nodeName });
  assert.deepEqual(usableEndpoints([mk(true, true, false, 'a'), mk(false, true, true, 'b')]).map((e) => e.ip), ['a']);
  assert.deepEqual(usableEndpoints([mk(false, false, false, 'a'), mk(false, true, true, 'b'), mk(false, false, true, 'c')]).map((e) => e.ip), ['b']);
  const sp: ProxyServicePort = { namespace: 'ns1', name: 's', portName: '', protocol: 'TCP', clusterIP: '10.96.0.1', port: 80, nodePort: 0, affinitySeconds: 0, internalLocal: true, externalLocal: false, externalIPs: [], loadBalancerIPs: [], sourceRanges: [], endpoints: [mk(true, true, false, 'x', 'node-b')] };
  const c = categorize(sp, 'node-a');
  assert.deepEqual([c.internal.length, c.cluster.length, c.any], [0, 1, true]);
});

test('the ruleset: a service chain spreading over endpoint chains, masquerade from outside the cluster CIDR, hairpin, DNAT; no endpoints: reject', () => {
  const sps = ports(
    [svc('web', { clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80 }] }), svc('empty', { clusterIP: '10.96.0.12', ports: [{ port: 81, protocol: 'UDP' }] })],
    [slice('web', [{ name: 'http', port: 8080, protocol: 'TCP' }], [ep('10.1.0.5'), ep('10.1.0.6')])],
  );
  const rs = buildRuleset(sps, OPTS);
  const web = sps[0]!;
  const sc = serviceChain(web);
  assert.match(sc, /^service-[A-Z2-7]{8}-ns1\/web\/tcp\/http$/);
  assert.equal(hashName('ns1/web/tcp/http'), sc.split('-')[1]);
  const e5 = endpointChain(web, web.endpoints[0]!);
  const e6 = endpointChain(web, web.endpoints[1]!);
  assert.match(e5, /^endpoint-[A-Z2-7]{8}-ns1\/web\/tcp\/http__10\.1\.0\.5\/8080$/);
  assert.deepEqual(rs.chains.get(sc)!.rules, [
    'ip daddr 10.96.0.10 tcp dport 80 ip saddr != 10.1.0.0/16 jump mark-for-masquerade',
    `numgen random mod 2 vmap { 0 : goto ${e5}, 1 : goto ${e6} }`,
  ]);
  assert.deepEqual(rs.chains.get(e5)!.rules, ['ip saddr 10.1.0.5 jump mark-for-masquerade', 'meta l4proto tcp dnat to 10.1.0.5:8080']);
  assert.deepEqual(rs.elements.get('service-ips'), [`10.96.0.10 . tcp . 80 : goto ${sc}`]);
  assert.deepEqual(rs.elements.get('no-endpoint-services'), ['10.96.0.12 . udp . 81 comment "ns1/empty" : goto reject-chain']);
  assert.deepEqual(rs.elements.get('cluster-ips'), ['10.96.0.10', '10.96.0.12']);
  assert.deepEqual(rs.chains.get('masquerading')!.rules, ['meta mark & 0x4000 == 0 return', 'meta mark set meta mark xor 0x4000', 'masquerade fully-random']);
  assert.equal(rs.chains.get('nat-prerouting')!.hook, 'type nat hook prerouting priority -100; policy accept;');
  assert.equal(rs.chains.get('nat-output')!.hook, 'type nat hook output priority -100; policy accept;');

  // masquerade-all: every connection marked
  const all = buildRuleset(sps, { ...OPTS, masqueradeAll: true });
  assert.equal(all.chains.get(sc)!.rules[0], 'ip daddr 10.96.0.10 tcp dport 80 jump mark-for-masquerade');
});

test('the ruleset: session affinity, internalTrafficPolicy Local without local endpoints (drop), NodePorts', () => {
  const sps = ports(
    [
      svc('sticky', { clusterIP: '10.96.0.20', sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } }, ports: [{ port: 80 }] }),
      svc('local', { clusterIP: '10.96.0.21', internalTrafficPolicy: 'Local', ports: [{ port: 80 }] }),
      svc('np', { type: 'NodePort', clusterIP: '10.96.0.22', ports: [{ port: 80, nodePort: 30080 }] }),
    ],
    [
      slice('sticky', [{ name: '', port: 8080, protocol: 'TCP' }], [ep('10.1.0.7')]),
      slice('local', [{ port: 8080, protocol: 'TCP' }], [ep('10.1.0.8', { ready: true }, 'node-b')]),
      slice('np', [{ port: 8080, protocol: 'TCP' }], [ep('10.1.0.9')]),
    ],
  );
  const rs = buildRuleset(sps, OPTS);
  const [sticky, , np] = sps;
  const e7 = endpointChain(sticky!, sticky!.endpoints[0]!);
  const aff = e7.replace(/^endpoint-/, 'affinity-');
  assert.equal(rs.sets.get(aff), 'type ipv4_addr; flags dynamic,timeout; timeout 60s;');
  assert.ok(rs.chains.get(serviceChain(sticky!))!.rules.includes(`ip saddr @${aff} goto ${e7}`));
  assert.ok(rs.chains.get(e7)!.rules.includes(`update @${aff} { ip saddr }`));
  assert.deepEqual(rs.elements.get('no-endpoint-services'), ['10.96.0.21 . tcp . 80 comment "ns1/local" : drop']);
  const ext = [...rs.chains.keys()].find((k) => k.startsWith('external-'))!;
  assert.deepEqual(rs.chains.get(ext)!.rules, ['jump mark-for-masquerade comment "masquerade traffic from outside the cluster"', `goto ${serviceChain(np!)}`]);
  assert.deepEqual(rs.elements.get('service-nodeports'), [`tcp . 30080 : goto ${ext}`]);
  assert.deepEqual(rs.elements.get('nodeport-ips'), ['192.0.2.2']);
});

test('the ruleset: external IPs and load-balancer IPs go to the external chain; without endpoints rejected, policy Local without local ones dropped; loadBalancerSourceRanges', () => {
  const lbStatus = (ips: string[], ipMode?: string) => ({ loadBalancer: { ingress: ips.map((ip) => ({ ip, ...(ipMode ? { ipMode } : {}) })) } });
  const services = [
    { ...svc('ext', { clusterIP: '10.96.0.30', externalIPs: ['192.0.2.10', 'fd00::1', '127.0.0.5'], ports: [{ port: 80 }] }) },
    { ...svc('lb', { type: 'LoadBalancer', clusterIP: '10.96.0.31', loadBalancerSourceRanges: ['198.51.100.7/24', ' 192.0.2.0/24 '], ports: [{ port: 443, nodePort: 30443 }] }), status: lbStatus(['192.0.2.20']) },
    { ...svc('lb-local', { type: 'LoadBalancer', clusterIP: '10.96.0.32', externalTrafficPolicy: 'Local', ports: [{ port: 8080, nodePort: 30808 }] }), status: lbStatus(['192.0.2.21']) },
    { ...svc('lb-none', { type: 'LoadBalancer', clusterIP: '10.96.0.33', ports: [{ port: 9090, nodePort: 30909, protocol: 'UDP' }] }), status: lbStatus(['192.0.2.22']) },
    { ...svc('lb-proxy', { type: 'LoadBalancer', clusterIP: '10.96.0.34', ports: [{ port: 80, nodePort: 30081 }] }), status: lbStatus(['192.0.2.23'], 'Proxy') },
    // (a ClusterIP Service keeps no load-balancer IPs)
    { ...svc('not-lb', { clusterIP: '10.96.0.35', ports: [{ port: 80 }] }), status: lbStatus(['192.0.2.24']) },
  ];
  const sps = ports(services, [
    slice('ext', [{ port: 8080, protocol: 'TCP' }], [ep('10.1.0.10')]),
    slice('lb', [{ port: 8443, protocol: 'TCP' }], [ep('10.1.0.11', { ready: true }, 'node-b')]),
    slice('lb-local', [{ port: 80, protocol: 'TCP' }], [ep('10.1.0.12', { ready: true }, 'node-b')]),
  ]);
  const [ext, lb, lbLocal, lbNone, lbProxy, notLB] = sps;
  assert.deepEqual([ext!.externalIPs, lb!.loadBalancerIPs, lb!.sourceRanges, lbProxy!.loadBalancerIPs, notLB!.loadBalancerIPs], [['192.0.2.10', '127.0.0.5'], ['192.0.2.20'], ['198.51.100.0/24', '192.0.2.0/24'], [], []]);
  const rs = buildRuleset(sps, { ...OPTS, nodeIP: '192.0.2.2' });
  const serviceIPs = rs.elements.get('service-ips')!;
  // (loopback external IPs are left out, as NodePorts on 127.0.0.0/8 are)
  assert.ok(serviceIPs.includes(`192.0.2.10 . tcp . 80 : goto ${externalChain(ext!)}`), serviceIPs.join('\n'));
  assert.ok(!serviceIPs.some((e) => e.startsWith('127.')));
  assert.deepEqual(rs.chains.get(externalChain(ext!))!.rules, ['jump mark-for-masquerade comment "masquerade traffic from outside the cluster"', `goto ${serviceChain(ext!)}`]);
  assert.ok(serviceIPs.includes(`192.0.2.20 . tcp . 443 : goto ${externalChain(lb!)}`));
  assert.ok(rs.elements.get('service-nodeports')!.includes(`tcp . 30443 : goto ${externalChain(lb!)}`));
  // policy Local with endpoints elsewhere only: the chain short-circuits pods and the node, the rest is dropped
  assert.ok(serviceIPs.includes(`192.0.2.21 . tcp . 8080 : goto ${externalChain(lbLocal!)}`));
  assert.deepEqual(rs.chains.get(externalChain(lbLocal!))!.rules, [
    `ip saddr 10.1.0.0/16 goto ${serviceChain(lbLocal!)} comment "short-circuit pod traffic"`,
    'fib saddr type local jump mark-for-masquerade comment "masquerade local traffic"',
    `fib saddr type local goto ${serviceChain(lbLocal!)} comment "short-circuit local traffic"`,
  ]);
  const noEp = rs.elements.get('no-endpoint-services')!;
  assert.ok(noEp.includes('192.0.2.21 . tcp . 8080 comment "ns1/lb-local" : drop'), noEp.join('\n'));
  assert.ok(rs.elements.get('no-endpoint-nodeports')!.includes('tcp . 30808 comment "ns1/lb-local" : drop'));
  // no endpoints: rejected, no external chain
  assert.ok(noEp.includes('192.0.2.22 . udp . 9090 comment "ns1/lb-none" : goto reject-chain'));
  assert.ok(!serviceIPs.some((e) => e.startsWith('192.0.2.22 ')));
  assert.equal(rs.chains.has(externalChain(lbNone!)), false);
  // ipMode Proxy and a ClusterIP's status: not captured
  assert.ok(!serviceIPs.some((e) => e.startsWith('192.0.2.23 ') || e.startsWith('192.0.2.24 ')));
  // loadBalancerSourceRanges: the LB IP checked before DNAT; the node is in a range, so the LB IP itself is allowed too
  assert.deepEqual(rs.elements.get('firewall-ips'), [`192.0.2.20 . tcp . 443 comment "ns1/lb" : goto ${firewallChain(lb!)}`]);
  assert.deepEqual(rs.chains.get(firewallChain(lb!))!.rules, ['ip saddr != { 198.51.100.0/24, 192.0.2.0/24, 192.0.2.20 } drop']);
  assert.deepEqual(rs.chains.get('filter-prerouting')!.rules, ['ct state new jump firewall-check']);
  assert.deepEqual(buildRuleset(sps, { ...OPTS, nodeIP: '203.0.113.1' }).chains.get(firewallChain(lb!))!.rules, ['ip saddr != { 198.51.100.0/24, 192.0.2.0/24 } drop']);
  // two Services naming the same external address and port: one element, the first's
  const twice = ports([svc('a', { clusterIP: '10.96.0.40', externalIPs: ['192.0.2.50'], ports: [{ port: 80 }] }), svc('b', { clusterIP: '10.96.0.41', externalIPs: ['192.0.2.50'], ports: [{ port: 80 }] })], []);
  assert.deepEqual(buildRuleset(twice, OPTS).elements.get('no-endpoint-services')!.filter((e) => e.startsWith('192.0.2.50 ')), ['192.0.2.50 . tcp . 80 comment "ns1/a" : goto reject-chain']);

  // nft takes it (checked only)
  if (process.getuid?.() !== 0) return;
  const text = renderRuleset(buildRuleset(sps, { ...OPTS, table: 'keelson-unit-check', nodeIP: '192.0.2.2' }));
  const check = spawnSync('nft', ['-c', '-f', '-'], { input: text, encoding: 'utf8' });
  if (check.error) return;
  assert.equal(check.status, 0, check.stderr + text);
});

test('the text: a first sync deletes and makes the table; a later one flushes it, deletes the chains gone and keeps the affinity sets', () => {
  const mk = (n: number) =>
    ports([svc('web', { clusterIP: '10.96.0.10', sessionAffinity: 'ClientIP', ports: [{ port: 80 }] })], [slice('web', [{ port: 8080, protocol: 'TCP' }], Array.from({ length: n }, (_, i) => ep(`10.1.0.${i + 1}`)))]);
  const two = buildRuleset(mk(2), OPTS);
  const one = buildRuleset(mk(1), OPTS);
  const first = renderRuleset(two);
  assert.match(first, /^add table ip kube-proxy \{ comment "rules for kube-proxy"; \}\ndelete table ip kube-proxy\nadd table ip kube-proxy/);
  const next = renderRuleset(one, two);
  assert.match(next, /\nflush table ip kube-proxy\n/);
  assert.doesNotMatch(next, /delete table/);
  const gone = [...two.chains.keys()].filter((k) => !one.chains.has(k));
  assert.equal(gone.length, 1);
  assert.ok(next.includes(`delete chain ip kube-proxy ${gone[0]}\n`));
  assert.ok(next.includes('flush map ip kube-proxy service-ips\n'));
  assert.ok(!/flush set ip kube-proxy affinity-/.test(next), 'affinity sets are not flushed');
  assert.ok(/delete set ip kube-proxy affinity-/.test(next), 'the set of an endpoint gone is deleted');
  assert.equal(renderCleanup('t1'), 'add table ip t1\ndelete table ip t1\n');

  // nft takes the text (checked only: -c commits nothing)
  const check = spawnSync('nft', ['-c', '-f', '-'], { input: first.replaceAll('kube-proxy', 'keelson-unit-check'), encoding: 'utf8' });
  if (check.error || process.getuid?.() !== 0) return;
  assert.equal(check.status, 0, check.stderr);
  const withNodePorts = renderRuleset(buildRuleset(ports([svc('np', { type: 'NodePort', clusterIP: '10.96.0.22', externalTrafficPolicy: 'Local', ports: [{ port: 80, nodePort: 30080, protocol: 'UDP' }] })], [slice('np', [{ port: 8080, protocol: 'UDP' }], [ep('10.1.0.9')])]), { ...OPTS, table: 'keelson-unit-check', nodePortAddresses: 'all' }));
  const check2 = spawnSync('nft', ['-c', '-f', '-'], { input: withNodePorts, encoding: 'utf8' });
  assert.equal(check2.status, 0, check2.stderr + withNodePorts);
});

test('flags and the configuration file: flags win; iptables and ipvs refused', () => {
  const d: any = { config: '', kubeconfig: '', master: '', hostnameOverride: '', proxyMode: '', clusterCIDR: '', masqueradeAll: false, masqueradeBit: 14, healthzBindAddress: '0.0.0.0:10256', metricsBindAddress: '127.0.0.1:10249', configSyncPeriodMs: 900_000, syncPeriodMs: 30_000, minSyncPeriodMs: 1000, nodePortAddresses: [], kubeAPIQPS: 5, kubeAPIBurst: 10, cleanup: false, tableName: 'kube-proxy' };
  applyConfigFile(d, { apiVersion: 'kubeproxy.config.k8s.io/v1alpha1', kind: 'KubeProxyConfiguration', mode: 'nftables', clusterCIDR: '10.244.0.0/16', hostnameOverride: 'from-file', nftables: { masqueradeAll: true, syncPeriod: '10s', minSyncPeriod: '2s' }, clientConnection: { kubeconfig: '/k' } }, (f) => f === 'hostname-override');
  assert.deepEqual([d.clusterCIDR, d.hostnameOverride, d.masqueradeAll, d.syncPeriodMs, d.minSyncPeriodMs, d.kubeconfig], ['10.244.0.0/16', '', true, 10_000, 2_000, '/k']);
  assert.deepEqual(validateFlags(d), []);
  assert.match(validateFlags({ ...d, proxyMode: 'iptables' })[0]!, /proxy mode "iptables" is not supported by Keelson/);
  assert.match(validateFlags({ ...d, proxyMode: 'ipvs' })[0]!, /nftables mode only/);
  assert.throws(() => applyConfigFile(d, { apiVersion: 'v1', kind: 'ConfigMap' }, () => false), /KubeProxyConfiguration/);
});
