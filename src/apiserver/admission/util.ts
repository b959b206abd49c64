// Small pieces every admission plugin needs: Kubernetes' admission errors (the resource and name
// a rejection names), resource lists of quantities, and the plain-object accessors the plugins use
// on JSON objects.
import { errors, StatusError, type GroupThing } from '../../machinery/errors.js';
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

// ---- resource lists (src/schema/resourcelist.ts, shared with the quota controller) ----

export {
  type ResourceList,
  quantity,
  resourceList,
  addQ,
  subQ,
  addLists,
  subtractNonNegative,
  mask,
  removeZeros,
  prettyPrint,
  listToJSON,
  ZERO_QUANTITY,
  quantityString,
} from '../../schema/resourcelist.js';
