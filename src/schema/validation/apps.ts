// apps/v1: Deployment, ReplicaSet, StatefulSet, DaemonSet, ControllerRevision
// (pkg/apis/apps/validation, plus the apps/v1 strategies' rule that a selector is immutable).
import { child, forbidden, goIntOrString, goLabelSelector, goStringMap, GoRepr, goStruct, goPtr, invalid, notSupported, required, type Errs } from './errs.js';
import {
  arr,
  FIELD_IMMUTABLE,
  IS_NEGATIVE,
  isSet,
  isValidPercent,
  obj,
  selectorInvalid,
  selectorIsEmpty,
  selectorMatches,
  str,
  validateAnnotations,
  validateLabelSelector,
  validateLabels,
  validateNonnegative,
  jsonEqual,
  clone,
} from './util.js';
import { validatePodTemplateSpec, validatePodSpecificAnnotations } from './pod.js';
import { semEqual, semEqualRef, T } from './semantic.js';

const n = (v: unknown, d = 0): number => (typeof v === 'number' ? v : d);

// ---- int-or-percent ----

function percentValue(v: unknown): number | null {
  if (typeof v !== 'string' || isValidPercent(v).length) return null;
  return Number(v.slice(0, -1));
}

/** intstr.IntValue(): a string that is not a number is 0 */
function intValue(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^[+-]?\d+$/.test(v)) return Number(v);
  return 0;
}

function intOrPercentValue(v: unknown): number {
  return percentValue(v) ?? intValue(v);
}

export function validatePositiveIntOrPercent(v: unknown, path: string): Errs {
  if (typeof v === 'string') return isValidPercent(v).map((m) => invalid(path, goIntOrString(v), m));
  if (typeof v === 'number') return validateNonnegative(v, path);
  return [];
}

export function isNotMoreThan100Percent(v: unknown, path: string): Errs {
  const p = percentValue(v);
  if (p === null || p <= 100) return [];
  return [invalid(path, goIntOrString(v), 'must not be greater than 100%')];
}

// ---- pod templates of workloads ----

function validateTemplateForReplicaSet(tmpl: any, selector: any, path: string, kindName: string): Errs {
  const errs: Errs = [];
  if (tmpl == null) return [required(path)];
  const labels = tmpl.metadata?.labels;
  if (!selectorIsEmpty(selector) && !selectorMatches(selector, labels))
    errs.push(invalid(child(path, 'metadata', 'labels'), goStringMap(labels ?? null), '`selector` does not match template `labels`'));
  errs.push(...validatePodTemplateSpec(tmpl, path));
  const rp = str(tmpl.spec?.restartPolicy) || 'Always';
  if (rp !== 'Always') errs.push(notSupported(child(path, 'spec', 'restartPolicy'), rp, ['Always']));
  if (isSet(tmpl.spec?.activeDeadlineSeconds)) errs.push(forbidden(child(path, 'spec', 'activeDeadlineSeconds'), `activeDeadlineSeconds in ${kindName} is not Supported`));
  return errs;
}

function validateSelectorRequiredNonEmpty(sel: any, path: string, emptyMsg: string): Errs {
  if (sel == null) return [required(path)];
  const errs = validateLabelSelector(sel, path);
  if (selectorIsEmpty(sel)) errs.push(invalid(path, goLabelSelector(sel), emptyMsg));
  return errs;
}

export function validateImmutableSelector(sel: any, old: any): Errs {
  if (semEqualRef({ kind: 'object', name: T.labelSelector }, sel, old, true)) return [];
  return [invalid('spec.selector', goLabelSelector(sel), FIELD_IMMUTABLE)];
}

// ---- Deployment ----

function validateRollingUpdateDeployment(ru: any, path: string): Errs {
  const mu = ru.maxUnavailable ?? '25%';
  const ms = ru.maxSurge ?? '25%';
  const errs = validatePositiveIntOrPercent(mu, child(path, 'maxUnavailable'));
  errs.push(...validatePositiveIntOrPercent(ms, child(path, 'maxSurge')));
  if (intOrPercentValue(mu) === 0 && intOrPercentValue(ms) === 0) errs.push(invalid(child(path, 'maxUnavailable'), goIntOrString(mu), 'may not be 0 when `maxSurge` is 0'));
  errs.push(...isNotMoreThan100Percent(mu, child(path, 'maxUnavailable')));
  return errs;
}

