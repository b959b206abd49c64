// The special types (Time, MicroTime, Duration, IntOrString, Quantity, RawExtension, FieldsV1,
// JSON) and the codec over hand-written TypeDecls: every TypeRef shape, unknown fields, packed
// repeated fields, int64 edges.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TypeDecl } from '../../src/schema/model.js';
import { ProtobufCodec, ProtobufError, decodeMessage, encodeMessage } from '../../src/codec/protobuf.js';
import { parseGoDuration, parseRFC3339, formatTime, formatMicroTime } from '../../src/codec/protobuf-special.js';
import { goFormatDuration } from '../../src/machinery/gostrings.js';

const f = (name: string, proto: number, type: TypeDecl['fields'][number]['type'], o: Partial<TypeDecl['fields'][number]> = {}) => ({
  name,
  proto,
  type,
  optional: true,
  omitEmpty: true,
  nullable: type.kind === 'array' || type.kind === 'map',
  ...o,
});

/** a small universe of hand-written declarations covering every shape the model allows */
const DECLS: TypeDecl[] = [
  {
    name: 'test.Thing',
    protoName: 'test.Thing',
    typeMeta: true,
    fields: [
      f('name', 1, { kind: 'scalar', scalar: 'string' }, { omitEmpty: false }),
      f('timeout', 2, { kind: 'special', special: 'Duration' }),
      f('extra', 3, { kind: 'map', values: { kind: 'array', items: { kind: 'scalar', scalar: 'string' }, wrapper: 'test.Strings' } }),
      f('nums', 4, { kind: 'array', items: { kind: 'scalar', scalar: 'int64' } }),
      f('inner', 5, { kind: 'object', name: 'test.Inner' }, { inline: true, omitEmpty: false }),
      f('ratio', 6, { kind: 'scalar', scalar: 'double' }),
      f('maybe', 7, { kind: 'scalar', scalar: 'double' }, { nullable: true }),
      f('blob', 8, { kind: 'scalar', scalar: 'bytes' }, { nullable: true }),
      f('any', 9, { kind: 'special', special: 'JSON' }, { nullable: true }),
      f('ports', 10, { kind: 'array', items: { kind: 'scalar', scalar: 'int32' } }),
      f('flags', 11, { kind: 'array', items: { kind: 'scalar', scalar: 'bool' } }),
      f('when', 12, { kind: 'special', special: 'MicroTime' }, { nullable: true }),
      f('children', 13, { kind: 'array', items: { kind: 'object', name: 'test.Inner' } }),
      f('byName', 14, { kind: 'map', values: { kind: 'object', name: 'test.Inner' } }),
      f('sizes', 15, { kind: 'map', values: { kind: 'special', special: 'Quantity' } }),
      { name: 'localOnly', type: { kind: 'scalar', scalar: 'string' }, optional: true, omitEmpty: true, nullable: false },
      f('big', 16, { kind: 'scalar', scalar: 'int64' }),
    ],
  },
  {
    name: 'test.Inner',
    protoName: 'test.Inner',
    fields: [f('level', 1, { kind: 'scalar', scalar: 'int32' }, { omitEmpty: false }), f('label', 2, { kind: 'scalar', scalar: 'string' })],
  },
];
const codec = new ProtobufCodec(
  (n) => DECLS.find((d) => d.name === n),
  (g, v, k) => (g === 'test.example' && v === 'v1' && k === 'Thing' ? DECLS[0] : undefined),
);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('hand-written declarations', () => {
  test('every field shape round trips', () => {
    const thing = {
      kind: 'Thing',
      apiVersion: 'test.example/v1',
      name: 'n',
      timeout: '1h2m3.5s',
      extra: { groups: ['a', 'b'], none: [] },
      nums: [0, -1, 2 ** 40, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER],
      level: 3,
      label: 'inline',
      ratio: -0.25,
      maybe: 0,
      blob: Buffer.from('hi').toString('base64'),
      any: { free: ['form', 1, null, true] },
      ports: [1, -1, 65535],
      flags: [true, false],
      when: '2025-01-02T03:04:05.678901Z',
      children: [{ level: 0 }, { level: -7, label: 'x' }],
      byName: { b: { level: 2 }, a: { level: 1 } },
      sizes: { cpu: '250m', mem: '1Gi' },
      big: -9007199254740991,
    };
    const body = codec.encodeObject(thing);
    const back = codec.decodeObject(body);
    assert.deepStrictEqual(back, { ...thing, byName: { a: { level: 1 }, b: { level: 2 } } });
    assert.equal(hex(codec.encodeObject(back)), hex(body));
  });

  test('the zero object: non-pointer fields written, non-omitempty fields printed', () => {
    const msg = codec.encodeMessage('test.Thing', {});
    // name "" (1), timeout 0 (2), inline Inner {level 0, label ""} (5), ratio 0 (6), big 0 (16)
    assert.equal(hex(msg), '0a00' + '12020800' + '2a0408001200' + '310000000000000000' + '800100');
    assert.deepStrictEqual(codec.decodeMessage('test.Thing', msg), { name: '', timeout: '0s', level: 0 });
    assert.deepStrictEqual(codec.decodeMessage('test.Thing', new Uint8Array(0)), { name: '', timeout: '0s', level: 0 });
  });

  test('fields without a proto number are neither written nor read', () => {
    assert.equal(hex(codec.encodeMessage('test.Thing', { localOnly: 'x' })), hex(codec.encodeMessage('test.Thing', {})));
  });

  test('unknown fields of every wire type are skipped', () => {
    const base = codec.encodeMessage('test.Inner', { level: 5, label: 'a' });
    const unknown = Buffer.from([
      0xf8, 0x06, 0x96, 0x01, // field 111 varint 150
      0xfa, 0x06, 0x03, 0x61, 0x62, 0x63, // field 111 bytes "abc"
      0xfd, 0x06, 1, 2, 3, 4, // field 111 fixed32
      0xf9, 0x06, 1, 2, 3, 4, 5, 6, 7, 8, // field 111 fixed64
      0xfb, 0x06, 0x08, 0x01, 0xfc, 0x06, // field 111 group {1: 1} end group
    ]);
    const withUnknown = Buffer.concat([unknown, base, unknown]);
    assert.deepStrictEqual(codec.decodeMessage('test.Inner', withUnknown), { level: 5, label: 'a' });
  });

  test('repeated numbers are read packed or unpacked', () => {
    const unpacked = codec.encodeMessage('test.Thing', { ports: [1, 300, -2], flags: [true, false] });
    const packed = Buffer.from([0x52, 0x0d, 0x01, 0xac, 0x02, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x5a, 0x02, 0x01, 0x00]);
    const a = codec.decodeMessage('test.Thing', unpacked) as Record<string, unknown>;
    const b = codec.decodeMessage('test.Thing', packed) as Record<string, unknown>;
    assert.deepEqual(a.ports, [1, 300, -2]);
    assert.deepEqual(b.ports, [1, 300, -2]);
    assert.deepEqual(b.flags, [true, false]);
  });

  test('int64 beyond 2^53 as bigint or unsafe number, decoded exactly (a bigint)', () => {
    const big = codec.decodeMessage('test.Thing', codec.encodeMessage('test.Thing', { big: 2n ** 62n })) as Record<string, unknown>;
    assert.equal(big.big, 2n ** 62n);
    const neg = codec.decodeMessage('test.Thing', codec.encodeMessage('test.Thing', { big: -(2n ** 63n) })) as Record<string, unknown>;
    assert.equal(neg.big, -(2n ** 63n));
    const unsafe = codec.decodeMessage('test.Thing', codec.encodeMessage('test.Thing', { big: 2 ** 62 })) as Record<string, unknown>;
    assert.equal(unsafe.big, 2n ** 62n);
    const safe = codec.decodeMessage('test.Thing', codec.encodeMessage('test.Thing', { big: -(2 ** 53 - 1) })) as Record<string, unknown>;
    assert.equal(safe.big, -(2 ** 53 - 1));
    assert.throws(() => codec.encodeMessage('test.Thing', { big: 2n ** 63n }), /int64/);
    assert.throws(() => codec.encodeMessage('test.Thing', { big: 1.5 }), /int64/);
  });

  test('map keys named __proto__ stay data', () => {
    const back = codec.decodeMessage('test.Thing', codec.encodeMessage('test.Thing', JSON.parse('{"sizes":{"__proto__":"1","b":"2"}}'))) as any;
    assert.equal(Object.getPrototypeOf(back.sizes), Object.prototype);
    assert.deepEqual(Object.keys(back.sizes), ['__proto__', 'b']);
    assert.equal(back.sizes.b, '2');
  });
});

