// The CBOR codec: round trips of rich objects, bytes compared with what Kubernetes' encoder writes
// (derived by hand from its rules: byte-string strings, tag 22 for []byte, keys sorted by length
// then bytewise, shortest integer heads and floats), lists from cached items, watch events,
// apply configurations, and the decoder's tolerance of what other encoders write.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CBORDecodeError,
  CBOREncodeError,
  CBORRaw,
  CBORWatchEventDecoder,
  cborDecodeStatusMessage,
  decodeApplyPatchCBOR,
  decodeCBOR,
  decodeCBORObject,
  decodeCBORSequence,
  decodeCBORValue,
  decodeCBORWatchEvents,
  encodeCBOR,
  encodeCBORListChunks,
  encodeCBORListFromItems,
  encodeCBORObject,
  encodeCBORValue,
  encodeCBORWatchEvent,
  interpretCBORTypeMeta,
} from '../../src/codec/cbor.js';
import { FIXTURES, TYPES, status, table, type FixtureName } from './cbor-fixtures.test.js';

const POD = 'io.k8s.api.core.v1.Pod';
const CONFIGMAP = 'io.k8s.api.core.v1.ConfigMap';
const SECRET = 'io.k8s.api.core.v1.Secret';
const LEASE = 'io.k8s.api.coordination.v1.Lease';
const STATUS = 'io.k8s.apimachinery.pkg.apis.meta.v1.Status';
const SCHEMA_PROPS = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps';

/** hex of UTF-8 text (the content of a string; its head is written by hand beside it) */
const t = (s: string): string => Buffer.from(s, 'utf8').toString('hex');
/** hex pieces joined */
const hx = (...parts: string[]): string => parts.join('').replace(/\s+/g, '');
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const bytes = (h: string): Buffer => Buffer.from(h.replace(/\s+/g, ''), 'hex');

// ---------------------------------------------------------------- round trips

for (const name of Object.keys(FIXTURES) as FixtureName[]) {
  test(`round trip: ${name}`, () => {
    const obj = FIXTURES[name]();
    const body = encodeCBOR(TYPES[name], obj);
    assert.equal(hex(body.subarray(0, 3)), 'd9d9f7', 'a body starts with the self-described tag');
    const back = decodeCBOR(TYPES[name], body);
    assert.deepEqual(back, obj);
    // encoding is deterministic: the decoded object encodes to the same bytes
    assert.equal(hex(encodeCBOR(TYPES[name], back)), hex(body));
    // the type chosen by apiVersion and kind is the same
    assert.equal(hex(encodeCBORObject(obj)), hex(body));
    // without the tag, the same object
    assert.deepEqual(decodeCBOR(TYPES[name], body.subarray(3)), obj);
    // a schemaless decode gives the same JSON form ([]byte included: tag 22 gives base64)
    assert.deepEqual(decodeCBORValue(body), obj);
  });
}

test('round trip: Status (typed and schemaless encode the same bytes)', () => {
  const s = status();
  const typed = encodeCBOR(STATUS, s);
  assert.equal(hex(encodeCBORValue(s)), hex(typed));
  assert.deepEqual(decodeCBOR(STATUS, typed), s);
  assert.deepEqual(decodeCBORValue(typed), s);
});

test('round trip: Table with cells of several types, an embedded object given encoded', () => {
  const tb = table();
  const body = encodeCBORValue(tb);
  assert.deepEqual(decodeCBORValue(body), tb);
  // the row's object given already encoded (e.g. a cached PartialObjectMetadata) writes the same bytes
  const withRaw = table();
  withRaw.rows[0].object = new CBORRaw(encodeCBORValue(tb.rows[0].object));
  assert.equal(hex(encodeCBORValue(withRaw)), hex(body));
  // cells: an integer stays an integer, a fraction is a float (0.75 is exact in half precision)
  assert.ok(hex(body).includes(hx('84', '45', t('web-0'), '43', t('1/1'), '04', 'f93a00')));
});

