// The defaulting engine: compiles, once per root type, a plan of the places in an object where a
// default can apply, and runs it over the JSON form of an object.
//
// Kubernetes defaults a decoded object with a generated "covering" function per kind
// (defaulter-gen): it calls the SetDefaults_X function of the root type, then walks every field
// whose type (or a type below it) has a SetDefaults function or `+default=` markers, applying the
// markers of each struct as it goes. We do the same from our own declarations: the hand-written
// defaulters (one per Go type, registered by canonical type name), the `default` markers of
// schema/gen, and the rounding of ResourceLists. A plan only holds the fields that lead somewhere,
// so a write of a kind without defaults costs one map lookup.
//
// The objects are the normalized JSON form (Go field order). A default that adds a key puts it
// in its Go position (put), so the object stays in the order Kubernetes writes it.
import { copyJSON } from '../../codec/int64.js';
import type { FieldDecl, TypeRef } from '../model.js';
import { getType, jsonFields } from '../types.js';
import { roundUpToMilli } from './quantity.js';

/** JSON field name -> position in Go's output order, for one JSON object type */
export type Order = ReadonlyMap<string, number>;

/** A hand-written defaulter of one type: mutates `o` (a JSON object of that type, or of the
 *  type that embeds it inline; `ord` is the order of that JSON object). */
export type DefaulterFn = (o: any, ord: Order) => void;

interface Registered {
  fn: DefaulterFn;
  /** the fields (relative JSON paths) it may set, for defaultsFor() */
  sets: string[];
}

const defaulters = new Map<string, Registered[]>();
/** types whose ResourceList fields (map of Quantity) are rounded up to milli-units */
const RESOURCE_LIST_PACKAGE = 'io.k8s.api.core.v1.';

/** Registers the SetDefaults function of a type (canonical name). Called at module load only. */
export function defaulter(typeName: string, sets: string[], fn: DefaulterFn): void {
  let list = defaulters.get(typeName);
  if (!list) defaulters.set(typeName, (list = []));
  list.push({ fn, sets });
  plans.clear();
}

export function registeredTypes(): string[] {
  return [...defaulters.keys()];
}

// ---------------------------------------------------------------------------------------------
// Ordered writes

const orders = new Map<string, Order>();

/** The JSON field order of a type (kind/apiVersion first for TypeMeta kinds, inline fields flattened). */
export function orderOf(typeName: string): Order {
  let o = orders.get(typeName);
  if (o) return o;
  const t = getType(typeName);
  if (!t) throw new Error(`defaults: no type ${typeName}`);
  const m = new Map<string, number>();
  let i = 0;
  for (const k of jsonFields(t).keys()) m.set(k, i++);
  orders.set(typeName, m);
  return m;
}

const hasOwn = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** While a plan runs, objects that got a key out of order wait here to be reordered once. */
let pending: Map<object, Order> | null = null;

/**
 * Sets `o[key]`, placing a new key where Go writes it: the keys that come after it in `ord` are
 * moved behind it. An existing key keeps its place. (While a plan runs, the move is done once per
 * object, when the plan ends.)
 */
export function put(o: any, ord: Order, key: string, value: unknown): void {
  if (hasOwn(o, key)) {
    o[key] = value;
    return;
  }
  const idx = ord.get(key) ?? Number.MAX_SAFE_INTEGER;
  let outOfOrder = false;
  for (const k in o) {
    if ((ord.get(k) ?? Number.MAX_SAFE_INTEGER) > idx) {
      outOfOrder = true;
      break;
    }
  }
  o[key] = value;
  if (!outOfOrder) return;
  if (pending) pending.set(o, ord);
  else reorder(o, ord);
}

/** Puts the keys of `o` in `ord` order, in place (keys `ord` does not know keep their order, last). */
function reorder(o: any, ord: Order): void {
  const pos = (k: string) => ord.get(k) ?? Number.MAX_SAFE_INTEGER;
  const keys = Object.keys(o);
  const sorted = [...keys].sort((a, b) => pos(a) - pos(b));
  let first = 0;
  while (first < keys.length && keys[first] === sorted[first]) first++;
  if (first === keys.length) return;
  // only the keys from the first misplaced one on are taken out and put back
  const tail = sorted.slice(first).map((k) => [k, o[k]] as const);
  for (let i = first; i < keys.length; i++) delete o[keys[i]!];
  for (const [k, v] of tail) o[k] = v;
}

/** Runs `fn` with the reordering of objects deferred to its end. */
export function batched(fn: () => void): void {
  if (pending) {
    fn();
    return;
  }
  pending = new Map();
  try {
    fn();
  } finally {
    const todo = pending;
    pending = null;
    for (const [o, ord] of todo) reorder(o, ord);
  }
}

