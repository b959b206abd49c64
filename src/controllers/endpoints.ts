// The endpoints controller (kube-controller-manager's endpoints-controller, pkg/controller/endpoint):
// keeps, for every Service with a selector, the core/v1 Endpoints of the same name:
//   - an address per selected pod that has an IP of the Service's first IP family, is not
//     terminal (Succeeded, Failed) and is not being deleted (unless publishNotReadyAddresses):
//     ip, nodeName, targetRef, and hostname when the pod's subdomain is the Service;
//   - ready pods in addresses, the others in notReadyAddresses (all in addresses with
//     publishNotReadyAddresses);
//   - the ports each Service port's targetPort is in the pod (a named port the pod does not have
//     leaves the pod out of that port), then the subsets repacked: one subset per set of
//     addresses that offer the same ports, sorted;
//   - the Service's labels, plus service.kubernetes.io/headless on a headless Service's;
//     endpoints.kubernetes.io/last-change-trigger-time; more than 1000 addresses truncated with
//     endpoints.kubernetes.io/over-capacity: truncated;
//   - written only when it differs; deleted with the Service; recreated when deleted under it.
// Services without a selector (and ExternalName ones) are left alone: their Endpoints are their
// users' (default/kubernetes is the API server's). As in Kubernetes, Endpoints left over from
// Services deleted while the controller was not running are deleted when it starts.
//
// Kubernetes' controller watches every pod of the cluster; here the pods of a namespace are
// watched (ctx.pods) only while a Service there has a selector. Unlike Kubernetes: an address of a
// pod without a node has no nodeName (Kubernetes writes "", which validation refuses; with no
// kubelet here pods get their IPs by hand, scheduled or not), and a pod that turns Succeeded or
// Failed is noticed by its phase too, not only by its Ready condition, which no kubelet sets here;
// and a sync waits (up to 2 s) for the informer to see its own write, so that the next sync does
// not trip over it (Kubernetes retries those conflicts, with a warning event).
import { createHash } from 'node:crypto';
import { EventRecorder } from '../client/events.js';
import { type Informer } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isForbidden, isNotFound, type RESTClient } from '../client/rest.js';
import { ResourceClient } from '../client/resources.js';
import { MaxOfRateLimiter, ItemExponentialFailureRateLimiter, BucketRateLimiter, RateLimitingQueue } from '../client/workqueue.js';
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

const ENDPOINTS = { group: '', version: 'v1', resource: 'endpoints' };
/** the most addresses an Endpoints holds (maxCapacity) */
export const MAX_ENDPOINTS_CAPACITY = 1000;
export const OVER_CAPACITY_ANNOTATION = 'endpoints.kubernetes.io/over-capacity';
/** the annotation of a leader-election record kept in an Endpoints (never a leftover) */
const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';
/** a Service that keeps failing is dropped after this many retries (maxRetries) */
const MAX_RETRIES = 15;

// ---- the Endpoints of a Service, computed ----

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: { kind: string; namespace: string; name: string; uid: string };
}
export interface EndpointPort {
  name?: string;
  port: number;
  protocol?: string;
  appProtocol?: string;
}
export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointPort[];
}

/**
 * The pod's address for the Service (podToEndpointAddressForService): the pod IP of the Service's
 * first IP family (from its ClusterIP, else the pod's IP, when the Service has no ipFamilies).
 */
export function podAddress(svc: any, pod: any): EndpointAddress | undefined {
  const spec = svc?.spec ?? {};
  let v6: boolean;
  if (Array.isArray(spec.ipFamilies) && spec.ipFamilies.length) v6 = spec.ipFamilies[0] === 'IPv6';
  else if (isServiceIPSet(svc)) v6 = isIPv6(spec.clusterIP);
  else v6 = isIPv6(pod?.status?.podIP);
  const ips: string[] = (pod?.status?.podIPs ?? []).map((p: any) => p?.ip);
  if (!ips.length && pod?.status?.podIP) ips.push(pod.status.podIP);
  const ip = ips.find((x) => typeof x === 'string' && isIPv6(x) === v6);
  if (!ip) return undefined;
  const addr: EndpointAddress = { ip };
  if (shouldSetHostname(pod, svc)) addr.hostname = pod.spec.hostname;
  // (Kubernetes writes the pod's nodeName even when empty, which validation then refuses; a pod
  // with an IP is always scheduled there, not here where status is written by hand: left out)
  if (pod.spec?.nodeName) addr.nodeName = pod.spec.nodeName;
  addr.targetRef = { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid };
  return addr;
}

