// Path elements: one step of a field path, as server-side apply names it.
//
//   f:<name>        a field of a struct or a key of a map
//   k:{"a":1,...}   an item of an associative list (listType=map), by its key fields sorted by name
//   v:<json>        an item of a set (listType=set), by its value
//   i:<n>           an item of a list by index (never produced for built-in types; read and kept)
//
// The serialized form is exactly the key used in metadata.managedFields[].fieldsV1, and it is also
// this module's identity for an element: two elements are equal when their strings are equal.
// Ordering follows structured-merge-diff's PathElement.Compare (fields, then keys, then values,
// then indexes), which is the order of the keys of a fieldsV1 object.

import { goJSON, goJSONString, goQuote, goStringCompare } from '../../machinery/gostrings.js';

export type PathElement =
  | { readonly t: 'f'; readonly name: string; readonly s: string }
  | { readonly t: 'k'; readonly fields: readonly (readonly [string, unknown])[]; readonly s: string }
  | { readonly t: 'v'; readonly value: unknown; readonly s: string }
  | { readonly t: 'i'; readonly index: number; readonly s: string };

export type Path = readonly PathElement[];

// ---------------------------------------------------------------------------------------------
// Values as structured-merge-diff compares them (value.Compare, value.Equals): numbers, then
// strings, then booleans, then lists, then maps, then null.

export function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function rank(v: unknown): number {
  if (typeof v === 'number' || typeof v === 'bigint') return 0;
  if (typeof v === 'string') return 1;
  if (typeof v === 'boolean') return 2;
  if (Array.isArray(v)) return 3;
  if (isMap(v)) return 4;
  return 5; // null
}

export function compareValues(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      return a! < b! ? -1 : a! > b! ? 1 : 0;
    case 1:
      return goStringCompare(a as string, b as string);
    case 2:
      return a === b ? 0 : a ? 1 : -1;
    case 3: {
      const x = a as unknown[];
      const y = b as unknown[];
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) {
        const c = compareValues(x[i], y[i]);
        if (c !== 0) return c;
      }
      return x.length < y.length ? -1 : x.length > y.length ? 1 : 0;
    }
    case 4: {
      const x = a as Record<string, unknown>;
      const y = b as Record<string, unknown>;
      const xk = Object.keys(x);
      const yk = Object.keys(y);
      if (xk.length === 0 && yk.length === 0) return 0;
      const all = [...new Set([...xk, ...yk])].sort(goStringCompare);
      let i = 0;
      for (const k of all) {
        let c: number;
        if (i === xk.length) c = -1;
        else if (i === yk.length) c = 1;
        else if (!(k in x)) c = 1;
        else if (!(k in y)) c = -1;
        else c = compareValues(x[k], y[k]);
        i++;
        if (c !== 0) return c;
      }
      return 0;
    }
    default:
      return 0;
  }
}

/** Deep equality of JSON values (value.Equals): lists in order, maps by key. */
export function equalValues(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!equalValues(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    n++;
    if (!Object.prototype.hasOwnProperty.call(y, k) || !equalValues(x[k], y[k])) return false;
  }
  let m = 0;
  for (const k in y) if (y[k] !== undefined) m++;
  return n === m;
}

// ---------------------------------------------------------------------------------------------
// Construction. Field elements are interned: the same few hundred names recur in every object.

const fieldCache = new Map<string, PathElement>();

export function fieldPE(name: string): PathElement {
  let pe = fieldCache.get(name);
  if (!pe) {
    pe = { t: 'f', name, s: 'f:' + name };
    if (fieldCache.size < 50000) fieldCache.set(name, pe);
  }
  return pe;
}

/** An associative-list item by its key fields (sorted by name, as Kubernetes sorts them). */
export function keyPE(fields: (readonly [string, unknown])[]): PathElement {
  const sorted = fields.length > 1 ? [...fields].sort((a, b) => goStringCompare(a[0], b[0])) : fields;
  let s = 'k:{';
  for (let i = 0; i < sorted.length; i++) {
    if (i > 0) s += ',';
    s += goJSONString(sorted[i]![0]) + ':' + goJSON(sorted[i]![1]);
  }
  s += '}';
  return { t: 'k', fields: sorted, s };
}

