// The cluster DNS server (what CoreDNS with k3s' Corefile answers): UDP and TCP on one address and
// port, the cluster's records (records.ts) from Services, EndpointSlices and Namespaces (and Pods in
// the verified pods mode) watched through the API with informers, everything else forwarded to the
// host's resolvers (forward.ts).
//
// Each datagram or TCP message is one query. Nothing a client sends ends the process: a packet
// shorter than a header, or one that is a response, is dropped; one that does not decode gets
// FORMERR; an opcode other than QUERY NOTIMP; EDNS versions above 0 BADVERS. UDP answers larger than
// 512 bytes (or the client's EDNS0 payload size, up to 4096) lose their additional records first,
// then are sent truncated (TC) with the question only, so the client asks again over TCP.
import dgram from 'node:dgram';
import http from 'node:http';
import net from 'node:net';
import dnsPacket, { type Answer, type DecodedPacket, type OptAnswer, type Packet } from 'dns-packet';
import { Informer } from '../client/informer.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { nopLogger, type Logger } from '../client/log.js';
import { RESTClient, restConfigFromConnection, type RESTConfig } from '../client/rest.js';
import { ResourceClient, type KubeObject } from '../client/resources.js';
import { Forwarder, parseUpstream, resolvConfNameservers, type Upstream } from './forward.js';
import { DEFAULT_CLUSTER_DOMAIN, DEFAULT_TTL, DNSIndex, normalizeName, type LookupResult, type PodsMode, type Rcode } from './records.js';

export interface ClusterDNSOptions {
  /** address to listen on (default 127.0.0.1) */
  host?: string;
  /** UDP and TCP port (default 53); 0: a free port, the same for both */
  port?: number;
  /** the cluster domain (default cluster.local) */
  clusterDomain?: string;
  /** TTL of the cluster's records in seconds (default 5, CoreDNS's kubernetes plugin's) */
  ttl?: number;
  /** pod records `<a-b-c-d>.<ns>.pod.<zone>`: insecure (default, k3s' Corefile), verified, disabled */
  podsMode?: PodsMode;
  /** resolvers for names outside the cluster (`ip`, `ip:port`, `[ipv6]:port`); default: resolvConf's nameservers */
  upstreams?: string[];
  /** default /etc/resolv.conf */
  resolvConf?: string;
  /** how long one upstream has to answer (default 2000 ms) */
  forwardTimeoutMs?: number;
  /** forwards in flight at once; more are REFUSED (default 1000) */
  maxConcurrentForwards?: number;
  /**
   * the clients whose other names are forwarded (CIDRs); others get REFUSED for them, so that a DNS
   * on a node's address is no open resolver for whoever reaches that address. Default
   * DEFAULT_FORWARD_FROM: loopback, private, shared (CGNAT), link-local and unique-local ranges,
   * where pods' addresses are
   */
  forwardFrom?: string[];
  /** how long the start waits for the first lists (default 5000 ms); until they are in, cluster names get SERVFAIL */
  syncTimeoutMs?: number;
  /**
   * `host:port` of an HTTP listener for /metrics (metricsText), /health and /ready (200 once the
   * caches synced, else 503), as CoreDNS's prometheus (:9153), health and ready plugins; none by default
   */
  metricsAddress?: string;
  /** how the API is reached: a RESTConfig, or serverURL with a CA and client certificate, or a kubeconfig file */
  rest?: RESTConfig;
  serverURL?: string;
  caPEM?: string | Buffer;
  certPEM?: string | Buffer;
  keyPEM?: string | Buffer;
  kubeconfig?: string;
  log?: Logger;
}

