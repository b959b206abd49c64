// Reading container log files as the kubelet does (src/nodeagent/logs.ts), on hand-written CRI
// and Docker JSON files: partial records, tail, since, timestamps, limitBytes, streams, and follow
// with appends, a rotation and the container's end.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { LogReadError, parseCRILine, parseLogTime, readLogs, sinceOf, type ReadLogsOptions } from '../../src/nodeagent/logs.js';

const dir = mkdtempSync(join(tmpdir(), 'keelson-logs-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

function file(content: string): string {
  const p = join(dir, `${n++}.log`);
  writeFileSync(p, content);
  return p;
}

/** a sink that collects what is written */
function sink(): PassThrough & { text(): string } {
  const s = new PassThrough() as PassThrough & { text(): string };
  const chunks: Buffer[] = [];
  s.on('data', (d: Buffer) => chunks.push(d));
  s.text = () => Buffer.concat(chunks).toString('utf8');
  return s;
}

async function read(path: string, o: ReadLogsOptions = {}): Promise<string> {
  const s = sink();
  await readLogs(path, s, o);
  return s.text();
}

const CRI = [
  '2024-01-02T03:04:05.000000001Z stdout F one\n',
  '2024-01-02T03:04:06.5Z stderr F two\n',
  '2024-01-02T03:04:07.123456789Z stdout P thr\n',
  '2024-01-02T03:04:07.2Z stdout P e\n',
  '2024-01-02T03:04:08Z stdout F e-joined\n',
  '2024-01-02T05:04:09.000000000+02:00 stdout F four\n',
].join('');

test('the records: full lines as they are, partial ones joined with what follows', async () => {
  assert.equal(await read(file(CRI)), 'one\ntwo\nthree-joined\nfour\n');
});

test('timestamps: each line starts with its first record\'s time, nine digits of fraction, its own offset (a zero offset as Z)', async () => {
  assert.equal(
    await read(file(CRI), { timestamps: true }),
    [
      '2024-01-02T03:04:05.000000001Z one',
      '2024-01-02T03:04:06.500000000Z two',
      '2024-01-02T03:04:07.123456789Z three-joined',
      '2024-01-02T05:04:09.000000000+02:00 four',
      '',
    ].join('\n'),
  );
  assert.equal(parseLogTime('2024-01-02T03:04:05+00:00')!.text, '2024-01-02T03:04:05.000000000Z');
  assert.equal(parseLogTime('2024-02-30T03:04:05Z'), undefined);
  assert.equal(parseLogTime('2024-01-02 03:04:05Z'), undefined);
});

test('tailLines counts records (a partial record is one) from the end; 0 gives nothing', async () => {
  const p = file(CRI);
  assert.equal(await read(p, { tailLines: 1 }), 'four\n');
  assert.equal(await read(p, { tailLines: 2 }), 'e-joined\nfour\n');
  assert.equal(await read(p, { tailLines: 4 }), 'three-joined\nfour\n');
  assert.equal(await read(p, { tailLines: 100 }), 'one\ntwo\nthree-joined\nfour\n');
  assert.equal(await read(p, { tailLines: 0 }), '');
  // a file longer than one read block
  const many = Array.from({ length: 5000 }, (_, i) => `2024-01-02T03:04:05Z stdout F line ${i} ${'x'.repeat(20)}\n`).join('');
  const out = await read(file(many), { tailLines: 3 });
  assert.equal(out, [4997, 4998, 4999].map((i) => `line ${i} ${'x'.repeat(20)}\n`).join(''));
});

test('sinceTime and sinceSeconds: older records are left out (the later of the two counts)', async () => {
  const p = file(CRI);
  assert.equal(await read(p, { sinceTime: '2024-01-02T03:04:07Z' }), 'three-joined\nfour\n');
  // 03:04:09Z is four's time (05:04:09+02:00)
  assert.equal(await read(p, { sinceTime: '2024-01-02T03:04:09Z' }), 'four\n');
  const now = Date.parse('2024-01-02T03:04:10Z');
  assert.equal(await read(p, { sinceSeconds: 2, now }), 'e-joined\nfour\n');
  assert.equal(await read(p, { sinceSeconds: 4, now }), 'two\nthree-joined\nfour\n');
  assert.deepEqual(sinceOf({ sinceSeconds: 100, sinceTime: '2024-01-02T03:04:09Z' }, now), { sec: Date.parse('2024-01-02T03:04:09Z') / 1000, nsec: 0 });
  assert.deepEqual(sinceOf({ sinceSeconds: 1, sinceTime: '2024-01-02T03:00:00Z' }, now), { sec: now / 1000 - 1, nsec: 0 });
});

test('limitBytes: the output stops after so many bytes, mid-line, timestamps counted', async () => {
  const p = file(CRI);
  assert.equal(await read(p, { limitBytes: 6 }), 'one\ntw');
  assert.equal(await read(p, { limitBytes: 4 }), 'one\n');
  assert.equal(await read(p, { limitBytes: 35, timestamps: true }), '2024-01-02T03:04:05.000000001Z one\n');
  assert.equal(await read(p, { limitBytes: 12, timestamps: true }), '2024-01-02T0');
});

test('stream: one of the two, or both', async () => {
  const p = file(CRI);
  assert.equal(await read(p, { stream: 'Stderr' }), 'two\n');
  assert.equal(await read(p, { stream: 'Stdout' }), 'one\nthree-joined\nfour\n');
  assert.equal(await read(p, { stream: 'All' }), 'one\ntwo\nthree-joined\nfour\n');
});

test('lines that do not parse are skipped; an incomplete last line is written when not following', async () => {
  const p = file('2024-01-02T03:04:05Z stdout F a\ngarbage\n2024-01-02T03:04:05Z stdtty F b\nnot-a-time stdout F c\n2024-01-02T03:04:06Z stdout F d');
  assert.equal(await read(p), 'a\nd');
  assert.deepEqual(parseCRILine(Buffer.from('2024-01-02T03:04:05Z stdout F\n')), 'log tag is not found');
  // a tag list: the first tag counts
  assert.equal(await read(file('2024-01-02T03:04:05Z stdout P:x ab\n2024-01-02T03:04:05Z stdout F:y c\n')), 'abc\n');
});

test('Docker\'s JSON format, told by the first line', async () => {
  const p = file(
    '{"log":"hello\\n","stream":"stdout","time":"2024-01-02T03:04:05.1Z"}\n' +
      '{"log":"oops\\n","stream":"stderr","time":"2024-01-02T03:04:06Z"}\n',
  );
  assert.equal(await read(p), 'hello\noops\n');
  assert.equal(await read(p, { timestamps: true, stream: 'Stderr' }), '2024-01-02T03:04:06.000000000Z oops\n');
  await assert.rejects(read(file('what is this\n')), (e: unknown) => e instanceof LogReadError && /^failed to get parse function: unsupported log format: "what is this\\n"$/.test((e as Error).message));
});

test('a missing file: the kubelet\'s words', async () => {
  const p = join(dir, 'nope.log');
  await assert.rejects(read(p), { message: `failed to try resolving symlinks in path "${p}": lstat ${p}: no such file or directory` });
});

function until(pred: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (pred()) return resolve();
      if (Date.now() > deadline) return reject(new Error('timed out'));
      setTimeout(tick, 10);
    };
    tick();
  });
}

