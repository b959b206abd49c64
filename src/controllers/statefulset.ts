// The StatefulSet controller (kube-controller-manager's pkg/controller/statefulset): pods with a
// stable identity `<set>-<ordinal>`, each with its own PersistentVolumeClaims, made, replaced,
// scaled and updated in ordinal order, and the ControllerRevisions that record the set's
// templates.
//
// One sync of a StatefulSet (its key in the queue):
//   - its pods (those of its namespace whose name is `<set>-<n>`) are claimed: a matching orphan
//     is adopted, a controlled pod that no longer matches the selector is released;
//   - its revisions: the ControllerRevisions it controls, sorted by revision number. The update
//     revision is the one whose data equals the set's template now (`{"spec":{"template":{...,
//     "$patch":"replace"}}}`): an equal older one is given the next revision number, else a new one
//     is made, named `<set>-<hash>` (a name taken by other data raises status.collisionCount). The
//     current revision is status.currentRevision's, else the update revision;
//   - unless the set is being deleted, the pods (updateStatefulSet):
//       * a Failed or Succeeded pod is deleted (made again on a later sync);
//       * a missing ordinal in [start, start+replicas) is made (its claims first, when missing), from
//         the current revision below the partition (or below status.currentReplicas when
//         updateStrategy.rollingUpdate is unset),
//         else from the update revision; under OrderedReady one at a time, each after its
//         predecessors are Running and Ready (and available for minReadySeconds);
//       * the pods of ordinals out of range are deleted from the highest down: under OrderedReady
//         one at a time, once every pod in range is Running and Ready, and a condemned pod that is
//         not waits unless it is the unhealthy pod of the lowest ordinal; under Parallel all at once;
//       * RollingUpdate: from the highest ordinal down to the partition, the first pod not at the
//         update revision is deleted (the sync above makes it again from the update revision) once
//         every pod below it... is healthy; one at a time. OnDelete: pods are made again only when
//         deleted by someone else.
//   - the status (replicas, readyReplicas, currentReplicas, updatedReplicas, availableReplicas,
//     currentRevision, updateRevision, collisionCount, observedGeneration) through the status
//     subresource; a rolling update whose pods are all updated and ready makes the update
//     revision current;
//   - revisions beyond revisionHistoryLimit (default 10) that no pod uses and that are neither
//     current nor update are deleted, oldest first.
// Events as Kubernetes words them: SuccessfulCreate / SuccessfulDelete / FailedCreate /
// FailedDelete for pods and claims (`create Pod web-0 in StatefulSet web successful`).

import { DeletedFinalStateUnknown, type Informer } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isAlreadyExists, isConflict, isNotFound, type RESTClient } from '../client/rest.js';
import { ResourceClient, objectKey, splitKey } from '../client/resources.js';
import { EventRecorder } from '../client/events.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { fromLabelSelector, matchLabels, type Requirement } from '../machinery/selectors.js';
import { informerOf, withClient, type ControllerDescriptor } from './context.js';
import { PODS, type NamespacedPods } from './podwatch.js';
import { controllerRefOf } from './expectations.js';
import { runQueueWorkers } from './workers.js';
import { isPodAvailable, isPodReady, messageOf } from './replicaset.js';
import { canonicalJSON, computeHash } from './deployment.js';

export const STATEFULSETS = { group: 'apps', version: 'v1', resource: 'statefulsets' };
export const CONTROLLER_REVISIONS = { group: 'apps', version: 'v1', resource: 'controllerrevisions' };
const PVCS = { group: '', version: 'v1', resource: 'persistentvolumeclaims' };

/** the pod label naming the revision a pod was made from (apps.ControllerRevisionHashLabelKey) */
export const REVISION_LABEL = 'controller-revision-hash';
export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';
/** the label of a ControllerRevision holding its hash (history.ControllerRevisionHashLabel) */
export const REVISION_HASH_LABEL = 'controller.kubernetes.io/hash';
const COMPONENT = 'statefulset-controller';

// ---- pure helpers ----

/** the first ordinal (spec.ordinals.start, default 0) */
export function startOrdinal(set: any): number {
  const s = Number(set?.spec?.ordinals?.start ?? 0);
  return Number.isInteger(s) && s > 0 ? s : 0;
}

export function replicasOf(set: any): number {
  const r = set?.spec?.replicas;
  return r === undefined || r === null ? 1 : Number(r);
}

/** the ordinal of a pod of the set (its name `<set>-<n>`), or -1 (getParentNameAndOrdinal) */
export function ordinalOf(set: any, pod: any): number {
  const name: string = pod?.metadata?.name ?? '';
  const m = /^(.*)-(\d+)$/.exec(name);
  if (!m || m[1] !== set?.metadata?.name) return -1;
  const n = Number(m[2]);
  return Number.isSafeInteger(n) ? n : -1;
}

