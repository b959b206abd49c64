// Go's text/template language as kubectl's go-template printer offers it (Go 1.24 semantics):
// a lexer, a parser to Go's node tree, and an executor over JSON data, with Go's messages.
//
//   const t = GoTemplate.parse('output', '{{range .items}}{{.metadata.name}}{{"\n"}}{{end}}', kubectlFuncs);
//   const text = t.execute(data, { missingKey: 'default' });
//
// Supported: text and actions with `{{-`/`-}}` trimming, comments, pipelines, variables
// (`$x := ...`, `$x = ...`, `$`), fields and map keys (chained, on variables and on
// parenthesized pipelines), if/else if/else, range (slices, maps in key order, integers,
// with index/element variables, else, break, continue), with/else with, define, template,
// block, the builtin functions (and, or, not, len, index, slice, print, printf, println, html,
// js, urlquery, call, eq, ne, lt, le, gt, ge) plus any extra functions (kubectl adds exists and
// base64decode), Go's constant rules (ints, floats, chars, hex/octal/binary, complex) and the
// missingkey option. Values follow gofmt.ts's model; data from JSON has float64 numbers, as
// kubectl's printer sees it after a JSON round trip.

import { GoComplex, GoInt, type IntKind, compareGoStrings, goTypeString, isGoMap, quote, sprint, sprintf, sprintln, unquote, unquoteChar, utf8Len, isPrintRune, SyntaxErr } from './gofmt.js';

// ─────────────────────────────────────────────────────────────────────────────
// Errors
// ─────────────────────────────────────────────────────────────────────────────

/** A parse or execution error; the message is Go's `template: name:line:col: ...`. */
export class TemplateError extends Error {
  override name = 'TemplateError';
}

// ─────────────────────────────────────────────────────────────────────────────
// Lexer
// ─────────────────────────────────────────────────────────────────────────────

const enum T {
  Error,
  Bool,
  Char,
  CharConstant,
  Comment,
  Complex,
  Assign,
  Declare,
  EOF,
  Field,
  Identifier,
  LeftDelim,
  LeftParen,
  Number,
  Pipe,
  RawString,
  RightDelim,
  RightParen,
  Space,
  String,
  Text,
  Variable,
  Keyword, // delimits the keywords
  Block,
  Break,
  Continue,
  Dot,
  Define,
  Else,
  End,
  If,
  Nil,
  Range,
  Template,
  With,
}

const KEYWORDS: Record<string, T> = {
  '.': T.Dot,
  block: T.Block,
  break: T.Break,
  continue: T.Continue,
  define: T.Define,
  else: T.Else,
  end: T.End,
  if: T.If,
  range: T.Range,
  nil: T.Nil,
  template: T.Template,
  with: T.With,
};

interface Item {
  typ: T;
  pos: number;
  val: string;
  line: number;
}

/** Go's %.10q: the first 10 characters, quoted. */
function truncQuote(s: string): string {
  let out = '';
  let n = 0;
  for (const ch of s) {
    if (n++ >= 10) break;
    out += ch;
  }
  return quote(out);
}

function itemString(i: Item): string {
  if (i.typ === T.EOF) return 'EOF';
  if (i.typ === T.Error) return i.val;
  if (i.typ > T.Keyword) return `<${i.val}>`;
  if (utf8Len(i.val) > 10) return truncQuote(i.val) + '...';
  return quote(i.val);
}

const EOF = -1;
const SPACE_CHARS = ' \t\r\n';

function isSpace(r: number): boolean {
  return r === 0x20 || r === 0x09 || r === 0x0d || r === 0x0a;
}

const LETTER_OR_DIGIT = /^[\p{L}\p{Nd}]$/u;
function isAlphaNumeric(r: number): boolean {
  if (r === 0x5f) return true;
  if (r < 0) return false;
  if (r < 0x80) return (r >= 0x30 && r <= 0x39) || (r >= 0x41 && r <= 0x5a) || (r >= 0x61 && r <= 0x7a);
  return LETTER_OR_DIGIT.test(String.fromCodePoint(r));
}

/** Go's %#U: U+0023 '#'. */
function goSharpU(r: number): string {
  const hex = 'U+' + r.toString(16).toUpperCase().padStart(4, '0');
  return isPrintRune(r) ? `${hex} '${String.fromCodePoint(r)}'` : hex;
}

function hasLeftTrimMarker(s: string, at: number): boolean {
  return s.length - at >= 2 && s[at] === '-' && isSpace(s.charCodeAt(at + 1));
}

function hasRightTrimMarker(s: string, at: number): boolean {
  return s.length - at >= 2 && isSpace(s.charCodeAt(at)) && s[at + 1] === '-';
}

function trimRightLength(s: string): number {
  let n = s.length;
  while (n > 0 && SPACE_CHARS.includes(s[n - 1]!)) n--;
  return s.length - n;
}

function trimLeftLength(s: string): number {
  let n = 0;
  while (n < s.length && SPACE_CHARS.includes(s[n]!)) n++;
  return n;
}

type StateFn = ((l: Lexer) => StateFn) | null;

class Lexer {
  pos = 0;
  start = 0;
  atEOF = false;
  parenDepth = 0;
  line = 1;
  startLine = 1;
  private queue: Item[] = [];
  private state: StateFn = lexText;
  readonly leftDelim = '{{';
  readonly rightDelim = '}}';

  constructor(
    readonly input: string,
    readonly breakOK: boolean,
    readonly continueOK: boolean,
  ) {}

  next(): number {
    if (this.pos >= this.input.length) {
      this.atEOF = true;
      return EOF;
    }
    const r = this.input.codePointAt(this.pos)!;
    this.pos += r > 0xffff ? 2 : 1;
    if (r === 0x0a) this.line++;
    return r;
  }

  peek(): number {
    const r = this.next();
    this.backup();
    return r;
  }

  backup(): void {
    if (!this.atEOF && this.pos > 0) {
      const lo = this.input.charCodeAt(this.pos - 1);
      const w = lo >= 0xdc00 && lo <= 0xdfff && this.pos >= 2 ? 2 : 1;
      this.pos -= w;
      if (this.input.charCodeAt(this.pos) === 0x0a) this.line--;
    }
  }

  emit(t: T): void {
    this.queue.push({ typ: t, pos: this.start, val: this.input.slice(this.start, this.pos), line: this.startLine });
    this.start = this.pos;
    this.startLine = this.line;
  }

  ignore(): void {
    this.line += countNewlines(this.input.slice(this.start, this.pos));
    this.start = this.pos;
    this.startLine = this.line;
  }

  accept(valid: string): boolean {
    const r = this.next();
    if (r !== EOF && valid.includes(String.fromCodePoint(r))) return true;
    this.backup();
    return false;
  }

  acceptRun(valid: string): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || !valid.includes(String.fromCodePoint(r))) break;
    }
    this.backup();
  }

  errorf(msg: string): StateFn {
    this.queue.push({ typ: T.Error, pos: this.start, val: msg, line: this.startLine });
    return null;
  }

  /** The next item; runs the state machine until one is available. */
  nextItem(): Item {
    while (this.queue.length === 0) {
      if (!this.state) return { typ: T.EOF, pos: this.pos, val: '', line: this.line };
      this.state = this.state(this);
    }
    return this.queue.shift()!;
  }

  atRightDelim(): [boolean, boolean] {
    if (hasRightTrimMarker(this.input, this.pos) && this.input.startsWith(this.rightDelim, this.pos + 2)) return [true, true];
    if (this.input.startsWith(this.rightDelim, this.pos)) return [true, false];
    return [false, false];
  }

  atTerminator(): boolean {
    const r = this.peek();
    if (isSpace(r)) return true;
    switch (r) {
      case EOF:
      case 0x2e: // .
      case 0x2c: // ,
      case 0x7c: // |
      case 0x3a: // :
      case 0x29: // )
      case 0x28: // (
        return true;
    }
    return this.input.startsWith(this.rightDelim, this.pos);
  }

  scanNumber(): boolean {
    this.accept('+-');
    let digits = '0123456789_';
    if (this.accept('0')) {
      if (this.accept('xX')) digits = '0123456789abcdefABCDEF_';
      else if (this.accept('oO')) digits = '01234567_';
      else if (this.accept('bB')) digits = '01_';
    }
    this.acceptRun(digits);
    if (this.accept('.')) this.acceptRun(digits);
    if (digits.length === 11 && this.accept('eE')) {
      this.accept('+-');
      this.acceptRun('0123456789_');
    }
    if (digits.length === 23 && this.accept('pP')) {
      this.accept('+-');
      this.acceptRun('0123456789_');
    }
    this.accept('i');
    if (isAlphaNumeric(this.peek())) {
      this.next();
      return false;
    }
    return true;
  }
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 0x0a) n++;
  return n;
}

function lexText(l: Lexer): StateFn {
  const x = l.input.indexOf(l.leftDelim, l.pos);
  if (x >= 0) {
    const ldn = l.leftDelim.length;
    l.pos = x;
    let trim = 0;
    if (hasLeftTrimMarker(l.input, l.pos + ldn)) trim = trimRightLength(l.input.slice(l.start, l.pos));
    l.pos -= trim;
    if (l.pos > l.start) {
      l.line += countNewlines(l.input.slice(l.start, l.pos));
      l.emit(T.Text);
    }
    l.pos += trim;
    l.ignore();
    return lexLeftDelim;
  }
  l.pos = l.input.length;
  if (l.pos > l.start) {
    l.line += countNewlines(l.input.slice(l.start, l.pos));
    l.emit(T.Text);
  }
  l.emit(T.EOF);
  return null;
}

function lexLeftDelim(l: Lexer): StateFn {
  l.pos += l.leftDelim.length;
  const trimSpace = hasLeftTrimMarker(l.input, l.pos);
  const after = trimSpace ? 2 : 0;
  if (l.input.startsWith('/*', l.pos + after)) {
    l.pos += after;
    l.ignore();
    return lexComment;
  }
  l.emit(T.LeftDelim);
  l.pos += after;
  l.ignore();
  l.parenDepth = 0;
  return lexInsideAction;
}