describe('Time and MicroTime', () => {
  test('Time prints whole seconds in UTC; input may carry offsets and fractions', () => {
    const t = (s: string) => (decodeMessage('io.k8s.api.core.v1.PodStatus', encodeMessage('io.k8s.api.core.v1.PodStatus', { startTime: s })) as any).startTime;
    assert.equal(t('2025-03-01T10:00:00Z'), '2025-03-01T10:00:00Z');
    assert.equal(t('2025-03-01T12:30:00+02:30'), '2025-03-01T10:00:00Z');
    assert.equal(t('2025-03-01T10:00:00.999999999Z'), '2025-03-01T10:00:00Z');
    assert.equal(t('1969-12-31T23:59:59.5Z'), '1969-12-31T23:59:59Z');
    assert.equal(t('0001-01-01T00:00:01Z'), '0001-01-01T00:00:01Z');
    assert.equal(t('9999-12-31T23:59:59Z'), '9999-12-31T23:59:59Z');
    assert.equal(t('2024-02-29t00:00:00z'), '2024-02-29T00:00:00Z');
    assert.equal(t('1970-01-01T00:00:00Z'), '1970-01-01T00:00:00Z'); // seconds 0 is not Go's zero time
    // Go's zero time is an empty message and prints as null (a pointer here: it was set)
    assert.equal(t('0001-01-01T00:00:00Z'), null);
  });

  test('bad times are errors', () => {
    for (const bad of ['2025-02-30T00:00:00Z', '2025-03-01 10:00:00Z', '2025-03-01T24:00:00Z', 'yesterday', '2025-03-01T10:00:00']) {
      assert.throws(() => encodeMessage('io.k8s.api.core.v1.PodStatus', { startTime: bad }), ProtobufError, bad);
    }
    assert.throws(() => encodeMessage('io.k8s.api.core.v1.PodStatus', { startTime: 5 }), /RFC 3339/);
  });

  test('MicroTime keeps six digits', () => {
    const m = (s: string) => (decodeMessage('io.k8s.api.coordination.v1.LeaseSpec', encodeMessage('io.k8s.api.coordination.v1.LeaseSpec', { renewTime: s })) as any).renewTime;
    assert.equal(m('2025-03-01T10:00:00Z'), '2025-03-01T10:00:00.000000Z');
    assert.equal(m('2025-03-01T10:00:00.123456789Z'), '2025-03-01T10:00:00.123456Z');
    assert.equal(m('2025-03-01T10:00:00.1-01:00'), '2025-03-01T11:00:00.100000Z');
    assert.equal(formatMicroTime(-1, 999999000), '1969-12-31T23:59:59.999999Z');
    assert.deepEqual(parseRFC3339('1969-12-31T23:59:59.999999Z', 't'), { seconds: -1, nanos: 999999000 });
    assert.equal(formatTime(0), '1970-01-01T00:00:00Z');
  });
});

