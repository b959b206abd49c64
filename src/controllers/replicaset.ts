// The ReplicaSet and ReplicationController controllers (kube-controller-manager's
// pkg/controller/replicaset, which serves both kinds): keep as many active pods as spec.replicas
// asks for, made from spec.template, and write the status kubectl and the Deployment controller
// read.
//
// One sync of an object (its key in the queue):
//   - the active pods of its namespace (not Succeeded or Failed, not being deleted) are claimed:
//     an orphan whose labels match the selector is adopted (a controller reference patched in,
//     after a fresh read of the owner shows it is still the same object and not being deleted),
//     and a pod it controls whose labels no longer match is released (the reference patched out);
//   - when its expectations are met (every create and delete of the last sync seen by the pod
//     watch, or five minutes passed), the difference to spec.replicas is made up: pods created in
//     batches of 1, 2, 4, ... (a failing batch stops the rest), at most 500 a sync, or the pods
//     ranked least worth keeping deleted;
//   - status: replicas, fullyLabeledReplicas, readyReplicas, availableReplicas (ready for
//     minReadySeconds), observedGeneration and the condition ReplicaFailure while a create or
//     delete fails; written through the status subresource only when it changed.
// Events as Kubernetes writes them: SuccessfulCreate, SuccessfulDelete, FailedCreate, FailedDelete.
//
// The pods come from the shared per-namespace pod watch (podwatch.ts), held while the namespace
// has an object of this kind. Pods are neither scheduled nor run here: without a node agent they
// stay Pending, and their readiness is whatever their status says.

import type { Informer } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isConflict, isNotFound, type RESTClient } from '../client/rest.js';
import { ResourceClient, objectKey, splitKey, type GroupVersionResource } from '../client/resources.js';
import { EventRecorder } from '../client/events.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { fromLabelSelector, matchLabels, type Requirement } from '../machinery/selectors.js';
import { informerOf, withClient, type ControllerContext, type ControllerDescriptor } from './context.js';
import { PODS, type NamespacedPods } from './podwatch.js';
import { controllerRefOf, Expectations } from './expectations.js';
import { runQueueWorkers } from './workers.js';
import { OwnedPods, isPodReady, readyCondition, type PodOwnerKind } from './ownedpods.js';

/** at most this many pods are created or deleted by one sync (BurstReplicas) */
export const BURST_REPLICAS = 500;
/** the annotation that tells which pods to delete first on a scale-down */
const POD_DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';

/** what differs between the two kinds */
export interface ReplicaKind extends PodOwnerKind {
  kind: 'ReplicaSet' | 'ReplicationController';
  apiVersion: string;
  gvr: GroupVersionResource;
  /** the events' source component */
  component: string;
  /** the controller's words in logs */
  words: string;
  /** the owner keys in the pod watch */
  watchPrefix: string;
  /** the selector's requirements; null selects nothing */
  selector(obj: any): Requirement[] | null;
}

export const REPLICA_SET: ReplicaKind = {
  kind: 'ReplicaSet',
  apiVersion: 'apps/v1',
  gvr: { group: 'apps', version: 'v1', resource: 'replicasets' },
  component: 'replicaset-controller',
  words: 'replicaset controller',
  watchPrefix: 'replicaset',
  selector: (rs) => fromLabelSelector(rs?.spec?.selector),
};

export const REPLICATION_CONTROLLER: ReplicaKind = {
  kind: 'ReplicationController',
  apiVersion: 'v1',
  gvr: { group: '', version: 'v1', resource: 'replicationcontrollers' },
  component: 'replication-controller',
  words: 'replicationcontroller controller',
  watchPrefix: 'replicationcontroller',
  // (a map of labels; the API server defaults it from the template's labels, and an empty one selects nothing here)
  selector: (rc) => {
    const sel = rc?.spec?.selector;
    if (!sel || typeof sel !== 'object' || Object.keys(sel).length === 0) return null;
    return fromLabelSelector({ matchLabels: sel });
  },
};

