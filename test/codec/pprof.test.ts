// codec/pprof.ts: the conversions from V8's inspector profiles to Go's pprof, the encoding
// (protobuf, gzip) read back by the codec's decoder, deltas and the text form.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import {
  cpuProfileFromV8,
  decodeProfile,
  deltaProfile,
  encodeProfile,
  encodeProfileMessage,
  heapProfileFromV8,
  profileText,
  type ProfileData,
  type V8CallFrame,
} from '../../src/codec/pprof.js';

const cf = (functionName: string, url = 'file:///app/x.js', lineNumber = 9): V8CallFrame => ({ functionName, scriptId: '1', url, lineNumber, columnNumber: 0 });

test('a V8 CPU profile: idle samples left out, a period of CPU per sample, stacks leaf first without (root), lines from positionTicks', () => {
  const v8 = {
    nodes: [
      { id: 1, callFrame: cf('(root)', '', -1), children: [2, 5, 6] },
      { id: 2, callFrame: cf('main', 'file:///app/main.js', 0), children: [3] },
      { id: 3, callFrame: cf('work'), children: [4], positionTicks: [{ line: 12, ticks: 1 }] },
      { id: 4, callFrame: cf(''), positionTicks: [{ line: 20, ticks: 3 }, { line: 21, ticks: 1 }] },
      { id: 5, callFrame: cf('(idle)', '', -1) },
      { id: 6, callFrame: cf('(garbage collector)', '', -1) },
    ],
    startTime: 1000,
    endTime: 11000,
    samples: [4, 5, 5, 4, 3, 4, 6, 4, 5],
    timeDeltas: [10, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
  };
  const p = cpuProfileFromV8(v8, { startedNanos: 1_700_000_000_123_456_789n, periodNanos: 1_000_000 });
  assert.deepEqual(p.sampleTypes, [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }]);
  assert.equal(p.durationNanos, 10_000_000);
  const rows = p.samples.map((s) => [s.values.join(' '), s.stack.map((f) => `${f.functionName}@${f.file}:${f.line}`).join(' < ')]);
  assert.deepEqual(rows.sort(), [
    ['1 1000000', '(anonymous)@/app/x.js:21 < work@/app/x.js:10 < main@/app/main.js:1'],
    ['1 1000000', '(garbage collector)@:0'],
    ['1 1000000', 'work@/app/x.js:12 < main@/app/main.js:1'],
    ['3 3000000', '(anonymous)@/app/x.js:20 < work@/app/x.js:10 < main@/app/main.js:1'],
  ]);
  // encoded and read back: the same, time_nanos exact
  const d = decodeProfile(encodeProfile(p));
  assert.equal(d.timeNanos, 1_700_000_000_123_456_789n);
  assert.equal(d.period, 1_000_000);
  assert.deepEqual(d.periodType, { type: 'cpu', unit: 'nanoseconds' });
  assert.deepEqual(
    d.samples.map((s) => s.values),
    p.samples.map((s) => s.values),
  );
  assert.deepEqual(d.samples[0]!.stack, p.samples[0]!.stack);
  assert.equal(d.mappings.length, 1);
  assert.ok(d.mappings[0]!.hasFunctions);
});

test('a V8 sampling heap profile: inuse_space per allocation stack; space/bytes period', () => {
  const v8 = {
    head: {
      callFrame: cf('(root)', '', -1),
      selfSize: 0,
      id: 1,
      children: [
        { callFrame: cf('alloc', 'node:internal/x', 4), selfSize: 10, id: 2, children: [{ callFrame: cf('inner'), selfSize: 0, id: 3, children: [] }] },
      ],
    },
    samples: [
      { size: 524300, nodeId: 3, ordinal: 1 },
      { size: 1000000, nodeId: 3, ordinal: 2 },
      { size: 600000, nodeId: 2, ordinal: 3 },
    ],
  };
  const p = heapProfileFromV8(v8, { timeNanos: 5n, samplingIntervalBytes: 524288 });
  assert.deepEqual(p.sampleTypes, [{ type: 'inuse_space', unit: 'bytes' }]);
  assert.deepEqual(p.periodType, { type: 'space', unit: 'bytes' });
  assert.equal(p.period, 524288);
  const rows = p.samples.map((s) => [s.values[0], s.stack.map((f) => f.functionName).join('<')]);
  assert.deepEqual(rows.sort(), [
    [1524300, 'inner<alloc'],
    [600000, 'alloc'],
  ]);
  assert.equal(p.samples.find((s) => s.stack[0]!.functionName === 'alloc')!.stack[0]!.file, 'node:internal/x');
});

test('deltas, negative values, comments and the text form', () => {
  const f = { functionName: 'f', file: '/a.js', startLine: 1, line: 2 };
  const g = { functionName: 'g', file: '/a.js', startLine: 5, line: 5 };
  const base: Omit<ProfileData, 'samples' | 'timeNanos'> = { sampleTypes: [{ type: 'inuse_space', unit: 'bytes' }], periodType: { type: 'space', unit: 'bytes' }, period: 524288 };
  const p0: ProfileData = { ...base, timeNanos: 1_000_000_000n, samples: [{ stack: [f], values: [100] }, { stack: [g], values: [50] }] };
  const p1: ProfileData = { ...base, timeNanos: 3_000_000_000n, samples: [{ stack: [f], values: [40] }, { stack: [g], values: [50] }, { stack: [g, f], values: [7] }], comments: ['hello'] };
  const d = deltaProfile(p0, p1);
  assert.equal(d.durationNanos, 2_000_000_000);
  assert.equal(d.timeNanos, 3_000_000_000n);
  assert.deepEqual(
    d.samples.map((s) => [s.values[0], s.stack.map((x) => x.functionName).join('<')]),
    [
      [-60, 'f'],
      [7, 'g<f'],
    ],
  );
  const back = decodeProfile(encodeProfile(d));
  assert.deepEqual(back.samples.map((s) => s.values[0]), [-60, 7]);
  assert.deepEqual(back.comments, ['hello']);
  // a message without gzip reads too; gzip is what is written
  assert.deepEqual(decodeProfile(encodeProfileMessage(d)).samples.length, 2);
  assert.ok(gunzipSync(encodeProfile(d)).length > 0);
  assert.equal(profileText('heap', d), 'heap profile: 2 samples [inuse_space/bytes] @ period 524288 space/bytes\n# hello\n\n7 @\n#\tg\t/a.js:5\n#\tf\t/a.js:2\n\n-60 @\n#\tf\t/a.js:2\n');
});
