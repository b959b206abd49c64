// Go's value formatting as kubectl's printers show it: fmt's Sprint/Sprintf/Sprintln verbs and
// flags, strconv's float formatting and quoting, and encoding/json's Marshal (sorted keys, HTML
// escaping). The Go template and JSONPath engines print through this module, so a value prints
// the way the Go binary prints it (`1e+06` for a float64 million, `map[a:1 b:2]` for a map,
// `%!d(string=x)` for a bad verb).
//
// The value model (shared with gotemplate.ts and jsonpath.ts):
//   - string                 → Go string
//   - number                 → Go float64
//   - boolean                → Go bool
//   - GoInt                  → a Go integer of a given kind (int, int64, int32 rune, uint8 byte, ...)
//   - GoComplex              → complex128
//   - null (or undefined)    → nil (an empty interface{})
//   - Array                  → []interface {}
//   - plain object           → map[string]interface {}

import { goFormatFloat, goJSONString, goJSONSyntaxError, goQuote, goQuoteRune, goQuoteToASCII, goStringCompare, isPrintRune } from '../machinery/gostrings.js';

export type IntKind = 'int' | 'int8' | 'int16' | 'int32' | 'int64' | 'uint' | 'uint8' | 'uint16' | 'uint32' | 'uint64' | 'uintptr';

/** A Go integer value with its kind. */
export class GoInt {
  constructor(
    readonly value: bigint,
    readonly kind: IntKind = 'int',
  ) {}
  static of(n: number | bigint, kind: IntKind = 'int'): GoInt {
    return new GoInt(typeof n === 'bigint' ? n : BigInt(Math.trunc(n)), kind);
  }
  get signed(): boolean {
    return !this.kind.startsWith('u');
  }
  toNumber(): number {
    return Number(this.value);
  }
}

/** A Go complex128. */
export class GoComplex {
  constructor(
    readonly re: number,
    readonly im: number,
  ) {}
}

export type GoMap = Record<string, unknown>;

export function isGoMap(v: unknown): v is GoMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof GoInt) && !(v instanceof GoComplex);
}

/** reflect.TypeOf(v).String() for a value of the model. */
export function goTypeString(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'float64';
  if (typeof v === 'boolean') return 'bool';
  if (v instanceof GoInt) return v.kind;
  if (v instanceof GoComplex) return 'complex128';
  if (Array.isArray(v)) return '[]interface {}';
  return 'map[string]interface {}';
}

// ─────────────────────────────────────────────────────────────────────────────
// UTF-8 helpers (Go strings are bytes; JS strings are UTF-16)
// ─────────────────────────────────────────────────────────────────────────────

export function utf8Len(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

export function runeCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

// ─────────────────────────────────────────────────────────────────────────────
// strconv: quoting
// ─────────────────────────────────────────────────────────────────────────────

// (shared with the API server's messages: ../machinery/gostrings.ts)

export { isPrintRune, goQuoteRune as quoteRune };

/** strconv.Quote (or QuoteToASCII). */
export function quote(s: string, asciiOnly = false): string {
  return asciiOnly ? goQuoteToASCII(s) : goQuote(s);
}

/** strconv.CanBackquote. */
export function canBackquote(s: string): boolean {
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c === 0x60 || c === 0xfeff) return false;
    if (c < 0x20 && c !== 0x09) return false;
    if (c === 0x7f) return false;
  }
  return true;
}

/**
 * strconv.UnquoteChar: decodes the first character (or escape) of s, with `q` the quote in use.
 * Returns the code point, whether it was a multibyte value, and the rest; throws ErrSyntax.
 */
