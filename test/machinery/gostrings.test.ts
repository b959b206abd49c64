// Go's strconv quoting and friends, shared by every module that writes Kubernetes' messages.
// The expected strings are what Go's strconv.Quote / QuoteToASCII / QuoteRune write.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goFloat, goFormatDuration, goFormatFloat, goParseDuration, goTimeQuote, goJSON, goJSONString, goJSONSyntaxError, goQuote, goQuoteList, goQuoteRune, goQuoteToASCII, goStringCompare, isPrintRune } from '../../src/machinery/gostrings.js';

test('goQuote: ASCII, quotes, backslashes and the named escapes', () => {
  assert.equal(goQuote(''), '""');
  assert.equal(goQuote('abc def'), '"abc def"');
  assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
  assert.equal(goQuote("it's"), `"it's"`);
  assert.equal(goQuote('\x07\b\f\n\r\t\v'), '"\\a\\b\\f\\n\\r\\t\\v"');
  assert.equal(goQuote('\x00\x01\x1b\x7f'), '"\\x00\\x01\\x1b\\x7f"');
});

test('goQuote: printable runes stay, other runes are \\u or \\U escapes (unicode.IsPrint)', () => {
  assert.equal(goQuote('héllo 日本 😀'), '"héllo 日本 😀"');
  // C1 controls, NO-BREAK SPACE, SOFT HYPHEN: not printable in Go (some copies kept them)
  assert.equal(goQuote('\u0085\u009f'), '"\\u0085\\u009f"');
  assert.equal(goQuote('a\u00a0b'), '"a\\u00a0b"');
  assert.equal(goQuote('\u00ad'), '"\\u00ad"');
  assert.equal(goQuote('\u00a1\u00ff'), '"\u00a1\u00ff"');
  assert.equal(goQuote('\u200b\u2028\ufeff'), '"\\u200b\\u2028\\ufeff"');
  assert.equal(goQuote('\u{e0001}'), '"\\U000e0001"');
  assert.equal(goQuote('\u{f0000}'), '"\\U000f0000"');
});

test('goQuote: U+FFFD is printable; a lone surrogate is the U+FFFD Go would hold in its place', () => {
  // some copies wrote \ufffd for U+FFFD itself, or kept / escaped a lone surrogate
  assert.equal(goQuote('a\ufffdb'), '"a\ufffdb"');
  assert.equal(goQuote('a\ud800b'), '"a\ufffdb"');
  assert.equal(goQuote('\udc00'), '"\ufffd"');
  assert.equal(goQuoteToASCII('\ud800'), '"\\ufffd"');
});

test('goQuoteToASCII, goQuoteRune, goQuoteList', () => {
  assert.equal(goQuoteToASCII('é日😀\n'), '"\\u00e9\\u65e5\\U0001f600\\n"');
  assert.equal(goQuoteRune(0x61), "'a'");
  assert.equal(goQuoteRune(0x27), "'\\''");
  assert.equal(goQuoteRune(0x22), `'"'`);
  assert.equal(goQuoteRune(0xd800), "'\ufffd'");
  assert.equal(goQuoteRune(0x110000), "'\ufffd'");
  assert.equal(goQuoteRune(0xe9, true), "'\\u00e9'");
  assert.equal(goQuoteList(['a', 'b"c']), '["a" "b\\"c"]');
  assert.equal(goQuoteList([]), '[]');
  assert.equal(goQuoteList(undefined), '[]');
  // one argument: safe to pass to map (an index must not turn on QuoteToASCII)
  assert.deepEqual(['é', 'é'].map(goQuote), ['"é"', '"é"']);
});

test('isPrintRune follows unicode.IsPrint', () => {
  assert.equal(isPrintRune(0x20), true);
  assert.equal(isPrintRune(0x7e), true);
  assert.equal(isPrintRune(0x7f), false);
  assert.equal(isPrintRune(0x09), false);
  assert.equal(isPrintRune(0xa0), false);
  assert.equal(isPrintRune(0x3000), false); // IDEOGRAPHIC SPACE (Zs)
  assert.equal(isPrintRune(0xe9), true);
  assert.equal(isPrintRune(0xd800), false);
  assert.equal(isPrintRune(0x1f600), true);
});

test('goFloat is strconv.FormatFloat(f, \'g\', -1, 64), as fmt\'s %v prints a float64', () => {
  assert.equal(goFloat(0.005), '0.005');
  assert.equal(goFloat(100000), '100000');
  assert.equal(goFloat(1e6), '1e+06');
  assert.equal(goFloat(1234567), '1.234567e+06');
  assert.equal(goFloat(1e-5), '1e-05');
  assert.equal(goFloat(1e100), '1e+100');
  assert.equal(goFloat(5e-324), '5e-324');
  // where the metrics copy differed (it took the exponent from Math.log10, and printed JS's words)
  assert.equal(goFloat(999999.9999999999), '999999.9999999999');
  assert.equal(goFloat(9.999999999999999e-5), '9.999999999999999e-05');
  assert.equal(goFloat(-0), '-0');
  assert.equal(goFloat(NaN), 'NaN');
  assert.equal(goFloat(Infinity), '+Inf');
  assert.equal(goFloat(-Infinity), '-Inf');
  assert.equal(goFormatFloat(2.5, 'f', 0), '2');
  assert.equal(goFormatFloat(1234.5678, 'e', 3), '1.235e+03');
});

