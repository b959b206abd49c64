// The garbage collector (kube-controller-manager's garbage-collector-controller): deletes objects
// whose owners are gone, and carries out the deletion policies the API server records as
// finalizers (with --enable-garbage-collector):
//   - background: an object all of whose owners (metadata.ownerReferences) no longer exist is
//     deleted; an owner that is not in the graph is looked up by name before (its uid must match);
//     owner references to owners that are gone are removed from objects that keep other owners;
//   - orphan (finalizer `orphan`): the owner's dependents lose their references to it, then the
//     finalizer goes and the owner with it;
//   - foreground (finalizer `foregroundDeletion`): the owner's dependents are deleted (in the
//     foreground themselves when they block it), and once none with blockOwnerDeletion is left the
//     finalizer goes.
// The graph holds every object of every resource that can be listed, watched and deleted (found
// through discovery, again every 30 s for new custom resources; Events are left out, as Kubernetes
// leaves them), by uid, with its owners and its dependents.
//
// It watches every object of the cluster through metadata-only informers, as kube-controller-
// manager's does. Over HTTPS that is a watch event per write of any kind, encoded, sent, parsed
// (bench/HISTORY.md: 1.28x the server's CPU per create); inside `keelson server` the informers are
// fed from the server's watch cache instead (localMetadataSource, src/apiserver/localwatch.ts), the
// same events without the transport.
import type { Informer, InformerFactory } from '../client/informer.js';
import { DeletedFinalStateUnknown } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isConflict, isNotFound, type RESTClient } from '../client/rest.js';
import { DiscoveryClient, ResourceClient, resourcePath, type GroupVersionResource } from '../client/resources.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { runQueueWorkers } from './workers.js';
import type { MetadataSourceFinder } from './context.js';

const ORPHAN = 'orphan';
const FOREGROUND = 'foregroundDeletion';
const REDISCOVERY_MS = 30_000;
/** resources the collector does not watch (Kubernetes' ignoredResources) */
const IGNORED = new Set(['/events', 'events.k8s.io/events']);
/** the owners or finalizers of an object that has none (shared: never written to) */
const NONE: readonly never[] = Object.freeze([]);

interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  blockOwnerDeletion?: boolean;
}

interface Node {
  uid: string;
  gvr: GroupVersionResource;
  namespace: string;
  name: string;
  owners: readonly OwnerRef[];
  /** made when the first dependent comes (most objects never have one) */
  dependents: Set<string> | undefined;
  finalizers: readonly string[];
  deleting: boolean;
  resourceVersion: string;
}

interface Mapping {
  gvr: GroupVersionResource;
  namespaced: boolean;
}

export interface GarbageCollectorOptions {
  client: RESTClient;
  informers: InformerFactory;
  informerClient: RESTClient;
  /** inside the API server's process: the graph's informers fed from the watch cache (context.ts) */
  localMetadataSource?: MetadataSourceFinder;
  log?: Logger;
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

export class GarbageCollector {
  readonly queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'garbage_collector_attempt_to_delete');
  private readonly log: Logger;
  private readonly nodes = new Map<string, Node>();
  /** dependents of uids not (or no longer) in the graph */
  private readonly waiting = new Map<string, Set<string>>();
  /** "<group>|<kind>" -> the resource to read and write it through */
  private readonly kinds = new Map<string, Mapping>();
  /** "<group>/<resource>" -> its informer */
  private readonly watched = new Map<string, Informer<any>>();
  private readonly discovery: DiscoveryClient;
  private timer: NodeJS.Timeout | undefined;
  /** when discovery was last asked */
  private discovered = 0;

  constructor(private readonly o: GarbageCollectorOptions) {
    this.log = o.log ?? nopLogger;
    this.discovery = new DiscoveryClient(o.informerClient);
  }

  // ---- the graph ----

