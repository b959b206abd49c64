// Errors of the patch algorithms, and the small pieces of Go formatting their messages need.
//
// A PatchError is a StatusError: it carries the HTTP status code, the Status reason and the
// Status message the Kubernetes API server sends for the same failure, so the API server can
// throw it as it is. Where Kubernetes hides the algorithm's own words behind a generic message
// (a JSON patch that does not apply is answered "the server rejected our request due to an
// error in our request"), the algorithm's words are kept in `detail` for logs and tests.
//
// Which failure gets which status (k8s.io/apiserver/pkg/endpoints/handlers/patch.go):
// - a patch body the handler cannot decode into the shape it needs: 400 BadRequest
//   ("error decoding patch: json: cannot unmarshal ...", "Invalid JSON Patch")
// - a JSON patch with more than 10000 operations: 413 RequestEntityTooLarge
// - a JSON patch that does not apply (missing path, failed test, bad index, unknown op,
//   copy size limit): 422 Invalid with the generic message, the library's text is dropped
// - a strategic merge patch with a malformed directive (bad $deleteFromPrimitiveList,
//   $retainKeys or $setElementOrder format): 400 BadRequest with the library's text
// - a strategic merge patch with a list of lists, or content outside its $retainKeys: 422
//   Invalid with the generic message
// - every other strategic merge failure (missing merge key, unknown $patch value, unknown
//   field, mismatched $setElementOrder...): the library's error unwrapped, which the server
//   answers as 500 with no reason and the library's text as message
// The last kind (and input on which Kubernetes' code panics) are Kubernetes' classification, which
// the library keeps (kubectl's client-side patches print these texts). The API server does not
// answer them with 500: they are the client's errors (asRequestError).
import { StatusError, type StatusDetails } from '../machinery/errors.js';
import { goFloat, goStringCompare } from '../machinery/gostrings.js';
import { yaml } from '../codec/yaml-lazy.js';

/** A YAML rendering like sigs.k8s.io/yaml's (sorted keys, sequences not indented). */
function toYAML(v: unknown): string {
  return yaml().stringify(v, { sortMapEntries: true, indentSeq: false });
}

/** The message Kubernetes sends with a 422 built by NewGenericServerResponse. */
export const GENERIC_422_MESSAGE = 'the server rejected our request due to an error in our request';

/** The plain-text body kube-apiserver sends when a handler panics. */
export const PANIC_MESSAGE = 'This request caused apiserver to panic. Look in the logs for details.';

export type PatchErrorType =
  | 'BadRequest'
  | 'Invalid'
  | 'RequestEntityTooLarge'
  | 'Internal'
  | 'Conflict'
  | 'PreconditionFailed'
  /** Kubernetes' code panics on this input: the API server answers a plain-text 500 */
  | 'Panic';

export class PatchError extends StatusError {
  constructor(
    code: number,
    reason: string,
    message: string,
    /** the algorithm's own words (equal to message unless Kubernetes replaces them) */
    readonly detail: string,
    /** what went wrong, for callers that branch on it */
    readonly type: PatchErrorType,
    details?: StatusDetails,
    /** for a Panic: what in the patch or the object Kubernetes' code fails on, in words a person can act on */
    readonly explanation?: string,
  ) {
    super(code, reason, message, details);
    this.name = 'PatchError';
  }

  /** 400 BadRequest, the message as given. */
  static badRequest(message: string): PatchError {
    return new PatchError(400, 'BadRequest', message, message, 'BadRequest');
  }

  /** 422 Invalid with Kubernetes' generic message (NewGenericServerResponse(422, ...)); the text is kept as detail. */
  static unprocessable(detail: string): PatchError {
    return new PatchError(422, 'Invalid', GENERIC_422_MESSAGE, detail, 'Invalid', {});
  }

  /** 413 RequestEntityTooLarge. */
  static tooLarge(message: string): PatchError {
    return new PatchError(413, 'RequestEntityTooLarge', `Request entity too large: ${message}`, message, 'RequestEntityTooLarge');
  }

  /** A plain Go error reaching the API server's error writer: 500, no reason, the error text as message. */
  static internal(message: string): PatchError {
    return new PatchError(500, '', message, message, 'Internal');
  }

  /**
   * Input on which Kubernetes' Go code panics; kube-apiserver's panic filter answers it with a
   * plain-text (not Status) 500 carrying this message. `detail` holds the Go runtime error.
   */
  static panic(goRuntimeError: string, explanation: string): PatchError {
    return new PatchError(500, 'InternalError', PANIC_MESSAGE, goRuntimeError, 'Panic', undefined, explanation);
  }

  /** mergepatch.ErrConflict (client side: a three-way patch that conflicts with the live object), the two maps in YAML. */
  static conflict(patch: unknown, changed: unknown): PatchError {
    const m = `patch:\n${toYAML(patch)}\nconflicts with changes made from original to current:\n${toYAML(changed)}\n`;
    return new PatchError(409, 'Conflict', m, m, 'Conflict');
  }

