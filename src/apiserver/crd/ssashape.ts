// The shape server-side apply gives a custom resource, from its structural schema, as
// structured-merge-diff's schema is derived from a CRD: objects with properties are structs
// (atomic with x-kubernetes-map-type: atomic), additionalProperties are maps, arrays follow
// x-kubernetes-list-type (atomic by default; set; map keyed by x-kubernetes-list-map-keys),
// x-kubernetes-preserve-unknown-fields subtrees are deduced, scalars are leaves.
import type { FieldDecl } from '../../schema/model.js';
import { DEDUCED, SCALAR, metadataField, type Shape, type StructShape } from '../../patch/ssa/shape.js';
import type { JSONSchemaProps } from './schema.js';

function field(name: string, s: JSONSchemaProps): FieldDecl {
  return { name, type: { kind: 'scalar', scalar: 'string' }, optional: true, omitEmpty: true, nullable: true, default: s.default };
}

export function shapeOf(s: JSONSchemaProps | undefined, root = false): Shape {
  if (!s) return DEDUCED;
  if (s['x-kubernetes-int-or-string'] === true) return SCALAR;
  const type = s.type;
  if (type === 'array') {
    const items = Array.isArray(s.items) ? undefined : s.items;
    const lt = s['x-kubernetes-list-type'];
    const rel = lt === 'set' || lt === 'map' ? lt : 'atomic';
    return { k: 'list', rel, keys: rel === 'map' ? (s['x-kubernetes-list-map-keys'] ?? []) : [], items: shapeOf(items) };
  }
  if (type === 'object' || root) {
    const atomic = s['x-kubernetes-map-type'] === 'atomic';
    const addl = s.additionalProperties;
    if (!s.properties && addl && typeof addl === 'object') return { k: 'map', atomic, values: shapeOf(addl) };
    if (!s.properties && s['x-kubernetes-preserve-unknown-fields'] === true) return root ? rootStruct(s, atomic) : DEDUCED;
    return root || s['x-kubernetes-embedded-resource'] === true ? rootStruct(s, atomic) : struct(s, atomic);
  }
  if (!type && s['x-kubernetes-preserve-unknown-fields'] === true) return DEDUCED;
  return SCALAR;
}

function struct(s: JSONSchemaProps, atomic: boolean, extra: [string, FieldDecl, Shape | undefined][] = []): StructShape {
  const fields = new Map<string, FieldDecl>();
  const cache = new Map<string, Shape>();
  for (const [name, f, sh] of extra) {
    fields.set(name, f);
    if (sh !== undefined) cache.set(name, sh);
  }
  for (const [name, ps] of Object.entries(s.properties ?? {})) {
    if (fields.has(name)) continue;
    fields.set(name, field(name, ps));
    cache.set(name, shapeOf(ps));
  }
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  return { k: 'struct', atomic, name: '', fields, other: preserve ? DEDUCED : undefined, cache };
}

/** a root (or embedded resource): apiVersion and kind leaves, metadata ObjectMeta */
function rootStruct(s: JSONSchemaProps, atomic: boolean): StructShape {
  return struct(s, atomic, [
    ['apiVersion', field('apiVersion', {}), SCALAR],
    ['kind', field('kind', {}), SCALAR],
    ['metadata', metadataField(), undefined],
  ]);
}
