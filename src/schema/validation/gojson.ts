// The errors of Go's json.Unmarshal into a map[string]interface{}, which Kubernetes reports for
// docker config secrets: the syntax error of encoding/json's scanner, or the type mismatch.

function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return `'"'`;
  const ch = String.fromCodePoint(c);
  if (c < 0x20 || c === 0x7f) {
    const named: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r' };
    return `'${named[c] ?? `\\x${c.toString(16).padStart(2, '0')}`}'`;
  }
  if (c === 0x5c) return "'\\\\'";
  return `'${ch}'`;
}

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

class SyntaxError_ extends Error {}

/** null when the bytes are valid JSON, else Go's syntax error text */
export function goJSONSyntaxError(data: Uint8Array): string | null {
  const stack: ('key' | 'value' | 'array')[] = [];
  let i = 0;
  const err = (c: number, ctx: string) => new SyntaxError_(`invalid character ${quoteChar(c)} ${ctx}`);
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

/** the error of json.Unmarshal(data, &map[string]interface{}{}), or null */
export function goUnmarshalObjectError(data: Uint8Array): string | null {
  const syn = goJSONSyntaxError(data);
  if (syn) return syn;
  const v = JSON.parse(Buffer.from(data).toString('utf8'));
  const type = 'map[string]interface {}';
  if (v === null || (typeof v === 'object' && !Array.isArray(v))) return null;
  const what = Array.isArray(v) ? 'array' : typeof v === 'string' ? 'string' : typeof v === 'number' ? 'number' : 'bool';
  return `json: cannot unmarshal ${what} into Go value of type ${type}`;
}
