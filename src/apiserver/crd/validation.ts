// Validation of CustomResourceDefinition objects (apiextensions.k8s.io/v1), the main rules of
// apiextensions-apiserver with its wording: names, scope, versions (one storage version, unique
// names), subresources, printer columns, and the structural schema every version needs.
import { re2 } from '../../machinery/re2.js';
import { ruleDefinitionErrors } from './celrules.js';
import { field, FieldError } from '../../machinery/errors.js';
import { isDNS1035Label, isDNS1123Subdomain } from '../../machinery/validation.js';
import { prune, validateValue, type JSONSchemaProps } from './schema.js';
import { parseJSONPath } from './jsonpath.js';

const TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const PRINTER_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const PRINTER_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];

function validateNames(names: any, path: string, errs: FieldError[]): void {
  if (!names || typeof names !== 'object') {
    errs.push(field.required(`${path}.plural`, ''), field.required(`${path}.kind`, ''));
    return;
  }
  const label = (p: string, v: unknown, required: boolean) => {
    if (v === undefined || v === '') {
      if (required) errs.push(field.required(p, ''));
      return;
    }
    if (typeof v !== 'string') return;
    const msgs = isDNS1035Label(v);
    if (msgs.length) errs.push(field.invalid(p, v, msgs.join(',')));
  };
  label(`${path}.plural`, names.plural, true);
  label(`${path}.singular`, names.singular, false);
  const kindOf = (p: string, v: unknown, required: boolean) => {
    if (v === undefined || v === '') {
      if (required) errs.push(field.required(p, ''));
      return;
    }
    const msgs = typeof v === 'string' ? isDNS1035Label(v.toLowerCase()) : [];
    if (msgs.length) errs.push(field.invalid(p, v, `may have mixed case, but should otherwise match: ${msgs.join(',')}`));
  };
  kindOf(`${path}.kind`, names.kind, true);
  kindOf(`${path}.listKind`, names.listKind, false);
  if (names.kind && names.kind === names.listKind) errs.push(field.invalid(`${path}.listKind`, names.listKind, 'kind and listKind may not be the same'));
  (names.shortNames ?? []).forEach((s: unknown, i: number) => label(`${path}.shortNames[${i}]`, s, true));
  (names.categories ?? []).forEach((s: unknown, i: number) => label(`${path}.categories[${i}]`, s, true));
}

/**
 * the structural schema rules (the main ones): types everywhere, no tuple items. `uncorrelatable`:
 * the items of the nearest list above that is not a map list (a rule there cannot use oldSelf)
 */
