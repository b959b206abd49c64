// What the service proxy programs, as pure values: each port of each Service that the proxy
// handles, with the endpoints its EndpointSlices give for it, and the choice of endpoints for the
// traffic of that port, as kube-proxy makes it (pkg/proxy/servicechangetracker.go,
// endpointschangetracker.go and topology.go's CategorizeEndpoints).
//
// Only IPv4 is handled: a Service's IPv4 cluster IP, IPv4 EndpointSlices.
import { isIP } from 'node:net';

/** services with this label belong to another proxy (kube-proxy's LabelServiceProxyName) */
export const LABEL_SERVICE_PROXY_NAME = 'service.kubernetes.io/service-proxy-name';
export const LABEL_HEADLESS = 'service.kubernetes.io/headless';
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

export interface ProxyEndpoint {
  ip: string;
  port: number;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  nodeName: string;
}

/** one port of a Service, with every endpoint its slices name for it */
export interface ProxyServicePort {
  namespace: string;
  name: string;
  portName: string;
  protocol: Protocol;
  clusterIP: string;
  port: number;
  /** 0: none */
  nodePort: number;
  /** spec.sessionAffinity ClientIP's timeout; 0: no affinity */
  affinitySeconds: number;
  /** internalTrafficPolicy: Local */
  internalLocal: boolean;
  /** externalTrafficPolicy: Local (for NodePorts, external IPs and load-balancer IPs) */
  externalLocal: boolean;
  /** spec.externalIPs (IPv4) */
  externalIPs: string[];
  /** status.loadBalancer.ingress[].ip (IPv4) of a LoadBalancer Service, but those of ipMode Proxy */
  loadBalancerIPs: string[];
  /** spec.loadBalancerSourceRanges (IPv4 CIDRs) of a LoadBalancer Service: other sources may not reach its load-balancer IPs */
  sourceRanges: string[];
  endpoints: ProxyEndpoint[];
}

/** kube-proxy's name of a service port: `namespace/name:port` (`namespace/name` for an unnamed one) */
export function servicePortName(sp: Pick<ProxyServicePort, 'namespace' | 'name' | 'portName'>): string {
  return `${sp.namespace}/${sp.name}${sp.portName ? `:${sp.portName}` : ''}`;
}

/** whether the proxy handles this Service at all (kube-proxy's informer selectors and its shouldSkipService) */
export function proxiedService(svc: any): boolean {
  const labels = svc?.metadata?.labels ?? {};
  if (LABEL_SERVICE_PROXY_NAME in labels || LABEL_HEADLESS in labels) return false;
  const ip = svc?.spec?.clusterIP;
  if (!ip || ip === 'None') return false;
  if (svc?.spec?.type === 'ExternalName') return false;
  return true;
}

/** the Service's IPv4 cluster IP, if it has one */
function ipv4ClusterIP(svc: any): string | undefined {
  const ips: string[] = svc.spec?.clusterIPs?.length ? svc.spec.clusterIPs : [svc.spec?.clusterIP];
  return ips.find((ip) => typeof ip === 'string' && isIP(ip) === 4);
}

const PROTOCOLS = new Set(['TCP', 'UDP', 'SCTP']);

/**
 * The ports of the Services, each with the endpoints of the Service's IPv4 slices for it (matched
 * by port name and protocol; an address given twice counted once, its conditions from the first
 * slice that names it). `slicesByService` is keyed `namespace/name`.
 */
export function servicePorts(services: Iterable<any>, slicesByService: Map<string, any[]>): ProxyServicePort[] {
  const out: ProxyServicePort[] = [];
  for (const svc of services) {
    if (!proxiedService(svc)) continue;
    const clusterIP = ipv4ClusterIP(svc);
    if (!clusterIP) continue;
    const ns: string = svc.metadata.namespace ?? '';
    const name: string = svc.metadata.name;
    const slices = (slicesByService.get(`${ns}/${name}`) ?? []).filter((s) => s?.addressType === 'IPv4');
    const spec = svc.spec;
    const affinitySeconds = spec.sessionAffinity === 'ClientIP' ? Number(spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? 10800) : 0;
    const external = spec.type === 'NodePort' || spec.type === 'LoadBalancer';
    const externalIPs = ipv4s(spec.externalIPs);
    const lb = spec.type === 'LoadBalancer';
    // (an ingress of ipMode Proxy is a load balancer that proxies itself: its traffic comes to the node's addresses, not its IP)
    const loadBalancerIPs = lb ? ipv4s(((svc.status?.loadBalancer?.ingress ?? []) as any[]).filter((i) => i?.ipMode !== 'Proxy').map((i) => i?.ip)) : [];
    const sourceRanges = lb && loadBalancerIPs.length ? ipv4CIDRs(spec.loadBalancerSourceRanges) : [];
    for (const p of spec.ports ?? []) {
      const protocol = (p.protocol ?? 'TCP') as Protocol;
      if (!PROTOCOLS.has(protocol)) continue;
      const portName: string = p.name ?? '';
      out.push({
        namespace: ns,
        name,
        portName,
        protocol,
        clusterIP,
        port: Number(p.port),
        nodePort: external && p.nodePort ? Number(p.nodePort) : 0,
        affinitySeconds,
        internalLocal: spec.internalTrafficPolicy === 'Local',
        externalLocal: (external || externalIPs.length > 0) && spec.externalTrafficPolicy === 'Local',
        externalIPs,
        loadBalancerIPs,
        sourceRanges,
        endpoints: endpointsFor(slices, portName, protocol),
      });
    }
  }
  return out;
}

