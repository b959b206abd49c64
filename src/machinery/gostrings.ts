// Go's formatting of strings and values, shared by every module that writes a message the way
// Kubernetes (or kubectl) writes it: strconv's quoting (%q) and float formatting,
// unicode.IsPrint, Go's string order, encoding/json's encoding, kind names and syntax errors,
// and the time package's durations (ParseDuration, Duration.String).
//
// Kubernetes' error messages, warnings and log lines are part of Keelson's interface (clients and
// tests compare them byte for byte), so these reproduce Go's output exactly rather than doing
// what would read well in JavaScript. Go strings are UTF-8 bytes and JavaScript's are UTF-16:
// where a JavaScript string has no UTF-8 form (a lone surrogate), the quoting functions take it as
// U+FFFD, the rune Go's decoders (encoding/json, utf8.DecodeRune) put in its place and the one
// Node's UTF-8 encoder writes for it.

// ---------------------------------------------------------------------------------------------
// strconv: quoting

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

/** Go's unicode.IsPrint (strconv.IsPrint): letters, marks, numbers, punctuation, symbols and the ASCII space. */
export function isPrintRune(c: number): boolean {
  if (c >= 0x20 && c < 0x7f) return true;
  if (c < 0x20 || c === 0x7f) return false;
  if (c >= 0xd800 && c <= 0xdfff) return false;
  return PRINTABLE.test(String.fromCodePoint(c));
}

/** strconv's appendEscapedRune: one rune inside a literal quoted with `quote`. */
function escapeRune(c: number, quote: number, asciiOnly: boolean): string {
  if (c === quote || c === 0x5c) return '\\' + String.fromCharCode(c);
  if (asciiOnly ? c < 0x80 && isPrintRune(c) : isPrintRune(c)) return String.fromCodePoint(c);
  switch (c) {
    case 0x07:
      return '\\a';
    case 0x08:
      return '\\b';
    case 0x0c:
      return '\\f';
    case 0x0a:
      return '\\n';
    case 0x0d:
      return '\\r';
    case 0x09:
      return '\\t';
    case 0x0b:
      return '\\v';
  }
  if (c < 0x20 || c === 0x7f) return '\\x' + c.toString(16).padStart(2, '0');
  if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) c = 0xfffd; // !utf8.ValidRune
  if (c < 0x10000) return '\\u' + c.toString(16).padStart(4, '0');
  return '\\U' + c.toString(16).padStart(8, '0');
}

/** A code point of a JavaScript string as the rune Go would hold: a lone surrogate is U+FFFD. */
function runeOf(ch: string): number {
  const c = ch.codePointAt(0)!;
  return c >= 0xd800 && c <= 0xdfff ? 0xfffd : c;
}

function quoteWith(s: string, asciiOnly: boolean): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.charCodeAt(0);
    if (c >= 0x20 && c < 0x7f && c !== 0x22 && c !== 0x5c) out += ch;
    else out += escapeRune(runeOf(ch), 0x22, asciiOnly);
  }
  return out + '"';
}

/** Go's strconv.Quote, which is fmt's %q (and %#v) of a string. One argument, so that `list.map(goQuote)` is safe. */
export function goQuote(s: string): string {
  return quoteWith(s, false);
}

/** Go's strconv.QuoteToASCII (fmt's %+q): every rune outside printable ASCII escaped. */
export function goQuoteToASCII(s: string): string {
  return quoteWith(s, true);
}

/** Go's strconv.QuoteRune (QuoteRuneToASCII with `asciiOnly`): an invalid rune quotes as U+FFFD. */
export function goQuoteRune(c: number, asciiOnly = false): string {
  if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) || c < 0) c = 0xfffd;
  return "'" + escapeRune(c, 0x27, asciiOnly) + "'";
}

/** Go's %q of a []string: `["a" "b"]` (a nil slice prints as `[]`). */
export function goQuoteList(list: readonly string[] | undefined): string {
  return '[' + (list ?? []).map(goQuote).join(' ') + ']';
}

// ---------------------------------------------------------------------------------------------
// strconv: floats

interface Decimal {
  /** significant digits, no leading or trailing zeros ('' for zero) */
  d: string;
  /** decimal point position: value = 0.d × 10^dp */
  dp: number;
}

