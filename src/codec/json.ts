// JSON normalization by the schema: an object is given the form Kubernetes gives it when it
// decodes JSON into its Go types and encodes it again. Fields come out in declaration order
// (kind and apiVersion first), unknown fields are dropped (and reported, for fieldValidation),
// zero values follow Go's rules (a struct is always written, `omitempty` leaves out empty values,
// a field without it keeps its zero value), times and quantities take their canonical spelling,
// and a value of the wrong JSON type is an error worded as Go's decoder words it.
//
// Hand-written rather than a JSON-schema library: the rules are Go's encoding/json semantics over
// Kubernetes' struct tags (omitempty, pointers, inline structs, special types), which no schema
// validator models, and this runs on every write.
import type { FieldDecl, TypeDecl, TypeRef } from '../schema/model.js';
import { getType, jsonFields } from '../schema/types.js';
import { canonicalQuantity } from '../schema/printers/quantity.js';
import { dynamicNormalizer, dynamicPruner } from '../schema/dynamic.js';
import { fractionalLiterals, inInt64 } from './int64.js';

export interface NormalizeResult {
  obj: any;
  /** paths of fields the schema does not declare (dropped from obj) */
  unknown: string[];
  /** the first value of the wrong type, as Go's JSON decoder reports it */
  typeError?: string;
}

const OMIT = Symbol('omit');

interface Ctx {
  unknown: string[];
  typeError?: string;
  /** the Go name of the root type, for error messages (`ConfigMap`) */
  root: string;
  /** the Go name of the innermost struct being decoded: Go's errors name it (`DeploymentSpec`) */
  struct: string;
  /** the JSON text the object was parsed from: its number literals decide what an integer field takes */
  text: string | undefined;
  /**
   * the literals with a fraction or an exponent, by path (int64.ts fractionalLiterals): undefined
   * until the first integer field reads them from `text`; null when there are none (or no text)
   */
  literals: Map<string, string> | null | undefined;
  /** type errors in the words of Kubernetes' unstructured converter (a strategic merge patch's result), not encoding/json's */
  converter: boolean;
}

const QUANTITY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const QUANTITY_SUFFIXES = new Set(['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei', 'n', 'u', 'm', 'k', 'M', 'G', 'T', 'P', 'E']);

/**
 * Why resource.ParseQuantity refuses a string (undefined: it parses). Its scanner, not the regular
 * expression it names: a sign, digits, one '.', digits, then suffix letters with an optional signed
 * exponent; anything after is the format error ("1.5.5"), and a suffix it cannot interpret ("5Gi6",
 * "1e") the suffix error.
 */
function quantityError(s: string): string | undefined {
  if (s.length === 0) return QUANTITY_FORMAT;
  if (s === '0') return undefined;
  const digits = (i: number) => {
    while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
    return i;
  };
  let i = s[0] === '-' || s[0] === '+' ? 1 : 0;
  i = digits(i);
  if (s[i] === '.') i = digits(i + 1);
  const suffixStart = i;
  while (i < s.length && 'eEinumkKMGTP'.includes(s[i]!)) i++;
  if (s[i] === '-' || s[i] === '+') i++;
  if (digits(i) < s.length) return QUANTITY_FORMAT;
  const suffix = s.slice(suffixStart);
  if (QUANTITY_SUFFIXES.has(suffix)) return undefined;
  // an exponent: e or E and an int64
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E') && /^[+-]?[0-9]+$/.test(suffix.slice(1))) {
    const n = BigInt(suffix.slice(1));
    if (n >= -(2n ** 63n) && n < 2n ** 63n) return undefined;
  }
  return "unable to parse quantity's suffix";
}

function goName(t: TypeRef): string {
  switch (t.kind) {
    case 'scalar':
      return { string: 'string', bool: 'bool', int32: 'int32', int64: 'int64', double: 'float64', bytes: '[]uint8' }[t.scalar];
    case 'special':
      return { Time: 'v1.Time', MicroTime: 'v1.MicroTime', Quantity: 'resource.Quantity', IntOrString: 'intstr.IntOrString', RawExtension: 'runtime.RawExtension', FieldsV1: 'v1.FieldsV1', Duration: 'v1.Duration', JSON: 'v1.JSON' }[
        t.special as 'Time'
      ] ?? t.special;
    case 'object': {
      const parts = t.name.split('.');
      return `${parts[parts.length - 2]}.${parts[parts.length - 1]}`;
    }
    case 'array':
      return `[]${goName(t.items)}`;
    case 'map':
      return `map[string]${goName(t.values)}`;
  }
}

