// The namespace lifecycle controller (kube-controller-manager's namespace controller): when a
// namespace is deleted (deletionTimestamp set, `kubernetes` in spec.finalizers) it deletes every
// namespaced object in it, waits until they are gone, then removes its token from
// spec.finalizers through PUT /api/v1/namespaces/<name>/finalize; the API server removes the
// namespace once both finalizer lists are empty.
//
// Behaviour kept from Kubernetes:
//   - namespace events are handled 5 s after they arrive (so that every API server has seen the
//     deletion and refuses new content, and last-moment creations are visible);
//   - the namespace is read from the API server (not the cache) before each pass; its phase is
//     set to Terminating if it is not yet;
//   - content is found through discovery: every namespaced resource at its group's preferred
//     version that has `delete`; each is emptied with one deletecollection (propagationPolicy
//     Background), or, where deletecollection is not served, by listing and deleting each item;
//     405/404 answers mark an operation unsupported from then on;
//   - pods still running their grace period make the pass wait for it (estimate from
//     terminationGracePeriodSeconds); objects held by finalizers make it wait 15 s (estimate);
//     the namespace is requeued after estimate/2+1 seconds;
//   - the five deletion conditions (NamespaceDeletionDiscoveryFailure,
//     NamespaceDeletionGroupVersionParsingFailure, NamespaceDeletionContentFailure,
//     NamespaceContentRemaining, NamespaceFinalizersRemaining) are written to status after each
//     pass with Kubernetes' reasons and messages;
//   - errors requeue with per-namespace exponential backoff (5 ms to 60 s) under an overall
//     10 qps / 100 burst bucket.

import { addGoSeconds, rfc3339 } from '../machinery/time.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isConflict, isMethodNotSupported, isNotFound, type RESTClient } from '../client/rest.js';
import {
  DiscoveryClient,
  filterResources,
  GroupDiscoveryFailedError,
  groupVersionResources,
  gvrKey,
  ResourceClient,
  supportsAllVerbs,
  type DiscoveryResult,
  type GroupVersionResource,
  type KubeObject,
} from '../client/resources.js';
import { DeletedFinalStateUnknown, type Informer } from '../client/informer.js';
import { BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter, RateLimitingQueue } from '../client/workqueue.js';
import { runQueueWorkers } from './workers.js';

/** Events are handled this long after they arrive (namespaceDeletionGracePeriod). */
export const NAMESPACE_DELETION_GRACE_PERIOD_MS = 5_000;
/** The wait assumed for objects held by finalizers (finalizerEstimateSeconds). */
export const FINALIZER_ESTIMATE_SECONDS = 15;
/** The finalizer token of this controller in spec.finalizers. */
export const FINALIZER_KUBERNETES = 'kubernetes';

export interface NamespaceCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface Namespace extends KubeObject {
  spec?: { finalizers?: string[] };
  status?: { phase?: string; conditions?: NamespaceCondition[] };
}

/** Some content is still being removed; try again in about `estimate` seconds. */
export class ResourcesRemainingError extends Error {
  constructor(readonly estimate: number) {
    super(`some content remains in the namespace, estimate ${estimate} seconds before it is removed`);
    this.name = 'ResourcesRemainingError';
  }
}

/** Several errors as one (utilerrors.NewAggregate's message form). */
export class AggregatedError extends Error {
  constructor(readonly errors: Error[]) {
    super(errors.length === 1 ? errors[0]!.message : `[${errors.map((e) => e.message).join(', ')}]`);
    this.name = 'AggregateError';
  }
}

// ── conditions ──────────────────────────────────────────────────────────────

export const CONDITION_TYPES = [
  'NamespaceDeletionDiscoveryFailure',
  'NamespaceDeletionGroupVersionParsingFailure',
  'NamespaceDeletionContentFailure',
  'NamespaceContentRemaining',
  'NamespaceFinalizersRemaining',
] as const;

