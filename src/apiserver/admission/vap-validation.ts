// Validation of ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
// (admissionregistration.k8s.io/v1) as kube-apiserver 1.33's strategies run it, with its field
// paths, error types, wording and order: the policy's failure policy, paramKind, matchConstraints
// (at least one resource rule), matchConditions, variables, validations and audit annotations;
// its status (type-checking warnings, conditions); the binding's policy name, paramRef,
// matchResources and validation actions. Objects arrive in their v1 form, defaulted; ObjectMeta is
// checked by the store. CEL expressions are parsed with Keelson's interpreter: a syntax error is
// reported as Kubernetes reports a compile error ("compilation failed: ..."), with our parser's
// message, and an identifier the policy does not declare (params without a paramKind, a misspelt
// variable) in cel-go's checker's words; the rest of CEL type checking (functions, result types) is not done here.
//
// Not here (it needs the request's user, the authorizer and the resource resolver): when these
// checks pass, Kubernetes' strategies also require that the user may `get` the param resources
// (a policy with a paramKind, on create or when the paramKind changes; a binding with a paramRef,
// on create or when paramRef or policyName changes), answering Forbidden on spec.paramKind or
// spec.paramRef.
//
// (It lives beside the admission plugin, not in schema/validation/, because it parses CEL with the
// plugin's interpreter; the strategies add it to the kinds' validation.)
import { celSyntaxError, celUndeclaredReference } from './cel.js';
import { JSONPath } from '../../kubectl/jsonpath.js';
import { FAILURE_POLICIES, MATCH_POLICIES, validateRule } from '../../schema/validation/admissionregistration.js';
import { child, duplicate, forbidden, GoRepr, goQuote, goStrings, goStruct, idx, invalid, notSupported, required, tooMany, type Errs } from '../../schema/validation/errs.js';
import { validateConditions } from '../../schema/validation/other.js';
import { arr, isDNS1035Label, isDNS1123Subdomain, isSet, isValidPathSegmentName, obj, str, validateLabelSelector, validateQualifiedName } from '../../schema/validation/util.js';

/** spec.auditAnnotations may hold at most this many items */
const MAX_AUDIT_ANNOTATIONS = 20;
/** an audit annotation's valueExpression (trimmed) may be at most this many bytes */
const MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH = 5 * 1024;
/** metav1.StatusReasonForbidden, Invalid and RequestEntityTooLarge, sorted as sets.List() sorts them */
const VALIDATION_REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge'];
const VALIDATION_ACTIONS = ['Audit', 'Deny', 'Warn'];
/** in Kubernetes' own order (not sorted) */
const PARAMETER_NOT_FOUND_ACTIONS = ['Deny', 'Allow'];
const MAX_MATCH_CONDITIONS = 64;

// ---- helpers ----

/** Go's strings.TrimSpace (unicode.IsSpace), which differs from String.prototype.trim */
const GO_SPACE = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;
export const trimSpace = (s: string): string => s.replace(GO_SPACE, '');

/** "valid newline chars in CEL grammar" */
export const hasNewlines = (s: string): boolean => /[\n\r]/.test(s);

const byteLength = (s: string): number => Buffer.byteLength(s, 'utf8');

const CEL_IDENT = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
const CEL_RESERVED = new Set([
  'true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while',
]);
const isCELIdentifier = (name: string): boolean => CEL_IDENT.test(name) && !CEL_RESERVED.has(name);

/**
 * The compile step of an expression (plugin/cel's CompileCELExpression): Kubernetes answers
 * Invalid with the expression and "compilation failed: " followed by cel-go's issues; here the
 * issue text is our parser's syntax error. `source` is the text compiled, `shown` the value
 * printed (Kubernetes compiles some fields trimmed and prints them untrimmed).
 */
function compileErrors(path: string, source: string, shown: string, declared?: ReadonlySet<string>): Errs {
  const msg = celSyntaxError(source);
  if (msg !== undefined) return [invalid(path, shown, `compilation failed: ${msg}`)];
  const undeclared = declared ? celUndeclaredReference(source, declared) : undefined;
  return undeclared ? [invalid(path, shown, `compilation failed: ${celIssue(source, undeclared.pos, `undeclared reference to '${undeclared.name}' (in container '')`)}`)] : [];
}

