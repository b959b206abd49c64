// Kubernetes' CBOR encoding (`application/cbor`, `application/cbor-seq` for watches,
// `application/apply-patch+cbor`), behind the CBORServingAndStorage feature gate.
//
// Objects are plain JS values in their JSON form. The wire rules are those of
// k8s.io/apimachinery/pkg/runtime/serializer/cbor (Kubernetes 1.32+) over fxamacker/cbor v2.9
// with the options of its internal/modes package:
//
// Encoding (modes/encode.go, cbor.go, collections.go):
//  - a body is one data item enclosed in the self-described CBOR tag 55799 (d9 d9 f7);
//  - every Go string is a CBOR *byte* string (major type 2, `String: StringToByteString`), and so
//    is every map key and struct field name (`FieldName: FieldNameToByteString`): Kubernetes
//    never writes text strings. Times, quantities, int-or-strings, durations are their JSON
//    strings, as byte strings;
//  - a Go []byte (schema scalar `bytes`: Secret.data values, ConfigMap.binaryData values,
//    caBundle, CSR request) is a byte string of the raw bytes inside tag 22 ("expected later
//    base64 encoding", d6), so that decoding it into a string gives the base64 text JSON has;
//  - integers are CBOR integers in the shortest head; a Go float64 (schema scalar `double`) is a
//    float in the shortest of half, single or double precision that keeps its value
//    (`ShortestFloat16`); NaN and infinities are refused;
//  - map keys and struct fields are sorted bytewise by their encoded form (`SortBytewiseLexical`,
//    RFC 8949 4.2.1): shorter keys first, then bytewise. (The API server serves responses with
//    its nondeterministic mode, which shuffles them; the sorted order is one of those orders and
//    is byte for byte what Kubernetes' deterministic encoder, used for storage, writes.)
//  - nil slices and maps are null, as absent pointers; omitempty as encoding/json: this module
//    writes what the JSON form holds, so the JSON form must already be Go's;
//  - lists: {kind, items, metadata, apiVersion} in that (sorted) order, items without their own
//    self-described tag; watch events: each event is one data item of the CBOR sequence, with its
//    own self-described tag, {type, object}, whose object is the object's full body (tag included).
//
// Decoding (modes/decode.go): the tag is optional; indefinite-length items are accepted;
// duplicate map keys, invalid UTF-8 in text strings, NaN and infinities, bignums (tags 2, 3),
// simple values other than false/true/null (undefined included), integers beyond int64 and
// non-string map keys are rejected with fxamacker's messages; other tags are transparent
// (tags 0 and 1 are times; 21, 22, 23 give byte strings their text encoding when they land in a
// string). Text and byte strings are both accepted wherever a string is expected. A byte string
// in a []byte field is taken as raw bytes when enclosed in tag 21, 22 or 23, and otherwise as
// base64 text (`ByteStringExpectedBase64`), as JSON does.
//
// The JSON form decoded is what the JSON layer (json.ts normalize, fieldValidation) expects of a
// JSON body: fields a type does not declare keep their key with the value null (Kubernetes skips
// their values, so errors inside them are not reported either) and the first is named as
// Kubernetes' strict decoding names it; errors are CBORDecodeError, 400, worded as fxamacker's,
// with the phase (apiVersion/kind or object) that decides Kubernetes' Status message.
//
// In the server: encode an object once, `encodeCBOR(typeName, obj)`, and keep the body. It answers
// a GET as is; a list is `encodeCBORListFromItems` / `encodeCBORListChunks` over the cached bodies
// (the tag is stripped, nothing is re-encoded); a watch event is `encodeCBORWatchEvent(type, body)`.
//
// Limits, where JavaScript or this design differs from Go:
//  - a number is integral or not, nothing more: in schemaless content (custom resources,
//    RawExtension, JSON) a JSON 1.0 that Kubernetes keeps as a float64 is written as the integer 1
//    (typed float64 fields are written as floats, as Go writes them); integers beyond 2^53 lose
//    precision when decoded, as everywhere in the JSON form;
//  - a byte string with invalid UTF-8 decoded into a string holds U+FFFD where Go keeps the bytes;
//  - when an object has several errors, the first in document order is reported (well-formedness
//    and apiVersion/kind errors first, as Kubernetes does); Go sometimes reports a later duplicate
//    key instead of an earlier type error in the same map;
//  - the decoder recurses: past a few thousand levels of nesting (JavaScript's stack) an input that
//    Kubernetes would accept (its limit is 10000) is refused with a 400 saying so.
import type { Special, TypeDecl, TypeRef } from '../schema/model.js';
import { getType, jsonFields, typeForKind } from '../schema/types.js';
import {
  CBORDecodeError,
  CBOREncodeError,
  CBORRaw,
  CBORSequenceSplitter,
  MAJOR_NAMES,
  MAX_NESTED_LEVELS,
  SELF_DESCRIBED,
  Writer,
  bytesToString,
  checkWellFormed,
  goBase64Error,
  halfToNumber,
  hasSelfDescribedTag,
  stripSelfDescribedTag,
  syntax,
  textToString,
  u64String,
  wellFormedEnd,
} from './cbor-wire.js';
import { goQuote } from '../machinery/gostrings.js';

export { CBORDecodeError, CBOREncodeError, CBORRaw, CBORSequenceSplitter, SELF_DESCRIBED, hasSelfDescribedTag, stripSelfDescribedTag };

export const CBOR_MEDIA_TYPE = 'application/cbor';
export const CBOR_SEQ_MEDIA_TYPE = 'application/cbor-seq';
export const APPLY_PATCH_CBOR_MEDIA_TYPE = 'application/apply-patch+cbor';

const JSON_SCHEMA_PROPS = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps';
const LIST_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta';
const META_PACKAGE = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const TWO53 = 9007199254740992;
const TWO63 = 9223372036854775808;

const hasOwn = Object.prototype.hasOwnProperty;

// ---------------------------------------------------------------- type nodes (compiled once per type)

// What the codec needs of a TypeRef, as a small object with a numeric kind: the encoder and the
// decoder switch on `k` and follow `items`, `values` and `plan` without any lookup by name.
const S_STRING = 0;
const S_BOOL = 1;
const S_INT32 = 2;
const S_INT64 = 3;
const S_DOUBLE = 4;
const S_BYTES = 5;
const K_STRUCT = 6;
const K_ARRAY = 7;
const K_MAP = 8;
const K_ANY = 9; // free-form: RawExtension content, JSON, Duration (their Go forms are generic)
const K_STRINGISH = 10; // Time, MicroTime, Quantity: a string, UnmarshalCBOR into a *string
const K_INT_OR_STRING = 11;
const K_DURATION = 12;
const K_JSON = 13;
const K_RAW_EXTENSION = 14;
const K_FIELDS_V1 = 15;
const K_OR_ARRAY = 16; // JSONSchemaPropsOrArray
const K_OR_BOOL = 17; // JSONSchemaPropsOrBool
const K_OR_STRING_ARRAY = 18; // JSONSchemaPropsOrStringArray

const SCALAR_KIND: Record<string, number> = { string: S_STRING, bool: S_BOOL, int32: S_INT32, int64: S_INT64, double: S_DOUBLE, bytes: S_BYTES };
const SPECIAL_KIND: Record<Special, number> = {
  Time: K_STRINGISH,
  MicroTime: K_STRINGISH,
  Quantity: K_STRINGISH,
  IntOrString: K_INT_OR_STRING,
  Duration: K_DURATION,
  JSON: K_JSON,
  RawExtension: K_RAW_EXTENSION,
  FieldsV1: K_FIELDS_V1,
  JSONSchemaPropsOrArray: K_OR_ARRAY,
  JSONSchemaPropsOrBool: K_OR_BOOL,
  JSONSchemaPropsOrStringArray: K_OR_STRING_ARRAY,
};
/** Go's names of the scalar kinds, as fxamacker prints them in type errors */
const SCALAR_GO = ['string', 'bool', 'int32', 'int64', 'float64', '[]uint8'];

interface TypeNode {
  k: number;
  /** Go's name of the type, as fxamacker prints it in type errors: `v1.PodSpec`, `[]string` */
  go: string;
  items?: TypeNode;
  values?: TypeNode;
  /** K_STRUCT: the type's canonical name, and its plan once resolved (null: no such type) */
  name?: string;
  plan?: StructPlan | null;
}

interface FieldEntry {
  name: string;
  node: TypeNode;
  /** position in the order Kubernetes writes the fields */
  rank: number;
  /** the encoded key: byte-string head + UTF-8 name */
  key: Uint8Array;
  /** the name's UTF-8 bytes, and their hash (to match a key on the wire without making a string) */
  raw: Uint8Array;
  hash: number;
}