export function unquoteChar(s: string, q: string): { value: number; multibyte: boolean; byteValue: boolean; tail: string } {
  const syntax = () => new SyntaxErr();
  if (s.length === 0) throw syntax();
  const c = s.codePointAt(0)!;
  const first = String.fromCodePoint(c);
  if (first === q && (q === "'" || q === '"')) throw syntax();
  if (c >= 0x80) return { value: c, multibyte: true, byteValue: false, tail: s.slice(first.length) };
  if (first !== '\\') return { value: c, multibyte: false, byteValue: false, tail: s.slice(1) };
  if (s.length <= 1) throw syntax();
  const e = s[1]!;
  let tail = s.slice(2);
  switch (e) {
    case 'a': return { value: 7, multibyte: false, byteValue: false, tail };
    case 'b': return { value: 8, multibyte: false, byteValue: false, tail };
    case 'f': return { value: 12, multibyte: false, byteValue: false, tail };
    case 'n': return { value: 10, multibyte: false, byteValue: false, tail };
    case 'r': return { value: 13, multibyte: false, byteValue: false, tail };
    case 't': return { value: 9, multibyte: false, byteValue: false, tail };
    case 'v': return { value: 11, multibyte: false, byteValue: false, tail };
    case 'x':
    case 'u':
    case 'U': {
      const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      if (tail.length < n) throw syntax();
      let v = 0;
      for (let j = 0; j < n; j++) {
        const d = parseInt(tail[j]!, 16);
        if (Number.isNaN(d)) throw syntax();
        v = v * 16 + d;
      }
      tail = tail.slice(n);
      if (e === 'x') return { value: v, multibyte: false, byteValue: true, tail };
      if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) throw syntax();
      return { value: v, multibyte: true, byteValue: false, tail };
    }
    case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
      let v = parseInt(e, 8);
      if (tail.length < 2) throw syntax();
      for (let j = 0; j < 2; j++) {
        const d = parseInt(tail[j]!, 8);
        if (Number.isNaN(d) || !/[0-7]/.test(tail[j]!)) throw syntax();
        v = v * 8 + d;
      }
      if (v > 255) throw syntax();
      return { value: v, multibyte: false, byteValue: true, tail: tail.slice(2) };
    }
    case '\\':
      return { value: 0x5c, multibyte: false, byteValue: false, tail };
    case "'":
    case '"':
      if (e !== q) throw syntax();
      return { value: e.charCodeAt(0), multibyte: false, byteValue: false, tail };
  }
  throw syntax();
}

export class SyntaxErr extends Error {
  constructor() {
    super('invalid syntax');
  }
}

/** Builds a JS string from Go "bytes or runes" (escapes like \xff produce raw bytes). */
function bytesToString(parts: number[][]): string {
  return Buffer.from(parts.flat()).toString('utf8');
}

/** strconv.Unquote for "...", `...` and '...' (a single character). Throws SyntaxErr. */
export function unquote(s: string): string {
  const n = s.length;
  if (n < 2) throw new SyntaxErr();
  const q = s[0]!;
  if (q !== s[n - 1]) throw new SyntaxErr();
  const body = s.slice(1, -1);
  if (q === '`') {
    if (body.includes('`')) throw new SyntaxErr();
    return body.replace(/\r/g, '');
  }
  if (q !== '"' && q !== "'") throw new SyntaxErr();
  if (body.includes('\n')) throw new SyntaxErr();
  if (!body.includes('\\') && !body.includes(q)) {
    if (q === '"') return body;
    if (q === "'" && runeCount(body) === 1) return body;
  }
  const parts: number[][] = [];
  let rest = body;
  while (rest.length > 0) {
    const r = unquoteChar(rest, q);
    rest = r.tail;
    if (r.byteValue || r.value < 0x80) parts.push([r.value]);
    else parts.push([...Buffer.from(String.fromCodePoint(r.value), 'utf8')]);
    if (q === "'" && rest.length !== 0) throw new SyntaxErr();
  }
  return bytesToString(parts);
}

// ─────────────────────────────────────────────────────────────────────────────
// strconv: floats
// ─────────────────────────────────────────────────────────────────────────────

// (shared with the API server's messages: ../machinery/gostrings.ts)

export { goFormatFloat as formatFloat };

// ─────────────────────────────────────────────────────────────────────────────
// fmt
// ─────────────────────────────────────────────────────────────────────────────

interface Flags {
  plus: boolean;
  minus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  plusV: boolean;
  sharpV: boolean;
  wid: number;
  widPresent: boolean;
  prec: number;
  precPresent: boolean;
}

function newFlags(): Flags {
  return { plus: false, minus: false, sharp: false, space: false, zero: false, plusV: false, sharpV: false, wid: 0, widPresent: false, prec: 0, precPresent: false };
}

class Printer {
  buf = '';
  f: Flags = newFlags();

  private padding(n: number): string {
    if (n <= 0) return '';
    return (this.f.zero ? '0' : ' ').repeat(n);
  }

