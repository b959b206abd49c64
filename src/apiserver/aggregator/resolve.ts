// Where an APIService's Service is reached (kube-aggregator's resolvers.go and the proxy helpers
// of k8s.io/apiserver, util/proxy). kube-apiserver dials the Service's cluster IP unless
// --enable-aggregator-routing is set, when it dials an endpoint. Keelson has no kube-proxy, so a
// cluster IP leads nowhere: it dials an endpoint in both modes, and the modes differ only where
// kube-apiserver's two resolvers differ on what they accept (ExternalName and headless Services).
// default/kubernetes on port 443 is this server itself (the loopback resolver).

export interface ServiceLookup {
  service(namespace: string, name: string): any | undefined;
  endpoints(namespace: string, name: string): any | undefined;
}

export interface Location {
  /** the host to dial (a DNS name or an IP address) */
  host: string;
  port: number;
  /** host:port as Go's net.JoinHostPort writes it */
  hostPort: string;
}

/** An error of resolution, in the words of kube-apiserver's resolvers. */
export class ResolveError extends Error {}

export function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

function location(host: string, port: number): Location {
  return { host, port, hostPort: joinHostPort(host, port) };
}

export interface ResolveOptions {
  /** --enable-aggregator-routing */
  endpointRouting: boolean;
  /** this server's own address, for default/kubernetes:443 */
  loopback?: { host: string; port: number };
}

/** The address of port `port` of Service `namespace/name`, or a ResolveError. */
export function resolveService(l: ServiceLookup, namespace: string, name: string, port: number, o: ResolveOptions): Location {
  if (namespace === 'default' && name === 'kubernetes' && port === 443 && o.loopback) return location(o.loopback.host, o.loopback.port);
  const svc = l.service(namespace, name);
  if (!svc) throw new ResolveError(`service "${name}" not found`);
  const type: string = svc.spec?.type ?? 'ClusterIP';
  if (type === 'ExternalName') {
    // proxy.ResolveCluster: the external name at the APIService's port (the endpoint resolver refuses it)
    if (o.endpointRouting) throw new ResolveError(`unsupported service type "${type}"`);
    return location(String(svc.spec?.externalName ?? ''), port);
  }
  if (type !== 'ClusterIP' && type !== 'NodePort' && type !== 'LoadBalancer') throw new ResolveError(`unsupported service type "${type}"`);
  if (!o.endpointRouting && svc.spec?.clusterIP === 'None') throw new ResolveError('cannot route to service with ClusterIP "None"');
  const svcPort = (svc.spec?.ports ?? []).find((p: any) => p?.port === port);
  if (!svcPort) throw new ResolveError(`no service port ${port} found for service "${name}"`);
  // proxy.ResolveEndpoint: an address of a subset that has the service port's name
  const eps = l.endpoints(namespace, name);
  if (!eps) throw new ResolveError(`endpoints "${name}" not found`);
  const subsets: any[] = Array.isArray(eps.subsets) ? eps.subsets : [];
  if (subsets.length === 0) throw new ResolveError(`no endpoints available for service "${name}"`);
  const seed = Math.floor(Math.random() * subsets.length);
  for (let i = 0; i < subsets.length; i++) {
    const ss = subsets[(seed + i) % subsets.length];
    const addrs: any[] = ss?.addresses ?? [];
    if (addrs.length === 0) continue;
    const p = (ss.ports ?? []).find((x: any) => (x?.name ?? '') === (svcPort.name ?? ''));
    if (p) return location(String(addrs[Math.floor(Math.random() * addrs.length)].ip), Number(p.port));
  }
  throw new ResolveError(`no endpoints available for service "${name}"`);
}
