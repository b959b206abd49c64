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
// object, as a decoded object has it too). The placeholder holds control characters, which JSON.stringify escapes, so the
// member's text cannot come from inside a string value; an object holding the member's exact
// key and value somewhere else too (no real object does) is reported as not splittable.

/** what metadata.resourceVersion is set to while the object is serialized */
export const RV_PLACEHOLDER = '\u0001keelson:resourceVersion\u0001';
const PLACEHOLDER_JSON = JSON.stringify(RV_PLACEHOLDER);
const PLACEHOLDER_MEMBER = `"resourceVersion":${PLACEHOLDER_JSON}`;

export interface PlaceholderText {
  /** the JSON with the placeholder member */
  text: string;
  /** where the placeholder's value (its opening quote) starts in text */
  at: number;
  /** the JSON without the placeholder member: what is stored */
  stored: string;
}

const COMMA = 0x2c;

/**
 * Splits the JSON.stringify text of an object serialized with RV_PLACEHOLDER as its
 * metadata.resourceVersion; undefined when the placeholder member is not in it exactly once.
 */
export function splitPlaceholder(text: string): PlaceholderText | undefined {
  const start = text.indexOf(PLACEHOLDER_MEMBER);
  if (start < 0) return undefined;
  const end = start + PLACEHOLDER_MEMBER.length;
  if (text.indexOf(PLACEHOLDER_MEMBER, end) >= 0) return undefined;
  const at = end - PLACEHOLDER_JSON.length;
  let stored: string;
  if (text.charCodeAt(start - 1) === COMMA) stored = text.slice(0, start - 1) + text.slice(end);
  else if (text.charCodeAt(end) === COMMA) stored = text.slice(0, start) + text.slice(end + 1);
  else stored = text.slice(0, start) + text.slice(end);
  return { text, at, stored };
}

/** the answer's JSON: the text with the revision (a decimal number) in the placeholder's place */
export function fillPlaceholder(p: { text: string; at: number }, rv: string): Buffer {
  const t = p.text;
  return Buffer.from(`${t.slice(0, p.at)}"${rv}"${t.slice(p.at + PLACEHOLDER_JSON.length)}`);
}