  pad(s: string): void {
    if (!this.f.widPresent || this.f.wid === 0) {
      this.buf += s;
      return;
    }
    const width = this.f.wid - runeCount(s);
    if (!this.f.minus) this.buf += this.padding(width) + s;
    else {
      const z = this.f.zero;
      this.f.zero = false;
      this.buf += s + this.padding(width);
      this.f.zero = z;
    }
  }

  truncate(s: string): string {
    if (this.f.precPresent) {
      let n = this.f.prec;
      let out = '';
      for (const ch of s) {
        if (n-- <= 0) break;
        out += ch;
      }
      return out;
    }
    return s;
  }

  fmtBoolean(v: boolean): void {
    this.pad(v ? 'true' : 'false');
  }

  fmtInteger(u: bigint, base: number, signed: boolean, verb: string, upper: boolean): void {
    const negative = signed && u < 0n;
    if (negative) u = -u;
    let prec = 0;
    if (this.f.precPresent) {
      prec = this.f.prec;
      if (prec === 0 && u === 0n) {
        const z = this.f.zero;
        this.f.zero = false;
        this.buf += this.padding(this.f.wid);
        this.f.zero = z;
        return;
      }
    } else if (this.f.zero && this.f.widPresent) {
      prec = this.f.wid;
      if (negative || this.f.plus || this.f.space) prec--;
    }
    let digits = u.toString(base);
    if (upper) digits = digits.toUpperCase();
    while (digits.length < prec) digits = '0' + digits;
    if (this.f.sharp) {
      if (base === 2) digits = '0b' + digits;
      else if (base === 8) {
        if (digits[0] !== '0') digits = '0' + digits;
      } else if (base === 16) digits = (upper ? '0X' : '0x') + digits;
    }
    if (verb === 'O') digits = '0o' + digits;
    if (negative) digits = '-' + digits;
    else if (this.f.plus) digits = '+' + digits;
    else if (this.f.space) digits = ' ' + digits;
    const z = this.f.zero;
    this.f.zero = false;
    this.pad(digits);
    this.f.zero = z;
  }

  fmtFloat(v: number, verb: string, prec: number): void {
    if (this.f.precPresent) prec = this.f.prec;
    const fmtc = (verb === 'F' ? 'f' : verb) as 'e' | 'E' | 'f' | 'g' | 'G';
    let num = goFormatFloat(v, fmtc, prec);
    if (num[0] !== '-' && num[0] !== '+') num = '+' + num;
    if (this.f.space && num[0] === '+' && !this.f.plus) num = ' ' + num.slice(1);
    if (num[1] === 'I' || num[1] === 'N') {
      const z = this.f.zero;
      this.f.zero = false;
      if (num[1] === 'N' && !this.f.space && !this.f.plus) num = num.slice(1);
      this.pad(num);
      this.f.zero = z;
      return;
    }
    if (this.f.sharp) {
      let digits = 0;
      if (verb === 'v' || verb === 'g' || verb === 'G' || verb === 'x') {
        digits = prec;
        if (digits === -1) digits = 6;
      }
      let tail = '';
      let hasDecimalPoint = false;
      let sawNonzero = false;
      let body = num;
      for (let i = 1; i < body.length; i++) {
        const c = body[i]!;
        if (c === '.') hasDecimalPoint = true;
        else if (c === 'e' || c === 'E') {
          tail = body.slice(i);
          body = body.slice(0, i);
          break;
        } else {
          if (c !== '0') sawNonzero = true;
          if (sawNonzero) digits--;
        }
      }
      if (!hasDecimalPoint) {
        if (body.length === 2 && body[1] === '0') digits--;
        body += '.';
      }
      while (digits > 0) {
        body += '0';
        digits--;
      }
      num = body + tail;
    }
    if (this.f.plus || num[0] !== '+') {
      if (this.f.zero && this.f.widPresent && this.f.wid > num.length) {
        this.buf += num[0];
        this.buf += '0'.repeat(this.f.wid - num.length);
        this.buf += num.slice(1);
        return;
      }
      this.pad(num);
      return;
    }
    this.pad(num.slice(1));
  }

  fmtS(s: string): void {
    this.pad(this.truncate(s));
  }

  fmtQ(s: string): void {
    s = this.truncate(s);
    if (this.f.sharp && canBackquote(s)) {
      this.pad('`' + s + '`');
      return;
    }
    this.pad(quote(s, this.f.plus));
  }

