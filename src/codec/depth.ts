// Bounds on how deeply a request body may nest, checked before anything that recurses reads it.
//
// Kubernetes' decoders (Go's encoding/json and go-yaml) refuse documents nested more than 10,000
// levels deep ("exceeded max depth"). Keelson cannot take that many:
// - its own passes over a decoded body (the strict-field scan, normalization, the patch
//   algorithms, validation) recurse, and run out of stack between 2,000 and 3,000 levels;
// - the yaml library recurses too, runs out of stack near 870 levels, spends seconds on a deep
//   flow collection before it fails, and, when its stack runs out while V8 compiles one of its
//   regular expressions, V8 ends the whole process ("RegExpCompiler Allocation failed"), which
//   no catch can stop.
// - an object stored is also written as YAML when a client asks for YAML, by the same library,
//   whose writer runs out of stack between 600 and 800 levels.
// So a body is refused before any of them sees it: a JSON body (or a CBOR one, or JSON inside a
// Protobuf body) nested more than MAX_JSON_DEPTH levels, a YAML body (and every server-side apply
// body, which is read as YAML) more than MAX_YAML_DEPTH. Both are far beyond any object Kubernetes
// defines (its deepest built-in kinds nest a few dozen levels) or a manifest is likely to hold.
// V8's JSON.parse itself takes any depth, so a JSON object body is parsed first and the
// strict-field scan, which reads it next, counts the depth as it goes (BodyTooDeepError): the
// hot path makes no pass of its own. The text passes below serve the bodies that scan does not
// read first (YAML, patches, fieldValidation=Ignore, DeleteOptions).
//
// Hand-written, because no parser reports a document's depth without building it first (the
// work to avoid). A text too short to nest that deep is not scanned: the common small body
// costs one comparison.

/** the deepest nesting of [ and { a JSON request body may have */
export const MAX_JSON_DEPTH = 400;
/** the deepest flow nesting, and the furthest column a block's content may start at, in a YAML body */
export const MAX_YAML_DEPTH = 200;

/** thrown by a pass over a body's text that found it nested deeper than MAX_JSON_DEPTH (the strict-field scan) */
export class BodyTooDeepError extends Error {
  constructor() {
    super(tooDeepMessage(false));
    this.name = 'BodyTooDeepError';
  }
}

/** the message of a body refused for its depth */
export function tooDeepMessage(yaml: boolean): string {
  return `the request body is nested too deeply: more than ${yaml ? `${MAX_YAML_DEPTH} levels (YAML, and every server-side apply body)` : `${MAX_JSON_DEPTH} levels`}`;
}

/** Whether a decoded value (of a binary body) nests more than `limit` levels of arrays and objects. */
export function valueNestsDeeperThan(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  // iterative: the value may be deeper than the stack
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d + 1 > limit) return true;
    if (Array.isArray(v)) for (const x of v) stack.push([x, d + 1]);
    else if (v instanceof Uint8Array) continue;
    else for (const k in v) stack.push([(v as Record<string, unknown>)[k], d + 1]);
  }
  return false;
}

/** Whether a JSON text nests more than `limit` levels of [ and { (outside strings). */
export function jsonNestsDeeperThan(text: string, limit = MAX_JSON_DEPTH): boolean {
  const n = text.length;
  if (n <= 2 * limit) return false;
  let depth = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // a string: to its closing quote, past escaped characters
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

const SPACE = 0x20;
const TAB = 0x09;
const NL = 0x0a;
const CR = 0x0d;

/**
 * Whether a YAML text may nest more than `limit` levels: its flow collections ([ and {, outside
 * quoted scalars and comments) nest more than `limit` deep, or a line's content starts past
 * column `limit` (after its indentation and its block indicators "- ", "? " and ": "; a block
 * collection's entries start further right than their parent's, so this column bounds the block
 * nesting). Conservative: a text it passes nests at most 2 × limit levels.
 */
export function yamlNestsDeeperThan(text: string, limit = MAX_YAML_DEPTH): boolean {
  const n = text.length;
  if (n <= limit) return false;
  let depth = 0;
  let lineStart = true;
  for (let i = 0; i < n; i++) {
    if (lineStart) {
      lineStart = false;
      // the column where the line's content starts (a blank line has none)
      let col = 0;
      for (;;) {
        const c = text.charCodeAt(i);
        if (c === SPACE || c === TAB) {
          i++;
          col++;
        } else if ((c === 0x2d || c === 0x3f || c === 0x3a) && (text.charCodeAt(i + 1) === SPACE || text.charCodeAt(i + 1) === TAB)) {
          i += 2;
          col += 2;
        } else break;
      }
      if (i >= n) break;
      const first = text.charCodeAt(i);
      if (col > limit && first !== NL && first !== CR) return true;
    }
    const c = text.charCodeAt(i);
    if (c === NL || c === CR) {
      lineStart = true;
      continue;
    }
    const prev = i === 0 ? NL : text.charCodeAt(i - 1);
    const atToken = prev === SPACE || prev === TAB || prev === NL || prev === CR || prev === 0x5b || prev === 0x7b || prev === 0x2c || prev === 0x3a;
    if (c === 0x22 && atToken) {
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x27 && atToken) {
      // single-quoted: '' is a quote inside it
      for (i++; i < n; i++) {
        if (text.charCodeAt(i) === 0x27) {
          if (text.charCodeAt(i + 1) === 0x27) i++;
          else break;
        }
      }
    } else if (c === 0x23 && atToken) {
      // a comment, to the end of its line
      while (i + 1 < n && text.charCodeAt(i + 1) !== NL && text.charCodeAt(i + 1) !== CR) i++;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