/** the kind of a JSON value as Go's UnmarshalTypeError names it ("bool", not "boolean") */
function jsonKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  if (typeof v === 'boolean') return 'bool';
  return typeof v;
}

/**
 * Go's UnmarshalTypeError for a value at `path` of type t (or the Go type named `goType`): its
 * kind, or for a number into an integer or float type the number itself ("number 99999999999",
 * which Go names when it cannot parse or fit it: strconv.ParseInt, then OverflowInt).
 */
function typeErr(ctx: Ctx, v: unknown, path: string, t: TypeRef, goType?: string): void {
  if (ctx.typeError) return;
  if (ctx.converter) {
    const m = converterMessage(v, t);
    if (m !== undefined) {
      ctx.typeError = m;
      return;
    }
  }
  const type = goType ?? goName(t);
  const numeric = type === 'int32' || type === 'int64' || type === 'float64';
  // (an integer beyond 2^53 is a bigint: codec/int64.ts; Go names a number as its text has it)
  const what =
    typeof v === 'bigint' ? (numeric ? `number ${v}` : 'number') : typeof v === 'number' && numeric ? `number ${literalAt(ctx, path) ?? goNumberText(v)}` : jsonKind(v);
  const p = path.replace(/\[[^\]]*\]/g, '');
  ctx.typeError = `json: cannot unmarshal ${what} into Go struct field ${ctx.struct}.${p} of type ${type}`;
}

/**
 * The error of Kubernetes' unstructured converter (runtime.DefaultUnstructuredConverter, which a
 * strategic merge patch's result goes through into the kind's Go type) for a value of the wrong
 * type; undefined where the JSON decoder's words stand (the types with their own decoding:
 * quantities, int-or-strings, times; an integer out of an int32's range, which the converter
 * does not check). Its values are Go's decoded JSON: integers int64, other numbers float64,
 * objects maps, arrays slices. A scalar takes a convertible value (a whole float64 into an
 * integer, an integer into a float64) and names any other by the field's own kind.
 */
function converterMessage(v: unknown, t: TypeRef): string | undefined {
  const src =
    typeof v === 'string' ? 'string' : typeof v === 'boolean' ? 'bool' : typeof v === 'bigint' ? 'int64' : typeof v === 'number' ? (Number.isInteger(v) ? 'int64' : 'float64') : Array.isArray(v) ? 'slice' : 'map';
  switch (t.kind) {
    case 'object':
      return `cannot restore struct from: ${src}`;
    case 'array':
      return `cannot restore slice from ${src}`;
    case 'map':
      return `cannot restore map from ${src}`;
    case 'scalar': {
      if (t.scalar === 'bytes') return undefined;
      const dst = goName(t);
      if (src === 'float64' && (dst === 'int32' || dst === 'int64')) return `cannot convert float64 to ${dst}`;
      if (src === 'int64' && dst === 'string') return 'cannot convert int64 to string';
      if (src === 'int64' && dst !== 'bool') return undefined;
      return `unrecognized type: ${dst}`;
    }
    default:
      return undefined;
  }
}

/** the JSON literal at `path` when it has a fraction or an exponent (undefined: it has neither, or the object came from no JSON text) */
function literalAt(ctx: Ctx, path: string): string | undefined {
  if (ctx.literals === undefined) ctx.literals = fractionalLiterals(ctx.text!);
  if (ctx.literals === null) return undefined;
  // (the literals' paths write every member as `.key`; a map's value is `[key]` here)
  return ctx.literals.get(path.replace(/\[([^\]]*[^\]0-9][^\]]*)\]/g, '.$1'));
}

/** whether the value at `base`/`sub` was written with a fraction or an exponent (its path is spelled out only when some literal was) */
function writtenFractional(ctx: Ctx, base: string, sub: string | number | undefined, dot: boolean): boolean {
  return ctx.literals !== null && literalAt(ctx, pathAt(base, sub, dot)) !== undefined;
}

/** a number as its JSON literal most likely read (integers in full, not in exponent form) */
function goNumberText(v: number): string {
  return Number.isInteger(v) && Math.abs(v) >= 1e21 ? BigInt(v).toString() : String(v);
}

/** whether an integer fits Go's int32 or int64 (a double: 2^63 and above are out) */
function fitsInt(v: number, bits: 32 | 64): boolean {
  return bits === 32 ? v >= -2147483648 && v <= 2147483647 : v >= -9223372036854775808 && v < 9223372036854775808;
}