test('round trip: a custom resource (no schema) encodes as unstructured content', () => {
  const cr = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 3, ratio: 0.5, tags: ['a'], nested: { deep: [1, -1, null, true] } } };
  const body = encodeCBOR('com.example.v1.Widget', cr);
  assert.equal(hex(encodeCBORObject(cr)), hex(body));
  assert.deepEqual(decodeCBOR('com.example.v1.Widget', body), cr);
  // decoded into an unstructured map: a duplicate key below the top is a decode error naming the data's kind
  const dup = bytes(hx('a2', '44', t('kind'), '46', t('Widget'), '44', t('spec'), 'a2', '41', t('a'), '01', '41', t('a'), '02'));
  assert.throws(
    () => decodeCBOR('com.example.v1.Widget', dup),
    (e: unknown) =>
      e instanceof CBORDecodeError &&
      e.phase === 'decode' &&
      cborDecodeStatusMessage(e, { group: 'example.com', version: 'v1', kind: 'Widget' }, dup) === 'Widget in version "v1" cannot be handled as a Widget: cbor: found duplicate map key "a" at map element index 1',
  );
});

test('managedFields: fieldsV1 keys sorted by length then bytewise, values empty maps', () => {
  const pod = FIXTURES.pod();
  const mf = { 'f:spec': {}, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } };
  pod.metadata.managedFields = [{ manager: 'm', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: mf }];
  const body = encodeCBOR(POD, pod);
  const fields = hx('a2', '46', t('f:spec'), 'a0', '4a', t('f:metadata'), 'a1', '48', t('f:labels'), 'a2', '41', t('.'), 'a0', '45', t('f:app'), 'a0');
  assert.ok(hex(body).includes(fields));
  assert.deepEqual(decodeCBOR(POD, body), pod);
});

// ---------------------------------------------------------------- bytes as Kubernetes writes them

test('bytes: a small ConfigMap', () => {
  const cm = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x', namespace: 'default' }, data: { a: 'b' }, binaryData: { bin: 'AAEC' } };
  const want = hx(
    'd9d9f7', // tag 55799, self-described CBOR
    'a5', // map, 5 pairs; keys by encoded length, then bytewise:
    '44', t('data'), 'a1', '41', t('a'), '41', t('b'), // "data": {"a": "b"} (byte strings, not text)
    '44', t('kind'), '49', t('ConfigMap'),
    '48', t('metadata'), 'a2', '44', t('name'), '41', t('x'), '49', t('namespace'), '47', t('default'),
    '4a', t('apiVersion'), '42', t('v1'), // "apiVersion" < "binaryData": same length, 'a' < 'b'
    '4a', t('binaryData'), 'a1', '43', t('bin'), 'd6', '43', '000102', // []byte: tag 22, raw bytes
  );
  assert.equal(hex(encodeCBOR(CONFIGMAP, cm)), want);
});

test('bytes: map keys sort by UTF-8 length, then bytewise (not by JS string order)', () => {
  const cm = { kind: 'ConfigMap', data: { zz: '1', b: '2', é: '3', aa: '4', a: '5', '~': '6' } };
  const want = hx(
    'd9d9f7', 'a2',
    '44', t('data'), 'a6',
    '41', t('a'), '41', t('5'),
    '41', t('b'), '41', t('2'),
    '41', t('~'), '41', t('6'),
    '42', t('aa'), '41', t('4'),
    '42', t('zz'), '41', t('1'),
    '42', 'c3a9', '41', t('3'), // "é" is two bytes: after "zz" (0xc3 > 0x7a)
    '44', t('kind'), '49', t('ConfigMap'),
  );
  assert.equal(hex(encodeCBOR(CONFIGMAP, cm)), want);
});

test('bytes: a Secret: every []byte in tag 22, an empty one d6 40; string fields plain byte strings', () => {
  const s = { kind: 'Secret', apiVersion: 'v1', metadata: { name: 's' }, data: { password: Buffer.from('hunter2').toString('base64'), empty: '', bin: '//4A' }, type: 'Opaque' };
  const want = hx(
    'd9d9f7', 'a5',
    '44', t('data'), 'a3', '43', t('bin'), 'd6', '43', 'fffe00', '45', t('empty'), 'd6', '40', '48', t('password'), 'd6', '47', t('hunter2'),
    '44', t('kind'), '46', t('Secret'),
    '44', t('type'), '46', t('Opaque'),
    '48', t('metadata'), 'a1', '44', t('name'), '41', t('s'),
    '4a', t('apiVersion'), '42', t('v1'),
  );
  assert.equal(hex(encodeCBOR(SECRET, s)), want);
  assert.deepEqual(decodeCBOR(SECRET, bytes(want)), s);
});