function lexComment(l: Lexer): StateFn {
  l.pos += 2;
  const i = l.input.indexOf('*/', l.pos);
  if (i < 0) return l.errorf('unclosed comment');
  l.pos = i + 2;
  const [delim, trimSpace] = l.atRightDelim();
  if (!delim) return l.errorf('comment ends before closing delimiter');
  if (trimSpace) l.pos += 2;
  l.pos += l.rightDelim.length;
  if (trimSpace) l.pos += trimLeftLength(l.input.slice(l.pos));
  l.ignore();
  return lexText;
}

function lexRightDelim(l: Lexer): StateFn {
  const trimSpace = hasRightTrimMarker(l.input, l.pos);
  if (trimSpace) {
    l.pos += 2;
    l.ignore();
  }
  l.pos += l.rightDelim.length;
  l.emit(T.RightDelim);
  if (trimSpace) {
    l.pos += trimLeftLength(l.input.slice(l.pos));
    l.ignore();
  }
  return lexText;
}

function lexInsideAction(l: Lexer): StateFn {
  const [delim] = l.atRightDelim();
  if (delim) {
    if (l.parenDepth === 0) return lexRightDelim;
    return l.errorf('unclosed left paren');
  }
  const r = l.next();
  if (r === EOF) return l.errorf('unclosed action');
  if (isSpace(r)) {
    l.backup();
    return lexSpace;
  }
  switch (r) {
    case 0x3d: // =
      l.emit(T.Assign);
      return lexInsideAction;
    case 0x3a: // :
      if (l.next() !== 0x3d) return l.errorf('expected :=');
      l.emit(T.Declare);
      return lexInsideAction;
    case 0x7c:
      l.emit(T.Pipe);
      return lexInsideAction;
    case 0x22:
      return lexQuote;
    case 0x60:
      return lexRawQuote;
    case 0x24:
      return lexVariable;
    case 0x27:
      return lexChar;
    case 0x2e: {
      if (l.pos < l.input.length) {
        const c = l.input.charCodeAt(l.pos);
        if (c < 0x30 || c > 0x39) return lexField;
      }
      l.backup();
      return lexNumber;
    }
    case 0x28:
      l.emit(T.LeftParen);
      l.parenDepth++;
      return lexInsideAction;
    case 0x29:
      l.emit(T.RightParen);
      l.parenDepth--;
      if (l.parenDepth < 0) return l.errorf(`unexpected right paren ${goSharpU(r)}`);
      return lexInsideAction;
  }
  if (r === 0x2b || r === 0x2d || (r >= 0x30 && r <= 0x39)) {
    l.backup();
    return lexNumber;
  }
  if (isAlphaNumeric(r)) {
    l.backup();
    return lexIdentifier;
  }
  if (r < 0x80 && isPrintRune(r)) {
    l.emit(T.Char);
    return lexInsideAction;
  }
  return l.errorf(`unrecognized character in action: ${goSharpU(r)}`);
}

function lexSpace(l: Lexer): StateFn {
  let numSpaces = 0;
  for (;;) {
    const r = l.peek();
    if (!isSpace(r)) break;
    l.next();
    numSpaces++;
  }
  if (hasRightTrimMarker(l.input, l.pos - 1) && l.input.startsWith(l.rightDelim, l.pos - 1 + 2)) {
    l.backup();
    if (numSpaces === 1) return lexRightDelim;
  }
  l.emit(T.Space);
  return lexInsideAction;
}

function lexIdentifier(l: Lexer): StateFn {
  for (;;) {
    const r = l.next();
    if (isAlphaNumeric(r)) continue;
    l.backup();
    const word = l.input.slice(l.start, l.pos);
    if (!l.atTerminator()) return l.errorf(`bad character ${goSharpU(r)}`);
    const kw = KEYWORDS[word];
    if (kw !== undefined && kw > T.Keyword) {
      if ((kw === T.Break && !l.breakOK) || (kw === T.Continue && !l.continueOK)) l.emit(T.Identifier);
      else l.emit(kw);
    } else if (word[0] === '.') l.emit(T.Field);
    else if (word === 'true' || word === 'false') l.emit(T.Bool);
    else l.emit(T.Identifier);
    return lexInsideAction;
  }
}

function lexField(l: Lexer): StateFn {
  return lexFieldOrVariable(l, T.Field);
}

function lexVariable(l: Lexer): StateFn {
  if (l.atTerminator()) {
    l.emit(T.Variable);
    return lexInsideAction;
  }
  return lexFieldOrVariable(l, T.Variable);
}

function lexFieldOrVariable(l: Lexer, typ: T): StateFn {
  if (l.atTerminator()) {
    l.emit(typ === T.Variable ? T.Variable : T.Dot);
    return lexInsideAction;
  }
  let r: number;
  for (;;) {
    r = l.next();
    if (!isAlphaNumeric(r)) {
      l.backup();
      break;
    }
  }
  if (!l.atTerminator()) return l.errorf(`bad character ${goSharpU(r)}`);
  l.emit(typ);
  return lexInsideAction;
}

function lexChar(l: Lexer): StateFn {
  for (;;) {
    let r = l.next();
    if (r === 0x5c) {
      r = l.next();
      if (r !== EOF && r !== 0x0a) continue;
      return l.errorf('unterminated character constant');
    }
    if (r === EOF || r === 0x0a) return l.errorf('unterminated character constant');
    if (r === 0x27) break;
  }
  l.emit(T.CharConstant);
  return lexInsideAction;
}

function lexNumber(l: Lexer): StateFn {
  if (!l.scanNumber()) return l.errorf(`bad number syntax: ${quote(l.input.slice(l.start, l.pos))}`);
  const sign = l.peek();
  if (sign === 0x2b || sign === 0x2d) {
    if (!l.scanNumber() || l.input[l.pos - 1] !== 'i') return l.errorf(`bad number syntax: ${quote(l.input.slice(l.start, l.pos))}`);
    l.emit(T.Complex);
  } else l.emit(T.Number);
  return lexInsideAction;
}

function lexQuote(l: Lexer): StateFn {
  for (;;) {
    let r = l.next();
    if (r === 0x5c) {
      r = l.next();
      if (r !== EOF && r !== 0x0a) continue;
      return l.errorf('unterminated quoted string');
    }
    if (r === EOF || r === 0x0a) return l.errorf('unterminated quoted string');
    if (r === 0x22) break;
  }
  l.emit(T.String);
  return lexInsideAction;
}

function lexRawQuote(l: Lexer): StateFn {
  for (;;) {
    const r = l.next();
    if (r === EOF) return l.errorf('unterminated raw quoted string');
    if (r === 0x60) break;
  }
  l.emit(T.RawString);
  return lexInsideAction;
}

// ─────────────────────────────────────────────────────────────────────────────
// Nodes
// ─────────────────────────────────────────────────────────────────────────────

export interface NumberInfo {
  isInt: boolean;
  isUint: boolean;
  isFloat: boolean;
  isComplex: boolean;
  int64: bigint;
  uint64: bigint;
  float64: number;
  complex: GoComplex;
  text: string;
}

export type Node =
  | { type: 'list'; pos: number; nodes: Node[] }
  | { type: 'text'; pos: number; text: string }
  | { type: 'action'; pos: number; line: number; pipe: PipeNode }
  | PipeNode
  | CommandNode
  | { type: 'field'; pos: number; ident: string[] }
  | { type: 'variable'; pos: number; ident: string[] }
  | { type: 'chain'; pos: number; node: Node; field: string[] }
  | { type: 'identifier'; pos: number; ident: string }
  | { type: 'dot'; pos: number }
  | { type: 'nil'; pos: number }
  | { type: 'bool'; pos: number; value: boolean }
  | ({ type: 'number'; pos: number } & NumberInfo)
  | { type: 'string'; pos: number; quoted: string; text: string }
  | BranchNode
  | { type: 'template'; pos: number; line: number; name: string; pipe: PipeNode | null }
  | { type: 'break'; pos: number; line: number }
  | { type: 'continue'; pos: number; line: number }
  | { type: 'end'; pos: number }
  | { type: 'else'; pos: number; line: number };

export interface PipeNode {
  type: 'pipe';
  pos: number;
  line: number;
  isAssign: boolean;
  decl: { type: 'variable'; pos: number; ident: string[] }[];
  cmds: CommandNode[];
}

export interface CommandNode {
  type: 'command';
  pos: number;
  args: Node[];
}

export interface BranchNode {
  type: 'if' | 'range' | 'with';
  pos: number;
  line: number;
  pipe: PipeNode;
  list: Node & { type: 'list' };
  elseList: (Node & { type: 'list' }) | null;
}

type ListNode = Node & { type: 'list' };

/** A node printed as Go's Node.String() does. */
export function nodeString(n: Node): string {
  switch (n.type) {
    case 'list':
      return n.nodes.map(nodeString).join('');
    case 'text':
      return n.text;
    case 'action':
      return `{{${nodeString(n.pipe)}}}`;
    case 'pipe': {
      let s = '';
      if (n.decl.length > 0) {
        s += n.decl.map((d) => d.ident.join('.')).join(', ');
        s += n.isAssign ? ' = ' : ' := ';
      }
      return s + n.cmds.map(nodeString).join(' | ');
    }
    case 'command':
      return n.args.map((a) => (a.type === 'pipe' ? `(${nodeString(a)})` : nodeString(a))).join(' ');
    case 'field':
      return n.ident.map((i) => '.' + i).join('');
    case 'variable':
      return n.ident.join('.');
    case 'chain':
      return (n.node.type === 'pipe' ? `(${nodeString(n.node)})` : nodeString(n.node)) + n.field.map((f) => '.' + f).join('');
    case 'identifier':
      return n.ident;
    case 'dot':
      return '.';
    case 'nil':
      return 'nil';
    case 'bool':
      return n.value ? 'true' : 'false';
    case 'number':
      return n.text;
    case 'string':
      return n.quoted;
    case 'if':
    case 'range':
    case 'with': {
      let s = `{{${n.type} ${nodeString(n.pipe)}}}${nodeString(n.list)}`;
      if (n.elseList) s += `{{else}}${nodeString(n.elseList)}`;
      return s + '{{end}}';
    }
    case 'template':
      return `{{template ${quote(n.name)}${n.pipe ? ' ' + nodeString(n.pipe) : ''}}}`;
    case 'break':
      return '{{break}}';
    case 'continue':
      return '{{continue}}';
    case 'end':
      return '{{end}}';
    case 'else':
      return '{{else}}';
  }
}

