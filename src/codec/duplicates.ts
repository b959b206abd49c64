// Duplicate fields (the same key twice in one JSON or YAML object) for fieldValidation. JSON.parse
// keeps the last value silently, so JSON bodies are scanned separately: a tokenizer that only
// follows strings and brackets (no values are built), run once per write; it costs a few
// microseconds per kilobyte. YAML documents are walked through the `yaml` library's AST.
import type { Node } from 'yaml';
import { yaml } from './yaml-lazy.js';

/**
 * The paths of duplicated keys in a JSON text, as Kubernetes' strict decoder names them
 * (`spec.replicas`, `spec.containers[0].name`). The text must be valid JSON (parse it first).
 */
export function jsonDuplicateFields(text: string): string[] {
  const out: string[] = [];
  // a frame per open container: an object's keys seen so far and its current key, or an array's
  // current index (the number of commas seen at its level)
  type Frame = { obj: true; keys: Set<string> | null; key: string } | { obj: false; index: number };
  const stack: Frame[] = [];
  let expectKey = false;
  const n = text.length;
  let i = 0;
  const path = (last: string): string => {
    let p = '';
    for (let k = 0; k < stack.length - 1; k++) {
      const f = stack[k]!;
      if (f.obj) p += (p ? '.' : '') + f.key;
      else p += `[${f.index}]`;
    }
    return p ? `${p}.${last}` : last;
  };
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      let escaped = false;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d === 0x5c) {
          escaped = true;
          j += 2;
          continue;
        }
        if (d === 0x22) break;
        j++;
      }
      if (expectKey) {
        const top = stack[stack.length - 1] as { obj: true; keys: Set<string> | null; key: string };
        const key = escaped ? (JSON.parse(text.slice(i, j + 1)) as string) : text.slice(i + 1, j);
        if (top.keys === null) top.keys = new Set();
        if (top.keys.has(key)) out.push(path(key));
        else top.keys.add(key);
        top.key = key;
        expectKey = false;
      }
      i = j + 1;
      continue;
    }
    switch (c) {
      case 0x7b /* { */:
        stack.push({ obj: true, keys: null, key: '' });
        expectKey = true;
        break;
      case 0x5b /* [ */:
        stack.push({ obj: false, index: 0 });
        break;
      case 0x7d /* } */:
      case 0x5d /* ] */:
        stack.pop();
        expectKey = false;
        break;
      case 0x2c /* , */: {
        const top = stack[stack.length - 1];
        if (top) {
          if (top.obj) expectKey = true;
          else top.index++;
        }
        break;
      }
    }
    i++;
  }
  return out;
}

/** Kubernetes' messages for duplicated keys in a YAML document (`line 7: key "replicas" already set in map`). */
export function yamlDuplicateFields(text: string): string[] {
  const lc = new (yaml().LineCounter)();
  let doc;
  try {
    doc = yaml().parseDocument(text, { uniqueKeys: false, lineCounter: lc });
  } catch {
    return [];
  }
  const out: string[] = [];
  const walk = (node: Node | null | undefined): void => {
    if (!node) return;
    if (yaml().isMap(node)) {
      const seen = new Set<string>();
      for (const item of node.items) {
        if (!yaml().isPair(item)) continue;
        const k = item.key;
        const name = yaml().isScalar(k) ? String(k.value) : undefined;
        if (name !== undefined) {
          if (seen.has(name)) {
            const line = k && (k as Node).range ? lc.linePos((k as Node).range![0]).line : 0;
            out.push(`line ${line}: key ${JSON.stringify(name)} already set in map`);
          } else seen.add(name);
        }
        walk(item.value as Node);
      }
    } else if (yaml().isSeq(node)) {
      for (const item of node.items) walk(item as Node);
    }
  };
  walk(doc.contents as Node);
  return out;
}

import type { TypeRef } from '../schema/model.js';
import { VERBATIM_MIN_CHARS, type VerbatimSpan } from './verbatim.js';
import { BodyTooDeepError, MAX_JSON_DEPTH } from './depth.js';
import { isUnsafeNumber } from './int64.js';
import { getType, jsonFields } from '../schema/types.js';

/**
 * Strict decoding problems of a JSON text against a type, in document order, worded as
 * Kubernetes' strict decoder words them: `duplicate field "spec.replicas"` and
 * `unknown field "spec.foo"` (an unknown field's value is not looked into; free-form values
 * (maps of strings, RawExtension, ...) are only checked for duplicates). Keys starting with `$`
 * are patch directives when `directives` is set. The text must be valid JSON. With `verbatim`,
 * the string values of at least VERBATIM_MIN_CHARS characters without a backslash are noted
 * there (see codec/verbatim.ts), found as the scan passes them. Throws BodyTooDeepError for a
 * text whose scanned values nest more than MAX_JSON_DEPTH levels.
 */
