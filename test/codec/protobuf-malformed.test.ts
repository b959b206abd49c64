// Malformed input: every failure is a ProtobufError with a clear message, and nothing hangs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TypeDecl } from '../../src/schema/model.js';
import {
  ProtobufCodec,
  ProtobufError,
  WatchFrameDecoder,
  decodeEnvelope,
  decodeMessage,
  decodeObject,
  decodeWatchEvent,
  decodeWatchEventFrames,
  encodeEnvelope,
  encodeMessage,
  encodeObject,
  encodeWatchEventFrame,
} from '../../src/codec/protobuf.js';
import { KUBECTL_CONFIGMAP_B64, richPod } from './fixtures/protobuf-objects.js';

const POD = 'io.k8s.api.core.v1.Pod';
const CM = 'io.k8s.api.core.v1.ConfigMap';
const isPbError = (re?: RegExp) => (e: unknown) => e instanceof ProtobufError && (!re || re.test((e as Error).message));

/** runs fn; it must either return or throw a ProtobufError */
function decodesOrRejects(fn: () => unknown): 'ok' | 'error' {
  try {
    fn();
    return 'ok';
  } catch (e) {
    if (!(e instanceof ProtobufError)) throw new Error(`expected a ProtobufError, got ${(e as Error)?.stack ?? String(e)}`);
    return 'error';
  }
}

function varint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}

describe('the envelope', () => {
  test('missing, wrong or lone prefix', () => {
    assert.throws(() => decodeEnvelope(new Uint8Array(0)), isPbError(/empty data/));
    assert.throws(() => decodeEnvelope(Buffer.from('{"kind":"ConfigMap"}')), isPbError(/does not appear to be a protobuf message, expected prefix 6b 38 73 00/));
    assert.throws(() => decodeEnvelope(Buffer.from([0x6b, 0x38, 0x73, 0x01, 0x0a, 0x00])), isPbError(/expected prefix/));
    assert.throws(() => decodeEnvelope(Buffer.from([0x6b, 0x38])), isPbError(/expected prefix/));
    assert.throws(() => decodeEnvelope(Buffer.from([0x6b, 0x38, 0x73, 0x00])), isPbError(/empty body/));
    assert.throws(() => decodeObject(Buffer.from('{"kind":"ConfigMap","apiVersion":"v1"}')), isPbError(/expected prefix/));
  });

  test('wrong wire types in the envelope', () => {
    assert.throws(() => decodeEnvelope(Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x08, 0x01])), isPbError(/Unknown: field 1 has wrong wire type 0/));
    assert.throws(() => decodeEnvelope(Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x0a, 0x02, 0x08, 0x01])), isPbError(/TypeMeta: field 1 has wrong wire type 0/));
  });

  test('every truncation of a body is rejected or, at a field boundary, decodes', () => {
    const body = encodeObject(richPod());
    const env = decodeEnvelope(body);
    const rawStart = env.raw.byteOffset - body.byteOffset;
    let errors = 0;
    for (let k = 4; k < body.length; k++) {
      const r = decodesOrRejects(() => decodeObject(body.subarray(0, k)));
      if (r === 'error') errors++;
      // inside the object's message the announced length runs past the data
      if (k > rawStart - 3 && k < rawStart + env.raw.length) assert.equal(r, 'error', `truncated at ${k}`);
    }
    assert.ok(errors > body.length - 10);
  });
});

