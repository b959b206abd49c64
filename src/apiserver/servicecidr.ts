// The default ServiceCIDR, as kube-apiserver 1.33 keeps it (its kubernetes-service-cidr-controller;
// MultiCIDRServiceAllocator is on): `kubernetes`, whose spec.cidrs is --service-cluster-ip-range,
// created at start and again whenever it is deleted, and given the condition Ready=True ("Kubernetes
// default Service CIDR is ready", no reason) when its CIDRs are this server's and it has no Ready
// condition yet. A ServiceCIDR named `kubernetes` whose CIDRs differ is left as it is.
//
// The cluster IP allocator (registry/allocator.ts) takes addresses from every ServiceCIDR that is
// ready and not being deleted; ipaddresses.ts keeps the IPAddress objects that hold them.
import { rfc3339 } from '../machinery/time.js';
import { lostRace } from './apiservices.js';
import type { ResourceStore } from './registry/store.js';
import { CacheFollower } from './cachefollower.js';

export const DEFAULT_SERVICE_CIDR = 'kubernetes';

export class DefaultServiceCIDR {
  private readonly follower: CacheFollower;

  constructor(
    private readonly store: ResourceStore,
    private readonly cidrs: string[],
    onError: (e: unknown) => void,
  ) {
    // a deletion (or any change) of the object is followed by a sync
    this.follower = new CacheFollower([store], () => this.sync(), onError, (e) => e.name === DEFAULT_SERVICE_CIDR);
  }

  async start(): Promise<void> {
    await this.sync();
    this.follower.start();
  }

  stop(): void {
    this.follower.stop();
  }

  /** create the object when it is missing; mark it Ready when it is ours and not marked yet */
  async sync(): Promise<void> {
    let cur = this.store.get('', DEFAULT_SERVICE_CIDR)?.obj;
    if (!cur) {
      try {
        cur = await this.store.create({ apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: DEFAULT_SERVICE_CIDR }, spec: { cidrs: [...this.cidrs] } }, { dryRun: false });
      } catch (e) {
        if (!lostRace(e)) throw e;
        cur = this.store.get('', DEFAULT_SERVICE_CIDR)?.obj;
        if (!cur) return;
      }
    }
    const same = JSON.stringify(cur.spec?.cidrs ?? []) === JSON.stringify(this.cidrs);
    const ready = (cur.status?.conditions ?? []).find((c: any) => c?.type === 'Ready');
    if (!same || (ready && ready.status !== 'Unknown')) return;
    try {
      await this.store.guaranteedUpdate(
        '',
        DEFAULT_SERVICE_CIDR,
        (o) => {
          const others = (o.status?.conditions ?? []).filter((c: any) => c?.type !== 'Ready');
          o.status = { ...(o.status ?? {}), conditions: [...others, { type: 'Ready', status: 'True', lastTransitionTime: rfc3339(Date.now()), reason: '', message: 'Kubernetes default Service CIDR is ready' }] };
          return o;
        },
        { dryRun: false, main: false, subresource: 'status' },
      );
    } catch (e) {
      if (!lostRace(e)) throw e;
    }
  }
}
