// Generic rules shared by many kinds, with apimachinery's wording: names, ports, IPs and CIDRs,
// config keys, env var names, label selectors (meta/v1 validation), quantities.
import { copyJSON } from '../../codec/int64.js';
import {
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isLabelValue,
  isQualifiedName,
  isValidPathSegmentName,
  maxLenError,
  regexError,
  validateAnnotations as machineryValidateAnnotations,
} from '../../machinery/validation.js';
import { child, idx, invalid, required, forbidden, type Errs, goStrings, GoRepr, tooLong } from './errs.js';
import { cmpQuantity, parseQuantity, quantityMilliValue, quantityString, type Quantity } from './quantity.js';

export { isDNS1035Label, isDNS1123Label, isDNS1123Subdomain, isLabelValue, isQualifiedName, isValidPathSegmentName, regexError };

// ---- apimachinery util/validation, with its exact wording (names and labels: machinery/validation) ----

/** apimachinery ValidateAnnotations: keys are qualified names (case-insensitive), 256 KiB in all */
export function validateAnnotations(ann: unknown, path: string): Errs {
  const errs: Errs = [];
  for (const k of Object.keys(obj(ann))) for (const m of isQualifiedName(k.toLowerCase())) errs.push(invalid(path, k, m));
  const sizeErrs = machineryValidateAnnotations(ann, path).filter((e) => e.type === 'FieldValueTooLong');
  return [...errs, ...sizeErrs];
}

export const IS_NEGATIVE = 'must be greater than or equal to 0';
export const FIELD_IMMUTABLE = 'field is immutable';

export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

export const isSet = (v: unknown): boolean => v !== undefined && v !== null;
export const str = (v: unknown): string => (typeof v === 'string' ? v : v == null ? '' : String(v));
export const arr = <T = any>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
export const obj = (v: unknown): Record<string, any> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : {});
export const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

// ---- names ----

export function validateDNS1123Label(value: string, path: string): Errs {
  return isDNS1123Label(value).map((m) => invalid(path, value, m));
}
export function validateDNS1123Subdomain(value: string, path: string): Errs {
  return isDNS1123Subdomain(value).map((m) => invalid(path, value, m));
}
export function validateQualifiedName(value: string, path: string): Errs {
  return isQualifiedName(value).map((m) => invalid(path, value, m));
}

/** apimachinery NameIsDNSSubdomain etc. applied to a name that is not a prefix */
export const nameIsSubdomain = (v: string): string[] => isDNS1123Subdomain(v);
export const nameIsLabel = (v: string): string[] => isDNS1123Label(v);
export const nameIs1035 = (v: string): string[] => isDNS1035Label(v);

/** ServiceAccount names are DNS subdomains */
export const validateServiceAccountName = nameIsSubdomain;
/** Namespace names are DNS labels */
export const validateNamespaceName = nameIsLabel;

const DNS1123_LABEL_US = '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_US = `${DNS1123_LABEL_US}(\\.${DNS1123_LABEL_US})*`;
const reSubdomainUS = new RegExp(`^${DNS1123_SUBDOMAIN_US}$`);

export function isDNS1123SubdomainWithUnderscore(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 253) errs.push(maxLenError(253));
  if (!reSubdomainUS.test(v))
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_US,
        'example.com',
      ),
    );
  return errs;
}

const WILDCARD_FMT = '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
const reWildcard = new RegExp(`^${WILDCARD_FMT}$`);
export function isWildcardDNS1123Subdomain(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 253) errs.push(maxLenError(253));
  if (!reWildcard.test(v))
    errs.push(
      regexError(
        "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
        WILDCARD_FMT,
        '*.example.com',
      ),
    );
  return errs;
}

