// The nftables ruleset of the service proxy, as text for `nft -f -`, laid out as kube-proxy's
// nftables mode lays out its `ip kube-proxy` table (pkg/proxy/nftables, its README):
//
//   base chains    filter-input / filter-forward / filter-output (priority -110): new connections
//                  to a service port without endpoints meet the no-endpoint-services map (reject,
//                  or drop when only another node has endpoints of a Local policy);
//                  filter-forward / filter-output-post-dnat (-90): the other ports of a ClusterIP
//                  are rejected; nat-prerouting (traffic from pods and from outside) and nat-output
//                  (traffic of the host's own processes), priority -100: jump services;
//                  nat-postrouting (100): jump masquerading.
//                  filter-prerouting / filter-output (-110): new connections to a load-balancer IP
//                  with loadBalancerSourceRanges meet the firewall-ips map (a firewall-… chain
//                  per service port dropping other sources), before any DNAT.
//   services       one lookup of `daddr . l4proto . dport` in the service-ips verdict map (cluster
//                  IPs, external IPs, load-balancer IPs), then of `l4proto . dport` in
//                  service-nodeports for the node's NodePort addresses;
//   service-…      a chain per service port: mark for masquerade what comes from outside the
//                  cluster CIDR (or everything, with masquerade-all), follow session affinity,
//                  then `numgen random mod N vmap` over the endpoint chains;
//   external-…     a chain per service port with NodePorts, external IPs or load-balancer IPs (and
//                  endpoints somewhere): masquerade (policy Cluster) or keep the client's address
//                  and use only local endpoints (policy Local; pods and the node itself still go to
//                  every endpoint);
//   endpoint-…     a chain per endpoint: mark hairpin traffic (a pod reaching itself), record the
//                  affinity, DNAT;
//   masquerading   masquerade what was marked (the mark bit, 0x4000 by default, then cleared).
//
// A sync writes the whole table in one transaction: the first one deletes any table of that name
// and makes it anew; later ones flush its rules and verdict maps, delete the chains and sets no
// longer used and add everything again, so that the session-affinity sets keep their addresses.
// Chain names are `<kind>-<hash>-<namespace>/<name>/<protocol>/<port name>` (`__<ip>/<port>` for an
// endpoint), the hash (8 base32 characters of a SHA-256) keeping them distinct.
import { createHash } from 'node:crypto';
import { base32 } from '../machinery/base32.js';
import { categorize, type ProxyEndpoint, type ProxyServicePort } from './services.js';

export const DEFAULT_TABLE = 'kube-proxy';
export const DEFAULT_MASQUERADE_BIT = 14;

export interface RulesetOptions {
  table: string;
  /** this node's name: endpoints on it are local */
  nodeName: string;
  /** pod traffic is traffic from this range (kube-proxy's --cluster-cidr); '' for none */
  clusterCIDR: string;
  /** masquerade all service traffic */
  masqueradeAll: boolean;
  masqueradeBit: number;
  /** where NodePorts answer: 'all' (every local address but 127.0.0.0/8) or these IPv4 addresses */
  nodePortAddresses: 'all' | string[];
  /** the node's IPv4 address (its InternalIP), for loadBalancerSourceRanges */
  nodeIP?: string;
}

/** the chains, sets and map elements of one sync, and how to write them */
export interface Ruleset {
  table: string;
  /** every chain (base chains first), with its declaration and rules */
  chains: Map<string, { hook?: string; rules: string[] }>;
  /** the named sets and maps: name → declaration body */
  sets: Map<string, string>;
  /** elements to add: set or map name → elements */
  elements: Map<string, string[]>;
}

/** the first 8 characters of base32(sha256(s)) */
export function hashName(s: string): string {
  return base32(createHash('sha256').update(s).digest()).slice(0, 8);
}

function portId(sp: ProxyServicePort): string {
  return `${sp.namespace}/${sp.name}/${sp.protocol.toLowerCase()}/${sp.portName}`;
}

function named(prefix: string, id: string): string {
  return `${prefix}-${hashName(id)}-${id}`;
}

