// The IPAddress objects of the Services' cluster IPs and the ServiceCIDRs they come from, as
// kube-apiserver 1.33 keeps them (MultiCIDRServiceAllocator, on by default):
// - ServiceIPAddresses is the allocator's book (registry/allocator.ts IPAddressBook): an address is
//   taken while an IPAddress object of its name exists; a Service's addresses get one each, named
//   after the address, labelled `ipaddress.kubernetes.io/ip-family` and
//   `ipaddress.kubernetes.io/managed-by: ipallocator.k8s.io`, whose spec.parentRef names the Service.
// - IPAddressRepair is its ipallocator-repair-controller: at start and after every change of an
//   IPAddress, each Service's address that has no IPAddress (or one naming another parent, or
//   without the allocator's labels) gets one again, and an IPAddress the allocator wrote whose
//   Service is gone (after a minute's grace: the Service may still be being written) or no longer
//   holds the address is deleted.
import type { IPAddressBook, ServiceCIDRRange } from './registry/allocator.js';
import { IP_ALLOCATOR_NAME } from './registry/allocator.js';
import type { ResourceStore } from './registry/store.js';
import { lostRace } from './apiservices.js';
import { CacheFollower } from './cachefollower.js';
import type { Logger } from './server.js';

const FAMILY_LABEL = 'ipaddress.kubernetes.io/ip-family';
const MANAGED_BY_LABEL = 'ipaddress.kubernetes.io/managed-by';
/** how long an allocator's IPAddress may name a Service that does not exist (yet) */
const LEAK_GRACE_MS = 60_000;

interface ServiceRef {
  namespace: string;
  name: string;
}

function ipAddressOf(ip: string, svc: ServiceRef): any {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IPAddress',
    metadata: { name: ip, labels: { [FAMILY_LABEL]: ip.includes(':') ? 'IPv6' : 'IPv4', [MANAGED_BY_LABEL]: IP_ALLOCATOR_NAME } },
    // (group is omitempty, and a Service's is "")
    spec: { parentRef: { resource: 'services', namespace: svc.namespace, name: svc.name } },
  };
}

function namesService(ipa: any, svc: ServiceRef): boolean {
  const p = ipa?.spec?.parentRef;
  return (p?.group ?? '') === '' && p?.resource === 'services' && (p?.namespace ?? '') === svc.namespace && p?.name === svc.name;
}

function hasAllocatorLabels(ipa: any): boolean {
  const l = ipa?.metadata?.labels ?? {};
  return l[MANAGED_BY_LABEL] === IP_ALLOCATOR_NAME && l[FAMILY_LABEL] === (String(ipa?.metadata?.name).includes(':') ? 'IPv6' : 'IPv4');
}

/** the cluster IPs of a Service (none for a headless or ExternalName one) */
function clusterIPsOf(svc: any): string[] {
  if (svc?.spec?.type === 'ExternalName') return [];
  const ips: string[] = svc?.spec?.clusterIPs ?? (svc?.spec?.clusterIP ? [svc.spec.clusterIP] : []);
  return ips.filter((ip) => ip && ip !== 'None');
}

/** the ServiceCIDRs of a store, as the allocator reads them */
export function serviceCIDRRanges(store: ResourceStore): () => ServiceCIDRRange[] {
  return () =>
    store.cacher.list({ prefix: store.prefix }).items.map((e) => {
      const o = e.obj;
      const ready = (o.status?.conditions ?? []).find((c: any) => c?.type === 'Ready');
      return { name: o.metadata.name, cidrs: o.spec?.cidrs ?? [], ready: !o.metadata.deletionTimestamp && (!ready || ready.status === 'True') };
    });
}

export class ServiceIPAddresses implements IPAddressBook {
  /** the addresses whose IPAddress is being written for a Service just stored (the repair loop leaves them be) */
  readonly claiming = new Set<string>();

  constructor(private readonly store: ResourceStore) {}

  has(ip: string): boolean {
    return this.store.get('', ip) !== undefined;
  }

  async claim(ip: string, svc: ServiceRef): Promise<void> {
    this.claiming.add(ip);
    try {
      await this.store.create(ipAddressOf(ip, svc), { dryRun: false });
    } catch (e) {
      // (the repair loop may have written it first)
      if (!((e as { code?: number }).code === 409 && namesService(this.store.get('', ip)?.obj, svc))) throw e;
    } finally {
      this.claiming.delete(ip);
    }
  }

  async free(ip: string, svc: ServiceRef): Promise<void> {
    const cur = this.store.get('', ip)?.obj;
    if (!cur || !namesService(cur, svc)) return;
    try {
      await this.store.delete('', ip, { dryRun: false, preconditions: { uid: cur.metadata.uid } });
    } catch (e) {
      if (!lostRace(e)) throw e;
    }
  }
}

