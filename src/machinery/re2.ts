// Go's regular expressions (RE2 syntax) as JavaScript RegExps. Kubernetes checks a CRD schema's
// `pattern` and evaluates CEL's matches(), find() and findAll() with Go's regexp package, and real
// schemas use its syntax where JavaScript's differs: flag groups such as `^(?i)[a-z]+$` (the Gateway
// API's gRPC method rules), `(?P<name>...)`, `\A`, `\z`, `\Q...\E`, `\x{263a}` and the ASCII classes
// `[[:alpha:]]`. No library does this translation (re2 bindings are native code); it is small:
// the pattern is rewritten token by token, and a case-insensitive part that is not the whole
// pattern spells its letters both ways (`[aA]`), as Node 20's RegExp has no inline modifiers.
// The ungreedy flag (`U`) and `\C` are refused as invalid.

export class RE2SyntaxError extends Error {}

const POSIX: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

const cache = new Map<string, RegExp>();

/** the RegExp of a Go regular expression (flags: extra JavaScript flags, e.g. `g`); RE2SyntaxError when it is not valid */
export function re2(pattern: string, flags = ''): RegExp {
  const key = `${flags}/${pattern}`;
  let re = cache.get(key);
  if (!re) {
    const t = translate(pattern);
    try {
      re = new RegExp(t.source, `${flags}u${t.flags}`);
    } catch (e) {
      throw new RE2SyntaxError((e as Error).message.replace(t.source, pattern));
    }
    if (cache.size > 500) cache.clear();
    cache.set(key, re);
  }
  re.lastIndex = 0;
  return re;
}

interface State {
  i: boolean;
  s: boolean;
  m: boolean;
}

function isLetter(c: string): boolean {
  return c.toLowerCase() !== c.toUpperCase();
}

function bothCases(c: string): string {
  const lo = c.toLowerCase();
  const up = c.toUpperCase();
  return lo === up ? c : `${lo}${up}`;
}

/** a pattern's JavaScript source and flags; the flags of a leading flag group become the RegExp's own */
function translate(p: string): { source: string; flags: string } {
  // a pattern whose first flag group comes before any letter (`(?i)x`, `^(?i)x`) sets flags for all of it
  let globalI = false;
  let globalS = false;
  let globalM = false;
  const lead = /^(\^|\\A)?\(\?([imsU]+)\)/.exec(p);
  if (lead) {
    if (lead[2]!.includes('U')) throw new RE2SyntaxError(`invalid or unsupported Perl syntax: \`(?${lead[2]}\``);
    globalI = lead[2]!.includes('i');
    globalS = lead[2]!.includes('s');
    globalM = lead[2]!.includes('m');
    p = (lead[1] ?? '') + p.slice(lead[0].length);
  }
  let out = '';
  const stack: State[] = [];
  let st: State = { i: false, s: false, m: false };
  let k = 0;
  const n = p.length;
  while (k < n) {
    const c = p[k]!;
    if (c === '\\') {
      const [text, used] = escape(p, k, st.i && !globalI, false);
      out += text;
      k += used;
      continue;
    }
    if (c === '[') {
      const [text, used] = charClass(p, k, st.i && !globalI);
      out += text;
      k += used;
      continue;
    }
    if (c === '(') {
      if (p.startsWith('(?P<', k)) {
        out += '(?<';
        k += 4;
        stack.push(st);
        continue;
      }
      const fg = /^\(\?(-?[imsU]+(?:-[imsU]*)?)(\)|:)/.exec(p.slice(k));
      if (fg) {
        const spec = fg[1]!;
        if (spec.includes('U')) throw new RE2SyntaxError(`invalid or unsupported Perl syntax: \`(?${spec}\``);
        const [on, off = ''] = spec.split('-');
        const next: State = { ...st };
        for (const f of on!) next[f as 'i' | 's' | 'm'] = true;
        for (const f of off) next[f as 'i' | 's' | 'm'] = false;
        if (fg[2] === ')') {
          // (?i): to the end of the enclosing group
          st = next;
          k += fg[0].length;
        } else {
          stack.push(st);
          st = next;
          out += '(?:';
          k += fg[0].length;
        }
        continue;
      }
      stack.push(st);
      out += '(';
      k++;
      if (p[k] === '?') {
        // (?: and (?<name>, as they are
        out += '?';
        k++;
      }
      continue;
    }
    if (c === ')') {
      st = stack.pop() ?? st;
      out += ')';
      k++;
      continue;
    }
    if (c === '.' && st.s && !globalS) {
      out += '[\\s\\S]';
      k++;
      continue;
    }
    if ((c === '^' || c === '$') && st.m && !globalM) {
      out += c === '^' ? '(?<=^|\\n)' : '(?=$|\\n)';
      k++;
      continue;
    }
    if (st.i && !globalI && isLetter(c)) {
      const both = bothCases(c);
      out += both.length > 1 ? `[${both}]` : c;
      k++;
      continue;
    }
    out += c;
    k++;
  }
  return { source: out, flags: `${globalI ? 'i' : ''}${globalS ? 's' : ''}${globalM ? 'm' : ''}` };
}