  /**
   * finds the resources to watch (again): each new one gets an informer feeding the graph; after a
   * discovery that every group answered, the informers of resources no longer served (a CRD
   * deleted) are stopped, as Kubernetes' collector removes their monitors at its resync
   */
  async discover(signal: AbortSignal): Promise<Informer<any>[]> {
    this.discovered = Date.now();
    const { lists, error } = await this.discovery.serverPreferredResources({ signal });
    const made: Informer<any>[] = [];
    const served = new Set<string>();
    for (const l of lists) {
      const slash = l.groupVersion.indexOf('/');
      const group = slash < 0 ? '' : l.groupVersion.slice(0, slash);
      const version = slash < 0 ? l.groupVersion : l.groupVersion.slice(slash + 1);
      for (const r of l.resources) {
        const gvr = { group, version, resource: r.name };
        this.kinds.set(`${group}|${r.kind}`, { gvr, namespaced: r.namespaced });
        const key = `${group}/${r.name}`;
        served.add(key);
        if (this.watched.has(key) || IGNORED.has(key) || !['list', 'watch', 'delete'].every((v) => r.verbs.includes(v))) continue;
        // (metadata only: all the collector reads, and a fraction of the bytes to decode and hold)
        const source = this.o.localMetadataSource?.(gvr) ?? new ResourceClient<any>(this.o.informerClient, gvr);
        const inf = this.o.informers.informerFor(source, { metadataOnly: true });
        inf.addEventHandler({
          add: (obj) => this.upsert(gvr, obj),
          update: (_old, obj) => this.upsert(gvr, obj),
          delete: (obj) => this.remove(obj instanceof DeletedFinalStateUnknown ? obj.obj : obj),
        });
        this.watched.set(key, inf);
        made.push(inf);
      }
    }
    if (!error) {
      for (const [key, inf] of this.watched) {
        if (served.has(key)) continue;
        this.watched.delete(key);
        const slash = key.indexOf('/');
        for (const [k, m] of this.kinds) if (m.gvr.group === key.slice(0, slash) && m.gvr.resource === key.slice(slash + 1)) this.kinds.delete(k);
        this.log.info('Garbage collector: the resource is no longer served; its monitor stops', { resource: key });
        await this.o.informers.remove(inf);
      }
    }
    return made;
  }

  private upsert(gvr: GroupVersionResource, obj: any): void {
    const m = obj?.metadata;
    if (!m?.uid) return;
    const owners: readonly OwnerRef[] = Array.isArray(m.ownerReferences) && m.ownerReferences.length > 0 ? m.ownerReferences.filter((r: any) => r && typeof r.uid === 'string') : NONE;
    let node = this.nodes.get(m.uid);
    if (node) for (const r of node.owners) this.nodes.get(r.uid)?.dependents?.delete(node.uid) ?? this.waiting.get(r.uid)?.delete(node.uid);
    const dependents = node?.dependents ?? this.waiting.get(m.uid);
    this.waiting.delete(m.uid);
    node = { uid: m.uid, gvr, namespace: m.namespace ?? '', name: m.name, owners, dependents, finalizers: Array.isArray(m.finalizers) ? m.finalizers : NONE, deleting: !!m.deletionTimestamp, resourceVersion: m.resourceVersion };
    this.nodes.set(m.uid, node);
    let ownerMissing = false;
    for (const r of owners) {
      const owner = this.nodes.get(r.uid);
      if (owner) {
        (owner.dependents ??= new Set()).add(node.uid);
        // (an owner in another namespace does not own: see ownerState)
        if (owner.namespace !== '' && owner.namespace !== node.namespace) ownerMissing = true;
      } else {
        ownerMissing = true;
        let w = this.waiting.get(r.uid);
        if (!w) this.waiting.set(r.uid, (w = new Set()));
        w.add(node.uid);
      }
    }
    if (ownerMissing) this.queue.add(`delete:${node.uid}`);
    if (node.deleting && node.finalizers.includes(ORPHAN)) this.queue.add(`orphan:${node.uid}`);
    if (node.deleting && node.finalizers.includes(FOREGROUND)) this.queue.add(`foreground:${node.uid}`);
    // an owner's deletion in the foreground waits for this one
    if (node.deleting) for (const r of owners) this.queue.add(`foreground:${r.uid}`);
  }

