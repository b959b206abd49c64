// Field errors as Kubernetes' field package builds them, with the parts errors.ts does not
// cover: values printed as Go prints them (`%#v` of a struct, a Stringer's String()), the
// `Too many` type, and errors on the root path (Go prints ": <body>" for those).
import { FieldError, field, type FieldErrorType } from '../../machinery/errors.js';
import { goQuote } from '../../machinery/gostrings.js';

export type Errs = FieldError[];

/** A value already rendered the way Go renders it in an error message (printed verbatim). */
export class GoRepr {
  constructor(readonly repr: string) {}
}

const TEXT: Partial<Record<FieldErrorType, string>> = {
  FieldValueInvalid: 'Invalid value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueNotFound: 'Not found',
  FieldValueTooMany: 'Too many',
  FieldValueRequired: 'Required value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  InternalError: 'Internal error',
};

const VALUELESS = new Set<FieldErrorType>(['FieldValueRequired', 'FieldValueForbidden', 'FieldValueTooLong', 'InternalError']);

/** Renders a value as field.Error.ErrorBody does: strings quoted, numbers and booleans bare,
 *  nil as the quoted string "null", Go representations verbatim. */
export function goValue(v: unknown): string {
  if (v instanceof GoRepr) return v.repr;
  if (v === null || v === undefined) return '"null"';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v);
}

/** A field error whose value is printed the Go way; also prints ": body" on the root path. */
export class KError extends FieldError {
  constructor(
    type: FieldErrorType,
    fieldPath: string,
    readonly shown: unknown,
    detail: string,
    readonly hasValue: boolean,
  ) {
    super(type, fieldPath, hasValue ? shown : undefined, detail);
  }

  override body(): string {
    let s = TEXT[this.type] ?? 'Invalid value';
    if (this.hasValue && !VALUELESS.has(this.type)) s += `: ${goValue(this.shown)}`;
    if (this.detail) s += `: ${this.detail}`;
    return s;
  }

  override toString(): string {
    return `${this.field}: ${this.body()}`;
  }
}

export function invalid(path: string, value: unknown, detail = ''): FieldError {
  return new KError('FieldValueInvalid', path, value, detail, true);
}

export function notSupported(path: string, value: unknown, valid: readonly string[]): FieldError {
  const detail = valid.length ? `supported values: ${valid.map(goQuote).join(', ')}` : '';
  return new KError('FieldValueNotSupported', path, value, detail, true);
}

export function duplicate(path: string, value: unknown, detail = ''): FieldError {
  return new KError('FieldValueDuplicate', path, value, detail, true);
}

export function notFound(path: string, value: unknown, detail = ''): FieldError {
  return new KError('FieldValueNotFound', path, value, detail, true);
}

export function required(path: string, detail = ''): FieldError {
  return path ? field.required(path, detail) : new KError('FieldValueRequired', path, undefined, detail, false);
}

export function forbidden(path: string, detail: string): FieldError {
  return path ? field.forbidden(path, detail) : new KError('FieldValueForbidden', path, undefined, detail, false);
}

/** field.TooLong: "Too long: may not be more than N bytes" */
export function tooLong(path: string, max: number): FieldError {
  const detail = `may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}`;
  return path ? field.tooLong(path, max) : new KError('FieldValueTooLong', path, undefined, detail, false);
}

/** field.TooLongMaxLength: "Too long: may not be longer than N" */
export function tooLongMaxLength(path: string, max: number): FieldError {
  return new KError('FieldValueTooLong', path, undefined, `may not be longer than ${max}`, false);
}

/** field.TooMany: "Too many: <actual>: must have at most N items" */
export function tooMany(path: string, actual: number, max: number): FieldError {
  return new KError('FieldValueTooMany', path, actual, `must have at most ${max} ${max === 1 ? 'item' : 'items'}`, true);
}

export function internal(path: string, detail: string): FieldError {
  return new KError('InternalError', path, undefined, detail, false);
}

// ---- paths ----

export function child(p: string, ...names: string[]): string {
  let out = p;
  for (const n of names) out = out ? `${out}.${n}` : n;
  return out;
}
export const idx = (p: string, i: number): string => `${p}[${i}]`;
export const key = (p: string, k: string): string => `${p}[${k}]`;

// ---- Go renderings ----

export { goQuote };

/** `[]string{"a", "b"}`, `[]string(nil)` for an absent slice, `[]string{}` for an empty one */
export function goStrings(a: readonly string[] | null | undefined, type = '[]string'): GoRepr {
  if (a == null) return new GoRepr(`${type}(nil)`);
  return new GoRepr(`${type}{${a.map(goQuote).join(', ')}}`);
}

/** `[]int32{1, 2}` */
export function goInts(a: readonly number[] | null | undefined, type = '[]int32'): GoRepr {
  if (a == null) return new GoRepr(`${type}(nil)`);
  return new GoRepr(`${type}{${a.join(', ')}}`);
}

/** `map[string]string{"a":"b"}` with sorted keys, `map[string]string(nil)` when absent */
export function goStringMap(m: Record<string, string> | null | undefined): GoRepr {
  if (m == null) return new GoRepr('map[string]string(nil)');
  const keys = Object.keys(m).sort();
  return new GoRepr(`map[string]string{${keys.map((k) => `${goQuote(k)}:${goQuote(String(m[k]))}`).join(', ')}}`);
}

/** `[]byte{0x2d, 0x2d}` */
export function goBytes(b: Uint8Array | null | undefined): GoRepr {
  if (b == null) return new GoRepr('[]byte(nil)');
  return new GoRepr(`[]byte{${Array.from(b, (x) => `0x${x.toString(16)}`).join(', ')}}`);
}

/** a pointer inside a %#v struct: `(*T)(nil)` or an address (the address itself is meaningless) */
export function goPtr(type: string, present: boolean): string {
  return present ? `(*${type})(0xc000010000)` : `(*${type})(nil)`;
}

/** `T{A:x, B:y}` from rendered fields */
export function goStruct(type: string, fields: [string, string][]): GoRepr {
  return new GoRepr(`${type}{${fields.map(([k, v]) => `${k}:${v}`).join(', ')}}`);
}

/** intstr.IntOrString through its String() method: the number or the string, bare */
export function goIntOrString(v: unknown): GoRepr {
  return new GoRepr(v == null ? '0' : String(v));
}

/**
 * A metav1.LabelSelector as field errors print it: ErrorBody dereferences the pointer, and the
 * struct's String() has a pointer receiver, so Go's %#v is what shows (maps with sorted keys,
 * nil and empty told apart).
 */
export function goLabelSelector(sel: any): GoRepr {
  if (sel == null) return new GoRepr('"null"');
  const exprs = sel.matchExpressions;
  const requirement = (e: any) => `v1.LabelSelectorRequirement{Key:${goQuote(String(e?.key ?? ''))}, Operator:${goQuote(String(e?.operator ?? ''))}, Values:${goStrings(e?.values ?? null).repr}}`;
  const list = exprs == null ? '[]v1.LabelSelectorRequirement(nil)' : `[]v1.LabelSelectorRequirement{${(exprs as any[]).map(requirement).join(', ')}}`;
  return new GoRepr(`v1.LabelSelector{MatchLabels:${goStringMap(sel.matchLabels ?? null).repr}, MatchExpressions:${list}}`);
}