interface StructPlan {
  decl: TypeDecl;
  /** Go's name of the type in messages: `v1.PodSpec` */
  goName: string;
  /** fields in the order Kubernetes writes them (sorted by encoded key) */
  sorted: FieldEntry[];
  byName: Map<string, FieldEntry>;
  byHash: Map<number, FieldEntry[]>;
  /** generated on first use: the encoder of the type, and the store of a decoded field by rank */
  enc?: (e: Encoder, w: Writer, o: Record<string, unknown>) => void;
  set?: (out: Record<string, unknown>, rank: number, v: unknown) => void;
}

const plans = new Map<string, StructPlan | null>();
const nodes = new WeakMap<TypeRef, TypeNode>();

function encodedKey(name: string): Uint8Array {
  const w = new Writer(64);
  w.str(name, 0x40);
  return w.finish();
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** FNV-1a over bytes, seeded with the length */
function hashBytes(b: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5 ^ (end - start);
  for (let i = start; i < end; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h;
}

function goTypeName(name: string): string {
  const parts = name.split('.');
  return `${parts[parts.length - 2]}.${parts[parts.length - 1]}`;
}

function nodeOf(t: TypeRef): TypeNode {
  const cached = nodes.get(t);
  if (cached) return cached;
  let n: TypeNode;
  switch (t.kind) {
    case 'scalar':
      n = { k: SCALAR_KIND[t.scalar]!, go: SCALAR_GO[SCALAR_KIND[t.scalar]!]! };
      break;
    case 'special': {
      const k = SPECIAL_KIND[t.special];
      // the Go type their UnmarshalCBOR reports in type errors
      n = { k, go: k === K_STRINGISH ? 'string' : k === K_INT_OR_STRING ? 'int32' : 'interface {}' };
      break;
    }
    case 'object':
      n = { k: K_STRUCT, go: goTypeName(t.name), name: t.name };
      break;
    case 'array': {
      const items = nodeOf(t.items);
      n = { k: K_ARRAY, go: `[]${items.go}`, items };
      break;
    }
    case 'map': {
      const values = nodeOf(t.values);
      n = { k: K_MAP, go: `map[string]${values.go}`, values };
      break;
    }
  }
  nodes.set(t, n);
  return n;
}

function structNode(name: string): TypeNode {
  return { k: K_STRUCT, go: goTypeName(name), name };
}

/** the plan of a struct node (resolved once; null when the schema has no such type) */
function planOfNode(n: TypeNode): StructPlan | null {
  if (n.plan === undefined) n.plan = planOf(n.name!) ?? null;
  return n.plan;
}

function planOf(name: string): StructPlan | undefined {
  const cached = plans.get(name);
  if (cached !== undefined) return cached ?? undefined;
  const decl = getType(name);
  if (!decl) {
    plans.set(name, null);
    return undefined;
  }
  const sorted: FieldEntry[] = [];
  const byName = new Map<string, FieldEntry>();
  const byHash = new Map<number, FieldEntry[]>();
  const plan: StructPlan = { decl, goName: goTypeName(name), sorted, byName, byHash };
  plans.set(name, plan); // before the fields: types refer to themselves (JSONSchemaProps)
  for (const [n, f] of jsonFields(decl)) {
    const raw = Buffer.from(n, 'utf8');
    const e: FieldEntry = { name: n, node: nodeOf(f.type), rank: 0, key: encodedKey(n), raw, hash: hashBytes(raw, 0, raw.length) };
    sorted.push(e);
    byName.set(n, e);
    const list = byHash.get(e.hash);
    if (list) list.push(e);
    else byHash.set(e.hash, [e]);
  }
  sorted.sort((a, b) => compareBytes(a.key, b.key));
  sorted.forEach((e, i) => (e.rank = i));
  return plan;
}

function mustPlan(name: string): StructPlan {
  const p = planOf(name);
  if (!p) throw new CBOREncodeError(`cbor: no type ${name}`);
  return p;
}

// Per-type functions generated once (as the Protobuf codec does): property names as literals let
// V8 use its inline caches instead of generic keyed lookups on every object.

/** the encoder of a struct type: loads each field by name, counts the present ones, writes them in order */
function generateEncoder(plan: StructPlan): NonNullable<StructPlan['enc']> {
  const f = plan.sorted;
  const lit = (n: string): string => JSON.stringify(n);
  let src = '';
  for (let i = 0; i < f.length; i++) src += `const v${i} = o[${lit(f[i]!.name)}];\n`;
  src += 'let n = 0;\n';
  for (let i = 0; i < f.length; i++) src += `if (v${i} !== undefined) n++;\n`;
  src += 'w.head(0xa0, n);\n';
  for (let i = 0; i < f.length; i++) {
    const v = `v${i}`;
    let write: string;
    switch (f[i]!.node.k) {
      case S_STRING:
        write = `if (typeof ${v} === 'string') w.str(${v}, 0x40); else e.typed(N[${i}], ${v});`;
        break;
      case S_BOOL:
        write = `if (${v} === true) w.byte(0xf5); else if (${v} === false) w.byte(0xf4); else e.typed(N[${i}], ${v});`;
        break;
      case S_INT32:
      case S_INT64:
        write = `if (typeof ${v} === 'number' && (${v} | 0) === ${v}) w.int(${v}); else e.typed(N[${i}], ${v});`;
        break;
      default:
        write = `e.typed(N[${i}], ${v});`;
    }
    src += `if (${v} !== undefined) { w.key(K[${i}]); ${write} }\n`;
  }
  const make = new Function('K', 'N', `return function encode(e, w, o) {\n${src}};`) as (k: Uint8Array[], n: TypeNode[]) => NonNullable<StructPlan['enc']>;
  return make(
    f.map((x) => x.key),
    f.map((x) => x.node),
  );
}

/** the store of a decoded field into the object by the field's rank */
function generateSetter(plan: StructPlan): NonNullable<StructPlan['set']> {
  let src = 'switch (r) {\n';
  plan.sorted.forEach((e, i) => (src += `case ${i}: o[${JSON.stringify(e.name)}] = v; return;\n`));
  src += '}\n';
  return new Function('o', 'r', 'v', src) as NonNullable<StructPlan['set']>;
}

const SCHEMA_PROPS_NODE = structNode(JSON_SCHEMA_PROPS);
const SCHEMA_ARRAY_NODE: TypeNode = { k: K_ARRAY, go: '[]v1.JSONSchemaProps', items: SCHEMA_PROPS_NODE };
const STRING_NODE: TypeNode = { k: S_STRING, go: 'string' };
const STRING_ARRAY_NODE: TypeNode = { k: K_ARRAY, go: '[]string', items: STRING_NODE };

// ---------------------------------------------------------------- encoding

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array) && !(v instanceof CBORRaw);
}

function isAsciiKeys(keys: string[]): boolean {
  for (const k of keys) {
    for (let i = 0; i < k.length; i++) if (k.charCodeAt(i) >= 0x80) return false;
  }
  return true;
}