const OK: Record<string, [reason: string, message: string]> = {
  NamespaceDeletionDiscoveryFailure: ['ResourcesDiscovered', 'All resources successfully discovered'],
  NamespaceDeletionGroupVersionParsingFailure: ['ParsedGroupVersions', 'All legacy kube types successfully parsed'],
  NamespaceDeletionContentFailure: ['ContentDeleted', 'All content successfully deleted, may be waiting on finalization'],
  NamespaceContentRemaining: ['ContentRemoved', 'All content successfully removed'],
  NamespaceFinalizersRemaining: ['ContentHasNoFinalizers', 'All content-preserving finalizers finished'],
};

/** metav1.Now() as JSON: seconds precision RFC 3339. */
function nowTime(): string {
  return rfc3339(Date.now());
}

interface ContentTotals {
  /** `resource.group` → instances remaining */
  gvrToNumRemaining: Map<string, { gvr: GroupVersionResource; n: number }>;
  finalizersToNumRemaining: Map<string, number>;
}

/** Collects what a deletion pass found and turns it into the namespace's status conditions. */
export class NamespaceConditionUpdater {
  private readonly newConditions: NamespaceCondition[] = [];
  private readonly deleteContentErrors: Error[] = [];

  processDiscoverResourcesErr(err: Error): void {
    const msg = err instanceof GroupDiscoveryFailedError ? `Discovery failed for some groups, ${err.groups.size} failing: ${err.message}` : err.message;
    this.newConditions.push({ type: 'NamespaceDeletionDiscoveryFailure', status: 'True', lastTransitionTime: nowTime(), reason: 'DiscoveryFailed', message: msg });
  }

  processGroupVersionErr(err: Error): void {
    this.newConditions.push({ type: 'NamespaceDeletionGroupVersionParsingFailure', status: 'True', lastTransitionTime: nowTime(), reason: 'GroupVersionParsingFailed', message: err.message });
  }

  processDeleteContentErr(err: Error): void {
    this.deleteContentErrors.push(err);
  }

  processContentTotals(t: ContentTotals): void {
    if (t.gvrToNumRemaining.size) {
      const parts: string[] = [];
      for (const { gvr, n } of t.gvrToNumRemaining.values()) if (n) parts.push(`${gvr.resource}.${gvr.group} has ${n} resource instances`);
      parts.sort();
      this.newConditions.push({
        type: 'NamespaceContentRemaining',
        status: 'True',
        lastTransitionTime: nowTime(),
        reason: 'SomeResourcesRemain',
        message: `Some resources are remaining: ${parts.join(', ')}`,
      });
    }
    if (t.finalizersToNumRemaining.size) {
      const parts: string[] = [];
      for (const [f, n] of t.finalizersToNumRemaining) if (n) parts.push(`${f} in ${n} resource instances`);
      parts.sort();
      this.newConditions.push({
        type: 'NamespaceFinalizersRemaining',
        status: 'True',
        lastTransitionTime: nowTime(),
        reason: 'SomeFinalizersRemain',
        message: `Some content in the namespace has finalizers remaining: ${parts.join(', ')}`,
      });
    }
  }

  /** Writes the conditions into `ns.status`; returns whether anything changed. */
  update(ns: Namespace): boolean {
    if (!this.newConditions.some((c) => c.type === 'NamespaceDeletionContentFailure') && this.deleteContentErrors.length) {
      const msgs = this.deleteContentErrors.map((e) => e.message).sort();
      this.newConditions.push({
        type: 'NamespaceDeletionContentFailure',
        status: 'True',
        lastTransitionTime: nowTime(),
        reason: 'ContentDeletionFailed',
        message: `Failed to delete all resource types, ${msgs.length} remaining: ${msgs.join(', ')}`,
      });
    }
    ns.status ??= {};
    const conditions = (ns.status.conditions ??= []);
    let changed = false;
    for (const type of CONDITION_TYPES) {
      const next = this.newConditions.find((c) => c.type === type) ?? { type, status: 'False', lastTransitionTime: nowTime(), reason: OK[type]![0], message: OK[type]![1] };
      const old = conditions.find((c) => c.type === type);
      if (!old) {
        conditions.push(next);
        changed = true;
      } else if (old.status !== next.status || old.message !== next.message || old.reason !== next.reason) {
        if (old.status !== next.status) old.lastTransitionTime = nowTime();
        old.status = next.status;
        old.reason = next.reason;
        old.message = next.message;
        changed = true;
      }
    }
    return changed;
  }
}

