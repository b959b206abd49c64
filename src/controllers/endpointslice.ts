// The EndpointSlice controller (kube-controller-manager's endpointslice-controller,
// pkg/controller/endpointslice and its reconciler, k8s.io/endpointslice): keeps the
// discovery.k8s.io/v1 EndpointSlices of every Service with a selector:
//   - one set of slices per address type the Service has (its ipFamilies; IPv4 and IPv6 for a
//     headless Service without them), named `<service>-<random>`, labelled
//     kubernetes.io/service-name, endpointslice.kubernetes.io/managed-by:
//     endpointslice-controller.k8s.io, the Service's labels (and service.kubernetes.io/headless),
//     owned by the Service (so that the garbage collector deletes them with it);
//   - an endpoint per selected pod that has an IP of that type and is not terminal, with its
//     conditions (serving: Ready; terminating: being deleted; ready: serving and not terminating,
//     or always with publishNotReadyAddresses), nodeName, the node's zone, targetRef, hostname;
//   - pods grouped by the ports the Service's ports are in them; at most --max-endpoints-per-slice
//     endpoints a slice; a placeholder slice without ports or endpoints when there is none;
//   - reconciled with little churn: endpoints updated in the slices that hold them, new ones
//     filling the slices that change anyway, then the one unchanged slice they fit best, then new
//     slices; a slice to delete turned into the one to create instead;
//   - endpoints.kubernetes.io/last-change-trigger-time on every slice written.
// As in Kubernetes, a Service that loses its selector keeps the slices it had (the controller no
// longer manages it). A deleted Service's slices are deleted by the controller (Kubernetes leaves
// them to the garbage collector, which `keelson server` does not run by default).
// Not done: topology hints (the service.kubernetes.io/topology-mode annotation and
// spec.trafficDistribution), and the controller's metrics.
//
// Kubernetes' controller watches every pod of the cluster; here the pods of a namespace are
// watched (ctx.pods) only while a Service there has a selector.
import { EventRecorder } from '../client/events.js';
import { DeletedFinalStateUnknown, type Informer } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isConflict, isNotFound, type RESTClient } from '../client/rest.js';
import { ResourceClient } from '../client/resources.js';
import { BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter, RateLimitingQueue } from '../client/workqueue.js';
import { informerOf, withClient, type ControllerDescriptor } from './context.js';
import {
  HEADLESS_LABEL,
  TRIGGER_TIME_ANNOTATION,
  ServicePodWatches,
  TriggerTimeTracker,
  canonicalJSON,
  findPort,
  isIPv6,
  isNamespaceTerminating,
  isPodReady,
  isServiceIPSet,
  keyOf,
  managesEndpoints,
  podIPs,
  podOfDelete,
  podServiceMemberships,
  podsSynced,
  rfc3339Nano,
  selectedPods,
  servicesToUpdateOnPodChange,
  shouldPodBeInEndpoints,
  shouldSetHostname,
  splitKey,
} from './endpointsutil.js';
import type { NamespacedPods } from './podwatch.js';
import { runQueueWorkers } from './workers.js';

const SLICES = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' };
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
export const LABEL_MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
export const CONTROLLER_NAME = 'endpointslice-controller.k8s.io';
const ZONE_LABEL = 'topology.kubernetes.io/zone';
/** a Service that keeps failing is dropped after this many retries (maxRetries) */
const MAX_RETRIES = 15;
/** the least wait before a Service is synced for a change to one of its slices (endpointSliceChangeMinSyncDelay) */
const SLICE_CHANGE_MIN_SYNC_DELAY_MS = 1000;

type AddressType = 'IPv4' | 'IPv6';

interface Endpoint {
  addresses: string[];
  conditions: { ready: boolean; serving: boolean; terminating: boolean };
  hostname?: string;
  targetRef?: { kind: string; namespace: string; name: string; uid: string };
  nodeName?: string;
  zone?: string;
  [k: string]: unknown;
}

interface SlicePort {
  name: string;
  protocol: string;
  port: number;
  appProtocol?: string;
}

// ---- what the slices hold ----

