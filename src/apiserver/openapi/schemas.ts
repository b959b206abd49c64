// OpenAPI schemas (v3 `components.schemas`, v2 `definitions`) from the type declarations of
// schema/. One SchemaSet per dialect: v3 wraps a `$ref` that has sibling keywords (description,
// default, extensions) in `allOf`, as Kubernetes does so that the description of the field is
// kept (`kubectl explain` prints it); v2 keeps the siblings beside the `$ref`, as Kubernetes'
// swagger document does, and has no `oneOf`.
import type { FieldDecl, Scalar, Special, TypeDecl, TypeRef } from '../../schema/model.js';
import { byteOrder, type Json, type JsonObject } from './json.js';
import type { TypeSource } from './source.js';

export type Dialect = 'v2' | 'v3';

export interface GVK {
  group: string;
  version: string;
  kind: string;
}

/** The definition names of the types with a special JSON form (model.ts Special). */
export const SPECIAL_TYPE_NAMES: Record<Special, string> = {
  Time: 'io.k8s.apimachinery.pkg.apis.meta.v1.Time',
  MicroTime: 'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime',
  Quantity: 'io.k8s.apimachinery.pkg.api.resource.Quantity',
  IntOrString: 'io.k8s.apimachinery.pkg.util.intstr.IntOrString',
  RawExtension: 'io.k8s.apimachinery.pkg.runtime.RawExtension',
  FieldsV1: 'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1',
  Duration: 'io.k8s.apimachinery.pkg.apis.meta.v1.Duration',
  JSON: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON',
  JSONSchemaPropsOrArray: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray',
  JSONSchemaPropsOrBool: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool',
  JSONSchemaPropsOrStringArray: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray',
};

/**
 * Definitions of types that have no declaration in schema/ because they have no fields: the
 * body of a PATCH is whatever its content type says.
 */
const FIELDLESS_DEFINITIONS: Record<string, JsonObject> = {
  'io.k8s.apimachinery.pkg.apis.meta.v1.Patch': {
    description: 'The body of a PATCH request. Its form depends on the Content-Type: a JSON patch, a JSON merge patch, a strategic merge patch or an apply configuration (server-side apply).',
    type: 'object',
  },
};

const SPECIAL_BY_NAME = new Map<string, Special>(Object.entries(SPECIAL_TYPE_NAMES).map(([k, v]) => [v, k as Special]));

const SPECIAL_DESCRIPTIONS: Record<Special, string> = {
  Time:
    'A point in time, serialized as an RFC 3339 string with second precision in UTC (for example 2024-05-01T12:00:00Z). The zero time is serialized as null.',
  MicroTime: 'A point in time with microsecond precision, serialized as an RFC 3339 string with six fractional digits (for example 2024-05-01T12:00:00.000000Z).',
  Quantity:
    'A fixed-point decimal number with an optional unit suffix, such as 100m, 1.5, 64Mi or 2e3. Suffixes are binary (Ki, Mi, Gi, Ti, Pi, Ei), decimal (m, k, M, G, T, P, E) or a decimal exponent (e or E followed by an integer). Values are kept exactly, never as floating point, and are written back in canonical form: the largest suffix of the same kind that needs no fractional digits (1.5Gi is written 1536Mi, 0.5 is written 500m). Accepted as a JSON string or number.',
  IntOrString: 'A value that is either a 32-bit integer or a string, such as a port number or a port name, or an absolute number or a percentage.',
  RawExtension: 'An embedded object of any kind, carried as it is. It usually has its own apiVersion and kind.',
  FieldsV1:
    "A set of fields, as a tree encoded in JSON. Each key is '.' (the field itself, mapping to an empty set), 'f:<name>' (a field of a struct or a key of a map), 'v:<value>' (a list item by its JSON value), 'i:<index>' (a list item by position) or 'k:<keys>' (a list item by the values of its key fields). The format is that of structured-merge-diff field sets.",
  Duration: 'A length of time, written as a Go duration string such as 30s, 5m0s or 1h2m3.5s.',
  JSON: 'Any JSON value: an object, an array, a string, a number, a boolean or null.',
  JSONSchemaPropsOrArray: 'Either one JSON schema or an array of JSON schemas.',
  JSONSchemaPropsOrBool: 'Either a boolean or a JSON schema; a schema stands for true.',
  JSONSchemaPropsOrStringArray: 'Either a JSON schema or an array of property names.',
};