// ── the deleter ─────────────────────────────────────────────────────────────

export interface NamespacedResourcesDeleterOptions {
  client: RESTClient;
  /** namespaced resources to consider (default: discovery's preferred namespaced resources) */
  discover?: (signal?: AbortSignal) => Promise<DiscoveryResult>;
  finalizerToken?: string;
  log?: Logger;
}

interface GVRDeletionMetadata {
  finalizerEstimateSeconds: number;
  numRemaining: number;
  finalizersToNumRemaining: Map<string, number>;
}

const NS_GVR: GroupVersionResource = { group: '', version: 'v1', resource: 'namespaces' };
const PODS_GVR: GroupVersionResource = { group: '', version: 'v1', resource: 'pods' };

/** Deletes everything in a namespace, then finalizes it (deletion.NamespacedResourcesDeleter). */
export class NamespacedResourcesDeleter {
  private readonly client: RESTClient;
  private readonly namespaces: ResourceClient<Namespace>;
  private readonly discover: (signal?: AbortSignal) => Promise<DiscoveryResult>;
  private readonly token: string;
  private readonly log: Logger;
  /** `op|group/version/resource` → the operation is not supported */
  private readonly notSupported = new Set<string>();

  constructor(o: NamespacedResourcesDeleterOptions) {
    this.client = o.client;
    this.namespaces = new ResourceClient<Namespace>(o.client, NS_GVR);
    const disc = new DiscoveryClient(o.client);
    this.discover = o.discover ?? ((signal) => disc.serverPreferredNamespacedResources({ signal }));
    this.token = o.finalizerToken ?? FINALIZER_KUBERNETES;
    this.log = o.log ?? nopLogger;
  }

