// LimitRanger: the namespace's LimitRanges give containers their default requests and limits
// (mutating, pod create) and bound what pods and claims may ask for (validating: min, max and
// maxLimitRequestRatio per Container and per Pod, min and max storage per PersistentVolumeClaim).
// Pod updates are not checked (a pod's containers cannot change), nor subresources, nor objects
// already marked for deletion.
import { applyLimitRangeDefaults } from '../../schema/defaults/admission.js';
import { quantityMilliValue, quantityString, quantityValue, type Quantity } from '../../schema/validation/quantity.js';
import type { AdmissionAttributes, AdmissionPlugin, ClusterReader } from './types.js';
import { aggregateMessages, asArray, forbidden, isObject, resourceList, type ResourceList } from './util.js';
import { podTotals } from '../../schema/podresources.js';

/** resource.MaxMilliValue: the largest value whose thousandths fit in an int64 */
const MAX_MILLI_VALUE = (2n ** 63n - 1n) / 1000n;

function supports(a: AdmissionAttributes): boolean {
  if (a.subresource !== '') return false;
  if (a.kind.group !== '') return false;
  if (a.kind.kind === 'Pod') return a.operation === 'CREATE';
  return a.kind.kind === 'PersistentVolumeClaim' && (a.operation === 'CREATE' || a.operation === 'UPDATE');
}

/** requestLimitEnforcedValues: thousandths when nothing overflows, else whole values */
function values(req: Quantity | undefined, lim: Quantity | undefined, enforced: Quantity): [bigint, bigint, bigint] {
  const r = req ? quantityValue(req) : 0n;
  const l = lim ? quantityValue(lim) : 0n;
  const e = quantityValue(enforced);
  if (r <= MAX_MILLI_VALUE && l <= MAX_MILLI_VALUE && e <= MAX_MILLI_VALUE) {
    return [req ? quantityMilliValue(req) : 0n, lim ? quantityMilliValue(lim) : 0n, quantityMilliValue(enforced)];
  }
  return [r, l, e];
}

const str = quantityString;

function minConstraint(type: string, name: string, enforced: Quantity, request: ResourceList, limit: ResourceList): string | undefined {
  const req = request.get(name);
  const lim = limit.get(name);
  const [r, l, e] = values(req, lim, enforced);
  if (!req) return `minimum ${name} usage per ${type} is ${str(enforced)}.  No request is specified`;
  if (r < e) return `minimum ${name} usage per ${type} is ${str(enforced)}, but request is ${str(req)}`;
  if (lim && l < e) return `minimum ${name} usage per ${type} is ${str(enforced)}, but limit is ${str(lim)}`;
  return undefined;
}

function maxRequestConstraint(type: string, name: string, enforced: Quantity, request: ResourceList): string | undefined {
  const req = request.get(name);
  const [r, , e] = values(req, undefined, enforced);
  if (!req) return `maximum ${name} usage per ${type} is ${str(enforced)}.  No request is specified`;
  if (r > e) return `maximum ${name} usage per ${type} is ${str(enforced)}, but request is ${str(req)}`;
  return undefined;
}

function maxConstraint(type: string, name: string, enforced: Quantity, request: ResourceList, limit: ResourceList): string | undefined {
  const req = request.get(name);
  const lim = limit.get(name);
  const [r, l, e] = values(req, lim, enforced);
  if (!lim) return `maximum ${name} usage per ${type} is ${str(enforced)}.  No limit is specified`;
  if (l > e) return `maximum ${name} usage per ${type} is ${str(enforced)}, but limit is ${str(lim)}`;
  if (req && r > e) return `maximum ${name} usage per ${type} is ${str(enforced)}, but request is ${str(req)}`;
  return undefined;
}