test('bytes: a Lease: MicroTime as its RFC 3339 text, int32 as an integer', () => {
  const l = { kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', metadata: { name: 'l' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: '2025-01-02T03:04:05.123456Z' } };
  const want = hx(
    'd9d9f7', 'a4',
    '44', t('kind'), '45', t('Lease'),
    '44', t('spec'), 'a3',
    '49', t('renewTime'), '58 1b', t('2025-01-02T03:04:05.123456Z'), // 27 bytes: one-byte length
    '4e', t('holderIdentity'), '41', t('a'),
    '54', t('leaseDurationSeconds'), '0f',
    '48', t('metadata'), 'a1', '44', t('name'), '41', t('l'),
    '4a', t('apiVersion'), '56', t('coordination.k8s.io/v1'),
  );
  assert.equal(hex(encodeCBOR(LEASE, l)), want);
  assert.deepEqual(decodeCBOR(LEASE, bytes(want)), l);
});

test('bytes: Go float64 fields in the shortest width that keeps the value, even when integral', () => {
  const p = { minimum: 1, maximum: 0.5, multipleOf: 0.1 };
  const want = hx('d9d9f7', 'a3', '47', t('maximum'), 'f9 3800', '47', t('minimum'), 'f9 3c00', '4a', t('multipleOf'), 'fb 3fb999999999999a');
  assert.equal(hex(encodeCBOR(SCHEMA_PROPS, p)), want);
  assert.deepEqual(decodeCBOR(SCHEMA_PROPS, bytes(want)), p);
});

test('bytes: numbers without a schema: integers by value, the shortest exact float otherwise', () => {
  const cases: [unknown, string][] = [
    [0, '00'],
    [23, '17'],
    [24, '1818'],
    [255, '18ff'],
    [256, '190100'],
    [65535, '19ffff'],
    [65536, '1a00010000'],
    [4294967296, '1b0000000100000000'],
    [Number.MAX_SAFE_INTEGER, '1b001fffffffffffff'],
    [-1, '20'],
    [-24, '37'],
    [-25, '3818'],
    [-256, '38ff'],
    [-257, '390100'],
    [2 ** 63 - 1024, '1b7ffffffffffffc00'],
    [-(2 ** 63), '3b7fffffffffffffff'],
    [2 ** 64, 'fa5f800000'], // beyond int64: a float, as Go's JSON gives float64
    [9223372036854775807n, '1b7fffffffffffffff'],
    [-9223372036854775808n, '3b7fffffffffffffff'],
    [18446744073709551615n, '1bffffffffffffffff'],
    [-0, '00'],
    [0.5, 'f93800'],
    [-2.5, 'f9c100'],
    [65504, '19ffe0'],
    [65504.5, 'fa477fe080'],
    [100000.5, 'fa47c35040'],
    [2 ** -24, 'f90001'], // the smallest half-precision subnormal
    [2 ** -14, 'f90400'],
    [3.4028234663852886e38, 'fa7f7fffff'],
    [0.1, 'fb3fb999999999999a'],
    [1e300, 'fb7e37e43c8800759c'],
    [true, 'f5'],
    [false, 'f4'],
    [null, 'f6'],
    ['', '40'],
    ['x'.repeat(23), '57' + t('x'.repeat(23))],
    ['x'.repeat(24), '5818' + t('x'.repeat(24))],
    ['x'.repeat(256), '590100' + t('x'.repeat(256))],
    ['é'.repeat(12), '5818' + t('é'.repeat(12))], // 24 bytes of UTF-8, 12 JS characters
    ['😀', '44f09f9880'],
    [[], '80'],
    [{}, 'a0'],
    [Uint8Array.of(1, 2), 'd6420102'], // a Go []byte
  ];
  for (const [v, h] of cases) assert.equal(hex(encodeCBORValue(v)), 'd9d9f7' + h, `encoding ${String(v)}`);
});

test('bytes: NaN and infinities are refused (Kubernetes: NaNConvertReject, InfConvertReject)', () => {
  assert.throws(() => encodeCBORValue(NaN), (e: unknown) => e instanceof CBOREncodeError && e.message === 'cbor: unsupported value: floating-point NaN');
  assert.throws(() => encodeCBORValue({ a: [Infinity] }), /floating-point infinity/);
  assert.throws(() => encodeCBOR(SCHEMA_PROPS, { minimum: -Infinity }), /floating-point infinity/);
  assert.throws(() => encodeCBORValue(2n ** 64n), CBOREncodeError);
});

test('bytes: Status: code 404 is a two-byte integer', () => {
  const s = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'm', reason: 'NotFound', code: 404 };
  const want = hx(
    'd9d9f7', 'a7',
    '44', t('code'), '19 0194',
    '44', t('kind'), '46', t('Status'),
    '46', t('reason'), '48', t('NotFound'),
    '46', t('status'), '47', t('Failure'),
    '47', t('message'), '41', t('m'),
    '48', t('metadata'), 'a0',
    '4a', t('apiVersion'), '42', t('v1'),
  );
  assert.equal(hex(encodeCBORValue(s)), want);
  assert.equal(hex(encodeCBOR(STATUS, s)), want);
});