export interface ClusterDNS {
  address: string;
  port: number;
  /** the port of the metrics listener (metricsAddress), if any */
  metricsPort?: number;
  /** the upstream resolvers names outside the cluster go to */
  upstreams: Upstream[];
  /** the informers' first lists are in */
  synced(): boolean;
  /** Prometheus text: coredns_dns_requests_total{proto,type}, coredns_dns_responses_total{rcode}, coredns_forward_requests_total */
  metricsText(): string;
  stats(): { requests: Record<string, number>; responses: Record<string, number>; forwards: number };
  stop(): Promise<void>;
}

/** the sources forwarded for by default: where pods and the node's own processes ask from */
export const DEFAULT_FORWARD_FROM = ['127.0.0.0/8', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16', '::1/128', 'fc00::/7', 'fe80::/10'];

/** a BlockList of CIDRs (IPv4-mapped IPv6 clients are checked as IPv4) */
function cidrList(cidrs: readonly string[]): (addr: string) => boolean {
  const list = new net.BlockList();
  for (const c of cidrs) {
    const [ip, bits] = c.split('/') as [string, string | undefined];
    const fam = net.isIP(ip);
    if (!fam || bits === undefined || !/^\d+$/.test(bits)) throw new Error(`forwardFrom: invalid CIDR ${JSON.stringify(c)}`);
    list.addSubnet(ip, Number(bits), fam === 6 ? 'ipv6' : 'ipv4');
  }
  return (addr) => {
    const a = addr.startsWith('::ffff:') && net.isIP(addr.slice(7)) === 4 ? addr.slice(7) : addr;
    const fam = net.isIP(a);
    return fam !== 0 && list.check(a, fam === 6 ? 'ipv6' : 'ipv4');
  };
}

const RCODE: Record<Rcode, number> = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 };
const RCODE_NAME = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED', 'YXDOMAIN', 'YXRRSET', 'NXRRSET', 'NOTAUTH', 'NOTZONE'];
const QR = 0x8000;
const AA = 0x0400;
const TC = 0x0200;
const RD = 0x0100;
const RA = 0x0080;
/** the EDNS payload size this server announces, and the most it sends over UDP */
const MAX_UDP = 4096;
const KNOWN_TYPES = new Set(['A', 'AAAA', 'CNAME', 'PTR', 'SRV', 'TXT', 'SOA', 'NS', 'MX', 'ANY', 'HTTPS', 'SVCB', 'CAA']);
/** TCP: idle connections are closed after this long, and at most this many are open */
const TCP_IDLE_MS = 10_000;
const MAX_TCP_CONNECTIONS = 1000;
const MAX_CHASE = 8;

function restConfigOf(o: ClusterDNSOptions): Promise<RESTConfig> | RESTConfig {
  if (o.rest) return o.rest;
  if (o.serverURL) return { server: o.serverURL, ca: o.caPEM, cert: o.certPEM, key: o.keyPEM };
  if (o.kubeconfig) return loadKubeconfig({ explicitPath: o.kubeconfig }).then((c) => restConfigFromConnection(c));
  throw new Error('startClusterDNS: one of rest, serverURL or kubeconfig is required');
}

class Counters {
  readonly requests = new Map<string, number>();
  readonly responses = new Map<string, number>();
  forwards = 0;

  request(proto: string, type: string): void {
    const k = `${proto}\0${KNOWN_TYPES.has(type) ? type : 'other'}`;
    this.requests.set(k, (this.requests.get(k) ?? 0) + 1);
  }

  response(rcode: string): void {
    this.responses.set(rcode, (this.responses.get(rcode) ?? 0) + 1);
  }

  text(): string {
    const lines = [
      '# HELP coredns_dns_requests_total Counter of DNS requests made per protocol and type.',
      '# TYPE coredns_dns_requests_total counter',
      ...[...this.requests].map(([k, v]) => {
        const [proto, type] = k.split('\0');
        return `coredns_dns_requests_total{proto="${proto}",type="${type}"} ${v}`;
      }),
      '# HELP coredns_dns_responses_total Counter of response status codes.',
      '# TYPE coredns_dns_responses_total counter',
      ...[...this.responses].map(([k, v]) => `coredns_dns_responses_total{rcode="${k}"} ${v}`),
      '# HELP coredns_forward_requests_total Counter of requests forwarded to the upstream resolvers.',
      '# TYPE coredns_forward_requests_total counter',
      `coredns_forward_requests_total ${this.forwards}`,
    ];
    return lines.join('\n') + '\n';
  }
}

