// The error of an apply that would change fields other managers own.
import { StatusError, type StatusCause } from '../../machinery/errors.js';
import type { FieldSet } from './fieldset.js';
import { parseManagerId } from './managed.js';
import { pathString } from './pathelement.js';
import { goQuote, goStringCompare } from '../../machinery/gostrings.js';

export interface FieldConflict {
  /** the other manager's name */
  manager: string;
  operation: 'Apply' | 'Update';
  /** set for Update managers */
  apiVersion?: string;
  subresource?: string;
  /** the field, as Kubernetes prints it: `.spec.replicas`, `.spec.containers[name="nginx"].image` */
  field: string;
}

/**
 * How a conflict names a manager (printManager): `"kubectl"`, `"kube-controller-manager" with
 * subresource "status" using apps/v1`: the apiVersion is named for Update managers only.
 */
export function printManager(id: string): string {
  let who;
  try {
    who = parseManagerId(id);
  } catch {
    return goQuote(id);
  }
  let s = goQuote(who.manager);
  if (who.subresource) s += ` with subresource ${goQuote(who.subresource)}`;
  if (who.operation === 'Update') s += ` using ${who.apiVersion ?? ''}`;
  return s;
}

/**
 * 409 Conflict, reason Conflict, with one StatusCause (reason FieldManagerConflict) per field,
 * worded as Kubernetes words it:
 *   Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.a
 *   Apply failed with 2 conflicts: conflicts with "a" using v1:\n- .data.x\n- .data.y
 */
export class ApplyConflictError extends StatusError {
  readonly conflicts: FieldConflict[];

  /** conflicts: the fields by manager identifier */
  constructor(byManager: ReadonlyMap<string, FieldSet>) {
    const ids = [...byManager.keys()].sort(goStringCompare);
    const list: { id: string; field: string }[] = [];
    for (const id of ids) byManager.get(id)!.iterate((p) => list.push({ id, field: pathString(p) }));
    let message: string;
    if (list.length === 1) {
      message = `Apply failed with 1 conflict: conflict with ${printManager(list[0]!.id)}: ${list[0]!.field}`;
    } else {
      const lines: string[] = [];
      for (const id of ids) {
        lines.push(`conflicts with ${printManager(id)}:`);
        for (const c of list) if (c.id === id) lines.push(`- ${c.field}`);
      }
      message = `Apply failed with ${list.length} conflicts: ${lines.join('\n')}`;
    }
    const causes: StatusCause[] = list.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.id)}`, field: c.field }));
    super(409, 'Conflict', message, { causes });
    this.name = 'ApplyConflictError';
    this.conflicts = list.map((c) => {
      const who = parseManagerId(c.id);
      const out: FieldConflict = { manager: who.manager, operation: who.operation, field: c.field };
      if (who.apiVersion) out.apiVersion = who.apiVersion;
      if (who.subresource) out.subresource = who.subresource;
      return out;
    });
  }
}