/** validation.IsFullyQualifiedDomainName */
export function isFullyQualifiedDomainName(path: string, name: string): Errs {
  if (name.length === 0) return [required(path)];
  if (name.endsWith('.')) name = name.slice(0, -1);
  const e = isDNS1123Subdomain(name);
  if (e.length) return [invalid(path, name, e.join(','))];
  const parts = name.split('.');
  if (parts.length < 2) return [invalid(path, name, 'should be a domain with at least two segments separated by dots')];
  for (const l of parts) {
    const le = isDNS1123Label(l);
    if (le.length) return [invalid(path, l, le.join(','))];
  }
  return [];
}

const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
const reHttpPath = new RegExp(`^${HTTP_PATH_FMT}$`);
/** validation.IsDomainPrefixedPath */
export function isDomainPrefixedPath(path: string, dp: string): Errs {
  if (dp.length === 0) return [required(path)];
  const slash = dp.indexOf('/');
  const seg0 = slash < 0 ? dp : dp.slice(0, slash);
  const seg1 = slash < 0 ? '' : dp.slice(slash + 1);
  if (slash < 0 || seg0.length === 0 || seg1.length === 0) return [invalid(path, dp, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const errs: Errs = isDNS1123Subdomain(seg0).map((m) => invalid(path, seg0, m));
  if (!reHttpPath.test(seg1)) errs.push(invalid(path, seg1, regexError('Invalid path', HTTP_PATH_FMT)));
  return errs;
}

// ---- ports ----

export function isValidPortNum(p: number): string[] {
  return p >= 1 && p <= 65535 && Number.isInteger(p) ? [] : [inclusiveRangeError(1, 65535)];
}

export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (port.length > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(port)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(port)) errs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens');
  if (port.length > 0 && (port.startsWith('-') || port.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  return errs;
}

/** ValidatePortNumOrName for an IntOrString */
export function validatePortNumOrName(port: unknown, path: string): Errs {
  if (typeof port === 'number') return isValidPortNum(port).map((m) => invalid(path, port, m));
  if (typeof port === 'string') return isValidPortName(port).map((m) => invalid(path, port, m));
  return isValidPortNum(0).map((m) => invalid(path, 0, m));
}

export const SUPPORTED_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

// ---- misc string formats ----

export function isValidPercent(p: string): string[] {
  return /^[0-9]+%$/.test(p) ? [] : [regexError("a valid percent string must be a numeric string followed by an ending '%'", '[0-9]+%', '1%', '93%')];
}

export function isHTTPHeaderName(v: string): string[] {
  return /^[-A-Za-z0-9]+$/.test(v) ? [] : [regexError("a valid HTTP header must consist of alphanumeric characters or '-'", '[-A-Za-z0-9]+', 'X-Header-Name')];
}

function hasChDirPrefix(v: string): string[] {
  if (v === '.') return [`must not be '.'`];
  if (v === '..') return [`must not be '..'`];
  if (v.startsWith('..')) return [`must not start with '..'`];
  return [];
}

export function isConfigMapKey(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 253) errs.push(maxLenError(253));
  if (!/^[-._a-zA-Z0-9]+$/.test(v))
    errs.push(regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", '[-._a-zA-Z0-9]+', 'key.name', 'KEY_NAME', 'key-name'));
  errs.push(...hasChDirPrefix(v));
  return errs;
}

/** IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation is on in 1.33) */
export function isRelaxedEnvVarName(v: string): string[] {
  const errs: string[] = [];
  if (v.length === 0) errs.push('environment variable name must be non-empty');
  for (const ch of v) {
    const c = ch.codePointAt(0)!;
    if (c > 0x7f || c < 0x20 || c === 0x7f || ch === '=') {
      errs.push("a valid environment variable name must consist only of printable ASCII characters other than '='");
      break;
    }
  }
  return errs;
}

/** IsValidUserID: 0 to math.MaxInt32 (Kubernetes keeps user and group IDs to the positive int32 range) */
export const isValidUserID = (v: number): string[] => (v >= 0 && v <= 0x7fffffff ? [] : [inclusiveRangeError(0, 2147483647)]);
export const isValidGroupID = isValidUserID;

export function validateNonnegative(v: number, path: string): Errs {
  return v < 0 ? [invalid(path, v, IS_NEGATIVE)] : [];
}

// ---- IPs and CIDRs (Go's net.ParseIP, with the "sloppy" IPv4 form Kubernetes accepts) ----

function parseIPv4(s: string): number[] | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^[0-9]{1,3}$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out.push(n);
  }
  return out;
}

/** 16 bytes, or null */
export function parseIP(s: string): number[] | null {
  if (!s) return null;
  const v4 = parseIPv4(s);
  if (v4) return [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...v4];
  if (!s.includes(':')) return null;
  let head = s;
  let tailV4: number[] | null = null;
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    tailV4 = parseIPv4(s.slice(lastColon + 1));
    if (!tailV4) return null;
    head = s.slice(0, lastColon + 1) + '0:0';
  }
  const dbl = head.indexOf('::');
  if (dbl >= 0 && head.indexOf('::', dbl + 1) >= 0) return null;
  const groupsOf = (x: string): string[] | null => (x === '' ? [] : x.split(':'));
  let groups: string[];
  if (dbl >= 0) {
    const a = groupsOf(head.slice(0, dbl));
    const b = groupsOf(head.slice(dbl + 2));
    if (!a || !b) return null;
    const fill = 8 - a.length - b.length;
    if (fill < 1) return null;
    groups = [...a, ...Array(fill).fill('0'), ...b];
  } else {
    groups = head.split(':');
    if (groups.length !== 8) return null;
  }
  const bytes: number[] = [];
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    const n = parseInt(g, 16);
    bytes.push(n >> 8, n & 0xff);
  }
  if (tailV4) bytes.splice(12, 4, ...tailV4);
  return bytes;
}

