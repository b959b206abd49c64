// IP addresses and CIDRs as Kubernetes' newer fields check them (apimachinery's IsValidIP and
// IsValidCIDR: netutils' sloppy parsers, then the strict form: no leading zeros, no IPv4-mapped
// IPv6, canonical text), with Go's printing of addresses. util.ts's parseIP, validateIP and
// validateCIDR are the legacy fields' checks (IsValidIPForLegacyField and the like).
import { goQuote } from './errs.js';

interface ParsedIP {
  /** the 16 bytes of net.IP (an IPv4 address as ::ffff:a.b.c.d) */
  b: number[];
  /** written in IPv6 notation (what netip calls Is6) */
  six: boolean;
}

const BIG = 0xffffff;

/** Go's dtoi: decimal digits at the start of s (any number of them) */
function dtoi(s: string): [number, number] | null {
  let n = 0;
  let i = 0;
  for (; i < s.length && s[i]! >= '0' && s[i]! <= '9'; i++) {
    n = n * 10 + (s.charCodeAt(i) - 48);
    if (n >= BIG) return null;
  }
  return i === 0 ? null : [n, i];
}

/** Go's xtoi: hexadecimal digits at the start of s */
function xtoi(s: string): [number, number] | null {
  let n = 0;
  let i = 0;
  for (; i < s.length; i++) {
    const c = s[i]!;
    let d: number;
    if (c >= '0' && c <= '9') d = c.charCodeAt(0) - 48;
    else if (c >= 'a' && c <= 'f') d = c.charCodeAt(0) - 87;
    else if (c >= 'A' && c <= 'F') d = c.charCodeAt(0) - 55;
    else break;
    n = n * 16 + d;
    if (n >= BIG) return null;
  }
  return i === 0 ? null : [n, i];
}

/** the forked (pre-Go-1.17) net.parseIPv4 of k8s.io/utils: octets may have leading zeros */
function parseIPv4Sloppy(s: string): number[] | null {
  const out: number[] = [];
  for (let i = 0; i < 4; i++) {
    if (s.length === 0) return null;
    if (i > 0) {
      if (s[0] !== '.') return null;
      s = s.slice(1);
    }
    const r = dtoi(s);
    if (!r || r[0] > 0xff) return null;
    out.push(r[0]);
    s = s.slice(r[1]);
  }
  return s.length === 0 ? [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...out] : null;
}

/** the forked net.parseIPv6 */
function parseIPv6Sloppy(s: string): number[] | null {
  const ip = new Array<number>(16).fill(0);
  let ellipsis = -1;
  if (s.length >= 2 && s[0] === ':' && s[1] === ':') {
    ellipsis = 0;
    s = s.slice(2);
    if (s.length === 0) return ip;
  }
  let i = 0;
  while (i < 16) {
    const r = xtoi(s);
    if (!r || r[0] > 0xffff) return null;
    const [n, c] = r;
    if (c < s.length && s[c] === '.') {
      if (ellipsis < 0 && i !== 12) return null;
      if (i + 4 > 16) return null;
      const ip4 = parseIPv4Sloppy(s);
      if (!ip4) return null;
      ip.splice(i, 4, ...ip4.slice(12));
      s = '';
      i += 4;
      break;
    }
    ip[i] = n >> 8;
    ip[i + 1] = n & 0xff;
    i += 2;
    s = s.slice(c);
    if (s.length === 0) break;
    if (s[0] !== ':' || s.length === 1) return null;
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) return null;
      ellipsis = i;
      s = s.slice(1);
      if (s.length === 0) break;
    }
  }
  if (s.length !== 0) return null;
  if (i < 16) {
    if (ellipsis < 0) return null;
    const n = 16 - i;
    for (let j = i - 1; j >= ellipsis; j--) ip[j + n] = ip[j]!;
    for (let j = ellipsis + n - 1; j >= ellipsis; j--) ip[j] = 0;
  } else if (ellipsis >= 0) return null;
  return ip;
}

/** netutils.ParseIPSloppy: the notation is chosen by the first '.' or ':' */
function parseIPSloppy(s: string): ParsedIP | null {
  for (const c of s) {
    if (c === '.') {
      const b = parseIPv4Sloppy(s);
      return b ? { b, six: false } : null;
    }
    if (c === ':') {
      const b = parseIPv6Sloppy(s);
      return b ? { b, six: true } : null;
    }
  }
  return null;
}