test('bytes: absent and null: omitted fields are left out, null pointers and nil maps are null', () => {
  const pod = { kind: 'Pod', metadata: { name: 'p', creationTimestamp: null, labels: null }, spec: { containers: null } };
  const want = hx(
    'd9d9f7', 'a3',
    '44', t('kind'), '43', t('Pod'),
    '44', t('spec'), 'a1', '4a', t('containers'), 'f6',
    '48', t('metadata'), 'a3', '44', t('name'), '41', t('p'), '46', t('labels'), 'f6', '51', t('creationTimestamp'), 'f6',
  );
  assert.equal(hex(encodeCBOR(POD, pod)), want);
});

test('bytes: a struct with 24 fields or more gets a two-byte map head', () => {
  const c: Record<string, unknown> = { name: 'c' };
  const pod = FIXTURES.pod();
  const ctr = pod.spec.containers[0];
  Object.assign(c, ctr, { stdin: true, stdinOnce: true, tty: true, resizePolicy: [], restartPolicy: 'Always', startupProbe: ctr.livenessProbe, envFrom: [{ prefix: 'P_' }], volumeDevices: [], command: ['x'], stdinx: undefined });
  delete c.stdinx;
  const n = Object.keys(c).length;
  assert.ok(n >= 24, `${n} fields`);
  const body = encodeCBOR('io.k8s.api.core.v1.Container', c);
  assert.equal(hex(body.subarray(3, 5)), `b8${n.toString(16)}`);
  assert.deepEqual(decodeCBOR('io.k8s.api.core.v1.Container', body), c);
});

test('encoding leaves out fields the type does not declare (as Go has nowhere to keep them)', () => {
  const cm = { kind: 'ConfigMap', bogus: 1, metadata: { name: 'x', alsoBogus: true } };
  assert.deepEqual(decodeCBOR(CONFIGMAP, encodeCBOR(CONFIGMAP, cm)), { kind: 'ConfigMap', metadata: { name: 'x' } });
});

// ---------------------------------------------------------------- lists

const ITEM_A = { metadata: { name: 'a', resourceVersion: '5' }, data: { k: 'v' } };
const ITEM_B = { metadata: { name: 'b' } };

