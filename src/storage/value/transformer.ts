// Value transformers: what turns an object's bytes into the bytes kept in storage and back
// (encryption at rest), in the model of k8s.io/apiserver/pkg/storage/value.
//
// A transformer is synchronous: the watch cache decodes a commit's events in the call that
// delivers them. Every stored value of an encrypted resource carries a prefix that names the
// provider and key that wrote it (`k8s:enc:aescbc:v1:<key name>:`); a read tries the
// providers whose prefix matches, in the configured order, so old data stays readable while a
// new key is the first one (the one that writes). Data without a prefix is read by the identity
// provider, when it is one of the configured providers.

import { aggregate } from '../../machinery/errors.js';

/** A failure to turn stored bytes back into the object's bytes (wrong key, tampered data, unknown prefix). */
export class TransformError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransformError';
  }
}

export interface FromStorage {
  data: Uint8Array;
  /** the value was not written by the first (writing) transformer: a rewrite would re-encrypt it */
  stale: boolean;
}

export interface Transformer {
  /**
   * The stored bytes (without the prefix that selected this transformer) back to plain bytes.
   * `authenticatedData` identifies where the value is stored (the storage key): AEAD providers
   * refuse a value copied from another key. Throws TransformError.
   */
  fromStorage(data: Uint8Array, authenticatedData: Uint8Array): FromStorage;
  /** plain bytes to the stored form (without the prefix the caller adds) */
  toStorage(data: Uint8Array, authenticatedData: Uint8Array): Uint8Array;
}

export interface PrefixTransformer {
  /** the bytes every value this transformer writes starts with (empty for identity) */
  prefix: Uint8Array;
  transformer: Transformer;
}

const ENCRYPTED_PREFIX = Buffer.from('k8s:enc:');

function hasPrefix(data: Uint8Array, prefix: Uint8Array): boolean {
  if (data.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (data[i] !== prefix[i]) return false;
  return true;
}

/**
 * The identity provider: values are stored as they are. Reading a value that carries the
 * encrypted-data prefix fails, so that a later provider gets to read it (the way out of
 * encryption: identity first, the old provider after it).
 */
export const identityTransformer: Transformer = {
  fromStorage(data) {
    if (hasPrefix(data, ENCRYPTED_PREFIX)) throw new TransformError('identity transformer tried to read encrypted data');
    return { data, stale: false };
  },
  toStorage(data) {
    return data;
  },
};

/**
 * Several transformers told apart by prefix. The first one writes; a read is tried by each one
 * whose prefix matches, in order (two providers of one kind share a prefix, and a failure of the
 * first must not hide the second). When none matched, `noMatch` is the error; when some matched
 * and all failed, their errors (Kubernetes' aggregate: one as itself, several as `[a, b]`).
 */
export class PrefixTransformers implements Transformer {
  constructor(
    private readonly noMatch: string,
    private readonly transformers: PrefixTransformer[],
  ) {
    if (transformers.length === 0) throw new Error('at least one transformer is required');
  }

  fromStorage(data: Uint8Array, authenticatedData: Uint8Array): FromStorage {
    const errs: string[] = [];
    for (let i = 0; i < this.transformers.length; i++) {
      const t = this.transformers[i]!;
      if (!hasPrefix(data, t.prefix)) continue;
      let out: FromStorage;
      try {
        out = t.transformer.fromStorage(data.subarray(t.prefix.length), authenticatedData);
      } catch (e) {
        // identity refusing encrypted data leaves the value to the next provider
        if (t.prefix.length === 0) continue;
        errs.push(e instanceof Error ? e.message : String(e));
        continue;
      }
      return { data: out.data, stale: out.stale || i !== 0 };
    }
    if (errs.length > 0) throw new TransformError(aggregate(errs));
    throw new TransformError(this.noMatch);
  }

  toStorage(data: Uint8Array, authenticatedData: Uint8Array): Uint8Array {
    const t = this.transformers[0]!;
    const body = t.transformer.toStorage(data, authenticatedData);
    if (t.prefix.length === 0) return body;
    const out = Buffer.allocUnsafe(t.prefix.length + body.length);
    out.set(t.prefix, 0);
    out.set(body, t.prefix.length);
    return out;
  }
}