test('goStringCompare is UTF-8 byte order: code points above U+FFFF sort after every BMP one', () => {
  assert.equal(goStringCompare('a', 'b'), -1);
  assert.equal(goStringCompare('b', 'a'), 1);
  assert.equal(goStringCompare('ab', 'ab'), 0);
  assert.equal(goStringCompare('a', 'ab'), -1);
  assert.equal(goStringCompare('\uffff', '\u{10000}'), -1); // UTF-16 order says the opposite
  assert.equal(goStringCompare('\u{1F600}', '\ue000'), 1);
  assert.equal(goStringCompare('\u{1F600}', 'z'), 1);
  assert.deepEqual(['\u{10000}', '\uffff', 'Z', 'a', '\u00e9'].sort(goStringCompare), ['Z', 'a', '\u00e9', '\uffff', '\u{10000}']);
});

test('goJSON: json.Marshal of an unstructured value (keys in Go order, HTML escaped)', () => {
  assert.equal(goJSONString('a<b>&c\u2028\u2029"\n'), '"a\\u003cb\\u003e\\u0026c\\u2028\\u2029\\"\\n"');
  assert.equal(goJSON({ b: [1, 'x', true, null], a: { d: undefined, c: 1.5e-7 } }), '{"a":{"c":1.5e-7},"b":[1,"x",true,null]}');
  assert.equal(goJSON(1e21), '1e+21');
  assert.equal(goJSON(NaN), 'null');
  assert.equal(goJSON(12345678901234567890n), '12345678901234567890');
  // keys sort in Go's (byte) order; the service account token copy sorted in UTF-16 order
  assert.equal(goJSON({ '\u{10000}': 1, '\uffff': 2 }), '{"\uffff":2,"\u{10000}":1}');
});

test('goJSONSyntaxError: encoding/json\'s scanner errors, on bytes or on a string\'s UTF-8', () => {
  assert.equal(goJSONSyntaxError('{"a":[1,2.5e3,true,null,"x\\u00e9"]}'), null);
  assert.equal(goJSONSyntaxError(Buffer.from(' {} ')), null);
  assert.equal(goJSONSyntaxError(''), 'unexpected end of JSON input');
  assert.equal(goJSONSyntaxError('{"a":'), 'unexpected end of JSON input');
  assert.equal(goJSONSyntaxError('{} x'), "invalid character 'x' after top-level value");
  assert.equal(goJSONSyntaxError('[1,]'), "invalid character ']' looking for beginning of value");
  assert.equal(goJSONSyntaxError("{'a':1}"), "invalid character '\\'' looking for beginning of object key string");
  assert.equal(goJSONSyntaxError('{"a" 1}'), "invalid character '1' after object key");
  assert.equal(goJSONSyntaxError('tru'), 'unexpected end of JSON input');
  assert.equal(goJSONSyntaxError('nul!'), "invalid character '!' in literal null (expecting 'l')");
  assert.equal(goJSONSyntaxError('"a\tb"'), "invalid character '\\t' in string literal");
  assert.equal(goJSONSyntaxError('"\\x"'), "invalid character 'x' in string escape code");
  assert.equal(goJSONSyntaxError('-x'), "invalid character 'x' in numeric literal");
  assert.equal(goJSONSyntaxError('1.e'), "invalid character 'e' after decimal point in numeric literal");
  assert.equal(goJSONSyntaxError('01'), "invalid character '1' after top-level value");
  // Go's scanner reads bytes: a character outside ASCII is named by its first byte, as
  // strconv.Quote(string(rune(b))) names it (kubectl's copy named the whole code point, the API
  // server's printed bytes 0x80..0xa0 and 0xad as they were)
  assert.equal(goJSONSyntaxError('é'), "invalid character 'Ã' looking for beginning of value");
  assert.equal(goJSONSyntaxError('[1 日]'), "invalid character 'æ' after array element");
  assert.equal(goJSONSyntaxError(Uint8Array.of(0x80)), "invalid character '\\u0080' looking for beginning of value");
  assert.equal(goJSONSyntaxError(Uint8Array.of(0xc2, 0xa0)), "invalid character 'Â' looking for beginning of value");
  assert.equal(goJSONSyntaxError(Uint8Array.of(0x7b, 0xa0)), "invalid character '\\u00a0' looking for beginning of object key string");
});

test('goParseDuration and goFormatDuration: time.ParseDuration and Duration.String', () => {
  const S = 1000000000n;
  assert.equal(goParseDuration('1h2m3.5s'), 3723n * S + S / 2n);
  assert.equal(goFormatDuration(3723n * S + S / 2n), '1h2m3.5s');
  assert.equal(goFormatDuration(0n), '0s');
  assert.equal(goFormatDuration(1500n), '1.5µs');
  // the most negative duration parses (the protobuf codec's copy refused it)
  assert.equal(goParseDuration('-9223372036854775808ns'), -(1n << 63n));
  assert.equal(goFormatDuration(-(1n << 63n)), '-2562047h47m16.854775808s');
  assert.throws(() => goParseDuration('9223372036854775808ns'), { message: 'time: invalid duration "9223372036854775808ns"' });
  // overflow is an error (cron's copy only checked the syntax)
  assert.throws(() => goParseDuration('9999999999999999999h'), { message: 'time: invalid duration "9999999999999999999h"' });
  assert.throws(() => goParseDuration('3'), { message: 'time: missing unit in duration "3"' });
  // the time package quotes with its own quote: bytes outside printable ASCII as \xNN (the copies
  // used strconv.Quote or JSON.stringify)
  assert.throws(() => goParseDuration('1d'), { message: 'time: unknown unit "d" in duration "1d"' });
  assert.throws(() => goParseDuration('1\u00b5'), { message: 'time: unknown unit "\\xc2\\xb5" in duration "1\\xc2\\xb5"' });
  assert.throws(() => goParseDuration('x\ny'), { message: 'time: invalid duration "x\\x0ay"' });
  assert.equal(goTimeQuote('a"b\\c\u007f\u00e9'), '"a\\"b\\\\c\u007f\\xc3\\xa9"');
});
