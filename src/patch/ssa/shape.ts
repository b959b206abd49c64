// The shape of a value as server-side apply sees it, derived from the schema's TypeDecls the way
// Kubernetes derives structured-merge-diff's schema from its OpenAPI (kube-openapi schemaconv):
//
// - scalars (and Time, MicroTime, Quantity, IntOrString, Duration) are leaves;
// - a struct is granular (each field owned on its own) unless +structType=atomic on the type, or
//   +structType/+mapType on the field that refers to it;
// - a Go map is granular unless +mapType=atomic;
// - a list is `atomic` unless +listType says `set` or `map` (with +listMapKey); without a listType
//   a patchStrategy of merge makes it a map list (with patchMergeKey) or a set, as schemaconv does;
// - RawExtension is `untyped`: any value, always atomic;
// - FieldsV1 and the free-form apiextensions JSON types are `deduced`: a map is granular with
//   deduced values, a list atomic, anything else a leaf.
import type { FieldDecl, TypeDecl, TypeRef } from '../../schema/model.js';
import { getType, jsonFields } from '../../schema/types.js';

export type Shape = ScalarShape | UntypedShape | DeducedShape | StructShape | MapShape | ListShape;

export interface ScalarShape {
  readonly k: 'scalar';
  /** what the value must be (schemaconv: integer and number are numeric; date-time, int-or-string and Quantity are untyped) */
  readonly scalar: 'numeric' | 'string' | 'boolean' | 'untyped';
}
export interface UntypedShape {
  readonly k: 'untyped';
}
export interface DeducedShape {
  readonly k: 'deduced';
}
export interface StructShape {
  readonly k: 'struct';
  readonly atomic: boolean;
  readonly name: string;
  /** the declared fields by JSON name */
  readonly fields: ReadonlyMap<string, FieldDecl>;
  /** the shape of keys the type does not declare (schemaless roots only) */
  readonly other?: Shape;
  /** field shapes, resolved on first use */
  readonly cache: Map<string, Shape>;
}
export interface MapShape {
  readonly k: 'map';
  readonly atomic: boolean;
  readonly values: Shape;
}
export interface ListShape {
  readonly k: 'list';
  readonly rel: 'atomic' | 'set' | 'map';
  readonly keys: readonly string[];
  readonly items: Shape;
}

export const SCALAR: ScalarShape = { k: 'scalar', scalar: 'untyped' };
const NUMERIC: ScalarShape = { k: 'scalar', scalar: 'numeric' };
const STRING: ScalarShape = { k: 'scalar', scalar: 'string' };
const BOOLEAN: ScalarShape = { k: 'scalar', scalar: 'boolean' };
export const UNTYPED: UntypedShape = { k: 'untyped' };
export const DEDUCED: DeducedShape = { k: 'deduced' };
const ATOMIC_LIST_OF_UNTYPED: ListShape = { k: 'list', rel: 'atomic', keys: [], items: UNTYPED };

const structCache = new Map<string, StructShape>();

function structShape(decl: TypeDecl, atomic: boolean): StructShape {
  const key = (atomic ? 'a:' : 'g:') + decl.name;
  let s = structCache.get(key);
  if (!s) {
    s = { k: 'struct', atomic, name: decl.name, fields: jsonFields(decl), cache: new Map() };
    structCache.set(key, s);
  }
  return s;
}

