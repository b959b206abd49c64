// batch/v1: Job and CronJob (pkg/apis/batch/validation and the job strategy's options).
import { child, duplicate, forbidden, goInts, goLabelSelector, goStringMap, GoRepr, idx, invalid, key, notSupported, required, tooLong, tooLongMaxLength, tooMany, type Errs } from './errs.js';
import {
  arr,
  FIELD_IMMUTABLE,
  isDNS1123Label,
  isDomainPrefixedPath,
  isSet,
  obj,
  selectorInvalid,
  selectorMatches,
  str,
  validateLabelSelector,
  validateNonnegative,
  validateQualifiedName,
  jsonEqual,
  clone,
} from './util.js';
import { validatePodTemplateSpec } from './pod.js';
import { cronParseError, loadLocationError } from './cron.js';
import { semEqual, semEqualRef, T } from './semantic.js';
import { goQuoteList } from '../../machinery/gostrings.js';

const MAX_PARALLELISM_INDEXED = 100000;
const MAX_FAILED_INDEXES = 100000;
const COMPLETIONS_SOFT_LIMIT = 100000;
const PARALLELISM_HIGH = 10000;
const MAX_FAILED_HIGH = 10000;
const MAX_PFP_RULES = 20;
const MAX_EXIT_CODES = 255;
const MAX_POD_CONDITIONS = 20;
const MAX_MANAGED_BY = 63;
const MAX_SUCCEEDED_INDEXES = 64 * 1024;
const MAX_SUCCESS_RULES = 20;

const PFP_ACTIONS = ['Count', 'FailIndex', 'FailJob', 'Ignore'];
const EXIT_OPS = ['In', 'NotIn'];
const COND_STATUS = ['False', 'True', 'Unknown'];


function validateHasLabel(labels: any, path: string, k: string, expected: string): Errs {
  const l = obj(labels);
  if (!(k in l)) return [required(key(child(path, 'labels'), k), `must be '${expected}'`)];
  if (l[k] !== expected) return [invalid(key(child(path, 'labels'), k), goStringMap(l), `must be '${expected}'`)];
  return [];
}

function validateGeneratedSelector(job: any, requirePrefixed: boolean): Errs {
  const spec = obj(job.spec);
  if (spec.manualSelector === true || spec.selector == null) return [];
  const errs: Errs = [];
  const uid = str(job.metadata?.uid);
  const name = str(job.metadata?.name);
  if (!uid) errs.push(required('metadata.uid'));
  const tl = spec.template?.metadata?.labels;
  const tp = 'spec.template.metadata';
  errs.push(...validateHasLabel(tl, tp, 'controller-uid', uid));
  errs.push(...validateHasLabel(tl, tp, 'job-name', name));
  const expected: Record<string, string> = {};
  if (requirePrefixed) {
    errs.push(...validateHasLabel(tl, tp, 'batch.kubernetes.io/controller-uid', uid));
    errs.push(...validateHasLabel(tl, tp, 'batch.kubernetes.io/job-name', name));
    expected['batch.kubernetes.io/controller-uid'] = uid;
    expected['batch.kubernetes.io/job-name'] = name;
  }
  expected['controller-uid'] = uid;
  expected['job-name'] = name;
  if (!selectorInvalid(spec.selector) && !selectorMatches(spec.selector, expected)) errs.push(invalid('spec.selector', goLabelSelector(spec.selector), '`selector` not auto-generated'));
  return errs;
}

function parseIndexInterval(s: string, completions: number): [number, number] {
  const parts = s.split('-');
  if (parts.length > 2) throw new Error(`the fragment ${JSON.stringify(s)} violates the requirement that an index interval can have at most two parts separated by '-'`);
  const toInt = (x: string) => {
    if (!/^[+-]?[0-9]+$/.test(x)) throw new Error(`cannot convert string to integer for index: ${JSON.stringify(x)}`);
    return Number(x);
  };
  const x = toInt(parts[0]!);
  if (x >= completions) throw new Error(`too large index: ${JSON.stringify(parts[0])}`);
  if (parts.length > 1) {
    const y = toInt(parts[1]!);
    if (y >= completions) throw new Error(`too large index: ${JSON.stringify(parts[1])}`);
    if (x >= y) throw new Error(`non-increasing order, previous: ${x}, current: ${y}`);
    return [x, y];
  }
  return [x, x];
}