/** an escape at p[k]: its JavaScript text and the characters it used */
function escape(p: string, k: number, fold: boolean, inClass: boolean): [string, number] {
  const e = p[k + 1];
  if (e === undefined) throw new RE2SyntaxError('trailing backslash at end of expression');
  if (!inClass && e === 'A') return ['^', 2];
  if (!inClass && e === 'z') return ['$', 2];
  if (e === 'C') throw new RE2SyntaxError('invalid escape sequence: `\\C`');
  if (e === 'Q') {
    const end = p.indexOf('\\E', k + 2);
    const lit = p.slice(k + 2, end < 0 ? p.length : end);
    let text = '';
    for (const ch of lit) text += fold && isLetter(ch) ? `[${bothCases(ch)}]` : ch.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
    return [text, end < 0 ? p.length - k : end + 2 - k];
  }
  if (e === 'x' && p[k + 2] === '{') {
    const close = p.indexOf('}', k + 3);
    if (close < 0) throw new RE2SyntaxError('invalid escape sequence');
    return [`\\u{${p.slice(k + 3, close)}}`, close + 1 - k];
  }
  if ((e === 'p' || e === 'P') && p[k + 2] !== '{') return [`\\${e}{${p[k + 2] ?? ''}}`, 3];
  if (!/[0-9A-Za-z]/.test(e)) {
    // Go escapes any punctuation; JavaScript's u mode only its syntax characters (and `-` in a class)
    if ('^$\\.*+?()[]{}|/'.includes(e) || (inClass && e === '-')) return [`\\${e}`, 2];
    return [e, 2];
  }
  if (fold && isLetter(e) && !/[dDwWsSbBpPnrtfvx]/.test(e)) return [`[${bothCases(e)}]`, 2];
  return [`\\${e}`, 2];
}

/** a character class at p[k] (`[...]`): its JavaScript text and the characters it used */
function charClass(p: string, k: number, fold: boolean): [string, number] {
  let j = k + 1;
  let out = '[';
  if (p[j] === '^') {
    out += '^';
    j++;
  }
  // a `]` first in the class is a literal
  if (p[j] === ']') {
    out += '\\]';
    j++;
  }
  let extra = '';
  while (j < p.length && p[j] !== ']') {
    if (p.startsWith('[:', j)) {
      const end = p.indexOf(':]', j + 2);
      const name = end < 0 ? '' : p.slice(j + 2, end);
      const neg = name.startsWith('^');
      const cls = POSIX[neg ? name.slice(1) : name];
      if (cls === undefined) throw new RE2SyntaxError(`invalid character class range: \`[:${name}:]\``);
      if (neg) throw new RE2SyntaxError(`unsupported negated character class: \`[:${name}:]\``);
      out += cls;
      j = end + 2;
      continue;
    }
    if (p[j] === '\\') {
      const [text, used] = escape(p, j, false, true);
      out += text;
      j += used;
      continue;
    }
    const c = p[j]!;
    if (p[j + 1] === '-' && p[j + 2] !== undefined && p[j + 2] !== ']') {
      const hi = p[j + 2]!;
      out += `${c === '[' ? '\\[' : c}-${hi}`;
      if (fold && /[a-zA-Z]/.test(c) && /[a-zA-Z]/.test(hi)) extra += `${bothCases(c).replace(c, '')}-${bothCases(hi).replace(hi, '')}`;
      j += 3;
      continue;
    }
    out += c === '[' ? '\\[' : c;
    if (fold && isLetter(c)) extra += bothCases(c).replace(c, '');
    j++;
  }
  if (j >= p.length) throw new RE2SyntaxError(`missing closing ]: \`${p.slice(k)}\``);
  return [`${out}${extra}]`, j + 1 - k];
}
