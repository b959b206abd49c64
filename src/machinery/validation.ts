// Name, label and annotation checks with Kubernetes' rules and wording (kubectl prints the
// messages as they come, so their text is part of the interface).

const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN = `${DNS1123_LABEL}(\\.${DNS1123_LABEL})*`;
const DNS1035_LABEL = '[a-z]([-a-z0-9]*[a-z0-9])?';
const LABEL_KEY_NAME = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE = `(${LABEL_KEY_NAME})?`;

const reLabel = new RegExp(`^${DNS1123_LABEL}$`);
const reSubdomain = new RegExp(`^${DNS1123_SUBDOMAIN}$`);
const re1035 = new RegExp(`^${DNS1035_LABEL}$`);
const reKeyName = new RegExp(`^${LABEL_KEY_NAME}$`);
const reLabelValue = new RegExp(`^${LABEL_VALUE}$`);

export function maxLenError(n: number): string {
  return `must be no more than ${n} characters`;
}

/** validation.RegexError */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  // Go writes "'a', " then " or " between examples: two spaces before "or", as Kubernetes prints it
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

export function isDNS1123Label(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push(maxLenError(63));
  if (!reLabel.test(v)) {
    if (reSubdomain.test(v)) errs.push('must not contain dots');
    else
      errs.push(
        regexError(
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
          DNS1123_LABEL,
          'my-name',
          '123-abc',
        ),
      );
  }
  return errs;
}

export function isDNS1123Subdomain(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 253) errs.push(maxLenError(253));
  if (!reSubdomain.test(v))
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN,
        'example.com',
      ),
    );
  return errs;
}

export function isDNS1035Label(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push(maxLenError(63));
  if (!re1035.test(v))
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_LABEL,
        'my-name',
        'abc-123',
      ),
    );
  return errs;
}

const KEY_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** validation.IsQualifiedName: a label key or other "qualified name", an optional DNS subdomain prefix and '/', then a name */
export function isQualifiedName(v: string): string[] {
  const errs: string[] = [];
  const slash = v.indexOf('/');
  let name: string;
  if (slash < 0) name = v;
  else if (v.indexOf('/', slash + 1) < 0) {
    const prefix = v.slice(0, slash);
    name = v.slice(slash + 1);
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const m of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${m}`);
  } else {
    return [
      `a qualified name ${regexError(KEY_MSG, LABEL_KEY_NAME, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!reKeyName.test(name)) errs.push(`name part ${regexError(KEY_MSG, LABEL_KEY_NAME, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

export function isLabelValue(v: string): string[] {
  // (a valid value, nearly always: the one regular expression and nothing else)
  if (v.length <= 63 && reLabelValue.test(v)) return [];
  const errs: string[] = [];
  if (v.length > 63) errs.push(maxLenError(63));
  if (!reLabelValue.test(v))
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  return errs;
}

/** Path segment names may not be '.' or '..' nor contain '/' or '%' (every name is also checked by its kind's rule). */
export function isValidPathSegmentName(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  const errs: string[] = [];
  if (name.includes('/')) errs.push(`may not contain '/'`);
  if (name.includes('%')) errs.push(`may not contain '%'`);
  return errs;
}

/** a named rule, or a kind's own check of the name (an IPAddress's name is an IP address) */
export type NameRule = 'subdomain' | 'label' | 'dns1035' | 'path' | ((name: string, prefix: boolean) => string[]);

/** A kind's object-name check; with prefix=true the value is a generateName prefix (its trailing '-' allowed). */
export function validateName(rule: NameRule, name: string, prefix: boolean): string[] {
  if (typeof rule === 'function') return rule(name, prefix);
  let v = name;
  if (prefix) v = maskTrailingDash(v);
  switch (rule) {
    case 'subdomain':
      return isDNS1123Subdomain(v);
    case 'label':
      return isDNS1123Label(v);
    case 'dns1035':
      return isDNS1035Label(v);
    case 'path':
      return isValidPathSegmentName(v);
  }
}

function maskTrailingDash(v: string): string {
  if (v.length > 1 && v.endsWith('-')) return v.slice(0, -2) + 'a';
  return v;
}

const TOTAL_ANNOTATION_SIZE = 256 * 1024;

import { FieldError, field } from './errors.js';

/**
 * Label and annotation keys found valid, so that the keys every object repeats (app, tier, the
 * well-known ones) are checked once, not on every write (~1.2 µs a write for three labels); each
 * set is cleared when it reaches KNOWN_KEYS_MAX.
 */
const knownLabelKeys = new Set<string>();
const knownAnnotationKeys = new Set<string>();
const KNOWN_KEYS_MAX = 4096;

/** the problems of key k as a qualified name (in lower case with `lower`), none when `known` has it; a valid key joins `known` */
function keyProblems(known: Set<string>, k: string, lower: boolean): string[] {
  if (known.has(k)) return [];
  const bad = isQualifiedName(lower ? k.toLowerCase() : k);
  if (bad.length === 0) {
    if (known.size >= KNOWN_KEYS_MAX) known.clear();
    known.add(k);
  }
  return bad;
}

export function validateLabels(labels: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (labels == null) return errs;
  const l = labels as Record<string, unknown>;
  for (const k of Object.keys(l)) {
    for (const m of keyProblems(knownLabelKeys, k, false)) errs.push(field.invalid(path, k, m));
    const v = l[k];
    if (typeof v !== 'string') continue;
    for (const m of isLabelValue(v)) errs.push(field.invalid(path, v, m));
  }
  return errs;
}

export function validateAnnotations(ann: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (ann == null) return errs;
  let total = 0;
  const a = ann as Record<string, unknown>;
  for (const k of Object.keys(a)) {
    for (const m of keyProblems(knownAnnotationKeys, k, true)) errs.push(field.invalid(path, k, m));
    const v = a[k];
    total += k.length + (typeof v === 'string' ? v.length : 0);
  }
  if (total > TOTAL_ANNOTATION_SIZE) errs.push(field.tooLong(path, TOTAL_ANNOTATION_SIZE));
  return errs;
}
