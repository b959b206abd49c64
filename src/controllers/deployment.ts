// The deployment controller (kube-controller-manager's pkg/controller/deployment): a Deployment
// rolls its pods out through ReplicaSets, one per pod template.
//
// One sync of a Deployment (its key in the queue):
//   - the ReplicaSets of its namespace are claimed: an orphan whose labels match the selector is
//     adopted (a controller reference patched in, after a fresh read shows the Deployment is still
//     the same object and not being deleted), one it controls whose labels no longer match is
//     released (the reference patched out);
//   - the new ReplicaSet is the oldest one whose template equals the Deployment's, leaving out the
//     pod-template-hash label; the others are old. The new one is made when missing, named
//     `<deployment>-<pod-template-hash>`, with that label in its template, labels and selector,
//     the Deployment's annotations, and the annotations deployment.kubernetes.io/revision (one
//     more than the highest of the old ones), desired-replicas and max-replicas; a ReplicaSet
//     brought back to be the new one (a rollback) keeps its former revisions in
//     deployment.kubernetes.io/revision-history. A name taken by a ReplicaSet with another
//     template (a hash collision) raises status.collisionCount, which goes into the next hash;
//   - then, as Kubernetes orders it: a Deployment being deleted only gets its status; a paused one,
//     or one whose spec.replicas changed under its ReplicaSets (a scaling event, told by their
//     desired-replicas annotations), is scaled proportionally (every active ReplicaSet its share
//     of the difference, the largest first) without a rollout; else the strategy rolls it out:
//     RollingUpdate scales the new ReplicaSet up within maxSurge and the old ones down within
//     maxUnavailable (the ones with unavailable pods first), Recreate scales the old ones to 0,
//     waits until none of their pods is left, then scales the new one up;
//   - old ReplicaSets scaled to 0 beyond spec.revisionHistoryLimit are deleted (the lowest
//     revisions first) once the rollout is complete, or while paused;
//   - the status (observedGeneration, replicas, updatedReplicas, readyReplicas,
//     availableReplicas, unavailableReplicas, collisionCount) comes from the ReplicaSets' status,
//     with the conditions Available, Progressing (against spec.progressDeadlineSeconds: the
//     Deployment is queued again for the time its deadline would pass) and ReplicaFailure (from
//     the ReplicaSets), written through the status subresource only when it changed.
// The deprecated rollback annotation (deprecated.deployment.rollback.to, what the extensions
// API's rollback subresource left) is carried out; `kubectl rollout undo` (1.27+) instead patches
// the old ReplicaSet's template into the Deployment, which is an ordinary rollout here.
//
// Events as Kubernetes writes them, from the component "deployment-controller":
// ScalingReplicaSet, SelectingAll, ReplicaSetCreateError, DeploymentRollback and the rollback
// warnings.
//
// Pods are read only for Recreate (are the old ReplicaSets' pods gone?): the namespace's pods
// come from the shared per-namespace pod watch (podwatch.ts), held while a Recreate Deployment
// exists there, rather than an informer over every pod of the cluster.
//
// The pod-template-hash: Kubernetes hashes (FNV-32a) Go's deep printout of the template struct
// (every field of the Go types, nil or not) and the collision count, and spells the number with
// SafeEncodeString. That printout cannot be reproduced without Go's type definitions, so the hash
// here is FNV-32a over the template's canonical JSON (keys sorted, nulls dropped) plus the
// collision count as Kubernetes appends it, spelled the same way: the same form and alphabet, a
// different value. Nothing depends on the value: Kubernetes finds a Deployment's new
// ReplicaSet by comparing templates, not hashes.

import { DeletedFinalStateUnknown, type Informer } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isAlreadyExists, isConflict, isInvalid, isNotFound, type RESTClient } from '../client/rest.js';
import { ResourceClient, objectKey, splitKey } from '../client/resources.js';
import { EventRecorder } from '../client/events.js';
import { RateLimitingQueue, defaultControllerRateLimiter } from '../client/workqueue.js';
import { fromLabelSelector, matchLabels, type Requirement } from '../machinery/selectors.js';
import { rfc3339 } from '../machinery/time.js';
import { informerOf, withClient, type ControllerDescriptor } from './context.js';
import type { NamespacedPods } from './podwatch.js';
import { controllerRefOf } from './expectations.js';
import { runQueueWorkers } from './workers.js';

const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments' };
const REPLICA_SETS = { group: 'apps', version: 'v1', resource: 'replicasets' };
const COMPONENT = 'deployment-controller';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
/** the revision to roll back to, as the extensions API's rollback left it on the Deployment */
export const ROLLBACK_TO_ANNOTATION = 'deprecated.deployment.rollback.to';
const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
/** the label that tells a Deployment's ReplicaSets (and their pods) apart */
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';

/** the Deployment's annotations a ReplicaSet does not take (and a rollback does not bring back) */
const ANNOTATIONS_TO_SKIP = new Set([LAST_APPLIED_ANNOTATION, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION, DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, ROLLBACK_TO_ANNOTATION]);
/** the longest revision-history annotation kept */
const MAX_REV_HISTORY_CHARS = 2000;
const MAX_INT32 = 2147483647;
/** a failing Deployment is retried this many times with backoff, then dropped until its next event */
const MAX_RETRIES = 15;

/** the reasons of the conditions and events */
export const REASONS = {
  minimumReplicasAvailable: 'MinimumReplicasAvailable',
  minimumReplicasUnavailable: 'MinimumReplicasUnavailable',
  newRSCreated: 'NewReplicaSetCreated',
  foundNewRS: 'FoundNewReplicaSet',
  replicaSetUpdated: 'ReplicaSetUpdated',
  newRSAvailable: 'NewReplicaSetAvailable',
  timedOut: 'ProgressDeadlineExceeded',
  paused: 'DeploymentPaused',
  resumed: 'DeploymentResumed',
  failedRSCreate: 'ReplicaSetCreateError',
  rollbackRevisionNotFound: 'DeploymentRollbackRevisionNotFound',
  rollbackTemplateUnchanged: 'DeploymentRollbackTemplateUnchanged',
  rollbackDone: 'DeploymentRollback',
} as const;

// ---------------------------------------------------------------------------------------------
// The pod-template-hash

/** FNV-32a of some bytes, continuing from `h` */
function fnv32a(bytes: Uint8Array, h = 0x811c9dc5): number {
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** the characters of apimachinery's rand.SafeEncodeString: no vowels (no words), no look-alikes */
const SAFE_ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

/** each character replaced by one of SAFE_ALPHANUMS, picked by its code modulo their number */
export function safeEncodeString(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += SAFE_ALPHANUMS[s.charCodeAt(i) % SAFE_ALPHANUMS.length];
  return out;
}

/** JSON with object keys sorted and null members left out: one text per value */
export function canonicalJSON(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : canonicalJSON(x))).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const parts: string[] = [];
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x === null || x === undefined) continue;
      parts.push(`${JSON.stringify(k)}:${canonicalJSON(x)}`);
    }
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * The pod-template-hash of a template (ComputeHash): FNV-32a over the template (its canonical
 * JSON here; see the header), then the collision count when there is one as eight little-endian
 * bytes, the decimal number spelled with SafeEncodeString.
 */
export function computeHash(template: unknown, collisionCount?: number): string {
  let h = fnv32a(Buffer.from(canonicalJSON(template ?? {}), 'utf8'));
  if (collisionCount !== undefined && collisionCount !== null) {
    const b = Buffer.alloc(8);
    b.writeUInt32LE(collisionCount >>> 0, 0);
    h = fnv32a(b, h);
  }
  return safeEncodeString(String(h));
}

/**
 * The JSON form of a value as Kubernetes' semantic equality sees it: an empty list or map is the
 * same as none, nulls are left out.
 */
function semantic(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? v.map(semantic) : undefined;
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const s = semantic(x);
      if (s !== undefined) out[k] = s;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return v === null ? undefined : v;
}

/** two pod templates equal but for the pod-template-hash label (EqualIgnoreHash) */
export function equalIgnoreHash(a: any, b: any): boolean {
  const strip = (t: any): unknown => {
    const labels = { ...(t?.metadata?.labels ?? {}) };
    delete labels[POD_TEMPLATE_HASH_LABEL];
    return semantic({ ...(t ?? {}), metadata: { ...(t?.metadata ?? {}), labels } });
  };
  return canonicalJSON(strip(a)) === canonicalJSON(strip(b));
}

// ---------------------------------------------------------------------------------------------
// Replica arithmetic

/** spec.replicas of a Deployment or ReplicaSet (defaulted to 1 by the API server) */
export const specReplicas = (o: any): number => Number(o?.spec?.replicas ?? 1);

