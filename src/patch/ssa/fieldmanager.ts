// Managed fields and server-side apply, as pure functions over JSON-form objects.
//
// Every write goes through one of two functions:
// - trackUpdate(old, new): after a create, update or non-apply patch, records in
//   metadata.managedFields the fields this write changed, moving them to its manager;
// - apply(live, applied): merges an applied configuration into the live object (or into an empty
//   one when there is none), gives the applier the fields it applied, removes the fields it
//   applied before and no longer applies (unless someone else owns them), and fails on fields
//   owned by other managers that it would change, unless forced.
//
// The behaviour is that of Kubernetes' field manager (k8s.io/apimachinery managedfields, with
// structured-merge-diff doing the set work): the same layers in the same order
//   version check > last-applied updater > last-applied manager > skip-non-applied >
//   cap managers > manager identity > managedFields times > strip metadata > structured merge
// so that kubectl (server-side apply, the client-side to server-side migration, `patched (no
// change)`) and client-go see what they see against Kubernetes.
//
// Objects are in their normalized JSON form (as stored: what the schema normalization gives);
// these functions never modify their arguments.
import { normalize } from '../../codec/json.js';
import { field, StatusError, type FieldError } from '../../machinery/errors.js';
import { getType } from '../../schema/types.js';
import { ApplyConflictError } from './conflict.js';
import { FieldSet, type FieldsV1 } from './fieldset.js';
import {
  capUpdateManagers,
  cloneManaged,
  decodeManagedFields,
  emptyManaged,
  encodeManagedFields,
  isResetManagedFields,
  managerId,
  ManagedFieldsError,
  remembered,
  type Managed,
  type ManagedFieldsEntry,
} from './managed.js';
import { equalValues, fieldPE, isMap } from './pathelement.js';
import { rootShape, type Shape } from './shape.js';
import { compare, ensureNamedFieldsAreMembers, merge, MergeError, removeItems, toFieldSet, validate, validationMessage, type Comparison } from './typed.js';
import { goJSON, isPrintRune } from '../../machinery/gostrings.js';

export interface ManagerInfo {
  /** the field manager: the `fieldManager` parameter, else defaultFieldManager(User-Agent) */
  manager: string;
  /** group/version of the request: `v1`, `apps/v1` */
  apiVersion: string;
  /** the subresource written (`status`, `scale`), or '' / absent for the resource itself */
  subresource?: string;
  /** RFC 3339 time in whole seconds recorded on the entries this write changes; now by default */
  time?: string;
  /**
   * Field paths the strategy resets on this (sub)resource, which no manager can own through it:
   * `[['status']]` for the resource of a kind with a status subresource, `[['spec']]` (and what
   * else the status strategy keeps) for its status subresource. See resetFieldsFor.
   */
  resetFields?: readonly (readonly string[])[];
}

export interface ApplyOptions extends ManagerInfo {
  /** `force=true`: take the conflicting fields from their managers instead of failing */
  force: boolean;
  /** the kind served (checked against the applied object); from the schema's gvk by default */
  kind?: string;
  /**
   * the group/version the applied object must carry when it is not the request's `apiVersion`
   * (the managed fields' version): a scale subresource's autoscaling/v1 Scale
   */
  objectAPIVersion?: string;
}

// ---------------------------------------------------------------------------------------------

/** `metadata.<x>` paths and TypeMeta that no manager ever owns (stripMetaManager). */
const STRIP = (() => {
  const s = new FieldSet();
  for (const f of ['apiVersion', 'kind', 'metadata']) s.insert([fieldPE(f)]);
  for (const f of ['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion']) {
    s.insert([fieldPE('metadata'), fieldPE(f)]);
  }
  return s;
})();

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;
export const FIELD_MANAGER_MAX_LENGTH = 128;

// the current second in RFC 3339, formatted once per second (every write records it)
let nowSecond = -1;
let nowText = '';

