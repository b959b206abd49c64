// CBOR read with cborg, a decoder of its own (not Keelson's cbor-x codec), for the tests of the
// CBOR representation: self-described CBOR (tag 55799) with Go's text as byte strings, as
// k8s.io/apimachinery writes it.
import assert from 'node:assert/strict';

export const cborgP = import('cborg');
const cborTags = (): any[] => Object.assign([], { 55799: (d: any) => d(), 22: (d: any) => d() });
function cborToJS(v: any): any {
  if (v instanceof Map) return Object.fromEntries([...v.entries()].map(([k, x]) => [k instanceof Uint8Array ? Buffer.from(k).toString('utf8') : String(k), cborToJS(x)]));
  if (Array.isArray(v)) return v.map(cborToJS);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  return v;
}
export async function cborDecode(b: Buffer): Promise<any> {
  const { decode } = await cborgP;
  assert.deepEqual([...b.subarray(0, 3)], [0xd9, 0xd9, 0xf7], 'self-described CBOR');
  return cborToJS(decode(b, { tags: cborTags(), useMaps: true } as any));
}
export async function cborDecodeSequence(b: Buffer): Promise<any[]> {
  const { decodeFirst } = (await cborgP) as any;
  const out: any[] = [];
  let rest: Uint8Array = b;
  while (rest.length) {
    try {
      const [v, r] = decodeFirst(rest, { tags: cborTags(), useMaps: true });
      out.push(cborToJS(v));
      rest = r;
    } catch {
      break; // an incomplete last item
    }
  }
  return out;
}