/** an EndpointPort from a Service port and the number it is in a pod (endpointPortFromServicePort) */
function endpointPort(servicePort: any, port: number): EndpointPort {
  // (an empty name is left out, as Go's encoding of the Endpoints omits it)
  const p: EndpointPort = servicePort.name ? { name: servicePort.name, port, protocol: servicePort.protocol ?? 'TCP' } : { port, protocol: servicePort.protocol ?? 'TCP' };
  if (servicePort.appProtocol !== undefined) p.appProtocol = servicePort.appProtocol;
  return p;
}

/** the subsets of a Service from its pods, one per pod and port, before repacking; with the counts */
export function podSubsets(svc: any, pods: any[], log: Logger = nopLogger): { subsets: EndpointSubset[]; ready: number; notReady: number } {
  const publishNotReady = svc.spec?.publishNotReadyAddresses === true;
  const subsets: EndpointSubset[] = [];
  let ready = 0;
  let notReady = 0;
  const add = (pod: any, addr: EndpointAddress, port: EndpointPort | undefined): void => {
    const ports = port ? [port] : [];
    if (publishNotReady || isPodReady(pod)) {
      subsets.push({ addresses: [addr], ports });
      ready++;
    } else {
      subsets.push({ notReadyAddresses: [addr], ports });
      notReady++;
    }
  };
  for (const pod of pods) {
    if (!shouldPodBeInEndpoints(pod, publishNotReady)) continue;
    const addr = podAddress(svc, pod);
    if (!addr) {
      log.v(2).info('Failed to find endpoint for service with ClusterIP on pod with error', { service: keyOf(svc), clusterIP: svc.spec?.clusterIP, pod: keyOf(pod), error: `failed to find a matching endpoint for service ${svc.metadata.name}` });
      continue;
    }
    const servicePorts: any[] = svc.spec?.ports ?? [];
    // (a headless Service may have no ports: its pods' addresses alone)
    if (servicePorts.length === 0) {
      if (svc.spec?.clusterIP === 'None') add(pod, addr, undefined);
      continue;
    }
    for (const sp of servicePorts) {
      const num = findPort(pod, sp);
      if (num === undefined) {
        log.v(4).info('Failed to find port for service', { service: keyOf(svc), error: `no suitable port for manifest: ${pod.metadata?.uid}` });
        continue;
      }
      add(pod, { ...addr }, endpointPort(sp, num));
    }
  }
  return { subsets, ready, notReady };
}

/** the order of addresses: by IP (bytewise), then by target uid (LessEndpointAddress) */
function lessAddress(a: EndpointAddress, b: EndpointAddress): number {
  if (a.ip !== b.ip) return Buffer.compare(Buffer.from(a.ip), Buffer.from(b.ip));
  if (!b.targetRef) return a.targetRef ? 1 : 0;
  if (!a.targetRef) return -1;
  return a.targetRef.uid < b.targetRef.uid ? -1 : a.targetRef.uid > b.targetRef.uid ? 1 : 0;
}

const portKey = (p: EndpointPort): string => canonicalJSON([p.name ?? '', p.port, p.protocol ?? '', p.appProtocol ?? null]);

// ---- the order Kubernetes sorts ports and subsets in ----
// SortSubsets orders ports and subsets by the md5 of their Go representation as
// hashutil.DeepHashObject prints it (go-spew's %#v with types: `(v1.EndpointPort){Name:(string)http
// Port:(int32)80 ...}`). The same text is made here from the fields, in the Go types' field order,
// so that the order is Kubernetes' own.

const goPtr = (v: string | undefined): string => (v === undefined ? '(*string)<nil>' : `(*string)${v}`);
const goSlice = <T>(type: string, items: T[] | undefined, f: (x: T) => string): string => (items === undefined ? `(${type})<nil>` : `(${type})[${items.map(f).join(' ')}]`);

