// Integers beyond 2^53 kept exactly (codec/int64.ts) through every codec: JSON (parse and
// stringify), YAML, Protobuf and CBOR, each decoding to a bigint exactly where the number is an
// integer beyond Number.MAX_SAFE_INTEGER, and to a number everywhere else.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { addGoSeconds } from '../../src/machinery/time.js';
import { exactJSON, fractionalLiterals, holdsBigInt, narrowBigInts, parseJSON, parseJSONExact, stringifyJSON } from '../../src/codec/int64.js';
import { jsonHasNoDuplicates } from '../../src/codec/duplicates.js';
import { normalize } from '../../src/codec/json.js';
import { parseFirstYAMLDocument } from '../../src/codec/yaml-lazy.js';
import { decodeMessage, encodeMessage } from '../../src/codec/protobuf.js';
import { decodeCBORObject, decodeCBORValue, encodeCBOR, encodeCBORValue } from '../../src/codec/cbor.js';

const MAX = 9223372036854775807n;
const MIN = -9223372036854775808n;
const JOB = 'io.k8s.api.batch.v1.Job';

describe('JSON', () => {
  test('parseJSON: bigints only for integers beyond MAX_SAFE_INTEGER, JSON.parse for everything else', () => {
    const text = '{"a":9007199254740993,"b":9007199254740991,"c":-9007199254740992,"d":1e300,"e":9223372036854775807.0,"f":[-9223372036854775808,1.5,"9007199254740993"],"g":99999999999999999999999}';
    const v = parseJSON(text);
    assert.equal(v.a, 9007199254740993n);
    assert.equal(v.b, 9007199254740991);
    assert.equal(v.c, -9007199254740992n);
    assert.equal(v.d, 1e300);
    assert.equal(v.e, 9223372036854775807.0); // a fraction: a float, as in Go
    assert.deepEqual(v.f, [MIN, 1.5, '9007199254740993']);
    assert.equal(v.g, 99999999999999999999999n);
    // the same value as JSON.parse but for the bigints
    const plain = '{"x":[1,{"y":"\\u00e9\\"q"}],"__proto__":{"z":true},"k":null,"k":2}';
    assert.deepEqual(parseJSONExact(plain), JSON.parse(plain));
    assert.equal(Object.getPrototypeOf(parseJSONExact(plain)), Object.prototype);
    assert.ok(Object.prototype.hasOwnProperty.call(parseJSONExact(plain), '__proto__'));
    // no unsafe number: the parsed value itself
    const p = JSON.parse(plain);
    assert.equal(exactJSON(plain, p), p);
  });

  test('stringifyJSON writes bigints as integers, and what JSON.stringify writes for the rest', () => {
    const v = { a: MAX, b: [MIN, 1, undefined, 'x"'], c: undefined, d: { e: 9007199254740993n, t: new Date(0) }, f: [] as unknown[], g: {} };
    const want = JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `@@${x}@@` : x)).replace(/"@@(-?\d+)@@"/g, '$1');
    assert.equal(stringifyJSON(v), want);
    const pretty = JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `@@${x}@@` : x), 2).replace(/"@@(-?\d+)@@"/g, '$1');
    assert.equal(stringifyJSON(v, 2), pretty);
    assert.equal(stringifyJSON({ a: 1 }), '{"a":1}');
    assert.deepEqual(parseJSON(stringifyJSON(v)).a, MAX);
    assert.throws(() => stringifyJSON({ a: Symbol.iterator, b: (() => { const o: any = {}; o.o = o; return o; })() }), TypeError);
  });

  test("the duplicate count's walk reports an unsafe number", () => {
    const numbers = { unsafe: false };
    const text = '{"spec":{"activeDeadlineSeconds":9223372036854775807}}';
    assert.equal(jsonHasNoDuplicates(text, JSON.parse(text), [], numbers), true);
    assert.equal(numbers.unsafe, true);
    const small = '{"spec":{"activeDeadlineSeconds":9007199254740991}}';
    jsonHasNoDuplicates(small, JSON.parse(small), [], numbers);
    assert.equal(numbers.unsafe, false);
  });

  test('normalize: an int64 field takes any int64, and refuses beyond it as Go does', () => {
    const job = (v: string) => parseJSON(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"activeDeadlineSeconds":${v},"template":{}}}`);
    assert.equal(normalize(JOB, job('9223372036854775807')).obj.spec.activeDeadlineSeconds, MAX);
    assert.equal(normalize(JOB, job('-9223372036854775808')).obj.spec.activeDeadlineSeconds, MIN);
    assert.equal(
      normalize(JOB, job('9223372036854775808')).typeError,
      'json: cannot unmarshal number 9223372036854775808 into Go struct field JobSpec.spec.activeDeadlineSeconds of type int64',
    );
    assert.equal(
      normalize(JOB, job('-9223372036854775809')).typeError,
      'json: cannot unmarshal number -9223372036854775809 into Go struct field JobSpec.spec.activeDeadlineSeconds of type int64',
    );
    assert.match(normalize(JOB, job('1.5')).typeError ?? '', /cannot unmarshal number 1.5 into Go struct field JobSpec.spec.activeDeadlineSeconds of type int64/);
    // an int32 field: beyond int32
    const p = parseJSON('{"spec":{"parallelism":9007199254740993,"template":{}}}');
    assert.match(normalize(JOB, p).typeError ?? '', /cannot unmarshal number 9007199254740993 into Go struct field JobSpec.spec.parallelism of type int32/);
  });
});

describe('YAML', () => {
  test('integers beyond 2^53 as bigints, the rest as numbers', () => {
    const v = parseFirstYAMLDocument('a: 9223372036854775807\nb: 12\nc: [-9223372036854775808, 1.5, "9007199254740993", 0x10]\nd: 1e20\n') as any;
    assert.deepEqual(v, { a: MAX, b: 12, c: [MIN, 1.5, '9007199254740993', 16], d: 1e20 });
    assert.equal(holdsBigInt(narrowBigInts({ x: [1n, { y: 2n ** 60n }] })), true);
    assert.deepEqual(narrowBigInts({ x: [1n, { y: 3n }] }), { x: [1, { y: 3 }] });
  });
});

describe('Protobuf and CBOR', () => {
  const obj = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'j', generation: 9007199254740993n, deletionGracePeriodSeconds: MAX },
    spec: {
      activeDeadlineSeconds: MIN,
      template: { spec: { terminationGracePeriodSeconds: 12, securityContext: { supplementalGroups: [MAX, 1, -9007199254740993n] }, containers: [] } },
    },
  };
  test('Protobuf: int64 fields exact both ways', () => {
    const back = decodeMessage(JOB, encodeMessage(JOB, obj)) as any;
    assert.equal(back.metadata.generation, 9007199254740993n);
    assert.equal(back.metadata.deletionGracePeriodSeconds, MAX);
    assert.equal(back.spec.activeDeadlineSeconds, MIN);
    assert.equal(back.spec.template.spec.terminationGracePeriodSeconds, 12);
    assert.deepEqual(back.spec.template.spec.securityContext.supplementalGroups, [MAX, 1, -9007199254740993n]);
  });
  test('CBOR: int64 fields and schemaless integers exact both ways', () => {
    const back = decodeCBORObject(JOB, encodeCBOR(JOB, obj)).obj as any;
    assert.equal(back.metadata.generation, 9007199254740993n);
    assert.equal(back.metadata.deletionGracePeriodSeconds, MAX);
    assert.equal(back.spec.activeDeadlineSeconds, MIN);
    assert.equal(back.spec.template.spec.terminationGracePeriodSeconds, 12);
    assert.deepEqual(back.spec.template.spec.securityContext.supplementalGroups, [MAX, 1, -9007199254740993n]);
    assert.deepEqual(decodeCBORValue(encodeCBORValue({ a: MAX, b: [MIN, 5, -9007199254740991] })), { a: MAX, b: [MIN, 5, -9007199254740991] });
  });
});

test("addGoSeconds: Go's int64 nanoseconds, which wrap", () => {
  assert.equal(addGoSeconds(1000, 30), 31000);
  // time.Second * time.Duration(max int64) is -1s in Go
  assert.equal(addGoSeconds(1_000_000, MAX), 999_000);
  assert.equal(addGoSeconds(1_000_000, 9007199254740993n), 1_000_000 + Number(BigInt.asIntN(64, 9007199254740993n * 1_000_000_000n) / 1_000_000n));
});

test('fractionalLiterals: the literals with a fraction or an exponent, by path; strings and integers are skipped', () => {
  assert.equal(fractionalLiterals('{"a":1,"b":"1.0","c":[1,2],"d":{"e":-3}}'), null);
  assert.equal(fractionalLiterals('{"image":"nginx:1.14.2","x":"a,1.5","y":"\\",1.5"}'), null);
  const m = fractionalLiterals('{"spec":{"a":1.0,"b":[2,3e2,{"c":-4.50E-1}],"s":"q\\"1.0","d.e":5e0},"t":true,"n":null,"f":false,"z":1.25}');
  assert.deepEqual(
    [...(m ?? new Map())],
    [
      ['spec.a', '1.0'],
      ['spec.b[1]', '3e2'],
      ['spec.b[2].c', '-4.50E-1'],
      ['spec.d.e', '5e0'],
      ['z', '1.25'],
    ],
  );
  // Go's words name the literal in every integer field, int32, int64 and IntOrString alike
  const text = '{"spec":{"activeDeadlineSeconds":1e3}}';
  assert.equal(normalize(JOB, JSON.parse(text), text).typeError, 'json: cannot unmarshal number 1e3 into Go struct field JobSpec.spec.activeDeadlineSeconds of type int64');
  assert.equal(normalize(JOB, JSON.parse(text)).typeError, undefined, 'without the text, the number is all there is');
});
