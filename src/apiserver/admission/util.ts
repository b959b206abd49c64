// Small pieces every admission plugin needs: Kubernetes' admission errors (the resource and name
// a rejection names), resource lists of quantities, and the plain-object accessors the plugins use
// on JSON objects.
import { errors, StatusError, type GroupThing } from '../../machinery/errors.js';
import { parseQuantity, quantityString, type Quantity } from '../../schema/validation/quantity.js';
import type { AdmissionAttributes } from './types.js';

export function isObject(v: unknown): v is Record<string, any> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function asArray<T = any>(v: unknown): T[] {
  return Array.isArray(v) ? (v as T[]) : [];
}

/** the group-qualified resource of a request (`pods`, `deployments.apps`) */
export function groupResource(a: AdmissionAttributes): GroupThing {
  return { group: a.resource.group, name: a.resource.resource };
}

/**
 * The name an admission error names: the request's name, else the object's name or generateName
 * (a create before name generation), else "Unknown" (Kubernetes' extractResourceName).
 */
export function resourceName(a: AdmissionAttributes): string {
  if (a.name) return a.name;
  const m = a.object?.metadata;
  if (isObject(m)) {
    if (typeof m.name === 'string' && m.name) return m.name;
    if (typeof m.generateName === 'string' && m.generateName) return m.generateName;
  }
  return 'Unknown';
}

/** admission.NewForbidden: `<resource> "<name>" is forbidden: <why>` (403); a Forbidden error is passed through */
export function forbidden(a: AdmissionAttributes, why: string | StatusError): StatusError {
  if (why instanceof StatusError) {
    if (why.code === 403 && why.reason === 'Forbidden') return why;
    why = why.message;
  }
  return errors.forbidden(groupResource(a), resourceName(a), why);
}

/** admission.NewNotFound: `<resource> "<name>" not found` (404) */
export function notFound(a: AdmissionAttributes): StatusError {
  return errors.notFound(groupResource(a), resourceName(a));
}

/** Kubernetes' utilerrors.NewAggregate(...).Error(): one message alone, several as `[a, b]` */
export function aggregateMessages(msgs: string[]): string {
  if (msgs.length === 1) return msgs[0]!;
  return `[${msgs.join(', ')}]`;
}

/** `system:node:<name>` in the group system:nodes, or undefined (Kubernetes' default node identifier) */
export function nodeIdentity(user: { name: string; groups: string[] }): { node: string } | undefined {
  if (!user.name.startsWith('system:node:')) return undefined;
  if (!user.groups.includes('system:nodes')) return undefined;
  return { node: user.name.slice('system:node:'.length) };
}

export function labelsOf(obj: any): Record<string, string> {
  const l = obj?.metadata?.labels;
  return isObject(l) ? (l as Record<string, string>) : {};
}

export function annotationsOf(obj: any): Record<string, string> {
  const l = obj?.metadata?.annotations;
  return isObject(l) ? (l as Record<string, string>) : {};
}

// ---- resource lists ----

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
