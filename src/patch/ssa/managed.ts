// metadata.managedFields: decoding the entries into field sets by manager, and encoding them back
// in Kubernetes' form and order.
//
// A manager is identified as Kubernetes identifies it (BuildManagerIdentifier): the JSON of its
// entry without fieldsType, fieldsV1 and time, and for Apply also without apiVersion. So Update
// entries are kept apart per (manager, apiVersion, subresource) and an applier has one entry per
// subresource whatever version it last applied with.
import { emittedSetOf, FieldSet, FieldsV1Error, type FieldsV1 } from './fieldset.js';
import { goJSONString, goStringCompare } from '../../machinery/gostrings.js';

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: FieldsV1;
  subresource?: string;
}

export interface VersionedSet {
  set: FieldSet;
  apiVersion: string;
  /** an Apply entry (else Update) */
  applied: boolean;
}

/** The field sets by manager identifier, and each manager's time (undefined when it has none). */
export interface Managed {
  fields: Map<string, VersionedSet>;
  times: Map<string, string | undefined>;
}

export function emptyManaged(): Managed {
  return { fields: new Map(), times: new Map() };
}

export function cloneManaged(m: Managed): Managed {
  return { fields: new Map(m.fields), times: new Map(m.times) };
}

export interface ManagerIdentity {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion?: string;
  subresource?: string;
}

/** `make(key)` kept in `cache` (emptied when it reaches `max` entries): for the few values every write recomputes */
export function remembered(cache: Map<string, string>, max: number, key: string, make: (key: string) => string): string {
  let v = cache.get(key);
  if (v === undefined) {
    v = make(key);
    if (cache.size >= max) cache.clear();
    cache.set(key, v);
  }
  return v;
}

const idOf = new Map<string, string>();

/** The manager identifier: the JSON Kubernetes builds for it, in Go's field order. */
export function managerId(e: { manager?: string; operation?: string; apiVersion?: string; subresource?: string }): string {
  // the same few managers write again and again: their identifiers are kept
  return remembered(idOf, 10000, `${e.manager ?? ''}\u0000${e.operation ?? ''}\u0000${e.apiVersion ?? ''}\u0000${e.subresource ?? ''}`, () => buildManagerId(e));
}

function buildManagerId(e: { manager?: string; operation?: string; apiVersion?: string; subresource?: string }): string {
  const parts: string[] = [];
  if (e.manager) parts.push(`"manager":${goJSONString(e.manager)}`);
  if (e.operation) parts.push(`"operation":${goJSONString(e.operation)}`);
  if (e.apiVersion && e.operation !== 'Apply') parts.push(`"apiVersion":${goJSONString(e.apiVersion)}`);
  if (e.subresource) parts.push(`"subresource":${goJSONString(e.subresource)}`);
  return '{' + parts.join(',') + '}';
}

const idCache = new Map<string, ManagerIdentity>();

export function parseManagerId(id: string): ManagerIdentity {
  const hit = idCache.get(id);
  if (hit) return hit;
  const o = JSON.parse(id) as Partial<ManagerIdentity>;
  const out: ManagerIdentity = { manager: o.manager ?? '', operation: o.operation === 'Apply' ? 'Apply' : 'Update' };
  if (o.apiVersion) out.apiVersion = o.apiVersion;
  if (o.subresource) out.subresource = o.subresource;
  if (idCache.size > 10000) idCache.clear();
  idCache.set(id, Object.freeze(out));
  return out;
}

// ---------------------------------------------------------------------------------------------
// fieldsV1 -> FieldSet, cached. Every write decodes the object's managed fields and encodes them
// again, and most entries are the same from one write to the next: a document decodes to a set
// once (by its text, or by identity for the frozen documents FieldSet.toFieldsV1 hands out), and
// an unchanged set encodes to the same frozen document.

const MAX_CACHED = 4096;
const setByText = new Map<string, FieldSet>();

/** The set of a fieldsV1 document (throws FieldsV1Error when it is malformed). */
export function setOfFieldsV1(doc: unknown): FieldSet {
  if (doc === null || typeof doc !== 'object') return FieldSet.fromFieldsV1(doc);
  const byDoc = Object.isFrozen(doc) ? emittedSetOf(doc) : undefined;
  if (byDoc) return byDoc;
  const text = JSON.stringify(doc);
  let set = setByText.get(text);
  if (set) {
    setByText.delete(text); // refresh its place in the LRU order
  } else {
    set = FieldSet.fromFieldsV1(doc);
    if (setByText.size >= MAX_CACHED) setByText.delete(setByText.keys().next().value!);
  }
  setByText.set(text, set);
  return set;
}

/** The fieldsV1 document of a set (frozen: shared between objects). */
export function fieldsV1OfSet(set: FieldSet): FieldsV1 {
  return set.toFieldsV1();
}

export class ManagedFieldsError extends Error {}

