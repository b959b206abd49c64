// The cluster DNS as `keelson server` runs it (k3s' packaged CoreDNS, on the host): the
// system:coredns ClusterRole for its user, the DNS on the node's address, and kube-system/kube-dns
// pointing there. The Service is kept again every minute (a deleted or changed one comes back).
import type { Logger } from '../client/log.js';
import { nopLogger } from '../client/log.js';
import type { RESTClient, RESTConfig } from '../client/rest.js';
import { DEFAULT_CLUSTER_DOMAIN } from './records.js';
import { startClusterDNS, type ClusterDNS } from './server.js';
import { ensureDNSRBAC, ensureDNSService, nthAddress } from './service.js';

export interface EmbeddedDNSOptions {
  /** the DNS's own connection to the API: a client certificate for CLUSTER_DNS_USER (system:coredns) */
  rest: RESTConfig;
  /** a client allowed to write the Service, its EndpointSlice and RBAC (the server's loopback admin) */
  admin: RESTClient;
  /** the kube-dns ClusterIP (k3s' --cluster-dns); default: the 10th address of serviceCIDR */
  clusterDNS?: string;
  /** --service-cluster-ip-range's first CIDR */
  serviceCIDR?: string;
  /** the node's address: the EndpointSlice's, and where the DNS listens unless listenHost says otherwise */
  nodeIP: string;
  nodeName?: string;
  /** default nodeIP */
  listenHost?: string;
  /** default 53 */
  port?: number;
  clusterDomain?: string;
  upstreams?: string[];
  /** the clients forwarded for (default DEFAULT_FORWARD_FROM) */
  forwardFrom?: string[];
  resolvConf?: string;
  metricsAddress?: string;
  /** how often the Service and EndpointSlice are made right again (default 60 s; 0: only at start) */
  resyncMs?: number;
  log?: Logger;
}

export interface EmbeddedDNS extends ClusterDNS {
  clusterIP: string;
  clusterDomain: string;
}

export async function startEmbeddedDNS(o: EmbeddedDNSOptions): Promise<EmbeddedDNS> {
  const log = o.log ?? nopLogger;
  const clusterIP = o.clusterDNS ?? nthAddress((o.serviceCIDR ?? '10.96.0.0/12').split(',')[0]!.trim(), 10);
  const clusterDomain = o.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN;
  await ensureDNSRBAC(o.admin);
  const dns = await startClusterDNS({
    host: o.listenHost ?? o.nodeIP,
    port: o.port ?? 53,
    clusterDomain,
    upstreams: o.upstreams,
    forwardFrom: o.forwardFrom,
    resolvConf: o.resolvConf,
    metricsAddress: o.metricsAddress,
    rest: o.rest,
    log,
  });
  const ensure = () =>
    ensureDNSService(o.admin, { clusterIP, nodeIP: o.nodeIP, port: dns.port, metricsPort: dns.metricsPort, nodeName: o.nodeName }).then(
      (r) => {
        if (r.service !== 'unchanged' || r.slice !== 'unchanged') log.info('Kept the kube-dns Service', { clusterIP, endpoint: `${o.nodeIP}:${dns.port}`, ...r });
      },
      (e) => log.error(e, 'Keeping the kube-dns Service failed', { clusterIP }),
    );
  await ensure();
  const every = o.resyncMs ?? 60_000;
  const timer = every > 0 ? setInterval(() => void ensure(), every) : undefined;
  timer?.unref();
  const stop = dns.stop;
  return {
    ...dns,
    clusterIP,
    clusterDomain,
    stop() {
      if (timer) clearInterval(timer);
      return stop();
    },
  };
}
