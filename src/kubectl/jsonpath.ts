// kubectl's JSONPath dialect (k8s.io/client-go/util/jsonpath): a parser to its node tree and an
// evaluator with its printing rules and messages.
//
//   const jp = JSONPath.parse('out', '{range .items[*]}{.metadata.name}{"\n"}{end}');
//   const text = jp.execute(data, { allowMissingKeys: true });
//
// Template text outside `{...}` is copied; inside an action: `.field`, `['quoted key']`,
// `[n]`, `[start:end:step]` (negative indexes count from the end), `[*]` and `.*` wildcards,
// `..` recursive descent, unions `[a,b]`, filters `[?(@.x == 'y')]` (==, !=, <, <=, >, >=, or
// existence), `range`/`end`, quoted string literals, numbers and booleans. Results of one
// action are printed separated by spaces; maps and lists print as compact JSON, scalars with
// Go's fmt; with JSON output (`-o jsonpath-as-json`) each action's results print as one
// indented JSON array. Values follow gofmt.ts's model; data is unstructured content (whole
// numbers are int64, see toUnstructuredValues).

import { GoInt, compareGoStrings, goTypeString, isGoMap, jsonMarshal, quote, sprint, unquoteChar, type GoMap } from './gofmt.js';

export class JSONPathError extends Error {
  override name = 'JSONPathError';
  /** the values the failing step returned with its error (client-go returns them alongside) */
  partial: unknown[] = [];
  withPartial(p: unknown[]): this {
    this.partial = p;
    return this;
  }
}

// ─────────────────────────────────────────────────────────────────────────────
// Nodes
// ─────────────────────────────────────────────────────────────────────────────

export interface ParamsEntry {
  value: number;
  known: boolean;
  derived: boolean;
}

export type JPNode =
  | ListNode
  | { type: 'text'; text: string }
  | { type: 'field'; value: string }
  | { type: 'identifier'; name: string }
  | { type: 'array'; params: [ParamsEntry, ParamsEntry, ParamsEntry] }
  | { type: 'filter'; left: ListNode; right: ListNode; operator: string }
  | { type: 'int'; value: number }
  | { type: 'float'; value: number }
  | { type: 'wildcard' }
  | { type: 'recursive' }
  | { type: 'union'; nodes: ListNode[] }
  | { type: 'bool'; value: boolean };

export interface ListNode {
  type: 'list';
  nodes: JPNode[];
}

/** A float literal of a filter (Go float64 next to the data's int64). */
class FloatLit {
  constructor(readonly value: number) {}
}

// ─────────────────────────────────────────────────────────────────────────────
// Parser
// ─────────────────────────────────────────────────────────────────────────────

const EOF = -1;

function isSpace(r: number): boolean {
  return r === 0x20 || r === 0x09;
}

function isEndOfLine(r: number): boolean {
  return r === 0x0d || r === 0x0a;
}

const LETTER = /^\p{L}$/u;
const DIGIT = /^\p{Nd}$/u;

function isDigit(r: number): boolean {
  if (r < 0) return false;
  if (r < 0x80) return r >= 0x30 && r <= 0x39;
  return DIGIT.test(String.fromCodePoint(r));
}

function isAlphaNumeric(r: number): boolean {
  if (r < 0) return false;
  if (r === 0x5f) return true;
  if (r < 0x80) return (r >= 0x30 && r <= 0x39) || (r >= 0x41 && r <= 0x5a) || (r >= 0x61 && r <= 0x7a);
  return LETTER.test(String.fromCodePoint(r)) || DIGIT.test(String.fromCodePoint(r));
}

function isTerminator(r: number): boolean {
  if (isSpace(r) || isEndOfLine(r)) return true;
  switch (r) {
    case EOF:
    case 0x2e: // .
    case 0x2c: // ,
    case 0x5b: // [
    case 0x5d: // ]
    case 0x24: // $
    case 0x40: // @
    case 0x7b: // {
    case 0x7d: // }
      return true;
  }
  return false;
}

/** Go's %#U. */
function sharpU(r: number): string {
  const hex = 'U+' + r.toString(16).toUpperCase().padStart(4, '0');
  return r >= 0x20 && r !== 0x7f ? `${hex} '${String.fromCodePoint(r)}'` : hex;
}