function now(): string {
  const s = Math.floor(Date.now() / 1000);
  if (s !== nowSecond) {
    nowText = new Date(s * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
    nowSecond = s;
  }
  return nowText;
}

// the sets of the reset paths, built once per list of paths (sets are immutable once built)
const resetSets = new Map<string, FieldSet>();

function resetSet(paths: ManagerInfo['resetFields']): FieldSet | undefined {
  if (!paths || paths.length === 0) return undefined;
  let key = '';
  for (const p of paths) key += p.join('\u0000') + '\u0001';
  let s = resetSets.get(key);
  if (!s) {
    s = new FieldSet();
    for (const p of paths) s.insert(p.map(fieldPE));
    if (resetSets.size < 1000) resetSets.set(key, s);
  }
  return s;
}

function filterComparison(c: Comparison, reset: FieldSet | undefined): Comparison {
  if (!reset) return c;
  return { added: c.added.recursiveDifference(reset), modified: c.modified.recursiveDifference(reset), removed: c.removed.recursiveDifference(reset) };
}

const zeroCache = new Map<string, unknown>();

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object') {
    for (const k in v) deepFreeze((v as Record<string, unknown>)[k]);
    Object.freeze(v);
  }
  return v;
}

/**
 * The object a new object of the type is compared with: Go's empty struct, in JSON form. Shared
 * and frozen: the walkers only read it (merge results are copied before they are returned).
 */
function zeroObject(typeName: string): any {
  let z = zeroCache.get(typeName);
  if (z === undefined) {
    z = deepFreeze(getType(typeName) ? normalize(typeName, {}).obj : {});
    zeroCache.set(typeName, z);
  }
  return z;
}

/**
 * A shallow copy of the object with a copy of its metadata, without managedFields.
 *
 * The metadata is copied key by key, never as `{ ...md }`: V8 (Node 20) gives an object made by
 * spread a hidden class of its own as soon as it gets another property, and this copy always does
 * (managedFields here, then namespace, uid, creationTimestamp). Every object written kept a map
 * and a descriptor array of its own (~260 bytes), and every access to a metadata field, in the
 * validation, the serialization and the watch cache, met a new map each time (megamorphic). A
 * copy made by assignment follows the shared transitions of `{}`. (The root object keeps its
 * spread: `metadata` replaces a key it already has, which keeps the shared map.)
 */
function withoutManagedFields(obj: any): any {
  if (!isMap(obj)) return obj;
  const md = obj.metadata;
  if (!isMap(md)) return { ...obj };
  const rest: Record<string, unknown> = {};
  for (const k of Object.keys(md)) if (k !== 'managedFields') rest[k] = md[k];
  return { ...obj, metadata: rest };
}

function withManagedFields(obj: any, entries: unknown[] | undefined): any {
  const out = withoutManagedFields(obj);
  if (entries && isMap(out.metadata)) out.metadata.managedFields = entries;
  return out;
}

function decodeOrEmpty(list: unknown): Managed {
  try {
    return decodeManagedFields(list);
  } catch {
    return emptyManaged();
  }
}

// ---------------------------------------------------------------------------------------------
// Update

/** no managers (most creates): only read (updateManaged works on a copy) */
const NO_MANAGERS: Managed = emptyManaged();

/**
 * The managers after a non-apply write from old to neu by `manager` (the structured-merge
 * Update, with the current operation's fields merged into the manager's Update entry and the
 * Update entries capped). `managed` is not modified.
 */
function updateManaged(shape: Shape, old: unknown, neu: unknown, managed: Managed, manager: string, info: ManagerInfo, time: string): Managed {
  const m = cloneManaged(managed);
  const reset = resetSet(info.resetFields);
  // what changed (added or modified: one set) and what was removed, outside the reset paths
  const c = compare(shape, old, neu, true);
  let changed = c.added;
  let removed = c.removed;
  if (reset) {
    changed = changed.recursiveDifference(reset);
    removed = removed.recursiveDifference(reset);
  }
  const removedEmpty = removed.empty();
  if (m.fields.size > 0 && (!changed.empty() || !removedEmpty)) {
    for (const [id, vs] of m.fields) {
      let set = vs.set;
      const taken = set.intersection(changed);
      if (!taken.empty()) set = set.difference(taken);
      if (!removedEmpty) set = set.difference(removed);
      if (set === vs.set) continue;
      if (set.empty()) m.fields.delete(id);
      else m.fields.set(id, { ...vs, set });
    }
  }
  const mine = changed.difference(STRIP);
  if (!mine.empty()) {
    const id = managerId({ manager: manager || 'unknown', operation: 'Update', apiVersion: info.apiVersion, subresource: info.subresource });
    const prev = m.fields.get(id);
    let set = prev ? mine.union(prev.set) : mine;
    // the same fields as the manager had before this write: its set, and so its document, are
    // kept (shared by the old and the new object rather than built again)
    const before = managed.fields.get(id)?.set;
    if (before && set !== before && set.isSubsetOf(before) && before.isSubsetOf(set)) set = before;
    m.fields.set(id, { set, apiVersion: info.apiVersion, applied: false });
    m.times.set(id, time);
  }
  capUpdateManagers(m);
  return m;
}

