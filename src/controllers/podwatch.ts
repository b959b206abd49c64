// The pods the workload and endpoints controllers read, watched one namespace at a time.
//
// kube-controller-manager's replication, ReplicaSet, endpoints and EndpointSlice controllers
// share one informer over every pod of the cluster. The controller manager embedded in
// `keelson server` is a client of the same process over loopback, so such an informer would make
// every pod write also a watch event framed, sent, read and decoded again in that process, and
// keep every pod decoded twice (in the watch cache and in the informer) whether or not anything
// selects them. Here the pods of a namespace are watched only while some owner there needs them
// (a ReplicaSet, a ReplicationController, a Service with a selector): each controller says which
// of its objects need a namespace's pods (watch/unwatch by an owner key), and one informer per
// namespace, shared by the controllers of the manager, lists and watches them. Within a
// namespace the semantics are client-go's: a controller sees every pod there, so that it can
// adopt orphans and release pods whose labels no longer match.

import { Informer, type ResourceEventHandler } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import type { RESTClient } from '../client/rest.js';
import { ResourceClient, type KubeObject } from '../client/resources.js';

export const PODS = { group: '', version: 'v1', resource: 'pods' };

interface Watched {
  informer: Informer<any>;
  /** the owners (controller-chosen keys) that need this namespace's pods */
  owners: Set<string>;
  /** each registered handler's registration on this informer */
  regs: Map<ResourceEventHandler<any>, { remove(): void }>;
}

export class NamespacedPods {
  private readonly byNamespace = new Map<string, Watched>();
  private readonly handlers = new Set<ResourceEventHandler<any>>();
  private readonly log: Logger;
  private stopped = false;

  constructor(
    private readonly client: RESTClient,
    log?: Logger,
  ) {
    this.log = log ?? nopLogger;
  }

  /**
   * Registers handlers for the pod events of every watched namespace (those watched already
   * deliver their cached pods as adds). A controller registers once and filters by namespace.
   */
  addEventHandler(h: ResourceEventHandler<any>): { remove(): void } {
    this.handlers.add(h);
    for (const w of this.byNamespace.values()) w.regs.set(h, w.informer.addEventHandler(h));
    return {
      remove: () => {
        this.handlers.delete(h);
        for (const w of this.byNamespace.values()) {
          w.regs.get(h)?.remove();
          w.regs.delete(h);
        }
      },
    };
  }

  /** `owner` needs the pods of `namespace`: starts its informer when it is the first. */
  watch(namespace: string, owner: string): Informer<any> {
    let w = this.byNamespace.get(namespace);
    if (!w) {
      const informer = new Informer<any>(new ResourceClient<KubeObject>(this.client, PODS), {
        namespace,
        log: this.log,
        name: `pods in ${namespace}`,
        trimManagedFields: true,
      });
      w = { informer, owners: new Set(), regs: new Map() };
      for (const h of this.handlers) w.regs.set(h, informer.addEventHandler(h));
      this.byNamespace.set(namespace, w);
      if (!this.stopped) informer.run();
    }
    w.owners.add(owner);
    return w.informer;
  }

  /** `owner` no longer needs them: the informer stops when it was the last. */
  unwatch(namespace: string, owner: string): void {
    const w = this.byNamespace.get(namespace);
    if (!w || !w.owners.delete(owner) || w.owners.size) return;
    this.byNamespace.delete(namespace);
    void w.informer.stop();
  }

  /** the namespace's informer, when some owner watches it */
  informer(namespace: string): Informer<any> | undefined {
    return this.byNamespace.get(namespace)?.informer;
  }

  /** the cached pods of a watched namespace (none when it is not watched) */
  list(namespace: string): any[] {
    return this.byNamespace.get(namespace)?.informer.list() ?? [];
  }

  /** waits until the namespace's pods are listed (false: not watched, stopped, or the signal aborted) */
  async synced(namespace: string, signal?: AbortSignal): Promise<boolean> {
    const w = this.byNamespace.get(namespace);
    if (!w) return false;
    return w.informer.waitForSync({ signal });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const all = [...this.byNamespace.values()];
    this.byNamespace.clear();
    await Promise.all(all.map((w) => w.informer.stop()));
  }
}
