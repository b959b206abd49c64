// newUUID: version 4 UUIDs in their canonical text, from crypto-strength random bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newUUID } from '../../src/machinery/uuid.js';

test('newUUID gives lower-case version 4 (RFC 4122 variant) UUIDs, all different, across refills of its pool', () => {
  const seen = new Set<string>();
  // 256 UUIDs fill the pool once: this crosses several refills
  for (let i = 0; i < 2000; i++) {
    const u = newUUID();
    assert.match(u, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    seen.add(u);
  }
  assert.equal(seen.size, 2000);
});

test('newUUID: every hex digit position takes many values (the bytes are not reused)', () => {
  const digits = Array.from({ length: 36 }, () => new Set<string>());
  for (let i = 0; i < 600; i++) {
    const u = newUUID();
    for (let j = 0; j < 36; j++) digits[j]!.add(u[j]!);
  }
  for (let j = 0; j < 36; j++) {
    if ([8, 13, 18, 23].includes(j)) assert.deepEqual([...digits[j]!], ['-']);
    else if (j === 14) assert.deepEqual([...digits[j]!], ['4']);
    else if (j === 19) assert.equal(digits[j]!.size, 4);
    else assert.equal(digits[j]!.size, 16, `position ${j}`);
  }
});