/**
 * After a create (oldObj undefined), update or non-apply patch: returns newObj with its
 * metadata.managedFields brought up to date (the fields the write changed now belong to
 * info.manager's Update entry, whose time is set; entries left without fields are removed;
 * `managedFields` is left out when no entry remains).
 *
 * Call it with the object as it will be stored (decoded, normalized, defaulted), before the
 * strategy resets what the (sub)resource may not change, and before admission.
 *
 * As in Kubernetes, managedFields sent in newObj replace the live ones when they are valid and
 * not empty (this is how kubectl's client-side to server-side apply migration rewrites them);
 * `[]` or `[{}]` clears them; on a subresource they are ignored. An existing object without
 * managed fields stays without (tracking starts again at its next apply).
 */
export function trackUpdate(oldObj: any | undefined, newObj: any, typeName: string, info: ManagerInfo): any {
  if (!isMap(newObj) || !isMap(newObj.metadata)) return newObj;
  const liveList = isMap(oldObj) && isMap(oldObj.metadata) ? oldObj.metadata.managedFields : undefined;
  let managed: Managed;
  if (info.subresource) managed = decodeOrEmpty(liveList);
  else if (newObj.metadata.managedFields === undefined && liveList === undefined) managed = NO_MANAGERS;
  else if (isResetManagedFields(newObj.metadata.managedFields)) managed = emptyManaged();
  else {
    let fromNew: Managed | undefined;
    const sent = newObj.metadata.managedFields;
    try {
      // the common case: the client sent back what it read; the live entries decode from cache
      fromNew = decodeManagedFields(sent !== liveList && equalValues(sent, liveList) ? liveList : sent);
    } catch {
      fromNew = undefined;
    }
    managed = fromNew && fromNew.fields.size > 0 ? fromNew : decodeOrEmpty(liveList);
  }
  const neu = withoutManagedFields(newObj);
  const isCreate = !isMap(oldObj) || !isMap(oldObj.metadata) || !oldObj.metadata.uid;
  if (managed.fields.size === 0 && !isCreate) return neu;
  const old = isMap(oldObj) ? withoutManagedFields(oldObj) : zeroObject(typeName);
  const time = info.time ?? now();
  const shape = rootShape(typeName);
  // a plain create: its fields, by the structure of the object, may be known already
  const memo = managed.fields.size === 0 && !isMap(oldObj) && !info.subresource ? createMemoOf(shape) : undefined;
  const known = memo === undefined ? undefined : memoNode(memo, info, neu, old, false)?.doc;
  if (known !== undefined) {
    if (known !== null) neu.metadata.managedFields = createEntries(info, time, known);
    return neu;
  }
  const m = updateManaged(shape, old, neu, managed, info.manager, info, time);
  const entries = encodeManagedFields(m);
  if (memo !== undefined) {
    let into = memo;
    if (createMemoNodes > CREATE_MEMO_MAX_NODES) {
      createMemos = new WeakMap();
      createMemoNodes = 0;
      into = createMemoOf(shape);
    }
    // (the walk is of the object as the lookup saw it: without the entries)
    const node = memoNode(into, info, neu, old, true);
    if (node) node.doc = entries ? entries[0]!.fieldsV1! : null;
  }
  // neu is this function's own copy (with its own metadata): the entries go straight in
  if (entries) neu.metadata.managedFields = entries;
  return neu;
}