test('lists: from cached item bodies, the bytes Kubernetes writes for the whole list', () => {
  const a = encodeCBOR(CONFIGMAP, ITEM_A);
  const b = encodeCBOR(CONFIGMAP, ITEM_B);
  const body = encodeCBORListFromItems('v1', 'ConfigMapList', { resourceVersion: '7' }, [a, b]);
  const want = hx(
    'd9d9f7', 'a4',
    '44', t('kind'), '4d', t('ConfigMapList'),
    '45', t('items'), '82', hex(a.subarray(3)), hex(b.subarray(3)), // items carry no tag of their own
    '48', t('metadata'), 'a1', '4f', t('resourceVersion'), '41', t('7'),
    '4a', t('apiVersion'), '42', t('v1'),
  );
  assert.equal(hex(body), want);
  // the same as encoding the list object in one go
  const list = { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items: [ITEM_A, ITEM_B] };
  assert.equal(hex(encodeCBOR('io.k8s.api.core.v1.ConfigMapList', list)), want);
  assert.deepEqual(decodeCBOR('io.k8s.api.core.v1.ConfigMapList', body), list);
  // streamed in chunks: the items are views of the cached bodies, not copies
  const chunks = [...encodeCBORListChunks('v1', 'ConfigMapList', { resourceVersion: '7' }, [a, b])];
  assert.equal(hex(Buffer.concat(chunks)), want);
  assert.equal(chunks[1]!.buffer, a.buffer);
});

test('lists: an empty list, a list with continue and remainingItemCount, items given without tags', () => {
  assert.equal(
    hex(encodeCBORListFromItems('apps/v1', 'DeploymentList', {}, [])),
    hx('d9d9f7', 'a4', '44', t('kind'), '4e', t('DeploymentList'), '45', t('items'), '80', '48', t('metadata'), 'a0', '4a', t('apiVersion'), '47', t('apps/v1')),
  );
  const a = encodeCBOR(CONFIGMAP, ITEM_A);
  const meta = { resourceVersion: '9', continue: 'tok', remainingItemCount: 3 };
  const body = encodeCBORListFromItems('v1', 'ConfigMapList', meta, [a.subarray(3)]);
  assert.equal(hex(body), hex(encodeCBORListFromItems('v1', 'ConfigMapList', meta, [a])));
  assert.ok(hex(body).includes(hx('a3', '48', t('continue'), '43', t('tok'), '4f', t('resourceVersion'), '41', t('9'), '52', t('remainingItemCount'), '03')));
  assert.deepEqual(decodeCBOR('io.k8s.api.core.v1.ConfigMapList', body), { kind: 'ConfigMapList', apiVersion: 'v1', metadata: meta, items: [ITEM_A] });
});

// ---------------------------------------------------------------- watch events

