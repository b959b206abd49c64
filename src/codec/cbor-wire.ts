// CBOR (RFC 8949) wire primitives for Kubernetes' CBOR encoding: a forward writer that writes
// what k8s.io/apimachinery's encode mode writes (shortest heads, shortest value-preserving float,
// Go strings as byte strings), a well-formedness scanner with the limits and messages of
// fxamacker/cbor as Kubernetes configures it (internal/modes/decode.go), and the errors.
//
// The schema-driven encoder and decoder (cbor.ts) build on these. Nothing here knows a kind.
import { isUtf8 } from 'node:buffer';

// ---------------------------------------------------------------- errors

/**
 * A CBOR body (request, apply patch) Kubernetes would reject. Kubernetes answers 400 BadRequest;
 * `message` is the decoder's own text (fxamacker/cbor's wording, e.g. "cbor: found duplicate map
 * key \"name\" at map element index 2"), which the server wraps as Kubernetes does (see
 * cborDecodeStatusMessage in cbor.ts).
 *
 * `phase` says where Kubernetes finds the problem: 'gvk' while it reads apiVersion and kind
 * (any malformed CBOR, a top level that is not a map, a duplicated top-level key, a kind or
 * apiVersion of the wrong type), 'decode' while it decodes the object into its type.
 */
export class CBORDecodeError extends Error {
  readonly code = 400;
  readonly reason = 'BadRequest';
  /** the input is not well-formed CBOR (a syntax error rather than a rejected value) */
  syntax: boolean;
  phase: 'gvk' | 'decode' = 'decode';
  constructor(message: string, syntax = false) {
    super(message);
    this.name = 'CBORDecodeError';
    this.syntax = syntax;
  }
}

/** A value Kubernetes' encoder refuses (NaN, infinities, integers beyond 64 bits): a 500 in Kubernetes. */
export class CBOREncodeError extends Error {
  readonly code = 500;
  readonly reason = 'InternalError';
  constructor(message: string) {
    super(message);
    this.name = 'CBOREncodeError';
  }
}

/** Bytes written verbatim by the encoders (an item already encoded, e.g. a cached object). */
export class CBORRaw {
  constructor(readonly bytes: Uint8Array) {}
}

// ---------------------------------------------------------------- constants

/** the head of tag 55799, "self-described CBOR": d9 d9 f7 */
export const SELF_DESCRIBED = Uint8Array.of(0xd9, 0xd9, 0xf7);
export const CBOR_NULL = 0xf6;

/** true when the bytes start with the self-described CBOR tag */
export function hasSelfDescribedTag(b: Uint8Array): boolean {
  return b.length >= 3 && b[0] === 0xd9 && b[1] === 0xd9 && b[2] === 0xf7;
}

/** the bytes without a leading self-described tag (a view, no copy) */
export function stripSelfDescribedTag(b: Uint8Array): Uint8Array {
  let s = b;
  while (hasSelfDescribedTag(s)) s = s.subarray(3);
  return s;
}

export const MAJOR_NAMES = ['positive integer', 'negative integer', 'byte string', 'UTF-8 text string', 'array', 'map', 'tag', 'primitives'] as const;

export const MAX_NESTED_LEVELS = 10000;
export const MAX_ARRAY_ELEMENTS = 2147483647;
export const MAX_MAP_PAIRS = 2097152;

const TWO32 = 4294967296;

// ---------------------------------------------------------------- float16

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/**
 * The IEEE 754 half-precision bits of a value that float32 holds exactly, or -1 when half
 * precision cannot hold it exactly (normal or subnormal halves are both tried, as fxamacker's
 * ShortestFloat16 does).
 */
export function exactHalf(v: number): number {
  f32[0] = v;
  const bits = u32[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;
  if (exp === 0) return mant === 0 ? sign : -1; // zero; float32 subnormals are far below half's range
  const e = exp - 127;
  if (e >= -14 && e <= 15) {
    if (mant & 0x1fff) return -1;
    return sign | ((e + 15) << 10) | (mant >>> 13);
  }
  if (e >= -24 && e < -14) {
    const sig = mant | 0x800000;
    const shift = -(e + 1); // 14 .. 23
    if (sig & ((1 << shift) - 1)) return -1;
    return sign | (sig >>> shift);
  }
  return -1;
}

export function halfToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) return mant === 0 ? sign * Infinity : NaN;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

