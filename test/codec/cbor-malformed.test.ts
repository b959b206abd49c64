// Malformed and unacceptable CBOR: every input Kubernetes' decoder (fxamacker/cbor with the
// options of apimachinery's internal/modes) rejects is rejected here with its message, as a
// CBORDecodeError (400 BadRequest), in the phase where Kubernetes finds it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CBORDecodeError, decodeCBOR, decodeCBORObject, decodeCBORValue, encodeCBOR } from '../../src/codec/cbor.js';
import { FIXTURES, TYPES } from './cbor-fixtures.test.js';

const CONFIGMAP = 'io.k8s.api.core.v1.ConfigMap';
const t = (s: string): string => Buffer.from(s, 'utf8').toString('hex');
const hx = (...parts: string[]): string => parts.join('').replace(/\s+/g, '');
const bytes = (h: string): Buffer => Buffer.from(h.replace(/\s+/g, ''), 'hex');

/** asserts a CBORDecodeError with this message (and phase, when given) */
function rejects(fn: () => unknown, message: string | RegExp, phase?: 'gvk' | 'decode'): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof CBORDecodeError, `not a CBORDecodeError: ${String(e)}`);
    if (typeof message === 'string') assert.equal(e.message, message);
    else assert.match(e.message, message);
    if (phase) assert.equal(e.phase, phase, `phase of ${e.message}`);
    assert.equal(e.code, 400);
    return true;
  });
}

/** a ConfigMap body around one value at data["k"] (kind first, so apiVersion and kind are read fine) */
const cmWith = (value: string): Buffer => bytes(hx('a2', '44', t('kind'), '49', t('ConfigMap'), '44', t('data'), 'a1', '41', t('k'), value));
const anyOf = (h: string): unknown => decodeCBORValue(bytes(h));

test('truncated: every strict prefix of a Pod body is rejected, as unexpected EOF while reading the kind', () => {
  const body = encodeCBOR(TYPES.pod, FIXTURES.pod());
  for (let n = 1; n < body.length; n++) {
    rejects(() => decodeCBOR(TYPES.pod, body.subarray(0, n)), 'unexpected EOF', 'gvk');
  }
  rejects(() => decodeCBOR(TYPES.pod, body.subarray(0, 0)), 'EOF', 'gvk');
  rejects(() => decodeCBORValue(new Uint8Array(0)), 'EOF');
});

test('truncated: inside heads, strings, indefinite items', () => {
  for (const h of ['19 01', '1a 000000', '1b 00000000000000', '43 6162', '5f 41 61', '9f 01', 'bf 41 61 01', 'a1 41 61', 'd9 d9', 'd9d9f7', 'c6', 'f9 3c', 'fa 3f80 00', 'fb 3ff0 0000 0000 00', 'f8']) {
    rejects(() => anyOf(h), 'unexpected EOF');
  }
});

test('extraneous data after the data item', () => {
  rejects(() => anyOf('a0 a0'), 'cbor: 1 bytes of extraneous data starting at index 1');
  const body = Buffer.concat([encodeCBOR(CONFIGMAP, { kind: 'ConfigMap' }), bytes('0102')]);
  rejects(() => decodeCBOR(CONFIGMAP, body), `cbor: 2 bytes of extraneous data starting at index ${body.length - 2}`, 'gvk');
});

test('wrong tags: bignums refused, time tags with the wrong content', () => {
  rejects(() => anyOf('c2 49 010000000000000000'), 'cbor: data item of cbor type tag is not accepted by protocol: bignum');
  rejects(() => anyOf('c3 41 01'), 'cbor: data item of cbor type tag is not accepted by protocol: bignum');
  rejects(() => decodeCBOR(CONFIGMAP, cmWith('c2 41 01')), 'cbor: data item of cbor type tag is not accepted by protocol: bignum', 'gvk');
  rejects(() => anyOf(hx('c0', '44', t('2024'))), 'cbor: tag number 0 must be followed by text string, got byte string');
  rejects(() => anyOf(hx('c1', '61', t('1'))), 'cbor: tag number 1 must be followed by integer or floating-point number, got UTF-8 text string');
  rejects(() => anyOf('c1 f5'), 'cbor: tag number 1 must be followed by integer or floating-point number, got primitives');
  rejects(() => anyOf('df'), 'cbor: invalid additional information 31 for type tag');
});

