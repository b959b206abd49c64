// The kept-bytes allocator (src/codec/kept.ts): bytes a watch-cache entry keeps never share an
// ArrayBuffer with Node's Buffer pool, so keeping them keeps no request's or answer's garbage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keptBuffer, keptUTF8, keptCopy, kept } from '../../src/codec/kept.js';

test('kept: slices come from slabs that no pooled Buffer shares', () => {
  const pooled = Buffer.from('pooled bytes'); // a slice of Node's 8 KiB pool
  const a = keptUTF8('{"kind":"ConfigMap"}');
  const b = keptUTF8('{"kind":"Secret","data":{"k":"dsOq"}}');
  assert.notEqual(a.buffer, pooled.buffer);
  assert.equal(a.buffer, b.buffer, 'small kept bytes are packed into one slab');
  assert.equal(a.toString(), '{"kind":"ConfigMap"}');
  assert.equal(b.toString(), '{"kind":"Secret","data":{"k":"dsOq"}}');
  assert.equal(b.byteOffset % 8, 0, 'slices are 8-byte aligned');
  assert.ok(b.byteOffset >= a.byteOffset + a.length, 'slices do not overlap');
});

test('kept: UTF-8 beyond ASCII, large bytes, and a full slab', () => {
  assert.equal(keptUTF8('{"name":"café ☕ 𝄞"}').toString(), '{"name":"café ☕ 𝄞"}');
  const big = keptBuffer(5000);
  assert.equal(big.length, 5000);
  assert.equal(big.byteLength, big.buffer.byteLength, 'a large request gets a buffer of its own');
  // filling past one slab starts another and leaves every earlier slice intact
  const slices: Buffer[] = [];
  for (let i = 0; i < 40; i++) slices.push(keptUTF8(String(i).repeat(1000 / String(i).length | 0)));
  for (let i = 0; i < 40; i++) assert.equal(slices[i].toString(), String(i).repeat(1000 / String(i).length | 0));
  assert.ok(new Set(slices.map((s) => s.buffer)).size >= 2);
});

test('kept: kept() copies a slice of a larger buffer and keeps a whole one as it is', () => {
  const whole = new Uint8Array([1, 2, 3]);
  assert.equal(kept(whole), whole);
  const pooled = Buffer.from([4, 5, 6]);
  const k = kept(pooled);
  assert.notEqual(k.buffer, pooled.buffer);
  assert.deepEqual([...k], [4, 5, 6]);
  assert.deepEqual([...keptCopy(new Uint8Array([7, 8]))], [7, 8]);
});
