// JSON patch (RFC 6902, application/json-patch+json) as the Kubernetes API server applies it.
//
// kube-apiserver decodes the patch twice and applies it with evanphx/json-patch v4
// (k8s.io/apiserver/pkg/endpoints/handlers/patch.go):
// 1. unless fieldValidation=Ignore, a strict decode into []{op, path, from string; value any}:
//    a value of the wrong JSON type is a 400 "error decoding patch: json: cannot unmarshal ...",
//    and fields other than those four are reported as `json patch unknown field "[i].x"`
//    (warnings for Warn, an error for Strict: see jsonPatchStrictErrors);
// 2. the library's own decode into a list of operations (400 on failure);
// 3. more than 10000 operations: 413;
// 4. the operations are applied in order to a copy of the object; the first failing operation
//    (including a failed test) fails the whole patch with 422 and the generic message
//    "the server rejected our request due to an error in our request": nothing is changed.
//
// The library is laxer than the RFC in ways clients can see, and this module keeps them:
// - replace of a missing object member adds it (RFC: error); replace of a missing array index fails;
// - a missing `value` is null (add, replace); `test` of a missing member passes when value is
//   absent or null;
// - copy from a missing object member copies null;
// - negative array indices count from the end (-1 is the last element; for add, -1 appends);
//   indices are parsed as Go's strconv.Atoi does ("+1" and "01" are 1);
// - add (and remove) of the whole document ("" path) fails; replace and test of "" work;
// - a path's first segment is ignored ("a/b" is "/b"), as the library splits on "/" and skips it;
// - the total size of values copied by copy operations is capped at 3 MiB (the generic API
//   server's JSONPatchMaxCopyBytes default; not a command-line flag);
// - `test` compares structurally, but an array element that is null makes the library
//   dereference a nil node: kube-apiserver panics (plain-text 500), and so do replace/test of ""
//   without a value.
import { stringifyJSON } from '../codec/int64.js';
import { PatchError, cloneJSON, getOwn, hasOwn, isMap, setOwn } from './errors.js';
import { goJSONKind, goQuote } from '../machinery/gostrings.js';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

/** kube-apiserver's maxJSONPatchOperations. */
export const MAX_JSON_PATCH_OPERATIONS = 10000;
/** kube-apiserver's default JSONPatchMaxCopyBytes (evanphx AccumulatedCopySizeLimit). */
export const JSON_PATCH_MAX_COPY_BYTES = 3 * 1024 * 1024;

export interface JSONPatchOptions {
  /** the request's fieldValidation; decides how the patch is decoded (default Warn, as the API server's default) */
  fieldValidation?: FieldValidation;
  /** default MAX_JSON_PATCH_OPERATIONS */
  maxOperations?: number;
  /** default JSON_PATCH_MAX_COPY_BYTES; 0 for no limit */
  maxCopyBytes?: number;
}

/** One decoded operation: the members of its JSON object, any of which may be absent. */
type Operation = Record<string, unknown> | null;

/**
 * The handler's strict decode (fieldValidation Warn or Strict) into []handlers.jsonPatchOp:
 * the first value of the wrong type, as Go words it, or undefined.
 */
function strictDecodeError(patch: unknown): string | undefined {
  if (patch === null) return undefined;
  if (!Array.isArray(patch)) return `json: cannot unmarshal ${goJSONKind(patch)} into Go value of type []handlers.jsonPatchOp`;
  for (const op of patch) {
    if (op === null) continue;
    if (!isMap(op)) return `json: cannot unmarshal ${goJSONKind(op)} into Go value of type handlers.jsonPatchOp`;
    for (const [k, v] of Object.entries(op)) {
      if ((k === 'op' || k === 'path' || k === 'from') && v !== null && typeof v !== 'string') {
        return `json: cannot unmarshal ${goJSONKind(v)} into Go struct field jsonPatchOp.${k} of type string`;
      }
    }
  }
  return undefined;
}