test('duplicate keys: at the top level while reading the kind; below it while decoding', () => {
  const top = bytes(hx('a3', '44', t('kind'), '49', t('ConfigMap'), '48', t('metadata'), 'a0', '64', t('kind'), '49', t('ConfigMap')));
  rejects(() => decodeCBOR(CONFIGMAP, top), 'cbor: found duplicate map key "kind" at map element index 2', 'gvk');
  // a byte-string key and a text-string key with the same content are the same key
  rejects(() => decodeCBOR(CONFIGMAP, bytes(hx('a2', '44', t('data'), 'a0', '64', t('data'), 'a0'))), 'cbor: found duplicate map key "data" at map element index 1', 'gvk');
  const nested = bytes(hx('a2', '44', t('kind'), '49', t('ConfigMap'), '48', t('metadata'), 'a2', '44', t('name'), '41', t('a'), '44', t('name'), '41', t('b')));
  rejects(() => decodeCBOR(CONFIGMAP, nested), 'cbor: found duplicate map key "name" at map element index 1', 'decode');
  const inMap = bytes(hx('a2', '44', t('kind'), '49', t('ConfigMap'), '44', t('data'), 'a3', '41', t('a'), '40', '41', t('b'), '40', '61', t('a'), '40'));
  rejects(() => decodeCBOR(CONFIGMAP, inMap), 'cbor: found duplicate map key "a" at map element index 2', 'decode');
  rejects(() => anyOf(hx('bf', '41', t('x'), '01', '41', t('x'), '02', 'ff')), 'cbor: found duplicate map key "x" at map element index 1');
  rejects(() => anyOf(hx('a1', '41', t('o'), 'a2', '41', t('"'), '01', '41', t('"'), '02')), 'cbor: found duplicate map key "\\"" at map element index 1');
  // in a struct, integer keys are unknown fields, and may not repeat either
  rejects(() => decodeCBOR(CONFIGMAP, bytes(hx('a3', '44', t('kind'), '49', t('ConfigMap'), '01', '01', '01', '02'))), 'cbor: found duplicate map key 1 at map element index 2', 'gvk');
  // a duplicate inside the value of an unknown field is never looked at (Go skips the value)
  assert.deepEqual(decodeCBOR(CONFIGMAP, bytes(hx('a2', '44', t('kind'), '49', t('ConfigMap'), '41', t('z'), 'a2', '41', t('a'), '01', '41', t('a'), '01'))), { kind: 'ConfigMap', z: null });
});

test('invalid UTF-8 in text strings: values, keys, chunks; byte strings are not checked', () => {
  rejects(() => anyOf('62 c328'), 'cbor: invalid UTF-8 string');
  rejects(() => anyOf('63 eda080'), 'cbor: invalid UTF-8 string'); // an encoded surrogate
  rejects(() => anyOf('7f 61 61 61 ff ff'), 'cbor: invalid UTF-8 string');
  rejects(() => decodeCBOR(CONFIGMAP, cmWith('62 c328')), 'cbor: invalid UTF-8 string', 'decode');
  rejects(() => decodeCBOR(CONFIGMAP, bytes(hx('a1', '62', 'c328', '01'))), 'cbor: invalid UTF-8 string', 'gvk');
  rejects(() => decodeCBOR(CONFIGMAP, bytes(hx('a1', '44', t('kind'), '62', 'c328'))), 'cbor: invalid UTF-8 string', 'gvk');
  assert.deepEqual(decodeCBOR(CONFIGMAP, cmWith('42 c328')), { kind: 'ConfigMap', data: { k: '\ufffd(' } });
  // in the value of an unknown field, never decoded
  assert.deepEqual(decodeCBOR(CONFIGMAP, bytes(hx('a1', '41', t('z'), '62', 'c328'))), { z: null });
});