// The fields a create gives its manager depend on the structure of the object only: which keys
// it has at every level, which items its lists hold (the keys of associative lists, the values
// of sets: so every scalar inside a list counts), and which of its other leaves equal the
// type's zero value (the create is compared with it). Objects created from one template (the
// pods of a ReplicaSet, the ConfigMaps of a load test) share that structure, so the fieldsV1
// document of a create is computed once per structure and shared (it is frozen, like every
// document FieldSet hands out). There is one memo per shape (a custom resource's shape is new
// when its CRD's schema changes): a trie walked along the object (keys, list items, and tokens
// for the kind and zero-equality of leaves), so that a create whose structure is known allocates
// nothing to find its document. The memos together hold at most CREATE_MEMO_MAX_NODES nodes
// (a few MB): past that they are all dropped and start again.
const CREATE_MEMO_MAX_NODES = 50_000;
let createMemoNodes = 0;

interface MemoNode {
  next: Map<unknown, MemoNode> | undefined;
  /** the document of the structure ending here (null: the create owns nothing); undefined: none yet */
  doc: FieldsV1 | null | undefined;
}

interface ShapeMemo {
  /** by reset paths ('' for none) */
  roots: Map<string, MemoNode>;
}

let createMemos = new WeakMap<Shape, ShapeMemo>();

function createMemoOf(shape: Shape): ShapeMemo {
  let m = createMemos.get(shape);
  if (!m) {
    m = { roots: new Map() };
    createMemos.set(shape, m);
  }
  return m;
}

function resetKey(paths: ManagerInfo['resetFields']): string {
  if (!paths || paths.length === 0) return '';
  if (paths.length === 1 && paths[0]!.length === 1) return paths[0]![0]!;
  let key = '';
  for (const p of paths) key += p.join('\u0000') + '\u0001';
  return key;
}

// tokens of the walk besides keys and the scalars inside lists (symbols: they equal no key or value)
const OBJECT = Symbol('{');
const ARRAY = Symbol('[');
const END = Symbol('}');
const NULL = Symbol('null');
const NULL_ZERO = Symbol('null=');
const LEAF: Record<string, [unknown, unknown, unknown]> = {
  string: [Symbol('s'), Symbol('s='), Symbol('s!')],
  number: [Symbol('n'), Symbol('n='), Symbol('n!')],
  boolean: [Symbol('b'), Symbol('b='), Symbol('b!')],
};
const OTHER = Symbol('?');

/** A walk of the trie along an object: finds its node, or (create) makes the missing ones. */
class MemoWalk {
  node: MemoNode | undefined;
  constructor(
    root: MemoNode,
    private readonly create: boolean,
  ) {
    this.node = root;
  }

  private step(token: unknown): boolean {
    const n = this.node!;
    let next = n.next?.get(token);
    if (next === undefined) {
      if (!this.create) {
        this.node = undefined;
        return false;
      }
      next = { next: undefined, doc: undefined };
      (n.next ??= new Map()).set(token, next);
      createMemoNodes++;
    }
    this.node = next;
    return true;
  }

  /** one path for all objects whose create owns the same fields (see CREATE_MEMO_MAX_NODES) */
  value(v: unknown, zero: unknown, inList: boolean): boolean {
    if (v === null) return this.step(zero === null && !inList ? NULL_ZERO : NULL);
    if (Array.isArray(v)) {
      if (!this.step(ARRAY)) return false;
      for (let i = 0; i < v.length; i++) if (!this.value(v[i], undefined, true)) return false;
      return this.step(END);
    }
    const t = typeof v;
    if (t === 'object') {
      if (!this.step(OBJECT)) return false;
      const z = zero !== null && typeof zero === 'object' && !Array.isArray(zero) ? (zero as Record<string, unknown>) : undefined;
      for (const k in v as Record<string, unknown>) {
        const x = (v as Record<string, unknown>)[k];
        if (x === undefined) continue;
        if (!this.step(k) || !this.value(x, z ? z[k] : undefined, inList)) return false;
      }
      return this.step(END);
    }
    const leaf = LEAF[t];
    if (!leaf) return this.step(OTHER);
    if (inList) return this.step(leaf[0]) && this.step(v);
    if (zero === undefined || (zero !== null && typeof zero === 'object')) return this.step(leaf[0]);
    return this.step(v === zero ? leaf[1] : leaf[2]);
  }
}