/** The object at `o[key]`; a missing (nil) one is created empty in its Go position. */
export function sub(o: any, ord: Order, key: string): any {
  const v = o[key];
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v;
  const fresh = {};
  put(o, ord, key, fresh);
  return fresh;
}

/** Go's map output order: keys sorted by their bytes (code points for the ASCII of label keys). */
function sortedKeys(m: Record<string, unknown>): string[] {
  return Object.keys(m).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Sets a key of a JSON map (Go map), keeping the keys in Go's sorted output order. */
export function putMapKey(m: Record<string, unknown>, key: string, value: unknown): void {
  if (hasOwn(m, key)) {
    m[key] = value;
    return;
  }
  m[key] = value;
  const keys = sortedKeys(m);
  const entries = keys.map((k) => [k, m[k]] as const);
  for (const k of keys) delete m[k];
  for (const [k, v] of entries) m[k] = v;
}

/** A copy of a map with its keys in Go's order. */
export function sortedMap<V>(m: Record<string, V>): Record<string, V> {
  const out: Record<string, V> = {};
  for (const k of sortedKeys(m)) out[k] = m[k]!;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Values

/** Go nil: an absent pointer, slice or map (or JSON null). */
export function isNil(v: unknown): boolean {
  return v === undefined || v === null;
}

/** len(x) == 0 for a Go string, slice or map held in JSON */
export function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') {
    for (const _ in v as object) return false;
    return true;
  }
  return false;
}

/** the zero value of a Go scalar (non-pointer), or absent */
export function isZero(v: unknown): boolean {
  return v === undefined || v === null || v === '' || v === 0 || v === false;
}

export function isObject(v: unknown): v is Record<string, any> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function clone<T>(v: T): T {
  return v !== null && typeof v === 'object' ? copyJSON(v) : v;
}

// ---------------------------------------------------------------------------------------------
// Plans

type Step =
  | { k: 'fn'; fn: DefaulterFn }
  | { k: 'marker'; name: string; value: unknown; nullable: boolean; omitEmpty: boolean }
  | { k: 'resources'; name: string }
  | { k: 'object' | 'array' | 'map'; name: string; plan: Plan };

export interface Plan {
  type: string;
  ord: Order;
  steps: Step[];
}

/** root type name -> plan (null: nothing to default) */
const plans = new Map<string, Plan | null>();

/** the named struct type under arrays and maps, with how it is held */
function elementOf(t: TypeRef): { name: string; via: 'object' | 'array' | 'map' } | undefined {
  if (t.kind === 'object') return { name: t.name, via: 'object' };
  if (t.kind === 'array' && t.items.kind === 'object') return { name: t.items.name, via: 'array' };
  if (t.kind === 'map' && t.values.kind === 'object') return { name: t.values.name, via: 'map' };
  return undefined;
}

function isResourceList(typeName: string, f: FieldDecl): boolean {
  return (
    typeName.startsWith(RESOURCE_LIST_PACKAGE) &&
    f.type.kind === 'map' &&
    f.type.values.kind === 'special' &&
    f.type.values.special === 'Quantity'
  );
}

function ownSteps(typeName: string): boolean {
  if (defaulters.has(typeName)) return true;
  const t = getType(typeName);
  if (!t) return false;
  return t.fields.some((f) => (f.default !== undefined && (f.nullable || !isZero(f.default))) || isResourceList(typeName, f));
}

/** The types reachable from a root, then which of them lead to a default (a fixed point, so
 *  recursive types such as JSONSchemaProps are handled). */
function relevantTypes(root: string): Set<string> {
  const reach = new Map<string, string[]>();
  const stack = [root];
  while (stack.length) {
    const name = stack.pop()!;
    if (reach.has(name)) continue;
    const t = getType(name);
    const children: string[] = [];
    reach.set(name, children);
    if (!t) continue;
    for (const f of t.fields) {
      const e = elementOf(f.type);
      if (e) {
        children.push(e.name);
        if (!reach.has(e.name)) stack.push(e.name);
      }
    }
  }
  const relevant = new Set<string>();
  for (const name of reach.keys()) if (ownSteps(name)) relevant.add(name);
  let changed = true;
  while (changed) {
    changed = false;
    for (const [name, children] of reach) {
      if (relevant.has(name)) continue;
      if (children.some((c) => relevant.has(c))) {
        relevant.add(name);
        changed = true;
      }
    }
  }
  return relevant;
}

function buildPlan(name: string, relevant: Set<string>, built: Map<string, Plan>): Plan {
  const existing = built.get(name);
  if (existing) return existing;
  const plan: Plan = { type: name, ord: orderOf(name), steps: [] };
  built.set(name, plan);
  collect(name, plan.steps, relevant, built);
  return plan;
}

/** The steps of a type, with the steps of its inline (embedded) types in place: they act on
 *  the same JSON object. */
