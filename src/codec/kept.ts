// Buffers for bytes that are kept for long: the serialized forms a watch-cache entry holds (its
// JSON, Protobuf, CBOR), which live as long as the object is current.
//
// Buffer.allocUnsafe hands out slices of a shared 8 KiB pool, and a slice keeps its whole pool
// alive. A create allocates its kept JSON from that pool beside the bytes of its request and its
// answer, which are garbage a moment later; because the kept slice holds the pool, every pool a
// create touched was kept whole: ~3.3 KiB of memory per 1 KiB ConfigMap created (bench/HISTORY.md,
// 2026-12-04). Kept bytes come from slabs of their own here, packed one after another, so a
// slab holds nothing but kept bytes; larger ones get a buffer each. (No library does this: it is a
// few lines around Node's own Buffer.)

/** the size of one slab: small, so that a slab whose objects were mostly replaced holds little */
const SLAB = 16 * 1024;
/** bytes longer than this get a buffer of their own (the slab's unused tail stays below it) */
const MAX_SLICE = 2 * 1024;

let slab: Buffer = Buffer.allocUnsafeSlow(SLAB);
let used = 0;

/** an uninitialized buffer of `n` bytes for bytes that will be kept */
export function keptBuffer(n: number): Buffer {
  if (n > MAX_SLICE) return Buffer.allocUnsafeSlow(n);
  if (used + n > SLAB) {
    slab = Buffer.allocUnsafeSlow(SLAB);
    used = 0;
  }
  const b = slab.subarray(used, used + n);
  used = (used + n + 7) & ~7; // (8-byte aligned, as the pool aligns its slices)
  return b;
}

/** the UTF-8 bytes of a string, in a kept buffer */
export function keptUTF8(s: string): Buffer {
  // (a string of ASCII only, the usual JSON, is as long in bytes as in characters: one pass to write it)
  const n = Buffer.byteLength(s);
  const b = keptBuffer(n);
  b.write(s, 0, n, n === s.length ? 'latin1' : 'utf8');
  return b;
}

/** a kept copy of bytes made elsewhere (an encoder's own buffer) */
export function keptCopy(bytes: Uint8Array): Buffer {
  const b = keptBuffer(bytes.length);
  b.set(bytes, 0);
  return b;
}

/** `bytes` to keep: as they are when they fill a buffer of their own, else a kept copy (a pool slice would keep its pool) */
export function kept(bytes: Uint8Array): Uint8Array {
  return bytes.byteLength === bytes.buffer.byteLength ? bytes : keptCopy(bytes);
}