function compareAscii(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/** the keys of a JS object with a defined value, in the order Kubernetes' encoder writes them */
function sortedKeys(o: Record<string, unknown>): string[] {
  const keys: string[] = [];
  for (const k in o) {
    if (hasOwn.call(o, k) && o[k] !== undefined) keys.push(k);
  }
  if (keys.length < 2) return keys;
  if (isAsciiKeys(keys)) return keys.sort(compareAscii);
  const enc = keys.map((k) => ({ k, b: Buffer.from(k, 'utf8') }));
  enc.sort((x, y) => x.b.length - y.b.length || Buffer.compare(x.b, y.b));
  return enc.map((e) => e.k);
}

class Encoder {
  constructor(readonly w: Writer) {}

  struct(plan: StructPlan, o: Record<string, unknown>): void {
    (plan.enc ??= generateEncoder(plan))(this, this.w, o);
  }

  typed(n: TypeNode, v: unknown): void {
    const w = this.w;
    if (v === null || v === undefined) {
      w.byte(0xf6);
      return;
    }
    switch (n.k) {
      case S_STRING:
        if (typeof v === 'string') return w.str(v, 0x40);
        break;
      case S_BOOL:
        if (typeof v === 'boolean') return w.byte(v ? 0xf5 : 0xf4);
        break;
      case S_DOUBLE:
        if (typeof v === 'number') return w.float(v);
        break;
      case S_BYTES:
        if (typeof v === 'string') {
          w.byte(0xd6);
          return w.bytesFromBase64(v);
        }
        break;
      case K_STRUCT:
        if (isPlainObject(v)) {
          const p = planOfNode(n);
          if (p) return this.struct(p, v);
        }
        break;
      case K_ARRAY:
        if (Array.isArray(v)) {
          w.head(0x80, v.length);
          const items = n.items!;
          for (let i = 0; i < v.length; i++) this.typed(items, v[i]);
          return;
        }
        break;
      case K_MAP:
        if (isPlainObject(v)) {
          const keys = sortedKeys(v);
          w.head(0xa0, keys.length);
          const values = n.values!;
          for (let i = 0; i < keys.length; i++) {
            const k = keys[i]!;
            w.str(k, 0x40);
            this.typed(values, v[k]);
          }
          return;
        }
        break;
      case K_OR_ARRAY:
        if (Array.isArray(v)) return this.typed(SCHEMA_ARRAY_NODE, v);
        if (isPlainObject(v)) return this.typed(SCHEMA_PROPS_NODE, v);
        break;
      case K_OR_BOOL:
      case K_OR_STRING_ARRAY:
        if (isPlainObject(v)) return this.typed(SCHEMA_PROPS_NODE, v);
        break;
      // int32 and int64 (integers by value are Go's integers), Time, MicroTime, Quantity,
      // Duration (strings), IntOrString, and the free-form RawExtension, FieldsV1 and JSON:
      // their Go marshallers write what the generic rules write
    }
    return this.any(v);
  }

  /** a value without a schema, as Kubernetes encodes unstructured content (map[string]interface{}) */
  any(v: unknown): void {
    const w = this.w;
    switch (typeof v) {
      case 'string':
        return w.str(v, 0x40);
      case 'number':
        if (Number.isInteger(v) && v >= -TWO63 && v < TWO63) {
          if (v > -TWO53 && v < TWO53) return w.int(v);
          return w.bigint(BigInt(v));
        }
        return w.float(v);
      case 'boolean':
        return w.byte(v ? 0xf5 : 0xf4);
      case 'bigint':
        return w.bigint(v);
      case 'undefined':
        return w.byte(0xf6);
      case 'object': {
        if (v === null) return w.byte(0xf6);
        if (Array.isArray(v)) {
          w.head(0x80, v.length);
          for (let i = 0; i < v.length; i++) this.any(v[i]);
          return;
        }
        if (v instanceof Uint8Array) {
          w.byte(0xd6);
          return w.bytes(v);
        }
        if (v instanceof CBORRaw) return w.raw(stripSelfDescribedTag(v.bytes));
        const o = v as Record<string, unknown>;
        const keys = sortedKeys(o);
        w.head(0xa0, keys.length);
        for (const k of keys) {
          w.str(k, 0x40);
          this.any(o[k]);
        }
        return;
      }
      default:
        throw new CBOREncodeError(`cbor: unsupported type: ${typeof v}`);
    }
  }
}

const WRITER_KEEP = 1 << 20;
let spareWriter: Writer | undefined = new Writer();

function withWriter<T>(fn: (w: Writer) => T): T {
  const w = spareWriter ?? new Writer();
  spareWriter = undefined; // re-entrant calls get their own writer
  w.reset();
  try {
    return fn(w);
  } catch (e) {
    if (e instanceof RangeError && /call stack/i.test(e.message)) throw new CBOREncodeError('cbor: value nested too deeply to encode');
    throw e;
  } finally {
    spareWriter = w.buf.length > WRITER_KEEP ? new Writer() : w;
  }
}

/**
 * The CBOR body of an object of a type (canonical name, e.g. 'io.k8s.api.core.v1.Pod') in its
 * JSON form: the self-described tag, then the object. Fields the type does not declare are left
 * out (Go's struct has no place for them). An unknown type name encodes the value without a
 * schema (custom resources: strings, numbers, maps, arrays as unstructured content encodes).
 */
export function encodeCBOR(typeName: string, obj: unknown): Uint8Array {
  const plan = planOf(typeName);
  return withWriter((w) => {
    w.raw(SELF_DESCRIBED);
    const e = new Encoder(w);
    if (plan && isPlainObject(obj)) e.struct(plan, obj);
    else e.any(obj);
    return w.finish();
  });
}

/**
 * The CBOR body of a value without a schema (Status, Table, PartialObjectMetadata, discovery
 * documents, unstructured objects): the self-described tag, then the value. Strings are byte
 * strings, integral numbers (within int64) integers, other numbers floats, maps sorted.
 * A Uint8Array is a Go []byte (tag 22, byte string); a CBORRaw is written as is (its own
 * self-described tag dropped), e.g. an embedded object already encoded with its schema.
 */
export function encodeCBORValue(value: unknown): Uint8Array {
  return withWriter((w) => {
    w.raw(SELF_DESCRIBED);
    new Encoder(w).any(value);
    return w.finish();
  });
}

/** The root type of an apiVersion and kind (meta.k8s.io kinds resolve in every group, as in Go). */
export function cborTypeOfKind(apiVersion: string, kind: string): TypeDecl | undefined {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  const exact = typeForKind(group, version, kind);
  if (exact) return exact;
  for (const [g, v] of [
    ['', 'v1'],
    ['meta.k8s.io', 'v1'],
  ] as const) {
    const t = typeForKind(g, v, kind);
    if (t && t.name.startsWith(META_PACKAGE)) return t;
  }
  return undefined;
}

/** encodeCBOR with the type chosen by the object's own apiVersion and kind (schemaless when none is known) */
export function encodeCBORObject(obj: Record<string, unknown>): Uint8Array {
  const t = typeof obj.apiVersion === 'string' && typeof obj.kind === 'string' ? cborTypeOfKind(obj.apiVersion, obj.kind) : undefined;
  return t ? encodeCBOR(t.name, obj) : encodeCBORValue(obj);
}

// ---------------------------------------------------------------- lists and watch events

const KEY_KIND = encodedKey('kind');
const KEY_ITEMS = encodedKey('items');
const KEY_METADATA = encodedKey('metadata');
const KEY_API_VERSION = encodedKey('apiVersion');
const KEY_TYPE = encodedKey('type');
const KEY_OBJECT = encodedKey('object');

function listHeadAndTail(apiVersion: string, kind: string, listMeta: unknown, count: number): { head: Uint8Array; tail: Uint8Array } {
  return withWriter((w) => {
    w.raw(SELF_DESCRIBED);
    w.head(0xa0, 2 + (kind ? 1 : 0) + (apiVersion ? 1 : 0));
    if (kind) {
      w.raw(KEY_KIND);
      w.str(kind, 0x40);
    }
    w.raw(KEY_ITEMS);
    w.head(0x80, count);
    const head = w.finish();
    w.reset();
    const e = new Encoder(w);
    w.raw(KEY_METADATA);
    const lm = isPlainObject(listMeta) ? listMeta : {};
    e.struct(mustPlan(LIST_META), lm);
    if (apiVersion) {
      w.raw(KEY_API_VERSION);
      w.str(apiVersion, 0x40);
    }
    return { head, tail: w.finish() };
  });
}

/**
 * The body of a list (PodList, ...) from its items' already-encoded bodies (as encodeCBOR gives
 * them; a leading self-described tag is dropped), copied once, never re-encoded:
 * d9d9f7 {kind, items: [...], metadata: ListMeta, apiVersion}, the order Kubernetes writes.
 * `kind` and `apiVersion` are left out when empty, as Go leaves out an empty TypeMeta field.
 */
export function encodeCBORListFromItems(apiVersion: string, kind: string, listMeta: unknown, itemBodies: readonly Uint8Array[]): Uint8Array {
  const { head, tail } = listHeadAndTail(apiVersion, kind, listMeta, itemBodies.length);
  let size = head.length + tail.length;
  const items = itemBodies.map((b) => {
    const s = stripSelfDescribedTag(b);
    size += s.length;
    return s;
  });
  const out = Buffer.allocUnsafe(size);
  out.set(head, 0);
  let p = head.length;
  for (const s of items) {
    out.set(s, p);
    p += s.length;
  }
  out.set(tail, p);
  return out;
}

/**
 * The same body as encodeCBORListFromItems as a sequence of chunks for a streaming response:
 * the head, then each item's bytes as a view of its cached body (no copy), then the list's
 * metadata and apiVersion.
 */
export function* encodeCBORListChunks(
  apiVersion: string,
  kind: string,
  listMeta: unknown,
  itemBodies: readonly Uint8Array[],
): Generator<Uint8Array, void, undefined> {
  const { head, tail } = listHeadAndTail(apiVersion, kind, listMeta, itemBodies.length);
  yield head;
  for (const b of itemBodies) yield stripSelfDescribedTag(b);
  yield tail;
}

/**
 * One event of an `application/cbor-seq` watch stream, as the Kubernetes API server frames it:
 * the event is its own data item, with its own self-described tag, a map {type, object} whose
 * object is the object's full body (metav1.WatchEvent with a RawExtension holding the embedded
 * encoder's output, self-described tag included). The sequence needs no other framing: the
 * frames are written one after another.
 */
export function encodeCBORWatchEvent(type: string, objectCBOR: Uint8Array): Uint8Array {
  return withWriter((w) => {
    w.raw(SELF_DESCRIBED);
    w.byte(0xa2);
    w.raw(KEY_TYPE);
    w.str(type, 0x40);
    w.raw(KEY_OBJECT);
    if (!hasSelfDescribedTag(objectCBOR)) w.raw(SELF_DESCRIBED);
    w.raw(objectCBOR);
    return w.finish();
  });
}

// ---------------------------------------------------------------- decoding

type NodeBuffer = Buffer & { base64Slice(start: number, end: number): string; hexSlice(start: number, end: number): string };

function asBuffer(b: Uint8Array): NodeBuffer {
  return (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength)) as NodeBuffer;
}