function validateIndexesFormat(s: string, completions: number): number {
  if (!s) return 0;
  let last: number | undefined;
  let total = 0;
  for (const iv of s.split(',')) {
    const [x, y] = parseIndexInterval(iv, completions);
    if (last !== undefined && last >= x) throw new Error(`non-increasing order, previous: ${last}, current: ${x}`);
    total += y - x + 1;
    last = y;
  }
  return total;
}

function validatePodFailurePolicy(spec: any, path: string): Errs {
  const errs: Errs = [];
  const rules = arr(spec.podFailurePolicy.rules);
  const rp = child(path, 'rules');
  if (rules.length > MAX_PFP_RULES) errs.push(tooMany(rp, rules.length, MAX_PFP_RULES));
  const names = new Set<string>([...arr(spec.template?.spec?.containers), ...arr(spec.template?.spec?.initContainers)].map((c: any) => str(c?.name)));
  rules.forEach((r0: any, i: number) => {
    const r = obj(r0);
    const p = idx(rp, i);
    const ap = child(p, 'action');
    const action = str(r.action);
    if (!action) errs.push(required(ap, `valid values: ${goQuoteList(PFP_ACTIONS)}`));
    else if (action === 'FailIndex') {
      if (!isSet(spec.backoffLimitPerIndex)) errs.push(invalid(ap, action, 'requires the backoffLimitPerIndex to be set'));
    } else if (!PFP_ACTIONS.includes(action)) errs.push(notSupported(ap, action, PFP_ACTIONS));
    if (r.onExitCodes != null) {
      const oe = r.onExitCodes;
      const op = child(p, 'onExitCodes');
      const opPath = child(op, 'operator');
      const oper = str(oe.operator);
      if (!oper) errs.push(required(opPath, `valid values: ${goQuoteList(EXIT_OPS)}`));
      else if (!EXIT_OPS.includes(oper)) errs.push(notSupported(opPath, oper, EXIT_OPS));
      if (isSet(oe.containerName) && !names.has(oe.containerName)) errs.push(invalid(child(op, 'containerName'), str(oe.containerName), 'must be one of the container or initContainer names in the pod template'));
      const vp = child(op, 'values');
      const values = arr<number>(oe.values);
      if (values.length === 0) errs.push(invalid(vp, goInts(oe.values == null ? null : values), 'at least one value is required'));
      else if (values.length > MAX_EXIT_CODES) errs.push(tooMany(vp, values.length, MAX_EXIT_CODES));
      let ordered = true;
      const seen = new Set<number>();
      values.forEach((v, j) => {
        if (oper === 'In' && v === 0) errs.push(invalid(idx(vp, j), v, 'must not be 0 for the In operator'));
        if (seen.has(v)) errs.push(duplicate(idx(vp, j), v));
        else seen.add(v);
        if (j > 0 && values[j - 1]! > v) ordered = false;
      });
      if (!ordered) errs.push(invalid(vp, goInts(values), 'must be ordered'));
    }
    const conds = arr(r.onPodConditions);
    if (conds.length > 0) {
      const cp = child(p, 'onPodConditions');
      if (conds.length > MAX_POD_CONDITIONS) errs.push(tooMany(cp, conds.length, MAX_POD_CONDITIONS));
      conds.forEach((c: any, j: number) => {
        const pp = idx(cp, j);
        errs.push(...validateQualifiedName(str(c?.type), child(pp, 'type')));
        const st = str(c?.status);
        if (!st) errs.push(required(child(pp, 'status'), `valid values: ${goQuoteList(COND_STATUS)}`));
        else if (!COND_STATUS.includes(st)) errs.push(notSupported(child(pp, 'status'), st, COND_STATUS));
      });
    }
    if (r.onExitCodes != null && conds.length > 0) errs.push(invalid(p, new GoRepr('field.OmitValueType{}'), 'specifying both OnExitCodes and OnPodConditions is not supported'));
    if (r.onExitCodes == null && conds.length === 0) errs.push(invalid(p, new GoRepr('field.OmitValueType{}'), 'specifying one of OnExitCodes and OnPodConditions is required'));
  });
  return errs;
}

