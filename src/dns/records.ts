// The records of the cluster DNS (the Kubernetes DNS-based service discovery specification, schema
// 1.1.0, as CoreDNS's kubernetes plugin serves it with k3s' Corefile: `pods insecure`,
// `fallthrough in-addr.arpa ip6.arpa`, the default TTL of 5 s):
//   <svc>.<ns>.svc.<zone>                      A/AAAA: the ClusterIPs; headless: the ready endpoints' addresses;
//                                              ExternalName: a CNAME to spec.externalName
//   <hostname>.<svc>.<ns>.svc.<zone>           A/AAAA of a headless Service's ready endpoint (its hostname,
//                                              else its address with dashes)
//   _<port>._<proto>.<svc>.<ns>.svc.<zone>     SRV per named port (headless: per ready endpoint)
//   <svc>.<ns>.svc.<zone> SRV                  every port (as CoreDNS answers)
//   <a-b-c-d>.<ns>.pod.<zone>                  A (AAAA for `fd00--1`): the address in the name, when the
//                                              namespace exists (insecure), or a pod has it (verified)
//   reverse names of ClusterIPs and endpoint addresses: PTR; other reverse names go to the upstreams
//   dns-version.<zone> TXT "1.1.0"; <zone> SOA and NS (ns.dns.<zone>, whose A is kube-dns' ClusterIP)
// Names in the zone that do not exist are NXDOMAIN, names without records of the asked type NODATA,
// both with the zone's SOA in the authority section. Everything here is pure: the index is built from
// objects handed in, and lookups return records in dns-packet's shapes.
import { isIP } from 'node:net';
import type { Answer } from 'dns-packet';

export const SCHEMA_VERSION = '1.1.0';
export const DEFAULT_TTL = 5;
export const DEFAULT_CLUSTER_DOMAIN = 'cluster.local';
/** the label EndpointSlices name their Service with */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export type PodsMode = 'insecure' | 'verified' | 'disabled';

export type Rcode = 'NOERROR' | 'FORMERR' | 'SERVFAIL' | 'NXDOMAIN' | 'NOTIMP' | 'REFUSED';

export interface LookupResult {
  rcode: Rcode;
  answers: Answer[];
  authorities: Answer[];
  additionals: Answer[];
  /** an ExternalName's CNAME target the answer should be followed to (not for CNAME questions) */
  chase?: string;
}

/** what to do with a question: answer it from the cluster, or ask the upstream resolvers */
export type Lookup = LookupResult | { forward: true };

interface Port {
  name: string;
  port: number;
  /** lower case: tcp, udp, sctp */
  proto: string;
}

interface Endpoint {
  /** the endpoint's hostname, else its first address with dashes */
  hostname: string;
  addresses: string[];
  ports: Port[];
}

interface ServiceEntry {
  namespace: string;
  name: string;
  kind: 'ClusterIP' | 'Headless' | 'ExternalName';
  clusterIPs: string[];
  externalName: string;
  ports: Port[];
  /** ready endpoints of its EndpointSlices */
  endpoints: Endpoint[];
}

/** lower case, no trailing dot */
export function normalizeName(name: string): string {
  let n = name.toLowerCase();
  while (n.endsWith('.')) n = n.slice(0, -1);
  return n;
}

/** an IPv6 address as its 32 hexadecimal digits, or undefined */
function ipv6Nibbles(ip: string): string | undefined {
  const pct = ip.indexOf('%');
  let s = pct >= 0 ? ip.slice(0, pct) : ip;
  if (isIP(s) !== 6) return undefined;
  // an embedded IPv4 tail (::ffff:1.2.3.4) as two groups
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (v4) {
    const b = v4.slice(1).map(Number) as number[];
    s = s.slice(0, v4.index) + ((b[0]! << 8) | b[1]!).toString(16) + ':' + ((b[2]! << 8) | b[3]!).toString(16);
  }
  const [head, tail] = s.includes('::') ? s.split('::') as [string, string] : [s, undefined];
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array(8 - h.length - t.length).fill('0');
  const groups = [...h, ...fill, ...t];
  if (groups.length !== 8) return undefined;
  return groups.map((g) => g.padStart(4, '0')).join('').toLowerCase();
}

