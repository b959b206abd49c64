import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  FlagSet, NamedFlagSets, FeatureGate, Command, printSections, flagUsagesWrapped, loadConfigFile, applyConfig,
  parseDuration, formatDuration, parseGoInt, parseGoFloat, 
  readCSVRecord, writeCSVRecord, HelpRequested, NotExistError, ValueRequiredError, InvalidValueError, InvalidSyntaxError,
  ConfigFileError, type Writer,
} from '../../src/cli/flags.js';
import { DEFAULT_GIT_VERSION } from '../../src/cli/version.js';
import { tempDir } from '../tempdir.js';
import { goFloat, goFormatDuration, goParseDuration, goQuote } from '../../src/machinery/gostrings.js';

function sink(): Writer & { text: string } {
  const w = { text: '', write(s: string) { w.text += s; return true; } };
  return w;
}

function errOf(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  assert.fail('expected an error');
}

describe('Go scalar syntax', () => {
  test('ParseInt with base 0: prefixes, underscores, ranges and messages', () => {
    assert.equal(parseGoInt('42'), 42n);
    assert.equal(parseGoInt('-42'), -42n);
    assert.equal(parseGoInt('+7'), 7n);
    assert.equal(parseGoInt('0x1F'), 31n);
    assert.equal(parseGoInt('0o17'), 15n);
    assert.equal(parseGoInt('017'), 15n);
    assert.equal(parseGoInt('0b101'), 5n);
    assert.equal(parseGoInt('1_000'), 1000n);
    assert.equal(parseGoInt('0'), 0n);
    assert.equal(errOf(() => parseGoInt('abc')).message, 'strconv.ParseInt: parsing "abc": invalid syntax');
    assert.equal(errOf(() => parseGoInt('')).message, 'strconv.ParseInt: parsing "": invalid syntax');
    assert.equal(errOf(() => parseGoInt('1__0')).message, 'strconv.ParseInt: parsing "1__0": invalid syntax');
    assert.equal(errOf(() => parseGoInt('_1')).message, 'strconv.ParseInt: parsing "_1": invalid syntax');
    assert.equal(errOf(() => parseGoInt('2147483648', 0, 32)).message, 'strconv.ParseInt: parsing "2147483648": value out of range');
    assert.equal(parseGoInt('-2147483648', 0, 32), -2147483648n);
    assert.equal(errOf(() => parseGoInt('9223372036854775808')).message, 'strconv.ParseInt: parsing "9223372036854775808": value out of range');
    assert.equal(errOf(() => parseGoInt('1.5')).message, 'strconv.ParseInt: parsing "1.5": invalid syntax');
  });

  test('ParseFloat and FormatFloat(g, -1)', () => {
    assert.equal(parseGoFloat('0.1'), 0.1);
    assert.equal(parseGoFloat('1e3'), 1000);
    assert.equal(parseGoFloat('.5'), 0.5);
    assert.equal(parseGoFloat('5.'), 5);
    assert.equal(parseGoFloat('+Inf'), Infinity);
    assert.equal(parseGoFloat('-inf'), -Infinity);
    assert.ok(Number.isNaN(parseGoFloat('NaN')));
    assert.equal(parseGoFloat('0x1p-2'), 0.25);
    for (const bad of ['', 'abc', '1,5', ' 1', '0x10', '1e']) {
      assert.equal(errOf(() => parseGoFloat(bad)).message, `strconv.ParseFloat: parsing ${goQuote(bad)}: invalid syntax`);
    }
    assert.equal(goFloat(0.1), '0.1');
    assert.equal(goFloat(20), '20');
    assert.equal(goFloat(0.55), '0.55');
    assert.equal(goFloat(100000), '100000');
    assert.equal(goFloat(1e6), '1e+06');
    assert.equal(goFloat(123456789), '1.23456789e+08');
    assert.equal(goFloat(0.0001), '0.0001');
    assert.equal(goFloat(0.00001), '1e-05');
    assert.equal(goFloat(1e100), '1e+100');
    assert.equal(goFloat(-2.5), '-2.5');
  });

  test('strconv.Quote', () => {
    assert.equal(goQuote('abc'), '"abc"');
    assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
    assert.equal(goQuote('tab\there\nnl'), '"tab\\there\\nnl"');
    assert.equal(goQuote('\x00\x7f'), '"\\x00\\x7f"');
    assert.equal(goQuote('héllo 日本'), '"héllo 日本"');
    assert.equal(goQuote('\u200b'), '"\\u200b"');
  });

  test('time.ParseDuration accepts what Go accepts', () => {
    const ok: [string, bigint][] = [
      ['0', 0n], ['5s', 5_000_000_000n], ['30s', 30_000_000_000n], ['1478s', 1_478_000_000_000n], ['-5s', -5_000_000_000n],
      ['+5s', 5_000_000_000n], ['-0', 0n], ['+0', 0n], ['5.0s', 5_000_000_000n], ['5.6s', 5_600_000_000n], ['5.s', 5_000_000_000n],
      ['.5s', 500_000_000n], ['1.004s', 1_004_000_000n], ['100.00100s', 100_001_000_000n], ['10ns', 10n], ['11us', 11_000n],
      ['12µs', 12_000n], ['12μs', 12_000n], ['13ms', 13_000_000n], ['15m', 900_000_000_000n], ['16h', 57_600_000_000_000n],
      ['3h30m', 12_600_000_000_000n], ['10.5s4m', 250_500_000_000n], ['-2m3.4s', -123_400_000_000n],
      ['1h2m3s4ms5us6ns', 3_723_004_005_006n], ['39h9m14.425s', 140_954_425_000_000n], ['52763797000ns', 52_763_797_000n],
      ['0.3333333333333333333h', 1_200_000_000_000n], ['9007199254740993ns', 9_007_199_254_740_993n],
      ['9223372036854775807ns', 9_223_372_036_854_775_807n], ['9223372036854775.807us', 9_223_372_036_854_775_807n],
      ['-9223372036854775808ns', -9_223_372_036_854_775_808n], ['0.100000000000000000000h', 360_000_000_000n],
    ];
    for (const [s, ns] of ok) assert.equal(goParseDuration(s), ns, s);
    assert.equal(parseDuration('1m30s'), 90_000);
    assert.equal(parseDuration('1.5ms'), 1.5);
  });

  test('time.ParseDuration errors read as Go writes them', () => {
    for (const s of ['', '-', 's', '.', '-.', '.s', '+.s', '3000000h', '9223372036854775808ns']) {
      assert.equal(errOf(() => goParseDuration(s)).message, `time: invalid duration ${goQuote(s)}`, s);
    }
    assert.equal(errOf(() => goParseDuration('3')).message, 'time: missing unit in duration "3"');
    assert.equal(errOf(() => goParseDuration('1d')).message, 'time: unknown unit "d" in duration "1d"');
  });

  test('Duration.String is canonical', () => {
    const cases: [bigint, string][] = [
      [0n, '0s'], [1n, '1ns'], [1100n, '1.1µs'], [2_200_000n, '2.2ms'], [3_300_000_000n, '3.3s'], [245_000_000_000n, '4m5s'],
      [245_001_000_000n, '4m5.001s'], [18_367_001_000_000n, '5h6m7.001s'], [480_000_000_001n, '8m0.000000001s'],
      [9_223_372_036_854_775_807n, '2562047h47m16.854775807s'], [-9_223_372_036_854_775_808n, '-2562047h47m16.854775808s'],
      [-1_500_000_000n, '-1.5s'],
    ];
    for (const [ns, s] of cases) assert.equal(goFormatDuration(ns), s);
    assert.equal(formatDuration(300_000), '5m0s');
    assert.equal(formatDuration(31_536_000_000), '8760h0m0s');
    assert.equal(formatDuration(43_200_000), '12h0m0s');
    assert.equal(formatDuration(0.5), '500µs');
  });

  test('CSV records as encoding/csv reads and writes them', () => {
    assert.deepEqual(readCSVRecord('a,b,c'), ['a', 'b', 'c']);
    assert.deepEqual(readCSVRecord(''), []);
    assert.deepEqual(readCSVRecord('"a,b",c'), ['a,b', 'c']);
    assert.deepEqual(readCSVRecord('"say ""hi""",x'), ['say "hi"', 'x']);
    assert.deepEqual(readCSVRecord('a,'), ['a', '']);
    assert.deepEqual(readCSVRecord(' a'), [' a']);
    assert.equal(errOf(() => readCSVRecord('a"b')).message, 'parse error on line 1, column 2: bare " in non-quoted-field');
    assert.equal(errOf(() => readCSVRecord('"ab')).message, 'parse error on line 1, column 4: extraneous or missing " in quoted-field');
    assert.equal(writeCSVRecord(['a', 'b,c', 'd"e', '', ' f']), 'a,"b,c","d""e",," f"');
  });
});