function validateSuccessPolicy(spec: any, path: string): Errs {
  const errs: Errs = [];
  const rules = arr(spec.successPolicy.rules);
  const rp = child(path, 'rules');
  if (rules.length === 0) errs.push(required(rp, 'at least one rules must be specified when the successPolicy is specified'));
  if (rules.length > MAX_SUCCESS_RULES) errs.push(tooMany(rp, rules.length, MAX_SUCCESS_RULES));
  const completions = typeof spec.completions === 'number' ? spec.completions : 0;
  rules.forEach((r: any, i: number) => {
    const p = idx(rp, i);
    if (!isSet(r?.succeededCount) && !isSet(r?.succeededIndexes)) errs.push(required(p, 'at least one of succeededCount or succeededIndexes must be specified'));
    let total = 0;
    if (isSet(r?.succeededIndexes)) {
      const sp = child(p, 'succeededIndexes');
      const s = str(r.succeededIndexes);
      if (s.length > MAX_SUCCEEDED_INDEXES) errs.push(tooLong(sp, MAX_SUCCEEDED_INDEXES));
      try {
        total = validateIndexesFormat(s, completions);
      } catch (e) {
        errs.push(invalid(sp, s, `error parsing succeededIndexes: ${(e as Error).message}`));
      }
    }
    if (isSet(r?.succeededCount)) {
      const cp = child(p, 'succeededCount');
      errs.push(...validateNonnegative(r.succeededCount, cp));
      if (r.succeededCount > completions) errs.push(invalid(cp, r.succeededCount, `must be less than or equal to ${completions} (the number of specified completions)`));
      if (isSet(r.succeededIndexes) && r.succeededCount > total)
        errs.push(invalid(cp, r.succeededCount, `must be less than or equal to ${total} (the number of indexes in the specified succeededIndexes field)`));
    }
  });
  return errs;
}

/** validateJobSpec (the part shared with job templates) */
function validateJobSpecCommon(spec: any, path: string): Errs {
  const errs: Errs = [];
  const nn = (f: string) => isSet(spec[f]) && errs.push(...validateNonnegative(spec[f], child(path, f)));
  nn('parallelism');
  nn('completions');
  nn('activeDeadlineSeconds');
  nn('backoffLimit');
  nn('ttlSecondsAfterFinished');
  nn('backoffLimitPerIndex');
  if (isSet(spec.maxFailedIndexes)) {
    errs.push(...validateNonnegative(spec.maxFailedIndexes, child(path, 'maxFailedIndexes')));
    if (!isSet(spec.backoffLimitPerIndex)) errs.push(required(child(path, 'backoffLimitPerIndex'), 'when maxFailedIndexes is specified'));
  }
  if (isSet(spec.managedBy)) {
    errs.push(...isDomainPrefixedPath(child(path, 'managedBy'), str(spec.managedBy)));
    if (str(spec.managedBy).length > MAX_MANAGED_BY) errs.push(tooLongMaxLength(child(path, 'managedBy'), MAX_MANAGED_BY));
  }
  const mode = isSet(spec.completionMode) ? str(spec.completionMode) : 'NonIndexed';
  if (isSet(spec.completionMode)) {
    if (mode !== 'NonIndexed' && mode !== 'Indexed') errs.push(notSupported(child(path, 'completionMode'), mode, ['NonIndexed', 'Indexed']));
    if (mode === 'Indexed') {
      if (!isSet(spec.completions)) errs.push(required(child(path, 'completions'), 'when completion mode is Indexed'));
      if (isSet(spec.parallelism) && spec.parallelism > MAX_PARALLELISM_INDEXED)
        errs.push(invalid(child(path, 'parallelism'), spec.parallelism, `must be less than or equal to ${MAX_PARALLELISM_INDEXED} when completion mode is Indexed`));
      if (isSet(spec.completions) && isSet(spec.maxFailedIndexes) && spec.maxFailedIndexes > spec.completions)
        errs.push(invalid(child(path, 'maxFailedIndexes'), spec.maxFailedIndexes, 'must be less than or equal to completions'));
      if (isSet(spec.maxFailedIndexes) && spec.maxFailedIndexes > MAX_FAILED_INDEXES)
        errs.push(invalid(child(path, 'maxFailedIndexes'), spec.maxFailedIndexes, `must be less than or equal to ${MAX_FAILED_INDEXES}`));
      if (isSet(spec.completions) && spec.completions > COMPLETIONS_SOFT_LIMIT && isSet(spec.backoffLimitPerIndex)) {
        if (!isSet(spec.maxFailedIndexes)) errs.push(required(child(path, 'maxFailedIndexes'), `must be specified when completions is above ${COMPLETIONS_SOFT_LIMIT}`));
        if (isSet(spec.parallelism) && spec.parallelism > PARALLELISM_HIGH)
          errs.push(
            invalid(child(path, 'parallelism'), spec.parallelism, `must be less than or equal to ${PARALLELISM_HIGH} when completions are above ${COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index`),
          );
        if (isSet(spec.maxFailedIndexes) && spec.maxFailedIndexes > MAX_FAILED_HIGH)
          errs.push(
            invalid(child(path, 'maxFailedIndexes'), spec.maxFailedIndexes, `must be less than or equal to ${MAX_FAILED_HIGH} when completions are above ${COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index`),
          );
      }
    }
  }
  if (mode === 'NonIndexed') {
    if (isSet(spec.backoffLimitPerIndex)) errs.push(invalid(child(path, 'backoffLimitPerIndex'), spec.backoffLimitPerIndex, 'requires indexed completion mode'));
    if (isSet(spec.maxFailedIndexes)) errs.push(invalid(child(path, 'maxFailedIndexes'), spec.maxFailedIndexes, 'requires indexed completion mode'));
  }
  if (spec.podFailurePolicy != null) errs.push(...validatePodFailurePolicy(spec, child(path, 'podFailurePolicy')));
  if (spec.successPolicy != null) {
    if (mode !== 'Indexed') errs.push(invalid(child(path, 'successPolicy'), new GoRepr(successPolicyRepr(spec.successPolicy)), 'requires indexed completion mode'));
    else errs.push(...validateSuccessPolicy(spec, child(path, 'successPolicy')));
  }
  if (isSet(spec.podReplacementPolicy)) {
    const prp = str(spec.podReplacementPolicy);
    if (spec.podFailurePolicy != null) {
      if (prp !== 'Failed') errs.push(notSupported(child(path, 'podReplacementPolicy'), prp, ['Failed']));
    } else if (prp !== 'Failed' && prp !== 'TerminatingOrFailed') errs.push(notSupported(child(path, 'podReplacementPolicy'), prp, ['Failed', 'TerminatingOrFailed']));
  }
  errs.push(...validatePodTemplateSpec(spec.template ?? {}, child(path, 'template')));
  const rp = str(spec.template?.spec?.restartPolicy) || 'Always';
  const rpPath = child(path, 'template', 'spec', 'restartPolicy');
  if (rp === 'Always') errs.push(required(rpPath, 'valid values: "OnFailure", "Never"'));
  else if (rp !== 'OnFailure' && rp !== 'Never') errs.push(notSupported(rpPath, rp, ['OnFailure', 'Never']));
  else if (spec.podFailurePolicy != null && rp !== 'Never') errs.push(invalid(rpPath, rp, 'only "Never" is supported when podFailurePolicy is specified'));
  return errs;
}

