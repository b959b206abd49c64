// Kind-specific validation of four kinds, with kube-apiserver 1.33's rules, paths and wording:
// core/v1 PodTemplate (ValidatePodTemplate[Update]), node.k8s.io/v1 RuntimeClass
// (ValidateRuntimeClass[Update]: handler, overhead, scheduling), and networking.k8s.io/v1
// IPAddress and ServiceCIDR (ValidateIPAddress[Update], ValidateServiceCIDR[Update|StatusUpdate]),
// including apimachinery's strict IP and CIDR checks (IsValidIP, IsValidCIDR) with Go's printing
// of addresses. ObjectMeta is the store's; an IPAddress's name rule is ipAddressNameErrors.
import { child, duplicate, forbidden, goPtr, goQuote, goStrings, goStruct, GoRepr, idx, invalid, key, notSupported, required, type Errs } from './errs.js';
import { arr, FIELD_IMMUTABLE, isDNS1123Label, isDNS1123Subdomain, isSet, isValidPathSegmentName, obj, qstr, str, validateLabels } from './util.js';
import { isHugePageResourceName, validateContainerResourceName, validatePodTemplateSpec, validateResourceQuantityValue, validateTolerations } from './pod.js';
import { parseQuantity, quantityMilliValue, quantityValue } from './quantity.js';

// ---- core/v1 PodTemplate ----

/** ValidatePodTemplate: the template is a pod template spec (not a pod: ResourceIsPod is false) */
export function validatePodTemplate(pt: any): Errs {
  return validatePodTemplateSpec(obj(pt?.template), 'template');
}

/** ValidatePodTemplateUpdate: nothing is immutable; the new template is validated again */
export function validatePodTemplateUpdate(pt: any, old: any): Errs {
  void old;
  return validatePodTemplateSpec(obj(pt?.template), 'template');
}

// ---- node.k8s.io/v1 RuntimeClass ----

/** ValidateRuntimeClass: handler, overhead.podFixed, scheduling */
export function validateRuntimeClass(rc: any): Errs {
  const handler = str(rc?.handler);
  const errs: Errs = isDNS1123Label(handler).map((m) => invalid('handler', handler, m));
  if (rc?.overhead != null) errs.push(...validateOverhead(obj(rc.overhead), 'overhead'));
  if (rc?.scheduling != null) errs.push(...validateScheduling(obj(rc.scheduling), 'scheduling'));
  return errs;
}

/** ValidateRuntimeClassUpdate: the handler is immutable (the strategy validates the new object first) */
export function validateRuntimeClassUpdate(rc: any, old: any): Errs {
  const handler = str(rc?.handler);
  return handler === str(old?.handler) ? [] : [invalid('handler', handler, FIELD_IMMUTABLE)];
}

/**
 * ValidateContainerResourceRequirements of {limits: podFixed} with empty options: so the
 * errors are reported under `overhead.limits[...]`, as Kubernetes reports them.
 */
function validateOverhead(overhead: any, path: string): Errs {
  const errs: Errs = [];
  const limPath = child(path, 'limits');
  let cpuOrMemory = false;
  let hugePages = false;
  for (const [name, qty] of Object.entries(obj(overhead.podFixed))) {
    const p = key(limPath, name);
    errs.push(...validateContainerResourceName(name, p));
    errs.push(...validateResourceQuantityValue(name, qty, p));
    if (isHugePageResourceName(name)) {
      hugePages = true;
      if (!hugePageValueDivisible(name, qty)) errs.push(invalid(p, qstr(qty), `${qstr(qty)} is not positive integer multiple of ${name}`));
    }
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
  }
  if (!cpuOrMemory && hugePages) errs.push(forbidden(path, 'HugePages require cpu or memory'));
  return errs;
}

/** helper.IsHugePageResourceValueDivisible */
function hugePageValueDivisible(name: string, value: unknown): boolean {
  const size = parseQuantity(name.slice('hugepages-'.length));
  const v = parseQuantity(value);
  if (!size || !v || size.nano <= 0n || quantityMilliValue(size) % 1000n !== 0n) return false;
  return quantityValue(v) % quantityValue(size) === 0n;
}

function validateScheduling(s: any, path: string): Errs {
  const errs: Errs = [];
  if (s.nodeSelector != null) errs.push(...validateLabels(s.nodeSelector, child(path, 'nodeSelector')));
  errs.push(...validateRuntimeClassTolerations(arr(s.tolerations), child(path, 'tolerations')));
  return errs;
}

/**
 * node validation's validateTolerations: core ValidateTolerations, then no two tolerations may
 * share key, operator, value and effect. As in Kubernetes 1.33, the core checks are given the
 * path `<path>.tolerations`, so their errors read `scheduling.tolerations.tolerations[i]...`,
 * while a duplicate is reported at `scheduling.tolerations[i]`.
 */
function validateRuntimeClassTolerations(tols: any[], path: string): Errs {
  const errs = validateTolerations(tols, child(path, 'tolerations'));
  const seen = new Set<string>();
  tols.forEach((t0, i) => {
    const t = obj(t0);
    const k = JSON.stringify([str(t.key), str(t.operator), str(t.value), str(t.effect)]);
    if (seen.has(k)) errs.push(duplicate(idx(path, i), goToleration(t)));
    else seen.add(k);
  });
  return errs;
}

/** core.Toleration as %#v prints it */
function goToleration(t: any): GoRepr {
  return goStruct('core.Toleration', [
    ['Key', goQuote(str(t.key))],
    ['Operator', goQuote(str(t.operator))],
    ['Value', goQuote(str(t.value))],
    ['Effect', goQuote(str(t.effect))],
    ['TolerationSeconds', goPtr('int64', isSet(t.tolerationSeconds))],
  ]);
}