/** the address types of a Service (getAddressTypesForService) */
export function addressTypesOf(svc: any): AddressType[] {
  const families: unknown[] = svc?.spec?.ipFamilies ?? [];
  const out = new Set<AddressType>();
  for (const f of families) if (f === 'IPv4' || f === 'IPv6') out.add(f);
  if (out.size) return [...out];
  // (no families: an old API server's Service) by the ClusterIP, both for a headless one
  if (isServiceIPSet(svc)) return [isIPv6(svc.spec.clusterIP) ? 'IPv6' : 'IPv4'];
  return ['IPv4', 'IPv6'];
}

/** the slice ports of a pod for the Service (getEndpointPorts): a port the pod lacks left out */
function endpointPorts(svc: any, pod: any): SlicePort[] {
  const ports: any[] = svc.spec?.ports ?? [];
  if (ports.length === 0 && svc.spec?.clusterIP === 'None') return [];
  const out: SlicePort[] = [];
  for (const sp of ports) {
    const num = findPort(pod, sp);
    if (num === undefined) continue;
    const p: SlicePort = { name: sp.name ?? '', protocol: sp.protocol ?? 'TCP', port: num };
    if (sp.appProtocol !== undefined) p.appProtocol = sp.appProtocol;
    out.push(p);
  }
  return out;
}

/** the key of a set of ports, whatever their order (PortMapKey) */
function portMapKey(ports: any[] | undefined): string {
  return (ports ?? [])
    .map((p) => canonicalJSON({ name: p?.name ?? '', protocol: p?.protocol ?? '', port: p?.port ?? null, appProtocol: p?.appProtocol ?? null }))
    .sort()
    .join(',');
}

/** what makes an endpoint the same one (hashEndpoint): its addresses, hostname and target's name */
function endpointKey(ep: any): string {
  return JSON.stringify([[...(ep?.addresses ?? [])].sort(), ep?.hostname ?? '', ep?.targetRef?.namespace ?? '', ep?.targetRef?.name ?? '']);
}

/** the same endpoint with nothing else changed either (EndpointsEqualBeyondHash) */
function sameBeyondKey(a: any, b: any): boolean {
  const ref = (r: any) => (r ? canonicalJSON({ ...r, resourceVersion: undefined }) : '');
  return (
    (a.nodeName ?? null) === (b.nodeName ?? null) &&
    (a.zone ?? null) === (b.zone ?? null) &&
    (a.conditions?.ready ?? null) === (b.conditions?.ready ?? null) &&
    (a.conditions?.serving ?? null) === (b.conditions?.serving ?? null) &&
    (a.conditions?.terminating ?? null) === (b.conditions?.terminating ?? null) &&
    canonicalJSON(a.hints ?? null) === canonicalJSON(b.hints ?? null) &&
    ref(a.targetRef) === ref(b.targetRef)
  );
}

/** a pod as an endpoint of the Service (podToEndpoint) */
function podToEndpoint(pod: any, node: any, svc: any, addressType: AddressType): Endpoint {
  const serving = isPodReady(pod);
  const terminating = !!pod.metadata?.deletionTimestamp;
  // (never ready while terminating, unless the Service publishes not-ready addresses)
  const ready = svc.spec?.publishNotReadyAddresses === true || (serving && !terminating);
  const ep: Endpoint = {
    addresses: podIPs(pod).filter((ip) => isIPv6(ip) === (addressType === 'IPv6')),
    conditions: { ready, serving, terminating },
  };
  if (shouldSetHostname(pod, svc)) ep.hostname = pod.spec.hostname;
  ep.targetRef = { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid };
  if (pod.spec?.nodeName) ep.nodeName = pod.spec.nodeName;
  const zone = node?.metadata?.labels?.[ZONE_LABEL];
  if (zone) ep.zone = zone;
  return ep;
}

