import { test, describe, beforeEach, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { EventEmitter } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  log, configure, resetForTests, forModule, kobj, kref, formatHeader, formatKV, formatKVs, sprintf, parseVModule,
  addFlags, addGlobalFlags, printFlags, validateAndApply, loggingFeatureSpecs, Logger, settings,
} from '../../src/cli/klog.js';
import { FlagSet, FeatureGate } from '../../src/cli/flags.js';

const source = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../../../test/cli/klog.test.ts'), 'utf8').split('\n');
/** The 1-based line of this test file holding `marker`. */
function lineOf(marker: string): number {
  const i = source.findIndex((l) => l.includes(marker) && !l.includes('lineOf('));
  assert.ok(i >= 0, marker);
  return i + 1;
}

let lines: string[] = [];
const capture = { write(s: string) { lines.push(s); return true; } };
// 2026-11-22 03:02:01.123456 UTC
const NOW = Date.UTC(2026, 10, 22, 3, 2, 1, 123) + 0.456;

beforeEach(() => {
  resetForTests();
  lines = [];
  configure({ output: capture, now: () => NOW, pid: 12345, utc: true });
});
after(() => resetForTests());

describe('line format', () => {
  test('header: severity, MMDD, time with microseconds, pid in 7 columns, file:line of the caller', () => {
    log.info('Starting controller', { name: 'endpoints', workers: 5 }); // MARK-info
    assert.deepEqual(lines, [`I1122 03:02:01.123456   12345 klog.test.ts:${lineOf('MARK-info')}] "Starting controller" name="endpoints" workers=5\n`]);
    lines = [];
    log.warn('Slow'); // MARK-warn
    log.error(new Error('boom'), 'Failed to sync', { key: 'ns/x' }); // MARK-error
    log.error(null, 'No error value'); // MARK-nullerr
    assert.deepEqual(lines, [
      `W1122 03:02:01.123456   12345 klog.test.ts:${lineOf('MARK-warn')}] "Slow"\n`,
      `E1122 03:02:01.123456   12345 klog.test.ts:${lineOf('MARK-error')}] "Failed to sync" err="boom" key="ns/x"\n`,
      `E1122 03:02:01.123456   12345 klog.test.ts:${lineOf('MARK-nullerr')}] "No error value"\n`,
    ]);
  });

  test('a logger called by Node itself (an emitter\'s listener) names the code that emitted, not node:events', () => {
    const em = new EventEmitter();
    em.on('say', log.warn.bind(log));
    em.emit('say', 'Heard'); // MARK-emit
    assert.deepEqual(lines, [`W1122 03:02:01.123456   12345 klog.test.ts:${lineOf('MARK-emit')}] "Heard"\n`]);
  });

  test('formatHeader pads and zero-fills like klog', () => {
    assert.equal(formatHeader(0, 'a.ts:1', Date.UTC(2026, 0, 2, 4, 5, 6, 7), 42, true), 'I0102 04:05:06.007000      42 a.ts:1] ');
    assert.equal(formatHeader(3, 'b.ts:99', Date.UTC(2026, 11, 31, 23, 59, 59, 999) + 0.999, 1234567, true), 'F1231 23:59:59.999999 1234567 b.ts:99] ');
    const local = new Date(2026, 5, 7, 8, 9, 10, 11);
    assert.equal(formatHeader(1, 'c.ts:2', local.getTime(), 1, false), 'W0607 08:09:10.011000       1 c.ts:2] ');
  });

  test('printf-style calls print the text unquoted, with a newline', () => {
    log.infof('Starting %s with %d workers (%q)', 'endpoints', 5, 'x y'); // MARK-infof
    log.errorf('plain\n');
    assert.equal(lines[0], `I1122 03:02:01.123456   12345 klog.test.ts:${lineOf('MARK-infof')}] Starting endpoints with 5 workers ("x y")\n`);
    assert.match(lines[1]!, /^E1122 .*\] plain\n$/);
  });

  test('without caller lookup the header says ???:1', () => {
    configure({ callerLookup: false });
    log.info('x');
    assert.equal(lines[0], 'I1122 03:02:01.123456   12345 ???:1] "x"\n');
  });

  test('withValues and withCallDepth', () => {
    const l = log.withValues({ controller: 'ns' });
    l.info('Synced', { count: 2 }); // MARK-with
    const helper = (msg: string) => log.withCallDepth(1).info(msg);
    helper('from helper'); // MARK-helper
    assert.equal(lines[0], `I1122 03:02:01.123456   12345 klog.test.ts:${lineOf('MARK-with')}] "Synced" controller="ns" count=2\n`);
    assert.equal(lines[1], `I1122 03:02:01.123456   12345 klog.test.ts:${lineOf('MARK-helper')}] "from helper"\n`);
  });

  test('fatal writes an F line and a stack, then exits 255', () => {
    let code: number | undefined;
    configure({ exit: ((c: number) => { code = c; throw new Error('exited'); }) as (c: number) => never });
    assert.throws(() => log.fatal('Cannot continue', { reason: 'x' }), /exited/); // MARK-fatal
    assert.equal(code, 255);
    assert.equal(lines[0], `F1122 03:02:01.123456   12345 klog.test.ts:${lineOf('MARK-fatal')}] "Cannot continue" reason="x"\n`);
    assert.match(lines[1]!, /^goroutine 1 \[running\]:\n/);
  });

  test('split stream sends errors and info to different sinks', () => {
    const info: string[] = [];
    const errs: string[] = [];
    configure({ splitStream: true, infoOutput: { write: (s) => info.push(s) }, errorOutput: { write: (s) => errs.push(s) } });
    log.info('a');
    log.warn('b');
    log.error(new Error('c'), 'd');
    assert.equal(info.length, 2);
    assert.equal(errs.length, 1);
    assert.equal(lines.length, 0);
  });
});