function goPortFields(p: EndpointPort): string {
  return `{Name:(string)${p.name ?? ''} Port:(int32)${p.port} Protocol:(v1.Protocol)${p.protocol ?? ''} AppProtocol:${goPtr(p.appProtocol)}}`;
}

function goAddressFields(a: EndpointAddress): string {
  const r = a.targetRef;
  const ref = r
    ? `(*v1.ObjectReference){Kind:(string)${r.kind} Namespace:(string)${r.namespace} Name:(string)${r.name} UID:(types.UID)${r.uid} APIVersion:(string) ResourceVersion:(string) FieldPath:(string)}`
    : '(*v1.ObjectReference)<nil>';
  return `{IP:(string)${a.ip} Hostname:(string)${a.hostname ?? ''} NodeName:${goPtr(a.nodeName)} TargetRef:${ref}}`;
}

const md5 = (s: string): string => createHash('md5').update(s).digest('hex');
export const portHash = (p: EndpointPort): string => md5(`(v1.EndpointPort)${goPortFields(p)}`);
export const subsetHash = (s: EndpointSubset): string =>
  md5(
    `(v1.EndpointSubset){Addresses:${goSlice('[]v1.EndpointAddress', s.addresses, goAddressFields)} NotReadyAddresses:${goSlice('[]v1.EndpointAddress', s.notReadyAddresses, goAddressFields)} Ports:${goSlice('[]v1.EndpointPort', s.ports, goPortFields)}}`,
  );

function byKey<T>(key: (x: T) => string): (a: T, b: T) => number {
  return (a, b) => {
    const ka = key(a);
    const kb = key(b);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  };
}

/**
 * Repacks subsets as endpoints.RepackSubsets does: each address offering a port, ready unless it is
 * not ready for any of the subsets that list it with that port; then the addresses that offer the
 * same ports (with the same readiness) grouped in one subset; addresses sorted by IP and uid,
 * ports and subsets by their hash (SortSubsets).
 */
export function repackSubsets(subsets: EndpointSubset[]): EndpointSubset[] {
  const addrs = new Map<string, EndpointAddress>();
  /** port key -> (address key -> ready) */
  const byPort = new Map<string, { port: EndpointPort | undefined; addrs: Map<string, boolean> }>();
  const note = (addr: EndpointAddress, port: EndpointPort | undefined, ready: boolean): void => {
    const ak = `${addr.ip}|${addr.targetRef?.uid ?? ''}`;
    if (!addrs.has(ak)) addrs.set(ak, addr);
    const pk = port ? portKey(port) : 'sentinel';
    let e = byPort.get(pk);
    if (!e) byPort.set(pk, (e = { port, addrs: new Map() }));
    // (not ready wins over ready)
    if (e.addrs.get(ak) !== false) e.addrs.set(ak, ready);
  };
  for (const s of subsets) {
    const ports = s.ports?.length ? s.ports : [undefined];
    for (const port of ports) {
      for (const a of s.addresses ?? []) note(a, port, true);
      for (const a of s.notReadyAddresses ?? []) note(a, port, false);
    }
  }
  // group the ports by the set of addresses (and readiness) that offers them
  const groups = new Map<string, { addrs: Map<string, boolean>; ports: EndpointPort[] }>();
  for (const { port, addrs: set } of byPort.values()) {
    const gk = [...set.entries()].map(([k, r]) => `${k}=${r}`).sort().join(',');
    let g = groups.get(gk);
    if (!g) groups.set(gk, (g = { addrs: set, ports: [] }));
    if (port) g.ports.push(port);
  }
  const out: EndpointSubset[] = [];
  for (const g of groups.values()) {
    const ready: EndpointAddress[] = [];
    const notReady: EndpointAddress[] = [];
    for (const [k, r] of g.addrs) (r ? ready : notReady).push(addrs.get(k)!);
    const s: EndpointSubset = {};
    if (ready.length) s.addresses = ready.sort(lessAddress);
    if (notReady.length) s.notReadyAddresses = notReady.sort(lessAddress);
    if (g.ports.length) s.ports = g.ports.sort(byKey(portHash));
    out.push(s);
  }
  return out.sort(byKey(subsetHash));
}

