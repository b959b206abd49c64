// YAML as kubectl writes and reads it (sigs.k8s.io/yaml over its go-yaml v2 fork).
//
// Writing (yamlMarshal): a JSON value becomes the document `kubectl -o yaml` prints: map keys in
// go-yaml's natural order (digit runs compare as numbers), block mappings and sequences (a
// sequence in a mapping is not indented), `{}`/`[]` for empty collections, strings plain when
// that reads back as the same string, else single- or double-quoted, multi-line strings as
// literal blocks (`|`, `|-`, `|+`, with an indentation hint when they start with a space), and
// plain and quoted scalars folded at spaces past column 80 — the emitter's rules, reimplemented.
//
// Reading (yamlToJSONDocuments): a manifest stream as kubectl's YAMLOrJSONDecoder splits and
// converts it: JSON streams as JSON; YAML documents split on `---`, plain scalars resolved with
// YAML 1.1's rules as go-yaml v2 resolves them (yes/no/on/off/y/n booleans, `~` null, 0x/0o/0b
// and leading-zero octal integers, underscores), timestamps kept as strings, merge keys (`<<`),
// duplicate keys allowed (the last wins), non-string keys written as strings.

import { yamlModule } from '../codec/yamlmodule.js';
import { compareGoStrings, formatFloat, sprintf, toUnstructuredValues } from './gofmt.js';

const yamlLib = yamlModule;

// ─────────────────────────────────────────────────────────────────────────────
// Resolving plain scalars (go-yaml v2's resolve)
// ─────────────────────────────────────────────────────────────────────────────