  fmtSx(s: string, upper: boolean): void {
    let bytes = [...Buffer.from(s, 'utf8')];
    if (this.f.precPresent && this.f.prec < bytes.length) bytes = bytes.slice(0, this.f.prec);
    if (bytes.length === 0) {
      this.buf += this.padding(this.f.wid);
      return;
    }
    let out = '';
    bytes.forEach((b, i) => {
      if (this.f.space && i > 0) out += ' ';
      if (this.f.sharp && (this.f.space || i === 0)) out += upper ? '0X' : '0x';
      const h = b.toString(16).padStart(2, '0');
      out += upper ? h.toUpperCase() : h;
    });
    const z = this.f.zero;
    this.pad(out);
    this.f.zero = z;
  }

  fmtC(c: bigint): void {
    let r = Number(c);
    if (c > 0x10ffffn || c < 0n || (r >= 0xd800 && r <= 0xdfff)) r = 0xfffd;
    this.pad(String.fromCodePoint(r));
  }

  fmtQc(c: bigint): void {
    let r = Number(c);
    if (c > 0x10ffffn || c < 0n) r = 0xfffd;
    if (this.f.sharp && r < 0x110000 && isPrintRune(r) && r !== 0x27) {
      this.pad("'" + String.fromCodePoint(r) + "'");
      return;
    }
    this.pad(goQuoteRune(r, this.f.plus));
  }

  fmtUnicode(u: bigint): void {
    let s = 'U+' + u.toString(16).toUpperCase().padStart(4, '0');
    if (this.f.precPresent && this.f.prec > 4) s = 'U+' + u.toString(16).toUpperCase().padStart(this.f.prec, '0');
    const r = Number(u);
    if (this.f.sharp && u <= 0x10ffffn && isPrintRune(r)) s += " '" + String.fromCodePoint(r) + "'";
    const z = this.f.zero;
    this.f.zero = false;
    this.pad(s);
    this.f.zero = z;
  }

  badVerb(verb: string, v: unknown): void {
    this.buf += '%!' + verb + '(';
    if (v === null || v === undefined) this.buf += '<nil>';
    else {
      this.buf += goTypeString(v) + '=';
      const saved = this.f;
      this.f = newFlags();
      this.printArg(v, 'v');
      this.f = saved;
    }
    this.buf += ')';
  }

  fmtBool(v: boolean, verb: string): void {
    if (verb === 't' || verb === 'v') this.fmtBoolean(v);
    else this.badVerb(verb, v);
  }

  fmtIntegerVerb(v: GoInt, verb: string): void {
    const signed = v.signed;
    const u = v.value;
    switch (verb) {
      case 'v':
        if (this.f.sharpV && !signed) {
          const s = this.f.sharp;
          this.f.sharp = true;
          this.fmtInteger(u, 16, false, 'v', false);
          this.f.sharp = s;
        } else this.fmtInteger(u, 10, signed, verb, false);
        return;
      case 'd':
        return this.fmtInteger(u, 10, signed, verb, false);
      case 'b':
        return this.fmtInteger(u, 2, signed, verb, false);
      case 'o':
      case 'O':
        return this.fmtInteger(u, 8, signed, verb, false);
      case 'x':
        return this.fmtInteger(u, 16, signed, verb, false);
      case 'X':
        return this.fmtInteger(u, 16, signed, verb, true);
      case 'c':
        return this.fmtC(u);
      case 'q':
        return this.fmtQc(u);
      case 'U':
        return this.fmtUnicode(u);
    }
    this.badVerb(verb, v);
  }

  fmtFloatVerb(v: number, verb: string): void {
    switch (verb) {
      case 'v':
        return this.fmtFloat(v, 'g', -1);
      case 'b':
      case 'x':
      case 'X':
        // binary and hex float forms are rare in templates; fall back to %g
        return this.fmtFloat(v, 'g', -1);
      case 'g':
      case 'G':
        return this.fmtFloat(v, verb, -1);
      case 'f':
      case 'e':
      case 'E':
        return this.fmtFloat(v, verb, 6);
      case 'F':
        return this.fmtFloat(v, 'f', 6);
    }
    this.badVerb(verb, v);
  }