// ---------------------------------------------------------------- writer

type NodeBuffer = Buffer & {
  utf8Write(s: string, offset: number, length?: number): number;
  latin1Write(s: string, offset: number, length?: number): number;
  utf8Slice(start: number, end: number): string;
  latin1Slice(start: number, end: number): string;
  base64Slice(start: number, end: number): string;
};

/** A growable forward writer. */
export class Writer {
  buf: NodeBuffer;
  pos = 0;

  constructor(size = 16384) {
    this.buf = Buffer.allocUnsafeSlow(size) as NodeBuffer;
  }

  reset(): void {
    this.pos = 0;
  }

  /** make room for n more bytes */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const nb = Buffer.allocUnsafeSlow(size) as NodeBuffer;
    this.buf.copy(nb, 0, 0, this.pos);
    this.buf = nb;
  }

  /** a copy of the written bytes */
  finish(): Uint8Array {
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    return out;
  }

  byte(b: number): void {
    if (this.pos >= this.buf.length) this.ensure(1);
    this.buf[this.pos++] = b;
  }

  /** short bytes (an encoded key) copied by hand: cheaper than a typed-array copy */
  key(b: Uint8Array): void {
    const n = b.length;
    if (n > 32) return this.raw(b);
    if (this.pos + n > this.buf.length) this.ensure(n);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) buf[p++] = b[i]!;
    this.pos = p;
  }

  raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** a head: major type (already shifted: 0x00, 0x20, ... 0xe0) and argument n (0 <= n < 2^64, a safe integer) */
  head(major: number, n: number): void {
    this.ensure(9);
    const b = this.buf;
    let p = this.pos;
    if (n < 24) b[p++] = major | n;
    else if (n < 0x100) {
      b[p++] = major | 24;
      b[p++] = n;
    } else if (n < 0x10000) {
      b[p++] = major | 25;
      b[p++] = n >>> 8;
      b[p++] = n & 0xff;
    } else if (n < TWO32) {
      b[p++] = major | 26;
      b[p++] = n >>> 24;
      b[p++] = (n >>> 16) & 0xff;
      b[p++] = (n >>> 8) & 0xff;
      b[p++] = n & 0xff;
    } else {
      const hi = Math.floor(n / TWO32);
      const lo = n >>> 0;
      b[p++] = major | 27;
      b[p++] = hi >>> 24;
      b[p++] = (hi >>> 16) & 0xff;
      b[p++] = (hi >>> 8) & 0xff;
      b[p++] = hi & 0xff;
      b[p++] = lo >>> 24;
      b[p++] = (lo >>> 16) & 0xff;
      b[p++] = (lo >>> 8) & 0xff;
      b[p++] = lo & 0xff;
    }
    this.pos = p;
  }

  /** a 64-bit head from a bigint argument (0 <= n < 2^64) */
  headBig(major: number, n: bigint): void {
    if (n < 9007199254740992n) return this.head(major, Number(n));
    this.ensure(9);
    this.buf[this.pos++] = major | 27;
    this.buf.writeBigUInt64BE(n, this.pos);
    this.pos += 8;
  }

  /**
   * An integer, as Go encodes an int64: major 0 or 1, shortest head. The caller checks that v is
   * an integer within the int64 range.
   */
  int(v: number): void {
    if (v >= 0) this.head(0x00, v);
    else this.head(0x20, -1 - v);
  }

  bigint(v: bigint): void {
    if (v >= 0n) {
      if (v > 0xffffffffffffffffn) throw new CBOREncodeError(`cbor: unsupported value: integer ${v} overflows 64 bits`);
      this.headBig(0x00, v);
    } else {
      const n = -1n - v;
      if (n > 0xffffffffffffffffn) throw new CBOREncodeError(`cbor: unsupported value: integer ${v} overflows 64 bits`);
      this.headBig(0x20, n);
    }
  }

  /** a float in the shortest width that keeps its value (fxamacker ShortestFloat16) */
  float(v: number): void {
    if (v !== v) throw new CBOREncodeError('cbor: unsupported value: floating-point NaN');
    if (v === Infinity || v === -Infinity) throw new CBOREncodeError('cbor: unsupported value: floating-point infinity');
    this.ensure(9);
    const b = this.buf;
    if (Math.fround(v) !== v) {
      b[this.pos++] = 0xfb;
      b.writeDoubleBE(v, this.pos);
      this.pos += 8;
      return;
    }
    const h = exactHalf(v);
    if (h >= 0) {
      b[this.pos++] = 0xf9;
      b[this.pos++] = h >>> 8;
      b[this.pos++] = h & 0xff;
      return;
    }
    b[this.pos++] = 0xfa;
    b.writeFloatBE(v, this.pos);
    this.pos += 4;
  }

  /**
   * A string as a CBOR string of the given major type (0x40 byte string, as Kubernetes writes Go
   * strings; 0x60 text string). The head is sized for the UTF-8 length.
   */
  str(s: string, major: number): void {
    const n = s.length;
    if (n < 24) {
      // short: try ASCII by hand (most keys and values)
      this.ensure(1 + n * 3);
      const b = this.buf;
      const start = this.pos + 1;
      let p = start;
      for (let i = 0; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) {
          p = -1;
          break;
        }
        b[p++] = c;
      }
      if (p >= 0) {
        b[this.pos] = major | n;
        this.pos = p;
        return;
      }
    }
    const max = n * 3;
    const hs = max < 24 ? 1 : max < 0x100 ? 2 : max < 0x10000 ? 3 : max < TWO32 ? 5 : 9;
    this.ensure(hs + max);
    const start = this.pos + hs;
    const len = this.buf.utf8Write(s, start);
    const real = len < 24 ? 1 : len < 0x100 ? 2 : len < 0x10000 ? 3 : len < TWO32 ? 5 : 9;
    if (real !== hs) this.buf.copyWithin(this.pos + real, start, start + len);
    this.head(major, len);
    this.pos += len;
  }

  /** a byte string of raw bytes */
  bytes(b: Uint8Array): void {
    this.head(0x40, b.length);
    this.raw(b);
  }

  /** the bytes of a base64 text written as a CBOR byte string (length known from the text) */
  bytesFromBase64(s: string): void {
    const n = base64DecodedLength(s);
    this.head(0x40, n);
    this.ensure(n);
    const w = this.buf.write(s, this.pos, n, 'base64');
    if (w !== n) throw new CBOREncodeError(`cbor: unsupported value: invalid base64 text for a []byte field`);
    this.pos += n;
  }
}

