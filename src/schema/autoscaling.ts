// autoscaling/v1 HorizontalPodAutoscaler as a view of the stored autoscaling/v2 object, converted
// both ways as Kubernetes converts them (through its internal type, whose fields are v2's):
//
// - v1's single CPU target (spec.targetCPUUtilizationPercentage) is a v2 Resource metric of cpu
//   with an averageUtilization target; status.currentCPUUtilizationPercentage likewise.
// - What v1 has no field for travels in four annotations of the v1 object, as Kubernetes writes
//   them: the other metrics (autoscaling.alpha.kubernetes.io/metrics, in autoscaling/v1's
//   MetricSpec form: the v2beta1-like `targetAverageValue` shape), the current metrics
//   (.../current-metrics, all of them, the CPU one too, v1 MetricStatus), the behavior
//   (.../behavior: Kubernetes marshals its internal type there, so the keys are Go field names,
//   `ScaleUp`, `StabilizationWindowSeconds`, ...) and the conditions (.../conditions). Reading the
//   v1 object back turns them into fields again and the stored object never holds them.
// - A v1 object with neither a CPU target nor other metrics gets the CPU target of 80%, the
//   default autoscaling/v1 always had.
import { normalize } from '../codec/json.js';
import { KEEP_DECODED } from '../machinery/objectmeta.js';
import { goJSONSyntaxError } from './validation/gojson.js';

export const HPA_METRICS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/metrics';
export const HPA_CURRENT_METRICS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/current-metrics';
export const HPA_BEHAVIOR_ANNOTATION = 'autoscaling.alpha.kubernetes.io/behavior';
export const HPA_CONDITIONS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/conditions';
const ROUND_TRIP = [HPA_METRICS_ANNOTATION, HPA_BEHAVIOR_ANNOTATION, HPA_CURRENT_METRICS_ANNOTATION, HPA_CONDITIONS_ANNOTATION];
export const DEFAULT_CPU_UTILIZATION = 80;

const V1_TYPE = 'io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler';
const V2_TYPE = 'io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler';

type Obj = Record<string, any>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const list = (v: unknown): any[] => (Array.isArray(v) ? v : []);
/** a Go value that is absent or null (a nil pointer) */
const nil = (v: unknown) => v === undefined || v === null;

/** the object without the four round-trip annotations (a copy when it had any) */
function dropRoundTrip(meta: Obj): void {
  const a = meta.annotations;
  if (!isObj(a) || !ROUND_TRIP.some((k) => k in a)) return;
  const out: Obj = {};
  for (const k of Object.keys(a)) if (!ROUND_TRIP.includes(k)) out[k] = a[k];
  if (Object.keys(out).length) meta.annotations = out;
  else delete meta.annotations;
}

function ref(r: unknown): Obj {
  const x = isObj(r) ? r : {};
  const out: Obj = { kind: x.kind ?? '', name: x.name ?? '' };
  if (x.apiVersion) out.apiVersion = x.apiVersion;
  return out;
}

/** a resource.Quantity field that Go writes even when zero */
const quantity = (v: unknown) => (nil(v) ? '0' : v);

// ---- v2 (the stored form) to v1 --------------------------------------------------------------

/** a v2 MetricSpec in autoscaling/v1's MetricSpec form (the metrics annotation) */
function metricSpecToV1(m: Obj): Obj {
  const out: Obj = { type: m.type ?? '' };
  if (isObj(m.object)) {
    const o = m.object;
    const t = isObj(o.target) ? o.target : {};
    const x: Obj = { target: ref(o.describedObject), metricName: o.metric?.name ?? '', targetValue: quantity(t.value) };
    if (!nil(o.metric?.selector)) x.selector = o.metric.selector;
    if (!nil(t.averageValue)) x.averageValue = t.averageValue;
    out.object = x;
  }
  if (isObj(m.pods)) {
    const p = m.pods;
    const x: Obj = { metricName: p.metric?.name ?? '', targetAverageValue: quantity(p.target?.averageValue) };
    if (!nil(p.metric?.selector)) x.selector = p.metric.selector;
    out.pods = x;
  }
  if (isObj(m.resource)) out.resource = resourceSourceToV1(m.resource);
  if (isObj(m.containerResource)) {
    const c = m.containerResource;
    out.containerResource = { ...resourceSourceToV1(c), container: c.container ?? '' };
  }
  if (isObj(m.external)) {
    const e = m.external;
    const t = isObj(e.target) ? e.target : {};
    const x: Obj = { metricName: e.metric?.name ?? '' };
    if (!nil(e.metric?.selector)) x.metricSelector = e.metric.selector;
    if (!nil(t.value)) x.targetValue = t.value;
    if (!nil(t.averageValue)) x.targetAverageValue = t.averageValue;
    out.external = x;
  }
  return out;
}