function successPolicyRepr(sp: any): string {
  const rules = arr(sp?.rules)
    .map((r: any) => `batch.SuccessPolicyRule{SucceededIndexes:${isSet(r?.succeededIndexes) ? '(*string)(0xc000010000)' : '(*string)(nil)'}, SucceededCount:${isSet(r?.succeededCount) ? '(*int32)(0xc000010000)' : '(*int32)(nil)'}}`)
    .join(', ');
  return `batch.SuccessPolicy{Rules:[]batch.SuccessPolicyRule{${rules}}}`;
}

function validateJobSpec(spec: any): Errs {
  const errs = validateJobSpecCommon(spec, 'spec');
  if (spec.selector == null) errs.push(required('spec.selector'));
  else errs.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  if (!selectorInvalid(spec.selector) && !selectorMatches(spec.selector, spec.template?.metadata?.labels))
    errs.push(invalid('spec.template.metadata.labels', goStringMap(spec.template?.metadata?.labels ?? null), '`selector` does not match template `labels`'));
  return errs;
}

export function validateJob(job: any): Errs {
  const spec = obj(job.spec);
  const errs = validateGeneratedSelector(job, true);
  errs.push(...validateJobSpec(spec));
  if (spec.completionMode === 'Indexed' && typeof spec.completions === 'number' && spec.completions > 0) {
    const host = `${str(job.metadata?.name)}-${spec.completions - 1}`;
    if (isDNS1123Label(host).length) errs.push(invalid('metadata.name', str(job.metadata?.name), `will not able to create pod with invalid DNS label: ${host}`));
  }
  return errs;
}

