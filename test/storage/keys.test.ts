import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareKeysExact, prefixEnd } from '../../src/storage/keys.js';

const utf8 = (a: string, b: string) => Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));

test('keys: exact comparison is UTF-8 byte order', () => {
  const samples = ['', 'a', 'b', 'ab', 'a\0', '/x/', '/x0', 'é', '\u07ff', '\u0800', '\ud7ff', '\ue000', '\uffff', '\u{10000}', '\u{1F600}', '\u{10FFFF}', 'a\u{1F600}b', 'a\uFFFDb'];
  for (const a of samples) for (const b of samples) assert.equal(Math.sign(compareKeysExact(a, b)), utf8(a, b), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
});

test('keys: prefixEnd bounds exactly the keys with the prefix', () => {
  assert.equal(prefixEnd(''), undefined);
  assert.equal(prefixEnd('/registry/pods/'), '/registry/pods0');
  assert.equal(prefixEnd('a\ud7ff'), 'a\ue000');
  assert.equal(prefixEnd('a\uffff'), 'a\u{10000}');
  assert.equal(prefixEnd('a\u{1F600}'), 'a\u{1F601}');
  assert.equal(prefixEnd('a\u{10FFFF}'), 'b');
  assert.equal(prefixEnd('\u{10FFFF}'), undefined);
  for (const p of ['/r/', 'a\uffff', 'a\u{1F600}', 'a\u{10FFFF}', 'x\ud7ff']) {
    const end = prefixEnd(p)!;
    for (const tail of ['', '\0', 'z', '\uffff', '\u{10FFFF}', '\u{10FFFF}\u{10FFFF}']) {
      assert.ok(compareKeysExact(p + tail, end) < 0, `${JSON.stringify(p + tail)} < ${JSON.stringify(end)}`);
    }
    assert.ok(compareKeysExact(p, end) < 0);
  }
});
