// CRD validation rules: the CEL expressions of a schema's `x-kubernetes-validations`, checked when
// a CustomResourceDefinition is written and evaluated against every custom resource written, as
// kube-apiserver 1.33's apiextensions-apiserver does (schema/cel/validation.go there).
//
// Each rule runs at its schema node with `self` bound to the value there (never for an absent or
// null value), over the schema's properties, additionalProperties, items and allOf. At the root
// of the resource, and of an x-kubernetes-embedded-resource object, `self` holds apiVersion, kind
// and, of the metadata, only name and generateName. A transition rule (one naming `oldSelf`) runs
// on an update only where the old object has a value at the same place: through object
// properties, map values and the items of `x-kubernetes-list-type: map` lists (matched by their
// keys), never through the items of other lists; with `optionalOldSelf: true` it also runs
// without one, `oldSelf` then being an empty optional. A rule that does not name oldSelf and
// fails on a value the update left as it was does not fail the update (ratcheting, on by default
// in Kubernetes 1.30 and later); the error goes to the client as a warning instead.
//
// A failure is a field error at the node (or at the rule's fieldPath below it) whose value is the
// node's schema type (`spec: Invalid value: "object": <message>`, as Kubernetes up to 1.33 prints
// it), its detail the message, the messageExpression's result, or `failed rule: <rule>`; its type
// follows the rule's reason. A rule that cannot be evaluated (no such key, a bad overload) fails
// with the evaluation error.
//
// The expressions run on Keelson's CEL interpreter (admission/cel.ts), with its gaps. A rule that
// calls a function the interpreter does not have (url, ip, cidr, semver, format, the sets, math,
// strings and base64 libraries) is not evaluated: the object passes it.
// Of CEL's static type checking only the fields are checked when the CRD is written (a rule
// selecting a field its schema does not declare is refused: undefinedField); no estimated cost
// limits when the CRD is written (maxItems, maxLength and the rules' shapes are not weighed), but the
// runtime ones of Kubernetes when an object is: each expression may cost at most 1,000,000 units
// (CEL_PER_CALL_LIMIT; past it: `'operation cancelled: actual cost limit exceeded': no further
// validation rules will be run due to call cost exceeds limit for rule: <rule>`) and all of an
// object's rules 10,000,000 (RUNTIME_COST_BUDGET; past it: `validation failed due to running out of
// cost budget, no further validation rules will be run`), counted as admission/cel.ts counts; a
// `type: number` value that is a whole number is an int, not a double. As in Kubernetes, a
// `date-time` or `date` string is a timestamp to the rules, and a `duration` string a duration.
// A property whose name CEL cannot spell is selected by its escaped name, as in Kubernetes
// (`my-field` is `self.my__dash__field`).
import {
  CEL_PER_CALL_LIMIT,
  CelCostLimitError,
  celDuration,
  celOptional,
  celParse,
  celTimestamp,
  celSyntaxError,
  celUndeclaredReference,
  CelUnsupportedError,
  evaluateCELWithCost,
  unescapeFieldName,
  type CelNode,
} from '../admission/cel.js';
import { celIssue, hasNewlines, trimSpace } from '../admission/vap-validation.js';
import { FieldError } from '../../machinery/errors.js';
import { duplicate, forbidden, GoRepr, goPtr, goQuote, goStruct, invalid, notSupported, required } from '../../schema/validation/errs.js';
import { sameValue, type JSONSchemaProps } from './schema.js';