/**
 * The strict decoding errors Kubernetes reports for a JSON patch (fieldValidation Warn: one
 * Warning header each; Strict: a 422 listing them): `json patch unknown field "[0].foo"`.
 */
export function jsonPatchStrictErrors(patch: unknown): string[] {
  const out: string[] = [];
  if (!Array.isArray(patch)) return out;
  patch.forEach((op, i) => {
    if (!isMap(op)) return;
    for (const k of Object.keys(op)) {
      if (k !== 'op' && k !== 'path' && k !== 'from' && k !== 'value') out.push(`json patch unknown field ${goQuote(`[${i}].${k}`)}`);
    }
  });
  return out;
}

/** evanphx DecodePatch: the patch must be a JSON array (or null) of objects (or nulls). */
function decodePatch(patch: unknown): Operation[] {
  if (patch === null) return [];
  if (!Array.isArray(patch)) throw PatchError.badRequest(`json: cannot unmarshal ${goJSONKind(patch)} into Go value of type jsonpatch.Patch`);
  for (const op of patch) {
    if (op !== null && !isMap(op)) throw PatchError.badRequest(`json: cannot unmarshal ${goJSONKind(op)} into Go value of type jsonpatch.Operation`);
  }
  return patch as Operation[];
}

/**
 * Applies an RFC 6902 JSON patch to a JSON document as kube-apiserver does, returning a new
 * document (the input is not modified). Throws PatchError: 400 for a patch that does not decode,
 * 413 for too many operations, 422 (generic message; the library's words in `detail`) for an
 * operation that does not apply.
 */
export function applyJSONPatch(doc: unknown, patch: unknown, options: JSONPatchOptions = {}): unknown {
  const fv = options.fieldValidation ?? 'Warn';
  if (fv !== 'Ignore') {
    const err = strictDecodeError(patch);
    if (err !== undefined) throw PatchError.badRequest(`error decoding patch: ${err}`);
  }
  const ops = decodePatch(patch);
  const max = options.maxOperations ?? MAX_JSON_PATCH_OPERATIONS;
  if (ops.length > max) {
    throw PatchError.tooLarge(`The allowed maximum operations in a JSON patch is ${max}, got ${ops.length}`);
  }
  return applyOperations(doc, ops, options.maxCopyBytes ?? JSON_PATCH_MAX_COPY_BYTES);
}

// ---- the library's behaviour ----

class OpError extends Error {}

function fail(message: string): never {
  throw new OpError(message);
}

const MISSING = 'missing value';
const INVALID_INDEX = 'invalid index referenced';

type Container = Record<string, unknown> | unknown[];

/** RFC 6901 unescaping: ~1 then ~0. */
function decodeToken(t: string): string {
  return t.replace(/~1|~0/g, (m) => (m === '~1' ? '/' : '~'));
}

/** Go's strconv.Atoi on a 64-bit platform; throws OpError with the NumError text. */
function atoi(s: string): bigint {
  if (!/^[+-]?[0-9]+$/.test(s)) fail(`strconv.Atoi: parsing ${goQuote(s)}: invalid syntax`);
  const n = BigInt(s);
  if (n > 2n ** 63n - 1n || n < -(2n ** 63n)) fail(`strconv.Atoi: parsing ${goQuote(s)}: value out of range`);
  return n;
}

function invalidIndex(idx: bigint): never {
  fail(`Unable to access invalid index: ${idx}: ${INVALID_INDEX}`);
}

/** The element or member at key; undefined for an absent member; throws for a bad array index. */
function get(con: Container, key: string): unknown {
  if (!Array.isArray(con)) return getOwn(con, key);
  let idx = atoi(key);
  const len = BigInt(con.length);
  if (idx < 0n) {
    if (idx < -len) invalidIndex(idx);
    idx += len;
  }
  if (idx >= len) invalidIndex(idx);
  return con[Number(idx)];
}