  /**
   * One pass over a namespace. Resolves when the namespace is finalized (or gone, or not being
   * deleted); rejects with ResourcesRemainingError when content is still going away, or with the
   * errors met. The caller calls again until it resolves.
   */
  async delete(nsName: string, signal?: AbortSignal): Promise<void> {
    let ns: Namespace;
    try {
      ns = await this.namespaces.get(nsName, { signal });
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
    if (!ns.metadata.deletionTimestamp) return;
    this.log.v(5).info('Namespace controller - syncNamespace', { namespace: nsName, finalizerToken: this.token });

    try {
      ns = await this.retryOnConflict(ns, (n) => this.updateNamespaceStatus(n, signal), signal);
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
    if (!ns.metadata.deletionTimestamp) return;
    if ((ns.spec?.finalizers ?? []).length === 0) return;

    const { estimate, ns: latest } = await this.deleteAllContent(ns, signal);
    if (estimate > 0) throw new ResourcesRemainingError(estimate);

    try {
      await this.retryOnConflict(latest, (n) => this.finalizeNamespace(n, signal), signal);
    } catch (e) {
      // another controller with the same token may have finished first
      if (isNotFound(e)) return;
      throw e;
    }
  }

  private async retryOnConflict(ns: Namespace, fn: (n: Namespace) => Promise<Namespace>, signal?: AbortSignal): Promise<Namespace> {
    let latest = ns;
    for (;;) {
      try {
        return await fn(latest);
      } catch (e) {
        if (!isConflict(e)) throw e;
      }
      const prev = latest;
      latest = await this.namespaces.get(prev.metadata.name!, { signal });
      if (prev.metadata.uid !== latest.metadata.uid) throw new Error('namespace uid has changed across retries');
    }
  }

  private async updateNamespaceStatus(ns: Namespace, signal?: AbortSignal): Promise<Namespace> {
    if (!ns.metadata.deletionTimestamp || ns.status?.phase === 'Terminating') return ns;
    const next: Namespace = structuredClone(ns);
    next.status = { ...(next.status ?? {}), phase: 'Terminating' };
    return this.namespaces.updateStatus(next, { signal });
  }

  private async finalizeNamespace(ns: Namespace, signal?: AbortSignal): Promise<Namespace> {
    const keep = [...new Set((ns.spec?.finalizers ?? []).filter((f) => f !== this.token))].sort();
    const next: Namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: ns.metadata, spec: { ...(ns.spec ?? {}), finalizers: keep } };
    try {
      return await this.namespaces.updateSubresource(next, 'finalize', { signal });
    } catch (e) {
      if (isNotFound(e)) return ns;
      throw e;
    }
  }

  private isSupported(op: 'list' | 'deletecollection', r: GroupVersionResource): boolean {
    return !this.notSupported.has(`${op}|${gvrKey(r)}`);
  }

  private setNotSupported(op: 'list' | 'deletecollection', r: GroupVersionResource): void {
    this.notSupported.add(`${op}|${gvrKey(r)}`);
  }

  /** Deletes all content; returns the estimate (seconds) until it is gone and the namespace as last written. */
  private async deleteAllContent(ns: Namespace, signal?: AbortSignal): Promise<{ estimate: number; ns: Namespace }> {
    const name = ns.metadata.name!;
    const deletedAt = Date.parse(ns.metadata.deletionTimestamp!);
    const errs: Error[] = [];
    const cond = new NamespaceConditionUpdater();
    let estimate = 0;

    let lists: DiscoveryResult['lists'] = [];
    try {
      const d = await this.discover(signal);
      lists = d.lists;
      if (d.error) {
        // discovery errors are not fatal: work with the groups that answered
        errs.push(d.error);
        cond.processDiscoverResourcesErr(d.error);
      }
    } catch (e) {
      errs.push(e as Error);
      cond.processDiscoverResourcesErr(e as Error);
    }
    const deletable = filterResources(lists, supportsAllVerbs('delete'));
    const { gvrs, verbs, error: gvErr } = groupVersionResources(deletable);
    if (gvErr) {
      errs.push(gvErr);
      cond.processGroupVersionErr(gvErr);
    }
    // trust discovery for the operations it does not list
    for (const r of gvrs) {
      const v = verbs.get(gvrKey(r)) ?? [];
      if (!v.includes('list')) this.setNotSupported('list', r);
      if (!v.includes('deletecollection')) this.setNotSupported('deletecollection', r);
    }

    const totals: ContentTotals = { gvrToNumRemaining: new Map(), finalizersToNumRemaining: new Map() };
    for (const r of gvrs) {
      signal?.throwIfAborted();
      let md: GVRDeletionMetadata;
      try {
        md = await this.deleteAllContentForGVR(r, name, deletedAt, signal);
      } catch (e) {
        const err = e as Error & { md?: GVRDeletionMetadata };
        if (signal?.aborted) throw e;
        errs.push(err);
        cond.processDeleteContentErr(err);
        md = err.md ?? { finalizerEstimateSeconds: 0, numRemaining: 0, finalizersToNumRemaining: new Map() };
      }
      if (md.finalizerEstimateSeconds > estimate) estimate = md.finalizerEstimateSeconds;
      if (md.numRemaining > 0) {
        totals.gvrToNumRemaining.set(gvrKey(r), { gvr: r, n: md.numRemaining });
        for (const [f, n] of md.finalizersToNumRemaining) {
          if (n) totals.finalizersToNumRemaining.set(f, (totals.finalizersToNumRemaining.get(f) ?? 0) + n);
        }
      }
    }
    cond.processContentTotals(totals);

    // conditions are always brought up to date: a condition that failed before may be fine now
    let latest = ns;
    if (cond.update(ns)) {
      try {
        latest = await this.namespaces.updateStatus(ns, { signal });
      } catch (e) {
        if (signal?.aborted) throw e;
        this.log.error(e, "Couldn't update status condition for namespace", { namespace: name });
      }
    }
    if (errs.length) throw new AggregatedError(errs);
    this.log.v(4).info('Namespace controller - deleteAllContent', { namespace: name, estimate });
    return { estimate, ns: latest };
  }

  private async deleteAllContentForGVR(r: GroupVersionResource, namespace: string, deletedAt: number, signal?: AbortSignal): Promise<GVRDeletionMetadata> {
    const none = (): GVRDeletionMetadata => ({ finalizerEstimateSeconds: 0, numRemaining: 0, finalizersToNumRemaining: new Map() });
    const fail = (e: unknown, md: GVRDeletionMetadata): never => {
      (e as { md?: GVRDeletionMetadata }).md = md;
      throw e;
    };
    const estimate = await this.estimateGracefulTermination(r, namespace, deletedAt, signal);
    const withEstimate = { ...none(), finalizerEstimateSeconds: estimate };
    const client = new ResourceClient(this.client, r, namespace);

    let collectionSupported = false;
    try {
      collectionSupported = await this.deleteCollection(client, r, signal);
    } catch (e) {
      fail(e, withEstimate);
    }
    if (!collectionSupported) {
      try {
        await this.deleteEachItem(client, r, signal);
      } catch (e) {
        fail(e, withEstimate);
      }
    }
    // verify nothing remains; remaining items are fine while a graceful estimate runs
    let items: KubeObject[] | undefined;
    try {
      items = await this.listCollection(client, r, signal);
    } catch (e) {
      fail(e, withEstimate);
    }
    if (!items) return withEstimate;
    if (items.length > 0) {
      const byFinalizer = new Map<string, number>();
      for (const it of items) for (const f of it.metadata?.finalizers ?? []) byFinalizer.set(f, (byFinalizer.get(f) ?? 0) + 1);
      // pods in their grace period remain, and are counted as remaining
      if (estimate !== 0) return { finalizerEstimateSeconds: estimate, numRemaining: items.length, finalizersToNumRemaining: byFinalizer };
      // objects held by finalizers are normal: allow time for them (and the garbage collector)
      if (byFinalizer.size > 0) return { finalizerEstimateSeconds: FINALIZER_ESTIMATE_SECONDS, numRemaining: items.length, finalizersToNumRemaining: byFinalizer };
      // nothing reported a finalizer, so they should have been deleted
      fail(new Error(`unexpected items still remain in namespace: ${namespace} for gvr: ${r.group}/${r.version}, Resource=${r.resource}`), {
        finalizerEstimateSeconds: estimate,
        numRemaining: items.length,
        finalizersToNumRemaining: new Map(),
      });
    }
    return withEstimate;
  }

  /** The longest grace period of pods still running, if the namespace was deleted more recently than that. */
  private async estimateGracefulTermination(r: GroupVersionResource, namespace: string, deletedAt: number, signal?: AbortSignal): Promise<number> {
    if (r.group !== '' || r.resource !== 'pods') return 0;
    const pods = await new ResourceClient(this.client, PODS_GVR, namespace).list({ signal });
    // (an int64, a bigint beyond 2^53; the time allowed is Go's time.Duration(estimate) * time.Second, which wraps)
    let estimate: number | bigint = 0;
    for (const p of pods.items ?? []) {
      const phase = p.status?.phase;
      if (phase === 'Succeeded' || phase === 'Failed') continue;
      const g = p.spec?.terminationGracePeriodSeconds;
      if ((typeof g === 'number' || typeof g === 'bigint') && g > estimate) estimate = g;
    }
    if (Number.isNaN(deletedAt) || Date.now() >= addGoSeconds(deletedAt, estimate)) return 0;
    return Number(estimate);
  }

  private async deleteCollection(client: ResourceClient, r: GroupVersionResource, signal?: AbortSignal): Promise<boolean> {
    if (!this.isSupported('deletecollection', r)) return false;
    try {
      // Background: the garbage collector must not add the orphan finalizer
      await client.deleteCollection({ propagationPolicy: 'Background', signal });
      return true;
    } catch (e) {
      // a resource listed in discovery may still answer 405 or 404 to collection verbs
      if (isMethodNotSupported(e) || isNotFound(e)) {
        this.setNotSupported('deletecollection', r);
        return false;
      }
      throw e;
    }
  }

  private async listCollection(client: ResourceClient, r: GroupVersionResource, signal?: AbortSignal): Promise<KubeObject[] | undefined> {
    if (!this.isSupported('list', r)) return undefined;
    try {
      const l = await client.listMetadata({ signal });
      return l.items ?? [];
    } catch (e) {
      if (isMethodNotSupported(e) || isNotFound(e)) {
        this.setNotSupported('list', r);
        return undefined;
      }
      throw e;
    }
  }

  private async deleteEachItem(client: ResourceClient, r: GroupVersionResource, signal?: AbortSignal): Promise<void> {
    const items = await this.listCollection(client, r, signal);
    if (!items) return;
    for (const it of items) {
      try {
        await client.delete(it.metadata.name!, { propagationPolicy: 'Background', signal });
      } catch (e) {
        if (!isNotFound(e) && !isMethodNotSupported(e)) throw e;
      }
    }
  }
}

// ── the controller ──────────────────────────────────────────────────────────

export interface NamespaceControllerOptions {
  /** a client of the namespace controller's own (kube-controller-manager gives it 20x QPS, 100x burst) */
  client: RESTClient;
  /** the shared namespace informer */
  informer: Informer<Namespace>;
  /** --namespace-sync-period (default 5 min) */
  resyncPeriodMs?: number;
  finalizerToken?: string;
  /** delay before an event is handled (default 5 s) */
  deletionGracePeriodMs?: number;
  discover?: NamespacedResourcesDeleterOptions['discover'];
  log?: Logger;
}

/** kube-controller-manager's nsControllerRateLimiter: retries at least every minute. */
export function namespaceRateLimiter(): MaxOfRateLimiter<string> {
  return new MaxOfRateLimiter<string>(new ItemExponentialFailureRateLimiter<string>(5, 60_000), new BucketRateLimiter<string>(10, 100));
}

export class NamespaceController {
  readonly queue = new RateLimitingQueue<string>(namespaceRateLimiter(), 'namespace');
  readonly deleter: NamespacedResourcesDeleter;
  private readonly informer: Informer<Namespace>;
  private readonly log: Logger;
  private readonly grace: number;