  fmtComplexVerb(v: GoComplex, verb: string): void {
    if (!'vbgGxXfFeE'.includes(verb)) {
      this.badVerb(verb, v);
      return;
    }
    const oldPlus = this.f.plus;
    this.buf += '(';
    this.fmtFloatVerb(v.re, verb);
    this.f.plus = true;
    this.fmtFloatVerb(v.im, verb);
    this.buf += 'i)';
    this.f.plus = oldPlus;
  }

  fmtString(v: string, verb: string): void {
    switch (verb) {
      case 'v':
        if (this.f.sharpV) this.fmtQ(v);
        else this.fmtS(v);
        return;
      case 's':
        return this.fmtS(v);
      case 'x':
        return this.fmtSx(v, false);
      case 'X':
        return this.fmtSx(v, true);
      case 'q':
        return this.fmtQ(v);
    }
    this.badVerb(verb, v);
  }

  /** fmt's printArg: a value at the top level (a nil here is `<nil>` for %v and %T). */
  printArg(v: unknown, verb: string): void {
    if (v === null || v === undefined) {
      if (verb === 'T' || verb === 'v') this.pad('<nil>');
      else this.badVerb(verb, v);
      return;
    }
    if (verb === 'T') {
      this.fmtS(goTypeString(v));
      return;
    }
    if (verb === 'p') {
      this.badVerb(verb, v);
      return;
    }
    this.printValue(v, verb, 0);
  }

  /** fmt's printValue for a concrete value. */
  printValue(v: unknown, verb: string, depth: number): void {
    if (typeof v === 'boolean') return this.fmtBool(v, verb);
    if (typeof v === 'number') return this.fmtFloatVerb(v, verb);
    if (typeof v === 'string') return this.fmtString(v, verb);
    if (v instanceof GoInt) return this.fmtIntegerVerb(v, verb);
    if (v instanceof GoComplex) return this.fmtComplexVerb(v, verb);
    if (Array.isArray(v)) {
      if (this.f.sharpV) {
        this.buf += '[]interface {}{';
        v.forEach((e, i) => {
          if (i > 0) this.buf += ', ';
          this.printElem(e, verb, depth + 1);
        });
        this.buf += '}';
      } else {
        this.buf += '[';
        v.forEach((e, i) => {
          if (i > 0) this.buf += ' ';
          this.printElem(e, verb, depth + 1);
        });
        this.buf += ']';
      }
      return;
    }
    if (isGoMap(v)) {
      const keys = Object.keys(v).sort(goStringCompare);
      this.buf += this.f.sharpV ? 'map[string]interface {}{' : 'map[';
      keys.forEach((k, i) => {
        if (i > 0) this.buf += this.f.sharpV ? ', ' : ' ';
        this.printValue(k, verb, depth + 1);
        this.buf += ':';
        this.printElem(v[k], verb, depth + 1);
      });
      this.buf += this.f.sharpV ? '}' : ']';
      return;
    }
    // nil at depth > 0 through printElem; anything else is printed with %v
    this.buf += String(v);
  }

  /** An element of a map or slice: an interface{} (a nil prints as <nil> whatever the verb). */
  printElem(v: unknown, verb: string, depth: number): void {
    if (v === null || v === undefined) {
      this.buf += this.f.sharpV ? 'interface {}(nil)' : '<nil>';
      return;
    }
    this.printValue(v, verb, depth);
  }
}

/** Go's string ordering (bytewise on UTF-8, which is code point order). */
export { goStringCompare as compareGoStrings };

/** fmt.Sprint: operands are separated by a space when neither side is a string. */
export function sprint(...args: unknown[]): string {
  const p = new Printer();
  let prevString = false;
  args.forEach((a, i) => {
    const isString = typeof a === 'string';
    if (i > 0 && !isString && !prevString) p.buf += ' ';
    p.f = newFlags();
    p.printArg(a, 'v');
    prevString = isString;
  });
  return p.buf;
}

/** fmt.Sprintln: always spaces between operands, and a newline. */
export function sprintln(...args: unknown[]): string {
  const p = new Printer();
  args.forEach((a, i) => {
    if (i > 0) p.buf += ' ';
    p.f = newFlags();
    p.printArg(a, 'v');
  });
  return p.buf + '\n';
}

function parseNum(s: string, i: number): [number, boolean, number] {
  let num = 0;
  let present = false;
  while (i < s.length && s[i]! >= '0' && s[i]! <= '9') {
    if (num > 1e6) return [0, false, s.length];
    num = num * 10 + (s.charCodeAt(i) - 48);
    present = true;
    i++;
  }
  return [num, present, i];
}