describe('key/value quoting', () => {
  test('values as klog writes them', () => {
    assert.equal(formatKV('s', 'plain'), ' s="plain"');
    assert.equal(formatKV('q', 'say "hi"\t'), ' q="say \\"hi\\"\\t"');
    assert.equal(formatKV('n', 1), ' n=1');
    assert.equal(formatKV('f', 1.5), ' f=1.5');
    assert.equal(formatKV('big', 12345678901234567890n), ' big=12345678901234567890');
    assert.equal(formatKV('b', true), ' b=true');
    assert.equal(formatKV('nil', null), ' nil=null');
    assert.equal(formatKV('undef', undefined), ' undef=null');
    assert.equal(formatKV('err', new Error('it broke')), ' err="it broke"');
    assert.equal(formatKV('obj', { a: 1, b: ['x'], c: '<tag>&' }), ' obj={"a":1,"b":["x"],"c":"\\u003ctag\\u003e\\u0026"}');
    assert.equal(formatKV('list', [1, 2]), ' list=[1,2]');
    assert.equal(formatKV('nan', NaN), ' nan="<internal error: json: unsupported value: NaN>"');
    assert.equal(formatKV('pod', kobj({ metadata: { namespace: 'kube-system', name: 'dns' } })), ' pod="kube-system/dns"');
    assert.equal(formatKV('node', kobj({ metadata: { name: 'n1' } })), ' node="n1"');
    assert.equal(formatKV('ref', kref('ns', 'x')), ' ref="ns/x"');
    assert.equal(formatKV('bytes', Buffer.from('a\u00ffb', 'latin1')), ' bytes="a\\xffb"');
    assert.equal(formatKV('when', new Date(Date.UTC(2026, 0, 1))), ' when="2026-01-01T00:00:00.000Z"');
    assert.equal(formatKV('url', new URL('https://x/y')), ' url="https://x/y"');
    assert.equal(formatKV('map', new Map([['k', 1]])), ' map={"k":1}');
  });

  test('multi-line strings use the =< block form', () => {
    assert.equal(formatKV('text', 'line 1\nline 2'), ' text=<\n\tline 1\n\tline 2\n >');
    assert.equal(formatKV('text', 'ends\n'), ' text=<\n\tends\n >');
  });

  test('key/value lists: arrays, missing values, duplicates', () => {
    assert.equal(formatKVs(['a', 1, 'b']), ' a=1 b="(MISSING)"');
    assert.equal(formatKVs({ a: 1 }, { a: 1 }), ' a=1');
    assert.equal(formatKVs({ a: 1, b: 2 }, { a: 3 }), ' b=2 a=3');
    assert.equal(formatKVs(undefined, ['k', 'v']), ' k="v"');
  });

  test('sprintf', () => {
    assert.equal(sprintf('%s=%v %d%% %q %t %5d|%x', 'a', { b: 1 }, 42.9, 'q"', false, 7, 255), 'a={"b":1} 42% "q\\"" false     7|ff');
    assert.equal(sprintf('%s %s', 'only'), 'only %!s(MISSING)');
    assert.equal(sprintf('x', 1), 'x%!(EXTRA 1)');
  });
});