function collect(name: string, steps: Step[], relevant: Set<string>, built: Map<string, Plan>): void {
  for (const r of defaulters.get(name) ?? []) steps.push({ k: 'fn', fn: r.fn });
  const t = getType(name);
  if (!t) return;
  for (const f of t.fields) {
    if (f.inline && f.type.kind === 'object') {
      if (relevant.has(f.type.name)) collect(f.type.name, steps, relevant, built);
      continue;
    }
    // a zero default on a non-pointer field is a no-op (`if x == "" { x = "" }`)
    if (f.default !== undefined && (f.nullable || !isZero(f.default))) {
      steps.push({ k: 'marker', name: f.name, value: f.default, nullable: f.nullable, omitEmpty: f.omitEmpty });
    }
    if (isResourceList(name, f)) steps.push({ k: 'resources', name: f.name });
    const e = elementOf(f.type);
    if (e && relevant.has(e.name)) steps.push({ k: e.via, name: f.name, plan: buildPlan(e.name, relevant, built) });
  }
}

/** The compiled plan of a root type, or null when nothing in it has a default. */
export function planFor(typeName: string): Plan | null {
  const cached = plans.get(typeName);
  if (cached !== undefined) return cached;
  const relevant = relevantTypes(typeName);
  const plan = relevant.has(typeName) ? buildPlan(typeName, relevant, new Map()) : null;
  plans.set(typeName, plan);
  return plan;
}

function applyMarker(o: any, ord: Order, s: Extract<Step, { k: 'marker' }>): void {
  const v = o[s.name];
  if (s.nullable) {
    if (isNil(v)) put(o, ord, s.name, clone(s.value));
    return;
  }
  if (!isZero(v)) return;
  // a zero default on a non-pointer field changes nothing (omitempty leaves it out, or the
  // normalized object already holds the zero value)
  if (isZero(s.value)) return;
  put(o, ord, s.name, clone(s.value));
}

function roundResources(m: unknown): void {
  if (!isObject(m)) return;
  for (const k of Object.keys(m)) {
    const v = m[k];
    if (typeof v === 'string') {
      const r = roundUpToMilli(v);
      if (r !== v) m[k] = r;
    }
  }
}

/** Runs a plan over a JSON object of its type. */
export function runPlan(plan: Plan, o: any): void {
  for (const s of plan.steps) {
    switch (s.k) {
      case 'fn':
        s.fn(o, plan.ord);
        break;
      case 'marker':
        applyMarker(o, plan.ord, s);
        break;
      case 'resources':
        roundResources(o[s.name]);
        break;
      case 'object': {
        const v = o[s.name];
        if (isObject(v)) runPlan(s.plan, v);
        break;
      }
      case 'array': {
        const v = o[s.name];
        if (Array.isArray(v)) for (const e of v) if (isObject(e)) runPlan(s.plan, e);
        break;
      }
      case 'map': {
        const v = o[s.name];
        if (isObject(v)) for (const k of Object.keys(v)) if (isObject(v[k])) runPlan(s.plan, v[k]);
        break;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Description (defaultsFor)

export interface DefaultDescription {
  /** JSON path from the root, `[]` for every element of a list or map: 'spec.template.spec.containers[].imagePullPolicy' */
  path: string;
  /** where the default comes from: a `+default=` marker (with its value), a SetDefaults
   *  function of a type, or the rounding of a ResourceList */
  source: 'marker' | 'function' | 'resourceList';
  /** the Go type (canonical name) the default belongs to */
  type: string;
  value?: unknown;
}

/** Every place a default can apply in a root type (each type visited once: recursive types end). */
export function describePlan(plan: Plan): DefaultDescription[] {
  const out: DefaultDescription[] = [];
  const seen = new Set<Plan>();
  const walk = (p: Plan, prefix: string) => {
    if (seen.has(p)) return;
    seen.add(p);
    const fnTypes = new Set<string>();
    for (const s of p.steps) {
      const at = (n: string) => (prefix ? `${prefix}.${n}` : n);
      switch (s.k) {
        case 'fn': {
          for (const [type, regs] of defaulters) {
            for (const r of regs) {
              if (r.fn !== s.fn || fnTypes.has(type + r.sets.join())) continue;
              fnTypes.add(type + r.sets.join());
              for (const path of r.sets) out.push({ path: at(path), source: 'function', type });
            }
          }
          break;
        }
        case 'marker':
          out.push({ path: at(s.name), source: 'marker', type: p.type, value: s.value });
          break;
        case 'resources':
          out.push({ path: at(`${s.name}[]`), source: 'resourceList', type: p.type });
          break;
        case 'object':
          walk(s.plan, at(s.name));
          break;
        case 'array':
        case 'map':
          walk(s.plan, at(`${s.name}[]`));
          break;
      }
    }
    seen.delete(p);
  };
  walk(plan, '');
  return out;
}