export function isIPv4Bytes(b: number[]): boolean {
  return b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
}

/** Go's net.IP.IsGlobalUnicast of an address parseIP reads: not unspecified, loopback, multicast, link-local or the IPv4 broadcast */
export function isGlobalUnicastIP(s: string): boolean {
  const b = parseIP(s);
  if (!b) return false;
  if (isIPv4Bytes(b)) {
    const [a, x, y, z] = b.slice(12) as [number, number, number, number];
    if ((a | x | y | z) === 0 || (a & x & y & z) === 255) return false;
    return a !== 127 && (a & 0xf0) !== 0xe0 && !(a === 169 && x === 254);
  }
  if (b.every((x) => x === 0) || (b.slice(0, 15).every((x) => x === 0) && b[15] === 1)) return false;
  return b[0] !== 0xff && !(b[0] === 0xfe && (b[1]! & 0xc0) === 0x80);
}

export function isIPv6String(s: string): boolean {
  const b = parseIP(s);
  return b !== null && !isIPv4Bytes(b);
}

export function parseCIDR(s: string): { ip: number[]; bits: number; v4: boolean } | null {
  const slash = s.indexOf('/');
  if (slash < 0) return null;
  const addr = s.slice(0, slash);
  const len = s.slice(slash + 1);
  if (!/^[0-9]{1,3}$/.test(len)) return null;
  const bits = Number(len);
  const v4 = parseIPv4(addr);
  if (v4) {
    if (bits > 32) return null;
    return { ip: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...v4], bits: bits + 96, v4: true };
  }
  if (!addr.includes(':')) return null;
  const ip = parseIP(addr);
  if (!ip || bits > 128) return null;
  return { ip, bits, v4: false };
}