export const serviceChain = (sp: ProxyServicePort) => named('service', portId(sp));
export const externalChain = (sp: ProxyServicePort) => named('external', portId(sp));
export const firewallChain = (sp: ProxyServicePort) => named('firewall', portId(sp));
export const endpointChain = (sp: ProxyServicePort, ep: ProxyEndpoint) => named('endpoint', `${portId(sp)}__${ep.ip}/${ep.port}`);
const affinitySet = (sp: ProxyServicePort, ep: ProxyEndpoint) => named('affinity', `${portId(sp)}__${ep.ip}/${ep.port}`);

/** the ruleset for these service ports */
export function buildRuleset(ports: readonly ProxyServicePort[], o: RulesetOptions): Ruleset {
  const chains = new Map<string, { hook?: string; rules: string[] }>();
  const sets = new Map<string, string>();
  const elements = new Map<string, string[]>();
  const chain = (name: string, rules: string[] = [], hook?: string) => chains.set(name, { hook, rules });
  const keys = new Set<string>();
  const elem = (set: string, e: string) => {
    // (one element per key: two Services naming the same external address and port, the first wins)
    const key = `${set} ${e.replace(/ (comment "[^"]*" )?: .*$/, '')}`;
    if (keys.has(key)) return;
    keys.add(key);
    let l = elements.get(set);
    if (!l) elements.set(set, (l = []));
    l.push(e);
  };
  const mark = `0x${(1 << o.masqueradeBit >>> 0).toString(16).padStart(4, '0')}`;
  const nodePortMatch = o.nodePortAddresses === 'all' ? 'fib daddr type local ip daddr != 127.0.0.0/8' : 'ip daddr @nodeport-ips';

  // base chains
  chain('filter-prerouting', ['ct state new jump firewall-check'], 'type filter hook prerouting priority -110; policy accept;');
  chain('filter-input', ['ct state new jump nodeport-endpoints-check', 'ct state new jump service-endpoints-check'], 'type filter hook input priority -110; policy accept;');
  chain('filter-forward', ['ct state new jump service-endpoints-check', 'ct state new jump cluster-ips-check'], 'type filter hook forward priority -110; policy accept;');
  chain('filter-output', ['ct state new jump service-endpoints-check', 'ct state new jump firewall-check'], 'type filter hook output priority -110; policy accept;');
  chain('filter-output-post-dnat', ['ct state new jump cluster-ips-check'], 'type filter hook output priority -90; policy accept;');
  chain('nat-prerouting', ['jump services'], 'type nat hook prerouting priority -100; policy accept;');
  chain('nat-output', ['jump services'], 'type nat hook output priority -100; policy accept;');
  chain('nat-postrouting', ['jump masquerading'], 'type nat hook postrouting priority 100; policy accept;');
  // regular chains
  chain('services', ['ip daddr . meta l4proto . th dport vmap @service-ips', `${nodePortMatch} meta l4proto . th dport vmap @service-nodeports`]);
  chain('service-endpoints-check', ['ip daddr . meta l4proto . th dport vmap @no-endpoint-services']);
  chain('nodeport-endpoints-check', [`${nodePortMatch} meta l4proto . th dport vmap @no-endpoint-nodeports`]);
  chain('firewall-check', ['ip daddr . meta l4proto . th dport vmap @firewall-ips']);
  chain('cluster-ips-check', ['ip daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"']);
  chain('mark-for-masquerade', [`meta mark set meta mark or ${mark}`]);
  chain('masquerading', [`meta mark & ${mark} == 0 return`, `meta mark set meta mark xor ${mark}`, 'masquerade fully-random']);
  chain('reject-chain', ['reject comment "Reject traffic to services without endpoints"']);

  sets.set('cluster-ips', 'type ipv4_addr; comment "Active ClusterIPs";');
  sets.set('nodeport-ips', 'type ipv4_addr; comment "IPs that accept NodePort traffic";');
  sets.set('service-ips', 'type ipv4_addr . inet_proto . inet_service : verdict; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic";');
  sets.set('service-nodeports', 'type inet_proto . inet_service : verdict; comment "NodePort traffic";');
  sets.set('no-endpoint-services', 'type ipv4_addr . inet_proto . inet_service : verdict; comment "vmap to drop or reject packets to services with no endpoints";');
  sets.set('firewall-ips', 'type ipv4_addr . inet_proto . inet_service : verdict; comment "destinations that are subject to LoadBalancerSourceRanges";');
  sets.set('no-endpoint-nodeports', 'type inet_proto . inet_service : verdict; comment "vmap to drop or reject packets to service nodeports with no endpoints";');
  if (o.nodePortAddresses !== 'all') for (const ip of o.nodePortAddresses) elem('nodeport-ips', ip);

  const clusterIPs = new Set<string>();
  for (const sp of ports) {
    const proto = sp.protocol.toLowerCase();
    const key = `${sp.clusterIP} . ${proto} . ${sp.port}`;
    const name = `${sp.namespace}/${sp.name}${sp.portName ? `:${sp.portName}` : ''}`;
    clusterIPs.add(sp.clusterIP);
    const eps = categorize(sp, o.nodeName);
    // (every endpoint that takes some traffic gets its chain)
    const used = new Map<string, ProxyEndpoint>();
    for (const e of [...eps.internal, ...eps.external]) used.set(`${e.ip}:${e.port}`, e);

    if (eps.internal.length) {
      const rules: string[] = [];
      if (o.masqueradeAll) rules.push(`ip daddr ${sp.clusterIP} ${proto} dport ${sp.port} jump mark-for-masquerade`);
      else if (o.clusterCIDR) rules.push(`ip daddr ${sp.clusterIP} ${proto} dport ${sp.port} ip saddr != ${o.clusterCIDR} jump mark-for-masquerade`);
      rules.push(...spread(sp, eps.internal));
      chain(serviceChain(sp), rules);
      elem('service-ips', `${key} : goto ${serviceChain(sp)}`);
    } else {
      // no endpoints at all: reject; endpoints only elsewhere (internalTrafficPolicy Local): drop
      elem('no-endpoint-services', `${key} comment "${name}" : ${eps.any ? 'drop' : 'goto reject-chain'}`);
    }

    // external destinations (NodePorts, external IPs, load-balancer IPs) all go to the external chain
    // when the service has endpoints anywhere (its short-circuits for pods and the node itself are
    // needed even when policy Local finds none here); without endpoints for outside traffic, what
    // the chain does not take is dropped (policy Local, endpoints elsewhere) or rejected (none at all)
    const externalIPs = sp.externalIPs.filter((ip) => !ip.startsWith('127.'));
    const lbIPs = sp.loadBalancerIPs.filter((ip) => !ip.startsWith('127.'));
    const externallyAccessible = sp.nodePort > 0 || externalIPs.length > 0 || lbIPs.length > 0;
    const noExternal = eps.external.length ? '' : eps.any ? 'drop' : 'goto reject-chain';
    if (externallyAccessible && eps.any) {
      const rules: string[] = [];
      for (const e of eps.cluster) used.set(`${e.ip}:${e.port}`, e);
      const toCluster = clusterChainFor(sp, eps.cluster, eps.internal, chain);
      if (!sp.externalLocal) {
        rules.push('jump mark-for-masquerade comment "masquerade traffic from outside the cluster"');
        rules.push(`goto ${toCluster}`);
      } else {
        // policy Local: the client's address kept; pods and the node itself may still use every endpoint
        if (o.clusterCIDR) rules.push(`ip saddr ${o.clusterCIDR} goto ${toCluster} comment "short-circuit pod traffic"`);
        rules.push('fib saddr type local jump mark-for-masquerade comment "masquerade local traffic"', `fib saddr type local goto ${toCluster} comment "short-circuit local traffic"`);
        if (eps.external.length) rules.push(...spread(sp, eps.external));
      }
      chain(externalChain(sp), rules);
    }
    const toExternal = `goto ${externalChain(sp)}`;
    if (sp.nodePort) {
      const npKey = `${proto} . ${sp.nodePort}`;
      if (eps.any) elem('service-nodeports', `${npKey} : ${toExternal}`);
      if (noExternal) elem('no-endpoint-nodeports', `${npKey} comment "${name}" : ${noExternal}`);
    }
    for (const ip of [...externalIPs, ...lbIPs]) {
      const k = `${ip} . ${proto} . ${sp.port}`;
      if (eps.any) elem('service-ips', `${k} : ${toExternal}`);
      if (noExternal) elem('no-endpoint-services', `${k} comment "${name}" : ${noExternal}`);
    }
    if (lbIPs.length && sp.sourceRanges.length) {
      // loadBalancerSourceRanges: other sources may not reach the load-balancer IPs (the node's own
      // traffic to them leaves from the address itself when the node is in a range)
      const sources = [...sp.sourceRanges];
      if (o.nodeIP && sp.sourceRanges.some((r) => inCIDR(o.nodeIP!, r))) sources.push(...lbIPs);
      const fw = firewallChain(sp);
      chain(fw, [`ip saddr != { ${sources.join(', ')} } drop`]);
      for (const ip of lbIPs) elem('firewall-ips', `${ip} . ${proto} . ${sp.port} comment "${name}" : goto ${fw}`);
    }

    for (const ep of used.values()) {
      const rules = [`ip saddr ${ep.ip} jump mark-for-masquerade`];
      if (sp.affinitySeconds > 0) {
        sets.set(affinitySet(sp, ep), `type ipv4_addr; flags dynamic,timeout; timeout ${sp.affinitySeconds}s;`);
        rules.push(`update @${affinitySet(sp, ep)} { ip saddr }`);
      }
      rules.push(`meta l4proto ${proto} dnat to ${ep.ip}:${ep.port}`);
      chain(endpointChain(sp, ep), rules);
    }
  }
  for (const ip of clusterIPs) elem('cluster-ips', ip);
  return { table: o.table, chains, sets, elements };
}

