// Go's formatting of strings and values, shared by every module that writes a message the way
// Kubernetes (or kubectl) writes it: strconv's quoting (%q), unicode.IsPrint.
//
// Kubernetes' error messages, warnings and log lines are part of Keelson's interface (clients and
// tests compare them byte for byte), so these reproduce Go's output exactly rather than doing
// what would read well in JavaScript. Go strings are UTF-8 bytes and JavaScript's are UTF-16:
// where a JavaScript string has no UTF-8 form (a lone surrogate), it is taken as U+FFFD, the rune
// Go's decoders (encoding/json, utf8.DecodeRune) put in its place and the one Node's UTF-8
// encoder writes for it.

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