export function jsonStrictProblems(text: string, typeName: string | undefined, directives = false, verbatim?: VerbatimSpan[]): string[] {
  const sc = new StrictScanner(text, directives, verbatim);
  sc.value(typeName === JSON_PATCH ? { kind: 'array', items: { kind: 'object', name: JSON_PATCH_OP } } : typeName ? { kind: 'object', name: typeName } : undefined, undefined, '', -1);
  return sc.out;
}

/**
 * Where a container sits: the node of the container holding it (none for the root, whose path is
 * empty) and its key there, or its index (>= 0). Built only for the containers the scan enters;
 * a path is spelled out only when a problem is reported.
 */
interface PathNode {
  parent: PathNode | undefined;
  key: string;
  index: number;
}

function pathText(parent: PathNode | undefined, key: string, index: number): string {
  const up = parent ? pathText(parent.parent, parent.key, parent.index) : '';
  if (index >= 0) return `${up}[${index}]`;
  return up ? `${up}.${key}` : key;
}

/** the member keys and item indexes from the root to a value in `parent` (by key, or by index >= 0) */
function pathKeys(parent: PathNode, key: string, index: number): (string | number)[] {
  const out: (string | number)[] = [index >= 0 ? index : key];
  // (the root's node has no parent and no step of its own)
  for (let n: PathNode = parent; n.parent !== undefined; n = n.parent) out.push(n.index >= 0 ? n.index : n.key);
  return out.reverse();
}

/** the keys of one object so far: a short list, a set once the object has many */
const MANY_KEYS = 16;

// The scanner of jsonStrictProblems. Strings are skipped with indexOf (a value's text is never
// copied; keys are), and the position of the next backslash is remembered, so that a body is
// read about as fast as JSON.parse reads it.
class StrictScanner {
  readonly out: string[] = [];
  private i = 0;
  private readonly n: number;
  /** the index of the next backslash at or after the last string start (n when none) */
  private bs = -1;
  /** how many containers the scan is in */
  private depth = 0;

  constructor(
    private readonly text: string,
    private readonly directives: boolean,
    private readonly verbatim: VerbatimSpan[] | undefined,
  ) {
    this.n = text.length;
  }

  private ws(): void {
    const t = this.text;
    let i = this.i;
    while (i < this.n) {
      const c = t.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
    this.i = i;
  }

  /** moves past the string at i (its opening quote); returns whether it has escapes */
  private skipString(): boolean {
    const t = this.text;
    const n = this.n;
    let j = this.i + 1;
    let escaped = false;
    for (;;) {
      if (this.bs < j) {
        const b = t.indexOf('\\', j);
        this.bs = b < 0 ? n : b;
      }
      const q = t.indexOf('"', j);
      if (q < 0) {
        this.i = n + 1;
        return escaped;
      }
      if (this.bs < q) {
        // an escape before the quote: what it escapes is not the end
        escaped = true;
        j = this.bs + 2;
        continue;
      }
      this.i = q + 1;
      return escaped;
    }
  }

  private readString(): string {
    const start = this.i;
    const escaped = this.skipString();
    return escaped ? (JSON.parse(this.text.slice(start, this.i)) as string) : this.text.slice(start + 1, this.i - 1);
  }

  private skipScalar(): void {
    const t = this.text;
    if (t.charCodeAt(this.i) === 0x22) {
      this.skipString();
      return;
    }
    let i = this.i;
    while (i < this.n) {
      const c = t.charCodeAt(i);
      if (c === 0x2c || c === 0x5d || c === 0x7d || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) break;
      i++;
    }
    this.i = i;
  }

  /** skips a whole value (an unknown field's): nothing inside is reported */
  private skipValue(): void {
    this.ws();
    const t = this.text;
    const c = t.charCodeAt(this.i);
    if (c !== 0x7b && c !== 0x5b) return this.skipScalar();
    let depth = 0;
    while (this.i < this.n) {
      const d = t.charCodeAt(this.i);
      if (d === 0x22) {
        this.skipString();
        continue;
      }
      if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        depth--;
        if (depth === 0) {
          this.i++;
          return;
        }
      }
      this.i++;
    }
  }