/** client-go's UnquoteExtend: strconv.Unquote that also accepts single-quoted strings. */
export function unquoteExtend(s: string): string {
  const n = s.length;
  if (n < 2) throw new Error('invalid syntax');
  const q = s[0]!;
  if (q !== s[n - 1]) throw new Error('invalid syntax');
  let body = s.slice(1, -1);
  if (q !== '"' && q !== "'") throw new Error('invalid syntax');
  if (!body.includes('\\') && !body.includes(q)) return body;
  const bytes: number[] = [];
  while (body.length > 0) {
    let r;
    try {
      r = unquoteChar(body, q);
    } catch {
      throw new Error('invalid syntax');
    }
    body = r.tail;
    if (r.byteValue || r.value < 0x80) bytes.push(r.value);
    else bytes.push(...Buffer.from(String.fromCodePoint(r.value), 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

const DICT_KEY = /^'([^']*)'$/;
const SLICE_OP = /^(-?[0-9]*)(:-?[0-9]*)?(:-?[0-9]*)?$/;
const FILTER_OP = /^([^!<>=]+)([!<>=]+)(.+?)$/s;

/** Go's strconv.Atoi (decimal, optional sign, 64-bit range). */
function atoi(s: string): number | null {
  if (!/^[+-]?[0-9]+$/.test(s)) return null;
  const v = BigInt(s);
  if (v > (1n << 63n) - 1n || v < -(1n << 63n)) return null;
  return Number(v);
}

class Parser {
  root: ListNode = { type: 'list', nodes: [] };
  private input = '';
  private pos = 0;
  private start = 0;
  private width = 0;

  parse(text: string): void {
    this.input = text;
    this.root = { type: 'list', nodes: [] };
    this.pos = 0;
    this.start = 0;
    this.parseText(this.root);
  }

  private consumeText(): string {
    const v = this.input.slice(this.start, this.pos);
    this.start = this.pos;
    return v;
  }

  private next(): number {
    if (this.pos >= this.input.length) {
      this.width = 0;
      return EOF;
    }
    const r = this.input.codePointAt(this.pos)!;
    this.width = r > 0xffff ? 2 : 1;
    this.pos += this.width;
    return r;
  }

  private peek(): number {
    const r = this.next();
    this.backup();
    return r;
  }

  private backup(): void {
    this.pos -= this.width;
  }

  private parseText(cur: ListNode): void {
    for (;;) {
      if (this.input.startsWith('{', this.pos)) {
        if (this.pos > this.start) cur.nodes.push({ type: 'text', text: this.consumeText() });
        return this.parseLeftDelim(cur);
      }
      if (this.next() === EOF) break;
    }
    if (this.pos > this.start) cur.nodes.push({ type: 'text', text: this.consumeText() });
  }

  private parseLeftDelim(cur: ListNode): void {
    this.pos += 1;
    this.consumeText();
    const n: ListNode = { type: 'list', nodes: [] };
    cur.nodes.push(n);
    this.parseInsideAction(n);
  }

  private parseInsideAction(cur: ListNode): void {
    for (;;) {
      if (this.input.startsWith('}', this.pos)) return this.parseRightDelim();
      if (this.input.startsWith('[?(', this.pos)) {
        this.parseFilter(cur);
        continue;
      }
      if (this.input.startsWith('..', this.pos)) {
        this.parseRecursive(cur);
        continue;
      }
      const r = this.next();
      if (r === EOF || isEndOfLine(r)) throw new JSONPathError('unclosed action');
      if (r === 0x20) {
        this.consumeText();
      } else if (r === 0x40 || r === 0x24) {
        this.consumeText();
      } else if (r === 0x5b) {
        this.parseArray(cur);
      } else if (r === 0x22 || r === 0x27) {
        this.parseQuote(cur, r);
      } else if (r === 0x2e) {
        this.parseField(cur);
      } else if (r === 0x2b || r === 0x2d || isDigit(r)) {
        this.backup();
        this.parseNumber(cur);
      } else if (isAlphaNumeric(r)) {
        this.backup();
        this.parseIdentifier(cur);
      } else {
        throw new JSONPathError(`unrecognized character in action: ${sharpU(r)}`);
      }
    }
  }

  private parseRightDelim(): void {
    this.pos += 1;
    this.consumeText();
    this.parseText(this.root);
  }

  private parseIdentifier(cur: ListNode): void {
    for (;;) {
      const r = this.next();
      if (isTerminator(r)) {
        this.backup();
        break;
      }
    }
    const value = this.consumeText();
    if (value === 'true' || value === 'false') cur.nodes.push({ type: 'bool', value: value === 'true' });
    else cur.nodes.push({ type: 'identifier', name: value });
  }

  private parseRecursive(cur: ListNode): void {
    const last = cur.nodes[cur.nodes.length - 1];
    if (last && last.type === 'recursive') throw new JSONPathError('invalid multiple recursive descent');
    this.pos += 2;
    this.consumeText();
    cur.nodes.push({ type: 'recursive' });
    if (isAlphaNumeric(this.peek())) this.parseField(cur);
  }

  private parseNumber(cur: ListNode): void {
    const r0 = this.peek();
    if (r0 === 0x2b || r0 === 0x2d) this.next();
    for (;;) {
      const r = this.next();
      if (r !== 0x2e && !isDigit(r)) {
        this.backup();
        break;
      }
    }
    const value = this.consumeText();
    const i = atoi(value);
    if (i !== null) {
      cur.nodes.push({ type: 'int', value: i });
      return;
    }
    if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(value)) {
      cur.nodes.push({ type: 'float', value: Number(value) });
      return;
    }
    throw new JSONPathError(`cannot parse number ${value}`);
  }

  private parseArray(cur: ListNode): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || r === 0x0a) throw new JSONPathError('unterminated array');
      if (r === 0x5d) break;
    }
    let text = this.consumeText();
    text = text.slice(1, -1);
    if (text === '*') text = ':';
    const strs = text.split(',');
    if (strs.length > 1) {
      const union: ListNode[] = [];
      for (const s of strs) union.push(parseAction(`[${trimSpaces(s)}]`));
      cur.nodes.push({ type: 'union', nodes: union });
      return;
    }
    const dict = DICT_KEY.exec(text);
    if (dict) {
      const p = parseAction(`.${dict[1]}`);
      cur.nodes.push(...p.nodes);
      return;
    }
    const m = SLICE_OP.exec(text);
    if (!m) throw new JSONPathError(`invalid array index ${text}`);
    const value = [m[1] ?? '', m[2] ?? '', m[3] ?? ''];
    const params: [ParamsEntry, ParamsEntry, ParamsEntry] = [
      { value: 0, known: false, derived: false },
      { value: 0, known: false, derived: false },
      { value: 0, known: false, derived: false },
    ];
    for (let i = 0; i < 3; i++) {
      if (value[i] !== '') {
        if (i > 0) value[i] = value[i]!.slice(1);
        if (i > 0 && value[i] === '') params[i]!.known = false;
        else {
          params[i]!.known = true;
          const n = atoi(value[i]!);
          if (n === null) throw new JSONPathError(`array index ${value[i]} is not a number`);
          params[i]!.value = n;
        }
      } else if (i === 1) {
        params[i]!.known = true;
        params[i]!.value = params[0]!.value + 1;
        params[i]!.derived = true;
      } else {
        params[i]!.known = false;
        params[i]!.value = 0;
      }
    }
    cur.nodes.push({ type: 'array', params });
  }

  private parseFilter(cur: ListNode): void {
    this.pos += 3;
    this.consumeText();
    let begin = false;
    let end = false;
    let pair = 0;
    for (;;) {
      const r = this.next();
      if (r === EOF || r === 0x0a) throw new JSONPathError('unterminated filter');
      if (r === 0x22 || r === 0x27) {
        if (!begin) {
          begin = true;
          pair = r;
          continue;
        }
        if (this.input[this.pos - 2] !== '\\' && r === pair) end = true;
      } else if (r === 0x29) {
        if (begin === end) break;
      }
    }
    if (this.next() !== 0x5d) throw new JSONPathError('unclosed array expect ]');
    let text = this.consumeText();
    text = text.slice(0, -2);
    const m = FILTER_OP.exec(text);
    if (!m) {
      cur.nodes.push({ type: 'filter', left: parseAction(text), right: { type: 'list', nodes: [] }, operator: 'exists' });
      return;
    }
    cur.nodes.push({ type: 'filter', left: parseAction(m[1]!), right: parseAction(m[3]!), operator: m[2]! });
  }

  private parseQuote(cur: ListNode, end: number): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || r === 0x0a) throw new JSONPathError('unterminated quoted string');
      if (r === end && this.input[this.pos - 2] !== '\\') break;
    }
    const value = this.consumeText();
    let s: string;
    try {
      s = unquoteExtend(value);
    } catch (e) {
      throw new JSONPathError(`unquote string ${value} error ${(e as Error).message}`);
    }
    cur.nodes.push({ type: 'text', text: s });
  }

  private parseField(cur: ListNode): void {
    this.consumeText();
    while (this.advance()) {
      /* scan */
    }
    const value = this.consumeText();
    if (value === '*') cur.nodes.push({ type: 'wildcard' });
    else cur.nodes.push({ type: 'field', value: value.replace(/\\/g, '') });
  }

  private advance(): boolean {
    const r = this.next();
    if (r === 0x5c) this.next();
    else if (isTerminator(r)) {
      this.backup();
      return false;
    }
    return true;
  }
}

