// Protobuf wire primitives for the Kubernetes codec: a writer that fills its buffer from the end
// towards the start, and a bounds-checked reader.
//
// Writing backwards is how gogo-protobuf's MarshalToSizedBuffer (the marshaller behind every
// Kubernetes type) works: a length-delimited field is written content first, so its length is
// known when the length prefix is written, and no size pass or memmove is needed. Fields are
// therefore written in descending field-number order, which yields the ascending order on the
// wire that Go produces.

/** Every error of the protobuf codec is a ProtobufError (malformed input, wrong types). */
export class ProtobufError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtobufError';
  }
}

/**
 * The type has no protobuf form (Kubernetes declares it `+protobuf=false`, e.g. meta.k8s.io Table).
 * Kubernetes answers such a request with 406 NotAcceptable; `code` and `reason` say so.
 */
export class ProtobufNotSupportedError extends ProtobufError {
  readonly code = 406;
  readonly reason = 'NotAcceptable';
  constructor(what: string) {
    super(`object ${what} does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message`);
    this.name = 'ProtobufNotSupportedError';
  }
}

type NodeBuffer = Buffer & {
  utf8Slice(start: number, end: number): string;
  utf8Write(s: string, offset: number, length: number): number;
  latin1Slice(start: number, end: number): string;
  base64Slice(start: number, end: number): string;
};

const TWO32 = 4294967296;

/** A writer that grows towards lower addresses. The written bytes are buf[pos .. buf.length). */
export class RevWriter {
  buf: NodeBuffer;
  pos: number;

  constructor(size = 8192) {
    this.buf = Buffer.allocUnsafeSlow(size) as NodeBuffer;
    this.pos = size;
  }

  /** bytes written so far; stays valid across growth, so it can mark where a field began */
  len(): number {
    return this.buf.length - this.pos;
  }

  reset(): void {
    this.pos = this.buf.length;
  }

  /** a copy of the written bytes */
  finish(): Uint8Array {
    return Uint8Array.prototype.slice.call(this.buf, this.pos, this.buf.length);
  }

  grow(need: number): void {
    const used = this.buf.length - this.pos;
    let size = this.buf.length * 2;
    while (size - used < need) size *= 2;
    const nb = Buffer.allocUnsafeSlow(size) as NodeBuffer;
    this.buf.copy(nb, size - used, this.pos);
    this.buf = nb;
    this.pos = size - used;
  }

  byte(b: number): void {
    if (this.pos < 1) this.grow(1);
    this.buf[--this.pos] = b;
  }

  /** a varint of an unsigned 32-bit value (lengths, tags, enum-like values) */
  u32(v: number): void {
    if (v < 0x80) {
      if (this.pos < 1) this.grow(1);
      this.buf[--this.pos] = v;
      return;
    }
    const n = v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
    if (this.pos < n) this.grow(n);
    let p = (this.pos -= n);
    const b = this.buf;
    while (v > 127) {
      b[p++] = (v & 127) | 128;
      v >>>= 7;
    }
    b[p] = v;
  }

  /** a varint of the 64-bit value hi:lo (both taken as unsigned 32-bit halves) */
  u64(lo: number, hi: number): void {
    hi >>>= 0;
    lo >>>= 0;
    if (hi === 0) {
      this.u32(lo);
      return;
    }
    const bits = 64 - Math.clz32(hi);
    const n = Math.ceil(bits / 7);
    if (this.pos < n) this.grow(n);
    let p = (this.pos -= n);
    const b = this.buf;
    while (hi !== 0) {
      b[p++] = (lo & 127) | 128;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    while (lo > 127) {
      b[p++] = (lo & 127) | 128;
      lo >>>= 7;
    }
    b[p] = lo;
  }

  /** proto int32: negative values are sign-extended to ten bytes, as Go's uint64(int32) does */
  i32(v: number): void {
    if (v >= 0) this.u32(v);
    else this.u64(v >>> 0, 0xffffffff);
  }

  /** proto int64 from a JS integer number (exact up to 2^53) */
  i64(v: number): void {
    if (v >= 0) {
      if (v < TWO32) this.u32(v);
      else this.u64(v % TWO32, Math.floor(v / TWO32));
      return;
    }
    const m = -v;
    let lo = m % TWO32 >>> 0;
    let hi = Math.floor(m / TWO32) >>> 0;
    // two's complement of hi:lo
    lo = ~lo >>> 0;
    hi = ~hi >>> 0;
    lo = (lo + 1) >>> 0;
    if (lo === 0) hi = (hi + 1) >>> 0;
    this.u64(lo, hi);
  }

  /** proto int64 from a bigint */
  i64big(v: bigint): void {
    const u = BigInt.asUintN(64, v);
    this.u64(Number(u & 0xffffffffn), Number(u >> 32n));
  }

  bool(v: boolean): void {
    if (this.pos < 1) this.grow(1);
    this.buf[--this.pos] = v ? 1 : 0;
  }

  dbl(v: number): void {
    if (this.pos < 8) this.grow(8);
    this.pos -= 8;
    this.buf.writeDoubleLE(v, this.pos);
  }

  /** the UTF-8 bytes of s, then their length */
  str(s: string): void {
    const n = s.length;
    if (n < 128) {
      // optimistic ASCII pass: one byte per UTF-16 unit
      if (this.pos < n + 2) this.grow(n + 2);
      const b = this.buf;
      const start = this.pos - n;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        b[start + i] = c;
      }
      if (i === n) {
        this.pos = start;
        if (n < 0x80) b[--this.pos] = n;
        else this.u32(n);
        return;
      }
    }
    const len = Buffer.byteLength(s, 'utf8');
    if (this.pos < len + 5) this.grow(len + 5);
    this.pos -= len;
    this.buf.utf8Write(s, this.pos, len);
    this.u32(len);
  }

