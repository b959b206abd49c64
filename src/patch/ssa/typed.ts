// Walks over JSON values guided by their shape: the field set of a value, the comparison of two
// values, the merge of an applied configuration into a live object, and the removal of paths.
// Each follows the rules of structured-merge-diff's typed package, so that Keelson records the
// same managed fields and merges to the same object as Kubernetes:
//
// - a leaf (scalar, atomic struct/map/list, or a struct/map/list that is empty or null on both
//   sides) is compared, owned and replaced whole;
// - struct fields and map keys are visited one by one; a map key (but not a struct field) is a
//   member of the set on its own; a null or empty-object value is a member too;
// - list items of `set` and `map` lists are visited by their value or key; every item is a member.
//
// Values are plain JSON (objects, arrays, strings, numbers, booleans, null). `undefined` stands
// for "absent" (Go's nil value) where a walker compares two sides.
import { FieldSet } from './fieldset.js';
import { equalValues, fieldPE, isMap, keyPE, valuePE, peString, type PathElement } from './pathelement.js';
import { childShape, hasMapAtom, isNamedField, keyDefault, listShapeOf, type ListShape, type Shape } from './shape.js';
import { goQuote } from '../../machinery/gostrings.js';

type Kind = 'leaf' | 'map' | 'list';

function kindOf(s: Shape, v: unknown): Kind {
  switch (s.k) {
    case 'scalar':
    case 'untyped':
      return 'leaf';
    case 'struct':
    case 'map':
      if (s.atomic) return 'leaf';
      return v === null || v === undefined || isMap(v) ? 'map' : 'leaf';
    case 'deduced':
      return v === null || v === undefined || isMap(v) ? 'map' : 'leaf';
    case 'list':
      if (s.rel === 'atomic') return 'leaf';
      return v === null || v === undefined || Array.isArray(v) ? 'list' : 'leaf';
  }
}

function emptyMap(v: unknown): boolean {
  if (!isMap(v)) return true; // null or absent
  for (const k in v) if (v[k] !== undefined) return false;
  return true;
}

function emptyList(v: unknown): boolean {
  return !Array.isArray(v) || v.length === 0;
}

/** The path element of a list item, or an error message (listItemToPathElement). */
export function itemPE(l: ListShape, item: unknown): PathElement | string {
  if (l.rel === 'map' && l.keys.length > 0) {
    if (item === null || item === undefined) return 'associative list with keys may not have a null element';
    if (!isMap(item)) return 'associative list with keys may not have non-map elements';
    const fields: [string, unknown][] = [];
    for (const key of l.keys) {
      if (Object.prototype.hasOwnProperty.call(item, key) && item[key] !== undefined) fields.push([key, item[key]]);
      else {
        const def = keyDefault(l, key);
        if (def !== undefined && def !== null) fields.push([key, def]);
      }
    }
    if (fields.length === 0) {
      return `associative list with keys has an element that omits all key fields [${l.keys.map(goQuote).join(' ')}] (and doesn't have default values for any key fields)`;
    }
    return keyPE(fields);
  }
  if (isMap(item)) return "associative list without keys has an element that's a map type";
  if (Array.isArray(item)) return 'not supported: associative list with lists as elements';
  if (item === null || item === undefined) return "associative list without keys has an element that's an explicit null";
  return valuePE(item);
}

// ---------------------------------------------------------------------------------------------
// Field sets (TypedValue.ToFieldSet)

/** The set of paths a value sets: what an applier of this value owns. */
export function toFieldSet(s: Shape, v: unknown): FieldSet {
  const set = new FieldSet();
  fsWalk(s, v, [], set);
  return set;
}

