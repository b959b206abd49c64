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
  // the fragment between), encoded straight into one buffer. A text of ASCII only (as long in
  // bytes as in characters) is copied as latin1, the same bytes without UTF-8's encoder.
  let parts: string[];
  let cutAfter: number; // the parts before the member's place
  if (fragment === undefined) {
    parts = [text.slice(0, before), text.slice(after)];
    cutAfter = 1;
  } else {
    const f = text.indexOf(FRAGMENT_NEEDLE);
    if (f < 1 || text.indexOf(FRAGMENT_NEEDLE, f + FRAGMENT_NEEDLE.length) >= 0) return undefined;
    const fs = f - 1; // the opening quote
    if (!text.startsWith(FRAGMENT_JSON, fs)) return undefined;
    const fe = fs + FRAGMENT_JSON.length;
    if (fe <= before) {
      parts = [text.slice(0, fs), fragment, text.slice(fe, before), text.slice(after)];
      cutAfter = 3;
    } else {
      parts = [text.slice(0, before), text.slice(after, fs), fragment, text.slice(fe)];
      cutAfter = 1;
    }
  }
  const ascii = Buffer.byteLength(text) === text.length && (fragment === undefined || Buffer.byteLength(fragment) === fragment.length);
  const enc = ascii ? 'latin1' : 'utf8';
  let total = 0;
  let cut = 0;
  for (let i = 0; i < parts.length; i++) {
    total += ascii ? parts[i]!.length : Buffer.byteLength(parts[i]!);
    if (i + 1 === cutAfter) cut = total;
  }
  const stored = Buffer.allocUnsafe(total);
  let o = 0;
  for (let i = 0; i < parts.length; i++) o += stored.write(parts[i]!, o, enc);
  return { stored, cut, lead, trail };
}

/** the answer's JSON: the stored JSON with the revision (a decimal number) as its resourceVersion */
export function fillPlaceholder(p: PlaceholderText, rv: string): Buffer {
  const member = `${p.lead}"resourceVersion":"${rv}"${p.trail}`;
  const s = p.stored;
  const out = Buffer.allocUnsafe(s.length + member.length);
  s.copy(out, 0, 0, p.cut);
  out.write(member, p.cut, 'latin1');
  s.copy(out, p.cut + member.length, p.cut);
  return out;
}
