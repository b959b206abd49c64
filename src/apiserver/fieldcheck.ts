// Unknown-field detection against the kind's schema (fieldValidation=Warn|Strict): every JSON
// member that the type does not declare is reported with its path, as Kubernetes' strict
// decoder names it (`spec.containers[0].foo`, `metadata.labels` entries are free-form).
import { getType, jsonFields } from '../schema/types.js';
import type { TypeRef } from '../schema/model.js';

export function unknownFields(typeName: string, obj: unknown): string[] {
  const out: string[] = [];
  walkObject(typeName, obj, '', out);
  return out;
}

function walkObject(typeName: string, v: unknown, path: string, out: string[]): void {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return;
  const t = getType(typeName);
  if (!t) return;
  const fields = jsonFields(t);
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
    const p = path ? `${path}.${k}` : k;
    const f = fields.get(k);
    if (!f) {
      out.push(p);
      continue;
    }
    walkRef(f.type, val, p, out);
  }
}

function walkRef(ref: TypeRef, v: unknown, path: string, out: string[]): void {
  if (v === null || v === undefined) return;
  switch (ref.kind) {
    case 'object':
      walkObject(ref.name, v, path, out);
      return;
    case 'array':
      if (Array.isArray(v)) v.forEach((item, i) => walkRef(ref.items, item, `${path}[${i}]`, out));
      return;
    case 'map':
      if (typeof v === 'object' && !Array.isArray(v) && ref.values.kind !== 'scalar') {
        for (const [k, item] of Object.entries(v as Record<string, unknown>)) walkRef(ref.values, item, `${path}[${k}]`, out);
      }
      return;
    default:
      return;
  }
}