const RESOLVE_MAP: Record<string, { tag: 'bool' | 'null' | 'float' | 'merge'; value: unknown }> = {};
for (const s of ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']) RESOLVE_MAP[s] = { tag: 'bool', value: true };
for (const s of ['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']) RESOLVE_MAP[s] = { tag: 'bool', value: false };
for (const s of ['', '~', 'null', 'Null', 'NULL']) RESOLVE_MAP[s] = { tag: 'null', value: null };
for (const s of ['.nan', '.NaN', '.NAN']) RESOLVE_MAP[s] = { tag: 'float', value: NaN };
for (const s of ['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF']) RESOLVE_MAP[s] = { tag: 'float', value: Infinity };
for (const s of ['-.inf', '-.Inf', '-.INF']) RESOLVE_MAP[s] = { tag: 'float', value: -Infinity };
RESOLVE_MAP['<<'] = { tag: 'merge', value: '<<' };

const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;

export type ResolvedTag = 'str' | 'bool' | 'null' | 'int' | 'float' | 'merge' | 'timestamp';

/** Go's strconv.ParseInt/ParseUint(s, 0, 64) for YAML: prefixes 0x, 0o, 0b, and leading-zero octal. */
function parseGoInt0(s: string): bigint | null {
  let body = s;
  let neg = false;
  if (body[0] === '+' || body[0] === '-') {
    neg = body[0] === '-';
    body = body.slice(1);
  }
  if (body === '') return null;
  let base = 10;
  if (body.length > 1 && body[0] === '0') {
    const p = body[1]!.toLowerCase();
    if (p === 'x') { base = 16; body = body.slice(2); }
    else if (p === 'o') { base = 8; body = body.slice(2); }
    else if (p === 'b') { base = 2; body = body.slice(2); }
    else { base = 8; body = body.slice(1); }
  }
  const re = base === 16 ? /^[0-9a-fA-F]+$/ : base === 8 ? /^[0-7]+$/ : base === 2 ? /^[01]+$/ : /^[0-9]+$/;
  if (!re.test(body)) return null;
  let v = 0n;
  for (const c of body) v = v * BigInt(base) + BigInt(parseInt(c, 16));
  return neg ? -v : v;
}

function isTimestamp(s: string): boolean {
  let i = 0;
  while (i < s.length && s[i]! >= '0' && s[i]! <= '9') i++;
  if (i !== 4 || i === s.length || s[i] !== '-') return false;
  return (
    /^\d{4}-\d{1,2}-\d{1,2}$/.test(s) ||
    /^\d{4}-\d{1,2}-\d{1,2}[Tt]\d{1,2}:\d{1,2}:\d{1,2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(s) ||
    /^\d{4}-\d{1,2}-\d{1,2} \d{1,2}:\d{1,2}:\d{1,2}(\.\d+)?$/.test(s)
  );
}

/** go-yaml v2's resolve of a plain scalar: its tag and value (ints beyond 2^53 stay exact as bigint). */
export function resolvePlain(s: string): { tag: ResolvedTag; value: unknown } {
  const hintChar = s === '' ? 'N' : s[0]!;
  const isSign = hintChar === '+' || hintChar === '-';
  const isDigit = hintChar >= '0' && hintChar <= '9';
  const inMap = 'yYnNtTfFoO~'.includes(hintChar);
  if (s === '' || isSign || isDigit || inMap || hintChar === '.') {
    const m = RESOLVE_MAP[s];
    if (m) return m;
    if (hintChar === '.') {
      const f = parseGoFloatSimple(s);
      if (f !== null) return { tag: 'float', value: f };
    } else if (isSign || isDigit) {
      if (isTimestamp(s)) return { tag: 'timestamp', value: s };
      const plain = s.replace(/_/g, '');
      const iv = parseGoInt0(plain);
      if (iv !== null && iv >= -(1n << 63n) && iv < 1n << 64n) return { tag: 'int', value: iv };
      if (YAML_STYLE_FLOAT.test(plain)) {
        const f = Number(plain);
        if (!Number.isNaN(f)) return { tag: 'float', value: f };
      }
      if (plain.startsWith('0b') || plain.startsWith('-0b')) {
        const neg = plain[0] === '-';
        const b = plain.slice(neg ? 3 : 2);
        if (/^[01]+$/.test(b)) {
          const v = BigInt('0b' + b);
          return { tag: 'int', value: neg ? -v : v };
        }
      }
    }
  }
  return { tag: 'str', value: s };
}

function parseGoFloatSimple(s: string): number | null {
  const t = s.replace(/^[+-]/, '');
  if (!/^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return null;
  return Number(s);
}

// ─────────────────────────────────────────────────────────────────────────────
// Writing
// ─────────────────────────────────────────────────────────────────────────────

const BASE60_FLOAT = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;

function isBase60Float(s: string): boolean {
  if (s === '') return false;
  const c = s[0]!;
  if (!(c === '+' || c === '-' || (c >= '0' && c <= '9')) || !s.includes(':')) return false;
  return BASE60_FLOAT.test(s);
}

const LETTER = /^\p{L}$/u;
const DIGIT = /^\p{Nd}$/u;

/** go-yaml v2's map key order for string keys: letters before non-letters, digit runs numerically. */
export function yamlKeyLess(a: string, b: string): boolean {
  const ar = [...a];
  const br = [...b];
  for (let i = 0; i < ar.length && i < br.length; i++) {
    if (ar[i] === br[i]) continue;
    const al = LETTER.test(ar[i]!);
    const bl = LETTER.test(br[i]!);
    if (al && bl) return ar[i]!.codePointAt(0)! < br[i]!.codePointAt(0)!;
    if (al || bl) return bl;
    let an = 0n;
    let bn = 0n;
    if (ar[i] === '0' || br[i] === '0') {
      for (let j = i - 1; j >= 0 && DIGIT.test(ar[j]!); j--) {
        if (ar[j] !== '0') {
          an = 1n;
          bn = 1n;
          break;
        }
      }
    }
    let ai = i;
    for (; ai < ar.length && DIGIT.test(ar[ai]!); ai++) an = an * 10n + BigInt(digitValue(ar[ai]!));
    let bi = i;
    for (; bi < br.length && DIGIT.test(br[bi]!); bi++) bn = bn * 10n + BigInt(digitValue(br[bi]!));
    if (an !== bn) return an < bn;
    if (ai !== bi) return ai < bi;
    return ar[i]!.codePointAt(0)! < br[i]!.codePointAt(0)!;
  }
  return ar.length < br.length;
}

function digitValue(c: string): number {
  const cp = c.codePointAt(0)!;
  if (cp >= 0x30 && cp <= 0x39) return cp - 0x30;
  // other Unicode decimal digits: go-yaml subtracts '0' from the rune
  return cp - 0x30;
}

function sortKeys(keys: string[]): string[] {
  // a stable sort with go-yaml's Less (sort.Sort is not stable, but keys are distinct)
  return keys.slice().sort((x, y) => (yamlKeyLess(x, y) ? -1 : yamlKeyLess(y, x) ? 1 : compareGoStrings(x, y)));
}

/** YAML's printable set (is_printable): LF, 0x20-0x7E, 0xA0-0xD7FF, 0xE000-0xFFFD but BOM. */
function isPrintable(c: number): boolean {
  return c === 0x0a || (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff);
}

function isBreak(c: number): boolean {
  return c === 0x0d || c === 0x0a || c === 0x85 || c === 0x2028 || c === 0x2029;
}

function isBlank(c: number): boolean {
  return c === 0x20 || c === 0x09;
}

type Style = 'plain' | 'single' | 'double' | 'literal';

interface ScalarAnalysis {
  multiline: boolean;
  flowPlainAllowed: boolean;
  blockPlainAllowed: boolean;
  singleQuotedAllowed: boolean;
  blockAllowed: boolean;
}

function analyzeScalar(value: string): ScalarAnalysis {
  if (value.length === 0) return { multiline: false, flowPlainAllowed: false, blockPlainAllowed: true, singleQuotedAllowed: true, blockAllowed: false };
  const cps = [...value].map((c) => c.codePointAt(0)!);
  let blockIndicators = false;
  let flowIndicators = false;
  let lineBreaks = false;
  let specialCharacters = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let previousSpace = false;
  let previousBreak = false;
  if (value.startsWith('---') || value.startsWith('...')) {
    blockIndicators = true;
    flowIndicators = true;
  }
  let precededByWhitespace = true;
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i]!;
    const followedByWhitespace = i + 1 >= cps.length || isBlank(cps[i + 1]!);
    const ch = String.fromCodePoint(c);
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(ch)) {
        flowIndicators = true;
        blockIndicators = true;
      } else if (ch === '?' || ch === ':') {
        flowIndicators = true;
        if (followedByWhitespace) blockIndicators = true;
      } else if (ch === '-') {
        if (followedByWhitespace) {
          flowIndicators = true;
          blockIndicators = true;
        }
      }
    } else {
      if (',?[]{}'.includes(ch)) flowIndicators = true;
      else if (ch === ':') {
        flowIndicators = true;
        if (followedByWhitespace) blockIndicators = true;
      } else if (ch === '#') {
        if (precededByWhitespace) {
          flowIndicators = true;
          blockIndicators = true;
        }
      }
    }
    if (!isPrintable(c)) specialCharacters = true;
    if (c === 0x20) {
      if (i === 0) leadingSpace = true;
      if (i === cps.length - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      lineBreaks = true;
      if (i === 0) leadingBreak = true;
      if (i === cps.length - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = isBlank(c) || isBreak(c) || c === 0;
  }
  const a: ScalarAnalysis = { multiline: lineBreaks, flowPlainAllowed: true, blockPlainAllowed: true, singleQuotedAllowed: true, blockAllowed: true };
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) {
    a.flowPlainAllowed = false;
    a.blockPlainAllowed = false;
  }
  if (trailingSpace) a.blockAllowed = false;
  if (breakSpace) {
    a.flowPlainAllowed = false;
    a.blockPlainAllowed = false;
    a.singleQuotedAllowed = false;
  }
  if (spaceBreak || specialCharacters) {
    a.flowPlainAllowed = false;
    a.blockPlainAllowed = false;
    a.singleQuotedAllowed = false;
    a.blockAllowed = false;
  }
  if (lineBreaks) {
    a.flowPlainAllowed = false;
    a.blockPlainAllowed = false;
  }
  if (flowIndicators) a.flowPlainAllowed = false;
  if (blockIndicators) a.blockPlainAllowed = false;
  return a;
}

const BEST_WIDTH = 80;
const BEST_INDENT = 2;

class Emitter {
  out = '';
  column = 0;
  indent = -1;
  indents: number[] = [];
  whitespace = true;
  indention = true;
  openEnded = false;
  flowLevel = 0;
  rootContext = false;
  sequenceContext = false;
  mappingContext = false;
  simpleKeyContext = false;

  put(s: string): void {
    this.out += s;
    this.column++;
  }

  putBreak(): void {
    this.out += '\n';
    this.column = 0;
  }

  writeChar(ch: string): void {
    this.out += ch;
    this.column++;
  }

  writeBreakChar(ch: string): void {
    if (ch === '\n') this.putBreak();
    else {
      this.out += ch;
      this.column = 0;
    }
  }

  increaseIndent(flow: boolean, indentless: boolean): void {
    this.indents.push(this.indent);
    if (this.indent < 0) this.indent = flow ? BEST_INDENT : 0;
    else if (!indentless) this.indent += BEST_INDENT;
  }

  popIndent(): void {
    this.indent = this.indents.pop()!;
  }

  writeIndent(): void {
    const indent = Math.max(this.indent, 0);
    if (!this.indention || this.column > indent || (this.column === indent && !this.whitespace)) this.putBreak();
    while (this.column < indent) this.put(' ');
    this.whitespace = true;
    this.indention = true;
  }

  writeIndicator(indicator: string, needWhitespace: boolean, isWhitespace: boolean, isIndention: boolean): void {
    if (needWhitespace && !this.whitespace) this.put(' ');
    for (const ch of indicator) this.writeChar(ch);
    this.whitespace = isWhitespace;
    this.indention = this.indention && isIndention;
    this.openEnded = false;
  }

  setContext(root: boolean, sequence: boolean, mapping: boolean, simpleKey: boolean): void {
    this.rootContext = root;
    this.sequenceContext = sequence;
    this.mappingContext = mapping;
    this.simpleKeyContext = simpleKey;
  }

  /** Emits a node in the current context (emit_node). */
  node(v: unknown, root: boolean, sequence: boolean, mapping: boolean, simpleKey: boolean): void {
    this.setContext(root, sequence, mapping, simpleKey);
    if (Array.isArray(v)) {
      if (this.flowLevel > 0 || v.length === 0) this.flowSequence(v);
      else this.blockSequence(v);
      return;
    }
    if (v !== null && typeof v === 'object' && !(typeof v === 'bigint')) {
      const m = v as Record<string, unknown>;
      const keys = sortKeys(Object.keys(m));
      if (this.flowLevel > 0 || keys.length === 0) this.flowMapping(m, keys);
      else this.blockMapping(m, keys);
      return;
    }
    const [text, requested] = scalarOf(v);
    this.scalar(text, requested);
  }

  flowSequence(items: unknown[]): void {
    this.writeIndicator('[', true, true, false);
    this.increaseIndent(true, false);
    this.flowLevel++;
    items.forEach((item, i) => {
      if (i > 0) this.writeIndicator(',', false, false, false);
      if (this.column > BEST_WIDTH) this.writeIndent();
      this.node(item, false, true, false, false);
    });
    this.flowLevel--;
    this.popIndent();
    this.writeIndicator(']', false, false, false);
  }

  flowMapping(m: Record<string, unknown>, keys: string[]): void {
    this.writeIndicator('{', true, true, false);
    this.increaseIndent(true, false);
    this.flowLevel++;
    keys.forEach((k, i) => {
      if (i > 0) this.writeIndicator(',', false, false, false);
      if (this.column > BEST_WIDTH) this.writeIndent();
      if (isSimpleKey(k)) {
        this.node(k, false, false, true, true);
        this.writeIndicator(':', false, false, false);
      } else {
        this.writeIndicator('?', true, false, false);
        this.node(k, false, false, true, false);
        if (this.column > BEST_WIDTH) this.writeIndent();
        this.writeIndicator(':', true, false, false);
      }
      this.node(m[k], false, false, true, false);
    });
    this.flowLevel--;
    this.popIndent();
    this.writeIndicator('}', false, false, false);
  }

  blockSequence(items: unknown[]): void {
    this.increaseIndent(false, this.mappingContext && !this.indention);
    for (const item of items) {
      this.writeIndent();
      this.writeIndicator('-', true, false, true);
      this.node(item, false, true, false, false);
    }
    this.popIndent();
  }

  blockMapping(m: Record<string, unknown>, keys: string[]): void {
    this.increaseIndent(false, false);
    for (const k of keys) {
      this.writeIndent();
      if (isSimpleKey(k)) {
        this.node(k, false, false, true, true);
        this.writeIndicator(':', false, false, false);
      } else {
        this.writeIndicator('?', true, false, true);
        this.node(k, false, false, true, false);
        this.writeIndent();
        this.writeIndicator(':', true, false, true);
      }
      this.node(m[k], false, false, true, false);
    }
    this.popIndent();
  }

  scalar(value: string, requested: Style): void {
    const a = analyzeScalar(value);
    let style = requested;
    if (this.simpleKeyContext && a.multiline) style = 'double';
    if (style === 'plain') {
      if ((this.flowLevel > 0 && !a.flowPlainAllowed) || (this.flowLevel === 0 && !a.blockPlainAllowed)) style = 'single';
      if (value.length === 0 && (this.flowLevel > 0 || this.simpleKeyContext)) style = 'single';
    }
    if (style === 'single' && !a.singleQuotedAllowed) style = 'double';
    if (style === 'literal' && (!a.blockAllowed || this.flowLevel > 0 || this.simpleKeyContext)) style = 'double';
    this.increaseIndent(true, false);
    const allowBreaks = !this.simpleKeyContext;
    switch (style) {
      case 'plain':
        this.writePlain(value, allowBreaks);
        break;
      case 'single':
        this.writeSingle(value, allowBreaks);
        break;
      case 'double':
        this.writeDouble(value, allowBreaks);
        break;
      case 'literal':
        this.writeLiteral(value);
        break;
    }
    this.popIndent();
  }

  writePlain(value: string, allowBreaks: boolean): void {
    if (!this.whitespace) this.put(' ');
    const cps = [...value];
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < cps.length; i++) {
      const ch = cps[i]!;
      const c = ch.codePointAt(0)!;
      if (c === 0x20) {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && cps[i + 1] !== ' ') this.writeIndent();
        else this.writeChar(ch);
        spaces = true;
      } else if (isBreak(c)) {
        if (!breaks && ch === '\n') this.putBreak();
        this.writeBreakChar(ch);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.writeChar(ch);
        this.indention = false;
        spaces = false;
        breaks = false;
      }
    }
    this.whitespace = false;
    this.indention = false;
    if (this.rootContext) this.openEnded = true;
  }

  writeSingle(value: string, allowBreaks: boolean): void {
    this.writeIndicator("'", true, false, false);
    const cps = [...value];
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < cps.length; i++) {
      const ch = cps[i]!;
      const c = ch.codePointAt(0)!;
      if (c === 0x20) {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && i > 0 && i < cps.length - 1 && cps[i + 1] !== ' ') this.writeIndent();
        else this.writeChar(ch);
        spaces = true;
      } else if (isBreak(c)) {
        if (!breaks && ch === '\n') this.putBreak();
        this.writeBreakChar(ch);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        if (ch === "'") this.put("'");
        this.writeChar(ch);
        this.indention = false;
        spaces = false;
        breaks = false;
      }
    }
    this.writeIndicator("'", false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  writeDouble(value: string, allowBreaks: boolean): void {
    let spaces = false;
    this.writeIndicator('"', true, false, false);
    const cps = [...value];
    for (let i = 0; i < cps.length; i++) {
      const ch = cps[i]!;
      const c = ch.codePointAt(0)!;
      if (!isPrintable(c) || c === 0xfeff || isBreak(c) || ch === '"' || ch === '\\') {
        this.put('\\');
        let esc: string | undefined;
        switch (c) {
          case 0x00: esc = '0'; break;
          case 0x07: esc = 'a'; break;
          case 0x08: esc = 'b'; break;
          case 0x09: esc = 't'; break;
          case 0x0a: esc = 'n'; break;
          case 0x0b: esc = 'v'; break;
          case 0x0c: esc = 'f'; break;
          case 0x0d: esc = 'r'; break;
          case 0x1b: esc = 'e'; break;
          case 0x22: esc = '"'; break;
          case 0x5c: esc = '\\'; break;
          case 0x85: esc = 'N'; break;
          case 0xa0: esc = '_'; break;
          case 0x2028: esc = 'L'; break;
          case 0x2029: esc = 'P'; break;
        }
        if (esc === undefined) {
          if (c <= 0xff) esc = 'x' + c.toString(16).toUpperCase().padStart(2, '0');
          else if (c <= 0xffff) esc = 'u' + c.toString(16).toUpperCase().padStart(4, '0');
          else esc = 'U' + c.toString(16).toUpperCase().padStart(8, '0');
        }
        for (const e of esc) this.put(e);
        spaces = false;
      } else if (c === 0x20) {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && i > 0 && i < cps.length - 1) {
          this.writeIndent();
          if (cps[i + 1] === ' ') this.put('\\');
        } else this.writeChar(ch);
        spaces = true;
      } else {
        this.writeChar(ch);
        spaces = false;
      }
    }
    this.writeIndicator('"', false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  writeLiteral(value: string): void {
    this.writeIndicator('|', true, false, false);
    // block scalar hints
    const cps = [...value];
    if (cps.length > 0 && (cps[0] === ' ' || isBreak(cps[0]!.codePointAt(0)!))) this.writeIndicator(String(BEST_INDENT), false, false, false);
    this.openEnded = false;
    let chomp = '';
    if (cps.length === 0) chomp = '-';
    else {
      const last = cps[cps.length - 1]!.codePointAt(0)!;
      if (!isBreak(last)) chomp = '-';
      else if (cps.length === 1) {
        chomp = '+';
        this.openEnded = true;
      } else if (isBreak(cps[cps.length - 2]!.codePointAt(0)!)) {
        chomp = '+';
        this.openEnded = true;
      }
    }
    if (chomp) this.writeIndicator(chomp, false, false, false);
    this.putBreak();
    this.indention = true;
    this.whitespace = true;
    let breaks = true;
    for (const ch of cps) {
      if (isBreak(ch.codePointAt(0)!)) {
        this.writeBreakChar(ch);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.writeChar(ch);
        this.indention = false;
        breaks = false;
      }
    }
  }
}

/** Whether a mapping key is written as a simple key (check_simple_key). */
function isSimpleKey(k: string): boolean {
  const a = analyzeScalar(k);
  if (a.multiline) return false;
  return Buffer.byteLength(k, 'utf8') <= 128;
}

/** The scalar text and the style the encoder requests for a value. */
function scalarOf(v: unknown): [string, Style] {
  if (v === null || v === undefined) return ['null', 'plain'];
  if (typeof v === 'boolean') return [v ? 'true' : 'false', 'plain'];
  if (typeof v === 'bigint') return [v.toString(), 'plain'];
  if (typeof v === 'number') return [yamlNumber(v), 'plain'];
  const s = String(v);
  const canUsePlain = resolvePlain(s).tag === 'str' && !isBase60Float(s);
  if (s.includes('\n')) return [s, 'literal'];
  return [s, canUsePlain ? 'plain' : 'double'];
}

/** A number as JSONToYAML writes it: integers (int64/uint64 range) as digits, others with %g. */
export function yamlNumber(v: number): string {
  if (Number.isNaN(v)) return '.nan';
  if (v === Infinity) return '.inf';
  if (v === -Infinity) return '-.inf';
  if (Number.isInteger(v) && v >= -(2 ** 63) && v < 2 ** 64) return BigInt(v).toString();
  return formatFloat(v, 'g', -1);
}

/** sigs.k8s.io/yaml's Marshal of a JSON value: one YAML document. */
export function yamlMarshal(v: unknown): string {
  const e = new Emitter();
  e.node(v, true, false, false, false);
  // document end: a final line break; stream end: `...` after an open-ended scalar
  e.writeIndent();
  if (e.openEnded) {
    e.writeIndicator('...', true, false, false);
    e.writeIndent();
  }
  return e.out;
}

// ─────────────────────────────────────────────────────────────────────────────
// Reading
// ─────────────────────────────────────────────────────────────────────────────

export class YAMLToJSONError extends Error {
  override name = 'YAMLToJSONError';
}

type YNode = import('yaml').Node;

function keyString(v: unknown, value: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return '.nan';
    if (v === Infinity) return '.inf';
    if (v === -Infinity) return '-.inf';
    return formatFloat(Math.fround(v), 'g', -1);
  }
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  throw new YAMLToJSONError(`unsupported map key of type: %!s(<nil>), key: <nil>, value: ${sprintf('%#v', toUnstructuredValues(value))}`);
}

