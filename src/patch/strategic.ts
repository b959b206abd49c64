// Strategic merge patch (application/strategic-merge-patch+json), as Kubernetes applies it on the
// server and computes it in kubectl (k8s.io/apimachinery/pkg/util/strategicpatch), driven by the
// patchStrategy and patchMergeKey of the schema's fields.
//
// Applying (the API server, StrategicMergeMapPatch with the kind's Go struct as schema):
// - maps merge recursively; `null` deletes a field; a value of another JSON type replaces;
// - a list whose field has patchStrategy merge merges: lists of objects by their patchMergeKey
//   (an element found by key is merged into, others are appended), lists of scalars as a set
//   union; any other list is replaced; a map field with patchStrategy replace is replaced;
// - `$patch: replace` in a map replaces the map by the rest of the patch map, `$patch: delete`
//   empties it; in a merging list an element `{$patch: replace}` replaces the whole list by the
//   other elements, `{<key>: v, $patch: delete}` deletes the elements with that key, and
//   `$patch: merge` is refused ("merging lists cannot yet be specified in the patch");
// - `$retainKeys: [...]` clears the fields of the map not listed (and the patch may only set
//   listed fields); `$deleteFromPrimitiveList/<f>: [...]` removes those values from the scalar
//   list f; `$setElementOrder/<f>: [...]` orders the merged list f (listed elements in that
//   order, the server's others kept in their relative place);
// - the result's list order follows Kubernetes' own: patch order, then the live order for
//   elements the patch does not mention, interleaved as mergeSortedSlice does.
// Errors carry the HTTP status the API server answers with (see errors.ts).
//
// Computing (kubectl apply's CreateThreeWayMergePatch, kubectl edit's CreateTwoWayMergePatch):
// deletions as `null`, `$patch: delete` list elements or `$deleteFromPrimitiveList`, with
// `$setElementOrder` lists and `$retainKeys` for retainKeys fields, as kubectl sends them.
//
// Schema lookups follow the Go struct lookup the API server uses (PatchMetaFromStruct): a JSON
// field is found by exact name, else case-insensitively; looking into a map type or an unknown
// field of a struct is an error (500), as in Kubernetes. A type without a declaration here, and
// the free-form special types (RawExtension, JSON, FieldsV1, JSONSchemaProps*), have no schema:
// their maps merge and their lists are replaced, as a JSON merge patch would do.
import type { FieldDecl, TypeDecl, TypeRef } from '../schema/model.js';
import { getType as schemaGetType, jsonFields } from '../schema/types.js';
import {
  PatchError,
  cloneJSON,
  deepEqualJSON,
  getOwn,
  goSprint,
  
  goTypeName,
  hasOwn,
  isMap,
  setOwn,
} from './errors.js';
import type { FieldValidation } from './jsonpatch.js';
import { goJSONKind, goQuote, goStringCompare } from '../machinery/gostrings.js';

type JMap = Record<string, unknown>;

const DIRECTIVE = '$patch';
const DELETE = 'delete';
const REPLACE = 'replace';
const MERGE = 'merge';
const RETAIN_KEYS_STRATEGY = 'retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';
const RETAIN_KEYS = '$retainKeys';
const SET_ELEMENT_ORDER = '$setElementOrder';

// ---- errors (k8s.io/apimachinery/pkg/util/mergepatch) ----

/** The sentinel errors the API server maps to 400 BadRequest. */
const errBadPatchFormatForPrimitiveList = () => PatchError.badRequest('invalid patch format of primitive list');
const errBadPatchFormatForRetainKeys = () => PatchError.badRequest('invalid patch format of retainKeys');
const errBadPatchFormatForSetElementOrderList = () => PatchError.badRequest('invalid patch format of setElementOrder list');
/** ErrNoListOfLists: the API server answers 422 with the generic message. */
const errNoListOfLists = () => PatchError.unprocessable('lists of lists are not supported');

function errNoMergeKey(m: JMap, k: string): PatchError {
  return PatchError.internal(`map: ${goSprint(m)} does not contain declared merge key: ${k}`);
}

/** mergepatch.ErrBadArgType(expected, actual): "expected a map[string]interface {}, but received a string". */
function errBadArgType(expected: 'map' | 'slice', actual: unknown): PatchError {
  const e = expected === 'map' ? 'map[string]interface {}' : '[]interface {}';
  return PatchError.internal(`expected a ${e}, but received a ${goTypeName(actual) ?? '%!s(<nil>)'}`);
}

function errBadPatchType(t: unknown, m: JMap): PatchError {
  return PatchError.internal(`unknown patch type: ${goSprint(t, 's')} in map: ${goSprint(m)}`);
}

// ---- Go's comparison of decoded JSON values ----

/** Go's `==` on two interface{} values holding decoded JSON (panics on maps and slices of the same type). */
function goEq(a: unknown, b: unknown): boolean {
  const ta = goTypeName(a);
  const tb = goTypeName(b);
  if (ta === undefined || tb === undefined) return ta === tb;
  if (ta !== tb) return false;
  if (typeof a === 'object') throw PatchError.panic(`runtime error: comparing uncomparable type ${ta}`, `a list of scalars (in the patch or the object) holds objects or lists where they are compared (${ta})`);
  return a === b;
}

/** A key for Go's map[interface{}] of a decoded JSON scalar (panics on maps and slices). */
function hashKey(v: unknown): string {
  const t = goTypeName(v);
  if (t === undefined) return 'nil';
  if (typeof v === 'object') throw PatchError.panic(`runtime error: hash of unhashable type ${t}`, `a list of scalars (in the patch or the object) holds objects or lists where they are compared (${t})`);
  return `${t}:${String(v)}`;
}

function goLess(a: string, b: string): boolean {
  return goStringCompare(a, b) < 0;
}

// ---- schema lookups (the LookupPatchMeta of the Go code) ----

export interface PatchMeta {
  /** the field's patchStrategy split on ',' ([''] when it has none) */
  strategies: string[];
  /** the field's patchMergeKey ('' when it has none) */
  mergeKey: string;
}

type TypeResolver = (name: string) => TypeDecl | undefined;

/** A node of the schema: the Go type a value has, as far as patch metadata goes. */
type Node =
  | { k: 'struct'; decl: TypeDecl }
  | { k: 'map'; values: TypeRef }
  | { k: 'slice'; items: TypeRef }
  | { k: 'scalar'; goKind: string }
  /** no schema: merges as JSON merge patch does (PatchMetaFromOpenAPI without a schema) */
  | { k: 'free' };

const FREE: Node = { k: 'free' };
const EMPTY_META: PatchMeta = { strategies: [], mergeKey: '' };

const SCALAR_KIND: Record<string, string> = { string: 'string', bool: 'bool', int32: 'int32', int64: 'int64', double: 'float64', bytes: 'slice' };

class Lookup {
  constructor(
    readonly node: Node,
    private readonly resolve: TypeResolver,
  ) {}

  private nodeOf(ref: TypeRef): Node {
    switch (ref.kind) {
      case 'scalar':
        return { k: 'scalar', goKind: SCALAR_KIND[ref.scalar] ?? ref.scalar };
      case 'special':
        return FREE;
      case 'object': {
        const decl = this.resolve(ref.name);
        return decl ? { k: 'struct', decl } : FREE;
      }
      case 'array':
        return { k: 'slice', items: ref.items };
      case 'map':
        return { k: 'map', values: ref.values };
    }
  }

