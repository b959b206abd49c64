// Label and field selectors, with the syntax and error messages of Kubernetes.
//
// Label selectors: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`, `a<1`,
// joined by commas. Field selectors: `f=v`, `f==v`, `f!=v` joined by commas, with `\,`, `\=`
// and `\\` escapes in values.
import { isLabelValue, isQualifiedName } from './validation.js';

export type LabelOp = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

export interface Requirement {
  key: string;
  op: LabelOp;
  values: string[];
}

export class SelectorParseError extends Error {}

type Tok = 'end' | ')' | ',' | '!' | '==' | '=' | '>' | 'id' | 'in' | '<' | '!=' | 'notin' | '(' | 'err';
const TOKENS: Record<string, Tok> = {
  ')': ')',
  ',': ',',
  '!': '!',
  '==': '==',
  '=': '=',
  '>': '>',
  in: 'in',
  '<': '<',
  '!=': '!=',
  notin: 'notin',
  '(': '(',
};
const SPECIAL = new Set(['=', '!', '(', ')', ',', '>', '<']);
const WS = new Set([' ', '\t', '\r', '\n']);

function lex(s: string): { tok: Tok; lit: string }[] {
  const out: { tok: Tok; lit: string }[] = [];
  let i = 0;
  for (;;) {
    while (i < s.length && WS.has(s[i]!)) i++;
    if (i >= s.length) {
      out.push({ tok: 'end', lit: '' });
      return out;
    }
    if (SPECIAL.has(s[i]!)) {
      // longest special-symbol run that forms a token
      let buf = '';
      let last: { tok: Tok; lit: string } | undefined;
      while (i < s.length && SPECIAL.has(s[i]!)) {
        buf += s[i];
        const t = TOKENS[buf];
        if (t) {
          last = { tok: t, lit: buf };
          i++;
        } else if (last) break;
        else i++;
      }
      out.push(last ?? { tok: 'err', lit: `error expected: keyword found '${buf}'` });
      continue;
    }
    let j = i;
    while (j < s.length && !SPECIAL.has(s[j]!) && !WS.has(s[j]!)) j++;
    const lit = s.slice(i, j);
    i = j;
    const t = TOKENS[lit];
    out.push({ tok: t ?? 'id', lit });
  }
}