/** Converts a YAML node to a JSON value with go-yaml v2 resolution. */
function convert(node: YNode | null | undefined, doc: import('yaml').Document, depth = 0): unknown {
  const Y = yamlLib();
  if (depth > 10000) throw new YAMLToJSONError('yaml: exceeded max depth');
  if (!node) return null;
  if (Y.isAlias(node)) return convert(node.resolve(doc) as YNode, doc, depth + 1);
  if (Y.isScalar(node)) {
    const raw = node.value;
    const tag = node.tag;
    const text = typeof raw === 'string' ? raw : raw === null || raw === undefined ? '' : String(raw);
    const plain = node.type === 'PLAIN' || node.type === undefined;
    if (tag === '!!str' || tag === 'tag:yaml.org,2002:str') return text;
    if (tag === '!!binary' || tag === 'tag:yaml.org,2002:binary') return Buffer.from(text.replace(/\s/g, ''), 'base64').toString('utf8');
    if (!plain && !tag) return text;
    const r = resolvePlain(text);
    if (tag === '!!float' || tag === 'tag:yaml.org,2002:float') {
      if (r.tag === 'int') return Number(r.value as bigint);
      if (r.tag === 'float') return r.value;
    }
    if (!plain) return text;
    switch (r.tag) {
      case 'int':
        // JSON values here are JS numbers: integers beyond 2^53 lose precision
        return Number(r.value as bigint);
      default:
        return r.value;
    }
  }
  if (Y.isMap(node)) {
    const out: Record<string, unknown> = {};
    const merges: unknown[] = [];
    for (const pair of node.items) {
      const k = Y.isNode(pair.key) ? convert(pair.key as YNode, doc, depth + 1) : pair.key;
      if (k === '<<' && Y.isScalar(pair.key) && (pair.key as import('yaml').Scalar).type === 'PLAIN') {
        merges.push(convert(pair.value as YNode, doc, depth + 1));
        continue;
      }
      const value = convert(pair.value as YNode, doc, depth + 1);
      out[keyString(k, value)] = value;
    }
    if (merges.length) {
      const merged: Record<string, unknown> = {};
      for (const m of merges) {
        const list = Array.isArray(m) ? m : [m];
        for (const x of list) {
          if (x === null || typeof x !== 'object' || Array.isArray(x)) throw new YAMLToJSONError('yaml: map merge requires map or sequence of maps as the value');
          for (const [k, v] of Object.entries(x as Record<string, unknown>)) if (!(k in merged)) merged[k] = v;
        }
      }
      for (const [k, v] of Object.entries(merged)) if (!(k in out)) out[k] = v;
    }
    return out;
  }
  if (Y.isSeq(node)) return node.items.map((it) => convert(it as YNode, doc, depth + 1));
  return null;
}