function ratioConstraint(type: string, name: string, enforced: Quantity, request: ResourceList, limit: ResourceList): string | undefined {
  const req = request.get(name);
  const lim = limit.get(name);
  const [r, l] = values(req, lim, enforced);
  if (!req || r === 0n) return `${name} max limit to request ratio per ${type} is ${str(enforced)}, but no request is specified or request is 0`;
  if (!lim || l === 0n) return `${name} max limit to request ratio per ${type} is ${str(enforced)}, but no limit is specified or limit is 0`;
  const observed = Number(l) / Number(r);
  let ratio = observed;
  let max = Number(quantityValue(enforced));
  if (quantityValue(enforced) <= MAX_MILLI_VALUE) {
    ratio = observed * 1000;
    max = Number(quantityMilliValue(enforced));
  }
  if (ratio > max) return `${name} max limit to request ratio per ${type} is ${str(enforced)}, but provided ratio is ${observed.toFixed(6)}`;
  return undefined;
}

function sortedEntries(m: unknown): [string, Quantity][] {
  const list = resourceList(m);
  return [...list.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function checkAll(type: string, item: any, request: ResourceList, limit: ResourceList, errs: string[]): void {
  for (const [k, v] of sortedEntries(item.min)) {
    const m = minConstraint(type, k, v, request, limit);
    if (m) errs.push(m);
  }
  for (const [k, v] of sortedEntries(item.max)) {
    const m = maxConstraint(type, k, v, request, limit);
    if (m) errs.push(m);
  }
  for (const [k, v] of sortedEntries(item.maxLimitRequestRatio)) {
    const m = ratioConstraint(type, k, v, request, limit);
    if (m) errs.push(m);
  }
}

/** the LimitRange's checks of a pod; an empty list when it passes */
export function validatePodLimits(limitRange: any, pod: any): string[] {
  const errs: string[] = [];
  for (const item of asArray(limitRange?.spec?.limits)) {
    if (!isObject(item)) continue;
    if (item.type === 'Container') {
      for (const list of [pod?.spec?.containers, pod?.spec?.initContainers]) {
        for (const c of asArray(list)) {
          checkAll('Container', item, resourceList(c?.resources?.requests), resourceList(c?.resources?.limits), errs);
        }
      }
    }
    if (item.type === 'Pod') checkAll('Pod', item, podTotals(pod, 'requests'), podTotals(pod, 'limits'), errs);
  }
  return errs;
}

/** the LimitRange's checks of a claim's storage requests */
export function validateClaimLimits(limitRange: any, pvc: any): string[] {
  const errs: string[] = [];
  const requests = resourceList(pvc?.spec?.resources?.requests);
  for (const item of asArray(limitRange?.spec?.limits)) {
    if (!isObject(item) || item.type !== 'PersistentVolumeClaim') continue;
    for (const [k, v] of sortedEntries(item.min)) {
      const m = minConstraint('PersistentVolumeClaim', k, v, requests, new Map());
      if (m) errs.push(m);
    }
    for (const [k, v] of sortedEntries(item.max)) {
      const m = maxRequestConstraint('PersistentVolumeClaim', k, v, requests);
      if (m) errs.push(m);
    }
  }
  return errs;
}

export function limitRanger(reader: ClusterReader): AdmissionPlugin {
  const ranges = (a: AdmissionAttributes) => reader.list('', 'limitranges', a.namespace);
  const skip = (a: AdmissionAttributes) => !supports(a) || !isObject(a.object) || !!a.oldObject?.metadata?.deletionTimestamp;
  return {
    name: 'LimitRanger',
    mutate(a) {
      if (skip(a) || a.kind.kind !== 'Pod') return;
      applyLimitRangeDefaults(a.object, ranges(a));
    },
    validate(a) {
      if (skip(a)) return;
      for (const lr of ranges(a)) {
        const errs = a.kind.kind === 'Pod' ? validatePodLimits(lr, a.object) : validateClaimLimits(lr, a.object);
        if (errs.length) throw forbidden(a, aggregateMessages(errs));
      }
    },
  };
}
