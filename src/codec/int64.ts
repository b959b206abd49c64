// Integers beyond 2^53, kept exactly.
//
// Kubernetes keeps every int64 exactly: its built-in int64 fields are Go int64s, and the integers
// of unstructured content (custom resources, free-form JSON) are decoded as int64 when they are
// integral and in range. A JS number holds integers exactly only up to Number.MAX_SAFE_INTEGER
// (2^53 - 1): JSON.parse turns 9007199254740993 into 9007199254740992, and max int64 into
// 9223372036854775808, which is not an int64 at all.
//
// So an integer whose magnitude is beyond MAX_SAFE_INTEGER is held in an object as a JS bigint,
// and every other number stays a JS number: the invariant every decoder here keeps is that a
// bigint in an object is such an integer (never a small one), so code that never meets one pays
// nothing. Decoding JSON is JSON.parse first, then (only when the parsed value holds an unsafe
// number: a walk of the value, or the walk the duplicate-key check makes anyway) the text again,
// exactly (parseJSONExact). Writing JSON is JSON.stringify first; it throws a TypeError on a
// bigint, and only then is the value written by stringifyJSON's own exact writer.

export const INT64_MAX = 9223372036854775807n;
export const INT64_MIN = -9223372036854775808n;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const MAX_SAFE_BIG = BigInt(MAX_SAFE);

/** an int64 as objects hold it: a number within ±(2^53 - 1), else a bigint */
export type Int64 = number | bigint;

/** whether a number is beyond the integers a double holds exactly (it may stand for a larger integer in the text) */
export function isUnsafeNumber(v: unknown): boolean {
  return typeof v === 'number' && (v > MAX_SAFE || v < -MAX_SAFE);
}

/** whether a bigint is an int64 */
export function inInt64(v: bigint): boolean {
  return v >= INT64_MIN && v <= INT64_MAX;
}

/** an exact integer as the object holds it: a number when it is safe, else a bigint */
export function exactInteger(v: bigint): number | bigint {
  return v > MAX_SAFE_BIG || v < -MAX_SAFE_BIG ? v : Number(v);
}

/**
 * A decoded JSON value with the unsafe numbers (see isUnsafeNumber) turned exact: the value
 * itself when it holds none (the common case: one walk), else the text parsed again exactly.
 */
export function exactJSON(text: string, parsed: unknown): unknown {
  if (!holdsUnsafeNumber(parsed, 0)) return parsed;
  try {
    return parseJSONExact(text);
  } catch (e) {
    // (deeper than any body is let in: codec/depth.ts)
    if (e instanceof JSONTooDeepError) return parsed;
    throw e;
  }
}

/** JSON.parse, with integers beyond MAX_SAFE_INTEGER as bigints */
export function parseJSON(text: string): any {
  return exactJSON(text, JSON.parse(text));
}

function holdsUnsafeNumber(v: unknown, depth: number): boolean {
  if (typeof v === 'number') return isUnsafeNumber(v);
  if (v === null || typeof v !== 'object') return false;
  if (depth > EXACT_MAX_DEPTH) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (holdsUnsafeNumber(v[i], depth + 1)) return true;
    return false;
  }
  for (const k in v as Record<string, unknown>) if (holdsUnsafeNumber((v as Record<string, unknown>)[k], depth + 1)) return true;
  return false;
}

/**
 * A decoded value whose integers are all bigints (the yaml library's intAsBigInt) with the safe
 * ones made numbers, in place: the form every object here has. Returns the value.
 */
export function narrowBigInts(v: any): any {
  if (typeof v === 'bigint') return exactInteger(v);
  if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = narrowBigInts(v[i]);
    return v;
  }
  for (const k of Object.keys(v)) {
    const x = v[k];
    if (x !== null && (typeof x === 'object' || typeof x === 'bigint')) v[k] = narrowBigInts(x);
  }
  return v;
}

/** whether a value holds a bigint anywhere */
export function holdsBigInt(v: unknown): boolean {
  if (typeof v === 'bigint') return true;
  if (v === null || typeof v !== 'object') return false;
  if (Array.isArray(v)) return v.some(holdsBigInt);
  if (ArrayBuffer.isView(v)) return false;
  for (const k in v as Record<string, unknown>) if (holdsBigInt((v as Record<string, unknown>)[k])) return true;
  return false;
}

/** the index of the first character at or after `i` that is not JSON white space */
function skipSpace(text: string, i: number): number {
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
    else break;
  }
  return i;
}

/** thrown for a text nested deeper than the exact parser goes (JSON.parse has read it already) */
export class JSONTooDeepError extends Error {}

const EXACT_MAX_DEPTH = 1000;

