// Keelson's ServiceLB: what k3s' servicelb (klipper-lb) gives a one-node cluster, so that a
// Service of type LoadBalancer gets an address instead of staying `<pending>`.
//
// k3s runs a DaemonSet per LoadBalancer Service whose pods hold the Service's ports as hostPorts on
// every node and forward them to the Service; the nodes those pods run on give the Service its
// `status.loadBalancer.ingress`. Keelson's server has one node and a service proxy that already
// carries a load-balancer IP's traffic to the endpoints (kube-proxy's nftables rules, src/proxy), so
// no pods are needed: this controller writes the ingress, and the proxy does the forwarding.
//
// - A Service of type LoadBalancer without `spec.loadBalancerClass` (a class names another
//   implementation: left alone) gets `status.loadBalancer.ingress = [{ ip: <the node's InternalIP>,
//   ipMode: VIP, ports: [{port, protocol}, ...] }]`, written through the status subresource with the
//   field manager `keelson-servicelb`.
// - Ports: as a hostPort, a port and protocol of the node is one Service's. Services are served in
//   order of creation (creationTimestamp, then namespace and name); one that needs a port an earlier
//   one holds gets no ingress (or loses the one it had) and a Warning Event `UnAvailableLoadBalancer`
//   naming the port and the holder, until the port is free again.
// - An ingress this controller wrote (its field manager owns `status.loadBalancer`) is cleared when
//   the Service stops being a LoadBalancer of ours; ingresses written by others are never touched.
// - `removeServiceLBIngresses` (keelson server --disable=servicelb) clears the ingresses it wrote,
//   as k3s deletes its svclb DaemonSets then.
import { DeletedFinalStateUnknown, Informer } from '../client/informer.js';
import { EventRecorder } from '../client/events.js';
import { nopLogger, type Logger } from '../client/log.js';
import { RESTClient, isConflict, isNotFound } from '../client/rest.js';
import { ResourceClient } from '../client/resources.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { runInServer, runQueueWorkers } from './workers.js';

/** the --disable item of this component (k3s' name) */
export const SERVICELB_COMPONENT = 'servicelb';
/** the field manager of the ingresses it writes: how it knows them as its own */
export const SERVICELB_MANAGER = 'keelson-servicelb';
export const EVENT_SOURCE = 'service-lb-controller';

const SERVICES = { group: '', version: 'v1', resource: 'services' };
const NODES = { group: '', version: 'v1', resource: 'nodes' };
const ALL = 'all';

export interface ServiceLBOptions {
  client: RESTClient;
  /** the server's node: its address is every ingress' */
  nodeName: string;
  log?: Logger;
}

/** whether this controller serves the Service */
export function isOurLoadBalancer(svc: any): boolean {
  return svc?.spec?.type === 'LoadBalancer' && !svc.spec.loadBalancerClass && !svc.metadata?.deletionTimestamp;
}

/** whether the Service's load-balancer ingress was written by this controller (its field manager owns it: another writer's change takes that away) */
export function ingressIsOurs(svc: any): boolean {
  if (!svc?.status?.loadBalancer?.ingress?.length) return false;
  return (svc.metadata?.managedFields ?? []).some((m: any) => m?.manager === SERVICELB_MANAGER && m?.subresource === 'status' && m?.fieldsV1?.['f:status']?.['f:loadBalancer']?.['f:ingress'] !== undefined);
}

/** the node's address for ingresses: its InternalIP (IPv4 first), else its ExternalIP */
export function nodeAddress(node: any): string | undefined {
  const addrs: any[] = node?.status?.addresses ?? [];
  const pick = (type: string) => addrs.find((a) => a?.type === type && !String(a.address).includes(':'))?.address ?? addrs.find((a) => a?.type === type)?.address;
  return pick('InternalIP') ?? pick('ExternalIP');
}

const portKey = (p: any) => `${p.port}/${p.protocol ?? 'TCP'}`;
const svcKey = (s: any) => `${s.metadata.namespace}/${s.metadata.name}`;

/**
 * What each Service should have: the ingress for the Services served, and for the others that lost
 * a port, the port and its holder. Services in order of creation, then namespace/name.
 */
export function assignIngresses(services: any[], nodeIP: string): { ingress: Map<string, any[]>; conflicts: Map<string, { port: string; holder: string }> } {
  const ours = services.filter(isOurLoadBalancer).sort((a, b) => {
    const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
    const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
    return ta - tb || (svcKey(a) < svcKey(b) ? -1 : svcKey(a) > svcKey(b) ? 1 : 0);
  });
  const taken = new Map<string, string>();
  const ingress = new Map<string, any[]>();
  const conflicts = new Map<string, { port: string; holder: string }>();
  for (const svc of ours) {
    const ports: any[] = svc.spec.ports ?? [];
    const clash = ports.find((p) => taken.has(portKey(p)));
    if (clash) {
      conflicts.set(svcKey(svc), { port: portKey(clash), holder: taken.get(portKey(clash))! });
      continue;
    }
    for (const p of ports) taken.set(portKey(p), svcKey(svc));
    ingress.set(svcKey(svc), [{ ip: nodeIP, ipMode: 'VIP', ports: ports.map((p) => ({ port: p.port, protocol: p.protocol ?? 'TCP' })) }]);
  }
  return { ingress, conflicts };
}