/** replace's set: for arrays, key is known to be a valid index (get succeeded). */
function set(con: Container, key: string, val: unknown): void {
  if (!Array.isArray(con)) {
    setOwn(con, key, val);
    return;
  }
  let idx = atoi(key);
  if (idx < 0n) idx += BigInt(con.length);
  con[Number(idx)] = val;
}

function add(con: Container, key: string, val: unknown): void {
  if (!Array.isArray(con)) {
    setOwn(con, key, val);
    return;
  }
  if (key === '-') {
    con.push(val);
    return;
  }
  let idx: bigint;
  try {
    idx = atoi(key);
  } catch (e) {
    fail(`value was not a proper array index: '${key}': ${(e as Error).message}`);
  }
  const sz = BigInt(con.length + 1);
  if (idx >= sz) invalidIndex(idx);
  if (idx < 0n) {
    if (idx < -sz) invalidIndex(idx);
    idx += sz;
  }
  con.splice(Number(idx), 0, val);
}

function remove(con: Container, key: string): void {
  if (!Array.isArray(con)) {
    if (!hasOwn(con, key)) fail(`Unable to remove nonexistent key: ${key}: ${MISSING}`);
    delete con[key];
    return;
  }
  let idx = atoi(key);
  const len = BigInt(con.length);
  if (idx >= len) invalidIndex(idx);
  if (idx < 0n) {
    if (idx < -len) invalidIndex(idx);
    idx += len;
  }
  con.splice(Number(idx), 1);
}

/** The container holding the last token of path, and that token; undefined when the path does not lead anywhere. */
function findObject(root: Container, path: string): { con: Container; key: string } | undefined {
  const split = path.split('/');
  if (split.length < 2) return undefined;
  let cur: Container = root;
  for (const part of split.slice(1, -1)) {
    let next: unknown;
    try {
      next = get(cur, decodeToken(part));
    } catch {
      return undefined;
    }
    if (next === null || next === undefined || typeof next !== 'object') return undefined;
    cur = next as Container;
  }
  return { con: cur, key: decodeToken(split[split.length - 1]!) };
}

/** Operation.Path(): the path string, or throws with the library's wording. */
function opString(op: Operation, member: 'path' | 'from'): string {
  const v = op ? getOwn(op, member) : undefined;
  if (v === undefined || v === null) {
    fail(member === 'path' ? `operation missing path field: ${MISSING}` : `operation, missing from field: ${MISSING}`);
  }
  if (typeof v !== 'string') fail(`json: cannot unmarshal ${goJSONKind(v)} into Go value of type string`);
  return v;
}

function tryOpString(op: Operation, member: 'path' | 'from'): { ok: true; v: string } | { ok: false; err: string } {
  try {
    return { ok: true, v: opString(op, member) };
  } catch (e) {
    return { ok: false, err: (e as Error).message };
  }
}

/** Operation.Kind(): the op string, or "unknown". */
function kindOf(op: Operation): string {
  const v = op ? getOwn(op, 'op') : undefined;
  return typeof v === 'string' ? v : 'unknown';
}

/** The operation's value: absent (undefined) or present (possibly null). */
function valueOf(op: Operation): unknown {
  return op ? getOwn(op, 'value') : undefined;
}

/** The size json.Marshal gives a value (Go escapes <, >, & and U+2028/U+2029 in strings). */
export function goJSONSize(v: unknown): number {
  if (v === null || v === undefined) return 0;
  const s = stringifyJSON(v);
  let n = Buffer.byteLength(s, 'utf8');
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x3c || c === 0x3e || c === 0x26) n += 5;
    else if (c === 0x2028 || c === 0x2029) n += 3;
  }
  return n;
}