test('NaN and infinities in any width; the reserved simple values', () => {
  for (const h of ['f9 7e00', 'f9 7c01', 'fa 7fc00000', 'fb 7ff8000000000000']) rejects(() => anyOf(h), 'cbor: data item of cbor type primitives is not accepted by protocol: floating-point NaN');
  for (const h of ['f9 7c00', 'f9 fc00', 'fa 7f800000', 'fb fff0000000000000']) rejects(() => anyOf(h), 'cbor: data item of cbor type primitives is not accepted by protocol: floating-point infinity');
  // well-formedness comes first: a NaN anywhere, even in an unknown field, fails reading the kind
  rejects(() => decodeCBOR(CONFIGMAP, bytes(hx('a1', '41', t('z'), 'f9 7e00'))), /floating-point NaN/, 'gvk');
  rejects(() => anyOf('f7'), 'cbor: data item of cbor type primitives is not accepted by protocol: simple value 23 is not recognized');
  rejects(() => anyOf('e0'), 'cbor: data item of cbor type primitives is not accepted by protocol: simple value 0 is not recognized');
  rejects(() => anyOf('f3'), 'cbor: data item of cbor type primitives is not accepted by protocol: simple value 19 is not recognized');
  rejects(() => anyOf('f8 ff'), 'cbor: data item of cbor type primitives is not accepted by protocol: simple value 255 is not recognized');
  rejects(() => anyOf('f8 05'), 'cbor: invalid simple value 5 for type primitives');
  rejects(() => decodeCBOR(CONFIGMAP, cmWith('f7')), /simple value 23 is not recognized/, 'decode');
});

test('ill-formed heads: reserved additional information, stray break, indefinite-length integers', () => {
  rejects(() => anyOf('1c'), 'cbor: invalid additional information 28 for type positive integer');
  rejects(() => anyOf('5d'), 'cbor: invalid additional information 29 for type byte string');
  rejects(() => anyOf('fe'), 'cbor: invalid additional information 30 for type primitives');
  rejects(() => anyOf('ff'), 'cbor: unexpected "break" code');
  rejects(() => anyOf('81 ff'), 'cbor: unexpected "break" code');
  rejects(() => anyOf('bf 41 61 ff'), 'cbor: unexpected "break" code');
  rejects(() => anyOf('1f'), 'cbor: invalid additional information 31 for type positive integer');
  rejects(() => anyOf('3f'), 'cbor: invalid additional information 31 for type negative integer');
  rejects(() => anyOf('5f 61 61 ff'), 'cbor: wrong element type UTF-8 text string for indefinite-length byte string');
  rejects(() => anyOf('5f 5f ff ff'), 'cbor: indefinite-length byte string chunk is not definite-length');
  rejects(() => anyOf('5b 8000000000000000'), 'cbor: byte string length 9223372036854775808 is too large, causing integer overflow');
  rejects(() => anyOf('9b 8000000000000000'), 'cbor: array length 9223372036854775808 is too large, it would cause integer overflow');
  rejects(() => anyOf('9a 80000000'), 'cbor: exceeded max number of elements 2147483647 for CBOR array');
  rejects(() => anyOf('ba 00200001'), 'cbor: exceeded max number of key-value pairs 2097152 for CBOR map');
});

test('nesting deeper than 10000 levels is refused', () => {
  const deep = (n: number): Buffer => Buffer.concat([Buffer.alloc(n, 0x81), bytes('00')]);
  rejects(() => anyOf(deep(10001).toString('hex')), 'cbor: exceeded max nested level 10000');
  rejects(() => decodeCBOR(CONFIGMAP, Buffer.concat([bytes(hx('a1', '41', t('z'))), deep(10000)])), 'cbor: exceeded max nested level 10000', 'gvk');
  assert.equal((anyOf(deep(2000).toString('hex')) as unknown[]).length, 1);
});

