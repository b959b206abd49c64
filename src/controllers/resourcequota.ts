// The resource quota controller (kube-controller-manager's resourcequota-controller): keeps each
// ResourceQuota's status, hard from spec.hard and used recounted from the objects of its namespace
// (the same evaluators as the ResourceQuota admission plugin, src/apiserver/admission/resourcequota.ts):
//   - a quota is synced when it is created or its spec changes, so that `kubectl describe quota`
//     shows its limits and usage at once;
//   - usage is given back (replenished) when an object a quota counts is deleted or changes in a
//     way that changes its usage (a pod that finishes, a service that changes type, a claim that
//     grows): the quotas of its namespace are synced again;
//   - every quota is synced again each --resource-quota-sync-period (5 minutes).
// The admission plugin charges creates as they are admitted; the controller's recount corrects
// what it cannot see (deletes, pods that end).
//
// Kubernetes' controller watches every quotable resource of the cluster. Here the objects of a
// resource are watched only while a quota counts them (pods, services, claims, count/<resource>):
// a cluster without quotas pays nothing.
import { DeletedFinalStateUnknown, type Informer, type InformerFactory } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isConflict, isNotFound, type RESTClient } from '../client/rest.js';
import { DiscoveryClient, ResourceClient } from '../client/resources.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { hardOf, quotaStatus, recountUsage, trackedResources } from '../schema/quota.js';
import { runQueueWorkers } from './workers.js';

const QUOTAS = { group: '', version: 'v1', resource: 'resourcequotas' };

export interface ResourceQuotaControllerOptions {
  /** writes the quotas' status */
  client: RESTClient;
  quotas: Informer<any>;
  /** where the informers of the counted resources come from (shared with the other controllers) */
  informers: InformerFactory;
  /** the client those informers list and watch with */
  informerClient: RESTClient;
  /** --resource-quota-sync-period: every quota synced again this often (0: never) */
  resyncPeriodMs: number;
  log?: Logger;
  now?: () => number;
}

/** the canonical JSON of a status (key order does not matter) */
function statusKey(s: any): string {
  const sorted = (m: unknown) => (m && typeof m === 'object' ? Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : {});
  return JSON.stringify([sorted(s?.hard), sorted(s?.used)]);
}

