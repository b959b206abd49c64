// Name and label rules (apimachinery's util/validation), shared by the API server's metadata checks
// and the kinds' validation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLabelValue, isQualifiedName, validateAnnotations, validateLabels } from '../../src/machinery/validation.js';
import { isQualifiedName as utilIsQualifiedName } from '../../src/schema/validation/util.js';

const MORE_SLASHES =
  "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";

test('isQualifiedName: a key with two slashes is refused in IsQualifiedName\'s words (metadata checks said "a valid label key")', () => {
  assert.deepEqual(isQualifiedName('a/b/c'), [MORE_SLASHES]);
  assert.equal(utilIsQualifiedName, isQualifiedName);
  assert.deepEqual(validateLabels({ 'x/y/z': 'v' }, 'metadata.labels').map((e) => e.detail), [MORE_SLASHES]);
  assert.deepEqual(validateAnnotations({ 'x/y/z': 'v' }, 'metadata.annotations').map((e) => e.detail), [MORE_SLASHES]);
});

test('isQualifiedName and isLabelValue: prefixes, names, values', () => {
  assert.deepEqual(isQualifiedName('example.com/MyName'), []);
  assert.deepEqual(isQualifiedName('my.name'), []);
  assert.deepEqual(isQualifiedName('/a'), ['prefix part must be non-empty']);
  assert.equal(isQualifiedName('Example.com/a')[0]!.startsWith('prefix part a lowercase RFC 1123 subdomain'), true);
  assert.deepEqual(isLabelValue(''), []);
  assert.deepEqual(isLabelValue('a'.repeat(63)), []);
  assert.deepEqual(isLabelValue('a'.repeat(64)), ['must be no more than 63 characters']);
  assert.equal(isLabelValue('-a')[0]!.startsWith("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used"), true);
});