/** the IPv4 addresses among `v`, each once, in order */
function ipv4s(v: unknown): string[] {
  if (!Array.isArray(v)) return [];
  return [...new Set(v.filter((ip): ip is string => typeof ip === 'string' && isIP(ip) === 4))];
}

/** the IPv4 CIDRs among `v` (spaces around them dropped, as kube-proxy does), as networks */
function ipv4CIDRs(v: unknown): string[] {
  if (!Array.isArray(v)) return [];
  const out = new Set<string>();
  for (const x of v) {
    if (typeof x !== 'string') continue;
    const [ip, bits, extra] = x.trim().split('/');
    if (extra !== undefined || isIP(ip ?? '') !== 4 || !/^\d+$/.test(bits ?? '') || Number(bits) > 32) continue;
    // (the network's address: nft refuses a prefix with host bits)
    const n = ip!.split('.').reduce((a, o) => a * 256 + Number(o), 0);
    const size = 2 ** (32 - Number(bits));
    const net = n - (n % size);
    out.add(`${[24, 16, 8, 0].map((s) => Math.floor(net / 2 ** s) % 256).join('.')}/${Number(bits)}`);
  }
  return [...out];
}

function endpointsFor(slices: any[], portName: string, protocol: Protocol): ProxyEndpoint[] {
  const seen = new Set<string>();
  const out: ProxyEndpoint[] = [];
  for (const s of slices) {
    const sp = (s.ports ?? []).find((x: any) => (x?.name ?? '') === portName && (x?.protocol ?? 'TCP') === protocol);
    if (!sp || typeof sp.port !== 'number') continue;
    for (const e of s.endpoints ?? []) {
      const ip = e?.addresses?.[0];
      if (typeof ip !== 'string' || isIP(ip) !== 4) continue;
      const key = `${ip}:${sp.port}`;
      if (seen.has(key)) continue;
      seen.add(key);
      // (unset conditions: ready unless said otherwise; serving as ready; terminating only when said)
      const c = e.conditions ?? {};
      const ready = c.ready !== false;
      out.push({ ip, port: sp.port, ready, serving: c.serving ?? ready, terminating: c.terminating === true, nodeName: e.nodeName ?? '' });
    }
  }
  return out.sort((a, b) => compareIP(a.ip, b.ip) || a.port - b.port);
}

function compareIP(a: string, b: string): number {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < 4; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}

/**
 * The endpoints that take traffic among `eps`: the ready ones; with none ready, the ones still
 * serving while they terminate (kube-proxy's terminating-endpoints fallback).
 */
export function usableEndpoints(eps: readonly ProxyEndpoint[]): ProxyEndpoint[] {
  const ready = eps.filter((e) => e.ready);
  return ready.length ? ready : eps.filter((e) => e.serving && e.terminating);
}

/** the endpoints for traffic from inside the cluster and for external traffic, as CategorizeEndpoints picks them */
export function categorize(sp: ProxyServicePort, nodeName: string): { cluster: ProxyEndpoint[]; local: ProxyEndpoint[]; internal: ProxyEndpoint[]; external: ProxyEndpoint[]; any: boolean } {
  const cluster = usableEndpoints(sp.endpoints);
  const local = usableEndpoints(sp.endpoints.filter((e) => e.nodeName === nodeName));
  const internal = sp.internalLocal ? local : cluster;
  const external = sp.externalLocal ? local : cluster;
  return { cluster, local, internal, external, any: cluster.length > 0 || local.length > 0 };
}