  private remove(obj: any): void {
    const uid = obj?.metadata?.uid;
    const node = uid ? this.nodes.get(uid) : undefined;
    if (!node) return;
    this.nodes.delete(uid);
    for (const r of node.owners) {
      this.nodes.get(r.uid)?.dependents?.delete(uid);
      this.waiting.get(r.uid)?.delete(uid);
      // an owner deleting in the foreground may now be free of blocking dependents
      this.queue.add(`foreground:${r.uid}`);
    }
    if (!node.dependents) return;
    if (node.dependents.size > 0) this.waiting.set(uid, node.dependents);
    for (const d of node.dependents) this.queue.add(`delete:${d}`);
  }

  // ---- the work ----

  async sync(item: string, signal: AbortSignal): Promise<void> {
    const colon = item.indexOf(':');
    const what = item.slice(0, colon);
    const uid = item.slice(colon + 1);
    const node = this.nodes.get(uid);
    if (!node) return;
    if (what === 'delete') await this.attemptToDelete(node, signal);
    else if (what === 'orphan') await this.orphanDependents(node, signal);
    else await this.deleteDependents(node, signal);
  }

  /** whether an owner exists: in the graph, else looked up by name (its uid must match) */
  private async ownerState(dependent: Node, r: OwnerRef, signal: AbortSignal): Promise<'absent' | 'present' | 'waiting'> {
    const owner = this.nodes.get(r.uid);
    // (an owner in another namespace does not own: the reference is treated as absent, as in Kubernetes 1.20+)
    if (owner && owner.namespace !== '' && owner.namespace !== dependent.namespace) return 'absent';
    if (owner) return owner.deleting && owner.finalizers.includes(FOREGROUND) ? 'waiting' : 'present';
    const kind = `${groupOf(r.apiVersion)}|${r.kind}`;
    let mapping = this.kinds.get(kind);
    if (!mapping && Date.now() - this.discovered > 5_000) {
      // (a kind served since the last discovery: a new custom resource)
      await this.discover(signal);
      mapping = this.kinds.get(kind);
    }
    // a kind the server does not serve is not taken for an owner that is gone: the object is
    // looked at again later (with back-off), as Kubernetes' collector retries an unknown mapping
    if (!mapping) throw new Error(`unable to find the resource of owner ${r.apiVersion}, Kind=${r.kind} of ${dependent.gvr.resource} ${dependent.namespace ? `${dependent.namespace}/` : ''}${dependent.name}`);
    // a cluster-scoped object naming a namespaced owner: unresolvable, so never collected (Kubernetes 1.20+)
    if (mapping.namespaced && dependent.namespace === '') return 'present';
    try {
      const live = await new ResourceClient<any>(this.o.client, mapping.gvr, mapping.namespaced ? dependent.namespace : '').get(r.name, { signal });
      return live?.metadata?.uid === r.uid ? 'present' : 'absent';
    } catch (e) {
      if (isNotFound(e)) return 'absent';
      throw e;
    }
  }

  private async attemptToDelete(node: Node, signal: AbortSignal): Promise<void> {
    if (node.owners.length === 0 || (node.deleting && !node.finalizers.includes(FOREGROUND))) return;
    const states = await Promise.all(node.owners.map((r) => this.ownerState(node, r, signal)));
    const absent = node.owners.filter((_r, i) => states[i] === 'absent');
    const waiting = node.owners.filter((_r, i) => states[i] === 'waiting');
    if (states.includes('present')) {
      // owners that are gone leave the object's references; the others keep it
      if (absent.length) await this.removeOwnerRefs(node, absent.map((r) => r.uid), signal);
      return;
    }
    if (node.deleting) return;
    // every owner is gone or deleting in the foreground (which waits for this object when its reference blocks)
    const policy = waiting.some((r) => r.blockOwnerDeletion === true) ? 'Foreground' : 'Background';
    this.log.info('Deleting an object whose owners are gone', { object: `${node.gvr.resource}/${node.namespace ? `${node.namespace}/` : ''}${node.name}`, propagationPolicy: policy });
    try {
      await new ResourceClient<any>(this.o.client, node.gvr, node.namespace).delete(node.name, { propagationPolicy: policy, preconditions: { uid: node.uid }, signal });
    } catch (e) {
      if (isNotFound(e) || isConflict(e)) return;
      throw e;
    }
  }

