// AES providers of encryption at rest, with Kubernetes' on-disk layouts (so a store written by
// one can be read by the other):
// - aescbc: a random 16-byte IV, then the AES-CBC ciphertext of the PKCS#7-padded value;
// - aesgcm: a random 12-byte nonce, then the AES-GCM ciphertext with its 16-byte tag; the
//   storage key is the authenticated data, so a value moved to another key does not decrypt.
// Keys are 16, 24 or 32 bytes (AES-128, -192, -256).
import { createCipheriv, createDecipheriv, randomFillSync } from 'node:crypto';
import { TransformError, type Transformer } from './transformer.js';

const BLOCK = 16;
const GCM_NONCE = 12;
const GCM_TAG = 16;

function algorithm(key: Uint8Array, mode: 'cbc' | 'gcm'): string {
  if (key.length !== 16 && key.length !== 24 && key.length !== 32) throw new Error(`crypto/aes: invalid key size ${key.length}`);
  return `aes-${key.length * 8}-${mode}`;
}

/** AES-CBC with PKCS#7 padding; `iv` only for tests (fixed vectors), random otherwise */
export function aesCBCTransformer(key: Uint8Array, fixedIV?: Uint8Array): Transformer {
  const alg = algorithm(key, 'cbc');
  const k = Buffer.from(key);
  return {
    fromStorage(data) {
      if (data.length < BLOCK) throw new TransformError('the stored data was shorter than the required size');
      const iv = data.subarray(0, BLOCK);
      const body = data.subarray(BLOCK);
      if (body.length % BLOCK !== 0) throw new TransformError('the stored data is not a multiple of the block size');
      if (body.length === 0) throw new TransformError('invalid PKCS7 data (empty or not padded)');
      const d = createDecipheriv(alg, k, iv);
      d.setAutoPadding(false);
      const out = Buffer.concat([d.update(body), d.final()]);
      const pad = out[out.length - 1]!;
      if (pad === 0 || pad > out.length) throw new TransformError('invalid PKCS7 data (empty or not padded)');
      for (let i = out.length - pad; i < out.length; i++) if (out[i] !== pad) throw new TransformError('invalid padding on input');
      return { data: out.subarray(0, out.length - pad), stale: false };
    },
    toStorage(data) {
      const pad = BLOCK - (data.length % BLOCK);
      const iv = fixedIV ? Buffer.from(fixedIV) : randomFillSync(Buffer.allocUnsafe(BLOCK));
      const padded = Buffer.allocUnsafe(data.length + pad);
      padded.set(data, 0);
      padded.fill(pad, data.length);
      const c = createCipheriv(alg, k, iv);
      c.setAutoPadding(false);
      return Buffer.concat([iv, c.update(padded), c.final()]);
    },
  };
}

/** AES-GCM with a random 96-bit nonce; the authenticated data is the storage key */
export function aesGCMTransformer(key: Uint8Array, fixedNonce?: Uint8Array): Transformer {
  const alg = algorithm(key, 'gcm');
  const k = Buffer.from(key);
  return {
    fromStorage(data, authenticatedData) {
      if (data.length < GCM_NONCE) throw new TransformError('the stored data was shorter than the required size');
      if (data.length < GCM_NONCE + GCM_TAG) throw new TransformError('cipher: message authentication failed');
      const nonce = data.subarray(0, GCM_NONCE);
      const tag = data.subarray(data.length - GCM_TAG);
      const body = data.subarray(GCM_NONCE, data.length - GCM_TAG);
      const d = createDecipheriv(alg as 'aes-256-gcm', k, nonce, { authTagLength: GCM_TAG });
      d.setAAD(authenticatedData);
      d.setAuthTag(tag);
      try {
        return { data: Buffer.concat([d.update(body), d.final()]), stale: false };
      } catch {
        throw new TransformError('cipher: message authentication failed');
      }
    },
    toStorage(data, authenticatedData) {
      const nonce = fixedNonce ? Buffer.from(fixedNonce) : randomFillSync(Buffer.allocUnsafe(GCM_NONCE));
      const c = createCipheriv(alg as 'aes-256-gcm', k, nonce, { authTagLength: GCM_TAG });
      c.setAAD(authenticatedData);
      const body = Buffer.concat([c.update(data), c.final()]);
      return Buffer.concat([nonce, body, c.getAuthTag()]);
    },
  };
}