/** the slice's labels for the Service, and whether the Service's own labels changed (setEndpointSliceLabels) */
function sliceLabels(slice: any, svc: any, log: Logger): { labels: Record<string, string>; changed: boolean } {
  const reserved = (k: string) => k === LABEL_SERVICE_NAME || k === LABEL_MANAGED_BY || k === HEADLESS_LABEL;
  const have: Record<string, string> = {};
  for (const [k, v] of Object.entries<string>(slice?.metadata?.labels ?? {})) if (!reserved(k)) have[k] = v;
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries<string>(svc.metadata?.labels ?? {})) {
    if (reserved(k)) {
      log.info('Service using reserved endpoint slices label', { service: keyOf(svc), skipping: k, label: v });
      continue;
    }
    labels[k] = v;
  }
  const changed = canonicalJSON(have) !== canonicalJSON(labels);
  if (!isServiceIPSet(svc)) labels[HEADLESS_LABEL] = '';
  labels[LABEL_SERVICE_NAME] = svc.metadata.name;
  labels[LABEL_MANAGED_BY] = CONTROLLER_NAME;
  return { labels, changed };
}

/** a new slice of the Service (newEndpointSlice), without a name: the server generates it */
function newSlice(svc: any, ports: SlicePort[], addressType: AddressType, log: Logger): any {
  const slice: any = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      generateName: `${svc.metadata.name}-`,
      namespace: svc.metadata.namespace,
      labels: {},
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: svc.metadata.name, uid: svc.metadata.uid, controller: true, blockOwnerDeletion: true }],
    },
    addressType,
    endpoints: [],
    ports,
  };
  slice.metadata.labels = sliceLabels(slice, svc, log).labels;
  return slice;
}

/** the slice is owned by this Service (not one of the same name deleted before) */
function ownedBy(slice: any, svc: any): boolean {
  return (slice?.metadata?.ownerReferences ?? []).some((o: any) => o?.uid === svc.metadata.uid && o.kind === 'Service' && o.apiVersion === 'v1');
}

/** a copy of a slice that the reconciler may change (never the informer's object) */
function copySlice(slice: any): any {
  return { ...slice, metadata: { ...slice.metadata, labels: { ...(slice.metadata?.labels ?? {}) }, annotations: { ...(slice.metadata?.annotations ?? {}) } }, endpoints: [...(slice.endpoints ?? [])] };
}

// ---- what was written, as the informer has not seen it yet ----

/**
 * The generations of the slices this controller wrote, per Service (EndpointSliceTracker): a sync
 * from an informer that has not yet seen them (an older generation, a slice expected deleted, a
 * slice missing) waits, and the informer's events of the controller's own writes do not requeue.
 */
export class EndpointSliceTracker {
  private readonly byService = new Map<string, Map<string, number>>();
  static readonly DELETION_EXPECTED = -1;

  private gens(slice: any, create = false): Map<string, number> | undefined {
    const key = `${slice?.metadata?.namespace}/${slice?.metadata?.labels?.[LABEL_SERVICE_NAME] ?? ''}`;
    let g = this.byService.get(key);
    if (!g && create) this.byService.set(key, (g = new Map()));
    return g;
  }

  has(slice: any): boolean {
    return this.gens(slice)?.has(slice.metadata.uid) ?? false;
  }

  /** the slice changed in a way this controller did not write: the Service is synced again */
  shouldSync(slice: any): boolean {
    const g = this.gens(slice)?.get(slice.metadata.uid);
    return g === undefined || (slice.metadata.generation ?? 0) > g;
  }

  /** the informer is behind the controller's writes for this Service */
  staleSlices(svcKey: string, slices: any[]): boolean {
    const gens = this.byService.get(svcKey);
    if (!gens) return false;
    const seen = new Set<string>();
    for (const s of slices) {
      seen.add(s.metadata.uid);
      const g = gens.get(s.metadata.uid);
      if (g !== undefined && (g === EndpointSliceTracker.DELETION_EXPECTED || g > (s.metadata.generation ?? 0))) return true;
    }
    for (const [uid, g] of gens) if (g !== EndpointSliceTracker.DELETION_EXPECTED && !seen.has(uid)) return true;
    return false;
  }

  update(slice: any): void {
    this.gens(slice, true)!.set(slice.metadata.uid, slice.metadata.generation ?? 0);
  }

  expectDeletion(slice: any): void {
    this.gens(slice, true)!.set(slice.metadata.uid, EndpointSliceTracker.DELETION_EXPECTED);
  }

