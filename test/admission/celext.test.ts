// Kubernetes' CEL libraries beyond the core (src/apiserver/admission/celext.ts through cel.ts): IP
// and CIDR, URLs, semver, the named formats, the sets library and cel-go's strings extension
// (format, quote, offsets and limits), with the results Kubernetes documents for its examples.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateCELValue, celUndeclaredReference } from '../../src/apiserver/admission/cel.js';

const ev = (e: string, vars: Record<string, unknown> = {}) => evaluateCELValue(e, vars);
const throws = (e: string, re: RegExp) =>
  assert.throws(
    () => ev(e),
    (err: Error) => re.test(err.message),
    e,
  );

test('ip(): parsing, canonical strings, the address classes', () => {
  const cases: [string, unknown][] = [
    ["isIP('192.168.0.1')", true],
    ["isIP('::1')", true],
    ["isIP('1.2.3')", false],
    ["isIP('01.2.3.4')", false],
    ["isIP('fe80::1%eth0')", false],
    ["isIP('::ffff:1.2.3.4')", false],
    ["ip('127.0.0.1').family()", 4n],
    ["ip('::1').family()", 6n],
    ["string(ip('2001:DB8:0:0:0:0:0:1'))", '2001:db8::1'],
    ["string(ip('1:0:0:1:0:0:0:1'))", '1:0:0:1::1'],
    ["ip.isCanonical('2001:db8::1')", true],
    ["ip.isCanonical('2001:DB8::1')", false],
    ["ip('0.0.0.0').isUnspecified()", true],
    ["ip('::').isUnspecified()", true],
    ["ip('127.0.0.1').isLoopback()", true],
    ["ip('2001:db8::abcd').isLoopback()", false],
    ["ip('224.0.0.1').isLinkLocalMulticast()", true],
    ["ip('224.0.1.1').isLinkLocalMulticast()", false],
    ["ip('ff02::1').isLinkLocalMulticast()", true],
    ["ip('169.254.169.254').isLinkLocalUnicast()", true],
    ["ip('fe80::1').isLinkLocalUnicast()", true],
    ["ip('fd80::1').isLinkLocalUnicast()", false],
    ["ip('192.168.0.1').isGlobalUnicast()", true],
    ["ip('255.255.255.255').isGlobalUnicast()", false],
    ["ip('ff00::1').isGlobalUnicast()", false],
    ["ip('10.0.0.1') == ip('10.0.0.1')", true],
  ];
  for (const [e, want] of cases) assert.equal(ev(e), want, e);
  throws("ip('1.2.3')", /^IP Address "1\.2\.3" parse error during conversion from string: ParseAddr\("1\.2\.3"\): IPv4 address too short$/);
  throws("ip('fe80::1%eth0')", /^IP address "fe80::1%eth0" with zone value is not allowed$/);
  throws("ip('::ffff:1.2.3.4')", /^IPv4-mapped IPv6 address "::ffff:1\.2\.3\.4" is not allowed$/);
});

test('cidr(): containment, masking, prefix length', () => {
  const cases: [string, unknown][] = [
    ["isCIDR('192.168.0.0/16')", true],
    ["isCIDR('192.168.0.0/33')", false],
    ["isCIDR('::1/129')", false],
    ["cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", true],
    ["cidr('192.168.0.0/24').containsIP('192.168.1.1')", false],
    ["cidr('192.168.0.0/16').containsCIDR(cidr('192.168.10.0/24'))", true],
    ["cidr('192.168.1.0/24').containsCIDR('192.168.2.0/24')", false],
    ["cidr('192.168.0.0/24').containsCIDR('192.168.0.0/16')", false],
    ["string(cidr('192.168.0.1/24').ip())", '192.168.0.1'],
    ["cidr('::1/128').ip().family()", 6n],
    ["string(cidr('192.168.0.1/24').masked())", '192.168.0.0/24'],
    ["cidr('192.168.0.0/24') == cidr('192.168.0.0/24').masked()", true],
    ["cidr('192.168.0.1/24') == cidr('192.168.0.1/24').masked()", false],
    ["cidr('::1/128').prefixLength()", 128n],
    ["cidr('10.0.0.0/8').containsIP('fd00::1')", false],
  ];
  for (const [e, want] of cases) assert.equal(ev(e), want, e);
  throws("cidr('10.0.0.0')", /^network address parse error during conversion from string: /);
});

test('url(): parts of a request URI as Go parses it', () => {
  const cases: [string, unknown][] = [
    ["isURL('https://example.com:80/path?query=val#fragment')", true],
    ["isURL('/absolute-path')", true],
    ["isURL('../relative-path')", false],
    ["isURL('example.com:80')", true], // (Go: scheme example.com, opaque 80)
    ["isURL('1example.com:80')", false],
    ["url('https://example.com:80/').getScheme()", 'https'],
    ["url('https://example.com:80/').getHost()", 'example.com:80'],
    ["url('https://example.com:80/').getHostname()", 'example.com'],
    ["url('https://[::1]:80/').getHostname()", '::1'],
    ["url('https://[::1]:80/').getPort()", '80'],
    ["url('https://example.com/').getPort()", ''],
    ["url('https://example.com/path with spaces/').getEscapedPath()", '/path with spaces/'],
    ["url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()['k2']", ['b', 'c']],
    ["url('https://example.com/path?k1=a+b').getQuery()['k1'][0]", 'a b'],
    ["url('/p').getHost()", ''],
  ];
  for (const [e, want] of cases) assert.deepEqual(ev(e), want, e);
});