  private field(key: string): FieldDecl {
    const n = this.node;
    if (n.k !== 'struct') {
      const kind = n.k === 'scalar' ? n.goKind : n.k;
      throw PatchError.internal(`merging an object in json but data type is not struct, instead is: ${kind}`);
    }
    const fields = jsonFields(n.decl);
    let f = fields.get(key);
    if (!f) {
      const lower = key.toLowerCase();
      for (const [name, g] of fields) {
        if (name.toLowerCase() === lower) {
          f = g;
          break;
        }
      }
    }
    if (!f) throw PatchError.internal(`unable to find api field in struct ${goTypeNameOf(n.decl)} for the json field ${goQuote(key)}`);
    return f;
  }

  private static meta(f: FieldDecl): PatchMeta {
    return { strategies: (f.patchStrategy ?? '').split(','), mergeKey: f.patchMergeKey ?? '' };
  }

  /** LookupPatchMetadataForStruct: the schema of field key, and its patch metadata. */
  forStruct(key: string): [Lookup, PatchMeta] {
    if (this.node.k === 'free') return [this, EMPTY_META];
    const f = this.field(key);
    return [new Lookup(this.nodeOf(f.type), this.resolve), Lookup.meta(f)];
  }

  /** LookupPatchMetadataForSlice: the schema of the elements of list field key, and its patch metadata. */
  forSlice(key: string): [Lookup, PatchMeta] {
    if (this.node.k === 'free') return [this, EMPTY_META];
    const f = this.field(key);
    const t = f.type;
    if (t.kind === 'array') {
      if (t.items.kind === 'array' || (t.items.kind === 'scalar' && t.items.scalar === 'bytes')) {
        throw PatchError.internal('unexpected slice of slice');
      }
      return [new Lookup(this.nodeOf(t.items), this.resolve), Lookup.meta(f)];
    }
    if (t.kind === 'scalar' && t.scalar === 'bytes') return [new Lookup({ k: 'scalar', goKind: 'uint8' }, this.resolve), Lookup.meta(f)];
    // a pointer field: its element (Go's reflect.Pointer case)
    if (f.nullable && (t.kind === 'object' || t.kind === 'scalar')) return [new Lookup(this.nodeOf(t), this.resolve), Lookup.meta(f)];
    if (t.kind === 'special') return [new Lookup(FREE, this.resolve), Lookup.meta(f)];
    throw PatchError.internal('expected slice or array type, but got: struct');
  }

  /** Name(): the Go kind of the type. */
  name(): string {
    const n = this.node;
    switch (n.k) {
      case 'struct':
        return 'struct';
      case 'scalar':
        return n.goKind;
      case 'free':
        return 'Struct';
      default:
        return n.k;
    }
  }
}

function goTypeNameOf(decl: TypeDecl): string {
  const dot = decl.name.lastIndexOf('.');
  return dot < 0 ? decl.name : decl.name.slice(dot + 1);
}

function rootLookup(typeName: string | undefined, resolve: TypeResolver): Lookup {
  const decl = typeName === undefined ? undefined : resolve(typeName);
  return new Lookup(decl ? { k: 'struct', decl } : FREE, resolve);
}

function extractRetainKeysPatchStrategy(strategies: string[]): [retainKeys: boolean, strategy: string] {
  switch (strategies.length) {
    case 0:
      return [false, ''];
    case 1:
      return strategies[0] === RETAIN_KEYS_STRATEGY ? [true, ''] : [false, strategies[0]!];
    case 2:
      if (strategies[0] === RETAIN_KEYS_STRATEGY) return [true, strategies[1]!];
      if (strategies[1] === RETAIN_KEYS_STRATEGY) return [true, strategies[0]!];
      throw PatchError.internal(`unexpected patch strategy: ${goSprint(strategies)}`);
    default:
      throw PatchError.internal(`unexpected patch strategy: ${goSprint(strategies)}`);
  }
}

// ---- helpers shared by applying and computing ----

/** The Go kind of the elements of the given lists: 'map', a scalar type, or an error. */
function sliceElementType(...slices: unknown[][]): string {
  let prev: string | undefined;
  let seen = false;
  for (const s of slices) {
    for (const v of s) {
      const cur = goTypeName(v);
      if (!seen) {
        seen = true;
        if (cur === undefined) throw PatchError.panic('runtime error: invalid memory address or nil pointer dereference', 'a list (in the patch or the object) begins with null');
        prev = cur;
        if (cur === '[]interface {}') throw errNoListOfLists();
      } else if (prev !== cur) {
        throw PatchError.internal(`list element types are not identical: ${goSprint(slices)}`);
      }
    }
  }
  if (!seen) throw PatchError.internal('no elements in any of the given slices');
  return prev === 'map[string]interface {}' ? 'map' : prev!;
}

function isMapKind(kind: string): boolean {
  return kind === 'map';
}

/** mergeKey's value of item, as index() reads it (nil when item is not a map or has no such key). */
function keyValue(item: unknown, mergeKey: string, kind: string): unknown {
  if (!isMapKind(kind)) return item;
  if (!isMap(item)) return null;
  const v = getOwn(item, mergeKey);
  return v === undefined ? null : v;
}

/** The index of the item in l (by merge key for maps), or -1. */
function index(l: unknown[] | null, val: unknown, mergeKey: string, kind: string): number {
  if (!l) return -1;
  const want = keyValue(val, mergeKey, kind);
  for (let i = 0; i < l.length; i++) if (goEq(want, keyValue(l[i], mergeKey, kind))) return i;
  return -1;
}