/** decoded length of a (valid, padded or unpadded) base64 text */
function base64DecodedLength(s: string): number {
  let n = s.length;
  while (n > 0 && s.charCodeAt(n - 1) === 0x3d) n--;
  return Math.floor((n * 3) / 4);
}

// ---------------------------------------------------------------- base64 as Go's encoding/base64 StdEncoding

const B64 = new Int16Array(128).fill(-1);
{
  const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < 64; i++) B64[abc.charCodeAt(i)] = i;
}

/**
 * Checks a base64 text as Go's base64.StdEncoding.Decode does (padding required, '\r' and '\n'
 * skipped, unused bits of the last quantum not checked). Returns undefined when it decodes, else
 * Go's error with Go's offset ("illegal base64 data at input byte N").
 */
export function goBase64Error(b: Uint8Array, start: number, end: number): string | undefined {
  const err = (i: number): string => `illegal base64 data at input byte ${i - start}`;
  let si = start;
  for (;;) {
    for (let j = 0; j < 4; j++) {
      while (si < end && (b[si] === 0x0a || b[si] === 0x0d)) si++;
      if (si === end) return j === 0 ? undefined : err(si - j);
      const c = b[si++]!;
      if (c === 0x3d) {
        if (j < 2) return err(si - 1);
        if (j === 2) {
          while (si < end && (b[si] === 0x0a || b[si] === 0x0d)) si++;
          if (si === end) return err(end);
          if (b[si] !== 0x3d) return err(si - 1);
          si++;
        }
        while (si < end && (b[si] === 0x0a || b[si] === 0x0d)) si++;
        return si < end ? err(si) : undefined;
      }
      if (c >= 128 || B64[c]! < 0) return err(si - 1);
    }
  }
}

// ---------------------------------------------------------------- strings