describe('FlagSet: every type', () => {
  test('bool: --x, --x=false, and a separate word is positional', () => {
    const fs = new FlagSet('t');
    const a = fs.bool('a', false, '');
    const b = fs.bool('b', true, '');
    fs.parse(['--a', 'false', '--b=false']);
    assert.equal(a.get(), true);
    assert.equal(b.get(), false);
    assert.deepEqual(fs.args(), ['false']);
    for (const v of ['1', 't', 'T', 'TRUE', 'true', 'True']) { fs.parse([`--b=${v}`]); assert.equal(b.get(), true, v); }
    for (const v of ['0', 'f', 'F', 'FALSE', 'false', 'False']) { fs.parse([`--b=${v}`]); assert.equal(b.get(), false, v); }
    assert.equal(errOf(() => fs.parse(['--a=yes'])).message, 'invalid argument "yes" for "--a" flag: strconv.ParseBool: parsing "yes": invalid syntax');
  });

  test('int, int32, int64 are range-checked', () => {
    const fs = new FlagSet('t');
    const port = fs.int('port', 1, '', { shorthand: 'p' });
    const n32 = fs.int32('n32', 0, '');
    const n64 = fs.int64('n64', 0, '');
    fs.parse(['--port', '0x10', '--n32=-2147483648', '--n64=9007199254740991']);
    assert.equal(port.get(), 16);
    assert.equal(n32.get(), -2147483648);
    assert.equal(n64.get(), 9007199254740991);
    assert.equal(errOf(() => fs.parse(['--port', 'abc'])).message, 'invalid argument "abc" for "-p, --port" flag: strconv.ParseInt: parsing "abc": invalid syntax');
    assert.equal(errOf(() => fs.parse(['--n32=2147483648'])).message, 'invalid argument "2147483648" for "--n32" flag: strconv.ParseInt: parsing "2147483648": value out of range');
    const e = errOf(() => fs.parse(['--n32=x']));
    assert.ok(e instanceof InvalidValueError);
    assert.equal((e as InvalidValueError).flag.name, 'n32');
  });

  test('float64, string, ip', () => {
    const o = { rate: 0.1, name: 'x', addr: '0.0.0.0' };
    const fs = new FlagSet('t');
    fs.float64Var(o, 'rate', 'rate', '');
    fs.stringVar(o, 'name', 'name', '');
    fs.ipVar(o, 'addr', 'bind-address', '');
    fs.parse(['--rate=1e-2', '--name', '', '--bind-address=::1']);
    assert.deepEqual(o, { rate: 0.01, name: '', addr: '::1' });
    assert.equal(errOf(() => fs.parse(['--bind-address=1.2.3'])).message, 'invalid argument "1.2.3" for "--bind-address" flag: failed to parse IP: "1.2.3"');
  });

  test('strings: comma-separated with CSV quoting, repeatable, appends after the first use', () => {
    const o = { controllers: ['*'] };
    const fs = new FlagSet('t');
    const f = fs.stringsVar(o, 'controllers', 'controllers', '');
    assert.equal(f.defValue, '[*]');
    fs.parse(['--controllers=a,b', '--controllers', '"c,d"', '--controllers=-e']);
    assert.deepEqual(o.controllers, ['a', 'b', 'c,d', '-e']);
    assert.equal(f.value.toString(), '[a,b,"c,d",-e]');
    const g = new FlagSet('t');
    const h = g.strings('x', ['keep'], '');
    g.parse(['--x=']);
    assert.deepEqual(h.get(), []);
  });

  test('stringArray keeps commas', () => {
    const fs = new FlagSet('t');
    const f = fs.stringArray('arg', [], '');
    fs.parse(['--arg=a,b', '--arg', 'c']);
    assert.deepEqual(f.get(), ['a,b', 'c']);
    assert.equal(f.value.toString(), '["a,b",c]');
  });

  test('duration in Go syntax, held in milliseconds, printed canonically', () => {
    const o = { period: 300_000 };
    const fs = new FlagSet('t');
    const f = fs.durationVar(o, 'period', 'period', '');
    assert.equal(f.defValue, '5m0s');
    fs.parse(['--period=1h2m3.5s']);
    assert.equal(o.period, 3_723_500);
    assert.equal(f.value.toString(), '1h2m3.5s');
    fs.parse(['--period', '300ms']);
    assert.equal(o.period, 300);
    assert.equal(errOf(() => fs.parse(['--period=5'])).message, 'invalid argument "5" for "--period" flag: time: missing unit in duration "5"');
  });

  test('stringToString', () => {
    const fs = new FlagSet('t');
    const f = fs.stringToString('labels', { z: '1' }, '');
    assert.equal(f.defValue, '[z=1]');
    fs.parse(['--labels=a=b,c=d', '--labels', 'e=f=g']);
    assert.deepEqual(f.get(), { a: 'b', c: 'd', e: 'f=g' });
    assert.equal(f.value.toString(), '[a=b,c=d,e=f=g]');
    assert.equal(errOf(() => new FlagSet('t').parse(['--labels=x'])).message, 'unknown flag: --labels');
    const g = new FlagSet('t');
    g.stringToString('labels', {}, '');
    assert.equal(errOf(() => g.parse(['--labels=x'])).message, 'invalid argument "x" for "--labels" flag: x must be formatted as key=value');
    assert.equal(errOf(() => g.parse(['--labels=a=1,b,c=2'])).message, 'invalid argument "a=1,b,c=2" for "--labels" flag: b must be formatted as key=value');
    g.parse(['--labels=a=1,b']); // one '=': no splitting, as pflag
    assert.deepEqual(g.lookup('labels')!.get(), { a: '1,b' });
  });

  test('mapStringBool, mapStringString (= and <), colon-separated multimap', () => {
    const fs = new FlagSet('t');
    const gates = fs.mapStringBool('gates', {}, '');
    const reserved = fs.mapStringString('reserved', {}, '');
    const evict = fs.mapStringString('eviction-hard', {}, '', { sep: '<' });
    const mm = fs.colonSeparatedMultimap('mm', {}, '');
    fs.parse(['--gates=A=true, B=false', '--gates', 'C=1', '--reserved=cpu=100m,memory=1Gi', '--eviction-hard=memory.available<100Mi,nodefs.available<10%', '--mm=a:x,a:y', '--mm=b:z']);
    assert.deepEqual(gates.get(), { A: true, B: false, C: true });
    assert.equal(gates.value.toString(), 'A=true,B=false,C=true');
    assert.deepEqual(reserved.get(), { cpu: '100m', memory: '1Gi' });
    assert.deepEqual(evict.get(), { 'memory.available': '100Mi', 'nodefs.available': '10%' });
    assert.equal(evict.value.toString(), 'memory.available<100Mi,nodefs.available<10%');
    assert.deepEqual(mm.get(), { a: ['x', 'y'], b: ['z'] });
    assert.equal(mm.value.toString(), 'a:x,a:y,b:z');
    assert.equal(errOf(() => fs.parse(['--gates=A'])).message, 'invalid argument "A" for "--gates" flag: malformed pair, expect string=bool');
    assert.equal(errOf(() => fs.parse(['--gates=A=maybe'])).message, 'invalid argument "A=maybe" for "--gates" flag: invalid value of A: maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax');
    assert.equal(errOf(() => fs.parse(['--reserved=cpu'])).message, 'invalid argument "cpu" for "--reserved" flag: malformed pair, expect string=string');
    assert.equal(errOf(() => fs.parse(['--mm=x'])).message, 'invalid argument "x" for "--mm" flag: malformed pair, expect string:string');
  });

  test('int32 lists, quantities, named cert/key pairs', () => {
    const o = { ports: [] as number[], buf: '0', sni: [] as { certFile: string; keyFile: string; names: string[] }[] };
    const fs = new FlagSet('t');
    fs.int32SliceVar(o, 'ports', 'ports', '');
    const q = fs.quantityVar(o, 'buf', 'log-text-info-buffer-size', '');
    fs.namedCertKeyVar(o, 'sni', 'tls-sni-cert-key', '');
    assert.equal(q.defaultIsZeroValue(), true);
    fs.parse(['--ports=1,2', '--ports=3', '--log-text-info-buffer-size=2Ki', '--tls-sni-cert-key', 'a.crt,a.key:foo.com,*.bar.com', '--tls-sni-cert-key=b.crt,b.key']);
    assert.deepEqual(o.ports, [1, 2, 3]);
    assert.equal(o.buf, '2Ki');
    assert.deepEqual(o.sni, [{ certFile: 'a.crt', keyFile: 'a.key', names: ['foo.com', '*.bar.com'] }, { certFile: 'b.crt', keyFile: 'b.key', names: [] }]);
    for (const good of ['512', '1k', '1.5Gi', '1e3', '100m', '0']) fs.parse([`--log-text-info-buffer-size=${good}`]);
    assert.equal(errOf(() => fs.parse(['--log-text-info-buffer-size=1K'])).message, 'invalid argument "1K" for "--log-text-info-buffer-size" flag: unable to parse quantity\'s suffix');
    assert.match(errOf(() => fs.parse(['--log-text-info-buffer-size=1XB'])).message, /^invalid argument "1XB" for "--log-text-info-buffer-size" flag: quantities must match the regular expression/);
    assert.equal(errOf(() => fs.parse(['--ports=1,x'])).message, 'invalid argument "1,x" for "--ports" flag: strconv.ParseInt: parsing "x": invalid syntax');
    assert.equal(errOf(() => fs.parse(['--tls-sni-cert-key=a.crt'])).message, 'invalid argument "a.crt" for "--tls-sni-cert-key" flag: expected comma separated certificate and key file paths');
  });

  test('version: --version, --version=raw, --version=vX.Y.Z', () => {
    const fs = new FlagSet('t');
    const v = fs.version();
    assert.equal(v.get(), 'false');
    fs.parse(['--version']);
    assert.equal(v.get(), 'true');
    fs.parse(['--version=raw']);
    assert.equal(v.get(), 'raw');
    fs.parse(['--version=false']);
    assert.equal(v.get(), 'false');
    assert.equal(errOf(() => fs.parse(['--version=v9.9.9'])).message, `invalid argument "v9.9.9" for "--version" flag: version "v9.9.9" must match major/minor/patch of default version "${DEFAULT_GIT_VERSION}"`);
  });
});