// ─────────────────────────────────────────────────────────────────────────────
// Go number constants (parse.NumberNode)
// ─────────────────────────────────────────────────────────────────────────────

/** Go's strconv.ParseInt/ParseUint with base 0 (prefixes, underscores); null on failure. */
function parseGoIntegerLiteral(text: string): { value: bigint; range: boolean } | null {
  let s = text;
  let neg = false;
  if (s[0] === '+' || s[0] === '-') {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '') return null;
  let base = 10;
  let body = s;
  if (s[0] === '0' && s.length > 1) {
    const p = s[1]!.toLowerCase();
    if (p === 'x') { base = 16; body = s.slice(2); }
    else if (p === 'b') { base = 2; body = s.slice(2); }
    else if (p === 'o') { base = 8; body = s.slice(2); }
    else { base = 8; body = s.slice(1); }
  }
  // underscores: only between digits (or after the prefix)
  if (s.includes('_')) {
    if (!/^(0[xXbBoO])?_?[0-9a-fA-F]+(_[0-9a-fA-F]+)*$/.test(s) && !/^0?[0-7]+(_[0-7]+)*$/.test(s)) return null;
    if (base === 8 && s[1] !== 'o' && s[1] !== 'O' && body.startsWith('_')) body = body.slice(1);
    body = body.replace(/_/g, '');
  }
  if (body === '') return null;
  const re = base === 16 ? /^[0-9a-fA-F]+$/ : base === 8 ? /^[0-7]+$/ : base === 2 ? /^[01]+$/ : /^[0-9]+$/;
  if (!re.test(body)) return null;
  let v = 0n;
  const b = BigInt(base);
  for (const c of body) v = v * b + BigInt(parseInt(c, 16));
  return { value: neg ? -v : v, range: true };
}