function trimSpaces(s: string): string {
  return s.replace(/^ +| +$/g, '');
}

/** Parses `{text}` and returns its action's list (client-go's parseAction). */
function parseAction(text: string): ListNode {
  const p = new Parser();
  p.parse(`{${text}}`);
  return p.root.nodes[0] as ListNode;
}

// ─────────────────────────────────────────────────────────────────────────────
// Evaluation
// ─────────────────────────────────────────────────────────────────────────────

/**
 * A value during evaluation: a value of gofmt's model, `null` for a nil interface (a JSON null)
 * and `undefined` for the invalid reflect.Value (what a `range` over a null element yields).
 */
type Val = unknown;

const INT_KINDS = new Set(['int', 'int8', 'int16', 'int32', 'int64']);
const UINT_KINDS = new Set(['uint', 'uint8', 'uint16', 'uint32', 'uint64', 'uintptr']);

type BasicKind = 'bool' | 'complex' | 'int' | 'float' | 'string' | 'uint';

function basicKind(v: Val): BasicKind | null {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number' || v instanceof FloatLit) return 'float';
  if (v instanceof GoInt) return v.signed ? 'int' : 'uint';
  return null;
}

function num(v: Val): number | bigint {
  if (v instanceof FloatLit) return v.value;
  if (v instanceof GoInt) return v.value;
  return v as number;
}