function applyOperations(doc: unknown, ops: Operation[], copyLimit: number): unknown {
  if (doc === null || typeof doc !== 'object') {
    throw PatchError.internal(`json: cannot unmarshal ${goJSONKind(doc)} into Go value of type jsonpatch.partialDoc`);
  }
  let root = cloneJSON(doc) as Container;
  let copied = 0;
  try {
    for (const op of ops) {
      const kind = kindOf(op);
      switch (kind) {
        case 'add':
          opAdd(root, op);
          break;
        case 'remove':
          opRemove(root, op);
          break;
        case 'replace':
          root = opReplace(root, op);
          break;
        case 'move':
          opMove(root, op);
          break;
        case 'test':
          opTest(root, op);
          break;
        case 'copy':
          copied = opCopy(root, op, copied, copyLimit);
          break;
        default:
          fail(`Unexpected kind: ${kind}`);
      }
    }
  } catch (e) {
    if (e instanceof OpError) throw PatchError.unprocessable(e.message);
    throw e;
  }
  return root;
}

/** The value an operation inserts: a copy of `value`, null when absent. */
function insertValue(op: Operation): unknown {
  const v = valueOf(op);
  return v === undefined ? null : cloneJSON(v);
}

function opAdd(root: Container, op: Operation): void {
  const p = tryOpString(op, 'path');
  if (!p.ok) fail(`add operation failed to decode path: ${MISSING}`);
  const path = p.v;
  const found = findObject(root, path);
  if (!found) fail(`add operation does not apply: doc is missing path: "${path}": ${MISSING}`);
  try {
    add(found.con, found.key, insertValue(op));
  } catch (e) {
    fail(`error in add for path: '${path}': ${(e as Error).message}`);
  }
}

function opRemove(root: Container, op: Operation): void {
  const p = tryOpString(op, 'path');
  if (!p.ok) fail(`remove operation failed to decode path: ${MISSING}`);
  const path = p.v;
  const found = findObject(root, path);
  if (!found) fail(`remove operation does not apply: doc is missing path: "${path}": ${MISSING}`);
  try {
    remove(found.con, found.key);
  } catch (e) {
    fail(`error in remove for path: '${path}': ${(e as Error).message}`);
  }
}

function opReplace(root: Container, op: Operation): Container {
  const p = tryOpString(op, 'path');
  if (!p.ok) fail(`replace operation failed to decode path: ${p.err}`);
  const path = p.v;
  if (path === '') {
    const v = valueOf(op);
    if (v === undefined) throw PatchError.panic('runtime error: invalid memory address or nil pointer dereference', 'the replace operation of the whole document (path "") has no value');
    if (v === null || typeof v !== 'object') fail('replace operation value must be object or array: %!w(<nil>)');
    return cloneJSON(v) as Container;
  }
  const found = findObject(root, path);
  if (!found) fail(`replace operation does not apply: doc is missing path: ${path}: ${MISSING}`);
  try {
    get(found.con, found.key);
  } catch {
    fail(`replace operation does not apply: doc is missing key: ${path}: ${MISSING}`);
  }
  set(found.con, found.key, insertValue(op));
  return root;
}

function opMove(root: Container, op: Operation): void {
  const f = tryOpString(op, 'from');
  if (!f.ok) fail(`move operation failed to decode from: ${f.err}`);
  const from = f.v;
  let found = findObject(root, from);
  if (!found) fail(`move operation does not apply: doc is missing from path: ${from}: ${MISSING}`);
  let val: unknown;
  try {
    val = get(found.con, found.key);
    remove(found.con, found.key);
  } catch (e) {
    fail(`error in move for path: '${found.key}': ${(e as Error).message}`);
  }
  const p = tryOpString(op, 'path');
  if (!p.ok) fail(`move operation failed to decode path: ${p.err}`);
  const path = p.v;
  found = findObject(root, path);
  if (!found) fail(`move operation does not apply: doc is missing destination path: ${path}: ${MISSING}`);
  try {
    add(found.con, found.key, val === undefined ? null : val);
  } catch (e) {
    fail(`error in move for path: '${path}': ${(e as Error).message}`);
  }
}