function setKey(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

function dupKey(k: string, i: number): CBORDecodeError {
  return new CBORDecodeError(`cbor: found duplicate map key ${goQuote(k)} at map element index ${i}`);
}

const RFC3339_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

function pad(n: number, w: number): string {
  return String(n).padStart(w, '0');
}

/** RFC 3339 with nanoseconds, trailing zeros trimmed, as Go's time.Time.MarshalText writes it */
function formatNano(ms: number, nanos: number, offsetMin: number): string | undefined {
  const d = new Date(ms + offsetMin * 60000);
  const y = d.getUTCFullYear();
  if (!(y >= 0 && y <= 9999)) return undefined;
  let s = `${pad(y, 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
  if (nanos > 0) s += `.${pad(nanos, 9).replace(/0+$/, '')}`;
  if (offsetMin === 0) return `${s}Z`;
  const a = Math.abs(offsetMin);
  return `${s}${offsetMin < 0 ? '-' : '+'}${pad(Math.floor(a / 60), 2)}:${pad(a % 60, 2)}`;
}

function daysIn(y: number, m: number): number {
  return [31, y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]!;
}

/** a tag 0 time (RFC 3339 text) as Go decodes it into an interface{}: reformatted, offset kept */
function tag0Time(s: string): string {
  const m = RFC3339_RE.exec(s);
  const bad = (why: string): CBORDecodeError => new CBORDecodeError(`cbor: cannot set ${goQuote(s)} for time.Time: parsing time ${goQuote(s)}${why}`);
  if (!m) throw bad(' as "2006-01-02T15:04:05Z07:00": cannot parse');
  const [y, mo, d, h, mi, se] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12) throw bad(': month out of range');
  if (d < 1 || d > daysIn(y, mo)) throw bad(': day out of range');
  if (h > 23) throw bad(': hour out of range');
  if (mi > 59) throw bad(': minute out of range');
  if (se > 59) throw bad(': second out of range');
  const nanos = m[7] ? Number((m[7] + '00000000').slice(0, 9)) : 0;
  let off = 0;
  if (!m[8]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) throw bad(': time zone offset out of range');
    off = (oh * 60 + om) * (m[9] === '-' ? -1 : 1);
  }
  const ms = Date.UTC(y, mo - 1, d, h, mi, se) - off * 60000;
  return formatNano(ms, nanos, off)!;
}

/** a tag 1 time (seconds since the epoch) as Go decodes it into an interface{}: UTC */
function tag1Time(secs: number): string {
  let whole = Math.trunc(secs);
  let nanos = Math.round((secs - whole) * 1e9);
  if (nanos < 0) {
    whole -= 1;
    nanos += 1e9;
  }
  const s = Math.abs(whole) < 1e14 ? formatNano(whole * 1000, nanos, 0) : undefined;
  if (s === undefined) {
    throw new CBORDecodeError('cbor: decoded time cannot be represented in RFC3339 format with sub-second precision: Time.MarshalText: year outside of range [0,9999]');
  }
  return s;
}

/** Kubernetes decodes raw types (RawExtension, FieldsV1) again when it transcodes them to JSON; their errors carry these */
const RAW_EXTENSION_PREFIX = 'failed to transcode RawExtension to JSON: failed to parse RawExtension bytes as CBOR: ';
const FIELDS_V1_PREFIX = 'failed to transcode FieldsV1 to JSON: metav1.FieldsV1 cbor invalid: ';


/**
 * A single-pass decoder: builds the JSON form while it checks what fxamacker checks. Errors are
 * thrown as found; the callers then check the well-formedness of the whole input, since
 * Kubernetes reports a syntax error anywhere before any other error.
 *
 * The readers named `...Body` expect the item's head to be read already.
 */
class Decoder {
  private readonly b: NodeBuffer;
  pos = 0;
  private depth = 0;
  /** the innermost enclosing "expected later encoding" tag (21, 22, 23), or 0 */
  private later = 0;
  /** the Go type of the root struct and its field being decoded: fxamacker names it in type errors */
  private rootGo: string | undefined;
  private rootField: string | undefined;
  /** the first field no type declares, worded as Kubernetes' strict decoding reports it */
  unknownField: string | undefined;
  /** the last head read: major type, additional information, argument (high 32 bits apart) */
  private major = 0;
  private ai = 0;
  private arg = 0;
  private argHi = 0;
  private argLo = 0;

  constructor(bytes: Uint8Array) {
    this.b = asBuffer(bytes);
  }

  // ---- heads and strings

  private eof(): CBORDecodeError {
    return new CBORDecodeError('unexpected EOF', true);
  }

  /** reads a head; an indefinite length leaves ai = 31 */
  private head(): void {
    const b = this.b;
    const p = this.pos;
    if (p >= b.length) throw this.eof();
    const ib = b[p]!;
    this.major = ib >>> 5;
    const ai = ib & 0x1f;
    this.ai = ai;
    this.argHi = 0;
    if (ai < 24) {
      this.arg = ai;
      this.pos = p + 1;
      return;
    }
    switch (ai) {
      case 24:
        if (p + 2 > b.length) throw this.eof();
        this.arg = b[p + 1]!;
        this.pos = p + 2;
        if (this.major === 7 && this.arg < 32) throw syntax(`cbor: invalid simple value ${this.arg} for type primitives`);
        return;
      case 25:
        if (p + 3 > b.length) throw this.eof();
        this.arg = (b[p + 1]! << 8) | b[p + 2]!;
        this.pos = p + 3;
        return;
      case 26:
        if (p + 5 > b.length) throw this.eof();
        this.arg = b.readUInt32BE(p + 1);
        this.pos = p + 5;
        return;
      case 27:
        if (p + 9 > b.length) throw this.eof();
        this.argHi = b.readUInt32BE(p + 1);
        this.argLo = b.readUInt32BE(p + 5);
        this.arg = this.argHi * 4294967296 + this.argLo;
        this.pos = p + 9;
        return;
      case 31:
        this.pos = p + 1;
        if (this.major === 0 || this.major === 1 || this.major === 6) throw syntax(`cbor: invalid additional information 31 for type ${MAJOR_NAMES[this.major]}`);
        if (this.major === 7) throw syntax('cbor: unexpected "break" code');
        this.arg = -1;
        return;
      default:
        throw syntax(`cbor: invalid additional information ${ai} for type ${MAJOR_NAMES[this.major]}`);
    }
  }

  /**
   * the integer of the last head (major type 0, or 1 when negative), exactly as objects hold it
   * (codec/int64.ts): a number within ±(2^53 - 1), else a bigint; the caller has ruled out int64 overflow
   */
  private intValue(negative: boolean): number | bigint {
    const a = this.arg;
    if (a <= Number.MAX_SAFE_INTEGER - (negative ? 1 : 0)) return negative ? -1 - a : a;
    const u = (BigInt(this.argHi) << 32n) | BigInt(this.argLo);
    return negative ? -1n - u : u;
  }

  /** the exact unsigned argument of the last head, as text (for overflow messages) */
  private argText(): string {
    return this.argHi ? u64String(this.argHi, this.argLo) : String(this.arg);
  }

  /** the offset where the item whose head was just read began */
  private itemStart(): number {
    const ai = this.ai;
    return this.pos - (ai < 24 || ai === 31 ? 1 : ai === 24 ? 2 : ai === 25 ? 3 : ai === 26 ? 5 : 9);
  }

  private peekByte(): number {
    if (this.pos >= this.b.length) throw this.eof();
    return this.b[this.pos]!;
  }

  /** in an indefinite-length array or map: consumes the break code when it comes */
  private atBreak(): boolean {
    if (this.pos >= this.b.length) throw this.eof();
    if (this.b[this.pos] === 0xff) {
      this.pos++;
      return true;
    }
    return false;
  }

  private enter(): void {
    if (++this.depth > MAX_NESTED_LEVELS) throw syntax(`cbor: exceeded max nested level ${MAX_NESTED_LEVELS}`);
  }

  /** skips one item (head not read), checking its well-formedness only (Go skips what it does not decode) */
  skip(): void {
    this.pos = wellFormedEnd(this.b, this.pos, this.depth);
  }

  /** skips the rest of the item whose head was read */
  private skipRest(): void {
    const major = this.major;
    if (major === 2 || major === 3) this.stringBytes();
    else if (major === 4 || major === 5 || major === 6) {
      this.pos = this.itemStart();
      this.skip();
    } else if (major === 7 && this.ai >= 25 && this.ai <= 27) this.float();
  }

  private typeError(cborType: string, goType: string, detail?: string): CBORDecodeError {
    const where = this.rootField !== undefined ? `Go struct field ${this.rootGo}.${this.rootField}` : 'Go value';
    return new CBORDecodeError(`cbor: cannot unmarshal ${cborType} into ${where} of type ${goType}${detail ? ` (${detail})` : ''}`);
  }

  /** the item whose head was read cannot go into a Go value of this type: Go's checks of it first, then the type error */
  private wrongType(goType: string, detail?: string): never {
    const major = this.major;
    if (major === 3) this.text(); // invalid UTF-8 is reported before the type
    else if (major === 7 && this.ai !== 20 && this.ai !== 21 && this.ai !== 22 && !(this.ai >= 25 && this.ai <= 27)) throw this.rejectSimple();
    else this.skipRest();
    throw this.typeError(MAJOR_NAMES[major]!, goType, detail);
  }

  private checkSize(): void {
    if (this.argHi >= 0x80000000) throw syntax(`cbor: ${MAJOR_NAMES[this.major]} length ${this.argText()} is too large, it would cause integer overflow`);
    if (this.major === 4 && this.arg > 2147483647) throw syntax('cbor: exceeded max number of elements 2147483647 for CBOR array');
    if (this.major === 5 && this.arg > 2097152) throw syntax('cbor: exceeded max number of key-value pairs 2097152 for CBOR map');
  }

  /** the content of the string whose head was read: a range of the input, or of the joined chunks of an indefinite one */
  private stringBytes(): { buf: NodeBuffer; start: number; end: number } {
    const b = this.b;
    if (this.ai !== 31) {
      if (this.argHi >= 0x80000000) throw syntax(`cbor: ${MAJOR_NAMES[this.major]} length ${this.argText()} is too large, causing integer overflow`);
      const start = this.pos;
      if (b.length - start < this.arg) throw this.eof();
      this.pos = start + this.arg;
      return { buf: b, start, end: this.pos };
    }
    const major = this.major;
    const parts: Buffer[] = [];
    for (;;) {
      const ib = this.peekByte();
      if (ib === 0xff) {
        this.pos++;
        break;
      }
      if (ib >>> 5 !== major) throw syntax(`cbor: wrong element type ${MAJOR_NAMES[ib >>> 5]} for indefinite-length ${MAJOR_NAMES[major]}`);
      if ((ib & 0x1f) === 31) throw syntax(`cbor: indefinite-length ${MAJOR_NAMES[major]} chunk is not definite-length`);
      this.head();
      const s = this.stringBytes();
      if (major === 3 && textToString(s.buf, s.start, s.end) === undefined) throw new CBORDecodeError('cbor: invalid UTF-8 string');
      parts.push(s.buf.subarray(s.start, s.end));
    }
    this.major = major;
    const joined = Buffer.concat(parts) as NodeBuffer;
    return { buf: joined, start: 0, end: joined.length };
  }

  /** a text string (head read), its UTF-8 checked */
  private text(): string {
    const s = this.stringBytes();
    const v = textToString(s.buf, s.start, s.end);
    if (v === undefined) throw new CBORDecodeError('cbor: invalid UTF-8 string');
    return v;
  }

  /** a byte string (head read) into a Go string: the enclosing later-encoding tag applies */
  private byteText(): string {
    const s = this.stringBytes();
    switch (this.later) {
      case 0:
        return bytesToString(s.buf, s.start, s.end);
      case 22:
        return s.buf.base64Slice(s.start, s.end);
      case 21:
        return s.buf.base64Slice(s.start, s.end).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
      default:
        return s.buf.hexSlice(s.start, s.end);
    }
  }

  /** a float's value (head read, major 7, ai 25-27) */
  private float(): number {
    let f: number;
    if (this.ai === 25) f = halfToNumber(this.arg);
    else if (this.ai === 26) {
      fdv.setUint32(0, this.arg);
      f = fdv.getFloat32(0);
    } else {
      fdv.setUint32(0, this.argHi);
      fdv.setUint32(4, this.argLo);
      f = fdv.getFloat64(0);
    }
    if (f !== f) throw new CBORDecodeError('cbor: data item of cbor type primitives is not accepted by protocol: floating-point NaN', true);
    if (f === Infinity || f === -Infinity) throw new CBORDecodeError('cbor: data item of cbor type primitives is not accepted by protocol: floating-point infinity', true);
    return f;
  }

  /** simple values other than false, true and null (undefined included) are rejected */
  private rejectSimple(): CBORDecodeError {
    return new CBORDecodeError(`cbor: data item of cbor type primitives is not accepted by protocol: simple value ${this.arg} is not recognized`);
  }

  // ---- tags

  /**
   * Consumes the tags before an item (a tag head was read) and reads the content's head. 55799
   * and unregistered tags are transparent; 2 and 3 (bignums) are refused; 21-23 set the later
   * encoding of the byte strings inside; the contents of 0 and 1 are checked. Returns 0 or 1 for
   * a time tag, else -1. The caller restores `later` and `depth` (withTags).
   */
  private tags(): number {
    let timeTag = -1;
    let first = true;
    for (;;) {
      const tag = this.argHi ? -1 : this.arg;
      if (tag === 2 || tag === 3) throw new CBORDecodeError('cbor: data item of cbor type tag is not accepted by protocol: bignum', true);
      const next = this.peekByte();
      const nm = next >>> 5;
      if (tag === 0) {
        if (nm !== 3) throw new CBORDecodeError(`cbor: tag number 0 must be followed by text string, got ${MAJOR_NAMES[nm]}`);
        timeTag = 0;
      } else if (tag === 1) {
        if (nm !== 0 && nm !== 1 && (next < 0xf9 || next > 0xfb)) {
          throw new CBORDecodeError(`cbor: tag number 1 must be followed by integer or floating-point number, got ${MAJOR_NAMES[nm]}`);
        }
        timeTag = 1;
      } else if (tag === 21 || tag === 22 || tag === 23) {
        this.later = tag;
      } else if (tag !== 55799) {
        timeTag = -1;
      }
      if (!first) this.enter();
      first = false;
      this.head();
      if (this.major !== 6) return timeTag;
    }
  }

  private withTags<T>(body: (timeTag: number) => T): T {
    const later = this.later;
    const depth = this.depth;
    try {
      return body(this.tags());
    } finally {
      this.later = later;
      this.depth = depth;
    }
  }

  /** runs a reader as Go runs a type's own UnmarshalCBOR: on the item's bytes alone, outside enclosing tags */
  private fresh<T>(fn: () => T): T {
    if (this.later === 0) return fn();
    const later = this.later;
    this.later = 0;
    try {
      return fn();
    } finally {
      this.later = later;
    }
  }

  // ---- without a schema (Go interface{})

  any(): unknown {
    this.head();
    return this.anyBody();
  }

  private anyBody(): unknown {
    switch (this.major) {
      case 0:
        if (this.argHi >= 0x80000000) throw this.typeError('positive integer', 'int64', `${this.argText()} overflows Go's int64`);
        return this.intValue(false);
      case 1:
        if (this.argHi >= 0x80000000) throw this.typeError('negative integer', 'int64', `${-1n - BigInt(this.argText())} overflows Go's int64`);
        return this.intValue(true);
      case 2:
        return this.byteText();
      case 3:
        return this.text();
      case 4: {
        this.checkSize();
        this.enter();
        const out: unknown[] = [];
        if (this.ai === 31) while (!this.atBreak()) out.push(this.any());
        else for (let i = 0, n = this.arg; i < n; i++) out.push(this.any());
        this.depth--;
        return out;
      }
      case 5:
        return this.mapBody(undefined);
      case 6:
        return this.withTags((timeTag) => {
          if (timeTag === 0) return tag0Time(this.text());
          if (timeTag === 1) return tag1Time(this.anyBody() as number);
          return this.anyBody();
        });
      default:
        switch (this.ai) {
          case 20:
            return false;
          case 21:
            return true;
          case 22:
            return null;
          case 25:
          case 26:
          case 27:
            return this.float();
          default:
            throw this.rejectSimple();
        }
    }
  }

  /** a key of a Go map[string]X: decoded as a Go string (null gives "") */
  private mapKey(): string {
    const v = this.scalar(S_STRING);
    return v === null ? '' : (v as string);
  }

  /** a map (head read, major 5) into a Go map[string]X, X given by `values` (undefined: interface{}) */
  private mapBody(values: TypeNode | undefined): Record<string, unknown> {
    this.checkSize();
    this.enter();
    const out: Record<string, unknown> = {};
    const indef = this.ai === 31;
    const n = this.arg;
    for (let i = 0; indef ? !this.atBreak() : i < n; i++) {
      const k = this.mapKey();
      const v = values === undefined ? this.any() : this.typed(values);
      if (out[k] !== undefined && hasOwn.call(out, k)) throw dupKey(k, i);
      setKey(out, k, v);
    }
    this.depth--;
    return out;
  }

  // ---- with a schema

  /** a value of a declared type */
  typed(n: TypeNode): unknown {
    if (n.k >= K_STRINGISH) return this.special(n);
    this.head();
    return this.typedBody(n);
  }

  private typedBody(n: TypeNode): unknown {
    const major = this.major;
    if (major === 6) return this.withTags(() => this.typedBody(n));
    if (major === 7 && this.ai === 22) return null; // null leaves a Go value at its zero value
    switch (n.k) {
      case K_STRUCT: {
        const p = planOfNode(n);
        return p ? this.structBody(p, false) : this.anyBody();
      }
      case K_ARRAY: {
        if (major !== 4) return this.wrongType(n.go);
        this.checkSize();
        this.enter();
        const out: unknown[] = [];
        const items = n.items!;
        if (this.ai === 31) while (!this.atBreak()) out.push(this.typed(items));
        else for (let i = 0, c = this.arg; i < c; i++) out.push(this.typed(items));
        this.depth--;
        return out;
      }
      case K_MAP:
        if (major !== 5) return this.wrongType(n.go);
        return this.mapBody(n.values);
      case K_ANY:
        return this.anyBody();
      default:
        return this.scalarBody(n.k);
    }
  }

  /** a scalar of a Go type (S_*), head not read */
  private scalar(s: number): unknown {
    this.head();
    if (this.major === 6) return this.withTags(() => this.scalar2(s));
    return this.scalar2(s);
  }

  private scalar2(s: number): unknown {
    if (this.major === 7 && this.ai === 22) return null;
    return this.scalarBody(s);
  }

  private scalarBody(s: number): unknown {
    switch (this.major) {
      case 0:
        if (s === S_INT32 || s === S_INT64 || s === S_DOUBLE) {
          if (s === S_INT32 && this.arg > 2147483647) throw this.typeError('positive integer', 'int32', `${this.argText()} overflows int32`);
          if (s === S_INT64 && this.argHi >= 0x80000000) throw this.typeError('positive integer', 'int64', `${this.argText()} overflows int64`);
          return s === S_INT64 ? this.intValue(false) : this.arg;
        }
        break;
      case 1:
        if (s === S_INT32 || s === S_INT64 || s === S_DOUBLE) {
          if (this.argHi >= 0x80000000) throw this.typeError('negative integer', SCALAR_GO[s]!, `${-1n - BigInt(this.argText())} overflows Go's int64`);
          if (s === S_INT32 && this.arg > 2147483647) throw this.typeError('negative integer', 'int32', `${-1 - this.arg} overflows int32`);
          return s === S_INT64 ? this.intValue(true) : -1 - this.arg;
        }
        break;
      case 2:
        if (s === S_STRING) return this.byteText();
        if (s === S_BYTES) return this.bytesField();
        break;
      case 3:
        if (s === S_STRING) return this.text();
        break;
      case 4:
        if (s === S_BYTES) return this.bytesFromArray();
        break;
      case 7:
        switch (this.ai) {
          case 20:
          case 21:
            if (s === S_BOOL) return this.ai === 21;
            break;
          case 25:
          case 26:
          case 27: {
            const f = this.float();
            if (s === S_DOUBLE) return f;
            break;
          }
          default:
            throw this.rejectSimple();
        }
        break;
    }
    return this.wrongType(SCALAR_GO[s]!);
  }

  /** a byte string (head read) into a Go []byte, as base64 text (the JSON form) */
  private bytesField(): string {
    const s = this.stringBytes();
    if (this.later !== 0) return s.buf.base64Slice(s.start, s.end); // enclosed in tag 21, 22 or 23: raw bytes
    // no later-encoding tag: the content is base64 text (ByteStringExpectedBase64)
    const err = goBase64Error(s.buf, s.start, s.end);
    if (err) throw new CBORDecodeError(`cbor: failed to decode base64 from byte string: ${err}`);
    let text = s.buf.toString('latin1', s.start, s.end);
    if (/[\r\n]/.test(text)) text = text.replace(/[\r\n]/g, '');
    return Buffer.from(text, 'base64').toString('base64');
  }

  /** an array of integers (head read, major 4) into a Go []byte */
  private bytesFromArray(): string {
    this.checkSize();
    this.enter();
    const out: number[] = [];
    const indef = this.ai === 31;
    const n = this.arg;
    for (let i = 0; indef ? !this.atBreak() : i < n; i++) {
      const v = this.scalar(S_INT64);
      const x = v === null ? 0 : (v as number);
      if (x < 0 || x > 255) throw this.typeError(x < 0 ? 'negative integer' : 'positive integer', 'uint8', `${x} overflows uint8`);
      out.push(x);
    }
    this.depth--;
    return Buffer.from(out).toString('base64');
  }

  /** an object of a declared type; `root` marks the body's top-level object */
  struct(plan: StructPlan, root: boolean): unknown {
    this.head();
    if (this.major === 6) return this.withTags(() => this.struct2(plan, root));
    return this.struct2(plan, root);
  }

  private struct2(plan: StructPlan, root: boolean): unknown {
    if (this.major === 7 && this.ai === 22) return null;
    return this.structBody(plan, root);
  }

  private structBody(plan: StructPlan, root: boolean): Record<string, unknown> {
    if (this.major !== 5) {
      return this.wrongType(plan.goName, this.major === 4 ? 'cannot decode CBOR array to struct without toarray option' : undefined);
    }
    this.checkSize();
    this.enter();
    const out: Record<string, unknown> = {};
    const set = (plan.set ??= generateSetter(plan));
    const indef = this.ai === 31;
    const n = this.arg;
    if (root) this.rootGo = plan.goName;
    let intKeys: Set<number> | undefined;
    // the fields seen so far, by rank (no type has more than 64 fields)
    let seenLo = 0;
    let seenHi = 0;
    for (let i = 0; indef ? !this.atBreak() : i < n; i++) {
      let f = this.fieldKey(plan);
      if (typeof f === 'string') {
        // no field matched the key's bytes: an unknown field, or a key sent in chunks
        const name = f;
        f = plan.byName.get(name);
        if (f === undefined) {
          if (out[name] !== undefined && hasOwn.call(out, name)) throw dupKey(name, i);
          // Go skips the value of a key no field matches (and strict decoding reports the first)
          if (this.unknownField === undefined) this.unknownField = `cbor: found unknown field at map element index ${i}`;
          this.skip();
          setKey(out, name, null);
          continue;
        }
      } else if (f === undefined) {
        // an integer key: no field of Kubernetes' types has one
        intKeys = this.seenIntKey(intKeys, i);
        if (this.unknownField === undefined) this.unknownField = `cbor: found unknown field at map element index ${i}`;
        this.skip();
        continue;
      }
      const r = f.rank;
      if (r < 32) {
        const bit = 1 << r;
        if (seenLo & bit) throw dupKey(f.name, i);
        seenLo |= bit;
      } else {
        const bit = 1 << (r - 32);
        if (seenHi & bit) throw dupKey(f.name, i);
        seenHi |= bit;
      }
      if (root) this.rootField = f.name;
      set(out, r, this.typed(f.node));
    }
    if (root) this.rootField = undefined;
    this.depth--;
    return out;
  }

  /**
   * A struct's key: the field it names, matched by its bytes (no string is made), or the key as
   * a string when no field has these bytes, or undefined for an integer key (see fieldName).
   */
  private fieldKey(plan: StructPlan): FieldEntry | string | undefined {
    const b = this.b;
    const p = this.pos;
    if (p < b.length) {
      const ib = b[p]!;
      const major = ib >>> 5;
      const len = ib & 0x1f;
      // the common case: a definite string of fewer than 24 bytes
      if ((major === 2 || major === 3) && len < 24) {
        const start = p + 1;
        const end = start + len;
        if (end <= b.length) {
          const list = plan.byHash.get(hashBytes(b, start, end));
          if (list !== undefined) {
            for (let j = 0; j < list.length; j++) {
              const e = list[j]!;
              const raw = e.raw;
              if (raw.length !== len) continue;
              let k = 0;
              while (k < len && raw[k] === b[start + k]) k++;
              if (k === len) {
                this.pos = end;
                return e;
              }
            }
          }
        }
      }
    }
    return this.fieldName();
  }

  /**
   * A struct field name: a text or a byte string. An integer names no field of Kubernetes' types
   * (none is `keyasint`): undefined is returned and `intKey` holds it, Go treats it as an unknown
   * field. A key of another type (tags included) cannot name a field: a type error.
   */
  private fieldName(): string | undefined {
    this.head();
    const major = this.major;
    if (major === 3) return this.text();
    if (major === 2) {
      const s = this.stringBytes();
      return bytesToString(s.buf, s.start, s.end);
    }
    if (major === 0 || major === 1) {
      if (this.argHi >= 0x80000000) {
        const v = major === 0 ? this.argText() : `-1-${this.argText()}`;
        throw this.typeError(MAJOR_NAMES[major]!, 'int64', `${v} overflows Go's int64`);
      }
      this.intKey = major === 0 ? this.arg : -1 - this.arg;
      return undefined;
    }
    const what = MAJOR_NAMES[major]!;
    throw this.typeError(what, 'string', `map key is of type ${what} and cannot be used to match struct field name`);
  }

  /** the last integer key fieldName() met */
  private intKey = 0;

  /** an integer key of a struct (unknown field): its duplicates are errors too */
  private seenIntKey(seen: Set<number> | undefined, i: number): Set<number> {
    const set = seen ?? new Set<number>();
    if (set.has(this.intKey)) throw new CBORDecodeError(`cbor: found duplicate map key ${this.intKey} at map element index ${i}`);
    set.add(this.intKey);
    return set;
  }

  /** the types whose Go marshallers are their own (head not read) */
  private special(n: TypeNode): unknown {
    switch (n.k) {
      case K_STRINGISH:
        // UnmarshalCBOR into a *string: null, a text or a byte string
        return this.fresh(() => this.scalar(S_STRING));
      case K_INT_OR_STRING:
        // UnmarshalCBOR: a string first (null gives the empty string), then an int32
        return this.fresh(() => {
          const start = this.pos;
          const m = this.peekByte() >>> 5;
          if (m === 0 || m === 1) return this.scalar(S_INT32); // what the string attempt would refuse
          try {
            const v = this.scalar(S_STRING);
            return v === null ? '' : v;
          } catch (e) {
            if (!(e instanceof CBORDecodeError) || e.syntax) throw e;
            this.pos = start;
            return this.scalar(S_INT32);
          }
        });
      case K_DURATION:
        // json.Unmarshaler: transcoded to JSON, then Duration's UnmarshalJSON (the JSON layer checks the string)
        return this.fresh(() => this.any());
      case K_JSON:
        if (this.peekByte() === CBOR_NULL) {
          this.pos++;
          return null;
        }
        return this.fresh(() => this.any());
      case K_RAW_EXTENSION:
        if (this.peekByte() === CBOR_NULL) {
          this.pos++;
          return null;
        }
        return this.nested(RAW_EXTENSION_PREFIX, () => this.any());
      case K_FIELDS_V1:
        if (this.peekByte() === CBOR_NULL) {
          this.pos++;
          return null;
        }
        return this.nested(FIELDS_V1_PREFIX, () => {
          const first = this.peekByte();
          const v = this.any();
          if (v === null || typeof v !== 'object' || Array.isArray(v)) {
            throw new CBORDecodeError(`cbor: cannot unmarshal ${MAJOR_NAMES[first >>> 5]} into Go value of type map[string]interface {}`);
          }
          return v;
        });
      case K_OR_BOOL:
        return this.fresh(() => {
          const first = this.peekByte();
          if (first >>> 5 === 5) return this.typed(SCHEMA_PROPS_NODE);
          if (first === 0xf5 || first === 0xf4) {
            this.pos++;
            return first === 0xf5;
          }
          this.skip();
          throw new CBORDecodeError('boolean or JSON schema expected');
        });
      case K_OR_ARRAY:
      case K_OR_STRING_ARRAY:
        return this.fresh(() => {
          const m = this.peekByte() >>> 5;
          if (m === 5) return this.typed(SCHEMA_PROPS_NODE);
          if (m === 4) return this.typed(n.k === K_OR_ARRAY ? SCHEMA_ARRAY_NODE : STRING_ARRAY_NODE);
          this.skip(); // anything else leaves the zero value, as its UnmarshalJSON does
          return null;
        });
    }
  }

  /** a value Kubernetes decodes once more when it transcodes raw types: its errors are prefixed and name no struct field */
  private nested<T>(prefix: string, fn: () => T): T {
    const field = this.rootField;
    const later = this.later;
    this.rootField = undefined;
    this.later = 0;
    try {
      return fn();
    } catch (e) {
      if (e instanceof CBORDecodeError && !e.syntax) e.message = prefix + e.message;
      throw e;
    } finally {
      this.rootField = field;
      this.later = later;
    }
  }

  /** after the top-level item: nothing may follow */
  finish(): void {
    if (this.pos !== this.b.length) {
      throw new CBORDecodeError(`cbor: ${this.b.length - this.pos} bytes of extraneous data starting at index ${this.pos}`, true);
    }
  }

  // ---- apiVersion and kind, as Kubernetes reads them first (a TypeMeta, other keys skipped)

  typeMeta(): { apiVersion: string; kind: string } {
    const out = { apiVersion: '', kind: '' };
    this.head();
    if (this.major === 6) this.withTags(() => this.typeMetaBody(out));
    else this.typeMetaBody(out);
    return out;
  }

  private typeMetaBody(out: { apiVersion: string; kind: string }): void {
    if (this.major === 7 && this.ai === 22) return;
    if (this.major !== 5) this.wrongType('v1.TypeMeta', this.major === 4 ? 'cannot decode CBOR array to struct without toarray option' : undefined);
    const seen = new Set<string>();
    const indef = this.ai === 31;
    const n = this.arg;
    this.rootGo = 'v1.TypeMeta';
    let intKeys: Set<number> | undefined;
    for (let i = 0; indef ? !this.atBreak() : i < n; i++) {
      const k = this.fieldName();
      if (k === undefined) {
        intKeys = this.seenIntKey(intKeys, i);
        this.skip();
        continue;
      }
      if (seen.has(k)) throw dupKey(k, i);
      seen.add(k);
      if (k === 'kind' || k === 'apiVersion') {
        this.rootField = k;
        const v = this.scalar(S_STRING);
        this.rootField = undefined;
        if (typeof v === 'string') out[k] = v;
      } else this.skip();
    }
  }

  // ---- watch events

  /** one watch event {type, object}: the object's bytes are kept as they are (a view) */
  watchEvent(): CBORWatchEvent {
    let type = '';
    let object: Uint8Array | undefined;
    this.head();
    const body = (): void => {
      if (this.major !== 5) this.wrongType('v1.WatchEvent');
      const seen = new Set<string>();
      const indef = this.ai === 31;
      const n = this.arg;
      let intKeys: Set<number> | undefined;
      for (let i = 0; indef ? !this.atBreak() : i < n; i++) {
        const k = this.fieldName();
        if (k === undefined) {
          intKeys = this.seenIntKey(intKeys, i);
          this.skip();
          continue;
        }
        if (seen.has(k)) throw dupKey(k, i);
        seen.add(k);
        if (k === 'type') {
          const v = this.scalar(S_STRING);
          if (typeof v === 'string') type = v;
        } else if (k === 'object') {
          const start = this.pos;
          this.skip();
          object = this.b.subarray(start, this.pos);
        } else this.skip();
      }
    };
    if (this.major === 6) this.withTags(body);
    else body();
    this.finish();
    if (!object) throw new CBORDecodeError('cbor: watch event has no object');
    return { type, object };
  }
}