function compareEqual(a: Val, b: Val): boolean {
  const k1 = basicKind(a);
  if (!k1) throw new JSONPathError('invalid type for comparison');
  const k2 = basicKind(b);
  if (!k2) throw new JSONPathError('invalid type for comparison');
  if (k1 !== k2) {
    if ((k1 === 'int' && k2 === 'uint') || (k1 === 'uint' && k2 === 'int')) return num(a) === num(b);
    throw new JSONPathError('incompatible types for comparison');
  }
  if (k1 === 'int' || k1 === 'uint' || k1 === 'float') return num(a) === num(b);
  return a === b;
}

function compareLess(a: Val, b: Val): boolean {
  const k1 = basicKind(a);
  if (!k1) throw new JSONPathError('invalid type for comparison');
  const k2 = basicKind(b);
  if (!k2) throw new JSONPathError('invalid type for comparison');
  if (k1 !== k2) {
    if ((k1 === 'int' && k2 === 'uint') || (k1 === 'uint' && k2 === 'int')) return num(a) < num(b);
    throw new JSONPathError('incompatible types for comparison');
  }
  switch (k1) {
    case 'bool':
    case 'complex':
      throw new JSONPathError('invalid type for comparison');
    case 'string':
      return compareGoStrings(a as string, b as string) < 0;
  }
  return num(a) < num(b);
}

function isSliceLike(v: Val): v is unknown[] {
  return Array.isArray(v);
}

/** The element values of a container (map values in key order, list elements, string bytes). */
function children(v: Val): Val[] {
  if (isGoMap(v) && !(v instanceof FloatLit)) {
    return Object.keys(v)
      .sort(compareGoStrings)
      .map((k) => (v as GoMap)[k]);
  }
  if (Array.isArray(v)) return v.slice();
  if (typeof v === 'string') return [...Buffer.from(v, 'utf8')].map((b) => new GoInt(BigInt(b), 'uint8'));
  return [];
}

function typeName(v: Val): string {
  if (v instanceof FloatLit) return 'float64';
  return goTypeString(v);
}

/** fmt's %v of a value (for messages). */
function valueText(v: Val): string {
  if (v === undefined) return '<invalid reflect.Value>';
  if (v instanceof FloatLit) return sprint(v.value);
  return sprint(v);
}

export interface JSONPathOptions {
  allowMissingKeys?: boolean;
  /** jsonpath-as-json: each action's results print as one indented JSON array */
  outputJSON?: boolean;
}