/**
 * An int-or-percent as a number of replicas (GetScaledValueFromIntOrPercent): an integer as it
 * is, a percentage of `total` rounded up or down. Anything else is an error, as in Kubernetes.
 */
export function scaledValue(v: unknown, total: number, roundUp: boolean): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number') return v;
  const s = String(v);
  const m = /^(-?\d+)%$/.exec(s);
  if (!s.endsWith('%')) throw new Error('invalid value for IntOrString: invalid type: string is not a percentage');
  if (!m) throw new Error(`invalid value for IntOrString: invalid value ${JSON.stringify(s)}`);
  const n = Number(m[1]);
  const x = (n * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}

const isRollingUpdate = (d: any): boolean => d?.spec?.strategy?.type === 'RollingUpdate';

/**
 * maxSurge and maxUnavailable of a rolling update as numbers of replicas (ResolveFenceposts):
 * the surge rounded up, the unavailable rounded down, and an unavailable of 1 when both come to 0
 * (so that a rollout can go on where a surge is not possible, e.g. under a quota).
 */
export function resolveFenceposts(maxSurge: unknown, maxUnavailable: unknown, desired: number): { surge: number; unavailable: number } {
  const surge = scaledValue(maxSurge ?? 0, desired, true);
  let unavailable = scaledValue(maxUnavailable ?? 0, desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

/** the replicas a rolling update may run above spec.replicas (0 for Recreate) */
export function maxSurge(d: any): number {
  if (!isRollingUpdate(d)) return 0;
  const ru = d.spec.strategy.rollingUpdate ?? {};
  return resolveFenceposts(ru.maxSurge, ru.maxUnavailable, specReplicas(d)).surge;
}

/** the replicas a rolling update may have unavailable (0 for Recreate), at most spec.replicas */
export function maxUnavailable(d: any): number {
  const replicas = specReplicas(d);
  if (!isRollingUpdate(d) || replicas === 0) return 0;
  const ru = d.spec.strategy.rollingUpdate ?? {};
  return Math.min(resolveFenceposts(ru.maxSurge, ru.maxUnavailable, replicas).unavailable, replicas);
}

const sum = (rss: any[], f: (rs: any) => number): number => rss.reduce((n, rs) => n + (rs ? f(rs) : 0), 0);
/** the replicas the ReplicaSets ask for */
export const replicaCount = (rss: any[]): number => sum(rss, specReplicas);
/** the pods the ReplicaSets have (status.replicas) */
export const actualReplicaCount = (rss: any[]): number => sum(rss, (rs) => Number(rs.status?.replicas ?? 0));
const readyReplicaCount = (rss: any[]): number => sum(rss, (rs) => Number(rs.status?.readyReplicas ?? 0));
const availableReplicaCount = (rss: any[]): number => sum(rss, (rs) => Number(rs.status?.availableReplicas ?? 0));
/** the ReplicaSets that ask for pods */
export const filterActive = (rss: any[]): any[] => rss.filter((rs) => rs && specReplicas(rs) > 0);

/** the replicas the new ReplicaSet should ask for now (NewRSNewReplicas) */
export function newRSNewReplicas(d: any, allRSs: any[], newRS: any): number {
  const want = specReplicas(d);
  switch (d?.spec?.strategy?.type) {
    case 'RollingUpdate': {
      const surge = scaledValue(d.spec.strategy.rollingUpdate?.maxSurge, want, true);
      const current = replicaCount(allRSs);
      const maxTotal = want + surge;
      if (current >= maxTotal) return specReplicas(newRS);
      // (never above spec.replicas)
      return specReplicas(newRS) + Math.min(maxTotal - current, want - specReplicas(newRS));
    }
    case 'Recreate':
      return want;
    default:
      throw new Error(`deployment type ${d?.spec?.strategy?.type} isn't supported`);
  }
}

// ---------------------------------------------------------------------------------------------
// Orders and revisions

const created = (o: any): number => Date.parse(o?.metadata?.creationTimestamp ?? '') || 0;

/** older first; the same second by name (ReplicaSetsByCreationTimestamp) */
export function byCreation(a: any, b: any): number {
  const d = created(a) - created(b);
  if (d !== 0) return d;
  const an = a?.metadata?.name ?? '';
  const bn = b?.metadata?.name ?? '';
  return an < bn ? -1 : an > bn ? 1 : 0;
}

/** a ReplicaSet's revision; NaN when its annotation is not a number (0 when it has none) */
export function revisionOf(rs: any): number {
  const v = rs?.metadata?.annotations?.[REVISION_ANNOTATION];
  if (v === undefined || v === '') return 0;
  return /^[+-]?\d+$/.test(v) ? Number(v) : NaN;
}

/** lower revisions first, the same revision older first (ReplicaSetsByRevision) */
function byRevision(a: any, b: any): number {
  const ra = revisionOf(a) || 0;
  const rb = revisionOf(b) || 0;
  return ra === rb ? byCreation(a, b) : ra - rb;
}

/** the highest revision of the ReplicaSets (MaxRevision) */
export function maxRevision(rss: any[]): number {
  let max = 0;
  for (const rs of rss) {
    const v = revisionOf(rs);
    if (Number.isFinite(v) && v > max) max = v;
  }
  return max;
}

/** the second highest revision of the ReplicaSets (LastRevision) */
function lastRevision(rss: any[]): number {
  let max = 0;
  let second = 0;
  for (const rs of rss) {
    const v = revisionOf(rs);
    if (!Number.isFinite(v)) continue;
    if (v >= max) {
      second = max;
      max = v;
    } else if (v > second) second = v;
  }
  return second;
}

/** the oldest ReplicaSet whose template is the Deployment's (FindNewReplicaSet) */
export function findNewReplicaSet(d: any, rss: any[]): any {
  return [...rss].sort(byCreation).find((rs) => equalIgnoreHash(rs.spec?.template, d.spec?.template));
}

/** every ReplicaSet of the Deployment but the new one */
function findOldReplicaSets(d: any, rss: any[]): any[] {
  const uid = findNewReplicaSet(d, rss)?.metadata?.uid;
  return rss.filter((rs) => rs.metadata?.uid !== uid);
}

// ---------------------------------------------------------------------------------------------
// Annotations

/** copies the Deployment's annotations, but the skipped ones, onto the ReplicaSet; true when one changed */
function copyDeploymentAnnotations(d: any, rs: any): boolean {
  rs.metadata.annotations ??= {};
  let changed = false;
  for (const [k, v] of Object.entries<string>(d.metadata?.annotations ?? {})) {
    if (ANNOTATIONS_TO_SKIP.has(k) || rs.metadata.annotations[k] === v) continue;
    rs.metadata.annotations[k] = v;
    changed = true;
  }
  return changed;
}

function replicasAnnotationsNeedUpdate(rs: any, desired: number, max: number): boolean {
  const a = rs?.metadata?.annotations ?? {};
  return a[DESIRED_REPLICAS_ANNOTATION] !== String(desired) || a[MAX_REPLICAS_ANNOTATION] !== String(max);
}

/** sets desired-replicas and max-replicas; true when one changed */
function setReplicasAnnotations(rs: any, desired: number, max: number): boolean {
  if (!replicasAnnotationsNeedUpdate(rs, desired, max)) return false;
  rs.metadata.annotations ??= {};
  rs.metadata.annotations[DESIRED_REPLICAS_ANNOTATION] = String(desired);
  rs.metadata.annotations[MAX_REPLICAS_ANNOTATION] = String(max);
  return true;
}

/**
 * The annotations of the new ReplicaSet (SetNewReplicaSetAnnotations): the Deployment's, the
 * revision when it is lower than `newRevision` (a ReplicaSet that had one is being rolled back
 * to: its former revision goes into the revision history, trimmed from the front to 2000
 * characters), and for one about to be made the replicas annotations. True when one changed.
 */
export function setNewReplicaSetAnnotations(d: any, rs: any, newRevision: number, exists: boolean, log: Logger = nopLogger): boolean {
  let changed = copyDeploymentAnnotations(d, rs);
  const annotations = rs.metadata.annotations;
  const had = Object.prototype.hasOwnProperty.call(annotations, REVISION_ANNOTATION);
  const oldRevision: string = annotations[REVISION_ANNOTATION] ?? '';
  let old = 0;
  if (oldRevision !== '') {
    if (!/^[+-]?\d+$/.test(oldRevision)) {
      log.info('Updating replica set revision OldRevision not int', { replicaSet: `${rs.metadata.namespace}/${rs.metadata.name}` });
      return false;
    }
    old = Number(oldRevision);
  }
  if (old < newRevision) {
    annotations[REVISION_ANNOTATION] = String(newRevision);
    changed = true;
    if (had) appendRevisionHistory(annotations, oldRevision, log);
  }
  if (!exists && setReplicasAnnotations(rs, specReplicas(d), specReplicas(d) + maxSurge(d))) changed = true;
  return changed;
}

/** adds the former revision of a ReplicaSet rolled back to to its revision history */
function appendRevisionHistory(annotations: Record<string, string>, oldRevision: string, log: Logger): void {
  const history = annotations[REVISION_HISTORY_ANNOTATION] ?? '';
  if (history === '') {
    annotations[REVISION_HISTORY_ANNOTATION] = oldRevision;
    return;
  }
  const revisions = history.split(',');
  let total = history.length + oldRevision.length + 1;
  let start = 0;
  while (total > MAX_REV_HISTORY_CHARS && start < revisions.length) {
    total -= revisions[start]!.length + 1;
    start++;
  }
  if (total <= MAX_REV_HISTORY_CHARS) annotations[REVISION_HISTORY_ANNOTATION] = [...revisions.slice(start), oldRevision].join(',');
  else log.info('Not appending revision due to revision history length limit reached', { revisionHistoryLimit: MAX_REV_HISTORY_CHARS });
}

/** sets the Deployment's revision annotation; true when it changed (SetDeploymentRevision) */
function setDeploymentRevision(d: any, revision: string): boolean {
  d.metadata.annotations ??= {};
  if (d.metadata.annotations[REVISION_ANNOTATION] === revision) return false;
  d.metadata.annotations[REVISION_ANNOTATION] = revision;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Proportional scaling

/** a ReplicaSet that asks for all of spec.replicas, and has them all available (IsSaturated) */
function isSaturated(d: any, rs: any): boolean {
  if (!rs) return false;
  const desired = rs.metadata?.annotations?.[DESIRED_REPLICAS_ANNOTATION];
  if (desired === undefined || !/^[+-]?\d+$/.test(desired)) return false;
  const want = specReplicas(d);
  return specReplicas(rs) === want && Number(desired) === want && Number(rs.status?.availableReplicas ?? 0) === want;
}

/** the only active ReplicaSet, or the newest when none is active; none when several are (FindActiveOrLatest) */
function findActiveOrLatest(newRS: any, oldRSs: any[]): any {
  if (!newRS && oldRSs.length === 0) return undefined;
  const newestFirst = [...oldRSs].sort((a, b) => byCreation(b, a));
  const active = filterActive([...newestFirst, newRS]);
  if (active.length === 0) return newRS ?? newestFirst[0];
  return active.length === 1 ? active[0] : undefined;
}

/** Go's integer.RoundToInt32: halves away from zero */
const roundToInt = (x: number): number => (x < 0 ? Math.ceil(x - 0.5) : Math.floor(x + 0.5));

/** how far a ReplicaSet moves toward its share of the Deployment's new size (getReplicaSetFraction) */
function replicaSetFraction(rs: any, d: any): number {
  const replicas = specReplicas(rs);
  if (specReplicas(d) === 0) return -replicas;
  const deploymentReplicas = specReplicas(d) + maxSurge(d);
  const annotated = rs.metadata?.annotations?.[MAX_REPLICAS_ANNOTATION];
  // (without the annotation, the Deployment's size as its status has it)
  let before = annotated !== undefined && /^[+-]?\d+$/.test(annotated) ? Number(annotated) : Number(d.status?.replicas ?? 0);
  if (before === 0) before = deploymentReplicas;
  return roundToInt((replicas * deploymentReplicas) / before) - replicas;
}

/** the replicas a ReplicaSet gains or loses of `toAdd`, `added` of it handed out already (GetReplicaSetProportion) */
function replicaSetProportion(rs: any, d: any, toAdd: number, added: number): number {
  if (!rs || specReplicas(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const fraction = replicaSetFraction(rs, d);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

// ---------------------------------------------------------------------------------------------
// Conditions and status

export interface DeploymentCondition {
  type: string;
  status: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

function newCondition(type: string, status: string, reason: string, message: string, now: number): DeploymentCondition {
  const t = rfc3339(now);
  return { type, status, lastUpdateTime: t, lastTransitionTime: t, reason, message };
}

export function getCondition(status: any, type: string): DeploymentCondition | undefined {
  return (Array.isArray(status?.conditions) ? status.conditions : []).find((c: any) => c?.type === type);
}

/**
 * Sets a condition in a status (SetDeploymentCondition): nothing changes when one of the type
 * has the same status and reason; the transition time is kept when the status is the same. The
 * condition goes to the end of the list.
 */
export function setCondition(status: any, c: DeploymentCondition): void {
  const cur = getCondition(status, c.type);
  if (cur && cur.status === c.status && cur.reason === c.reason) return;
  const next = { ...c };
  if (cur && cur.status === c.status) next.lastTransitionTime = cur.lastTransitionTime;
  status.conditions = [...removed(status.conditions, c.type), next];
}

function removed(conditions: unknown, type: string): DeploymentCondition[] {
  return (Array.isArray(conditions) ? conditions : []).filter((c) => c?.type !== type);
}

function removeCondition(status: any, type: string): void {
  const rest = removed(status.conditions, type);
  if (rest.length) status.conditions = rest;
  else delete status.conditions;
}

/** progressDeadlineSeconds set, and not "never" (max int32) */
const hasProgressDeadline = (d: any): boolean => typeof d?.spec?.progressDeadlineSeconds === 'number' && d.spec.progressDeadlineSeconds !== MAX_INT32;
/** revisionHistoryLimit set, and not "keep all" (max int32) */
const hasRevisionHistoryLimit = (d: any): boolean => typeof d?.spec?.revisionHistoryLimit === 'number' && d.spec.revisionHistoryLimit !== MAX_INT32;

/**
 * The status the ReplicaSets make (calculateStatus): counts, the collision count kept, the
 * conditions kept with Available set by whether spec.replicas - maxUnavailable are available.
 * Zero counts are left out, as Go's omitempty leaves them.
 */
export function calculateStatus(allRSs: any[], newRS: any, d: any, now: number): any {
  const available = availableReplicaCount(allRSs);
  const unavailable = Math.max(0, replicaCount(allRSs) - available);
  const status: any = {};
  const put = (k: string, v: number) => {
    if (v) status[k] = v;
  };
  put('observedGeneration', Number(d.metadata?.generation ?? 0));
  put('replicas', actualReplicaCount(allRSs));
  put('updatedReplicas', actualReplicaCount(newRS ? [newRS] : []));
  put('readyReplicas', readyReplicaCount(allRSs));
  put('availableReplicas', available);
  put('unavailableReplicas', unavailable);
  if (Array.isArray(d.status?.conditions) && d.status.conditions.length) status.conditions = d.status.conditions.map((c: any) => ({ ...c }));
  if (typeof d.status?.collisionCount === 'number') status.collisionCount = d.status.collisionCount;
  if (available >= specReplicas(d) - maxUnavailable(d)) {
    setCondition(status, newCondition('Available', 'True', REASONS.minimumReplicasAvailable, 'Deployment has minimum availability.', now));
  } else {
    setCondition(status, newCondition('Available', 'False', REASONS.minimumReplicasUnavailable, 'Deployment does not have minimum availability.', now));
  }
  return status;
}

const count = (s: any, k: string): number => Number(s?.[k] ?? 0);

/** every replica updated and available, and the spec observed (DeploymentComplete) */
export function deploymentComplete(d: any, s: any): boolean {
  const want = specReplicas(d);
  return count(s, 'updatedReplicas') === want && count(s, 'replicas') === want && count(s, 'availableReplicas') === want && count(s, 'observedGeneration') >= Number(d.metadata?.generation ?? 0);
}

/** more updated, ready or available replicas than the status had, or fewer old ones (DeploymentProgressing) */
function deploymentProgressing(d: any, s: any): boolean {
  const old = d.status ?? {};
  const oldOld = count(old, 'replicas') - count(old, 'updatedReplicas');
  const newOld = count(s, 'replicas') - count(s, 'updatedReplicas');
  return count(s, 'updatedReplicas') > count(old, 'updatedReplicas') || newOld < oldOld || count(s, 'readyReplicas') > count(old, 'readyReplicas') || count(s, 'availableReplicas') > count(old, 'availableReplicas');
}

/** no progress reported for progressDeadlineSeconds (DeploymentTimedOut) */
function deploymentTimedOut(d: any, s: any, now: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const c = getCondition(s, 'Progressing');
  if (!c || c.reason === REASONS.newRSAvailable) return false;
  if (c.reason === REASONS.timedOut) return true;
  const from = Date.parse(c.lastUpdateTime ?? '');
  return Number.isFinite(from) && from + d.spec.progressDeadlineSeconds * 1000 < now;
}

/** a status as Go's reflect.DeepEqual compares two (zero counts the same as none) */
function sameStatus(a: any, b: any): boolean {
  const norm = (s: any) => {
    const o: any = { ...(s ?? {}) };
    for (const k of ['observedGeneration', 'replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas', 'terminatingReplicas']) if (!o[k]) delete o[k];
    if (Array.isArray(o.conditions) && o.conditions.length === 0) delete o.conditions;
    return canonicalJSON(o);
  };
  return norm(a) === norm(b);
}

// ---------------------------------------------------------------------------------------------
// The controller

const isRecreate = (d: any): boolean => d?.spec?.strategy?.type === 'Recreate';
const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const namespaceTerminating = (e: unknown): boolean => ((e as any)?.details?.causes ?? []).some((c: any) => c?.type === 'NamespaceTerminating');

/** a selector with no requirements: Kubernetes refuses to act on a Deployment that selects every pod */
function selectsEverything(sel: any): boolean {
  if (!sel || typeof sel !== 'object') return false;
  return Object.keys(sel.matchLabels ?? {}).length === 0 && (sel.matchExpressions ?? []).length === 0;
}

export interface DeploymentControllerOptions {
  client: RESTClient;
  deployments: Informer<any>;
  replicaSets: Informer<any>;
  pods: NamespacedPods;
  recorder?: EventRecorder;
  log?: Logger;
  now?: () => number;
}

export class DeploymentController {
  readonly queue = new RateLimitingQueue<string>(defaultControllerRateLimiter(), 'deployment');
  private readonly log: Logger;
  private readonly now: () => number;
  /** the Recreate Deployments (by key) that hold their namespace's pod watch */
  private readonly watching = new Set<string>();
  private podHandler?: { remove(): void };

  constructor(private readonly o: DeploymentControllerOptions) {
    this.log = o.log ?? nopLogger;
    this.now = o.now ?? Date.now;
    o.deployments.addEventHandler({
      add: (d) => this.onDeployment(d),
      update: (_old, d) => this.onDeployment(d),
      delete: (x) => {
        const d = x instanceof DeletedFinalStateUnknown ? x.obj : x;
        this.unwatchPods(objectKey(d));
        this.queue.add(objectKey(d));
      },
    });
    o.replicaSets.addEventHandler({
      add: (rs) => this.onReplicaSetAdd(rs),
      update: (old, rs) => this.onReplicaSetUpdate(old, rs),
      delete: (x) => this.onReplicaSetDelete(x instanceof DeletedFinalStateUnknown ? x.obj : x),
    });
    this.podHandler = o.pods.addEventHandler({ delete: (x) => this.onPodDelete(x instanceof DeletedFinalStateUnknown ? x.obj : x) });
  }

  // ---- events ----

  private onDeployment(d: any): void {
    const key = objectKey(d);
    if (isRecreate(d)) this.watchPods(key);
    else this.unwatchPods(key);
    this.queue.add(key);
  }

  private watchPods(key: string): void {
    if (this.watching.has(key)) return;
    this.watching.add(key);
    this.o.pods.watch(splitKey(key).namespace, `deployment:${key}`);
  }

  private unwatchPods(key: string): void {
    if (!this.watching.delete(key)) return;
    this.o.pods.unwatch(splitKey(key).namespace, `deployment:${key}`);
  }

  /** the Deployment a controller reference names, when the cache has it with that uid */
  private resolve(namespace: string, ref: any): any {
    if (ref?.kind !== 'Deployment') return undefined;
    const d = this.o.deployments.getByName(namespace, ref.name);
    return d?.metadata?.uid === ref.uid ? d : undefined;
  }

  /** the Deployments whose selector matches an orphan ReplicaSet's labels (getDeploymentsForReplicaSet) */
  private selecting(rs: any): any[] {
    const out: any[] = [];
    for (const d of this.o.deployments.list()) {
      if (d?.metadata?.namespace !== rs?.metadata?.namespace) continue;
      let sel: Requirement[] | null;
      try {
        sel = fromLabelSelector(d.spec?.selector);
      } catch {
        continue;
      }
      if (sel && sel.length && matchLabels(sel, rs.metadata?.labels ?? {})) out.push(d);
    }
    if (out.length > 1) this.log.v(4).info('user error! more than one deployment is selecting replica set', { replicaSet: objectKey(rs), labels: rs.metadata?.labels, deployment: objectKey(out[0]) });
    return out;
  }

  private onReplicaSetAdd(rs: any): void {
    if (rs?.metadata?.deletionTimestamp) {
      // (seen first when already being deleted: as good as gone)
      this.onReplicaSetDelete(rs);
      return;
    }
    const ref = controllerRefOf(rs);
    if (ref) {
      const d = this.resolve(rs.metadata.namespace, ref);
      if (d) this.queue.add(objectKey(d));
      return;
    }
    for (const d of this.selecting(rs)) this.queue.add(objectKey(d));
  }

  private onReplicaSetUpdate(old: any, rs: any): void {
    if (old?.metadata?.resourceVersion === rs?.metadata?.resourceVersion) return;
    const ref = controllerRefOf(rs);
    const oldRef = controllerRefOf(old);
    const refChanged = canonicalJSON(ref) !== canonicalJSON(oldRef);
    if (refChanged && oldRef) {
      const was = this.resolve(old.metadata.namespace, oldRef);
      if (was) this.queue.add(objectKey(was));
    }
    if (ref) {
      const d = this.resolve(rs.metadata.namespace, ref);
      if (d) this.queue.add(objectKey(d));
      return;
    }
    const labelsChanged = canonicalJSON(old?.metadata?.labels ?? {}) !== canonicalJSON(rs?.metadata?.labels ?? {});
    if (labelsChanged || refChanged) for (const d of this.selecting(rs)) this.queue.add(objectKey(d));
  }

  private onReplicaSetDelete(rs: any): void {
    const ref = controllerRefOf(rs);
    if (!ref) return;
    const d = this.resolve(rs?.metadata?.namespace, ref);
    if (d) this.queue.add(objectKey(d));
  }

  /** a pod gone: a Recreate Deployment waiting for its old pods to go looks again once none is left */
  private onPodDelete(pod: any): void {
    const ns = pod?.metadata?.namespace;
    const rsRef = controllerRefOf(pod);
    if (!rsRef || rsRef.kind !== 'ReplicaSet') return;
    const rs = this.o.replicaSets.getByName(ns, rsRef.name);
    if (!rs || rs.metadata?.uid !== rsRef.uid) return;
    const d = this.resolve(ns, controllerRefOf(rs));
    if (!d || !isRecreate(d)) return;
    const rss = this.replicaSetsIn(ns).filter((x) => controllerRefOf(x)?.uid === d.metadata.uid);
    const left = [...this.podMap(d, rss).values()].reduce((n, pods) => n + pods.length, 0);
    if (left === 0) this.queue.add(objectKey(d));
  }

  private replicaSetsIn(ns: string): any[] {
    return this.o.replicaSets.list().filter((rs) => rs?.metadata?.namespace === ns);
  }

  /** the pods the Deployment's selector matches, by the uid of the ReplicaSet among `rss` that controls them (getPodMapForDeployment) */
  private podMap(d: any, rss: any[]): Map<string, any[]> {
    const map = new Map<string, any[]>(rss.map((rs) => [rs.metadata.uid, []]));
    let sel: Requirement[] | null;
    try {
      sel = fromLabelSelector(d.spec?.selector);
    } catch {
      return map;
    }
    if (!sel) return map;
    for (const pod of this.o.pods.list(d.metadata.namespace)) {
      if (!matchLabels(sel, pod?.metadata?.labels ?? {})) continue;
      const list = map.get(controllerRefOf(pod)?.uid);
      if (list) list.push(pod);
    }
    return map;
  }

  // ---- running ----

  async run(workers: number, signal: AbortSignal): Promise<void> {
    try {
      await runQueueWorkers(
        {
          name: 'deployment controller',
          log: this.log,
          queue: this.queue,
          informers: [this.o.deployments, this.o.replicaSets],
          sync: (k, s) => this.sync(k, s),
          onError: (k, err) => this.handleErr(k, err),
        },
        workers,
        signal,
      );
    } finally {
      this.podHandler?.remove();
      for (const key of [...this.watching]) this.unwatchPods(key);
    }
  }

  /** a failed sync is retried with backoff, up to MAX_RETRIES times (a terminating namespace: not at all) */
  private handleErr(key: string, err: unknown): void {
    if (namespaceTerminating(err)) {
      this.queue.forget(key);
      return;
    }
    if (this.queue.numRequeues(key) < MAX_RETRIES) {
      this.log.v(2).info('Error syncing deployment', { deployment: key, err: messageOf(err) });
      this.queue.addRateLimited(key);
      return;
    }
    this.log.error(err, 'Dropping deployment out of the queue', { deployment: key });
    this.queue.forget(key);
  }

  private deploymentsClient(ns: string): ResourceClient<any> {
    return new ResourceClient<any>(this.o.client, DEPLOYMENTS, ns);
  }

  private replicaSetsClient(ns: string): ResourceClient<any> {
    return new ResourceClient<any>(this.o.client, REPLICA_SETS, ns);
  }

  private event(d: any, type: 'Normal' | 'Warning', reason: string, message: string): void {
    void this.o.recorder?.event({ ...d, kind: 'Deployment', apiVersion: 'apps/v1' }, type, reason, message);
  }

  /** one Deployment's sync (syncDeployment) */
  async sync(key: string, signal: AbortSignal): Promise<void> {
    const { namespace: ns, name } = splitKey(key);
    const cached = this.o.deployments.getByName(ns, name);
    if (!cached) {
      this.log.v(2).info('Deployment has been deleted', { deployment: key });
      this.unwatchPods(key);
      return;
    }
    const run = new Sync(this, structuredClone(cached), signal);
    if (selectsEverything(run.d.spec?.selector)) {
      this.event(run.d, 'Warning', 'SelectingAll', 'This deployment is selecting all pods. A non-empty selector is required.');
      if (count(run.d.status, 'observedGeneration') < Number(run.d.metadata.generation ?? 0)) {
        run.d.status = { ...(run.d.status ?? {}), observedGeneration: run.d.metadata.generation };
        await run.updateStatus();
      }
      return;
    }
    await run.go();
  }

  // (for Sync)
  get internals() {
    return {
      o: this.o,
      log: this.log,
      now: this.now,
      queue: this.queue,
      event: (d: any, type: 'Normal' | 'Warning', reason: string, message: string) => this.event(d, type, reason, message),
      deploymentsClient: (ns: string) => this.deploymentsClient(ns),
      replicaSetsClient: (ns: string) => this.replicaSetsClient(ns),
      replicaSetsIn: (ns: string) => this.replicaSetsIn(ns),
      podMap: (d: any, rss: any[]) => this.podMap(d, rss),
      watchPods: (key: string) => this.watchPods(key),
    };
  }
}

/**
 * The work of one sync of one Deployment: `d` is a copy of it that follows the writes made to it
 * (its resourceVersion, status and annotations), and `rss` its ReplicaSets as this sync last wrote
 * or read them, so that one write does not make the next of the same sync a conflict.
 */
class Sync {
  readonly d: any;
  private rss: any[] = [];
  private readonly c: DeploymentController['internals'];
  private readonly ns: string;

  constructor(
    controller: DeploymentController,
    d: any,
    private readonly signal: AbortSignal,
  ) {
    this.c = controller.internals;
    this.d = d;
    this.ns = d.metadata.namespace;
  }

  private get now(): number {
    return this.c.now();
  }

  private get key(): string {
    return objectKey(this.d);
  }

  async go(): Promise<void> {
    const d = this.d;
    this.rss = await this.claimReplicaSets();
    if (d.metadata.deletionTimestamp) return this.syncStatusOnly();
    await this.checkPausedConditions();
    if (d.spec?.paused) return this.syncScaled();
    // (not re-entrant: the annotation goes before any ReplicaSet is touched again)
    if (rollbackTo(d) !== undefined) return this.rollback();
    if (await this.isScalingEvent()) return this.syncScaled();
    switch (d.spec?.strategy?.type) {
      case 'Recreate':
        return this.rolloutRecreate();
      case 'RollingUpdate':
        return this.rolloutRolling();
    }
    throw new Error(`unexpected deployment strategy type: ${d.spec?.strategy?.type ?? ''}`);
  }

  // ---- writes ----

  async updateStatus(): Promise<void> {
    const made = await this.c.deploymentsClient(this.ns).updateStatus(this.d, { signal: this.signal });
    this.d.metadata.resourceVersion = made.metadata.resourceVersion;
  }

  private async updateDeployment(): Promise<void> {
    const made = await this.c.deploymentsClient(this.ns).update(this.d, { signal: this.signal });
    this.d.metadata.resourceVersion = made.metadata.resourceVersion;
  }

  /** PUTs a ReplicaSet and puts the answer in its place among this sync's ReplicaSets */
  private async updateReplicaSet(rs: any): Promise<any> {
    const made = await this.c.replicaSetsClient(this.ns).update(rs, { signal: this.signal });
    this.rss = this.rss.map((x) => (x.metadata.uid === made.metadata.uid ? made : x));
    return made;
  }

  // ---- claiming (ReplicaSetControllerRefManager) ----

  /** the ReplicaSets the Deployment controls after adopting matching orphans and releasing the ones that no longer match */
  private async claimReplicaSets(): Promise<any[]> {
    const d = this.d;
    let sel: Requirement[] | null;
    try {
      sel = fromLabelSelector(d.spec?.selector);
    } catch (e) {
      throw new Error(`deployment ${this.key} has invalid label selector: ${messageOf(e)}`);
    }
    const matches = (rs: any) => !!sel && matchLabels(sel, rs?.metadata?.labels ?? {});
    const owned: any[] = [];
    let canAdopt: Promise<void> | undefined;
    for (const rs of this.c.replicaSetsIn(this.ns)) {
      const ref = controllerRefOf(rs);
      if (ref) {
        if (ref.uid !== d.metadata.uid) continue;
        if (matches(rs)) owned.push(structuredClone(rs));
        else if (!d.metadata.deletionTimestamp) await this.release(rs);
        continue;
      }
      if (d.metadata.deletionTimestamp || !matches(rs) || rs.metadata?.deletionTimestamp) continue;
      // (a fresh read of the Deployment, once per sync: it may have been deleted and made again)
      canAdopt ??= this.recheckDeletion();
      await canAdopt;
      const adopted = await this.adopt(rs);
      if (adopted) owned.push(adopted);
    }
    return owned;
  }

  private async recheckDeletion(): Promise<void> {
    const d = this.d;
    const fresh = await this.c.deploymentsClient(this.ns).get(d.metadata.name, { signal: this.signal });
    if (fresh.metadata?.uid !== d.metadata.uid) throw new Error(`original Deployment ${this.key} is gone: got uid ${fresh.metadata?.uid}, wanted ${d.metadata.uid}`);
    if (fresh.metadata?.deletionTimestamp) throw new Error(`${this.key} has just been deleted at ${fresh.metadata.deletionTimestamp}`);
  }

  private rsPath(rs: any): string {
    return this.c.replicaSetsClient(this.ns).path(rs.metadata.name);
  }

  /** patches the controller reference in (the ReplicaSet's uid as a precondition); the ReplicaSet, or undefined when it is gone */
  private async adopt(rs: any): Promise<any> {
    const d = this.d;
    const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name, uid: d.metadata.uid, controller: true, blockOwnerDeletion: true };
    const body = { metadata: { ownerReferences: [ref], uid: rs.metadata.uid } };
    try {
      const made = await this.c.o.client.json({ method: 'PATCH', path: this.rsPath(rs), body, contentType: 'application/strategic-merge-patch+json', signal: this.signal });
      this.c.log.v(2).info('Adopted ReplicaSet', { replicaSet: objectKey(rs), deployment: this.key });
      return made;
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  private async release(rs: any): Promise<void> {
    const body = { metadata: { ownerReferences: [{ $patch: 'delete', uid: this.d.metadata.uid }], uid: rs.metadata.uid } };
    try {
      await this.c.o.client.json({ method: 'PATCH', path: this.rsPath(rs), body, contentType: 'application/strategic-merge-patch+json', signal: this.signal });
      this.c.log.v(2).info('Released ReplicaSet', { replicaSet: objectKey(rs), deployment: this.key });
    } catch (e) {
      // (gone, or made again or released meanwhile: nothing left to release)
      if (isNotFound(e) || isInvalid(e) || isConflict(e)) return;
      throw e;
    }
  }

  // ---- the new and old ReplicaSets (getAllReplicaSetsAndSyncRevision) ----

  /** the new ReplicaSet (made when missing and `create`), its revision and the Deployment's in step; and every old one */
  private async allReplicaSets(create: boolean): Promise<{ newRS: any; oldRSs: any[] }> {
    const oldRSs = findOldReplicaSets(this.d, this.rss);
    const newRS = await this.newReplicaSet(oldRSs, create);
    return { newRS, oldRSs: findOldReplicaSets(this.d, this.rss).filter((rs) => rs.metadata.uid !== newRS?.metadata?.uid) };
  }

  private async newReplicaSet(oldRSs: any[], create: boolean): Promise<any> {
    const d = this.d;
    const existing = findNewReplicaSet(d, this.rss);
    const newRevision = maxRevision(oldRSs) + 1;
    if (existing) return this.syncExistingNewReplicaSet(existing, newRevision);
    if (!create) return undefined;
    return this.createNewReplicaSet(oldRSs, newRevision);
  }

  /** brings the new ReplicaSet's annotations and minReadySeconds in line, then the Deployment's revision */
  private async syncExistingNewReplicaSet(existing: any, newRevision: number): Promise<any> {
    const d = this.d;
    const copy = structuredClone(existing);
    const annotationsChanged = setNewReplicaSetAnnotations(d, copy, newRevision, true, this.c.log);
    const minReadySeconds = Number(d.spec?.minReadySeconds ?? 0);
    if (annotationsChanged || Number(copy.spec?.minReadySeconds ?? 0) !== minReadySeconds) {
      copy.spec.minReadySeconds = minReadySeconds || undefined;
      return this.updateReplicaSet(copy);
    }
    let needsUpdate = setDeploymentRevision(d, copy.metadata.annotations?.[REVISION_ANNOTATION] ?? '');
    // (a Deployment that had no Progressing condition gets one from the time its new ReplicaSet is found)
    if (hasProgressDeadline(d) && !getCondition(d.status, 'Progressing')) {
      d.status ??= {};
      setCondition(d.status, newCondition('Progressing', 'True', REASONS.foundNewRS, `Found new replica set ${JSON.stringify(copy.metadata.name)}`, this.now));
      needsUpdate = true;
    }
    if (needsUpdate) await this.updateStatus();
    return copy;
  }

  /** makes the new ReplicaSet; a name taken by another template raises the collision count (and fails this sync) */
  private async createNewReplicaSet(oldRSs: any[], newRevision: number): Promise<any> {
    const d = this.d;
    const template = structuredClone(d.spec?.template ?? {});
    const hash = computeHash(template, d.status?.collisionCount);
    template.metadata ??= {};
    template.metadata.labels = { ...(template.metadata.labels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash };
    const selector = structuredClone(d.spec.selector ?? {});
    selector.matchLabels = { ...(selector.matchLabels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash };
    const newRS: any = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: `${d.metadata.name}-${hash}`,
        namespace: this.ns,
        labels: { ...template.metadata.labels },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name, uid: d.metadata.uid, controller: true, blockOwnerDeletion: true }],
      },
      spec: { replicas: 0, selector, template },
    };
    if (d.spec?.minReadySeconds) newRS.spec.minReadySeconds = d.spec.minReadySeconds;
    const replicas = newRSNewReplicas(d, [...oldRSs, newRS], newRS);
    newRS.spec.replicas = replicas;
    setNewReplicaSetAnnotations(d, newRS, newRevision, false, this.c.log);
    let made: any;
    let alreadyExists = false;
    try {
      made = await this.c.replicaSetsClient(this.ns).create(newRS, { signal: this.signal });
    } catch (e) {
      if (isAlreadyExists(e)) {
        made = await this.existingByName(newRS.metadata.name, e);
        alreadyExists = true;
      } else if (namespaceTerminating(e)) {
        throw e;
      } else {
        const msg = `Failed to create new replica set ${JSON.stringify(newRS.metadata.name)}: ${messageOf(e)}`;
        if (hasProgressDeadline(d)) {
          d.status ??= {};
          setCondition(d.status, newCondition('Progressing', 'False', REASONS.failedRSCreate, msg, this.now));
          // (the error to report is the failed create's, not this write's)
          await this.updateStatus().catch(() => undefined);
        }
        this.c.event(d, 'Warning', REASONS.failedRSCreate, msg);
        throw e;
      }
    }
    this.rss = [...this.rss.filter((x) => x.metadata.uid !== made.metadata.uid), made];
    if (!alreadyExists && replicas > 0) this.c.event(d, 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${made.metadata.name} from 0 to ${replicas}`);
    let needsUpdate = setDeploymentRevision(d, String(newRevision));
    if (!alreadyExists && hasProgressDeadline(d)) {
      d.status ??= {};
      setCondition(d.status, newCondition('Progressing', 'True', REASONS.newRSCreated, `Created new replica set ${JSON.stringify(made.metadata.name)}`, this.now));
      needsUpdate = true;
    }
    if (needsUpdate) await this.updateStatus();
    return made;
  }

  /**
   * The ReplicaSet that has the new one's name: the Deployment's own with its template (made by
   * an earlier sync the cache had not shown yet), or a hash collision: status.collisionCount goes
   * up and the create's error fails this sync, so that the next one tries another name.
   */
  private async existingByName(name: string, createError: unknown): Promise<any> {
    const d = this.d;
    const rs = this.c.o.replicaSets.getByName(this.ns, name);
    if (!rs) throw createError;
    if (controllerRefOf(rs)?.uid === d.metadata.uid && equalIgnoreHash(d.spec?.template, rs.spec?.template)) return structuredClone(rs);
    d.status ??= {};
    const before = Number(d.status.collisionCount ?? 0);
    d.status.collisionCount = before + 1;
    try {
      await this.updateStatus();
      this.c.log.v(2).info('Found a hash collision for deployment - bumping collisionCount to resolve it', { deployment: this.key, oldCollisionCount: before, newCollisionCount: before + 1 });
    } catch {
      // (the create's error is the one reported)
    }
    throw createError;
  }

  // ---- scaling ----

  /** sets a ReplicaSet's replicas, with an event when it changed (scaleReplicaSetAndRecordEvent); true and the ReplicaSet as written when it did */
  private async scaleAndRecord(rs: any, newScale: number): Promise<{ scaled: boolean; rs: any }> {
    if (specReplicas(rs) === newScale) return { scaled: false, rs };
    return this.scaleReplicaSet(rs, newScale, specReplicas(rs) < newScale ? 'up' : 'down');
  }

  /** writes a ReplicaSet's replicas and replicas annotations when either is not as it should be (scaleReplicaSet) */
  private async scaleReplicaSet(rs: any, newScale: number, operation: string): Promise<{ scaled: boolean; rs: any }> {
    const d = this.d;
    const desired = specReplicas(d);
    const max = desired + maxSurge(d);
    const sizeChanges = specReplicas(rs) !== newScale;
    if (!sizeChanges && !replicasAnnotationsNeedUpdate(rs, desired, max)) return { scaled: false, rs };
    const oldScale = specReplicas(rs);
    const copy = structuredClone(rs);
    copy.spec.replicas = newScale;
    setReplicasAnnotations(copy, desired, max);
    const made = await this.updateReplicaSet(copy);
    if (sizeChanges) this.c.event(d, 'Normal', 'ScalingReplicaSet', `Scaled ${operation} replica set ${made.metadata.name} from ${oldScale} to ${newScale}`);
    return { scaled: sizeChanges, rs: made };
  }

  /** spec.replicas differs from what an active ReplicaSet's desired-replicas annotation says (isScalingEvent) */
  private async isScalingEvent(): Promise<boolean> {
    const { newRS, oldRSs } = await this.allReplicaSets(false);
    for (const rs of filterActive([...oldRSs, newRS])) {
      const desired = rs.metadata?.annotations?.[DESIRED_REPLICAS_ANNOTATION];
      if (desired === undefined || !/^[+-]?\d+$/.test(desired)) continue;
      if (Number(desired) !== specReplicas(this.d)) return true;
    }
    return false;
  }

  /**
   * Scales the ReplicaSets to spec.replicas without a rollout (scale): the only active one (or
   * the newest when none is) takes all of it; with a saturated new one the old ones go to 0; else
   * in a rolling update each active one gets its share of the difference, rounded, and the
   * largest the rest.
   */
  private async scale(newRS: any, oldRSs: any[]): Promise<void> {
    const d = this.d;
    const want = specReplicas(d);
    const only = findActiveOrLatest(newRS, oldRSs);
    if (only) {
      if (specReplicas(only) !== want) await this.scaleAndRecord(only, want);
      return;
    }
    if (isSaturated(d, newRS)) {
      for (const old of filterActive(oldRSs)) await this.scaleAndRecord(old, 0);
      return;
    }
    if (!isRollingUpdate(d)) return;
    const active = filterActive([...oldRSs, newRS]);
    const allowed = want > 0 ? want + maxSurge(d) : 0;
    const toAdd = allowed - replicaCount(active);
    let operation = '';
    if (toAdd > 0) {
      // (the same size: newer first when scaling up)
      active.sort((a, b) => specReplicas(b) - specReplicas(a) || byCreation(b, a));
      operation = 'up';
    } else if (toAdd < 0) {
      // (the same size: older first when scaling down)
      active.sort((a, b) => specReplicas(b) - specReplicas(a) || byCreation(a, b));
      operation = 'down';
    }
    let added = 0;
    const sizes = new Map<string, number>();
    for (const rs of active) {
      if (toAdd === 0) {
        sizes.set(rs.metadata.name, specReplicas(rs));
        continue;
      }
      const share = replicaSetProportion(rs, d, toAdd, added);
      sizes.set(rs.metadata.name, specReplicas(rs) + share);
      added += share;
    }
    for (let i = 0; i < active.length; i++) {
      const rs = active[i];
      let size = sizes.get(rs.metadata.name)!;
      // (what is left over goes to the largest)
      if (i === 0 && toAdd !== 0) size = Math.max(0, size + toAdd - added);
      await this.scaleReplicaSet(rs, size, operation);
    }
  }

  /** a paused Deployment or a scaling event: scale, clean up when paused, sync the status (sync) */
  private async syncScaled(): Promise<void> {
    const { newRS, oldRSs } = await this.allReplicaSets(false);
    await this.scale(newRS, oldRSs);
    const fresh = this.current(newRS, oldRSs);
    if (this.d.spec?.paused && rollbackTo(this.d) === undefined) await this.cleanup(fresh.oldRSs);
    await this.syncDeploymentStatus([...fresh.oldRSs, fresh.newRS], fresh.newRS);
  }

  /** the ReplicaSets as this sync last wrote them */
  private current(newRS: any, oldRSs: any[]): { newRS: any; oldRSs: any[] } {
    const byUid = new Map<string, any>(this.rss.map((rs) => [rs.metadata.uid, rs]));
    const pick = (rs: any) => (rs ? (byUid.get(rs.metadata.uid) ?? rs) : rs);
    return { newRS: pick(newRS), oldRSs: oldRSs.map(pick) };
  }

  // ---- RollingUpdate (rolloutRolling) ----

  private async rolloutRolling(): Promise<void> {
    const { newRS, oldRSs } = await this.allReplicaSets(true);
    const d = this.d;
    if (await this.reconcileNewReplicaSet([...oldRSs, newRS], newRS)) return this.syncRolloutStatusNow(newRS, oldRSs);
    const cur = this.current(newRS, oldRSs);
    if (await this.reconcileOldReplicaSets([...cur.oldRSs, cur.newRS], filterActive(cur.oldRSs), cur.newRS)) return this.syncRolloutStatusNow(newRS, oldRSs);
    if (deploymentComplete(d, d.status)) await this.cleanup(cur.oldRSs);
    return this.syncRolloutStatusNow(newRS, oldRSs);
  }

  private async syncRolloutStatusNow(newRS: any, oldRSs: any[]): Promise<void> {
    const cur = this.current(newRS, oldRSs);
    await this.syncRolloutStatus([...cur.oldRSs, cur.newRS], cur.newRS);
  }

  /** scales the new ReplicaSet toward spec.replicas, within maxSurge when up; true when it changed */
  private async reconcileNewReplicaSet(allRSs: any[], newRS: any): Promise<boolean> {
    const want = specReplicas(this.d);
    const have = specReplicas(newRS);
    if (have === want) return false;
    if (have > want) return (await this.scaleAndRecord(newRS, want)).scaled;
    return (await this.scaleAndRecord(newRS, newRSNewReplicas(this.d, allRSs, newRS))).scaled;
  }

  /** scales the old ReplicaSets down as far as maxUnavailable allows; true when one changed */
  private async reconcileOldReplicaSets(allRSs: any[], oldRSs: any[], newRS: any): Promise<boolean> {
    const d = this.d;
    if (replicaCount(oldRSs) === 0) return false;
    const minAvailable = specReplicas(d) - maxUnavailable(d);
    const newRSUnavailable = specReplicas(newRS) - Number(newRS?.status?.availableReplicas ?? 0);
    const maxScaledDown = replicaCount(allRSs) - minAvailable - newRSUnavailable;
    if (maxScaledDown <= 0) return false;
    // (replicas that are not available go first: they cost no availability, and would block the rollout)
    const cleaned = await this.cleanupUnhealthyReplicas(oldRSs, maxScaledDown);
    const scaledDown = await this.scaleDownOldForRollingUpdate([...cleaned.oldRSs, newRS], cleaned.oldRSs);
    return cleaned.count + scaledDown > 0;
  }

  private async cleanupUnhealthyReplicas(oldRSs: any[], maxCleanup: number): Promise<{ oldRSs: any[]; count: number }> {
    const sorted = [...oldRSs].sort(byCreation);
    let total = 0;
    for (let i = 0; i < sorted.length; i++) {
      if (total >= maxCleanup) break;
      const rs = sorted[i];
      const replicas = specReplicas(rs);
      const available = Number(rs.status?.availableReplicas ?? 0);
      if (replicas === 0 || replicas === available) continue;
      const down = Math.min(maxCleanup - total, replicas - available);
      const newReplicas = replicas - down;
      if (newReplicas > replicas) throw new Error(`when cleaning up unhealthy replicas, got invalid request to scale down ${objectKey(rs)} ${replicas} -> ${newReplicas}`);
      sorted[i] = (await this.scaleAndRecord(rs, newReplicas)).rs;
      total += down;
    }
    return { oldRSs: sorted, count: total };
  }

  private async scaleDownOldForRollingUpdate(allRSs: any[], oldRSs: any[]): Promise<number> {
    const d = this.d;
    const minAvailable = specReplicas(d) - maxUnavailable(d);
    const available = availableReplicaCount(allRSs);
    if (available <= minAvailable) return 0;
    const toScaleDown = available - minAvailable;
    let total = 0;
    for (const rs of [...oldRSs].sort(byCreation)) {
      if (total >= toScaleDown) break;
      const replicas = specReplicas(rs);
      if (replicas === 0) continue;
      const down = Math.min(replicas, toScaleDown - total);
      await this.scaleAndRecord(rs, replicas - down);
      total += down;
    }
    return total;
  }

  // ---- Recreate (rolloutRecreate) ----

  private async rolloutRecreate(): Promise<void> {
    const d = this.d;
    // (the new ReplicaSet is not made yet: nothing scales up before the old pods are gone)
    let { newRS, oldRSs } = await this.allReplicaSets(false);
    let scaledDown = false;
    for (const rs of filterActive(oldRSs)) if ((await this.scaleAndRecord(rs, 0)).scaled) scaledDown = true;
    if (scaledDown) return this.syncRolloutStatusNow(newRS, oldRSs);
    if (await this.oldPodsRunning(newRS, oldRSs)) return this.syncRolloutStatusNow(newRS, oldRSs);
    if (!newRS) ({ newRS, oldRSs } = await this.allReplicaSets(true));
    await this.scaleAndRecord(newRS, specReplicas(d));
    if (deploymentComplete(d, d.status)) await this.cleanup(this.current(newRS, oldRSs).oldRSs);
    return this.syncRolloutStatusNow(newRS, oldRSs);
  }

  /** the old ReplicaSets have pods (by their status, or pods of theirs not finished in the pod watch) */
  private async oldPodsRunning(newRS: any, oldRSs: any[]): Promise<boolean> {
    if (actualReplicaCount(oldRSs) > 0) return true;
    this.c.watchPods(this.key);
    if (!(await this.c.o.pods.synced(this.ns, this.signal))) {
      if (this.signal.aborted) return true;
      throw new Error(`the pods of namespace ${this.ns} are not listed yet`);
    }
    for (const [uid, pods] of this.c.podMap(this.d, this.rss)) {
      if (newRS && newRS.metadata.uid === uid) continue;
      // (a pod in phase Unknown may still run: it counts)
      if (pods.some((p) => p?.status?.phase !== 'Failed' && p?.status?.phase !== 'Succeeded')) return true;
    }
    return false;
  }

  // ---- rollback through the deprecated annotation (rollback) ----

  private async rollback(): Promise<void> {
    const d = this.d;
    const { newRS, oldRSs } = await this.allReplicaSets(true);
    const all = [...oldRSs, newRS].filter(Boolean);
    let revision = rollbackTo(d)!;
    if (revision === 0) {
      revision = lastRevision(all);
      if (revision === 0) {
        this.c.event(d, 'Warning', REASONS.rollbackRevisionNotFound, 'Unable to find last revision.');
        return this.clearRollbackTo();
      }
    }
    const target = all.find((rs) => revisionOf(rs) === revision);
    if (!target) {
      this.c.event(d, 'Warning', REASONS.rollbackRevisionNotFound, 'Unable to find the revision to rollback to.');
      return this.clearRollbackTo();
    }
    if (equalIgnoreHash(d.spec.template, target.spec?.template)) {
      this.c.event(d, 'Warning', REASONS.rollbackTemplateUnchanged, `The rollback revision contains the same template as current deployment ${JSON.stringify(d.metadata.name)}`);
      return this.clearRollbackTo();
    }
    // the old template, without its hash label, and the old ReplicaSet's annotations back on the Deployment
    const template = structuredClone(target.spec.template);
    template.metadata ??= {};
    if (template.metadata.labels) {
      delete template.metadata.labels[POD_TEMPLATE_HASH_LABEL];
    }
    d.spec.template = template;
    const kept = Object.fromEntries(Object.entries<string>(d.metadata.annotations ?? {}).filter(([k]) => ANNOTATIONS_TO_SKIP.has(k)));
    const brought = Object.fromEntries(Object.entries<string>(target.metadata?.annotations ?? {}).filter(([k]) => !ANNOTATIONS_TO_SKIP.has(k)));
    d.metadata.annotations = { ...kept, ...brought };
    await this.clearRollbackTo();
    this.c.event(d, 'Normal', REASONS.rollbackDone, `Rolled back deployment ${JSON.stringify(d.metadata.name)} to revision ${revision}`);
  }

  private async clearRollbackTo(): Promise<void> {
    if (this.d.metadata.annotations) delete this.d.metadata.annotations[ROLLBACK_TO_ANNOTATION];
    await this.updateDeployment();
  }

  // ---- cleanup of old ReplicaSets (cleanupDeployment) ----

  /** deletes the old ReplicaSets beyond revisionHistoryLimit that have no replicas, lowest revision first */
  private async cleanup(oldRSs: any[]): Promise<void> {
    const d = this.d;
    if (!hasRevisionHistoryLimit(d)) return;
    const cleanable = oldRSs.filter((rs) => rs && !rs.metadata?.deletionTimestamp);
    const diff = cleanable.length - d.spec.revisionHistoryLimit;
    if (diff <= 0) return;
    cleanable.sort(byRevision);
    this.c.log.v(4).info('Looking to cleanup old replica sets for deployment', { deployment: this.key });
    for (const rs of cleanable.slice(0, diff)) {
      // (only one with no replicas wanted or left, and its spec observed)
      if (Number(rs.status?.replicas ?? 0) !== 0 || specReplicas(rs) !== 0 || Number(rs.metadata?.generation ?? 0) > Number(rs.status?.observedGeneration ?? 0)) continue;
      this.c.log.v(4).info('Trying to cleanup replica set for deployment', { replicaSet: objectKey(rs), deployment: this.key });
      try {
        await this.c.replicaSetsClient(this.ns).delete(rs.metadata.name, { signal: this.signal });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
  }

  // ---- status ----

  private async syncStatusOnly(): Promise<void> {
    const { newRS, oldRSs } = await this.allReplicaSets(false);
    await this.syncDeploymentStatus([...oldRSs, newRS], newRS);
  }

  /** writes the status the ReplicaSets make, when it changed (syncDeploymentStatus) */
  private async syncDeploymentStatus(allRSs: any[], newRS: any): Promise<void> {
    const status = calculateStatus(allRSs.filter(Boolean), newRS, this.d, this.now);
    if (sameStatus(this.d.status, status)) return;
    this.d.status = status;
    await this.updateStatus();
  }

  /** the Progressing condition while paused or resumed, so that a pause does not count against the deadline (checkPausedConditions) */
  private async checkPausedConditions(): Promise<void> {
    const d = this.d;
    if (!hasProgressDeadline(d)) return;
    const cond = getCondition(d.status, 'Progressing');
    if (cond?.reason === REASONS.timedOut) return;
    const pausedShown = cond?.reason === REASONS.paused;
    d.status ??= {};
    if (d.spec?.paused && !pausedShown) {
      setCondition(d.status, newCondition('Progressing', 'Unknown', REASONS.paused, 'Deployment is paused', this.now));
    } else if (!d.spec?.paused && pausedShown) {
      setCondition(d.status, newCondition('Progressing', 'Unknown', REASONS.resumed, 'Deployment is resumed', this.now));
    } else return;
    await this.updateStatus();
  }

  /**
   * The status with the Progressing condition of a rollout (syncRolloutStatus): complete
   * (NewReplicaSetAvailable), progressing (ReplicaSetUpdated, its update time moved), or past
   * its deadline (ProgressDeadlineExceeded); and the ReplicaSets' ReplicaFailure condition. A
   * rollout still under way with no progress is queued again for when its deadline passes.
   */
  private async syncRolloutStatus(allRSs: any[], newRS: any): Promise<void> {
    const d = this.d;
    const now = this.now;
    const all = allRSs.filter(Boolean);
    const status = calculateStatus(all, newRS, d, now);
    if (!hasProgressDeadline(d)) removeCondition(status, 'Progressing');
    const cur = getCondition(d.status, 'Progressing');
    const complete = count(status, 'replicas') === count(status, 'updatedReplicas') && cur?.reason === REASONS.newRSAvailable;
    if (hasProgressDeadline(d) && !complete) this.setProgressing(status, newRS, cur, now);
    const failure = replicaFailures(all, newRS);
    if (failure) setCondition(status, failure);
    else removeCondition(status, 'ReplicaFailure');
    if (sameStatus(d.status, status)) {
      this.requeueStuckDeployment(status);
      return;
    }
    d.status = status;
    await this.updateStatus();
  }

  private setProgressing(status: any, newRS: any, cur: DeploymentCondition | undefined, now: number): void {
    const d = this.d;
    const what = newRS ? `ReplicaSet ${JSON.stringify(newRS.metadata.name)}` : `Deployment ${JSON.stringify(d.metadata.name)}`;
    if (deploymentComplete(d, status)) {
      setCondition(status, newCondition('Progressing', 'True', REASONS.newRSAvailable, `${what} has successfully progressed.`, now));
    } else if (deploymentProgressing(d, status)) {
      // (progress moves lastUpdateTime even when the reason stays)
      const c = newCondition('Progressing', 'True', REASONS.replicaSetUpdated, `${what} is progressing.`, now);
      if (cur) {
        if (cur.status === 'True') c.lastTransitionTime = cur.lastTransitionTime;
        removeCondition(status, 'Progressing');
      }
      setCondition(status, c);
    } else if (deploymentTimedOut(d, status, now)) {
      setCondition(status, newCondition('Progressing', 'False', REASONS.timedOut, `${what} has timed out progressing.`, now));
    }
  }

  /** queues a rollout without progress again for when its deadline passes (requeueStuckDeployment) */
  private requeueStuckDeployment(status: any): void {
    const d = this.d;
    const cur = getCondition(d.status, 'Progressing');
    if (!hasProgressDeadline(d) || !cur) return;
    if (deploymentComplete(d, status) || cur.reason === REASONS.timedOut) return;
    const lastUpdate = Date.parse(cur.lastUpdateTime ?? '');
    if (!Number.isFinite(lastUpdate)) return;
    const after = lastUpdate + d.spec.progressDeadlineSeconds * 1000 - this.now;
    if (after < 1000) {
      this.c.log.v(4).info('Queueing up deployment for a progress check now', { deployment: this.key });
      this.c.queue.addRateLimited(this.key);
      return;
    }
    this.c.log.v(4).info('Queueing up deployment for a progress check', { deployment: this.key, queueAfter: Math.floor(after / 1000) });
    // (a second more, against the clocks' skew)
    this.c.queue.addAfter(this.key, after + 1000);
  }
}

/** the ReplicaFailure condition of the new ReplicaSet, else of an old one, as a Deployment condition (getReplicaFailures) */
function replicaFailures(allRSs: any[], newRS: any): DeploymentCondition | undefined {
  const failureOf = (rs: any): DeploymentCondition | undefined => {
    const c = (Array.isArray(rs?.status?.conditions) ? rs.status.conditions : []).find((x: any) => x?.type === 'ReplicaFailure');
    return c ? { type: 'ReplicaFailure', status: c.status, lastUpdateTime: c.lastTransitionTime, lastTransitionTime: c.lastTransitionTime, reason: c.reason, message: c.message } : undefined;
  };
  if (newRS) {
    const f = failureOf(newRS);
    if (f) return f;
  }
  for (const rs of allRSs) {
    const f = failureOf(rs);
    if (f) return f;
  }
  return undefined;
}

/** the revision of the deprecated rollback annotation (0: the one before the current); undefined when none or not a number */
function rollbackTo(d: any): number | undefined {
  const v = d?.metadata?.annotations?.[ROLLBACK_TO_ANNOTATION];
  if (v === undefined || v === '' || !/^[+-]?\d+$/.test(v)) return undefined;
  return Number(v);
}

export const deploymentControllerDescriptor: ControllerDescriptor = {
  name: 'deployment-controller',
  async run(ctx) {
    await withClient(ctx, COMPONENT, undefined, async (client) => {
      const c = new DeploymentController({
        client,
        deployments: informerOf<any>(ctx, DEPLOYMENTS),
        replicaSets: informerOf<any>(ctx, REPLICA_SETS),
        pods: ctx.pods,
        recorder: new EventRecorder(client, COMPONENT, ctx.log),
        log: ctx.log,
      });
      await c.run(ctx.options.concurrentDeploymentSyncs, ctx.signal);
    });
  },
};