function fsWalk(s: Shape, v: unknown, path: PathElement[], set: FieldSet): void {
  switch (kindOf(s, v)) {
    case 'leaf':
      set.insert(path);
      return;
    case 'map': {
      if (!isMap(v)) return;
      for (const key in v) {
        const val = v[key];
        if (val === undefined) continue;
        const pe = fieldPE(key);
        path.push(pe);
        fsWalk(childShape(s, key), val, path, set);
        if (val === null || (isMap(val) && emptyMap(val))) set.insert(path);
        else if (!isNamedField(s, key)) set.insert(path);
        path.pop();
      }
      return;
    }
    case 'list': {
      if (!Array.isArray(v)) return;
      const l = s as ListShape;
      const pes: (PathElement | undefined)[] = new Array(v.length);
      const seen = new Set<string>();
      const dups = new Set<string>();
      for (let i = 0; i < v.length; i++) {
        const pe = itemPE(l, v[i]);
        if (typeof pe === 'string') continue;
        pes[i] = pe;
        if (seen.has(pe.s)) {
          if (!dups.has(pe.s)) {
            path.push(pe);
            set.insert(path);
            path.pop();
            dups.add(pe.s);
          }
        } else seen.add(pe.s);
      }
      for (let i = 0; i < v.length; i++) {
        const pe = pes[i];
        if (!pe || dups.has(pe.s)) continue;
        path.push(pe);
        fsWalk(l.items, v[i], path, set);
        set.insert(path);
        path.pop();
      }
      return;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Comparison (TypedValue.Compare)

export interface Comparison {
  /** paths set in the new value and absent in the old (every node of an added subtree) */
  added: FieldSet;
  /** leaves whose value changed */
  modified: FieldSet;
  /** paths set in the old value and absent in the new */
  removed: FieldSet;
}

/**
 * Compares two values (either may be undefined: absent). With `changedOnly`, `added` and
 * `modified` are one and the same set (their union, for callers that only need what changed).
 */
export function compare(s: Shape, lhs: unknown, rhs: unknown, changedOnly = false): Comparison {
  const added = new FieldSet();
  const c: Comparison = { added, modified: changedOnly ? added : new FieldSet(), removed: new FieldSet() };
  cmpWalk(s, lhs, rhs, [], c);
  return c;
}

function cmpLeaf(l: unknown, r: unknown, path: PathElement[], c: Comparison): void {
  if (l === undefined) c.added.insert(path);
  else if (r === undefined) c.removed.insert(path);
  else if (!equalValues(l, r)) c.modified.insert(path);
}

function cmpWalk(s: Shape, l: unknown, r: unknown, path: PathElement[], c: Comparison): void {
  if (l === r) return; // the same value (or the same object): nothing changed below
  const kind = kindOf(s, r !== undefined ? r : l);
  if (kind === 'leaf') return cmpLeaf(l, r, path, c);
  if (kind === 'map') {
    const lm = isMap(l) ? l : undefined;
    const rm = isMap(r) ? r : undefined;
    if (emptyMap(lm) && emptyMap(rm)) return cmpLeaf(l, r, path, c);
    if (lm) {
      for (const key in lm) {
        const lv = lm[key];
        if (lv === undefined) continue;
        path.push(fieldPE(key));
        cmpWalk(childShape(s, key), lv, rm ? rm[key] : undefined, path, c);
        path.pop();
      }
    }
    if (rm) {
      for (const key in rm) {
        const rv = rm[key];
        if (rv === undefined || (lm && lm[key] !== undefined)) continue;
        path.push(fieldPE(key));
        cmpWalk(childShape(s, key), undefined, rv, path, c);
        path.pop();
      }
    }
  } else {
    if (emptyList(l) && emptyList(r)) return cmpLeaf(l, r, path, c);
    cmpList(s as ListShape, Array.isArray(l) ? l : [], Array.isArray(r) ? r : [], path, c);
  }
  if (l === undefined) c.added.insert(path);
  else if (r === undefined) c.removed.insert(path);
}

function cmpList(l: ListShape, lhs: unknown[], rhs: unknown[], path: PathElement[], c: Comparison): void {
  if (equalValues(lhs, rhs)) return; // most writes leave most lists alone: skip naming their items
  const all: PathElement[] = [];
  const lv = new Map<string, unknown[]>();
  const rv = new Map<string, unknown[]>();
  for (const item of lhs) {
    const pe = itemPE(l, item);
    if (typeof pe === 'string') continue;
    const got = lv.get(pe.s);
    if (got) got.push(item);
    else {
      lv.set(pe.s, [item]);
      all.push(pe);
    }
  }
  for (const item of rhs) {
    const pe = itemPE(l, item);
    if (typeof pe === 'string') continue;
    const got = rv.get(pe.s);
    if (got) got.push(item);
    else {
      rv.set(pe.s, [item]);
      if (!lv.has(pe.s)) all.push(pe);
    }
  }
  for (const pe of all) {
    const ll = lv.get(pe.s) ?? [];
    const rl = rv.get(pe.s) ?? [];
    path.push(pe);
    if (ll.length <= 1 && rl.length <= 1) {
      cmpWalk(l.items, ll[0], rl[0], path, c);
    } else if (ll.length >= 2 && rl.length >= 2) {
      if (ll.length !== rl.length || ll.some((x, i) => !equalValues(x, rl[i]))) c.modified.insert(path);
    } else if (ll.length >= 2) {
      if (rl.length) cmpWalk(l.items, undefined, rl[0], path, c);
      c.removed.insert(path);
    } else {
      if (ll.length) cmpWalk(l.items, ll[0], undefined, path, c);
      c.added.insert(path);
    }
    path.pop();
  }
}

// ---------------------------------------------------------------------------------------------
// Merge (TypedValue.Merge): the applied configuration (rhs) over the live object (lhs).

export class MergeError extends Error {}

/** Merges rhs over lhs; returns undefined when neither side produces a value. */
export function merge(s: Shape, lhs: unknown, rhs: unknown): unknown {
  return mergeWalk(s, lhs, rhs);
}

function mergeWalk(s: Shape, l: unknown, r: unknown): unknown {
  const kind = kindOf(s, r !== undefined ? r : l);
  if (kind === 'map') {
    const lm = isMap(l) ? l : undefined;
    const rm = isMap(r) ? r : undefined;
    if (!(emptyMap(lm) && emptyMap(rm))) {
      const out: Record<string, unknown> = {};
      let n = 0;
      if (lm) {
        for (const key in lm) {
          const lv = lm[key];
          if (lv === undefined) continue;
          const v = mergeWalk(childShape(s, key), lv, rm ? rm[key] : undefined);
          if (v !== undefined) {
            out[key] = v;
            n++;
          }
        }
      }
      if (rm) {
        for (const key in rm) {
          const rv = rm[key];
          if (rv === undefined || (lm && lm[key] !== undefined)) continue;
          const v = mergeWalk(childShape(s, key), undefined, rv);
          if (v !== undefined) {
            out[key] = v;
            n++;
          }
        }
      }
      return n > 0 ? out : undefined;
    }
  } else if (kind === 'list') {
    if (!(emptyList(l) && emptyList(r))) return mergeList(s as ListShape, Array.isArray(l) ? l : undefined, Array.isArray(r) ? r : undefined);
  }
  return r !== undefined ? r : l;
}

function indexItems(l: ListShape, list: unknown[] | undefined, allowDuplicates: boolean): { pes: PathElement[]; observed: Map<string, unknown>; idx: number[] } {
  const pes: PathElement[] = [];
  const idx: number[] = [];
  const observed = new Map<string, unknown>();
  if (!list) return { pes, observed, idx };
  for (let i = 0; i < list.length; i++) {
    const pe = itemPE(l, list[i]);
    if (typeof pe === 'string') {
      if (!allowDuplicates) throw new MergeError(`element ${i}: ${pe}`);
      continue;
    }
    if (observed.has(pe.s)) {
      if (!allowDuplicates) throw new MergeError(`duplicate entries for key ${peString(pe)}`);
      observed.set(pe.s, null); // duplicated items are not merged with the new value
    } else observed.set(pe.s, list[i]);
    pes.push(pe);
    idx.push(i);
  }
  return { pes, observed, idx };
}

/**
 * The items of both lists: items only in the live list keep their place, items in both follow
 * the order of the applied list, items only in the applied list come where it puts them.
 */
function mergeList(l: ListShape, lhs: unknown[] | undefined, rhs: unknown[] | undefined): unknown {
  const R = indexItems(l, rhs, false);
  const L = indexItems(l, lhs, true);
  const out: unknown[] = [];
  const shared: string[] = [];
  for (const pe of R.pes) if (L.observed.has(pe.s)) shared.push(pe.s);
  let si = 0;
  let nextShared: string | undefined = shared[si++];
  const mergedRHS = new Set<string>();
  const lLen = L.pes.length;
  const rLen = R.pes.length;
  const push = (v: unknown) => {
    if (v !== undefined) out.push(v);
  };
  for (let lI = 0, rI = 0; lI < lLen || rI < rLen; ) {
    if (lI < lLen && rI < rLen) {
      const pe = L.pes[lI]!;
      if (pe.s === R.pes[rI]!.s) {
        mergedRHS.add(pe.s);
        push(mergeWalk(l.items, L.observed.get(pe.s), R.observed.get(pe.s)));
        lI++;
        rI++;
        nextShared = shared[si++];
        continue;
      }
      if (R.observed.has(pe.s) && nextShared !== undefined && nextShared !== pe.s) {
        lI++;
        continue;
      }
    }
    if (lI < lLen) {
      const pe = L.pes[lI]!;
      if (!R.observed.has(pe.s)) {
        push(mergeWalk(l.items, lhs![L.idx[lI]!], undefined));
        lI++;
        continue;
      } else if (mergedRHS.has(pe.s)) {
        lI++;
      }
    }
    if (rI < rLen) {
      const pe = R.pes[rI]!;
      mergedRHS.add(pe.s);
      push(mergeWalk(l.items, L.observed.get(pe.s), R.observed.get(pe.s)));
      rI++;
      if (nextShared !== undefined && nextShared === pe.s) nextShared = shared[si++];
    }
  }
  return out.length > 0 ? out : undefined;
}

// ---------------------------------------------------------------------------------------------
// Removal (TypedValue.RemoveItems): the value without the paths of a set. A map or list left
// empty becomes null, as in Kubernetes; atomic values below a removed path's parent are dropped.

export function removeItems(s: Shape, v: unknown, toRemove: FieldSet): unknown {
  const out = rmWalk(s, v, toRemove);
  return out === undefined ? null : out;
}

function rmWalk(s: Shape, v: unknown, toRemove: FieldSet): unknown {
  if (s.k === 'scalar') return v;
  if (s.k === 'list' || (s.k === 'deduced' && Array.isArray(v)) || (s.k === 'untyped' && Array.isArray(v))) {
    const l = listShapeOf(s)!;
    if (!Array.isArray(v) || v.length === 0) return undefined;
    if (l.rel === 'atomic') return undefined;
    const items: unknown[] = [];
    for (const item of v) {
      const pe = itemPE(l, item);
      if (typeof pe === 'string') {
        items.push(item);
        continue;
      }
      if (toRemove.has([pe])) continue;
      const sub = toRemove.withPrefix(pe);
      items.push(sub.empty() ? item : (rmWalk(l.items, item, sub) ?? null));
    }
    return items.length > 0 ? items : undefined;
  }
  if (hasMapAtom(s) && isMap(v)) {
    if ((s.k === 'struct' || s.k === 'map') && s.atomic) return undefined;
    if (s.k === 'untyped') return undefined;
    const out: Record<string, unknown> = {};
    let n = 0;
    for (const key in v) {
      let val = v[key];
      if (val === undefined) continue;
      const pe = fieldPE(key);
      if (toRemove.has([pe])) continue;
      const sub = toRemove.withPrefix(pe);
      if (!sub.empty()) val = rmWalk(childShape(s, key), val, sub) ?? null;
      out[key] = val;
      n++;
    }
    return n > 0 ? out : undefined;
  }
  // a value of the wrong kind for a struct, map or list is dropped; a deduced or untyped scalar stays
  if (s.k === 'struct' || s.k === 'map') return undefined;
  if (v === null || typeof v === 'object') return undefined;
  return v;
}

// ---------------------------------------------------------------------------------------------
// EnsureNamedFieldsAreMembers: struct fields that have paths below them become members too, so
// that removing a set of paths also removes the struct fields it reaches into.

export function ensureNamedFieldsAreMembers(set: FieldSet, s: Shape | undefined): FieldSet {
  const out = new FieldSet();
  for (const [k, pe] of set.members) out.addMember(k, pe);
  for (const [k, c] of set.children) {
    let cs: Shape | undefined;
    if (c.pe.t === 'f' && s && hasMapAtom(s)) {
      if (isNamedField(s, c.pe.name)) out.addMember(k, c.pe);
      cs = childShape(s, c.pe.name);
    } else if (c.pe.t === 'k' && s) {
      cs = listShapeOf(s)?.items;
    }
    out.addChild(k, { pe: c.pe, set: ensureNamedFieldsAreMembers(c.set, cs) });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Validation of an applied configuration (the checks Kubernetes makes when it converts the patch
// to a typed value): no undeclared fields, list items with keys, no duplicate items.

export interface ValidationError {
  path: string;
  message: string;
}

export function validate(s: Shape, v: unknown, allowDuplicates = false): ValidationError[] {
  const errs: ValidationError[] = [];
  valWalk(s, v, '', errs, allowDuplicates);
  return errs;
}

/** Go's %T of an unstructured value. */
function goType(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  if (typeof v === 'bigint') return 'int64';
  if (Array.isArray(v)) return '[]interface {}';
  return 'map[string]interface {}';
}

/** Go's %v of an unstructured value. */
function goV(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return '[' + v.map(goV).join(' ') + ']';
  if (isMap(v)) return 'map[' + Object.keys(v).sort().map((k) => `${k}:${goV(v[k])}`).join(' ') + ']';
  return String(v);
}

/** Go's %#v of an unstructured value. */
function goSharpV(v: unknown): string {
  if (v === null || v === undefined) return 'interface {}(nil)';
  if (typeof v === 'string') return goQuote(v);
  if (Array.isArray(v)) return '[]interface {}{' + v.map(goSharpV).join(', ') + '}';
  if (isMap(v)) return 'map[string]interface {}{' + Object.keys(v).sort().map((k) => `${goQuote(k)}:${goSharpV(v[k])}`).join(', ') + '}';
  return String(v);
}

function valWalk(s: Shape, v: unknown, path: string, errs: ValidationError[], allowDuplicates: boolean): void {
  if (v === null || v === undefined) return;
  // the messages of structured-merge-diff's validation (Go formats the value as it holds it)
  if (s.k === 'scalar') {
    // (an integer beyond 2^53 is a bigint: codec/int64.ts)
    const numeric = typeof v === 'number' || typeof v === 'bigint';
    const scalar = typeof v === 'string' || numeric || typeof v === 'boolean';
    if (s.scalar === 'numeric' && !numeric) errs.push({ path, message: `expected numeric (int or float), got ${goType(v)}` });
    else if (s.scalar === 'string' && typeof v !== 'string') errs.push({ path, message: `expected string, got &value.valueUnstructured{Value:${goSharpV(v)}}` });
    else if (s.scalar === 'boolean' && typeof v !== 'boolean') errs.push({ path, message: `expected boolean, got &{${goV(v)}}` });
    else if (s.scalar === 'untyped' && !scalar) errs.push({ path, message: `expected any scalar, got &{${goV(v)}}` });
    return;
  }
  if ((s.k === 'struct' || s.k === 'map') && !isMap(v)) {
    errs.push({ path, message: `expected map, got &{${goV(v)}}` });
    return;
  }
  if (s.k === 'list' && !Array.isArray(v)) {
    errs.push({ path, message: `expected list, got &{${goV(v)}}` });
    return;
  }
  if (s.k === 'list' && Array.isArray(v)) {
    const seen = new Set<string>();
    for (let i = 0; i < v.length; i++) {
      let seg = `[${i}]`;
      if (s.rel !== 'atomic') {
        const pe = itemPE(s, v[i]);
        if (typeof pe === 'string') {
          errs.push({ path, message: `element ${i}: ${pe}` });
          return;
        }
        if (seen.has(pe.s) && !allowDuplicates) errs.push({ path, message: `duplicate entries for key ${peString(pe)}` });
        seen.add(pe.s);
        seg = peString(pe);
      }
      valWalk(s.items, v[i], path + seg, errs, allowDuplicates);
    }
    return;
  }
  if ((s.k === 'struct' || s.k === 'map' || s.k === 'deduced') && isMap(v)) {
    for (const key in v) {
      const val = v[key];
      if (val === undefined) continue;
      if (s.k === 'struct' && !s.fields.has(key) && !s.other) {
        errs.push({ path: path + '.' + key, message: 'field not declared in schema' });
        return;
      }
      valWalk(childShape(s, key), val, path + '.' + key, errs, allowDuplicates);
    }
  }
}

/** ValidationErrors.Error() */
export function validationMessage(errs: ValidationError[]): string {
  const one = (e: ValidationError) => (e.path ? `${e.path}: ${e.message}` : e.message);
  if (errs.length === 1) return one(errs[0]!);
  return ['errors:', ...errs.map((e) => '  ' + one(e))].join('\n');
}