/** cel-go's display of an issue: `ERROR: <input>:line:column: message`, the line, a caret under the column */
export function celIssue(source: string, pos: number, message: string): string {
  const before = source.slice(0, pos);
  const line = before.split('\n').length;
  const start = before.lastIndexOf('\n') + 1;
  const end = source.indexOf('\n', pos);
  const text = source.slice(start, end < 0 ? source.length : end);
  const col = [...source.slice(start, pos)].length;
  return `ERROR: <input>:${line}:${col + 1}: ${message}\n | ${text}\n | ${'.'.repeat(col)}^`;
}

/**
 * The variables a policy's expressions may name (plugin/cel's declarations for a
 * ValidatingAdmissionPolicy: params only with a paramKind)
 */
function policyDeclarations(hasParams: boolean): ReadonlySet<string> {
  const d = new Set(['object', 'oldObject', 'request', 'namespaceObject', 'authorizer', 'variables']);
  if (hasParams) d.add('params');
  return d;
}

// ---- shared parts ----

/** validateMatchResources (the policy's matchConstraints, the binding's matchResources) */
function validateMatchResources(mc: any, path: string): Errs {
  if (!isSet(mc)) return [];
  const errs: Errs = [];
  if (!isSet(mc.matchPolicy)) errs.push(required(child(path, 'matchPolicy'), ''));
  else if (!MATCH_POLICIES.includes(mc.matchPolicy)) errs.push(notSupported(child(path, 'matchPolicy'), str(mc.matchPolicy), MATCH_POLICIES));
  // selectors are validated strictly (label values included): the type came after kubernetes#99139
  if (!isSet(mc.namespaceSelector)) errs.push(required(child(path, 'namespaceSelector'), ''));
  else errs.push(...validateLabelSelector(mc.namespaceSelector, child(path, 'namespaceSelector')));
  if (!isSet(mc.objectSelector)) errs.push(required(child(path, 'objectSelector'), ''));
  else errs.push(...validateLabelSelector(mc.objectSelector, child(path, 'objectSelector')));
  arr(mc.resourceRules).forEach((r, i) => errs.push(...validateNamedRuleWithOperations(obj(r), idx(child(path, 'resourceRules'), i))));
  arr(mc.excludeResourceRules).forEach((r, i) => errs.push(...validateNamedRuleWithOperations(obj(r), idx(child(path, 'excludeResourceRules'), i))));
  return errs;
}

function validateNamedRuleWithOperations(rule: Record<string, any>, path: string): Errs {
  const errs: Errs = [];
  const seen = new Set<string>();
  arr(rule.resourceNames).forEach((n, i) => {
    const name = str(n);
    const p = idx(child(path, 'resourceNames'), i);
    for (const m of isValidPathSegmentName(name)) errs.push(invalid(p, name, m));
    if (seen.has(name)) errs.push(duplicate(p, name));
    else seen.add(name);
  });
  errs.push(...validateRule(rule, path));
  return errs;
}

/** validateMatchConditions: at most 64, each named (a qualified name, unique) with an expression */
export function validateMatchConditions(conditions: unknown, path: string, declared?: ReadonlySet<string>): Errs {
  const list = arr(conditions);
  const errs: Errs = [];
  if (list.length > MAX_MATCH_CONDITIONS) errs.push(tooMany(path, list.length, MAX_MATCH_CONDITIONS));
  const names = new Set<string>();
  list.forEach((c0, i) => {
    const c = obj(c0);
    const p = idx(path, i);
    const expression = trimSpace(str(c.expression));
    // the trimmed expression is compiled, and printed
    if (expression.length === 0) errs.push(required(child(p, 'expression'), ''));
    else errs.push(...compileErrors(child(p, 'expression'), expression, expression, declared));
    const name = str(c.name);
    if (name.length === 0) errs.push(required(child(p, 'name'), ''));
    else errs.push(...validateQualifiedName(name, child(p, 'name')));
    if (name.length > 0) {
      if (names.has(name)) errs.push(duplicate(child(p, 'name'), name));
      else names.add(name);
    }
  });
  return errs;
}

// ---- ValidatingAdmissionPolicy ----

/** "group/version" as the policy validation splits it (more than one '/' is an error) */
function parseGroupVersion(gv: string): { group: string; version: string } | string {
  if (gv.length === 0 || gv === '/') return { group: '', version: '' };
  const parts = gv.split('/');
  if (parts.length === 1) return { group: '', version: gv };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  return `unexpected GroupVersion string: ${gv}`;
}