export class IPAddressRepair {
  private readonly follower: CacheFollower;
  private recheck?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly ipaddresses: ResourceStore,
    private readonly services: ResourceStore,
    private readonly inRange: (ip: string) => boolean,
    private readonly log: Logger,
    /** addresses whose IPAddress the allocator is writing right now */
    private readonly claiming: ReadonlySet<string> = new Set(),
  ) {
    this.follower = new CacheFollower([ipaddresses], () => this.sync(), (e) => log.error(e, 'Repairing the IPAddresses of the Services failed'));
  }

  async start(): Promise<void> {
    await this.sync();
    this.follower.start();
  }

  stop(): void {
    this.stopped = true;
    this.follower.stop();
    if (this.recheck) clearTimeout(this.recheck);
  }

  /** one pass over the Services and the IPAddresses */
  async sync(): Promise<void> {
    const holders = new Map<string, ServiceRef[]>();
    for (const e of this.services.cacher.list({ prefix: this.services.prefix }).items) {
      const svc = e.obj;
      const ref = { namespace: svc.metadata.namespace ?? '', name: svc.metadata.name };
      for (const ip of clusterIPsOf(svc)) {
        const l = holders.get(ip);
        if (l) l.push(ref);
        else holders.set(ip, [ref]);
        await this.syncServiceIP(ip, ref);
      }
    }
    let nextCheck = Infinity;
    for (const e of this.ipaddresses.cacher.list({ prefix: this.ipaddresses.prefix }).items) {
      const ipa = e.obj;
      if (ipa.metadata.labels?.[MANAGED_BY_LABEL] !== IP_ALLOCATOR_NAME) continue;
      const ip = ipa.metadata.name;
      const p = ipa.spec?.parentRef;
      if ((p?.group ?? '') !== '' || p?.resource !== 'services') {
        this.log.warn(`IPAddress ${ip} appears to have been modified, not referencing a Service: cleaning up`);
        await this.remove(ipa);
        continue;
      }
      const ref = { namespace: p.namespace ?? '', name: p.name };
      if (this.services.get(ref.namespace, ref.name)) {
        if (!(holders.get(ip) ?? []).some((h) => h.namespace === ref.namespace && h.name === ref.name)) {
          this.log.warn(`the IPAddress ${ip} for Service ${ref.namespace}/${ref.name} has a wrong reference; cleaning up`);
          await this.remove(ipa);
        }
        continue;
      }
      const age = Date.now() - Date.parse(ipa.metadata.creationTimestamp ?? '');
      if (!(age < LEAK_GRACE_MS)) {
        this.log.warn(`IPAddress ${ip} appears to have leaked: cleaning up`);
        await this.remove(ipa);
      } else nextCheck = Math.min(nextCheck, LEAK_GRACE_MS - age);
    }
    if (Number.isFinite(nextCheck) && !this.stopped && !this.recheck) {
      this.recheck = setTimeout(() => {
        this.recheck = undefined;
        this.follower.schedule();
      }, nextCheck + 50);
      this.recheck.unref();
    }
  }

  /** syncService, for one address of a Service */
  private async syncServiceIP(ip: string, ref: ServiceRef): Promise<void> {
    if (!this.inRange(ip)) {
      this.log.warn(`the ClusterIP [IPv4]: ${ip} for Service ${ref.namespace}/${ref.name} is not within any service CIDR; please recreate`);
      return;
    }
    const cur = this.ipaddresses.get('', ip)?.obj;
    if (!cur) {
      // (a Service just stored whose IPAddress is on its way is not missing one)
      if (this.claiming.has(ip)) return;
      this.log.warn(`the ClusterIP [IPv4]: ${ip} for Service ${ref.namespace}/${ref.name} is not allocated; repairing`);
      await this.write(ip, ref);
      return;
    }
    if (!namesService(cur, ref)) {
      const p = cur.spec?.parentRef;
      const other = p?.resource === 'services' && (p?.group ?? '') === '' ? this.services.get(p.namespace ?? '', p.name)?.obj : undefined;
      if (!other) {
        this.log.warn(`the ClusterIP [IPv4]: ${ip} for Service ${ref.namespace}/${ref.name} has a wrong reference; repairing`);
        await this.remove(cur);
        await this.write(ip, ref);
      } else if (clusterIPsOf(other).includes(ip)) {
        this.log.warn(`the cluster IP [IPv4]:${ip} for service ${ref.namespace}/${ref.name} was assigned to other services ${p.namespace}/${p.name}; please recreate`);
      }
      return;
    }
    if (!hasAllocatorLabels(cur)) {
      await this.remove(cur);
      await this.write(ip, ref);
    }
  }

  private async write(ip: string, ref: ServiceRef): Promise<void> {
    try {
      await this.ipaddresses.create(ipAddressOf(ip, ref), { dryRun: false });
    } catch (e) {
      if (!lostRace(e)) throw e;
    }
  }

  private async remove(ipa: any): Promise<void> {
    try {
      await this.ipaddresses.delete('', ipa.metadata.name, { dryRun: false, preconditions: { uid: ipa.metadata.uid } });
    } catch (e) {
      if (!lostRace(e)) throw e;
    }
  }
}