const TYPE_META_DESCRIPTIONS = {
  apiVersion:
    'The version of the schema this object is written in, as group/version (just the version for the core group). Servers convert the versions they know to the one they store, and may reject versions they do not know.',
  kind: 'The kind of object this is, in CamelCase, such as Pod or Deployment. Servers may infer it from the URL of the request. Cannot be updated.',
};

function scalarSchema(s: Scalar): JsonObject {
  switch (s) {
    case 'string':
      return { type: 'string' };
    case 'bool':
      return { type: 'boolean' };
    case 'int32':
      return { type: 'integer', format: 'int32' };
    case 'int64':
      return { type: 'integer', format: 'int64' };
    case 'double':
      return { type: 'number', format: 'double' };
    case 'bytes':
      return { type: 'string', format: 'byte' };
  }
}

function zeroValue(s: Scalar): Json | undefined {
  switch (s) {
    case 'string':
      return '';
    case 'bool':
      return false;
    case 'int32':
    case 'int64':
    case 'double':
      return 0;
    case 'bytes':
      return undefined;
  }
}

/** Formats that belong to a special type's definition, not to the field that refers to it. */
const DEFINITION_FORMATS = new Set(['date-time', 'int-or-string']);

/**
 * The schemas of one document dialect, built on demand from a TypeSource and cached. Each
 * definition remembers the definitions it refers to, so that a document can carry exactly the
 * closure of the types its operations reach.
 */
export class SchemaSet {
  private readonly cache = new Map<string, { schema: JsonObject; deps: string[] }>();
  /** names referred to that no declaration answers; each gets a permissive placeholder */
  readonly missing = new Set<string>();

  constructor(
    private readonly src: TypeSource,
    readonly dialect: Dialect,
    /** further x-kubernetes-group-version-kind entries for a definition (DeleteOptions in every group version, ...) */
    private readonly extraGVK: ReadonlyMap<string, GVK[]> = new Map(),
  ) {}

  /** the JSON pointer of a definition */
  ref(name: string): string {
    return this.dialect === 'v3' ? `#/components/schemas/${name}` : `#/definitions/${name}`;
  }

  /** `{"$ref": ...}` to a definition, noting the dependency */
  refTo(name: string, deps?: Set<string>): JsonObject {
    deps?.add(name);
    return { $ref: this.ref(name) };
  }

  /** The schema of the named definition. */
  definition(name: string): JsonObject {
    return this.entry(name).schema;
  }

  /** Every definition reachable from the roots (the roots included), in byte order. */
  closure(roots: Iterable<string>): string[] {
    const seen = new Set<string>();
    const stack = [...roots];
    while (stack.length) {
      const n = stack.pop()!;
      if (seen.has(n)) continue;
      seen.add(n);
      for (const d of this.entry(n).deps) if (!seen.has(d)) stack.push(d);
    }
    return [...seen].sort(byteOrder);
  }

  /** The definitions of the closure as one object, keys in byte order. */
  definitions(roots: Iterable<string>): JsonObject {
    const out: JsonObject = {};
    for (const n of this.closure(roots)) out[n] = this.definition(n);
    return out;
  }

  private entry(name: string): { schema: JsonObject; deps: string[] } {
    let e = this.cache.get(name);
    if (!e) {
      const deps = new Set<string>();
      const schema = this.build(name, deps);
      deps.delete(name);
      e = { schema, deps: [...deps].sort(byteOrder) };
      this.cache.set(name, e);
    }
    return e;
  }

