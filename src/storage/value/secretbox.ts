// The secretbox provider of encryption at rest: NaCl's secretbox (XSalsa20 and Poly1305) with a
// 32-byte key, stored as Kubernetes stores it: a random 24-byte nonce, then the sealed box
// (the 16-byte Poly1305 tag, then the ciphertext). No authenticated data.
import { randomFillSync } from 'node:crypto';
import { xsalsa20poly1305 } from '@noble/ciphers/salsa.js';
import { TransformError, type Transformer } from './transformer.js';

const NONCE = 24;
const OVERHEAD = 16;

/** `fixedNonce` only for tests (fixed vectors), random otherwise */
export function secretboxTransformer(key: Uint8Array, fixedNonce?: Uint8Array): Transformer {
  if (key.length !== 32) throw new Error(`expected key size 32 for secretbox provider, got ${key.length}`);
  const k = Uint8Array.from(key);
  return {
    fromStorage(data) {
      if (data.length < NONCE + OVERHEAD) throw new TransformError('the stored data was shorter than the required size');
      const nonce = Uint8Array.from(data.subarray(0, NONCE));
      try {
        const out = xsalsa20poly1305(k, nonce).decrypt(Uint8Array.from(data.subarray(NONCE)));
        return { data: out, stale: false };
      } catch {
        // Kubernetes' words for a box that does not open
        throw new TransformError('output array was not large enough for encryption');
      }
    },
    toStorage(data) {
      const nonce = fixedNonce ? Uint8Array.from(fixedNonce) : new Uint8Array(randomFillSync(Buffer.allocUnsafe(NONCE)));
      const sealed = xsalsa20poly1305(k, nonce).encrypt(data instanceof Buffer ? Uint8Array.from(data) : data);
      const out = Buffer.allocUnsafe(NONCE + sealed.length);
      out.set(nonce, 0);
      out.set(sealed, NONCE);
      return out;
    },
  };
}
