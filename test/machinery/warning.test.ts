// The Warning header value of a warning text (src/machinery/warning.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateHeaderValue } from 'node:http';
import { warningHeaderValue } from '../../src/machinery/warning.js';

test('Kubernetes\' form: 299, agent "-", the text quoted with " and \\ escaped', () => {
  assert.equal(warningHeaderValue('unknown field "spec.x"'), '299 - "unknown field \\"spec.x\\""');
  assert.equal(warningHeaderValue('a\\b'), '299 - "a\\\\b"');
});

test('any text makes a header Node.js can send: UTF-8 bytes as latin1, control characters as spaces', () => {
  for (const text of ['unknown field "ü€😀"', 'line\nbreak\r\x00\x1b\x7f tab\tkept', 'ÿ', '']) {
    const v = warningHeaderValue(text);
    assert.doesNotThrow(() => validateHeaderValue('Warning', v), JSON.stringify(text));
  }
  // the bytes on the wire are the text's UTF-8
  const v = warningHeaderValue('unknown field "ü€"');
  assert.equal(Buffer.from(v, 'latin1').toString('utf8'), '299 - "unknown field \\"ü€\\""');
  assert.equal(warningHeaderValue('a\nb'), '299 - "a b"');
});
