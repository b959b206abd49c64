// Long string values copied from a request's JSON text into the stored JSON, unescaped again.
//
// JSON.stringify looks at every character of every string for escaping: in Node 20 about 3 ns a
// character, which is half of the serialization of the 1 KB ConfigMap of `npm run bench` and
// nearly all of it for a Secret or ConfigMap with long values (a Helm release is a Secret of tens
// of kilobytes of base64). A string value whose text in the request holds no backslash needs no
// escaping: JSON allows no raw control character in a string, a quote would have ended it, and
// text decoded from UTF-8 holds no lone surrogate. So its JSON is its characters between quotes.
//
// The strict-field scan, which reads the body's text anyway, notes where such long values are
// (VerbatimSpan, see jsonStrictProblems). The store serializes the object with each of them
// replaced by a short placeholder and puts the value in the placeholder's place in the text. A
// value is used only where the object still holds exactly the request's characters at that path
// (the normalization, an admission plugin or the strategy may have moved or changed it), and
// only when its placeholder is in the text exactly once (a string or key equal to a placeholder
// makes it ambiguous); otherwise the object is serialized as it is.

/** the shortest value worth it: below, the search and the splice cost about what they save */
export const VERBATIM_MIN_CHARS = 256;

export interface VerbatimSpan {
  /** the member keys and item indexes from the root object to the value */
  path: (string | number)[];
  /** the value's characters in the request's text: [start, end), without the quotes */
  start: number;
  end: number;
}

/** a request's JSON text and its long, escape-free string values */
export interface Verbatim {
  text: string;
  spans: VerbatimSpan[];
}

// (a control character: JSON.stringify writes it escaped, as \u0003, so only a string or a key
// made of the same characters can look like a placeholder in the text, and that is checked)
const MARK = '\u0003';
/** MARK's JSON text */
const ESC = '\\u0003';
/** the i-th placeholder: MARK, i, MARK */
const marks: string[] = [];
function placeholder(i: number): string {
  while (marks.length <= i) marks.push(MARK + marks.length + MARK);
  return marks[i]!;
}

interface Swapped {
  holder: any;
  key: string | number;
  value: string;
  /** its placeholder was found in the text */
  found: boolean;
}

const hasOwn = Object.prototype.hasOwnProperty;

/** whether `k` is a step into `h`: an item of an array, or an own member of an object (never its prototype) */
function hasStep(h: any, k: string | number): boolean {
  if (h === null || typeof h !== 'object') return false;
  return typeof k === 'number' ? Array.isArray(h) && k < h.length : !Array.isArray(h) && hasOwn.call(h, k);
}

/** the object or array at `path` minus its last step, when every step is an own member or an item */
function holderOf(root: any, path: (string | number)[]): any {
  let h = root;
  for (let i = 0; i < path.length - 1; i++) {
    if (!hasStep(h, path[i]!)) return undefined;
    h = h[path[i]!];
  }
  return h !== null && typeof h === 'object' ? h : undefined;
}

/**
 * `serialize()` (JSON.stringify of `root`, or of an object holding root's strings as they are),
 * with the spans' values written from `v.text` rather than escaped again; the same text as
 * `serialize()` alone. Linear in the text and the values, however many spans there are.
 */
export function stringifyWithVerbatim(root: any, v: Verbatim | undefined, serialize: () => string): string {
  if (v === undefined || v.spans.length === 0) return serialize();
  const swapped: Swapped[] = [];
  const text = v.text;
  for (let i = 0; i < v.spans.length; i++) {
    const s = v.spans[i]!;
    const holder = holderOf(root, s.path);
    if (holder === undefined || Object.isFrozen(holder)) continue;
    const key = s.path[s.path.length - 1]!;
    if (!hasStep(holder, key)) continue;
    const value = holder[key];
    if (typeof value !== 'string' || value.length !== s.end - s.start || value !== text.slice(s.start, s.end)) continue;
    holder[key] = placeholder(swapped.length);
    swapped.push({ holder, key, value, found: false });
  }
  if (swapped.length === 0) return serialize();
  let out: string;
  try {
    out = serialize();
  } finally {
    for (const w of swapped) w.holder[w.key] = w.value;
  }
  // one pass over the escaped MARKs of the text, in order: each must open a whole placeholder
  // string ("ESC n ESC"), each placeholder once; anything else and the object is serialized again
  let result = '';
  let from = 0;
  for (let at = out.indexOf(ESC); at >= 0; at = out.indexOf(ESC, from)) {
    let j = at + ESC.length;
    let n = 0;
    const digits = j;
    for (let c = out.charCodeAt(j); c >= 0x30 && c <= 0x39 && j - digits < 9; c = out.charCodeAt(++j)) n = n * 10 + (c - 0x30);
    const close = j + ESC.length;
    if (j === digits || out.charCodeAt(at - 1) !== 0x22 || !out.startsWith(ESC, j) || out.charCodeAt(close) !== 0x22 || n >= swapped.length || swapped[n]!.found) return serialize();
    swapped[n]!.found = true;
    // the placeholder's quotes stay around the value
    result += out.slice(from, at) + swapped[n]!.value;
    from = close;
  }
  for (const w of swapped) if (!w.found) return serialize();
  return result + out.slice(from);
}