// Short ASCII strings repeat across objects (field names, "True", "TCP", "v1", label keys):
// a direct-mapped cache gives the same JS string back without creating it again.
const CACHE_BITS = 12;
const CACHE_MASK = (1 << CACHE_BITS) - 1;
const cacheStr: (string | undefined)[] = new Array(1 << CACHE_BITS).fill(undefined);
const cacheBytes: (Uint8Array | undefined)[] = new Array(1 << CACHE_BITS).fill(undefined);
const SHORT = 24;

/** an ASCII string of fewer than 24 bytes, through the cache; undefined when not ASCII */
function shortAscii(b: Buffer, start: number, end: number): string | undefined {
  let h = end - start;
  for (let i = start; i < end; i++) {
    const c = b[i]!;
    if (c >= 0x80) return undefined;
    h = Math.imul(h ^ c, 0x01000193);
  }
  const slot = (h ^ (h >>> 15)) & CACHE_MASK;
  const cb = cacheBytes[slot];
  const n = end - start;
  if (cb !== undefined && cb.length === n) {
    let i = 0;
    while (i < n && cb[i] === b[start + i]) i++;
    if (i === n) return cacheStr[slot];
  }
  const s = (b as NodeBuffer).latin1Slice(start, end);
  cacheBytes[slot] = Uint8Array.prototype.slice.call(b, start, end);
  cacheStr[slot] = s;
  return s;
}

/** UTF-8 of bytes, invalid sequences replaced (what a Go string prints as in JSON) */
export function bytesToString(b: Buffer, start: number, end: number): string {
  if (start === end) return '';
  if (end - start < SHORT) {
    const s = shortAscii(b, start, end);
    if (s !== undefined) return s;
    return (b as NodeBuffer).utf8Slice(start, end);
  }
  for (let i = start; i < end; i++) {
    if (b[i]! >= 0x80) return (b as NodeBuffer).utf8Slice(start, end);
  }
  return (b as NodeBuffer).latin1Slice(start, end);
}

/** UTF-8 of a CBOR text string; undefined when it is not valid UTF-8 */
export function textToString(b: Buffer, start: number, end: number): string | undefined {
  if (start === end) return '';
  if (end - start < SHORT) {
    const s = shortAscii(b, start, end);
    if (s !== undefined) return s;
    return isUtf8(b.subarray(start, end)) ? (b as NodeBuffer).utf8Slice(start, end) : undefined;
  }
  for (let i = start; i < end; i++) {
    if (b[i]! >= 0x80) return isUtf8(b.subarray(start, end)) ? (b as NodeBuffer).utf8Slice(start, end) : undefined;
  }
  return start === end ? '' : (b as NodeBuffer).latin1Slice(start, end);
}

// ---------------------------------------------------------------- well-formedness

/**
 * Scans one data item from `pos` and returns the offset after it, checking what fxamacker's
 * well-formedness pass checks with Kubernetes' options: heads and lengths, indefinite-length
 * items (allowed) and their chunks, break codes, nesting depth (10000: arrays, maps and nested
 * tags count), array and map sizes, NaN and infinite floats (rejected), bignum tags 2 and 3
 * (rejected), two-byte simple values below 32 (ill-formed). It does not check what is found only
 * while values are built: UTF-8 of text strings, duplicate map keys, rejected simple values, the
 * contents of tags 0 and 1.
 *
 * Iterative (an explicit stack), so that any depth up to the limit is scanned.
 * Throws CBORDecodeError (syntax = true); `unexpected EOF` when the data ends inside the item.
 */