export function validateJobUpdate(job: any, old: any): Errs {
  const spec = obj(job.spec);
  const os = obj(old.spec);
  const errs = validateJobSpec(spec);
  // completions: immutable, except for Indexed jobs changing it together with parallelism
  if ((spec.completions ?? null) !== (os.completions ?? null)) {
    if (spec.completionMode !== 'Indexed') errs.push(invalid('spec.completions', spec.completions ?? null, FIELD_IMMUTABLE));
    else if (isSet(spec.completions) && spec.completions !== spec.parallelism) errs.push(invalid('spec.completions', spec.completions, 'can only be modified in tandem with spec.parallelism'));
  }
  if (!semEqualRef({ kind: 'object', name: T.labelSelector }, spec.selector, os.selector, true)) errs.push(invalid('spec.selector', goLabelSelector(spec.selector), FIELD_IMMUTABLE));
  // the template is immutable, but a suspended job that never started may change its scheduling directives
  const oldT = clone(obj(os.template));
  const newT = obj(spec.template);
  if (os.suspend === true && old.status?.startTime == null) {
    oldT.spec ??= {};
    const nts = obj(newT.spec);
    if (nts.affinity == null && oldT.spec.affinity != null) {
      delete oldT.spec.affinity.nodeAffinity;
      if (Object.keys(oldT.spec.affinity).length === 0) delete oldT.spec.affinity;
    } else if (nts.affinity != null && oldT.spec.affinity == null) oldT.spec.affinity = { nodeAffinity: nts.affinity.nodeAffinity };
    else if (nts.affinity != null && oldT.spec.affinity != null) oldT.spec.affinity.nodeAffinity = nts.affinity.nodeAffinity;
    oldT.spec.nodeSelector = nts.nodeSelector;
    oldT.spec.tolerations = nts.tolerations;
    oldT.spec.schedulingGates = nts.schedulingGates;
    oldT.metadata ??= {};
    oldT.metadata.annotations = newT.metadata?.annotations;
    oldT.metadata.labels = newT.metadata?.labels;
  }
  if (!semEqual(T.podTemplateSpec, newT, oldT)) errs.push(invalid('spec.template', new GoRepr('core.PodTemplateSpec{ObjectMeta:v1.ObjectMeta{...}, Spec:core.PodSpec{...}}'), FIELD_IMMUTABLE));
  if ((spec.completionMode ?? null) !== (os.completionMode ?? null)) errs.push(invalid('spec.completionMode', spec.completionMode ?? null, FIELD_IMMUTABLE));
  if (!semEqualRef({ kind: 'object', name: T.podFailurePolicy }, spec.podFailurePolicy, os.podFailurePolicy, true))
    errs.push(invalid('spec.podFailurePolicy', spec.podFailurePolicy == null ? null : new GoRepr('batch.PodFailurePolicy{Rules:[]batch.PodFailurePolicyRule{...}}'), FIELD_IMMUTABLE));
  if ((spec.backoffLimitPerIndex ?? null) !== (os.backoffLimitPerIndex ?? null)) errs.push(invalid('spec.backoffLimitPerIndex', spec.backoffLimitPerIndex ?? null, FIELD_IMMUTABLE));
  if ((spec.managedBy ?? null) !== (os.managedBy ?? null)) errs.push(invalid('spec.managedBy', spec.managedBy ?? null, FIELD_IMMUTABLE));
  if (!semEqualRef({ kind: 'object', name: T.successPolicy }, spec.successPolicy, os.successPolicy, true))
    errs.push(invalid('spec.successPolicy', spec.successPolicy == null ? null : new GoRepr(successPolicyRepr(spec.successPolicy)), FIELD_IMMUTABLE));
  return errs;
}