function validateStructural(s: JSONSchemaProps, path: string, level: 'root' | 'field' | 'item', errs: FieldError[], uncorrelatable?: string): void {
  if (!s || typeof s !== 'object') return;
  const root = level === 'root';
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (s.$ref !== undefined) errs.push(field.forbidden(`${path}.$ref`, '$ref is not supported'));
  if (s.uniqueItems === true) errs.push(field.forbidden(`${path}.uniqueItems`, 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  if (embedded && s.type !== 'object') {
    if (!s.type) errs.push(field.required(`${path}.type`, 'must be object if x-kubernetes-embedded-resource is true'));
    else errs.push(field.invalid(`${path}.type`, s.type, 'must be object if x-kubernetes-embedded-resource is true'));
  } else if ((s.type === undefined || s.type === '') && !preserve && !intOrString) {
    errs.push(field.required(`${path}.type`, root ? 'must not be empty at the root' : level === 'item' ? 'must not be empty for specified array items' : 'must not be empty for specified object fields'));
  } else if (s.type && !TYPES.includes(s.type)) {
    errs.push(field.notSupported(`${path}.type`, s.type, TYPES));
  }
  if (root && s.type && s.type !== 'object') errs.push(field.invalid(`${path}.type`, s.type, 'must be object at the root'));
  if (intOrString && s.type) errs.push(field.invalid(`${path}.type`, s.type, 'must be empty if x-kubernetes-int-or-string is true'));
  if (embedded && s.additionalProperties !== undefined) errs.push(field.forbidden(`${path}.additionalProperties`, 'must not be used if x-kubernetes-embedded-resource is set'));
  if (s.properties && s.additionalProperties !== undefined && s.additionalProperties !== false) {
    errs.push(field.forbidden(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
  }
  if (Array.isArray(s.items)) errs.push(field.forbidden(`${path}.items`, 'items must be a schema object and not an array'));
  else if (s.type === 'array' && !s.items) errs.push(field.required(`${path}.items`, 'must be specified'));
  if (s.pattern !== undefined) {
    try {
      re2(s.pattern);
    } catch {
      errs.push(field.invalid(`${path}.pattern`, s.pattern, 'must be a valid regular expression'));
    }
  }
  const lt = s['x-kubernetes-list-type'];
  if (lt !== undefined) {
    if (!['atomic', 'set', 'map'].includes(lt)) errs.push(field.notSupported(`${path}.x-kubernetes-list-type`, lt, ['atomic', 'set', 'map']));
    else if (s.type !== 'array') errs.push(field.invalid(`${path}.x-kubernetes-list-type`, lt, 'must only be used on array types'));
    if (lt === 'map' && !(s['x-kubernetes-list-map-keys'] ?? []).length) errs.push(field.required(`${path}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
  }
  if (s['x-kubernetes-list-map-keys'] !== undefined && lt !== 'map') {
    errs.push(field.invalid(`${path}.x-kubernetes-list-type`, lt ?? '', 'must be map if x-kubernetes-list-map-keys is non-empty'));
  }
  if (s.default !== undefined) validateDefault(s, path, errs);
  ruleDefinitionErrors(s, path, errs, root, uncorrelatable);
  for (const [k, ps] of Object.entries(s.properties ?? {})) {
    if (root && k === 'metadata' && ps && typeof ps === 'object') {
      const extra = Object.keys(ps).filter((x) => x !== 'type' && x !== 'description' && x !== 'properties');
      if (extra.length === 0) {
        for (const mk of Object.keys(ps.properties ?? {})) {
          if (mk !== 'name' && mk !== 'generateName') errs.push(field.forbidden(`${path}.properties[metadata].properties[${mk}]`, 'must not be specified'));
        }
      }
      continue;
    }
    validateStructural(ps, `${path}.properties[${k}]`, 'field', errs, uncorrelatable);
  }
  // (the items of a map list correspond by their keys; those of a set or an atomic list do not)
  if (s.items && !Array.isArray(s.items)) validateStructural(s.items, `${path}.items`, 'item', errs, uncorrelatable ?? (s['x-kubernetes-list-type'] === 'map' ? undefined : `${path}.items`));
  if (s.additionalProperties && typeof s.additionalProperties === 'object') validateStructural(s.additionalProperties, `${path}.additionalProperties`, 'field', errs, uncorrelatable);
}

/** a `default` must itself be valid against its schema (pruned as an object of that schema would be) */
function validateDefault(s: JSONSchemaProps, path: string, errs: FieldError[]): void {
  const value = structuredClone(s.default);
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const unknown = prune(value as Record<string, unknown>, s, false);
    for (const u of unknown) errs.push(field.invalid(`${path}.default.${u}`, 'unknown field', 'must not be set: the schema does not declare it (it would be pruned)'));
  }
  for (const e of validateValue(value, { ...s, default: undefined }, '', [], false)) {
    const at = e.field === '<root>' ? `${path}.default` : `${path}.default.${e.field}`;
    errs.push(new FieldError(e.type, at, e.value, e.detail.replace(/^<root> in body/, 'in body').replace(/^(\S+) in body/, 'in body')));
  }
}

export const API_APPROVED_ANNOTATION = 'api-approved.kubernetes.io';

/** groups of the Kubernetes community (k8s.io, kubernetes.io and their subdomains) need an API review's approval */
export function isProtectedGroup(group: string): boolean {
  return group === 'k8s.io' || group === 'kubernetes.io' || group.endsWith('.k8s.io') || group.endsWith('.kubernetes.io');
}

/** the approval a CRD's annotation states: approved (a URL), bypassed (`unapproved...`), missing, or invalid */
export function apiApprovalState(annotations: Record<string, string> | undefined): 'approved' | 'bypassed' | 'missing' | 'invalid' {
  const v = annotations?.[API_APPROVED_ANNOTATION];
  if (v === undefined) return 'missing';
  if (v.startsWith('unapproved')) return 'bypassed';
  try {
    const u = new URL(v);
    return u.protocol === 'https:' || u.protocol === 'http:' ? 'approved' : 'invalid';
  } catch {
    return 'invalid';
  }
}

/** validation of a CRD on create (and on update: `old` given) */
export function validateCRD(crd: any, old?: any): FieldError[] {
  const errs: FieldError[] = [];
  const spec = crd?.spec;
  if (!spec || typeof spec !== 'object') return [field.required('spec', '')];
  if (typeof spec.group === 'string' && isProtectedGroup(spec.group)) {
    const path = `metadata.annotations[${API_APPROVED_ANNOTATION}]`;
    const msg = `protected groups must have approval annotation "${API_APPROVED_ANNOTATION}", see https://github.com/kubernetes/enhancements/pull/1111`;
    const state = apiApprovalState(crd.metadata?.annotations);
    if (state === 'missing') errs.push(field.required(path, msg));
    else if (state === 'invalid') errs.push(field.invalid(path, crd.metadata.annotations[API_APPROVED_ANNOTATION], msg));
  }
  const group = spec.group;
  if (!group) errs.push(field.required('spec.group', ''));
  else if (typeof group === 'string') {
    const msgs = isDNS1123Subdomain(group);
    if (msgs.length) errs.push(field.invalid('spec.group', group, msgs.join(',')));
    else if (!group.includes('.')) errs.push(field.invalid('spec.group', group, 'should be a domain with at least one dot'));
  }
  const plural = spec.names?.plural;
  if (crd.metadata?.name !== `${plural}.${group}`) errs.push(field.invalid('metadata.name', crd.metadata?.name ?? '', 'must be spec.names.plural+"."+spec.group'));
  validateNames(spec.names, 'spec.names', errs);
  if (!spec.scope) errs.push(field.required('spec.scope', ''));
  else if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') errs.push(field.notSupported('spec.scope', spec.scope, ['Cluster', 'Namespaced']));
  const versions: any[] = Array.isArray(spec.versions) ? spec.versions : [];
  if (versions.length === 0) errs.push(field.invalid('spec.versions', null, 'must have exactly one version marked as storage version'));
  else {
    const storage = versions.filter((v) => v?.storage === true).length;
    if (storage !== 1) errs.push(field.invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
    if (!versions.some((v) => v?.served === true)) errs.push(field.invalid('spec.versions', versions, 'must have at least one version marked as served'));
  }
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    const p = `spec.versions[${i}]`;
    if (!v?.name) errs.push(field.required(`${p}.name`, ''));
    else {
      const msgs = isDNS1035Label(v.name);
      if (msgs.length) errs.push(field.invalid(`${p}.name`, v.name, msgs.join(',')));
      if (seen.has(v.name)) errs.push(field.invalid('spec.versions', versions, 'must contain unique version names'));
      seen.add(v.name);
    }
    const schema = v?.schema?.openAPIV3Schema;
    if (!schema) errs.push(field.required(`${p}.schema.openAPIV3Schema`, 'schemas are required'));
    else validateStructural(schema, `${p}.schema.openAPIV3Schema`, 'root', errs);
    const scale = v?.subresources?.scale;
    if (scale) {
      for (const [k, required] of [['specReplicasPath', true], ['statusReplicasPath', true], ['labelSelectorPath', false]] as const) {
        const val = scale[k];
        if (val === undefined || val === '') {
          if (required) errs.push(field.required(`${p}.subresources.scale.${k}`, ''));
          continue;
        }
        if (typeof val !== 'string' || !/^\.[A-Za-z0-9_]/.test(val) || /[[\]*]/.test(val)) {
          errs.push(field.invalid(`${p}.subresources.scale.${k}`, val, 'should be a json path starting with a dot, without array indices or wildcards'));
        } else if (k === 'specReplicasPath' && !val.startsWith('.spec.')) {
          errs.push(field.invalid(`${p}.subresources.scale.${k}`, val, 'should be a json path under .spec'));
        } else if (k === 'statusReplicasPath' && !val.startsWith('.status.')) {
          errs.push(field.invalid(`${p}.subresources.scale.${k}`, val, 'should be a json path under .status'));
        }
      }
    }
    if (Array.isArray(v?.selectableFields) && schema) validateSelectableFields(v.selectableFields, schema, `${p}.selectableFields`, errs);
    (v?.additionalPrinterColumns ?? []).forEach((c: any, j: number) => {
      const cp = `${p}.additionalPrinterColumns[${j}]`;
      if (!c?.name) errs.push(field.required(`${cp}.name`, ''));
      if (!c?.type) errs.push(field.required(`${cp}.type`, `must be one of ${PRINTER_TYPES.join(',')}`));
      else if (!PRINTER_TYPES.includes(c.type)) errs.push(field.invalid(`${cp}.type`, c.type, `must be one of ${PRINTER_TYPES.join(',')}`));
      if (c?.format && !PRINTER_FORMATS.includes(c.format)) errs.push(field.invalid(`${cp}.format`, c.format, `must be one of ${PRINTER_FORMATS.join(',')}`));
      if (c?.priority !== undefined && (typeof c.priority !== 'number' || c.priority < 0)) errs.push(field.invalid(`${cp}.priority`, c.priority, 'must be greater than or equal to 0'));
      if (!c?.jsonPath) errs.push(field.required(`${cp}.JSONPath`, ''));
      else if (!parseJSONPath(c.jsonPath)) errs.push(field.invalid(`${cp}.JSONPath`, c.jsonPath, 'must be a simple json path'));
    });
  });
  const conv = spec.conversion?.strategy;
  if (conv !== undefined && conv !== 'None' && conv !== 'Webhook') errs.push(field.notSupported('spec.conversion.strategy', conv, ['None', 'Webhook']));
  if (conv === 'Webhook' && !spec.conversion?.webhook?.clientConfig) errs.push(field.required('spec.conversion.webhookClientConfig', 'required when strategy is set to Webhook'));
  if (old) {
    if (old.spec?.group !== undefined && spec.group !== old.spec.group) errs.push(field.invalid('spec.group', spec.group, 'field is immutable'));
    if (old.spec?.names?.plural !== undefined && spec.names?.plural !== old.spec.names.plural) errs.push(field.invalid('spec.names.plural', spec.names?.plural, 'field is immutable'));
    // once established, what the stored objects depend on stays
    const established = (old.status?.conditions ?? []).some((c: any) => c.type === 'Established' && c.status === 'True');
    if (established && spec.scope !== old.spec?.scope) errs.push(field.invalid('spec.scope', spec.scope, 'field is immutable'));
    if (established && spec.names?.kind !== old.spec?.names?.kind) errs.push(field.invalid('spec.names.kind', spec.names?.kind, 'field is immutable'));
  }
  const stored: string[] = crd.status?.storedVersions ?? [];
  stored.forEach((s, i) => {
    if (old && !versions.some((v) => v?.name === s)) {
      errs.push(
        field.invalid(
          `status.storedVersions[${i}]`,
          s,
          `missing from spec.versions; ${s} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in ${s} and removes ${s} from status.storedVersions`,
        ),
      );
    }
  });
  return errs;
}

/** at most this many distinct selectable fields per version (Kubernetes' MaxSelectableFields) */
const MAX_SELECTABLE_FIELDS = 8;

/**
 * A version's selectableFields as Kubernetes checks them: each jsonPath a field of the schema
 * (dots only, no array notation), not under metadata, of type string, boolean or integer, named
 * once; at most 8.
 */
function validateSelectableFields(fields: any[], schema: any, path: string, errs: FieldError[]): void {
  const unique = new Set<string>();
  fields.forEach((f, i) => {
    const at = `${path}[${i}].jsonPath`;
    const jp = f?.jsonPath;
    if (typeof jp !== 'string' || jp === '') {
      errs.push(field.required(at, ''));
      return;
    }
    const found = fieldAtPath(jp, schema);
    if (typeof found === 'string') {
      errs.push(field.invalid(at, jp, `is an invalid path: ${found}`));
      return;
    }
    if (found.path[0] === 'metadata') errs.push(field.invalid(at, jp, 'must not point to fields in metadata'));
    if (!['string', 'boolean', 'integer'].includes(found.schema?.type)) {
      errs.push(field.invalid(at, jp, 'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'));
    }
    const key = found.path.join('.');
    if (unique.has(key)) errs.push(field.duplicate(at, jp));
    else unique.add(key);
  });
  if (unique.size > MAX_SELECTABLE_FIELDS) errs.push(new FieldError('FieldValueTooMany', path, unique.size, `must have at most ${MAX_SELECTABLE_FIELDS} items`));
}

/** the schema a `.a.b` path names (Kubernetes' ValidFieldPath without array notation), or why it names none */
function fieldAtPath(jsonPath: string, schema: any): { path: string[]; schema: any } | string {
  // tokens: '.', '[' and ']' alone, and the text between them
  const tokens = jsonPath.split(/([.[\]])/).filter((t) => t !== '');
  const path: string[] = [];
  let s = schema;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t === '[') return 'array notation is not allowed';
    if (t !== '.') return `expected [ or . but got: ${t}`;
    const name = tokens[++i];
    if (name === undefined) return 'unexpected end of JSON path';
    if (s?.properties && typeof s.properties === 'object') {
      if (!s.properties[name]) return 'does not refer to a valid field';
      s = s.properties[name];
    } else if (s?.additionalProperties && typeof s.additionalProperties === 'object') {
      s = s.additionalProperties;
    } else return 'does not refer to a valid field';
    path.push(name);
  }
  return { path, schema: s };
}