/** the memo's node for this create (created when `create`), or undefined when it has none */
function memoNode(memo: ShapeMemo, info: ManagerInfo, neu: any, zero: unknown, create: boolean): MemoNode | undefined {
  const key = resetKey(info.resetFields);
  let root = memo.roots.get(key);
  if (!root) {
    if (!create) return undefined;
    root = { next: undefined, doc: undefined };
    memo.roots.set(key, root);
  }
  const w = new MemoWalk(root, create);
  return w.value(neu, zero, false) ? w.node : undefined;
}

// The managedFields of a plain create whose document the memo knew: one entry, the same for
// every create of one structure by one manager within one second (the entry's time is in whole
// seconds). So the list is made once and shared by those objects, frozen like its document, with
// its JSON text beside it: the store splices that text into the object's serialization
// (managedFieldsText) instead of serializing the ~220 characters of small keys again for every
// create. One list is kept per document, the newest.
const sharedCreates = new WeakMap<FieldsV1, { manager: string; apiVersion: string; time: string; list: ManagedFieldsEntry[] }>();
const sharedTexts = new WeakMap<object, string>();

function createEntries(info: ManagerInfo, time: string, fieldsV1: FieldsV1): ManagedFieldsEntry[] {
  const s = sharedCreates.get(fieldsV1);
  if (s !== undefined && s.time === time && s.manager === info.manager && s.apiVersion === info.apiVersion) return s.list;
  const list = Object.freeze([Object.freeze(createEntry(info, time, fieldsV1))]) as ManagedFieldsEntry[];
  sharedCreates.set(fieldsV1, { manager: info.manager, apiVersion: info.apiVersion, time, list });
  sharedTexts.set(list, JSON.stringify(list));
  return list;
}

/**
 * The JSON text of a managedFields list when it is one of the shared, frozen lists of creates
 * (JSON.stringify of it, made once); undefined for any other value.
 */
export function managedFieldsText(list: unknown): string | undefined {
  return typeof list === 'object' && list !== null ? sharedTexts.get(list) : undefined;
}

/** the one entry of a create by info.manager, as encodeManagedFields writes it */
function createEntry(info: ManagerInfo, time: string, fieldsV1: FieldsV1): ManagedFieldsEntry {
  const e: ManagedFieldsEntry = { manager: info.manager || 'unknown', operation: 'Update' };
  if (info.apiVersion) e.apiVersion = info.apiVersion;
  if (time) e.time = time;
  e.fieldsType = 'FieldsV1';
  e.fieldsV1 = fieldsV1;
  return e;
}

// ---------------------------------------------------------------------------------------------
// Apply

class Conflicts extends Error {
  constructor(readonly byManager: Map<string, FieldSet>) {
    super('conflicts');
  }
}

interface ApplyResult {
  /** the merged object, or undefined when the apply changes nothing */
  object: any;
  managed: Managed;
}

/**
 * The structured-merge Apply with the layers inside the last-applied manager: skip-non-applied
 * (an object without managed fields first gives all its fields to `before-first-apply`),
 * manager identity, times, metadata stripping.
 */
function applyManaged(shape: Shape, typeName: string, live: any, config: any, managed: Managed, info: ApplyOptions, force: boolean, time: string): ApplyResult {
  let m = managed;
  if (m.fields.size === 0) m = updateManaged(shape, zeroObject(typeName), live, m, 'before-first-apply', info, time);
  else m = cloneManaged(m);
  const id = managerId({ manager: info.manager || 'unknown', operation: 'Apply', subresource: info.subresource });
  const reset = resetSet(info.resetFields);

  let merged: unknown;
  try {
    merged = merge(shape, live, config);
  } catch (e) {
    if (e instanceof MergeError) throw new StatusError(500, '', `failed to merge config: ${e.message}`);
    throw e;
  }
  const last = m.fields.get(id);
  let set = toFieldSet(shape, config);
  if (reset) set = set.recursiveDifference(reset);
  m.fields.set(id, { set, apiVersion: info.apiVersion, applied: true });
  merged = prune(shape, merged, m, last?.set, set);

  // the update from live to merged: conflicts with the other managers, their removed fields
  const c = filterComparison(compare(shape, live, merged), reset);
  const changed = c.modified.union(c.added);
  const conflicts = new Map<string, FieldSet>();
  for (const [other, vs] of m.fields) {
    if (other === id) continue;
    const x = vs.set.intersection(changed);
    if (!x.empty()) conflicts.set(other, x);
  }
  if (!force && conflicts.size > 0) throw new Conflicts(conflicts);
  for (const [other, x] of conflicts) {
    const vs = m.fields.get(other)!;
    m.fields.set(other, { ...vs, set: vs.set.difference(x) });
  }
  if (!c.removed.empty()) {
    for (const [other, vs] of m.fields) if (other !== id) m.fields.set(other, { ...vs, set: vs.set.difference(c.removed) });
  }
  for (const [other, vs] of m.fields) if (vs.set.empty()) m.fields.delete(other);
  const noop = equalValues(live, merged);

  const mine = m.fields.get(id);
  if (mine) {
    const stripped = mine.set.difference(STRIP);
    if (stripped.empty()) m.fields.delete(id);
    else m.fields.set(id, { ...mine, set: stripped });
  }
  if (noop) return { object: undefined, managed: m };
  m.times.set(id, time);
  return { object: merged, managed: m };
}