export function validateJobStatusUpdate(job: any, old: any): Errs {
  const st = obj(job.status);
  const errs: Errs = [];
  for (const k of ['active', 'succeeded', 'failed']) errs.push(...validateNonnegative(typeof st[k] === 'number' ? st[k] : 0, child('status', k)));
  if (isSet(st.ready)) errs.push(...validateNonnegative(st.ready, 'status.ready'));
  if (isSet(st.terminating)) errs.push(...validateNonnegative(st.terminating, 'status.terminating'));
  const u = st.uncountedTerminatedPods;
  if (u != null) {
    const seen = new Set<string>();
    for (const f of ['succeeded', 'failed'])
      arr<string>(u[f]).forEach((k, i) => {
        const p = idx(child('status.uncountedTerminatedPods', f), i);
        if (!k) errs.push(invalid(p, k, 'must not be empty'));
        else if (seen.has(k)) errs.push(duplicate(p, k));
        else seen.add(k);
      });
  }
  if (isSet(st.ready) && st.ready > (st.active ?? 0)) errs.push(invalid('status.ready', st.ready, 'cannot set more ready pods than active'));
  const os = obj(old.status);
  const isTrue = (list: any, t: string) => arr(list).some((c: any) => c?.type === t && c?.status === 'True');
  for (const t of ['Failed', 'Complete', 'FailureTarget'])
    if (isTrue(os.conditions, t) && !isTrue(st.conditions, t)) errs.push(invalid('status.conditions', new GoRepr('field.OmitValueType{}'), `cannot disable the terminal ${t}=True condition`));
  if ((st.failed ?? 0) < (os.failed ?? 0)) errs.push(invalid('status.failed', st.failed ?? 0, 'cannot decrease the failed counter'));
  if ((st.succeeded ?? 0) < (os.succeeded ?? 0)) errs.push(invalid('status.succeeded', st.succeeded ?? 0, 'cannot decrease the succeeded counter'));
  return errs;
}

// ---- CronJob ----

function validateCronJobSpec(spec: any, oldSpec: any | undefined): Errs {
  const errs: Errs = [];
  const sched = str(spec.schedule);
  if (!sched) errs.push(required('spec.schedule'));
  else {
    const allowTZ = oldSpec ? str(oldSpec.schedule).includes('TZ') : false;
    const e = cronParseError(sched);
    if (e) errs.push(invalid('spec.schedule', sched, e));
    if (allowTZ && sched.includes('TZ') && isSet(spec.timeZone)) errs.push(invalid('spec.schedule', sched, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'));
    else if (!allowTZ && sched.includes('TZ')) errs.push(invalid('spec.schedule', sched, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
  }
  if (isSet(spec.startingDeadlineSeconds)) errs.push(...validateNonnegative(spec.startingDeadlineSeconds, 'spec.startingDeadlineSeconds'));
  if (!oldSpec || (oldSpec.timeZone ?? null) !== (spec.timeZone ?? null)) errs.push(...validateTimeZone(spec.timeZone, 'spec.timeZone'));
  const cp = str(spec.concurrencyPolicy) || 'Allow';
  if (!['Allow', 'Forbid', 'Replace'].includes(cp)) errs.push(notSupported('spec.concurrencyPolicy', cp, ['Allow', 'Forbid', 'Replace']));
  const jt = obj(spec.jobTemplate);
  const js = obj(jt.spec);
  errs.push(...validateJobSpecCommon(js, 'spec.jobTemplate.spec'));
  if (js.selector != null) errs.push(invalid('spec.jobTemplate.spec.selector', goLabelSelector(js.selector), '`selector` will be auto-generated'));
  if (js.manualSelector === true) errs.push(notSupported('spec.jobTemplate.spec.manualSelector', true, ['nil', 'false']));
  if (isSet(spec.successfulJobsHistoryLimit)) errs.push(...validateNonnegative(spec.successfulJobsHistoryLimit, 'spec.successfulJobsHistoryLimit'));
  if (isSet(spec.failedJobsHistoryLimit)) errs.push(...validateNonnegative(spec.failedJobsHistoryLimit, 'spec.failedJobsHistoryLimit'));
  return errs;
}

function validateTimeZone(tz: unknown, path: string): Errs {
  if (!isSet(tz)) return [];
  const s = str(tz);
  if (s.length === 0) return [invalid(path, s, 'timeZone must be nil or non-empty string')];
  for (const part of s.split('/'))
    if (part === '.' || part === '..' || part.startsWith('-') || !/^[A-Za-z.\-_0-9+]{1,14}$/.test(part)) return [invalid(path, s, `unknown time zone ${s}`)];
  const errs: Errs = [];
  if (s.toLowerCase() === 'local') errs.push(invalid(path, s, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'));
  const e = loadLocationError(s);
  if (e) errs.push(invalid(path, s, e));
  return errs;
}

export function validateCronJob(cj: any): Errs {
  const errs = validateCronJobSpec(obj(cj.spec), undefined);
  const name = str(cj.metadata?.name);
  if (name.length > 52) errs.push(invalid('metadata.name', name, 'must be no more than 52 characters'));
  return errs;
}

export function validateCronJobUpdate(cj: any, old: any): Errs {
  return validateCronJobSpec(obj(cj.spec), obj(old.spec));
}

export { jsonEqual, forbidden };