export class ServiceLBController {
  readonly services: Informer<any>;
  readonly nodes: Informer<any>;
  private readonly queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'servicelb');
  private readonly log: Logger;
  private readonly recorder: EventRecorder;
  private readonly client: ResourceClient<any>;
  /** the conflict each Service (uid) was last told of, so that its Event is written once per change */
  private readonly told = new Map<string, string>();
  private signal: AbortSignal = new AbortController().signal;

  constructor(private readonly o: ServiceLBOptions) {
    this.log = o.log ?? nopLogger;
    this.recorder = new EventRecorder(o.client, EVENT_SOURCE, this.log);
    this.client = new ResourceClient<any>(o.client, SERVICES);
    this.services = new Informer<any>(this.client, { log: this.log, name: 'services' });
    this.nodes = new Informer<any>(new ResourceClient<any>(o.client, NODES), { log: this.log, name: 'nodes', fieldSelector: `metadata.name=${o.nodeName}` });
    const all = () => this.queue.add(ALL);
    this.services.addEventHandler({
      add: all,
      update: (a, b) => {
        if (a !== b) all();
      },
      delete: (s) => {
        const obj = s instanceof DeletedFinalStateUnknown ? s.obj : s;
        if (obj?.metadata?.uid) this.told.delete(obj.metadata.uid);
        all();
      },
    });
    // (only the node's address matters)
    this.nodes.addEventHandler({ add: all, update: (a, b) => nodeAddress(a) !== nodeAddress(b) && all(), delete: all });
  }

  /** runs until the signal aborts */
  async run(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    const informers = [this.services, this.nodes];
    for (const i of informers) i.run();
    try {
      const synced = await Promise.all(informers.map((i) => i.waitForSync({ signal })));
      if (!synced.every(Boolean)) return;
      this.queue.add(ALL);
      await runQueueWorkers(
        {
          name: 'servicelb',
          log: this.log,
          queue: this.queue,
          informers,
          sync: () => this.sync(),
          onError: (k, err) => {
            this.log.error(err, 'Writing load-balancer ingresses failed; trying again');
            this.queue.addRateLimited(k);
          },
        },
        1,
        signal,
      );
    } finally {
      await Promise.all(informers.map((i) => i.stop()));
    }
  }

  /** every Service's ingress brought in line */
  async sync(): Promise<void> {
    const node = this.nodes.list()[0];
    const ip = nodeAddress(node);
    const services = this.services.list();
    // (no address yet: nothing to give; ingresses already written stay until it is known)
    const { ingress, conflicts } = ip ? assignIngresses(services, ip) : { ingress: new Map<string, any[]>(), conflicts: new Map<string, { port: string; holder: string }>() };
    let failed: unknown;
    for (const svc of services) {
      const key = svcKey(svc);
      const want = ingress.get(key);
      const have = svc.status?.loadBalancer?.ingress;
      const conflict = conflicts.get(key);
      if (conflict) {
        const msg = `There are no available nodes for LoadBalancer: port ${conflict.port} of node ${this.o.nodeName} is taken by the LoadBalancer Service ${conflict.holder}`;
        if (this.told.get(svc.metadata.uid) !== msg) {
          this.told.set(svc.metadata.uid, msg);
          void this.recorder.event({ ...svc, kind: 'Service', apiVersion: 'v1' }, 'Warning', 'UnAvailableLoadBalancer', msg);
        }
      } else this.told.delete(svc.metadata.uid);
      let next: any[] | undefined;
      if (want) {
        if (JSON.stringify(have ?? []) !== JSON.stringify(want) || !ingressIsOurs(svc)) next = want;
      } else if (ingressIsOurs(svc) && (ip || !isOurLoadBalancer(svc))) {
        // (no longer ours to serve, or its port is another's)
        next = [];
      }
      if (!next) continue;
      try {
        await this.writeIngress(svc, next);
        if (next.length) this.log.v(2).info('Wrote the load-balancer ingress', { service: key, ip });
        else this.log.v(2).info('Cleared the load-balancer ingress', { service: key });
      } catch (e) {
        if (isNotFound(e)) continue;
        failed = e;
      }
    }
    if (failed) throw failed;
  }

  private async writeIngress(svc: any, ingress: any[]): Promise<void> {
    const obj = { ...svc, status: { ...svc.status, loadBalancer: ingress.length ? { ingress } : {} } };
    try {
      await this.client.updateStatus(obj, { fieldManager: SERVICELB_MANAGER, signal: this.signal });
    } catch (e) {
      // (a newer version: the informer brings it, and the sync runs again)
      if (isConflict(e)) return;
      throw e;
    }
  }
}

/** `--disable=servicelb`: the ingresses this controller wrote are cleared (others' stay) */
export async function removeServiceLBIngresses(client: RESTClient, log: Logger = nopLogger): Promise<number> {
  const services = new ResourceClient<any>(client, SERVICES);
  let cleared = 0;
  for (const svc of (await services.listAll()).items) {
    if (!ingressIsOurs(svc)) continue;
    try {
      await services.updateStatus({ ...svc, status: { ...svc.status, loadBalancer: {} } }, { fieldManager: SERVICELB_MANAGER });
      cleared++;
      log.info('Cleared the load-balancer ingress ServiceLB wrote', { service: svcKey(svc) });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
  return cleared;
}

/**
 * `keelson server`: ServiceLB for the server's node, a client of the server over loopback HTTPS
 * with a certificate of its own. stop() never rejects.
 */
export function startServiceLB(o: { rest: { server: string; ca: string; cert: string; key: string }; userAgent: string; nodeName: string; log: Logger }): { stop(): Promise<void> } {
  const client = new RESTClient({ ...o.rest, userAgent: o.userAgent, qps: 20, burst: 30 });
  const c = new ServiceLBController({ client, nodeName: o.nodeName, log: o.log });
  const stopper = runInServer(client, (signal) => c.run(signal), o.log, 'ServiceLB stopped');
  o.log.info('Started ServiceLB', { node: o.nodeName });
  return stopper;
}
