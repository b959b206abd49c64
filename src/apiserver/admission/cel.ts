// matchConditions: the CEL expressions a webhook uses to narrow the requests it is sent. Each is
// evaluated with `object`, `oldObject` and `request` (the AdmissionRequest without its objects);
// the webhook is called only when all are true. A false condition skips the webhook even when
// another failed to evaluate; otherwise an error fails the request (failurePolicy Fail) or skips
// the webhook (Ignore).
//
// This is a small interpreter of the part of CEL match conditions and ValidatingAdmissionPolicy
// (vap.ts) use: literals (int, uint, double, string, bytes, bool, null), lists and maps, field
// selection and indexing, has(), the operators (! - * / % + < <= > >= == != in && || ?:), the
// macros all, exists, exists_one, map and filter, and the functions size, contains, startsWith,
// endsWith, matches, lowerAscii, upperAscii, trim, split, join, indexOf, lastIndexOf, replace,
// substring, charAt, int, uint, double, string, bool, dyn and type; of Kubernetes' libraries:
// regex find/findAll, lists isSorted/sum/min/max/indexOf/lastIndexOf, quantity (quantity(),
// isQuantity(), sign, isInteger, asInteger, asApproximateFloat, add, sub, compareTo,
// isGreaterThan, isLessThan) and the authorizer (group/resource/subresource/namespace/name/path,
// serviceAccount, requestResource, check(verb).allowed()/reason()); optionals (`a.?b`, `m[?k]`,
// optional.of/none/ofNonZeroValue, hasValue, value, orValue, or); timestamps and durations
// (celtime.ts: timestamp(), duration(), their arithmetic, comparisons and accessors); cel-go's
// strings extension as Kubernetes enables it (format(), strings.quote(), indexOf/lastIndexOf with
// an offset, split with a limit) and its sets library (sets.contains, equivalent, intersects); of
// Kubernetes' libraries also ip() and cidr() with their methods, url(), semver() and the named
// formats (`format.dns1123Label().validate(s)`; celext.ts holds the values of these); two-variable
// comprehensions (all, exists, existsOne, transformList, transformMap, transformMapEntry). Not
// supported: the image library, type checking and cost limits; the math and base64 libraries are
// not Kubernetes' either. Integers are 64-bit (bigint); && and || are
// commutative over errors, as in CEL.
import { re2 } from '../../machinery/re2.js';
import type { AdmissionAttributes } from './types.js';
import { admissionRequest } from './webhook.js';
import type { Authorizer, UserInfo } from '../authz.js';
import { cmpQuantity, parseQuantity, quantityString, type Quantity } from '../../schema/validation/quantity.js';
import { CelDuration, CelTimestamp, durationOf, floorDiv, formatDuration, formatTimestamp, parseDuration, parseTimestamp, timeMethod, timestampOf } from './celtime.js';
import { CelCIDR, CelFormat, CelIP, CelLibraryError, CelSemver, CelURL, compareSemver, ipIsCanonical, ipMethod, NAMED_FORMATS, parseCIDR, parseIP, parseSemver, parseURL, quote, sprintf, urlMethod, type FormatArg } from './celext.js';

// ---------------------------------------------------------------------------------------------
// values

class Uint {
  constructor(readonly v: bigint) {}
}

export class CelError extends Error {}

/**
 * An evaluation that went past its cost limit, with cel-go's message. The cost here is one unit per
 * expression node evaluated (each iteration of a comprehension evaluates its body again); cel-go
 * counts comparable units, and charges some functions by the size of their arguments, which this
 * interpreter does not, so the same expression can cost more there than here.
 */
export class CelCostLimitError extends CelError {
  constructor() {
    super('operation cancelled: actual cost limit exceeded');
  }
}

/** Kubernetes' per-call cost limit of a CEL expression (celconfig.PerCallLimit) */
export const CEL_PER_CALL_LIMIT = 1_000_000;

/** what the evaluation under way may still spend (evaluations are synchronous: one at a time) */
let costLeft = Infinity;

/** a function this interpreter does not have (cel-go and Kubernetes' libraries may: timestamps, url, ip, sets, ...) */
export class CelUnsupportedError extends CelError {}

/** the namespaces of CEL libraries' functions (those Keelson has: libraryCall) */
const CEL_NAMESPACES = new Set(['sets', 'math', 'strings', 'base64', 'format', 'ip']);

/** optional_type: optional.of(v), optional.none(), `a.?b`, `m[?k]` */
class CelOptional {
  constructor(
    readonly present: boolean,
    readonly value: unknown,
  ) {}
}
const NONE = new CelOptional(false, null);

/** Kubernetes' quantity library: an opaque resource.Quantity */
class CelQuantity {
  constructor(readonly q: Quantity) {}
}

/**
 * Kubernetes' authorizer library: `authorizer` (and `authorizer.serviceAccount(ns, name)`) builds
 * a check step by step (group, resource, subresource, namespace, name, or path) and `check(verb)`
 * asks the server's authorizer, answering a decision (allowed(), reason(), errored(), error()).
 */
class CelAuthz {
  constructor(
    readonly authz: Authorizer,
    readonly user: UserInfo,
    readonly attrs: { path?: string; apiGroup?: string; resource?: string; subresource?: string; namespace?: string; name?: string; resourceRequest: boolean },
    /** the request's own resource, for `authorizer.requestResource` */
    readonly request?: { group: string; resource: string; subresource: string; namespace: string; name: string },
  ) {}
  with(more: Partial<CelAuthz['attrs']>): CelAuthz {
    return new CelAuthz(this.authz, this.user, { ...this.attrs, ...more }, this.request);
  }
}

class CelDecision {
  constructor(
    readonly decision: string,
    readonly reason: string,
  ) {}
}

/** the value of the CEL variable `authorizer`: checks as `user` through the server's authorizer */
export function celAuthorizer(authz: Authorizer, user: UserInfo, request?: { group: string; resource: string; subresource: string; namespace: string; name: string }): unknown {
  return new CelAuthz(authz, user, { resourceRequest: false }, request);
}

type Value =
  | null
  | boolean
  | bigint
  | number
  | string
  | Uint
  | Uint8Array
  | Value[]
  | Map<unknown, Value>
  | { [k: string]: unknown }
  | CelType
  | CelQuantity
  | CelAuthz
  | CelDecision
  | CelOptional
  | CelTimestamp
  | CelDuration
  | CelIP
  | CelCIDR
  | CelURL
  | CelSemver
  | CelFormat;

class CelType {
  constructor(readonly name: string) {}
}

function typeName(v: unknown): string {
  if (v === null || v === undefined) return 'null_type';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'string') return 'string';
  if (v instanceof Uint) return 'uint';
  if (v instanceof Uint8Array) return 'bytes';
  if (Array.isArray(v)) return 'list';
  if (v instanceof CelType) return 'type';
  if (v instanceof CelQuantity) return 'kubernetes.Quantity';
  if (v instanceof CelOptional) return 'optional_type';
  if (v instanceof CelTimestamp) return 'google.protobuf.Timestamp';
  if (v instanceof CelDuration) return 'google.protobuf.Duration';
  if (v instanceof CelAuthz) return 'kubernetes.authorization.Authorizer';
  if (v instanceof CelDecision) return 'kubernetes.authorization.Decision';
  if (v instanceof CelIP) return 'net.IP';
  if (v instanceof CelCIDR) return 'net.CIDR';
  if (v instanceof CelURL) return 'kubernetes.URL';
  if (v instanceof CelSemver) return 'kubernetes.Semver';
  if (v instanceof CelFormat) return 'kubernetes.NamedFormat';
  return 'map';
}

/** a JSON value as CEL sees it: integral numbers are ints */
function fromJSON(v: unknown): Value {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (v === undefined) return null;
  return v as Value;
}