describe('FlagSet: syntax', () => {
  test('-v 2, -v=2, -v2, --v 2, grouped bool shorthands, --, positional args', () => {
    const fs = new FlagSet('t');
    const v = fs.int('v', 0, '', { shorthand: 'v' });
    const a = fs.bool('all', false, '', { shorthand: 'a' });
    const q = fs.bool('quiet', false, '', { shorthand: 'q' });
    const n = fs.string('namespace', '', '', { shorthand: 'n' });
    for (const args of [['-v', '2'], ['-v=2'], ['-v2'], ['--v', '2'], ['--v=2']]) {
      fs.parse(args);
      assert.equal(v.get(), 2, args.join(' '));
    }
    fs.parse(['x', '-aqnkube-system', 'y', '--', '--not-a-flag', '-v']);
    assert.equal(a.get(), true);
    assert.equal(q.get(), true);
    assert.equal(n.get(), 'kube-system');
    assert.deepEqual(fs.args(), ['x', 'y', '--not-a-flag', '-v']);
    assert.equal(fs.argsLenAtDash(), 2);
    fs.parse(['-aqn', 'default', '-']);
    assert.equal(n.get(), 'default');
    assert.deepEqual(fs.args(), ['-']);
  });

  test('interspersed can be turned off', () => {
    const fs = new FlagSet('t', { interspersed: false });
    const b = fs.bool('b', false, '');
    fs.parse(['cmd', '--b']);
    assert.equal(b.get(), false);
    assert.deepEqual(fs.args(), ['cmd', '--b']);
  });

  test('errors carry pflag wording', () => {
    const fs = new FlagSet('t');
    fs.int('port', 0, '');
    fs.int('v', 0, '', { shorthand: 'v' });
    fs.bool('b', false, '', { shorthand: 'b' });
    const cases: [string[], string, Function][] = [
      [['--foo'], 'unknown flag: --foo', NotExistError],
      [['--foo=1'], 'unknown flag: --foo', NotExistError],
      [['-x'], "unknown shorthand flag: 'x' in -x", NotExistError],
      [['-bx'], "unknown shorthand flag: 'x' in -x", NotExistError],
      [['--port'], 'flag needs an argument: --port', ValueRequiredError],
      [['-v'], "flag needs an argument: 'v' in -v", ValueRequiredError],
      [['-bv'], "flag needs an argument: 'v' in -v", ValueRequiredError],
      [['---port'], 'bad flag syntax: ---port', InvalidSyntaxError],
      [['--=x'], 'bad flag syntax: --=x', InvalidSyntaxError],
      [['--port=abc'], 'invalid argument "abc" for "--port" flag: strconv.ParseInt: parsing "abc": invalid syntax', InvalidValueError],
    ];
    for (const [args, msg, cls] of cases) {
      const e = errOf(() => fs.parse(args));
      assert.equal(e.message, msg, args.join(' '));
      assert.ok(e instanceof cls, `${args.join(' ')}: ${e.constructor.name}`);
    }
    assert.ok(errOf(() => fs.parse(['--help'])) instanceof HelpRequested);
    assert.ok(errOf(() => fs.parse(['-h'])) instanceof HelpRequested);
  });

  test('explicitly set flags are known; deprecated flags warn when used', () => {
    const out = sink();
    const fs = new FlagSet('t', { output: out });
    fs.int('a', 1, '');
    fs.int('b', 2, '');
    fs.string('old', '', 'old flag', { deprecated: 'use --new instead' });
    fs.bool('short', false, '', { shorthand: 's', shorthandDeprecated: 'use --short' });
    fs.parse(['--b=2', '--old=x', '-s']);
    assert.equal(fs.changed('a'), false);
    assert.equal(fs.changed('b'), true);
    assert.deepEqual(fs.changedNames(), ['b', 'old', 'short']);
    const visited: string[] = [];
    fs.visit((f) => visited.push(f.name));
    assert.deepEqual(visited, ['b', 'old', 'short']);
    assert.equal(out.text, 'Flag --old has been deprecated, use --new instead\nFlag shorthand -s has been deprecated, use --short\n');
  });

  test('underscores normalize to dashes with wordSepNormalize; redefinition is an error', () => {
    const nfs = new NamedFlagSets();
    const f = nfs.flagSet('generic').int('secure-port', 0, '');
    nfs.merged().parse(['--secure_port=5']);
    assert.equal(f.get(), 5);
    const fs = new FlagSet('t');
    fs.int('x', 0, '');
    assert.equal(errOf(() => fs.int('x', 0, '')).message, 't flag redefined: x');
    fs.int('y', 0, '', { shorthand: 'y' });
    assert.equal(errOf(() => fs.int('z', 0, '', { shorthand: 'y' })).message, `unable to redefine 'y' shorthand in "t" flagset: it's already used for "y" flag`);
  });
});