/** The shortest digits that round-trip (what Go's Ryu shortest mode and JS both produce). */
function shortestDecimal(f: number): Decimal {
  if (f === 0) return { d: '', dp: 0 };
  const [mant, exp] = Math.abs(f).toExponential().split('e') as [string, string];
  const d = mant.replace('.', '').replace(/0+$/, '');
  return { d, dp: parseInt(exp, 10) + 1 };
}

/** The exact decimal expansion of a double. */
function exactDecimal(f: number): Decimal {
  if (f === 0) return { d: '', dp: 0 };
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, Math.abs(f));
  const hi = buf.getUint32(0);
  const lo = buf.getUint32(4);
  const bexp = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let e2: number;
  if (bexp === 0) e2 = -1074;
  else {
    mant |= 1n << 52n;
    e2 = bexp - 1075;
  }
  let digits: string;
  let dp: number;
  if (e2 >= 0) {
    digits = (mant << BigInt(e2)).toString();
    dp = digits.length;
  } else {
    // mant / 2^-e2 = mant * 5^-e2 / 10^-e2
    const n = mant * 5n ** BigInt(-e2);
    digits = n.toString();
    dp = digits.length + e2;
  }
  const stripped = digits.replace(/^0+/, '');
  dp -= digits.length - stripped.length;
  return { d: stripped.replace(/0+$/, ''), dp };
}

/** Rounds the exact decimal to nd digits, half to even (strconv's decimal.Round). */
function roundDecimal(x: Decimal, nd: number): Decimal {
  if (nd < 0) return { d: '', dp: 0 };
  if (nd >= x.d.length) return x;
  const next = x.d.charCodeAt(nd) - 48;
  let up: boolean;
  if (next > 5) up = true;
  else if (next < 5) up = false;
  else if (nd + 1 < x.d.length) up = true; // more nonzero digits follow (trailing zeros were trimmed)
  else up = nd > 0 && (x.d.charCodeAt(nd - 1) - 48) % 2 === 1;
  let digits = x.d.slice(0, nd);
  let dp = x.dp;
  if (up) {
    const arr = digits.split('').map((c) => c.charCodeAt(0) - 48);
    let i = arr.length - 1;
    while (i >= 0 && arr[i] === 9) {
      arr[i] = 0;
      i--;
    }
    if (i < 0) {
      arr.unshift(1);
      dp++;
      arr.pop();
      digits = arr.join('');
      if (arr.length === 0) digits = '1';
    } else {
      arr[i]!++;
      digits = arr.join('');
    }
    if (nd === 0) {
      digits = '1';
    }
  }
  digits = digits.replace(/0+$/, '');
  if (digits === '') dp = 0;
  return { d: digits, dp };
}

function fmtE(neg: boolean, d: Decimal, prec: number, e: string): string {
  let s = neg ? '-' : '';
  s += d.d.length ? d.d[0] : '0';
  if (prec > 0) {
    s += '.';
    let i = 1;
    const m = Math.min(d.d.length, prec + 1);
    if (i < m) {
      s += d.d.slice(i, m);
      i = m;
    }
    for (; i <= prec; i++) s += '0';
  }
  s += e;
  let exp = d.d.length === 0 ? 0 : d.dp - 1;
  let sign = '+';
  if (exp < 0) {
    sign = '-';
    exp = -exp;
  }
  s += sign + (exp < 10 ? '0' + exp : String(exp));
  return s;
}

function fmtF(neg: boolean, d: Decimal, prec: number): string {
  let s = neg ? '-' : '';
  if (d.dp > 0) {
    const m = Math.min(d.d.length, d.dp);
    s += d.d.slice(0, m);
    for (let k = m; k < d.dp; k++) s += '0';
  } else s += '0';
  if (prec > 0) {
    s += '.';
    for (let i = 0; i < prec; i++) {
      const j = d.dp + i;
      s += j >= 0 && j < d.d.length ? d.d[j] : '0';
    }
  }
  return s;
}