function isMap(v: unknown): v is Record<string, unknown> | Map<unknown, Value> {
  return typeName(v) === 'map';
}

function mapGet(m: Record<string, unknown> | Map<unknown, Value>, k: unknown): { found: boolean; v?: Value } {
  if (m instanceof Map) {
    for (const [key, val] of m) if (equals(key as Value, k as Value)) return { found: true, v: val };
    return { found: false };
  }
  if (typeof k !== 'string') return { found: false };
  if (Object.prototype.hasOwnProperty.call(m, k) && m[k] !== undefined) return { found: true, v: fromJSON(m[k]) };
  return { found: false };
}

function mapEntries(m: Record<string, unknown> | Map<unknown, Value>): [Value, Value][] {
  if (m instanceof Map) return [...m.entries()] as [Value, Value][];
  return Object.entries(m)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => [k, fromJSON(v)]);
}

function num(v: Value): number | undefined {
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number') return v;
  if (v instanceof Uint) return Number(v.v);
  return undefined;
}

function equals(a: Value, b: Value): boolean {
  const na = num(a);
  const nb = num(b);
  if (na !== undefined && nb !== undefined) {
    if (typeof a === 'bigint' && typeof b === 'bigint') return a === b;
    return na === nb;
  }
  const ta = typeName(a);
  if (ta !== typeName(b)) return false;
  switch (ta) {
    case 'null_type':
      return true;
    case 'bytes':
      return Buffer.from(a as Uint8Array).equals(Buffer.from(b as Uint8Array));
    case 'list': {
      const x = a as Value[];
      const y = b as Value[];
      return x.length === y.length && x.every((v, i) => equals(fromJSON(v), fromJSON(y[i])));
    }
    case 'map': {
      const x = mapEntries(a as any);
      const y = b as any;
      if (x.length !== mapEntries(y).length) return false;
      return x.every(([k, v]) => {
        const r = mapGet(y, k);
        return r.found && equals(v, r.v!);
      });
    }
    case 'type':
      return (a as CelType).name === (b as CelType).name;
    case 'kubernetes.Quantity':
      return cmpQuantity((a as CelQuantity).q, (b as CelQuantity).q) === 0;
    case 'google.protobuf.Timestamp':
    case 'google.protobuf.Duration':
      return (a as CelTimestamp).ns === (b as CelTimestamp).ns;
    case 'optional_type': {
      const x = a as CelOptional;
      const y = b as CelOptional;
      return x.present === y.present && (!x.present || equals(fromJSON(x.value), fromJSON(y.value)));
    }
    case 'net.IP':
    case 'net.CIDR':
      return String(a) === String(b);
    case 'kubernetes.URL': {
      const x = a as CelURL;
      const y = b as CelURL;
      return x.scheme === y.scheme && x.host === y.host && x.path === y.path && x.rawQuery === y.rawQuery;
    }
    case 'kubernetes.Semver':
      return compareSemver(a as CelSemver, b as CelSemver) === 0;
    case 'kubernetes.NamedFormat':
      return (a as CelFormat).name === (b as CelFormat).name;
    default:
      return a === b;
  }
}

function compare(a: Value, b: Value): number {
  const na = num(a);
  const nb = num(b);
  if (na !== undefined && nb !== undefined) {
    if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
    return na < nb ? -1 : na > nb ? 1 : 0;
  }
  const ta = typeName(a);
  if (ta === typeName(b)) {
    if (ta === 'string') return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
    if (ta === 'bool') return Number(a) - Number(b);
    if (a instanceof CelTimestamp || a instanceof CelDuration) {
      const x = a.ns;
      const y = (b as CelTimestamp).ns;
      return x < y ? -1 : x > y ? 1 : 0;
    }
  }
  throw new CelError(`no such overload: ${ta} < ${typeName(b)}`);
}

// ---------------------------------------------------------------------------------------------
// lexer

type Tok = { t: 'num' | 'str' | 'bytes' | 'id' | 'op' | 'eof'; v: any; pos: number };

const OPS = ['.?', '[?', '&&', '||', '==', '!=', '<=', '>=', '<', '>', '!', '+', '-', '*', '/', '%', '?', ':', '.', ',', '(', ')', '[', ']', '{', '}'];

