// Small JSON helpers shared by the OpenAPI builders.
import { createHash } from 'node:crypto';

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

/** Byte-order comparison of strings, as Go's sort.Strings orders map keys in JSON output. */
export function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A copy of `o` with its keys in byte order (Go marshals maps that way). */
export function sortedObject<T>(o: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const k of Object.keys(o).sort(byteOrder)) out[k] = o[k];
  return out;
}

/** Deep equality of JSON values (objects compared by key set, order ignored). */
export function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return false;
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as Json[];
    if (a.length !== bb.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], bb[i])) return false;
    return true;
  }
  const ao = a as JsonObject;
  const bo = b as JsonObject;
  const ak = Object.keys(ao);
  if (ak.length !== Object.keys(bo).length) return false;
  for (const k of ak) if (!(k in bo) || !jsonEqual(ao[k], bo[k])) return false;
  return true;
}

/** SHA-512 of the bytes, in uppercase hex: the hash and ETag Kubernetes gives OpenAPI documents. */
export function openapiHash(body: Uint8Array): string {
  return createHash('sha512').update(body).digest('hex').toUpperCase();
}