describe('Duration (Go time.Duration)', () => {
  const NS = 1n;
  const US = 1000n;
  const MS = 1000000n;
  const S = 1000000000n;
  test('formats as time.Duration.String()', () => {
    const cases: [bigint, string][] = [
      [0n, '0s'],
      [1n * NS, '1ns'],
      [1100n * NS, '1.1µs'],
      [2200n * US, '2.2ms'],
      [3300n * MS, '3.3s'],
      [-4n * S - 400n * MS, '-4.4s'],
      [4n * 60n * S + 5n * S, '4m5s'],
      [4n * 60n * S + 5001n * MS, '4m5.001s'],
      [5n * 3600n * S + 6n * 60n * S + 7001n * MS, '5h6m7.001s'],
      [8n * 60n * S + 1n * NS, '8m0.000000001s'],
      [(1n << 63n) - 1n, '2562047h47m16.854775807s'],
      [-(1n << 63n), '-2562047h47m16.854775808s'],
    ];
    for (const [ns, s] of cases) {
      assert.equal(goFormatDuration(ns), s);
      assert.equal(parseGoDuration(s, 'd'), ns, s);
    }
  });

  test('parses as time.ParseDuration()', () => {
    const cases: [string, bigint][] = [
      ['0', 0n],
      ['5s', 5n * S],
      ['+5s', 5n * S],
      ['-5s', -5n * S],
      ['1.5h', 5400n * S],
      ['.5s', 500n * MS],
      ['5.s', 5n * S],
      ['1h1m1s1ms1us1ns', 3661001001001n],
      ['3µs', 3n * US],
      ['3μs', 3n * US],
      ['0.3333333333333333333h', 1200n * S],
      ['100ms', 100n * MS],
    ];
    for (const [s, ns] of cases) assert.equal(parseGoDuration(s, 'd'), ns, s);
    for (const bad of ['', '3', '-', 's', '.s', '3x', '1h-1m', '9223372036854775808ns', '3.3.3s']) {
      assert.throws(() => parseGoDuration(bad, 'd'), ProtobufError, bad);
    }
  });
});