// ---- IP addresses and CIDRs as Go and apimachinery read them ----

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
function isValidIP(value: string): string[] {
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
function isValidCIDR(value: string): string[] {
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
function cidrFamily(value: string): '' | 'IPv4' | 'IPv6' {
  const c = parseCIDRSloppy(value);
  if (!c) return '';
  return isV4Bytes(c.ip.b) ? 'IPv4' : 'IPv6';
}

// ---- networking.k8s.io/v1 IPAddress ----

/**
 * ValidateIPAddressName: an IPAddress's name is an IP address in canonical form (validation.IsValidIP);
 * the messages Kubernetes reports at metadata.name (and, for a prefix, metadata.generateName).
 */
export function ipAddressNameErrors(name: string): string[] {
  return isValidIP(name);
}

/** ValidateIPAddress without ObjectMeta (the name's rule is ipAddressNameErrors): spec.parentRef */
export function validateIPAddress(ip: any): Errs {
  return validateParentReference(ip?.spec?.parentRef, 'spec');
}

function validateParentReference(ref: any, path: string): Errs {
  if (ref == null) return [required(child(path, 'parentRef'))];
  const p = child(path, 'parentRef');
  const r = obj(ref);
  const errs: Errs = [];
  const group = str(r.group);
  if (group) for (const m of isDNS1123Subdomain(group)) errs.push(invalid(child(p, 'group'), group, m));
  for (const f of ['resource', 'name']) {
    const v = str(r[f]);
    if (!v) errs.push(required(child(p, f)));
    else for (const m of isValidPathSegmentName(v)) errs.push(invalid(child(p, f), v, m));
  }
  const ns = str(r.namespace);
  if (ns) for (const m of isValidPathSegmentName(ns)) errs.push(invalid(child(p, 'namespace'), ns, m));
  return errs;
}

/** networking.ParentReference as %#v prints it */
function goParentReference(ref: any): GoRepr | null {
  if (ref == null) return null;
  const r = obj(ref);
  return goStruct('networking.ParentReference', [
    ['Group', goQuote(str(r.group))],
    ['Resource', goQuote(str(r.resource))],
    ['Namespace', goQuote(str(r.namespace))],
    ['Name', goQuote(str(r.name))],
  ]);
}

/** ValidateIPAddressUpdate: spec.parentRef is immutable (the strategy validates the new object first) */
export function validateIPAddressUpdate(ip: any, old: any): Errs {
  const n = ip?.spec?.parentRef;
  const o = old?.spec?.parentRef;
  const same = n == null || o == null ? n == null && o == null : ['group', 'resource', 'namespace', 'name'].every((f) => str(n[f]) === str(o[f]));
  return same ? [] : [invalid('spec.parentRef', goParentReference(n), FIELD_IMMUTABLE)];
}

// ---- networking.k8s.io/v1 ServiceCIDR ----

const CIDRS = 'spec.cidrs';

/** ValidateServiceCIDR without ObjectMeta (the name is a DNS subdomain, the store's default rule) */
export function validateServiceCIDR(sc: any): Errs {
  return validateServiceCIDRSpec(sc?.spec);
}

/** validateServiceCIDRSpec: one or two CIDRs, each valid and canonical, of different families */
function validateServiceCIDRSpec(spec: any): Errs {
  const raw = spec?.cidrs;
  const cidrs = arr<string>(raw).map(str);
  if (cidrs.length === 0) return [required(CIDRS, 'at least one CIDR required')];
  if (cidrs.length > 2) return [invalid(CIDRS, goStruct('networking.ServiceCIDRSpec', [['CIDRs', goStrings(cidrs).repr]]), 'may only hold up to 2 values')];
  const errs: Errs = [];
  cidrs.forEach((c, i) => {
    for (const m of isValidCIDR(c)) errs.push(invalid(idx(CIDRS, i), c, m));
  });
  if (cidrs.length === 2) {
    const f0 = cidrFamily(cidrs[0]!);
    if (f0 !== '' && f0 === cidrFamily(cidrs[1]!)) errs.push(invalid(CIDRS, goStrings(cidrs), 'may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64'));
  }
  return errs;
}

/**
 * ValidateServiceCIDRUpdate: the CIDRs may not change, except that a single-stack ServiceCIDR
 * may gain a second CIDR (its first unchanged), which is then validated as on create. (In 1.33
 * the strategy's update validation is this alone, not ValidateServiceCIDR as well.)
 */
export function validateServiceCIDRUpdate(sc: any, old: any): Errs {
  const errs: Errs = [];
  const raw = sc?.spec?.cidrs;
  const now = arr<string>(raw).map(str);
  const was = arr<string>(old?.spec?.cidrs).map(str);
  if (was.length === now.length) {
    was.forEach((c, i) => {
      if (c !== now[i]) errs.push(invalid(idx(CIDRS, i), now[i]!, FIELD_IMMUTABLE));
    });
  } else if (was.length === 1 && now.length === 2) {
    if (now[0] !== was[0]) errs.push(invalid(idx(CIDRS, 0), now[0]!, FIELD_IMMUTABLE));
    errs.push(...validateServiceCIDRSpec(sc?.spec));
  } else errs.push(invalid(CIDRS, goStrings(Array.isArray(raw) ? now : null), FIELD_IMMUTABLE));
  return errs;
}

/** ValidateServiceCIDRStatusUpdate: ObjectMeta only, which the store checks; the status is not validated */
export function validateServiceCIDRStatusUpdate(sc: any, old: any): Errs {
  void sc;
  void old;
  return [];
}