function validateParamKind(pk: Record<string, any>, path: string): Errs {
  const errs: Errs = [];
  const apiVersion = str(pk.apiVersion);
  const avPath = child(path, 'apiVersion');
  if (apiVersion.length === 0) errs.push(required(avPath, ''));
  else {
    const gv = parseGroupVersion(apiVersion);
    if (typeof gv === 'string') errs.push(invalid(avPath, apiVersion, gv));
    else {
      // as the APIService's group and version fields are validated
      if (gv.group.length > 0) {
        const bad = isDNS1123Subdomain(gv.group);
        if (bad.length) errs.push(invalid(avPath, gv.group, bad.join(',')));
      }
      if (gv.version.length === 0) errs.push(invalid(avPath, apiVersion, 'version must be specified'));
      else {
        const bad = isDNS1035Label(gv.version);
        if (bad.length) errs.push(invalid(avPath, gv.version, bad.join(',')));
      }
    }
  }
  const kind = str(pk.kind);
  if (kind.length === 0) errs.push(required(child(path, 'kind'), ''));
  else {
    const bad = isDNS1035Label(kind.toLowerCase());
    if (bad.length) errs.push(invalid(child(path, 'kind'), kind, `may have mixed case, but should otherwise match: ${bad.join(',')}`));
  }
  return errs;
}

function validateVariable(v: Record<string, any>, path: string, declared: ReadonlySet<string>): Errs {
  const errs: Errs = [];
  const name = str(v.name);
  if (trimSpace(name).length === 0) errs.push(required(child(path, 'name'), 'name is not specified'));
  else if (!isCELIdentifier(name)) errs.push(invalid(child(path, 'name'), name, 'name is not a valid CEL identifier'));
  const expression = str(v.expression);
  if (trimSpace(expression).length === 0) errs.push(required(child(path, 'expression'), 'expression is not specified'));
  else errs.push(...compileErrors(child(path, 'expression'), expression, expression, declared));
  return errs;
}

function validateValidation(v: Record<string, any>, path: string, declared: ReadonlySet<string>): Errs {
  const errs: Errs = [];
  const expression = str(v.expression);
  if (trimSpace(expression).length === 0) errs.push(required(child(path, 'expression'), 'expression is not specified'));
  else errs.push(...compileErrors(child(path, 'expression'), expression, expression, declared));
  const messageExpression = str(v.messageExpression);
  const trimmedMessageExpression = trimSpace(messageExpression);
  if (messageExpression.length > 0 && trimmedMessageExpression.length === 0)
    errs.push(invalid(child(path, 'messageExpression'), messageExpression, 'must be non-empty if specified'));
  else if (trimmedMessageExpression.length > 0) errs.push(...compileErrors(child(path, 'messageExpression'), messageExpression, messageExpression, declared));
  const message = str(v.message);
  const trimmedMessage = trimSpace(message);
  if (message.length > 0 && trimmedMessage.length === 0) errs.push(invalid(child(path, 'message'), message, 'message must be non-empty if specified'));
  else if (hasNewlines(trimmedMessage)) errs.push(invalid(child(path, 'message'), message, 'message must not contain line breaks'));
  if (isSet(v.reason) && !VALIDATION_REASONS.includes(v.reason)) errs.push(notSupported(child(path, 'reason'), str(v.reason), VALIDATION_REASONS));
  return errs;
}

function validateAuditAnnotation(policyName: string, a: Record<string, any>, path: string, declared: ReadonlySet<string>): Errs {
  const errs: Errs = [];
  const key = str(a.key);
  // the key becomes "<policy name>/<key>" in the audit event
  if (policyName.length > 0) errs.push(...validateQualifiedName(`${policyName}/${key}`, child(path, 'key')));
  else errs.push(invalid(child(path, 'key'), key, 'requires metadata.name be non-empty'));
  const valueExpression = str(a.valueExpression);
  const trimmed = trimSpace(valueExpression);
  const vePath = child(path, 'valueExpression');
  if (trimmed.length === 0) errs.push(required(vePath, 'valueExpression is not specified'));
  else if (byteLength(trimmed) > MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH)
    errs.push(required(vePath, `must not exceed ${MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH} bytes in length`));
  // compiled trimmed, printed as given
  else errs.push(...compileErrors(vePath, trimmed, valueExpression, declared));
  return errs;
}

/** the audit annotations as Go's %#v prints the internal slice */
function goAuditAnnotations(list: unknown[]): GoRepr {
  const items = list.map((a0) => {
    const a = obj(a0);
    return goStruct('admissionregistration.AuditAnnotation', [
      ['Key', goQuote(str(a.key))],
      ['ValueExpression', goQuote(str(a.valueExpression))],
    ]).repr;
  });
  return new GoRepr(`[]admissionregistration.AuditAnnotation{${items.join(', ')}}`);
}

