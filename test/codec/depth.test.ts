// The nesting bounds of request bodies (src/codec/depth.ts), checked on their text or decoded value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonNestsDeeperThan, valueNestsDeeperThan, yamlNestsDeeperThan, MAX_JSON_DEPTH, MAX_YAML_DEPTH } from '../../src/codec/depth.js';

const nested = (d: number, open = '[', close = ']') => open.repeat(d) + close.repeat(d);

test('JSON: the depth of [ and { counts, brackets inside strings do not', () => {
  assert.equal(jsonNestsDeeperThan(nested(10), 10), false);
  assert.equal(jsonNestsDeeperThan(nested(11), 10), true);
  assert.equal(jsonNestsDeeperThan('{"a":' + nested(9) + '}', 10), false);
  assert.equal(jsonNestsDeeperThan('{"a":' + nested(10) + '}', 10), true);
  // 30 brackets, all in strings (one with an escaped quote before them)
  const strings = JSON.stringify({ a: '[[[[[[[[[[[[[[[[[[[[', b: 'x\\"{{{{{{{{{{' });
  assert.equal(jsonNestsDeeperThan(strings + ' '.repeat(40), 2), false);
  // siblings do not add up: depth, not count
  assert.equal(jsonNestsDeeperThan('[' + '[],'.repeat(100) + '[]]', 2), false);
  // the default bound, and a text too short to reach it, which is not scanned
  assert.equal(jsonNestsDeeperThan(nested(MAX_JSON_DEPTH)), false);
  assert.equal(jsonNestsDeeperThan(nested(MAX_JSON_DEPTH + 1)), true);
  assert.equal(jsonNestsDeeperThan('[[[[', 10), false);
});

test('YAML: flow collections, and how far right a block\'s content starts', () => {
  assert.equal(yamlNestsDeeperThan('a: ' + nested(10), 10), false);
  assert.equal(yamlNestsDeeperThan('a: ' + nested(11), 10), true);
  // brackets in quoted scalars and comments do not count; a quote inside a plain scalar starts nothing
  assert.equal(yamlNestsDeeperThan(`a: "[[[[[[[[[[[[[[[["\nb: '{{{{{{{{{{{{{{{{'' x'\nc: 1 # [[[[[[[[[[[[[[[[\nd: don't [x]\n`, 3), false);
  // block nesting: each level starts further right
  let block = '';
  for (let i = 0; i < 12; i++) block += ' '.repeat(i) + `k${i}:\n`;
  assert.equal(yamlNestsDeeperThan(block, 10), true);
  assert.equal(yamlNestsDeeperThan(block, 12), false);
  // compact sequences nest several levels on one line
  assert.equal(yamlNestsDeeperThan('- '.repeat(6) + 'x\n' + ' '.repeat(30), 10), true);
  assert.equal(yamlNestsDeeperThan('- '.repeat(4) + 'x\n' + ' '.repeat(30), 10), false);
  // an ordinary manifest
  const manifest = 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: "nginx:1.27"\n        args: ["--a", "--b"]\n';
  assert.equal(yamlNestsDeeperThan(manifest.repeat(20)), false);
  assert.equal(yamlNestsDeeperThan('a: ' + nested(MAX_YAML_DEPTH + 1)), true);
});

test('a decoded value: arrays and objects, iteratively (deeper than the stack)', () => {
  let v: unknown = 1;
  for (let i = 0; i < 5; i++) v = { a: [v] };
  assert.equal(valueNestsDeeperThan(v, 10), false);
  assert.equal(valueNestsDeeperThan({ x: v }, 10), true);
  assert.equal(valueNestsDeeperThan(new Uint8Array(100), 0), true);
  assert.equal(valueNestsDeeperThan('scalar', 0), false);
  let deep: unknown = null;
  for (let i = 0; i < 200_000; i++) deep = [deep];
  assert.equal(valueNestsDeeperThan(deep), true);
});