/**
 * Removes from the merged object what the applier applied last time and no longer applies,
 * unless another manager (or the applier's new configuration) owns it (Updater.prune).
 */
function prune(shape: Shape, merged: unknown, m: Managed, lastSet: FieldSet | undefined, newSet: FieldSet): unknown {
  if (!lastSet || lastSet.empty()) return merged;
  // Nothing applied before is missing now: the new set (closed under parents: items, map keys and
  // named fields) owns everything prune could take away, so it removes nothing.
  if (lastSet.difference(newSet).empty()) return merged;
  const last = ensureNamedFieldsAreMembers(lastSet, shape);
  let pruned = removeItems(shape, merged, last);
  // add back what anyone owns
  let owned = new FieldSet();
  for (const vs of m.fields.values()) owned = owned.union(vs.set);
  const mergedSet = ensureNamedFieldsAreMembers(toFieldSet(shape, merged), shape);
  let prunedSet = ensureNamedFieldsAreMembers(toFieldSet(shape, pruned), shape);
  const drop = mergedSet.difference(prunedSet.union(ensureNamedFieldsAreMembers(owned, shape)));
  pruned = drop.empty() ? merged : removeItems(shape, merged, drop);
  // add back what was not the applier's before
  prunedSet = ensureNamedFieldsAreMembers(toFieldSet(shape, pruned), shape);
  const remove = mergedSet.difference(prunedSet).intersection(last);
  return remove.empty() ? merged : removeItems(shape, merged, remove);
}

/** The fields the last-applied annotation sets that still hold their value (lastAppliedManager). */
function allowedFromLastApplied(shape: Shape, live: any, apiVersion: string): FieldSet | undefined {
  const raw = live?.metadata?.annotations?.[LAST_APPLIED];
  if (typeof raw !== 'string' || raw === '') return undefined;
  let lastApplied: unknown;
  try {
    lastApplied = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!isMap(lastApplied) || (lastApplied.apiVersion ?? '') !== apiVersion) return undefined;
  if (validate(shape, lastApplied).length > 0) return undefined;
  const c = compare(shape, lastApplied, live);
  return toFieldSet(shape, lastApplied).difference(c.modified).difference(c.added).difference(c.removed);
}

function parseGVK(obj: any): { group: string; version: string; kind: string } {
  const av = typeof obj?.apiVersion === 'string' ? obj.apiVersion : '';
  const kind = typeof obj?.kind === 'string' ? obj.kind : '';
  const parts = av.split('/');
  if (av === '') return { group: '', version: '', kind };
  if (parts.length === 1) return { group: '', version: av, kind };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]!, kind };
  return { group: '', version: '', kind: '' };
}

function gvkString(g: { group: string; version: string; kind: string }): string {
  return `${g.group}/${g.version}, Kind=${g.kind}`;
}

function expectedKind(typeName: string, apiVersion: string, kind: string | undefined): string | undefined {
  if (kind) return kind;
  const decl = getType(typeName);
  const gv = parseGVK({ apiVersion });
  return decl?.gvk?.find((g) => g.group === gv.group && g.version === gv.version)?.kind ?? decl?.gvk?.[0]?.kind;
}

