// The structural schema of a custom resource (a CRD version's openAPIV3Schema) at work on its
// objects, as apiextensions-apiserver applies it: pruning of the fields the schema does not
// declare, defaulting (`default`), and validation with Kubernetes' wording.
//
// Objects are schemaless JSON. At the root and in x-kubernetes-embedded-resource objects,
// apiVersion, kind and metadata are kept whatever the schema says (metadata is ObjectMeta).
import { re2 } from '../../machinery/re2.js';
import { stringifyJSON } from '../../codec/int64.js';
import { field, FieldError } from '../../machinery/errors.js';
import { isDNS1035Label, isDNS1123Label, isValidPathSegmentName, validateAnnotations, validateLabels } from '../../machinery/validation.js';

/** apiextensions.k8s.io/v1 JSONSchemaProps as it arrives in JSON */
export interface JSONSchemaProps {
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  items?: JSONSchemaProps | JSONSchemaProps[];
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  allOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  [k: string]: unknown;
}

const META_KEYS = new Set(['apiVersion', 'kind', 'metadata']);

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function join(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

/** the schema of an array's items (a single schema; the tuple form is not structural) */
function itemsOf(s: JSONSchemaProps): JSONSchemaProps | undefined {
  return Array.isArray(s.items) ? undefined : s.items;
}

// ---- pruning ----

/**
 * Remove the fields the schema does not declare, in place; returns the removed fields' paths
 * (`spec.foo`, `spec.list[0].bar`) for fieldValidation. `root`: apiVersion, kind and metadata
 * stay (metadata is normalized as ObjectMeta by the caller).
 */
export function prune(obj: Record<string, unknown>, schema: JSONSchemaProps | undefined, root = true): string[] {
  const unknown: string[] = [];
  pruneObject(obj, schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, '', root, unknown);
  return unknown;
}

function pruneValue(v: unknown, s: JSONSchemaProps | undefined, path: string, unknown: string[]): void {
  if (!s) return;
  if (Array.isArray(v)) {
    const items = itemsOf(s);
    if (items) v.forEach((x, i) => pruneValue(x, items, `${path}[${i}]`, unknown));
    return;
  }
  if (isObject(v)) pruneObject(v, s, path, s['x-kubernetes-embedded-resource'] === true, unknown);
}

function pruneObject(o: Record<string, unknown>, s: JSONSchemaProps, path: string, keepMeta: boolean, unknown: string[]): void {
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const props = s.properties;
  const addl = s.additionalProperties;
  for (const k of Object.keys(o)) {
    if (keepMeta && META_KEYS.has(k)) {
      if (k === 'metadata' && path !== '' && isObject(o[k])) pruneEmbeddedMeta(o[k] as Record<string, unknown>, join(path, k), unknown);
      continue;
    }
    const ps = props?.[k];
    if (ps) {
      pruneValue(o[k], ps, join(path, k), unknown);
      continue;
    }
    if (isObject(addl)) {
      pruneValue(o[k], addl, join(path, k), unknown);
      continue;
    }
    if (preserve || addl === true) continue;
    delete o[k];
    unknown.push(join(path, k));
  }
}

const EMBEDDED_META = new Set(['name', 'namespace', 'generateName', 'labels', 'annotations', 'finalizers', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'ownerReferences', 'managedFields', 'selfLink']);

function pruneEmbeddedMeta(m: Record<string, unknown>, path: string, unknown: string[]): void {
  for (const k of Object.keys(m)) {
    if (EMBEDDED_META.has(k)) continue;
    delete m[k];
    unknown.push(join(path, k));
  }
}

// ---- embedded resources ----

/**
 * An x-kubernetes-embedded-resource object, as Kubernetes' objectmeta validation checks it:
 * apiVersion and kind required (kind a DNS-1035 label in any case, apiVersion a group/version),
 * and its metadata as an object's (a name that is a path segment, a namespace that is a DNS
 * label, labels and annotations).
 */
function validateEmbeddedResource(v: Record<string, unknown>, path: string, errs: FieldError[]): void {
  if (!('apiVersion' in v)) errs.push(field.required(join(path, 'apiVersion'), ''));
  if (!('kind' in v)) errs.push(field.required(join(path, 'kind'), ''));
  for (const [k, x] of Object.entries(v)) {
    const at = join(path, k);
    if (k === 'apiVersion') {
      if (typeof x !== 'string') errs.push(field.invalid(at, x, 'must be a string'));
      else if (x === '') errs.push(field.invalid(at, x, 'must not be empty'));
      else if (x.split('/').length > 2) errs.push(field.invalid(at, x, `unexpected GroupVersion string: ${x}`));
    } else if (k === 'kind') {
      if (typeof x !== 'string') errs.push(field.invalid(at, x, 'must be a string'));
      else if (x === '') errs.push(field.invalid(at, x, 'must not be empty'));
      else {
        const bad = isDNS1035Label(x.toLowerCase());
        if (bad.length) errs.push(field.invalid(at, x, `may have mixed case, but should otherwise match: ${bad.join(',')}`));
      }
    } else if (k === 'metadata' && isObject(x)) {
      const name = typeof x.name === 'string' && x.name !== '' ? x.name : 'fakename';
      for (const m of isValidPathSegmentName(name)) errs.push(field.invalid(join(at, 'name'), name, m));
      if (typeof x.generateName === 'string' && x.generateName !== '') for (const m of isValidPathSegmentName(x.generateName)) errs.push(field.invalid(join(at, 'generateName'), x.generateName, m));
      if (typeof x.namespace === 'string' && x.namespace !== '') for (const m of isDNS1123Label(x.namespace)) errs.push(field.invalid(join(at, 'namespace'), x.namespace, m));
      errs.push(...validateLabels(x.labels, join(at, 'labels')), ...validateAnnotations(x.annotations, join(at, 'annotations')));
    }
  }
}

// ---- defaulting ----

/** Apply `default` values in place (missing fields, and nulls where null is not allowed). */
export function applySchemaDefaults(v: unknown, s: JSONSchemaProps | undefined): void {
  if (!s) return;
  if (Array.isArray(v)) {
    const items = itemsOf(s);
    if (items) for (const x of v) applySchemaDefaults(x, items);
    return;
  }
  if (!isObject(v)) return;
  if (s.properties) {
    for (const [k, ps] of Object.entries(s.properties)) {
      if (v[k] === null && ps.nullable !== true) {
        if (ps.default !== undefined) v[k] = structuredClone(ps.default);
        else delete v[k];
      } else if (v[k] === undefined && ps.default !== undefined) v[k] = structuredClone(ps.default);
      if (v[k] !== undefined) applySchemaDefaults(v[k], ps);
    }
  }
  if (isObject(s.additionalProperties)) {
    const addl = s.additionalProperties;
    for (const [k, x] of Object.entries(v)) if (!s.properties?.[k] && !(META_KEYS.has(k) && s === undefined)) applySchemaDefaults(x, addl);
  }
}

// ---- validation ----

function goType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'bigint') return 'integer';
  if (typeof v === 'boolean') return 'boolean';
  return typeof v;
}