const line = (t: string, s: string) => `2024-01-02T03:04:${t}Z stdout F ${s}\n`;

test('follow: appends are written as they come, an incomplete line only once complete; the end once the container stops', async () => {
  const p = file(line('01', 'first'));
  let running = true;
  const s = sink();
  const done = readLogs(p, s, { follow: true, isRunning: () => running, pollIntervalMs: 50 });
  await until(() => s.text() === 'first\n');
  appendFileSync(p, line('02', 'second'));
  await until(() => s.text() === 'first\nsecond\n');
  appendFileSync(p, '2024-01-02T03:04:03Z stdout F thi');
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(s.text(), 'first\nsecond\n');
  appendFileSync(p, 'rd\n');
  await until(() => s.text() === 'first\nsecond\nthird\n');
  // the container stops: what is left is read, then the reading ends
  appendFileSync(p, line('04', 'last words'));
  running = false;
  await done;
  assert.equal(s.text(), 'first\nsecond\nthird\nlast words\n');
});

test('follow with tailLines: the tail, then what comes', async () => {
  const p = file(line('01', 'a') + line('02', 'b') + line('03', 'c'));
  let running = true;
  const s = sink();
  const done = readLogs(p, s, { follow: true, tailLines: 1, isRunning: () => running, pollIntervalMs: 50 });
  await until(() => s.text() === 'c\n');
  appendFileSync(p, line('04', 'd'));
  await until(() => s.text() === 'c\nd\n');
  running = false;
  await done;
});