export function wellFormedEnd(b: Uint8Array, pos: number, depth = 0): number {
  const end = b.length;
  // open arrays and maps: items left (-1: indefinite), items seen (indefinite), major, depth added
  const left: number[] = [];
  const seen: number[] = [];
  const majors: number[] = [];
  const added: number[] = [];
  let tagDepth = 0; // depth added by a chain of tags before the current item
  for (;;) {
    // the break code of an indefinite-length container
    const top = left.length - 1;
    if (top >= 0 && left[top] === -1) {
      if (pos >= end) throw eof();
      if (b[pos] === 0xff) {
        pos++;
        if (majors[top] === 5 && seen[top]! % 2 === 1) throw syntax('cbor: unexpected "break" code');
        depth -= added[top]!;
        left.pop();
        seen.pop();
        majors.pop();
        added.pop();
        if (completed()) return pos;
        continue;
      }
    }
    if (pos >= end) throw eof();
    const ib = b[pos++]!;
    const major = ib >>> 5;
    const ai = ib & 0x1f;
    let arg = ai;
    let argHi = 0;
    if (ai >= 24) {
      if (ai === 24) {
        if (pos + 1 > end) throw eof();
        arg = b[pos++]!;
        if (major === 7 && arg < 32) throw syntax(`cbor: invalid simple value ${arg} for type primitives`);
      } else if (ai === 25) {
        if (pos + 2 > end) throw eof();
        arg = (b[pos]! << 8) | b[pos + 1]!;
        pos += 2;
        if (major === 7) checkFloat(halfToNumber(arg));
      } else if (ai === 26) {
        if (pos + 4 > end) throw eof();
        arg = ((b[pos]! << 24) | (b[pos + 1]! << 16) | (b[pos + 2]! << 8) | b[pos + 3]!) >>> 0;
        if (major === 7) {
          f32dv.setUint32(0, arg);
          checkFloat(f32dv.getFloat32(0));
        }
        pos += 4;
      } else if (ai === 27) {
        if (pos + 8 > end) throw eof();
        argHi = ((b[pos]! << 24) | (b[pos + 1]! << 16) | (b[pos + 2]! << 8) | b[pos + 3]!) >>> 0;
        const lo = ((b[pos + 4]! << 24) | (b[pos + 5]! << 16) | (b[pos + 6]! << 8) | b[pos + 7]!) >>> 0;
        if (major === 7) {
          f32dv.setUint32(0, argHi);
          f32dv.setUint32(4, lo);
          checkFloat(f32dv.getFloat64(0));
        }
        arg = argHi * TWO32 + lo;
        pos += 8;
      } else if (ai === 31) {
        switch (major) {
          case 0:
          case 1:
          case 6:
            throw syntax(`cbor: invalid additional information 31 for type ${MAJOR_NAMES[major]}`);
          case 7:
            throw syntax('cbor: unexpected "break" code');
          case 2:
          case 3:
            pos = wellFormedIndefString(b, pos, major);
            if (completed()) return pos;
            continue;
          default:
            open(-1, major);
            continue;
        }
      } else {
        throw syntax(`cbor: invalid additional information ${ai} for type ${MAJOR_NAMES[major]}`);
      }
    }
    switch (major) {
      case 2:
      case 3:
        if (argHi >= 0x80000000) throw syntax(`cbor: ${MAJOR_NAMES[major]} length ${u64String(argHi, arg % TWO32)} is too large, causing integer overflow`);
        if (end - pos < arg) throw eof();
        pos += arg;
        break;
      case 4:
      case 5: {
        if (argHi >= 0x80000000) throw syntax(`cbor: ${MAJOR_NAMES[major]} length ${u64String(argHi, arg % TWO32)} is too large, it would cause integer overflow`);
        if (major === 4 && arg > MAX_ARRAY_ELEMENTS) throw syntax(`cbor: exceeded max number of elements ${MAX_ARRAY_ELEMENTS} for CBOR array`);
        if (major === 5 && arg > MAX_MAP_PAIRS) throw syntax(`cbor: exceeded max number of key-value pairs ${MAX_MAP_PAIRS} for CBOR map`);
        const n = major === 5 ? arg * 2 : arg;
        open(n, major);
        if (n > 0) continue;
        // an empty container is complete at once
        depth -= added[added.length - 1]!;
        left.pop();
        seen.pop();
        majors.pop();
        added.pop();
        break;
      }
      case 6: {
        // a chain of tags: each tag after the first adds a level
        if (arg === 2 || arg === 3) throw new CBORDecodeError('cbor: data item of cbor type tag is not accepted by protocol: bignum', true);
        if (pos >= end) throw eof();
        if (b[pos]! >>> 5 === 6) {
          tagDepth++;
          if (depth + tagDepth > MAX_NESTED_LEVELS) throw syntax(`cbor: exceeded max nested level ${MAX_NESTED_LEVELS}`);
        }
        continue; // the content is read next as the same item
      }
      default:
        break;
    }
    tagDepth = 0;
    if (completed()) return pos;
  }

  /** opens an array or map: its depth is checked as Go checks it, tags before it included */
  function open(n: number, major: number): void {
    const add = tagDepth + 1;
    tagDepth = 0;
    depth += add;
    if (depth > MAX_NESTED_LEVELS) throw syntax(`cbor: exceeded max nested level ${MAX_NESTED_LEVELS}`);
    left.push(n);
    seen.push(0);
    majors.push(major);
    added.push(add);
  }

  /** an item is complete: counts it in its container, closes finished containers; true when the top item is done */
  function completed(): boolean {
    tagDepth = 0;
    for (;;) {
      const top = left.length - 1;
      if (top < 0) return true;
      if (left[top] === -1) {
        const s = ++seen[top]!;
        if (majors[top] === 4 ? s > MAX_ARRAY_ELEMENTS : s % 2 === 0 && s / 2 > MAX_MAP_PAIRS) {
          throw syntax(majors[top] === 4 ? `cbor: exceeded max number of elements ${MAX_ARRAY_ELEMENTS} for CBOR array` : `cbor: exceeded max number of key-value pairs ${MAX_MAP_PAIRS} for CBOR map`);
        }
        return false;
      }
      if (--left[top]! > 0) return false;
      depth -= added[top]!;
      left.pop();
      seen.pop();
      majors.pop();
      added.pop();
    }
  }
}