function resourceSourceToV1(r: Obj): Obj {
  const t = isObj(r.target) ? r.target : {};
  const x: Obj = { name: r.name ?? '' };
  if (!nil(t.averageUtilization)) x.targetAverageUtilization = t.averageUtilization;
  if (!nil(t.averageValue)) x.targetAverageValue = t.averageValue;
  return x;
}

/** a v2 MetricStatus in autoscaling/v1's MetricStatus form (the current-metrics annotation) */
function metricStatusToV1(m: Obj): Obj {
  const out: Obj = { type: m.type ?? '' };
  if (isObj(m.object)) {
    const o = m.object;
    const c = isObj(o.current) ? o.current : {};
    const x: Obj = { target: ref(o.describedObject), metricName: o.metric?.name ?? '', currentValue: quantity(c.value) };
    if (!nil(o.metric?.selector)) x.selector = o.metric.selector;
    if (!nil(c.averageValue)) x.averageValue = c.averageValue;
    out.object = x;
  }
  if (isObj(m.pods)) {
    const p = m.pods;
    const x: Obj = { metricName: p.metric?.name ?? '', currentAverageValue: quantity(p.current?.averageValue) };
    if (!nil(p.metric?.selector)) x.selector = p.metric.selector;
    out.pods = x;
  }
  if (isObj(m.resource)) out.resource = resourceStatusToV1(m.resource);
  if (isObj(m.containerResource)) {
    const c = m.containerResource;
    out.containerResource = { ...resourceStatusToV1(c), container: c.container ?? '' };
  }
  if (isObj(m.external)) {
    const e = m.external;
    const c = isObj(e.current) ? e.current : {};
    const x: Obj = { metricName: e.metric?.name ?? '' };
    if (!nil(e.metric?.selector)) x.metricSelector = e.metric.selector;
    x.currentValue = quantity(c.value);
    if (!nil(c.averageValue)) x.currentAverageValue = c.averageValue;
    out.external = x;
  }
  return out;
}

function resourceStatusToV1(r: Obj): Obj {
  const c = isObj(r.current) ? r.current : {};
  const x: Obj = { name: r.name ?? '' };
  if (!nil(c.averageUtilization)) x.currentAverageUtilization = c.averageUtilization;
  x.currentAverageValue = quantity(c.averageValue);
  return x;
}

/** a v2 condition as Go writes autoscaling/v1's (lastTransitionTime is a struct: null when unset) */
function conditionToV1(c: Obj): Obj {
  const out: Obj = { type: c.type ?? '', status: c.status ?? '', lastTransitionTime: c.lastTransitionTime ?? null };
  if (c.reason) out.reason = c.reason;
  if (c.message) out.message = c.message;
  return out;
}

/** the v2 behavior as Kubernetes' internal type marshals it: Go field names, nil pointers as null */
function behaviorToInternalJSON(b: Obj): Obj {
  const rules = (r: unknown): Obj | null => {
    if (!isObj(r)) return null;
    return {
      StabilizationWindowSeconds: r.stabilizationWindowSeconds ?? null,
      SelectPolicy: r.selectPolicy ?? null,
      Policies: Array.isArray(r.policies) ? r.policies.map((p: any) => ({ Type: p?.type ?? '', Value: p?.value ?? 0, PeriodSeconds: p?.periodSeconds ?? 0 })) : null,
      Tolerance: r.tolerance ?? null,
    };
  };
  return { ScaleUp: rules(b.scaleUp), ScaleDown: rules(b.scaleDown) };
}

const isCPUResource = (m: any) => m?.type === 'Resource' && isObj(m.resource) && m.resource.name === 'cpu';

/**
 * The stored v2 object a v1 object was read from, kept on it out of sight (not enumerable: not
 * serialized, not cloned). Kubernetes prints a v1 Table from the stored object, whose metrics
 * keep their order; the v1 fields alone put the CPU target last.
 */