describe('help', () => {
  function sample(): FlagSet {
    const fs = new FlagSet('t');
    fs.bool('leader-elect', true, 'Start a leader election client.');
    fs.duration('node-monitor-period', 5000, 'The period for syncing NodeStatus.');
    fs.string('bind-address', '0.0.0.0', 'The IP address.');
    fs.int('secure-port', 10257, 'The port.');
    fs.strings('controllers', ['*'], 'A list of controllers.');
    fs.stringToString('allow-metric-labels', {}, 'Allow-list.');
    fs.string('cluster-name', '', 'The instance prefix.');
    fs.string('kubeconfig', '', 'Path to a `file`.');
    fs.int32('old', 0, 'Gone.', { deprecated: 'not used' });
    fs.int32('quiet', 0, 'Hidden.', { hidden: true });
    fs.version();
    return fs;
  }

  test('flag lines are aligned as pflag FlagUsages aligns them, with types and defaults', () => {
    const col = 45;
    const expected = [
      ['      --allow-metric-labels stringToString', 'Allow-list. (default [])'],
      ['      --bind-address string', 'The IP address. (default "0.0.0.0")'],
      ['      --cluster-name string', 'The instance prefix.'],
      ['      --controllers strings', 'A list of controllers. (default [*])'],
      ['      --kubeconfig file', 'Path to a file.'],
      ['      --leader-elect', 'Start a leader election client. (default true)'],
      ['      --node-monitor-period duration', 'The period for syncing NodeStatus. (default 5s)'],
      ['      --secure-port int', 'The port. (default 10257)'],
      ['      --version version[=true]', '--version, --version=raw prints version information and quits; --version=vX.Y.Z... sets the reported version'],
    ].map(([l, u]) => l!.padEnd(col) + u + '\n').join('');
    assert.equal(sample().flagUsages(), expected);
  });

  test('deprecated flags are hidden unless shown explicitly, then marked', () => {
    const fs = new FlagSet('t');
    fs.int32('address', 0, 'Serve address.', { deprecated: 'set it in --config', hidden: false });
    assert.equal(fs.flagUsages(), '      --address int32   Serve address. (DEPRECATED: set it in --config)\n');
  });

  test('sections print as component-base prints them, usage on its own line on a wide terminal', () => {
    const nfs = new NamedFlagSets();
    nfs.flagSet('generic').int('secure-port', 10257, 'The port on which to serve HTTPS with authentication and authorization. If 0, don\'t serve HTTPS at all.');
    nfs.flagSet('generic').bool('profiling', true, 'Enable profiling.');
    nfs.flagSet('empty');
    nfs.flagSet('debugging').bool('contention-profiling', false, 'Enable block profiling.', { shorthand: 'c' });
    const narrow = sink();
    printSections(narrow, nfs, 0);
    assert.equal(narrow.text, [
      '', 'Generic flags:', '',
      '      --profiling         Enable profiling. (default true)',
      '      --secure-port int   The port on which to serve HTTPS with authentication and authorization. If 0, don\'t serve HTTPS at all. (default 10257)',
      '', 'Debugging flags:', '',
      '  -c, --contention-profiling   Enable block profiling.', '',
    ].join('\n'));
    const wide = sink();
    printSections(wide, nfs, 80);
    const lines = wide.text.split('\n');
    assert.equal(lines[1], 'Generic flags:');
    assert.equal(lines[3], '      --profiling'.padEnd(71));
    assert.equal(lines[4], ' '.repeat(16) + 'Enable profiling. (default true)');
    assert.equal(lines[5], '      --secure-port int'.padEnd(71));
    assert.equal(lines[6], ' '.repeat(16) + 'The port on which to serve HTTPS with authentication and');
    assert.equal(lines[7], ' '.repeat(16) + 'authorization. If 0, don\'t serve HTTPS at all. (default 10257)');
    assert.ok(!wide.text.includes('zzz'));
    for (const l of lines) assert.ok(l.length <= 80, l);
  });

  test('flagUsagesWrapped wraps long usage at the column limit', () => {
    const fs = new FlagSet('t');
    fs.string('a', '', 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen');
    const text = flagUsagesWrapped(fs.all(), 60);
    const lines = text.trimEnd().split('\n');
    assert.ok(lines.length > 1);
    assert.ok(lines[0]!.startsWith('      --a string   one two'));
    for (const l of lines.slice(1)) assert.ok(l.startsWith(' '.repeat(19)), JSON.stringify(l));
  });
});

describe('feature gates', () => {
  function gate() {
    return new FeatureGate({
      Alpha1: { default: false, preRelease: 'ALPHA' },
      Beta1: { default: true, preRelease: 'BETA' },
      Beta2: { default: false, preRelease: 'BETA' },
      Done: { default: true, preRelease: 'GA', lockToDefault: true },
      Old: { default: false, preRelease: 'DEPRECATED' },
    });
  }

  test('defaults, setting, unknown and locked gates', () => {
    const g = gate();
    assert.equal(g.enabled('Alpha1'), false);
    assert.equal(g.enabled('Beta1'), true);
    g.set('Alpha1=true,Beta1=false');
    assert.equal(g.enabled('Alpha1'), true);
    assert.equal(g.enabled('Beta1'), false);
    assert.equal(g.explicitlySet('Alpha1'), true);
    assert.equal(g.explicitlySet('Beta2'), false);
    assert.equal(errOf(() => gate().set('Nope=true')).message, 'unrecognized feature gate: Nope');
    assert.equal(errOf(() => gate().set('Done=false')).message, 'cannot set feature gate Done to false, feature is locked to true');
    gate().set('Done=true');
    assert.equal(errOf(() => gate().set('Alpha1')).message, 'missing bool value for Alpha1');
    assert.equal(errOf(() => gate().set('Alpha1=yes')).message, 'invalid value of Alpha1=yes, err: strconv.ParseBool: parsing "yes": invalid syntax');
    assert.equal(errOf(() => g.enabled('Missing')).message, 'feature "Missing" is not registered in FeatureGate');
  });

  test('AllAlpha and AllBeta set the gates not given explicitly', () => {
    const g = gate();
    g.set('AllBeta=false,Beta2=true');
    assert.equal(g.enabled('Beta1'), false);
    assert.equal(g.enabled('Beta2'), true);
    g.set('AllAlpha=true');
    assert.equal(g.enabled('Alpha1'), true);
  });

  test('warnings for GA and deprecated gates go to onWarning', () => {
    const g = gate();
    const seen: string[] = [];
    g.onWarning = (msg, kv) => seen.push(`${msg} ${JSON.stringify(kv)}`);
    g.set('Old=true');
    assert.deepEqual(seen, ['Warning: setting deprecated feature gate. It will be removed in a future release. {"featureGate":"Old","value":true}']);
  });

  test('--feature-gates flag, help lists alpha and beta gates', () => {
    const g = gate();
    const fs = new FlagSet('t');
    const f = g.addFlag(fs);
    assert.equal(f.value.type(), 'mapStringBool');
    const pad = ' '.repeat(38);
    assert.equal(fs.flagUsages(), [
      '      --feature-gates mapStringBool   A set of key=value pairs that describe feature gates for alpha/experimental features. Options are:',
      pad + 'AllAlpha=true|false (ALPHA - default=false)',
      pad + 'AllBeta=true|false (BETA - default=false)',
      pad + 'Alpha1=true|false (ALPHA - default=false)',
      pad + 'Beta1=true|false (BETA - default=true)',
      pad + 'Beta2=true|false (BETA - default=false)',
      '',
    ].join('\n'));
    fs.parse(['--feature-gates=Beta2=true', '--feature-gates', 'Alpha1=true']);
    assert.equal(g.enabled('Beta2'), true);
    assert.equal(g.enabled('Alpha1'), true);
    assert.equal(errOf(() => fs.parse(['--feature-gates=Unknown=true'])).message, 'invalid argument "Unknown=true" for "--feature-gates" flag: unrecognized feature gate: Unknown');
    assert.equal(errOf(() => g.add({ X: { default: true, preRelease: 'BETA' } })).message, 'cannot add a feature gate after adding it to the flag set');
  });

  test('component:key=value form of Kubernetes 1.33', () => {
    const g = gate();
    const fs = new FlagSet('t');
    const f = g.addFlag(fs, { component: 'kube' });
    assert.equal(f.value.type(), 'colonSeparatedMultimapStringString');
    assert.ok(f.usage.includes('\nkube:Beta1=true|false (BETA - default=true)'));
    fs.parse(['--feature-gates=kube:Alpha1=true,Beta1=false']);
    assert.equal(g.enabled('Alpha1'), true);
    assert.equal(g.enabled('Beta1'), false);
    assert.equal(errOf(() => fs.parse(['--feature-gates=wardle:A=true'])).message, 'invalid argument "wardle:A=true" for "--feature-gates" flag: component not registered: wardle');
  });

  test('a config file map sits under flags', () => {
    const g = gate();
    const fs = new FlagSet('t');
    g.addFlag(fs);
    fs.parse(['--feature-gates=Beta1=true']);
    g.setFromConfig({ Beta1: false, Beta2: true });
    assert.equal(g.enabled('Beta1'), true);
    assert.equal(g.enabled('Beta2'), true);
    assert.deepEqual(g.validate(), []);
  });
});

describe('config files', () => {
  interface Opts {
    port: number;
    period: number;
    controllers: string[];
    labels: Record<string, string>;
    gates: Record<string, boolean>;
    name: string;
    nested: { enabled: boolean; ttl: number; note: string };
    extra: Record<string, string>;
  }
  function setup() {
    const o: Opts = { port: 10257, period: 300_000, controllers: ['*'], labels: {}, gates: {}, name: 'default', nested: { enabled: false, ttl: 10_000, note: '' }, extra: {} };
    const fs = new FlagSet('t');
    fs.intVar(o, 'port', 'secure-port', '');
    fs.durationVar(o, 'period', 'namespace-sync-period', '');
    fs.stringsVar(o, 'controllers', 'controllers', '');
    fs.stringToStringVar(o, 'labels', 'labels', '');
    fs.mapStringBoolVar(o, 'gates', 'feature-gates', '');
    fs.stringVar(o, 'name', 'cluster-name', '');
    fs.boolVar(o.nested, 'enabled', 'webhook', '');
    fs.durationVar(o.nested, 'ttl', 'webhook-ttl', '');
    return { o, fs };
  }
  const dir = tempDir('keelson-flags-');

  test('YAML: the file fills in, explicitly set flags win, maps merge per key', () => {
    const { o, fs } = setup();
    fs.parse(['--secure-port=1234', '--labels=a=flag', '--feature-gates=A=true', '--webhook-ttl=1m']);
    const path = join(dir, 'config.yaml');
    writeFileSync(path, [
      'apiVersion: keelson.io/v1alpha1',
      'kind: ControllerManagerConfiguration',
      'port: 9999',
      'period: 10m0s',
      'controllers: [x, "-y"]',
      'labels: {a: file, b: file}',
      'gates: {A: false, B: true}',
      'nested:',
      '  enabled: true',
      '  ttl: 2m',
      '  note: hello',
      'extra: {k: v}',
    ].join('\n'));
    loadConfigFile(path, o, fs, { kind: 'ControllerManagerConfiguration', apiVersions: ['keelson.io/v1alpha1'] });
    assert.equal(o.port, 1234); // flag wins
    assert.equal(o.period, 600_000); // file, converted from Go duration syntax
    assert.deepEqual(o.controllers, ['x', '-y']);
    assert.deepEqual(o.labels, { a: 'flag', b: 'file' });
    assert.deepEqual(o.gates, { A: true, B: true });
    assert.deepEqual(o.nested, { enabled: true, ttl: 60_000, note: 'hello' });
    assert.deepEqual(o.extra, { k: 'v' });
    assert.equal(o.name, 'default');
    // a map field with default entries must be named in `maps` to take arbitrary keys
    const t = { thresholds: { 'memory.available': '100Mi' } };
    assert.match(errOf(() => applyConfig({ thresholds: { 'nodefs.available': '10%' } }, t, new FlagSet('t'))).message, /unknown field "thresholds.nodefs.available"/);
    applyConfig({ thresholds: { 'nodefs.available': '10%' } }, t, new FlagSet('t'), { maps: ['thresholds'] });
    assert.deepEqual(t.thresholds, { 'nodefs.available': '10%' });
  });

  test('JSON works too; unknown fields, bad values, wrong kinds and missing files are errors', () => {
    const { o, fs } = setup();
    const path = join(dir, 'config.json');
    writeFileSync(path, JSON.stringify({ period: '90s', name: 'prod' }));
    loadConfigFile(path, o, fs);
    assert.equal(o.period, 90_000);
    assert.equal(o.name, 'prod');
    assert.equal(errOf(() => applyConfig({ bogus: 1 }, setup().o, setup().fs)).message, 'config: strict decoding error: unknown field "bogus"');
    applyConfig({ bogus: 1 }, setup().o, setup().fs, { unknownFields: 'ignore' });
    const s = setup();
    assert.equal(errOf(() => applyConfig({ period: 5 }, s.o, s.fs)).message, 'config: field "period": expected a duration string such as "5m0s", got number 5');
    assert.equal(errOf(() => applyConfig({ period: '5' }, s.o, s.fs)).message, 'config: field "period": time: missing unit in duration "5"');
    assert.equal(errOf(() => applyConfig({ nested: { ttl: 'x' } }, s.o, s.fs)).message, 'config: field "nested.ttl": time: invalid duration "x"');
    assert.equal(errOf(() => applyConfig({ kind: 'Other' }, s.o, s.fs, { kind: 'Mine' })).message, 'config: wrong kind "Other", expected "Mine"');
    const missing = errOf(() => loadConfigFile(join(dir, 'nope.yaml'), s.o, s.fs));
    assert.ok(missing instanceof ConfigFileError);
    assert.match(missing.message, /failed to read config file ".*nope.yaml", error: open .*nope.yaml: no such file or directory/);
  });
});

describe('Command', () => {
  function daemon(ran: string[][]) {
    const cmd = new Command({
      use: 'keelson-controller-manager',
      long: 'The controller manager runs the control loops.',
      run: ({ args }) => { ran.push(args); },
    });
    const generic = cmd.sections.flagSet('generic');
    generic.int('secure-port', 10257, 'The port.');
    const global = cmd.sections.flagSet('global');
    global.bool('help', false, 'help for keelson-controller-manager', { shorthand: 'h' });
    global.version();
    return cmd;
  }

  test('--help prints the long text, usage and sections to stdout', async () => {
    const out = sink();
    const err = sink();
    const code = await daemon([]).execute(['--help'], { stdout: out, stderr: err });
    assert.equal(code, 0);
    assert.equal(err.text, '');
    assert.equal(out.text, [
      'The controller manager runs the control loops.', '',
      'Usage:', '  keelson-controller-manager [flags]', '',
      'Generic flags:', '',
      '      --secure-port int   The port. (default 10257)', '',
      'Global flags:', '',
      '  -h, --help'.padEnd(33) + 'help for keelson-controller-manager',
      '      --version version[=true]   --version, --version=raw prints version information and quits; --version=vX.Y.Z... sets the reported version',
      '',
    ].join('\n'));
  });

  test('a flag error prints usage, then Error:, and exits 1', async () => {
    const out = sink();
    const err = sink();
    const code = await daemon([]).execute(['--nope'], { stdout: out, stderr: err });
    assert.equal(code, 1);
    assert.equal(out.text, '');
    assert.ok(err.text.startsWith('Usage:\n  keelson-controller-manager [flags]\n\nGeneric flags:'));
    assert.ok(err.text.endsWith('\nError: unknown flag: --nope\n'));
  });

  test('--version and --version=raw print and exit 0 without running', async () => {
    const ran: string[][] = [];
    const out = sink();
    assert.equal(await daemon(ran).execute(['--version'], { stdout: out, stderr: sink() }), 0);
    assert.equal(out.text, `Keelson ${DEFAULT_GIT_VERSION}\n`);
    const raw = sink();
    assert.equal(await daemon(ran).execute(['--version=raw'], { stdout: raw, stderr: sink() }), 0);
    assert.match(raw.text, /^version\.Info\{Major:"1", Minor:"33", .*GitVersion:"v1\.33\.0\+keelson\.[^"]+", GitCommit:"[0-9a-f]*", .*Platform:"[a-z0-9]+\/[a-z0-9]+"\}\n$/);
    assert.deepEqual(ran, []);
  });

  test('daemons take no positional arguments; runs get parsed flags', async () => {
    const ran: string[][] = [];
    const err = sink();
    assert.equal(await daemon(ran).execute(['extra', 'args'], { stdout: sink(), stderr: err }), 1);
    assert.equal(err.text, 'Error: "keelson-controller-manager" does not take any arguments, got ["extra" "args"]\n');
    assert.equal(await daemon(ran).execute(['--secure-port=1'], { stdout: sink(), stderr: sink() }), 0);
    assert.deepEqual(ran, [[]]);
  });

  test('subcommands, inherited persistent flags, cobra-style root help, unknown commands', async () => {
    const seen: string[] = [];
    const root = new Command({ use: 'keelson', short: 'A Kubernetes-compatible control plane' });
    const config = root.persistentFlags.string('data-dir', '/var/lib/keelson', 'Data directory.');
    const server = new Command({ use: 'server', short: 'Run the API server', run: ({ flags }) => { seen.push(`server ${config.get()} ${flags.lookup('port')!.get()}`); } });
    server.localFlags.int('port', 6443, 'Port.');
    root.addCommand(server, new Command({ use: 'agent', short: 'Run the node agent', run: () => { seen.push('agent'); } }));
    assert.equal(await root.execute(['--data-dir', '/tmp/x', 'server', '--port=1'], { stdout: sink(), stderr: sink() }), 0);
    assert.deepEqual(seen, ['server /tmp/x 1']);
    const help = sink();
    assert.equal(await root.execute([], { stdout: help, stderr: sink() }), 0);
    assert.equal(help.text, [
      'A Kubernetes-compatible control plane', '',
      'Usage:', '  keelson [command]', '',
      'Available Commands:',
      '  agent       Run the node agent',
      '  server      Run the API server', '',
      'Flags:',
      '      --data-dir string   Data directory. (default "/var/lib/keelson")',
      '  -h, --help              help for keelson', '',
      'Use "keelson [command] --help" for more information about a command.', '',
    ].join('\n'));
    const subHelp = sink();
    await root.execute(['server', '-h'], { stdout: subHelp, stderr: sink() });
    assert.ok(subHelp.text.includes('Usage:\n  keelson server [flags]'));
    assert.ok(subHelp.text.includes('Global Flags:\n      --data-dir string'));
    const err = sink();
    assert.equal(await root.execute(['serve'], { stdout: sink(), stderr: err }), 1);
    assert.equal(err.text, 'Error: unknown command "serve" for "keelson"\n\nDid you mean this?\n\tserver\n\nRun \'keelson --help\' for usage.\n');
  });
});
