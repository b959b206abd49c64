// Random (version 4) UUIDs for object uids and audit IDs, as k8s.io/apimachinery's uuid.NewUUID.
//
// node:crypto's randomUUID draws from a cached pool of random bytes too, but builds its text from
// sixteen two-digit pieces: about 600 bytes of intermediate strings per UUID, and a write makes
// two (the uid and the audit ID). Here the 36 character codes go to one String.fromCharCode call,
// which makes the string directly (about half the time of writing them into a scratch buffer and
// reading that out with toString). The bytes come from the same source (crypto.randomFillSync),
// 256 UUIDs' worth at a time.
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 16 * 256;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let at = POOL_BYTES;
/** the character codes of the two hex digits of each byte value: HI[b] and LO[b] */
const HI = new Uint8Array(256);
const LO = new Uint8Array(256);
for (let i = 0; i < 256; i++) {
  const h = i.toString(16).padStart(2, '0');
  HI[i] = h.charCodeAt(0);
  LO[i] = h.charCodeAt(1);
}
const DASH = 0x2d;

/** a new random UUID, lower-case, in its 8-4-4-4-12 form */
export function newUUID(): string {
  if (at + 16 > POOL_BYTES) {
    randomFillSync(pool);
    at = 0;
  }
  const p = pool;
  const a = at;
  at += 16;
  const b0 = p[a]!, b1 = p[a + 1]!, b2 = p[a + 2]!, b3 = p[a + 3]!, b4 = p[a + 4]!, b5 = p[a + 5]!;
  const b6 = (p[a + 6]! & 0x0f) | 0x40; // version 4
  const b7 = p[a + 7]!;
  const b8 = (p[a + 8]! & 0x3f) | 0x80; // the RFC 4122 variant
  const b9 = p[a + 9]!, b10 = p[a + 10]!, b11 = p[a + 11]!, b12 = p[a + 12]!, b13 = p[a + 13]!, b14 = p[a + 14]!, b15 = p[a + 15]!;
  // prettier-ignore
  return String.fromCharCode(
    HI[b0]!, LO[b0]!, HI[b1]!, LO[b1]!, HI[b2]!, LO[b2]!, HI[b3]!, LO[b3]!, DASH,
    HI[b4]!, LO[b4]!, HI[b5]!, LO[b5]!, DASH,
    HI[b6]!, LO[b6]!, HI[b7]!, LO[b7]!, DASH,
    HI[b8]!, LO[b8]!, HI[b9]!, LO[b9]!, DASH,
    HI[b10]!, LO[b10]!, HI[b11]!, LO[b11]!, HI[b12]!, LO[b12]!, HI[b13]!, LO[b13]!, HI[b14]!, LO[b14]!, HI[b15]!, LO[b15]!,
  );
}