export const podName = (set: any, ordinal: number): string => `${set.metadata.name}-${ordinal}`;
export const claimName = (set: any, claim: string, ordinal: number): string => `${claim}-${set.metadata.name}-${ordinal}`;

/** the data of a revision of the set: its template, replacing the whole (getPatch) */
export function revisionData(set: any): any {
  return { spec: { template: { ...structuredClone(set?.spec?.template ?? {}), $patch: 'replace' } } };
}

/** the template a revision records */
export function templateOfRevision(rev: any): any {
  const t = { ...(rev?.data?.spec?.template ?? {}) };
  delete t.$patch;
  return t;
}

/** the revision's hash (HashControllerRevision): FNV-32a of its data, then the collision count */
export function revisionHash(data: unknown, collisionCount?: number): string {
  return computeHash(data, collisionCount);
}

/** the revisions' data equal (history.EqualRevision) */
export function equalRevision(a: any, b: any): boolean {
  return canonicalJSON(a?.data) === canonicalJSON(b?.data);
}

export const isRunningAndReady = (pod: any): boolean => pod?.status?.phase === 'Running' && isPodReady(pod);
const isTerminating = (pod: any): boolean => !!pod?.metadata?.deletionTimestamp;
const isFinished = (pod: any): boolean => pod?.status?.phase === 'Failed' || pod?.status?.phase === 'Succeeded';
const isHealthy = (pod: any): boolean => isRunningAndReady(pod) && !isTerminating(pod);
const revisionOfPod = (pod: any): string | undefined => pod?.metadata?.labels?.[REVISION_LABEL];

/** a pod of the set at `ordinal` from `template` (newVersionedStatefulSetPod), labelled with `revision` */
export function newStatefulPod(set: any, template: any, revision: string, ordinal: number, controllerRef: Record<string, unknown>): any {
  const tm = template?.metadata ?? {};
  const name = podName(set, ordinal);
  const metadata: any = { name, namespace: set.metadata.namespace, ownerReferences: [controllerRef] };
  metadata.labels = { ...(tm.labels ?? {}), [POD_NAME_LABEL]: name, [POD_INDEX_LABEL]: String(ordinal), [REVISION_LABEL]: revision };
  if (tm.annotations) metadata.annotations = { ...tm.annotations };
  if (Array.isArray(tm.finalizers)) metadata.finalizers = [...tm.finalizers];
  const spec: any = structuredClone(template?.spec ?? {});
  spec.hostname = name;
  if (set.spec?.serviceName) spec.subdomain = set.spec.serviceName;
  // (updateStorage: each claim template's volume points at the pod's own claim)
  const claims: any[] = Array.isArray(set.spec?.volumeClaimTemplates) ? set.spec.volumeClaimTemplates : [];
  if (claims.length) {
    const names = new Set(claims.map((c) => c?.metadata?.name));
    const volumes: any[] = (Array.isArray(spec.volumes) ? spec.volumes : []).filter((v: any) => !names.has(v?.name));
    for (const c of claims) volumes.push({ name: c.metadata.name, persistentVolumeClaim: { claimName: claimName(set, c.metadata.name, ordinal) } });
    spec.volumes = volumes;
  }
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec };
}

/** the claims of the pod at `ordinal` (getPersistentVolumeClaims), owner references per the retention policy */
export function claimsFor(set: any, ordinal: number): any[] {
  const out: any[] = [];
  const selectorLabels = set.spec?.selector?.matchLabels ?? {};
  for (const t of Array.isArray(set.spec?.volumeClaimTemplates) ? set.spec.volumeClaimTemplates : []) {
    const meta: any = { ...(t.metadata ?? {}) };
    delete meta.name;
    delete meta.namespace;
    const claim: any = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { ...meta, name: claimName(set, t.metadata.name, ordinal), namespace: set.metadata.namespace, labels: { ...(t.metadata?.labels ?? {}), ...selectorLabels } },
      spec: structuredClone(t.spec ?? {}),
    };
    const refs = claimOwners(set, { metadata: { name: podName(set, ordinal) } }, t.metadata?.ownerReferences);
    if (refs.length) claim.metadata.ownerReferences = refs;
    else delete claim.metadata.ownerReferences;
    out.push(claim);
  }
  return out;
}

/**
 * The owner references a claim of `pod` should have under the set's
 * persistentVolumeClaimRetentionPolicy (updateClaimOwnerRefForSetAndPod): the set as controller
 * under whenDeleted: Delete, unless the pod is scaled down (out of the ordinal range) under
 * whenScaled: Delete, when the pod is; the claim's other references kept, and none of ours added
 * when another object controls it. `pod` may be one not made yet (no uid).
 */
