// Key order for every storage structure: keys compare as byte strings of their UTF-8 encoding,
// which is the order of their code points (and the order SQLite's BINARY collation and etcd use).
// JavaScript's `<` compares UTF-16 code units, which agrees with code point order except where a
// surrogate (U+D800..U+DFFF, half of an astral character) meets a unit in U+E000..U+FFFF.

// Native `<` is several times faster than a loop over code units, and exact as long as no key holds
// a surrogate. So compareKeys uses it until a key with a surrogate is noted (noteKey, called by every
// structure on the keys it stores and the bounds it searches with), then switches for good to the
// exact comparison. The switch keeps every existing tree valid: for keys without surrogates both
// orders agree.
let exact = false;
const SURROGATE = /[\ud800-\udfff]/;

/** Tell the key order about a key (or bound) that is about to be stored or compared. */
export function noteKey(key: string): void {
  if (!exact && SURROGATE.test(key)) exact = true;
}

/** Compare two keys in byte (code point) order: negative, zero or positive. */
export function compareKeys(a: string, b: string): number {
  if (exact) return compareKeysExact(a, b);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Sort keys in place in compareKeys' order (without surrogates, the native sort's own order: no comparator called per pair). */
export function sortKeys(keys: string[]): string[] {
  return exact ? keys.sort(compareKeysExact) : keys.sort();
}

/** code point order, whatever the keys hold */
export function compareKeysExact(a: string, b: string): number {
  if (a === b) return 0;
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      if (x >= 0xd800 && y >= 0xd800) {
        const xs = x <= 0xdfff;
        const ys = y <= 0xdfff;
        if (xs !== ys) return xs ? 1 : -1;
      }
      return x - y;
    }
  }
  return a.length - b.length;
}

/**
 * The smallest key greater than every key that starts with `prefix` (exclusive upper bound of
 * the prefix range), or undefined when there is none (empty prefix, or only U+10FFFF).
 */
export function prefixEnd(prefix: string): string | undefined {
  noteKey(prefix);
  const end = prefixEndOf(prefix);
  if (end !== undefined) noteKey(end);
  return end;
}

function prefixEndOf(prefix: string): string | undefined {
  let s = prefix;
  while (s.length > 0) {
    const i = s.length - 1;
    const last = s.charCodeAt(i);
    if (last >= 0xdc00 && last <= 0xdfff && i > 0) {
      const hi = s.charCodeAt(i - 1);
      if (hi >= 0xd800 && hi <= 0xdbff) {
        const cp = ((hi - 0xd800) << 10) + (last - 0xdc00) + 0x10000;
        if (cp < 0x10ffff) return s.slice(0, i - 1) + String.fromCodePoint(cp + 1);
        s = s.slice(0, i - 1);
        continue;
      }
    }
    if (last === 0xffff) return s.slice(0, i) + '\u{10000}';
    if (last === 0xd7ff) return s.slice(0, i) + '\ue000';
    return s.slice(0, i) + String.fromCharCode(last + 1);
  }
  return undefined;
}

/** the larger of two keys in byte order */
export function maxKey(a: string, b: string): string {
  noteKey(a);
  noteKey(b);
  return compareKeys(a, b) >= 0 ? a : b;
}