export interface ReplicaControllerOptions {
  kind: ReplicaKind;
  client: RESTClient;
  objects: Informer<any>;
  pods: NamespacedPods;
  recorder?: EventRecorder;
  log?: Logger;
  now?: () => number;
  burstReplicas?: number;
}


/** a pod not finished and not being deleted (FilterActivePods) */
export function isActive(pod: any): boolean {
  const phase = pod?.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod?.metadata?.deletionTimestamp;
}

export { isPodReady };

/** ready for at least minReadySeconds (IsPodAvailable) */
export function isPodAvailable(pod: any, minReadySeconds: number, now: number): boolean {
  if (!isPodReady(pod)) return false;
  if (!(minReadySeconds > 0)) return true;
  const since = Date.parse(readyCondition(pod)?.lastTransitionTime ?? '');
  return Number.isFinite(since) && since + minReadySeconds * 1000 <= now;
}

export class ReplicaController {
  readonly queue: RateLimitingQueue<string>;
  private readonly kind: ReplicaKind;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly burst: number;
  private readonly expectations: Expectations;
  private readonly owned: OwnedPods;

  constructor(private readonly o: ReplicaControllerOptions) {
    this.kind = o.kind;
    this.log = o.log ?? nopLogger;
    this.now = o.now ?? Date.now;
    this.burst = o.burstReplicas ?? BURST_REPLICAS;
    this.expectations = new Expectations(this.now);
    this.queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), o.kind.watchPrefix === 'replicationcontroller' ? 'replicationmanager' : o.kind.watchPrefix);
    this.owned = new OwnedPods({ kind: o.kind, objects: o.objects, pods: o.pods, queue: this.queue, expectations: this.expectations });
  }

  // ---- running ----

  async run(workers: number, signal: AbortSignal): Promise<void> {
    try {
      await runQueueWorkers(
        {
          name: this.kind.words,
          log: this.log,
          queue: this.queue,
          informers: [this.o.objects],
          sync: (k, s) => this.sync(k, s),
          onError: (k, err) => {
            this.log.error(err, `Sync of ${this.kind.kind} failed`, { [this.kind.kind]: k });
            this.queue.addRateLimited(k);
          },
        },
        workers,
        signal,
      );
    } finally {
      this.owned.stop();
    }
  }

  /** one object's sync (syncReplicaSet) */
  async sync(key: string, signal: AbortSignal): Promise<void> {
    const { namespace: ns, name } = splitKey(key);
    const obj = this.o.objects.getByName(ns, name);
    if (!obj) {
      this.expectations.delete(key);
      return;
    }
    if (!(await this.o.pods.synced(ns, signal))) {
      if (signal.aborted) return;
      throw new Error(`the pods of namespace ${ns} are not listed yet`);
    }
    const needsSync = this.expectations.satisfied(key);
    let selector: Requirement[] | null;
    try {
      selector = this.kind.selector(obj);
    } catch (e) {
      this.log.error(e, `${this.kind.kind} has an invalid selector`, { [this.kind.kind]: key });
      return;
    }
    const active = this.o.pods.list(ns).filter(isActive);
    const pods = await this.claim(obj, selector, active, signal);
    let failure: { reason: string; message: string } | undefined;
    if (needsSync && !obj.metadata.deletionTimestamp) failure = await this.manage(key, obj, pods, signal);
    const status = this.computeStatus(obj, pods, failure);
    const written = await this.writeStatus(obj, status, signal);
    // (a failed create or delete is tried again with the queue's backoff)
    if (failure) throw new Error(failure.message);
    const min = Number(obj.spec?.minReadySeconds ?? 0);
    if (min > 0 && written.readyReplicas === (obj.spec?.replicas ?? 1) && written.availableReplicas !== (obj.spec?.replicas ?? 1)) {
      this.queue.addAfter(key, min * 1000);
    }
  }

  // ---- claiming (PodControllerRefManager) ----

  /** the active pods the object controls after adopting matching orphans and releasing pods that no longer match */
  private async claim(obj: any, selector: Requirement[] | null, pods: any[], signal: AbortSignal): Promise<any[]> {
    const uid = obj.metadata.uid;
    const matches = (pod: any) => !!selector && selector.length > 0 && matchLabels(selector, pod?.metadata?.labels ?? {});
    const owned: any[] = [];
    let canAdopt: boolean | undefined;
    for (const pod of pods) {
      const ref = controllerRefOf(pod);
      if (ref) {
        if (ref.uid !== uid) continue;
        if (matches(pod)) owned.push(pod);
        else if (!obj.metadata.deletionTimestamp) await this.release(obj, pod, signal);
        continue;
      }
      if (!matches(pod) || obj.metadata.deletionTimestamp || pod.metadata?.deletionTimestamp) continue;
      // (a fresh read of the owner, once per sync: it may have been deleted and made again under the same name)
      canAdopt ??= await this.stillOwner(obj, signal);
      if (!canAdopt) continue;
      if (await this.adopt(obj, pod, signal)) owned.push(pod);
    }
    return owned;
  }

  private async stillOwner(obj: any, signal: AbortSignal): Promise<boolean> {
    try {
      const fresh = await new ResourceClient<any>(this.o.client, this.kind.gvr, obj.metadata.namespace).get(obj.metadata.name, { signal });
      if (fresh?.metadata?.uid !== obj.metadata.uid) {
        this.log.v(2).info(`original ${this.kind.kind} is gone`, { [this.kind.kind]: objectKey(obj), got: fresh?.metadata?.uid, wanted: obj.metadata.uid });
        return false;
      }
      return !fresh.metadata.deletionTimestamp;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  private controllerRef(obj: any): Record<string, unknown> {
    return { apiVersion: this.kind.apiVersion, kind: this.kind.kind, name: obj.metadata.name, uid: obj.metadata.uid, controller: true, blockOwnerDeletion: true };
  }

  private podPath(pod: any): string {
    return new ResourceClient<any>(this.o.client, PODS, pod.metadata.namespace).path(pod.metadata.name);
  }

  /** patches the controller reference in (the pod's uid as a precondition); false when the pod is gone */
  private async adopt(obj: any, pod: any, signal: AbortSignal): Promise<boolean> {
    const body = { metadata: { ownerReferences: [this.controllerRef(obj)], uid: pod.metadata.uid } };
    try {
      await this.o.client.json({ method: 'PATCH', path: this.podPath(pod), body, contentType: 'application/strategic-merge-patch+json', signal });
      this.log.v(2).info(`Adopted pod`, { pod: objectKey(pod), [this.kind.kind]: objectKey(obj) });
      return true;
    } catch (e) {
      if (isNotFound(e) || isConflict(e)) return false;
      throw e;
    }
  }

  private async release(obj: any, pod: any, signal: AbortSignal): Promise<void> {
    const body = { metadata: { ownerReferences: [{ $patch: 'delete', uid: obj.metadata.uid }], uid: pod.metadata.uid } };
    try {
      await this.o.client.json({ method: 'PATCH', path: this.podPath(pod), body, contentType: 'application/strategic-merge-patch+json', signal });
      this.log.v(2).info(`Released pod`, { pod: objectKey(pod), [this.kind.kind]: objectKey(obj) });
    } catch (e) {
      // (gone, or changed meanwhile: the pod's next event brings the object back)
      if (isNotFound(e) || isConflict(e) || (e as { code?: number }).code === 422) return;
      throw e;
    }
  }

  // ---- making up the difference (manageReplicas) ----

  private about(obj: any): any {
    return { ...obj, kind: this.kind.kind, apiVersion: this.kind.apiVersion };
  }

  /** creates or deletes pods toward spec.replicas; the failure for the ReplicaFailure condition, if any */
  private async manage(key: string, obj: any, pods: any[], signal: AbortSignal): Promise<{ reason: string; message: string } | undefined> {
    const want = Number(obj.spec?.replicas ?? 1);
    const diff = pods.length - want;
    if (diff < 0) {
      const n = Math.min(-diff, this.burst);
      this.expectations.expect(key, n);
      this.log.v(2).info('Too few replicas', { [this.kind.kind]: key, need: want, creating: n });
      let made = 0;
      let error: Error | undefined;
      // (slowStartBatch: batches of 1, 2, 4, ... at once; a batch with a failure stops the rest,
      // so that a template the API server refuses costs one request, not hundreds)
      for (let left = n, batch = 1; left > 0 && !error; batch *= 2) {
        const size = Math.min(batch, left);
        left -= size;
        const results = await Promise.allSettled(Array.from({ length: size }, () => this.createPod(obj, signal)));
        for (const r of results) {
          if (r.status === 'fulfilled') made++;
          else error ??= r.reason as Error;
        }
      }
      // (the creates never made will never be observed)
      for (let i = made; i < n; i++) this.expectations.creationObserved(key);
      if (error) return { reason: 'FailedCreate', message: messageOf(error) };
      return undefined;
    }
    if (diff > 0) {
      const n = Math.min(diff, this.burst);
      this.log.v(2).info('Too many replicas', { [this.kind.kind]: key, need: want, deleting: n });
      const victims = podsToDelete(pods, this.related(obj), n, this.now());
      this.expectations.expect(key, 0, victims.map(objectKey));
      const results = await Promise.allSettled(victims.map((p) => this.deletePod(obj, p, signal)));
      let error: Error | undefined;
      results.forEach((r, i) => {
        if (r.status === 'rejected') {
          this.expectations.deletionObserved(key, objectKey(victims[i]));
          error ??= r.reason as Error;
        }
      });
      if (error) return { reason: 'FailedDelete', message: messageOf(error) };
    }
    return undefined;
  }

  /**
   * The pods of every object of this kind with the same controller as this one (the ReplicaSets
   * of one Deployment), or of this one alone: a node running several of them is where a pod
   * goes first on a scale-down (getIndirectlyRelatedPods).
   */
  private related(obj: any): any[] {
    const owner = controllerRefOf(obj);
    const uids = new Set<string>([obj.metadata.uid]);
    if (owner) {
      for (const o of this.o.objects.list()) {
        if (o?.metadata?.namespace === obj.metadata.namespace && controllerRefOf(o)?.uid === owner.uid) uids.add(o.metadata.uid);
      }
    }
    return this.o.pods.list(obj.metadata.namespace).filter((p) => isActive(p) && uids.has(controllerRefOf(p)?.uid));
  }

  private async createPod(obj: any, signal: AbortSignal): Promise<void> {
    const pod = podFromTemplate(obj, this.controllerRef(obj));
    const about = this.about(obj);
    try {
      const made = await new ResourceClient<any>(this.o.client, PODS, obj.metadata.namespace).create(pod, { signal });
      void this.o.recorder?.event(about, 'Normal', 'SuccessfulCreate', `Created pod: ${made.metadata.name}`);
    } catch (e) {
      // (a namespace being deleted refuses new pods: no event for that, as in Kubernetes)
      if (!/is being terminated|because it is being terminated/.test(messageOf(e))) {
        void this.o.recorder?.event(about, 'Warning', 'FailedCreate', `Error creating: ${messageOf(e)}`);
      }
      throw e;
    }
  }

  private async deletePod(obj: any, pod: any, signal: AbortSignal): Promise<void> {
    const about = this.about(obj);
    try {
      await new ResourceClient<any>(this.o.client, PODS, pod.metadata.namespace).delete(pod.metadata.name, { preconditions: { uid: pod.metadata.uid }, signal });
      void this.o.recorder?.event(about, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`);
    } catch (e) {
      // (gone already: its delete is observed as any other)
      if (isNotFound(e)) return;
      void this.o.recorder?.event(about, 'Warning', 'FailedDelete', `Error deleting: ${messageOf(e)}`);
      throw e;
    }
  }

  // ---- status ----

  private computeStatus(obj: any, pods: any[], failure: { reason: string; message: string } | undefined): any {
    const min = Number(obj.spec?.minReadySeconds ?? 0);
    const now = this.now();
    const templateLabels = obj.spec?.template?.metadata?.labels ?? {};
    const fullyLabeled = fromLabelSelector({ matchLabels: templateLabels })!;
    let labeled = 0;
    let ready = 0;
    let available = 0;
    for (const p of pods) {
      if (matchLabels(fullyLabeled, p?.metadata?.labels ?? {})) labeled++;
      if (isPodReady(p)) {
        ready++;
        if (isPodAvailable(p, min, now)) available++;
      }
    }
    const prev: any[] = Array.isArray(obj.status?.conditions) ? obj.status.conditions : [];
    let conditions = prev.filter((c) => c?.type !== 'ReplicaFailure');
    const had = prev.find((c) => c?.type === 'ReplicaFailure');
    if (failure) {
      conditions = [...conditions, had ?? { type: 'ReplicaFailure', status: 'True', lastTransitionTime: new Date(now).toISOString().replace(/\.\d+Z$/, 'Z'), reason: failure.reason, message: failure.message }];
    }
    const status: any = {
      replicas: pods.length,
      fullyLabeledReplicas: labeled,
      readyReplicas: ready,
      availableReplicas: available,
      observedGeneration: obj.metadata.generation,
    };
    if (conditions.length) status.conditions = conditions;
    return status;
  }

  /** writes the status when it changed (a conflict: once more on a fresh read); the status now in effect */
  private async writeStatus(obj: any, status: any, signal: AbortSignal): Promise<any> {
    const client = new ResourceClient<any>(this.o.client, this.kind.gvr, obj.metadata.namespace);
    let cur = obj;
    for (let attempt = 0; ; attempt++) {
      if (sameStatus(cur.status, status)) return status;
      const want = Number(cur.spec?.replicas ?? 1);
      if (cur.status?.replicas !== status.replicas) {
        this.log.v(4).info(`Updating status for ${this.kind.kind}`, { [this.kind.kind]: objectKey(cur), replicas: `${cur.status?.replicas ?? 0}->${status.replicas} (need ${want})` });
      }
      try {
        await client.updateStatus({ ...cur, status }, { signal });
        return status;
      } catch (e) {
        if (isNotFound(e)) return status;
        if (!isConflict(e) || attempt > 0) throw e;
        cur = await client.get(cur.metadata.name, { signal });
        status = { ...status, observedGeneration: cur.metadata.generation };
      }
    }
  }
}

export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** equal status fields (the ones this controller writes, and conditions) */
function sameStatus(a: any, b: any): boolean {
  if (!a) return false;
  for (const f of ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration']) {
    if ((a[f] ?? 0) !== (b[f] ?? 0)) return false;
  }
  return JSON.stringify(a.conditions ?? []) === JSON.stringify(b.conditions ?? []);
}

/**
 * The pod a controller makes from its template (GetPodFromTemplate): the template's labels,
 * annotations, finalizers and spec, named `<owner>-` plus a random suffix by the API server.
 */
export function podFromTemplate(obj: any, controllerRef: Record<string, unknown>): any {
  const t = obj.spec?.template ?? {};
  const tm = t.metadata ?? {};
  const metadata: any = {
    generateName: podPrefix(obj.metadata.name),
    namespace: obj.metadata.namespace,
    ownerReferences: [controllerRef],
  };
  if (tm.labels) metadata.labels = { ...tm.labels };
  if (tm.annotations) metadata.annotations = { ...tm.annotations };
  if (Array.isArray(tm.finalizers)) metadata.finalizers = [...tm.finalizers];
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: structuredClone(t.spec ?? {}) };
}

/** `<name>-`, or the name alone when that would not be a valid pod name prefix (getPodsPrefix) */
function podPrefix(name: string): string {
  const p = `${name}-`;
  // (a generated name is the prefix and 5 characters; the prefix is cut to 58 by the API server)
  return /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?-?$/.test(p) && p.length <= 253 ? p : name;
}

// ---- which pods go first on a scale-down (ActivePodsWithRanks) ----

const PHASE_ORDER: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

/** the exponent of a duration in powers of two seconds (logarithmic buckets, LogarithmicScaleDown) */
function logBucket(ms: number): number {
  const s = Math.max(0, Math.floor(ms / 1000));
  return s === 0 ? 0 : Math.floor(Math.log2(s)) + 1;
}

function deletionCost(pod: any): number {
  const v = pod?.metadata?.annotations?.[POD_DELETION_COST];
  const n = v === undefined ? 0 : Number(v);
  return Number.isInteger(n) ? n : 0;
}

function restarts(pod: any): number {
  let max = 0;
  for (const s of Array.isArray(pod?.status?.containerStatuses) ? pod.status.containerStatuses : []) max = Math.max(max, Number(s?.restartCount ?? 0));
  return max;
}

/**
 * The n pods to delete: the least worth keeping first. A pod not on a node before one on a node;
 * Pending before Unknown before Running; not ready before ready; a lower pod-deletion-cost first;
 * one on a node that runs more of the related pods first; ready for less time first (in
 * logarithmic buckets); more container restarts first; newer first (logarithmic buckets).
 */
export function podsToDelete(pods: any[], related: any[], n: number, now: number): any[] {
  if (n >= pods.length) return pods.slice();
  const onNode = new Map<string, number>();
  for (const p of related) {
    const node = p?.spec?.nodeName;
    if (node) onNode.set(node, (onNode.get(node) ?? 0) + 1);
  }
  const rank = (p: any) => (p?.spec?.nodeName ? (onNode.get(p.spec.nodeName) ?? 0) : 0);
  const readySince = (p: any) => {
    const t = Date.parse(readyCondition(p)?.lastTransitionTime ?? '');
    return Number.isFinite(t) ? t : undefined;
  };
  const created = (p: any) => Date.parse(p?.metadata?.creationTimestamp ?? '');
  const cmp = (a: any, b: any): number => {
    const an = !!a?.spec?.nodeName;
    const bn = !!b?.spec?.nodeName;
    if (an !== bn) return an ? 1 : -1;
    const ap = PHASE_ORDER[a?.status?.phase] ?? 0;
    const bp = PHASE_ORDER[b?.status?.phase] ?? 0;
    if (ap !== bp) return ap - bp;
    const ar = isPodReady(a);
    const br = isPodReady(b);
    if (ar !== br) return ar ? 1 : -1;
    const ac = deletionCost(a);
    const bc = deletionCost(b);
    if (ac !== bc) return ac - bc;
    const ak = rank(a);
    const bk = rank(b);
    if (ak !== bk) return bk - ak;
    if (ar && br) {
      const at = readySince(a);
      const bt = readySince(b);
      if (at !== undefined && bt !== undefined) {
        const ab = logBucket(now - at);
        const bb = logBucket(now - bt);
        if (ab !== bb) return ab - bb;
      }
    }
    const rs = restarts(b) - restarts(a);
    if (rs !== 0) return rs;
    const ca = created(a);
    const cb = created(b);
    if (Number.isFinite(ca) && Number.isFinite(cb)) {
      const ab = logBucket(now - ca);
      const bb = logBucket(now - cb);
      if (ab !== bb) return ab - bb;
    }
    return 0;
  };
  return pods.slice().sort(cmp).slice(0, n);
}

// ---- the descriptors ----

function descriptor(name: string, kind: ReplicaKind, workers: (ctx: ControllerContext) => number): ControllerDescriptor {
  return {
    name,
    async run(ctx) {
      await withClient(ctx, kind.component, undefined, async (client) => {
        const c = new ReplicaController({
          kind,
          client,
          objects: informerOf<any>(ctx, kind.gvr),
          pods: ctx.pods,
          recorder: new EventRecorder(client, kind.component, ctx.log),
          log: ctx.log,
        });
        await c.run(workers(ctx), ctx.signal);
      });
    },
  };
}

export const replicaSetControllerDescriptor = descriptor('replicaset-controller', REPLICA_SET, (ctx) => ctx.options.concurrentReplicaSetSyncs);
export const replicationControllerDescriptor = descriptor('replicationcontroller-controller', REPLICATION_CONTROLLER, (ctx) => ctx.options.concurrentRCSyncs);