function jsonNumbersAsBigint(text: string): unknown {
  return JSON.parse(text);
}

/** Splits a YAML stream on `---` document separator lines (apimachinery's YAMLReader). */
export function splitYAMLDocuments(text: string): string[] {
  const docs: string[] = [];
  let cur: string[] = [];
  for (const line of text.split(/(?<=\n)/)) {
    const t = line.replace(/\r?\n$/, '');
    if (t.startsWith('---') && t.replace(/\s+$/, '') === '---') {
      if (cur.length) docs.push(cur.join(''));
      cur = [];
      continue;
    }
    if (/^---\s/.test(t)) {
      if (cur.length) docs.push(cur.join(''));
      cur = [line.slice(4)];
      continue;
    }
    cur.push(line);
  }
  if (cur.length) docs.push(cur.join(''));
  return docs;
}

/** Parses one YAML document to JSON (sigs.k8s.io/yaml YAMLToJSON); null for an empty document. */
export function yamlToJSON(text: string): unknown {
  const Y = yamlLib();
  const doc = Y.parseDocument(text, { schema: 'failsafe', uniqueKeys: false, version: '1.1', merge: false, prettyErrors: false, strict: false });
  if (doc.errors.length) throw new YAMLToJSONError(yamlErrorMessage(text, doc.errors[0]!));
  return convert(doc.contents as YNode, doc);
}