  /** the value at i, in the container `parent` by key (index < 0) or by index */
  value(ref: TypeRef | undefined, parent: PathNode | undefined, key: string, index: number): void {
    this.ws();
    const c = this.text.charCodeAt(this.i);
    if (c === 0x7b || c === 0x5b) {
      // the scan recurses: a body nested deeper than the bound is refused here, before the stack ends (codec/depth.ts)
      if (++this.depth > MAX_JSON_DEPTH) throw new BodyTooDeepError();
      if (c === 0x7b) this.object(ref, { parent, key, index });
      else this.array(ref, { parent, key, index });
      this.depth--;
    } else if (c === 0x22 && this.verbatim !== undefined && parent !== undefined) {
      const start = this.i + 1;
      if (!this.skipString() && this.i - 1 - start >= VERBATIM_MIN_CHARS) this.verbatim.push({ path: pathKeys(parent, key, index), start, end: this.i - 1 });
    } else this.skipScalar();
  }

  private object(ref: TypeRef | undefined, here: PathNode): void {
    this.i++;
    let few: string[] | undefined;
    let many: Set<string> | undefined;
    const decl = ref && ref.kind === 'object' ? getType(ref.name) : undefined;
    const fields: ReadonlyMap<string, { type: TypeRef }> | undefined = decl ? jsonFields(decl) : ref && ref.kind === 'object' && ref.name === JSON_PATCH_OP ? JSON_PATCH_OP_FIELDS : undefined;
    const mapValues = ref && ref.kind === 'map' ? ref.values : undefined;
    const t = this.text;
    for (;;) {
      this.ws();
      if (this.i >= this.n) return;
      const c = t.charCodeAt(this.i);
      if (c === 0x7d) {
        this.i++;
        return;
      }
      if (c === 0x2c) {
        this.i++;
        continue;
      }
      const key = this.readString();
      let dup: boolean;
      if (many) {
        dup = many.has(key);
        if (!dup) many.add(key);
      } else {
        few ??= [];
        dup = few.includes(key);
        if (!dup) {
          few.push(key);
          if (few.length > MANY_KEYS) many = new Set(few);
        }
      }
      if (dup) this.out.push(`duplicate field "${pathText(here, key, -1)}"`);
      this.ws();
      this.i++; // ':'
      if (this.directives && key.startsWith('$')) {
        this.value(undefined, here, key, -1);
      } else if (fields) {
        const f = fields.get(key);
        if (!f) {
          this.out.push(`unknown field "${pathText(here, key, -1)}"`);
          this.skipValue();
        } else this.value(f.type, here, key, -1);
      } else this.value(mapValues, here, key, -1);
    }
  }

  private array(ref: TypeRef | undefined, here: PathNode): void {
    this.i++;
    const items = ref && ref.kind === 'array' ? ref.items : undefined;
    const t = this.text;
    let idx = 0;
    for (;;) {
      this.ws();
      if (this.i >= this.n) return;
      const c = t.charCodeAt(this.i);
      if (c === 0x5d) {
        this.i++;
        return;
      }
      if (c === 0x2c) {
        this.i++;
        idx++;
        continue;
      }
      this.value(items, here, '', idx);
    }
  }
}

const JSON_PATCH = '#jsonpatch';
const JSON_PATCH_OP = '#jsonpatch-op';
const FREE: TypeRef = { kind: 'special', special: 'JSON' };
const JSON_PATCH_OP_FIELDS = new Map<string, { type: TypeRef }>([
  ['op', { type: FREE }],
  ['path', { type: FREE }],
  ['value', { type: FREE }],
  ['from', { type: FREE }],
]);

/** the strict problems of a JSON patch document: its operations' unknown and duplicate keys, in order */
export function jsonPatchStrictProblems(text: string): string[] {
  return jsonStrictProblems(text, JSON_PATCH).map((p) => `json patch ${p}`);
}

// ---- the quick check: no duplicated key, proven by counting strings ----
//
// JSON.parse keeps one member per key, so a text whose objects repeat a key parses to fewer
// members and strings than the text holds. Counting the text's strings (keys and string values,
// found with indexOf) and the parsed value's members and strings tells, without reading a key's
// characters, whether any key was repeated: the counts are equal exactly when none was. That is a
// fraction of the strict scan's work (which reads every key, looks each one up in its struct's
// fields and remembers the keys of every object). The unknown fields are left to normalize, which
// looks every member up anyway; the full scan runs only when the counts differ or normalize finds
// an unknown field, for Kubernetes' messages in document order.

/**
 * Whether the JSON text `text`, which JSON.parse turned into `parsed`, repeats no key in any object
 * and nests no deeper than MAX_JSON_DEPTH; false when it does either (or cannot be told apart: run
 * jsonStrictProblems then). With `verbatim`, the string values of at least VERBATIM_MIN_CHARS
 * characters without a backslash are noted there, as jsonStrictProblems notes them (their place in
 * the parsed value is paired with the text's long strings in order; codec/verbatim.ts checks every
 * pair against the object's value before it uses one).
 */