class Evaluator {
  private beginRange = 0;
  private inRange = 0;
  private endRange = 0;
  private lastEndNode = -1;

  constructor(
    private readonly allowMissingKeys: boolean,
  ) {}

  findResults(data: Val, nodes: JPNode[], start: number): Val[][] {
    const cur: Val[] = [data];
    const full: Val[][] = [];
    for (let i = start; i < nodes.length; i++) {
      const results = this.walk(cur, nodes[i]!);
      if (this.endRange > 0 && this.endRange <= this.inRange) {
        this.endRange--;
        this.lastEndNode = i;
        break;
      }
      if (this.beginRange > 0) {
        this.beginRange--;
        this.inRange++;
        if (results.length > 0) {
          // value.Interface() of a JSON null is nil: the iteration sees the invalid value
          for (const value of results) full.push(...this.findResults(value === null ? undefined : value, nodes, i + 1));
        } else {
          this.findResults(undefined, nodes, i + 1);
        }
        this.inRange--;
        for (let k = i + 1; k < nodes.length; k++) {
          if (k === this.lastEndNode) {
            i = k;
            break;
          }
        }
        continue;
      }
      full.push(results);
    }
    return full;
  }

  walk(value: Val[], node: JPNode): Val[] {
    switch (node.type) {
      case 'list':
        return this.evalList(value, node);
      case 'text':
        return [node.text];
      case 'field':
        return this.evalField(value, node.value);
      case 'array':
        return this.evalArray(value, node.params);
      case 'filter':
        return this.evalFilter(value, node);
      case 'int':
        return value.map(() => new GoInt(BigInt(node.value), 'int'));
      case 'bool':
        return value.map(() => node.value);
      case 'float':
        return value.map(() => new FloatLit(node.value));
      case 'wildcard':
        return this.evalWildcard(value);
      case 'recursive':
        return this.evalRecursive(value);
      case 'union':
        return node.nodes.flatMap((l) => this.evalList(value, l));
      case 'identifier':
        return this.evalIdentifier(value, node.name);
    }
  }

  evalList(value: Val[], node: ListNode): Val[] {
    let cur = value;
    for (const n of node.nodes) cur = this.walk(cur, n);
    return cur;
  }

  evalIdentifier(input: Val[], name: string): Val[] {
    switch (name) {
      case 'range':
        this.beginRange++;
        return input;
      case 'end':
        if (this.inRange > 0) {
          this.endRange++;
          return [];
        }
        throw new JSONPathError('not in range, nothing to end');
    }
    throw new JSONPathError(`unrecognized identifier ${name}`).withPartial(input);
  }

  evalArray(input: Val[], p: [ParamsEntry, ParamsEntry, ParamsEntry]): Val[] {
    const result: Val[] = [];
    for (const value of input) {
      if (value === null) continue;
      if (!isSliceLike(value)) {
        throw new JSONPathError(`${value === undefined ? '<invalid Value>' : typeName(value)} is not array or slice`).withPartial(input);
      }
      const params = p.map((x) => ({ ...x }));
      const len = value.length;
      if (!params[0]!.known) params[0]!.value = 0;
      if (params[0]!.value < 0) params[0]!.value += len;
      if (!params[1]!.known) params[1]!.value = len;
      if (params[1]!.value < 0 || (params[1]!.value === 0 && params[1]!.derived)) params[1]!.value += len;
      if (params[1]!.value !== params[0]!.value) {
        if (params[0]!.value >= len || params[0]!.value < 0) throw new JSONPathError(`array index out of bounds: index ${params[0]!.value}, length ${len}`).withPartial(input);
        if (params[1]!.value > len || params[1]!.value < 0) throw new JSONPathError(`array index out of bounds: index ${params[1]!.value - 1}, length ${len}`).withPartial(input);
        if (params[0]!.value > params[1]!.value) throw new JSONPathError(`starting index ${params[0]!.value} is greater than ending index ${params[1]!.value}`).withPartial(input);
      } else {
        return result;
      }
      const sliced = value.slice(params[0]!.value, params[1]!.value);
      let step = 1;
      if (params[2]!.known) {
        if (params[2]!.value <= 0) throw new JSONPathError('step must be > 0').withPartial(input);
        step = params[2]!.value;
      }
      for (let i = 0; i < sliced.length; i += step) result.push(sliced[i]);
    }
    return result;
  }

