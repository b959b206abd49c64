// Static bearer tokens (kube-apiserver's --token-auth-file): a CSV file of
// `token,user,uid,"group1,group2"` records, read as Go's encoding/csv reads it (any number of
// fields per record, RFC 4180 quoting, no comments, empty lines skipped, `\r\n` read as `\n`,
// errors `parse error on line L, column C: ...` with byte columns), then as Kubernetes'
// tokenfile.NewCSV takes the records: at least three columns (else an error naming the file),
// an empty token skipped with a warning, a duplicate token replacing the earlier one with a
// warning, the fourth column split on commas into groups.
import { readFileSync } from 'node:fs';
import type { UserInfo } from '../authz.js';
import { cloneUser } from './x509.js';
import type { AuthResult, TokenAuthenticator } from './types.js';

export const ERR_BARE_QUOTE = 'bare " in non-quoted-field';
export const ERR_QUOTE = 'extraneous or missing " in quoted-field';

export class CSVParseError extends Error {
  override name = 'CSVParseError';
  constructor(
    readonly startLine: number,
    readonly line: number,
    readonly column: number,
    readonly err: string,
  ) {
    super(startLine !== line ? `record on line ${startLine}; parse error on line ${line}, column ${column}: ${err}` : `parse error on line ${line}, column ${column}: ${err}`);
  }
}

const NL = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const COMMA = 0x2c;

/**
 * Reads every record of CSV data as Go's csv.Reader does with FieldsPerRecord = -1 (and the
 * default Comma, no Comment, no LazyQuotes, no TrimLeadingSpace). Throws CSVParseError on the
 * first malformed record.
 */
export function readCSV(data: Buffer | string): string[][] {
  return [...csvRecords(data)];
}

/** The records of CSV data one at a time (an error surfaces when its record is reached, as with Go's Read). */
export function* csvRecords(data: Buffer | string): Generator<string[]> {
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let off = 0;
  let numLine = 0;

  /** Go's readLine: a line with its `\n` (`\r\n` read as `\n`), or the rest of the data; eof when nothing was left */
  const readLine = (): { line: Buffer; eof: boolean } => {
    numLine++;
    if (off >= buf.length) return { line: Buffer.alloc(0), eof: true };
    const i = buf.indexOf(NL, off);
    let line: Buffer;
    if (i < 0) {
      line = buf.subarray(off);
      off = buf.length;
      if (line[line.length - 1] === CR) line = line.subarray(0, line.length - 1); // a trailing \r before EOF is dropped
    } else {
      line = buf.subarray(off, i + 1);
      off = i + 1;
    }
    const n = line.length;
    if (n >= 2 && line[n - 2] === CR && line[n - 1] === NL) line = Buffer.concat([line.subarray(0, n - 2), Buffer.from([NL])]);
    return { line, eof: false };
  };
  const lengthNL = (b: Buffer) => (b.length > 0 && b[b.length - 1] === NL ? 1 : 0);

  for (;;) {
    // the next non-empty line
    let r = readLine();
    while (!r.eof && r.line.length === lengthNL(r.line)) r = readLine();
    if (r.eof) return;
    let line = r.line;

    const recLine = numLine;
    let posLine = numLine;
    let col = 1;
    const fields: string[] = [];
    parse: for (;;) {
      if (line.length === 0 || line[0] !== QUOTE) {
        // a non-quoted field: up to the next comma or the end of the line; no quote in it
        const i = line.indexOf(COMMA);
        const field = i >= 0 ? line.subarray(0, i) : line.subarray(0, line.length - lengthNL(line));
        const q = field.indexOf(QUOTE);
        if (q >= 0) throw new CSVParseError(recLine, numLine, col + q, ERR_BARE_QUOTE);
        fields.push(field.toString('utf8'));
        if (i < 0) break parse;
        line = line.subarray(i + 1);
        col += i + 1;
        continue parse;
      }
      // a quoted field: `""` is a quote, it may span lines, it ends with `",` or `"` at the end of a line
      line = line.subarray(1);
      col += 1;
      const chunks: Buffer[] = [];
      for (;;) {
        const i = line.indexOf(QUOTE);
        if (i >= 0) {
          chunks.push(line.subarray(0, i));
          line = line.subarray(i + 1);
          col += i + 1;
          if (line.length && line[0] === QUOTE) {
            chunks.push(Buffer.from([QUOTE]));
            line = line.subarray(1);
            col += 1;
          } else if (line.length && line[0] === COMMA) {
            line = line.subarray(1);
            col += 1;
            fields.push(Buffer.concat(chunks).toString('utf8'));
            continue parse;
          } else if (lengthNL(line) === line.length) {
            fields.push(Buffer.concat(chunks).toString('utf8'));
            break parse;
          } else {
            throw new CSVParseError(recLine, numLine, col - 1, ERR_QUOTE);
          }
        } else if (line.length > 0) {
          chunks.push(line);
          col += line.length;
          line = readLine().line;
          if (line.length > 0) {
            posLine++;
            col = 1;
          }
        } else {
          // the data ended inside the quotes
          throw new CSVParseError(recLine, posLine, col, ERR_QUOTE);
        }
      }
    }
    yield fields;
  }
}

export interface TokenFileWarning {
  message: string;
}

/**
 * The tokens of a token file's content, as Kubernetes' tokenfile.NewCSV reads them. `path` is
 * the file name its errors and warnings name.
 */
export function parseTokenFile(data: Buffer | string, path: string, warn: (msg: string) => void = () => {}): Map<string, UserInfo> {
  const tokens = new Map<string, UserInfo>();
  let recordNum = 0;
  for (const record of csvRecords(data)) {
    if (record.length < 3) throw new Error(`token file '${path}' must have at least 3 columns (token, user name, user uid), found ${record.length}`);
    recordNum++;
    if (record[0] === '') {
      warn(`empty token has been found in token file '${path}', record number '${recordNum}'`);
      continue;
    }
    const user: UserInfo = { name: record[1]!, uid: record[2]!, groups: [] };
    if (tokens.has(record[0]!)) warn(`duplicate token has been found in token file '${path}', record number '${recordNum}'`);
    if (record.length >= 4) user.groups = record[3]!.split(',');
    tokens.set(record[0]!, user);
  }
  return tokens;
}

/** Static tokens: a token is its user; an unknown token is "not mine". */
export class StaticTokenAuthenticator implements TokenAuthenticator {
  constructor(private readonly tokens: Map<string, UserInfo>) {}

  static fromFile(path: string, warn?: (msg: string) => void): StaticTokenAuthenticator {
    return new StaticTokenAuthenticator(parseTokenFile(readFileSync(path), path, warn));
  }

  get size(): number {
    return this.tokens.size;
  }

  authenticateToken(token: string): AuthResult | null {
    const u = this.tokens.get(token);
    if (!u) return null;
    const user = cloneUser(u);
    if (user.uid === '') delete user.uid;
    return { user };
  }
}