const CBOR_NULL = 0xf6;
const fdv = new DataView(new ArrayBuffer(8));

/**
 * The decoder recurses: JavaScript's stack can end before Kubernetes' limit of 10000 levels
 * (a few thousand levels of maps). Such an input is either beyond the limit, which the
 * (iterative) well-formedness check then reports as Kubernetes does, or one this server cannot
 * take: a 400 saying so.
 */
function wrapStack(e: unknown): unknown {
  if (e instanceof RangeError && /call stack/i.test(e.message)) {
    return new CBORDecodeError('cbor: data item nested too deeply for this server to decode');
  }
  return e;
}

// ---------------------------------------------------------------- decoding API

/**
 * What Kubernetes' CBOR serializer reads first (metaFactory.Interpret): the whole input checked
 * for well-formedness, then the top level decoded into a TypeMeta (other keys skipped). Returns
 * the data's apiVersion and kind ('' when absent); throws, with phase 'gvk', what Kubernetes
 * reports as "unable to determine group/version/kind".
 */
export function interpretCBORTypeMeta(bytes: Uint8Array): { apiVersion: string; kind: string } {
  try {
    checkWellFormed(bytes);
    return new Decoder(bytes).typeMeta();
  } catch (e) {
    const err = wrapStack(e);
    if (err instanceof CBORDecodeError) err.phase = 'gvk';
    throw err;
  }
}