  evalField(input: Val[], name: string): Val[] {
    const results: Val[] = [];
    if (input.length === 0) return results;
    for (const value of input) {
      if (value === null || value === undefined) continue;
      if (isGoMap(value) && !(value instanceof FloatLit)) {
        if (Object.prototype.hasOwnProperty.call(value, name)) results.push((value as GoMap)[name]);
      }
    }
    if (results.length === 0) {
      if (this.allowMissingKeys) return results;
      throw new JSONPathError(`${name} is not found`);
    }
    return results;
  }

  evalWildcard(input: Val[]): Val[] {
    const results: Val[] = [];
    for (const value of input) {
      if (value === null || value === undefined) continue;
      results.push(...children(value));
    }
    return results;
  }

  evalRecursive(input: Val[]): Val[] {
    const result: Val[] = [];
    for (const value of input) {
      if (value === null || value === undefined) continue;
      const kids = children(value);
      if (kids.length !== 0) {
        result.push(value);
        result.push(...this.evalRecursive(kids));
      }
    }
    return result;
  }

  evalFilter(input: Val[], node: JPNode & { type: 'filter' }): Val[] {
    const results: Val[] = [];
    for (const value of input) {
      if (!isSliceLike(value)) throw new JSONPathError(`${value === null ? '<nil>' : valueText(value)} is not array or slice and cannot be filtered`).withPartial(input);
      for (const elem of value) {
        const temp = [elem];
        let lefts: Val[];
        let err: unknown;
        try {
          lefts = this.evalList(temp, node.left);
        } catch (e) {
          lefts = e instanceof JSONPathError ? e.partial : [];
          err = e;
        }
        if (node.operator === 'exists') {
          if (lefts.length > 0) results.push(elem);
          continue;
        }
        if (err) throw err;
        if (lefts.length === 0) continue;
        if (lefts.length > 1) throw new JSONPathError('can only compare one element at a time');
        const left = lefts[0];
        const rights = this.evalList(temp, node.right);
        if (rights.length === 0) continue;
        if (rights.length > 1) throw new JSONPathError('can only compare one element at a time');
        const right = rights[0];
        let pass: boolean;
        switch (node.operator) {
          case '<':
            pass = compareLess(left, right);
            break;
          case '>':
            pass = !(compareLess(left, right) || compareEqual(left, right));
            break;
          case '==':
            pass = compareEqual(left, right);
            break;
          case '!=':
            pass = !compareEqual(left, right);
            break;
          case '<=':
            pass = compareLess(left, right) || compareEqual(left, right);
            break;
          case '>=':
            pass = !compareLess(left, right);
            break;
          default:
            throw new JSONPathError(`unrecognized filter operator ${node.operator}`);
        }
        if (pass) results.push(elem);
      }
    }
    return results;
  }
}

function unbox(v: Val): Val {
  if (v instanceof FloatLit) return v.value;
  if (Array.isArray(v)) return v.map(unbox);
  return v;
}

/** A parsed JSONPath template (client-go's jsonpath.JSONPath). */
export class JSONPath {
  private constructor(
    readonly name: string,
    readonly root: ListNode,
  ) {}

  /** Parses a template; throws JSONPathError with client-go's message. */
  static parse(name: string, text: string): JSONPath {
    const p = new Parser();
    p.parse(text);
    return new JSONPath(name, p.root);
  }

  /** The result lists of each top-level part of the template. */
  findResults(data: unknown, opts: JSONPathOptions = {}): unknown[][] {
    const ev = new Evaluator(opts.allowMissingKeys ?? true);
    return ev.findResults(data, this.root.nodes, 0);
  }

  /** Executes and prints as kubectl does; throws JSONPathError (with the text printed so far). */
  execute(data: unknown, opts: JSONPathOptions = {}): string {
    const full = this.findResults(data, opts);
    let out = '';
    for (const results of full) out += printResults(results, !!opts.outputJSON);
    return out;
  }
}

function printResults(results: Val[], outputJSON: boolean): string {
  if (outputJSON) results = [results.map(unbox)];
  let out = '';
  results.forEach((r, i) => {
    let text: string;
    const v = unbox(r);
    if (outputJSON) text = jsonMarshal(v, '    ') + '\n';
    else if (Array.isArray(v) || isGoMap(v)) text = jsonMarshal(v);
    else if (v === undefined) text = '<no value>';
    else if (v === null) text = 'null';
    else text = sprint(v);
    if (i !== results.length - 1) text += ' ';
    out += text;
  });
  return out;
}

export { quote };