/** Go's strconv.ParseFloat syntax (decimal and hex floats, underscores); null on bad syntax. */
function parseGoFloatLiteral(text: string): number | null {
  let s = text;
  let sign = 1;
  if (s[0] === '+' || s[0] === '-') {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  const lower = s.toLowerCase();
  if (lower === 'inf' || lower === 'infinity') return sign * Infinity;
  if (lower === 'nan') return NaN;
  if (/^0[xX]/.test(s)) {
    const m = /^0[xX]([0-9a-fA-F_]*)(?:\.([0-9a-fA-F_]*))?[pP]([+-]?[0-9_]+)$/.exec(s);
    if (!m) return null;
    const int = (m[1] ?? '').replace(/_/g, '');
    const frac = (m[2] ?? '').replace(/_/g, '');
    if (int === '' && frac === '') return null;
    let v = int ? parseInt(int, 16) : 0;
    for (let i = 0; i < frac.length; i++) v += parseInt(frac[i]!, 16) / 16 ** (i + 1);
    return sign * v * 2 ** parseInt(m[3]!.replace(/_/g, ''), 10);
  }
  if (!/^(\d(_?\d)*)?(\.(\d(_?\d)*)?)?([eE][+-]?\d(_?\d)*)?$/.test(s) || !/\d/.test(s.replace(/[eE].*$/, ''))) return null;
  return sign * Number(s.replace(/_/g, ''));
}

function newNumber(text: string, typ: T): NumberInfo {
  const n: NumberInfo = { isInt: false, isUint: false, isFloat: false, isComplex: false, int64: 0n, uint64: 0n, float64: 0, complex: new GoComplex(0, 0), text };
  if (typ === T.CharConstant) {
    let r;
    try {
      r = unquoteChar(text.slice(1), text[0]!);
    } catch {
      throw new Error('invalid syntax');
    }
    if (r.tail !== "'") throw new Error(`malformed character constant: ${text}`);
    n.int64 = BigInt(r.value);
    n.isInt = true;
    n.uint64 = BigInt(r.value);
    n.isUint = true;
    n.float64 = r.value;
    n.isFloat = true;
    return n;
  }
  if (typ === T.Complex) {
    const m = /^([+-]?[^+-]+(?:[eE][+-]?\d+)?)([+-].*)i$/.exec(text);
    const re = m ? parseGoFloatLiteral(m[1]!) : null;
    const im = m ? parseGoFloatLiteral(m[2]!) : null;
    if (re === null || im === null) throw new Error(`expected integer`);
    n.isComplex = true;
    n.complex = new GoComplex(re, im);
    simplifyComplex(n);
    return n;
  }
  if (text.endsWith('i')) {
    const f = parseGoFloatLiteral(text.slice(0, -1));
    if (f !== null) {
      n.isComplex = true;
      n.complex = new GoComplex(0, f);
      simplifyComplex(n);
      return n;
    }
  }
  const int = parseGoIntegerLiteral(text);
  if (int) {
    const v = int.value;
    if (v >= 0n && v < 1n << 64n) {
      n.isUint = true;
      n.uint64 = v;
    }
    if (v >= -(1n << 63n) && v < 1n << 63n) {
      n.isInt = true;
      n.int64 = v;
      if (v === 0n) {
        n.isUint = true;
        n.uint64 = 0n;
      }
    }
  }
  if (n.isInt) {
    n.isFloat = true;
    n.float64 = Number(n.int64);
  } else if (n.isUint) {
    n.isFloat = true;
    n.float64 = Number(n.uint64);
  } else {
    const f = parseGoFloatLiteral(text);
    if (f !== null) {
      if (!/[.eEpP]/.test(text)) throw new Error(`integer overflow: ${quote(text)}`);
      n.isFloat = true;
      n.float64 = f;
      if (Number.isFinite(f) && Number.isInteger(f) && Math.abs(f) < 2 ** 63) {
        n.isInt = true;
        n.int64 = BigInt(f);
      }
      if (Number.isFinite(f) && Number.isInteger(f) && f >= 0 && f < 2 ** 64) {
        n.isUint = true;
        n.uint64 = BigInt(f);
      }
    }
  }
  if (!n.isInt && !n.isUint && !n.isFloat) throw new Error(`illegal number syntax: ${quote(text)}`);
  return n;
}

function simplifyComplex(n: NumberInfo): void {
  if (n.complex.im === 0) {
    n.isFloat = true;
    n.float64 = n.complex.re;
    if (Number.isInteger(n.float64) && Math.abs(n.float64) < 2 ** 63) {
      n.isInt = true;
      n.int64 = BigInt(n.float64);
    }
    if (Number.isInteger(n.float64) && n.float64 >= 0 && n.float64 < 2 ** 64) {
      n.isUint = true;
      n.uint64 = BigInt(n.float64);
    }
  }
}

// ─────────────────────────────────────────────────────────────────────────────
// Parser
// ─────────────────────────────────────────────────────────────────────────────

export interface FuncSpec {
  /** parameter types: 'rv' receives the evaluated value itself (Go's reflect.Value), 'any' the dynamic value, 'string' a string */
  params: ('rv' | 'any' | 'string')[];
  variadic?: boolean;
  /** the implementation; throws FuncError for the function's error result */
  fn: (...args: any[]) => RV;
}

export class FuncError extends Error {}

export interface Tree {
  name: string;
  root: ListNode;
  text: string;
}

class Parser {
  private lex!: Lexer;
  private token: Item[] = [];
  private peekCount = 0;
  private vars: string[] = ['$'];
  private actionLine = 0;
  private rangeDepth = 0;
  root!: ListNode;

  /**
   * @param name the template this parser builds
   * @param parseName the top-level template's name, used in messages (Go's ParseName)
   */
  constructor(
    readonly name: string,
    readonly parseName: string,
    readonly text: string,
    private readonly funcs: Record<string, FuncSpec>,
    private readonly treeSet: Map<string, Tree>,
  ) {}

  errorf(msg: string): never {
    throw new TemplateError(`template: ${this.parseName}:${this.token[0]?.line ?? 1}: ${msg}`);
  }

  private next(): Item {
    if (this.peekCount > 0) this.peekCount--;
    else this.token[0] = this.lex.nextItem();
    return this.token[this.peekCount]!;
  }

  private backup(): void {
    this.peekCount++;
  }

  private backup2(t1: Item): void {
    this.token[1] = t1;
    this.peekCount = 2;
  }

  private backup3(t2: Item, t1: Item): void {
    this.token[1] = t1;
    this.token[2] = t2;
    this.peekCount = 3;
  }

  private peek(): Item {
    if (this.peekCount > 0) return this.token[this.peekCount - 1]!;
    this.peekCount = 1;
    this.token[0] = this.lex.nextItem();
    return this.token[0];
  }

  private nextNonSpace(): Item {
    let t: Item;
    for (;;) {
      t = this.next();
      if (t.typ !== T.Space) break;
    }
    return t;
  }

  private peekNonSpace(): Item {
    const t = this.nextNonSpace();
    this.backup();
    return t;
  }

  private expect(expected: T, context: string): Item {
    const t = this.nextNonSpace();
    if (t.typ !== expected) this.unexpected(t, context);
    return t;
  }

  private expectOneOf(e1: T, e2: T, context: string): Item {
    const t = this.nextNonSpace();
    if (t.typ !== e1 && t.typ !== e2) this.unexpected(t, context);
    return t;
  }

  private unexpected(t: Item, context: string): never {
    if (t.typ === T.Error) {
      let extra = '';
      if (this.actionLine !== 0 && this.actionLine !== t.line) {
        extra = ` in action started at ${this.parseName}:${this.actionLine}`;
        if (t.val.endsWith(' action')) extra = extra.slice(' in action'.length);
      }
      this.errorf(`${itemString(t)}${extra}`);
    }
    this.errorf(`unexpected ${itemString(t)} in ${context}`);
  }

  private hasFunction(name: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.funcs, name);
  }

  parseTop(lex?: Lexer): void {
    this.lex = lex ?? new Lexer(this.text, !this.hasFunction('break'), !this.hasFunction('continue'));
    this.root = { type: 'list', pos: this.peek().pos, nodes: [] };
    while (this.peek().typ !== T.EOF) {
      if (this.peek().typ === T.LeftDelim) {
        const delim = this.next();
        if (this.nextNonSpace().typ === T.Define) {
          const sub = new Parser('definition', this.parseName, this.text, this.funcs, this.treeSet);
          sub.lex = this.lex;
          sub.parseDefinition();
          continue;
        }
        this.backup2(delim);
      }
      const n = this.textOrAction();
      if (n.type === 'end' || n.type === 'else') this.errorf(`unexpected ${nodeString(n)}`);
      this.root.nodes.push(n);
    }
    this.add(this.name);
  }

  private add(name: string): void {
    const tree = this.treeSet.get(name);
    if (!tree || isEmptyTree(tree.root)) {
      this.treeSet.set(name, { name, root: this.root, text: this.text });
      return;
    }
    if (!isEmptyTree(this.root)) this.errorf(`template: multiple definition of template ${quote(name)}`);
  }

  private parseDefinition(): void {
    const context = 'define clause';
    const nameTok = this.expectOneOf(T.String, T.RawString, context);
    let name: string;
    try {
      name = unquote(nameTok.val);
    } catch {
      this.errorf('invalid syntax');
    }
    this.expect(T.RightDelim, context);
    const [list, end] = this.itemList();
    this.root = list;
    if (end.type !== 'end') this.errorf(`unexpected ${nodeString(end)} in ${context}`);
    this.add(name);
  }

  private itemList(): [ListNode, Node] {
    const list: ListNode = { type: 'list', pos: this.peekNonSpace().pos, nodes: [] };
    while (this.peekNonSpace().typ !== T.EOF) {
      const n = this.textOrAction();
      if (n.type === 'end' || n.type === 'else') return [list, n];
      list.nodes.push(n);
    }
    this.errorf('unexpected EOF');
  }

  private textOrAction(): Node {
    const t = this.nextNonSpace();
    switch (t.typ) {
      case T.Text:
        return { type: 'text', pos: t.pos, text: t.val };
      case T.LeftDelim: {
        this.actionLine = t.line;
        try {
          return this.action();
        } finally {
          this.actionLine = 0;
        }
      }
      default:
        this.unexpected(t, 'input');
    }
  }

  private action(): Node {
    const t = this.nextNonSpace();
    switch (t.typ) {
      case T.Block:
        return this.blockControl();
      case T.Break:
        return this.breakControl(t.pos, t.line);
      case T.Continue:
        return this.continueControl(t.pos, t.line);
      case T.Else:
        return this.elseControl();
      case T.End:
        return this.endControl();
      case T.If:
        return this.ifControl();
      case T.Range:
        return this.rangeControl();
      case T.Template:
        return this.templateControl();
      case T.With:
        return this.withControl();
    }
    this.backup();
    const tok = this.peek();
    return { type: 'action', pos: tok.pos, line: tok.line, pipe: this.pipeline('command', T.RightDelim) };
  }

  private breakControl(pos: number, line: number): Node {
    const t = this.nextNonSpace();
    if (t.typ !== T.RightDelim) this.unexpected(t, '{{break}}');
    if (this.rangeDepth === 0) this.errorf('{{break}} outside {{range}}');
    return { type: 'break', pos, line };
  }

  private continueControl(pos: number, line: number): Node {
    const t = this.nextNonSpace();
    if (t.typ !== T.RightDelim) this.unexpected(t, '{{continue}}');
    if (this.rangeDepth === 0) this.errorf('{{continue}} outside {{range}}');
    return { type: 'continue', pos, line };
  }

  private pipeline(context: string, end: T): PipeNode {
    const tok = this.peekNonSpace();
    const pipe: PipeNode = { type: 'pipe', pos: tok.pos, line: tok.line, isAssign: false, decl: [], cmds: [] };
    decls: for (;;) {
      const v = this.peekNonSpace();
      if (v.typ === T.Variable) {
        this.next();
        const tokenAfterVariable = this.peek();
        const next = this.peekNonSpace();
        if (next.typ === T.Assign || next.typ === T.Declare) {
          pipe.isAssign = next.typ === T.Assign;
          this.nextNonSpace();
          pipe.decl.push({ type: 'variable', pos: v.pos, ident: v.val.split('.') });
          this.vars.push(v.val);
        } else if (next.typ === T.Char && next.val === ',') {
          this.nextNonSpace();
          pipe.decl.push({ type: 'variable', pos: v.pos, ident: v.val.split('.') });
          this.vars.push(v.val);
          if (context === 'range' && pipe.decl.length < 2) {
            const p = this.peekNonSpace().typ;
            if (p === T.Variable || p === T.RightDelim || p === T.RightParen) continue decls;
            this.errorf('range can only initialize variables');
          }
          this.errorf(`too many declarations in ${context}`);
        } else if (tokenAfterVariable.typ === T.Space) {
          this.backup3(v, tokenAfterVariable);
        } else {
          this.backup2(v);
        }
      }
      break;
    }
    for (;;) {
      const t = this.nextNonSpace();
      switch (t.typ) {
        case end:
          this.checkPipeline(pipe, context);
          return pipe;
        case T.Bool:
        case T.CharConstant:
        case T.Complex:
        case T.Dot:
        case T.Field:
        case T.Identifier:
        case T.Number:
        case T.Nil:
        case T.RawString:
        case T.String:
        case T.Variable:
        case T.LeftParen:
          this.backup();
          pipe.cmds.push(this.command());
          break;
        default:
          this.unexpected(t, context);
      }
    }
  }

  private checkPipeline(pipe: PipeNode, context: string): void {
    if (pipe.cmds.length === 0) this.errorf(`missing value for ${context}`);
    pipe.cmds.slice(1).forEach((c, i) => {
      const t = c.args[0]!.type;
      if (t === 'bool' || t === 'dot' || t === 'nil' || t === 'number' || t === 'string') this.errorf(`non executable command in pipeline stage ${i + 2}`);
    });
  }

  private parseControl(context: 'if' | 'range' | 'with'): BranchNode {
    const varsLen = this.vars.length;
    try {
      const pipe = this.pipeline(context, T.RightDelim);
      if (context === 'range') this.rangeDepth++;
      let [list, next] = this.itemList();
      if (context === 'range') this.rangeDepth--;
      let elseList: ListNode | null = null;
      if (next.type === 'else') {
        if (context === 'if' && this.peek().typ === T.If) {
          this.next();
          elseList = { type: 'list', pos: next.pos, nodes: [this.ifControl()] };
        } else if (context === 'with' && this.peek().typ === T.With) {
          this.next();
          elseList = { type: 'list', pos: next.pos, nodes: [this.withControl()] };
        } else {
          [elseList, next] = this.itemList();
          if (next.type !== 'end') this.errorf(`expected end; found ${nodeString(next)}`);
        }
      }
      return { type: context, pos: pipe.pos, line: pipe.line, pipe, list, elseList };
    } finally {
      this.vars.length = varsLen;
    }
  }

  private ifControl(): Node {
    return this.parseControl('if');
  }

  private rangeControl(): Node {
    return this.parseControl('range');
  }

  private withControl(): Node {
    return this.parseControl('with');
  }

  private endControl(): Node {
    return { type: 'end', pos: this.expect(T.RightDelim, 'end').pos };
  }

  private elseControl(): Node {
    const p = this.peekNonSpace();
    if (p.typ === T.If || p.typ === T.With) return { type: 'else', pos: p.pos, line: p.line };
    const t = this.expect(T.RightDelim, 'else');
    return { type: 'else', pos: t.pos, line: t.line };
  }

  private blockControl(): Node {
    const context = 'block clause';
    const t = this.nextNonSpace();
    const name = this.parseTemplateName(t, context);
    const pipe = this.pipeline(context, T.RightDelim);
    const sub = new Parser(name, this.parseName, this.text, this.funcs, this.treeSet);
    sub.lex = this.lex;
    const [list, end] = sub.itemList();
    sub.root = list;
    if (end.type !== 'end') this.errorf(`unexpected ${nodeString(end)} in ${context}`);
    sub.add(name);
    return { type: 'template', pos: t.pos, line: t.line, name, pipe };
  }

  private templateControl(): Node {
    const context = 'template clause';
    const t = this.nextNonSpace();
    const name = this.parseTemplateName(t, context);
    let pipe: PipeNode | null = null;
    if (this.nextNonSpace().typ !== T.RightDelim) {
      this.backup();
      pipe = this.pipeline(context, T.RightDelim);
    }
    return { type: 'template', pos: t.pos, line: t.line, name, pipe };
  }

  private parseTemplateName(t: Item, context: string): string {
    if (t.typ === T.String || t.typ === T.RawString) {
      try {
        return unquote(t.val);
      } catch {
        this.errorf('invalid syntax');
      }
    }
    this.unexpected(t, context);
  }

  private command(): CommandNode {
    const cmd: CommandNode = { type: 'command', pos: this.peekNonSpace().pos, args: [] };
    for (;;) {
      this.peekNonSpace();
      const operand = this.operand();
      if (operand) cmd.args.push(operand);
      const t = this.next();
      if (t.typ === T.Space) continue;
      if (t.typ === T.RightDelim || t.typ === T.RightParen) this.backup();
      else if (t.typ !== T.Pipe) this.unexpected(t, 'operand');
      break;
    }
    if (cmd.args.length === 0) this.errorf('empty command');
    return cmd;
  }

  private operand(): Node | null {
    let node = this.term();
    if (!node) return null;
    if (this.peek().typ === T.Field) {
      const chainPos = this.peek().pos;
      const fields: string[] = [];
      while (this.peek().typ === T.Field) fields.push(this.next().val.slice(1));
      const chain: Node = { type: 'chain', pos: chainPos, node, field: fields };
      switch (node.type) {
        case 'field':
          node = { type: 'field', pos: chainPos, ident: nodeString(chain).slice(1).split('.') };
          break;
        case 'variable':
          node = { type: 'variable', pos: chainPos, ident: nodeString(chain).split('.') };
          break;
        case 'bool':
        case 'string':
        case 'number':
        case 'nil':
        case 'dot':
          this.errorf(`unexpected . after term ${quote(nodeString(node))}`);
        default:
          node = chain;
      }
    }
    return node;
  }

  private term(): Node | null {
    const t = this.nextNonSpace();
    switch (t.typ) {
      case T.Identifier:
        if (!this.hasFunction(t.val)) this.errorf(`function ${quote(t.val)} not defined`);
        return { type: 'identifier', pos: t.pos, ident: t.val };
      case T.Dot:
        return { type: 'dot', pos: t.pos };
      case T.Nil:
        return { type: 'nil', pos: t.pos };
      case T.Variable:
        return this.useVar(t.pos, t.val);
      case T.Field:
        return { type: 'field', pos: t.pos, ident: t.val.slice(1).split('.') };
      case T.Bool:
        return { type: 'bool', pos: t.pos, value: t.val === 'true' };
      case T.CharConstant:
      case T.Complex:
      case T.Number: {
        let info: NumberInfo;
        try {
          info = newNumber(t.val, t.typ);
        } catch (e) {
          this.errorf((e as Error).message);
        }
        return { type: 'number', pos: t.pos, ...info };
      }
      case T.LeftParen:
        return this.pipeline('parenthesized pipeline', T.RightParen);
      case T.String:
      case T.RawString: {
        let s: string;
        try {
          s = unquote(t.val);
        } catch {
          this.errorf('invalid syntax');
        }
        return { type: 'string', pos: t.pos, quoted: t.val, text: s };
      }
    }
    this.backup();
    return null;
  }

  private useVar(pos: number, name: string): Node {
    const ident = name.split('.');
    if (this.vars.includes(ident[0]!)) return { type: 'variable', pos, ident };
    this.errorf(`undefined variable ${quote(ident[0]!)}`);
  }
}