test('semver(): parts and precedence, with and without normalizing', () => {
  const cases: [string, unknown][] = [
    ["isSemver('1.0.0')", true],
    ["isSemver('v1.0')", false],
    ["isSemver('v1.0', true)", true],
    ["isSemver('1.0.0-alpha.01')", false],
    ["semver('1.2.3').major()", 1n],
    ["semver('1.2.3').minor()", 2n],
    ["semver('1.2.3').patch()", 3n],
    ["semver('1.2.3').isLessThan(semver('1.10.0'))", true],
    ["semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1'))", true],
    ["semver('1.0.0-alpha.beta').isLessThan(semver('1.0.0-beta'))", true],
    ["semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))", true],
    ["semver('2.0.0').isGreaterThan(semver('1.99.99'))", true],
    ["semver('1.0.0+build').compareTo(semver('1.0.0'))", 0n],
    ["semver('v01.1', true).minor()", 1n],
  ];
  for (const [e, want] of cases) assert.equal(ev(e), want, e);
  throws("semver('v1.0')", /^could not parse "v1\.0" as semver$/);
});

test('named formats: validate() is none when valid, the problems when not', () => {
  assert.equal(ev("format.dns1123Label().validate('my-name').hasValue()"), false);
  assert.deepEqual(ev("format.dns1123Label().validate('My_Name').value()"), [
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
  ]);
  assert.equal(ev("format.dns1123LabelPrefix().validate('prefix-').hasValue()"), false);
  assert.equal(ev("format.named('uuid').value().validate('0b4e2f08-3b5f-4a86-9a4f-0e0c7c8d3f6a').hasValue()"), false);
  assert.equal(ev("format.named('nope').hasValue()"), false);
  assert.equal(ev("format.date().validate('2026-12-05').hasValue()"), false);
  assert.equal(ev("format.datetime().validate('2026-12-05').hasValue()"), true);
  assert.equal(ev("!format.qualifiedName().validate(self).hasValue()", { self: 'example.com/name' }), true);
});

test('sets, strings.quote, format(), indexOf offsets and split limits', () => {
  const cases: [string, unknown][] = [
    ['sets.contains([1, 2, 3], [2, 3])', true],
    ['sets.contains([1, 2], [2, 3])', false],
    ['sets.contains([1.0, 2], [1])', true],
    ['sets.equivalent([1, 2, 2], [2, 1])', true],
    ['sets.intersects([1, 2], [3, 2])', true],
    ['sets.intersects([1], [])', false],
    ['strings.quote("a\\nb\\"c")', '"a\\nb\\"c"'],
    ['"%s is %d years and %.2f%% done".format(["Ann", 42, 99.5])', 'Ann is 42 years and 99.50% done'],
    ['"%s".format([[1, "a", true]])', '[1, a, true]'],
    ['"%x %X %o %b".format([255, "hi", 8, 5])', 'ff 6869 10 101'],
    ['"%e".format([1234.5678])', '1.234568e+03'],
    ["'hello mellow'.indexOf('ello', 2)", 7n],
    ["'hello mellow'.lastIndexOf('ello', 6)", 1n],
    ["'hello'.indexOf('')", 0n],
    ["'a,b,c'.split(',', 2)", ['a', 'b,c']],
    ["'a,b,c'.split(',', 0)", []],
    ["'a,b,c'.split(',', -1)", ['a', 'b', 'c']],
  ];
  for (const [e, want] of cases) assert.deepEqual(ev(e), want, e);
  throws('"%d".format(["x"])', /decimal clause can only be used on integers, was given string/);
  throws('"%s %s".format(["x"])', /index 1 out of range/);
  // math and base64 are not Kubernetes' libraries: not evaluated here either
  throws('math.greatest(1, 2)', /undeclared reference to 'math\.greatest'/);
});

test('library namespaces are not undeclared references when a rule is checked', () => {
  const declared = new Set(['self', 'oldSelf']);
  assert.equal(celUndeclaredReference('sets.contains(self.a, ["x"])', declared), undefined);
  assert.equal(celUndeclaredReference('!format.dns1123Label().validate(self.name).hasValue()', declared), undefined);
  assert.equal(celUndeclaredReference('ip.isCanonical(self.ip) && optional.of(1).hasValue()', declared), undefined);
  assert.deepEqual(celUndeclaredReference('sets.contains(other, ["x"])', declared), { name: 'other', pos: 14 });
});
