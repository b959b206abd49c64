// autoscaling: HorizontalPodAutoscaler (Kubernetes' pkg/apis/autoscaling/validation). Kubernetes
// validates its internal type, whose fields are autoscaling/v2's: an autoscaling/v1 object is
// validated in its stored v2 form, so its errors name v2's paths (spec.metrics[0]...), as
// kube-apiserver's do.
import { child, forbidden, GoRepr, idx, invalid, notSupported, required, type Errs } from './errs.js';
import { goQuantityStruct } from './quantity.js';
import { arr, isDNS1123Label, isSet, isValidPathSegmentName, obj, qsign, str, validateNonnegative } from './util.js';
import { validateContainerResourceName } from './pod.js';
import { hpaAsStored } from '../autoscaling.js';

const MAX_PERIOD_SECONDS = 1800;
const MAX_STABILIZATION_WINDOW_SECONDS = 3600;
const SELECT_POLICIES = ['Disabled', 'Max', 'Min'];
const POLICY_TYPES = ['Percent', 'Pods'];
const SOURCE_TYPES = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];
/** the metric source types and the member each one populates, in the order Kubernetes looks at them */
const SOURCES: [string, string][] = [
  ['object', 'Object'],
  ['external', 'External'],
  ['pods', 'Pods'],
  ['resource', 'Resource'],
  ['containerResource', 'ContainerResource'],
];

export function validateCrossVersionObjectReference(ref: any, path: string): Errs {
  const r = obj(ref);
  const errs: Errs = [];
  for (const f of ['kind', 'name']) {
    const v = str(r[f]);
    if (!v) errs.push(required(child(path, f)));
    else for (const m of isValidPathSegmentName(v)) errs.push(invalid(child(path, f), v, m));
  }
  return errs;
}

function validateMetricTarget(t: any, path: string): Errs {
  const errs: Errs = [];
  const type = str(t.type);
  if (!type) errs.push(required(child(path, 'type'), 'must specify a metric target type'));
  if (type !== 'Utilization' && type !== 'Value' && type !== 'AverageValue') errs.push(invalid(child(path, 'type'), type, 'must be either Utilization, Value, or AverageValue'));
  // (the value is a *Quantity: Go's field error prints the struct it points to with %#v, as
  // Quantity's String method is on the pointer)
  if (isSet(t.value) && qsign(t.value) !== 1) errs.push(invalid(child(path, 'value'), new GoRepr(goQuantityStruct(t.value)), 'must be positive'));
  if (isSet(t.averageValue) && qsign(t.averageValue) !== 1) errs.push(invalid(child(path, 'averageValue'), new GoRepr(goQuantityStruct(t.averageValue)), 'must be positive'));
  if (isSet(t.averageUtilization) && t.averageUtilization < 1) errs.push(invalid(child(path, 'averageUtilization'), t.averageUtilization, 'must be greater than 0'));
  return errs;
}

function validateMetricIdentifier(id: any, path: string): Errs {
  const name = str(obj(id).name);
  if (!name) return [required(child(path, 'name'), 'must specify a metric name')];
  return isValidPathSegmentName(name).map((m) => invalid(child(path, 'name'), name, m));
}

function validateSource(member: string, s: any, path: string): Errs {
  const errs: Errs = [];
  const t = obj(s.target);
  const tp = child(path, 'target');
  switch (member) {
    case 'object':
      errs.push(...validateCrossVersionObjectReference(s.describedObject, child(path, 'describedObject')), ...validateMetricIdentifier(s.metric, child(path, 'metric')), ...validateMetricTarget(t, tp));
      if (!isSet(t.value) && !isSet(t.averageValue)) errs.push(required(child(tp, 'averageValue'), 'must set either a target value or averageValue'));
      break;
    case 'external':
      errs.push(...validateMetricIdentifier(s.metric, child(path, 'metric')), ...validateMetricTarget(t, tp));
      if (!isSet(t.value) && !isSet(t.averageValue)) errs.push(required(child(tp, 'averageValue'), 'must set either a target value for metric or a per-pod target'));
      if (isSet(t.value) && isSet(t.averageValue)) errs.push(forbidden(child(tp, 'value'), 'may not set both a target value for metric and a per-pod target'));
      break;
    case 'pods':
      errs.push(...validateMetricIdentifier(s.metric, child(path, 'metric')), ...validateMetricTarget(t, tp));
      if (!isSet(t.averageValue)) errs.push(required(child(tp, 'averageValue'), 'must specify a positive target averageValue'));
      break;
    case 'resource':
    case 'containerResource': {
      const name = str(s.name);
      if (!name) errs.push(required(child(path, 'name'), 'must specify a resource name'));
      else if (member === 'containerResource') errs.push(...validateContainerResourceName(name, child(path, 'name')));
      if (member === 'containerResource') {
        const c = str(s.container);
        if (!c) errs.push(required(child(path, 'container'), 'must specify a container'));
        else for (const m of isDNS1123Label(c)) errs.push(invalid(child(path, 'container'), c, m));
      }
      errs.push(...validateMetricTarget(t, tp));
      if (!isSet(t.averageUtilization) && !isSet(t.averageValue)) errs.push(required(child(tp, 'averageUtilization'), 'must set either a target raw value or a target utilization'));
      if (isSet(t.averageUtilization) && isSet(t.averageValue)) errs.push(forbidden(child(tp, 'averageValue'), 'may not set both a target raw value and a target utilization'));
      break;
    }
  }
  return errs;
}