function lex(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '/' && src[i + 1] === '/') {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    const start = i;
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      let m = /^0[xX][0-9a-fA-F]+[uU]?/.exec(src.slice(i));
      if (m) {
        const s = m[0];
        i += s.length;
        const u = /[uU]$/.test(s);
        const v = BigInt(u ? s.slice(0, -1) : s);
        out.push({ t: 'num', v: u ? new Uint(v) : v, pos: start });
        continue;
      }
      m = /^(?:[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|[0-9]+[uU]?)/.exec(src.slice(i))!;
      const s = m[0];
      i += s.length;
      if (/[.eE]/.test(s)) out.push({ t: 'num', v: Number(s), pos: start });
      else if (/[uU]$/.test(s)) out.push({ t: 'num', v: new Uint(BigInt(s.slice(0, -1))), pos: start });
      else out.push({ t: 'num', v: BigInt(s), pos: start });
      continue;
    }
    const strStart = /^([rRbB]{0,2})("""|'''|"|')/.exec(src.slice(i));
    if (strStart && (strStart[1] === '' || /^[rRbB]{1,2}$/.test(strStart[1]!))) {
      const prefix = strStart[1]!.toLowerCase();
      const quote = strStart[2]!;
      i += strStart[0].length;
      let s = '';
      for (;;) {
        if (i >= src.length) throw new CelError(`Syntax error: unterminated string at ${start}`);
        if (src.startsWith(quote, i)) {
          i += quote.length;
          break;
        }
        const ch = src[i]!;
        if (ch === '\\' && !prefix.includes('r')) {
          const n = src[i + 1];
          const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'", '`': '`', '?': '?', a: '\x07', b: '\b', f: '\f', v: '\v' };
          if (n !== undefined && n in simple) {
            s += simple[n];
            i += 2;
            continue;
          }
          const hex = /^\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|([0-3][0-7]{2}))/.exec(src.slice(i));
          if (hex) {
            const code = hex[1] ?? hex[2] ?? hex[3];
            s += String.fromCodePoint(code ? parseInt(code, 16) : parseInt(hex[4]!, 8));
            i += hex[0].length;
            continue;
          }
          throw new CelError(`Syntax error: invalid escape at ${i}`);
        }
        if ((ch === '\n' || ch === '\r') && quote.length === 1) throw new CelError(`Syntax error: newline in string at ${start}`);
        s += ch;
        i++;
      }
      out.push(prefix.includes('b') ? { t: 'bytes', v: Buffer.from(s, 'utf8'), pos: start } : { t: 'str', v: s, pos: start });
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
    if (id) {
      i += id[0].length;
      out.push({ t: 'id', v: id[0], pos: start });
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw new CelError(`Syntax error: unexpected character ${JSON.stringify(c)} at ${i}`);
    i += op.length;
    out.push({ t: 'op', v: op, pos: start });
  }
  out.push({ t: 'eof', v: '', pos: src.length });
  return out;
}

// ---------------------------------------------------------------------------------------------
// parser

/** a parsed CEL expression (celParse) */
export type CelNode = Node;

type Node =
  | { k: 'lit'; v: Value }
  | { k: 'id'; name: string; pos?: number }
  | { k: 'sel'; target: Node; field: string; test?: boolean; optional?: boolean; pos?: number }
  | { k: 'index'; target: Node; index: Node; optional?: boolean }
  | { k: 'call'; fn: string; target?: Node; args: Node[] }
  | { k: 'list'; items: Node[] }
  | { k: 'map'; entries: [Node, Node][] }
  | { k: 'unary'; op: string; arg: Node }
  | { k: 'bin'; op: string; l: Node; r: Node }
  | { k: 'cond'; c: Node; t: Node; f: Node }
  | { k: 'macro'; fn: string; target: Node; v: string; args: Node[]; v2?: string };

const MACROS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
const RESERVED = new Set(['in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

function parse(src: string): Node {
  const toks = lex(src);
  let p = 0;
  const peek = () => toks[p]!;
  const next = () => toks[p++]!;
  const isOp = (v: string) => peek().t === 'op' && peek().v === v;
  const isId = (v: string) => peek().t === 'id' && peek().v === v;
  const expect = (v: string) => {
    if (!isOp(v)) throw new CelError(`Syntax error: expected ${JSON.stringify(v)} at ${peek().pos}`);
    next();
  };

  const expr = (): Node => {
    const c = or();
    if (isOp('?')) {
      next();
      const t = or();
      expect(':');
      const f = expr();
      return { k: 'cond', c, t, f };
    }
    return c;
  };
  const or = (): Node => {
    let l = and();
    while (isOp('||')) {
      next();
      l = { k: 'bin', op: '||', l, r: and() };
    }
    return l;
  };
  const and = (): Node => {
    let l = relation();
    while (isOp('&&')) {
      next();
      l = { k: 'bin', op: '&&', l, r: relation() };
    }
    return l;
  };
  const relation = (): Node => {
    let l = addition();
    for (;;) {
      const t = peek();
      if ((t.t === 'op' && ['<', '<=', '>', '>=', '==', '!='].includes(t.v)) || (t.t === 'id' && t.v === 'in')) {
        next();
        l = { k: 'bin', op: t.v, l, r: addition() };
      } else return l;
    }
  };
  const addition = (): Node => {
    let l = multiplication();
    while (isOp('+') || isOp('-')) {
      const op = next().v;
      l = { k: 'bin', op, l, r: multiplication() };
    }
    return l;
  };
  const multiplication = (): Node => {
    let l = unary();
    while (isOp('*') || isOp('/') || isOp('%')) {
      const op = next().v;
      l = { k: 'bin', op, l, r: unary() };
    }
    return l;
  };
  const unary = (): Node => {
    if (isOp('!')) {
      next();
      return { k: 'unary', op: '!', arg: unary() };
    }
    if (isOp('-')) {
      next();
      const t = peek();
      if (t.t === 'num' && typeof t.v === 'bigint') {
        next();
        return member({ k: 'lit', v: -t.v });
      }
      return { k: 'unary', op: '-', arg: unary() };
    }
    return member(primary());
  };
  const args = (): Node[] => {
    const out: Node[] = [];
    expect('(');
    if (!isOp(')')) {
      out.push(expr());
      while (isOp(',')) {
        next();
        out.push(expr());
      }
    }
    expect(')');
    return out;
  };
  const member = (n: Node): Node => {
    for (;;) {
      if (isOp('.?') || isOp('[?')) {
        // optional selection and indexing (CEL's optional syntax)
        const opTok = next();
        const op = opTok.v;
        if (op === '[?') {
          const index = expr();
          expect(']');
          n = { k: 'index', target: n, index, optional: true };
        } else {
          const id = next();
          if (id.t !== 'id') throw new CelError(`Syntax error: expected a field name at ${id.pos}`);
          n = { k: 'sel', target: n, field: id.v, optional: true, pos: opTok.pos };
        }
      } else if (isOp('.')) {
        const dot = next();
        const id = next();
        if (id.t !== 'id') throw new CelError(`Syntax error: expected a field name at ${id.pos}`);
        if (isOp('(')) {
          const a = args();
          if (TWO_VAR_MACROS.has(id.v) && a.length >= 3 && a[0]!.k === 'id' && a[1]!.k === 'id' && (a.length === 3 || id.v.startsWith('transform'))) {
            // cel-go's two-variable comprehensions (Kubernetes 1.32): index or key, and value
            n = { k: 'macro', fn: id.v, target: n, v: (a[0] as any).name, v2: (a[1] as any).name, args: a.slice(2) };
          } else if (MACROS.has(id.v) && a.length >= 2 && a[0]!.k === 'id') {
            n = { k: 'macro', fn: id.v, target: n, v: (a[0] as any).name, args: a.slice(1) };
          } else n = { k: 'call', fn: id.v, target: n, args: a };
        } else n = { k: 'sel', target: n, field: id.v, pos: dot.pos };
      } else if (isOp('[')) {
        next();
        const index = expr();
        expect(']');
        n = { k: 'index', target: n, index };
      } else return n;
    }
  };
  const primary = (): Node => {
    const t = next();
    switch (t.t) {
      case 'num':
      case 'str':
      case 'bytes':
        return { k: 'lit', v: t.v };
      case 'id': {
        if (t.v === 'true') return { k: 'lit', v: true };
        if (t.v === 'false') return { k: 'lit', v: false };
        if (t.v === 'null') return { k: 'lit', v: null };
        if (RESERVED.has(t.v)) throw new CelError(`Syntax error: reserved identifier ${t.v}`);
        if (isOp('(')) {
          const open = peek().pos;
          const a = args();
          if (t.v === 'has') {
            if (a.length !== 1 || a[0]!.k !== 'sel') throw new CelError('invalid argument to has() macro');
            return { ...(a[0] as any), test: true, pos: open };
          }
          return { k: 'call', fn: t.v, args: a };
        }
        return { k: 'id', name: t.v, pos: t.pos };
      }
      case 'op':
        if (t.v === '.') {
          const id = next();
          if (id.t !== 'id') throw new CelError(`Syntax error: expected an identifier at ${id.pos}`);
          return { k: 'id', name: id.v };
        }
        if (t.v === '(') {
          const e = expr();
          expect(')');
          return e;
        }
        if (t.v === '[') {
          const items: Node[] = [];
          if (!isOp(']')) {
            items.push(expr());
            while (isOp(',')) {
              next();
              if (isOp(']')) break;
              items.push(expr());
            }
          }
          expect(']');
          return { k: 'list', items };
        }
        if (t.v === '{') {
          const entries: [Node, Node][] = [];
          if (!isOp('}')) {
            for (;;) {
              const key = expr();
              expect(':');
              entries.push([key, expr()]);
              if (!isOp(',')) break;
              next();
              if (isOp('}')) break;
            }
          }
          expect('}');
          return { k: 'map', entries };
        }
        throw new CelError(`Syntax error: unexpected ${JSON.stringify(t.v)} at ${t.pos}`);
      default:
        throw new CelError(`Syntax error: unexpected end of expression`);
    }
  };
  const root = expr();
  if (peek().t !== 'eof') throw new CelError(`Syntax error: unexpected ${JSON.stringify(peek().v)} at ${peek().pos}`);
  void isId;
  return root;
}

// ---------------------------------------------------------------------------------------------
// evaluation

type Env = Map<string, Value>;

const INT_MIN = -(2n ** 63n);
const INT_MAX = 2n ** 63n - 1n;

function checkInt(v: bigint): bigint {
  if (v < INT_MIN || v > INT_MAX) throw new CelError('return error for overflow');
  return v;
}

/**
 * A field name as Kubernetes' CEL escaping writes it, unescaped: `__underscores__` is `__`,
 * `__dot__` `.`, `__dash__` `-`, `__slash__` `/`, and `__<keyword>__` a CEL keyword.
 */
export function unescapeFieldName(name: string): string {
  const kw = /^__(\w+)__$/.exec(name)?.[1];
  if (kw !== undefined && (RESERVED.has(kw) || kw === 'true' || kw === 'false' || kw === 'null')) return kw;
  return name.replace(/__(underscores|dot|dash|slash)__/g, (_m, w: string) => ({ underscores: '__', dot: '.', dash: '-', slash: '/' })[w]!);
}

function select(target: Value, field: string, test: boolean): Value {
  if (target instanceof CelAuthz && field === 'requestResource' && !test) {
    const r = target.request;
    if (!r) throw new CelError('no such key: requestResource');
    return target.with({ resourceRequest: true, apiGroup: r.group, resource: r.resource, subresource: r.subresource, namespace: r.namespace, name: r.name });
  }
  if (isMap(target)) {
    let r = mapGet(target as any, field);
    // a member whose name CEL cannot spell is selected by its escaped name (Kubernetes' escaping)
    if (!r.found && field.includes('__')) r = mapGet(target as any, unescapeFieldName(field));
    if (test) return r.found;
    if (!r.found) throw new CelError(`no such key: ${field}`);
    return r.v!;
  }
  throw new CelError(`unsupported type for field selection: ${typeName(target)}`);
}

function index(target: Value, i: Value): Value {
  if (Array.isArray(target)) {
    const n = typeof i === 'bigint' ? i : i instanceof Uint ? i.v : typeof i === 'number' && Number.isInteger(i) ? BigInt(i) : undefined;
    if (n === undefined) throw new CelError(`no such overload: list[${typeName(i)}]`);
    if (n < 0n || n >= BigInt(target.length)) throw new CelError(`index out of bounds: ${n}`);
    return fromJSON(target[Number(n)]);
  }
  if (isMap(target)) {
    const r = mapGet(target as any, i);
    if (!r.found) throw new CelError(`no such key: ${typeof i === 'string' ? i : String(i)}`);
    return r.v!;
  }
  throw new CelError(`no such overload: ${typeName(target)}[${typeName(i)}]`);
}

function truthy(v: Value, what: string): boolean {
  if (typeof v !== 'boolean') throw new CelError(`no such overload: ${what} on ${typeName(v)}`);
  return v;
}

function arith(op: string, a: Value, b: Value): Value {
  if (typeof a === 'bigint' && typeof b === 'bigint') {
    switch (op) {
      case '+':
        return checkInt(a + b);
      case '-':
        return checkInt(a - b);
      case '*':
        return checkInt(a * b);
      case '/':
        if (b === 0n) throw new CelError('division by zero');
        return checkInt(a / b);
      case '%':
        if (b === 0n) throw new CelError('modulus by zero');
        return a % b;
    }
  }
  if (a instanceof Uint && b instanceof Uint) {
    const r = arith(op, a.v, b.v) as bigint;
    if (r < 0n) throw new CelError('return error for overflow');
    return new Uint(r);
  }
  if (typeof a === 'number' && typeof b === 'number' && op !== '%') {
    return op === '+' ? a + b : op === '-' ? a - b : op === '*' ? a * b : a / b;
  }
  // timestamps and durations: ts - ts, ts ± dur, dur + ts, dur ± dur
  if (op === '+' || op === '-') {
    const err = (m: string) => new CelError(m);
    if (a instanceof CelTimestamp && b instanceof CelTimestamp && op === '-') return durationOf(a.ns - b.ns, err);
    if (a instanceof CelTimestamp && b instanceof CelDuration) return timestampOf(op === '+' ? a.ns + b.ns : a.ns - b.ns, err);
    if (a instanceof CelDuration && b instanceof CelTimestamp && op === '+') return timestampOf(a.ns + b.ns, err);
    if (a instanceof CelDuration && b instanceof CelDuration) return durationOf(op === '+' ? a.ns + b.ns : a.ns - b.ns, err);
  }
  if (op === '+' && typeof a === 'string' && typeof b === 'string') return a + b;
  if (op === '+' && Array.isArray(a) && Array.isArray(b)) return [...a, ...b];
  if (op === '+' && a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.concat([a, b]);
  throw new CelError(`no such overload: ${typeName(a)} ${op} ${typeName(b)}`);
}

function toStr(v: Value): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Uint) return v.v.toString();
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) < 1e21 ? `${v}` : String(v);
  if (typeof v === 'boolean') return String(v);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (v instanceof CelQuantity) return quantityString(v.q);
  if (v instanceof CelTimestamp) return formatTimestamp(v.ns);
  if (v instanceof CelDuration) return formatDuration(v.ns);
  if (v instanceof CelIP || v instanceof CelCIDR) return v.toString();
  throw new CelError(`no such overload: string(${typeName(v)})`);
}

/** a library function's result, its CelLibraryError an evaluation error */
function libraryResult<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof CelLibraryError) throw new CelError(e.message);
    throw e;
  }
}

function call(fn: string, target: Value | undefined, args: Value[]): Value {
  return libraryResult(() => callFunction(fn, target, args));
}

function callFunction(fn: string, target: Value | undefined, args: Value[]): Value {
  const t = target;
  const str = (v: Value | undefined) => {
    if (typeof v !== 'string') throw new CelError(`no such overload: ${fn} on ${typeName(v as Value)}`);
    return v;
  };
  const arg = (i: number) => {
    if (args.length <= i) throw new CelError(`no matching overload for '${fn}'`);
    return args[i]!;
  };
  if (t instanceof CelQuantity || t instanceof CelAuthz || t instanceof CelDecision) return opaqueMethod(fn, t, args);
  if (t instanceof CelTimestamp || t instanceof CelDuration) {
    const r = timeMethod(fn, t, args, (m) => new CelError(m));
    if (r === undefined) throw new CelError(`no such overload: ${typeName(t)}.${fn}`);
    return r;
  }
  if (Array.isArray(t) && LIST_METHODS.has(fn)) return listMethod(fn, t.map(fromJSON), args);
  if (t instanceof CelIP || t instanceof CelCIDR || t instanceof CelURL || t instanceof CelSemver || t instanceof CelFormat) return libraryMethod(fn, t, args);
  switch (fn) {
    case 'ip':
      return parseIP(str(arg(0)));
    case 'isIP':
      return succeeds(() => parseIP(str(arg(0))));
    case 'cidr':
      return parseCIDR(str(arg(0)));
    case 'isCIDR':
      return succeeds(() => parseCIDR(str(arg(0))));
    case 'url':
      return parseURL(str(arg(0)));
    case 'isURL':
      return succeeds(() => parseURL(str(arg(0))));
    case 'semver':
      return parseSemver(str(arg(0)), args.length > 1 && arg(1) === true);
    case 'isSemver':
      return succeeds(() => parseSemver(str(arg(0)), args.length > 1 && arg(1) === true));
    case 'format': {
      // (a member of strings only: there is no global format())
      if (t === undefined) throw new CelUnsupportedError("undeclared reference to 'format'");
      const list = arg(0);
      if (!Array.isArray(list)) throw new CelError(`no such overload: string.format(${typeName(list)})`);
      return sprintf(str(t), list.map((v) => formatArg(fromJSON(v))));
    }
    case 'timestamp': {
      const v = arg(0);
      if (v instanceof CelTimestamp) return v;
      if (typeof v === 'bigint') return timestampOf(v * 1_000_000_000n, (m) => new CelError(m));
      const ns = parseTimestamp(str(v));
      if (ns === undefined) throw new CelError(`String "${str(v)}" is not a valid timestamp`);
      return timestampOf(ns, (m) => new CelError(m));
    }
    case 'duration': {
      const v = arg(0);
      if (v instanceof CelDuration) return v;
      const ns = parseDuration(str(v));
      if (ns === undefined) throw new CelError(`String "${str(v)}" is not a valid duration`);
      return durationOf(ns, (m) => new CelError(m));
    }
    case 'quantity': {
      const q = parseQuantity(str(arg(0)));
      if (!q) throw new CelError('quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'');
      return new CelQuantity(q);
    }
    case 'isQuantity':
      return parseQuantity(str(arg(0))) !== null;
    case 'replace': {
      const from = str(arg(0));
      const to = str(arg(1));
      const n = args.length > 2 ? Number(arg(2) as bigint) : -1;
      if (n < 0) return str(t).split(from).join(to);
      let out = str(t);
      let done = '';
      for (let i = 0; i < n; i++) {
        const at = out.indexOf(from);
        if (at < 0) break;
        done += out.slice(0, at) + to;
        out = out.slice(at + from.length);
      }
      return done + out;
    }
    case 'substring': {
      const cps = [...str(t)];
      const b = Number(arg(0) as bigint);
      const e = args.length > 1 ? Number(arg(1) as bigint) : cps.length;
      if (b < 0 || b > cps.length) throw new CelError(`index out of range: ${b}`);
      if (e < b || e > cps.length) throw new CelError(`index out of range: ${e}`);
      return cps.slice(b, e).join('');
    }
    case 'charAt': {
      const cps = [...str(t)];
      const i = Number(arg(0) as bigint);
      if (i < 0 || i > cps.length) throw new CelError(`index out of range: ${i}`);
      return cps[i] ?? '';
    }
    case 'find':
    case 'findAll': {
      let re: RegExp;
      try {
        re = re2(str(arg(0)), 'g');
      } catch (e) {
        throw new CelError(`invalid regular expression: ${(e as Error).message}`);
      }
      const all = [...str(t).matchAll(re)].map((m) => m[0]);
      if (fn === 'find') return all[0] ?? '';
      const limit = args.length > 1 ? Number(arg(1) as bigint) : -1;
      return limit < 0 ? all : all.slice(0, limit);
    }
    case 'size': {
      const v = t !== undefined ? t : arg(0);
      if (typeof v === 'string') return BigInt([...v].length);
      if (v instanceof Uint8Array) return BigInt(v.length);
      if (Array.isArray(v)) return BigInt(v.length);
      if (isMap(v)) return BigInt(mapEntries(v as any).length);
      throw new CelError(`no such overload: size(${typeName(v)})`);
    }
    case 'contains':
      return str(t).includes(str(arg(0)));
    case 'startsWith':
      return str(t).startsWith(str(arg(0)));
    case 'endsWith':
      return str(t).endsWith(str(arg(0)));
    case 'matches': {
      const s = t !== undefined ? str(t) : str(arg(0));
      const re = t !== undefined ? str(arg(0)) : str(arg(1));
      try {
        return re2(re).test(s);
      } catch (e) {
        throw new CelError(`invalid regular expression: ${(e as Error).message}`);
      }
    }
    case 'lowerAscii':
      return str(t).replace(/[A-Z]/g, (c) => c.toLowerCase());
    case 'upperAscii':
      return str(t).replace(/[a-z]/g, (c) => c.toUpperCase());
    case 'trim':
      return str(t).trim();
    case 'split': {
      const parts = str(t).split(str(arg(0)));
      const n = args.length > 1 ? Number(arg(1) as bigint) : -1;
      if (n === 0) return [];
      if (n < 0 || parts.length <= n) return parts;
      return [...parts.slice(0, n - 1), parts.slice(n - 1).join(str(arg(0)))];
    }
    case 'join': {
      if (!Array.isArray(t)) throw new CelError('no such overload: join');
      return t.map((x) => str(fromJSON(x))).join(args.length ? str(arg(0)) : '');
    }
    case 'indexOf':
    case 'lastIndexOf': {
      // (in code points, with an optional offset, as cel-go's strings extension)
      const cps = [...str(t)];
      const sub = [...str(arg(0))];
      const last = fn === 'lastIndexOf';
      const off = args.length > 1 ? Number(arg(1) as bigint) : last ? cps.length - 1 : 0;
      if (off < 0 || off > cps.length || (last && args.length > 1 && off >= cps.length)) throw new CelError(`index out of range: ${off}`);
      const at = (i: number) => sub.every((c, j) => cps[i + j] === c);
      if (last) {
        for (let i = Math.min(off, cps.length - sub.length); i >= 0; i--) if (at(i)) return BigInt(i);
        return -1n;
      }
      for (let i = off; i + sub.length <= cps.length; i++) if (at(i)) return BigInt(i);
      return -1n;
    }
    case 'int': {
      const v = arg(0);
      if (typeof v === 'bigint') return v;
      if (v instanceof Uint) return checkInt(v.v);
      if (typeof v === 'number') {
        if (!Number.isFinite(v)) throw new CelError('double is out of range for int');
        return checkInt(BigInt(Math.trunc(v)));
      }
      if (typeof v === 'string' && /^[+-]?[0-9]+$/.test(v)) return checkInt(BigInt(v));
      // a timestamp's Unix seconds
      if (v instanceof CelTimestamp) return floorDiv(v.ns, 1_000_000_000n);
      throw new CelError(`no such overload: int(${typeName(v)})`);
    }
    case 'uint': {
      const v = arg(0);
      const i = call('int', undefined, [v instanceof Uint ? v.v : v]) as bigint;
      if (i < 0n) throw new CelError('uint out of range');
      return new Uint(i);
    }
    case 'double': {
      const v = arg(0);
      const n = num(v);
      if (n !== undefined) return n;
      if (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v))) return Number(v);
      throw new CelError(`no such overload: double(${typeName(v)})`);
    }
    case 'string':
      return toStr(arg(0));
    case 'bool': {
      const v = arg(0);
      if (typeof v === 'boolean') return v;
      if (typeof v === 'string' && ['true', 'false', 'True', 'False', 'TRUE', 'FALSE', 't', 'f', '1', '0'].includes(v)) return ['true', 'True', 'TRUE', 't', '1'].includes(v);
      throw new CelError(`no such overload: bool(${typeName(v)})`);
    }
    case 'dyn':
      return arg(0);
    case 'type':
      return new CelType(typeName(arg(0)));
    default:
      throw new CelUnsupportedError(`undeclared reference to '${fn}'`);
  }
}

function succeeds(f: () => unknown): boolean {
  try {
    f();
    return true;
  } catch (e) {
    if (e instanceof CelLibraryError) return false;
    throw e;
  }
}

/** an argument of string.format() */
function formatArg(v: Value): FormatArg {
  return {
    type: typeName(v),
    str: () => formatString(v),
    int: () => (typeof v === 'bigint' ? v : v instanceof Uint ? v.v : undefined),
    double: () => num(v),
    raw: () => (typeof v === 'bigint' ? v : v instanceof Uint ? v.v : v instanceof Uint8Array || typeof v === 'string' ? v : undefined),
  };
}

/** %s of a value: strings as they are, lists and maps with their members' %s, others as string() */
function formatString(v: Value): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `[${v.map((x) => formatString(fromJSON(x))).join(', ')}]`;
  if (isMap(v)) return `{${mapEntries(v as any).map(([k, x]) => `${formatString(k)}: ${formatString(x)}`).join(', ')}}`;
  if (v instanceof CelType) return v.name;
  if (typeof v === 'number' && Number.isInteger(v)) return v.toFixed(0);
  return toStr(v);
}

/** the methods of the IP, CIDR, URL, semver and named-format values */
function libraryMethod(fn: string, t: CelIP | CelCIDR | CelURL | CelSemver | CelFormat, args: Value[]): Value {
  const nope = () => new CelError(`no such overload: ${typeName(t)}.${fn}`);
  if (t instanceof CelIP) {
    const r = args.length === 0 ? ipMethod(fn, t) : undefined;
    if (r === undefined) throw nope();
    return r;
  }
  if (t instanceof CelCIDR) {
    const a = args[0];
    switch (fn) {
      case 'containsIP':
        if (a instanceof CelIP) return t.containsIP(a);
        if (typeof a === 'string') return t.containsIP(parseIP(a));
        break;
      case 'containsCIDR':
        if (a instanceof CelCIDR) return t.containsCIDR(a);
        if (typeof a === 'string') return t.containsCIDR(parseCIDR(a));
        break;
      case 'ip':
        return t.ip;
      case 'masked':
        return t.masked();
      case 'prefixLength':
        return BigInt(t.bits);
    }
    throw nope();
  }
  if (t instanceof CelURL) {
    const r = args.length === 0 ? urlMethod(fn, t) : undefined;
    if (r === undefined) throw nope();
    return r as Value;
  }
  if (t instanceof CelSemver) {
    switch (fn) {
      case 'major':
        return t.major;
      case 'minor':
        return t.minor;
      case 'patch':
        return t.patch;
    }
    const other = args[0];
    if (!(other instanceof CelSemver)) throw nope();
    const c = compareSemver(t, other);
    switch (fn) {
      case 'isLessThan':
        return c < 0;
      case 'isGreaterThan':
        return c > 0;
      case 'compareTo':
        return BigInt(c);
    }
    throw nope();
  }
  if (fn === 'validate' && typeof args[0] === 'string') {
    const problems = NAMED_FORMATS[t.name]!(args[0]);
    return problems.length === 0 ? NONE : new CelOptional(true, problems);
  }
  throw nope();
}

/** the functions of a namespace: sets.*, strings.quote, ip.isCanonical, format.<name>() and format.named(); undefined: not one of them */
function libraryCall(ns: string, fn: string, args: Value[]): Value | undefined {
  const list = (i: number): Value[] => {
    const v = args[i];
    if (!Array.isArray(v)) throw new CelError(`no such overload: ${ns}.${fn}(${args.map((a) => typeName(a)).join(', ')})`);
    return v.map(fromJSON);
  };
  const within = (xs: Value[], ys: Value[]) => ys.every((y) => xs.some((x) => equals(x, y)));
  switch (`${ns}.${fn}`) {
    case 'sets.contains':
      return within(list(0), list(1));
    case 'sets.equivalent':
      return within(list(0), list(1)) && within(list(1), list(0));
    case 'sets.intersects': {
      const ys = list(1);
      return list(0).some((x) => ys.some((y) => equals(x, y)));
    }
    case 'strings.quote':
      if (typeof args[0] !== 'string') throw new CelError(`no such overload: strings.quote(${typeName(args[0] ?? null)})`);
      return quote(args[0]);
    case 'ip.isCanonical':
      if (typeof args[0] !== 'string') throw new CelError(`no such overload: ip.isCanonical(${typeName(args[0] ?? null)})`);
      return ipIsCanonical(args[0]);
    case 'format.named': {
      const name = args[0];
      return typeof name === 'string' && Object.prototype.hasOwnProperty.call(NAMED_FORMATS, name) ? new CelOptional(true, new CelFormat(name)) : NONE;
    }
  }
  if (ns === 'format' && args.length === 0 && Object.prototype.hasOwnProperty.call(NAMED_FORMATS, fn)) return new CelFormat(fn);
  return undefined;
}

function isZeroValue(v: Value): boolean {
  if (v === null || v === false || v === '' || v === 0n || v === 0) return true;
  if (v instanceof Uint) return v.v === 0n;
  if (v instanceof Uint8Array || Array.isArray(v)) return v.length === 0;
  if (isMap(v)) return mapEntries(v as any).length === 0;
  return false;
}

const LIST_METHODS = new Set(['isSorted', 'sum', 'min', 'max', 'indexOf', 'lastIndexOf']);

/** Kubernetes' lists library */
function listMethod(fn: string, items: Value[], args: Value[]): Value {
  switch (fn) {
    case 'isSorted':
      return items.every((v, i) => i === 0 || compare(items[i - 1]!, v) <= 0);
    case 'sum': {
      if (!items.length) return 0n;
      return items.slice(1).reduce((acc, v) => arith('+', acc, v), items[0]!);
    }
    case 'min':
    case 'max': {
      if (!items.length) throw new CelError(`${fn}(list) called on an empty list`);
      return items.reduce((acc, v) => ((fn === 'min' ? compare(v, acc) < 0 : compare(v, acc) > 0) ? v : acc));
    }
    case 'indexOf':
      return BigInt(items.findIndex((v) => equals(v, args[0]!)));
    default:
      return BigInt(items.findLastIndex((v) => equals(v, args[0]!)));
  }
}

/** the methods of the quantity and authorizer libraries */
function opaqueMethod(fn: string, t: CelQuantity | CelAuthz | CelDecision, args: Value[]): Value {
  const strArg = (i: number) => {
    const v = args[i];
    if (typeof v !== 'string') throw new CelError(`no such overload: ${fn}(${typeName(v ?? null)})`);
    return v;
  };
  const quantityArg = (i: number): Quantity => {
    const v = args[i];
    if (v instanceof CelQuantity) return v.q;
    if (typeof v === 'bigint') return { nano: v * 1_000_000_000n, format: 'DecimalSI' };
    throw new CelError(`no such overload: ${fn}(${typeName(v ?? null)})`);
  };
  if (t instanceof CelQuantity) {
    const q = t.q;
    switch (fn) {
      case 'sign':
        return q.nano > 0n ? 1n : q.nano < 0n ? -1n : 0n;
      case 'isInteger':
        return q.nano % 1_000_000_000n === 0n;
      case 'asInteger':
        if (q.nano % 1_000_000_000n !== 0n) throw new CelError('cannot convert value to integer');
        return checkInt(q.nano / 1_000_000_000n);
      case 'asApproximateFloat':
        return Number(q.nano) / 1e9;
      case 'add':
        return new CelQuantity({ nano: q.nano + quantityArg(0).nano, format: q.format });
      case 'sub':
        return new CelQuantity({ nano: q.nano - quantityArg(0).nano, format: q.format });
      case 'compareTo':
        return BigInt(cmpQuantity(q, quantityArg(0)));
      case 'isGreaterThan':
        return cmpQuantity(q, quantityArg(0)) > 0;
      case 'isLessThan':
        return cmpQuantity(q, quantityArg(0)) < 0;
    }
  } else if (t instanceof CelAuthz) {
    switch (fn) {
      case 'group':
        return t.with({ resourceRequest: true, apiGroup: strArg(0) });
      case 'resource':
        return t.with({ resourceRequest: true, resource: strArg(0) });
      case 'subresource':
        return t.with({ subresource: strArg(0) });
      case 'namespace':
        return t.with({ namespace: strArg(0) });
      case 'name':
        return t.with({ name: strArg(0) });
      case 'path':
        return t.with({ resourceRequest: false, path: strArg(0) });
      case 'serviceAccount': {
        const ns = strArg(0);
        const user = { name: `system:serviceaccount:${ns}:${strArg(1)}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'] };
        return new CelAuthz(t.authz, user, { resourceRequest: false }, t.request);
      }
      case 'check': {
        const d = t.authz.authorize({ user: t.user, verb: strArg(0), ...t.attrs });
        return new CelDecision(d.decision, d.reason);
      }
    }
  } else {
    switch (fn) {
      case 'allowed':
        return t.decision === 'allow';
      case 'reason':
        return t.reason;
      case 'errored':
        return false;
      case 'error':
        return '';
    }
  }
  throw new CelError(`no such overload: ${typeName(t)}.${fn}`);
}

function evaluate(n: Node, env: Env): Value {
  if (--costLeft < 0) throw new CelCostLimitError();
  switch (n.k) {
    case 'lit':
      return n.v;
    case 'id': {
      if (env.has(n.name)) return env.get(n.name)!;
      if (['int', 'uint', 'double', 'string', 'bool', 'bytes', 'list', 'map', 'null_type', 'type'].includes(n.name)) return new CelType(n.name);
      throw new CelError(`undeclared reference to '${n.name}'`);
    }
    case 'sel': {
      const target = evaluate(n.target, env);
      // selection on an optional, or optional selection: absent is optional.none()
      if (n.optional || target instanceof CelOptional) {
        const inner = target instanceof CelOptional ? target : new CelOptional(true, target);
        if (!inner.present) return NONE;
        const t = fromJSON(inner.value);
        if (!isMap(t)) throw new CelError(`unsupported type for field selection: ${typeName(t)}`);
        const r = mapGet(t as any, n.field);
        return r.found ? new CelOptional(true, r.v) : NONE;
      }
      return select(target, n.field, n.test === true);
    }
    case 'index': {
      const target = evaluate(n.target, env);
      const i = evaluate(n.index, env);
      if (n.optional || target instanceof CelOptional) {
        const inner = target instanceof CelOptional ? target : new CelOptional(true, target);
        if (!inner.present) return NONE;
        const t = fromJSON(inner.value);
        if (Array.isArray(t)) {
          const k = typeof i === 'bigint' ? i : -1n;
          return k >= 0n && k < BigInt(t.length) ? new CelOptional(true, t[Number(k)]) : NONE;
        }
        if (isMap(t)) {
          const r = mapGet(t as any, i);
          return r.found ? new CelOptional(true, r.v) : NONE;
        }
        throw new CelError(`no such overload: ${typeName(t)}[?${typeName(i)}]`);
      }
      return index(target, i);
    }
    case 'list':
      return n.items.map((x) => evaluate(x, env));
    case 'map': {
      const m = new Map<unknown, Value>();
      for (const [k, v] of n.entries) m.set(evaluate(k, env), evaluate(v, env));
      return m;
    }
    case 'unary': {
      const v = evaluate(n.arg, env);
      if (n.op === '!') return !truthy(v, '!');
      if (typeof v === 'bigint') return checkInt(-v);
      if (typeof v === 'number') return -v;
      if (v instanceof CelDuration) return durationOf(-v.ns, (m) => new CelError(m));
      throw new CelError(`no such overload: -${typeName(v)}`);
    }
    case 'cond':
      return truthy(evaluate(n.c, env), '?:') ? evaluate(n.t, env) : evaluate(n.f, env);
    case 'bin': {
      if (n.op === '&&' || n.op === '||') {
        const short = n.op === '||';
        let lv: Value | undefined;
        let le: unknown;
        try {
          lv = truthy(evaluate(n.l, env), n.op);
          if (lv === short) return short;
        } catch (e) {
          le = e;
        }
        const rv = truthy(evaluate(n.r, env), n.op);
        if (rv === short) return short;
        if (le !== undefined) throw le;
        return !short;
      }
      const l = evaluate(n.l, env);
      const r = evaluate(n.r, env);
      switch (n.op) {
        case '==':
          return equals(l, r);
        case '!=':
          return !equals(l, r);
        case '<':
          return compare(l, r) < 0;
        case '<=':
          return compare(l, r) <= 0;
        case '>':
          return compare(l, r) > 0;
        case '>=':
          return compare(l, r) >= 0;
        case 'in':
          if (Array.isArray(r)) return r.some((x) => equals(fromJSON(x), l));
          if (isMap(r)) return mapGet(r as any, l).found;
          throw new CelError(`no such overload: in ${typeName(r)}`);
        default:
          return arith(n.op, l, r);
      }
    }
    case 'call': {
      if (n.target?.k === 'id' && n.target.name === 'optional' && !env.has('optional')) {
        const a = n.args.map((x) => evaluate(x, env));
        if (n.fn === 'none' && a.length === 0) return NONE;
        if (n.fn === 'of' && a.length === 1) return new CelOptional(true, a[0]);
        if (n.fn === 'ofNonZeroValue' && a.length === 1) return isZeroValue(a[0]!) ? NONE : new CelOptional(true, a[0]);
        throw new CelUnsupportedError(`undeclared reference to 'optional.${n.fn}'`);
      }
      // a function of a namespace (sets.*, strings.quote, ip.isCanonical, format.*); math.* and
      // base64.* are not Kubernetes' (nor here)
      if (n.target?.k === 'id' && !env.has(n.target.name) && CEL_NAMESPACES.has(n.target.name)) {
        const args = n.args.map((x) => evaluate(x, env));
        const ns = n.target.name;
        const r = libraryResult(() => libraryCall(ns, n.fn, args));
        if (r === undefined) throw new CelUnsupportedError(`undeclared reference to '${n.target.name}.${n.fn}'`);
        return r;
      }
      const target = n.target ? evaluate(n.target, env) : undefined;
      if (target instanceof CelOptional) {
        if (n.fn === 'hasValue' && n.args.length === 0) return target.present;
        if (n.fn === 'value' && n.args.length === 0) {
          if (!target.present) throw new CelError('optional.none() dereference');
          return fromJSON(target.value);
        }
        if (n.fn === 'orValue' && n.args.length === 1) return target.present ? fromJSON(target.value) : evaluate(n.args[0]!, env);
        if (n.fn === 'or' && n.args.length === 1) return target.present ? target : evaluate(n.args[0]!, env);
      }
      return call(n.fn, target, n.args.map((a) => evaluate(a, env)));
    }
    case 'macro': {
      if (n.v2 !== undefined) return twoVarMacro(n as Node & { k: 'macro'; v2: string }, env);
      const target = evaluate(n.target, env);
      let items: Value[];
      if (Array.isArray(target)) items = target.map(fromJSON);
      else if (isMap(target)) items = mapEntries(target as any).map(([k]) => k);
      else throw new CelError(`no such overload: ${n.fn} on ${typeName(target)}`);
      const withVar = (v: Value) => {
        const e = new Map(env);
        e.set(n.v, v);
        return e;
      };
      switch (n.fn) {
        case 'all':
        case 'exists':
          return quantified(items, (it) => truthy(evaluate(n.args[0]!, withVar(it)), n.fn), n.fn === 'exists');
        case 'exists_one':
          return items.filter((it) => truthy(evaluate(n.args[0]!, withVar(it)), 'exists_one')).length === 1;
        case 'filter':
          return items.filter((it) => truthy(evaluate(n.args[0]!, withVar(it)), 'filter'));
        case 'map':
          if (n.args.length === 2) return items.filter((it) => truthy(evaluate(n.args[0]!, withVar(it)), 'map')).map((it) => evaluate(n.args[1]!, withVar(it)));
          return items.map((it) => evaluate(n.args[0]!, withVar(it)));
      }
      throw new CelUnsupportedError(`undeclared reference to '${n.fn}'`);
    }
  }
}

/**
 * all (exists: false) or exists (true) of `test` over the items, commutative over errors as in CEL:
 * an item that decides the answer wins over another's error, which is thrown only when none does
 */
function quantified<T>(items: T[], test: (item: T) => boolean, exists: boolean): boolean {
  let err: unknown;
  for (const it of items) {
    try {
      if (test(it) === exists) return exists;
    } catch (e) {
      err ??= e;
    }
  }
  if (err) throw err;
  return !exists;
}

/** all, exists, existsOne, transformList, transformMap and transformMapEntry over (index, item) or (key, value) */
function twoVarMacro(n: Node & { k: 'macro'; v2: string }, env: Env): Value {
  const target = evaluate(n.target, env);
  let pairs: [Value, Value][];
  if (Array.isArray(target)) pairs = target.map((x, i) => [BigInt(i), fromJSON(x)]);
  else if (isMap(target)) pairs = mapEntries(target as any);
  else throw new CelError(`no such overload: ${n.fn} on ${typeName(target)}`);
  const scope = ([a, b]: [Value, Value]) => {
    const e = new Map(env);
    e.set(n.v, a);
    e.set(n.v2, b);
    return e;
  };
  const test = (p: [Value, Value], arg: Node) => truthy(evaluate(arg, scope(p)), n.fn);
  switch (n.fn) {
    case 'all':
    case 'exists':
      return quantified(pairs, (p) => test(p, n.args[0]!), n.fn === 'exists');
    case 'existsOne':
      return pairs.filter((p) => test(p, n.args[0]!)).length === 1;
    case 'transformList':
    case 'transformMap':
    case 'transformMapEntry': {
      const filter = n.args.length > 1 ? n.args[0]! : undefined;
      const expr = n.args[n.args.length - 1]!;
      const kept = filter ? pairs.filter((p) => test(p, filter)) : pairs;
      if (n.fn === 'transformList') return kept.map((p) => evaluate(expr, scope(p)));
      const out = new Map<unknown, Value>();
      for (const p of kept) {
        if (n.fn === 'transformMap') {
          out.set(p[0], evaluate(expr, scope(p)));
          continue;
        }
        const entry = evaluate(expr, scope(p));
        if (!isMap(entry)) throw new CelError(`no such overload: transformMapEntry to ${typeName(entry)}`);
        for (const [k, v] of mapEntries(entry as any)) {
          if ([...out.keys()].some((x) => equals(x as Value, k))) throw new CelError(`insert failed: key ${toStr(k)} already exists`);
          out.set(k, v);
        }
      }
      return out;
    }
  }
  throw new CelUnsupportedError(`undeclared reference to '${n.fn}'`);
}

const TWO_VAR_MACROS = new Set(['all', 'exists', 'existsOne', 'transformList', 'transformMap', 'transformMapEntry']);

const cache = new Map<string, Node | CelError>();

function compiled(expr: string): Node {
  let n = cache.get(expr);
  if (!n) {
    try {
      n = parse(expr);
    } catch (e) {
      n = e instanceof CelError ? e : new CelError(String(e));
    }
    if (cache.size > 1000) cache.clear();
    cache.set(expr, n);
  }
  if (n instanceof CelError) throw n;
  return n;
}

/** evaluate one CEL expression with the given variables (JSON values) */
export function evaluateCEL(expr: string, vars: Record<string, unknown>): unknown {
  const v = evaluateCELValue(expr, vars);
  if (typeof v === 'bigint') return Number(v);
  return v;
}

/**
 * evaluate one CEL expression and keep CEL's values (ints stay bigint; opaque values stay as they
 * are), within Kubernetes' per-call cost limit (CelCostLimitError past it)
 */
export function evaluateCELValue(expr: string, vars: Record<string, unknown>): unknown {
  return evaluateCELWithCost(expr, vars, CEL_PER_CALL_LIMIT).value;
}

/** evaluateCELValue, with what the evaluation cost; past `limit`, CelCostLimitError */
export function evaluateCELWithCost(expr: string, vars: Record<string, unknown>, limit: number): { value: unknown; cost: number } {
  const env: Env = new Map(Object.entries(vars).map(([k, v]) => [k, fromJSON(v)]));
  const saved = costLeft;
  costLeft = limit;
  try {
    const value = evaluate(compiled(expr), env);
    // (an error absorbed on the way, by || or has(), must not hide that the limit was passed)
    if (costLeft < 0) throw new CelCostLimitError();
    return { value, cost: limit - costLeft };
  } finally {
    costLeft = saved;
  }
}

/** CEL's timestamp of an RFC 3339 string, or undefined when it is not one */
export function celTimestamp(s: string): unknown {
  const ns = parseTimestamp(s);
  return ns === undefined ? undefined : new CelTimestamp(ns);
}

/** CEL's duration of a Go duration string, or undefined when it is not one */
export function celDuration(s: string): unknown {
  const ns = parseDuration(s);
  return ns === undefined ? undefined : new CelDuration(ns);
}

/** a value of CEL's optional type for a variable: optional.of(value) when present, else optional.none() */
export function celOptional(present: boolean, value?: unknown): unknown {
  return present ? new CelOptional(true, fromJSON(value)) : NONE;
}

/** the parse error of an expression, or undefined when it parses */
/**
 * The first identifier of an expression that is neither declared, nor bound by a macro, nor a
 * type name, with its offset: what cel-go's checker reports as an undeclared reference (its
 * functions are not checked here). Undefined when every one is declared, or the expression does
 * not parse.
 */
export function celUndeclaredReference(expr: string, declared: ReadonlySet<string>): { name: string; pos: number } | undefined {
  const n = compiled(expr);
  if (n instanceof CelError) return undefined;
  const TYPES = new Set(['int', 'uint', 'double', 'string', 'bool', 'bytes', 'list', 'map', 'null_type', 'type']);
  const walk = (x: Node, bound: ReadonlySet<string>): { name: string; pos: number } | undefined => {
    switch (x.k) {
      case 'lit':
        return undefined;
      case 'id':
        return declared.has(x.name) || bound.has(x.name) || TYPES.has(x.name) ? undefined : { name: x.name, pos: x.pos ?? 0 };
      case 'sel':
        return walk(x.target, bound);
      case 'index':
        return walk(x.target, bound) ?? walk(x.index, bound);
      case 'call': {
        // (a library's namespace, sets.contains(...), optional.of(...), is not a variable)
        const namespace = x.target?.k === 'id' && !declared.has(x.target.name) && !bound.has(x.target.name) && (CEL_NAMESPACES.has(x.target.name) || x.target.name === 'optional');
        if (x.target && !namespace) {
          const t = walk(x.target, bound);
          if (t) return t;
        }
        for (const a of x.args) {
          const r = walk(a, bound);
          if (r) return r;
        }
        return undefined;
      }
      case 'list':
        for (const i of x.items) {
          const r = walk(i, bound);
          if (r) return r;
        }
        return undefined;
      case 'map':
        for (const [k, v] of x.entries) {
          const r = walk(k, bound) ?? walk(v, bound);
          if (r) return r;
        }
        return undefined;
      case 'unary':
        return walk(x.arg, bound);
      case 'bin':
        return walk(x.l, bound) ?? walk(x.r, bound);
      case 'cond':
        return walk(x.c, bound) ?? walk(x.t, bound) ?? walk(x.f, bound);
      case 'macro': {
        const t = walk(x.target, bound);
        if (t) return t;
        const inner = new Set(bound).add(x.v);
        if (x.v2 !== undefined) inner.add(x.v2);
        for (const a of x.args) {
          const r = walk(a, inner);
          if (r) return r;
        }
        return undefined;
      }
    }
  };
  return walk(n, new Set());
}

/** the parsed form of an expression that parses (CelError otherwise) */
export function celParse(expr: string): CelNode {
  return compiled(expr);
}

export function celSyntaxError(expr: string): string | undefined {
  try {
    compiled(expr);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** the CEL type name of a value (for `must evaluate to bool` errors) */
export function celTypeName(v: unknown): string {
  return typeName(v);
}

export interface MatchResult {
  matches: boolean;
  /** the evaluation errors, when no condition was false */
  error?: string;
  /** the condition that was false */
  failedCondition?: string;
}

/** the conditions of a webhook against a request */
export function evaluateMatchConditions(conditions: unknown[], a: AdmissionAttributes): MatchResult {
  const request = admissionRequest('', { accessor: undefined as any, resource: a.resource, subresource: a.subresource, kind: a.kind }, a);
  delete request.uid;
  delete request.object;
  delete request.oldObject;
  const vars = { object: a.object ?? null, oldObject: a.oldObject ?? null, request };
  const errs: string[] = [];
  for (const c of conditions) {
    const cond = c as { name?: string; expression?: string };
    try {
      const v = evaluateCEL(String(cond.expression ?? ''), vars);
      if (typeof v !== 'boolean') throw new CelError(`expression must evaluate to bool, got ${typeName(v as Value)}`);
      if (v === false) return { matches: false, failedCondition: cond.name };
    } catch (e) {
      errs.push(`expression '${String(cond.expression ?? '')}' resulted in error: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  if (errs.length) return { matches: false, error: errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]` };
  return { matches: true };
}