function validateMergeKeyInLists(mergeKey: string, ...lists: (unknown[] | null)[]): void {
  for (const list of lists) {
    for (const item of list ?? []) {
      if (!isMap(item)) throw errBadArgType('map', item);
      if (!hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
    }
  }
}

function extractToDeleteItems(l: unknown[]): [nonDelete: unknown[], toDelete: unknown[]] {
  const nonDelete: unknown[] = [];
  const toDelete: unknown[] = [];
  for (const v of l) {
    if (!isMap(v)) throw errBadArgType('map', v);
    if (hasOwn(v, DIRECTIVE) && v[DIRECTIVE] === DELETE) toDelete.push(v);
    else nonDelete.push(v);
  }
  return [nonDelete, toDelete];
}

/** Go's sort.SliceStable (insertion sort in blocks of 20, then SymMerge), with a less over indices. */
function goSliceStable<T>(a: T[], less: (x: T, y: T) => boolean): void {
  const lessIdx = (i: number, j: number) => less(a[i]!, a[j]!);
  const swap = (i: number, j: number) => {
    const t = a[i]!;
    a[i] = a[j]!;
    a[j] = t;
  };
  const insertion = (lo: number, hi: number) => {
    for (let i = lo + 1; i < hi; i++) for (let j = i; j > lo && lessIdx(j, j - 1); j--) swap(j, j - 1);
  };
  const swapRange = (x: number, y: number, n: number) => {
    for (let i = 0; i < n; i++) swap(x + i, y + i);
  };
  const rotate = (lo: number, m: number, hi: number) => {
    let i = m - lo;
    let j = hi - m;
    while (i !== j) {
      if (i > j) {
        swapRange(m - i, m, j);
        i -= j;
      } else {
        swapRange(m - i, m + j - i, i);
        j -= i;
      }
    }
    swapRange(m - i, m, i);
  };
  const symMerge = (lo: number, m: number, hi: number): void => {
    if (m - lo === 1) {
      let i = m;
      let j = hi;
      while (i < j) {
        const h = (i + j) >>> 1;
        if (lessIdx(h, lo)) i = h + 1;
        else j = h;
      }
      for (let k = lo; k < i - 1; k++) swap(k, k + 1);
      return;
    }
    if (hi - m === 1) {
      let i = lo;
      let j = m;
      while (i < j) {
        const h = (i + j) >>> 1;
        if (!lessIdx(m, h)) i = h + 1;
        else j = h;
      }
      for (let k = m; k > i; k--) swap(k, k - 1);
      return;
    }
    const mid = (lo + hi) >>> 1;
    const n = mid + m;
    let start: number;
    let r: number;
    if (m > mid) {
      start = n - hi;
      r = mid;
    } else {
      start = lo;
      r = m;
    }
    const p = n - 1;
    while (start < r) {
      const c = (start + r) >>> 1;
      if (!lessIdx(p - c, c)) start = c + 1;
      else r = c;
    }
    const end = n - start;
    if (start < m && m < end) rotate(start, m, end);
    if (lo < start && start < mid) symMerge(lo, start, mid);
    if (mid < end && end < hi) symMerge(mid, end, hi);
  };
  const n = a.length;
  let blockSize = 20;
  let lo = 0;
  let hi = blockSize;
  while (hi <= n) {
    insertion(lo, hi);
    lo = hi;
    hi += blockSize;
  }
  insertion(lo, n);
  while (blockSize < n) {
    lo = 0;
    hi = 2 * blockSize;
    while (hi <= n) {
      symMerge(lo, lo + blockSize, hi);
      lo = hi;
      hi += 2 * blockSize;
    }
    const m = lo + blockSize;
    if (m < n) symMerge(lo, m, n);
    blockSize *= 2;
  }
}

/** Sorts toSort by the position of its elements in order (elements to delete go last). */
function normalizeSliceOrder(toSort: unknown[], order: unknown[] | null, mergeKey: string, kind: string): unknown[] {
  let toDelete: unknown[] = [];
  if (isMapKind(kind)) {
    validateMergeKeyInLists(mergeKey, toSort, order);
    [toSort, toDelete] = extractToDeleteItems(toSort);
  }
  goSliceStable(toSort, (x, y) => {
    const ii = index(order, x, mergeKey, kind);
    if (ii >= 0) {
      const ij = index(order, y, mergeKey, kind);
      if (ij >= 0) return ii < ij;
    }
    return true;
  });
  return toSort.concat(toDelete);
}

/** Interleaves the sorted server-only items (left) into the sorted patch items (right), by server order. */
function mergeSortedSlice(left: unknown[], right: unknown[], serverOrder: unknown[] | null, mergeKey: string, kind: string): unknown[] {
  const size = left.length + right.length;
  const s: unknown[] = new Array(size);
  let i = 0;
  let j = 0;
  for (let k = 0; k < size; k++) {
    if (i >= left.length && j < right.length) {
      s[k] = right[j++];
    } else if (j >= right.length && i < left.length) {
      s[k] = left[i++];
    } else {
      const li = index(serverOrder, left[i], mergeKey, kind);
      const ri = index(serverOrder, right[j], mergeKey, kind);
      if (li >= 0 && ri >= 0 && li < ri) s[k] = left[i++];
      else s[k] = right[j++];
    }
  }
  return s;
}

function normalizeElementOrder(
  patch: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[] | null,
  serverOrder: unknown[] | null,
  mergeKey: string,
  kind: string,
): unknown[] {
  patch = normalizeSliceOrder(patch, patchOrder, mergeKey, kind);
  serverOnly = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind);
  return mergeSortedSlice(serverOnly, patch, serverOrder, mergeKey, kind);
}

/** Go's "clever" in-place de-duplication (a later duplicate is replaced by the last element). */
function deduplicateScalars(s: unknown[]): unknown[] {
  let length = s.length - 1;
  for (let i = 0; i < length; i++) {
    for (let j = i + 1; j <= length; j++) {
      if (goEq(s[i], s[j])) {
        s[j] = s[length];
        s.length = length;
        length--;
        j--;
      }
    }
  }
  return s;
}

/** Sorts scalars in place by their %v text. */
function sortScalars(s: unknown[]): unknown[] {
  const keyed = s.map((v) => ({ v, k: goSprint(v) }));
  keyed.sort((a, b) => goStringCompare(a.k, b.k));
  for (let i = 0; i < s.length; i++) s[i] = keyed[i]!.v;
  return s;
}

function findMapInSliceBasedOnKeyValue(m: unknown[] | null, key: string, value: unknown): { map: JMap; index: number } | undefined {
  if (!m) return undefined;
  for (let k = 0; k < m.length; k++) {
    const v = m[k];
    if (!isMap(v)) throw PatchError.internal(`value for key ${k} is not a map`);
    if (hasOwn(v, key) && goEq(v[key], value)) return { map: v, index: k };
  }
  return undefined;
}

function partitionPrimitivesByPresentInList(original: unknown[], partitionBy: unknown[] | null): [unknown[], unknown[]] {
  const inPatch = new Set<string>();
  for (const v of partitionBy ?? []) inPatch.add(hashKey(v));
  const patch: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const v of original) (inPatch.has(hashKey(v)) ? patch : serverOnly).push(v);
  return [patch, serverOnly];
}

function partitionMapsByPresentInList(original: unknown[], partitionBy: unknown[] | null, mergeKey: string): [unknown[], unknown[]] {
  const patch: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const v of original) {
    if (!isMap(v)) throw errBadArgType('map', v);
    if (!hasOwn(v, mergeKey)) throw errNoMergeKey(v, mergeKey);
    (findMapInSliceBasedOnKeyValue(partitionBy, mergeKey, v[mergeKey]) ? patch : serverOnly).push(v);
  }
  return [patch, serverOnly];
}

/** Removes maps holding $patch from obj (in place for maps); false when obj itself is such a map. */
function removeDirectives(obj: unknown): [unknown, boolean] {
  if (obj === null || obj === undefined) return [null, true];
  if (isMap(obj)) {
    if (hasOwn(obj, DIRECTIVE)) return [null, false];
    for (const k of Object.keys(obj)) {
      const [v, keep] = removeDirectives(obj[k]);
      if (keep) setOwn(obj, k, v);
      else delete obj[k];
    }
    return [obj, true];
  }
  if (Array.isArray(obj)) {
    const res: unknown[] = [];
    for (const v of obj) {
      const [nv, keep] = removeDirectives(v);
      if (keep) res.push(nv);
    }
    return [res, true];
  }
  return [obj, true];
}

function discardNullValuesFromPatch(v: unknown): void {
  if (isMap(v)) {
    for (const k of Object.keys(v)) {
      if (v[k] === null) delete v[k];
      else discardNullValuesFromPatch(v[k]);
    }
  } else if (Array.isArray(v)) {
    for (const x of v) discardNullValuesFromPatch(x);
  }
}