const countAddresses = (subsets: EndpointSubset[] | undefined): number => (subsets ?? []).reduce((n, s) => n + (s.addresses?.length ?? 0) + (s.notReadyAddresses?.length ?? 0), 0);

/**
 * Cuts subsets down to MAX_ENDPOINTS_CAPACITY addresses (truncateEndpoints): the not-ready ones
 * first, each subset keeping its share (rounded up) of what is left; when the ready ones alone are
 * too many, every not-ready one goes and the ready ones are shared out. True when it cut.
 */
export function truncateSubsets(subsets: EndpointSubset[]): boolean {
  let totalReady = 0;
  let totalNotReady = 0;
  for (const s of subsets) {
    totalReady += s.addresses?.length ?? 0;
    totalNotReady += s.notReadyAddresses?.length ?? 0;
  }
  if (totalReady + totalNotReady <= MAX_ENDPOINTS_CAPACITY) return false;
  const truncateReady = totalReady > MAX_ENDPOINTS_CAPACITY;
  const max = truncateReady ? MAX_ENDPOINTS_CAPACITY : MAX_ENDPOINTS_CAPACITY - totalReady;
  const numTotal = truncateReady ? totalReady : totalNotReady;
  let canBeAdded = max;
  for (const s of subsets) {
    const inSubset = (truncateReady ? s.addresses?.length : s.notReadyAddresses?.length) ?? 0;
    const toBeAdded = Math.min(Math.ceil((inSubset / numTotal) * max), canBeAdded);
    if (truncateReady) {
      s.addresses = s.addresses?.slice(0, toBeAdded);
      delete s.notReadyAddresses;
      canBeAdded -= s.addresses?.length ?? 0;
    } else {
      s.notReadyAddresses = s.notReadyAddresses?.slice(0, toBeAdded);
      canBeAdded -= s.notReadyAddresses?.length ?? 0;
    }
  }
  return true;
}

/** subsets compared as Kubernetes does, ignoring the targets' resourceVersions (endpointSubsetsEqualIgnoreResourceVersion) */
function sameSubsets(a: any[] | undefined, b: EndpointSubset[]): boolean {
  const norm = (subsets: any[] | undefined): string =>
    canonicalJSON(
      (subsets ?? []).map((s) => {
        const addr = (x: any) => {
          const { resourceVersion: _rv, ...ref } = x.targetRef ?? {};
          return { ...x, targetRef: x.targetRef ? ref : undefined };
        };
        const list = (l: any[] | undefined) => (l?.length ? l.map(addr) : undefined);
        return { addresses: list(s.addresses), notReadyAddresses: list(s.notReadyAddresses), ports: s.ports?.length ? s.ports : undefined };
      }),
    );
  return norm(a) === norm(b);
}