function isEmptyTree(n: Node | null | undefined): boolean {
  if (!n) return true;
  switch (n.type) {
    case 'list':
      return n.nodes.every(isEmptyTree);
    case 'text':
      return n.text.trim() === '';
    default:
      return false;
  }
}

// ─────────────────────────────────────────────────────────────────────────────
// Values (a small reflect)
// ─────────────────────────────────────────────────────────────────────────────

/**
 * An evaluated value: `t` is its static Go type ('interface' for interface{} values taken out of
 * maps and slices, whose dynamic value is `v`, null meaning a nil interface); `t` undefined is
 * the invalid reflect.Value (a missing map key, an untyped nil).
 */
export interface RV {
  t: string | undefined;
  v: unknown;
}

export const INVALID: RV = { t: undefined, v: undefined };

/** reflect.ValueOf(x): the concrete value (nil → invalid). */
export function valueOf(x: unknown): RV {
  if (x === null || x === undefined) return INVALID;
  return { t: goTypeString(x), v: x };
}

function ifaceOf(x: unknown): RV {
  return { t: 'interface', v: x === undefined ? null : x };
}

function kindOf(rv: RV): string {
  if (rv.t === undefined) return 'invalid';
  if (rv.t === 'interface') return 'interface';
  if (rv.t === '[]interface {}') return 'slice';
  if (rv.t === 'map[string]interface {}') return 'map';
  return rv.t;
}

const INT_KINDS = new Set(['int', 'int8', 'int16', 'int32', 'int64']);
const UINT_KINDS = new Set(['uint', 'uint8', 'uint16', 'uint32', 'uint64', 'uintptr']);

/** reflect's `indirect`: through interfaces; returns [value, isNil]. */
function indirect(rv: RV): [RV, boolean] {
  if (rv.t === 'interface') {
    if (rv.v === null) return [rv, true];
    return [valueOf(rv.v), false];
  }
  return [rv, false];
}

function indirectInterface(rv: RV): RV {
  if (rv.t !== 'interface') return rv;
  return rv.v === null ? INVALID : valueOf(rv.v);
}

/** The Go value an `interface{}` parameter receives. */
function toAny(rv: RV): unknown {
  if (rv.t === undefined) return null;
  return rv.v;
}

function lenOf(rv: RV): number {
  const k = kindOf(rv);
  if (k === 'string') return utf8Len(rv.v as string);
  if (k === 'slice') return (rv.v as unknown[]).length;
  if (k === 'map') return Object.keys(rv.v as object).length;
  return 0;
}

function isTrue(rv: RV): [boolean, boolean] {
  switch (kindOf(rv)) {
    case 'invalid':
      return [false, true];
    case 'string':
    case 'slice':
    case 'map':
      return [lenOf(rv) > 0, true];
    case 'bool':
      return [rv.v as boolean, true];
    case 'complex128': {
      const c = rv.v as GoComplex;
      return [c.re !== 0 || c.im !== 0, true];
    }
    case 'interface':
      return [rv.v !== null, true];
    case 'float64':
      return [(rv.v as number) !== 0, true];
  }
  if (rv.v instanceof GoInt) return [rv.v.value !== 0n, true];
  return [false, false];
}

function typeStringOf(rv: RV): string {
  return rv.t === 'interface' ? 'interface {}' : (rv.t ?? '<nil>');
}

/** fmt's %v of a reflect.Value (for messages). */
function rvString(rv: RV): string {
  if (rv.t === undefined) return '<invalid reflect.Value>';
  return sprint(rv.v ?? null);
}

/** Bytes of a Go string as a JS string (for index/slice on strings). */
function stringBytes(s: string): Buffer {
  return Buffer.from(s, 'utf8');
}

// ─────────────────────────────────────────────────────────────────────────────
// Builtin functions
// ─────────────────────────────────────────────────────────────────────────────

const errBadComparisonType = 'invalid type for comparison';
const errBadComparison = 'incompatible types for comparison';
const errNoComparison = 'missing argument for comparison';

type BasicKind = 'invalid' | 'bool' | 'complex' | 'int' | 'float' | 'string' | 'uint';

function basicKind(rv: RV): [BasicKind, boolean] {
  const k = kindOf(rv);
  if (k === 'bool') return ['bool', true];
  if (INT_KINDS.has(k)) return ['int', true];
  if (UINT_KINDS.has(k)) return ['uint', true];
  if (k === 'float64') return ['float', true];
  if (k === 'complex128') return ['complex', true];
  if (k === 'string') return ['string', true];
  return ['invalid', false];
}

function intVal(rv: RV): bigint {
  return (rv.v as GoInt).value;
}

function eqFn(arg1: RV, ...arg2: RV[]): RV {
  arg1 = indirectInterface(arg1);
  if (arg2.length === 0) throw new FuncError(errNoComparison);
  const [k1] = basicKind(arg1);
  for (let arg of arg2) {
    arg = indirectInterface(arg);
    const [k2] = basicKind(arg);
    let truth = false;
    if (k1 !== k2) {
      if (k1 === 'int' && k2 === 'uint') truth = intVal(arg1) >= 0n && intVal(arg1) === intVal(arg);
      else if (k1 === 'uint' && k2 === 'int') truth = intVal(arg) >= 0n && intVal(arg1) === intVal(arg);
      else if (arg1.t !== undefined && arg.t !== undefined) throw new FuncError(errBadComparison);
    } else {
      switch (k1) {
        case 'bool':
        case 'float':
        case 'string':
          truth = arg1.v === arg.v;
          break;
        case 'int':
        case 'uint':
          truth = intVal(arg1) === intVal(arg);
          break;
        case 'complex': {
          const a = arg1.v as GoComplex;
          const b = arg.v as GoComplex;
          truth = a.re === b.re && a.im === b.im;
          break;
        }
        default: {
          const k1x = kindOf(arg1);
          const k2x = kindOf(arg);
          if (k1x !== k2x && k1x !== 'invalid' && k2x !== 'invalid') {
            throw new FuncError(`non-comparable types ${sprintf('%s', toAny(arg1))}: ${typeStringOf(arg1)}, ${typeStringOf(arg)}: ${rvString(arg)}`);
          }
          const n1 = arg1.t === undefined;
          const n2 = arg.t === undefined;
          if (n1 || n2) truth = n1 === n2;
          else throw new FuncError(`non-comparable type ${sprintf('%s', toAny(arg))}: ${typeStringOf(arg)}`);
        }
      }
    }
    if (truth) return valueOf(true);
  }
  return valueOf(false);
}

function ltBool(arg1: RV, arg2: RV): boolean {
  arg1 = indirectInterface(arg1);
  const [k1, ok1] = basicKind(arg1);
  if (!ok1) throw new FuncError(errBadComparisonType);
  arg2 = indirectInterface(arg2);
  const [k2, ok2] = basicKind(arg2);
  if (!ok2) throw new FuncError(errBadComparisonType);
  if (k1 !== k2) {
    if (k1 === 'int' && k2 === 'uint') return intVal(arg1) < 0n || intVal(arg1) < intVal(arg2);
    if (k1 === 'uint' && k2 === 'int') return intVal(arg2) >= 0n && intVal(arg1) < intVal(arg2);
    throw new FuncError(errBadComparison);
  }
  switch (k1) {
    case 'bool':
    case 'complex':
      throw new FuncError(errBadComparisonType);
    case 'float':
      return (arg1.v as number) < (arg2.v as number);
    case 'string':
      return compareStringsBytes(arg1.v as string, arg2.v as string) < 0;
    default:
      return intVal(arg1) < intVal(arg2);
  }
}

function compareStringsBytes(a: string, b: string): number {
  return compareGoStrings(a, b);
}

function leBool(a: RV, b: RV): boolean {
  if (ltBool(a, b)) return true;
  return eqFn(a, b).v as boolean;
}

function indexArg(index: RV, cap: number): number {
  let x: bigint;
  const k = kindOf(index);
  if (INT_KINDS.has(k) || UINT_KINDS.has(k)) x = intVal(index);
  else if (k === 'invalid') throw new FuncError('cannot index slice/array with nil');
  else throw new FuncError(`cannot index slice/array with type ${typeStringOf(index)}`);
  if (x < 0n || x > BigInt(cap)) throw new FuncError(`index out of range: ${x}`);
  return Number(x);
}