function extractKey(s: string, prefix: string): string {
  const slash = s.indexOf('/');
  if (slash < 0 || s.slice(0, slash) !== prefix) {
    if (prefix === DELETE_FROM_PRIMITIVE_LIST) throw errBadPatchFormatForPrimitiveList();
    if (prefix === SET_ELEMENT_ORDER) throw errBadPatchFormatForSetElementOrderList();
    throw PatchError.internal(`fail to find unknown prefix ${goQuote(prefix)} in ${s}\n`);
  }
  return s.slice(slash + 1);
}

function mergeKeyValueEqual(left: unknown, right: unknown, mergeKey: string): boolean {
  if (mergeKey === '') return goEq(left, right);
  if (!isMap(left)) throw errBadArgType('map', left);
  if (!isMap(right)) throw errBadArgType('map', right);
  if (!hasOwn(left, mergeKey)) throw errNoMergeKey(left, mergeKey);
  if (!hasOwn(right, mergeKey)) throw errNoMergeKey(right, mergeKey);
  return goEq(left[mergeKey], right[mergeKey]);
}

function containsDirectiveMarker(item: unknown): boolean {
  return isMap(item) && hasOwn(item, DIRECTIVE);
}

// ---- applying (mergeMap and friends) ----

interface MergeOptions {
  /** true on the server: apply the parallel lists ($deleteFromPrimitiveList, $setElementOrder, $retainKeys) */
  mergeParallelList: boolean;
  /** true on the server: a null for a field the original lacks is dropped */
  ignoreUnmatchedNulls: boolean;
}

const SERVER: MergeOptions = { mergeParallelList: true, ignoreUnmatchedNulls: true };
const CLIENT: MergeOptions = { mergeParallelList: false, ignoreUnmatchedNulls: false };

function handleDirectiveInMergeMap(directive: unknown, patch: JMap): JMap {
  if (directive === REPLACE) {
    delete patch[DIRECTIVE];
    return patch;
  }
  if (directive === DELETE) return {};
  throw errBadPatchType(directive, patch);
}

function applyRetainKeysDirective(original: JMap, patch: JMap, options: MergeOptions): void {
  if (!hasOwn(patch, RETAIN_KEYS)) return;
  const inPatch = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!options.mergeParallelList) {
    if (hasOwn(original, RETAIN_KEYS)) {
      if (!deepEqualJSON(original[RETAIN_KEYS], inPatch)) {
        throw PatchError.internal(
          `${goSprint(original[RETAIN_KEYS])} and ${goSprint(inPatch)} are not deep equal: this may happen when calculating the 3-way diff patch`,
        );
      }
    } else {
      setOwn(original, RETAIN_KEYS, inPatch);
    }
    return;
  }
  if (!Array.isArray(inPatch)) throw errBadPatchFormatForRetainKeys();
  const keep = new Set<string>();
  for (const v of inPatch) keep.add(hashKey(v));
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!keep.has(hashKey(k))) throw errBadPatchFormatForRetainKeys();
  }
  for (const k of Object.keys(original)) if (!keep.has(hashKey(k))) delete original[k];
}

function validatePatchWithSetOrderList(patchList: unknown[] | null, setOrderList: unknown[], mergeKey: string): void {
  if (setOrderList.length === 0 || !patchList || patchList.length === 0) return;
  const nonDelete = mergeKey !== '' ? extractToDeleteItems(patchList)[0] : patchList;
  let p = 0;
  let s = 0;
  while (p < nonDelete.length && s < setOrderList.length) {
    if (containsDirectiveMarker(nonDelete[p])) {
      p++;
      continue;
    }
    if (mergeKeyValueEqual(nonDelete[p], setOrderList[s], mergeKey)) p++;
    s++;
  }
  if (p < nonDelete.length && s >= setOrderList.length) {
    throw PatchError.internal(
      `The order in patch list:\n${goSprint(patchList)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${goSprint(setOrderList)}\n`,
    );
  }
}

/** Processes the $setElementOrder lists of patch (and the lists they order), removing them from patch. */
function mergePatchIntoOriginal(original: JMap, patch: JMap, schema: Lookup, options: MergeOptions): void {
  for (const key of Object.keys(patch)) {
    if (!hasOwn(patch, key) || !key.startsWith(SET_ELEMENT_ORDER)) continue;
    const setElementOrderInPatch = patch[key];
    if (!options.mergeParallelList) {
      if (hasOwn(original, key)) {
        if (!deepEqualJSON(original[key], setElementOrderInPatch)) throw errBadPatchFormatForSetElementOrderList();
      } else {
        setOwn(original, key, setElementOrderInPatch);
      }
    }
    delete patch[key];

    if (!Array.isArray(setElementOrderInPatch)) throw errBadArgType('slice', setElementOrderInPatch);
    const setOrder = setElementOrderInPatch;
    const originalKey = extractKey(key, SET_ELEMENT_ORDER);
    const foundOriginal = hasOwn(original, originalKey);
    const foundPatch = hasOwn(patch, originalKey);
    let originalFieldValue: unknown[] | null = null;
    let patchFieldValue: unknown[] | null = null;
    if (foundOriginal) {
      const v = original[originalKey];
      if (!Array.isArray(v)) throw errBadArgType('slice', v);
      originalFieldValue = v;
    }
    if (foundPatch) {
      const v = patch[originalKey];
      if (!Array.isArray(v)) throw errBadArgType('slice', v);
      patchFieldValue = v;
    }
    const [subschema, meta] = schema.forSlice(originalKey);
    const [, strategy] = extractRetainKeysPatchStrategy(meta.strategies);
    validatePatchWithSetOrderList(patchFieldValue, setOrder, meta.mergeKey);

    // the original list as Go's slice header sees it after the merge shifted and appended in place
    const originalLen = originalFieldValue?.length ?? 0;
    let merged: unknown[];
    if (foundOriginal && !foundPatch) {
      merged = originalFieldValue!;
    } else if (!foundOriginal && foundPatch) {
      const [v, keep] = removeDirectives(patchFieldValue);
      if (!keep) continue;
      merged = v as unknown[];
    } else if (foundOriginal && foundPatch) {
      merged = mergeSliceHandler(originalFieldValue, patchFieldValue, subschema, strategy, meta.mergeKey, false, options);
    } else {
      continue;
    }
    const serverOrder = originalFieldValue ? originalFieldValue.slice(0, originalLen) : null;

    let patchItems: unknown[];
    let serverOnlyItems: unknown[];
    if (meta.mergeKey === '') [patchItems, serverOnlyItems] = partitionPrimitivesByPresentInList(merged, setOrder);
    else [patchItems, serverOnlyItems] = partitionMapsByPresentInList(merged, setOrder, meta.mergeKey);

    const kind = sliceElementType(serverOrder ?? [], patchFieldValue ?? []);
    original[originalKey] = normalizeElementOrder(patchItems, serverOnlyItems, setOrder, serverOrder, meta.mergeKey, kind);
    delete patch[originalKey];
  }
}

function preprocessDeletionListForMerging(
  key: string,
  original: JMap,
  patchVal: unknown,
  mergeDeletionList: boolean,
): { skip: boolean; isDeleteList: boolean; noPrefixKey: string } {
  if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
    if (!mergeDeletionList) {
      setOwn(original, key, patchVal);
      return { skip: true, isDeleteList: false, noPrefixKey: '' };
    }
    return { skip: false, isDeleteList: true, noPrefixKey: extractKey(key, DELETE_FROM_PRIMITIVE_LIST) };
  }
  return { skip: false, isDeleteList: false, noPrefixKey: '' };
}

