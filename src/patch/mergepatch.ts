// JSON merge patch (RFC 7386, application/merge-patch+json) as the Kubernetes API server applies
// it, and the merge patches kubectl computes (evanphx/json-patch v4 merge.go and
// k8s.io/apimachinery/pkg/util/jsonmergepatch).
//
// The API server (k8s.io/apiserver/pkg/endpoints/handlers/patch.go) first decodes the patch into
// a map unless fieldValidation=Ignore: a patch that is not a JSON object (nor null) is a 400
// "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}".
// Then jsonpatch.MergePatch:
// - objects merge recursively, null deletes a member, any other value replaces;
// - a null patch, or a string/number/bool patch, is 400 "Invalid JSON Patch";
// - an array patch (reachable with fieldValidation=Ignore) replaces the document;
// - nulls are pruned from objects the patch adds where there was nothing (or a non-object)
//   before, also inside arrays' objects; an array that replaces an object keeps its nulls.
// `rfc7386: true` gives the RFC's algorithm exactly instead (any patch value is accepted, a
// non-object patch replaces the target, and values that replace are not pruned inside arrays).
import { PatchError, cloneJSON, deepEqualJSON, hasOwn, isMap, setOwn } from './errors.js';
import type { FieldValidation } from './jsonpatch.js';
import { goJSONKind } from '../machinery/gostrings.js';

type JMap = Record<string, unknown>;

export interface MergePatchOptions {
  /** the request's fieldValidation (default Warn, the API server's default); decides how the patch is decoded */
  fieldValidation?: FieldValidation;
  /** apply RFC 7386 literally rather than as Kubernetes does */
  rfc7386?: boolean;
}

/**
 * Applies a JSON merge patch to a document, returning a new document (inputs are not modified).
 * Throws PatchError 400 for a patch Kubernetes refuses to decode.
 */
export function applyMergePatch(doc: unknown, patch: unknown, options: MergePatchOptions = {}): unknown {
  if (options.rfc7386) return rfcMergePatch(cloneJSON(doc), patch);
  if ((options.fieldValidation ?? 'Warn') !== 'Ignore' && patch !== null && !isMap(patch)) {
    throw PatchError.badRequest(`error decoding patch: json: cannot unmarshal ${goJSONKind(patch)} into Go value of type map[string]interface {}`);
  }
  return mergePatch(doc, patch);
}

/** RFC 7386 section 2, literally. */
function rfcMergePatch(target: unknown, patch: unknown): unknown {
  if (!isMap(patch)) return cloneJSON(patch);
  const t: JMap = isMap(target) ? target : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete t[k];
    else setOwn(t, k, rfcMergePatch(hasOwn(t, k) ? t[k] : undefined, v));
  }
  return t;
}

/** evanphx MergePatch (mergeMerge false) on decoded values. */
function mergePatch(doc: unknown, patch: unknown): unknown {
  if (doc === null) throw PatchError.internal('Invalid JSON Document');
  if (patch === null) throw PatchError.badRequest('Invalid JSON Patch');
  if (isMap(patch)) {
    const p = cloneJSON(patch);
    if (!isMap(doc)) return pruneDocNulls(p);
    const d = cloneJSON(doc);
    mergeDocs(d, p, false);
    return d;
  }
  if (Array.isArray(patch)) return pruneAryNulls(cloneJSON(patch));
  throw PatchError.badRequest('Invalid JSON Patch');
}

function mergeDocs(doc: JMap, patch: JMap, mergeMerge: boolean): void {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) {
      if (mergeMerge) setOwn(doc, k, null);
      else delete doc[k];
      continue;
    }
    const cur = hasOwn(doc, k) ? doc[k] : undefined;
    if (cur === undefined || cur === null) {
      if (!mergeMerge) pruneNulls(v);
      setOwn(doc, k, v);
    } else {
      setOwn(doc, k, merge(cur, v, mergeMerge));
    }
  }
}

function merge(cur: unknown, patch: unknown, mergeMerge: boolean): unknown {
  if (!isMap(cur)) {
    pruneNulls(patch);
    return patch;
  }
  if (!isMap(patch)) return patch;
  mergeDocs(cur, patch, mergeMerge);
  return cur;
}

function pruneNulls(n: unknown): void {
  if (isMap(n)) pruneDocNulls(n);
  else if (Array.isArray(n)) pruneAryNulls(n);
}

function pruneDocNulls(doc: JMap): JMap {
  for (const k of Object.keys(doc)) {
    if (doc[k] === null) delete doc[k];
    else pruneNulls(doc[k]);
  }
  return doc;
}

function pruneAryNulls(ary: unknown[]): unknown[] {
  for (const v of ary) if (v !== null) pruneNulls(v);
  return ary;
}

/**
 * Merges two merge patches into one with the effect of applying both in turn (evanphx
 * MergeMergePatches: nulls of either are kept).
 */
export function mergeMergePatches(patch1: unknown, patch2: unknown): unknown {
  if (patch1 === null) throw PatchError.internal('Invalid JSON Document');
  if (patch2 === null || (!isMap(patch2) && !Array.isArray(patch2))) throw PatchError.badRequest('Invalid JSON Patch');
  if (Array.isArray(patch2)) return pruneAryNulls(cloneJSON(patch2));
  const p = cloneJSON(patch2);
  if (!isMap(patch1)) return p;
  const d = cloneJSON(patch1);
  mergeDocs(d, p, true);
  return d;
}