function refShape(t: TypeRef, f: FieldDecl | undefined): Shape {
  switch (t.kind) {
    case 'scalar':
      switch (t.scalar) {
        case 'string':
        case 'bytes':
          return STRING;
        case 'bool':
          return BOOLEAN;
        default:
          return NUMERIC;
      }
    case 'special':
      switch (t.special) {
        case 'RawExtension':
          return UNTYPED;
        case 'FieldsV1':
        case 'JSON':
        case 'JSONSchemaPropsOrArray':
        case 'JSONSchemaPropsOrBool':
        case 'JSONSchemaPropsOrStringArray':
          return DEDUCED;
        case 'Duration':
          return STRING;
        default:
          return SCALAR; // Time, MicroTime, Quantity, IntOrString
      }
    case 'object': {
      const decl = getType(t.name);
      if (!decl) return DEDUCED;
      let atomic = decl.structType === 'atomic';
      if (f?.structType) atomic = f.structType === 'atomic';
      else if (f?.mapType) atomic = f.mapType === 'atomic';
      return structShape(decl, atomic);
    }
    case 'map':
      return { k: 'map', atomic: f?.mapType === 'atomic', values: refShape(t.values, undefined) };
    case 'array': {
      const items = refShape(t.items, undefined);
      let rel: ListShape['rel'] = 'atomic';
      let keys: readonly string[] = [];
      if (f?.listType) {
        rel = f.listType;
        if (rel === 'map') keys = f.listMapKeys ?? [];
      } else if (f?.patchStrategy === 'merge' || f?.patchStrategy === 'merge,retainKeys') {
        if (f.patchMergeKey) {
          rel = 'map';
          keys = [f.patchMergeKey];
        } else rel = 'set';
      }
      return { k: 'list', rel, keys, items };
    }
  }
}

/** The shape of a struct's field, or of an undeclared key. */
export function fieldShape(s: StructShape, name: string): Shape {
  let c = s.cache.get(name);
  if (c) return c;
  const f = s.fields.get(name);
  c = f ? refShape(f.type, f) : (s.other ?? DEDUCED);
  s.cache.set(name, c);
  return c;
}

/** The shape of the value under a map key or struct field. */
export function childShape(s: Shape, name: string): Shape {
  switch (s.k) {
    case 'struct':
      return fieldShape(s, name);
    case 'map':
      return s.values;
    case 'deduced':
      return DEDUCED;
    case 'untyped':
      return UNTYPED;
    default:
      return DEDUCED;
  }
}

/** Whether name is a declared field of a struct (the fields a set names without owning the parent). */
export function isNamedField(s: Shape, name: string): boolean {
  return s.k === 'struct' && s.fields.has(name);
}

/** Whether the shape can hold a map (structured-merge-diff's atom.Map != nil). */
export function hasMapAtom(s: Shape): boolean {
  return s.k === 'struct' || s.k === 'map' || s.k === 'deduced' || s.k === 'untyped';
}

/** The shape of an item of a list; the deduced and untyped shapes hold atomic lists. */
export function listShapeOf(s: Shape): ListShape | undefined {
  if (s.k === 'list') return s;
  if (s.k === 'deduced' || s.k === 'untyped') return ATOMIC_LIST_OF_UNTYPED;
  return undefined;
}

/** The default of a key field of a map list's items (`protocol: TCP` for container ports). */
export function keyDefault(l: ListShape, key: string): unknown {
  if (l.items.k !== 'struct') return undefined;
  return l.items.fields.get(key)?.default;
}

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
let schemaless: StructShape | undefined;

/** the root shapes of types declared at run time (custom resources, from their structural schemas) */
const customRoots = new Map<string, Shape>();

/** Declare (or, with undefined, remove) the root shape of a type the schema does not declare. */
export function setCustomRootShape(typeName: string, shape: Shape | undefined): void {
  if (shape) customRoots.set(typeName, shape);
  else customRoots.delete(typeName);
}

/** the field declaration of ObjectMeta as a root's `metadata` (for custom root shapes) */
export function metadataField(): FieldDecl {
  return { name: 'metadata', type: { kind: 'object', name: META }, optional: true, omitEmpty: true, nullable: false };
}

/**
 * The shape of the root type (a kind's TypeDecl name). A name the schema does not know gets a
 * schemaless shape: metadata as ObjectMeta, everything else deduced.
 */
export function rootShape(typeName: string): Shape {
  const custom = customRoots.get(typeName);
  if (custom) return custom;
  const decl = getType(typeName);
  if (decl) return structShape(decl, false);
  if (!schemaless) {
    const meta = getType(META);
    const fields = new Map<string, FieldDecl>();
    if (meta) fields.set('metadata', { name: 'metadata', type: { kind: 'object', name: META }, optional: true, omitEmpty: true, nullable: false });
    schemaless = { k: 'struct', atomic: false, name: '', fields, other: DEDUCED, cache: new Map() };
  }
  return schemaless;
}