export function claimOwners(set: any, pod: any, refs: any[] | undefined): any[] {
  const ours = (r: any) => r?.uid === set.metadata.uid || (r?.kind === 'Pod' && r?.name === pod.metadata.name);
  const kept = (refs ?? []).filter((r) => !ours(r));
  if (kept.some((r) => r?.controller)) return kept;
  const policy = set.spec?.persistentVolumeClaimRetentionPolicy ?? {};
  const ord = ordinalOf(set, pod);
  const scaledDown = ord < startOrdinal(set) || ord >= startOrdinal(set) + replicasOf(set);
  const out = [...kept];
  if (policy.whenScaled === 'Delete' && scaledDown) {
    if (pod.metadata.uid) out.push({ apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid, controller: true, blockOwnerDeletion: true });
  } else if (policy.whenDeleted === 'Delete') {
    out.push({ apiVersion: 'apps/v1', kind: 'StatefulSet', name: set.metadata.name, uid: set.metadata.uid, controller: true, blockOwnerDeletion: true });
  }
  return out;
}

const sameRefs = (a: any[] | undefined, b: any[]): boolean => canonicalJSON(a ?? []) === canonicalJSON(b);

/** which revisions the history keeps: the live ones and the newest `limit` of the others; the rest, oldest first */
export function revisionsToTrim(revisions: any[], live: Set<string>, limit: number): any[] {
  const dead = revisions.filter((r) => !live.has(r.metadata.name)).sort((a, b) => Number(a.revision ?? 0) - Number(b.revision ?? 0));
  return dead.slice(0, Math.max(0, dead.length - Math.max(0, limit)));
}

interface SetStatus {
  observedGeneration?: number;
  replicas: number;
  readyReplicas: number;
  currentReplicas: number;
  updatedReplicas: number;
  availableReplicas: number;
  currentRevision?: string;
  updateRevision?: string;
  collisionCount: number;
}

/** the status counts of the set's pods (computeReplicaStatus) */
export function replicaStatus(pods: any[], currentRevision: string, updateRevision: string, minReadySeconds: number, now: number): Omit<SetStatus, 'collisionCount'> {
  const s = { replicas: 0, readyReplicas: 0, currentReplicas: 0, updatedReplicas: 0, availableReplicas: 0 };
  for (const p of pods) {
    s.replicas++;
    if (isRunningAndReady(p)) {
      s.readyReplicas++;
      if (isPodAvailable(p, minReadySeconds, now)) s.availableReplicas++;
    }
    if (!isTerminating(p)) {
      if (revisionOfPod(p) === currentRevision) s.currentReplicas++;
      if (revisionOfPod(p) === updateRevision) s.updatedReplicas++;
    }
  }
  return { ...s, currentRevision, updateRevision };
}

// ---- the controller ----

export interface StatefulSetControllerOptions {
  client: RESTClient;
  sets: Informer<any>;
  revisions: Informer<any>;
  /** the claims, to see which a pod lacks */
  claims: Informer<any>;
  pods: NamespacedPods;
  recorder?: EventRecorder;
  log?: Logger;
  now?: () => number;
}

export class StatefulSetController {
  readonly queue: RateLimitingQueue<string>;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly watched = new Set<string>();
  private podHandler?: { remove(): void };