// ---- computing merge patches ----

/**
 * The merge patch that turns original into modified (evanphx CreateMergePatch): changed and added
 * members with their new values, removed members as null, lists compared whole. Two arrays of
 * equal length give an array of per-element patches.
 */
export function createMergePatch(original: unknown, modified: unknown): unknown {
  const oa = Array.isArray(original);
  const ma = Array.isArray(modified);
  if (oa && ma) {
    const o = original as unknown[];
    const m = modified as unknown[];
    if (o.length !== m.length) throw PatchError.internal('Invalid JSON Document');
    return o.map((x, i) => createObjectMergePatch(x, m[i]));
  }
  if (!oa && !ma) return createObjectMergePatch(original, modified);
  throw PatchError.internal('Mismatched JSON Documents');
}

function createObjectMergePatch(original: unknown, modified: unknown): JMap {
  if (!isMap(original) || !isMap(modified)) throw PatchError.internal('Invalid JSON Document');
  return getDiff(original, modified);
}

/** The Go type of a decoded value as evanphx's json.Unmarshal gives it (all numbers float64). */
function kindOf(v: unknown): string {
  if (v === null || v === undefined) return 'nil';
  if (Array.isArray(v)) return 'slice';
  return typeof v === 'object' ? 'map' : typeof v;
}

function getDiff(a: JMap, b: JMap): JMap {
  const into: JMap = {};
  for (const [key, bv] of Object.entries(b)) {
    if (!hasOwn(a, key)) {
      setOwn(into, key, bv);
      continue;
    }
    const av = a[key];
    if (kindOf(av) !== kindOf(bv)) {
      setOwn(into, key, bv);
      continue;
    }
    if (isMap(av)) {
      const dst = getDiff(av, bv as JMap);
      if (Object.keys(dst).length > 0) setOwn(into, key, dst);
    } else if (av !== null && !deepEqualJSON(av, bv)) {
      setOwn(into, key, bv);
    }
  }
  for (const key of Object.keys(a)) if (!hasOwn(b, key)) setOwn(into, key, null);
  return into;
}

/** A check on a computed patch (mergepatch.PreconditionFunc). */
export type MergePreconditionFunc = (patch: Record<string, unknown>) => boolean;

/** keepOrDeleteNullInObj: only the nulls (keepNull) or everything but them; empty maps are values. */
function keepOrDeleteNull(m: JMap, keepNull: boolean): JMap {
  const out: JMap = {};
  for (const [key, val] of Object.entries(m)) {
    if (keepNull && val === null) {
      setOwn(out, key, null);
    } else if (val !== null) {
      if (isMap(val)) {
        if (Object.keys(val).length === 0) {
          if (!keepNull) setOwn(out, key, val);
          continue;
        }
        const sub = keepOrDeleteNull(val, keepNull);
        if (Object.keys(sub).length !== 0) setOwn(out, key, sub);
      } else if (!keepNull) {
        setOwn(out, key, val);
      }
    }
  }
  return out;
}

/** mergepatch.HasConflicts: both change a key to different values. */
export function hasConflicts(left: unknown, right: unknown): boolean {
  if (isMap(left)) {
    if (!isMap(right)) return true;
    for (const [k, lv] of Object.entries(left)) {
      if (hasOwn(right, k) && hasConflicts(lv, right[k])) return true;
    }
    return false;
  }
  if (Array.isArray(left)) {
    if (!Array.isArray(right)) return true;
    if (left.length !== right.length) return true;
    for (let i = 0; i < left.length; i++) if (hasConflicts(left[i], right[i])) return true;
    return false;
  }
  return !deepEqualJSON(left, right);
}

/**
 * kubectl apply's patch for types without strategic merge (custom resources):
 * jsonmergepatch.CreateThreeWayJSONMergePatch. The additions and changes from current to
 * modified, plus the deletions from original (the last applied configuration) to modified; a
 * Conflict PatchError when both touch one key. Inputs are not modified.
 */
export function createThreeWayJSONMergePatch(
  original: unknown,
  modified: unknown,
  current: unknown,
  preconditions: readonly MergePreconditionFunc[] = [],
): JMap {
  const o = original ?? {};
  const m = modified ?? {};
  const c = current ?? {};
  const addAndChange = keepOrDeleteNull(createObjectMergePatch(c, m), false);
  const deletions = keepOrDeleteNull(createObjectMergePatch(o, m), true);
  if (hasConflicts(addAndChange, deletions)) throw PatchError.conflict(addAndChange, deletions);
  const patch = mergeMergePatchesKeepNulls(deletions, addAndChange);
  for (const fn of preconditions) if (!fn(patch)) throw PatchError.preconditionFailed(patch);
  return patch;
}

/** jsonpatch.MergePatch(deletePatch, addAndChangePatch): the deletion patch is the document here. */
function mergeMergePatchesKeepNulls(doc: JMap, patch: JMap): JMap {
  const d = cloneJSON(doc);
  mergeDocs(d, cloneJSON(patch), false);
  return d;
}