test('watch: each event is its own data item with its own tag; its object keeps the object body', () => {
  const obj = encodeCBOR(CONFIGMAP, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x' } });
  const ev = encodeCBORWatchEvent('ADDED', obj);
  assert.equal(hex(ev), hx('d9d9f7', 'a2', '44', t('type'), '45', t('ADDED'), '46', t('object'), hex(obj)));
  // an object given without its tag gets one (RawExtension bytes are recognized by it)
  assert.equal(hex(encodeCBORWatchEvent('ADDED', obj.subarray(3))), hex(ev));
  const stream = Buffer.concat([ev, encodeCBORWatchEvent('MODIFIED', obj), encodeCBORWatchEvent('BOOKMARK', encodeCBORValue({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '12', annotations: { 'k8s.io/initial-events-end': 'true' } } }))]);
  const events = decodeCBORWatchEvents(stream);
  assert.deepEqual(
    events.map((e) => e.type),
    ['ADDED', 'MODIFIED', 'BOOKMARK'],
  );
  assert.equal(hex(events[0]!.object), hex(obj));
  assert.deepEqual(decodeCBOR(CONFIGMAP, events[1]!.object), { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x' } });
  // the schemaless view of the sequence
  assert.deepEqual(decodeCBORSequence(stream)[0], { type: 'ADDED', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x' } } });
  // fed one byte at a time
  const d = new CBORWatchEventDecoder();
  const got: string[] = [];
  for (const byte of stream) for (const e of d.push(Uint8Array.of(byte))) got.push(e.type);
  assert.deepEqual(got, ['ADDED', 'MODIFIED', 'BOOKMARK']);
  assert.equal(d.buffered, 0);
  assert.throws(() => decodeCBORWatchEvents(stream.subarray(0, stream.length - 1)), /ends inside an event/);
});

test('watch: an ERROR event carries a Status', () => {
  const ev = encodeCBORWatchEvent('ERROR', encodeCBORValue(status()));
  const [e] = decodeCBORWatchEvents(ev);
  assert.equal(e!.type, 'ERROR');
  assert.deepEqual(decodeCBORValue(e!.object), status());
});

// ---------------------------------------------------------------- decoding what other encoders write

test('decoding: text strings and text keys are accepted wherever Kubernetes writes byte strings', () => {
  const ok = hx('a3', '64', t('kind'), '69', t('ConfigMap'), '68', t('metadata'), 'a1', '64', t('name'), '61', t('x'), '64', t('data'), 'a1', '61', t('k'), '63', t('vé'));
  assert.deepEqual(decodeCBOR(CONFIGMAP, bytes(ok)), { kind: 'ConfigMap', metadata: { name: 'x' }, data: { k: 'vé' } });
});

test('decoding: indefinite-length maps, arrays and strings; heads longer than needed', () => {
  const body = hx(
    'bf', // indefinite map
    '44', t('kind'), '7f', '63', t('Con'), '66', t('figMap'), 'ff', // indefinite text string in chunks
    '5f', '42', t('me'), '46', t('tadata'), 'ff', 'bf', '44', t('name'), '58 01', t('x'), 'ff', // chunked key; a 1-byte length for "x"
    '48', t('finalize'), 'f6', // an unknown field
    'ff',
  );
  const r = decodeCBORObject(CONFIGMAP, bytes(body));
  assert.deepEqual(r.obj, { kind: 'ConfigMap', metadata: { name: 'x' }, finalize: null });
  assert.deepEqual(r.strictErrors, ['cbor: found unknown field at map element index 2']);
  assert.deepEqual(decodeCBORValue(bytes(hx('9f', '18 05', '19 0006', '1a 00000007', '1b 0000000000000008', '9f', 'ff', 'ff'))), [5, 6, 7, 8, []]);
});

test('decoding: the self-described tag is optional, may repeat, and other tags are transparent', () => {
  const cm = { kind: 'ConfigMap', metadata: { name: 'x' } };
  const body = encodeCBOR(CONFIGMAP, cm);
  assert.deepEqual(decodeCBOR(CONFIGMAP, Buffer.concat([bytes('d9d9f7'), body])), cm);
  assert.deepEqual(decodeCBOR(CONFIGMAP, Buffer.concat([bytes('d86f'), body.subarray(3)])), cm); // tag 111 around it
  assert.deepEqual(decodeCBORValue(bytes(hx('a1', '41', t('a'), 'd9d9f7', 'd8 64', '01'))), { a: 1 });
});

test('decoding: tags 21, 22, 23 give byte strings their text encoding in strings; in []byte fields the raw bytes', () => {
  // inside tag 22 every byte string that lands in a string is base64, keys included
  assert.deepEqual(decodeCBORValue(bytes(hx('d6', 'a1', '41', t('a'), '43', 'fbff00'))), { 'YQ==': '+/8A' });
  assert.equal(decodeCBORValue(bytes('d5 43 fbff00')), '-_8A');
  assert.equal(decodeCBORValue(bytes('d7 43 fbff00')), 'fbff00');
  assert.equal(decodeCBORValue(bytes('d6 63 616263')), 'abc', 'a text string is not re-encoded');
  // []byte: tagged raw bytes, untagged base64 text (as JSON), or an array of bytes
  const sec = (v: string): Buffer => bytes(hx('a2', '44', t('kind'), '46', t('Secret'), '44', t('data'), 'a1', '41', t('k'), v));
  for (const v of [hx('d6', '43', '000102'), hx('d5', '43', '000102'), hx('d7', '43', '000102'), hx('44', t('AAEC')), hx('45', t('AA\nEC')), hx('83', '00', '01', '02')]) {
    assert.deepEqual(decodeCBOR(SECRET, sec(v)), { kind: 'Secret', data: { k: 'AAEC' } }, v);
  }
});

test('decoding: tags 0 and 1 are times when no schema says otherwise', () => {
  assert.equal(decodeCBORValue(bytes(hx('c0', '74', t('2024-05-01T10:00:00Z')))), '2024-05-01T10:00:00Z');
  assert.equal(decodeCBORValue(bytes(hx('c0', '78 1d', t('2024-05-01T10:00:00.500+02:00')))), '2024-05-01T10:00:00.5+02:00');
  assert.equal(decodeCBORValue(bytes('c1 1a 66321360')), '2024-05-01T10:03:12Z');
  assert.equal(decodeCBORValue(bytes('c1 fb 41d98c84d8200000')), '2024-05-01T10:03:12.5Z');
  assert.throws(() => decodeCBORValue(bytes(hx('c0', '63', t('abc')))), /cbor: cannot set "abc" for time.Time/);
});

test('decoding: special types as their Go unmarshallers take them', () => {
  const svc = (port: string): Buffer =>
    bytes(hx('a2', '44', t('kind'), '47', t('Service'), '44', t('spec'), 'a1', '45', t('ports'), '81', 'a2', '44', t('port'), '18 50', '4a', t('targetPort'), port));
  const tp = (port: string): unknown => (decodeCBOR('io.k8s.api.core.v1.Service', svc(port)) as any).spec.ports[0].targetPort;
  assert.equal(tp('1a 00001f90'), 8080);
  assert.equal(tp('44' + t('http')), 'http');
  assert.equal(tp('f6'), '', 'IntOrString: null unmarshals as the empty string');
  assert.throws(() => tp('f93c00'), /cannot unmarshal primitives into Go struct field v1.Service.spec of type int32/);
  assert.throws(() => tp('1b 0000000100000000'), /\(4294967296 overflows int32\)/);
  // Quantity: a string only (a number is accepted by JSON, not by its UnmarshalCBOR)
  const q = (v: string): Buffer => bytes(hx('a1', '44', t('spec'), 'a1', '44', t('hard'), 'a1', '43', t('cpu'), v));
  assert.deepEqual(decodeCBOR('io.k8s.api.core.v1.ResourceQuota', q('42' + t('1k'))), { spec: { hard: { cpu: '1k' } } });
  assert.throws(() => decodeCBOR('io.k8s.api.core.v1.ResourceQuota', q('01')), /cannot unmarshal positive integer into Go struct field v1.ResourceQuota.spec of type string/);
  // JSONSchemaPropsOrBool: a map or a boolean
  const ap = (v: string): Buffer => bytes(hx('a1', '54', t('additionalProperties'), v));
  assert.equal((decodeCBOR(SCHEMA_PROPS, ap('f4')) as any).additionalProperties, false);
  assert.deepEqual((decodeCBOR(SCHEMA_PROPS, ap(hx('a1', '44', t('type'), '46', t('string')))) as any).additionalProperties, { type: 'string' });
  assert.throws(() => decodeCBOR(SCHEMA_PROPS, ap('f6')), /boolean or JSON schema expected/);
  // RawExtension and FieldsV1 are decoded again by Kubernetes: their errors carry its words
  const cr = (v: string): Buffer => bytes(hx('a2', '44', t('kind'), '52', t('ControllerRevision'), '44', t('data'), v));
  assert.throws(() => decodeCBOR('io.k8s.api.apps.v1.ControllerRevision', cr(hx('a2', '41', t('a'), '01', '41', t('a'), '02'))), (e: unknown) => e instanceof CBORDecodeError && e.message === 'failed to transcode RawExtension to JSON: failed to parse RawExtension bytes as CBOR: cbor: found duplicate map key "a" at map element index 1');
  assert.throws(() => decodeCBOR(POD, bytes(hx('a1', '48', t('metadata'), 'a1', '4d', t('managedFields'), '81', 'a1', '48', t('fieldsV1'), '80'))), /failed to transcode FieldsV1 to JSON: metav1.FieldsV1 cbor invalid: cbor: cannot unmarshal array into Go value of type map\[string\]interface \{\}/);
});

test('decoding: fields the type does not declare are kept as null, named once for strict decoding', () => {
  const body = hx('a3', '44', t('kind'), '49', t('ConfigMap'), '45', t('bogus'), 'a2', '41', t('x'), '01', '41', t('x'), '01', '01', '02');
  const r = decodeCBORObject(CONFIGMAP, bytes(body));
  // Go skips an unknown field's value: a duplicate key inside it is not looked at
  assert.deepEqual(r.obj, { kind: 'ConfigMap', bogus: null });
  assert.deepEqual(r.strictErrors, ['cbor: found unknown field at map element index 1']);
  assert.equal(r.kind, 'ConfigMap');
  assert.deepEqual(decodeCBORObject(CONFIGMAP, encodeCBOR(CONFIGMAP, { kind: 'ConfigMap' })).strictErrors, []);
});

test('decoding: a null top level is the zero object; byte strings with invalid UTF-8 read as Go prints them', () => {
  assert.deepEqual(decodeCBOR(CONFIGMAP, bytes('d9d9f7 f6')), {});
  assert.deepEqual(decodeCBOR(CONFIGMAP, bytes(hx('a1', '44', t('kind'), '43', 'ff6162'))), { kind: '\ufffdab' });
});

test('interpretCBORTypeMeta reads apiVersion and kind only', () => {
  assert.deepEqual(interpretCBORTypeMeta(encodeCBOR(POD, FIXTURES.pod())), { apiVersion: 'v1', kind: 'Pod' });
  assert.deepEqual(interpretCBORTypeMeta(bytes('a0')), { apiVersion: '', kind: '' });
});

// ---------------------------------------------------------------- apply configurations

test('apply-patch+cbor: the configuration as an unstructured object', () => {
  const cfg = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { app: 'web' } }, spec: { replicas: 2, template: { spec: { containers: [{ name: 'web', image: 'nginx' }] } } } };
  assert.deepEqual(decodeApplyPatchCBOR(encodeCBORValue(cfg)), cfg);
  assert.deepEqual(decodeApplyPatchCBOR(bytes('f6')), {});
  assert.throws(() => decodeApplyPatchCBOR(bytes('d9d9f7 80')), (e: unknown) => e instanceof CBORDecodeError && e.message === 'cbor: cannot unmarshal array into Go value of type map[string]interface {}');
  assert.throws(() => decodeApplyPatchCBOR(bytes(hx('a2', '41', t('a'), '01', '61', t('a'), '02'))), /cbor: found duplicate map key "a" at map element index 1/);
  assert.throws(() => decodeApplyPatchCBOR(bytes(hx('a1', '01', '02'))), /cbor: cannot unmarshal positive integer into Go value of type string/);
});

// ---------------------------------------------------------------- errors as Kubernetes reports them

test('errors: 400 BadRequest; the Status message names the phase Kubernetes fails in', () => {
  const truncated = encodeCBOR(CONFIGMAP, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x' } }).subarray(0, 20);
  let err: CBORDecodeError | undefined;
  try {
    decodeCBOR(CONFIGMAP, truncated);
  } catch (e) {
    err = e as CBORDecodeError;
  }
  assert.ok(err instanceof CBORDecodeError);
  assert.equal(err.code, 400);
  assert.equal(err.reason, 'BadRequest');
  assert.equal(err.phase, 'gvk');
  assert.equal(
    cborDecodeStatusMessage(err, { version: 'v1', kind: 'ConfigMap' }, truncated),
    `the object provided is unrecognized (must be of type ConfigMap): unable to determine group/version/kind: unexpected EOF (${hex(truncated)})`,
  );
  const long = Buffer.concat([truncated, truncated]);
  assert.match(cborDecodeStatusMessage(err, { version: 'v1', kind: 'ConfigMap' }, long), / \([0-9a-f]{60} \.\.\.\)$/);

  const bad = bytes(hx('a3', '44', t('kind'), '49', t('ConfigMap'), '4a', t('apiVersion'), '42', t('v1'), '44', t('data'), 'a1', '41', t('a'), '01'));
  try {
    decodeCBOR(CONFIGMAP, bad);
    assert.fail('decoded');
  } catch (e) {
    const de = e as CBORDecodeError;
    assert.equal(de.phase, 'decode');
    assert.equal(
      cborDecodeStatusMessage(de, { version: 'v1', kind: 'ConfigMap' }, bad),
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: cannot unmarshal positive integer into Go struct field v1.ConfigMap.data of type string',
    );
  }
});