interface PolicyOptions {
  /** an update that keeps paramKind and matchConditions as they were skips the matchConditions */
  ignoreMatchConditions: boolean;
}

function validatePolicySpec(policy: any, o: PolicyOptions): Errs {
  const spec = obj(policy?.spec);
  const path = 'spec';
  const errs: Errs = [];
  if (!isSet(spec.failurePolicy)) errs.push(required(child(path, 'failurePolicy'), ''));
  else if (!FAILURE_POLICIES.includes(spec.failurePolicy)) errs.push(notSupported(child(path, 'failurePolicy'), str(spec.failurePolicy), FAILURE_POLICIES));
  if (isSet(spec.paramKind)) errs.push(...validateParamKind(obj(spec.paramKind), child(path, 'paramKind')));
  if (!isSet(spec.matchConstraints)) errs.push(required(child(path, 'matchConstraints'), ''));
  else {
    errs.push(...validateMatchResources(obj(spec.matchConstraints), child(path, 'matchConstraints')));
    // at least one resource rule: it gives the expressions their type information
    if (arr(spec.matchConstraints.resourceRules).length === 0) errs.push(required(child(path, 'matchConstraints', 'resourceRules'), ''));
  }
  const declared = policyDeclarations(isSet(spec.paramKind));
  if (!o.ignoreMatchConditions) errs.push(...validateMatchConditions(spec.matchConditions, child(path, 'matchConditions'), declared));
  arr(spec.variables).forEach((v, i) => errs.push(...validateVariable(obj(v), idx(child(path, 'variables'), i), declared)));
  const validations = arr(spec.validations);
  const auditAnnotations = arr(spec.auditAnnotations);
  if (validations.length === 0 && auditAnnotations.length === 0) {
    errs.push(required(child(path, 'validations'), 'validations or auditAnnotations must contain at least one item'));
    errs.push(required(child(path, 'auditAnnotations'), 'validations or auditAnnotations must contain at least one item'));
  } else {
    validations.forEach((v, i) => errs.push(...validateValidation(obj(v), idx(child(path, 'validations'), i), declared)));
    const aaPath = child(path, 'auditAnnotations');
    if (auditAnnotations.length > MAX_AUDIT_ANNOTATIONS)
      errs.push(invalid(aaPath, goAuditAnnotations(auditAnnotations), `must not have more than ${MAX_AUDIT_ANNOTATIONS} auditAnnotations`));
    const keys = new Set<string>();
    const name = str(policy?.metadata?.name);
    auditAnnotations.forEach((a0, i) => {
      const a = obj(a0);
      errs.push(...validateAuditAnnotation(name, a, idx(aaPath, i), declared));
      const key = str(a.key);
      if (keys.has(key)) errs.push(duplicate(child(idx(aaPath, i), 'key'), key));
      keys.add(key);
    });
  }
  return errs;
}

/** ValidateValidatingAdmissionPolicy: the whole check of a create (after the status is cleared) */
export function validateValidatingAdmissionPolicy(policy: any): Errs {
  return validatePolicySpec(policy, { ignoreMatchConditions: false });
}

function sameParamKind(a: unknown, b: unknown): boolean {
  if (!isSet(a) || !isSet(b)) return !isSet(a) && !isSet(b);
  const x = obj(a);
  const y = obj(b);
  return str(x.apiVersion) === str(y.apiVersion) && str(x.kind) === str(y.kind);
}

/** reflect.DeepEqual of the lists (an absent and an empty list differ there, but neither has
 *  anything to validate, so the outcome is the same) */
function sameMatchConditions(a: unknown, b: unknown): boolean {
  const x = arr(a);
  const y = arr(b);
  return x.length === y.length && x.every((c, i) => str(obj(c).name) === str(obj(y[i]).name) && str(obj(c).expression) === str(obj(y[i]).expression));
}

/**
 * ValidateValidatingAdmissionPolicyUpdate: the create checks again, except that matchConditions
 * are not checked when paramKind and matchConditions are unchanged. (Kubernetes also compiles the
 * expressions the old object already had with its "stored expressions" CEL environment, which
 * allows newer libraries; that makes no difference to a syntax check.)
 */
