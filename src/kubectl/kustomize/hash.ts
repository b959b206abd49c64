// The name suffix kustomize gives generated ConfigMaps and Secrets (kustomize api/hasher): the
// sha256 of a small JSON document (encoding/json: keys sorted, HTML characters escaped) holding
// the kind, the name and the data, of which the first ten hex digits are kept with five of them
// replaced by letters, so that the suffix never reads as a number or a word of hex digits alone.

import { createHash } from 'node:crypto';
import { jsonMarshal } from '../gofmt.js';

type Obj = Record<string, any>;

const SUBSTITUTE: Record<string, string> = { '0': 'g', '1': 'h', '3': 'k', a: 'm', e: 't' };

/** The ten-character suffix for a sha256 hex digest. */
export function encodeHashSuffix(hex: string): string {
  if (hex.length < 10) throw new Error('input length must be at least 10');
  let out = '';
  for (const ch of hex.slice(0, 10)) out += SUBSTITUTE[ch] ?? ch;
  return out;
}

function sha256Hex(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex');
}

/**
 * A field as the hasher sees it: missing is "", a map stays a map, any other non-scalar that is
 * not a map decodes to a nil map (null), a scalar is its text.
 */
function fieldValue(v: unknown): unknown {
  if (v === undefined) return '';
  if (v === null) return '';
  if (Array.isArray(v)) return null;
  if (typeof v === 'object') return v;
  return String(v);
}

const isMap = (v: unknown): boolean => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The name kustomize's hasher puts in the document: it looks the name up as one field called
 * `metadata/name`, which no object has, so the name is always empty (and two generated objects
 * with the same data get the same suffix).
 */
const NAME = '';

/** The hash suffix kustomize computes for an object (ConfigMap and Secret by their data). */
export function hashObject(o: Obj): string {
  let doc: Obj;
  if (o.kind === 'ConfigMap') {
    doc = { kind: 'ConfigMap', name: NAME, data: fieldValue(o.data) };
    if (isMap(o.binaryData)) doc.binaryData = o.binaryData;
  } else if (o.kind === 'Secret') {
    doc = { kind: 'Secret', type: fieldValue(o.type), name: NAME, data: fieldValue(o.data) };
    if (isMap(o.stringData)) doc.stringData = o.stringData;
  } else {
    doc = o;
  }
  return encodeHashSuffix(sha256Hex(jsonMarshal(doc)));
}