/** the canonical text of an address (IPv6 expanded), the key of the reverse index */
export function canonicalIP(ip: string): string | undefined {
  const fam = isIP(ip);
  if (fam === 4) return ip.split('.').map((o) => String(Number(o))).join('.');
  const n = ipv6Nibbles(ip);
  return n ? n.match(/.{4}/g)!.join(':') : undefined;
}

/** the reverse name of an address (without the trailing dot) */
export function reverseName(ip: string): string {
  if (isIP(ip) === 4) return `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
  const n = ipv6Nibbles(ip);
  if (!n) throw new Error(`not an IP address: ${ip}`);
  return `${[...n].reverse().join('.')}.ip6.arpa`;
}

/** the address a reverse name (normalized) stands for, canonical; undefined if it is not a whole address */
export function addressOfReverseName(name: string): string | undefined {
  if (name.endsWith('.in-addr.arpa')) {
    const parts = name.slice(0, -'.in-addr.arpa'.length).split('.');
    if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return undefined;
    return parts.reverse().map((p) => String(Number(p))).join('.');
  }
  if (name.endsWith('.ip6.arpa')) {
    const parts = name.slice(0, -'.ip6.arpa'.length).split('.');
    if (parts.length !== 32 || !parts.every((p) => /^[0-9a-f]$/.test(p))) return undefined;
    return parts.reverse().join('').match(/.{4}/g)!.join(':');
  }
  return undefined;
}

/** an address as a DNS label: dots (IPv4) or colons (IPv6) as dashes, as CoreDNS names endpoints without a hostname */
export function dashedIP(ip: string): string {
  return isIP(ip) === 4 ? ip.replace(/\./g, '-') : ip.replace(/:/g, '-');
}

/** the address of a pod record's first label (`10-1-2-3`, `fd00--1`), or undefined */
export function podLabelIP(label: string): string | undefined {
  const dashes = label.split('-').length - 1;
  const ip = dashes === 3 && !label.includes('--') ? label.replace(/-/g, '.') : label.replace(/-/g, ':');
  return isIP(ip) ? ip : undefined;
}

function familyType(ip: string): 'A' | 'AAAA' {
  return isIP(ip) === 6 ? 'AAAA' : 'A';
}

function portsOf(list: any[] | undefined): Port[] {
  const out: Port[] = [];
  for (const p of list ?? []) {
    const port = Number(p?.port);
    if (!Number.isInteger(port) || port <= 0 || port > 65535) continue;
    out.push({ name: typeof p.name === 'string' ? p.name.toLowerCase() : '', port, proto: String(p.protocol || 'TCP').toLowerCase() });
  }
  return out;
}

export interface IndexInput {
  services: any[];
  endpointSlices: any[];
  namespaces: any[];
  /** only read in the verified pods mode */
  pods?: any[];
}

export interface IndexOptions {
  clusterDomain?: string;
  ttl?: number;
  podsMode?: PodsMode;
}

/** The cluster's DNS records at one moment, built from Services, EndpointSlices, Namespaces (and Pods). */
export class DNSIndex {
  readonly zone: string;
  readonly ttl: number;
  readonly podsMode: PodsMode;
  /** the SOA serial: seconds since the epoch when the index was built */
  readonly serial: number;
  private readonly namespaces = new Set<string>();
  private readonly services = new Map<string, ServiceEntry>();
  /** canonical address -> names (no trailing dot) */
  private readonly ptr = new Map<string, string[]>();
  /** `<ns>/<canonical address>` of pods (verified mode) */
  private readonly podIPs = new Set<string>();

  constructor(input: IndexInput, opts: IndexOptions = {}) {
    this.zone = normalizeName(opts.clusterDomain || DEFAULT_CLUSTER_DOMAIN);
    this.ttl = opts.ttl ?? DEFAULT_TTL;
    this.podsMode = opts.podsMode ?? 'insecure';
    this.serial = Math.floor(Date.now() / 1000);
    for (const n of input.namespaces) if (n?.metadata?.name) this.namespaces.add(String(n.metadata.name).toLowerCase());
    const slicesBy = new Map<string, any[]>();
    for (const s of input.endpointSlices) {
      const svc = s?.metadata?.labels?.[SERVICE_NAME_LABEL];
      if (!svc || !s.metadata.namespace) continue;
      const k = `${s.metadata.namespace}/${svc}`.toLowerCase();
      let l = slicesBy.get(k);
      if (!l) slicesBy.set(k, (l = []));
      l.push(s);
    }
    for (const svc of input.services) {
      const e = this.serviceEntry(svc, slicesBy.get(`${svc?.metadata?.namespace}/${svc?.metadata?.name}`.toLowerCase()) ?? []);
      if (e) this.services.set(`${e.namespace}/${e.name}`, e);
    }
    // reverse records: ClusterIPs first, then endpoint addresses
    for (const e of this.services.values()) {
      const fqdn = `${e.name}.${e.namespace}.svc.${this.zone}`;
      for (const ip of e.clusterIPs) this.addPTR(ip, fqdn);
    }
    for (const e of this.services.values()) {
      const fqdn = `${e.name}.${e.namespace}.svc.${this.zone}`;
      for (const ep of e.endpoints) for (const ip of ep.addresses) this.addPTR(ip, `${ep.hostname}.${fqdn}`);
    }
    if (this.podsMode === 'verified') {
      for (const p of input.pods ?? []) {
        const ns = p?.metadata?.namespace;
        const ips = [p?.status?.podIP, ...((p?.status?.podIPs ?? []) as any[]).map((x) => x?.ip)];
        for (const ip of ips) {
          const c = typeof ip === 'string' ? canonicalIP(ip) : undefined;
          if (ns && c) this.podIPs.add(`${String(ns).toLowerCase()}/${c}`);
        }
      }
    }
  }

  private addPTR(ip: string, name: string): void {
    const c = canonicalIP(ip);
    if (!c) return;
    let l = this.ptr.get(c);
    if (!l) this.ptr.set(c, (l = []));
    if (!l.includes(name)) l.push(name);
  }

  private serviceEntry(svc: any, slices: any[]): ServiceEntry | undefined {
    const ns = svc?.metadata?.namespace;
    const name = svc?.metadata?.name;
    if (typeof ns !== 'string' || typeof name !== 'string') return undefined;
    const spec = svc.spec ?? {};
    const ports = portsOf(spec.ports);
    const base = { namespace: ns.toLowerCase(), name: name.toLowerCase(), ports, clusterIPs: [] as string[], externalName: '', endpoints: [] as Endpoint[] };
    if (spec.type === 'ExternalName') return { ...base, kind: 'ExternalName', externalName: normalizeName(String(spec.externalName ?? '')) };
    const ips: string[] = (Array.isArray(spec.clusterIPs) && spec.clusterIPs.length ? spec.clusterIPs : [spec.clusterIP]).filter((ip: unknown) => typeof ip === 'string' && isIP(ip));
    if (ips.length) return { ...base, kind: 'ClusterIP', clusterIPs: ips };
    if (spec.clusterIP !== 'None') return undefined; // (no address yet: no records)
    const endpoints: Endpoint[] = [];
    for (const s of slices) {
      if (s.addressType !== 'IPv4' && s.addressType !== 'IPv6') continue;
      const slicePorts = portsOf(s.ports);
      for (const ep of s.endpoints ?? []) {
        if (ep?.conditions?.ready === false) continue;
        const addresses = ((ep.addresses ?? []) as unknown[]).filter((a): a is string => typeof a === 'string' && isIP(a) !== 0);
        if (!addresses.length) continue;
        const hostname = typeof ep.hostname === 'string' && ep.hostname ? ep.hostname.toLowerCase() : dashedIP(addresses[0]!);
        endpoints.push({ hostname, addresses, ports: slicePorts });
      }
    }
    return { ...base, kind: 'Headless', endpoints };
  }

  // ── lookups ───────────────────────────────────────────────────────────────

  private rr(name: string, type: string, data: unknown): Answer {
    return { name, type, class: 'IN', ttl: this.ttl, data } as Answer;
  }

  soa(): Answer {
    return this.rr(this.zone, 'SOA', { mname: `ns.dns.${this.zone}`, rname: `hostmaster.${this.zone}`, serial: this.serial, refresh: 7200, retry: 1800, expire: 86400, minimum: this.ttl });
  }

  private result(rcode: Rcode, answers: Answer[] = [], additionals: Answer[] = []): LookupResult {
    const authorities = rcode === 'NXDOMAIN' || (rcode === 'NOERROR' && answers.length === 0) ? [this.soa()] : [];
    return { rcode, answers, authorities, additionals };
  }

  private nxdomain(): LookupResult {
    return this.result('NXDOMAIN');
  }

  private addressAnswers(qname: string, qtype: string, ips: string[]): Answer[] {
    const seen = new Set<string>();
    const out: Answer[] = [];
    for (const ip of ips) {
      const t = familyType(ip);
      if ((qtype === t || qtype === 'ANY') && !seen.has(ip)) {
        seen.add(ip);
        out.push(this.rr(qname, t, ip));
      }
    }
    return out;
  }

  /** whether the name is in the cluster's zone (or a reverse zone) */
  inZone(name: string): boolean {
    const n = normalizeName(name);
    return n === this.zone || n.endsWith(`.${this.zone}`);
  }

  /** The answer to a question of class IN; `qname` is kept as asked in the records' owner names. */
  lookup(qname: string, qtype: string): Lookup {
    const name = normalizeName(qname);
    if (name.endsWith('.in-addr.arpa') || name.endsWith('.ip6.arpa')) {
      const ip = addressOfReverseName(name);
      const names = ip ? this.ptr.get(ip) : undefined;
      // (fallthrough in-addr.arpa ip6.arpa: addresses the cluster does not know are the upstreams')
      if (!names) return { forward: true };
      return this.result('NOERROR', qtype === 'PTR' || qtype === 'ANY' ? names.map((n) => this.rr(qname, 'PTR', n)) : []);
    }
    if (name !== this.zone && !name.endsWith(`.${this.zone}`)) return { forward: true };
    const labels = name === this.zone ? [] : name.slice(0, -(this.zone.length + 1)).split('.');
    const n = labels.length;
    if (n === 0) {
      if (qtype === 'SOA') return this.result('NOERROR', [{ ...this.soa(), name: qname }]);
      if (qtype === 'NS' || qtype === 'ANY') {
        const ns = `ns.dns.${this.zone}`;
        const answers = [this.rr(qname, 'NS', ns), ...(qtype === 'ANY' ? [{ ...this.soa(), name: qname }] : [])];
        return this.result('NOERROR', answers, this.nameserverAddresses(ns, 'ANY'));
      }
      return this.result('NOERROR');
    }
    const top = labels[n - 1];
    if (n === 1 && top === 'dns-version') return this.result('NOERROR', qtype === 'TXT' || qtype === 'ANY' ? [this.rr(qname, 'TXT', SCHEMA_VERSION)] : []);
    if (top === 'dns' && n <= 2) {
      if (n === 1) return this.result('NOERROR'); // (an empty non-terminal)
      if (labels[0] !== 'ns') return this.nxdomain();
      return this.result('NOERROR', this.nameserverAddresses(qname, qtype));
    }
    if (top === 'svc') return this.lookupService(qname, qtype, labels.slice(0, -1));
    if (top === 'pod') return this.lookupPod(qname, qtype, labels.slice(0, -1));
    return this.nxdomain();
  }

  /** ns.dns.<zone>: kube-system/kube-dns' ClusterIPs */
  private nameserverAddresses(owner: string, qtype: string): Answer[] {
    const e = this.services.get('kube-system/kube-dns');
    return e ? this.addressAnswers(owner, qtype, e.clusterIPs) : [];
  }

  private lookupPod(qname: string, qtype: string, labels: string[]): LookupResult {
    if (this.podsMode === 'disabled') return this.nxdomain();
    if (labels.length === 0) return this.result('NOERROR');
    const ns = labels[labels.length - 1]!;
    if (!this.namespaces.has(ns)) return this.nxdomain();
    if (labels.length === 1) return this.result('NOERROR');
    if (labels.length !== 2) return this.nxdomain();
    const ip = podLabelIP(labels[0]!);
    if (!ip) return this.nxdomain();
    if (this.podsMode === 'verified' && !this.podIPs.has(`${ns}/${canonicalIP(ip)}`)) return this.nxdomain();
    return this.result('NOERROR', this.addressAnswers(qname, qtype, [ip]));
  }

  private lookupService(qname: string, qtype: string, labels: string[]): LookupResult {
    const n = labels.length;
    if (n === 0) return this.result('NOERROR'); // svc.<zone>
    const ns = labels[n - 1]!;
    if (n === 1) return this.namespaces.has(ns) || this.hasNamespaceServices(ns) ? this.result('NOERROR') : this.nxdomain();
    const svc = this.services.get(`${ns}/${labels[n - 2]}`);
    if (!svc) return this.nxdomain();
    const fqdn = `${svc.name}.${svc.namespace}.svc.${this.zone}`;
    if (n === 2) return this.serviceRecords(qname, qtype, svc, fqdn);
    if (n === 3) {
      const first = labels[0]!;
      if (first.startsWith('_')) {
        // _<proto>.<svc>: an empty non-terminal when a port has that protocol (SRV owners sit below it)
        const proto = first.slice(1);
        return svc.kind !== 'ExternalName' && this.servicePorts(svc).some((p) => p.proto === proto && p.name) ? this.result('NOERROR') : this.nxdomain();
      }
      if (svc.kind !== 'Headless') return this.nxdomain();
      const eps = svc.endpoints.filter((e) => e.hostname === first);
      if (!eps.length) return this.nxdomain();
      return this.result('NOERROR', this.addressAnswers(qname, qtype, eps.flatMap((e) => e.addresses)));
    }
    if (n === 4) {
      const [portLabel, protoLabel] = labels as [string, string];
      if (!portLabel.startsWith('_') || !protoLabel.startsWith('_') || svc.kind === 'ExternalName') return this.nxdomain();
      const port = portLabel.slice(1);
      const proto = protoLabel.slice(1);
      if (!this.servicePorts(svc).some((p) => p.name === port && p.proto === proto)) return this.nxdomain();
      if (qtype !== 'SRV' && qtype !== 'ANY') return this.result('NOERROR');
      const { answers, additionals } = this.srvRecords(qname, svc, fqdn, (p) => p.name === port && p.proto === proto);
      return this.result('NOERROR', answers, additionals);
    }
    return this.nxdomain();
  }

  private hasNamespaceServices(ns: string): boolean {
    for (const e of this.services.values()) if (e.namespace === ns) return true;
    return false;
  }

  /** the ports a Service's SRV names exist for: its own, and (headless) its endpoints' */
  private servicePorts(svc: ServiceEntry): Port[] {
    return svc.kind === 'Headless' ? [...svc.ports, ...svc.endpoints.flatMap((e) => e.ports)] : svc.ports;
  }

  private srvRecords(qname: string, svc: ServiceEntry, fqdn: string, match: (p: Port) => boolean): { answers: Answer[]; additionals: Answer[] } {
    const answers: Answer[] = [];
    const additionals: Answer[] = [];
    if (svc.kind === 'ClusterIP') {
      for (const p of svc.ports.filter(match)) answers.push(this.rr(qname, 'SRV', { priority: 0, weight: 100, port: p.port, target: fqdn }));
      if (answers.length) additionals.push(...this.addressAnswers(fqdn, 'ANY', svc.clusterIPs));
    } else if (svc.kind === 'Headless') {
      const targets: { port: number; target: string }[] = [];
      const seenHost = new Set<string>();
      for (const ep of svc.endpoints) {
        const target = `${ep.hostname}.${fqdn}`;
        const ports = ep.ports.filter(match);
        for (const p of ports) if (!targets.some((t) => t.port === p.port && t.target === target)) targets.push({ port: p.port, target });
        if (ports.length && !seenHost.has(target)) {
          seenHost.add(target);
          additionals.push(...this.addressAnswers(target, 'ANY', ep.addresses));
        }
      }
      const weight = targets.length ? Math.max(1, Math.floor(100 / targets.length)) : 100;
      for (const t of targets) answers.push(this.rr(qname, 'SRV', { priority: 0, weight, port: t.port, target: t.target }));
    }
    return { answers, additionals };
  }

  private serviceRecords(qname: string, qtype: string, svc: ServiceEntry, fqdn: string): LookupResult {
    if (svc.kind === 'ExternalName') {
      if (!svc.externalName) return this.result('NOERROR');
      const r = this.result('NOERROR', [this.rr(qname, 'CNAME', svc.externalName)]);
      if (qtype !== 'CNAME' && qtype !== 'ANY') r.chase = svc.externalName;
      return r;
    }
    if (qtype === 'SRV') {
      const { answers, additionals } = this.srvRecords(qname, svc, fqdn, () => true);
      return this.result('NOERROR', answers, additionals);
    }
    const ips = svc.kind === 'ClusterIP' ? svc.clusterIPs : svc.endpoints.flatMap((e) => e.addresses);
    return this.result('NOERROR', this.addressAnswers(qname, qtype, ips));
  }
}
