// The parts of Kubernetes' CEL libraries that are about their own values rather than the
// interpreter (cel.ts dispatches to these): IP addresses and CIDRs (library IP and CIDR, as Go's
// net/netip parses and prints them), URLs (library URLs, as Go's url.ParseRequestURI parses them),
// semantic versions (library Semver, as blang/semver parses them), named formats (library Format:
// `format.dns1123Label().validate(s)`), and the string format() of cel-go's strings extension.
import { isDNS1035Label, isDNS1123Label, isDNS1123Subdomain, isLabelValue, isQualifiedName, validateName } from '../../machinery/validation.js';
import { parseTimestamp } from './celtime.js';

/** an error of a library function, with the words of its Go implementation */
export class CelLibraryError extends Error {}

// ---------------------------------------------------------------------------------------------
// IP addresses and CIDRs

/** an IPv4 (4 bytes) or IPv6 (16 bytes) address */
export class CelIP {
  constructor(readonly bytes: Uint8Array) {}
  get family(): 4 | 6 {
    return this.bytes.length === 4 ? 4 : 6;
  }
  toString(): string {
    return ipString(this.bytes);
  }
}

export class CelCIDR {
  constructor(
    readonly ip: CelIP,
    readonly bits: number,
  ) {}
  toString(): string {
    return `${this.ip}/${this.bits}`;
  }
  masked(): CelCIDR {
    return new CelCIDR(new CelIP(maskBytes(this.ip.bytes, this.bits)), this.bits);
  }
  containsIP(ip: CelIP): boolean {
    return ip.family === this.ip.family && sameBytes(maskBytes(ip.bytes, this.bits), maskBytes(this.ip.bytes, this.bits));
  }
  containsCIDR(c: CelCIDR): boolean {
    return c.ip.family === this.ip.family && this.bits <= c.bits && this.containsIP(c.ip);
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function maskBytes(b: Uint8Array, bits: number): Uint8Array {
  const out = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    out[i] = b[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return out;
}

/** Go's netip.ParseAddr; undefined and the reason when it fails */
function parseAddr(s: string): { bytes: Uint8Array; zone: string } | string {
  if (s === '') return 'unable to parse IP';
  if (!s.includes(':')) {
    const b = parseIPv4(s);
    return typeof b === 'string' ? b : { bytes: b, zone: '' };
  }
  let zone = '';
  let addr = s;
  const pct = s.indexOf('%');
  if (pct >= 0) {
    zone = s.slice(pct + 1);
    addr = s.slice(0, pct);
    if (zone === '') return 'zone must be a non-empty string';
  }
  const b = parseIPv6(addr);
  return typeof b === 'string' ? b : { bytes: b, zone };
}

function parseIPv4(s: string): Uint8Array | string {
  const parts = s.split('.');
  if (parts.length < 4) return 'IPv4 address too short';
  if (parts.length > 4) return 'IPv4 address too long';
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    if (p === '') return 'IPv4 field must have at least one digit';
    if (!/^[0-9]+$/.test(p)) return 'unexpected character';
    if (p.length > 1 && p[0] === '0') return 'IPv4 field has octet with leading zero';
    const n = Number(p);
    if (n > 255) return 'IPv4 field has value >255';
    out[i] = n;
  }
  return out;
}

function parseIPv6(s: string): Uint8Array | string {
  const halves = s.split('::');
  if (halves.length > 2) return 'multiple :: in address';
  const groups = (h: string): number[] | string => {
    if (h === '') return [];
    const out: number[] = [];
    const parts = h.split(':');
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (i === parts.length - 1 && p.includes('.')) {
        const v4 = parseIPv4(p);
        if (typeof v4 === 'string') return v4;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
        continue;
      }
      if (!/^[0-9a-fA-F]{1,4}$/.test(p)) return p.length > 4 ? 'IPv6 field has value >=2^16' : 'each colon-separated field must have at least one digit';
      out.push(parseInt(p, 16));
    }
    return out;
  };
  const head = groups(halves[0]!);
  if (typeof head === 'string') return head;
  let all: number[];
  if (halves.length === 2) {
    const tail = groups(halves[1]!);
    if (typeof tail === 'string') return tail;
    if (head.length + tail.length > 7) return 'IPv6 address too long';
    all = [...head, ...new Array(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    if (head.length < 8) return 'IPv6 address too short';
    if (head.length > 8) return 'IPv6 address too long';
    all = head;
  }
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  return out;
}

function is4In6(b: Uint8Array): boolean {
  return b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
}

/** Go's netip.Addr.String(): dotted IPv4; IPv6 in RFC 5952's form (the longest run of zero groups as ::) */
function ipString(b: Uint8Array): string {
  if (b.length === 4) return [...b].join('.');
  const g: number[] = [];
  for (let i = 0; i < 16; i += 2) g.push((b[i]! << 8) | b[i + 1]!);
  let bestAt = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      bestAt = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(':');
  if (bestAt < 0) return hex(g);
  return `${hex(g.slice(0, bestAt))}::${hex(g.slice(bestAt + bestLen))}`;
}

/** the library's ip(): refuses zones and IPv4-mapped IPv6 addresses, as Kubernetes does */
export function parseIP(raw: string): CelIP {
  const a = parseAddr(raw);
  if (typeof a === 'string') throw new CelLibraryError(`IP Address ${JSON.stringify(raw)} parse error during conversion from string: ParseAddr(${JSON.stringify(raw)}): ${a}`);
  if (a.zone !== '') throw new CelLibraryError(`IP address ${JSON.stringify(raw)} with zone value is not allowed`);
  if (is4In6(a.bytes)) throw new CelLibraryError(`IPv4-mapped IPv6 address ${JSON.stringify(raw)} is not allowed`);
  return new CelIP(a.bytes);
}

export function parseCIDR(raw: string): CelCIDR {
  const fail = (why: string) => new CelLibraryError(`network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(${JSON.stringify(raw)}): ${why}`);
  const slash = raw.lastIndexOf('/');
  if (slash < 0) throw fail('no \'/\'');
  const a = parseAddr(raw.slice(0, slash));
  if (typeof a === 'string') throw fail(`ParseAddr(${JSON.stringify(raw.slice(0, slash))}): ${a}`);
  if (a.zone !== '') throw fail('IPv6 zones cannot be present in a prefix');
  const bitsText = raw.slice(slash + 1);
  const max = a.bytes.length * 8;
  if (!/^(0|[1-9][0-9]*)$/.test(bitsText) || Number(bitsText) > max) throw fail(`bad bits after slash: ${JSON.stringify(bitsText)}`);
  if (is4In6(a.bytes)) throw new CelLibraryError(`network address parse error during conversion from string: IPv4-mapped IPv6 address ${JSON.stringify(raw)} is not allowed`);
  return new CelCIDR(new CelIP(a.bytes), Number(bitsText));
}

/** the library's ip.isCanonical(string) */
export function ipIsCanonical(raw: string): boolean {
  return parseIP(raw).toString() === raw;
}

/** the methods of an IP address (undefined: no such method) */
export function ipMethod(fn: string, ip: CelIP): boolean | bigint | undefined {
  const b = ip.bytes;
  const v4 = b.length === 4;
  const loopback = v4 ? b[0] === 127 : b.every((x, i) => x === (i === 15 ? 1 : 0));
  const unspecified = b.every((x) => x === 0);
  const multicast = v4 ? (b[0]! & 0xf0) === 0xe0 : b[0] === 0xff;
  const linkLocalUnicast = v4 ? b[0] === 169 && b[1] === 254 : b[0] === 0xfe && (b[1]! & 0xc0) === 0x80;
  switch (fn) {
    case 'family':
      return BigInt(ip.family);
    case 'isUnspecified':
      return unspecified;
    case 'isLoopback':
      return loopback;
    case 'isLinkLocalMulticast':
      return v4 ? b[0] === 224 && b[1] === 0 && b[2] === 0 : b[0] === 0xff && (b[1]! & 0x0f) === 0x02;
    case 'isLinkLocalUnicast':
      return linkLocalUnicast;
    case 'isGlobalUnicast':
      if (v4 && (unspecified || b.every((x) => x === 255))) return false;
      return !unspecified && !loopback && !multicast && !linkLocalUnicast;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// URLs

/** a URL as Go's url.ParseRequestURI parses it */
export class CelURL {
  constructor(
    readonly scheme: string,
    /** host[:port] */
    readonly host: string,
    readonly path: string,
    readonly rawQuery: string,
  ) {}
}

export function parseURL(raw: string): CelURL {
  const fail = (why: string) => new CelLibraryError(`URL parse error during conversion from string: parse ${JSON.stringify(raw)}: ${why}`);
  if (/[\x00-\x1f\x7f]/.test(raw)) throw fail('net/url: invalid control character in URL');
  let rest = raw;
  let rawQuery = '';
  const q = rest.indexOf('?');
  if (q >= 0) {
    rawQuery = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  let scheme = '';
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(rest);
  if (m) {
    scheme = m[1]!.toLowerCase();
    rest = rest.slice(m[0].length);
  } else if (/^[^/]*:/.test(rest)) {
    throw fail('missing protocol scheme');
  }
  if (!rest.startsWith('/')) {
    if (!scheme) throw fail('invalid URI for request');
    // an opaque URL (mailto:x): no host, no path
    return new CelURL(scheme, '', '', rawQuery);
  }
  let host = '';
  if (scheme && rest.startsWith('//')) {
    const end = rest.indexOf('/', 2);
    host = end < 0 ? rest.slice(2) : rest.slice(2, end);
    rest = end < 0 ? '' : rest.slice(end);
    const at = host.lastIndexOf('@');
    if (at >= 0) host = host.slice(at + 1);
    if (host.startsWith('[')) {
      const close = host.indexOf(']');
      if (close < 0) throw fail("missing ']' in host");
      const after = host.slice(close + 1);
      if (after !== '' && !/^:[0-9]*$/.test(after)) throw fail(`invalid port ${JSON.stringify(after)} after host`);
    } else {
      const colon = host.lastIndexOf(':');
      if (colon >= 0 && !/^[0-9]*$/.test(host.slice(colon + 1))) throw fail(`invalid port ${JSON.stringify(host.slice(colon))} after host`);
    }
  }
  if (/%(?![0-9a-fA-F]{2})/.test(rest)) throw fail(`invalid URL escape ${JSON.stringify(rest.slice(rest.search(/%(?![0-9a-fA-F]{2})/), rest.search(/%(?![0-9a-fA-F]{2})/) + 3))}`);
  return new CelURL(scheme, host, rest, rawQuery);
}

export function urlMethod(fn: string, u: CelURL): string | Map<unknown, unknown> | undefined {
  const h = u.host;
  const bracket = h.startsWith('[') ? h.indexOf(']') : -1;
  const colon = bracket >= 0 ? (h[bracket + 1] === ':' ? bracket + 1 : -1) : h.lastIndexOf(':');
  switch (fn) {
    case 'getScheme':
      return u.scheme;
    case 'getHost':
      return h;
    case 'getHostname': {
      const name = colon >= 0 ? h.slice(0, colon) : h;
      return name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name;
    }
    case 'getPort':
      return colon >= 0 ? h.slice(colon + 1) : '';
    case 'getEscapedPath':
      return u.path;
    case 'getQuery': {
      // url.ParseQuery: pairs split on &, keys and values unescaped (+ as a space), bad pairs skipped
      const out = new Map<unknown, unknown>();
      for (const pair of u.rawQuery.split('&')) {
        if (pair === '' || pair.includes(';')) continue;
        const eq = pair.indexOf('=');
        const k = queryUnescape(eq < 0 ? pair : pair.slice(0, eq));
        const v = queryUnescape(eq < 0 ? '' : pair.slice(eq + 1));
        if (k === undefined || v === undefined) continue;
        const list = (out.get(k) as string[] | undefined) ?? [];
        list.push(v);
        out.set(k, list);
      }
      return out;
    }
  }
  return undefined;
}

function queryUnescape(s: string): string | undefined {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// semantic versions

export class CelSemver {
  constructor(
    readonly major: bigint,
    readonly minor: bigint,
    readonly patch: bigint,
    readonly pre: string[],
  ) {}
}

/** blang/semver's Parse; `normalize`: a leading v, missing minor or patch and leading zeros forgiven (library Semver) */
export function parseSemver(raw: string, normalize = false): CelSemver {
  let s = raw;
  if (normalize) {
    s = s.replace(/^v/, '');
    const m = /^([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?(.*)$/.exec(s);
    if (m) s = `${BigInt(m[1]!)}.${BigInt(m[2] ?? '0')}.${BigInt(m[3] ?? '0')}${m[4]}`;
  }
  const m = /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/.exec(s);
  const pre = m?.[4] ? m[4].split('.') : [];
  if (!m || pre.some((p) => /^[0-9]+$/.test(p) && p.length > 1 && p[0] === '0')) throw new CelLibraryError(`could not parse ${JSON.stringify(raw)} as semver`);
  return new CelSemver(BigInt(m[1]!), BigInt(m[2]!), BigInt(m[3]!), pre);
}

/** semver precedence: -1, 0 or 1 */
export function compareSemver(a: CelSemver, b: CelSemver): number {
  for (const [x, y] of [
    [a.major, b.major],
    [a.minor, b.minor],
    [a.patch, b.patch],
  ] as const) {
    if (x !== y) return x < y ? -1 : 1;
  }
  if (a.pre.length === 0 || b.pre.length === 0) return a.pre.length === b.pre.length ? 0 : a.pre.length === 0 ? 1 : -1;
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const x = a.pre[i]!;
    const y = b.pre[i]!;
    if (x === y) continue;
    const xn = /^[0-9]+$/.test(x);
    const yn = /^[0-9]+$/.test(y);
    if (xn && yn) return BigInt(x) < BigInt(y) ? -1 : 1;
    if (xn !== yn) return xn ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return a.pre.length === b.pre.length ? 0 : a.pre.length < b.pre.length ? -1 : 1;
}

// ---------------------------------------------------------------------------------------------
// named formats (library Format)

export class CelFormat {
  constructor(readonly name: string) {}
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** each named format's check: the problems of a value, none when it is valid */
export const NAMED_FORMATS: Record<string, (s: string) => string[]> = {
  dns1123Label: isDNS1123Label,
  dns1123Subdomain: isDNS1123Subdomain,
  dns1035Label: isDNS1035Label,
  qualifiedName: isQualifiedName,
  // (a generateName prefix: its trailing '-' allowed, as validateName checks one)
  dns1123LabelPrefix: (s) => validateName('label', s, true),
  dns1123SubdomainPrefix: (s) => validateName('subdomain', s, true),
  dns1035LabelPrefix: (s) => validateName('dns1035', s, true),
  labelValue: isLabelValue,
  uri: (s) => {
    try {
      parseURL(s);
      return [];
    } catch {
      return ['invalid URI'];
    }
  },
  uuid: (s) => (UUID.test(s) ? [] : ['does not match the UUID format']),
  byte: (s) => (/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s) ? [] : ['invalid base64 value']),
  date: (s) => (/^\d{4}-\d{2}-\d{2}$/.test(s) && parseTimestamp(`${s}T00:00:00Z`) !== undefined ? [] : ['invalid date']),
  datetime: (s) => (parseTimestamp(s) !== undefined ? [] : ['invalid datetime']),
};

// ---------------------------------------------------------------------------------------------
// strings: format() and strings.quote()

/** CEL's strings.quote: the string as a double-quoted CEL string literal */
export function quote(s: string): string {
  let out = '"';
  for (const ch of s) {
    switch (ch) {
      case '\\':
        out += '\\\\';
        break;
      case '"':
        out += '\\"';
        break;
      case '\x07':
        out += '\\a';
        break;
      case '\b':
        out += '\\b';
        break;
      case '\f':
        out += '\\f';
        break;
      case '\n':
        out += '\\n';
        break;
      case '\r':
        out += '\\r';
        break;
      case '\t':
        out += '\\t';
        break;
      case '\v':
        out += '\\v';
        break;
      default:
        out += ch;
    }
  }
  return `${out}"`;
}

/** how format() writes one argument for each verb; the interpreter supplies the value's kinds */
export interface FormatArg {
  /** %s */
  str(): string;
  /** %d: an integer, else undefined */
  int(): bigint | undefined;
  /** %f and %e: a number, else undefined */
  double(): number | undefined;
  /** %x, %X, %o, %b: an integer, or bytes or a string for %x and %X */
  raw(): bigint | Uint8Array | string | undefined;
  type: string;
}

/** cel-go's string.format(list): %s %d %f %e %x %X %o %b and %%, with a precision for %f and %e */
export function sprintf(fmt: string, args: FormatArg[]): string {
  let out = '';
  let next = 0;
  for (let i = 0; i < fmt.length; i++) {
    const c = fmt[i]!;
    if (c !== '%') {
      out += c;
      continue;
    }
    if (fmt[i + 1] === '%') {
      out += '%';
      i++;
      continue;
    }
    const m = /^(?:\.([0-9]+))?([sdfeXxob])/.exec(fmt.slice(i + 1));
    if (!m) throw new CelLibraryError(`could not parse formatting clause: unrecognized formatting clause "${fmt[i + 1] ?? ''}"`);
    i += m[0].length;
    if (next >= args.length) throw new CelLibraryError(`index ${next} out of range`);
    const a = args[next++]!;
    const prec = m[1] === undefined ? undefined : Number(m[1]);
    const verb = m[2]!;
    const bad = (what: string) => new CelLibraryError(`error during formatting: ${what} clause can only be used on ${verb === 'd' ? 'integers' : verb === 's' ? 'strings' : 'numbers'}, was given ${a.type}`);
    switch (verb) {
      case 's':
        out += a.str();
        break;
      case 'd': {
        const n = a.int();
        if (n === undefined) throw bad('decimal');
        out += n.toString();
        break;
      }
      case 'f':
      case 'e': {
        const n = a.double();
        if (n === undefined) throw bad(verb === 'f' ? 'fixed-point' : 'scientific');
        if (Number.isNaN(n)) out += 'NaN';
        else if (!Number.isFinite(n)) out += n > 0 ? 'Infinity' : '-Infinity';
        else if (verb === 'f') out += n.toFixed(prec ?? 6);
        else out += n.toExponential(prec ?? 6).replace(/e([+-])(\d)$/, 'e$10$2');
        break;
      }
      default: {
        const r = a.raw();
        const base = verb === 'o' ? 8 : verb === 'b' ? 2 : 16;
        let text: string;
        if (typeof r === 'bigint') text = r < 0n ? `-${(-r).toString(base)}` : r.toString(base);
        else if ((verb === 'x' || verb === 'X') && r instanceof Uint8Array) text = Buffer.from(r).toString('hex');
        else if ((verb === 'x' || verb === 'X') && typeof r === 'string') text = Buffer.from(r, 'utf8').toString('hex');
        else throw new CelLibraryError(`error during formatting: only integers${verb === 'x' || verb === 'X' ? ', byte buffers, and strings' : ''} can be formatted as ${verb === 'o' ? 'octal' : verb === 'b' ? 'binary' : 'hex'}, was given ${a.type}`);
        out += verb === 'X' ? text.toUpperCase() : text;
      }
    }
  }
  return out;
}