function indexFn(item: RV, ...indexes: RV[]): RV {
  item = indirectInterface(item);
  if (item.t === undefined) throw new FuncError('index of untyped nil');
  for (let index of indexes) {
    index = indirectInterface(index);
    let isNil: boolean;
    [item, isNil] = indirect(item);
    if (isNil) throw new FuncError('index of nil pointer');
    const k = kindOf(item);
    if (k === 'slice' || k === 'string') {
      const len = lenOf(item);
      const x = indexArg(index, len);
      if (x >= len) throw new FuncError(k === 'string' ? 'reflect: string index out of range' : 'reflect: slice index out of range');
      if (k === 'string') item = valueOf(new GoInt(BigInt(stringBytes(item.v as string)[x]!), 'uint8'));
      else item = ifaceOf((item.v as unknown[])[x]);
    } else if (k === 'map') {
      // prepareArg(index, string)
      let key: string;
      if (index.t === undefined) throw new FuncError('value is nil; should be of type string');
      if (index.t === 'string') key = index.v as string;
      else throw new FuncError(`value has type ${typeStringOf(index)}; should be string`);
      const m = item.v as Record<string, unknown>;
      item = Object.prototype.hasOwnProperty.call(m, key) ? ifaceOf(m[key]) : ifaceOf(null);
    } else {
      throw new FuncError(`can't index item of type ${typeStringOf(item)}`);
    }
  }
  return item;
}

function sliceFn(item: RV, ...indexes: RV[]): RV {
  item = indirectInterface(item);
  if (item.t === undefined) throw new FuncError('slice of untyped nil');
  if (indexes.length > 3) throw new FuncError(`too many slice indexes: ${indexes.length}`);
  const k = kindOf(item);
  let cap: number;
  if (k === 'string') {
    if (indexes.length === 3) throw new FuncError('cannot 3-index slice a string');
    cap = lenOf(item);
  } else if (k === 'slice') cap = lenOf(item);
  else throw new FuncError(`can't slice item of type ${typeStringOf(item)}`);
  const idx = [0, lenOf(item), 0];
  indexes.forEach((index, i) => {
    idx[i] = indexArg(indirectInterface(index), cap);
  });
  if (idx[0]! > idx[1]!) throw new FuncError(`invalid slice index: ${idx[0]} > ${idx[1]}`);
  if (indexes.length === 3 && idx[1]! > idx[2]!) throw new FuncError(`invalid slice index: ${idx[1]} > ${idx[2]}`);
  if (k === 'string') return valueOf(stringBytes(item.v as string).subarray(idx[0], idx[1]).toString('utf8'));
  return { t: '[]interface {}', v: (item.v as unknown[]).slice(idx[0], idx[1]) };
}

function lengthFn(item: RV): RV {
  const [v, isNil] = indirect(item);
  if (isNil) throw new FuncError('len of nil pointer');
  const k = kindOf(v);
  if (k === 'slice' || k === 'map' || k === 'string') return valueOf(new GoInt(BigInt(lenOf(v)), 'int'));
  if (k === 'invalid') throw new FuncError('reflect: call of reflect.Value.Type on zero Value');
  throw new FuncError(`len of type ${typeStringOf(v)}`);
}

/** The text fmt.Sprint gives for html/js/urlquery arguments (printableValue first). */
function evalArgs(args: unknown[]): string {
  if (args.length === 1 && typeof args[0] === 'string') return args[0];
  return sprint(...args.map((a) => (a === null || a === undefined ? '<no value>' : a)));
}

export function htmlEscapeString(s: string): string {
  if (!/[<>&'"\0]/.test(s)) return s;
  let out = '';
  for (const c of s) {
    switch (c) {
      case '"': out += '&#34;'; break;
      case "'": out += '&#39;'; break;
      case '&': out += '&amp;'; break;
      case '<': out += '&lt;'; break;
      case '>': out += '&gt;'; break;
      case '\0': out += '\uFFFD'; break;
      default: out += c;
    }
  }
  return out;
}

export function jsEscapeString(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c < 0x80) {
      if (!(c < 0x20 || '\\\'"<>&='.includes(ch))) {
        out += ch;
        continue;
      }
      switch (ch) {
        case '\\': out += '\\\\'; break;
        case "'": out += "\\'"; break;
        case '"': out += '\\"'; break;
        case '<': out += '\\u003C'; break;
        case '>': out += '\\u003E'; break;
        case '&': out += '\\u0026'; break;
        case '=': out += '\\u003D'; break;
        default: out += '\\u00' + c.toString(16).toUpperCase().padStart(2, '0');
      }
      continue;
    }
    if (isPrintRune(c)) out += ch;
    else out += '\\u' + c.toString(16).toUpperCase().padStart(4, '0');
  }
  return out;
}