  /** a slice went; false when that was not expected (so the Service is synced again) */
  handleDeletion(slice: any): boolean {
    const gens = this.gens(slice);
    if (!gens) return true;
    const g = gens.get(slice.metadata.uid);
    gens.delete(slice.metadata.uid);
    if (gens.size === 0) this.byService.delete(`${slice.metadata.namespace}/${slice.metadata.labels?.[LABEL_SERVICE_NAME] ?? ''}`);
    return g === EndpointSliceTracker.DELETION_EXPECTED;
  }

  deleteService(svcKey: string): void {
    this.byService.delete(svcKey);
  }
}

class StaleInformerCache extends Error {}

// ---- the controller ----

export interface EndpointSliceControllerOptions {
  client: RESTClient;
  services: Informer<any>;
  /** the slices managed by this controller (label selector managed-by) */
  slices: Informer<any>;
  nodes: Informer<any>;
  pods: NamespacedPods;
  recorder?: EventRecorder;
  /** --max-endpoints-per-slice */
  maxEndpointsPerSlice: number;
  /** --endpointslice-updates-batch-period */
  batchPeriodMs?: number;
  log?: Logger;
}

interface Plan {
  create: any[];
  update: any[];
  delete: any[];
}

export class EndpointSliceController {
  // (1s doubling to 1000s, with the overall 10 qps bucket)
  readonly queue = new RateLimitingQueue<string>(new MaxOfRateLimiter<string>(new ItemExponentialFailureRateLimiter<string>(1000, 1000_000), new BucketRateLimiter<string>(10, 100)), 'endpoint_slice');
  private readonly log: Logger;
  private readonly triggers = new TriggerTimeTracker();
  private readonly tracker = new EndpointSliceTracker();
  private readonly watches: ServicePodWatches;

  constructor(private readonly o: EndpointSliceControllerOptions) {
    this.log = o.log ?? nopLogger;
    this.watches = new ServicePodWatches(o.pods, 'endpointslice');
    o.services.addEventHandler({
      add: (svc) => this.onService(svc),
      update: (_old, svc) => this.onService(svc),
      delete: (svc) => {
        const key = keyOf(svc);
        if (!key) return;
        this.watches.forget(key);
        this.queue.add(key);
      },
    });
    const batch = o.batchPeriodMs ?? 0;
    o.pods.addEventHandler({
      add: (pod) => this.onPod(pod),
      update: (old, pod) => {
        for (const key of servicesToUpdateOnPodChange(o.services, old, pod)) this.queue.addAfter(key, batch);
      },
      delete: (pod) => this.onPod(podOfDelete(pod)),
    });
    o.slices.addEventHandler({
      add: (s) => {
        if (managed(s) && this.tracker.shouldSync(s)) this.queueForSlice(s);
      },
      update: (old, s) => {
        // (a changed service-name label: both Services)
        if (old?.metadata?.labels?.[LABEL_SERVICE_NAME] !== s?.metadata?.labels?.[LABEL_SERVICE_NAME]) {
          this.queueForSlice(old);
          this.queueForSlice(s);
          return;
        }
        if (managed(old) !== managed(s) || (managed(s) && this.tracker.shouldSync(s))) this.queueForSlice(s);
      },
      delete: (obj) => {
        const s = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
        // (the informer holds managed slices only: a slice whose managed-by label went leaves it too)
        if (s && !managed(s)) this.queueForSlice(s);
        else if (s && this.tracker.has(s) && !this.tracker.handleDeletion(s)) this.queueForSlice(s);
      },
    });
  }

  private onService(svc: any): void {
    this.watches.track(svc);
    const key = keyOf(svc);
    if (key) this.queue.add(key);
  }

  private onPod(pod: any): void {
    for (const key of podServiceMemberships(this.o.services, pod)) this.queue.addAfter(key, this.o.batchPeriodMs ?? 0);
  }