  /** raw bytes, then their length */
  bytes(v: Uint8Array): void {
    const n = v.length;
    if (this.pos < n + 5) this.grow(n + 5);
    this.pos -= n;
    this.buf.set(v, this.pos);
    this.u32(n);
  }

  /** raw bytes without a length */
  raw(v: Uint8Array): void {
    const n = v.length;
    if (this.pos < n) this.grow(n);
    this.pos -= n;
    this.buf.set(v, this.pos);
  }
}

// Short ASCII strings repeat across objects (kinds, versions, phases, label keys, protocol
// names): a direct-mapped table hands back the same JS string for the same bytes, which is
// cheaper than building a new one and shares memory across a list or a watch cache.
const INTERN_MAX_LEN = 32;
const INTERN_SIZE = 4096;
const internTable: string[] = new Array<string>(INTERN_SIZE).fill('');

function intern(b: NodeBuffer, s: number, e: number): string {
  const n = e - s;
  let h = n;
  for (let i = s; i < e; i++) {
    const c = b[i];
    if (c >= 0x80) return b.utf8Slice(s, e);
    h = (Math.imul(h, 31) + c) | 0;
  }
  const slot = (h ^ (h >>> 15)) & (INTERN_SIZE - 1);
  const cand = internTable[slot];
  if (cand.length === n) {
    let i = 0;
    while (i < n && cand.charCodeAt(i) === b[s + i]) i++;
    if (i === n) return cand;
  }
  const str = b.latin1Slice(s, e);
  internTable[slot] = str;
  return str;
}

function truncated(): never {
  throw new ProtobufError('protobuf: unexpected end of data (truncated message)');
}

/** A bounds-checked protobuf reader. Every read either advances `pos` or throws. */
export class Reader {
  readonly buf: NodeBuffer;
  pos: number;
  /** the value of the high 32 bits of the last varint read by varint64() */
  hi = 0;

  constructor(bytes: Uint8Array, pos = 0) {
    this.buf = (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) as NodeBuffer;
    this.pos = pos;
  }

  /** a varint that must fit in 32 bits (tags, lengths); returns it unsigned */
  u32(): number {
    const b = this.buf;
    let p = this.pos;
    if (p >= b.length) truncated();
    let c = b[p++];
    if (c < 0x80) {
      this.pos = p;
      return c;
    }
    let v = c & 0x7f;
    for (let shift = 7; shift < 35; shift += 7) {
      if (p >= b.length) truncated();
      c = b[p++];
      if (shift === 28) {
        if (c > 0x0f) {
          // a tag or length must fit in 32 bits; varints of 64-bit values go through varint64
          this.pos = p - 1;
          throw new ProtobufError('protobuf: varint overflows 32 bits where a tag or length was expected');
        }
        v = (v | (c << 28)) >>> 0;
        this.pos = p;
        return v;
      }
      v |= (c & 0x7f) << shift;
      if (c < 0x80) {
        this.pos = p;
        return v >>> 0;
      }
    }
    /* istanbul ignore next */
    throw new ProtobufError('protobuf: bad varint');
  }

  /** reads a varint of up to 64 bits; returns the low 32 bits unsigned and leaves the high 32 bits in this.hi */
  varint64(): number {
    const b = this.buf;
    let p = this.pos;
    let lo = 0;
    let hi = 0;
    let c = 0;
    let i = 0;
    for (; i < 4; i++) {
      if (p >= b.length) truncated();
      c = b[p++];
      lo |= (c & 0x7f) << (i * 7);
      if (c < 0x80) {
        this.pos = p;
        this.hi = 0;
        return lo >>> 0;
      }
    }
    // 5th byte: 4 bits into lo, 3 bits into hi
    if (p >= b.length) truncated();
    c = b[p++];
    lo |= (c & 0x0f) << 28;
    hi = (c & 0x7f) >> 4;
    if (c >= 0x80) {
      for (i = 0; i < 5; i++) {
        if (p >= b.length) truncated();
        c = b[p++];
        hi |= (c & 0x7f) << (i * 7 + 3);
        if (c < 0x80) break;
      }
      if (c >= 0x80) {
        this.pos = p;
        throw new ProtobufError('protobuf: varint longer than 10 bytes');
      }
    }
    this.pos = p;
    this.hi = hi >>> 0;
    return lo >>> 0;
  }