export interface CBORObjectResult {
  /** the JSON form; fields the type does not declare keep their key, with the value null */
  obj: Record<string, unknown>;
  /**
   * what Kubernetes' strict decoding reports for fields the type does not declare (the first
   * one only, as fxamacker does): "cbor: found unknown field at map element index N". Kubernetes
   * returns it as a strict decoding error: with fieldValidation=Strict a 400 "<Kind> in version
   * \"<v>\" cannot be handled as a <Kind>: strict decoding error: cbor: found unknown field at map
   * element index N"; with Warn, a warning of this text.
   */
  strictErrors: string[];
  /** the apiVersion and kind the body carries ('' when absent) */
  apiVersion: string;
  kind: string;
}

/** a CBORDecodeError of phase 'decode' carries the apiVersion and kind of the data */
export interface CBORDecodeErrorWithTypeMeta extends CBORDecodeError {
  dataTypeMeta?: { apiVersion: string; kind: string };
}

/**
 * The JSON form of a CBOR body of a type (canonical name, 'io.k8s.api.core.v1.Pod'), with or
 * without the self-described tag. Strings come out as strings ([]byte fields as base64 text),
 * integers and floats as numbers, a null top level as {} (Kubernetes decodes it as the zero
 * object). Fields the type does not declare keep their key with the value null (Kubernetes never
 * decodes their values; fieldValidation reports them) and are named in `strictErrors`.
 * An unknown type name decodes without a schema.
 * Throws CBORDecodeError (400) with Kubernetes' message and phase.
 */