export const HPA_STORED_FORM = Symbol('hpa-stored-form');

/** the metrics and status of a v1 or v2 HorizontalPodAutoscaler in the v2 (stored) form, for printing */
export function hpaAsStored(hpa: Obj): Obj {
  const stored = (hpa as any)[HPA_STORED_FORM];
  if (stored) return stored;
  // (an object without apiVersion is taken for v1 by its CPU target)
  if (hpa.apiVersion === 'autoscaling/v1' || (hpa.apiVersion === undefined && hpa.spec?.targetCPUUtilizationPercentage != null)) {
    try {
      return hpaV1ToV2(hpa);
    } catch {
      return {};
    }
  }
  return hpa;
}

/** the stored autoscaling/v2 HorizontalPodAutoscaler as autoscaling/v1 shows it */
export function hpaV2ToV1(v2: Obj): Obj {
  const spec = isObj(v2.spec) ? v2.spec : {};
  const status = isObj(v2.status) ? v2.status : {};
  const meta: Obj = isObj(v2.metadata) ? { ...v2.metadata } : {};
  // only the annotations this conversion makes: ones the object carried are dropped
  dropRoundTrip(meta);

  const metrics = list(spec.metrics);
  const v1spec: Obj = { scaleTargetRef: ref(spec.scaleTargetRef), minReplicas: spec.minReplicas, maxReplicas: spec.maxReplicas ?? 0 };
  // the first cpu Resource metric decides (a non-utilization one means no v1 target)
  const cpu = metrics.find(isCPUResource);
  if (cpu && !nil(cpu.resource.target?.averageUtilization)) v1spec.targetCPUUtilizationPercentage = cpu.resource.target.averageUtilization;
  const others = metrics.filter((m) => !(isCPUResource(m) && !nil(m.resource.target?.averageUtilization)));

  const current = list(status.currentMetrics);
  const v1status: Obj = {
    observedGeneration: status.observedGeneration,
    lastScaleTime: status.lastScaleTime,
    currentReplicas: status.currentReplicas ?? 0,
    desiredReplicas: status.desiredReplicas ?? 0,
  };
  // (every cpu utilization status is looked at: the last one wins)
  for (const m of current) if (isCPUResource(m) && !nil(m.resource.current?.averageUtilization)) v1status.currentCPUUtilizationPercentage = m.resource.current.averageUtilization;

  const conditions = list(status.conditions);
  const add: Obj = {};
  if (others.length) add[HPA_METRICS_ANNOTATION] = JSON.stringify(others.map(metricSpecToV1));
  if (current.length) add[HPA_CURRENT_METRICS_ANNOTATION] = JSON.stringify(current.map(metricStatusToV1));
  if (isObj(spec.behavior)) add[HPA_BEHAVIOR_ANNOTATION] = JSON.stringify(behaviorToInternalJSON(spec.behavior));
  if (conditions.length) add[HPA_CONDITIONS_ANNOTATION] = JSON.stringify(conditions.map(conditionToV1));
  if (Object.keys(add).length) {
    const all: Obj = { ...(isObj(meta.annotations) ? meta.annotations : {}), ...add };
    // (a Go map: its keys in order)
    meta.annotations = Object.fromEntries(Object.keys(all).sort().map((k) => [k, all[k]]));
  }
  const out = normalize(V1_TYPE, { kind: 'HorizontalPodAutoscaler', apiVersion: 'autoscaling/v1', metadata: meta, spec: v1spec, status: v1status }).obj as Obj;
  Object.defineProperty(out, HPA_STORED_FORM, { value: v2, enumerable: false });
  Object.defineProperty(out, KEEP_DECODED, { value: true, enumerable: false });
  return out;
}

// ---- v1 to v2 (the stored form) --------------------------------------------------------------