export interface ValidationRule {
  rule?: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

const REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
/** the variables a rule may name */
const RULE_VARS: ReadonlySet<string> = new Set(['self', 'oldSelf']);
/** a messageExpression's result may be at most this many bytes (celconfig.MaxEvaluatedMessageExpressionSizeBytes) */
const MAX_MESSAGE_BYTES = 5 * 1024;
/** what all the rules run for one object may cost together (celconfig.RuntimeCELCostBudget) */
export const RUNTIME_COST_BUDGET = 10_000_000;
const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';


function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function rulesOf(s: JSONSchemaProps): ValidationRule[] {
  const r = (s as { 'x-kubernetes-validations'?: unknown })['x-kubernetes-validations'];
  return Array.isArray(r) ? (r.filter(isObject) as ValidationRule[]) : [];
}

/** whether a schema or anything below it has rules (most CRDs have none: their objects skip the walk) */
const hasRulesMemo = new WeakMap<JSONSchemaProps, boolean>();

export function hasRules(s: JSONSchemaProps | undefined): boolean {
  if (!s || typeof s !== 'object') return false;
  let r = hasRulesMemo.get(s);
  if (r === undefined) {
    r =
      rulesOf(s).length > 0 ||
      Object.values(s.properties ?? {}).some(hasRules) ||
      (!!s.items && !Array.isArray(s.items) && hasRules(s.items)) ||
      (isObject(s.additionalProperties) && hasRules(s.additionalProperties as JSONSchemaProps)) ||
      ((s as { allOf?: JSONSchemaProps[] }).allOf ?? []).some(hasRules);
    hasRulesMemo.set(s, r);
  }
  return r;
}

const oldSelfMemo = new Map<string, boolean>();
const SELF_ONLY: ReadonlySet<string> = new Set(['self']);

/** whether an expression names oldSelf (a rule that parses: its undeclared names are checked when the CRD is written) */
function usesOldSelf(expr: string): boolean {
  let r = oldSelfMemo.get(expr);
  if (r === undefined) {
    try {
      r = celUndeclaredReference(expr, SELF_ONLY)?.name === 'oldSelf';
    } catch {
      r = false;
    }
    if (oldSelfMemo.size > 1000) oldSelfMemo.clear();
    oldSelfMemo.set(expr, r);
  }
  return r;
}

/** a rule as Go's %#v prints an apiextensions.ValidationRule (the value of its compile errors) */
function ruleRepr(r: ValidationRule): GoRepr {
  return goStruct('apiextensions.ValidationRule', [
    ['Rule', goQuote(String(r.rule ?? ''))],
    ['Message', goQuote(String(r.message ?? ''))],
    ['MessageExpression', goQuote(String(r.messageExpression ?? ''))],
    ['Reason', goPtr('apiextensions.FieldValueErrorReason', r.reason !== undefined)],
    ['FieldPath', goQuote(String(r.fieldPath ?? ''))],
    ['OptionalOldSelf', goPtr('bool', r.optionalOldSelf !== undefined)],
  ]);
}

/**
 * cel-go's compile step as far as Keelson checks it: syntax, names other than `declared`, and
 * (given the schema `self` has) the fields selected from `self` and `oldSelf` that the schema
 * does not declare.
 */
function compileError(expr: string, declared: ReadonlySet<string>, self?: SelfType): string | undefined {
  const syntax = celSyntaxError(expr);
  if (syntax !== undefined) return `compilation failed: ${syntax}`;
  const u = celUndeclaredReference(expr, declared);
  if (u) return `compilation failed: ${celIssue(expr, u.pos, `undeclared reference to '${u.name}' (in container '')`)}`;
  if (self) {
    const f = undefinedField(celParse(expr), self);
    if (f) return `compilation failed: ${celIssue(expr, f.pos, `undefined field '${f.name}'`)}`;
  }
  return undefined;
}

/** the schema `self` has at a node (with the implicit type and metadata of a resource's root) */
interface SelfType {
  schema: JSONSchemaProps;
  resourceRoot: boolean;
  /** oldSelf is an optional (optionalOldSelf): its fields are reached through value() and not checked */
  optionalOld: boolean;
}

const META_TYPE: JSONSchemaProps = { type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' } } };

/** a schema whose CEL type is an object of exactly its declared properties (fields beyond them do not compile) */
function strictObject(s: JSONSchemaProps | undefined): boolean {
  if (!s || s.properties === undefined || s['x-kubernetes-preserve-unknown-fields'] === true || s['x-kubernetes-int-or-string'] === true) return false;
  return s.additionalProperties === undefined || s.additionalProperties === false;
}

/**
 * The first field selection of an expression that the schema of its target does not declare, as
 * cel-go's checker finds it (`undefined field 'x'`), following `self` (and `oldSelf`) through
 * object properties, map values, list items and the variables of macros over lists and maps. A
 * selection from anything else (a function's result, a value of a schema that keeps unknown
 * fields) is not checked.
 */
function undefinedField(root: CelNode, self: SelfType): { name: string; pos: number } | undefined {
  let found: { name: string; pos: number } | undefined;
  // a field's schema; null: the schema declares no such field; undefined: not known
  const field = (t: JSONSchemaProps | undefined, name: string, resourceRoot: boolean): JSONSchemaProps | null | undefined => {
    if (!t) return undefined;
    if (resourceRoot || t['x-kubernetes-embedded-resource'] === true) {
      if (name === 'apiVersion' || name === 'kind') return { type: 'string' };
      if (name === 'metadata') return META_TYPE;
    }
    if (strictObject(t)) return t.properties?.[name] ?? null;
    if (isObject(t.additionalProperties)) return t.additionalProperties as JSONSchemaProps;
    return undefined;
  };
  // the schema of a node's value (undefined: not known), noting the first undefined field
  const typeOf = (n: CelNode, env: ReadonlyMap<string, { t: JSONSchemaProps; root: boolean } | undefined>): { t: JSONSchemaProps; root: boolean } | undefined => {
    switch (n.k) {
      case 'id':
        return env.get(n.name);
      case 'sel': {
        const tt = typeOf(n.target, env);
        if (!tt || n.optional) return undefined;
        const f = field(tt.t, n.field.includes('__') ? unescapeFieldName(n.field) : n.field, tt.root);
        if (f === null) {
          found ??= { name: n.field, pos: n.pos ?? 0 };
          return undefined;
        }
        return f ? { t: f, root: false } : undefined;
      }
      case 'index': {
        const tt = typeOf(n.target, env);
        typeOf(n.index, env);
        if (!tt || n.optional) return undefined;
        const items = tt.t.items && !Array.isArray(tt.t.items) ? tt.t.items : undefined;
        if (tt.t.type === 'array' && items) return { t: items, root: false };
        if (isObject(tt.t.additionalProperties)) return { t: tt.t.additionalProperties as JSONSchemaProps, root: false };
        return undefined;
      }
      case 'macro': {
        const tt = typeOf(n.target, env);
        let v: { t: JSONSchemaProps; root: boolean } | undefined;
        if (tt?.t.type === 'array' && tt.t.items && !Array.isArray(tt.t.items)) v = { t: tt.t.items, root: tt.t.items['x-kubernetes-embedded-resource'] === true };
        else if (tt && isObject(tt.t.additionalProperties)) v = { t: { type: 'string' }, root: false };
        const inner = new Map(env);
        if (n.v2 === undefined) inner.set(n.v, v);
        else {
          // (index or key, then the item or value)
          const value = tt?.t.type === 'array' ? v : tt && isObject(tt.t.additionalProperties) ? { t: tt.t.additionalProperties as JSONSchemaProps, root: false } : undefined;
          inner.set(n.v, undefined);
          inner.set(n.v2, value);
        }
        for (const a of n.args) typeOf(a, inner);
        return undefined;
      }
      case 'call':
        if (n.target) typeOf(n.target, env);
        for (const a of n.args) typeOf(a, env);
        return undefined;
      case 'list':
        for (const i of n.items) typeOf(i, env);
        return undefined;
      case 'map':
        for (const [k, v] of n.entries) {
          typeOf(k, env);
          typeOf(v, env);
        }
        return undefined;
      case 'unary':
        typeOf(n.arg, env);
        return undefined;
      case 'bin':
        typeOf(n.l, env);
        typeOf(n.r, env);
        return undefined;
      case 'cond':
        typeOf(n.c, env);
        typeOf(n.t, env);
        typeOf(n.f, env);
        return undefined;
      default:
        return undefined;
    }
  };
  const me = { t: self.schema, root: self.resourceRoot };
  typeOf(root, new Map([['self', me], ['oldSelf', self.optionalOld ? undefined : me]]));
  return found;
}

/**
 * A rule's fieldPath against the schema of its node (cel.ValidFieldPath): `.name` and `['name']`
 * steps through properties, or map keys where the node has additionalProperties. The path it
 * names (`a.b`, `a[key]`), or the reason it is not valid.
 */
export function ruleFieldPath(jsonPath: string, schema: JSONSchemaProps): { path: string } | { error: string } {
  let s: JSONSchemaProps | undefined = schema;
  let out = '';
  let i = 0;
  const step = (name: string): string | undefined => {
    if (!s) return 'does not refer to a valid field';
    if (s.properties !== undefined) {
      const next: JSONSchemaProps | undefined = s.properties[name];
      if (!next) return 'does not refer to a valid field';
      out = out ? `${out}.${name}` : name;
      s = next;
    } else if (isObject(s.additionalProperties)) {
      out = `${out}[${name}]`;
      s = s.additionalProperties as JSONSchemaProps;
    } else return 'does not refer to a valid field';
    return undefined;
  };
  while (i < jsonPath.length) {
    const c = jsonPath[i];
    if (c === '.') {
      let j = i + 1;
      while (j < jsonPath.length && jsonPath[j] !== '.' && jsonPath[j] !== '[' && jsonPath[j] !== ']') j++;
      if (j === i + 1) return { error: 'unexpected end of JSON path' };
      const e = step(jsonPath.slice(i + 1, j));
      if (e) return { error: e };
      i = j;
    } else if (c === '[') {
      if (jsonPath[i + 1] !== "'") return { error: `expected single quoted string but got ${jsonPath.slice(i + 1).split(/[.\]]/)[0]}` };
      let j = i + 2;
      let name = '';
      for (; j < jsonPath.length && jsonPath[j] !== "'"; j++) {
        if (jsonPath[j] === '\\' && j + 1 < jsonPath.length) {
          const d = jsonPath[++j]!;
          const esc: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', "'": "'", '\\': '\\' };
          if (esc[d] === undefined) return { error: `invalid string literal: invalid escape char \\${d}` };
          name += esc[d];
        } else name += jsonPath[j];
      }
      if (j >= jsonPath.length) return { error: 'unexpected end of JSON path' };
      if (jsonPath[j + 1] !== ']') return { error: `expected ] but got ${jsonPath[j + 1] ?? ''}` };
      const e = step(name);
      if (e) return { error: e };
      i = j + 2;
    } else {
      return { error: `expected [ or . but got: ${jsonPath.slice(i).split(/[.[\]]/)[0]}` };
    }
  }
  return { path: out };
}

/**
 * The errors of a schema node's x-kubernetes-validations when a CRD is written (`path` the node's,
 * e.g. `spec.versions[0].schema.openAPIV3Schema.properties[spec]`).
 */
export function ruleDefinitionErrors(s: JSONSchemaProps, path: string, errs: FieldError[], resourceRoot = false, uncorrelatable?: string): void {
  const raw = (s as { 'x-kubernetes-validations'?: unknown })['x-kubernetes-validations'];
  if (raw === undefined) return;
  const rules = Array.isArray(raw) ? raw : [];
  rules.forEach((x: unknown, i: number) => {
    const r = (isObject(x) ? x : {}) as ValidationRule;
    const at = `${path}.x-kubernetes-validations[${i}]`;
    const rule = String(r.rule ?? '');
    const message = r.message === undefined ? '' : String(r.message);
    const trimmedRule = trimSpace(rule);
    const trimmedMsg = trimSpace(message);
    const schemaErrs: FieldError[] = [];
    if (trimmedRule === '') schemaErrs.push(required(`${at}.rule`, 'rule is not specified'));
    else if (message.length > 0 && trimmedMsg === '') schemaErrs.push(invalid(`${at}.message`, message, 'message must be non-empty if specified'));
    else if (hasNewlines(trimmedMsg)) schemaErrs.push(invalid(`${at}.message`, message, 'message must not contain line breaks'));
    else if (hasNewlines(trimmedRule) && trimmedMsg === '') schemaErrs.push(required(`${at}.message`, 'message must be specified if rule contains line breaks'));
    const msgExpr = r.messageExpression === undefined ? '' : String(r.messageExpression);
    if (msgExpr.length > 0 && trimSpace(msgExpr) === '') schemaErrs.push(required(`${at}.messageExpression`, 'messageExpression must be non-empty if specified'));
    if (r.reason !== undefined && !REASONS.includes(String(r.reason))) schemaErrs.push(notSupported(`${at}.reason`, String(r.reason), REASONS));
    const fp = r.fieldPath === undefined ? '' : String(r.fieldPath);
    if (fp.length > 0 && trimSpace(fp) === '') schemaErrs.push(invalid(`${at}.fieldPath`, fp, 'fieldPath must be non-empty if specified'));
    if (hasNewlines(fp)) schemaErrs.push(invalid(`${at}.fieldPath`, fp, 'fieldPath must not contain line breaks'));
    if (fp.length > 0 && 'error' in ruleFieldPath(fp, s)) schemaErrs.push(invalid(`${at}.fieldPath`, fp, 'fieldPath must be a valid path'));
    errs.push(...schemaErrs);
    // (the expressions are compiled only when the schema's own checks pass)
    if (schemaErrs.length > 0) return;
    const self: SelfType = { schema: s, resourceRoot: resourceRoot || s['x-kubernetes-embedded-resource'] === true, optionalOld: r.optionalOldSelf === true };
    const ruleErr = compileError(trimmedRule, RULE_VARS, self);
    if (ruleErr) errs.push(invalid(`${at}.rule`, ruleRepr(r), ruleErr));
    if (msgExpr.length > 0) {
      const e = compileError(trimSpace(msgExpr), RULE_VARS, self);
      if (e) errs.push(invalid(`${at}.messageExpression`, ruleRepr(r), e));
    }
    if (ruleErr) return;
    if (usesOldSelf(trimmedRule)) {
      // (a transition rule below a set or an atomic list: its node has no old value to compare with)
      if (uncorrelatable !== undefined) errs.push(invalid(`${at}.rule`, rule, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatable}`));
    } else if (r.optionalOldSelf !== undefined) {
      errs.push(invalid(`${at}.optionalOldSelf`, r.optionalOldSelf, 'may not be set if oldSelf is not used in rule'));
    }
  });
}

// ---- evaluation ----

/** what a node's errors are ratcheted by: the old value at the node, or the nearest correlated ancestor's equality */
interface Correlation {
  /** the old object has a value at this node (undefined: no old value, or not correlatable) */
  old: unknown;
  /** a correlated ancestor's new value equals its old one (for nodes with no correlation of their own); asked only when a rule fails */
  ancestorUnchanged: () => boolean;
}

const NEVER = (): boolean => false;

/** the value `self` holds at the root of a resource: its type, and of its metadata the name and generateName */
function resourceSelf(v: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...v };
  const m = v.metadata;
  if (isObject(m)) {
    const meta: Record<string, unknown> = {};
    if (m.name !== undefined) meta.name = m.name;
    if (m.generateName !== undefined) meta.generateName = m.generateName;
    out.metadata = meta;
  }
  return out;
}

const timeFormatsMemo = new WeakMap<JSONSchemaProps, boolean>();

/** whether a schema or anything below it holds `date-time`, `date` or `duration` strings (CEL types them) */
function hasTimeFormats(s: JSONSchemaProps | undefined): boolean {
  if (!s || typeof s !== 'object') return false;
  let r = timeFormatsMemo.get(s);
  if (r === undefined) {
    r =
      s.format === 'date-time' ||
      s.format === 'date' ||
      s.format === 'duration' ||
      Object.values(s.properties ?? {}).some(hasTimeFormats) ||
      (!!s.items && !Array.isArray(s.items) && hasTimeFormats(s.items)) ||
      (isObject(s.additionalProperties) && hasTimeFormats(s.additionalProperties as JSONSchemaProps));
    timeFormatsMemo.set(s, r);
  }
  return r;
}

/**
 * A value as CEL sees it under its schema: `date-time` and `date` strings are timestamps,
 * `duration` strings durations (a string that does not parse stays a string); the rest as it is.
 */
function typed(v: unknown, s: JSONSchemaProps | undefined): unknown {
  if (v === null || v === undefined || !s || !hasTimeFormats(s)) return v;
  if (typeof v === 'string') {
    if (s.format === 'date-time') return celTimestamp(v) ?? v;
    if (s.format === 'date') return /^\d{4}-\d{2}-\d{2}$/.test(v) ? (celTimestamp(`${v}T00:00:00Z`) ?? v) : v;
    if (s.format === 'duration') return celDuration(v) ?? v;
    return v;
  }
  if (Array.isArray(v)) {
    const items = s.items && !Array.isArray(s.items) ? s.items : undefined;
    return v.map((x) => typed(x, items));
  }
  if (isObject(v)) {
    const ap = isObject(s.additionalProperties) ? (s.additionalProperties as JSONSchemaProps) : undefined;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = typed(x, s.properties?.[k] ?? ap);
    return out;
  }
  return v;
}

function joinPath(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

class RuleRun {
  readonly errors: FieldError[] = [];
  /** what the rules may still cost; below 0, no further rule runs */
  private remaining: number;

  /** `warnings`: where the errors ratcheting lets pass go (as Kubernetes sends them, the error's text) */
  constructor(
    private readonly warnings?: string[],
    budget = RUNTIME_COST_BUDGET,
  ) {
    this.remaining = budget;
  }

  /** an expression within the per-call limit and the budget; undefined when the budget ran out (the error is added) */
  private run(expr: string, vars: Record<string, unknown>, at: string, type: string, what: string): { value: unknown } | undefined {
    let r: { value: unknown; cost: number };
    try {
      r = evaluateCELWithCost(expr, vars, CEL_PER_CALL_LIMIT);
    } catch (e) {
      if (!(e instanceof CelCostLimitError)) throw e;
      this.remaining = -1;
      const text = `no further validation rules will be run due to call cost exceeds limit for ${what}`;
      this.errors.push(invalid(at, type, what.startsWith('messageExpression') ? text : `'${e.message}': ${text}`));
      return undefined;
    }
    if (r.cost > this.remaining) {
      this.remaining = -1;
      this.errors.push(invalid(at, type, what.startsWith('messageExpression') ? `messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run` : OUT_OF_BUDGET));
      return undefined;
    }
    this.remaining -= r.cost;
    return { value: r.value };
  }

  /** validate the value `v` at `path` against schema `s` */
  node(v: unknown, s: JSONSchemaProps, path: string, resourceRoot: boolean, corr: Correlation): void {
    // (a subtree without rules is not walked)
    if (v === null || v === undefined || !hasRules(s) || this.remaining < 0) return;
    // whether the update left this value as it was: compared once, when a rule here or below fails
    let memo: boolean | undefined;
    const unchangedHere = (): boolean => (memo ??= corr.old !== undefined ? sameValue(v, corr.old) : corr.ancestorUnchanged());
    this.rules(v, s, rulesOf(s), path, resourceRoot, corr.old, unchangedHere);
    // allOf's rules run at the same node
    for (const a of (s as { allOf?: JSONSchemaProps[] }).allOf ?? []) {
      if (isObject(a)) this.rules(v, s, rulesOf(a), path, resourceRoot, corr.old, unchangedHere);
    }
    if (Array.isArray(v)) {
      const items = s.items && !Array.isArray(s.items) ? s.items : undefined;
      if (!items) return;
      const keys = s['x-kubernetes-list-type'] === 'map' ? (s['x-kubernetes-list-map-keys'] ?? []) : undefined;
      const oldItems = Array.isArray(corr.old) ? corr.old : undefined;
      const oldByKey = new Map<string, unknown>();
      if (keys && oldItems) for (const o of oldItems) if (isObject(o)) oldByKey.set(JSON.stringify(keys.map((k) => o[k] ?? null)), o);
      v.forEach((x, i) => {
        const old = keys && isObject(x) ? oldByKey.get(JSON.stringify(keys.map((k) => x[k] ?? null))) : undefined;
        this.node(x, items, `${path}[${i}]`, items['x-kubernetes-embedded-resource'] === true, { old, ancestorUnchanged: unchangedHere });
      });
      return;
    }
    if (isObject(v)) {
      const oldObj = isObject(corr.old) ? corr.old : undefined;
      const ap = isObject(s.additionalProperties) ? (s.additionalProperties as JSONSchemaProps) : undefined;
      for (const [k, x] of Object.entries(v)) {
        const ps = s.properties?.[k];
        const childCorr = { old: oldObj?.[k], ancestorUnchanged: unchangedHere };
        if (ps) this.node(x, ps, joinPath(path, k), ps['x-kubernetes-embedded-resource'] === true, childCorr);
        else if (ap && s.properties === undefined) this.node(x, ap, `${path}[${k}]`, ap['x-kubernetes-embedded-resource'] === true, childCorr);
      }
    }
  }

  private rules(v: unknown, s: JSONSchemaProps, rules: ValidationRule[], path: string, resourceRoot: boolean, oldV: unknown, unchanged: () => boolean): void {
    if (rules.length === 0 || this.remaining < 0) return;
    const type = String(s.type ?? '');
    const at = path || '<nil>';
    if (this.remaining === 0) {
      this.remaining = -1;
      this.errors.push(invalid(at, type, OUT_OF_BUDGET));
      return;
    }
    const self = typed(resourceRoot && isObject(v) ? resourceSelf(v) : v, s);
    const old = typed(oldV !== undefined && resourceRoot && isObject(oldV) ? resourceSelf(oldV) : oldV, s);
    for (const r of rules) {
      const rule = trimSpace(String(r.rule ?? ''));
      if (rule === '') continue;
      const transition = usesOldSelf(rule);
      const optional = r.optionalOldSelf === true;
      if (transition && old === undefined && !optional) continue;
      const vars: Record<string, unknown> = { self };
      if (transition) vars.oldSelf = optional ? celOptional(old !== undefined, old) : old;
      const ruleText = trimSpace(String(r.message ?? '')) || rule;
      let result: unknown;
      try {
        const res = this.run(rule, vars, at, type, `rule: ${ruleText}`);
        if (!res) return;
        result = res.value;
      } catch (e) {
        // a function Keelson's interpreter lacks: the rule is not evaluated (Kubernetes, which has
        // it, accepted the rule when the CRD was written; refusing the object for our gap would be wrong)
        if (e instanceof CelUnsupportedError) continue;
        const msg = e instanceof Error ? e.message : String(e);
        this.errors.push(
          invalid(
            at,
            type,
            msg.startsWith('no such overload')
              ? `'${msg}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleText}`
              : `${msg} evaluating rule: ${ruleText}`,
          ),
        );
        continue;
      }
      if (result === true) continue;
      let errPath = at;
      if (r.fieldPath) {
        const fp = ruleFieldPath(String(r.fieldPath), s);
        if ('path' in fp && fp.path) errPath = path ? (fp.path.startsWith('[') ? `${path}${fp.path}` : `${path}.${fp.path}`) : fp.path;
      }
      const custom = this.message(r, vars, at, type);
      if (this.remaining < 0) return;
      const detail = custom ?? (r.message && trimSpace(String(r.message)) ? trimSpace(String(r.message)) : `failed rule: ${ruleText}`);
      const err = fieldErrorFor(r.reason, errPath, type, detail);
      // (ratcheting: a rule that does not look at oldSelf, on a value the update did not change,
      // gives a warning instead)
      if (!transition) {
        if (unchanged()) {
          this.warnings?.push(String(err));
          continue;
        }
      }
      this.errors.push(err);
    }
  }

  /** a rule's messageExpression, when it evaluates to a usable message (else the rule's message is used) */
  private message(r: ValidationRule, vars: Record<string, unknown>, at: string, type: string): string | undefined {
    const expr = trimSpace(String(r.messageExpression ?? ''));
    if (expr === '') return undefined;
    let m: unknown;
    try {
      const res = this.run(expr, vars, at, type, `messageExpression: ${JSON.stringify(expr)}`);
      if (!res) return undefined;
      m = res.value;
    } catch {
      return undefined;
    }
    if (typeof m !== 'string') return undefined;
    const t = trimSpace(m);
    if (t === '' || hasNewlines(t) || Buffer.byteLength(t) > MAX_MESSAGE_BYTES) return undefined;
    return t;
  }
}

/** a failed rule's field error, by its reason */
function fieldErrorFor(reason: string | undefined, path: string, type: string, detail: string): FieldError {
  switch (reason) {
    case 'FieldValueForbidden':
      return forbidden(path, detail);
    case 'FieldValueRequired':
      return required(path, detail);
    case 'FieldValueDuplicate':
      return duplicate(path, type);
    default:
      return invalid(path, type, detail);
  }
}

/**
 * The errors of a custom resource's validation rules: `obj` as written, `old` the stored object of
 * an update (undefined for a create); `warnings` receives the errors ratcheting lets pass.
 */
export function validationRuleErrors(obj: unknown, old: unknown, schema: JSONSchemaProps | undefined, warnings?: string[], budget = RUNTIME_COST_BUDGET): FieldError[] {
  if (!schema || !hasRules(schema)) return [];
  const run = new RuleRun(warnings, budget);
  run.node(obj, schema, '', true, { old: old ?? undefined, ancestorUnchanged: NEVER });
  return run.errors;
}

/** the error Kubernetes adds instead of running the rules, when the object already failed its schema's types or enums */
export function rulesNotCheckedError(): FieldError {
  return invalid('<nil>', null, 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation');
}