  private async removeOwnerRefs(node: Node, uids: string[], signal: AbortSignal): Promise<void> {
    // (a strategic merge patch deletes the references by their merge key, whatever else changed)
    const body = { metadata: { ownerReferences: uids.map((uid) => ({ $patch: 'delete', uid })), uid: node.uid } };
    try {
      await this.o.client.json({ method: 'PATCH', path: resourcePath(node.gvr, node.namespace, node.name), body, contentType: 'application/strategic-merge-patch+json', signal });
    } catch (e) {
      if (isNotFound(e)) return;
      // a custom resource has no strategic merge: the references it keeps, under its resourceVersion
      if ((e as { code?: number }).code === 415) {
        await this.o.client.json({
          method: 'PATCH',
          path: resourcePath(node.gvr, node.namespace, node.name),
          body: { metadata: { ownerReferences: node.owners.filter((r) => !uids.includes(r.uid)), resourceVersion: node.resourceVersion } },
          contentType: 'application/merge-patch+json',
          signal,
        });
        return;
      }
      throw e;
    }
  }

  private async removeFinalizer(node: Node, finalizer: string, signal: AbortSignal): Promise<void> {
    const body = { metadata: { finalizers: node.finalizers.filter((f) => f !== finalizer), resourceVersion: node.resourceVersion } };
    try {
      await this.o.client.json({ method: 'PATCH', path: resourcePath(node.gvr, node.namespace, node.name), body, contentType: 'application/merge-patch+json', signal });
    } catch (e) {
      if (isNotFound(e)) return;
      // (changed meanwhile: its update event brings it back)
      if (isConflict(e)) return;
      throw e;
    }
  }

  private async orphanDependents(node: Node, signal: AbortSignal): Promise<void> {
    if (!node.deleting || !node.finalizers.includes(ORPHAN)) return;
    for (const d of [...(node.dependents ?? [])]) {
      const dep = this.nodes.get(d);
      if (dep) await this.removeOwnerRefs(dep, [node.uid], signal);
    }
    await this.removeFinalizer(node, ORPHAN, signal);
  }

  private async deleteDependents(node: Node, signal: AbortSignal): Promise<void> {
    if (!node.deleting || !node.finalizers.includes(FOREGROUND)) return;
    let blocking = 0;
    for (const d of [...(node.dependents ?? [])]) {
      const dep = this.nodes.get(d);
      if (!dep) continue;
      if (dep.owners.some((r) => r.uid === node.uid && r.blockOwnerDeletion === true)) blocking++;
      if (!dep.deleting) await this.attemptToDelete(dep, signal);
    }
    if (blocking === 0) await this.removeFinalizer(node, FOREGROUND, signal);
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    let informers: Informer<any>[];
    try {
      informers = await this.discover(signal);
    } catch (e) {
      if (signal.aborted) return;
      throw e;
    }
    this.timer = setInterval(() => {
      this.discover(signal).catch((e) => {
        if (!signal.aborted) this.log.error(e, 'Failed to discover the resources to collect');
      });
    }, REDISCOVERY_MS);
    this.timer.unref?.();
    try {
      await runQueueWorkers({ name: 'garbage collector controller', log: this.log, queue: this.queue, informers, sync: (k, s) => this.sync(k, s), failure: 'Failed to collect garbage' }, workers, signal);
    } finally {
      clearInterval(this.timer);
    }
  }
}