function inCIDR(ip: string, cidr: string): boolean {
  const n = (a: string) => a.split('.').reduce((x, o) => x * 256 + Number(o), 0);
  const [base, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(n(ip) / size) === Math.floor(n(base!) / size);
}

/** affinity lookups, then a random pick among the endpoints' chains */
function spread(sp: ProxyServicePort, eps: readonly ProxyEndpoint[]): string[] {
  const rules: string[] = [];
  if (sp.affinitySeconds > 0) for (const ep of eps) rules.push(`ip saddr @${affinitySet(sp, ep)} goto ${endpointChain(sp, ep)}`);
  rules.push(`numgen random mod ${eps.length} vmap { ${eps.map((ep, i) => `${i} : goto ${endpointChain(sp, ep)}`).join(', ')} }`);
  return rules;
}

/** the chain spreading over the cluster's endpoints: the service chain when it is that, else a chain of its own */
function clusterChainFor(sp: ProxyServicePort, cluster: ProxyEndpoint[], internal: ProxyEndpoint[], chain: (name: string, rules: string[]) => unknown): string {
  if (!sp.internalLocal && internal.length) return serviceChain(sp);
  const name = named('cluster', portId(sp));
  chain(name, spread(sp, cluster));
  return name;
}

/**
 * The `nft -f -` text of a ruleset. `previous` (the ruleset the table holds, from this process's
 * last successful sync) makes it an update that keeps the table (and its affinity sets); without
 * it the table is deleted and made anew.
 */
export function renderRuleset(rs: Ruleset, previous?: Ruleset): string {
  const t = `ip ${rs.table}`;
  const out: string[] = [`add table ${t} { comment "rules for kube-proxy"; }`];
  if (previous) out.push(`flush table ${t}`);
  else out.push(`delete table ${t}`, `add table ${t} { comment "rules for kube-proxy"; }`);
  for (const [name, c] of rs.chains) out.push(c.hook ? `add chain ${t} ${name} { ${c.hook} }` : `add chain ${t} ${name}`);
  for (const [name, decl] of rs.sets) out.push(`add ${decl.includes(': verdict') ? 'map' : 'set'} ${t} ${name} { ${decl} }`);
  if (previous) {
    // (elements are kept by a flush of the table's rules: the maps and plain sets are emptied here;
    // the affinity sets keep theirs)
    for (const [name, decl] of rs.sets) if (!decl.includes('flags dynamic')) out.push(`flush ${decl.includes(': verdict') ? 'map' : 'set'} ${t} ${name}`);
    for (const name of previous.chains.keys()) if (!rs.chains.has(name)) out.push(`delete chain ${t} ${name}`);
    for (const [name, decl] of previous.sets) if (!rs.sets.has(name)) out.push(`delete ${decl.includes(': verdict') ? 'map' : 'set'} ${t} ${name}`);
  }
  for (const [name, c] of rs.chains) for (const r of c.rules) out.push(`add rule ${t} ${name} ${r}`);
  for (const [set, elems] of rs.elements) out.push(`add element ${t} ${set} { ${elems.join(', ')} }`);
  return out.join('\n') + '\n';
}

/** the text that removes the table (nothing happens when there is none) */
export function renderCleanup(table: string): string {
  return `add table ip ${table}\ndelete table ip ${table}\n`;
}