function intFromArg(args: unknown[], argNum: number): [number, boolean, number] {
  let num = 0;
  let isInt = false;
  if (argNum < args.length) {
    const a = args[argNum];
    if (a instanceof GoInt) {
      isInt = true;
      num = Number(a.value);
      if (num > 1e6 || num < -1e6) {
        num = 0;
        isInt = false;
      }
    }
    argNum++;
  }
  return [num, isInt, argNum];
}

/** fmt.Sprintf with Go's verbs, flags, width, precision, argument indexes and error notations. */
export function sprintf(format: string, ...args: unknown[]): string {
  const p = new Printer();
  let argNum = 0;
  let afterIndex = false;
  let reordered = false;
  let goodArgNum = true;
  const end = format.length;

  const argNumber = (argNum: number, i: number, numArgs: number): [number, number, boolean] => {
    if (format.length <= i || format[i] !== '[') return [argNum, i, false];
    reordered = true;
    // parseArgNumber
    for (let j = i + 1; j < format.length; j++) {
      if (format[j] === ']') {
        const [width, ok, newi] = parseNum(format, i + 1);
        if (!ok || newi !== j) {
          goodArgNum = false;
          return [argNum, j + 1, true];
        }
        const idx = width - 1;
        if (idx >= 0 && idx < numArgs) return [idx, j + 1, true];
        goodArgNum = false;
        return [argNum, j + 1, true];
      }
    }
    goodArgNum = false;
    return [argNum, i + 1, false];
  };

  let i = 0;
  formatLoop: while (i < end) {
    goodArgNum = true;
    const lasti = i;
    while (i < end && format[i] !== '%') i++;
    if (i > lasti) p.buf += format.slice(lasti, i);
    if (i >= end) break;
    i++;
    p.f = newFlags();
    simple: for (; i < end; i++) {
      const c = format[i]!;
      switch (c) {
        case '#':
          p.f.sharp = true;
          break;
        case '0':
          p.f.zero = !p.f.minus;
          break;
        case '+':
          p.f.plus = true;
          break;
        case '-':
          p.f.minus = true;
          p.f.zero = false;
          break;
        case ' ':
          p.f.space = true;
          break;
        default:
          if (c >= 'a' && c <= 'z' && argNum < args.length) {
            if (c === 'v') {
              p.f.sharpV = p.f.sharp;
              p.f.sharp = false;
              p.f.plusV = p.f.plus;
              p.f.plus = false;
            }
            p.printArg(args[argNum], c);
            argNum++;
            i++;
            continue formatLoop;
          }
          break simple;
      }
    }
    [argNum, i, afterIndex] = argNumber(argNum, i, args.length);
    if (i < end && format[i] === '*') {
      i++;
      [p.f.wid, p.f.widPresent, argNum] = intFromArg(args, argNum);
      if (!p.f.widPresent) p.buf += '%!(BADWIDTH)';
      if (p.f.wid < 0) {
        p.f.wid = -p.f.wid;
        p.f.minus = true;
        p.f.zero = false;
      }
      afterIndex = false;
    } else {
      [p.f.wid, p.f.widPresent, i] = parseNum(format, i);
      if (afterIndex && p.f.widPresent) goodArgNum = false;
    }
    if (i + 1 < end && format[i] === '.') {
      i++;
      if (afterIndex) goodArgNum = false;
      [argNum, i, afterIndex] = argNumber(argNum, i, args.length);
      if (i < end && format[i] === '*') {
        i++;
        [p.f.prec, p.f.precPresent, argNum] = intFromArg(args, argNum);
        if (p.f.prec < 0) {
          p.f.prec = 0;
          p.f.precPresent = false;
        }
        if (!p.f.precPresent) p.buf += '%!(BADPREC)';
        afterIndex = false;
      } else {
        [p.f.prec, p.f.precPresent, i] = parseNum(format, i);
        if (!p.f.precPresent) {
          p.f.prec = 0;
          p.f.precPresent = true;
        }
      }
    }
    if (!afterIndex) [argNum, i, afterIndex] = argNumber(argNum, i, args.length);
    if (i >= end) {
      p.buf += '%!(NOVERB)';
      break;
    }
    const verb = String.fromCodePoint(format.codePointAt(i)!);
    i += verb.length;
    if (verb === '%') {
      p.buf += '%';
    } else if (!goodArgNum) {
      p.buf += '%!' + verb + '(BADINDEX)';
    } else if (argNum >= args.length) {
      p.buf += '%!' + verb + '(MISSING)';
    } else {
      if (verb === 'v') {
        p.f.sharpV = p.f.sharp;
        p.f.sharp = false;
        p.f.plusV = p.f.plus;
        p.f.plus = false;
      }
      p.printArg(args[argNum], verb);
      argNum++;
    }
  }
  if (!reordered && argNum < args.length) {
    p.f = newFlags();
    p.buf += '%!(EXTRA ';
    for (let k = argNum; k < args.length; k++) {
      if (k > argNum) p.buf += ', ';
      const a = args[k];
      if (a === null || a === undefined) p.buf += '<nil>';
      else {
        p.buf += goTypeString(a) + '=';
        p.printArg(a, 'v');
      }
    }
    p.buf += ')';
  }
  return p.buf;
}