test('follow across a rotation: the rest of the old file, then the new file at the same path', async () => {
  const p = join(dir, 'rotating.log');
  writeFileSync(p, line('01', 'before'));
  let running = true;
  const s = sink();
  const done = readLogs(p, s, { follow: true, isRunning: () => running, pollIntervalMs: 50 });
  await until(() => s.text() === 'before\n');
  // the runtime writes a last line into the file as it is rotated away, then reopens the path
  appendFileSync(p, line('02', 'late in the old file'));
  renameSync(p, `${p}.20240102-030402`);
  await new Promise((r) => setTimeout(r, 120));
  writeFileSync(p, line('03', 'in the new file'));
  await until(() => s.text() === 'before\nlate in the old file\nin the new file\n');
  appendFileSync(p, line('04', 'more'));
  await until(() => s.text().endsWith('more\n'));
  // and a second rotation
  renameSync(p, `${p}.20240102-030405`);
  writeFileSync(p, line('05', 'third file'));
  await until(() => s.text().endsWith('third file\n'));
  running = false;
  await done;
  assert.equal(s.text(), 'before\nlate in the old file\nin the new file\nmore\nthird file\n');
});

test('follow ends when the client goes away (the writable closes, or the signal aborts)', async () => {
  const p = file(line('01', 'x'));
  const s = sink();
  const done = readLogs(p, s, { follow: true, isRunning: () => true, pollIntervalMs: 50 });
  await until(() => s.text() === 'x\n');
  s.destroy();
  await done;
  const ac = new AbortController();
  const s2 = sink();
  const done2 = readLogs(p, s2, { follow: true, isRunning: () => true, pollIntervalMs: 10_000, signal: ac.signal });
  await until(() => s2.text() === 'x\n');
  ac.abort();
  await done2;
});

test('follow of a container that does not run: the file, then the end', async () => {
  const p = file(line('01', 'x') + line('02', 'y'));
  assert.equal(await read(p, { follow: true, isRunning: () => false }), 'x\ny\n');
});

test('backpressure: a slow reader gets everything, in order', async () => {
  const many = Array.from({ length: 20000 }, (_, i) => line('01', `l${i}`)).join('');
  const p = file(many);
  const s = new PassThrough({ highWaterMark: 1024 });
  const got: Buffer[] = [];
  const done = readLogs(p, s);
  // read slowly
  await new Promise((r) => setTimeout(r, 50));
  s.on('data', (d: Buffer) => got.push(d));
  await done;
  await new Promise((r) => setImmediate(r));
  const text = Buffer.concat(got).toString();
  assert.equal(text.split('\n').length, 20001);
  assert.ok(text.startsWith('l0\nl1\n'));
  assert.ok(text.endsWith('l19999\n'));
});