  constructor(o: NamespaceControllerOptions) {
    this.informer = o.informer;
    this.log = o.log ?? nopLogger;
    this.grace = o.deletionGracePeriodMs ?? NAMESPACE_DELETION_GRACE_PERIOD_MS;
    this.deleter = new NamespacedResourcesDeleter({ client: o.client, discover: o.discover, finalizerToken: o.finalizerToken, log: this.log });
    o.informer.addEventHandler(
      {
        add: (ns) => this.enqueue(ns),
        update: (_old, ns) => this.enqueue(ns),
      },
      o.resyncPeriodMs ?? 5 * 60_000,
    );
  }

  private enqueue(ns: Namespace | DeletedFinalStateUnknown<Namespace>): void {
    if (ns instanceof DeletedFinalStateUnknown) return;
    // only namespaces being deleted are of interest
    if (!ns.metadata?.deletionTimestamp) return;
    this.queue.addAfter(ns.metadata.name!, this.grace);
  }

  /**
   * Waits for the informer's cache, runs `workers` workers until `signal` aborts, then shuts the
   * queue down and waits for the workers to finish their current namespace.
   */
  run(workers: number, signal: AbortSignal): Promise<void> {
    return runQueueWorkers(
      {
        name: 'namespace controller',
        log: this.log,
        queue: this.queue,
        informers: [this.informer],
        sync: (key, s) => this.sync(key, s),
        onError: (key, e, s) => {
          if (s.aborted) {
            // stopping: the next leader picks the namespace up
          } else if (e instanceof ResourcesRemainingError) {
            const t = Math.floor(e.estimate / 2) + 1;
            this.log.v(4).info('Content remaining in namespace', { namespace: key, waitSeconds: t });
            this.queue.addAfter(key, t * 1000);
          } else {
            // rather than wait for a full resync, try again with backoff
            this.queue.addRateLimited(key);
            this.log.error(e, 'Deletion of namespace failed', { namespace: key });
          }
        },
      },
      workers,
      signal,
    );
  }

  /** One pass over a namespace key (syncNamespaceFromKey). */
  async sync(key: string, signal?: AbortSignal): Promise<void> {
    const started = Date.now();
    try {
      const ns = this.informer.get(key);
      if (!ns) {
        this.log.v(2).info('Namespace has been deleted', { namespace: key });
        return;
      }
      await this.deleter.delete(ns.metadata.name!, signal);
    } finally {
      this.log.v(4).info('Finished syncing namespace', { namespace: key, duration: `${Date.now() - started}ms` });
    }
  }
}