/** Go's strconv.FormatFloat(f, fmt, prec, 64) for fmt in e, E, f, g, G (prec -1: the shortest digits that round-trip). */
export function goFormatFloat(f: number, fmt: 'e' | 'E' | 'f' | 'g' | 'G', prec: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Infinity) return '+Inf';
  if (f === -Infinity) return '-Inf';
  const neg = f < 0 || Object.is(f, -0);
  const shortest = prec < 0;
  let digs: Decimal;
  if (shortest) {
    digs = shortestDecimal(f);
    switch (fmt) {
      case 'e':
      case 'E':
        prec = Math.max(digs.d.length - 1, 0);
        break;
      case 'f':
        prec = Math.max(digs.d.length - digs.dp, 0);
        break;
      default:
        prec = digs.d.length;
    }
  } else {
    const exact = exactDecimal(f);
    switch (fmt) {
      case 'e':
      case 'E':
        digs = roundDecimal(exact, prec + 1);
        break;
      case 'f':
        digs = roundDecimal(exact, exact.dp + prec);
        break;
      default:
        if (prec === 0) prec = 1;
        digs = roundDecimal(exact, prec);
    }
  }
  switch (fmt) {
    case 'e':
    case 'E':
      return fmtE(neg, digs, prec, fmt);
    case 'f':
      return fmtF(neg, digs, prec);
    default: {
      let eprec = prec;
      if (eprec > digs.d.length && digs.d.length >= digs.dp) eprec = digs.d.length;
      if (shortest) eprec = 6;
      const exp = digs.dp - 1;
      if (exp < -4 || exp >= eprec) {
        if (prec > digs.d.length) prec = digs.d.length;
        return fmtE(neg, digs, prec - 1, fmt === 'g' ? 'e' : 'E');
      }
      if (prec > digs.dp) prec = digs.d.length;
      return fmtF(neg, digs, Math.max(prec - digs.dp, 0));
    }
  }
}

/** Go's %v of a float64: strconv.FormatFloat(f, 'g', -1, 64) (`1e+06`, `0.0001`, `1e-05`, `-0`, `+Inf`, `NaN`). */
export function goFloat(f: number): string {
  return goFormatFloat(f, 'g', -1);
}

// ---------------------------------------------------------------------------------------------
// strings: order

/**
 * Go's string order (strings.Compare, sort.Strings, the order of a map's keys in encoding/json and
 * fmt): byte order of the UTF-8 encodings, which is code point order. Compares UTF-16 code units,
 * except that a surrogate (half of a code point above U+FFFF) sorts above every other code unit.
 */
export function goStringCompare(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// encoding/json

const HTML_ESCAPES = /[<>&\u2028\u2029]/g;
function htmlEscape(ch: string): string {
  return '\\u' + ch.charCodeAt(0).toString(16).padStart(4, '0');
}

/** A JSON string literal as Go's encoding/json writes it: `<`, `>`, `&`, U+2028 and U+2029 escaped. */
export function goJSONString(s: string): string {
  const j = JSON.stringify(s);
  HTML_ESCAPES.lastIndex = 0;
  return HTML_ESCAPES.test(j) ? j.replace(HTML_ESCAPES, htmlEscape) : j;
}

/**
 * Compact JSON of an unstructured value as Go's json.Marshal writes it: object keys sorted in Go's
 * string order, strings HTML-escaped, members whose value is undefined left out. Numbers as
 * JavaScript writes them, which is Go's float64 format (exponent below 1e-6 and from 1e21 on, Go's
 * `1e-07` cleaned to `1e-7`); a bigint as its digits; a non-finite number as null.
 */
export function goJSON(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'string':
      return goJSONString(v);
    case 'number':
      return Number.isFinite(v) ? String(v) : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return v.toString();
    case 'object': {
      if (Array.isArray(v)) return '[' + v.map(goJSON).join(',') + ']';
      const keys = Object.keys(v as object).sort(goStringCompare);
      const parts: string[] = [];
      for (const k of keys) {
        const x = (v as Record<string, unknown>)[k];
        if (x === undefined) continue;
        parts.push(goJSONString(k) + ':' + goJSON(x));
      }
      return '{' + parts.join(',') + '}';
    }
    default:
      return 'null';
  }
}

/** The kind of a decoded JSON value as encoding/json's UnmarshalTypeError names it: `bool`, not `boolean`. */
export function goJSONKind(v: unknown): 'null' | 'array' | 'object' | 'bool' | 'string' | 'number' | 'undefined' {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  if (typeof v === 'boolean') return 'bool';
  return typeof v as 'string' | 'number' | 'undefined';
}

// ---------------------------------------------------------------------------------------------
// encoding/json: syntax errors

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

class SyntaxError_ extends Error {}

/**
 * Checks that the bytes (or a string's UTF-8) are one JSON value as Go's json.Unmarshal does:
 * null when they are, else the text of encoding/json's SyntaxError (`unexpected end of JSON
 * input`, `invalid character 'x' looking for beginning of value`, ...). Like Go's scanner it
 * reads bytes, so a character outside ASCII is named by its first byte (`'Ã'` for `é`).
 */
