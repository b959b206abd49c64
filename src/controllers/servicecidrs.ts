// The ServiceCIDR controller (kube-controller-manager's service-cidr-controller): every ServiceCIDR
// gets the finalizer `networking.k8s.io/service-cidr-finalizer` and the condition Ready=True
// ("Kubernetes Service CIDR is ready"). A ServiceCIDR being deleted keeps its finalizer while an
// IPAddress of the cluster IP allocator lies in it and in no other ServiceCIDR (the condition turns
// Ready=False, reason Terminating, to say why); otherwise the finalizer goes once the deletion is
// 10 s old, so that the API servers' allocators have stopped handing out its addresses.
//
// Prefixes are compared with node:net's BlockList, which knows both families.
import { BlockList, isIPv6 } from 'node:net';
import { DeletedFinalStateUnknown, type Informer } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isNotFound, type RESTClient } from '../client/rest.js';
import { ResourceClient } from '../client/resources.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { runQueueWorkers } from './workers.js';

export const SERVICE_CIDR_FINALIZER = 'networking.k8s.io/service-cidr-finalizer';
const CONTROLLER_NAME = 'service-cidr-controller';
const SERVICECIDRS = { group: 'networking.k8s.io', version: 'v1', resource: 'servicecidrs' };
/** how long a deletion waits for the allocators to stop using the ServiceCIDR */
const DELETION_GRACE_MS = 10_000;
const READY_MESSAGE = 'Kubernetes Service CIDR is ready';
const TERMINATING_MESSAGE = 'There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR';

interface Prefix {
  address: string;
  bits: number;
  family: 'ipv4' | 'ipv6';
  list: BlockList;
}

function parsePrefix(cidr: string): Prefix | undefined {
  const [address, len] = cidr.split('/');
  const bits = Number(len);
  if (!address || !Number.isInteger(bits)) return undefined;
  const family = isIPv6(address) ? 'ipv6' : 'ipv4';
  const list = new BlockList();
  try {
    list.addSubnet(address, bits, family);
  } catch {
    return undefined;
  }
  return { address, bits, family, list };
}

function containsAddress(p: Prefix, ip: string): boolean {
  const family = isIPv6(ip) ? 'ipv6' : 'ipv4';
  return family === p.family && p.list.check(ip, family);
}

function containsPrefix(p: Prefix, q: Prefix): boolean {
  return p.family === q.family && p.bits <= q.bits && p.list.check(q.address, q.family);
}

function prefixesOf(sc: any): Prefix[] {
  return ((sc?.spec?.cidrs ?? []) as string[]).map(parsePrefix).filter((p): p is Prefix => p !== undefined);
}

export interface ServiceCIDRControllerOptions {
  client: RESTClient;
  serviceCIDRs: Informer<any>;
  ipAddresses: Informer<any>;
  log?: Logger;
}

