// Compiles TypeDecls into protobuf encoder and decoder functions, once per type.
//
// Each type gets a generated function (new Function) for each direction, specialised to its
// fields: no reflection over the declaration at encode or decode time. Types are compiled
// lazily, on first use; a type that refers to another refers to it through a slot in an array,
// so recursive types (JSONSchemaProps) and types compiled later both work.
//
// Wire rules (what Go's gogo-protobuf marshallers of Kubernetes types write):
//  - fields in ascending field-number order;
//  - a non-pointer scalar (string, bool, int32, int64, double) is always written, zero or not;
//  - a non-pointer struct is always written, as an empty message when it is the zero value;
//  - a pointer (nullable scalar or struct) is written only when set (JSON value not null);
//  - a slice writes one field per element (proto2, not packed); a nil or empty slice writes nothing;
//  - []byte is written when not nil (a JSON "" is an empty, non-nil slice);
//  - a map writes one entry {1 key, 2 value} per key, keys sorted bytewise (Go's sort.Strings);
//    the key and the value are always written, except a nil []byte or nil wrapper value;
//  - a `wrapper` slice (a named slice type with its own message, e.g. Verbs, ExtraValue) is a
//    message holding the elements as field 1, written whenever the slice is not nil;
//  - an inline (embedded) struct is a sub-message built from the same JSON object.
//
// Decoding produces what Go's encoding/json prints for the decoded Go value (see
// protobuf.ts for the presence and zero-value rules).
import { parseJSON, stringifyJSON } from './int64.js';
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from './depth.js';
import type { FieldDecl, Scalar, Special, TypeDecl, TypeRef } from '../schema/model.js';
import { ProtobufError, ProtobufNotSupportedError, Reader, RevWriter } from './protobuf-wire.js';
import {
  GO_ZERO_TIME_SECONDS,
  
  formatMicroTime,
  formatTime,
  parseGoDuration,
  parseRFC3339,
} from './protobuf-special.js';
import { goFormatDuration } from '../machinery/gostrings.js';

export type TypeLookup = (name: string) => TypeDecl | undefined;
export type EncFn = (w: RevWriter, o: any) => void;
export type DecFn = (r: Reader, end: number, into?: Record<string, unknown>) => any;

/** the apiextensions v1 JSONSchemaProps type, used by the JSONSchemaPropsOr* specials */
export const JSON_SCHEMA_PROPS = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps';

/** The 4-byte magic that starts every Kubernetes protobuf body: "k8s\0". */
export const PROTOBUF_PREFIX: Uint8Array = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

export interface CompilerHooks {
  /** decodes a RawExtension whose raw bytes are a prefixed protobuf object (watch events) */
  decodeNestedObject?: (raw: Uint8Array) => unknown;
  /**
   * How an absent slice or map without omitempty decodes. 'null' (the default) is Go's JSON of a
   * nil slice or map (EndpointSlice "endpoints": null, an empty PodList "items": null); 'empty'
   * gives [] and {} instead, for JS consumers that iterate without checking.
   */
  nilCollections?: 'null' | 'empty';
}