const f32dv = new DataView(new ArrayBuffer(8));

function checkFloat(f: number): void {
  if (f !== f) throw new CBORDecodeError('cbor: data item of cbor type primitives is not accepted by protocol: floating-point NaN', true);
  if (f === Infinity || f === -Infinity) throw new CBORDecodeError('cbor: data item of cbor type primitives is not accepted by protocol: floating-point infinity', true);
}

function wellFormedIndefString(b: Uint8Array, pos: number, major: number): number {
  const end = b.length;
  for (;;) {
    if (pos >= end) throw eof();
    const ib = b[pos]!;
    if (ib === 0xff) return pos + 1;
    const m = ib >>> 5;
    if (m !== major) throw syntax(`cbor: wrong element type ${MAJOR_NAMES[m]} for indefinite-length ${MAJOR_NAMES[major]}`);
    if ((ib & 0x1f) === 31) throw syntax(`cbor: indefinite-length ${MAJOR_NAMES[major]} chunk is not definite-length`);
    pos = wellFormedEnd(b, pos, 0);
  }
}

export function u64String(hi: number, lo: number): string {
  return ((BigInt(hi) << 32n) | BigInt(lo >>> 0)).toString();
}

export function eof(): CBORDecodeError {
  return new CBORDecodeError('unexpected EOF', true);
}

export function syntax(msg: string): CBORDecodeError {
  return new CBORDecodeError(msg, true);
}

/**
 * Checks that `b` holds exactly one well-formed data item (what fxamacker checks before it
 * decodes): an empty input is `EOF`, trailing bytes are "extraneous data".
 */
export function checkWellFormed(b: Uint8Array): void {
  if (b.length === 0) throw new CBORDecodeError('EOF', true);
  const end = wellFormedEnd(b, 0);
  if (end !== b.length) throw new CBORDecodeError(`cbor: ${b.length - end} bytes of extraneous data starting at index ${end}`, true);
}

// ---------------------------------------------------------------- sequences (RFC 8742)

/**
 * Splits a CBOR sequence into its data items, chunk by chunk: push() returns the items completed
 * so far (views of the input where possible). A malformed item is an error; an item longer than
 * maxItem bytes is an error.
 */
export class CBORSequenceSplitter {
  private pending: Uint8Array = new Uint8Array(0);

  constructor(private readonly maxItem = 256 * 1024 * 1024) {}

  push(chunk: Uint8Array): Uint8Array[] {
    const buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const out: Uint8Array[] = [];
    let p = 0;
    while (p < buf.length) {
      let e: number;
      try {
        e = wellFormedEnd(buf, p);
      } catch (err) {
        if (err instanceof CBORDecodeError && err.message === 'unexpected EOF') {
          if (buf.length - p > this.maxItem) throw new CBORDecodeError(`cbor: sequence item exceeds the limit of ${this.maxItem} bytes`);
          break;
        }
        throw err;
      }
      out.push(buf.subarray(p, e));
      p = e;
    }
    this.pending = p < buf.length ? Uint8Array.prototype.slice.call(buf, p) : new Uint8Array(0);
    return out;
  }

  /** bytes received but not yet part of a complete item */
  get buffered(): number {
    return this.pending.length;
  }
}