/** RFC 3339 time in Go's output form: UTC, whole seconds (micro: six fractional digits). */
/** a metav1.Time (or MicroTime) in its stored form; undefined when `v` is not RFC 3339 */
export function normTime(v: string, micro: boolean): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(v)) return undefined;
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) return undefined;
  const iso = new Date(ms).toISOString();
  if (!micro) return iso.replace(/\.\d{3}Z$/, 'Z');
  const frac = /\.(\d+)/.exec(v)?.[1] ?? '';
  return iso.replace(/\.\d{3}Z$/, `.${(frac + '000000').slice(0, 6)}Z`);
}

/** Go's time.Parse error for a text that is not RFC 3339 (its first element, the year, already fails) */
export function timeParseMessage(v: string): string {
  return `parsing time ${JSON.stringify(v)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(v)} as "2006"`;
}

function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false;
}

// The normalizer walks a compiled form of the schema: each TypeRef becomes an NT and each struct
// field an NField, objects of one shape each (their `kind` a number), so that the walk's property
// loads stay monomorphic; the schema's own objects come in many shapes (optional members), and
// reading them made most of the walk's loads megamorphic (a stub-cache probe each).

const K_SCALAR = 0;
const K_SPECIAL = 1;
const K_OBJECT = 2;
const K_ARRAY = 3;
const K_MAP = 4;

class NT {
  /** the struct's plan (K_OBJECT), once its declaration has been found */
  plan: StructPlan | undefined = undefined;
  items: NT | undefined = undefined;
  values: NT | undefined = undefined;
  constructor(
    readonly ref: TypeRef,
    readonly kind: number,
    /** the scalar's or the special type's name; the struct's canonical name */
    readonly name: string,
  ) {}
}

const nts = new WeakMap<TypeRef, NT>();

function ntOf(t: TypeRef): NT {
  let n = nts.get(t);
  if (n !== undefined) return n;
  switch (t.kind) {
    case 'scalar':
      n = new NT(t, K_SCALAR, t.scalar);
      break;
    case 'special':
      n = new NT(t, K_SPECIAL, t.special);
      break;
    case 'object':
      n = new NT(t, K_OBJECT, t.name);
      break;
    case 'array':
      n = new NT(t, K_ARRAY, '');
      nts.set(t, n);
      n.items = ntOf(t.items);
      return n;
    case 'map':
      n = new NT(t, K_MAP, '');
      nts.set(t, n);
      n.values = ntOf(t.values);
      return n;
  }
  nts.set(t, n);
  return n;
}

/** the plan of a struct type; undefined when the schema does not declare it */
function structPlan(t: NT): StructPlan | undefined {
  if (t.plan !== undefined) return t.plan;
  const decl = getType(t.name);
  // (a name not declared yet is looked up again next time)
  if (decl) t.plan = planOf(decl);
  return t.plan;
}

function zeroOf(t: NT, ctx: Ctx): unknown {
  switch (t.kind) {
    case K_SCALAR:
      return t.name === 'string' || t.name === 'bytes' ? '' : t.name === 'bool' ? false : 0;
    case K_OBJECT: {
      const plan = structPlan(t);
      return plan ? normObject(plan, {}, '', ctx) : {};
    }
    case K_SPECIAL:
      switch (t.name) {
        case 'Quantity':
          return '0';
        case 'IntOrString':
          return 0;
        case 'Duration':
          return '0s';
        default:
          return null;
      }
    default:
      return null;
  }
}

/**
 * The path of a value: `base.sub` for a struct's field (dot), `base[sub]` for an item or a map
 * value. Spelled out only for an error or a nested value.
 */
function pathAt(base: string, sub: string | number | undefined, dot: boolean): string {
  if (sub === undefined) return base;
  if (dot) return base ? `${base}.${sub}` : String(sub);
  return `${base}[${sub}]`;
}

/**
 * A value of type t at `base` (a field `sub` of the struct at `base` when dot, an item or map
 * value at `base[sub]` otherwise: that path is spelled out only for an error or a nested value).
 */