  /** a slice someone else changed: its Service is synced after a little while */
  private queueForSlice(slice: any): void {
    const svc = slice?.metadata?.labels?.[LABEL_SERVICE_NAME];
    if (!svc || !slice.metadata.namespace) return;
    this.queue.addAfter(`${slice.metadata.namespace}/${svc}`, Math.max(SLICE_CHANGE_MIN_SYNC_DELAY_MS, this.o.batchPeriodMs ?? 0));
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    try {
      await runQueueWorkers(
        {
          name: 'endpoint slice controller',
          log: this.log,
          queue: this.queue,
          informers: [this.o.services, this.o.slices, this.o.nodes],
          sync: (key, s) => this.sync(key, s),
          onError: (key, err) => this.handleError(key, err),
        },
        workers,
        signal,
      );
    } finally {
      this.watches.stop();
    }
  }

  private handleError(key: string, err: unknown): void {
    if (err instanceof StaleInformerCache) {
      this.log.v(4).info('Stale informer cache, retrying', { service: key, err: err.message });
      this.queue.addRateLimited(key);
      return;
    }
    if (this.queue.numRequeues(key) < MAX_RETRIES) {
      this.log.info('Error syncing endpoint slices for service, retrying', { key, err: String((err as Error)?.message ?? err) });
      this.queue.addRateLimited(key);
      return;
    }
    this.log.info('Retry budget exceeded, dropping service out of the queue', { key, err: String((err as Error)?.message ?? err) });
    this.queue.forget(key);
  }

  /** brings one Service's slices in line (syncService) */
  async sync(key: string, signal: AbortSignal): Promise<void> {
    const { namespace, name } = splitKey(key);
    const svc = this.o.services.getByName(namespace, name);
    if (!svc) {
      this.triggers.deleteService(key);
      this.tracker.deleteService(key);
      await this.deleteSlicesOfGoneService(namespace, name, signal);
      return;
    }
    if (!managesEndpoints(svc)) return;
    if (!(await podsSynced(this.o.pods, namespace, signal))) {
      if (signal.aborted) return;
      throw new Error(`the pods of namespace ${namespace} are not listed yet`);
    }
    const pods = selectedPods(svc, this.o.pods.list(namespace));
    const slices = this.o.slices
      .list()
      .filter((s) => s?.metadata?.namespace === namespace && s.metadata.labels?.[LABEL_SERVICE_NAME] === name && managed(s))
      // (slices being deleted are left to go)
      .filter((s) => !s.metadata.deletionTimestamp);
    if (this.tracker.staleSlices(key, slices)) throw new StaleInformerCache('EndpointSlice informer cache is out of date');
    const triggerTime = this.triggers.compute(svc, pods);
    try {
      await this.reconcile(svc, pods, slices, triggerTime, signal);
    } catch (e) {
      if (signal.aborted) return;
      void this.o.recorder?.event({ ...svc, kind: 'Service', apiVersion: 'v1' }, 'Warning', 'FailedToUpdateEndpointSlices', `Error updating Endpoint Slices for Service ${key}: ${(e as Error).message}`);
      throw e;
    }
  }

  /**
   * The slices of a Service that is gone. Kubernetes leaves them to the garbage collector (the
   * Service owns them); a server may run without it (--enable-garbage-collector=false), so the
   * controller deletes them itself. (With the collector on, whichever comes second finds them
   * gone.)
   */
  private async deleteSlicesOfGoneService(namespace: string, name: string, signal: AbortSignal): Promise<void> {
    const client = new ResourceClient<any>(this.o.client, SLICES, namespace);
    for (const s of this.o.slices.list()) {
      if (s?.metadata?.namespace !== namespace || s.metadata.labels?.[LABEL_SERVICE_NAME] !== name || !managed(s) || s.metadata.deletionTimestamp) continue;
      try {
        await client.delete(s.metadata.name, { signal, preconditions: { uid: s.metadata.uid } });
      } catch (e) {
        // (gone already, or replaced by a slice of a new Service of that name)
        if (!isNotFound(e) && !isConflict(e)) throw e;
      }
    }
  }