/** an autoscaling/v1 MetricSpec (of the metrics annotation) in the v2 form */
function metricSpecToV2(m: Obj): Obj {
  const out: Obj = { type: m.type ?? '' };
  if (isObj(m.object)) {
    const o = m.object;
    const target: Obj = { type: nil(o.averageValue) ? 'Value' : 'AverageValue', value: quantity(o.targetValue) };
    if (!nil(o.averageValue)) target.averageValue = o.averageValue;
    out.object = { describedObject: ref(o.target), target, metric: identifier(o.metricName, o.selector) };
  }
  if (isObj(m.pods)) {
    const p = m.pods;
    out.pods = { metric: identifier(p.metricName, p.selector), target: { type: 'AverageValue', averageValue: quantity(p.targetAverageValue) } };
  }
  if (isObj(m.resource)) out.resource = resourceSourceToV2(m.resource);
  if (isObj(m.containerResource)) out.containerResource = { ...resourceSourceToV2(m.containerResource), container: m.containerResource.container ?? '' };
  if (isObj(m.external)) {
    const e = m.external;
    const target: Obj = { type: nil(e.targetValue) ? 'AverageValue' : 'Value' };
    if (!nil(e.targetValue)) target.value = e.targetValue;
    if (!nil(e.targetAverageValue)) target.averageValue = e.targetAverageValue;
    out.external = { metric: identifier(e.metricName, e.metricSelector), target };
  }
  return out;
}

function identifier(name: unknown, selector: unknown): Obj {
  const out: Obj = { name: name ?? '' };
  if (!nil(selector)) out.selector = selector;
  return out;
}

function resourceSourceToV2(r: Obj): Obj {
  const target: Obj = { type: nil(r.targetAverageUtilization) ? 'AverageValue' : 'Utilization' };
  if (!nil(r.targetAverageValue)) target.averageValue = r.targetAverageValue;
  if (!nil(r.targetAverageUtilization)) target.averageUtilization = r.targetAverageUtilization;
  return { name: r.name ?? '', target };
}

/** an autoscaling/v1 MetricStatus (of the current-metrics annotation) in the v2 form */
function metricStatusToV2(m: Obj): Obj {
  const out: Obj = { type: m.type ?? '' };
  if (isObj(m.object)) {
    const o = m.object;
    const current: Obj = { value: quantity(o.currentValue) };
    if (!nil(o.averageValue)) current.averageValue = o.averageValue;
    out.object = { metric: identifier(o.metricName, o.selector), current, describedObject: ref(o.target) };
  }
  if (isObj(m.pods)) {
    const p = m.pods;
    out.pods = { metric: identifier(p.metricName, p.selector), current: { averageValue: quantity(p.currentAverageValue) } };
  }
  if (isObj(m.resource)) out.resource = resourceStatusToV2(m.resource);
  if (isObj(m.containerResource)) out.containerResource = { ...resourceStatusToV2(m.containerResource), container: m.containerResource.container ?? '' };
  if (isObj(m.external)) {
    const e = m.external;
    const current: Obj = { value: quantity(e.currentValue) };
    if (!nil(e.currentAverageValue)) current.averageValue = e.currentAverageValue;
    out.external = { metric: identifier(e.metricName, e.metricSelector), current };
  }
  return out;
}

function resourceStatusToV2(r: Obj): Obj {
  const current: Obj = { averageValue: quantity(r.currentAverageValue) };
  if (!nil(r.currentAverageUtilization)) current.averageUtilization = r.currentAverageUtilization;
  return { name: r.name ?? '', current };
}

/** Go's encoding/json matches keys case-insensitively: the member of `o` named `name` in any case */
function goField(o: Obj, name: string): unknown {
  if (name in o) return o[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(o)) if (k.toLowerCase() === lower) return o[k];
  return undefined;
}

/** the behavior annotation (the internal type's JSON) as v2's behavior; undefined when it holds none */
function behaviorFromInternalJSON(text: string): Obj | undefined {
  let b: unknown;
  try {
    b = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObj(b)) return undefined;
  const rules = (r: unknown): Obj | undefined => {
    if (!isObj(r)) return undefined;
    const out: Obj = {};
    const w = goField(r, 'StabilizationWindowSeconds');
    if (!nil(w)) out.stabilizationWindowSeconds = w;
    const s = goField(r, 'SelectPolicy');
    if (!nil(s)) out.selectPolicy = s;
    const p = goField(r, 'Policies');
    if (Array.isArray(p)) out.policies = p.map((x) => (isObj(x) ? { type: goField(x, 'Type') ?? '', value: goField(x, 'Value') ?? 0, periodSeconds: goField(x, 'PeriodSeconds') ?? 0 } : { type: '', value: 0, periodSeconds: 0 }));
    const t = goField(r, 'Tolerance');
    if (!nil(t)) out.tolerance = t;
    return out;
  };
  const up = rules(goField(b, 'ScaleUp'));
  const down = rules(goField(b, 'ScaleDown'));
  if (!up && !down) return undefined;
  const out: Obj = {};
  if (up) out.scaleUp = up;
  if (down) out.scaleDown = down;
  return out;
}

