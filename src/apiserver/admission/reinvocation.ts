// Reinvocation: when a mutating webhook changes the object, the whole mutating chain runs a second
// time (Kubernetes' reinvoker): the built-in plugins again (they are idempotent), and the webhooks
// whose reinvocationPolicy is IfNeeded and that ran before the change. The state of one request's
// admission is kept here, keyed by its attributes object.
import type { AdmissionAttributes } from './types.js';

export interface WebhookReinvocation {
  /** the object after the last webhook round (to see whether built-in plugins changed it since) */
  lastOutput?: string;
  /** IfNeeded webhooks called since the last change */
  previouslyInvoked: Set<string>;
  /** the webhooks to call again in the second round */
  reinvoke: Set<string>;
}

export interface ReinvocationContext {
  isReinvoke: boolean;
  shouldReinvoke: boolean;
  webhooks: WebhookReinvocation;
}

const contexts = new WeakMap<AdmissionAttributes, ReinvocationContext>();

/** the request's reinvocation state if a plugin has made one (undefined: no webhook ran) */
export function existingReinvocationContext(a: AdmissionAttributes): ReinvocationContext | undefined {
  return contexts.get(a);
}

export function reinvocationContext(a: AdmissionAttributes): ReinvocationContext {
  let c = contexts.get(a);
  if (!c) {
    c = { isReinvoke: false, shouldReinvoke: false, webhooks: { previouslyInvoked: new Set(), reinvoke: new Set() } };
    contexts.set(a, c);
  }
  return c;
}

/** a change was made: every IfNeeded webhook called before it must see the new object */
export function requireReinvokingPreviouslyInvoked(w: WebhookReinvocation): void {
  for (const uid of w.previouslyInvoked) w.reinvoke.add(uid);
  w.previouslyInvoked.clear();
}