/**
 * go-yaml v2's message for the syntax errors people make most, from the YAML library's error
 * (`yaml: line N: mapping values are not allowed in this context`, ...). Scanner errors name
 * the 1-based line of the problem (none on the first line); parser errors name libyaml's
 * 0-based mark line, which at the end of the input is the line after the last one.
 */
function yamlErrorMessage(text: string, e: import('yaml').YAMLError): string {
  const pos = Math.min(e.pos[0], text.length);
  const lineOf0 = (p: number) => text.slice(0, p).split('\n').length - 1;
  const scanner = (line0: number, msg: string) => `yaml: ${line0 !== 0 ? `line ${line0 + 1}: ` : ''}${msg}`;
  const parser = (line0: number, msg: string) => `yaml: ${line0 !== 0 ? `line ${line0}: ` : ''}${msg}`;
  const eofLine0 = () => {
    const n = (text.match(/\n/g) ?? []).length;
    return text.length > 0 && !text.endsWith('\n') ? n + 1 : n;
  };
  switch (e.code) {
    case 'BLOCK_AS_IMPLICIT_KEY':
    case 'MULTILINE_IMPLICIT_KEY': {
      const m = /:(?=[ \t\r\n]|$)/.exec(text.slice(pos));
      const at = m ? pos + m.index : pos;
      return scanner(lineOf0(at), 'mapping values are not allowed in this context');
    }
    case 'BAD_INDENT':
    case 'MISSING_CHAR': {
      if (/quote/i.test(e.message)) return scanner((text.match(/\n/g) ?? []).length, 'found unexpected end of stream');
      const flow = /Flow (sequence|map)/.exec(e.message);
      if (flow) {
        const open = flow[1] === 'sequence' ? '[' : '{';
        const close = flow[1] === 'sequence' ? ']' : '}';
        const start = text.lastIndexOf(open, pos);
        const inside = start >= 0 ? text.slice(start + 1).trim() : '';
        return parser(eofLine0(), inside === '' ? 'did not find expected node content' : `did not find expected ',' or '${close}'`);
      }
      break;
    }
    case 'TAB_AS_INDENT':
    case 'BAD_SCALAR_START':
      return scanner(lineOf0(pos), 'found character that cannot start any token');
    case 'UNEXPECTED_TOKEN':
      if (/Unexpected scalar at node end/.test(e.message) && /^\s*- /m.test(text)) return parser(lineOf0(pos), "did not find expected '-' indicator");
      break;
  }
  const line = e.linePos?.[0]?.line ?? lineOf0(pos) + 1;
  const msg = e.message.replace(/ at line \d+, column \d+:?[\s\S]*$/, '').replace(/\.$/, '');
  return `yaml: line ${line}: ${msg.charAt(0).toLowerCase()}${msg.slice(1)}`;
}