describe('IntOrString, Quantity, RawExtension, FieldsV1', () => {
  const probe = 'io.k8s.api.core.v1.HTTPGetAction';
  test('IntOrString', () => {
    for (const port of [0, 8080, -1, 2147483647, 'http', '']) {
      assert.deepStrictEqual((decodeMessage(probe, encodeMessage(probe, { port })) as any).port, port);
    }
    assert.throws(() => encodeMessage(probe, { port: 1.5 }), /int32 or a string/);
    assert.throws(() => encodeMessage(probe, { port: 2 ** 31 }), /int32 or a string/);
  });

  test('Quantity keeps the given string; a JSON number becomes its string', () => {
    const r = 'io.k8s.api.core.v1.ResourceRequirements';
    const back = decodeMessage(r, encodeMessage(r, { limits: { cpu: 0.5, memory: '1000Mi', x: '1e3', y: 2 } })) as any;
    assert.deepStrictEqual(back.limits, { cpu: '0.5', memory: '1000Mi', x: '1e3', y: '2' });
    assert.throws(() => encodeMessage(r, { limits: { cpu: true } }), /quantity/);
  });

  test('RawExtension holds JSON, or a nested protobuf object', () => {
    const we = 'io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent';
    for (const object of [{ a: [1, 'two', null] }, 'str', 3, true, []]) {
      assert.deepStrictEqual(decodeMessage(we, encodeMessage(we, { type: 'ADDED', object })), { type: 'ADDED', object });
    }
    assert.deepStrictEqual(decodeMessage(we, encodeMessage(we, { type: 'ADDED' })), { type: 'ADDED', object: null });
  });

  test('FieldsV1 holds JSON', () => {
    const mf = 'io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry';
    const fields = { 'f:spec': { 'f:replicas': {}, 'k:{"name":"ü"}': {} } };
    assert.deepStrictEqual((decodeMessage(mf, encodeMessage(mf, { fieldsV1: fields })) as any).fieldsV1, fields);
  });
});

describe('encode errors name the field', () => {
  test('wrong JSON types', () => {
    const cases: [string, unknown, RegExp][] = [
      ['io.k8s.api.core.v1.ContainerPort', { containerPort: '80' }, /ContainerPort\.containerPort: expected an integer, got the string "80"/],
      ['io.k8s.api.core.v1.ContainerPort', { containerPort: 80.5 }, /ContainerPort\.containerPort/],
      ['io.k8s.api.core.v1.ContainerPort', { name: 5 }, /ContainerPort\.name: expected a string/],
      ['io.k8s.api.core.v1.Container', { ports: {} }, /Container\.ports: expected an array/],
      ['io.k8s.api.core.v1.Container', { ports: ['x'] }, /Container\.ports\[\]: expected an object/],
      ['io.k8s.api.core.v1.Container', { resources: 'big' }, /Container\.resources: expected an object/],
      ['io.k8s.api.core.v1.ConfigMap', { data: ['a'] }, /ConfigMap\.data: expected an object/],
      ['io.k8s.api.core.v1.ConfigMap', { immutable: 'yes' }, /ConfigMap\.immutable: expected a boolean/],
      ['io.k8s.api.core.v1.ConfigMap', { data: { a: 1 } }, /ConfigMap\.data\{\}: expected a string/],
      ['io.k8s.api.core.v1.Secret', { data: { a: 1 } }, /Secret\.data\{\}: expected a base64 string/],
    ];
    for (const [type, obj, re] of cases) assert.throws(() => encodeMessage(type, obj), (e: unknown) => e instanceof ProtobufError && re.test((e as Error).message), String(re));
    assert.throws(() => encodeMessage('io.k8s.api.core.v1.Pod', null), /expected an object/);
    assert.throws(() => encodeMessage('io.k8s.api.core.v1.NoSuchType', {}), /unknown type/);
  });
});