export class ResourceQuotaController {
  readonly queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'resourcequota_primary');
  private readonly log: Logger;
  private readonly now: () => number;
  /** the informer of each counted resource ("group/resource"), made when a quota first counts it */
  private readonly watched = new Map<string, Promise<Informer<any> | undefined>>();
  private readonly discovery: DiscoveryClient;
  private resyncTimer: NodeJS.Timeout | undefined;
  /**
   * Quotas to recount (a counted object went or changed, or the resync period passed). Any other
   * sync of a quota whose status already has its hard limits and a usage leaves the usage alone:
   * the admission plugin charges a create before the object is stored, and a recount from
   * informers that have not seen the object yet would take the charge back.
   */
  private readonly recount = new Set<string>();

  constructor(private readonly o: ResourceQuotaControllerOptions) {
    this.log = o.log ?? nopLogger;
    this.now = o.now ?? Date.now;
    this.discovery = new DiscoveryClient(o.informerClient);
    o.quotas.addEventHandler({
      add: (q) => this.enqueue(q),
      // (a quota is synced again when its spec changes, or its status no longer says its spec)
      update: (old, q) => {
        if (JSON.stringify(old?.spec) !== JSON.stringify(q?.spec) || statusKey({ hard: q?.spec?.hard }) !== statusKey({ hard: q?.status?.hard })) this.enqueue(q);
      },
    });
  }

  private enqueue(q: any, recount = false): void {
    const m = q?.metadata;
    if (!m?.namespace || !m.name) return;
    const key = `${m.namespace}/${m.name}`;
    if (recount) this.recount.add(key);
    this.queue.add(key);
  }

  /** every quota of a namespace, recounted (an object it counts was deleted or changed) */
  private replenish(namespace: string | undefined): void {
    if (!namespace) return;
    for (const q of this.o.quotas.list()) if (q?.metadata?.namespace === namespace) this.enqueue(q, true);
  }

  /** the informer of a counted resource, made (and synced) on first use; undefined when the server does not serve it */
  private informerOf(group: string, resource: string, signal: AbortSignal): Promise<Informer<any> | undefined> {
    const key = `${group}/${resource}`;
    let p = this.watched.get(key);
    if (!p) {
      p = (async () => {
        const version = group === '' ? 'v1' : await this.preferredVersion(group, resource, signal);
        if (!version) return undefined;
        const inf = this.o.informers.informerFor(new ResourceClient<any>(this.o.informerClient, { group, version, resource }));
        inf.addEventHandler({
          update: (old, obj) => {
            if (JSON.stringify(old?.spec) !== JSON.stringify(obj?.spec) || old?.status?.phase !== obj?.status?.phase || !!old?.metadata?.deletionTimestamp !== !!obj?.metadata?.deletionTimestamp) this.replenish(obj?.metadata?.namespace);
          },
          delete: (obj) => this.replenish((obj instanceof DeletedFinalStateUnknown ? obj.obj : obj)?.metadata?.namespace),
        });
        // (the factory runs it: it has started by the time a quota is synced)
        return (await inf.waitForSync({ signal })) ? inf : undefined;
      })();
      // (a failure, or a resource not served yet (a CRD to come), is tried again by the next sync that needs it)
      p.then(
        (inf) => inf ?? this.watched.delete(key),
        () => this.watched.delete(key),
      );
      this.watched.set(key, p);
    }
    return p;
  }

  private async preferredVersion(group: string, resource: string, signal: AbortSignal): Promise<string | undefined> {
    const groups = await this.discovery.serverGroups({ signal });
    const g = groups.find((x) => x.name === group);
    if (!g) return undefined;
    for (const v of [g.preferredVersion, ...(g.versions ?? [])]) {
      if (!v) continue;
      const list = await this.discovery.serverResourcesForGroupVersion(v.groupVersion, { signal });
      if ((list.resources ?? []).some((r: any) => r.name === resource)) return v.version;
    }
    return undefined;
  }

  /** recounts one quota and writes its status when it changed */
  async sync(key: string, signal: AbortSignal): Promise<void> {
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const quota = this.o.quotas.getByName(namespace, name);
    if (!quota || quota.metadata?.deletionTimestamp) return;
    const settled = quota.status?.used !== undefined && statusKey({ hard: quota.spec?.hard }) === statusKey({ hard: quota.status?.hard });
    // (the recount mark stays until the quota is written or found right: a failed sync keeps it)
    if (settled && !this.recount.has(key)) return;
    const informers = new Map<string, Informer<any>>();
    for (const r of trackedResources(quota)) {
      const inf = await this.informerOf(r.group, r.resource, signal);
      if (inf) informers.set(`${r.group}/${r.resource}`, inf);
    }
    const list = (group: string, resource: string, ns: string) => (informers.get(`${group}/${resource}`)?.list() ?? []).filter((o) => o?.metadata?.namespace === ns);
    const status = quotaStatus(hardOf(quota), recountUsage(list, namespace, quota, this.now()));
    if (statusKey(status) !== statusKey(quota.status)) {
      const quotas = new ResourceClient<any>(this.o.client, QUOTAS, namespace);
      try {
        await quotas.updateStatus({ ...quota, status }, { signal });
      } catch (e) {
        // the quota changed meanwhile (the admission plugin charged a create): looked at again
        if (isConflict(e)) {
          this.queue.addRateLimited(key);
          return;
        }
        if (!isNotFound(e)) throw e;
      }
    }
    this.recount.delete(key);
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    if (this.o.resyncPeriodMs > 0) {
      this.resyncTimer = setInterval(() => {
        for (const q of this.o.quotas.list()) this.enqueue(q, true);
      }, this.o.resyncPeriodMs);
      this.resyncTimer.unref?.();
    }
    try {
      await runQueueWorkers({ name: 'resource quota controller', log: this.log, queue: this.queue, informers: [this.o.quotas], sync: (k, s) => this.sync(k, s), failure: 'Failed to sync resource quota' }, workers, signal);
    } finally {
      if (this.resyncTimer) clearInterval(this.resyncTimer);
    }
  }
}