/**
 * The JSON documents of a manifest stream, as kubectl's YAMLOrJSONDecoder reads them: a stream
 * starting with `{` is a sequence of JSON values; anything else is YAML documents. Empty
 * documents are left out.
 */
export function yamlToJSONDocuments(text: string): unknown[] {
  const trimmed = text.replace(/^[\s\uFEFF]+/, '');
  if (trimmed.startsWith('{')) return parseJSONStream(trimmed);
  const out: unknown[] = [];
  for (const d of splitYAMLDocuments(text)) {
    const v = yamlToJSON(d);
    if (v === null || v === undefined) continue;
    out.push(v);
  }
  return out;
}

/** Concatenated JSON values (json.Decoder). */
export function parseJSONStream(text: string): unknown[] {
  const out: unknown[] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i >= text.length) break;
    const end = jsonValueEnd(text, i);
    out.push(jsonNumbersAsBigint(text.slice(i, end)));
    i = end;
  }
  return out;
}

function jsonValueEnd(s: string, i: number): number {
  let depth = 0;
  let inStr = false;
  for (let j = i; j < s.length; j++) {
    const c = s[j]!;
    if (inStr) {
      if (c === '\\') j++;
      else if (c === '"') {
        inStr = false;
        if (depth === 0) return j + 1;
      }
      continue;
    }
    if (c === '"') inStr = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return j + 1;
    } else if (depth === 0 && /[\s,]/.test(c)) return j;
  }
  if (depth > 0 || inStr) throw new SyntaxError('unexpected EOF');
  return s.length;
}
