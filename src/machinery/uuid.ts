// Random (version 4) UUIDs for object uids and audit IDs, as k8s.io/apimachinery's uuid.NewUUID.
//
// node:crypto's randomUUID draws from a cached pool of random bytes too, but builds its text from
// sixteen two-digit pieces: about 600 bytes of intermediate strings per UUID, and a write makes
// two (the uid and the audit ID). Here the text is written byte by byte into one scratch buffer
// and read out as a single 36-character string. The bytes come from the same source
// (crypto.randomFillSync), 256 UUIDs' worth at a time.
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 16 * 256;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let at = POOL_BYTES;
const text = Buffer.alloc(36, 0x2d); // the dashes stay where they are
/** the two hex digits of each byte value */
const HEX = new Uint8Array(512);
for (let i = 0; i < 256; i++) {
  const h = i.toString(16).padStart(2, '0');
  HEX[2 * i] = h.charCodeAt(0);
  HEX[2 * i + 1] = h.charCodeAt(1);
}
/** where the digits of each of the 16 bytes go in the text */
const AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/** a new random UUID, lower-case, in its 8-4-4-4-12 form */
export function newUUID(): string {
  if (at + 16 > POOL_BYTES) {
    randomFillSync(pool);
    at = 0;
  }
  for (let i = 0; i < 16; i++) {
    let b = pool[at + i]!;
    if (i === 6) b = (b & 0x0f) | 0x40; // version 4
    else if (i === 8) b = (b & 0x3f) | 0x80; // the RFC 4122 variant
    const o = AT[i]!;
    text[o] = HEX[2 * b]!;
    text[o + 1] = HEX[2 * b + 1]!;
  }
  at += 16;
  return text.toString('latin1', 0, 36);
}