export function validateIP(path: string, value: string): Errs {
  return parseIP(value) ? [] : [invalid(path, value, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)')];
}

export function validateCIDR(path: string, value: string): Errs {
  return parseCIDR(value) ? [] : [invalid(path, value, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)')];
}

/** ValidateNonSpecialIP */
export function validateNonSpecialIP(ip: string, path: string): Errs {
  const b = parseIP(ip);
  if (!b) return [invalid(path, ip, 'must be a valid IP address')];
  const errs: Errs = [];
  const v4 = isIPv4Bytes(b);
  const unspecified = v4 ? b.slice(12).every((x) => x === 0) : b.every((x) => x === 0);
  if (unspecified) errs.push(invalid(path, ip, `may not be unspecified (${ip})`));
  const loopback = v4 ? b[12] === 127 : b.slice(0, 15).every((x) => x === 0) && b[15] === 1;
  if (loopback) errs.push(invalid(path, ip, 'may not be in the loopback range (127.0.0.0/8, ::1/128)'));
  const llu = v4 ? b[12] === 169 && b[13] === 254 : b[0] === 0xfe && (b[1]! & 0xc0) === 0x80;
  if (llu) errs.push(invalid(path, ip, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'));
  const llm = v4 ? b[12] === 224 && b[13] === 0 && b[14] === 0 : b[0] === 0xff && (b[1]! & 0x0f) === 0x02;
  if (llm) errs.push(invalid(path, ip, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'));
  return errs;
}

// ---- labels and selectors (meta/v1 validation) ----

/** ValidateLabelName */
export function validateLabelName(name: string, path: string): Errs {
  return isQualifiedName(name).map((m) => invalid(path, name, m));
}

/** ValidateLabels: key and value errors are both reported on the map's own path */
export function validateLabels(labels: unknown, path: string): Errs {
  const errs: Errs = [];
  for (const [k, v] of Object.entries(obj(labels))) {
    errs.push(...validateLabelName(k, path));
    for (const m of isLabelValue(str(v))) errs.push(invalid(path, str(v), m));
  }
  return errs;
}


/** ValidateLabelSelector (values are always checked: AllowInvalidLabelValueInSelector is false) */
export function validateLabelSelector(sel: any, path: string, allowInvalidValues = false): Errs {
  if (sel == null) return [];
  const errs = validateLabels(sel.matchLabels, child(path, 'matchLabels'));
  arr(sel.matchExpressions).forEach((e: any, i: number) => errs.push(...validateLabelSelectorRequirement(e, idx(child(path, 'matchExpressions'), i), allowInvalidValues)));
  return errs;
}

export function validateLabelSelectorRequirement(e: any, path: string, allowInvalidValues = false, allowUnknownOperator = false): Errs {
  const values = arr<string>(e?.values);
  const errs = operatorErrors(e, path, allowUnknownOperator);
  errs.push(...validateLabelName(str(e?.key), child(path, 'key')));
  if (!allowInvalidValues) values.forEach((v, i) => isLabelValue(str(v)).forEach((m) => errs.push(invalid(idx(child(path, 'values'), i), str(v), m))));
  return errs;
}

/** ValidateFieldSelectorRequirement (metav1.FieldSelectorRequirement: key, operator, values) */
export function validateFieldSelectorRequirement(e: any, path: string, allowUnknownOperator = false): Errs {
  const errs: Errs = str(e?.key) ? [] : [required(child(path, 'key'), 'must be specified')];
  errs.push(...operatorErrors(e, path, allowUnknownOperator));
  return errs;
}

/** the operator of a label, field or node selector requirement and the number of values it takes
 *  (Gt and Lt, one value, only for node selectors) */
export function operatorErrors(e: any, path: string, allowUnknownOperator = false, numeric = false): Errs {
  const values = arr<string>(e?.values);
  switch (e?.operator) {
    case 'In':
    case 'NotIn':
      return values.length === 0 ? [required(child(path, 'values'), "must be specified when `operator` is 'In' or 'NotIn'")] : [];
    case 'Exists':
    case 'DoesNotExist':
      return values.length > 0 ? [forbidden(child(path, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")] : [];
    case 'Gt':
    case 'Lt':
      if (numeric) return values.length !== 1 ? [required(child(path, 'values'), "must be specified single value when `operator` is 'Lt' or 'Gt'")] : [];
  }
  return allowUnknownOperator ? [] : [invalid(child(path, 'operator'), str(e?.operator), 'not a valid selector operator')];
}

/** whether metav1.LabelSelectorAsSelector fails for this selector */
export function selectorInvalid(sel: any): boolean {
  if (sel == null) return false;
  return validateLabelSelector(sel, 'x').length > 0;
}

/** A nil selector selects nothing; an empty one everything. */
export function selectorIsEmpty(sel: any): boolean {
  return sel != null && Object.keys(obj(sel.matchLabels)).length + arr(sel.matchExpressions).length === 0;
}

export function selectorMatches(sel: any, labels: unknown): boolean {
  if (sel == null) return false;
  const l = obj(labels);
  const has = (k: string) => Object.prototype.hasOwnProperty.call(l, k);
  for (const [k, v] of Object.entries(obj(sel.matchLabels))) if (!has(k) || l[k] !== v) return false;
  for (const e of arr(sel.matchExpressions)) {
    const vals = arr<string>(e.values);
    switch (e.operator) {
      case 'In':
        if (!has(e.key) || !vals.includes(l[e.key])) return false;
        break;
      case 'NotIn':
        if (has(e.key) && vals.includes(l[e.key])) return false;
        break;
      case 'Exists':
        if (!has(e.key)) return false;
        break;
      case 'DoesNotExist':
        if (has(e.key)) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

// ---- quantities ----

export function q(v: unknown): Quantity | null {
  return parseQuantity(v);
}

export function qstr(v: unknown): string {
  const x = parseQuantity(v);
  return x ? quantityString(x) : String(v);
}

/** a Quantity value as an error shows it (through its String method) */
export function qrepr(v: unknown): GoRepr {
  return new GoRepr(qstr(v));
}

export function qcmp(a: unknown, b: unknown): number {
  const x = parseQuantity(a);
  const y = parseQuantity(b);
  if (!x || !y) return 0;
  return cmpQuantity(x, y);
}

export function qsign(v: unknown): number {
  const x = parseQuantity(v);
  if (!x) return 0;
  return x.nano < 0n ? -1 : x.nano > 0n ? 1 : 0;
}

export function qmilli(v: unknown): bigint {
  const x = parseQuantity(v);
  return x ? quantityMilliValue(x) : 0n;
}

// ---- paths on disk ----

/** validateLocalDescendingPath + validatePathNoBacksteps */
export function validatePathNoBacksteps(p: string, path: string): Errs {
  if (p.replace(/\\/g, '/').split('/').includes('..')) return [invalid(path, p, "must not contain '..'")];
  return [];
}

export function validateLocalDescendingPath(p: string, path: string): Errs {
  const errs: Errs = [];
  if (p.startsWith('/')) errs.push(invalid(path, p, 'must be a relative path'));
  errs.push(...validatePathNoBacksteps(p, path));
  return errs;
}

export function validateLocalNonReservedPath(p: string, path: string): Errs {
  const errs = validateLocalDescendingPath(p, path);
  if (p.startsWith('..') && !p.startsWith('../')) errs.push(invalid(path, p, "must not start with '..'"));
  return errs;
}

// ---- equality ----

/** Deep equality with Go's semantic rules for JSON values: empty and absent collections are equal. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  const emptyish = (v: unknown) => v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);
  if (emptyish(a) && emptyish(b)) return true;
  if (typeof a !== typeof b || a === null || b === null) return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (typeof a === 'object') {
    const ka = Object.keys(a as object).filter((k) => !emptyish((a as any)[k]));
    const kb = Object.keys(b as object).filter((k) => !emptyish((b as any)[k]));
    if (ka.length !== kb.length) return false;
    return ka.every((k) => jsonEqual((a as any)[k], (b as any)[k]));
  }
  return a === b;
}

export function clone<T>(v: T): T {
  return v === undefined ? v : copyJSON(v);
}

/** base64 decoded length of a []byte field in JSON form */
export function bytesLen(v: unknown): number {
  if (typeof v !== 'string') return 0;
  return Buffer.from(v, 'base64').length;
}

export function bytesOf(v: unknown): Uint8Array {
  return typeof v === 'string' ? new Uint8Array(Buffer.from(v, 'base64')) : new Uint8Array();
}

export { goStrings, tooLong };