// ─────────────────────────────────────────────────────────────────────────────
// encoding/json
// ─────────────────────────────────────────────────────────────────────────────

export { goJSONString as jsonString };

function jsonNumber(v: number): string {
  if (!Number.isFinite(v)) throw new Error(`json: unsupported value: ${goFormatFloat(v, 'g', -1)}`);
  const abs = Math.abs(v);
  if (abs !== 0 && (abs < 1e-6 || abs >= 1e21)) {
    // Go: 'e' format with the exponent's leading zero dropped (1e-07 -> 1e-7)
    return goFormatFloat(v, 'e', -1).replace(/e([+-])0(\d)$/, 'e$1$2');
  }
  return goFormatFloat(v, 'f', -1);
}

/**
 * json.Marshal / json.MarshalIndent of a value of the model: map keys sorted, `<`, `>`, `&`
 * escaped. `indent` '' gives the compact form.
 */
export function jsonMarshal(v: unknown, indent = '', prefix = ''): string {
  const out: string[] = [];
  const write = (x: unknown, level: number): void => {
    if (x === null || x === undefined) {
      out.push('null');
      return;
    }
    if (typeof x === 'string') {
      out.push(goJSONString(x));
      return;
    }
    if (typeof x === 'number') {
      out.push(jsonNumber(x));
      return;
    }
    if (typeof x === 'boolean') {
      out.push(x ? 'true' : 'false');
      return;
    }
    if (x instanceof GoInt) {
      out.push(x.value.toString());
      return;
    }
    if (x instanceof GoComplex) throw new Error('json: unsupported type: complex128');
    const nl = indent ? '\n' + prefix + indent.repeat(level + 1) : '';
    const close = indent ? '\n' + prefix + indent.repeat(level) : '';
    if (Array.isArray(x)) {
      if (x.length === 0) {
        out.push('[]');
        return;
      }
      out.push('[');
      x.forEach((e, i) => {
        if (i > 0) out.push(',');
        out.push(nl);
        write(e, level + 1);
      });
      out.push(close + ']');
      return;
    }
    const obj = x as GoMap;
    const keys = Object.keys(obj).sort(goStringCompare);
    if (keys.length === 0) {
      out.push('{}');
      return;
    }
    out.push('{');
    keys.forEach((k, i) => {
      if (i > 0) out.push(',');
      out.push(nl);
      out.push(goJSONString(k));
      out.push(indent ? ': ' : ':');
      write(obj[k], level + 1);
    });
    out.push(close + '}');
  };
  write(v, 0);
  return out.join('');
}

/**
 * Converts a JSON value into the model for the way kubectl's JSONPath sees unstructured
 * content: whole numbers are int64, other numbers float64.
 */
export function toUnstructuredValues(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) <= Number.MAX_SAFE_INTEGER ? new GoInt(BigInt(v), 'int64') : v;
  if (typeof v === 'bigint') return new GoInt(v, 'int64');
  if (Array.isArray(v)) return v.map(toUnstructuredValues);
  if (v !== null && typeof v === 'object') {
    const out: GoMap = {};
    for (const [k, x] of Object.entries(v as GoMap)) out[k] = toUnstructuredValues(x);
    return out;
  }
  return v;
}

// ─────────────────────────────────────────────────────────────────────────────
// encoding/json syntax errors
// ─────────────────────────────────────────────────────────────────────────────

export { goJSONSyntaxError };