  /** proto int32: the low 32 bits of the varint, signed */
  i32(): number {
    return this.varint64() | 0;
  }

  /** proto int64 as a JS number (exact within ±2^53) */
  i64(): number {
    const lo = this.varint64();
    return (this.hi | 0) * TWO32 + lo;
  }

  /** proto int64 exactly, as objects hold it (codec/int64.ts): a number within ±(2^53 - 1), else a bigint */
  i64exact(): number | bigint {
    const lo = this.varint64();
    const v = (this.hi | 0) * TWO32 + lo;
    if (v <= Number.MAX_SAFE_INTEGER && v >= -Number.MAX_SAFE_INTEGER) return v;
    return BigInt.asIntN(64, (BigInt(this.hi) << 32n) | BigInt(lo));
  }

  /** proto int64 as a bigint (exact) */
  i64big(): bigint {
    const lo = this.varint64();
    return BigInt.asIntN(64, (BigInt(this.hi) << 32n) | BigInt(lo));
  }

  bool(): boolean {
    const lo = this.varint64();
    return lo !== 0 || this.hi !== 0;
  }

  dbl(): number {
    if (this.pos + 8 > this.buf.length) truncated();
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  /** reads a length prefix and checks that the bytes it announces lie within `end` */
  len(end: number): number {
    const l = this.u32();
    if (l > end - this.pos) {
      if (this.pos + l > this.buf.length) truncated();
      throw new ProtobufError('protobuf: a length-delimited field runs past the end of its enclosing message');
    }
    return l;
  }

  /** reads a length prefix; returns the end offset of the length-delimited bytes that follow */
  sub(end: number): number {
    const l = this.len(end);
    return this.pos + l;
  }

  str(end: number): string {
    const l = this.len(end);
    const s = this.pos;
    const e = s + l;
    this.pos = e;
    if (l === 0) return '';
    if (l <= INTERN_MAX_LEN) return intern(this.buf, s, e);
    return this.buf.utf8Slice(s, e);
  }

  /** a view (no copy) of the bytes of a length-delimited field */
  bytesView(end: number): Uint8Array {
    const l = this.len(end);
    const s = this.pos;
    this.pos = s + l;
    return this.buf.subarray(s, s + l);
  }

  /** base64 (standard alphabet, padded, as Go's encoding/json writes []byte) of a bytes field */
  base64(end: number): string {
    const l = this.len(end);
    const s = this.pos;
    this.pos = s + l;
    return l === 0 ? '' : this.buf.base64Slice(s, s + l);
  }

  /** skips the value of a field whose tag was just read */
  skip(tag: number, end: number): void {
    const wt = tag & 7;
    switch (wt) {
      case 0:
        this.varint64();
        return;
      case 1:
        if (this.pos + 8 > end) truncated();
        this.pos += 8;
        return;
      case 2: {
        const l = this.len(end);
        this.pos += l;
        return;
      }
      case 5:
        if (this.pos + 4 > end) truncated();
        this.pos += 4;
        return;
      case 3: {
        // a (deprecated) group: skip fields until the matching end-group tag
        const field = tag >>> 3;
        for (;;) {
          if (this.pos >= end) truncated();
          const t = this.u32();
          if ((t & 7) === 4) {
            if (t >>> 3 !== field) throw new ProtobufError(`protobuf: end-group tag for field ${t >>> 3} inside group ${field}`);
            return;
          }
          this.skip(t, end);
        }
      }
      case 4:
        throw new ProtobufError(`protobuf: unexpected end-group tag (field ${tag >>> 3})`);
      default:
        throw new ProtobufError(`protobuf: illegal wire type ${wt} (field ${tag >>> 3})`);
    }
  }

  /** the end of a message must fall exactly on the announced boundary */
  checkEnd(end: number, what: string): void {
    if (this.pos !== end) {
      if (this.pos > this.buf.length || end > this.buf.length) truncated();
      throw new ProtobufError(`protobuf: ${what}: a field runs past the end of the message`);
    }
  }
}

/** bytes needed for the varint of a non-negative integer below 2^53 */
export function varintSize(v: number): number {
  if (v < 0x80) return 1;
  if (v < 0x4000) return 2;
  if (v < 0x200000) return 3;
  if (v < 0x10000000) return 4;
  let n = 4;
  v = Math.floor(v / 0x10000000);
  while (v > 0) {
    n++;
    v = Math.floor(v / 128);
  }
  return n;
}

/** writes the varint of v (non-negative, below 2^53) at out[off]; returns the new offset */
export function putVarint(out: Uint8Array, off: number, v: number): number {
  while (v >= 0x80) {
    out[off++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  out[off++] = v;
  return off;
}

const utf8 = new TextEncoder();
export function utf8Bytes(s: string): Uint8Array {
  return utf8.encode(s);
}

const utf8d = new TextDecoder();
export function utf8String(b: Uint8Array): string {
  return utf8d.decode(b);
}
