// The shape of Keelson's type declarations.
//
// Every structured type of the API (a kind such as Pod, or a part of one such as PodSpec) is
// declared once as a TypeDecl. The declarations in schema/gen/*.json are produced by
// scripts/gen-schema.mjs from the facts of the Kubernetes wire format (JSON names, protobuf
// field numbers, merge keys, list types); descriptions are our own words. Everything that needs
// to know the fields of a type reads them from here: the protobuf codec, OpenAPI, field
// validation, defaulting, strategic merge patch and server-side apply.

/** Scalars as they appear in JSON, with the protobuf wire type they map to. */
export type Scalar =
  | 'string' // proto string
  | 'bool' // proto bool (varint)
  | 'int32' // proto int32 (varint)
  | 'int64' // proto int64 (varint)
  | 'double' // proto double (fixed64); Go float64
  | 'bytes'; // proto bytes; JSON base64 string

/**
 * Types with a JSON form that differs from their protobuf message; the codec knows each one.
 * - Time, MicroTime: JSON RFC 3339 string (MicroTime with 6 fractional digits); proto {1 seconds int64, 2 nanos int32}
 * - Quantity: JSON string (or number on input); proto {1 string}
 * - IntOrString: JSON number or string; proto {1 type int64, 2 intVal int32, 3 strVal string}
 * - RawExtension: JSON any value inline; proto {1 raw bytes} (raw holds JSON)
 * - FieldsV1: JSON object; proto {1 Raw bytes} (Raw holds JSON)
 * - Duration: JSON string such as "5m0s"; proto {1 duration int64 nanoseconds}
 * - JSON: free-form JSON value (apiextensions JSON); proto {1 raw bytes}
 * - JSONSchemaPropsOrArray (apiextensions): JSON a schema object or an array of schema objects;
 *   proto {1 schema JSONSchemaProps, 2 jSONSchemas repeated JSONSchemaProps}
 * - JSONSchemaPropsOrBool (apiextensions): JSON true/false or a schema object;
 *   proto {1 allows bool, 2 schema JSONSchemaProps} (a schema object means allows=true)
 * - JSONSchemaPropsOrStringArray (apiextensions): JSON a schema object or an array of strings;
 *   proto {1 schema JSONSchemaProps, 2 property repeated string}
 */
export type Special =
  | 'Time'
  | 'MicroTime'
  | 'Quantity'
  | 'IntOrString'
  | 'RawExtension'
  | 'FieldsV1'
  | 'Duration'
  | 'JSON'
  | 'JSONSchemaPropsOrArray'
  | 'JSONSchemaPropsOrBool'
  | 'JSONSchemaPropsOrStringArray';

export type TypeRef =
  /** `enum` is set only on the element type of an array or map whose elements are a string enum
   *  (a field's own enum is in FieldDecl.enum) */
  | { kind: 'scalar'; scalar: Scalar; enum?: string[] }
  | { kind: 'special'; special: Special }
  /** a named struct type, by its canonical name (see TypeDecl.name) */
  | { kind: 'object'; name: string }
  /**
   * A JSON array. In protobuf a repeated field, except when `wrapper` names a message type
   * (a named Go slice type such as authentication's ExtraValue): then the proto field holds
   * that message, whose field 1 is the repeated element.
   */
  | { kind: 'array'; items: TypeRef; wrapper?: string }
  /** a JSON object with string keys (a Go map); in protobuf a repeated map entry {1 key, 2 value} */
  | { kind: 'map'; values: TypeRef };

export interface FieldDecl {
  /** the JSON name; for an inline (embedded) field, the Go name in lower camel case */
  name: string;
  type: TypeRef;
  /** protobuf field number; absent for fields that are not in the protobuf message */
  proto?: number;
  /** JSON `,inline`: the fields of the (object) type appear directly in this object in JSON */
  inline?: boolean;
  /** true when the field is not required (`+optional`, or omitempty without `+required`);
   *  always true for inline fields (their own fields say what is required) */
  optional: boolean;
  /** json tag has omitempty: the zero value is left out of JSON output */
  omitEmpty: boolean;
  /** the Go field is a pointer, slice or map: presence can be told apart from the zero value */
  nullable: boolean;
  /** patchStrategy struct tag: 'merge', 'replace', 'retainKeys' or 'merge,retainKeys' */
  patchStrategy?: string;
  /** patchMergeKey struct tag */
  patchMergeKey?: string;
  /** +listType: atomic, set or map */
  listType?: 'atomic' | 'set' | 'map';
  /** +listMapKey (in order) */
  listMapKeys?: string[];
  /** +mapType: atomic or granular */
  mapType?: 'atomic' | 'granular';
  /** +structType on the field */
  structType?: 'atomic' | 'granular';
  /** the allowed values of a string enum (+enum) */
  enum?: string[];
  /** +default marker value */
  default?: unknown;
  /** our own short description */
  description?: string;
  /** OpenAPI format hint where it differs from the scalar: 'int32', 'int64', 'byte', 'date-time', 'int-or-string', 'double' */
  format?: string;
}

export interface TypeDecl {
  /** canonical name, the OpenAPI definition name: 'io.k8s.api.core.v1.Pod',
   *  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' */
  name: string;
  /** protobuf message name: 'k8s.io.api.core.v1.Pod' */
  protoName: string;
  description?: string;
  fields: FieldDecl[];
  /** +structType=atomic on the type */
  structType?: 'atomic' | 'granular';
  /** the kinds this type is the root of (x-kubernetes-group-version-kind) */
  gvk?: { group: string; version: string; kind: string }[];
  /** the Go struct embeds TypeMeta: its JSON carries `kind` and `apiVersion` (first, in that order).
   *  They are not in `fields` and have no protobuf field: the protobuf envelope carries them. */
  typeMeta?: boolean;
  /** there is no protobuf message for this type (Table, version.Info): JSON only */
  noProto?: boolean;
}

/** One group/version/kind served by the API server, and the resource that serves it. */
export interface KindDecl {
  group: string; // '' for core
  version: string;
  kind: string;
  listKind: string;
  /** the resource name in URLs (plural) */
  resource: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  verbs: string[];
  /** root TypeDecl name */
  type: string;
  subresources: SubresourceDecl[];
  /** field selector names beyond metadata.name and metadata.namespace, each a JSON path of the object */
  selectableFields: string[];
  /** where the etcd-style key lives: /registry/<storagePrefix>/[<namespace>/]<name> */
  storagePrefix: string;
  /** the kind is a virtual type: create only, nothing stored (reviews) */
  virtual?: boolean;
  /** the kind is served from a CustomResourceDefinition (apiserver/crd): what the generic parts ask of it */
  custom?: CustomKindInfo;
}

/** What a kind served from a CustomResourceDefinition brings beyond a KindDecl. */
export interface CustomKindInfo {
  /** the Table printer of its additionalPrinterColumns (schema/printers Printer) */
  printer?: { columns: { name: string; type: string; format: string; description: string; priority: number }[]; cells(obj: any, now: number): unknown[] };
  /** the scale subresource's view of an object and the change a Scale write makes */
  scale?: { toView(obj: any): any; fromView(view: any, obj: any): any };
  /** the Warning every request to a deprecated version gets */
  deprecationWarning?: string;
  /** no strategic merge patch, no protobuf */
  schemaless: true;
  /** the CRD's storage version and spec.names.kind: the storage version hash of every served version */
  storage?: { version: string; kind: string };
}

export interface SubresourceDecl {
  name: string; // 'status', 'scale', 'binding', 'eviction', 'log', 'exec', 'token', ...
  group: string;
  version: string;
  kind: string;
  verbs: string[];
}