  constructor(private readonly o: StatefulSetControllerOptions) {
    this.log = o.log ?? nopLogger;
    this.now = o.now ?? Date.now;
    this.queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'statefulset');
    o.sets.addEventHandler({
      add: (s) => this.onSet(s),
      update: (_old, s) => this.onSet(s),
      delete: (d) => {
        const s = d instanceof DeletedFinalStateUnknown ? d.obj : d;
        const key = objectKey(s);
        this.unwatch(key);
        this.queue.add(key);
      },
    });
    o.revisions.addEventHandler({
      add: (r) => this.onRevision(r),
      update: (_old, r) => this.onRevision(r),
      delete: (d) => this.onRevision(d instanceof DeletedFinalStateUnknown ? d.obj : d),
    });
    // (a claim deleted may let a pod whose claim was stale be made)
    o.claims.addEventHandler({ delete: (d) => this.onClaimGone(d instanceof DeletedFinalStateUnknown ? d.obj : d) });
    this.podHandler = o.pods.addEventHandler({
      add: (p) => this.onPod(undefined, p),
      update: (old, p) => this.onPod(old, p),
      delete: (d) => this.onPod(undefined, d instanceof DeletedFinalStateUnknown ? d.obj : d),
    });
  }

  private onSet(s: any): void {
    const key = objectKey(s);
    if (!this.watched.has(key)) {
      this.watched.add(key);
      this.o.pods.watch(s.metadata.namespace, `statefulset:${key}`);
    }
    this.queue.add(key);
  }

  private unwatch(key: string): void {
    if (!this.watched.delete(key)) return;
    this.o.pods.unwatch(splitKey(key).namespace, `statefulset:${key}`);
  }

  private resolve(namespace: string, ref: any): any {
    if (ref?.kind !== 'StatefulSet' || ref?.apiVersion?.split('/')[0] !== 'apps') return undefined;
    const s = this.o.sets.getByName(namespace, ref.name);
    return s?.metadata?.uid === ref.uid ? s : undefined;
  }

  private onRevision(r: any): void {
    const ref = controllerRefOf(r);
    const s = ref && this.resolve(r?.metadata?.namespace, ref);
    if (s) this.queue.add(objectKey(s));
  }

  /** the sets with a claim template that names this claim */
  private onClaimGone(claim: any): void {
    const ns = claim?.metadata?.namespace;
    const name: string = claim?.metadata?.name ?? '';
    for (const s of this.o.sets.list()) {
      if (s?.metadata?.namespace !== ns) continue;
      for (const t of Array.isArray(s.spec?.volumeClaimTemplates) ? s.spec.volumeClaimTemplates : []) {
        const prefix = `${t?.metadata?.name}-${s.metadata.name}-`;
        if (name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length))) this.queue.add(objectKey(s));
      }
    }
  }

  private onPod(old: any, pod: any): void {
    if (old && old.metadata?.resourceVersion === pod?.metadata?.resourceVersion) return;
    const ns = pod?.metadata?.namespace;
    const keys = new Set<string>();
    for (const p of old ? [old, pod] : [pod]) {
      const ref = controllerRefOf(p);
      if (ref) {
        const s = this.resolve(ns, ref);
        if (s) keys.add(objectKey(s));
      } else {
        // (an orphan: the sets that would adopt it)
        for (const s of this.o.sets.list()) {
          if (s?.metadata?.namespace !== ns || ordinalOf(s, p) < 0) continue;
          const sel = selectorOf(s);
          if (sel && matchLabels(sel, p?.metadata?.labels ?? {})) keys.add(objectKey(s));
        }
      }
    }
    for (const k of keys) {
      this.queue.add(k);
      // a pod that has just become ready is available minReadySeconds later
      const s = this.o.sets.getByName(ns, splitKey(k).name);
      const min = Number(s?.spec?.minReadySeconds ?? 0);
      if (min > 0 && old && !isPodReady(old) && isPodReady(pod)) this.queue.addAfter(k, min * 1000 + 500);
    }
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    try {
      await runQueueWorkers(
        {
          name: 'statefulset controller',
          log: this.log,
          queue: this.queue,
          informers: [this.o.sets, this.o.revisions, this.o.claims],
          sync: (k, s) => this.sync(k, s),
          onError: (k, err) => {
            this.log.error(err, 'Error syncing StatefulSet, requeuing', { statefulSet: k });
            this.queue.addRateLimited(k);
          },
        },
        workers,
        signal,
      );
    } finally {
      this.podHandler?.remove();
      for (const key of [...this.watched]) this.unwatch(key);
    }
  }

  async sync(key: string, signal: AbortSignal): Promise<void> {
    const { namespace: ns, name } = splitKey(key);
    const set = this.o.sets.getByName(ns, name);
    if (!set) return;
    if (!(await this.o.pods.synced(ns, signal))) {
      if (signal.aborted) return;
      throw new Error(`the pods of namespace ${ns} are not listed yet`);
    }
    let selector: Requirement[] | null;
    try {
      selector = selectorOf(set);
    } catch (e) {
      this.log.error(e, 'StatefulSet has an invalid selector', { statefulSet: key });
      return;
    }
    if (!selector || selector.length === 0) return;
    const pods = await this.claimPods(set, selector, signal);
    const revisions = await this.claimRevisions(set, selector, signal);
    const { current, update, collisionCount, all } = await this.revisionsOf(set, revisions, signal);
    let error: unknown;
    let requeueAfter: number | undefined;
    if (!set.metadata.deletionTimestamp) {
      try {
        requeueAfter = await this.updatePods(set, pods, current, update, signal);
      } catch (e) {
        error = e;
      }
    }
    const fresh = this.o.pods.list(ns).filter((p) => controllerRefOf(p)?.uid === set.metadata.uid && ordinalOf(set, p) >= 0);
    const status: SetStatus = {
      observedGeneration: set.metadata.generation,
      ...replicaStatus(fresh, current.metadata.name, update.metadata.name, Number(set.spec?.minReadySeconds ?? 0), this.now()),
      collisionCount,
    };
    if ((set.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate' && status.updatedReplicas === status.replicas && status.readyReplicas === status.replicas) {
      // (completeRollingUpdate)
      status.currentReplicas = status.updatedReplicas;
      status.currentRevision = status.updateRevision;
    }
    await this.writeStatus(set, status, signal);
    await this.trimHistory(set, all, fresh, status, signal);
    if (error) throw error;
    if (requeueAfter !== undefined) this.queue.addAfter(key, requeueAfter);
  }

  // ---- claiming ----

  private controllerRef(set: any): Record<string, unknown> {
    return { apiVersion: 'apps/v1', kind: 'StatefulSet', name: set.metadata.name, uid: set.metadata.uid, controller: true, blockOwnerDeletion: true };
  }

  private about(set: any): any {
    return { ...set, apiVersion: 'apps/v1', kind: 'StatefulSet' };
  }

  private async stillOwner(set: any, signal: AbortSignal): Promise<boolean> {
    try {
      const fresh = await new ResourceClient<any>(this.o.client, STATEFULSETS, set.metadata.namespace).get(set.metadata.name, { signal });
      return fresh?.metadata?.uid === set.metadata.uid && !fresh.metadata.deletionTimestamp;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  /** adopts matching orphans, releases controlled objects that no longer match; the controlled matching ones */
  private async claim(set: any, objects: any[], matches: (o: any) => boolean, path: (o: any) => string, signal: AbortSignal): Promise<any[]> {
    const uid = set.metadata.uid;
    const owned: any[] = [];
    let canAdopt: boolean | undefined;
    for (const o of objects) {
      const ref = controllerRefOf(o);
      if (ref) {
        if (ref.uid !== uid) continue;
        if (matches(o)) owned.push(o);
        else if (!set.metadata.deletionTimestamp) await this.patchRefs(path(o), { metadata: { ownerReferences: [{ $patch: 'delete', uid }], uid: o.metadata.uid } }, signal);
        continue;
      }
      if (!matches(o) || set.metadata.deletionTimestamp || o.metadata?.deletionTimestamp) continue;
      canAdopt ??= await this.stillOwner(set, signal);
      if (!canAdopt) continue;
      if (await this.patchRefs(path(o), { metadata: { ownerReferences: [this.controllerRef(set)], uid: o.metadata.uid } }, signal)) owned.push(o);
    }
    return owned;
  }

  private async patchRefs(path: string, body: any, signal: AbortSignal): Promise<boolean> {
    try {
      await this.o.client.json({ method: 'PATCH', path, body, contentType: 'application/strategic-merge-patch+json', signal });
      return true;
    } catch (e) {
      if (isNotFound(e) || isConflict(e) || (e as { code?: number }).code === 422) return false;
      throw e;
    }
  }

  private claimPods(set: any, selector: Requirement[], signal: AbortSignal): Promise<any[]> {
    const ns = set.metadata.namespace;
    const pods = new ResourceClient<any>(this.o.client, PODS, ns);
    // (isMemberOf: only pods named after the set are claimed, or released)
    const members = this.o.pods.list(ns).filter((p) => ordinalOf(set, p) >= 0);
    return this.claim(set, members, (p) => matchLabels(selector, p?.metadata?.labels ?? {}), (p) => pods.path(p.metadata.name), signal);
  }

  private claimRevisions(set: any, selector: Requirement[], signal: AbortSignal): Promise<any[]> {
    const ns = set.metadata.namespace;
    const revs = new ResourceClient<any>(this.o.client, CONTROLLER_REVISIONS, ns);
    const inNs = this.o.revisions.list().filter((r) => r?.metadata?.namespace === ns);
    return this.claim(set, inNs, (r) => matchLabels(selector, r?.metadata?.labels ?? {}), (r) => revs.path(r.metadata.name), signal);
  }

  // ---- revisions (getStatefulSetRevisions) ----

  private async revisionsOf(set: any, owned: any[], signal: AbortSignal): Promise<{ current: any; update: any; collisionCount: number; all: any[] }> {
    const ns = set.metadata.namespace;
    const client = new ResourceClient<any>(this.o.client, CONTROLLER_REVISIONS, ns);
    const all = owned.slice().sort((a, b) => Number(a.revision ?? 0) - Number(b.revision ?? 0));
    let collisionCount = Number(set.status?.collisionCount ?? 0);
    const next = (all.length ? Number(all[all.length - 1].revision ?? 0) : 0) + 1;
    const data = revisionData(set);
    const want = { data };
    const equal = all.filter((r) => equalRevision(r, want));
    let update: any;
    if (equal.length && equal[equal.length - 1] === all[all.length - 1]) {
      update = equal[equal.length - 1];
    } else if (equal.length) {
      // an older template again: its revision becomes the newest
      const r = equal[equal.length - 1];
      update = await client.update({ ...r, revision: next }, { signal });
      const i = all.indexOf(r);
      all[i] = update;
    } else {
      for (;;) {
        const hash = revisionHash(data, collisionCount || undefined);
        const rev = {
          apiVersion: 'apps/v1',
          kind: 'ControllerRevision',
          metadata: {
            name: `${set.metadata.name.slice(0, 223)}-${hash}`,
            namespace: ns,
            labels: { ...(set.spec?.template?.metadata?.labels ?? {}), [REVISION_HASH_LABEL]: hash },
            ownerReferences: [this.controllerRef(set)],
          },
          data,
          revision: next,
        };
        try {
          update = await client.create(rev, { signal });
          break;
        } catch (e) {
          if (!isAlreadyExists(e)) throw e;
          const existing = await client.get(rev.metadata.name, { signal });
          if (controllerRefOf(existing)?.uid === set.metadata.uid && equalRevision(existing, rev)) {
            update = existing;
            break;
          }
          collisionCount++;
        }
      }
      all.push(update);
    }
    const current = all.find((r) => r.metadata.name === set.status?.currentRevision) ?? update;
    return { current, update, collisionCount, all };
  }

  // ---- pods (updateStatefulSet) ----

  /** makes, deletes and replaces pods; a delay after which to look again (minReadySeconds), if any */
  private async updatePods(set: any, pods: any[], current: any, update: any, signal: AbortSignal): Promise<number | undefined> {
    const start = startOrdinal(set);
    const replicas = replicasOf(set);
    const monotonic = (set.spec?.podManagementPolicy ?? 'OrderedReady') !== 'Parallel';
    const minReady = Number(set.spec?.minReadySeconds ?? 0);
    const now = this.now();
    const slots: (any | undefined)[] = new Array(replicas).fill(undefined);
    const condemned: any[] = [];
    for (const p of pods) {
      const ord = ordinalOf(set, p);
      if (ord >= start && ord < start + replicas) slots[ord - start] = p;
      else condemned.push(p);
    }
    condemned.sort((a, b) => ordinalOf(set, b) - ordinalOf(set, a));
    const rolling = (set.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
    const partition = rolling ? Number(set.spec?.updateStrategy?.rollingUpdate?.partition ?? 0) : 0;
    const currentReplicas = Number(set.status?.currentReplicas ?? 0);
    let requeue: number | undefined;
    const available = (p: any): boolean => {
      if (!isRunningAndReady(p)) return false;
      if (isPodAvailable(p, minReady, now)) return true;
      requeue = minReady * 1000;
      return false;
    };

    // the pods of the ordinals in range
    for (let i = 0; i < replicas; i++) {
      const ord = start + i;
      let pod = slots[i];
      if (pod && isFinished(pod) && !isTerminating(pod)) {
        this.log.v(2).info('StatefulSet found failed or succeeded Pod, will recreate', { statefulSet: objectKey(set), pod: pod.metadata.name, phase: pod.status?.phase });
        await this.deletePod(set, pod, signal);
        if (monotonic) return requeue;
        continue;
      }
      if (!pod) {
        // (newVersionedStatefulSetPod: below the partition, or the current replicas without one, the current revision)
        const useCurrent = rolling && current !== update && (set.spec?.updateStrategy?.rollingUpdate ? i < partition : i < currentReplicas);
        const rev = useCurrent ? current : update;
        pod = newStatefulPod(set, templateOfRevision(rev), rev.metadata.name, ord, this.controllerRef(set));
        await this.createPod(set, pod, signal);
        if (monotonic) return requeue;
        continue;
      }
      // (a pending pod whose claim was deleted gets it again)
      if (!isTerminating(pod) && (pod.status?.phase ?? 'Pending') === 'Pending') await this.createClaims(set, ord, signal, true);
      if (monotonic && isTerminating(pod)) {
        this.log.v(4).info('StatefulSet is waiting for Pod to Terminate', { statefulSet: objectKey(set), pod: pod.metadata.name });
        return requeue;
      }
      if (monotonic && !available(pod)) {
        this.log.v(4).info('StatefulSet is waiting for Pod to be Running and Ready', { statefulSet: objectKey(set), pod: pod.metadata.name });
        return requeue;
      }
      if (isTerminating(pod)) continue;
      // (the identity: a pod that lost its pod-name label gets it back)
      if (pod.metadata?.labels?.[POD_NAME_LABEL] !== pod.metadata.name) await this.restoreIdentity(set, pod, ord, signal);
      // (its claims' owners, after a change of the retention policy or a scale back up)
      await this.fixClaimOwners(set, pod, signal);
    }

    // the pods of ordinals out of range, highest first
    // (the unhealthy pod of the lowest ordinal may go; any other that is not ready waits for it)
    let firstUnhealthy: any;
    for (const p of [...slots, ...condemned]) {
      if (p && !isHealthy(p) && (!firstUnhealthy || ordinalOf(set, p) < ordinalOf(set, firstUnhealthy))) firstUnhealthy = p;
    }
    for (const pod of condemned) {
      if (isTerminating(pod)) {
        if (monotonic) return requeue;
        continue;
      }
      if (monotonic && !available(pod) && pod !== firstUnhealthy) {
        this.log.v(4).info('StatefulSet is waiting for Pod to be Running and Ready prior to scale down', { statefulSet: objectKey(set), pod: firstUnhealthy?.metadata?.name });
        return requeue;
      }
      await this.fixClaimOwners(set, pod, signal);
      await this.deletePod(set, pod, signal);
      if (monotonic) return requeue;
    }
    if (!rolling) return requeue;

    // a rolling update: the highest pod not at the update revision, down to the partition, one at a time
    for (let i = replicas - 1; i >= partition; i--) {
      const pod = slots[i];
      if (!pod) return requeue;
      if (revisionOfPod(pod) !== update.metadata.name) {
        if (isTerminating(pod)) return requeue;
        this.log.v(2).info('StatefulSet terminating Pod for update', { statefulSet: objectKey(set), pod: pod.metadata.name });
        await this.deletePod(set, pod, signal);
        return requeue;
      }
      // (wait for unhealthy pods on update)
      if (!isHealthy(pod)) return requeue;
    }
    return requeue;
  }

  /** the pod's missing claims; unless `missingOnly`, a claim being deleted is an error too */
  private async createClaims(set: any, ordinal: number, signal: AbortSignal, missingOnly = false): Promise<void> {
    const client = new ResourceClient<any>(this.o.client, PVCS, set.metadata.namespace);
    const pod = podName(set, ordinal);
    const errs: string[] = [];
    for (const claim of claimsFor(set, ordinal)) {
      const have = this.o.claims.getByName(set.metadata.namespace, claim.metadata.name);
      if (have) {
        // (a claim being deleted holds its pod back until it is gone)
        if (have.metadata?.deletionTimestamp && !missingOnly) errs.push(`pvc ${claim.metadata.name} is being deleted`);
        continue;
      }
      try {
        await client.create(claim, { signal });
        void this.o.recorder?.event(this.about(set), 'Normal', 'SuccessfulCreate', `create Claim ${claim.metadata.name} Pod ${pod} in StatefulSet ${set.metadata.name} success`);
      } catch (e) {
        errs.push(`failed to create PVC ${claim.metadata.name}: ${messageOf(e)}`);
        // (one the cache had not shown yet: no event)
        if (!isAlreadyExists(e)) void this.o.recorder?.event(this.about(set), 'Warning', 'FailedCreate', `create Claim ${claim.metadata.name} for Pod ${pod} in StatefulSet ${set.metadata.name} failed error: ${messageOf(e)}`);
      }
    }
    if (errs.length) throw new Error(errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`);
  }

  private async restoreIdentity(set: any, pod: any, ord: number, signal: AbortSignal): Promise<void> {
    const path = new ResourceClient<any>(this.o.client, PODS, set.metadata.namespace).path(pod.metadata.name);
    const body = { metadata: { labels: { [POD_NAME_LABEL]: pod.metadata.name, [POD_INDEX_LABEL]: String(ord) }, uid: pod.metadata.uid } };
    try {
      await this.o.client.json({ method: 'PATCH', path, body, contentType: 'application/strategic-merge-patch+json', signal });
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  }

  /** the owner references of the pod's existing claims brought in line with the retention policy (UpdatePodClaimForRetentionPolicy) */
  private async fixClaimOwners(set: any, pod: any, signal: AbortSignal): Promise<void> {
    const ord = ordinalOf(set, pod);
    const ns = set.metadata.namespace;
    const client = new ResourceClient<any>(this.o.client, PVCS, ns);
    for (const t of Array.isArray(set.spec?.volumeClaimTemplates) ? set.spec.volumeClaimTemplates : []) {
      const claim = this.o.claims.getByName(ns, claimName(set, t.metadata.name, ord));
      if (!claim || claim.metadata.deletionTimestamp) continue;
      const refs = claimOwners(set, pod, claim.metadata.ownerReferences);
      if (sameRefs(claim.metadata.ownerReferences, refs)) continue;
      const metadata = { ...claim.metadata, ownerReferences: refs };
      if (!refs.length) delete metadata.ownerReferences;
      // (an update, not a patch: the role of statefulset-controller may update claims, not patch
      // them; a conflict fails the sync, tried again before anything else happens to the pod)
      try {
        await client.update({ ...claim, metadata }, { signal });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
  }

  /**
   * A claim of the pod still owned by a pod of that name gone since (whenScaled: Delete): the
   * garbage collector is about to delete it, so the pod waits (PodClaimIsStale).
   */
  private staleClaim(set: any, pod: any): string | undefined {
    if ((set.spec?.persistentVolumeClaimRetentionPolicy?.whenScaled ?? 'Retain') === 'Retain') return undefined;
    const ord = ordinalOf(set, pod);
    for (const t of Array.isArray(set.spec?.volumeClaimTemplates) ? set.spec.volumeClaimTemplates : []) {
      const claim = this.o.claims.getByName(set.metadata.namespace, claimName(set, t.metadata.name, ord));
      const refs: any[] = Array.isArray(claim?.metadata?.ownerReferences) ? claim.metadata.ownerReferences : [];
      if (refs.some((r) => r?.kind === 'Pod' && r?.name === pod.metadata.name && r?.uid !== pod.metadata.uid)) return claim.metadata.name;
    }
    return undefined;
  }

  /** the pod's claims, then the pod (CreateStatefulPod); nothing while a claim is stale */
  private async createPod(set: any, pod: any, signal: AbortSignal): Promise<void> {
    const msg = `create Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name}`;
    const stale = this.staleClaim(set, pod);
    if (stale) {
      this.log.v(4).info('StatefulSet is waiting for a stale claim to go', { statefulSet: objectKey(set), pod: pod.metadata.name, claim: stale });
      return;
    }
    try {
      await this.createClaims(set, ordinalOf(set, pod), signal);
    } catch (e) {
      void this.o.recorder?.event(this.about(set), 'Warning', 'FailedCreate', `${msg} failed error: ${messageOf(e)}`);
      throw e;
    }
    try {
      await new ResourceClient<any>(this.o.client, PODS, set.metadata.namespace).create(pod, { signal });
      void this.o.recorder?.event(this.about(set), 'Normal', 'SuccessfulCreate', `${msg} successful`);
    } catch (e) {
      // (the name is taken: a pod the cache has not shown yet, or one this set does not own; tried
      // again with backoff, without an event)
      if (isAlreadyExists(e)) throw e;
      if (!/is being terminated/.test(messageOf(e))) void this.o.recorder?.event(this.about(set), 'Warning', 'FailedCreate', `${msg} failed error: ${messageOf(e)}`);
      throw e;
    }
  }

  private async deletePod(set: any, pod: any, signal: AbortSignal): Promise<void> {
    const msg = `delete Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name}`;
    try {
      await new ResourceClient<any>(this.o.client, PODS, set.metadata.namespace).delete(pod.metadata.name, { preconditions: { uid: pod.metadata.uid }, signal });
      void this.o.recorder?.event(this.about(set), 'Normal', 'SuccessfulDelete', `${msg} successful`);
    } catch (e) {
      if (isNotFound(e) || isConflict(e)) return;
      void this.o.recorder?.event(this.about(set), 'Warning', 'FailedDelete', `${msg} failed error: ${messageOf(e)}`);
      throw e;
    }
  }

  // ---- status and history ----

  private async writeStatus(set: any, status: SetStatus, signal: AbortSignal): Promise<void> {
    const client = new ResourceClient<any>(this.o.client, STATEFULSETS, set.metadata.namespace);
    let cur = set;
    for (let attempt = 0; ; attempt++) {
      if (sameStatus(cur.status, status)) return;
      try {
        await client.updateStatus({ ...cur, status: { ...(cur.status ?? {}), ...status } }, { signal });
        return;
      } catch (e) {
        if (isNotFound(e)) return;
        if (!isConflict(e) || attempt > 2) throw e;
        cur = await client.get(cur.metadata.name, { signal });
        status = { ...status, observedGeneration: Math.min(Number(status.observedGeneration), Number(cur.metadata.generation)) };
      }
    }
  }

  private async trimHistory(set: any, revisions: any[], pods: any[], status: SetStatus, signal: AbortSignal): Promise<void> {
    const live = new Set<string>([status.currentRevision!, status.updateRevision!]);
    for (const p of pods) {
      const r = revisionOfPod(p);
      if (r) live.add(r);
    }
    const limit = set.spec?.revisionHistoryLimit ?? 10;
    const client = new ResourceClient<any>(this.o.client, CONTROLLER_REVISIONS, set.metadata.namespace);
    for (const r of revisionsToTrim(revisions, live, Number(limit))) {
      try {
        await client.delete(r.metadata.name, { preconditions: { uid: r.metadata.uid }, signal });
      } catch (e) {
        if (!isNotFound(e) && !isConflict(e)) throw e;
      }
    }
  }
}

function selectorOf(set: any): Requirement[] | null {
  return fromLabelSelector(set?.spec?.selector);
}

function sameStatus(a: any, b: SetStatus): boolean {
  if (!a) return false;
  for (const f of ['observedGeneration', 'replicas', 'readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas', 'collisionCount'] as const) {
    if ((a[f] ?? 0) !== (b[f] ?? 0)) return false;
  }
  return a.currentRevision === b.currentRevision && a.updateRevision === b.updateRevision;
}

export const statefulSetControllerDescriptor: ControllerDescriptor = {
  name: 'statefulset-controller',
  async run(ctx) {
    await withClient(ctx, COMPONENT, undefined, async (client) => {
      const c = new StatefulSetController({
        client,
        sets: informerOf<any>(ctx, STATEFULSETS),
        revisions: informerOf<any>(ctx, CONTROLLER_REVISIONS),
        claims: informerOf<any>(ctx, PVCS),
        pods: ctx.pods,
        recorder: new EventRecorder(client, COMPONENT, ctx.log),
        log: ctx.log,
      });
      await c.run(ctx.options.concurrentStatefulSetSyncs, ctx.signal);
    });
  },
};