/**
 * JSON.parse of a valid JSON text, with every integer literal (no fraction, no exponent) beyond
 * MAX_SAFE_INTEGER as a bigint; everything else as JSON.parse makes it (members in the text's
 * order, the last of a repeated key kept, `__proto__` an own member). Call it on text JSON.parse
 * has accepted: it does not report syntax errors.
 */
export function parseJSONExact(text: string): any {
  let i = 0;
  const n = text.length;
  const ws = (): void => {
    i = skipSpace(text, i);
  };
  const str = (): string => {
    const start = i;
    let j = i + 1;
    let escaped = false;
    for (;;) {
      const c = text.charCodeAt(j);
      if (c === 0x5c) {
        escaped = true;
        j += 2;
      } else if (c === 0x22 || j >= n) break;
      else j++;
    }
    i = j + 1;
    return escaped ? (JSON.parse(text.slice(start, i)) as string) : text.slice(start + 1, j);
  };
  const value = (depth: number): unknown => {
    ws();
    const c = text.charCodeAt(i);
    if (c === 0x22) return str();
    if (c === 0x7b || c === 0x5b) {
      if (depth >= EXACT_MAX_DEPTH) throw new JSONTooDeepError(`JSON nested more than ${EXACT_MAX_DEPTH} levels`);
      i++;
      if (c === 0x5b) {
        const a: unknown[] = [];
        ws();
        if (text.charCodeAt(i) === 0x5d) {
          i++;
          return a;
        }
        for (;;) {
          a.push(value(depth + 1));
          ws();
          if (text.charCodeAt(i++) !== 0x2c) return a; // ']'
        }
      }
      const o: Record<string, unknown> = {};
      ws();
      if (text.charCodeAt(i) === 0x7d) {
        i++;
        return o;
      }
      for (;;) {
        ws();
        const k = str();
        ws();
        i++; // ':'
        const v = value(depth + 1);
        if (k === '__proto__') Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
        else o[k] = v;
        ws();
        if (text.charCodeAt(i++) !== 0x2c) return o; // '}'
      }
    }
    if (c === 0x74) return (i += 4), true;
    if (c === 0x66) return (i += 5), false;
    if (c === 0x6e) return (i += 4), null;
    const start = i;
    let integral = true;
    while (i < n) {
      const d = text.charCodeAt(i);
      if ((d >= 0x30 && d <= 0x39) || d === 0x2d) i++;
      else if (d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b) {
        integral = false;
        i++;
      } else break;
    }
    const lit = text.slice(start, i);
    const num = Number(lit);
    if (integral && (num > MAX_SAFE || num < -MAX_SAFE)) return BigInt(lit);
    return num;
  };
  return value(0);
}

/**
 * The number literals of a valid JSON text written with a fraction or an exponent (`1.0`,
 * `1e3`), by path (`spec.template.spec.terminationGracePeriodSeconds`, `ports[0].containerPort`:
 * every member as `.key`, every item as `[i]`); null when there is none. JSON.parse makes `1.0`
 * and `1` the same number, but Go's decoder refuses a literal with a fraction or an exponent in an
 * integer field ("cannot unmarshal number 1.0 into Go struct field ... of type int32"), so the
 * decoder of a built-in kind asks for the literals once a body has integer fields (codec/json.ts).
 * Strings are skipped with indexOf; nothing is built unless such a literal is found.
 * `lastWins`: a member repeated in an object replaces the earlier one's value, literals and all,
 * as when the text is decoded into a Go map (a merge patch); without it every literal counts, as
 * Go's decoder into a struct reports the first such error even if a later member repeats it.
 */