function normValue(t: NT, v: unknown, base: string, ctx: Ctx, sub: string | number | undefined, dot: boolean): unknown {
  if (v === null) return null;
  switch (t.kind) {
    case K_SCALAR:
      switch (t.name) {
        case 'string':
          if (typeof v !== 'string') return typeErr(ctx, v, pathAt(base, sub, dot), t.ref), OMIT;
          return v;
        case 'bool':
          if (typeof v !== 'boolean') return typeErr(ctx, v, pathAt(base, sub, dot), t.ref), OMIT;
          return v;
        case 'int32':
        case 'int64':
          // (an integer beyond 2^53 is a bigint: codec/int64.ts)
          if (typeof v === 'bigint') return t.name === 'int64' && inInt64(v) ? v : (typeErr(ctx, v, pathAt(base, sub, dot), t.ref), OMIT);
          if (typeof v !== 'number' || !Number.isInteger(v) || !fitsInt(v, t.name === 'int32' ? 32 : 64)) return typeErr(ctx, v, pathAt(base, sub, dot), t.ref), OMIT;
          // (`1.0` and `1e3` parse to integers, but Go's decoder refuses them for an integer field)
          if (writtenFractional(ctx, base, sub, dot)) return typeErr(ctx, v, pathAt(base, sub, dot), t.ref), OMIT;
          return v;
        case 'double':
          if (typeof v === 'bigint') return Number(v);
          if (typeof v !== 'number') return typeErr(ctx, v, pathAt(base, sub, dot), t.ref), OMIT;
          return v;
        case 'bytes':
          if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 === 1) {
            if (typeof v !== 'string') return typeErr(ctx, v, pathAt(base, sub, dot), t.ref), OMIT;
            if (!ctx.typeError) ctx.typeError = `illegal base64 data at input byte ${Math.max(0, v.search(/[^A-Za-z0-9+/=]/))}`;
            return OMIT;
          }
          return v;
      }
      return v;
    case K_SPECIAL:
      switch (t.name) {
        case 'Time':
        case 'MicroTime': {
          if (typeof v !== 'string') return typeErr(ctx, v, pathAt(base, sub, dot), t.ref), OMIT;
          const n = normTime(v, t.name === 'MicroTime');
          if (n === undefined) {
            if (!ctx.typeError) ctx.typeError = timeParseMessage(v);
            return OMIT;
          }
          return n;
        }
        case 'Quantity': {
          if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'bigint') return typeErr(ctx, v, pathAt(base, sub, dot), t.ref), OMIT;
          const s = String(v).trim();
          const bad = quantityError(s);
          if (bad) {
            if (!ctx.typeError) ctx.typeError = bad;
            return OMIT;
          }
          return canonicalQuantity(s);
        }
        case 'IntOrString':
          // (anything but a string goes to its IntVal, an int32: intstr.IntOrString.UnmarshalJSON)
          if (typeof v === 'string') return v;
          if (typeof v === 'number' && Number.isInteger(v) && fitsInt(v, 32) && !writtenFractional(ctx, base, sub, dot)) return v;
          return typeErr(ctx, v, pathAt(base, sub, dot), t.ref, 'int32'), OMIT;
        case 'Duration':
          if (typeof v !== 'string') return typeErr(ctx, v, pathAt(base, sub, dot), t.ref), OMIT;
          return v;
        default:
          return v; // free-form JSON
      }
    case K_OBJECT: {
      if (typeof v !== 'object' || Array.isArray(v)) return typeErr(ctx, v, pathAt(base, sub, dot), t.ref), OMIT;
      const plan = structPlan(t);
      if (!plan) return v;
      return normObject(plan, v as Record<string, unknown>, pathAt(base, sub, dot), ctx);
    }
    case K_ARRAY: {
      if (!Array.isArray(v)) return typeErr(ctx, v, pathAt(base, sub, dot), t.ref), OMIT;
      const items = t.items!;
      const out: unknown[] = new Array(v.length);
      const path = pathAt(base, sub, dot);
      for (let i = 0; i < v.length; i++) {
        const item = v[i];
        const n = item === null ? zeroOf(items, ctx) : normValue(items, item, path, ctx, i, false);
        out[i] = n === OMIT ? zeroOf(items, ctx) : n;
      }
      return out;
    }
    case K_MAP: {
      if (typeof v !== 'object' || Array.isArray(v)) return typeErr(ctx, v, pathAt(base, sub, dot), t.ref), OMIT;
      const values = t.values!;
      const m = v as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      let path: string | undefined;
      for (const k of Object.keys(m)) {
        const item = m[k];
        let n: unknown;
        if (item === null) n = values.kind === K_SCALAR ? zeroOf(values, ctx) : null;
        // (a map of strings, the common map: its values checked here)
        else if (values.kind === K_SCALAR && values.name === 'string' && typeof item === 'string') n = item;
        else n = normValue(values, item, (path ??= pathAt(base, sub, dot)), ctx, k, false);
        if (n !== OMIT) out[k] = n;
      }
      return out;
    }
  }
  return v;
}