export function goJSONSyntaxError(input: Uint8Array | string): string | null {
  const data = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  const stack: ('key' | 'value' | 'array')[] = [];
  let i = 0;
  // encoding/json's quoteChar(c byte) is strconv.Quote(string(rune(c))) between single quotes
  const err = (c: number, ctx: string) => new SyntaxError_(`invalid character ${goQuoteRune(c)} ${ctx}`);
  const eof = () => new SyntaxError_('unexpected end of JSON input');
  const peek = () => (i < data.length ? data[i]! : -1);
  const skip = () => {
    while (i < data.length && isSpace(data[i]!)) i++;
  };
  const literal = (word: string) => {
    for (let k = 1; k < word.length; k++) {
      const c = peek();
      if (c < 0) throw eof();
      if (c !== word.charCodeAt(k)) throw err(c, `in literal ${word} (expecting '${word[k]}')`);
      i++;
    }
  };
  const string = () => {
    for (;;) {
      const c = peek();
      if (c < 0) throw eof();
      i++;
      if (c === 0x22) return;
      if (c === 0x5c) {
        const e = peek();
        if (e < 0) throw eof();
        i++;
        if (e === 0x75) {
          for (let k = 0; k < 4; k++) {
            const h = peek();
            if (h < 0) throw eof();
            if (!isHex(h)) throw err(h, 'in \\u hexadecimal character escape');
            i++;
          }
        } else if (!'bfnrt\\/"'.includes(String.fromCharCode(e))) throw err(e, 'in string escape code');
      } else if (c < 0x20) throw err(c, 'in string literal');
    }
  };
  const number = (first: number) => {
    let c = first;
    if (c === 0x2d) {
      c = peek();
      if (c < 0) throw eof();
      if (!isDigit(c)) throw err(c, 'in numeric literal');
      i++;
    }
    if (c !== 0x30) while (isDigit(peek())) i++;
    if (peek() === 0x2e) {
      i++;
      const d = peek();
      if (d < 0) throw eof();
      if (!isDigit(d)) throw err(d, 'after decimal point in numeric literal');
      while (isDigit(peek())) i++;
    }
    if (peek() === 0x65 || peek() === 0x45) {
      i++;
      if (peek() === 0x2b || peek() === 0x2d) i++;
      const d = peek();
      if (d < 0) throw eof();
      if (!isDigit(d)) throw err(d, 'in exponent of numeric literal');
      while (isDigit(peek())) i++;
    }
  };
  const value = () => {
    skip();
    const c = peek();
    if (c < 0) throw eof();
    i++;
    if (c === 0x7b) {
      skip();
      if (peek() === 0x7d) {
        i++;
        return;
      }
      for (;;) {
        skip();
        const k = peek();
        if (k < 0) throw eof();
        if (k !== 0x22) throw err(k, 'looking for beginning of object key string');
        i++;
        string();
        skip();
        const colon = peek();
        if (colon < 0) throw eof();
        if (colon !== 0x3a) throw err(colon, 'after object key');
        i++;
        stack.push('value');
        value();
        stack.pop();
        skip();
        const sep = peek();
        if (sep < 0) throw eof();
        i++;
        if (sep === 0x7d) return;
        if (sep !== 0x2c) throw err(sep, 'after object key:value pair');
      }
    }
    if (c === 0x5b) {
      skip();
      if (peek() === 0x5d) {
        i++;
        return;
      }
      for (;;) {
        stack.push('array');
        value();
        stack.pop();
        skip();
        const sep = peek();
        if (sep < 0) throw eof();
        i++;
        if (sep === 0x5d) return;
        if (sep !== 0x2c) throw err(sep, 'after array element');
      }
    }
    if (c === 0x22) return string();
    if (c === 0x2d || isDigit(c)) return number(c);
    if (c === 0x74) return literal('true');
    if (c === 0x66) return literal('false');
    if (c === 0x6e) return literal('null');
    throw err(c, 'looking for beginning of value');
  };
  try {
    value();
    skip();
    if (i < data.length) throw err(data[i]!, 'after top-level value');
    return null;
  } catch (e) {
    if (e instanceof SyntaxError_) return e.message;
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// time: durations

/**
 * The quoting of the time package's errors (its own `quote`, not strconv.Quote): `"` and `\`
 * escaped, every byte of a rune outside printable ASCII written as `\xNN`.
 */
export function goTimeQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.charCodeAt(0);
    if (c >= 0x20 && c < 0x80) out += c === 0x22 || c === 0x5c ? '\\' + ch : ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += '\\x' + b.toString(16).padStart(2, '0');
  }
  return out + '"';
}