export function fractionalLiterals(text: string, lastWins = false): Map<string, string> | null {
  // (the common body has none: a number with '.', 'e' or 'E' right after a digit at a value's start)
  if (!/[:,[]\s*-?\d+[.eE]/.test(text)) return null;
  let found: Map<string, string> | null = null;
  const n = text.length;
  let i = 0;
  const ws = (): void => {
    i = skipSpace(text, i);
  };
  const str = (): string => {
    const start = i;
    let j = i + 1;
    for (;;) {
      j = text.indexOf('"', j);
      if (j < 0) {
        j = n;
        break;
      }
      let b = j - 1;
      while (text.charCodeAt(b) === 0x5c) b--;
      if ((j - 1 - b) % 2 === 0) break; // not escaped
      j++;
    }
    i = j + 1;
    const raw = text.slice(start + 1, j);
    return raw.includes('\\') ? (JSON.parse(text.slice(start, i)) as string) : raw;
  };
  const value = (path: string, depth: number): void => {
    ws();
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      str();
      return;
    }
    if (c === 0x7b || c === 0x5b) {
      if (depth >= EXACT_MAX_DEPTH) throw new JSONTooDeepError(`JSON nested more than ${EXACT_MAX_DEPTH} levels`);
      i++;
      ws();
      if (text.charCodeAt(i) === (c === 0x5b ? 0x5d : 0x7d)) {
        i++;
        return;
      }
      for (let k = 0; ; k++) {
        if (c === 0x5b) value(`${path}[${k}]`, depth + 1);
        else {
          ws();
          const key = str();
          ws();
          i++; // ':'
          const member = path ? `${path}.${key}` : key;
          if (lastWins && found !== null) forgetUnder(found, member);
          value(member, depth + 1);
        }
        ws();
        if (text.charCodeAt(i++) !== 0x2c) return; // ']' or '}'
      }
    }
    if (c === 0x74 || c === 0x6e) return void (i += 4);
    if (c === 0x66) return void (i += 5);
    const start = i;
    let fractional = false;
    while (i < n) {
      const d = text.charCodeAt(i);
      if ((d >= 0x30 && d <= 0x39) || d === 0x2d || d === 0x2b) i++;
      else if (d === 0x2e || d === 0x65 || d === 0x45) {
        fractional = true;
        i++;
      } else break;
    }
    if (fractional) (found ??= new Map()).set(path, text.slice(start, i));
  };
  value('', 0);
  return found;
}

/** whether a path of fractionalLiterals' form is `prefix` or under it (`prefix.x`, `prefix[0]`); every path is under '' */
export function underPath(k: string, prefix: string): boolean {
  if (prefix === '') return true;
  if (!k.startsWith(prefix)) return false;
  const c = k.charCodeAt(prefix.length);
  return Number.isNaN(c) || c === 0x2e || c === 0x5b; // end, '.', '['
}

/** drops the literals at `path` and under it */
export function forgetUnder(m: Map<string, string>, path: string): void {
  for (const k of m.keys()) if (underPath(k, path)) m.delete(k);
}

/** JSON.stringify's error for a bigint (V8: "Do not know how to serialize a BigInt"), not a cycle's */
function isBigIntError(e: unknown): boolean {
  return e instanceof TypeError && e.message.includes('BigInt');
}

/** a deep copy of a JSON value through its JSON text (JSON.parse(JSON.stringify(v))), bigints kept */
export function copyJSON<T>(v: T): T {
  let text: string;
  try {
    text = JSON.stringify(v);
  } catch (e) {
    if (!isBigIntError(e)) throw e;
    return parseJSONExact(stringifyJSON(v)) as T;
  }
  return text === undefined ? v : (JSON.parse(text) as T);
}

/**
 * JSON.stringify, exact for bigints (written as the integers they are). The value is written by
 * JSON.stringify itself unless it holds a bigint (JSON.stringify's TypeError says so), and then
 * by a writer of the same text. `indent`: as JSON.stringify's third argument, in spaces.
 */
export function stringifyJSON(v: unknown, indent?: number): string {
  try {
    return indent ? JSON.stringify(v, null, indent) : JSON.stringify(v);
  } catch (e) {
    if (!isBigIntError(e)) throw e;
  }
  const pad = indent ? ' '.repeat(indent) : '';
  return write(v, '', pad, '') ?? (undefined as unknown as string);
}

/** a value's JSON as JSON.stringify writes it (undefined where it writes nothing), bigints as integers */
function write(v: unknown, key: string, pad: string, cur: string): string | undefined {
  if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') v = (v as { toJSON(k: string): unknown }).toJSON(key);
  switch (typeof v) {
    case 'bigint':
      return v.toString();
    case 'string':
    case 'number':
    case 'boolean':
      return JSON.stringify(v);
    case 'object':
      break;
    default:
      return undefined;
  }
  if (v === null) return 'null';
  if (v instanceof Number || v instanceof String || v instanceof Boolean) return JSON.stringify(v);
  const inner = cur + pad;
  const sep = pad ? `,\n${inner}` : ',';
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    const parts: string[] = [];
    for (let k = 0; k < v.length; k++) parts.push(write(v[k], String(k), pad, inner) ?? 'null');
    return pad ? `[\n${inner}${parts.join(sep)}\n${cur}]` : `[${parts.join(',')}]`;
  }
  const parts: string[] = [];
  for (const k of Object.keys(v as object)) {
    const s = write((v as Record<string, unknown>)[k], k, pad, inner);
    if (s !== undefined) parts.push(`${JSON.stringify(k)}:${pad ? ' ' : ''}${s}`);
  }
  if (parts.length === 0) return '{}';
  return pad ? `{\n${inner}${parts.join(sep)}\n${cur}}` : `{${parts.join(',')}}`;
}
