// Kind-specific validation of four kinds, with kube-apiserver 1.33's rules, paths and wording:
// core/v1 PodTemplate (ValidatePodTemplate[Update]), node.k8s.io/v1 RuntimeClass
// (ValidateRuntimeClass[Update]: handler, overhead, scheduling), and networking.k8s.io/v1
// IPAddress and ServiceCIDR (ValidateIPAddress[Update], ValidateServiceCIDR[Update|StatusUpdate]),
// including apimachinery's strict IP and CIDR checks (IsValidIP, IsValidCIDR) with Go's printing
// of addresses. ObjectMeta is the store's; an IPAddress's name rule is ipAddressNameErrors.
import { child, duplicate, goPtr, goQuote, goStrings, goStruct, GoRepr, idx, invalid, required, type Errs } from './errs.js';
import { arr, FIELD_IMMUTABLE, isDNS1123Label, isDNS1123Subdomain, isSet, isValidPathSegmentName, obj, str, validateLabels } from './util.js';
import { validatePodTemplateSpec, validateResourceRequirements, validateTolerations } from './pod.js';
import { cidrFamily, isValidCIDR, isValidIP } from './ip.js';

// ---- core/v1 PodTemplate ----

/** ValidatePodTemplate: the template is a pod template spec (not a pod: ResourceIsPod is false) */
export function validatePodTemplate(pt: any): Errs {
  return validatePodTemplateSpec(obj(pt?.template), 'template');
}

/** ValidatePodTemplateUpdate: nothing is immutable; the new template is validated again */
export function validatePodTemplateUpdate(pt: any, old: any): Errs {
  void old;
  return validatePodTemplateSpec(obj(pt?.template), 'template');
}

// ---- node.k8s.io/v1 RuntimeClass ----

/** ValidateRuntimeClass: handler, overhead.podFixed, scheduling */
export function validateRuntimeClass(rc: any): Errs {
  const handler = str(rc?.handler);
  const errs: Errs = isDNS1123Label(handler).map((m) => invalid('handler', handler, m));
  // (overhead.podFixed is checked as a container's limits are, under overhead.limits[...], as Kubernetes reports it)
  if (rc?.overhead != null) errs.push(...validateResourceRequirements({ limits: obj(rc.overhead).podFixed }, new Set(), 'overhead'));
  if (rc?.scheduling != null) errs.push(...validateScheduling(obj(rc.scheduling), 'scheduling'));
  return errs;
}

/** ValidateRuntimeClassUpdate: the handler is immutable (the strategy validates the new object first) */
export function validateRuntimeClassUpdate(rc: any, old: any): Errs {
  const handler = str(rc?.handler);
  return handler === str(old?.handler) ? [] : [invalid('handler', handler, FIELD_IMMUTABLE)];
}

function validateScheduling(s: any, path: string): Errs {
  const errs: Errs = [];
  if (s.nodeSelector != null) errs.push(...validateLabels(s.nodeSelector, child(path, 'nodeSelector')));
  errs.push(...validateRuntimeClassTolerations(arr(s.tolerations), child(path, 'tolerations')));
  return errs;
}

/**
 * node validation's validateTolerations: core ValidateTolerations, then no two tolerations may
 * share key, operator, value and effect. As in Kubernetes 1.33, the core checks are given the
 * path `<path>.tolerations`, so their errors read `scheduling.tolerations.tolerations[i]...`,
 * while a duplicate is reported at `scheduling.tolerations[i]`.
 */
function validateRuntimeClassTolerations(tols: any[], path: string): Errs {
  const errs = validateTolerations(tols, child(path, 'tolerations'));
  const seen = new Set<string>();
  tols.forEach((t0, i) => {
    const t = obj(t0);
    const k = JSON.stringify([str(t.key), str(t.operator), str(t.value), str(t.effect)]);
    if (seen.has(k)) errs.push(duplicate(idx(path, i), goToleration(t)));
    else seen.add(k);
  });
  return errs;
}

/** core.Toleration as %#v prints it */
function goToleration(t: any): GoRepr {
  return goStruct('core.Toleration', [
    ['Key', goQuote(str(t.key))],
    ['Operator', goQuote(str(t.operator))],
    ['Value', goQuote(str(t.value))],
    ['Effect', goQuote(str(t.effect))],
    ['TolerationSeconds', goPtr('int64', isSet(t.tolerationSeconds))],
  ]);
}

// ---- networking.k8s.io/v1 IPAddress ----

/**
 * ValidateIPAddressName: an IPAddress's name is an IP address in canonical form (validation.IsValidIP);
 * the messages Kubernetes reports at metadata.name (and, for a prefix, metadata.generateName).
 */
export function ipAddressNameErrors(name: string): string[] {
  return isValidIP(name);
}