test('integers beyond int64, integers too large for the field', () => {
  rejects(() => anyOf('1b ffffffffffffffff'), "cbor: cannot unmarshal positive integer into Go value of type int64 (18446744073709551615 overflows Go's int64)");
  rejects(() => anyOf('3b ffffffffffffffff'), "cbor: cannot unmarshal negative integer into Go value of type int64 (-18446744073709551616 overflows Go's int64)");
  const gen = (v: string): Buffer => bytes(hx('a2', '44', t('kind'), '49', t('ConfigMap'), '48', t('metadata'), 'a1', '4a', t('generation'), v));
  rejects(() => decodeCBOR(CONFIGMAP, gen('1b 8000000000000000')), 'cbor: cannot unmarshal positive integer into Go struct field v1.ConfigMap.metadata of type int64 (9223372036854775808 overflows int64)', 'decode');
  assert.equal((decodeCBOR(CONFIGMAP, gen('3b 7fffffffffffffff')) as any).metadata.generation, -(2n ** 63n));
  const svc = (v: string): Buffer => bytes(hx('a1', '44', t('spec'), 'a1', '45', t('ports'), '81', 'a1', '44', t('port'), v));
  rejects(() => decodeCBOR('io.k8s.api.core.v1.Service', svc('1a 80000000')), 'cbor: cannot unmarshal positive integer into Go struct field v1.Service.spec of type int32 (2147483648 overflows int32)');
  rejects(() => decodeCBOR('io.k8s.api.core.v1.Service', svc('3a 80000000')), 'cbor: cannot unmarshal negative integer into Go struct field v1.Service.spec of type int32 (-2147483649 overflows int32)');
});

test('values of the wrong type, named by the top-level field as fxamacker names them', () => {
  rejects(() => decodeCBOR(CONFIGMAP, cmWith('01')), 'cbor: cannot unmarshal positive integer into Go struct field v1.ConfigMap.data of type string', 'decode');
  rejects(() => decodeCBOR(CONFIGMAP, cmWith('f5')), 'cbor: cannot unmarshal primitives into Go struct field v1.ConfigMap.data of type string');
  rejects(() => decodeCBOR(CONFIGMAP, cmWith('80')), 'cbor: cannot unmarshal array into Go struct field v1.ConfigMap.data of type string');
  rejects(() => decodeCBOR(CONFIGMAP, bytes(hx('a1', '48', t('metadata'), '80'))), 'cbor: cannot unmarshal array into Go struct field v1.ConfigMap.metadata of type v1.ObjectMeta (cannot decode CBOR array to struct without toarray option)');
  rejects(() => decodeCBOR(CONFIGMAP, bytes(hx('a1', '48', t('metadata'), 'a1', '4a', t('finalizers'), 'a0'))), 'cbor: cannot unmarshal map into Go struct field v1.ConfigMap.metadata of type []string');
  rejects(() => decodeCBOR(CONFIGMAP, bytes(hx('a1', '49', t('immutable'), '01'))), 'cbor: cannot unmarshal positive integer into Go struct field v1.ConfigMap.immutable of type bool');
  rejects(() => decodeCBOR(CONFIGMAP, bytes(hx('a1', '4a', t('binaryData'), 'a1', '41', t('k'), '63', t('AAA')))), 'cbor: cannot unmarshal UTF-8 text string into Go struct field v1.ConfigMap.binaryData of type []uint8');
  rejects(() => decodeCBOR(CONFIGMAP, bytes(hx('a1', '4a', t('binaryData'), 'a1', '41', t('k'), '43', t('AAE')))), 'cbor: failed to decode base64 from byte string: illegal base64 data at input byte 0');
  rejects(() => decodeCBOR(CONFIGMAP, bytes(hx('a1', '4a', t('binaryData'), 'a1', '41', t('k'), '44', t('A$==')))), 'cbor: failed to decode base64 from byte string: illegal base64 data at input byte 1');
  rejects(() => decodeCBOR(CONFIGMAP, bytes(hx('a1', '4a', t('binaryData'), 'a1', '41', t('k'), '82', '01', '19 0100'))), 'cbor: cannot unmarshal positive integer into Go struct field v1.ConfigMap.binaryData of type uint8 (256 overflows uint8)');
  // the top level: Kubernetes fails while reading apiVersion and kind into a TypeMeta
  rejects(() => decodeCBOR(CONFIGMAP, bytes('80')), 'cbor: cannot unmarshal array into Go value of type v1.TypeMeta (cannot decode CBOR array to struct without toarray option)', 'gvk');
  rejects(() => decodeCBOR(CONFIGMAP, bytes(hx('61', t('x')))), 'cbor: cannot unmarshal UTF-8 text string into Go value of type v1.TypeMeta', 'gvk');
  rejects(() => decodeCBOR(CONFIGMAP, bytes(hx('a1', '44', t('kind'), 'a0'))), 'cbor: cannot unmarshal map into Go struct field v1.TypeMeta.kind of type string', 'gvk');
  rejects(() => decodeCBOR(CONFIGMAP, bytes(hx('a1', '4a', t('apiVersion'), 'f9 3c00'))), 'cbor: cannot unmarshal primitives into Go struct field v1.TypeMeta.apiVersion of type string', 'gvk');
});