  /** the slices of each address type, then those of a type the Service no longer has deleted (Reconcile) */
  private async reconcile(svc: any, pods: any[], slices: any[], triggerTime: number, signal: AbortSignal): Promise<void> {
    const types = addressTypesOf(svc);
    const errors: string[] = [];
    const toDelete: any[] = [];
    const byType = new Map<AddressType, any[]>();
    for (const s of slices) {
      if (!types.includes(s.addressType)) toDelete.push(s);
      else byType.set(s.addressType, [...(byType.get(s.addressType) ?? []), s]);
    }
    for (const t of types) {
      try {
        await this.reconcileByAddressType(svc, pods, byType.get(t) ?? [], t, triggerTime, signal, errors);
      } catch (e) {
        errors.push((e as Error).message);
      }
    }
    for (const s of toDelete) {
      try {
        await this.slicesClient(svc).delete(s.metadata.name, { signal });
        this.tracker.expectDeletion(s);
      } catch (e) {
        errors.push(`error deleting ${s.metadata.name} EndpointSlice for Service ${keyOf(svc)}: ${(e as Error).message}`);
      }
    }
    if (errors.length === 1) throw new Error(errors[0]);
    if (errors.length) throw new Error(`[${errors.join(', ')}]`);
  }

  private slicesClient(svc: any): ResourceClient<any> {
    return new ResourceClient<any>(this.o.client, SLICES, svc.metadata.namespace);
  }

  /** the desired endpoints of one address type, grouped by ports, against the slices there are (reconcileByAddressType) */
  private async reconcileByAddressType(svc: any, pods: any[], existing: any[], addressType: AddressType, triggerTime: number, signal: AbortSignal, errors: string[]): Promise<void> {
    const plan: Plan = { create: [], update: [], delete: [] };
    const existingByPorts = new Map<string, any[]>();
    for (const s of existing) {
      if (!ownedBy(s, svc)) {
        plan.delete.push(s);
        continue;
      }
      const k = portMapKey(s.ports);
      existingByPorts.set(k, [...(existingByPorts.get(k) ?? []), s]);
    }
    const desired = new Map<string, { ports: SlicePort[]; endpoints: Map<string, Endpoint> }>();
    for (const pod of pods) {
      if (!shouldPodBeInEndpoints(pod, true)) continue;
      const ports = endpointPorts(svc, pod);
      const k = portMapKey(ports);
      let d = desired.get(k);
      if (!d) desired.set(k, (d = { ports, endpoints: new Map() }));
      const node = pod.spec?.nodeName ? this.o.nodes.get(pod.spec.nodeName) : undefined;
      // A pod on a node that does not exist is left out and the Service retried (the pod garbage
      // collector deletes such pods); published anyway with publishNotReadyAddresses. A pod on no
      // node at all, which has an IP only because something wrote it (there is no node agent
      // here; in Kubernetes an unscheduled pod has no IP), is published without nodeName and
      // zone, as the endpoints controller publishes it.
      if (!node && pod.spec?.nodeName && svc.spec?.publishNotReadyAddresses !== true) {
        this.log.info('skipping Pod for Service, Node not found', { pod: keyOf(pod), service: keyOf(svc), node: pod.spec?.nodeName ?? '' });
        errors.push(`skipping Pod ${pod.metadata.name} for Service ${keyOf(svc)}: node ${JSON.stringify(pod.spec?.nodeName ?? '')} not found`);
        continue;
      }
      const ep = podToEndpoint(pod, node, svc, addressType);
      if (ep.addresses.length) d.endpoints.set(endpointKey(ep), ep);
    }
    for (const [k, d] of desired) {
      const p = this.reconcileByPorts(svc, existingByPorts.get(k) ?? [], d.endpoints, d.ports, addressType);
      plan.create.push(...p.create);
      plan.update.push(...p.update);
      plan.delete.push(...p.delete);
    }
    // slices of port sets no longer wanted
    for (const [k, list] of existingByPorts) if (!desired.has(k)) plan.delete.push(...list);
    // no slice would be left: a placeholder (kept when it is the one there already)
    if (existing.length === plan.delete.length && plan.create.length === 0) {
      const placeholder = newSlice(svc, [], addressType, this.log);
      if (plan.delete.length === 1 && isPlaceholderOf(plan.delete[0], placeholder)) plan.delete = [];
      else plan.create.push(placeholder);
    }
    await this.finalize(svc, plan, triggerTime, signal);
  }