/** The kind of a value as mergeMap compares them: maps and slices recurse, anything else is replaced. */
function valueKind(v: unknown): string {
  return goTypeName(v) ?? 'nil';
}

function mergeMap(original: JMap | null, patch: JMap | null, schema: Lookup, options: MergeOptions): JMap {
  if (patch && hasOwn(patch, DIRECTIVE)) return handleDirectiveInMergeMap(patch[DIRECTIVE], patch);
  if (original === null) original = {};
  if (!patch) return original;
  applyRetainKeysDirective(original, patch, options);
  mergePatchIntoOriginal(original, patch, schema, options);

  for (const pk of Object.keys(patch)) {
    if (!hasOwn(patch, pk)) continue;
    const patchV = patch[pk];
    const pre = preprocessDeletionListForMerging(pk, original, patchV, options.mergeParallelList);
    if (pre.skip) continue;
    const k = pre.noPrefixKey.length > 0 ? pre.noPrefixKey : pk;
    const isDeleteList = pre.isDeleteList;

    if (patchV === null) {
      delete original[k];
      if (options.ignoreUnmatchedNulls) continue;
    }

    if (!hasOwn(original, k)) {
      if (!isDeleteList) {
        if (options.ignoreUnmatchedNulls) discardNullValuesFromPatch(patchV);
        const [v, keep] = removeDirectives(patchV);
        if (keep) setOwn(original, k, v);
        else delete original[k];
      }
      continue;
    }

    const originalV = original[k];
    const ok = valueKind(originalV);
    if (ok !== valueKind(patchV)) {
      if (!isDeleteList) {
        if (options.ignoreUnmatchedNulls) discardNullValuesFromPatch(patchV);
        const [v, keep] = removeDirectives(patchV);
        if (keep) setOwn(original, k, v);
        else delete original[k];
      }
      continue;
    }
    if (ok === 'map[string]interface {}') {
      const [subschema, meta] = schema.forStruct(k);
      const [, strategy] = extractRetainKeysPatchStrategy(meta.strategies);
      setOwn(original, k, mergeMapHandler(originalV, patchV, subschema, strategy, options));
    } else if (ok === '[]interface {}') {
      const [subschema, meta] = schema.forSlice(k);
      const [, strategy] = extractRetainKeysPatchStrategy(meta.strategies);
      setOwn(original, k, mergeSliceHandler(originalV as unknown[], patchV as unknown[], subschema, strategy, meta.mergeKey, isDeleteList, options));
    } else {
      const [v, keep] = removeDirectives(patchV);
      if (keep) setOwn(original, k, v);
      else delete original[k];
    }
  }
  return original;
}

function mergeMapHandler(original: unknown, patch: unknown, schema: Lookup, strategy: string, options: MergeOptions): JMap {
  if (!isMap(original)) throw errBadArgType('map', original);
  if (!isMap(patch)) throw errBadArgType('map', patch);
  if (strategy !== REPLACE) return mergeMap(original, patch, schema, options);
  return patch;
}

function mergeSliceHandler(
  original: unknown[] | null,
  patch: unknown[] | null,
  schema: Lookup,
  strategy: string,
  mergeKey: string,
  isDeleteList: boolean,
  options: MergeOptions,
): unknown[] {
  if (strategy === MERGE || isDeleteList) return mergeSlice(original ?? [], patch ?? [], schema, mergeKey, options, isDeleteList);
  return patch ?? [];
}

/**
 * A Go slice header over a shared backing array: deletions shift elements in place and appends
 * write past the end, so another header over the same array (the original list, read again
 * when $setElementOrder orders it) sees what Go's would.
 */
interface Slice {
  arr: unknown[];
  len: number;
}

function view(s: Slice): unknown[] {
  return s.arr.slice(0, s.len);
}

function mergeSlice(original: unknown[], patch: unknown[], schema: Lookup, mergeKey: string, options: MergeOptions, isDeleteList: boolean): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = sliceElementType(original, patch);

  let merged: unknown[];
  let serverOrder: unknown[];
  let patchOrder: unknown[] | null = patch;
  if (!isMapKind(kind)) {
    if (options.mergeParallelList && isDeleteList) return deleteFromSlice(original, patch);
    merged = deduplicateScalars([...original, ...patch]);
    serverOrder = original;
  } else {
    if (mergeKey === '') throw PatchError.internal(`cannot merge lists without merge key for ${schema.name()}`);
    const special = mergeSliceWithSpecialElements({ arr: original, len: original.length }, patch, mergeKey);
    const out = mergeSliceWithoutSpecialElements(special.original, special.patch ?? [], mergeKey, schema, options);
    merged = view(out);
    serverOrder = view(special.original);
    patchOrder = special.patch;
  }

  let patchItems: unknown[];
  let serverOnlyItems: unknown[];
  if (mergeKey === '') [patchItems, serverOnlyItems] = partitionPrimitivesByPresentInList(merged, patchOrder);
  else [patchItems, serverOnlyItems] = partitionMapsByPresentInList(merged, patchOrder, mergeKey);
  return normalizeElementOrder(patchItems, serverOnlyItems, patchOrder, serverOrder, mergeKey, kind);
}

function mergeSliceWithSpecialElements(original: Slice, patch: unknown[], mergeKey: string): { original: Slice; patch: unknown[] | null } {
  const without: unknown[] = [];
  let replace = false;
  for (const v of patch) {
    const typed = v as JMap;
    if (!hasOwn(typed, DIRECTIVE)) {
      without.push(v);
      continue;
    }
    const patchType = typed[DIRECTIVE];
    if (patchType === DELETE) {
      if (!hasOwn(typed, mergeKey)) throw errNoMergeKey(typed, mergeKey);
      deleteMatchingEntries(original, mergeKey, typed[mergeKey]);
    } else if (patchType === REPLACE) {
      replace = true;
    } else if (patchType === MERGE) {
      throw PatchError.internal('merging lists cannot yet be specified in the patch');
    } else {
      throw errBadPatchType(patchType, typed);
    }
  }
  if (replace) return { original: { arr: without, len: without.length }, patch: null };
  return { original, patch: without };
}

/** Deletes (in place, as Go's append(s[:i], s[i+1:]...) does) the elements whose merge key has the value. */
function deleteMatchingEntries(s: Slice, mergeKey: string, mergeValue: unknown): void {
  for (;;) {
    const found = findMapInSliceBasedOnKeyValue(view(s), mergeKey, mergeValue);
    if (!found) return;
    for (let i = found.index; i < s.len - 1; i++) s.arr[i] = s.arr[i + 1];
    s.len--;
  }
}

function mergeSliceWithoutSpecialElements(input: Slice, patch: unknown[], mergeKey: string, schema: Lookup, options: MergeOptions): Slice {
  // a header of its own over the same array (Go passes slices by value)
  const original: Slice = { arr: input.arr, len: input.len };
  for (const v of patch) {
    const typed = v as JMap;
    if (!hasOwn(typed, mergeKey)) throw errNoMergeKey(typed, mergeKey);
    const found = findMapInSliceBasedOnKeyValue(view(original), mergeKey, typed[mergeKey]);
    if (found) {
      original.arr[found.index] = mergeMap(found.map, typed, schema, options);
    } else {
      original.arr[original.len] = v;
      original.len++;
    }
  }
  return original;
}