function typeMatches(v: unknown, type: string): boolean {
  switch (type) {
    case 'object':
      return isObject(v);
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return (typeof v === 'number' && Number.isInteger(v)) || typeof v === 'bigint';
    case 'number':
      return typeof v === 'number' || typeof v === 'bigint';
    case 'boolean':
      return typeof v === 'boolean';
    default:
      return true;
  }
}

function notMultipleOf(v: number | bigint, m: number): boolean {
  if (typeof v === 'bigint') {
    if (Number.isInteger(m)) return v % BigInt(m) !== 0n;
    v = Number(v);
  }
  return Math.abs(v / m - Math.round(v / m)) > 1e-9;
}

function canonicalJSON(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJSON).join(',')}]`;
  if (isObject(v)) return `{${Object.keys(v).sort().map((k) => `${stringifyJSON(k)}:${canonicalJSON(v[k])}`).join(',')}}`;
  return typeof v === 'bigint' ? String(v) : stringifyJSON(v);
}

const FORMATS: Record<string, (s: string) => boolean> = {
  'date-time': (s) => /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s)),
  date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)),
  uuid: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s),
  ipv4: (s) => /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(s),
  email: (s) => /^[^@\s]+@[^@\s]+$/.test(s),
  hostname: (s) => s.length <= 253 && /^[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*$/.test(s),
  byte: (s) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s),
};

/** no value of the old object corresponds to this one (validation ratcheting) */
export const UNCORRELATED: unique symbol = Symbol('uncorrelated');

/** deep equality of decoded JSON values (an int as a number or a bigint; members that are undefined do not count) */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) return a == b;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  if (!isObject(a) || !isObject(b)) return false;
  const ka = Object.keys(a).filter((k) => a[k] !== undefined);
  const kb = Object.keys(b).filter((k) => b[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => sameValue(a[k], b[k]));
}

/** the old list's item that corresponds to `x` (a map list's item with the same keys, a set's equal item), else UNCORRELATED */
function correlatedItem(x: unknown, oldList: unknown, s: JSONSchemaProps): unknown {
  if (!Array.isArray(oldList)) return UNCORRELATED;
  const listType = s['x-kubernetes-list-type'];
  if (listType === 'set') return oldList.some((o) => sameValue(o, x)) ? x : UNCORRELATED;
  if (listType !== 'map' || !isObject(x)) return UNCORRELATED;
  const keys = s['x-kubernetes-list-map-keys'] ?? [];
  const item = itemsOf(s);
  const keyOf = (o: Record<string, unknown>) => keys.map((k) => (o[k] === undefined ? (item?.properties?.[k]?.default ?? null) : o[k]));
  const want = keyOf(x);
  const found = oldList.find((o) => isObject(o) && sameValue(keyOf(o), want));
  return found === undefined ? UNCORRELATED : found;
}

/**
 * Validates a value against a schema: its errors, in Kubernetes' wording for custom resources.
 * `old` (an update): the old object's value at the same place,
 * for validation ratcheting as Kubernetes does it (CRDValidationRatcheting, on since 1.30): a
 * value equal to the one it replaces is not validated, nor is anything inside it. Values
 * correspond through properties, map values, the items of map lists (by their keys) and of sets;
 * the items of other lists do not correspond.
 */
export function validateValue(v: unknown, s: JSONSchemaProps | undefined, path: string, errs: FieldError[] = [], root = true, old: unknown = UNCORRELATED): FieldError[] {
  if (!s) return errs;
  if (old !== UNCORRELATED && sameValue(v, old)) return errs;
  const at = path || '<root>';
  if (v === null) {
    if (s.nullable === true || (s['x-kubernetes-preserve-unknown-fields'] === true && !s.type)) return errs;
    if (s.type) errs.push(field.typeInvalid(at, 'null', `${at} in body must be of type ${s.type}: "null"`));
    return errs;
  }
  if (s['x-kubernetes-int-or-string'] === true) {
    if (!(typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v)) || typeof v === 'bigint')) errs.push(field.typeInvalid(at, goType(v), `${at} in body must be of type integer,string: ${stringifyJSON(goType(v))}`));
  } else if (s.type && !typeMatches(v, s.type)) {
    errs.push(field.typeInvalid(at, goType(v), `${at} in body must be of type ${s.type}: ${stringifyJSON(goType(v))}`));
    return errs;
  }
  if (s.enum && s.enum.length && !s.enum.some((e) => canonicalJSON(e) === canonicalJSON(v))) {
    errs.push(field.notSupported(at, v, s.enum.map((e) => (typeof e === 'string' ? e : canonicalJSON(e)))));
  }
  if (typeof v === 'number' || typeof v === 'bigint') {
    // (a bigint compares exactly with the bounds, which are numbers)
    if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum)) {
      errs.push(field.invalid(at, v, `${at} in body should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${s.maximum}`));
    }
    if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum)) {
      errs.push(field.invalid(at, v, `${at} in body should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}`));
    }
    if (s.multipleOf !== undefined && s.multipleOf > 0 && notMultipleOf(v, s.multipleOf)) {
      errs.push(field.invalid(at, v, `${at} in body should be a multiple of ${s.multipleOf}`));
    }
  }
  if (typeof v === 'string') {
    const len = [...v].length;
    if (s.maxLength !== undefined && len > s.maxLength) errs.push(field.tooLong(at, s.maxLength));
    if (s.minLength !== undefined && len < s.minLength) errs.push(field.invalid(at, v, `${at} in body should be at least ${s.minLength} chars long`));
    if (s.pattern !== undefined) {
      let re: RegExp | undefined;
      try {
        re = re2(s.pattern);
      } catch {
        re = undefined;
      }
      if (re && !re.test(v)) errs.push(field.invalid(at, v, `${at} in body should match '${s.pattern}'`));
    }
    if (s.format && FORMATS[s.format] && !FORMATS[s.format]!(v)) errs.push(field.invalid(at, v, `${at} in body must be of type ${s.format}: ${stringifyJSON(v)}`));
  }
  if (Array.isArray(v)) {
    if (s.maxItems !== undefined && v.length > s.maxItems) errs.push(new FieldError('FieldValueTooMany', at, v.length, `must have at most ${s.maxItems} items`));
    if (s.minItems !== undefined && v.length < s.minItems) errs.push(field.invalid(at, v.length, `${at} in body should have at least ${s.minItems} items`));
    const listType = s['x-kubernetes-list-type'];
    if (s.uniqueItems || listType === 'set') {
      const seen = new Set<string>();
      v.forEach((x, i) => {
        const c = canonicalJSON(x);
        if (seen.has(c)) errs.push(field.duplicate(`${at}[${i}]`, x));
        seen.add(c);
      });
    }
    if (listType === 'map') {
      const keys = s['x-kubernetes-list-map-keys'] ?? [];
      const items = itemsOf(s);
      const seen = new Set<string>();
      v.forEach((x, i) => {
        if (!isObject(x)) return;
        const key = canonicalJSON(keys.map((k) => (x[k] === undefined ? items?.properties?.[k]?.default ?? null : x[k])));
        if (seen.has(key)) errs.push(field.duplicate(`${at}[${i}]`, Object.fromEntries(keys.map((k) => [k, x[k]]))));
        seen.add(key);
      });
    }
    const items = itemsOf(s);
    if (items) v.forEach((x, i) => validateValue(x, items, `${at}[${i}]`, errs, false, old === UNCORRELATED ? old : correlatedItem(x, old, s)));
  }
  if (isObject(v)) {
    const n = Object.keys(v).length;
    if (s.maxProperties !== undefined && n > s.maxProperties) errs.push(new FieldError('FieldValueTooMany', at, n, `must have at most ${s.maxProperties} items`));
    if (s.minProperties !== undefined && n < s.minProperties) errs.push(field.invalid(at, n, `${at} in body should have at least ${s.minProperties} properties`));
    for (const r of s.required ?? []) if (v[r] === undefined) errs.push(field.required(join(path, r), ''));
    const embedded = root || s['x-kubernetes-embedded-resource'] === true;
    const was = (k: string): unknown => (isObject(old) && old[k] !== undefined ? old[k] : UNCORRELATED);
    for (const [k, x] of Object.entries(v)) {
      if (root && META_KEYS.has(k)) {
        // the schema may restrict metadata.name and metadata.generateName, nothing else of metadata
        const ms = k === 'metadata' && isObject(x) ? s.properties?.metadata?.properties : undefined;
        const om = was('metadata');
        for (const f of ['name', 'generateName']) {
          if (ms?.[f] && x !== undefined && (x as Record<string, unknown>)[f] !== undefined) validateValue((x as Record<string, unknown>)[f], ms[f], `metadata.${f}`, errs, false, isObject(om) && om[f] !== undefined ? om[f] : UNCORRELATED);
        }
        continue;
      }
      const ps = s.properties?.[k] ?? (isObject(s.additionalProperties) ? s.additionalProperties : undefined);
      if (ps) validateValue(x, ps, join(path, k), errs, false, was(k));
    }
    if (embedded && !root) validateEmbeddedResource(v, path, errs);
  }
  for (const sub of s.allOf ?? []) validateValue(v, sub, path, errs, false, old);
  if (s.anyOf && s.anyOf.length && !s.anyOf.some((sub) => validateValue(v, sub, path, [], false, old).length === 0)) {
    errs.push(field.invalid(at, v, `${at} in body must match at least one schema (anyOf)`));
  }
  if (s.oneOf && s.oneOf.length) {
    const n = s.oneOf.filter((sub) => validateValue(v, sub, path, [], false, old).length === 0).length;
    if (n !== 1) errs.push(field.invalid(at, v, `${at} in body must match exactly one schema (oneOf)`));
  }
  if (s.not && validateValue(v, s.not, path, [], false).length === 0) errs.push(field.invalid(at, v, `${at} in body should not match the schema (not)`));
  return errs;
}