/** url.QueryEscape. */
export function queryEscape(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

function truthFn(rv: RV): boolean {
  return isTrue(indirectInterface(rv))[0];
}

/** Go's text/template builtins. */
export const BUILTINS: Record<string, FuncSpec> = {
  and: { params: ['rv', 'rv'], variadic: true, fn: () => INVALID },
  or: { params: ['rv', 'rv'], variadic: true, fn: () => INVALID },
  call: {
    params: ['rv', 'rv'],
    variadic: true,
    fn: (f: RV & { callee?: string }) => {
      const fn = indirectInterface(f);
      if (fn.t === undefined) throw new FuncError('call of nil');
      throw new FuncError(`non-function ${f.callee ?? ''} of type ${typeStringOf(fn)}`);
    },
  },
  html: { params: ['any'], variadic: true, fn: (...a: unknown[]) => valueOf(htmlEscapeString(evalArgs(a))) },
  index: { params: ['rv', 'rv'], variadic: true, fn: indexFn },
  slice: { params: ['rv', 'rv'], variadic: true, fn: sliceFn },
  js: { params: ['any'], variadic: true, fn: (...a: unknown[]) => valueOf(jsEscapeString(evalArgs(a))) },
  len: { params: ['rv'], fn: lengthFn },
  not: { params: ['rv'], fn: (a: RV) => valueOf(!truthFn(a)) },
  print: { params: ['any'], variadic: true, fn: (...a: unknown[]) => valueOf(sprint(...a)) },
  printf: { params: ['string', 'any'], variadic: true, fn: (f: string, ...a: unknown[]) => valueOf(sprintf(f, ...a)) },
  println: { params: ['any'], variadic: true, fn: (...a: unknown[]) => valueOf(sprintln(...a)) },
  urlquery: { params: ['any'], variadic: true, fn: (...a: unknown[]) => valueOf(queryEscape(evalArgs(a))) },
  eq: { params: ['rv', 'rv'], variadic: true, fn: eqFn },
  ge: { params: ['rv', 'rv'], fn: (a: RV, b: RV) => valueOf(!ltBool(a, b)) },
  gt: { params: ['rv', 'rv'], fn: (a: RV, b: RV) => valueOf(!leBool(a, b)) },
  le: { params: ['rv', 'rv'], fn: (a: RV, b: RV) => valueOf(leBool(a, b)) },
  lt: { params: ['rv', 'rv'], fn: (a: RV, b: RV) => valueOf(ltBool(a, b)) },
  ne: { params: ['rv', 'rv'], fn: (a: RV, b: RV) => valueOf(!(eqFn(a, b).v as boolean)) },
};

/** Go's base64.StdEncoding.DecodeString, with its CorruptInputError offsets. */
export function base64DecodeStd(src: string): Buffer {
  const bytes = Buffer.from(src, 'latin1').length === src.length ? Buffer.from(src, 'latin1') : Buffer.from(src, 'utf8');
  const map = (c: number): number => {
    if (c >= 65 && c <= 90) return c - 65;
    if (c >= 97 && c <= 122) return c - 71;
    if (c >= 48 && c <= 57) return c + 4;
    if (c === 43) return 62;
    if (c === 47) return 63;
    return -1;
  };
  const out: number[] = [];
  const corrupt = (off: number) => new FuncError(`illegal base64 data at input byte ${off}`);
  let si = 0;
  const n = bytes.length;
  while (si < n) {
    const dbuf = [0, 0, 0, 0];
    let dlen = 4;
    let j = 0;
    for (j = 0; j < 4; j++) {
      if (si === n) {
        if (j === 0) return Buffer.from(out);
        throw corrupt(si - j);
      }
      const c = bytes[si]!;
      si++;
      const d = map(c);
      if (d >= 0) {
        dbuf[j] = d;
        continue;
      }
      if (c === 10 || c === 13) {
        j--;
        continue;
      }
      if (c !== 61) throw corrupt(si - 1);
      // padding
      if (j === 0 || j === 1) throw corrupt(si - 1);
      if (j === 2) {
        while (si < n && (bytes[si] === 10 || bytes[si] === 13)) si++;
        if (si === n) throw corrupt(n);
        if (bytes[si] !== 61) throw corrupt(si - 1);
        si++;
      }
      while (si < n && (bytes[si] === 10 || bytes[si] === 13)) si++;
      if (si < n) throw corrupt(si);
      dlen = j;
      break;
    }
    const val = (dbuf[0]! << 18) | (dbuf[1]! << 12) | (dbuf[2]! << 6) | dbuf[3]!;
    const b = [(val >> 16) & 0xff, (val >> 8) & 0xff, val & 0xff];
    if (dlen === 4) out.push(b[0]!, b[1]!, b[2]!);
    else if (dlen === 3) out.push(b[0]!, b[1]!);
    else if (dlen === 2) out.push(b[0]!);
    if (dlen < 4) return Buffer.from(out);
  }
  return Buffer.from(out);
}

/** kubectl's extra template functions: exists and base64decode. */
export const KUBECTL_FUNCS: Record<string, FuncSpec> = {
  exists: {
    params: ['any', 'any'],
    variadic: true,
    fn: (item: unknown, ...indices: unknown[]) => {
      let v: RV = valueOf(item);
      for (const i of indices) {
        const index = valueOf(i);
        let isNil: boolean;
        [v, isNil] = indirect(v);
        if (isNil) return valueOf(false);
        const k = kindOf(v);
        if (k === 'slice' || k === 'string') {
          const ik = kindOf(index);
          if (!(INT_KINDS.has(ik) || UINT_KINDS.has(ik))) return valueOf(false);
          const x = intVal(index);
          if (x < 0n || x >= BigInt(lenOf(v))) return valueOf(false);
          v = k === 'string' ? valueOf(new GoInt(BigInt(stringBytes(v.v as string)[Number(x)]!), 'uint8')) : ifaceOf((v.v as unknown[])[Number(x)]);
        } else if (k === 'map') {
          let key = '';
          if (index.t !== undefined) {
            if (index.t !== 'string') return valueOf(false);
            key = index.v as string;
          }
          const m = v.v as Record<string, unknown>;
          v = Object.prototype.hasOwnProperty.call(m, key) ? ifaceOf(m[key]) : ifaceOf(null);
        } else return valueOf(false);
      }
      if (v.t === undefined) return valueOf(true);
      const [, isNil] = indirect(v);
      return valueOf(!isNil);
    },
  },
  base64decode: {
    params: ['string'],
    fn: (s: string) => {
      try {
        return valueOf(base64DecodeStd(s).toString('utf8'));
      } catch (e) {
        throw new FuncError(`base64 decode failed: ${(e as Error).message}`);
      }
    },
  },
};

// ─────────────────────────────────────────────────────────────────────────────
// Execution
// ─────────────────────────────────────────────────────────────────────────────

export type MissingKey = 'default' | 'invalid' | 'zero' | 'error';

class BreakSignal {}
class ContinueSignal {}
const BREAK = new BreakSignal();
const CONTINUE = new ContinueSignal();
const MISSING: RV = { t: '<missing>', v: undefined };
const MAX_EXEC_DEPTH = 100000;

interface Variable {
  name: string;
  value: RV;
}

class State {
  node: Node | null = null;
  vars: Variable[];
  out: string[] = [];
  depth = 0;

  constructor(
    public tmpl: GoTemplate,
    public tree: Tree,
    dot: RV,
    private readonly missingKey: MissingKey,
  ) {
    this.vars = [{ name: '$', value: dot }];
  }

  at(n: Node): void {
    this.node = n;
  }

  errorf(msg: string): never {
    const name = this.tree.name;
    if (!this.node) throw new TemplateError(`template: ${name}: ${msg}`);
    const [location, context] = this.errorContext(this.node);
    throw new TemplateError(`template: ${location}: executing ${quote(name)} at <${context}>: ${msg}`);
  }

  private errorContext(n: Node): [string, string] {
    const text = this.tree.text.slice(0, n.pos);
    const nl = text.lastIndexOf('\n');
    const col = utf8Len(nl < 0 ? text : text.slice(nl + 1));
    const line = 1 + countNewlines(text);
    return [`${this.tmpl.name}:${line}:${col}`, nodeString(n)];
  }

  mark(): number {
    return this.vars.length;
  }

  pop(mark: number): void {
    this.vars.length = mark;
  }

  push(name: string, value: RV): void {
    this.vars.push({ name, value });
  }

  setVar(name: string, value: RV): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i]!.name === name) {
        this.vars[i]!.value = value;
        return;
      }
    }
    this.errorf(`undefined variable: ${name}`);
  }

  setTopVar(n: number, value: RV): void {
    this.vars[this.vars.length - n]!.value = value;
  }

  varValue(name: string): RV {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i]!.name === name) return this.vars[i]!.value;
    this.errorf(`undefined variable: ${name}`);
  }

  walk(dot: RV, node: Node): void {
    this.at(node);
    switch (node.type) {
      case 'action': {
        const val = this.evalPipeline(dot, node.pipe);
        if (node.pipe.decl.length === 0) this.printValue(node, val);
        return;
      }
      case 'break':
        throw BREAK;
      case 'continue':
        throw CONTINUE;
      case 'if':
      case 'with':
        return this.walkIfOrWith(node.type, dot, node);
      case 'list':
        for (const n of node.nodes) this.walk(dot, n);
        return;
      case 'range':
        return this.walkRange(dot, node);
      case 'template':
        return this.walkTemplate(dot, node);
      case 'text':
        this.out.push(node.text);
        return;
    }
    this.errorf(`unknown node: ${nodeString(node)}`);
  }

  walkIfOrWith(typ: 'if' | 'with', dot: RV, node: BranchNode): void {
    const mark = this.mark();
    try {
      const val = this.evalPipeline(dot, node.pipe);
      const [truth, ok] = isTrue(indirectInterface(val));
      if (!ok) this.errorf(`if/with can't use ${rvString(val)}`);
      if (truth) this.walk(typ === 'with' ? val : dot, node.list);
      else if (node.elseList) this.walk(dot, node.elseList);
    } finally {
      this.pop(mark);
    }
  }

  walkRange(dot: RV, r: BranchNode): void {
    this.at(r);
    const outer = this.mark();
    try {
      const [val] = indirect(this.evalPipeline(dot, r.pipe));
      const mark = this.mark();
      const oneIteration = (index: RV, elem: RV): void => {
        if (r.pipe.decl.length > 0) this.setTopVar(1, elem);
        if (r.pipe.decl.length > 1) this.setTopVar(2, index);
        try {
          this.walk(elem, r.list);
        } catch (e) {
          if (e !== CONTINUE) throw e;
        } finally {
          this.pop(mark);
        }
      };
      const k = kindOf(val);
      let ran = false;
      if (k === 'slice') {
        const arr = val.v as unknown[];
        for (let i = 0; i < arr.length; i++) {
          ran = true;
          oneIteration(valueOf(new GoInt(BigInt(i), 'int')), ifaceOf(arr[i]));
        }
      } else if (k === 'map') {
        const m = val.v as Record<string, unknown>;
        for (const key of Object.keys(m).sort(compareGoStrings)) {
          ran = true;
          oneIteration(valueOf(key), ifaceOf(m[key]));
        }
      } else if (INT_KINDS.has(k) || UINT_KINDS.has(k)) {
        if (r.pipe.decl.length > 1) this.errorf(`can't use ${rvString(val)} to iterate over more than one variable`);
        const n = intVal(val);
        for (let i = 0n; i < n; i++) {
          ran = true;
          oneIteration(INVALID, valueOf(new GoInt(i, (val.v as GoInt).kind)));
        }
      } else if (k !== 'invalid') {
        this.errorf(`range can't iterate over ${rvString(val)}`);
      }
      if (ran) return;
      if (r.elseList) this.walk(dot, r.elseList);
    } catch (e) {
      if (e !== BREAK) throw e;
    } finally {
      this.pop(outer);
    }
  }

  walkTemplate(dot: RV, t: Node & { type: 'template' }): void {
    this.at(t);
    const tree = this.tmpl.lookup(t.name);
    if (!tree) this.errorf(`template ${quote(t.name)} not defined`);
    if (this.depth === MAX_EXEC_DEPTH) this.errorf(`exceeded maximum template depth (${MAX_EXEC_DEPTH})`);
    const newDot = this.evalPipeline(dot, t.pipe);
    const s = new State(this.tmpl, tree, newDot, this.missingKey);
    s.depth = this.depth + 1;
    s.out = this.out;
    s.walk(newDot, tree.root);
  }

  evalPipeline(dot: RV, pipe: PipeNode | null): RV {
    if (!pipe) return INVALID;
    this.at(pipe);
    let value = MISSING;
    for (const cmd of pipe.cmds) {
      value = this.evalCommand(dot, cmd, value);
      if (value.t === 'interface') value = value.v === null ? INVALID : valueOf(value.v);
    }
    for (const v of pipe.decl) {
      if (pipe.isAssign) this.setVar(v.ident[0]!, value);
      else this.push(v.ident[0]!, value);
    }
    return value;
  }

  notAFunction(args: Node[], final: RV): void {
    if (args.length > 1 || final !== MISSING) this.errorf(`can't give argument to non-function ${nodeString(args[0]!)}`);
  }

  evalCommand(dot: RV, cmd: CommandNode, final: RV): RV {
    const first = cmd.args[0]!;
    switch (first.type) {
      case 'field':
        return this.evalFieldNode(dot, first, cmd.args, final);
      case 'chain':
        return this.evalChainNode(dot, first, cmd.args, final);
      case 'identifier':
        return this.evalFunction(dot, first, cmd, cmd.args, final);
      case 'pipe':
        this.notAFunction(cmd.args, final);
        return this.evalPipeline(dot, first);
      case 'variable':
        return this.evalVariableNode(dot, first, cmd.args, final);
    }
    this.at(first);
    this.notAFunction(cmd.args, final);
    switch (first.type) {
      case 'bool':
        return valueOf(first.value);
      case 'dot':
        return dot;
      case 'nil':
        this.errorf('nil is not a command');
      case 'number':
        return this.idealConstant(first);
      case 'string':
        return valueOf(first.text);
    }
    this.errorf(`can't evaluate command ${quote(nodeString(first))}`);
  }

  idealConstant(c: Node & { type: 'number' }): RV {
    this.at(c);
    if (c.isComplex) return valueOf(c.complex);
    const isHexInt = c.text.length > 2 && c.text[0] === '0' && (c.text[1] === 'x' || c.text[1] === 'X') && !/[pP]/.test(c.text);
    const isRuneInt = c.text[0] === "'";
    if (c.isFloat && !isHexInt && !isRuneInt && /[.eEpP]/.test(c.text)) return valueOf(c.float64);
    if (c.isInt) return valueOf(new GoInt(c.int64, 'int'));
    if (c.isUint) this.errorf(`${c.text} overflows int`);
    return INVALID;
  }

  evalFieldNode(dot: RV, field: Node & { type: 'field' }, args: Node[], final: RV): RV {
    this.at(field);
    return this.evalFieldChain(dot, dot, field, field.ident, args, final);
  }

  evalChainNode(dot: RV, chain: Node & { type: 'chain' }, args: Node[], final: RV): RV {
    this.at(chain);
    if (chain.field.length === 0) this.errorf('internal error: no fields in evalChainNode');
    if (chain.node.type === 'nil') this.errorf(`indirection through explicit nil in ${nodeString(chain)}`);
    const pipe = this.evalArg(dot, null, chain.node);
    return this.evalFieldChain(dot, pipe, chain, chain.field, args, final);
  }

  evalVariableNode(dot: RV, v: Node & { type: 'variable' }, args: Node[], final: RV): RV {
    this.at(v);
    const value = this.varValue(v.ident[0]!);
    if (v.ident.length === 1) {
      this.notAFunction(args, final);
      return value;
    }
    return this.evalFieldChain(dot, value, v, v.ident.slice(1), args, final);
  }

  evalFieldChain(dot: RV, receiver: RV, node: Node, ident: string[], args: Node[] | null, final: RV): RV {
    const n = ident.length;
    for (let i = 0; i < n - 1; i++) receiver = this.evalField(dot, ident[i]!, node, null, MISSING, receiver);
    return this.evalField(dot, ident[n - 1]!, node, args, final, receiver);
  }

  evalFunction(dot: RV, node: Node & { type: 'identifier' }, cmd: Node, args: Node[] | null, final: RV): RV {
    this.at(node);
    const name = node.ident;
    const fn = this.tmpl.funcs[name];
    if (!fn) this.errorf(`${quote(name)} is not a defined function`);
    return this.evalCall(dot, fn, Object.prototype.hasOwnProperty.call(BUILTINS, name) && BUILTINS[name] === fn, cmd, name, args, final);
  }

  evalField(dot: RV, fieldName: string, node: Node, args: Node[] | null, final: RV, receiver: RV): RV {
    if (receiver.t === undefined) {
      if (this.missingKey === 'error') this.errorf(`nil data; no entry for key ${quote(fieldName)}`);
      return INVALID;
    }
    const typ = typeStringOf(receiver);
    const [rcv, isNil] = indirect(receiver);
    if (rcv.t === 'interface' && isNil) this.errorf(`nil pointer evaluating ${typ}.${fieldName}`);
    const hasArgs = (args !== null && args.length > 1) || final !== MISSING;
    if (kindOf(rcv) === 'map') {
      if (hasArgs) this.errorf(`${fieldName} is not a method but has arguments`);
      const m = rcv.v as Record<string, unknown>;
      if (Object.prototype.hasOwnProperty.call(m, fieldName)) return ifaceOf(m[fieldName]);
      switch (this.missingKey) {
        case 'zero':
          return ifaceOf(null);
        case 'error':
          this.errorf(`map has no entry for key ${quote(fieldName)}`);
        default:
          return INVALID;
      }
    }
    this.errorf(`can't evaluate field ${fieldName} in type ${typ}`);
  }

  evalCall(dot: RV, fn: FuncSpec, isBuiltin: boolean, node: Node, name: string, args: Node[] | null, final: RV): RV {
    const callArgs = args ? args.slice(1) : [];
    const numParams = fn.params.length;
    let numIn = callArgs.length;
    if (final !== MISSING) numIn++;
    let numFixed = callArgs.length;
    if (fn.variadic) {
      numFixed = numParams - 1;
      if (numIn < numFixed) this.errorf(`wrong number of args for ${name}: want at least ${numParams - 1} got ${callArgs.length}`);
    } else if (numIn !== numParams) {
      this.errorf(`wrong number of args for ${name}: want ${numParams} got ${numIn}`);
    }
    if (isBuiltin && (name === 'and' || name === 'or')) {
      let v: RV = INVALID;
      for (const a of callArgs) {
        v = this.evalArg(dot, 'rv', a);
        if (truthFn(v) === (name === 'or')) return v;
      }
      if (final !== MISSING) v = this.validateType(final, 'rv');
      return v;
    }
    const argv: RV[] = [];
    let i = 0;
    for (; i < numFixed && i < callArgs.length; i++) argv.push(this.evalArg(dot, fn.params[i]!, callArgs[i]!));
    if (fn.variadic) {
      const argType = fn.params[numParams - 1]!;
      for (; i < callArgs.length; i++) argv.push(this.evalArg(dot, argType, callArgs[i]!));
    }
    if (final !== MISSING) {
      let t = fn.params[numParams - 1]!;
      if (fn.variadic && numIn - 1 < numFixed) t = fn.params[numIn - 1]!;
      argv.push(this.validateType(final, t));
    }
    if (isBuiltin && name === 'call' && argv.length > 0) argv[0] = { ...argv[0]!, callee: callArgs[0] ? nodeString(callArgs[0]) : '' } as RV;
    const goArgs = argv.map((a, k) => {
      const pt = k < numParams - (fn.variadic ? 1 : 0) ? fn.params[k]! : fn.params[numParams - 1]!;
      if (pt === 'rv') return a;
      if (pt === 'string') return a.v;
      return toAny(a);
    });
    try {
      return fn.fn(...goArgs);
    } catch (e) {
      if (e instanceof TemplateError) throw e;
      this.at(node);
      this.errorf(`error calling ${name}: ${(e as Error).message}`);
    }
  }

  validateType(value: RV, typ: 'rv' | 'any' | 'string' | null): RV {
    if (value.t === undefined) {
      if (typ === null) return INVALID;
      if (typ === 'rv') return INVALID;
      if (typ === 'any') return ifaceOf(null);
      this.errorf(`invalid value; expected ${typ}`);
    }
    if (typ === null || typ === 'rv' || typ === 'any') return value;
    if (value.t === 'string') return value;
    if (value.t === 'interface' && value.v !== null) {
      const elem = valueOf(value.v);
      if (elem.t === 'string') return elem;
      value = elem;
    }
    this.errorf(`wrong type for value; expected ${typ}; got ${typeStringOf(value)}`);
  }

  evalArg(dot: RV, typ: 'rv' | 'any' | 'string' | null, n: Node): RV {
    this.at(n);
    switch (n.type) {
      case 'dot':
        return this.validateType(dot, typ);
      case 'nil':
        if (typ === null || typ === 'rv' || typ === 'any') return typ === 'any' ? ifaceOf(null) : INVALID;
        this.errorf(`cannot assign nil to ${typ}`);
      case 'field':
        return this.validateType(this.evalFieldNode(dot, n, [n], MISSING), typ);
      case 'variable':
        return this.validateType(this.evalVariableNode(dot, n, [], MISSING), typ);
      case 'pipe':
        return this.validateType(this.evalPipeline(dot, n), typ);
      case 'identifier':
        return this.validateType(this.evalFunction(dot, n, n, null, MISSING), typ);
      case 'chain':
        return this.validateType(this.evalChainNode(dot, n, [], MISSING), typ);
    }
    if (typ === 'string') {
      if (n.type === 'string') return valueOf(n.text);
      this.errorf(`expected string; found ${nodeString(n)}`);
    }
    if (typ === null) this.errorf(`can't handle ${nodeString(n)} for arg of type <nil>`);
    return this.evalEmptyInterface(dot, n);
  }

  evalEmptyInterface(dot: RV, n: Node): RV {
    this.at(n);
    switch (n.type) {
      case 'bool':
        return valueOf(n.value);
      case 'dot':
        return dot;
      case 'field':
        return this.evalFieldNode(dot, n, [], MISSING);
      case 'identifier':
        return this.evalFunction(dot, n, n, null, MISSING);
      case 'number':
        return this.idealConstant(n);
      case 'string':
        return valueOf(n.text);
      case 'variable':
        return this.evalVariableNode(dot, n, [], MISSING);
      case 'pipe':
        return this.evalPipeline(dot, n);
    }
    this.errorf(`can't handle assignment of ${nodeString(n)} to empty interface argument`);
  }

  printValue(n: Node, v: RV): void {
    this.at(n);
    if (v.t === undefined) {
      this.out.push('<no value>');
      return;
    }
    this.out.push(sprint(v.t === 'interface' ? v.v : v.v));
  }
}