function deleteFromSlice(current: unknown[], toDelete: unknown[]): unknown[] {
  const del = new Set<string>();
  for (const v of toDelete) del.add(hashKey(v));
  return current.filter((v) => !del.has(hashKey(v)));
}

// ---- the public API: applying ----

export interface StrategicOptions {
  /**
   * The request's fieldValidation (default Warn, the API server's default). The patch body is
   * decoded into a map either way; it only changes the decoding, not the result.
   */
  fieldValidation?: FieldValidation;
  /** resolves type names (default: the schema's getType); lets tests use their own declarations */
  getType?: (name: string) => TypeDecl | undefined;
}

/**
 * Applies a strategic merge patch to an object of the given type (a canonical type name such as
 * 'io.k8s.api.core.v1.Pod'; a name without a declaration patches without schema) as
 * kube-apiserver does, returning a new object (the inputs are not modified). Throws PatchError.
 */
export function applyStrategicMergePatch(doc: unknown, patch: unknown, typeName: string | undefined, options: StrategicOptions = {}): unknown {
  if (doc !== null && !isMap(doc)) throw PatchError.internal(`json: cannot unmarshal ${goJSONKind(doc)} into Go value of type map[string]interface {}`);
  if (patch !== null && !isMap(patch)) {
    throw PatchError.badRequest(`json: cannot unmarshal ${goJSONKind(patch)} into Go value of type map[string]interface {}`);
  }
  const schema = rootLookup(typeName, options.getType ?? schemaGetType);
  return mergeMap(cloneJSON(doc as JMap | null), cloneJSON(patch), schema, SERVER);
}

// ---- computing patches (kubectl) ----

interface DiffOptions {
  setElementOrder: boolean;
  ignoreChangesAndAdditions: boolean;
  ignoreDeletions: boolean;
  buildRetainKeysDirective: boolean;
}

function diffOpts(o: Partial<DiffOptions>): DiffOptions {
  return { setElementOrder: false, ignoreChangesAndAdditions: false, ignoreDeletions: false, buildRetainKeysDirective: false, ...o };
}

function diffMaps(original: JMap, modified: JMap, schema: Lookup, o: DiffOptions): JMap {
  const patch: JMap = {};
  const retainKeysList: unknown[] = [];
  for (const key of Object.keys(modified)) {
    const modifiedValue = modified[key];
    if (o.buildRetainKeysDirective && modifiedValue !== null) retainKeysList.push(key);
    if (!hasOwn(original, key)) {
      if (!o.ignoreChangesAndAdditions) setOwn(patch, key, modifiedValue);
      continue;
    }
    const originalValue = original[key];
    if (handleDirectiveMarker(key, originalValue, modifiedValue, patch)) continue;
    if (goTypeName(originalValue) !== goTypeName(modifiedValue)) {
      if (!o.ignoreChangesAndAdditions) setOwn(patch, key, modifiedValue);
      continue;
    }
    if (isMap(originalValue)) handleMapDiff(key, originalValue, modifiedValue as JMap, patch, schema, o);
    else if (Array.isArray(originalValue)) handleSliceDiff(key, originalValue, modifiedValue as unknown[], patch, schema, o);
    else replacePatchFieldIfNotEqual(key, originalValue, modifiedValue, patch, o);
  }
  updatePatchIfMissing(original, modified, patch, o);
  if (retainKeysList.length > 0 && (Object.keys(patch).length > 0 || hasAdditionalNewField(original, modified))) {
    patch[RETAIN_KEYS] = sortScalars(retainKeysList);
  }
  return patch;
}

function handleDirectiveMarker(key: string, originalValue: unknown, modifiedValue: unknown, patch: JMap): boolean {
  if (key !== DIRECTIVE) return false;
  if (typeof originalValue !== 'string' || typeof modifiedValue !== 'string') {
    throw PatchError.internal(`invalid value for special key: ${DIRECTIVE}`);
  }
  if (modifiedValue !== originalValue) patch[DIRECTIVE] = modifiedValue;
  return true;
}

function handleMapDiff(key: string, originalValue: JMap, modifiedValue: JMap, patch: JMap, schema: Lookup, o: DiffOptions): void {
  let subschema: Lookup;
  let meta: PatchMeta;
  try {
    [subschema, meta] = schema.forStruct(key);
  } catch (e) {
    if (deepEqualJSON(originalValue, modifiedValue)) return;
    throw e;
  }
  const [retainKeys, strategy] = extractRetainKeysPatchStrategy(meta.strategies);
  const opts = { ...o, buildRetainKeysDirective: retainKeys };
  if (strategy === REPLACE) {
    if (!opts.ignoreChangesAndAdditions) setOwn(patch, key, modifiedValue);
    return;
  }
  const patchValue = diffMaps(originalValue, modifiedValue, subschema, opts);
  if (Object.keys(patchValue).length > 0) setOwn(patch, key, patchValue);
}

function handleSliceDiff(key: string, originalValue: unknown[], modifiedValue: unknown[], patch: JMap, schema: Lookup, o: DiffOptions): void {
  let subschema: Lookup;
  let meta: PatchMeta;
  try {
    [subschema, meta] = schema.forSlice(key);
  } catch (e) {
    if (deepEqualJSON(originalValue, modifiedValue)) return;
    throw e;
  }
  const [retainKeys, strategy] = extractRetainKeysPatchStrategy(meta.strategies);
  if (strategy === MERGE) {
    const opts = { ...o, buildRetainKeysDirective: retainKeys };
    const [addList, deletionList, setOrderList] = diffLists(originalValue, modifiedValue, subschema, meta.mergeKey, opts);
    if (addList && addList.length > 0) setOwn(patch, key, addList);
    if (deletionList && deletionList.length > 0) patch[`${DELETE_FROM_PRIMITIVE_LIST}/${key}`] = deletionList;
    if (setOrderList && setOrderList.length > 0) patch[`${SET_ELEMENT_ORDER}/${key}`] = setOrderList;
    return;
  }
  replacePatchFieldIfNotEqual(key, originalValue, modifiedValue, patch, o);
}

function replacePatchFieldIfNotEqual(key: string, original: unknown, modified: unknown, patch: JMap, o: DiffOptions): void {
  if (o.ignoreChangesAndAdditions) return;
  if (deepEqualJSON(original, modified)) return;
  setOwn(patch, key, modified);
}

function updatePatchIfMissing(original: JMap, modified: JMap, patch: JMap, o: DiffOptions): void {
  if (o.ignoreDeletions) return;
  for (const key of Object.keys(original)) if (!hasOwn(modified, key)) setOwn(patch, key, null);
}

function hasAdditionalNewField(original: JMap, modified: JMap): boolean {
  for (const [k, v] of Object.entries(original)) {
    if (v === null) continue;
    if (!hasOwn(modified, k)) return true;
  }
  return false;
}

type Lists = [patchList: unknown[] | null, deleteList: unknown[] | null, setOrderList: unknown[] | null];