/**
 * Server-side apply (PATCH with application/apply-patch+yaml). `live` is the stored object, or
 * undefined when there is none (the apply creates it); `applied` is the request body as parsed
 * (YAML or JSON), already checked for unknown fields.
 *
 * Returns the new object with its metadata.managedFields, or `live` itself (the same reference)
 * when the apply changes nothing at all: the server then answers with the live object and
 * writes nothing, and the entry times stay. A changed object shares nothing with the arguments;
 * it carries the applied values as sent: normalize and default it as any decoded object before
 * storing it.
 *
 * Throws ApplyConflictError (409) when the apply would change fields other managers own and
 * `force` is false, or a StatusError: 400 for an applied object of another kind or with
 * managedFields, and 400 with Kubernetes' words for a configuration it cannot type (a field the
 * type does not declare, a value of the wrong type, duplicate list keys). Kubernetes answers the
 * last with 500, as a plain error (kubernetes/kubernetes#139253, open); it is the client's error.
 */
export function apply(live: any | undefined, applied: any, typeName: string, opts: ApplyOptions): any {
  const shape = rootShape(typeName);
  const time = opts.time ?? now();
  let managed: Managed;
  try {
    managed = decodeManagedFields(isMap(live) && isMap(live.metadata) ? live.metadata.managedFields : undefined);
  } catch (e) {
    if (e instanceof ManagedFieldsError) throw new StatusError(500, '', `failed to decode managed fields: ${e.message}`);
    throw e;
  }
  if (!isMap(applied)) throw new StatusError(400, 'BadRequest', 'error decoding patch: the applied configuration must be an object');
  const got = parseGVK(applied);
  const objectAPIVersion = opts.objectAPIVersion ?? opts.apiVersion;
  const want = parseGVK({ apiVersion: objectAPIVersion, kind: expectedKind(typeName, objectAPIVersion, opts.kind) ?? got.kind });
  if (got.group !== want.group || got.version !== want.version || got.kind !== want.kind) {
    throw new StatusError(400, 'BadRequest', `invalid object type: ${gvkString(got)}`);
  }
  if (isMap(applied.metadata) && Array.isArray(applied.metadata.managedFields)) {
    throw new StatusError(400, 'BadRequest', 'metadata.managedFields must be nil');
  }
  const errs = validate(shape, applied);
  if (errs.length > 0) {
    const md = isMap(applied.metadata) ? applied.metadata : {};
    throw new StatusError(400, 'BadRequest', `failed to create typed patch object (${md.namespace ?? ''}/${md.name ?? ''}; ${gvkString(got)}): ${validationMessage(errs)}`);
  }

  const liveObj = isMap(live) ? withoutManagedFields(live) : zeroObject(typeName);
  let r: ApplyResult;
  try {
    r = applyManaged(shape, typeName, liveObj, applied, managed, opts, opts.force, time);
  } catch (e) {
    if (!(e instanceof Conflicts)) throw e;
    // kubectl's own apply may take the fields its client-side apply set (and still hold)
    const allowed = opts.manager === 'kubectl' ? allowedFromLastApplied(shape, liveObj, opts.apiVersion) : undefined;
    if (!allowed) throw new ApplyConflictError(e.byManager);
    const left = new Map<string, FieldSet>();
    for (const [id, set] of e.byManager) {
      const rest = new FieldSet();
      set.iterate((p) => {
        if (!allowed.has(p)) rest.insert(p);
      });
      if (!rest.empty()) left.set(id, rest);
    }
    if (left.size > 0) throw new ApplyConflictError(left);
    r = applyManaged(shape, typeName, liveObj, applied, managed, opts, true, time);
  }

  let object = r.object === undefined ? liveObj : r.object;
  if (opts.manager === 'kubectl') object = syncLastApplied(object, applied);
  const entries = encodeManagedFields(r.managed);
  if (isMap(live) && r.object === undefined && object === liveObj && equalValues(entries, (live.metadata as Record<string, unknown> | undefined)?.managedFields)) return live;
  // a copy that shares nothing with the arguments (but the frozen fieldsV1 documents)
  return withManagedFields(structuredClone(withoutManagedFields(object)), entries);
}