const sameLabels = (a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean => canonicalJSON(a ?? {}) === canonicalJSON(b ?? {});

// ---- the controller ----

export interface EndpointsControllerOptions {
  /** writes the Endpoints */
  client: RESTClient;
  services: Informer<any>;
  endpoints: Informer<any>;
  pods: NamespacedPods;
  /** the events (FailedToCreateEndpoint, FailedToUpdateEndpoint) */
  recorder?: EventRecorder;
  /** --endpoint-updates-batch-period: how long pod changes are gathered before a sync */
  batchPeriodMs?: number;
  log?: Logger;
}

export class EndpointsController {
  // (the endpoints controller's backoff: 1s doubling to 100s, with the overall 10 qps bucket)
  readonly queue = new RateLimitingQueue<string>(new MaxOfRateLimiter<string>(new ItemExponentialFailureRateLimiter<string>(1000, 100_000), new BucketRateLimiter<string>(10, 100)), 'endpoint');
  private readonly log: Logger;
  private readonly triggers = new TriggerTimeTracker();
  private readonly watches: ServicePodWatches;
  private readonly endpointsClient: (ns: string) => ResourceClient<any>;

  constructor(private readonly o: EndpointsControllerOptions) {
    this.log = o.log ?? nopLogger;
    this.watches = new ServicePodWatches(o.pods, 'endpoints');
    this.endpointsClient = (ns) => new ResourceClient<any>(o.client, ENDPOINTS, ns);
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
    o.pods.addEventHandler({
      add: (pod) => this.onPod(pod),
      update: (old, pod) => {
        for (const key of servicesToUpdateOnPodChange(o.services, old, pod)) this.queue.addAfter(key, o.batchPeriodMs ?? 0);
      },
      delete: (pod) => this.onPod(podOfDelete(pod)),
    });
    // an Endpoints deleted under its Service is written again
    o.endpoints.addEventHandler({
      delete: (ep) => {
        const key = keyOf(ep);
        if (key) this.queue.add(key);
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

  async run(workers: number, signal: AbortSignal): Promise<void> {
    try {
      // once the caches are filled, Endpoints whose Service is gone are looked at
      const synced = await Promise.all([this.o.services, this.o.endpoints].map((i) => i.waitForSync({ signal })));
      if (synced.every(Boolean)) this.checkLeftoverEndpoints();
      await runQueueWorkers(
        {
          name: 'endpoint controller',
          log: this.log,
          queue: this.queue,
          informers: [this.o.services, this.o.endpoints],
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

  /** a failed sync is retried with backoff MAX_RETRIES times, then dropped (handleErr) */
  private handleError(key: string, err: unknown): void {
    if (this.queue.numRequeues(key) < MAX_RETRIES) {
      this.log.v(2).info('Error syncing endpoints, retrying', { service: key, err: String((err as Error)?.message ?? err) });
      this.queue.addRateLimited(key);
      return;
    }
    this.log.info('Dropping service out of the queue', { service: key, err: String((err as Error)?.message ?? err) });
    this.log.error(err, 'Syncing endpoints failed', { service: key });
    this.queue.forget(key);
  }

  /**
   * Endpoints whose Service is gone, left from a time the controller was not running, are queued
   * once at start, so that their sync deletes them (checkLeftoverEndpoints). Leader-election
   * records kept in Endpoints are not.
   */
  checkLeftoverEndpoints(): void {
    for (const ep of this.o.endpoints.list()) {
      if (ep?.metadata?.annotations?.[LEADER_ANNOTATION] !== undefined) continue;
      const key = keyOf(ep);
      if (key) this.queue.add(key);
    }
  }

  /** brings one Service's Endpoints in line (syncService) */
  async sync(key: string, signal: AbortSignal): Promise<void> {
    const { namespace, name } = splitKey(key);
    const svc = this.o.services.getByName(namespace, name);
    if (!svc) {
      // the Service is gone: so is its Endpoints
      try {
        await this.endpointsClient(namespace).delete(name, { signal });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      this.triggers.deleteService(key);
      return;
    }
    if (!managesEndpoints(svc)) return;
    // never from a pod cache that has not listed yet
    if (!(await podsSynced(this.o.pods, namespace, signal))) {
      if (signal.aborted) return;
      throw new Error(`the pods of namespace ${namespace} are not listed yet`);
    }
    const pods = selectedPods(svc, this.o.pods.list(namespace));
    // (computed on every sync, so that the tracker follows even syncs that write nothing)
    const triggerTime = this.triggers.compute(svc, pods);
    const { subsets: raw, ready, notReady } = podSubsets(svc, pods, this.log);
    const subsets = repackSubsets(raw);
    const current = this.o.endpoints.getByName(namespace, name);
    const create = !current?.metadata?.resourceVersion;
    const svcLabels: Record<string, string> | undefined = svc.metadata?.labels;
    if (!create) {
      const { [HEADLESS_LABEL]: _h, ...compareLabels } = current.metadata?.labels ?? {};
      const capacityRight = countAddresses(current.subsets) <= MAX_ENDPOINTS_CAPACITY && current.metadata?.annotations?.[OVER_CAPACITY_ANNOTATION] === undefined;
      if (sameSubsets(current.subsets, subsets) && sameLabels(compareLabels, svcLabels) && capacityRight) {
        this.log.v(5).info('endpoints are equal, skipping update', { service: key });
        return;
      }
    }
    const next = this.desiredEndpoints(svc, current, subsets, triggerTime);
    this.log.v(4).info('Update endpoints', { service: key, readyEndpoints: ready, notreadyEndpoints: notReady });
    await this.write(svc, next, create, signal);
  }

  /** the Endpoints to write: the current one (or a new one) with the subsets, labels and annotations */
  private desiredEndpoints(svc: any, current: any, subsets: EndpointSubset[], triggerTime: number): any {
    const annotations: Record<string, string> = { ...(current?.metadata?.annotations ?? {}) };
    if (triggerTime) annotations[TRIGGER_TIME_ANNOTATION] = rfc3339Nano(triggerTime);
    else delete annotations[TRIGGER_TIME_ANNOTATION];
    if (truncateSubsets(subsets)) annotations[OVER_CAPACITY_ANNOTATION] = 'truncated';
    else delete annotations[OVER_CAPACITY_ANNOTATION];
    const labels: Record<string, string> = { ...(svc.metadata?.labels ?? {}) };
    if (!isServiceIPSet(svc)) labels[HEADLESS_LABEL] = '';
    else delete labels[HEADLESS_LABEL];
    const metadata = current ? { ...current.metadata } : { name: svc.metadata.name, namespace: svc.metadata.namespace };
    // (empty maps are left out, as Go's encoding omits them)
    if (Object.keys(labels).length) metadata.labels = labels;
    else delete metadata.labels;
    if (Object.keys(annotations).length) metadata.annotations = annotations;
    else delete metadata.annotations;
    const ep: any = { ...(current ?? {}), apiVersion: 'v1', kind: 'Endpoints', metadata };
    if (subsets.length) ep.subsets = subsets;
    else delete ep.subsets;
    return ep;
  }

  /**
   * Waits (briefly) until the Endpoints informer has the object as written, so that the next sync
   * of the Service, which may come at once from a pod event, does not create it again or update
   * an older copy (a conflict) from a cache that is a few milliseconds behind.
   */
  private async seen(written: any, signal: AbortSignal, timeoutMs = 2000): Promise<void> {
    const { namespace, name, uid, resourceVersion } = written?.metadata ?? {};
    const deadline = Date.now() + timeoutMs;
    while (!signal.aborted && Date.now() < deadline) {
      const cur = this.o.endpoints.getByName(namespace, name);
      if (cur && (cur.metadata?.uid !== uid || cur.metadata?.resourceVersion === resourceVersion || Number(cur.metadata?.resourceVersion) > Number(resourceVersion))) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  private async write(svc: any, ep: any, create: boolean, signal: AbortSignal): Promise<void> {
    const client = this.endpointsClient(svc.metadata.namespace);
    try {
      const written = create ? await client.create(ep, { signal }) : await client.update(ep, { signal });
      await this.seen(written, signal);
    } catch (e) {
      if (signal.aborted) return;
      if (create && isForbidden(e)) {
        this.log.v(5).info('Forbidden from creating endpoints', { error: String((e as Error).message) });
        // a namespace being deleted refuses every create: nothing to retry
        if (isNamespaceTerminating(e)) return;
      }
      const key = `${svc.metadata.namespace}/${svc.metadata.name}`;
      const about = { ...ep, metadata: { ...ep.metadata, namespace: svc.metadata.namespace } };
      if (create) void this.o.recorder?.event(about, 'Warning', 'FailedToCreateEndpoint', `Failed to create endpoint for service ${key}: ${(e as Error).message}`);
      else void this.o.recorder?.event(about, 'Warning', 'FailedToUpdateEndpoint', `Failed to update endpoint ${key}: ${(e as Error).message}`);
      throw e;
    }
  }
}

export const endpointsControllerDescriptor: ControllerDescriptor = {
  name: 'endpoints-controller',
  async run(ctx) {
    await withClient(ctx, 'endpoint-controller', undefined, async (client) => {
      const c = new EndpointsController({
        client,
        services: informerOf<any>(ctx, { group: '', version: 'v1', resource: 'services' }),
        endpoints: informerOf<any>(ctx, ENDPOINTS),
        pods: ctx.pods,
        recorder: new EventRecorder(client, 'endpoint-controller', ctx.log),
        batchPeriodMs: ctx.options.endpointUpdatesBatchPeriodMs,
        log: ctx.log,
      });
      await c.run(ctx.options.concurrentEndpointSyncs, ctx.signal);
    });
  },
};