function diffLists(original: unknown[], modified: unknown[], schema: Lookup, mergeKey: string, o: DiffOptions): Lists {
  if (original.length === 0) {
    if (modified.length === 0 || o.ignoreChangesAndAdditions) return [null, null, null];
    return [modified, null, null];
  }
  const kind = sliceElementType(original, modified);
  let patchList: unknown[];
  let deleteList: unknown[] | null;
  let setOrderList: unknown[] | null = null;
  if (isMapKind(kind)) {
    [patchList, deleteList] = diffListsOfMaps(original, modified, schema, mergeKey, o);
    patchList = normalizeSliceOrder(patchList, modified, mergeKey, kind);
    const orderSame = isOrderSame(original, modified, mergeKey);
    patchList = patchList.concat(deleteList);
    deleteList = null;
    if (
      o.setElementOrder &&
      ((!o.ignoreChangesAndAdditions && (patchList.length > 0 || !orderSame)) || (!o.ignoreDeletions && patchList.length > 0))
    ) {
      setOrderList = modified.map((v) => ({ [mergeKey]: (v as JMap)[mergeKey] ?? null }));
    }
  } else {
    [patchList, deleteList] = diffListsOfScalars(original, modified, o);
    patchList = normalizeSliceOrder(patchList, modified, mergeKey, kind);
    if (o.setElementOrder && ((!o.ignoreDeletions && deleteList.length > 0) || (!o.ignoreChangesAndAdditions && !deepEqualJSON(original, modified)))) {
      setOrderList = modified;
    }
  }
  return [patchList, deleteList, setOrderList];
}

function isOrderSame(original: unknown[], modified: unknown[], mergeKey: string): boolean {
  if (original.length !== modified.length) return false;
  for (let i = 0; i < modified.length; i++) if (!mergeKeyValueEqual(original[i], modified[i], mergeKey)) return false;
  return true;
}

/** Sorts original in place (as Go does), compares the sorted lists by %v text. */
function diffListsOfScalars(original: unknown[], modified: unknown[], o: DiffOptions): [unknown[], unknown[]] {
  const originalScalars = sortScalars(original);
  const modifiedScalars = sortScalars([...modified]);
  let oi = 0;
  let mi = 0;
  const addList: unknown[] = [];
  const deletionList: unknown[] = [];
  for (;;) {
    const oIn = oi < originalScalars.length;
    const mIn = mi < modifiedScalars.length;
    if (!oIn && !mIn) break;
    const os = oIn ? goSprint(originalScalars[oi]) : '';
    const ms = mIn ? goSprint(modifiedScalars[mi]) : '';
    const both = oIn && mIn;
    if (both && os === ms) {
      oi++;
      mi++;
    } else if (!oIn || (both && goLess(ms, os))) {
      if (!o.ignoreChangesAndAdditions) addList.push(modifiedScalars[mi]);
      mi++;
    } else {
      if (!o.ignoreDeletions) deletionList.push(originalScalars[oi]);
      oi++;
    }
  }
  return [addList, deduplicateScalars(deletionList)];
}

function sortMapsBasedOnField(m: unknown[], field: string): unknown[] {
  const keyed = m.map((v) => ({ v, k: goSprint(getOwn(v as JMap, field) ?? null) }));
  keyed.sort((a, b) => goStringCompare(a.k, b.k));
  return keyed.map((x) => x.v);
}

function sortMergeListsByNameArray(s: unknown[], mergeKey: string): unknown[] {
  if (s.length === 0) return s;
  const kind = sliceElementType(s);
  if (!isMapKind(kind)) return sortScalars(deduplicateScalars(s));
  return sortMapsBasedOnField([...s], mergeKey);
}

function mapAndMergeKey(list: unknown[], i: number, mergeKey: string): [JMap, unknown] {
  const m = list[i];
  if (!isMap(m)) throw errBadArgType('map', m);
  if (!hasOwn(m, mergeKey)) throw errNoMergeKey(m, mergeKey);
  return [m, m[mergeKey]];
}

function diffListsOfMaps(original: unknown[], modified: unknown[], schema: Lookup, mergeKey: string, o: DiffOptions): [unknown[], unknown[]] {
  const patch: unknown[] = [];
  const deletionList: unknown[] = [];
  const originalSorted = sortMergeListsByNameArray(original, mergeKey);
  const modifiedSorted = sortMergeListsByNameArray(modified, mergeKey);
  let oi = 0;
  let mi = 0;
  for (;;) {
    const oIn = oi < originalSorted.length;
    const mIn = mi < modifiedSorted.length;
    if (!oIn && !mIn) break;
    let oe: JMap | undefined;
    let ov: unknown;
    let os = '';
    let me: JMap | undefined;
    let mv: unknown;
    let ms = '';
    if (oIn) {
      [oe, ov] = mapAndMergeKey(originalSorted, oi, mergeKey);
      os = goSprint(ov);
    }
    if (mIn) {
      [me, mv] = mapAndMergeKey(modifiedSorted, mi, mergeKey);
      ms = goSprint(mv);
    }
    const both = oIn && mIn;
    if (both && os === ms) {
      const patchValue = diffMaps(oe!, me!, schema, o);
      if (Object.keys(patchValue).length > 0) {
        patchValue[mergeKey] = mv;
        patch.push(patchValue);
      }
      oi++;
      mi++;
    } else if (!oIn || (both && goLess(ms, os))) {
      if (!o.ignoreChangesAndAdditions) patch.push(me);
      mi++;
    } else {
      if (!o.ignoreDeletions) deletionList.push({ [mergeKey]: ov, [DIRECTIVE]: DELETE });
      oi++;
    }
  }
  return [patch, deletionList];
}

// ---- conflicts (three-way, overwrite=false) ----

function mergingMapFieldsHaveConflicts(left: unknown, right: unknown, schema: Lookup | null, strategy: string, mergeKey: string): boolean {
  if (isMap(left)) {
    if (!isMap(right)) return true;
    const okL = hasOwn(left, DIRECTIVE);
    const okR = hasOwn(right, DIRECTIVE);
    if (okL || okR) {
      if (okL !== okR) return true;
      if (!goEq(left[DIRECTIVE], right[DIRECTIVE])) return true;
    }
    if (strategy === REPLACE) return false;
    return mapsHaveConflicts(left, right, schema);
  }
  if (Array.isArray(left)) {
    if (!Array.isArray(right)) return true;
    return slicesHaveConflicts(left, right, schema, strategy, mergeKey);
  }
  return !deepEqualJSON(left, right);
}

function mapsHaveConflicts(left: JMap, right: JMap, schema: Lookup | null): boolean {
  for (const [key, leftValue] of Object.entries(left)) {
    if (key === DIRECTIVE || key === RETAIN_KEYS || !hasOwn(right, key)) continue;
    let subschema: Lookup | null = null;
    let meta: PatchMeta = EMPTY_META;
    let strategy = '';
    if (Array.isArray(leftValue)) {
      if (!schema) throw PatchError.panic('runtime error: invalid memory address or nil pointer dereference', `the patches compared both hold a list in ${JSON.stringify(key)}, which no schema describes`);
      [subschema, meta] = schema.forSlice(key);
      [, strategy] = extractRetainKeysPatchStrategy(meta.strategies);
    } else if (isMap(leftValue)) {
      if (!schema) throw PatchError.panic('runtime error: invalid memory address or nil pointer dereference', `the patches compared both hold an object in ${JSON.stringify(key)}, which no schema describes`);
      [subschema, meta] = schema.forStruct(key);
      [, strategy] = extractRetainKeysPatchStrategy(meta.strategies);
    }
    if (mergingMapFieldsHaveConflicts(leftValue, right[key], subschema, strategy, meta.mergeKey)) return true;
  }
  return false;
}