export function decodeCBORObject(typeName: string, bytes: Uint8Array): CBORObjectResult {
  const plan = planOf(typeName);
  if (!plan) {
    // no schema (custom resources): Kubernetes decodes into an unstructured map first
    let v: unknown;
    try {
      v = decodeCBORValue(bytes);
      if (v !== null && (typeof v !== 'object' || Array.isArray(v))) {
        throw new CBORDecodeError(`cbor: cannot unmarshal ${MAJOR_NAMES[stripSelfDescribedTag(bytes)[0]! >>> 5]} into Go value of type map[string]interface {}`);
      }
    } catch (e) {
      if (!(e instanceof CBORDecodeError)) throw e;
      const tm = interpretCBORTypeMeta(bytes);
      e.phase = 'decode';
      (e as CBORDecodeErrorWithTypeMeta).dataTypeMeta = tm;
      throw e;
    }
    const o = (v ?? {}) as Record<string, unknown>;
    return { obj: o, strictErrors: [], apiVersion: typeof o.apiVersion === 'string' ? o.apiVersion : '', kind: typeof o.kind === 'string' ? o.kind : '' };
  }
  const d = new Decoder(bytes);
  try {
    const v = (d.struct(plan, true) ?? {}) as Record<string, unknown>;
    d.finish();
    const apiVersion = typeof v.apiVersion === 'string' ? v.apiVersion : '';
    const kind = typeof v.kind === 'string' ? v.kind : '';
    return { obj: v, strictErrors: d.unknownField ? [d.unknownField] : [], apiVersion, kind };
  } catch (e) {
    const err = wrapStack(e);
    if (!(err instanceof CBORDecodeError)) throw err;
    // Kubernetes reads apiVersion and kind first, after checking well-formedness: its errors come first
    const tm = interpretCBORTypeMeta(bytes);
    err.phase = 'decode';
    (err as CBORDecodeErrorWithTypeMeta).dataTypeMeta = tm;
    throw err;
  }
}