export function valuePE(value: unknown): PathElement {
  return { t: 'v', value, s: 'v:' + goJSON(value) };
}

export function indexPE(index: number): PathElement {
  return { t: 'i', index, s: 'i:' + index };
}

/** Thrown for a malformed fieldsV1 key. */
export class PathElementError extends Error {}

/**
 * Parses a fieldsV1 key. Returns undefined for an element type this version does not know
 * (Kubernetes drops those silently); throws PathElementError for a malformed one.
 */
export function parsePE(s: string): PathElement | undefined {
  if (s.length < 2) throw new PathElementError('key must be 2 characters long:');
  if (s[1] !== ':') throw new PathElementError(`missing colon: ${s}`);
  const rest = s.slice(2);
  switch (s[0]) {
    case 'f':
      return fieldPE(rest);
    case 'v': {
      let v: unknown;
      try {
        v = JSON.parse(rest);
      } catch (e) {
        throw new PathElementError(`parsing value of ${s}: ${(e as Error).message}`);
      }
      return valuePE(v);
    }
    case 'k': {
      let v: unknown;
      try {
        v = JSON.parse(rest);
      } catch (e) {
        throw new PathElementError(`parsing key of ${s}: ${(e as Error).message}`);
      }
      if (!isMap(v)) throw new PathElementError(`ReadObjectCB: expect { or n, but found ${rest[0] ?? ''}`);
      return keyPE(Object.entries(v));
    }
    case 'i': {
      if (!/^[+-]?\d+$/.test(rest)) throw new PathElementError(`strconv.Atoi: parsing ${goQuote(rest)}: invalid syntax`);
      return indexPE(Number(rest));
    }
    default:
      return undefined;
  }
}

const TYPE_ORDER = { f: 0, k: 1, v: 2, i: 3 } as const;

function compareKeys(x: readonly (readonly [string, unknown])[], y: readonly (readonly [string, unknown])[]): number {
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const c = goStringCompare(x[i]![0], y[i]![0]);
    if (c !== 0) return c;
    const d = compareValues(x[i]![1], y[i]![1]);
    if (d !== 0) return d;
  }
  return x.length < y.length ? -1 : x.length > y.length ? 1 : 0;
}

/** structured-merge-diff's PathElement.Compare. */
export function comparePE(a: PathElement, b: PathElement): number {
  if (a.t !== b.t) return TYPE_ORDER[a.t] < TYPE_ORDER[b.t] ? -1 : 1;
  switch (a.t) {
    case 'f':
      return goStringCompare(a.name, (b as typeof a).name);
    case 'k':
      return compareKeys(a.fields, (b as typeof a).fields);
    case 'v':
      return compareValues(a.value, (b as { value: unknown }).value);
    case 'i': {
      const y = (b as { index: number }).index;
      return a.index < y ? -1 : a.index > y ? 1 : 0;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Human-readable paths, as conflict messages and StatusCauses show them: `.spec.replicas`,
// `.spec.containers[name="nginx"].image`, `.metadata.finalizers[="a"]`, `.x[3]`.

/** value.ToString */
export function valueString(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return '[' + v.map(valueString).join(',') + ']';
  return Object.entries(v as object)
    .map(([k, x]) => `${k}=${valueString(x)}`)
    .join('');
}

export function peString(pe: PathElement): string {
  switch (pe.t) {
    case 'f':
      return '.' + pe.name;
    case 'k':
      return '[' + pe.fields.map(([k, v]) => `${k}=${valueString(v)}`).join(',') + ']';
    case 'v':
      return `[=${valueString(pe.value)}]`;
    case 'i':
      return `[${pe.index}]`;
  }
}

export function pathString(p: Path): string {
  let s = '';
  for (const pe of p) s += peString(pe);
  return s;
}