/** the list an annotation holds; throws Go's json.Unmarshal error (into `goType`) when it holds none */
function parseList(text: unknown, goType: string): any[] | undefined {
  if (typeof text !== 'string') return undefined;
  const syntax = goJSONSyntaxError(Buffer.from(text));
  if (syntax !== null) throw new Error(syntax);
  const v = JSON.parse(text);
  if (v === null) return [];
  if (Array.isArray(v)) return v;
  const what = typeof v === 'object' ? 'object' : typeof v === 'boolean' ? 'bool' : typeof v;
  throw new Error(`json: cannot unmarshal ${what} into Go value of type ${goType}`);
}

/**
 * Go's error for a round-trip annotation of an autoscaling/v1 object that does not unmarshal
 * (kube-apiserver fails to decode such a request: 400), or undefined.
 */
export function hpaV1AnnotationError(v1: Obj): string | undefined {
  try {
    hpaV1ToV2(v1);
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/**
 * An autoscaling/v1 HorizontalPodAutoscaler in the stored autoscaling/v2 form. A metrics,
 * current-metrics or conditions annotation that does not unmarshal fails the conversion with Go's
 * error; a behavior annotation that does not is dropped, as Kubernetes drops it.
 */
export function hpaV1ToV2(v1: Obj): Obj {
  const spec = isObj(v1.spec) ? v1.spec : {};
  const status = isObj(v1.status) ? v1.status : {};
  const meta: Obj = isObj(v1.metadata) ? { ...v1.metadata } : {};
  const a: Obj = isObj(meta.annotations) ? meta.annotations : {};

  let metrics: any[] = [];
  if (!nil(spec.targetCPUUtilizationPercentage)) {
    metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage } } }];
  }
  const others = parseList(a[HPA_METRICS_ANNOTATION], '[]v1.MetricSpec');
  // (the other metrics first, then the CPU target)
  if (others) metrics = [...others.map((m) => metricSpecToV2(isObj(m) ? m : {})), ...metrics];
  let behavior: Obj | undefined;
  if (typeof a[HPA_BEHAVIOR_ANNOTATION] === 'string') behavior = behaviorFromInternalJSON(a[HPA_BEHAVIOR_ANNOTATION]);
  let currentMetrics: any[] | undefined;
  if (!nil(status.currentCPUUtilizationPercentage)) {
    currentMetrics = [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } } }];
  }
  const current = parseList(a[HPA_CURRENT_METRICS_ANNOTATION], '[]v1.MetricStatus');
  // (the annotation's metrics say more than the one CPU figure: they replace it)
  if (current) currentMetrics = current.map((m) => metricStatusToV2(isObj(m) ? m : {}));
  if (metrics.length === 0) {
    metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } }];
  }
  let conditions: any[] | undefined;
  const conds = parseList(a[HPA_CONDITIONS_ANNOTATION], '[]v1.HorizontalPodAutoscalerCondition');
  if (conds) {
    conditions = conds.map((c) => {
      const x: Obj = isObj(c) ? c : {};
      const out: Obj = { type: x.type ?? '', status: x.status ?? '' };
      if (!nil(x.lastTransitionTime)) out.lastTransitionTime = x.lastTransitionTime;
      if (x.reason) out.reason = x.reason;
      if (x.message) out.message = x.message;
      return out;
    });
  }
  dropRoundTrip(meta);

  const v2spec: Obj = { scaleTargetRef: ref(spec.scaleTargetRef), minReplicas: spec.minReplicas, maxReplicas: spec.maxReplicas, metrics };
  if (behavior) v2spec.behavior = behavior;
  const v2status: Obj = {
    observedGeneration: status.observedGeneration,
    lastScaleTime: status.lastScaleTime,
    currentReplicas: status.currentReplicas,
    desiredReplicas: status.desiredReplicas,
    currentMetrics,
    conditions,
  };
  return normalize(V2_TYPE, { kind: 'HorizontalPodAutoscaler', apiVersion: 'autoscaling/v2', metadata: meta, spec: v2spec, status: v2status }).obj as Obj;
}