describe('messages', () => {
  test('every truncation of a message is rejected or, at a field boundary, decodes', () => {
    const msg = encodeMessage(POD, richPod());
    const firstFieldEnd = 3 + ((msg[1] & 0x7f) | (msg[2] << 7)); // metadata: tag, 2-byte length, content
    for (let k = 1; k < msg.length; k++) {
      const r = decodesOrRejects(() => decodeMessage(POD, msg.subarray(0, k)));
      if (k < firstFieldEnd) assert.equal(r, 'error', `truncated at ${k}`);
    }
  });

  test('wrong wire types are errors', () => {
    assert.throws(() => decodeMessage(CM, Buffer.from([0x08, 0x01])), isPbError(/ConfigMap: field 1 has wrong wire type 0/));
    assert.throws(() => decodeMessage(CM, Buffer.from([0x20, 0x01, 0x25, 0, 0, 0, 0])), isPbError(/ConfigMap: field 4 has wrong wire type 5/));
    assert.throws(() => decodeMessage(CM, Buffer.from([0x12, 0x02, 0x08, 0x01])), isPbError(/ConfigMap\.data: field 1 has wrong wire type 0/));
    assert.throws(() => decodeMessage('io.k8s.api.core.v1.HTTPGetAction', Buffer.from([0x12, 0x02, 0x0a, 0x00])), isPbError(/IntOrString: field 1 has wrong wire type 2/));
    assert.throws(() => decodeMessage('io.k8s.api.core.v1.PodStatus', Buffer.from([0x3a, 0x02, 0x0a, 0x00])), isPbError(/Time: field 1 has wrong wire type 2/));
  });

  test('bad varints, lengths, groups, wire types and field numbers', () => {
    assert.throws(() => decodeMessage(CM, Buffer.from([0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])), isPbError(/varint longer than 10 bytes/));
    assert.throws(() => decodeMessage(CM, Buffer.from([0x20, 0xff, 0xff])), isPbError(/truncated/));
    assert.throws(() => decodeMessage(CM, Buffer.from([0x0a, 0x05, 0x0a])), isPbError(/truncated|past the end/));
    assert.throws(() => decodeMessage(CM, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x7f])), isPbError(/varint overflows 32 bits/));
    assert.throws(() => decodeMessage(CM, Buffer.from([0x0a, 0x03, 0x0a, 0x03, 0x61, 0x62, 0x63])), isPbError(/past the end of its enclosing message/));
    assert.throws(() => decodeMessage(CM, Buffer.from([0xa4, 0x06])), isPbError(/unexpected end-group tag/));
    assert.throws(() => decodeMessage(CM, Buffer.from([0xa3, 0x06, 0x08, 0x01])), isPbError(/truncated/));
    assert.throws(() => decodeMessage(CM, Buffer.from([0xa3, 0x06, 0xac, 0x06])), isPbError(/end-group tag for field 101 inside group 100/));
    assert.throws(() => decodeMessage(CM, Buffer.from([0x97, 0x03])), isPbError(/illegal wire type 7/));
    assert.throws(() => decodeMessage(CM, Buffer.from([0x96, 0x03])), isPbError(/illegal wire type 6/));
    assert.throws(() => decodeMessage(CM, Buffer.from([0x00, 0x00])), isPbError(/illegal field number 0/));
    assert.throws(() => decodeMessage(CM, Buffer.from([0xa9, 0x06, 1, 2, 3])), isPbError(/truncated/));
  });

  test('a RawExtension that holds invalid JSON', () => {
    const we = Buffer.from([0x0a, 0x01, 0x41, 0x12, 0x03, 0x0a, 0x01, 0x7b]);
    assert.throws(() => decodeMessage('io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent', we), isPbError(/RawExtension holds invalid JSON/));
  });

  test('invalid UTF-8 in strings becomes U+FFFD, as Go prints it', () => {
    const bytes = Buffer.from([0x0a, 0x04, 0x0a, 0x02, 0xc3, 0x28]);
    assert.deepStrictEqual(decodeMessage(CM, bytes), { metadata: { name: '\uFFFD(' } });
  });

  test('deep nesting is an error, not a crash', () => {
    const decls: TypeDecl[] = [
      { name: 't.Node', protoName: 't.Node', fields: [{ name: 'child', proto: 1, type: { kind: 'object', name: 't.Node' }, optional: true, omitEmpty: true, nullable: true }] },
    ];
    const codec = new ProtobufCodec((n) => decls.find((d) => d.name === n));
    const depth = 200000;
    const lens = [0];
    for (let i = 1; i < depth; i++) lens.push(1 + varint(lens[i - 1]).length + lens[i - 1]);
    const out: number[] = [];
    for (let i = depth - 1; i >= 0; i--) out.push(0x0a, ...varint(lens[i]));
    assert.throws(() => codec.decodeMessage('t.Node', Buffer.from(out)), isPbError(/nested too deeply/));
    let obj: Record<string, unknown> = {};
    for (let i = 0; i < depth; i++) obj = { child: obj };
    assert.throws(() => codec.encodeMessage('t.Node', obj), isPbError(/nested too deeply/));
  });

  test('random bytes and flipped bits never escape as anything but ProtobufError', { timeout: 60000 }, () => {
    let seed = 0x5eed;
    const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const body = encodeObject(richPod());
    const cm = Buffer.from(KUBECTL_CONFIGMAP_B64, 'base64');
    let ok = 0;
    for (let i = 0; i < 3000; i++) {
      const src = i % 2 ? body : cm;
      const b = Buffer.from(src);
      const flips = 1 + Math.floor(rnd() * 4);
      for (let j = 0; j < flips; j++) b[4 + Math.floor(rnd() * (b.length - 4))] ^= 1 << Math.floor(rnd() * 8);
      if (decodesOrRejects(() => decodeObject(b)) === 'ok') ok++;
    }
    for (let i = 0; i < 3000; i++) {
      const n = Math.floor(rnd() * 64);
      const b = Buffer.alloc(n);
      for (let j = 0; j < n; j++) b[j] = Math.floor(rnd() * 256);
      decodesOrRejects(() => decodeMessage(POD, b));
      decodesOrRejects(() => decodeObject(Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), b])));
      decodesOrRejects(() => decodeWatchEventFrames(b));
    }
    assert.ok(ok > 0 && ok < 3000);
  });
});

describe('watch frames', () => {
  test('a truncated stream, an oversized frame and a garbled event', () => {
    const frame = encodeWatchEventFrame('ADDED', encodeEnvelope('v1', 'ConfigMap', encodeMessage(CM, { metadata: { name: 'x' } })));
    assert.throws(() => decodeWatchEventFrames(frame.subarray(0, frame.length - 1)), isPbError(/ends inside a frame/));
    assert.throws(() => decodeWatchEventFrames(frame.subarray(0, 3)), isPbError(/ends inside a frame/));
    assert.throws(() => new WatchFrameDecoder(1024).push(Buffer.from([0x7f, 0xff, 0xff, 0xff])), isPbError(/exceeds the limit/));
    assert.throws(() => decodeWatchEvent(Buffer.from([0x08, 0x01])), isPbError(/WatchEvent: field 1 has wrong wire type 0/));
    assert.throws(() => decodeWatchEvent(Buffer.from([0x12, 0x02, 0x08, 0x01])), isPbError(/RawExtension: field 1 has wrong wire type 0/));
    assert.throws(() => decodeWatchEvent(Buffer.from([0x0a, 0x09, 0x41])), isPbError(/truncated|past the end/));
  });
});
