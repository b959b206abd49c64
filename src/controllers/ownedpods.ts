// What the controllers of pods made from a template (ReplicaSet, ReplicationController,
// DaemonSet) do with the events of their objects and pods: an object's namespace has its pods
// watched (podwatch.ts) while the object exists; a pod event queues the object that controls the
// pod (its expectations told of a create or delete seen) or, for an orphan, the objects whose
// selector matches it (they may adopt it); a pod that has just become ready queues its owner again
// minReadySeconds later, when it counts as available.

import { DeletedFinalStateUnknown, type Informer } from '../client/informer.js';
import { objectKey, splitKey } from '../client/resources.js';
import type { RateLimitingQueue } from '../client/workqueue.js';
import { matchLabels, type Requirement } from '../machinery/selectors.js';
import type { NamespacedPods } from './podwatch.js';
import { controllerRefOf, type Expectations } from './expectations.js';

export const readyCondition = (pod: any): any => (Array.isArray(pod?.status?.conditions) ? pod.status.conditions.find((c: any) => c?.type === 'Ready') : undefined);
export const isPodReady = (pod: any): boolean => readyCondition(pod)?.status === 'True';

/** the kind of the owning objects */
export interface PodOwnerKind {
  kind: string;
  apiVersion: string;
  /** the owner keys in the pod watch */
  watchPrefix: string;
  /** the selector's requirements; null selects nothing */
  selector(obj: any): Requirement[] | null;
}

export interface OwnedPodsOptions {
  kind: PodOwnerKind;
  objects: Informer<any>;
  pods: NamespacedPods;
  queue: RateLimitingQueue<string>;
  expectations: Expectations;
}

export class OwnedPods {
  /** the namespace each object's pods are watched in (by key) */
  private readonly watched = new Set<string>();
  private readonly podHandler: { remove(): void };

  constructor(private readonly o: OwnedPodsOptions) {
    o.objects.addEventHandler({
      add: (obj) => this.onObject(obj),
      update: (_old, obj) => this.onObject(obj),
      delete: (d) => {
        const obj = d instanceof DeletedFinalStateUnknown ? d.obj : d;
        const key = objectKey(obj);
        o.expectations.delete(key);
        this.unwatch(key);
        o.queue.add(key);
      },
    });
    this.podHandler = o.pods.addEventHandler({
      add: (pod) => this.onPodAdd(pod),
      update: (old, pod) => this.onPodUpdate(old, pod),
      delete: (d) => this.onPodDelete(d instanceof DeletedFinalStateUnknown ? d.obj : d),
    });
  }

  /** stops handling pod events and watching the namespaces' pods */
  stop(): void {
    this.podHandler.remove();
    for (const key of [...this.watched]) this.unwatch(key);
  }

  private onObject(obj: any): void {
    const key = objectKey(obj);
    if (!this.watched.has(key)) {
      this.watched.add(key);
      this.o.pods.watch(obj.metadata.namespace, `${this.o.kind.watchPrefix}:${key}`);
    }
    this.o.queue.add(key);
  }

  private unwatch(key: string): void {
    if (!this.watched.delete(key)) return;
    this.o.pods.unwatch(splitKey(key).namespace, `${this.o.kind.watchPrefix}:${key}`);
  }

  /** the object of this kind a controller reference names, when the cache has it with that uid */
  resolve(namespace: string, ref: any): any {
    if (ref?.kind !== this.o.kind.kind || ref?.apiVersion?.split('/')[0] !== this.o.kind.apiVersion.split('/')[0]) return undefined;
    const obj = this.o.objects.getByName(namespace, ref.name);
    return obj?.metadata?.uid === ref.uid ? obj : undefined;
  }

  /** the objects whose selector matches an orphan pod's labels */
  selecting(pod: any): any[] {
    const ns = pod?.metadata?.namespace;
    const labels = pod?.metadata?.labels ?? {};
    const out: any[] = [];
    for (const obj of this.o.objects.list()) {
      if (obj?.metadata?.namespace !== ns) continue;
      let sel: Requirement[] | null;
      try {
        sel = this.o.kind.selector(obj);
      } catch {
        continue;
      }
      if (sel && sel.length && matchLabels(sel, labels)) out.push(obj);
    }
    return out;
  }

  private onPodAdd(pod: any): void {
    if (pod?.metadata?.deletionTimestamp) {
      // (a restart of the watch may show a pod already being deleted: as good as gone for the count)
      this.onPodDelete(pod);
      return;
    }
    const ref = controllerRefOf(pod);
    if (ref) {
      const owner = this.resolve(pod.metadata.namespace, ref);
      if (!owner) return;
      const key = objectKey(owner);
      this.o.expectations.creationObserved(key);
      this.o.queue.add(key);
      return;
    }
    for (const obj of this.selecting(pod)) this.o.queue.add(objectKey(obj));
  }

  private onPodUpdate(old: any, pod: any): void {
    if (old?.metadata?.resourceVersion === pod?.metadata?.resourceVersion) return;
    const labelsChanged = JSON.stringify(old?.metadata?.labels ?? {}) !== JSON.stringify(pod?.metadata?.labels ?? {});
    if (pod?.metadata?.deletionTimestamp) {
      // a graceful delete: the pod stops counting now, not when it is gone
      this.onPodDelete(pod);
      if (labelsChanged) this.onPodDelete(old);
      return;
    }
    const ref = controllerRefOf(pod);
    const oldRef = controllerRefOf(old);
    const refChanged = JSON.stringify(ref) !== JSON.stringify(oldRef);
    if (refChanged && oldRef) {
      const was = this.resolve(old.metadata.namespace, oldRef);
      if (was) this.o.queue.add(objectKey(was));
    }
    if (ref) {
      const owner = this.resolve(pod.metadata.namespace, ref);
      if (!owner) return;
      const key = objectKey(owner);
      this.o.queue.add(key);
      // a pod that has just become ready is available minReadySeconds later
      const min = Number(owner.spec?.minReadySeconds ?? 0);
      if (min > 0 && !isPodReady(old) && isPodReady(pod)) this.o.queue.addAfter(key, min * 1000 + 1000);
      return;
    }
    if (labelsChanged || refChanged) for (const obj of this.selecting(pod)) this.o.queue.add(objectKey(obj));
  }

  private onPodDelete(pod: any): void {
    const ref = controllerRefOf(pod);
    if (!ref) return;
    const owner = this.resolve(pod?.metadata?.namespace, ref);
    if (!owner) return;
    const key = objectKey(owner);
    this.o.expectations.deletionObserved(key, objectKey(pod));
    this.o.queue.add(key);
  }
}