export interface ExecuteOptions {
  missingKey?: MissingKey;
}

/** A parsed template with its associated templates (define/block). */
export class GoTemplate {
  private readonly trees = new Map<string, Tree>();
  readonly funcs: Record<string, FuncSpec>;

  private constructor(
    readonly name: string,
    funcs: Record<string, FuncSpec>,
  ) {
    this.funcs = { ...BUILTINS, ...funcs };
  }

  /** template.New(name).Funcs(funcs).Parse(text); throws TemplateError with Go's message. */
  static parse(name: string, text: string, funcs: Record<string, FuncSpec> = {}): GoTemplate {
    const t = new GoTemplate(name, funcs);
    const p = new Parser(name, name, text, t.funcs, t.trees);
    p.parseTop();
    return t;
  }

  lookup(name: string): Tree | undefined {
    return this.trees.get(name);
  }

  /**
   * Executes the template on `data` (a value of gofmt's model). Returns the output; on an error
   * throws TemplateExecError carrying the output written before it.
   */
  execute(data: unknown, opts: ExecuteOptions = {}): string {
    const tree = this.trees.get(this.name);
    const dot = valueOf(data);
    const missingKey = opts.missingKey ?? 'default';
    const s = new State(this, tree ?? { name: this.name, root: { type: 'list', pos: 0, nodes: [] }, text: '' }, dot, missingKey);
    try {
      if (!tree) throw new TemplateError(`template: ${this.name}: ${quote(this.name)} is an incomplete or empty template`);
      s.walk(dot, tree.root);
    } catch (e) {
      if (e instanceof TemplateError) throw new TemplateExecError(e.message, s.out.join(''));
      if (e instanceof RangeError) throw new TemplateExecError(`template: ${this.name}: ${e.message}`, s.out.join(''));
      throw e;
    }
    return s.out.join('');
  }
}

/** An execution error with the output produced before it. */
export class TemplateExecError extends TemplateError {
  constructor(
    message: string,
    readonly partial: string,
  ) {
    super(message);
  }
}

/** Converts JSON data to the model a go-template sees after kubectl's JSON round trip (numbers are float64). */
export function templateData(json: unknown): unknown {
  return json;
}

export { SyntaxErr, isGoMap };
export type { IntKind };