/** Parse a label selector string; an empty string selects everything. */
export function parseLabelSelector(sel: string): Requirement[] {
  const items = lex(sel);
  let pos = 0;
  // in value context, the keywords in/notin are plain identifiers
  const look = (values: boolean) => {
    const it = items[pos]!;
    return values && (it.tok === 'in' || it.tok === 'notin') ? { tok: 'id' as Tok, lit: it.lit } : it;
  };
  const take = (values: boolean) => {
    const it = look(values);
    pos++;
    return it;
  };
  const reqs: Requirement[] = [];

  const parseRequirement = (): Requirement => {
    let op: LabelOp | undefined;
    let t = take(true);
    if (t.tok === '!') {
      op = '!';
      t = take(true);
    }
    if (t.tok !== 'id') throw new SelectorParseError(`found '${t.lit}', expected: identifier`);
    const key = t.lit;
    const keyErrs = isQualifiedName(key);
    if (keyErrs.length) throw new SelectorParseError(`key: Invalid value: ${JSON.stringify(key)}: ${keyErrs.join('; ')}`);
    const next = look(true);
    if (next.tok === 'end' || next.tok === ',') {
      return finish({ key, op: op ?? 'exists', values: [] });
    }
    if (op === '!') return finish({ key, op, values: [] });
    const o = take(false);
    let values: string[] = [];
    switch (o.tok) {
      case 'in':
      case 'notin': {
        const open = take(true);
        if (open.tok !== '(') throw new SelectorParseError(`found '${open.lit}' expected: '('`);
        const first = look(true);
        if (first.tok === ')') {
          take(true);
          values = [''];
        } else if (first.tok === 'id' || first.tok === ',') {
          const set = new Set<string>();
          for (;;) {
            const v = take(true);
            if (v.tok === 'id') {
              set.add(v.lit);
              const n = look(true);
              if (n.tok === ',') continue;
              if (n.tok === ')') break;
              throw new SelectorParseError(`found '${n.lit}', expected: ',' or ')'`);
            } else if (v.tok === ',') {
              if (set.size === 0) set.add('');
              const n = look(true);
              if (n.tok === ')') {
                set.add('');
                break;
              }
              if (n.tok === ',') set.add('');
            } else throw new SelectorParseError(`found '${v.lit}', expected: ',', or identifier`);
          }
          const close = take(true);
          if (close.tok !== ')') throw new SelectorParseError(`found '${first.lit}', expected: ')'`);
          values = [...set].sort();
        } else throw new SelectorParseError(`found '${first.lit}', expected: ',', ')' or identifier`);
        return finish({ key, op: o.tok, values });
      }
      case '=':
      case '==':
      case '!=':
      case '>':
      case '<': {
        const n = look(true);
        if (n.tok === 'end' || n.tok === ',') values = [''];
        else {
          const v = take(true);
          if (v.tok !== 'id') throw new SelectorParseError(`found '${v.lit}', expected: identifier`);
          values = [v.lit];
        }
        const op2: LabelOp = o.tok === '>' ? 'gt' : o.tok === '<' ? 'lt' : o.tok;
        return finish({ key, op: op2, values });
      }
      default:
        throw new SelectorParseError(`found '${o.lit}', expected: in, notin, =, ==, !=, gt, lt`);
    }
  };

  const finish = (r: Requirement): Requirement => {
    const errs: string[] = [];
    if ((r.op === 'gt' || r.op === 'lt') && !r.values.every((v) => /^[+-]?\d+$/.test(v)))
      errs.push(`values[0]: Invalid value: ${JSON.stringify(r.values[0])}: for 'Gt', 'Lt' operators, the value must be an integer`);
    r.values.forEach((v, i) => {
      const m = isLabelValue(v);
      if (m.length) errs.push(`values[${i}][${r.key}]: Invalid value: ${JSON.stringify(v)}: ${m.join('; ')}`);
    });
    if (errs.length) throw new SelectorParseError(errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`);
    return r;
  };

  for (;;) {
    const t = look(true);
    if (t.tok === 'end') break;
    if (t.tok !== 'id' && t.tok !== '!') {
      throw new SelectorParseError(`found '${t.lit}', expected: !, identifier, or 'end of string'`);
    }
    let r: Requirement;
    try {
      r = parseRequirement();
    } catch (e) {
      throw new SelectorParseError(`unable to parse requirement: ${(e as Error).message}`);
    }
    reqs.push(r);
    const sep = take(true);
    if (sep.tok === 'end') break;
    if (sep.tok === ',') {
      const n = look(true);
      if (n.tok !== 'id' && n.tok !== '!') throw new SelectorParseError(`found '${n.lit}', expected: identifier after ','`);
      continue;
    }
    throw new SelectorParseError(`found '${sep.lit}', expected: ',' or 'end of string'`);
  }
  reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return reqs;
}

export function matchLabels(reqs: Requirement[], labels: Record<string, string> | undefined): boolean {
  for (const r of reqs) {
    const has = labels != null && Object.prototype.hasOwnProperty.call(labels, r.key);
    const v = has ? labels![r.key]! : undefined;
    switch (r.op) {
      case '=':
      case '==':
      case 'in':
        if (!has || !r.values.includes(v!)) return false;
        break;
      case '!=':
      case 'notin':
        if (has && r.values.includes(v!)) return false;
        break;
      case 'exists':
        if (!has) return false;
        break;
      case '!':
        if (has) return false;
        break;
      case 'gt':
      case 'lt': {
        if (!has || !/^[+-]?\d+$/.test(v!)) return false;
        const a = Number(v);
        const b = Number(r.values[0]);
        if (r.op === 'gt' ? !(a > b) : !(a < b)) return false;
        break;
      }
    }
  }
  return true;
}

/** A label selector from meta/v1 LabelSelector (matchLabels and matchExpressions). */
export function fromLabelSelector(sel: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] } | undefined | null): Requirement[] | null {
  if (sel == null) return null; // nil selector selects nothing
  const reqs: Requirement[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) reqs.push({ key: k, op: '=', values: [v] });
  for (const e of sel.matchExpressions ?? []) {
    const op = ({ In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' } as Record<string, LabelOp>)[e.operator];
    if (!op) throw new SelectorParseError(`${JSON.stringify(e.operator)} is not a valid label selector operator`);
    reqs.push({ key: e.key, op, values: [...(e.values ?? [])] });
  }
  return reqs;
}

/**
 * A selector's String() as labels.Selector writes it: requirements sorted by key (a stable sort,
 * as internalSelector.Add keeps them), the values of `in` and `notin` sorted.
 */
export function labelSelectorString(reqs: Requirement[]): string {
  return [...reqs]
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((r) => {
      switch (r.op) {
        case 'exists':
          return r.key;
        case '!':
          return `!${r.key}`;
        case 'in':
        case 'notin':
          return `${r.key} ${r.op} (${[...r.values].sort().join(',')})`;
        case 'gt':
          return `${r.key}>${r.values[0]}`;
        case 'lt':
          return `${r.key}<${r.values[0]}`;
        default:
          return `${r.key}${r.op}${r.values[0]}`;
      }
    })
    .join(',');
}

// ---- field selectors ----

export interface FieldTerm {
  field: string;
  op: '=' | '!=';
  value: string;
}

function splitTerms(s: string): string[] {
  if (s.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let slash = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (slash) slash = false;
    else if (c === '\\') slash = true;
    else if (c === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

function unescapeValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let slash = false;
  for (const c of s) {
    if (slash) {
      if (c === '\\' || c === ',' || c === '=') out += c;
      else throw new SelectorParseError(`invalid field selector: invalid escape sequence: \\${c}`);
      slash = false;
      continue;
    }
    if (c === '\\') slash = true;
    else if (c === ',' || c === '=') throw new SelectorParseError(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    else out += c;
  }
  if (slash) throw new SelectorParseError('invalid field selector: invalid escape sequence: \\');
  return out;
}

export function parseFieldSelector(sel: string): FieldTerm[] {
  const parts = splitTerms(sel).sort();
  const out: FieldTerm[] = [];
  for (const part of parts) {
    if (part === '') continue;
    let found: FieldTerm | undefined;
    for (let i = 0; i < part.length && !found; i++) {
      for (const op of ['!=', '==', '='] as const) {
        if (part.startsWith(op, i)) {
          found = { field: part.slice(0, i), op: op === '!=' ? '!=' : '=', value: unescapeValue(part.slice(i + op.length)) };
          break;
        }
      }
    }
    if (!found) throw new SelectorParseError(`invalid selector: '${sel}'; can't understand '${part}'`);
    out.push(found);
  }
  return out;
}

/** a kind's selectable field as declared ("path", or "label=path" when the selector's name differs): the selector's name and the object's dotted path */
export function selectableField(decl: string): { label: string; path: string } {
  const eq = decl.indexOf('=');
  return eq < 0 ? { label: decl, path: decl } : { label: decl.slice(0, eq), path: decl.slice(eq + 1) };
}

/** The value a field selector compares: strings as they are, booleans and numbers as text, absent as "". */
export function fieldValue(obj: any, path: string[]): string {
  let cur = obj;
  for (const p of path) {
    if (cur == null) return '';
    cur = cur[p];
  }
  if (cur == null) return '';
  return typeof cur === 'string' ? cur : String(cur);
}

/** the value a field term requires exactly (for `metadata.name=x`), if any */
export function requiresExactMatch(terms: FieldTerm[], fieldName: string): string | undefined {
  for (const t of terms) if (t.field === fieldName && t.op === '=') return t.value;
  return undefined;
}