function validateMetricSpec(m0: any, path: string): Errs {
  const m = obj(m0);
  const errs: Errs = [];
  const type = str(m.type);
  if (!type) errs.push(required(child(path, 'type'), 'must specify a metric source type'));
  if (!SOURCE_TYPES.includes(type)) errs.push(notSupported(child(path, 'type'), type, SOURCE_TYPES));
  // only the first populated source is validated
  const present: string[] = [];
  for (const [member] of SOURCES) {
    if (!isSet(m[member])) continue;
    present.push(member);
    if (present.length === 1) errs.push(...validateSource(member, obj(m[member]), child(path, member)));
  }
  const expected = SOURCES.find(([, t]) => t === type)?.[0];
  if (expected === undefined) errs.push(notSupported(child(path, 'type'), type, SOURCE_TYPES));
  else if (!isSet(m[expected])) errs.push(required(child(path, expected), 'must populate information for the given metric source'));
  if (present.length !== 1) {
    // (Kubernetes walks a set here; its members in name order)
    for (const member of present.filter((p) => p !== expected).sort()) errs.push(forbidden(child(path, member), 'must populate the given metric source only'));
  }
  return errs;
}

function validateScalingRules(r: any, path: string): Errs {
  if (!isSet(r)) return [];
  const rules = obj(r);
  const errs: Errs = [];
  const w = rules.stabilizationWindowSeconds;
  if (isSet(w) && w < 0) errs.push(invalid(child(path, 'stabilizationWindowSeconds'), w, 'must be greater than or equal to zero'));
  if (isSet(w) && w > MAX_STABILIZATION_WINDOW_SECONDS) errs.push(invalid(child(path, 'stabilizationWindowSeconds'), w, `must be less than or equal to ${MAX_STABILIZATION_WINDOW_SECONDS}`));
  if (isSet(rules.selectPolicy) && !SELECT_POLICIES.includes(rules.selectPolicy)) errs.push(notSupported(child(path, 'selectPolicy'), str(rules.selectPolicy), SELECT_POLICIES));
  const pp = child(path, 'policies');
  const policies = arr(rules.policies);
  if (policies.length === 0) errs.push(required(pp, 'must specify at least one Policy'));
  policies.forEach((p0, i) => {
    const p = obj(p0);
    const at = idx(pp, i);
    if (!POLICY_TYPES.includes(p.type)) errs.push(notSupported(child(at, 'type'), str(p.type), POLICY_TYPES));
    const value = typeof p.value === 'number' ? p.value : 0;
    const period = typeof p.periodSeconds === 'number' ? p.periodSeconds : 0;
    if (value <= 0) errs.push(invalid(child(at, 'value'), value, 'must be greater than zero'));
    if (period <= 0) errs.push(invalid(child(at, 'periodSeconds'), period, 'must be greater than zero'));
    if (period > MAX_PERIOD_SECONDS) errs.push(invalid(child(at, 'periodSeconds'), period, `must be less than or equal to ${MAX_PERIOD_SECONDS}`));
  });
  return errs;
}

function validateSpec(spec0: any, minReplicasLowerBound: number): Errs {
  const spec = obj(spec0);
  const errs: Errs = [];
  const min = spec.minReplicas;
  const max = typeof spec.maxReplicas === 'number' ? spec.maxReplicas : 0;
  if (isSet(min) && min < minReplicasLowerBound) errs.push(invalid('spec.minReplicas', min, `must be greater than or equal to ${minReplicasLowerBound}`));
  if (max < 1) errs.push(invalid('spec.maxReplicas', max, 'must be greater than 0'));
  if (isSet(min) && max < min) errs.push(invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  errs.push(...validateCrossVersionObjectReference(spec.scaleTargetRef, 'spec.scaleTargetRef'));
  const metrics = arr(spec.metrics);
  metrics.forEach((m, i) => errs.push(...validateMetricSpec(m, idx('spec.metrics', i))));
  if (min === 0 && !metrics.some((m) => m?.type === 'Object' || m?.type === 'External')) {
    errs.push(forbidden('spec.metrics', 'must specify at least one Object or External metric to support scaling to zero replicas'));
  }
  if (isSet(spec.behavior)) {
    const b = obj(spec.behavior);
    errs.push(...validateScalingRules(b.scaleUp, 'spec.behavior.scaleUp'), ...validateScalingRules(b.scaleDown, 'spec.behavior.scaleDown'));
  }
  return errs;
}

/** ValidateHorizontalPodAutoscaler (HPAScaleToZero is alpha and off: minReplicas is at least 1) */
export function validateHorizontalPodAutoscaler(hpa: any): Errs {
  return validateSpec(hpaAsStored(obj(hpa)).spec, 1);
}

/** ValidateHorizontalPodAutoscalerUpdate: an autoscaler that has minReplicas 0 may keep it */
export function validateHorizontalPodAutoscalerUpdate(hpa: any, old: any): Errs {
  const was = hpaAsStored(obj(old)).spec?.minReplicas;
  return validateSpec(hpaAsStored(obj(hpa)).spec, was === 0 ? 0 : 1);
}

/** ValidateHorizontalPodAutoscalerStatusUpdate */
export function validateHorizontalPodAutoscalerStatusUpdate(hpa: any): Errs {
  const s = obj(obj(hpa).status);
  return [...validateNonnegative(typeof s.currentReplicas === 'number' ? s.currentReplicas : 0, 'status.currentReplicas'), ...validateNonnegative(typeof s.desiredReplicas === 'number' ? s.desiredReplicas : 0, 'status.desiredReplicas')];
}
