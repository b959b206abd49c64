// ObjectMeta's members in the order Kubernetes writes them (its Go struct's field order), so
// that an object's JSON reads as a Kubernetes server's does (a client that prints the body as it
// came, curl or a client library's raw response, sees name, namespace, uid, resourceVersion,
// creationTimestamp... rather than the order the fields were set in).

export const OBJECT_META_ORDER = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
];

/** `o`'s members, `keys` first in their order, then the others in theirs */
export function ordered(o: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (k in o) out[k] = o[k];
  for (const k of Object.keys(o)) if (!(k in out)) out[k] = o[k];
  return out;
}

/**
 * A copy of metadata `m` in ObjectMeta's order, with a resourceVersion member even when it has
 * none (undefined, which JSON leaves out): the store sets the resourceVersion of an object after
 * its other members, and a member that exists keeps its place when set.
 */
export function inObjectMetaOrder(m: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of OBJECT_META_ORDER) if (k in m || k === 'resourceVersion') out[k] = m[k];
  for (const k in m) if (!(k in out)) out[k] = m[k];
  return out;
}

/**
 * Set (non-enumerable, true) on an object that carries more than its JSON: the watch cache keeps
 * such an object decoded rather than freezing it to its JSON (storage/cacher.ts). autoscaling/v1's
 * view of a stored v2 HorizontalPodAutoscaler keeps the stored form beside it, for its Table.
 */
export const KEEP_DECODED = Symbol('keep decoded');