export class ServiceCIDRController {
  readonly queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'ipaddresses');
  private readonly log: Logger;
  private readonly client: ResourceClient<any>;

  constructor(private readonly o: ServiceCIDRControllerOptions) {
    this.log = o.log ?? nopLogger;
    this.client = new ResourceClient<any>(o.client, SERVICECIDRS);
    o.serviceCIDRs.addEventHandler({
      add: (sc) => {
        this.queue.add(sc.metadata.name);
        // a new ServiceCIDR may unblock the deletion of those it overlaps
        for (const name of this.overlapping(sc)) this.queue.add(name);
      },
      update: (_old, sc) => this.queue.add(sc.metadata.name),
      delete: (sc) => {
        const obj = sc instanceof DeletedFinalStateUnknown ? sc.obj : sc;
        if (obj?.metadata?.name) this.queue.add(obj.metadata.name);
      },
    });
    const onIP = (ipa: any) => {
      const obj = ipa instanceof DeletedFinalStateUnknown ? ipa.obj : ipa;
      for (const name of this.containing(obj)) this.queue.add(name);
    };
    o.ipAddresses.addEventHandler({ add: onIP, delete: onIP });
  }

  run(workers: number, signal: AbortSignal): Promise<void> {
    return runQueueWorkers(
      { name: CONTROLLER_NAME, log: this.log, queue: this.queue, informers: [this.o.serviceCIDRs, this.o.ipAddresses], sync: (n, s) => this.sync(n, s), failure: 'Syncing the ServiceCIDR failed' },
      workers,
      signal,
    );
  }

  /** the ServiceCIDRs that contain one of this one's prefixes or are contained by one */
  private overlapping(sc: any): string[] {
    const mine = prefixesOf(sc);
    const out = new Set<string>();
    for (const other of this.o.serviceCIDRs.list()) {
      for (const q of prefixesOf(other)) if (mine.some((p) => containsPrefix(p, q) || containsPrefix(q, p))) out.add(other.metadata.name);
    }
    return [...out];
  }

  /** the ServiceCIDRs holding an IPAddress of the allocator */
  private containing(ipa: any): string[] {
    if (ipa?.metadata?.labels?.['ipaddress.kubernetes.io/managed-by'] !== 'ipallocator.k8s.io') return [];
    const ip = ipa.metadata.name;
    return this.o.serviceCIDRs
      .list()
      .filter((sc) => prefixesOf(sc).some((p) => containsAddress(p, ip)))
      .map((sc) => sc.metadata.name);
  }

  async sync(name: string, signal?: AbortSignal): Promise<void> {
    const sc = this.o.serviceCIDRs.getByName('', name);
    if (!sc) return;
    try {
      if (sc.metadata.deletionTimestamp) {
        if (!this.canDelete(sc)) {
          await this.setReady(sc, 'False', 'Terminating', TERMINATING_MESSAGE, signal);
          return;
        }
        const wait = DELETION_GRACE_MS - (Date.now() - Date.parse(sc.metadata.deletionTimestamp));
        if (wait > 0) {
          this.queue.addAfter(name, wait);
          return;
        }
        if ((sc.metadata.finalizers ?? []).includes(SERVICE_CIDR_FINALIZER)) {
          await this.patchFinalizers(name, { $deleteFromPrimitiveList: true }, signal);
          this.log.v(4).info('Removed protection finalizer from ServiceCIDRs', { ServiceCIDR: name });
        }
        return;
      }
      if (!(sc.metadata.finalizers ?? []).includes(SERVICE_CIDR_FINALIZER)) {
        await this.patchFinalizers(name, {}, signal);
        this.log.v(4).info('Added protection finalizer to ServiceCIDR', { ServiceCIDR: name });
      }
      await this.setReady(sc, 'True', '', READY_MESSAGE, signal);
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
  }

  /**
   * canDeleteCIDR: every prefix has another ServiceCIDR holding it, or no IPAddress of the
   * allocator lies in this ServiceCIDR alone
   */
  private canDelete(sc: any): boolean {
    const mine = prefixesOf(sc);
    const others = this.o.serviceCIDRs.list().filter((o) => o.metadata.name !== sc.metadata.name);
    const parented = mine.every((p) => others.some((o) => prefixesOf(o).some((q) => containsPrefix(q, p))));
    if (parented) {
      this.log.info('Deleting ServiceCIDR contained in other ServiceCIDR', { ServiceCIDR: sc.metadata.name });
      return true;
    }
    for (const ipa of this.o.ipAddresses.list()) {
      if (ipa.metadata?.labels?.['ipaddress.kubernetes.io/managed-by'] !== 'ipallocator.k8s.io') continue;
      const ip = ipa.metadata.name;
      if (!mine.some((p) => containsAddress(p, ip))) continue;
      if (!others.some((o) => prefixesOf(o).some((q) => containsAddress(q, ip)))) {
        this.log.info('Deleting ServiceCIDR blocked by IP address', { IPAddress: ip });
        return false;
      }
    }
    this.log.info('Deleting ServiceCIDR no longer have orphan IPs', { ServiceCIDR: sc.metadata.name });
    return true;
  }

  /** a strategic merge patch of the finalizers: add ours, or ($deleteFromPrimitiveList) take it out */
  private async patchFinalizers(name: string, how: { $deleteFromPrimitiveList?: boolean }, signal?: AbortSignal): Promise<void> {
    const body = how.$deleteFromPrimitiveList ? { metadata: { '$deleteFromPrimitiveList/finalizers': [SERVICE_CIDR_FINALIZER] } } : { metadata: { finalizers: [SERVICE_CIDR_FINALIZER] } };
    await this.o.client.json({ method: 'PATCH', path: this.client.path(name), body, contentType: 'application/strategic-merge-patch+json', signal });
  }

  /**
   * The Ready condition, applied as the controller applies it (server-side apply of the status,
   * forced, as service-cidr-controller). Kubernetes applies it again on every sync with a new
   * lastTransitionTime; here an unchanged condition is not written again.
   */
  private async setReady(sc: any, status: 'True' | 'False', reason: string, message: string, signal?: AbortSignal): Promise<void> {
    const cur = (sc.status?.conditions ?? []).find((c: any) => c?.type === 'Ready');
    if (cur && cur.status === status && (cur.reason ?? '') === reason && cur.message === message) return;
    // (reason is not omitempty: Kubernetes stores "" where the controller sets none)
    const condition = { type: 'Ready', status, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), reason, message };
    await this.o.client.json({
      method: 'PATCH',
      path: this.client.path(sc.metadata.name, 'status'),
      query: { fieldManager: CONTROLLER_NAME, force: true },
      body: { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: sc.metadata.name }, status: { conditions: [condition] } },
      contentType: 'application/apply-patch+yaml',
      signal,
    });
  }
}