/** whether a decoded name encodes back as it came (dns-packet reads labels as UTF-8 text and writes them so) */
function encodableName(name: string): boolean {
  if (typeof name !== 'string' || Buffer.byteLength(name) > 254) return false;
  return name.replace(/^\.|\.$/g, '').split('.').every((l, _i, all) => (l.length > 0 || all.length === 1) && Buffer.byteLength(l) <= 63);
}

/** A bare header answer (FORMERR, NOTIMP) for a query that may not decode: its ID, opcode and RD kept. */
function headerOnly(query: Buffer, rcode: number): Buffer {
  const b = Buffer.alloc(12);
  b.writeUInt16BE(query.readUInt16BE(0), 0);
  const flags = query.readUInt16BE(2);
  b.writeUInt16BE(QR | (flags & 0x7800) | (flags & RD) | RA | rcode, 2);
  return b;
}

export async function startClusterDNS(o: ClusterDNSOptions = {}): Promise<ClusterDNS> {
  const log = o.log ?? nopLogger;
  const host = o.host ?? '127.0.0.1';
  const wantPort = o.port ?? 53;
  // (checked before anything starts)
  const mayForward = cidrList(o.forwardFrom ?? DEFAULT_FORWARD_FROM);
  const zone = normalizeName(o.clusterDomain || DEFAULT_CLUSTER_DOMAIN);
  const indexOpts = { clusterDomain: zone, ttl: o.ttl ?? DEFAULT_TTL, podsMode: o.podsMode ?? 'insecure' };
  const counters = new Counters();

  // ── the API: informers and the index built from them when something changed ──
  const rest = new RESTClient({ ...(await restConfigOf(o)), userAgent: 'keelson-dns', qps: 20, burst: 40 });
  const infOpts = { trimManagedFields: true, log };
  const services = new Informer<KubeObject>(new ResourceClient(rest, { group: '', version: 'v1', resource: 'services' }), infOpts);
  const slices = new Informer<KubeObject>(new ResourceClient(rest, { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' }), infOpts);
  const namespaces = new Informer<KubeObject>(new ResourceClient(rest, { group: '', version: 'v1', resource: 'namespaces' }), { ...infOpts, metadataOnly: true });
  const pods = indexOpts.podsMode === 'verified' ? new Informer<KubeObject>(new ResourceClient(rest, { group: '', version: 'v1', resource: 'pods' }), infOpts) : undefined;
  const informers = [services, slices, namespaces, ...(pods ? [pods] : [])];
  let index: DNSIndex | undefined;
  let dirty = true;
  const changed = { add: () => (dirty = true), update: () => (dirty = true), delete: () => (dirty = true) };
  for (const inf of informers) {
    inf.addEventHandler(changed);
    inf.run();
  }
  const synced = () => informers.every((i) => i.hasSynced());
  const currentIndex = (): DNSIndex => {
    if (dirty || !index) {
      dirty = false;
      index = new DNSIndex({ services: services.list(), endpointSlices: slices.list(), namespaces: namespaces.list(), pods: pods?.list() }, indexOpts);
    }
    return index;
  };
  const syncTimeoutMs = o.syncTimeoutMs ?? 5000;
  const ok = await Promise.all(informers.map((i) => i.waitForSync({ timeoutMs: syncTimeoutMs })));
  if (!ok.every(Boolean)) log.warn('The cluster DNS starts before its caches synced: cluster names get SERVFAIL until they do', { timeoutMs: syncTimeoutMs });

  const stopInformers = () => Promise.all(informers.map((i) => i.stop())).then(() => rest.close());

  // ── listeners ──
  let udp: dgram.Socket;
  let tcp: net.Server;
  let port: number;
  try {
    ({ udp, tcp, port } = await listenBoth(host, wantPort));
  } catch (e) {
    await stopInformers();
    throw e;
  }
  const upstreamList = (o.upstreams ? o.upstreams.map(parseUpstream) : resolvConfNameservers(o.resolvConf)).filter((u) => !(u.port === port && (u.host === host || (host === '0.0.0.0' && net.isIP(u.host) === 4) || (host === '::' && net.isIP(u.host) === 6))));
  const forwarder = new Forwarder(upstreamList, o.forwardTimeoutMs ?? 2000, o.maxConcurrentForwards ?? 1000);

  // ── answering ──
  async function forwardQuestion(name: string, type: string): Promise<DecodedPacket | undefined> {
    if (!forwarder.available()) return undefined;
    counters.forwards++;
    const q = dnsPacket.encode({ type: 'query', id: 0, flags: RD, questions: [{ name, type: type as any, class: 'IN' }] });
    const r = await forwarder.exchange(q, false);
    if (!r) return undefined;
    try {
      return dnsPacket.decode(r);
    } catch {
      return undefined;
    }
  }

  /** an ExternalName's target, followed in the zone or by the upstreams; the records found are appended */
  async function chase(res: LookupResult, qtype: string, forward: boolean): Promise<void> {
    let target = res.chase;
    for (let depth = 0; target && depth < MAX_CHASE; depth++) {
      const idx = currentIndex();
      const l = idx.inZone(target) ? idx.lookup(target, qtype) : { forward: true as const };
      if ('forward' in l) {
        if (!forward) return;
        const up = await forwardQuestion(target, qtype);
        if (up) res.answers.push(...((up.answers ?? []) as Answer[]).filter((a) => a.type !== 'OPT'));
        return;
      }
      res.answers.push(...l.answers);
      target = l.chase;
    }
  }

  function respond(q: DecodedPacket, rcode: number, body: Partial<Packet>, opt: OptAnswer | undefined, authoritative: boolean): Packet {
    const additionals = [...(body.additionals ?? [])];
    if (opt) additionals.push({ type: 'OPT', name: '.', udpPayloadSize: MAX_UDP, extendedRcode: rcode >> 4, ednsVersion: 0, flags: 0, flag_do: false, options: [] } as OptAnswer);
    return {
      type: 'response',
      id: q.id,
      flags: (authoritative ? AA : 0) | ((q.flags ?? 0) & RD) | RA | (rcode & 0xf),
      questions: q.questions,
      answers: body.answers ?? [],
      authorities: body.authorities ?? [],
      additionals,
    };
  }

  /** the encoded answer, cut to the client's UDP size: additional records dropped first, then truncated */
  function encodeFor(p: Packet, maxSize: number | undefined): Buffer {
    let b = dnsPacket.encode(p);
    if (maxSize === undefined || b.length <= maxSize) return b;
    const opt = (p.additionals ?? []).filter((a) => a.type === 'OPT');
    b = dnsPacket.encode({ ...p, additionals: opt });
    if (b.length <= maxSize) return b;
    return dnsPacket.encode({ ...p, flags: (p.flags ?? 0) | TC, answers: [], authorities: [], additionals: opt });
  }

  async function answer(raw: Buffer, proto: 'udp' | 'tcp', client: string): Promise<Buffer | undefined> {
    if (raw.length < 12 || (raw.readUInt16BE(2) & QR) !== 0) return undefined; // (not a query: no answer)
    let q: DecodedPacket;
    try {
      q = dnsPacket.decode(raw);
    } catch {
      counters.request(proto, 'other');
      counters.response('FORMERR');
      return headerOnly(raw, RCODE.FORMERR);
    }
    const question = q.questions?.[0];
    counters.request(proto, question ? String(question.type) : 'other');
    const opts = (q.additionals ?? []).filter((a): a is OptAnswer => a.type === 'OPT');
    const opt = opts[0];
    const maxSize = proto === 'tcp' ? undefined : opt ? Math.min(Math.max(512, opt.udpPayloadSize || 512), MAX_UDP) : 512;
    const finish = (rcode: number, body: Partial<Packet> = {}, authoritative = false): Buffer => {
      counters.response(rcode === 16 ? 'BADVERS' : (RCODE_NAME[rcode] ?? String(rcode)));
      return encodeFor(respond(q, rcode, body, opt, authoritative), maxSize);
    };
    if (((raw.readUInt16BE(2) >> 11) & 0xf) !== 0) {
      counters.response('NOTIMP');
      return headerOnly(raw, RCODE.NOTIMP);
    }
    if (q.questions?.length !== 1 || opts.length > 1 || !encodableName(q.questions[0]!.name)) return finish(RCODE.FORMERR);
    if (opt && opt.ednsVersion > 0) return finish(16); // BADVERS (RFC 6891): extended rcode 1, header rcode 0
    const qname = question!.name;
    const qtype = String(question!.type);
    const idx = currentIndex();
    const cls = question!.class ?? 'IN';
    const mine = idx.inZone(qname) || /\.(in-addr|ip6)\.arpa\.?$/i.test(qname);
    // (other classes than IN: the upstreams' outside the zone, not implemented inside)
    const l = cls === 'IN' || cls === 'ANY' ? idx.lookup(qname, qtype) : mine ? undefined : { forward: true as const };
    if (!l) return finish(RCODE.NOTIMP);
    // (no zone transfers, as CoreDNS without its transfer plugin)
    if (!('forward' in l) && (qtype === 'AXFR' || qtype === 'IXFR')) return finish(RCODE.REFUSED);
    // (before the first lists, no false NXDOMAIN; reverse names the cluster does not know yet still go upstream)
    if (!('forward' in l) && !synced()) return finish(RCODE.SERVFAIL);
    if ('forward' in l) {
      if (!mayForward(client) || !forwarder.available()) return finish(RCODE.REFUSED);
      counters.forwards++;
      const r = await forwarder.exchange(raw, proto === 'tcp');
      if (!r) return finish(RCODE.SERVFAIL);
      counters.response(RCODE_NAME[r.readUInt16BE(2) & 0xf] ?? String(r.readUInt16BE(2) & 0xf));
      if (maxSize !== undefined && r.length > maxSize) {
        // (an upstream that ignored the client's size: tell the client to come over TCP)
        return encodeFor(respond(q, r.readUInt16BE(2) & 0xf, {}, opt, false), 0);
      }
      return r;
    }
    if (l.chase) await chase(l, qtype, mayForward(client));
    return finish(RCODE[l.rcode], l, true);
  }

  async function safeAnswer(raw: Buffer, proto: 'udp' | 'tcp', client: string): Promise<Buffer | undefined> {
    try {
      return await answer(raw, proto, client);
    } catch (e) {
      log.error(e, 'Answering a DNS query failed');
      counters.response('SERVFAIL');
      return raw.length >= 12 ? headerOnly(raw, RCODE.SERVFAIL) : undefined;
    }
  }

  udp.on('message', (msg, rinfo) => {
    void safeAnswer(msg, 'udp', rinfo.address).then((r) => {
      if (r) udp.send(r, rinfo.port, rinfo.address, () => {});
    });
  });
  udp.on('error', (e) => log.error(e, 'The cluster DNS UDP socket failed'));

  const conns = new Set<net.Socket>();
  tcp.maxConnections = MAX_TCP_CONNECTIONS;
  tcp.on('connection', (sock) => {
    conns.add(sock);
    sock.setTimeout(TCP_IDLE_MS, () => sock.destroy());
    sock.on('error', () => {});
    sock.on('close', () => conns.delete(sock));
    let buf = Buffer.alloc(0);
    sock.on('data', (d) => {
      buf = buf.length ? Buffer.concat([buf, d]) : d;
      while (buf.length >= 2) {
        const n = buf.readUInt16BE(0);
        if (buf.length < 2 + n) break;
        const msg = Buffer.from(buf.subarray(2, 2 + n));
        buf = buf.subarray(2 + n);
        void safeAnswer(msg, 'tcp', sock.remoteAddress ?? '').then((r) => {
          if (!r) return;
          if (sock.destroyed) return;
          const len = Buffer.alloc(2);
          len.writeUInt16BE(r.length);
          sock.write(Buffer.concat([len, r]));
        });
      }
    });
  });
  tcp.on('error', (e) => log.error(e, 'The cluster DNS TCP listener failed'));

  let metricsServer: http.Server | undefined;
  if (o.metricsAddress) {
    const m = /^(.*):(\d+)$/.exec(o.metricsAddress);
    if (!m) throw new Error(`startClusterDNS: invalid metricsAddress ${JSON.stringify(o.metricsAddress)}: want host:port`);
    const server = http.createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0];
      const send = (code: number, body: string, type = 'text/plain; charset=utf-8') => res.writeHead(code, { 'content-type': type }).end(body);
      if (req.method !== 'GET' && req.method !== 'HEAD') send(405, 'method not allowed\n');
      else if (path === '/metrics') send(200, counters.text(), 'text/plain; version=0.0.4; charset=utf-8');
      else if (path === '/health') send(200, 'OK');
      else if (path === '/ready') send(synced() ? 200 : 503, synced() ? 'OK' : 'not synced');
      else send(404, '404 page not found\n');
    });
    metricsServer = server;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(Number(m[2]), m[1]!.replace(/^\[|\]$/g, '') || undefined, () => resolve());
      });
    } catch (e) {
      udp.close();
      tcp.close();
      await stopInformers();
      throw e;
    }
  }
  const metricsPort = metricsServer ? (metricsServer.address() as net.AddressInfo).port : undefined;

  log.info('Started the cluster DNS', { address: host, port, zone, upstreams: upstreamList.map((u) => `${u.host}:${u.port}`).join(',') });
  let stopping: Promise<void> | undefined;
  return {
    address: host,
    port,
    metricsPort,
    upstreams: upstreamList,
    synced,
    metricsText: () => counters.text(),
    stats: () => ({ requests: Object.fromEntries([...counters.requests].map(([k, v]) => [k.replace('\0', '/'), v])), responses: Object.fromEntries(counters.responses), forwards: counters.forwards }),
    stop() {
      stopping ??= (async () => {
        for (const s of conns) s.destroy();
        await Promise.all([
          new Promise<void>((r) => udp.close(() => r())),
          new Promise<void>((r) => tcp.close(() => r())),
          metricsServer && new Promise<void>((r) => (metricsServer!.closeAllConnections(), metricsServer!.close(() => r()))),
        ]);
        await stopInformers();
      })();
      return stopping;
    },
  };
}

/** binds UDP and TCP on the same port (with port 0: a free one, tried again if TCP finds it taken) */
async function listenBoth(host: string, port: number): Promise<{ udp: dgram.Socket; tcp: net.Server; port: number }> {
  const family = net.isIP(host) === 6 ? 'udp6' : 'udp4';
  for (let attempt = 0; ; attempt++) {
    const udp = dgram.createSocket({ type: family });
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(port, host, () => {
        udp.off('error', reject);
        resolve();
      });
    });
    const got = udp.address().port;
    const tcp = net.createServer();
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(got, host, () => {
          tcp.off('error', reject);
          resolve();
        });
      });
      return { udp, tcp, port: got };
    } catch (e) {
      udp.close();
      if (port !== 0 || attempt >= 10 || (e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
    }
  }
}