/** decodeCBORObject's JSON form alone */
export function decodeCBOR(typeName: string, bytes: Uint8Array): unknown {
  return decodeCBORObject(typeName, bytes).obj;
}

/**
 * A CBOR body without a schema, as Go decodes it into an interface{}: maps (string keys only) to
 * objects, byte and text strings to strings (byte strings inside tag 22 to base64, 21 base64url,
 * 23 hex), integers and floats to numbers, tags 0 and 1 to RFC 3339 times, other tags to their
 * content. Throws CBORDecodeError.
 */
export function decodeCBORValue(bytes: Uint8Array): unknown {
  const d = new Decoder(bytes);
  try {
    if (bytes.length === 0) throw new CBORDecodeError('EOF', true);
    const v = d.any();
    d.finish();
    return v;
  } catch (e) {
    const err = wrapStack(e);
    if (!(err instanceof CBORDecodeError) || err.syntax) throw err;
    checkWellFormed(bytes); // a syntax error anywhere is what Kubernetes reports
    throw err;
  }
}

/**
 * An `application/apply-patch+cbor` body: the apply configuration in the JSON form the
 * server-side apply code expects (an unstructured object). Kubernetes decodes it into an
 * interface{} and then a map[string]interface{}; it answers errors with 400
 * "error decoding patch: <message>".
 */
export function decodeApplyPatchCBOR(bytes: Uint8Array): Record<string, unknown> {
  const v = decodeCBORValue(bytes);
  if (v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) {
    const top = stripSelfDescribedTag(bytes)[0]!;
    throw new CBORDecodeError(`cbor: cannot unmarshal ${MAJOR_NAMES[top >>> 5]} into Go value of type map[string]interface {}`);
  }
  return v as Record<string, unknown>;
}

/**
 * The message of the 400 BadRequest Status Kubernetes returns when a CBOR request body fails to
 * decode (k8s.io/apiserver handlers/rest.go transformDecodeError):
 *  - phase 'gvk': `the object provided is unrecognized (must be of type <Kind>): unable to
 *    determine group/version/kind: <message> (<hex of the body, 30 bytes at most> ...)`;
 *  - phase 'decode': `<Kind of the data> in version "<version of the data>" cannot be handled as
 *    a <Kind>: <message>`, the data's kind and version defaulted from the endpoint's.
 */
export function cborDecodeStatusMessage(err: CBORDecodeError, endpoint: { group?: string; version: string; kind: string }, body: Uint8Array): string {
  if (err.phase === 'gvk') {
    const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
    const summary = body.length === 0 ? '<empty>' : body.length > 30 ? `${hex(body.subarray(0, 30))} ...` : hex(body);
    return `the object provided is unrecognized (must be of type ${endpoint.kind}): unable to determine group/version/kind: ${err.message} (${summary})`;
  }
  const tm = (err as CBORDecodeErrorWithTypeMeta).dataTypeMeta;
  const kind = tm?.kind || endpoint.kind;
  let version = endpoint.version;
  if (tm?.apiVersion) {
    const slash = tm.apiVersion.indexOf('/');
    version = slash < 0 ? tm.apiVersion : tm.apiVersion.slice(slash + 1);
    if (!version) version = endpoint.version;
  }
  return `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${endpoint.kind}: ${err.message}`;
}

// ---------------------------------------------------------------- sequences and watch events

export interface CBORWatchEvent {
  type: string;
  /** the event's object: its full body, self-described tag included (a view of the input) */
  object: Uint8Array;
}

/** every data item of a CBOR sequence (RFC 8742), each decoded without a schema */
export function decodeCBORSequence(bytes: Uint8Array): unknown[] {
  const s = new CBORSequenceSplitter();
  const items = s.push(bytes);
  if (s.buffered) throw new CBORDecodeError(`cbor: sequence ends inside a data item (${s.buffered} bytes left over)`, true);
  return items.map((i) => decodeCBORValue(i));
}

/** one watch event data item: {type, object}, the object left encoded */
export function decodeCBORWatchEvent(item: Uint8Array): CBORWatchEvent {
  try {
    return new Decoder(item).watchEvent();
  } catch (e) {
    const err = wrapStack(e);
    if (err instanceof CBORDecodeError && !err.syntax) checkWellFormed(item);
    throw err;
  }
}

/** every event of an `application/cbor-seq` watch body */
export function decodeCBORWatchEvents(bytes: Uint8Array): CBORWatchEvent[] {
  const s = new CBORSequenceSplitter();
  const items = s.push(bytes);
  if (s.buffered) throw new CBORDecodeError(`cbor: watch stream ends inside an event (${s.buffered} bytes left over)`, true);
  return items.map(decodeCBORWatchEvent);
}

/** Reads an `application/cbor-seq` watch stream chunk by chunk: push() returns the events completed so far. */
export class CBORWatchEventDecoder {
  private readonly splitter: CBORSequenceSplitter;

  constructor(maxEvent?: number) {
    this.splitter = new CBORSequenceSplitter(maxEvent);
  }

  push(chunk: Uint8Array): CBORWatchEvent[] {
    return this.splitter.push(chunk).map(decodeCBORWatchEvent);
  }

  /** bytes received but not yet part of a complete event */
  get buffered(): number {
    return this.splitter.buffered;
  }
}