  /** the slices of one set of ports: endpoints kept in place, new ones filling slices up (reconcileByPortMapping) */
  private reconcileByPorts(svc: any, existing: any[], want: Map<string, Endpoint>, ports: SlicePort[], addressType: AddressType): Plan {
    const max = this.o.maxEndpointsPerSlice;
    const byName = new Map<string, any>();
    const unchanged = new Set<string>();
    const toUpdate = new Set<string>();
    const toDelete = new Set<string>();
    // 1. the endpoints of each slice: still wanted (perhaps changed), or gone
    for (const s of existing) {
      byName.set(s.metadata.name, s);
      const kept: any[] = [];
      let changed = false;
      for (const ep of s.endpoints ?? []) {
        const k = endpointKey(ep);
        const got = want.get(k);
        if (!got) continue;
        kept.push(got);
        if (!sameBeyondKey(got, ep)) changed = true;
        want.delete(k);
      }
      const { labels, changed: labelsChanged } = sliceLabels(s, svc, this.log);
      if (changed || kept.length !== (s.endpoints ?? []).length) {
        if (kept.length === 0) toDelete.add(s.metadata.name);
        else {
          const c = copySlice(s);
          c.endpoints = kept;
          c.metadata.labels = labels;
          byName.set(s.metadata.name, c);
          toUpdate.add(s.metadata.name);
        }
      } else if (labelsChanged) {
        const c = copySlice(s);
        c.metadata.labels = labels;
        byName.set(s.metadata.name, c);
        toUpdate.add(s.metadata.name);
      } else unchanged.add(s.metadata.name);
    }
    const pending = [...want.values()];
    // 2. the new endpoints fill the slices that change anyway, the fullest first
    if (pending.length && toUpdate.size) {
      const fill = [...toUpdate].map((n) => byName.get(n)).sort((a, b) => b.endpoints.length - a.endpoints.length);
      for (const s of fill) while (pending.length && s.endpoints.length < max) s.endpoints.push(pending.shift());
    }
    // 3. the rest: into the unchanged slice they fit best when fewer than a slice, else new slices
    const create: any[] = [];
    while (pending.length) {
      let target: any;
      if (pending.length < max && unchanged.size) {
        const best = sliceToFill([...unchanged].map((n) => byName.get(n)), pending.length, max);
        if (best) {
          target = copySlice(best);
          byName.set(target.metadata.name, target);
        }
      }
      target ??= newSlice(svc, ports, addressType, this.log);
      while (pending.length && target.endpoints.length < max) target.endpoints.push(pending.shift());
      if (target.metadata.name) {
        toUpdate.add(target.metadata.name);
        unchanged.delete(target.metadata.name);
      } else create.push(target);
    }
    return { create, update: [...toUpdate].map((n) => byName.get(n)), delete: [...toDelete].map((n) => byName.get(n)) };
  }

  /** the writes: creates turned into updates of slices to delete, then creates, updates, deletes (finalize) */
  private async finalize(svc: any, plan: Plan, triggerTime: number, signal: AbortSignal): Promise<void> {
    for (let i = 0; i < plan.delete.length && plan.create.length; ) {
      const del = plan.delete[i];
      const c = plan.create[plan.create.length - 1];
      // (only a slice of this Service, of the same address type: addressType is immutable)
      if (del.addressType === c.addressType && ownedBy(del, svc)) {
        c.metadata.name = del.metadata.name;
        delete c.metadata.generateName;
        plan.create.pop();
        plan.update.push(c);
        plan.delete.splice(i, 1);
      } else i++;
    }
    const client = this.slicesClient(svc);
    const key = keyOf(svc);
    // (no new slices for a Service being deleted: the garbage collector is deleting them)
    if (!svc.metadata.deletionTimestamp) {
      for (const s of plan.create) {
        setTriggerTime(s, triggerTime);
        try {
          this.tracker.update(await client.create(wireForm(s), { signal }));
        } catch (e) {
          if (isNamespaceTerminating(e)) return;
          throw new Error(`failed to create EndpointSlice for Service ${key}: ${(e as Error).message}`);
        }
      }
    }
    for (const s of plan.update) {
      setTriggerTime(s, triggerTime);
      try {
        this.tracker.update(await client.update(wireForm(s), { signal }));
      } catch (e) {
        throw new Error(`failed to update ${s.metadata.name} EndpointSlice for Service ${key}: ${(e as Error).message}`);
      }
    }
    for (const s of plan.delete) {
      try {
        await client.delete(s.metadata.name, { signal });
      } catch (e) {
        if (!isNotFound(e)) throw new Error(`failed to delete ${s.metadata.name} EndpointSlice for Service ${key}: ${(e as Error).message}`);
      }
      this.tracker.expectDeletion(s);
    }
    if (plan.create.length + plan.update.length + plan.delete.length) this.log.v(4).info('Reconciled endpoint slices', { service: key, created: plan.create.length, updated: plan.update.length, deleted: plan.delete.length });
  }
}

