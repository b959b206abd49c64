// The type declarations at run time: loads schema/gen/*.json (written by scripts/gen-schema.mjs)
// and answers lookups by canonical name, protobuf message name and group/version/kind.
//
// Files are read lazily, one Go package at a time, the first time a type of that package is
// asked for; allTypes() reads them all. The declarations are shared: callers must not modify them.
import { readFileSync } from 'node:fs';
import type { FieldDecl, Special, TypeDecl, TypeRef } from './model.js';

const GEN_DIR = new URL('./gen/', import.meta.url);

interface IndexEntry {
  /** Go import path of the package */
  package: string;
  /** canonical name prefix of its types: 'io.k8s.api.core.v1' */
  prefix: string;
  /** protobuf package: 'k8s.io.api.core.v1' */
  protoPackage: string;
  types: number;
  /** 'group/version/Kind' -> canonical type name */
  kinds: Record<string, string>;
}

interface Index {
  files: Record<string, IndexEntry>;
}

let index: Index | undefined;
/** canonical prefix -> file key */
const byPrefix = new Map<string, string>();
/** proto package -> file key */
const byProtoPackage = new Map<string, string>();
/** 'group/version/Kind' -> canonical type name */
const byGvk = new Map<string, string>();

const loadedFiles = new Set<string>();
const byName = new Map<string, TypeDecl>();
const byProto = new Map<string, TypeDecl>();
let allLoaded = false;

function getIndex(): Index {
  if (index) return index;
  const idx = JSON.parse(readFileSync(new URL('index.json', GEN_DIR), 'utf8')) as Index;
  for (const [file, e] of Object.entries(idx.files)) {
    byPrefix.set(e.prefix, file);
    byProtoPackage.set(e.protoPackage, file);
    for (const [gvk, name] of Object.entries(e.kinds)) byGvk.set(gvk, name);
  }
  index = idx;
  return idx;
}

function loadFile(file: string): void {
  if (loadedFiles.has(file)) return;
  loadedFiles.add(file);
  const decls = JSON.parse(readFileSync(new URL(`${file}.json`, GEN_DIR), 'utf8')) as TypeDecl[];
  for (const d of decls) {
    byName.set(d.name, d);
    byProto.set(d.protoName, d);
  }
}

/** The package part of a dotted name ('io.k8s.api.core.v1.Pod' -> 'io.k8s.api.core.v1'). */
function packageOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? '' : name.slice(0, dot);
}

/** Looks a type up by its canonical name ('io.k8s.api.core.v1.Pod'). */
export function getType(name: string): TypeDecl | undefined {
  const found = byName.get(name);
  if (found || allLoaded) return found;
  getIndex();
  const file = byPrefix.get(packageOf(name));
  if (file === undefined) return undefined;
  loadFile(file);
  return byName.get(name);
}

/** Like getType, but throws when there is no such type. */
export function mustGetType(name: string): TypeDecl {
  const t = getType(name);
  if (!t) throw new Error(`schema: no type ${name}`);
  return t;
}

/** Every declared type, by canonical name. */
export function allTypes(): ReadonlyMap<string, TypeDecl> {
  if (!allLoaded) {
    for (const file of Object.keys(getIndex().files)) loadFile(file);
    allLoaded = true;
  }
  return byName;
}

/** Looks a type up by its protobuf message name ('k8s.io.api.core.v1.Pod'). */
export function typeByProtoName(protoName: string): TypeDecl | undefined {
  const found = byProto.get(protoName);
  if (found || allLoaded) return found;
  getIndex();
  const file = byProtoPackage.get(packageOf(protoName));
  if (file === undefined) return undefined;
  loadFile(file);
  return byProto.get(protoName);
}

/**
 * The root type of a group/version/kind (group '' for the core group), including list kinds
 * ('ConfigMapList'), subresource kinds (autoscaling/v1 Scale) and the meta kinds the server
 * sends (v1 Status, meta.k8s.io/v1 Table).
 */
export function typeForKind(group: string, version: string, kind: string): TypeDecl | undefined {
  getIndex();
  const name = byGvk.get(`${group}/${version}/${kind}`);
  return name === undefined ? undefined : getType(name);
}

/** Every group/version/kind with a root type, as [group, version, kind, canonical type name]. */
export function allKinds(): [group: string, version: string, kind: string, type: string][] {
  getIndex();
  const out: [string, string, string, string][] = [];
  for (const [gvk, name] of byGvk) {
    const [group, version, kind] = gvk.split('/') as [string, string, string];
    out.push([group, version, kind, name]);
  }
  return out;
}

const TYPE_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.TypeMeta';
let typeMetaFields: FieldDecl[] | undefined;

/** `kind` and `apiVersion` as they appear in the JSON of a type that embeds TypeMeta (no proto number). */
function typeMetaJsonFields(): FieldDecl[] {
  if (typeMetaFields) return typeMetaFields;
  const tm = mustGetType(TYPE_META);
  typeMetaFields = tm.fields.map((f) => {
    const { proto: _proto, ...rest } = f;
    return rest;
  });
  return typeMetaFields;
}

