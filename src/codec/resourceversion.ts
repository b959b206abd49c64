// The JSON of a stored object with its resourceVersion, made from the one serialization of a write.
//
// Storage keeps an object without metadata.resourceVersion (the revision of the write is the
// version, as in Kubernetes' etcd3 store), and the revision is known only once the write is
// committed. Serializing the object twice per write (once for storage, once more for the answer
// and the watchers, only to add that one field) cost a tenth of a create; a scan of the stored
// JSON for the end of its metadata (the previous way) still cost a few microseconds in
// JavaScript. Instead the object is serialized once with its metadata.resourceVersion set to a
// placeholder: the stored JSON is that text without the placeholder's member, and the answer's
// JSON is the same text with the revision in the placeholder's place, found by one native string
// search. The resourceVersion stays where the object has it (last in the metadata of a new
// object, as a decoded object has it too). The placeholder holds control characters, which
// JSON.stringify escapes, so the member's text cannot come from inside a string value; an object
// holding the placeholder's text anywhere else too (no real object does) is reported as not
// splittable, and serialized again.

import { keptBuffer } from './kept.js';

/** what metadata.resourceVersion is set to while the object is serialized */
export const RV_PLACEHOLDER = '\u0001keelson:resourceVersion\u0001';
const PLACEHOLDER_JSON = JSON.stringify(RV_PLACEHOLDER);
const PLACEHOLDER_MEMBER = `"resourceVersion":${PLACEHOLDER_JSON}`;
/** the start of the placeholder's JSON text, and where it sits in the member */
const NEEDLE = PLACEHOLDER_JSON.slice(1, 14);
const NEEDLE_OFFSET = PLACEHOLDER_MEMBER.indexOf(NEEDLE);

const COMMA = 0x2c;

// A member whose JSON text is known already (a managedFields list shared by many objects, with
// its text made once) is serialized as a placeholder string, and splitPlaceholder writes the text
// in the placeholder's place: JSON.stringify of ~220 characters of small keys costs more than the
// search and the copy.

/** what such a member is set to while the object is serialized */
export const FRAGMENT_PLACEHOLDER = '\u0002keelson:fragment\u0002'; // (not \u0001: the two needles must differ)
const FRAGMENT_JSON = JSON.stringify(FRAGMENT_PLACEHOLDER);
const FRAGMENT_NEEDLE = FRAGMENT_JSON.slice(1, 14);

export interface PlaceholderText {
  /** the JSON without the placeholder member (UTF-8): what is stored */
  stored: Buffer;
  /** the byte offset in stored where the member was */
  cut: number;
  /** what goes around the member there: the comma before or after it */
  lead: string;
  trail: string;
}

/**
 * Splits the JSON.stringify text of an object serialized with RV_PLACEHOLDER as its
 * metadata.resourceVersion; undefined when the placeholder member is not in it exactly once.
 * With a `fragment`, the text also holds FRAGMENT_PLACEHOLDER (exactly once, else undefined) as
 * one member's value, and the stored bytes have the fragment (that member's JSON) in its place.
 */