/** managed by this controller */
function managed(slice: any): boolean {
  return slice?.metadata?.labels?.[LABEL_MANAGED_BY] === CONTROLLER_NAME;
}

/** the unchanged slice that `n` more endpoints fill most (getSliceToFill) */
function sliceToFill(slices: any[], n: number, max: number): any {
  let closest = max;
  let best: any;
  for (const s of slices) {
    const diff = max - (n + (s.endpoints?.length ?? 0));
    if (diff >= 0 && diff < closest) {
      closest = diff;
      best = s;
      if (diff === 0) break;
    }
  }
  return best;
}

/** an existing slice that is the placeholder as it would be made now (no endpoints, no ports, same labels and owner) */
function isPlaceholderOf(slice: any, placeholder: any): boolean {
  return (
    slice.metadata?.namespace === placeholder.metadata.namespace &&
    slice.addressType === placeholder.addressType &&
    (slice.endpoints ?? []).length === 0 &&
    (slice.ports ?? []).length === 0 &&
    canonicalJSON(slice.metadata?.labels ?? {}) === canonicalJSON(placeholder.metadata.labels) &&
    canonicalJSON((slice.metadata?.ownerReferences ?? []).map((r: any) => ({ ...r }))) === canonicalJSON(placeholder.metadata.ownerReferences)
  );
}

/**
 * The slice as Kubernetes stores it: empty endpoints and ports are null (the fields are not
 * omitted when empty, and an empty list comes back from storage as none), as a placeholder
 * slice reads in Kubernetes.
 */
function wireForm(slice: any): any {
  return { ...slice, endpoints: slice.endpoints?.length ? slice.endpoints : null, ports: slice.ports?.length ? slice.ports : null };
}

/** the last-change-trigger-time annotation, dropped when the sync has no trigger time (addTriggerTimeAnnotation) */
function setTriggerTime(slice: any, t: number): void {
  const annotations: Record<string, string> = { ...(slice.metadata.annotations ?? {}) };
  if (t) annotations[TRIGGER_TIME_ANNOTATION] = rfc3339Nano(t);
  else delete annotations[TRIGGER_TIME_ANNOTATION];
  if (Object.keys(annotations).length) slice.metadata.annotations = annotations;
  else delete slice.metadata.annotations;
}

export const endpointSliceControllerDescriptor: ControllerDescriptor = {
  name: 'endpointslice-controller',
  async run(ctx) {
    await withClient(ctx, 'endpointslice-controller', undefined, async (client) => {
      const c = new EndpointSliceController({
        client,
        services: informerOf<any>(ctx, { group: '', version: 'v1', resource: 'services' }),
        slices: informerOf<any>(ctx, SLICES, { labelSelector: `${LABEL_MANAGED_BY}=${CONTROLLER_NAME}` }),
        nodes: informerOf<any>(ctx, { group: '', version: 'v1', resource: 'nodes' }),
        pods: ctx.pods,
        recorder: new EventRecorder(client, 'endpoint-slice-controller', ctx.log),
        maxEndpointsPerSlice: ctx.options.maxEndpointsPerSlice,
        batchPeriodMs: ctx.options.endpointSliceUpdatesBatchPeriodMs,
        log: ctx.log,
      });
      await c.run(ctx.options.concurrentServiceEndpointSyncs, ctx.signal);
    });
  },
};