test('map keys that cannot be strings', () => {
  rejects(() => anyOf('a1 01 02'), 'cbor: cannot unmarshal positive integer into Go value of type string');
  rejects(() => anyOf('a1 f5 02'), 'cbor: cannot unmarshal primitives into Go value of type string');
  rejects(() => anyOf('a1 80 02'), 'cbor: cannot unmarshal array into Go value of type string');
  rejects(() => decodeCBOR(CONFIGMAP, bytes(hx('a1', '44', t('data'), 'a1', '20', '40'))), 'cbor: cannot unmarshal negative integer into Go struct field v1.ConfigMap.data of type string');
  // in a struct a tagged key or a key of another type names no field
  rejects(() => decodeCBOR(CONFIGMAP, bytes(hx('a1', 'c6', '44', t('kind'), '40'))), 'cbor: cannot unmarshal tag into Go value of type string (map key is of type tag and cannot be used to match struct field name)', 'gvk');
  rejects(() => decodeCBOR(CONFIGMAP, bytes(hx('a1', 'f6', '40'))), 'cbor: cannot unmarshal primitives into Go value of type string (map key is of type primitives and cannot be used to match struct field name)', 'gvk');
  // integer keys in a struct are unknown fields
  assert.deepEqual(decodeCBORObject(CONFIGMAP, bytes(hx('a2', '01', '02', '44', t('kind'), '49', t('ConfigMap')))).strictErrors, ['cbor: found unknown field at map element index 0']);
});

test('a syntax error anywhere wins over a value error found before it, as the well-formedness pass runs first', () => {
  const body = bytes(hx('a3', '44', t('data'), 'a1', '41', t('a'), '01', '44', t('kind'), '49', t('ConfigMap'), '41', t('z'), '1c'));
  rejects(() => decodeCBOR(CONFIGMAP, body), 'cbor: invalid additional information 28 for type positive integer', 'gvk');
  rejects(() => anyOf(hx('82', '62', 'c328', '5f')), 'unexpected EOF');
  // and a problem reading the kind wins over a problem below it
  const both = bytes(hx('a3', '44', t('data'), 'a1', '41', t('a'), '01', '44', t('kind'), '40', '44', t('kind'), '40'));
  rejects(() => decodeCBOR(CONFIGMAP, both), 'cbor: found duplicate map key "kind" at map element index 2', 'gvk');
});