/**
 * Whether netip.ParseAddr also reads an address ParseIPSloppy read: it refuses IPv4 octets
 * with leading zeros (including an embedded IPv4 tail) and IPv6 fields of more than 4 digits.
 */
function strictAddrOK(s: string, six: boolean): boolean {
  const octetsOK = (v4: string) => v4.split('.').every((o) => /^(0|[1-9][0-9]*)$/.test(o));
  if (!six) return octetsOK(s);
  const fields = s.split(':');
  const last = fields[fields.length - 1]!;
  if (last.includes('.') && !octetsOK(last)) return false;
  return fields.every((f) => f.includes('.') || f.length <= 4);
}

const isV4Bytes = (b: number[]): boolean => b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;

/** net.IP.String(): dotted decimal for IPv4 (and IPv4-mapped) addresses, RFC 5952 for IPv6 */
function goIPString(b: number[]): string {
  if (isV4Bytes(b)) return b.slice(12).join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((b[i]! << 8) | b[i + 1]!);
  let zs = -1;
  let ze = -1;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i >= 2 && j - i > ze - zs) {
      zs = i;
      ze = j;
    }
  }
  if (zs < 0) return groups.map((g) => g.toString(16)).join(':');
  const head = groups.slice(0, zs).map((g) => g.toString(16)).join(':');
  const tail = groups.slice(ze).map((g) => g.toString(16)).join(':');
  return `${head}::${tail}`;
}

/** validation.IsValidIP (strict, canonical form) as its messages */
export function isValidIP(value: string): string[] {
  const ip = parseIPSloppy(value);
  if (!ip) return ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'];
  if (!strictAddrOK(value, ip.six)) return ['must not have leading 0s'];
  if (ip.six && isV4Bytes(ip.b)) return ['must not be an IPv4-mapped IPv6 address'];
  const canonical = goIPString(ip.b);
  return value === canonical ? [] : [`must be in canonical form (${goQuote(canonical)})`];
}

interface ParsedCIDR {
  /** the address as written */
  ip: ParsedIP;
  /** the prefix length, in the address family's bits */
  bits: number;
  /** the network address (the address masked to the prefix), 16 bytes */
  net: number[];
}

/** netutils.ParseCIDRSloppy: an IPv4 address first, then IPv6; any digits of prefix length */
function parseCIDRSloppy(s: string): ParsedCIDR | null {
  const slash = s.indexOf('/');
  if (slash < 0) return null;
  const addr = s.slice(0, slash);
  const mask = s.slice(slash + 1);
  let ip: ParsedIP | null = null;
  const v4 = parseIPv4Sloppy(addr);
  if (v4) ip = { b: v4, six: false };
  else {
    const v6 = parseIPv6Sloppy(addr);
    if (v6) ip = { b: v6, six: true };
  }
  const m = dtoi(mask);
  if (!ip || !m || m[1] !== mask.length) return null;
  const bits = m[0];
  if (bits > (ip.six ? 128 : 32)) return null;
  const keep = ip.six ? bits : bits + 96;
  const net = ip.b.map((x, i) => {
    const k = Math.max(0, Math.min(8, keep - i * 8));
    return x & ((0xff << (8 - k)) & 0xff);
  });
  return { ip, bits, net };
}

/** validation.IsValidCIDR (strict, canonical form) as its messages */
export function isValidCIDR(value: string): string[] {
  const c = parseCIDRSloppy(value);
  if (!c) return ['must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'];
  const slash = value.indexOf('/');
  const lenText = value.slice(slash + 1);
  // netip.ParsePrefix: the address read strictly, and no leading zero in the prefix length
  if (!strictAddrOK(value.slice(0, slash), c.ip.six) || (lenText.length > 1 && lenText[0] === '0')) return ['must not have leading 0s in IP or prefix length'];
  if (c.ip.six && isV4Bytes(c.ip.b)) return ['must not have an IPv4-mapped IPv6 address'];
  if (c.net.some((x, i) => x !== c.ip.b[i])) return ['must not have bits set beyond the prefix length'];
  const canonical = `${goIPString(c.net)}/${c.bits}`;
  return value === canonical ? [] : [`must be in canonical form (${goQuote(canonical)})`];
}

/** netutils.IPFamilyOfCIDRString: of the address ParseCIDRSloppy reads, '' when it reads none */
export function cidrFamily(value: string): '' | 'IPv4' | 'IPv6' {
  const c = parseCIDRSloppy(value);
  if (!c) return '';
  return isV4Bytes(c.ip.b) ? 'IPv4' : 'IPv6';
}