describe('verbosity', () => {
  test('-v gates V(n), parsed from flags', () => {
    const fs = new FlagSet('t');
    addFlags(fs);
    fs.parse(['-v=2']);
    assert.equal(settings().verbosity, 2);
    log.v(2).info('shown'); // MARK-v2
    log.v(3).info('hidden');
    log.v(3).error(new Error('x'), 'hidden too');
    log.v(3).infof('hidden %s', 'as well');
    assert.equal(lines.length, 1);
    assert.equal(lines[0], `I1122 03:02:01.123456   12345 klog.test.ts:${lineOf('MARK-v2')}] "shown"\n`);
    assert.equal(log.enabled(2), true);
    assert.equal(log.enabled(3), false);
    assert.equal(log.v(3).enabled, false);
    fs.parse(['--v', '5']);
    assert.equal(log.v(5).enabled, true);
    assert.equal(fs.lookup('v')!.value.toString(), '5');
  });

  test('a disabled V(n) never looks at the stack', () => {
    const orig = Error.captureStackTrace;
    let calls = 0;
    Error.captureStackTrace = function (this: unknown, ...args: Parameters<typeof orig>) { calls++; return orig.apply(this, args); } as typeof orig;
    try {
      for (let i = 0; i < 1000; i++) {
        log.v(4).info('nope', { i });
        if (log.enabled(6)) log.info('never');
      }
      configure({ vmodule: parseVModule('other=3') });
      log.v(4).info('nope: vmodule max is 3');
    } finally {
      Error.captureStackTrace = orig;
    }
    assert.equal(calls, 0);
    assert.equal(lines.length, 0);
  });

  test('--vmodule raises verbosity per file (name without extension, globs allowed)', () => {
    const fs = new FlagSet('t');
    addFlags(fs);
    fs.parse(['--vmodule=klog.test=4,cont*=6', '--vmodule', 'other=1']);
    assert.equal(fs.lookup('vmodule')!.value.toString(), 'klog.test=4,cont*=6,other=1');
    log.v(4).info('this file at 4'); // MARK-vmod
    log.v(5).info('not at 5');
    const controller = forModule('file:///x/dist/src/controllers/controller.js');
    controller.v(6).info('controller at 6');
    controller.v(7).info('not at 7');
    const other = new Logger('other');
    other.v(2).info('other not at 2');
    assert.equal(lines.length, 2);
    assert.equal(lines[0], `I1122 03:02:01.123456   12345 klog.test.ts:${lineOf('MARK-vmod')}] "this file at 4"\n`);
    assert.match(lines[1]!, /\] "controller at 6"\n$/);
  });

  test('vmodule syntax errors read as component-base writes them', () => {
    const fs = new FlagSet('t');
    addFlags(fs);
    assert.throws(() => fs.parse(['--vmodule=foo']), { message: 'invalid argument "foo" for "--vmodule" flag: "foo" does not have the pattern=N format' });
    assert.throws(() => fs.parse(['--vmodule=foo=x']), { message: 'invalid argument "foo=x" for "--vmodule" flag: parsing verbosity in "foo=x": strconv.ParseUint: parsing "x": invalid syntax' });
    assert.throws(() => fs.parse(['-v=-1']), { message: 'invalid argument "-1" for "-v, --v" flag: strconv.ParseUint: parsing "-1": invalid syntax' });
    assert.deepEqual(parseVModule('a=1,,b*=2,'), [{ filePattern: 'a', verbosity: 1 }, { filePattern: 'b*', verbosity: 2 }]);
  });
});