function validateDeploymentStrategy(s: any, path: string): Errs {
  const t = str(s?.type) || 'RollingUpdate';
  switch (t) {
    case 'Recreate':
      return s?.rollingUpdate != null ? [forbidden(child(path, 'rollingUpdate'), "may not be specified when strategy `type` is 'Recreate'")] : [];
    case 'RollingUpdate':
      return validateRollingUpdateDeployment(obj(s?.rollingUpdate), child(path, 'rollingUpdate'));
    default:
      return [
        notSupported(
          path,
          goStruct('apps.DeploymentStrategy', [
            ['Type', JSON.stringify(t)],
            ['RollingUpdate', goPtr('apps.RollingUpdateDeployment', s?.rollingUpdate != null)],
          ]),
          ['Recreate', 'RollingUpdate'],
        ),
      ];
  }
}

export function validateDeploymentSpec(spec: any): Errs {
  const errs: Errs = [];
  errs.push(...validateNonnegative(n(spec.replicas, 1), 'spec.replicas'));
  errs.push(...validateSelectorRequiredNonEmpty(spec.selector, 'spec.selector', 'empty selector is invalid for deployment'));
  if (selectorInvalid(spec.selector)) errs.push(invalid('spec.selector', goLabelSelector(spec.selector), 'invalid label selector'));
  else errs.push(...validateTemplateForReplicaSet(spec.template ?? {}, spec.selector, 'spec.template', 'ReplicaSet'));
  errs.push(...validateDeploymentStrategy(spec.strategy, 'spec.strategy'));
  errs.push(...validateNonnegative(n(spec.minReadySeconds), 'spec.minReadySeconds'));
  if (isSet(spec.revisionHistoryLimit)) errs.push(...validateNonnegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  const pds = spec.progressDeadlineSeconds ?? 600;
  errs.push(...validateNonnegative(pds, 'spec.progressDeadlineSeconds'));
  if (pds <= n(spec.minReadySeconds)) errs.push(invalid('spec.progressDeadlineSeconds', pds, 'must be greater than minReadySeconds'));
  return errs;
}

export function validateDeployment(d: any): Errs {
  return validateDeploymentSpec(obj(d.spec));
}

export function validateDeploymentUpdate(d: any, old: any): Errs {
  const errs = validateDeploymentSpec(obj(d.spec));
  errs.push(...validateImmutableSelector(d.spec?.selector, old.spec?.selector));
  return errs;
}

function collisionDecrement(st: any, old: any): Errs {
  const nc = st.collisionCount;
  const oc = old.collisionCount;
  if ((nc == null && oc != null) || (nc != null && oc != null && nc < oc)) return [invalid('status.collisionCount', n(nc), 'cannot be decremented')];
  return [];
}

export function validateDeploymentStatusUpdate(d: any, old: any): Errs {
  const st = obj(d.status);
  const errs: Errs = [];
  for (const k of ['observedGeneration', 'replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas']) errs.push(...validateNonnegative(n(st[k]), child('status', k)));
  if (isSet(st.collisionCount)) errs.push(...validateNonnegative(st.collisionCount, 'status.collisionCount'));
  const msg = 'cannot be greater than status.replicas';
  if (n(st.updatedReplicas) > n(st.replicas)) errs.push(invalid('status.updatedReplicas', n(st.updatedReplicas), msg));
  if (n(st.readyReplicas) > n(st.replicas)) errs.push(invalid('status.readyReplicas', n(st.readyReplicas), msg));
  if (n(st.availableReplicas) > n(st.replicas)) errs.push(invalid('status.availableReplicas', n(st.availableReplicas), msg));
  if (n(st.availableReplicas) > n(st.readyReplicas)) errs.push(invalid('status.availableReplicas', n(st.availableReplicas), 'cannot be greater than readyReplicas'));
  errs.push(...collisionDecrement(st, obj(old.status)));
  return errs;
}

// ---- ReplicaSet ----

export function validateReplicaSetSpec(spec: any): Errs {
  const errs: Errs = [];
  errs.push(...validateNonnegative(n(spec.replicas, 1), 'spec.replicas'));
  errs.push(...validateNonnegative(n(spec.minReadySeconds), 'spec.minReadySeconds'));
  errs.push(...validateSelectorRequiredNonEmpty(spec.selector, 'spec.selector', 'empty selector is invalid for deployment'));
  if (selectorInvalid(spec.selector)) errs.push(invalid('spec.selector', goLabelSelector(spec.selector), 'invalid label selector'));
  else errs.push(...validateTemplateForReplicaSet(spec.template ?? {}, spec.selector, 'spec.template', 'ReplicaSet'));
  return errs;
}

export function validateReplicaSet(rs: any): Errs {
  return validateReplicaSetSpec(obj(rs.spec));
}

/** the ReplicaSet strategy validates the new object, then the update (which validates the spec again) */
export function validateReplicaSetUpdate(rs: any, old: any): Errs {
  const errs = validateReplicaSetSpec(obj(rs.spec));
  errs.push(...validateReplicaSetSpec(obj(rs.spec)));
  errs.push(...validateImmutableSelector(rs.spec?.selector, old.spec?.selector));
  return errs;
}

// ---- StatefulSet ----

function validateRollingUpdateStatefulSet(ru: any, path: string): Errs {
  const errs = validateNonnegative(n(ru.partition), child(path, 'partition'));
  if (isSet(ru.maxUnavailable)) {
    const mp = child(path, 'maxUnavailable');
    errs.push(...validatePositiveIntOrPercent(ru.maxUnavailable, mp));
    if (intOrPercentValue(ru.maxUnavailable) === 0) errs.push(invalid(mp, goIntOrString(ru.maxUnavailable), 'cannot be 0'));
    errs.push(...isNotMoreThan100Percent(ru.maxUnavailable, mp));
  }
  return errs;
}

function rollingUpdateSSRepr(ru: any): GoRepr {
  return goStruct('apps.RollingUpdateStatefulSetStrategy', [
    ['Partition', String(n(ru?.partition))],
    ['MaxUnavailable', goPtr('intstr.IntOrString', isSet(ru?.maxUnavailable))],
  ]);
}

export function validateStatefulSetSpec(spec: any): Errs {
  const errs: Errs = [];
  const pmp = str(spec.podManagementPolicy) || 'OrderedReady';
  if (pmp !== 'OrderedReady' && pmp !== 'Parallel') errs.push(invalid('spec.podManagementPolicy', pmp, "must be 'OrderedReady' or 'Parallel'"));
  const us = obj(spec.updateStrategy);
  const ut = str(us.type) || 'RollingUpdate';
  switch (ut) {
    case 'OnDelete':
      if (us.rollingUpdate != null) errs.push(invalid('spec.updateStrategy.rollingUpdate', rollingUpdateSSRepr(us.rollingUpdate), "only allowed for updateStrategy 'RollingUpdate'"));
      break;
    case 'RollingUpdate':
      if (us.rollingUpdate != null) errs.push(...validateRollingUpdateStatefulSet(us.rollingUpdate, 'spec.updateStrategy.rollingUpdate'));
      break;
    default:
      errs.push(
        invalid(
          'spec.updateStrategy',
          goStruct('apps.StatefulSetUpdateStrategy', [
            ['Type', JSON.stringify(ut)],
            ['RollingUpdate', goPtr('apps.RollingUpdateStatefulSetStrategy', us.rollingUpdate != null)],
          ]),
          "must be 'RollingUpdate' or 'OnDelete'",
        ),
      );
  }
  const rp = spec.persistentVolumeClaimRetentionPolicy;
  if (rp != null)
    for (const f of ['whenDeleted', 'whenScaled']) {
      const v = str(rp[f]) || 'Retain';
      if (v !== 'Retain' && v !== 'Delete') errs.push(notSupported(child('spec.persistentVolumeClaimRetentionPolicy', f), v, ['Retain', 'Delete']));
    }
  errs.push(...validateNonnegative(n(spec.replicas, 1), 'spec.replicas'));
  errs.push(...validateNonnegative(n(spec.minReadySeconds), 'spec.minReadySeconds'));
  if (spec.ordinals != null) errs.push(...validateNonnegative(n(spec.ordinals.start), 'spec.ordinals.start'));
  errs.push(...validateSelectorRequiredNonEmpty(spec.selector, 'spec.selector', 'empty selector is invalid for statefulset'));
  if (selectorInvalid(spec.selector)) errs.push(invalid('spec.selector', goLabelSelector(spec.selector), ''));
  else {
    // the pod spec of a StatefulSet template is not validated by Kubernetes, only its metadata
    const tmpl = obj(spec.template);
    const labels = tmpl.metadata?.labels;
    if (!selectorIsEmpty(spec.selector) && !selectorMatches(spec.selector, labels))
      errs.push(invalid('spec.template.metadata.labels', goStringMap(labels ?? null), '`selector` does not match template `labels`'));
    errs.push(...validateLabels(labels, 'spec.template.labels'));
    errs.push(...validateAnnotations(tmpl.metadata?.annotations, 'spec.template.annotations'));
    errs.push(...validatePodSpecificAnnotations(tmpl.metadata?.annotations, obj(tmpl.spec), 'spec.template.annotations'));
  }
  const trp = str(spec.template?.spec?.restartPolicy) || 'Always';
  if (trp !== 'Always') errs.push(notSupported('spec.template.spec.restartPolicy', trp, ['Always']));
  if (isSet(spec.template?.spec?.activeDeadlineSeconds)) errs.push(forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in StatefulSet is not Supported'));
  return errs;
}

export function validateStatefulSet(ss: any): Errs {
  return validateStatefulSetSpec(obj(ss.spec));
}

export function validateStatefulSetUpdate(ss: any, old: any): Errs {
  const errs = validateStatefulSetSpec(obj(ss.spec));
  const c = clone(obj(ss.spec));
  const o = obj(old.spec);
  for (const f of ['replicas', 'template', 'updateStrategy', 'minReadySeconds', 'ordinals', 'persistentVolumeClaimRetentionPolicy']) {
    if (f in o) c[f] = o[f];
    else delete c[f];
  }
  if (!semEqual(T.statefulSetSpec, c, o))
    errs.push(
      forbidden(
        'spec',
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ),
    );
  return errs;
}

export function validateStatefulSetStatusUpdate(ss: any, old: any): Errs {
  const st = obj(ss.status);
  const errs: Errs = [];
  for (const k of ['replicas', 'readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas']) errs.push(...validateNonnegative(n(st[k]), child('status', k)));
  if (isSet(st.observedGeneration)) errs.push(...validateNonnegative(st.observedGeneration, 'status.observedGeneration'));
  if (isSet(st.collisionCount)) errs.push(...validateNonnegative(st.collisionCount, 'status.collisionCount'));
  const msg = 'cannot be greater than status.replicas';
  for (const k of ['readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas']) if (n(st[k]) > n(st.replicas)) errs.push(invalid(child('status', k), n(st[k]), msg));
  if (n(st.availableReplicas) > n(st.readyReplicas)) errs.push(invalid('status.availableReplicas', n(st.availableReplicas), 'cannot be greater than status.readyReplicas'));
  errs.push(...collisionDecrement(st, obj(old.status)));
  return errs;
}

// ---- DaemonSet ----

function validateRollingUpdateDaemonSet(ru: any, path: string): Errs {
  const mu = ru.maxUnavailable ?? 1;
  const ms = ru.maxSurge ?? 0;
  const errs = validatePositiveIntOrPercent(mu, child(path, 'maxUnavailable'));
  errs.push(...validatePositiveIntOrPercent(ms, child(path, 'maxSurge')));
  errs.push(...isNotMoreThan100Percent(mu, child(path, 'maxUnavailable')));
  errs.push(...isNotMoreThan100Percent(ms, child(path, 'maxSurge')));
  const hasU = intOrPercentValue(mu) !== 0;
  const hasS = intOrPercentValue(ms) !== 0;
  if (hasU && hasS) errs.push(invalid(child(path, 'maxSurge'), goIntOrString(ms), 'may not be set when maxUnavailable is non-zero'));
  else if (!hasU && !hasS) errs.push(required(child(path, 'maxUnavailable'), 'cannot be 0 when maxSurge is 0'));
  return errs;
}

export function validateDaemonSetSpec(spec: any): Errs {
  const errs: Errs = [];
  errs.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  const tmpl = obj(spec.template);
  if (!selectorInvalid(spec.selector) && !selectorMatches(spec.selector, tmpl.metadata?.labels) && !selectorIsEmpty(spec.selector))
    errs.push(invalid('spec.template.metadata.labels', goStringMap(tmpl.metadata?.labels ?? null), '`selector` does not match template `labels`'));
  if (spec.selector != null && selectorIsEmpty(spec.selector)) errs.push(invalid('spec.selector', goLabelSelector(spec.selector), 'empty selector is invalid for daemonset'));
  errs.push(...validatePodTemplateSpec(tmpl, 'spec.template'));
  const rp = str(tmpl.spec?.restartPolicy) || 'Always';
  if (rp !== 'Always') errs.push(notSupported('spec.template.spec.restartPolicy', rp, ['Always']));
  if (isSet(tmpl.spec?.activeDeadlineSeconds)) errs.push(forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in DaemonSet is not Supported'));
  errs.push(...validateNonnegative(n(spec.minReadySeconds), 'spec.minReadySeconds'));
  const us = obj(spec.updateStrategy);
  const ut = str(us.type) || 'RollingUpdate';
  if (ut === 'RollingUpdate') errs.push(...validateRollingUpdateDaemonSet(obj(us.rollingUpdate), 'spec.updateStrategy.rollingUpdate'));
  else if (ut !== 'OnDelete')
    errs.push(
      notSupported(
        'spec.updateStrategy',
        goStruct('apps.DaemonSetUpdateStrategy', [
          ['Type', JSON.stringify(ut)],
          ['RollingUpdate', goPtr('apps.RollingUpdateDaemonSet', us.rollingUpdate != null)],
        ]),
        ['RollingUpdate', 'OnDelete'],
      ),
    );
  if (isSet(spec.revisionHistoryLimit)) errs.push(...validateNonnegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  return errs;
}

export function validateDaemonSet(ds: any): Errs {
  return validateDaemonSetSpec(obj(ds.spec));
}

/** the DaemonSet strategy validates the new object, then the update (which validates the spec again) */
export function validateDaemonSetUpdate(ds: any, old: any): Errs {
  const errs = validateDaemonSetSpec(obj(ds.spec));
  errs.push(...validateDaemonSetSpec(obj(ds.spec)));
  errs.push(...validateImmutableSelector(ds.spec?.selector, old.spec?.selector));
  return errs;
}

export function validateDaemonSetStatusUpdate(ds: any, old: any): Errs {
  const st = obj(ds.status);
  const errs: Errs = [];
  for (const k of ['currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady', 'observedGeneration', 'updatedNumberScheduled', 'numberAvailable', 'numberUnavailable'])
    errs.push(...validateNonnegative(n(st[k]), child('status', k)));
  if (isSet(st.collisionCount)) errs.push(...validateNonnegative(st.collisionCount, 'status.collisionCount'));
  errs.push(...collisionDecrement(st, obj(old.status)));
  return errs;
}

// ---- ReplicaSet status ----

export function validateReplicaSetStatusUpdate(rs: any): Errs {
  const st = obj(rs.status);
  const errs: Errs = [];
  for (const k of ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration']) errs.push(...validateNonnegative(n(st[k]), child('status', k)));
  const msg = 'cannot be greater than status.replicas';
  if (n(st.fullyLabeledReplicas) > n(st.replicas)) errs.push(invalid('status.fullyLabeledReplicas', n(st.fullyLabeledReplicas), msg));
  if (n(st.readyReplicas) > n(st.replicas)) errs.push(invalid('status.readyReplicas', n(st.readyReplicas), msg));
  if (n(st.availableReplicas) > n(st.replicas)) errs.push(invalid('status.availableReplicas', n(st.availableReplicas), msg));
  if (n(st.availableReplicas) > n(st.readyReplicas)) errs.push(invalid('status.availableReplicas', n(st.availableReplicas), 'cannot be greater than readyReplicas'));
  return errs;
}

// ---- ControllerRevision ----

export function validateControllerRevision(cr: any): Errs {
  const errs: Errs = [];
  if (cr.data === undefined || cr.data === null) errs.push(required('data', 'data is mandatory'));
  errs.push(...validateNonnegative(n(cr.revision), 'revision'));
  return errs;
}

export function validateControllerRevisionUpdate(cr: any, old: any): Errs {
  const errs = validateControllerRevision(cr);
  if (!jsonEqual(cr.data, old.data)) errs.push(invalid('data', new GoRepr('runtime.RawExtension{Raw:[]uint8{...}, Object:runtime.Object(nil)}'), FIELD_IMMUTABLE));
  return errs;
}

export { IS_NEGATIVE, arr };