/** what a field is when its value is absent or null: left out, null, or its type's zero value */
const ABSENT_OMIT = 0;
const ABSENT_NULL = 1;
const ABSENT_ZERO = 2;

class NField {
  readonly absent: number;
  /** a name Object.prototype has too: presence is told by hasOwnProperty, not by the value */
  readonly inherited: boolean;
  constructor(
    readonly name: string,
    readonly t: NT,
    readonly omitEmpty: boolean,
    readonly nullable: boolean,
    /** an empty list is kept: see KEEP_EMPTY */
    readonly keepEmpty = false,
  ) {
    const k = t.kind;
    if (nullable || k === K_ARRAY || k === K_MAP) this.absent = omitEmpty ? ABSENT_OMIT : ABSENT_NULL;
    // a zero struct, Time, MicroTime or RawExtension is a struct in Go: `omitempty` does not leave
    // it out (a special type's zero encodes as null: Kubernetes 1.33 prints `creationTimestamp:
    // null` in templates)
    else if (k === K_OBJECT || k === K_SPECIAL) this.absent = ABSENT_ZERO;
    else this.absent = omitEmpty ? ABSENT_OMIT : ABSENT_ZERO;
    this.inherited = name in Object.prototype;
  }
}

/** a field of the struct at `parent`, present with a value that is not null */
function normField(f: NField, v: unknown, parent: string, ctx: Ctx): unknown {
  const t = f.t;
  const n = normValue(t, v, parent, ctx, f.name, true);
  if (n === OMIT) return OMIT;
  if (f.omitEmpty) {
    if ((t.kind === K_ARRAY && (n as unknown[]).length === 0 && !f.keepEmpty) || (t.kind === K_MAP && isEmptyObject(n as object))) return OMIT;
    if (t.kind === K_SCALAR && !f.nullable && isZero(n)) return OMIT;
  }
  return n;
}

function isEmptyObject(o: object): boolean {
  for (const _ in o) return false;
  return true;
}

/**
 * The omitempty lists whose empty value a write keeps. Go's decoder makes `[]` an empty slice,
 * not nil, and `omitempty` leaves it out only when the object is encoded again; normalize does
 * both in one pass, so the defaulting after it cannot tell `[]` from absent. Where Kubernetes'
 * defaulting tells them apart (a nil check, not a length check) and the validation then refuses
 * the empty list, the list is kept for the validation to see: an HPA's `policies: []` is
 * "must specify at least one Policy", not the default policies. The same for `managedFields: []`,
 * which the field manager reads as "clear the managed fields" (isResetManagedFields); what it
 * writes back never holds an empty list.
 */
const KEEP_EMPTY = new Set(['io.k8s.api.autoscaling.v2.HPAScalingRules.policies', 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta.managedFields']);

/** a struct's JSON fields as arrays (iterated on every write) and its Go name */
interface StructPlan {
  fields: NField[];
  byName: ReadonlyMap<string, FieldDecl>;
  goName: string;
}

const plans = new WeakMap<TypeDecl, StructPlan>();

function planOf(decl: TypeDecl): StructPlan {
  let p = plans.get(decl);
  if (!p) {
    const byName = jsonFields(decl);
    const fields = [...byName.values()].map((f) => new NField(f.name, ntOf(f.type), f.omitEmpty, f.nullable, KEEP_EMPTY.has(`${decl.name}.${f.name}`)));
    p = { fields, byName, goName: decl.name.slice(decl.name.lastIndexOf('.') + 1) };
    plans.set(decl, p);
  }
  return p;
}

function normObject(plan: StructPlan, v: Record<string, unknown>, path: string, ctx: Ctx): Record<string, unknown> {
  const outer = ctx.struct;
  ctx.struct = plan.goName;
  try {
    return normFields(plan, v, path, ctx);
  } finally {
    ctx.struct = outer;
  }
}

const hasOwn = Object.prototype.hasOwnProperty;

function normFields(plan: StructPlan, v: Record<string, unknown>, path: string, ctx: Ctx): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const fields = plan.fields;
  // (this struct's unknown fields go before those found inside its fields)
  const mark = ctx.unknown.length;
  // the declared members present (own, not undefined): when as many as the object's members, none is unknown
  let known = 0;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    const x = v[f.name];
    const absent = x === undefined || (f.inherited && !hasOwn.call(v, f.name));
    if (!absent) known++;
    let r: unknown;
    if (absent || x === null) {
      if (f.absent === ABSENT_OMIT) continue;
      r = f.absent === ABSENT_NULL ? null : zeroOf(f.t, ctx);
    } else {
      r = normField(f, x, path, ctx);
      if (r === OMIT) continue;
    }
    out[f.name] = r;
  }
  let members = 0;
  for (const _ in v) members++;
  if (members !== known) {
    const byName = plan.byName;
    const here: string[] = [];
    for (const k in v) if (!byName.has(k)) here.push(path ? `${path}.${k}` : k);
    if (here.length) ctx.unknown.splice(mark, 0, ...here);
  }
  return out;
}