function slicesHaveConflicts(left: unknown[], right: unknown[], schema: Lookup | null, strategy: string, mergeKey: string): boolean {
  const kind = sliceElementType(left, right);
  if (strategy === MERGE) {
    if (!isMapKind(kind)) return false;
    const l = sliceOfMapsToMapOfMaps(left, mergeKey);
    const r = sliceOfMapsToMapOfMaps(right, mergeKey);
    for (const [k, lv] of l) {
      if (r.has(k) && mergingMapFieldsHaveConflicts(lv, r.get(k), schema, '', '')) return true;
    }
    return false;
  }
  if (left.length !== right.length) return true;
  if (!isMapKind(kind)) {
    left = sortScalars(deduplicateScalars(left));
    right = sortScalars(deduplicateScalars(right));
  }
  for (let i = 0; i < left.length; i++) if (mergingMapFieldsHaveConflicts(left[i], right[i], schema, '', '')) return true;
  return false;
}

function sliceOfMapsToMapOfMaps(slice: unknown[], mergeKey: string): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const v of slice) {
    if (!isMap(v)) throw PatchError.internal(`invalid element type in merging list:${goSprint(slice)}`);
    if (!hasOwn(v, mergeKey)) throw PatchError.internal(`cannot find merge key \`${mergeKey}\` in merging list element:${goSprint(v)}`);
    out.set(goSprint(v[mergeKey], 's'), v);
  }
  return out;
}

// ---- the public API: computing ----

/** A check on a computed patch (mergepatch.PreconditionFunc). */
export type PreconditionFunc = (patch: Record<string, unknown>) => boolean;

/** Fails when the patch changes the top-level key (kubectl apply: apiVersion, kind). */
export function requireKeyUnchanged(key: string): PreconditionFunc {
  return (patch) => !hasOwn(patch, key);
}

/** Fails when the patch changes metadata.<key> (kubectl apply: name). */
export function requireMetadataKeyUnchanged(key: string): PreconditionFunc {
  return (patch) => {
    const md = getOwn(patch, 'metadata');
    if (md === undefined || !isMap(md)) return true;
    return !hasOwn(md, key);
  };
}

/** kubectl apply's preconditions: apiVersion, kind and metadata.name may not change. */
export const APPLY_PRECONDITIONS: readonly PreconditionFunc[] = [
  requireKeyUnchanged('apiVersion'),
  requireKeyUnchanged('kind'),
  requireMetadataKeyUnchanged('name'),
];

export interface CreatePatchOptions {
  preconditions?: readonly PreconditionFunc[];
  getType?: (name: string) => TypeDecl | undefined;
}

/** A document given to the patch computations: an object (null or undefined is {}), else ErrBadJSONDoc. */
function asDocument(v: unknown): JMap {
  if (v === null || v === undefined) return {};
  if (!isMap(v)) throw PatchError.badRequest('invalid JSON document');
  return cloneJSON(v);
}

function checkPreconditions(patch: JMap, fns: readonly PreconditionFunc[] | undefined): void {
  for (const fn of fns ?? []) if (!fn(patch)) throw PatchError.preconditionFailed(patch);
}

/**
 * The strategic merge patch that turns original into modified (kubectl edit, and
 * CreateTwoWayMergePatch), with $setElementOrder lists. Inputs are not modified.
 */
export function createTwoWayMergePatch(original: unknown, modified: unknown, typeName: string | undefined, options: CreatePatchOptions = {}): JMap {
  const schema = rootLookup(typeName, options.getType ?? schemaGetType);
  const patch = diffMaps(asDocument(original), asDocument(modified), schema, diffOpts({ setElementOrder: true }));
  checkPreconditions(patch, options.preconditions);
  return patch;
}

/**
 * kubectl apply's patch (CreateThreeWayMergePatch): the changes from current to modified plus the
 * deletions from original (the last applied configuration) to modified. With overwrite false,
 * a patch that touches fields changed in current since original is a Conflict PatchError.
 * Inputs are not modified.
 */
export function createThreeWayMergePatch(
  original: unknown,
  modified: unknown,
  current: unknown,
  typeName: string | undefined,
  overwrite = false,
  options: CreatePatchOptions = {},
): JMap {
  const schema = rootLookup(typeName, options.getType ?? schemaGetType);
  const originalMap = asDocument(original);
  const modifiedMap = asDocument(modified);
  const currentMap = asDocument(current);
  const deltaMap = diffMaps(currentMap, modifiedMap, schema, diffOpts({ ignoreDeletions: true, setElementOrder: true }));
  const deletionsMap = diffMaps(originalMap, modifiedMap, schema, diffOpts({ setElementOrder: true, ignoreChangesAndAdditions: true }));
  const patchMap = mergeMap(deletionsMap, deltaMap, schema, CLIENT);
  checkPreconditions(patchMap, options.preconditions);
  if (!overwrite) {
    const changedMap = diffMaps(originalMap, currentMap, schema, diffOpts({}));
    if (mergingMapFieldsHaveConflicts(patchMap, changedMap, schema, '', '')) throw PatchError.conflict(patchMap, changedMap);
  }
  return patchMap;
}

/**
 * Merges strategic merge patches into one (MergeStrategicMergeMapPatchUsingLookupPatchMeta: nulls
 * and parallel lists are kept). As in Kubernetes, this matches applying them in turn for maps and
 * scalars, but not always for merging lists: `$patch` elements of a list are dropped and the
 * merged list's order can differ.
 */
export function mergeStrategicMergePatches(typeName: string | undefined, patches: unknown[], options: CreatePatchOptions = {}): JMap {
  const schema = rootLookup(typeName, options.getType ?? schemaGetType);
  let merged: JMap = {};
  for (const p of patches) merged = mergeMap(merged, asDocument(p), schema, CLIENT);
  return merged;
}

// ---- schema helpers for the API server ----

/**
 * The strategic-merge metadata of the field at a JSON path of a type ('spec', 'containers' from
 * io.k8s.api.core.v1.Pod; list elements are stepped through): patchStrategy and patchMergeKey,
 * or undefined when there is no such field.
 */
export function patchMetaOf(typeName: string, path: string[], getType: TypeResolver = schemaGetType): PatchMeta | undefined {
  let decl = getType(typeName);
  let meta: PatchMeta | undefined;
  for (const p of path) {
    if (!decl) return undefined;
    const f = jsonFields(decl).get(p);
    if (!f) return undefined;
    meta = { strategies: (f.patchStrategy ?? '').split(','), mergeKey: f.patchMergeKey ?? '' };
    let ref: TypeRef = f.type;
    while (ref.kind === 'array' || ref.kind === 'map') ref = ref.kind === 'array' ? ref.items : ref.values;
    decl = ref.kind === 'object' ? getType(ref.name) : undefined;
  }
  return meta;
}

/** The patchMergeKey of the list field at path ('' when it merges as a set or has none; undefined when no such field). */
export function mergeKeyOf(typeName: string, path: string[], getType: TypeResolver = schemaGetType): string | undefined {
  return patchMetaOf(typeName, path, getType)?.mergeKey;
}

/** The patch strategy of the field at path ('merge', 'replace', 'retainKeys', 'merge,retainKeys' or ''). */
export function patchStrategyOf(typeName: string, path: string[], getType: TypeResolver = schemaGetType): string | undefined {
  return patchMetaOf(typeName, path, getType)?.strategies.join(',');
}