// ---------------------------------------------------------------- helpers used by generated code

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v)}`;
  return `${typeof v} ${String(v)}`;
}

function bad(v: unknown, want: string, label: string): never {
  throw new ProtobufError(`${label}: expected ${want}, got ${describe(v)}`);
}

function hasSurrogate(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) return true;
  }
  return false;
}

/** compares as Go compares strings: by their UTF-8 bytes (i.e. by code point) */
function cmpCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // UTF-16 order differs from code point order only between surrogates and U+E000..U+FFFF
    if (x >= 0xd800) x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
    if (y >= 0xd800) y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    return x - y;
  }
  return a.length - b.length;
}

const H = {
  bad,
  EMPTY: Object.freeze({}) as Record<string, unknown>,
  int32(v: unknown, label: string): number {
    if (typeof v === 'number' && Number.isInteger(v)) bad(v, 'an int32 (out of range)', label);
    return bad(v, 'an integer', label);
  },
  i64(w: RevWriter, v: unknown, label: string): void {
    if (typeof v === 'number') {
      if (Number.isInteger(v) && Math.abs(v) <= Number.MAX_SAFE_INTEGER) return w.i64(v);
      if (Number.isInteger(v) && Math.abs(v) < 2 ** 63) return w.i64big(BigInt(v));
    } else if (typeof v === 'bigint') {
      if (v >= -(2n ** 63n) && v < 2n ** 63n) return w.i64big(v);
    }
    bad(v, 'an int64', label);
  },
  bytes(v: unknown, label: string): Uint8Array {
    if (typeof v === 'string') return Buffer.from(v, 'base64');
    if (v instanceof Uint8Array) return v;
    return bad(v, 'a base64 string', label);
  },
  arr(v: unknown, label: string): unknown[] {
    return Array.isArray(v) ? v : bad(v, 'an array', label);
  },
  obj(v: unknown, label: string): Record<string, unknown> {
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : bad(v, 'an object', label);
  },
  /** the keys of a JSON object in the order Go writes a map: sorted by bytes */
  keys(m: Record<string, unknown>): string[] {
    const ks = Object.keys(m);
    if (ks.length > 1) {
      ks.sort();
      for (const k of ks) {
        if (hasSurrogate(k)) {
          ks.sort(cmpCodePoints);
          break;
        }
      }
    }
    return ks;
  },
  /** sets a key that may be "__proto__" as an own property */
  set(m: Record<string, unknown>, k: string, v: unknown): void {
    if (k === '__proto__') Object.defineProperty(m, k, { value: v, enumerable: true, writable: true, configurable: true });
    else m[k] = v;
  },
  wrongWire(tag: number, label: string): never {
    throw new ProtobufError(`protobuf: ${label}: field ${tag >>> 3} has wrong wire type ${tag & 7}`);
  },
};

// ---------------------------------------------------------------- code generation helpers

const WT_VARINT = 0;
const WT_I64 = 1;
const WT_LEN = 2;

function scalarWireType(s: Scalar): number {
  switch (s) {
    case 'string':
    case 'bytes':
      return WT_LEN;
    case 'double':
      return WT_I64;
    default:
      return WT_VARINT;
  }
}

function wireTypeOf(t: TypeRef): number {
  return t.kind === 'scalar' ? scalarWireType(t.scalar) : WT_LEN;
}

/** code that writes a tag (backwards: after its value) */
function tagCode(field: number, wt: number): string {
  const t = (field << 3) | wt;
  return t < 0x80 ? `w.byte(${t});` : `w.u32(${t});`;
}

function scalarZero(s: Scalar): string {
  switch (s) {
    case 'string':
      return `''`;
    case 'bool':
      return 'false';
    case 'bytes':
      return 'null';
    default:
      return '0';
  }
}

const SPECIAL_ZERO: Record<Special, unknown> = {
  Time: null,
  MicroTime: null,
  Quantity: '0',
  IntOrString: 0,
  RawExtension: null,
  FieldsV1: null,
  Duration: '0s',
  JSON: null,
  JSONSchemaPropsOrArray: null,
  JSONSchemaPropsOrBool: false,
  JSONSchemaPropsOrStringArray: null,
};

function ident(s: string): string {
  return s.replace(/[^A-Za-z0-9_$]/g, '_');
}

/**
 * Compiles and caches the codec functions of the TypeDecls that a lookup function knows.
 * One instance per type universe (the generated schema, or a test's hand-written declarations).
 */
export class ProtobufCompiler {
  private readonly index = new Map<string, number>();
  private readonly decls: TypeDecl[] = [];
  /** encoders by slot: write the message's fields (no length, no tag) */
  readonly enc: EncFn[] = [];
  /** decoders by slot: read fields up to `end`, return the JSON form (or fill `into`) */
  readonly dec: DecFn[] = [];
  private readonly specials: SpecialCodecs;

  constructor(
    private readonly lookup: TypeLookup,
    private readonly hooks: CompilerHooks = {},
  ) {
    this.specials = makeSpecials(this);
  }

  /** the slot of a type, registering it (not yet compiled) on first use */
  slot(name: string): number {
    const known = this.index.get(name);
    if (known !== undefined) return known;
    const decl = this.lookup(name);
    if (!decl) throw new ProtobufError(`protobuf: unknown type ${name}`);
    const i = this.decls.length;
    this.index.set(name, i);
    this.decls.push(decl);
    const self = this;
    this.enc.push(function lazyEncode(w, o) {
      self.compileEncoder(i);
      return self.enc[i](w, o);
    });
    this.dec.push(function lazyDecode(r, end, into) {
      self.compileDecoder(i);
      return self.dec[i](r, end, into);
    });
    return i;
  }

  decl(name: string): TypeDecl {
    return this.decls[this.slot(name)];
  }

  /** throws ProtobufNotSupportedError when the type has no protobuf message */
  checkProto(name: string): number {
    const i = this.slot(name);
    const d = this.decls[i];
    if (d.noProto) throw new ProtobufNotSupportedError(`${d.name.split('.').slice(-2).join('.')}`);
    return i;
  }

  decodeNested(raw: Uint8Array): unknown {
    if (!this.hooks.decodeNestedObject) {
      throw new ProtobufError('protobuf: a RawExtension holds a protobuf object, and no decoder for nested objects is configured');
    }
    return this.hooks.decodeNestedObject(raw);
  }

  // ------------------------------------------------------------ encoder

  private compileEncoder(i: number): void {
    const d = this.decls[i];
    const short = d.name.split('.').pop()!;
    const consts: unknown[] = [];
    const lit = (v: unknown): string => {
      consts.push(v);
      return `C[${consts.length - 1}]`;
    };
    let n = 0;
    const tmp = (p: string) => `${p}${n++}`;
    const fields = protoFields(d).sort((a, b) => b.proto! - a.proto!);
    const body: string[] = [];

    // code that writes value `x` (a JSON value) of type t followed by tag(field), with nulls
    // either written as the zero value ('zero') or left out ('skip')
    const writeValue = (t: TypeRef, x: string, field: number, nulls: 'zero' | 'skip', label: string): string => {
      const L = lit(label);
      const tag = tagCode(field, wireTypeOf(t));
      switch (t.kind) {
        case 'scalar': {
          if (t.scalar === 'bytes') return `if (${x} != null) { w.bytes(H.bytes(${x}, ${L})); ${tag} }`;
          const chk = scalarCheck(t.scalar, x, L);
          const put = scalarPut(t.scalar, chk, L);
          if (nulls === 'skip') return `if (${x} != null) { ${put} ${tag} }`;
          return `if (${x} != null) { ${put} } else { ${scalarPut(t.scalar, scalarZero(t.scalar), L)} } ${tag}`;
        }
        case 'object': {
          const k = this.slot(t.name);
          const s = tmp('s');
          if (nulls === 'skip') return `if (${x} != null) { const ${s} = w.len(); E[${k}](w, H.obj(${x}, ${L})); w.u32(w.len() - ${s}); ${tag} }`;
          // a zero Go struct is not an empty message: its non-pointer fields are written as zeros
          return `{ const ${s} = w.len(); E[${k}](w, ${x} == null ? H.EMPTY : H.obj(${x}, ${L})); w.u32(w.len() - ${s}); ${tag} }`;
        }
        case 'special': {
          const s = tmp('s');
          const fn = `S.enc${t.special}`;
          if (nulls === 'skip') return `if (${x} != null) { const ${s} = w.len(); ${fn}(w, ${x}, ${L}); w.u32(w.len() - ${s}); ${tag} }`;
          return `{ const ${s} = w.len(); ${fn}(w, ${x}, ${L}); w.u32(w.len() - ${s}); ${tag} }`;
        }
        case 'array': {
          if (!t.wrapper) throw new ProtobufError(`protobuf: ${label}: a nested array needs a wrapper message`);
          // a wrapper message: the elements as its repeated field 1
          const s = tmp('s');
          const a = tmp('a');
          const j = tmp('j');
          const e = tmp('e');
          const inner = writeValue(t.items, e, 1, 'zero', label + '[]');
          const open = `{ const ${s} = w.len(); const ${a} = ${x} == null ? [] : H.arr(${x}, ${L}); for (let ${j} = ${a}.length - 1; ${j} >= 0; ${j}--) { const ${e} = ${a}[${j}]; ${inner} } w.u32(w.len() - ${s}); ${tag} }`;
          return nulls === 'skip' ? `if (${x} != null) ${open}` : open;
        }
        case 'map':
          throw new ProtobufError(`protobuf: ${label}: a map cannot be an element of an array or a map`);
      }
    };

    for (const f of fields) {
      const label = `${short}.${f.name}`;
      const L = lit(label);
      const v = tmp('v');
      const t = f.type;
      const p = f.proto!;
      if (f.inline) {
        if (t.kind !== 'object') throw new ProtobufError(`protobuf: ${label}: inline field must be a struct`);
        const k = this.slot(t.name);
        const s = tmp('s');
        body.push(`{ const ${s} = w.len(); E[${k}](w, o); w.u32(w.len() - ${s}); ${tagCode(p, WT_LEN)} }`);
        continue;
      }
      body.push(`const ${v} = o[${JSON.stringify(f.name)}];`);
      switch (t.kind) {
        case 'scalar':
          body.push(writeValue(t, v, p, f.nullable ? 'skip' : 'zero', label));
          break;
        case 'object':
        case 'special':
          body.push(writeValue(t, v, p, f.nullable ? 'skip' : 'zero', label));
          break;
        case 'array': {
          if (t.wrapper) {
            body.push(writeValue(t, v, p, 'skip', label));
            break;
          }
          const a = tmp('a');
          const j = tmp('j');
          const e = tmp('e');
          body.push(
            `if (${v} != null) { const ${a} = H.arr(${v}, ${L}); for (let ${j} = ${a}.length - 1; ${j} >= 0; ${j}--) { const ${e} = ${a}[${j}]; ${writeValue(t.items, e, p, 'zero', label + '[]')} } }`,
          );
          break;
        }
        case 'map': {
          const m = tmp('m');
          const ks = tmp('ks');
          const j = tmp('j');
          const key = tmp('k');
          const e = tmp('e');
          const s = tmp('s');
          const vt = t.values;
          // a nil []byte or nil wrapper value is left out of the entry; everything else is written
          const nulls = (vt.kind === 'scalar' && vt.scalar === 'bytes') || (vt.kind === 'array' && vt.wrapper) ? 'skip' : 'zero';
          if (vt.kind === 'array' && !vt.wrapper) throw new ProtobufError(`protobuf: ${label}: map values that are arrays need a wrapper message`);
          body.push(
            `if (${v} != null) { const ${m} = H.obj(${v}, ${L}); const ${ks} = H.keys(${m}); for (let ${j} = ${ks}.length - 1; ${j} >= 0; ${j}--) { const ${key} = ${ks}[${j}]; const ${e} = ${m}[${key}]; const ${s} = w.len(); ${writeValue(vt, e, 2, nulls, label + '{}')} w.str(${key}); w.byte(10); w.u32(w.len() - ${s}); ${tagCode(p, WT_LEN)} } }`,
          );
          break;
        }
      }
    }

    const src = `return function enc_${ident(short)}(w, o) {\n${body.join('\n')}\n};`;
    const make = new Function('E', 'H', 'S', 'C', src) as (...a: unknown[]) => EncFn;
    this.enc[i] = make(this.enc, H, this.specials, consts);
  }

  // ------------------------------------------------------------ decoder

  private compileDecoder(i: number): void {
    const d = this.decls[i];
    const short = d.name.split('.').pop()!;
    const consts: unknown[] = [];
    const lit = (v: unknown): string => {
      consts.push(v);
      return `C[${consts.length - 1}]`;
    };
    let n = 0;
    const tmp = (p: string) => `${p}${n++}`;
    const protoFs = protoFields(d);
    const known = new Uint8Array(Math.max(0, ...protoFs.map((f) => f.proto!)) + 1);
    for (const f of protoFs) {
      if (known[f.proto!]) throw new ProtobufError(`protobuf: ${d.name}: field number ${f.proto} is declared twice`);
      known[f.proto!] = 1;
    }
    const LT = lit(short);
    const emptyNil = this.hooks.nilCollections === 'empty';
    const nilArray = emptyNil ? '[]' : 'null';
    const nilMap = emptyNil ? '{}' : 'null';

    // code reading one value of type t at the reader (tag already read), within `end`,
    // handing the expression of the value to `put`
    const readValue = (t: TypeRef, end: string, put: (expr: string) => string, label: string): string => {
      switch (t.kind) {
        case 'scalar':
          return put(scalarRead(t.scalar, end));
        case 'object': {
          const k = this.slot(t.name);
          const e = tmp('e');
          return `{ const ${e} = r.sub(${end}); ${put(`D[${k}](r, ${e})`)} }`;
        }
        case 'special': {
          const e = tmp('e');
          return `{ const ${e} = r.sub(${end}); ${put(`S.dec${t.special}(r, ${e})`)} }`;
        }
        case 'array': {
          if (!t.wrapper) throw new ProtobufError(`protobuf: ${label}: a nested array needs a wrapper message`);
          const e = tmp('e');
          const a = tmp('a');
          const tg = tmp('t');
          const itemTag = (1 << 3) | wireTypeOf(t.items);
          const packed = isPackable(t.items) ? `else if (${tg} === 10) { const pe = r.sub(${e}); while (r.pos < pe) ${a}.push(${scalarRead((t.items as { scalar: Scalar }).scalar, 'pe')}); r.checkEnd(pe, ${lit(label)}); }` : '';
          return `{ const ${e} = r.sub(${end}); const ${a} = []; while (r.pos < ${e}) { const ${tg} = r.u32(); if (${tg} === ${itemTag}) { ${readValue(t.items, e, (x) => `${a}.push(${x});`, label + '[]')} } ${packed} else { if ((${tg} >>> 3) === 1) H.wrongWire(${tg}, ${lit(label)}); r.skip(${tg}, ${e}); } } r.checkEnd(${e}, ${lit(label)}); ${put(a)} }`;
        }
        case 'map':
          throw new ProtobufError(`protobuf: ${label}: a map cannot be an element of an array or a map`);
      }
    };

    // the JSON value of the zero Go value of type t (for absent map values and struct fields)
    const zeroExpr = (t: TypeRef): string => {
      switch (t.kind) {
        case 'scalar':
          return scalarZero(t.scalar);
        case 'object':
          return `D[${this.slot(t.name)}](r, r.pos)`;
        case 'special':
          return JSON.stringify(SPECIAL_ZERO[t.special]);
        default:
          return 'null';
      }
    };

    const vars: string[] = [];
    const cases: string[] = [];
    const assemble: string[] = [];

    for (const f of d.fields) {
      if (f.proto === undefined) continue;
      const label = `${short}.${f.name}`;
      const L = lit(label);
      const fv = tmp('f');
      const t = f.type;
      const p = f.proto;
      const K = JSON.stringify(f.name);
      if (f.inline) {
        if (t.kind !== 'object') throw new ProtobufError(`protobuf: ${label}: inline field must be a struct`);
        const k = this.slot(t.name);
        // remember where the sub-message lies; decode it into the parent object at its place
        // in field order, as Go's encoding/json flattens an embedded struct
        vars.push(`${fv}s`, `${fv}e`);
        cases.push(`case ${(p << 3) | WT_LEN}: { const e = r.sub(end); ${fv}s = r.pos; ${fv}e = e; r.pos = e; break; }`);
        assemble.push(
          `{ const back = r.pos; if (${fv}s !== undefined) { r.pos = ${fv}s; D[${k}](r, ${fv}e, o); } else D[${k}](r, r.pos, o); r.pos = back; }`,
        );
        continue;
      }
      vars.push(fv);
      const omit = f.omitEmpty;
      switch (t.kind) {
        case 'scalar': {
          const wt = scalarWireType(t.scalar);
          cases.push(`case ${(p << 3) | wt}: ${fv} = ${scalarRead(t.scalar, 'end')}; break;`);
          if (t.scalar === 'bytes') {
            // a []byte: nil prints null; empty is left out by omitempty
            assemble.push(omit ? `if (${fv} !== undefined && ${fv} !== '') o[${K}] = ${fv};` : `o[${K}] = ${fv} === undefined ? null : ${fv};`);
          } else if (f.nullable) {
            assemble.push(`if (${fv} !== undefined) o[${K}] = ${fv};${omit ? '' : ` else o[${K}] = null;`}`);
          } else {
            const z = scalarZero(t.scalar);
            assemble.push(omit ? `if (${fv} !== undefined && ${fv} !== ${z}) o[${K}] = ${fv};` : `o[${K}] = ${fv} === undefined ? ${z} : ${fv};`);
          }
          break;
        }
        case 'object':
        case 'special': {
          cases.push(`case ${(p << 3) | WT_LEN}: ${readValue(t, 'end', (x) => `${fv} = ${x};`, label)} break;`);
          if (f.nullable) {
            assemble.push(`if (${fv} !== undefined) o[${K}] = ${fv};${omit ? '' : ` else o[${K}] = null;`}`);
          } else if (t.kind === 'object') {
            assemble.push(`o[${K}] = ${fv} === undefined ? ${zeroExpr(t)} : ${fv};`);
          } else {
            // a struct with its own MarshalJSON: printed always, except that a zero value that
            // prints as null (Time, MicroTime, RawExtension, FieldsV1, JSON) is left out under
            // omitempty, as Go's omitzero does (Kubernetes >= 1.34 for creationTimestamp)
            const z = JSON.stringify(SPECIAL_ZERO[t.special]);
            const val = tmp('x');
            assemble.push(
              `{ const ${val} = ${fv} === undefined ? ${z} : ${fv}; if (${val} !== null) o[${K}] = ${val};${omit ? '' : ` else o[${K}] = null;`} }`,
            );
          }
          break;
        }
        case 'array': {
          if (t.wrapper) {
            cases.push(`case ${(p << 3) | WT_LEN}: ${readValue(t, 'end', (x) => `${fv} = ${fv} === undefined ? ${x} : ${fv}.concat(${x});`, label)} break;`);
            assemble.push(
              omit
                ? `if (${fv} !== undefined && ${fv}.length > 0) o[${K}] = ${fv};`
                : `o[${K}] = ${fv} === undefined ? ${nilArray} : ${fv};`,
            );
            break;
          }
          const it = t.items;
          const wt = wireTypeOf(it);
          cases.push(`case ${(p << 3) | wt}: ${readValue(it, 'end', (x) => `(${fv} ??= []).push(${x});`, label + '[]')} break;`);
          if (isPackable(it)) {
            const sc = (it as { scalar: Scalar }).scalar;
            cases.push(
              `case ${(p << 3) | WT_LEN}: { const pe = r.sub(end); const a = (${fv} ??= []); while (r.pos < pe) a.push(${scalarRead(sc, 'pe')}); r.checkEnd(pe, ${L}); break; }`,
            );
          }
          assemble.push(`if (${fv} !== undefined) o[${K}] = ${fv};${omit ? '' : ` else o[${K}] = ${nilArray};`}`);
          break;
        }
        case 'map': {
          const vt = t.values;
          if (vt.kind === 'array' && !vt.wrapper) throw new ProtobufError(`protobuf: ${label}: map values that are arrays need a wrapper message`);
          const vwt = wireTypeOf(vt);
          const valueTag = (2 << 3) | vwt;
          const e = tmp('e');
          const key = tmp('k');
          const mv = tmp('mv');
          const tg = tmp('t');
          const absent = vt.kind === 'scalar' && vt.scalar === 'bytes' ? 'null' : zeroExpr(vt);
          cases.push(
            `case ${(p << 3) | WT_LEN}: { const ${e} = r.sub(end); let ${key} = '', ${mv}; while (r.pos < ${e}) { const ${tg} = r.u32(); if (${tg} === 10) ${key} = r.str(${e}); else if (${tg} === ${valueTag}) { ${readValue(vt, e, (x) => `${mv} = ${x};`, label + '{}')} } else { if ((${tg} >>> 3) <= 2) H.wrongWire(${tg}, ${L}); r.skip(${tg}, ${e}); } } r.checkEnd(${e}, ${L}); if (${mv} === undefined) ${mv} = ${absent}; if (${key} !== '__proto__') (${fv} ??= {})[${key}] = ${mv}; else H.set(${fv} ??= {}, ${key}, ${mv}); break; }`,
          );
          assemble.push(`if (${fv} !== undefined) o[${K}] = ${fv};${omit ? '' : ` else o[${K}] = ${nilMap};`}`);
          break;
        }
      }
    }

    const K = lit(known);
    const src = `return function dec_${ident(short)}(r, end, into) {
${vars.length ? `let ${vars.join(', ')};` : ''}
while (r.pos < end) {
  const t = r.u32();
  switch (t) {
${cases.join('\n')}
    default:
      if (${K}[t >>> 3] === 1) H.wrongWire(t, ${LT});
      if (t < 8) throw new S.Err('protobuf: ' + ${LT} + ': illegal field number 0');
      r.skip(t, end);
  }
}
r.checkEnd(end, ${LT});
const o = into === undefined ? {} : into;
${assemble.join('\n')}
return o;
};`;
    const make = new Function('D', 'H', 'S', 'C', src) as (...a: unknown[]) => DecFn;
    this.dec[i] = make(this.dec, H, this.specials, consts);
  }
}

function protoFields(d: TypeDecl): FieldDecl[] {
  return d.fields.filter((f) => f.proto !== undefined);
}

function isPackable(t: TypeRef): boolean {
  return t.kind === 'scalar' && t.scalar !== 'string' && t.scalar !== 'bytes';
}

function scalarCheck(s: Scalar, x: string, L: string): string {
  switch (s) {
    case 'string':
      return `(typeof ${x} === 'string' ? ${x} : H.bad(${x}, 'a string', ${L}))`;
    case 'bool':
      return `(typeof ${x} === 'boolean' ? ${x} : H.bad(${x}, 'a boolean', ${L}))`;
    case 'int32':
      return `(typeof ${x} === 'number' && (${x} | 0) === ${x} ? ${x} : H.int32(${x}, ${L}))`;
    case 'double':
      return `(typeof ${x} === 'number' ? ${x} : H.bad(${x}, 'a number', ${L}))`;
    default:
      return x; // int64 is checked by its writer
  }
}

function scalarPut(s: Scalar, x: string, L: string): string {
  switch (s) {
    case 'string':
      return `w.str(${x});`;
    case 'bool':
      return `w.bool(${x});`;
    case 'int32':
      return `w.i32(${x});`;
    case 'int64':
      return `H.i64(w, ${x}, ${L});`;
    case 'double':
      return `w.dbl(${x});`;
    case 'bytes':
      return `w.bytes(H.bytes(${x}, ${L}));`;
  }
}

function scalarRead(s: Scalar, end: string): string {
  switch (s) {
    case 'string':
      return `r.str(${end})`;
    case 'bytes':
      return `r.base64(${end})`;
    case 'bool':
      return 'r.bool()';
    case 'int32':
      return 'r.i32()';
    case 'int64':
      return 'r.i64exact()';
    case 'double':
      return 'r.dbl()';
  }
}

// ---------------------------------------------------------------- special types

type SpecialCodecs = Record<string, unknown>;

function parseJSONBytes(raw: Uint8Array, label: string): unknown {
  const text = (Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)).toString('utf8');
  if (jsonNestsDeeperThan(text)) throw new ProtobufError(`protobuf: ${label} holds JSON nested more than ${MAX_JSON_DEPTH} levels deep`);
  try {
    return parseJSON(text);
  } catch (e) {
    throw new ProtobufError(`protobuf: ${label} holds invalid JSON: ${(e as Error).message}`);
  }
}

function hasPrefix(raw: Uint8Array): boolean {
  return raw.length >= 4 && raw[0] === 0x6b && raw[1] === 0x38 && raw[2] === 0x73 && raw[3] === 0x00;
}

function makeSpecials(c: ProtobufCompiler): SpecialCodecs {
  let jspSlot = -1;
  const jsp = () => (jspSlot >= 0 ? jspSlot : (jspSlot = c.slot(JSON_SCHEMA_PROPS)));
  const encSchema = (w: RevWriter, v: unknown, field: number, label: string) => {
    const s = w.len();
    c.enc[jsp()](w, H.obj(v, label));
    w.u32(w.len() - s);
    w.byte((field << 3) | WT_LEN);
  };
  const decSchema = (r: Reader, end: number) => {
    const e = r.sub(end);
    return c.dec[jsp()](r, e);
  };
  const skipOrWrong = (r: Reader, t: number, end: number, max: number, label: string) => {
    if (t >>> 3 <= max && t >>> 3 >= 1) H.wrongWire(t, label);
    r.skip(t, end);
  };
  // {1 seconds int64, 2 nanos int32}
  const readTimestamp = (r: Reader, end: number, label: string): [number, number] => {
    let s = 0;
    let ns = 0;
    while (r.pos < end) {
      const t = r.u32();
      if (t === 8) s = r.i64();
      else if (t === 16) ns = r.i32();
      else skipOrWrong(r, t, end, 2, label);
    }
    r.checkEnd(end, label);
    return [s, ns];
  };
  const encJSONRaw = (w: RevWriter, v: unknown) => {
    if (v === undefined || v === null) return;
    w.str(stringifyJSON(v));
    w.byte(10);
  };
  const readRaw = (r: Reader, end: number, label: string): Uint8Array | undefined => {
    let raw: Uint8Array | undefined;
    while (r.pos < end) {
      const t = r.u32();
      if (t === 10) raw = r.bytesView(end);
      else skipOrWrong(r, t, end, 1, label);
    }
    r.checkEnd(end, label);
    return raw;
  };

  return {
    Err: ProtobufError,

    encTime(w: RevWriter, v: unknown, label: string) {
      if (v == null) return;
      if (typeof v !== 'string') bad(v, 'an RFC 3339 time string', label);
      const { seconds, nanos } = parseRFC3339(v, label);
      if (seconds === GO_ZERO_TIME_SECONDS && nanos === 0) return; // Go's zero time: empty message
      // Time keeps whole seconds only (Go's ProtoTime leaves nanos at 0)
      w.byte(0);
      w.byte(16);
      w.i64(seconds);
      w.byte(8);
    },
    decTime(r: Reader, end: number) {
      if (r.pos === end) return null;
      const [s] = readTimestamp(r, end, 'Time');
      return s === GO_ZERO_TIME_SECONDS ? null : formatTime(s);
    },
    encMicroTime(w: RevWriter, v: unknown, label: string) {
      if (v == null) return;
      if (typeof v !== 'string') bad(v, 'an RFC 3339 time string', label);
      const { seconds, nanos } = parseRFC3339(v, label);
      if (seconds === GO_ZERO_TIME_SECONDS && nanos === 0) return;
      w.i32(nanos - (nanos % 1000)); // truncated to microseconds, as ProtoMicroTime does
      w.byte(16);
      w.i64(seconds);
      w.byte(8);
    },
    decMicroTime(r: Reader, end: number) {
      if (r.pos === end) return null;
      let [s, ns] = readTimestamp(r, end, 'MicroTime');
      ns -= ns % 1000;
      if (ns < 0 || ns >= 1e9) {
        s += Math.floor(ns / 1e9);
        ns = ((ns % 1e9) + 1e9) % 1e9;
      }
      return s === GO_ZERO_TIME_SECONDS && ns === 0 ? null : formatMicroTime(s, ns);
    },

    encQuantity(w: RevWriter, v: unknown, label: string) {
      let s: string;
      if (v == null) s = '0';
      else if (typeof v === 'string') s = v;
      else if (typeof v === 'number' && Number.isFinite(v)) s = String(v);
      else return bad(v, 'a quantity (string or number)', label);
      w.str(s);
      w.byte(10);
    },
    decQuantity(r: Reader, end: number) {
      let s = '';
      while (r.pos < end) {
        const t = r.u32();
        if (t === 10) s = r.str(end);
        else skipOrWrong(r, t, end, 1, 'Quantity');
      }
      r.checkEnd(end, 'Quantity');
      return s === '' ? '0' : s;
    },

    encIntOrString(w: RevWriter, v: unknown, label: string) {
      if (typeof v === 'string') {
        w.str(v);
        w.byte(26);
        w.byte(0);
        w.byte(16);
        w.byte(1);
        w.byte(8);
        return;
      }
      let n = 0;
      if (v != null) {
        if (typeof v !== 'number' || (v | 0) !== v) return bad(v, 'an int32 or a string', label);
        n = v;
      }
      w.byte(0);
      w.byte(26);
      w.i32(n);
      w.byte(16);
      w.byte(0);
      w.byte(8);
    },
    decIntOrString(r: Reader, end: number) {
      let type = 0;
      let iv = 0;
      let sv = '';
      while (r.pos < end) {
        const t = r.u32();
        if (t === 8) type = r.i64();
        else if (t === 16) iv = r.i32();
        else if (t === 26) sv = r.str(end);
        else skipOrWrong(r, t, end, 3, 'IntOrString');
      }
      r.checkEnd(end, 'IntOrString');
      return type === 1 ? sv : iv;
    },

    encRawExtension(w: RevWriter, v: unknown) {
      encJSONRaw(w, v);
    },
    decRawExtension(r: Reader, end: number) {
      const raw = readRaw(r, end, 'RawExtension');
      if (raw === undefined || raw.length === 0) return null;
      if (hasPrefix(raw)) return c.decodeNested(raw);
      return parseJSONBytes(raw, 'RawExtension');
    },
    encJSON(w: RevWriter, v: unknown) {
      encJSONRaw(w, v);
    },
    decJSON(r: Reader, end: number) {
      const raw = readRaw(r, end, 'JSON');
      if (raw === undefined || raw.length === 0) return null;
      return parseJSONBytes(raw, 'JSON');
    },
    encFieldsV1(w: RevWriter, v: unknown) {
      encJSONRaw(w, v);
    },
    decFieldsV1(r: Reader, end: number) {
      const raw = readRaw(r, end, 'FieldsV1');
      if (raw === undefined || raw.length === 0) return null;
      return parseJSONBytes(raw, 'FieldsV1');
    },

    encDuration(w: RevWriter, v: unknown, label: string) {
      let ns = 0n;
      if (v != null) {
        if (typeof v !== 'string') return bad(v, 'a duration string such as "5m0s"', label);
        ns = parseGoDuration(v, label);
      }
      w.i64big(ns);
      w.byte(8);
    },
    decDuration(r: Reader, end: number) {
      let ns = 0n;
      while (r.pos < end) {
        const t = r.u32();
        if (t === 8) ns = r.i64big();
        else skipOrWrong(r, t, end, 1, 'Duration');
      }
      r.checkEnd(end, 'Duration');
      return goFormatDuration(ns);
    },

    // {1 allows bool, 2 schema}: JSON true/false or a schema (a schema means allows=true)
    encJSONSchemaPropsOrBool(w: RevWriter, v: unknown, label: string) {
      let allows = false;
      if (typeof v === 'boolean') allows = v;
      else if (v != null) {
        encSchema(w, v, 2, label);
        allows = true;
      }
      w.bool(allows);
      w.byte(8);
    },
    decJSONSchemaPropsOrBool(r: Reader, end: number) {
      let allows = false;
      let schema: unknown;
      while (r.pos < end) {
        const t = r.u32();
        if (t === 8) allows = r.bool();
        else if (t === 18) schema = decSchema(r, end);
        else skipOrWrong(r, t, end, 2, 'JSONSchemaPropsOrBool');
      }
      r.checkEnd(end, 'JSONSchemaPropsOrBool');
      return schema !== undefined ? schema : allows;
    },
    // {1 schema, 2 jSONSchemas repeated}: a schema or an array of schemas
    encJSONSchemaPropsOrArray(w: RevWriter, v: unknown, label: string) {
      if (v == null) return;
      if (Array.isArray(v)) {
        for (let j = v.length - 1; j >= 0; j--) encSchema(w, v[j] ?? {}, 2, label);
      } else encSchema(w, v, 1, label);
    },
    decJSONSchemaPropsOrArray(r: Reader, end: number) {
      let schema: unknown;
      const list: unknown[] = [];
      while (r.pos < end) {
        const t = r.u32();
        if (t === 10) schema = decSchema(r, end);
        else if (t === 18) list.push(decSchema(r, end));
        else skipOrWrong(r, t, end, 2, 'JSONSchemaPropsOrArray');
      }
      r.checkEnd(end, 'JSONSchemaPropsOrArray');
      return list.length > 0 ? list : (schema ?? null);
    },
    // {1 schema, 2 property repeated string}: a schema or an array of strings
    encJSONSchemaPropsOrStringArray(w: RevWriter, v: unknown, label: string) {
      if (v == null) return;
      if (Array.isArray(v)) {
        for (let j = v.length - 1; j >= 0; j--) {
          const s = v[j];
          w.str(typeof s === 'string' ? s : s == null ? '' : bad(s, 'a string', label));
          w.byte(18);
        }
      } else encSchema(w, v, 1, label);
    },
    decJSONSchemaPropsOrStringArray(r: Reader, end: number) {
      let schema: unknown;
      const list: string[] = [];
      while (r.pos < end) {
        const t = r.u32();
        if (t === 10) schema = decSchema(r, end);
        else if (t === 18) list.push(r.str(end));
        else skipOrWrong(r, t, end, 2, 'JSONSchemaPropsOrStringArray');
      }
      r.checkEnd(end, 'JSONSchemaPropsOrStringArray');
      return list.length > 0 ? list : (schema ?? null);
    },
  };
}