/** DecodeManagedFields: throws ManagedFieldsError with Kubernetes' wording on an invalid entry. */
export function decodeManagedFields(list: unknown): Managed {
  const m = emptyManaged();
  if (list === null || list === undefined) return m;
  if (!Array.isArray(list)) throw new ManagedFieldsError('managedFields must be a list');
  for (let i = 0; i < list.length; i++) {
    const e = (list[i] ?? {}) as ManagedFieldsEntry;
    if (e.operation !== 'Apply' && e.operation !== 'Update') throw new ManagedFieldsError('operation must be `Apply` or `Update`');
    if (!e.apiVersion) throw new ManagedFieldsError('apiVersion must not be empty');
    if (e.fieldsType === undefined || e.fieldsType === '') throw new ManagedFieldsError(`missing fieldsType in managed fields entry ${i}`);
    if (e.fieldsType !== 'FieldsV1') throw new ManagedFieldsError(`invalid fieldsType ${goJSONString(e.fieldsType)} in managed fields entry ${i}`);
    const id = managerId(e);
    let set: FieldSet;
    try {
      set = setOfFieldsV1(e.fieldsV1 ?? {});
    } catch (err) {
      if (err instanceof FieldsV1Error) throw new ManagedFieldsError(`error decoding versioned set from ${describeEntry(e)}: error decoding set: ${err.message}`);
      throw err;
    }
    m.fields.set(id, { set, apiVersion: e.apiVersion, applied: e.operation === 'Apply' });
    m.times.set(id, typeof e.time === 'string' && e.time ? e.time : undefined);
  }
  return m;
}

function describeEntry(e: ManagedFieldsEntry): string {
  return `{${e.manager ?? ''} ${e.operation ?? ''} ${e.apiVersion ?? ''}}`;
}

/** Unix seconds of an RFC 3339 time (0 for none), for the order of entries. */
function seconds(t: string | undefined): number {
  if (!t) return 0;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/** encodeManagedFields: undefined when there is no manager (the field is then left out). */
export function encodeManagedFields(m: Managed): ManagedFieldsEntry[] | undefined {
  if (m.fields.size === 0) return undefined;
  const out: ManagedFieldsEntry[] = [];
  for (const [id, vs] of m.fields) {
    const who = parseManagerId(id);
    const e: ManagedFieldsEntry = {};
    if (who.manager) e.manager = who.manager;
    e.operation = vs.applied ? 'Apply' : who.operation;
    if (vs.apiVersion) e.apiVersion = vs.apiVersion;
    const t = m.times.get(id);
    if (t) e.time = t;
    e.fieldsType = 'FieldsV1';
    e.fieldsV1 = fieldsV1OfSet(vs.set);
    if (who.subresource) e.subresource = who.subresource;
    out.push(e);
  }
  return sortEntries(out);
}

/** Kubernetes' order: Apply before Update, then oldest first, then by manager, apiVersion, subresource. */
export function sortEntries(entries: ManagedFieldsEntry[]): ManagedFieldsEntry[] {
  return entries.sort((p, q) => {
    if (p.operation !== q.operation) return goStringCompare(p.operation ?? '', q.operation ?? '');
    const ps = seconds(p.time);
    const qs = seconds(q.time);
    if (ps !== qs) return ps < qs ? -1 : 1;
    if (p.manager !== q.manager) return goStringCompare(p.manager ?? '', q.manager ?? '');
    if (p.apiVersion !== q.apiVersion) return goStringCompare(p.apiVersion ?? '', q.apiVersion ?? '');
    return goStringCompare(p.subresource ?? '', q.subresource ?? '');
  });
}

/** isResetManagedFields: `[]` or `[{}]` in a request clears the managed fields. */
export function isResetManagedFields(list: unknown): boolean {
  if (!Array.isArray(list)) return false;
  if (list.length === 0) return true;
  if (list.length === 1) {
    const e = list[0];
    if (e === null || e === undefined) return true;
    if (typeof e === 'object' && !Array.isArray(e)) {
      for (const k in e as object) {
        const v = (e as Record<string, unknown>)[k];
        if (v === undefined || v === null || v === '') continue;
        return false;
      }
      return true;
    }
  }
  return false;
}

export const DEFAULT_MAX_UPDATE_MANAGERS = 10;
const ANCIENT = 'ancient-changes';

/**
 * capUpdateManagers: when there are more than max Update entries, the oldest are merged into
 * one `ancient-changes` entry per apiVersion.
 */
export function capUpdateManagers(m: Managed, max = DEFAULT_MAX_UPDATE_MANAGERS): void {
  const updaters: string[] = [];
  for (const [id, vs] of m.fields) if (!vs.applied) updaters.push(id);
  if (updaters.length <= max) return;
  updaters.sort((a, b) => {
    const x = seconds(m.times.get(a));
    const y = seconds(m.times.get(b));
    if (x !== y) return x < y ? -1 : 1;
    return goStringCompare(a, b);
  });
  const firstByVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > max; i++) {
    const id = updaters[i]!;
    const vs = m.fields.get(id)!;
    const time = m.times.get(id);
    const bucket = managerId({ manager: ANCIENT, operation: 'Update', apiVersion: vs.apiVersion });
    const first = firstByVersion.get(vs.apiVersion);
    if (first !== undefined) {
      if (!m.fields.has(bucket)) {
        const s = m.fields.get(first)!;
        m.fields.delete(first);
        m.times.delete(first);
        m.fields.set(bucket, s);
      }
      m.fields.set(bucket, { set: vs.set.union(m.fields.get(bucket)!.set), apiVersion: vs.apiVersion, applied: vs.applied });
      m.fields.delete(id);
      m.times.delete(id);
      length--;
      m.times.set(bucket, time);
    } else {
      firstByVersion.set(vs.apiVersion, id);
    }
  }
}
