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
}

const QUANTITY_RE = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;

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

function jsonKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return typeof v;
}

function typeErr(ctx: Ctx, v: unknown, path: string, t: TypeRef): void {
  if (ctx.typeError) return;
  const what = typeof v === 'number' ? `number ${String(v)}` : jsonKind(v);
  const p = path.replace(/\[[^\]]*\]/g, '');
  ctx.typeError = `json: cannot unmarshal ${what.startsWith('number') && Number.isInteger(v) ? 'number' : what} into Go struct field ${ctx.struct}.${p} of type ${goName(t)}`;
}

/** RFC 3339 time in Go's output form: UTC, whole seconds (micro: six fractional digits). */
function normTime(v: string, micro: boolean): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(v)) return undefined;
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) return undefined;
  const iso = new Date(ms).toISOString();
  if (!micro) return iso.replace(/\.\d{3}Z$/, 'Z');
  const frac = /\.(\d+)/.exec(v)?.[1] ?? '';
  return iso.replace(/\.\d{3}Z$/, `.${(frac + '000000').slice(0, 6)}Z`);
}

function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false;
}

function zeroOf(t: TypeRef, ctx: Ctx): unknown {
  switch (t.kind) {
    case 'scalar':
      return t.scalar === 'string' || t.scalar === 'bytes' ? '' : t.scalar === 'bool' ? false : 0;
    case 'object': {
      const decl = getType(t.name);
      return decl ? normObject(decl, {}, '', ctx) : {};
    }
    case 'special':
      switch (t.special) {
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

function pathAt(base: string, sub: string | number | undefined): string {
  return sub === undefined ? base : `${base}[${sub}]`;
}

/**
 * A value of type t at `base` (an item or map value at `base[sub]` when sub is given: that path
 * is spelled out only for an error or a nested value).
 */
function normValue(t: TypeRef, v: unknown, base: string, ctx: Ctx, sub?: string | number): unknown {
  if (v === null) return null;
  switch (t.kind) {
    case 'scalar':
      switch (t.scalar) {
        case 'string':
          if (typeof v !== 'string') return typeErr(ctx, v, pathAt(base, sub), t), OMIT;
          return v;
        case 'bool':
          if (typeof v !== 'boolean') return typeErr(ctx, v, pathAt(base, sub), t), OMIT;
          return v;
        case 'int32':
        case 'int64':
          if (typeof v !== 'number' || !Number.isInteger(v)) return typeErr(ctx, v, pathAt(base, sub), t), OMIT;
          if (t.scalar === 'int32' && (v > 2147483647 || v < -2147483648)) return typeErr(ctx, v, pathAt(base, sub), t), OMIT;
          return v;
        case 'double':
          if (typeof v !== 'number') return typeErr(ctx, v, pathAt(base, sub), t), OMIT;
          return v;
        case 'bytes':
          if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 === 1) {
            if (typeof v !== 'string') return typeErr(ctx, v, pathAt(base, sub), t), OMIT;
            if (!ctx.typeError) ctx.typeError = `illegal base64 data at input byte ${Math.max(0, v.search(/[^A-Za-z0-9+/=]/))}`;
            return OMIT;
          }
          return v;
      }
      return v;
    case 'special':
      switch (t.special) {
        case 'Time':
        case 'MicroTime': {
          if (typeof v !== 'string') return typeErr(ctx, v, pathAt(base, sub), t), OMIT;
          const n = normTime(v, t.special === 'MicroTime');
          if (n === undefined) {
            if (!ctx.typeError) ctx.typeError = `parsing time ${JSON.stringify(v)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(v)} as "2006"`;
            return OMIT;
          }
          return n;
        }
        case 'Quantity': {
          if (typeof v !== 'string' && typeof v !== 'number') return typeErr(ctx, v, pathAt(base, sub), t), OMIT;
          const s = String(v).trim();
          if (!QUANTITY_RE.test(s)) {
            if (!ctx.typeError) ctx.typeError = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
            return OMIT;
          }
          return canonicalQuantity(s);
        }
        case 'IntOrString':
          if (typeof v === 'number') {
            if (!Number.isInteger(v)) return typeErr(ctx, v, pathAt(base, sub), t), OMIT;
            return v;
          }
          if (typeof v !== 'string') return typeErr(ctx, v, pathAt(base, sub), t), OMIT;
          return v;
        case 'Duration':
          if (typeof v !== 'string') return typeErr(ctx, v, pathAt(base, sub), t), OMIT;
          return v;
        default:
          return v; // free-form JSON
      }
    case 'object': {
      if (typeof v !== 'object' || Array.isArray(v)) return typeErr(ctx, v, pathAt(base, sub), t), OMIT;
      const decl = getType(t.name);
      if (!decl) return v;
      return normObject(decl, v as Record<string, unknown>, pathAt(base, sub), ctx);
    }
    case 'array': {
      if (!Array.isArray(v)) return typeErr(ctx, v, pathAt(base, sub), t), OMIT;
      const out: unknown[] = new Array(v.length);
      const path = pathAt(base, sub);
      for (let i = 0; i < v.length; i++) {
        const item = v[i];
        const n = item === null ? zeroOf(t.items, ctx) : normValue(t.items, item, path, ctx, i);
        out[i] = n === OMIT ? zeroOf(t.items, ctx) : n;
      }
      return out;
    }
    case 'map': {
      if (typeof v !== 'object' || Array.isArray(v)) return typeErr(ctx, v, pathAt(base, sub), t), OMIT;
      const out: Record<string, unknown> = {};
      const path = pathAt(base, sub);
      for (const k of Object.keys(v as Record<string, unknown>)) {
        const item = (v as Record<string, unknown>)[k];
        const n = item === null ? (t.values.kind === 'scalar' ? zeroOf(t.values, ctx) : null) : normValue(t.values, item, path, ctx, k);
        if (n !== OMIT) out[k] = n;
      }
      return out;
    }
  }
}

/** a field of the struct at `parent`: its path is spelled out only when it has a value */
function normField(f: FieldDecl, v: unknown, present: boolean, parent: string, ctx: Ctx): unknown {
  const t = f.type;
  if (!present || v === null) {
    if (f.nullable || t.kind === 'array' || t.kind === 'map') return f.omitEmpty ? OMIT : null;
    if (t.kind === 'object') return zeroOf(t, ctx);
    if (t.kind === 'special') {
      // a zero Time, MicroTime or RawExtension is a struct in Go: `omitempty` does not leave it
      // out, and it encodes as null (Kubernetes 1.33 prints `creationTimestamp: null` in templates)
      return zeroOf(t, ctx);
    }
    return f.omitEmpty ? OMIT : zeroOf(t, ctx);
  }
  const n = normValue(t, v, parent ? `${parent}.${f.name}` : f.name, ctx);
  if (n === OMIT) return OMIT;
  if (f.omitEmpty) {
    if ((t.kind === 'array' && (n as unknown[]).length === 0) || (t.kind === 'map' && Object.keys(n as object).length === 0)) return OMIT;
    if (t.kind === 'scalar' && !f.nullable && isZero(n)) return OMIT;
  }
  return n;
}

/** a struct's JSON fields as arrays (iterated on every write) and its Go name */
interface StructPlan {
  names: string[];
  fields: FieldDecl[];
  byName: ReadonlyMap<string, FieldDecl>;
  goName: string;
}

const plans = new WeakMap<TypeDecl, StructPlan>();

function planOf(decl: TypeDecl): StructPlan {
  let p = plans.get(decl);
  if (!p) {
    const byName = jsonFields(decl);
    p = { names: [...byName.keys()], fields: [...byName.values()], byName, goName: decl.name.slice(decl.name.lastIndexOf('.') + 1) };
    plans.set(decl, p);
  }
  return p;
}

function normObject(decl: TypeDecl, v: Record<string, unknown>, path: string, ctx: Ctx): Record<string, unknown> {
  const plan = planOf(decl);
  const outer = ctx.struct;
  ctx.struct = plan.goName;
  try {
    return normFields(plan, v, path, ctx);
  } finally {
    ctx.struct = outer;
  }
}

function normFields(plan: StructPlan, v: Record<string, unknown>, path: string, ctx: Ctx): Record<string, unknown> {
  const fields = plan.byName;
  for (const k in v) {
    if (!fields.has(k)) ctx.unknown.push(path ? `${path}.${k}` : k);
  }
  const out: Record<string, unknown> = {};
  const names = plan.names;
  const decls = plan.fields;
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    const present = Object.prototype.hasOwnProperty.call(v, name);
    const r = normField(decls[i]!, present ? v[name] : undefined, present, path, ctx);
    if (r !== OMIT) out[name] = r;
  }
  return out;
}

/**
 * Normalize an object of a declared type. An unknown type name returns the object as given.
 */
export function normalize(typeName: string, obj: unknown): NormalizeResult {
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
  const ctx: Ctx = { unknown: [], root: short, struct: short };
  const out = normObject(decl, obj as Record<string, unknown>, '', ctx);
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