  /** mergepatch.ErrPreconditionFailed (client side). */
  static preconditionFailed(patch: unknown): PatchError {
    const m = `precondition failed for: ${goSprint(patch)}`;
    return new PatchError(422, 'Invalid', m, m, 'PreconditionFailed');
  }
}

/**
 * A patch failure as the API server answers it. Kubernetes answers the failures its patch code
 * does not classify (a plain Go error: 500 with no reason) and the input it panics on (a 500 in
 * plain text) as server errors, though the patch document is at fault: its maintainers have
 * been moving such cases to 4xx one by one (kubernetes/kubernetes#54423, #68224, #79210, and
 * #139253 for server-side apply, open). Keelson answers them all with 400 BadRequest: the
 * library's text as message, or for a panic what the patch holds that Kubernetes fails on.
 * Every other error passes unchanged.
 */
export function asRequestError(e: unknown): unknown {
  if (!(e instanceof PatchError) || e.code !== 500) return e;
  if (e.type === 'Panic') return PatchError.badRequest(`the patch cannot be applied: ${e.explanation ?? e.detail}`);
  if (e.type === 'Internal') return PatchError.badRequest(e.message);
  return e;
}

export function isPatchError(e: unknown): e is PatchError {
  return e instanceof PatchError;
}

/** A client-side three-way patch conflicted with changes made to the live object (mergepatch.IsConflict). */
export function isConflict(e: unknown): boolean {
  return e instanceof PatchError && e.type === 'Conflict';
}

/** A computed patch failed one of its preconditions (mergepatch.IsPreconditionFailed). */
export function isPreconditionFailed(e: unknown): boolean {
  return e instanceof PatchError && e.type === 'PreconditionFailed';
}

// ---- Go formatting of decoded JSON values (map[string]interface{}, []interface{}, ...) ----

/** A plain JSON object (Go's map[string]interface{}). */
export function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Integers that fit in int64 decode as int64 (Kubernetes decodes with PreserveInts); others as float64. */
function isInt64(n: number): boolean {
  return Number.isInteger(n) && Math.abs(n) < 2 ** 63;
}

/** The Go type of a decoded JSON value, as reflect.TypeOf(v).String() prints it; undefined for nil. */
export function goTypeName(v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  if (Array.isArray(v)) return '[]interface {}';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'number':
      return isInt64(v) ? 'int64' : 'float64';
    case 'bigint':
      return 'int64';
    case 'object':
      return 'map[string]interface {}';
    default:
      return typeof v;
  }
}

function goNumber(n: number): string {
  return isInt64(n) ? BigInt(n).toString() : goFloat(n);
}

/**
 * fmt.Sprintf("%v", v) of a decoded JSON value: maps as `map[k:v ...]` with sorted keys, slices
 * as `[a b]`, nil as `<nil>`. With verb 's', non-string scalars print as Go prints a bad verb.
 */
export function goSprint(v: unknown, verb: 'v' | 's' = 'v', nested = false): string {
  // a nil inside a map or slice prints as <nil> whatever the verb; a nil argument does not
  if (v === null || v === undefined) return verb === 's' && !nested ? '%!s(<nil>)' : '<nil>';
  if (Array.isArray(v)) return `[${v.map((x) => goSprint(x, verb, true)).join(' ')}]`;
  switch (typeof v) {
    case 'string':
      return v;
    case 'boolean':
      return verb === 's' ? `%!s(bool=${v})` : String(v);
    case 'number':
      return verb === 's' ? `%!s(${goTypeName(v)}=${goNumber(v)})` : goNumber(v);
    case 'bigint':
      return verb === 's' ? `%!s(int64=${v})` : String(v);
    case 'object': {
      const o = v as Record<string, unknown>;
      const keys = Object.keys(o).sort(goStringCompare);
      return `map[${keys.map((k) => `${k}:${goSprint(o[k], verb, true)}`).join(' ')}]`;
    }
    default:
      return String(v);
  }
}

/** A deep copy of a JSON value. */
export function cloneJSON<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(cloneJSON) as T;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) setOwn(out, k, cloneJSON(x));
  return out as T;
}

/** obj[key] = value, also for the key `__proto__` (which JSON.parse makes an own property). */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}

/** Own property lookup: undefined when absent (never an inherited member such as `constructor`). */
export function getOwn(obj: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}

export function hasOwn(obj: Record<string, unknown>, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

/** Structural equality of JSON values (reflect.DeepEqual of decoded JSON; numbers by value). */
export function deepEqualJSON(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqualJSON(a[i], bb[i])) return false;
    return true;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao);
  if (ak.length !== Object.keys(bo).length) return false;
  for (const k of ak) {
    if (!Object.prototype.hasOwnProperty.call(bo, k)) return false;
    if (!deepEqualJSON(ao[k], bo[k])) return false;
  }
  return true;
}
