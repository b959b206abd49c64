import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readCSV, parseTokenFile, StaticTokenAuthenticator } from '../../src/apiserver/authn/tokenfile.js';
import { tempDir } from '../tempdir.js';

// Expected records and errors were taken from Go's encoding/csv (FieldsPerRecord = -1) on the
// same inputs.
const CSV_CASES: [string, string[][] | string][] = [
  ['a,b,c\n', [['a', 'b', 'c']]],
  ['a,"b,c"\n', [['a', 'b,c']]],
  ['a,b"c,d\n', 'parse error on line 1, column 4: bare " in non-quoted-field'],
  ['a,"b"c,d\n', 'parse error on line 1, column 5: extraneous or missing " in quoted-field'],
  ['x\n"abc', 'parse error on line 2, column 5: extraneous or missing " in quoted-field'],
  ['\n\na,b\r\n\nc,d', [['a', 'b'], ['c', 'd']]],
  [' "a",b', 'parse error on line 1, column 2: bare " in non-quoted-field'],
  ['a,"b\nc",d\ne,f"g', 'parse error on line 3, column 4: bare " in non-quoted-field'],
  ['a,"b""c"', [['a', 'b"c']]],
  ['tok,user,uid,"g1,g2"\ntok2,u2', [['tok', 'user', 'uid', 'g1,g2'], ['tok2', 'u2']]],
  ['a,b\n"x', 'parse error on line 2, column 3: extraneous or missing " in quoted-field'],
  ['a,"b\nc"d', 'record on line 1; parse error on line 2, column 2: extraneous or missing " in quoted-field'],
  ['a,"b\ncd', 'record on line 1; parse error on line 2, column 3: extraneous or missing " in quoted-field'],
  ['é"x,b', 'parse error on line 1, column 3: bare " in non-quoted-field'],
  ['a,"é"x', 'parse error on line 1, column 6: extraneous or missing " in quoted-field'],
  ['a\rb,c\n', [['a\rb', 'c']]],
  ['a,b\r', [['a', 'b']]],
  ['"a\r\nb",c', [['a\nb', 'c']]],
  [',,\n', [['', '', '']]],
  ['a,"",b', [['a', '', 'b']]],
  ['', []],
];

describe('readCSV (Go encoding/csv)', () => {
  for (const [input, want] of CSV_CASES) {
    test(JSON.stringify(input), () => {
      if (typeof want === 'string') assert.throws(() => readCSV(input), { message: want });
      else assert.deepEqual(readCSV(input), want);
    });
  }
});

describe('parseTokenFile (tokenfile.NewCSV)', () => {
  test('token,user,uid,"groups"', () => {
    const t = parseTokenFile('abc,alice,1001,"dev,ops"\nxyz,bob,1002\n', '/etc/tokens.csv');
    assert.deepEqual(t.get('abc'), { name: 'alice', uid: '1001', groups: ['dev', 'ops'] });
    assert.deepEqual(t.get('xyz'), { name: 'bob', uid: '1002', groups: [] });
  });
  test('fewer than three columns is an error naming the file', () => {
    assert.throws(() => parseTokenFile('abc,alice\n', '/etc/tokens.csv'), { message: "token file '/etc/tokens.csv' must have at least 3 columns (token, user name, user uid), found 2" });
  });
  test('the column error of a record comes before a parse error of a later one', () => {
    assert.throws(() => parseTokenFile('abc\nx,y"z\n', 'f'), { message: "token file 'f' must have at least 3 columns (token, user name, user uid), found 1" });
  });
  test('CSV errors are Go\'s', () => {
    assert.throws(() => parseTokenFile('abc,alice,1,"dev\n', 'f'), { message: 'parse error on line 1, column 18: extraneous or missing " in quoted-field' });
  });
  test('empty tokens are skipped and duplicates replace, with warnings', () => {
    const warnings: string[] = [];
    const t = parseTokenFile(',nobody,0\nabc,alice,1\nabc,carol,3\n', 'f', (w) => warnings.push(w));
    assert.equal(t.size, 1);
    assert.equal(t.get('abc')!.name, 'carol');
    assert.deepEqual(warnings, ["empty token has been found in token file 'f', record number '1'", "duplicate token has been found in token file 'f', record number '3'"]);
  });
  test('an empty fourth column is one empty group, as strings.Split gives', () => {
    assert.deepEqual(parseTokenFile('t,u,1,\n', 'f').get('t')!.groups, ['']);
  });
});

describe('StaticTokenAuthenticator', () => {
  test('from a file; unknown tokens are not its own', () => {
    const dir = tempDir('keelson-tokens-');
    const path = join(dir, 'tokens.csv');
    writeFileSync(path, 'secret-token,admin,admin-uid,"system:masters"\nnouid,nobody,\n');
    const a = StaticTokenAuthenticator.fromFile(path);
    assert.deepEqual(a.authenticateToken('secret-token'), { user: { name: 'admin', uid: 'admin-uid', groups: ['system:masters'] } });
    assert.deepEqual(a.authenticateToken('nouid'), { user: { name: 'nobody', groups: [] } });
    assert.equal(a.authenticateToken('other'), null);
    assert.throws(() => StaticTokenAuthenticator.fromFile(join(dir, 'missing.csv')), /ENOENT/);
  });
});