export function validateValidatingAdmissionPolicyUpdate(policy: any, old: any): Errs {
  const ignore = sameParamKind(policy?.spec?.paramKind, old?.spec?.paramKind) && sameMatchConditions(policy?.spec?.matchConditions, old?.spec?.matchConditions);
  return validatePolicySpec(policy, { ignoreMatchConditions: ignore });
}

/** a status.typeChecking.expressionWarnings[].fieldRef: a JSONPath client-go's parser reads */
function validateFieldRef(fieldRef: unknown, path: string): Errs {
  const ref = trimSpace(str(fieldRef));
  if (ref === '') return [required(path, '')];
  try {
    JSONPath.parse('spec', `{${ref}}`);
  } catch (e) {
    return [invalid(path, ref, `invalid JSONPath: ${(e as Error).message}`)];
  }
  return [];
}

/** ValidateValidatingAdmissionPolicyStatusUpdate: the status alone (the spec is kept as it was) */
export function validateValidatingAdmissionPolicyStatusUpdate(policy: any, _old: any): Errs {
  const status = obj(policy?.status);
  const errs: Errs = [];
  if (isSet(status.typeChecking)) {
    const wPath = child('status', 'typeChecking', 'expressionWarnings');
    arr(obj(status.typeChecking).expressionWarnings).forEach((w0, i) => {
      const w = obj(w0);
      const p = idx(wPath, i);
      if (str(w.warning) === '') errs.push(required(child(p, 'warning'), ''));
      errs.push(...validateFieldRef(w.fieldRef, child(p, 'fieldRef')));
    });
  }
  errs.push(...validateConditions(arr(status.conditions), child('status', 'conditions')));
  return errs;
}

// ---- ValidatingAdmissionPolicyBinding ----

function validateParamRef(pr: any, path: string): Errs {
  if (!isSet(pr)) return [];
  const errs: Errs = [];
  const name = str(pr.name);
  const hasSelector = isSet(pr.selector);
  const exclusive = 'name and selector are mutually exclusive';
  if (name.length > 0) {
    for (const m of isValidPathSegmentName(name)) errs.push(invalid(child(path, 'name'), name, m));
    if (hasSelector) errs.push(forbidden(child(path, 'name'), exclusive));
  }
  if (hasSelector) {
    errs.push(...validateLabelSelector(pr.selector, child(path, 'selector')));
    if (name.length > 0) errs.push(forbidden(child(path, 'selector'), exclusive));
  }
  if (name.length === 0 && !hasSelector) errs.push(required(path, 'one of name or selector must be specified'));
  const action = pr.parameterNotFoundAction;
  if (!isSet(action) || str(action).length === 0) errs.push(required(child(path, 'parameterNotFoundAction'), ''));
  else if (!PARAMETER_NOT_FOUND_ACTIONS.includes(action)) errs.push(notSupported(child(path, 'parameterNotFoundAction'), str(action), PARAMETER_NOT_FOUND_ACTIONS));
  return errs;
}

function validateValidationActions(actions: unknown, path: string): Errs {
  const list = arr(actions).map(str);
  const errs: Errs = [];
  const seen = new Set<string>();
  list.forEach((a, i) => {
    if (!VALIDATION_ACTIONS.includes(a)) errs.push(notSupported(idx(path, i), a, VALIDATION_ACTIONS));
    if (seen.has(a)) errs.push(duplicate(idx(path, i), a));
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn'))
    errs.push(
      invalid(
        path,
        goStrings(list, '[]admissionregistration.ValidationAction'),
        'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
      ),
    );
  if (seen.size === 0) errs.push(required(path, 'at least one validation action is required'));
  return errs;
}

/** ValidateValidatingAdmissionPolicyBinding: the whole check of a create */
export function validateValidatingAdmissionPolicyBinding(binding: any): Errs {
  const spec = obj(binding?.spec);
  const errs: Errs = [];
  const policyName = str(spec.policyName);
  if (policyName.length === 0) errs.push(required('spec.policyName', ''));
  else for (const m of isDNS1123Subdomain(policyName)) errs.push(invalid('spec.policyName', policyName, m));
  errs.push(...validateParamRef(spec.paramRef, 'spec.paramRef'));
  errs.push(...validateMatchResources(spec.matchResources, 'spec.matchResources'));
  errs.push(...validateValidationActions(spec.validationActions, 'spec.validationActions'));
  return errs;
}

/** ValidateValidatingAdmissionPolicyBindingUpdate: the create checks again, nothing immutable */
export function validateValidatingAdmissionPolicyBindingUpdate(binding: any, _old: any): Errs {
  return validateValidatingAdmissionPolicyBinding(binding);
}
