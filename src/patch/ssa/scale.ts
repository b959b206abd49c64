// The managed fields of the scale subresource, as Kubernetes' ScaleHandler maps them: a Scale's
// managers are the parent's managers of spec.replicas (the Scale's own spec.replicas, in
// autoscaling/v1), so that an apply to /scale conflicts with the parent's real owner of replicas;
// after the write, the Scale's managers are mapped back onto the parent: a manager that lost
// replicas loses it in the parent's entry (which goes when nothing is left), one that took it gets
// an entry of the parent's version owning spec.replicas (its subresource is `scale`).
import { decodeManagedFields, emptyManaged, encodeManagedFields, type ManagedFieldsEntry } from './managed.js';
import { FieldSet } from './fieldset.js';
import { fieldPE } from './pathelement.js';

const REPLICAS = [fieldPE('spec'), fieldPE('replicas')];
const SCALE_VERSION = 'autoscaling/v1';

/** ScaleHandler.ToSubresource: the Scale's managed fields from the parent's */
export function scaleManagedFields(parentEntries: unknown): ManagedFieldsEntry[] | undefined {
  const parent = decodeManagedFields(parentEntries);
  const out = emptyManaged();
  for (const [id, vs] of parent.fields) {
    if (!vs.set.has(REPLICAS)) continue;
    out.fields.set(id, { set: FieldSet.of(REPLICAS), apiVersion: SCALE_VERSION, applied: vs.applied });
    out.times.set(id, parent.times.get(id));
  }
  return encodeManagedFields(out);
}

/** ScaleHandler.ToParent: the parent's managed fields after a write of the Scale that left `scaleEntries` */
export function parentManagedFields(parentEntries: unknown, scaleEntries: unknown, parentAPIVersion: string): ManagedFieldsEntry[] | undefined {
  const parent = decodeManagedFields(parentEntries);
  const scale = decodeManagedFields(scaleEntries);
  const out = emptyManaged();
  const fromScale = new Map(scale.fields);
  for (const [id, vs] of parent.fields) {
    if (!vs.set.has(REPLICAS)) {
      out.fields.set(id, vs);
      out.times.set(id, parent.times.get(id));
      continue;
    }
    if (fromScale.has(id)) {
      // replicas still theirs: the entry stays as it is
      out.fields.set(id, vs);
      out.times.set(id, parent.times.get(id));
      fromScale.delete(id);
      continue;
    }
    // replicas taken from them through the Scale
    const rest = vs.set.difference(FieldSet.of(REPLICAS));
    if (!rest.empty()) {
      out.fields.set(id, { ...vs, set: rest });
      out.times.set(id, parent.times.get(id));
    }
  }
  for (const [id, vs] of fromScale) {
    if (!vs.set.has(REPLICAS)) continue;
    out.fields.set(id, { set: FieldSet.of(REPLICAS), apiVersion: parentAPIVersion, applied: vs.applied });
    out.times.set(id, scale.times.get(id));
  }
  return encodeManagedFields(out);
}