const DURATION_UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1000n,
  'µs': 1000n, // U+00B5 micro sign
  'μs': 1000n, // U+03BC Greek mu
  ms: 1000000n,
  s: 1000000000n,
  m: 60n * 1000000000n,
  h: 3600n * 1000000000n,
};
const MAX_INT64 = (1n << 63n) - 1n;

/** Go's time.ParseDuration, returning nanoseconds; throws an Error with Go's text (`time: invalid duration "x"`). */
export function goParseDuration(orig: string): bigint {
  const invalid = () => new Error('time: invalid duration ' + goTimeQuote(orig));
  let s = orig;
  let neg = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) { neg = s[0] === '-'; s = s.slice(1); }
  if (s === '0') return 0n;
  if (s === '') throw invalid();
  let d = 0n;
  while (s !== '') {
    if (!(s[0] === '.' || (s[0]! >= '0' && s[0]! <= '9'))) throw invalid();
    // leading integer
    let i = 0;
    let v = 0n;
    while (i < s.length && s[i]! >= '0' && s[i]! <= '9') {
      v = v * 10n + BigInt(s.charCodeAt(i) - 48);
      if (v > MAX_INT64 + 1n) throw invalid();
      i++;
    }
    const pre = i > 0;
    s = s.slice(i);
    let post = false;
    let f = 0n;
    let scale = 1;
    if (s !== '' && s[0] === '.') {
      s = s.slice(1);
      let j = 0;
      let overflow = false;
      while (j < s.length && s[j]! >= '0' && s[j]! <= '9') {
        if (!overflow) {
          const y = f * 10n + BigInt(s.charCodeAt(j) - 48);
          if (f > MAX_INT64 / 10n || y > MAX_INT64 + 1n) overflow = true;
          else { f = y; scale *= 10; }
        }
        j++;
      }
      post = j > 0;
      s = s.slice(j);
    }
    if (!pre && !post) throw invalid();
    let k = 0;
    while (k < s.length && s[k] !== '.' && !(s[k]! >= '0' && s[k]! <= '9')) k++;
    if (k === 0) throw new Error('time: missing unit in duration ' + goTimeQuote(orig));
    const u = s.slice(0, k);
    s = s.slice(k);
    const unit = DURATION_UNITS[u];
    if (unit === undefined) throw new Error('time: unknown unit ' + goTimeQuote(u) + ' in duration ' + goTimeQuote(orig));
    if (v > (MAX_INT64 + 1n) / unit) throw invalid();
    v *= unit;
    if (f > 0n) {
      v += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
      if (v > MAX_INT64 + 1n) throw invalid();
    }
    d += v;
    if (d > MAX_INT64 + 1n) throw invalid();
  }
  if (neg) return -d;
  if (d > MAX_INT64) throw invalid();
  return d;
}

function fmtFrac(v: bigint, prec: number): [string, bigint] {
  let out = '';
  let print = false;
  for (let i = 0; i < prec; i++) {
    const digit = v % 10n;
    print = print || digit !== 0n;
    if (print) out = String(digit) + out;
    v /= 10n;
  }
  if (print) out = '.' + out;
  return [out, v];
}

/** Go's time.Duration.String() for a count of nanoseconds: `5m0s`, `300ms`, `1h2m3.5s`, `0s`. */
export function goFormatDuration(d: bigint): string {
  const neg = d < 0n;
  let u = neg ? -d : d;
  let out: string;
  if (u < 1000000000n) {
    if (u === 0n) return '0s';
    let prec: number;
    let unit: string;
    if (u < 1000n) { prec = 0; unit = 'ns'; }
    else if (u < 1000000n) { prec = 3; unit = 'µs'; }
    else { prec = 6; unit = 'ms'; }
    const [frac, rest] = fmtFrac(u, prec);
    out = String(rest) + frac + unit;
  } else {
    const [frac, rest] = fmtFrac(u, 9);
    u = rest;
    out = String(u % 60n) + frac + 's';
    u /= 60n;
    if (u > 0n) {
      out = String(u % 60n) + 'm' + out;
      u /= 60n;
      if (u > 0n) out = String(u) + 'h' + out;
    }
  }
  return neg ? '-' + out : out;
}