/**
 * Normalize an object of a declared type. An unknown type name returns the object as given.
 */
export function normalize(typeName: string, obj: unknown, literals?: string | Map<string, string> | null, converter = false): NormalizeResult {
  const dyn = dynamicNormalizer(typeName);
  if (dyn && obj !== null && typeof obj === 'object' && !Array.isArray(obj)) {
    const r = dyn(obj as Record<string, unknown>);
    // an object without metadata has the empty one, as a declared type's zero ObjectMeta (then a
    // missing name is the 422 it is for every kind, not a fault further on)
    const out = r.obj as Record<string, unknown> | null;
    if (out !== null && typeof out === 'object' && !Array.isArray(out) && (out.metadata === undefined || out.metadata === null)) out.metadata = {};
    return r;
  }
  const decl = getType(typeName);
  if (!decl || obj === null || typeof obj !== 'object' || Array.isArray(obj)) return { obj, unknown: [] };
  // (the type's short name without an array of its parts: normalize runs on every write)
  const short = typeName.slice(typeName.lastIndexOf('.') + 1);
  // (the JSON text the object was parsed from, read at the first integer field, or the literals a patch wrote)
  const text = typeof literals === 'string' ? literals : undefined;
  const ctx: Ctx = { unknown: [], root: short, struct: short, text, literals: text !== undefined ? undefined : (literals as Map<string, string> | null | undefined) ?? null, converter };
  const out = normObject(planOf(decl), obj as Record<string, unknown>, '', ctx);
  return { obj: out, unknown: ctx.unknown, typeError: ctx.typeError };
}

/**
 * Remove the fields a type does not declare, and nothing else (no zero values are added): the
 * configuration of a server-side apply must keep exactly the fields the applier sent.
 */
export function pruneUnknown(typeName: string, obj: unknown): { obj: unknown; unknown: string[] } {
  const dyn = dynamicPruner(typeName);
  if (dyn && obj !== null && typeof obj === 'object' && !Array.isArray(obj)) return dyn(obj as Record<string, unknown>);
  const unknown: string[] = [];
  const walkRef = (t: TypeRef, v: unknown, path: string): unknown => {
    if (v === null || typeof v !== 'object') return v;
    switch (t.kind) {
      case 'object': {
        if (Array.isArray(v)) return v;
        const decl = getType(t.name);
        return decl ? walkObj(decl, v as Record<string, unknown>, path) : v;
      }
      case 'array':
        return Array.isArray(v) ? v.map((item, i) => walkRef(t.items, item, `${path}[${i}]`)) : v;
      case 'map': {
        if (Array.isArray(v)) return v;
        const out: Record<string, unknown> = {};
        for (const [k, item] of Object.entries(v as Record<string, unknown>)) out[k] = walkRef(t.values, item, `${path}[${k}]`);
        return out;
      }
      default:
        return v;
    }
  };
  const walkObj = (decl: TypeDecl, v: Record<string, unknown>, path: string): Record<string, unknown> => {
    const fields = jsonFields(decl);
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(v)) {
      const p = path ? `${path}.${k}` : k;
      const f = fields.get(k);
      if (!f) {
        unknown.push(p);
        continue;
      }
      out[k] = walkRef(f.type, item, p);
    }
    return out;
  };
  const decl = getType(typeName);
  if (!decl || obj === null || typeof obj !== 'object' || Array.isArray(obj)) return { obj, unknown };
  return { obj: walkObj(decl, obj as Record<string, unknown>, ''), unknown };
}