export function splitPlaceholder(text: string, fragment?: string): PlaceholderText | undefined {
  // (a short needle: V8 searches a long one ten times slower) found once, in the whole member
  const at = text.indexOf(NEEDLE);
  if (at < 0 || text.indexOf(NEEDLE, at + NEEDLE.length) >= 0) return undefined;
  const start = at - NEEDLE_OFFSET;
  if (start < 0 || !text.startsWith(PLACEHOLDER_MEMBER, start)) return undefined;
  const end = start + PLACEHOLDER_MEMBER.length;
  let before = start;
  let after = end;
  let lead = '';
  let trail = '';
  if (text.charCodeAt(start - 1) === COMMA) {
    before--;
    lead = ',';
  } else if (text.charCodeAt(end) === COMMA) {
    after++;
    trail = ',';
  }
  // the stored bytes are the text around the member (and around the fragment's placeholder, with
  // the fragment between). A text of ASCII only (as long in bytes as in characters, the common
  // case) is copied as latin1: without a fragment, its head and tail straight to their places;
  // with one, the text is written whole and its pieces moved into place in the buffer (memmove),
  // so that no piece is sliced out and encoded on its own. Any other text is encoded piece by piece.
  const n = text.length;
  if (Buffer.byteLength(text) !== n) return splitByPieces(text, before, after, lead, trail, fragment);
  if (fragment === undefined) {
    // (the text's head is written by a length, its tail from one slice: the buffer has the stored
    // bytes' exact size, as it is kept with the cached object)
    const stored = Buffer.allocUnsafe(n - (after - before));
    stored.write(text, 0, before, 'latin1');
    stored.write(text.slice(after), before, 'latin1');
    return { stored, cut: before, lead, trail };
  }
  const fs = findFragment(text);
  if (fs < 0) return undefined;
  const fe = fs + FRAGMENT_JSON.length;
  const fb = fragmentBytes(fragment);
  const total = n - (after - before) + fb.length - (fe - fs);
  const buf = Buffer.allocUnsafe(Math.max(n, total));
  buf.write(text, 0, n, 'latin1');
  // the pieces in the text: [0, p) X [q, r) Y [t, n), X and Y the fragment's placeholder and the
  // member (in either order); in the stored bytes: [0, p) X' [q, r) Y' [t, n), where the member's
  // Y' is empty and the fragment's X' or Y' is fb. A piece moving left is moved first from the
  // left, a piece moving right first from the right, so that no piece is overwritten before it moves.
  const fragFirst = fe <= before;
  const p = fragFirst ? fs : before;
  const q = fragFirst ? fe : after;
  const r = fragFirst ? before : fs;
  const t = fragFirst ? after : fe;
  const x = fragFirst ? fb.length : 0; // the length of X'
  const y = fragFirst ? 0 : fb.length; // the length of Y'
  const mid = p + x; // where [q, r) goes
  const tail = mid + (r - q) + y; // where [t, n) goes
  if (mid <= q) {
    buf.copyWithin(mid, q, r);
    buf.copyWithin(tail, t, n);
  } else {
    buf.copyWithin(tail, t, n);
    buf.copyWithin(mid, q, r);
  }
  buf.set(fb, fragFirst ? p : mid + (r - q));
  const cut = fragFirst ? mid + (r - q) : p;
  return { stored: total === buf.length ? buf : buf.subarray(0, total), cut, lead, trail };
}

/** where the text holds FRAGMENT_PLACEHOLDER's JSON (its opening quote), once; -1 when not exactly once */
function findFragment(text: string): number {
  const f = text.indexOf(FRAGMENT_NEEDLE);
  if (f < 1 || text.indexOf(FRAGMENT_NEEDLE, f + FRAGMENT_NEEDLE.length) >= 0) return -1;
  const fs = f - 1; // the opening quote
  return text.startsWith(FRAGMENT_JSON, fs) ? fs : -1;
}

// the UTF-8 bytes of the last fragment: a fragment is one shared text used by many writes in a row
let lastFragment: string | undefined;
let lastFragmentBytes: Buffer = Buffer.alloc(0);
function fragmentBytes(fragment: string): Buffer {
  if (fragment !== lastFragment) {
    lastFragmentBytes = Buffer.from(fragment, 'utf8');
    lastFragment = fragment;
  }
  return lastFragmentBytes;
}

/** splitPlaceholder for a text that is not all ASCII: each piece encoded on its own */
function splitByPieces(text: string, before: number, after: number, lead: string, trail: string, fragment: string | undefined): PlaceholderText | undefined {
  let parts: string[];
  let cutAfter: number; // the parts before the member's place
  if (fragment === undefined) {
    parts = [text.slice(0, before), text.slice(after)];
    cutAfter = 1;
  } else {
    const fs = findFragment(text);
    if (fs < 0) return undefined;
    const fe = fs + FRAGMENT_JSON.length;
    if (fe <= before) {
      parts = [text.slice(0, fs), fragment, text.slice(fe, before), text.slice(after)];
      cutAfter = 3;
    } else {
      parts = [text.slice(0, before), text.slice(after, fs), fragment, text.slice(fe)];
      cutAfter = 1;
    }
  }
  let total = 0;
  let cut = 0;
  for (let i = 0; i < parts.length; i++) {
    total += Buffer.byteLength(parts[i]!);
    if (i + 1 === cutAfter) cut = total;
  }
  const stored = Buffer.allocUnsafe(total);
  let o = 0;
  for (let i = 0; i < parts.length; i++) o += stored.write(parts[i]!, o, 'utf8');
  return { stored, cut, lead, trail };
}

/** the answer's JSON: the stored JSON with the revision (a decimal number) as its resourceVersion */
export function fillPlaceholder(p: PlaceholderText, rv: string): Buffer {
  const member = `${p.lead}"resourceVersion":"${rv}"${p.trail}`;
  const s = p.stored;
  const n = s.length;
  const m = member.length;
  // (the answer is the JSON the watch cache keeps for the object: a kept buffer, see kept.ts)
  const out = keptBuffer(n + m);
  // (the whole stored JSON in one copy, its tail moved up in the buffer, the member written in
  // the gap: native copies without the argument checks and views of Buffer.copy)
  out.set(s, 0);
  out.copyWithin(p.cut + m, p.cut, n);
  for (let i = 0; i < m; i++) out[p.cut + i] = member.charCodeAt(i);
  return out;
}
