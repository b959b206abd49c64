// The JSON of a stored object with its resourceVersion, made from the bytes that were stored.
//
// Storage keeps an object without metadata.resourceVersion (the revision of the write is the
// version, as in Kubernetes' etcd3 store), and the revision is known only once the write is
// committed. Every write used to serialize the object twice: once for storage, and once more for
// the answer and the watchers, only to add that one field. This inserts the field into the
// stored JSON instead, as the last member of the top-level "metadata" object (where the object's
// own serialization puts it too: the decoded object gets its resourceVersion last). It is a
// scan, not a parse: JSON.stringify's output has no whitespace, and its structural characters
// are ASCII, which never occur inside a multi-byte UTF-8 sequence.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;
const METADATA = Buffer.from('"metadata"');

/** the index just past the string that starts (with its quote) at `i` */
function skipString(b: Uint8Array, i: number): number {
  for (i++; i < b.length; i++) {
    const c = b[i]!;
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i + 1;
  }
  return -1;
}

/** the index of the `}` or `]` that closes the object or array opened at `i` */
function matchingClose(b: Uint8Array, i: number): number {
  let depth = 0;
  for (; i < b.length; i++) {
    const c = b[i]!;
    if (c === QUOTE) {
      i = skipString(b, i);
      if (i < 0) return -1;
      i--;
    } else if (c === OPEN || c === OPEN_ARRAY) depth++;
    else if (c === CLOSE || c === CLOSE_ARRAY) {
      if (--depth === 0) return i;
    }
  }
  return -1;
}

function isMetadataKey(b: Uint8Array, start: number, end: number): boolean {
  if (end - start !== METADATA.length) return false;
  for (let k = 0; k < METADATA.length; k++) if (b[start + k] !== METADATA[k]) return false;
  return true;
}

/**
 * `json` (compact JSON of an object, as JSON.stringify writes it, without
 * metadata.resourceVersion) with `"resourceVersion":"<rv>"` added as the last member of its
 * top-level metadata; undefined when it has no metadata object (the caller serializes instead).
 */
export function withResourceVersion(json: Uint8Array, rv: string): Buffer | undefined {
  if (json[0] !== OPEN) return undefined;
  let i = 1;
  while (i < json.length && json[i] !== CLOSE) {
    // a member: "key":value
    if (json[i] !== QUOTE) return undefined;
    const keyEnd = skipString(json, i);
    if (keyEnd < 0 || json[keyEnd] !== COLON) return undefined;
    const v = keyEnd + 1;
    const c = json[v];
    let valueEnd: number;
    if (c === OPEN || c === OPEN_ARRAY) {
      const close = matchingClose(json, v);
      if (close < 0) return undefined;
      if (c === OPEN && isMetadataKey(json, i, keyEnd)) {
        const member = Buffer.from(`${close === v + 1 ? '' : ','}"resourceVersion":${JSON.stringify(rv)}`);
        const b = Buffer.allocUnsafe(json.length + member.length);
        b.set(json.subarray(0, close), 0);
        b.set(member, close);
        b.set(json.subarray(close), close + member.length);
        return b;
      }
      valueEnd = close + 1;
    } else if (c === QUOTE) {
      valueEnd = skipString(json, v);
      if (valueEnd < 0) return undefined;
    } else {
      // a number, true, false or null
      valueEnd = v;
      while (valueEnd < json.length && json[valueEnd] !== COMMA && json[valueEnd] !== CLOSE) valueEnd++;
    }
    i = valueEnd;
    if (json[i] === COMMA) i++;
  }
  return undefined;
}