describe('flags', () => {
  test('global flags as the Kubernetes daemons list them', () => {
    const fs = new FlagSet('t');
    addGlobalFlags(fs, 'keelson-scheduler');
    assert.deepEqual(fs.all().map((f) => `${f.shorthand ? '-' + f.shorthand + ', ' : ''}--${f.name} ${f.value.type()} ${f.defValue}`), [
      '-h, --help bool false',
      '--log-flush-frequency duration 5s',
      '--log-text-info-buffer-size quantity 0',
      '--log-text-split-stream bool false',
      '--logging-format string text',
      '-v, --v Level 0',
      '--version version false',
      '--vmodule pattern=N,... ',
    ]);
    assert.equal(new FlagSet('x').lookup('version'), undefined);
    const noVersion = new FlagSet('t');
    addGlobalFlags(noVersion, 'x', { version: false });
    assert.equal(noVersion.lookup('version'), undefined);
    const help = fs.flagUsages();
    assert.ok(help.includes('  -v, --v Level '));
    assert.ok(help.includes('      --vmodule pattern=N,... '));
    assert.ok(help.includes('      --log-flush-frequency duration '));
    assert.ok(help.includes('(default 5s)'));
    fs.parse(['--log-flush-frequency=10s']);
    assert.equal(settings().flushFrequency, 10_000);
  });

  test('validation: only the text format; alpha options need LoggingAlphaOptions', () => {
    const fs = new FlagSet('t');
    addFlags(fs);
    fs.parse(['--logging-format=json', '--log-text-split-stream']);
    assert.deepEqual(validateAndApply(), [
      'format: Unsupported value: "json": supported values: "text"',
      'options.text.splitStream: Forbidden: Feature LoggingAlphaOptions is disabled',
    ]);
    const gate = new FeatureGate(loggingFeatureSpecs);
    gate.set('LoggingAlphaOptions=true');
    fs.parse(['--logging-format=text']);
    assert.deepEqual(validateAndApply(gate), []);
  });

  test('printFlags logs FLAG lines at V(1)', () => {
    const fs = new FlagSet('t');
    fs.string('name', 'a "b"', '');
    printFlags(fs);
    assert.equal(lines.length, 0);
    configure({ verbosity: 1 });
    printFlags(fs);
    assert.match(lines[0]!, /^I1122 .* klog\.ts:\d+\] FLAG: --name="a \\"b\\""\n$/);
  });
});

test('stderr a slow reader holds: nothing is lost when the pipe is full and non-blocking', async () => {
  const { spawn } = await import('node:child_process');
  const mod = join(dirname(fileURLToPath(import.meta.url)), '../../src/cli/klog.js');
  // the child touches process.stderr (which makes fd 2 non-blocking), then writes 4 MiB in lines
  // of 1 KiB through the stderr sink while this process does not read
  const script = `
    const { fdSink } = await import(${JSON.stringify(mod)});
    process.stderr;
    const sink = fdSink(2);
    const line = 'x'.repeat(1019);
    for (let i = 0; i < 4096; i++) sink.write(String(i).padStart(4, '0') + line + '\\n');
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
  const closed = new Promise((r) => child.once('close', r));
  const chunks: Buffer[] = [];
  child.stderr!.on('data', (d: Buffer) => chunks.push(d));
  child.stderr!.pause();
  await new Promise((r) => setTimeout(r, 700));
  child.stderr!.resume();
  assert.equal(await closed, 0);
  const got = Buffer.concat(chunks).toString().split('\n').filter(Boolean);
  assert.equal(got.length, 4096);
  got.forEach((l, i) => assert.equal(l.slice(0, 4), String(i).padStart(4, '0')));
});