/** ValidateIPAddress without ObjectMeta (the name's rule is ipAddressNameErrors): spec.parentRef */
export function validateIPAddress(ip: any): Errs {
  return validateParentReference(ip?.spec?.parentRef, 'spec');
}

function validateParentReference(ref: any, path: string): Errs {
  if (ref == null) return [required(child(path, 'parentRef'))];
  const p = child(path, 'parentRef');
  const r = obj(ref);
  const errs: Errs = [];
  const group = str(r.group);
  if (group) for (const m of isDNS1123Subdomain(group)) errs.push(invalid(child(p, 'group'), group, m));
  for (const f of ['resource', 'name']) {
    const v = str(r[f]);
    if (!v) errs.push(required(child(p, f)));
    else for (const m of isValidPathSegmentName(v)) errs.push(invalid(child(p, f), v, m));
  }
  const ns = str(r.namespace);
  if (ns) for (const m of isValidPathSegmentName(ns)) errs.push(invalid(child(p, 'namespace'), ns, m));
  return errs;
}

/** networking.ParentReference as %#v prints it */
function goParentReference(ref: any): GoRepr | null {
  if (ref == null) return null;
  const r = obj(ref);
  return goStruct('networking.ParentReference', [
    ['Group', goQuote(str(r.group))],
    ['Resource', goQuote(str(r.resource))],
    ['Namespace', goQuote(str(r.namespace))],
    ['Name', goQuote(str(r.name))],
  ]);
}

/** ValidateIPAddressUpdate: spec.parentRef is immutable (the strategy validates the new object first) */
export function validateIPAddressUpdate(ip: any, old: any): Errs {
  const n = ip?.spec?.parentRef;
  const o = old?.spec?.parentRef;
  const same = n == null || o == null ? n == null && o == null : ['group', 'resource', 'namespace', 'name'].every((f) => str(n[f]) === str(o[f]));
  return same ? [] : [invalid('spec.parentRef', goParentReference(n), FIELD_IMMUTABLE)];
}

// ---- networking.k8s.io/v1 ServiceCIDR ----

const CIDRS = 'spec.cidrs';

/** ValidateServiceCIDR without ObjectMeta (the name is a DNS subdomain, the store's default rule) */
export function validateServiceCIDR(sc: any): Errs {
  return validateServiceCIDRSpec(sc?.spec);
}

/** validateServiceCIDRSpec: one or two CIDRs, each valid and canonical, of different families */
function validateServiceCIDRSpec(spec: any): Errs {
  const raw = spec?.cidrs;
  const cidrs = arr<string>(raw).map(str);
  if (cidrs.length === 0) return [required(CIDRS, 'at least one CIDR required')];
  if (cidrs.length > 2) return [invalid(CIDRS, goStruct('networking.ServiceCIDRSpec', [['CIDRs', goStrings(cidrs).repr]]), 'may only hold up to 2 values')];
  const errs: Errs = [];
  cidrs.forEach((c, i) => {
    for (const m of isValidCIDR(c)) errs.push(invalid(idx(CIDRS, i), c, m));
  });
  if (cidrs.length === 2) {
    const f0 = cidrFamily(cidrs[0]!);
    if (f0 !== '' && f0 === cidrFamily(cidrs[1]!)) errs.push(invalid(CIDRS, goStrings(cidrs), 'may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64'));
  }
  return errs;
}

/**
 * ValidateServiceCIDRUpdate: the CIDRs may not change, except that a single-stack ServiceCIDR
 * may gain a second CIDR (its first unchanged), which is then validated as on create. (In 1.33
 * the strategy's update validation is this alone, not ValidateServiceCIDR as well.)
 */
export function validateServiceCIDRUpdate(sc: any, old: any): Errs {
  const errs: Errs = [];
  const raw = sc?.spec?.cidrs;
  const now = arr<string>(raw).map(str);
  const was = arr<string>(old?.spec?.cidrs).map(str);
  if (was.length === now.length) {
    was.forEach((c, i) => {
      if (c !== now[i]) errs.push(invalid(idx(CIDRS, i), now[i]!, FIELD_IMMUTABLE));
    });
  } else if (was.length === 1 && now.length === 2) {
    if (now[0] !== was[0]) errs.push(invalid(idx(CIDRS, 0), now[0]!, FIELD_IMMUTABLE));
    errs.push(...validateServiceCIDRSpec(sc?.spec));
  } else errs.push(invalid(CIDRS, goStrings(Array.isArray(raw) ? now : null), FIELD_IMMUTABLE));
  return errs;
}

/** ValidateServiceCIDRStatusUpdate: ObjectMeta only, which the store checks; the status is not validated */
export function validateServiceCIDRStatusUpdate(sc: any, old: any): Errs {
  void sc;
  void old;
  return [];
}