const jsonFieldCache = new WeakMap<TypeDecl, ReadonlyMap<string, FieldDecl>>();

/**
 * The fields of a type as they appear in its JSON object, by JSON name, in Go's output order:
 * `kind` and `apiVersion` first for types that embed TypeMeta, then the fields, with the fields
 * of inline (embedded) structs in place of the inline field.
 */
export function jsonFields(type: TypeDecl): ReadonlyMap<string, FieldDecl> {
  const cached = jsonFieldCache.get(type);
  if (cached) return cached;
  const out = new Map<string, FieldDecl>();
  if (type.typeMeta) for (const f of typeMetaJsonFields()) out.set(f.name, f);
  for (const f of type.fields) {
    if (f.inline && f.type.kind === 'object') {
      for (const [n, g] of jsonFields(mustGetType(f.type.name))) if (!out.has(n)) out.set(n, g);
    } else if (!out.has(f.name)) {
      out.set(f.name, f);
    }
  }
  jsonFieldCache.set(type, out);
  return out;
}

const protoFieldCache = new WeakMap<TypeDecl, ReadonlyMap<number, FieldDecl>>();

/**
 * The fields of a type's protobuf message, by field number. Inline structs are not flattened:
 * in protobuf they are a nested message (Volume's VolumeSource is field 2).
 */
export function protoFields(type: TypeDecl): ReadonlyMap<number, FieldDecl> {
  const cached = protoFieldCache.get(type);
  if (cached) return cached;
  const out = new Map<number, FieldDecl>();
  for (const f of type.fields) if (f.proto !== undefined) out.set(f.proto, f);
  protoFieldCache.set(type, out);
  return out;
}

/** The field of a type at a JSON path ('spec.containers' from Pod gives PodSpec.containers). Arrays and maps are stepped through. */
export function fieldAtPath(type: TypeDecl, path: string | string[]): FieldDecl | undefined {
  const parts = typeof path === 'string' ? path.split('.') : path;
  let cur: TypeDecl | undefined = type;
  let field: FieldDecl | undefined;
  for (const p of parts) {
    if (!cur) return undefined;
    field = jsonFields(cur).get(p);
    if (!field) return undefined;
    let ref: TypeRef = field.type;
    while (ref.kind === 'array' || ref.kind === 'map') ref = ref.kind === 'array' ? ref.items : ref.values;
    cur = ref.kind === 'object' ? getType(ref.name) : undefined;
  }
  return field;
}

/**
 * The definitions behind the special types: canonical (OpenAPI) name and protobuf message name.
 * `openapi` is the schema Kubernetes publishes for each.
 */
export const SPECIAL_TYPES: Readonly<
  Record<Special, { name: string; protoName: string; openapi: { type?: string; format?: string } }>
> = {
  Time: {
    name: 'io.k8s.apimachinery.pkg.apis.meta.v1.Time',
    protoName: 'k8s.io.apimachinery.pkg.apis.meta.v1.Time',
    openapi: { type: 'string', format: 'date-time' },
  },
  MicroTime: {
    name: 'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime',
    protoName: 'k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime',
    openapi: { type: 'string', format: 'date-time' },
  },
  Duration: {
    name: 'io.k8s.apimachinery.pkg.apis.meta.v1.Duration',
    protoName: 'k8s.io.apimachinery.pkg.apis.meta.v1.Duration',
    openapi: { type: 'string' },
  },
  FieldsV1: {
    name: 'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1',
    protoName: 'k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1',
    openapi: { type: 'object' },
  },
  Quantity: {
    name: 'io.k8s.apimachinery.pkg.api.resource.Quantity',
    protoName: 'k8s.io.apimachinery.pkg.api.resource.Quantity',
    openapi: { type: 'string' },
  },
  IntOrString: {
    name: 'io.k8s.apimachinery.pkg.util.intstr.IntOrString',
    protoName: 'k8s.io.apimachinery.pkg.util.intstr.IntOrString',
    openapi: { type: 'string', format: 'int-or-string' },
  },
  RawExtension: {
    name: 'io.k8s.apimachinery.pkg.runtime.RawExtension',
    protoName: 'k8s.io.apimachinery.pkg.runtime.RawExtension',
    openapi: { type: 'object' },
  },
  JSON: {
    name: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON',
    protoName: 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON',
    openapi: {},
  },
  JSONSchemaPropsOrArray: {
    name: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray',
    protoName: 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray',
    openapi: {},
  },
  JSONSchemaPropsOrBool: {
    name: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool',
    protoName: 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool',
    openapi: {},
  },
  JSONSchemaPropsOrStringArray: {
    name: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray',
    protoName: 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray',
    openapi: {},
  },
};