  private build(name: string, deps: Set<string>): JsonObject {
    const special = SPECIAL_BY_NAME.get(name);
    if (special) return this.specialDefinition(special);
    const decl = this.src.get(name);
    if (!decl && FIELDLESS_DEFINITIONS[name]) return { ...FIELDLESS_DEFINITIONS[name] };
    // a type declared at run time (a custom resource's schema) comes as a schema already
    const raw = decl ? undefined : this.src.raw?.(name, this.dialect, (n) => this.refTo(n, deps));
    if (raw) return raw;
    if (!decl) {
      this.missing.add(name);
      return {
        description: `${name.split('.').pop()}: no declaration of this type is known to this server.`,
        type: 'object',
        'x-kubernetes-preserve-unknown-fields': true,
      };
    }
    return this.structDefinition(decl, deps);
  }

  private specialDefinition(s: Special): JsonObject {
    const description = SPECIAL_DESCRIPTIONS[s];
    const v3 = this.dialect === 'v3';
    switch (s) {
      case 'Time':
      case 'MicroTime':
        return { description, type: 'string', format: 'date-time' };
      case 'Quantity':
        return v3 ? { description, oneOf: [{ type: 'string' }, { type: 'number' }] } : { description, type: 'string' };
      case 'IntOrString':
        return v3
          ? { description, format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true }
          : { description, type: 'string', format: 'int-or-string' };
      case 'RawExtension':
        return { description, type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
      case 'FieldsV1':
        return { description, type: 'object' };
      case 'Duration':
        return { description, type: 'string' };
      // no type: any JSON value (kube-openapi publishes these without a type)
      case 'JSON':
      case 'JSONSchemaPropsOrArray':
      case 'JSONSchemaPropsOrBool':
      case 'JSONSchemaPropsOrStringArray':
        return { description };
    }
  }

  private structDefinition(decl: TypeDecl, deps: Set<string>): JsonObject {
    const props: Record<string, JsonObject> = {};
    const required: string[] = [];
    if (decl.typeMeta) {
      props.apiVersion = { description: TYPE_META_DESCRIPTIONS.apiVersion, type: 'string' };
      props.kind = { description: TYPE_META_DESCRIPTIONS.kind, type: 'string' };
    }
    this.collectFields(decl, props, required, deps, new Set([decl.name]));
    const out: JsonObject = {};
    if (decl.description) out.description = decl.description;
    out.type = 'object';
    const names = Object.keys(props).sort(byteOrder);
    if (names.length) {
      const p: JsonObject = {};
      for (const n of names) p[n] = props[n];
      out.properties = p;
    }
    if (required.length) out.required = required;
    const gvks = this.gvksOf(decl);
    if (gvks.length) out['x-kubernetes-group-version-kind'] = gvks.map((g) => ({ group: g.group, kind: g.kind, version: g.version }));
    if (decl.structType === 'atomic') out['x-kubernetes-map-type'] = 'atomic';
    return out;
  }

  private gvksOf(decl: TypeDecl): GVK[] {
    const all = [...(decl.gvk ?? []), ...(this.extraGVK.get(decl.name) ?? [])];
    const seen = new Map<string, GVK>();
    for (const g of all) seen.set(`${g.group}\0${g.version}\0${g.kind}`, g);
    return [...seen.entries()].sort((a, b) => byteOrder(a[0], b[0])).map((e) => e[1]);
  }

  /** the fields of a struct, with inline (embedded) structs flattened into it */
  private collectFields(decl: TypeDecl, props: Record<string, JsonObject>, required: string[], deps: Set<string>, path: Set<string>): void {
    for (const f of decl.fields) {
      if (f.inline) {
        if (f.type.kind !== 'object') continue;
        const inner = this.src.get(f.type.name);
        if (!inner) {
          this.missing.add(f.type.name);
          continue;
        }
        if (path.has(inner.name)) continue;
        if (inner.typeMeta) {
          props.apiVersion ??= { description: TYPE_META_DESCRIPTIONS.apiVersion, type: 'string' };
          props.kind ??= { description: TYPE_META_DESCRIPTIONS.kind, type: 'string' };
        }
        this.collectFields(inner, props, required, deps, new Set([...path, inner.name]));
        continue;
      }
      props[f.name] = this.property(f, deps);
      if (!f.optional && !required.includes(f.name)) required.push(f.name);
    }
  }

  /** the schema of one field */
  private property(f: FieldDecl, deps: Set<string>): JsonObject {
    const t = f.type;
    const ext: JsonObject = {};
    if (f.patchStrategy) ext['x-kubernetes-patch-strategy'] = f.patchStrategy;
    if (f.patchMergeKey) ext['x-kubernetes-patch-merge-key'] = f.patchMergeKey;
    const def = fieldDefault(f);

    if (t.kind === 'object' || (t.kind === 'special' && t.special !== 'Duration')) {
      const name = t.kind === 'object' ? t.name : SPECIAL_TYPE_NAMES[t.special];
      const siblings: JsonObject = {};
      if (def !== undefined) siblings.default = def;
      if (f.description) siblings.description = f.description;
      if (f.structType) siblings['x-kubernetes-map-type'] = f.structType;
      Object.assign(siblings, sortedExt(ext));
      return this.withRef(name, siblings, deps);
    }

    const out: JsonObject = {};
    if (f.description) out.description = f.description;
    if (t.kind === 'scalar' || t.kind === 'special') {
      const base = t.kind === 'scalar' ? scalarSchema(t.scalar) : { type: 'string' };
      out.type = base.type;
      const format = f.format && !DEFINITION_FORMATS.has(f.format) ? f.format : base.format;
      if (format !== undefined) out.format = format;
      if (def !== undefined) out.default = def;
      const en = f.enum ?? (t.kind === 'scalar' ? t.enum : undefined);
      if (en && en.length) out.enum = [...en];
      // a []byte field marked +listType=atomic (a CSR's request, an APIService's caBundle) says so
      if (f.listType) ext['x-kubernetes-list-type'] = f.listType;
    } else if (t.kind === 'array') {
      out.type = 'array';
      out.items = this.element(t.items, deps);
      if (def !== undefined) out.default = def;
      if (f.listMapKeys && f.listMapKeys.length) ext['x-kubernetes-list-map-keys'] = [...f.listMapKeys];
      if (f.listType) ext['x-kubernetes-list-type'] = f.listType;
    } else {
      out.type = 'object';
      out.additionalProperties = this.element(t.values, deps);
      if (def !== undefined) out.default = def;
      if (f.mapType) ext['x-kubernetes-map-type'] = f.mapType;
    }
    Object.assign(out, sortedExt(ext));
    return out;
  }

  /** the schema of an array element or a map value */
  private element(t: TypeRef, deps: Set<string>): JsonObject {
    switch (t.kind) {
      case 'scalar': {
        const out: JsonObject = { ...scalarSchema(t.scalar) };
        const z = zeroValue(t.scalar);
        if (z !== undefined) out.default = z;
        if (t.enum && t.enum.length) out.enum = [...t.enum];
        return out;
      }
      case 'special':
        if (t.special === 'Duration') return { type: 'string' };
        return this.refTo(SPECIAL_TYPE_NAMES[t.special], deps);
      case 'object':
        return this.withRef(t.name, { default: {} }, deps);
      case 'array':
        return { type: 'array', items: this.element(t.items, deps) };
      case 'map':
        return { type: 'object', additionalProperties: this.element(t.values, deps) };
    }
  }

  /** a reference with sibling keywords: wrapped in allOf for v3, side by side for v2 */
  private withRef(name: string, siblings: JsonObject, deps: Set<string>): JsonObject {
    const ref = this.refTo(name, deps);
    if (Object.keys(siblings).length === 0) return ref;
    if (this.dialect === 'v3') return { allOf: [ref], ...siblings };
    return { ...ref, ...siblings };
  }
}

function sortedExt(ext: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const k of Object.keys(ext).sort(byteOrder)) out[k] = ext[k];
  return out;
}

/**
 * The default of a field, as Kubernetes publishes it: the +default marker when there is one;
 * otherwise the zero value of a field that is always serialized (not a pointer, no omitempty),
 * and {} for an embedded (non-pointer) struct.
 */
function fieldDefault(f: FieldDecl): Json | undefined {
  if (f.default !== undefined) return f.default as Json;
  if (f.nullable) return undefined;
  const t = f.type;
  if (t.kind === 'scalar') return f.omitEmpty ? undefined : zeroValue(t.scalar);
  if (t.kind === 'object') return {};
  return undefined;
}