export function jsonHasNoDuplicates(text: string, parsed: unknown, verbatim?: VerbatimSpan[], numbers?: { unsafe: boolean }): boolean {
  const n = text.length;
  let strings = 0;
  // the long values' [start, end) in the text, in order
  const long: number[] = [];
  let escapedLong = false;
  let bs = text.indexOf('\\');
  if (bs < 0) bs = n;
  let i = 0;
  for (;;) {
    const open = nextQuote(text, i, n);
    if (open < 0) break;
    let j = open + 1;
    let escaped = false;
    let close: number;
    for (;;) {
      close = nextQuote(text, j, n);
      if (close < 0) return false; // (not valid JSON: parse it first)
      if (bs < j) {
        bs = text.indexOf('\\', j);
        if (bs < 0) bs = n;
      }
      if (bs < close) {
        escaped = true;
        j = bs + 2;
        continue;
      }
      break;
    }
    strings++;
    i = close + 1;
    if (verbatim !== undefined && close - open - 1 >= VERBATIM_MIN_CHARS && !isKey(text, i, n)) {
      if (escaped) escapedLong = true;
      else long.push(open + 1, close);
    }
  }
  const w: TreeWalk = { members: 0, depth: 0, tooDeep: false, unsafe: false, long, next: 0, spans: verbatim !== undefined && !escapedLong ? verbatim : undefined, path: [] };
  countTree(parsed, w);
  if (numbers !== undefined) numbers.unsafe = w.unsafe;
  return !w.tooDeep && w.members === strings;
}

/**
 * The index of the next quote at or after i (-1 when none). The next quote is mostly a few
 * characters on (the end of a key, the start of the next one): those are read here, and only a
 * longer stretch is left to indexOf, whose call costs about as much as reading 16 characters.
 */
function nextQuote(text: string, i: number, n: number): number {
  const stop = i + 16 < n ? i + 16 : n;
  for (; i < stop; i++) if (text.charCodeAt(i) === 0x22) return i;
  return i < n ? text.indexOf('"', i) : -1;
}

/** whether the string that ended before `i` is a key: a colon follows it */
function isKey(text: string, i: number, n: number): boolean {
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x3a) return true;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return false;
    i++;
  }
  return false;
}

interface TreeWalk {
  /** the keys and string values counted */
  members: number;
  depth: number;
  tooDeep: boolean;
  /** a number beyond Number.MAX_SAFE_INTEGER was seen (codec/int64.ts: the text is parsed again, exactly) */
  unsafe: boolean;
  /** the text's long string values, [start, end) pairs in order, and the next one to pair */
  long: number[];
  next: number;
  spans: VerbatimSpan[] | undefined;
  /** the keys and indexes from the root to the container being walked */
  path: (string | number)[];
}

/** counts the keys and string values of a parsed JSON value, and pairs its long strings with the text's */
function countTree(v: unknown, w: TreeWalk): void {
  if (typeof v === 'string') {
    w.members++;
    return;
  }
  if (v === null || typeof v !== 'object') return;
  if (++w.depth > MAX_JSON_DEPTH) {
    w.tooDeep = true;
    return;
  }
  const walkLong = w.spans !== undefined && w.next < w.long.length;
  if (Array.isArray(v)) {
    for (let k = 0; k < v.length; k++) if (!countValue(w, walkLong, k, v[k])) return;
  } else {
    const o = v as Record<string, unknown>;
    for (const k in o) {
      w.members++;
      if (!countValue(w, walkLong, k, o[k])) return;
    }
  }
  w.depth--;
}

/** an item or a member's value, at `k`: counted, paired when a long string, walked when a container; false once too deep */
function countValue(w: TreeWalk, walkLong: boolean, k: string | number, item: unknown): boolean {
  if (walkLong && typeof item === 'string' && item.length >= VERBATIM_MIN_CHARS) pair(w, k, item);
  else if (item !== null && typeof item === 'object') {
    if (walkLong) w.path.push(k);
    countTree(item, w);
    if (walkLong) w.path.pop();
  } else if (typeof item === 'string') w.members++;
  else if (isUnsafeNumber(item)) w.unsafe = true;
  return !w.tooDeep;
}

/** a long string value at key `k` of the container at w.path: the text's next long value, when it is as long */
function pair(w: TreeWalk, k: string | number, item: string): void {
  w.members++;
  if (w.next >= w.long.length) return;
  const start = w.long[w.next]!;
  const end = w.long[w.next + 1]!;
  w.next += 2;
  if (end - start === item.length) w.spans!.push({ path: [...w.path, k], start, end });
}