/** kubectl's server-side apply keeps an existing last-applied annotation in step (lastAppliedUpdater). */
function syncLastApplied(obj: any, applied: any): any {
  const annotations = obj?.metadata?.annotations;
  if (!isMap(annotations) || typeof annotations[LAST_APPLIED] !== 'string' || annotations[LAST_APPLIED] === '') return obj;
  const copy = structuredClone(applied);
  if (isMap(copy.metadata) && isMap(copy.metadata.annotations)) delete copy.metadata.annotations[LAST_APPLIED];
  const value = goJSON(copy) + '\n';
  const next: Record<string, unknown> = { ...annotations, [LAST_APPLIED]: value };
  let size = 0;
  for (const [k, v] of Object.entries(next)) size += Buffer.byteLength(k) + Buffer.byteLength(String(v));
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) delete next[LAST_APPLIED];
  if (next[LAST_APPLIED] === annotations[LAST_APPLIED]) return obj;
  return { ...obj, metadata: { ...obj.metadata, annotations: next } };
}

// ---------------------------------------------------------------------------------------------
// Manager names

/**
 * Kubernetes' manager for a request without `fieldManager`: the User-Agent up to its first `/`,
 * without unprintable characters, cut at 128 bytes (`kubectl/v1.33.1 (linux/amd64) ...` gives
 * `kubectl`).
 */
export function defaultFieldManager(userAgent: string | undefined): string {
  // clients send the same few User-Agents on every write
  return remembered(managerOfAgent, 256, userAgent ?? '', managerFromAgent);
}

const managerOfAgent = new Map<string, string>();

function managerFromAgent(userAgent: string): string {
  const head = userAgent.split('/')[0]!;
  let out = '';
  let bytes = 0;
  for (const ch of head) {
    if (!isPrintRune(ch.codePointAt(0)!)) continue;
    const n = Buffer.byteLength(ch);
    if (bytes + n > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
    bytes += n;
  }
  return out;
}

/** The manager of a write: the `fieldManager` parameter when given, else from the User-Agent. */
export function managerOrUserAgent(fieldManager: string | undefined, userAgent: string | undefined): string {
  return fieldManager ? fieldManager : defaultFieldManager(userAgent);
}

/**
 * ValidateFieldManager: a `fieldManager` parameter (or a managedFields entry's manager) is at
 * most 128 bytes of printable characters. `path` names the field in the errors.
 */
export function validateFieldManager(fieldManager: string, path = 'fieldManager'): FieldError[] {
  const out: FieldError[] = [];
  if (Buffer.byteLength(fieldManager) > FIELD_MANAGER_MAX_LENGTH) out.push(field.tooLong(path, FIELD_MANAGER_MAX_LENGTH));
  let i = 0;
  for (const ch of fieldManager) {
    const cp = ch.codePointAt(0)!;
    if (!isPrintRune(cp)) out.push(field.invalid(path, fieldManager, `invalid character U+${cp.toString(16).toUpperCase().padStart(4, '0')} (at position ${i})`));
    i += Buffer.byteLength(ch);
  }
  return out;
}

/**
 * The reset fields most strategies have: on a kind with a status subresource, the resource
 * itself ignores `status`, and the status subresource ignores `spec`. Strategies that reset more
 * pass their own list (Kubernetes: pods/status also resets metadata.deletionTimestamp and
 * metadata.ownerReferences, deployments/status metadata.labels).
 */
export function resetFieldsFor(subresource: string | undefined, hasStatusSubresource: boolean, kind?: { group: string; kind: string }): string[][] {
  if (!subresource) return hasStatusSubresource ? [['status']] : [];
  if (subresource === 'status') {
    const what = kind ? `${kind.group}/${kind.kind}` : '';
    if (what === 'apps/Deployment') return [['spec'], ['metadata', 'labels']];
    if (what === '/Pod') return [['spec'], ['metadata', 'deletionTimestamp'], ['metadata', 'ownerReferences']];
    return [['spec']];
  }
  return [];
}

/** forget what creates taught the memo (tests compare the memo's answers with computed ones) */
export function clearCreateMemo(typeName: string): void {
  createMemos.delete(rootShape(typeName));
}
