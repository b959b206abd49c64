// metav1.Condition lists as apimachinery's meta.SetStatusCondition keeps them.
import { rfc3339 } from './time.js';

export interface StatusCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration?: number;
}

/**
 * A copy of `conditions` with `c` set: a new type is appended with the transition time now; an
 * existing one takes the new status, reason, message and observedGeneration, and its transition
 * time moves only when the status changes (or it had none).
 */
export function setStatusCondition(conditions: unknown, c: StatusCondition, nowMs: number = Date.now()): any[] {
  const list: any[] = Array.isArray(conditions) ? conditions.map((x) => ({ ...x })) : [];
  const i = list.findIndex((x) => x?.type === c.type);
  if (i < 0) {
    list.push({ ...c, lastTransitionTime: rfc3339(nowMs) });
    return list;
  }
  const old = list[i];
  list[i] = { ...old, ...c, lastTransitionTime: old.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : rfc3339(nowMs) };
  return list;
}