function opTest(root: Container, op: Operation): void {
  const p = tryOpString(op, 'path');
  if (!p.ok) fail(`test operation failed to decode path: ${p.err}`);
  const path = p.v;
  const expected = valueOf(op);
  if (path === '') {
    if (expected === undefined) throw PatchError.panic('runtime error: invalid memory address or nil pointer dereference', 'the test operation of the whole document (path "") has no value');
    if (expected !== null && lazyEqual(root, expected)) return;
    fail(`testing value ${path} failed: test failed`);
  }
  const found = findObject(root, path);
  if (!found) fail(`test operation does not apply: is missing path: ${path}: ${MISSING}`);
  let val: unknown;
  try {
    val = get(found.con, found.key);
  } catch (e) {
    fail(`error in test for path: '${path}': ${(e as Error).message}`);
  }
  if (val === undefined || val === null) {
    if (expected === undefined || expected === null) return;
    fail(`testing value ${path} failed: test failed`);
  }
  if (expected === undefined || expected === null || !lazyEqual(val, expected)) fail(`testing value ${path} failed: test failed`);
}

/**
 * The library's structural equality of two non-null values: object members are compared by
 * key, arrays element by element; a null array element makes Go dereference a nil node.
 * (Numbers compare by value here; the library compares their JSON text, so 1 and 1.0 differ there.)
 */
function lazyEqual(n: unknown, o: unknown): boolean {
  if (isMap(n)) {
    if (!isMap(o)) return false;
    const keys = Object.keys(n);
    if (keys.length !== Object.keys(o).length) return false;
    for (const k of keys) {
      if (!hasOwn(o, k)) return false;
      const v = n[k];
      const ov = o[k];
      if ((v === null) !== (ov === null)) return false;
      if (v === null) continue;
      if (!lazyEqual(v, ov)) return false;
    }
    return true;
  }
  if (Array.isArray(n)) {
    if (!Array.isArray(o) || n.length !== o.length) return false;
    for (let i = 0; i < n.length; i++) {
      if (n[i] === null || o[i] === null) throw PatchError.panic('runtime error: invalid memory address or nil pointer dereference', 'a test operation compares lists that hold null');
      if (!lazyEqual(n[i], o[i])) return false;
    }
    return true;
  }
  return o !== null && typeof o !== 'object' && n === o;
}

function opCopy(root: Container, op: Operation, copied: number, limit: number): number {
  const f = tryOpString(op, 'from');
  if (!f.ok) fail(`copy operation failed to decode from: ${f.err}`);
  const from = f.v;
  let found = findObject(root, from);
  if (!found) fail(`copy operation does not apply: doc is missing from path: ${from}: ${MISSING}`);
  let val: unknown;
  try {
    val = get(found.con, found.key);
  } catch (e) {
    fail(`error in copy for from: '${from}': ${(e as Error).message}`);
  }
  const p = tryOpString(op, 'path');
  if (!p.ok) fail(`copy operation failed to decode path: ${MISSING}`);
  const path = p.v;
  found = findObject(root, path);
  if (!found) fail(`copy operation does not apply: doc is missing destination path: ${path}: ${MISSING}`);
  const size = goJSONSize(val);
  copied += size;
  if (limit > 0 && copied > limit) {
    fail(`Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${limit}`);
  }
  try {
    add(found.con, found.key, val === undefined || val === null ? null : cloneJSON(val));
  } catch (e) {
    fail(`error while adding value during copy: ${(e as Error).message}`);
  }
  return copied;
}

// ---- pointers ----

/** Escapes one reference token for an RFC 6901 pointer (~ to ~0, / to ~1). */
export function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Builds an RFC 6901 pointer from reference tokens: ['metadata', 'labels', 'a/b'] -> /metadata/labels/a~1b. */
export function jsonPointer(tokens: (string | number)[]): string {
  return tokens.map((t) => '/' + escapePointerToken(String(t))).join('');
}
