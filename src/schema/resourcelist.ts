// Resource lists (Kubernetes' ResourceList: resource name -> quantity) and their arithmetic as the
// quota package has it: what the ResourceQuota and LimitRanger admission plugins and the resource
// quota controller count with.
import { parseQuantity, quantityString, type Quantity } from './validation/quantity.js';

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** a ResourceList: resource name -> quantity */
export type ResourceList = Map<string, Quantity>;

const ZERO: Quantity = { nano: 0n, format: 'DecimalSI' };

export function quantity(v: unknown): Quantity | undefined {
  return parseQuantity(v) ?? undefined;
}

export function resourceList(m: unknown): ResourceList {
  const out: ResourceList = new Map();
  if (!isObject(m)) return out;
  for (const [k, v] of Object.entries(m)) {
    const q = parseQuantity(v);
    if (q) out.set(k, q);
  }
  return out;
}

/** Quantity.Add: the sum keeps the first operand's format unless it is zero */
export function addQ(a: Quantity, b: Quantity): Quantity {
  return { nano: a.nano + b.nano, format: a.nano === 0n ? b.format : a.format };
}

export function subQ(a: Quantity, b: Quantity): Quantity {
  return { nano: a.nano - b.nano, format: a.nano === 0n ? b.format : a.format };
}

/** quota.Add: every key of both, summed */
export function addLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map(a);
  for (const [k, v] of b) out.set(k, addQ(out.get(k) ?? ZERO, v));
  return out;
}

/** quota.SubtractWithNonNegativeResult: a - b for the keys of a, never below zero */
export function subtractNonNegative(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of a) {
    const r = b.has(k) ? subQ(v, b.get(k)!) : v;
    out.set(k, r.nano < 0n ? { nano: 0n, format: r.format } : r);
  }
  return out;
}

/** the keys of `list` that are in `names` */
export function mask(list: ResourceList, names: Iterable<string>): ResourceList {
  const keep = new Set(names);
  const out: ResourceList = new Map();
  for (const [k, v] of list) if (keep.has(k)) out.set(k, v);
  return out;
}

export function removeZeros(list: ResourceList): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of list) if (v.nano !== 0n) out.set(k, v);
  return out;
}

/** `cpu=1,memory=1Gi`: sorted by name, canonical quantities (the quota admission's prettyPrint) */
export function prettyPrint(list: ResourceList): string {
  return [...list.keys()]
    .sort()
    .map((k) => `${k}=${quantityString(list.get(k)!)}`)
    .join(',');
}

export function listToJSON(list: ResourceList): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of [...list.keys()].sort()) out[k] = quantityString(list.get(k)!);
  return out;
}

export { ZERO as ZERO_QUANTITY, quantityString };
