// ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, kube-apiserver 1.33): every
// ValidatingAdmissionPolicyBinding names a policy; when a request matches the policy's
// matchConstraints and the binding's matchResources (resourceRules with operations and
// resourceNames, excludeResourceRules, namespaceSelector, objectSelector), the policy's CEL is
// evaluated once per parameter object (paramKind + the binding's paramRef: a name, or a label
// selector, in the paramRef's namespace or the request's) with the variables object, oldObject,
// request, params, namespaceObject, authorizer and the policy's own `variables` (evaluated lazily,
// once). matchConditions that are false skip the policy; each validation that is not true is a
// violation (its messageExpression, message, or `failed expression: <expression>`), acted on as
// the binding's validationActions say: Deny refuses the request with the validation's reason
// (Invalid by default, 422), Warn adds a warning for the client, Audit an audit annotation. An
// evaluation error (or a missing parameter object with parameterNotFoundAction Deny) is a
// violation under failurePolicy Fail (the default) and nothing under Ignore. auditAnnotations add
// `<policy>/<key>` annotations.
//
// matchPolicy Equivalent (the default) matches the other versions of the request's resource too;
// the expressions then see the object in the version the policy's rules matched, and `request`
// names that kind and resource (see equivalent.ts).
//
// Not evaluated: typeChecking (no status.typeChecking is written), CEL cost limits.
import { StatusError } from '../../machinery/errors.js';
import { fromLabelSelector, matchLabels } from '../../machinery/selectors.js';
import type { Authorizer } from '../authz.js';
import type { KindDecl } from '../../schema/model.js';
import type { AdmissionAttributes, AdmissionPlugin, ClusterReader } from './types.js';
import { asArray, forbidden, isObject, labelsOf } from './util.js';
import { admissionRequest, isExemptAdmissionConfiguration, matchingVersion, matchNamespaceSelector, matchObjectSelector, ruleMatches, versionedAttributes } from './webhook.js';
import type { EquivalentResolver, EquivalentView } from './equivalent.js';
import { celAuthorizer, celTypeName, evaluateCELValue } from './cel.js';

const GROUP = 'admissionregistration.k8s.io';

export interface VAPOptions {
  authorizer?: Authorizer;
  kinds?: () => readonly KindDecl[];
  /** reads of the custom resources (parameter objects of a CRD's kind) */
  customReader?: () => ClusterReader;
  /** the other versions of a request's resource, for matchPolicy Equivalent (none without it) */
  equivalents?: EquivalentResolver;
}

const ANY_RESOURCE = { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*', '*/*'] };

const REASON_CODES: Record<string, number> = { Unauthorized: 401, Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 };

/** one rule of matchResources with its resourceNames */
function namedRuleMatches(rule: any, a: AdmissionAttributes): boolean {
  if (!ruleMatches(rule, a)) return false;
  const names = asArray<string>(rule.resourceNames);
  return names.length === 0 || names.includes(a.name);
}

/**
 * A policy's matchConstraints or a binding's matchResources against the request: false, or the
 * version its rules matched (undefined: the request's own; see matchingVersion). Exclusions
 * apply to the equivalent versions too.
 */
function matchesResources(reader: ClusterReader, m: any, a: AdmissionAttributes, equivalents: EquivalentResolver | undefined): EquivalentView | undefined | false {
  if (!isObject(m)) return false;
  const ns = matchNamespaceSelector(reader, m, a);
  if (ns instanceof StatusError) throw ns;
  if (!ns) return false;
  const obj = matchObjectSelector(m, a);
  if (obj instanceof StatusError) throw obj;
  if (!obj) return false;
  const excluded = asArray(m.excludeResourceRules);
  if (excluded.length && matchingVersion(a, m.matchPolicy, equivalents, (at) => excluded.some((r) => namedRuleMatches(r, at))) !== false) return false;
  // an empty resourceRules matches nothing in a policy; a binding without rules matches what its policy does
  const rules = asArray(m.resourceRules);
  return matchingVersion(a, m.matchPolicy, equivalents, (at) => rules.some((r) => namedRuleMatches(r, at)));
}

interface Violation {
  message: string;
  reason: string;
  expressionIndex?: number;
  /** an evaluation error (acted on only under failurePolicy Fail) */
  error?: boolean;
}

/** the value of one expression, with Kubernetes' error wording */
function evalExpr(expr: string, vars: Record<string, unknown>): unknown {
  try {
    return evaluateCELValue(expr, vars);
  } catch (e) {
    throw new Error(`expression '${expr}' resulted in error: ${(e as Error).message}`);
  }
}

function evalBool(expr: string, vars: Record<string, unknown>): boolean {
  const v = evalExpr(expr, vars);
  if (typeof v !== 'boolean') throw new Error(`expression '${expr}' resulted in error: expected bool, got ${celTypeName(v)}`);
  return v;
}

/** the CEL variables of one evaluation (the policy's `variables` are evaluated on first use) */
function celVars(policy: any, base: Record<string, unknown>): Record<string, unknown> {
  const vars: Record<string, unknown> = { ...base };
  const variables: Record<string, unknown> = {};
  for (const v of asArray<any>(policy.spec?.variables)) {
    if (!isObject(v) || typeof v.name !== 'string') continue;
    let done = false;
    let value: unknown;
    let err: unknown;
    Object.defineProperty(variables, v.name, {
      enumerable: true,
      get() {
        if (!done) {
          done = true;
          try {
            value = evaluateCELValue(String(v.expression ?? ''), vars);
          } catch (e) {
            err = new Error(`composited variable "${v.name}" fails to evaluate: ${(e as Error).message}`);
          }
        }
        if (err) throw err;
        return value;
      },
    });
  }
  vars.variables = variables;
  return vars;
}

/** the parameter objects of a binding: undefined when there is no paramKind */
function paramsFor(builtin: ClusterReader, custom: (() => ClusterReader) | undefined, kinds: readonly KindDecl[], policy: any, binding: any, a: AdmissionAttributes): { params: unknown[] } | { error: string; policyError?: boolean } | undefined {
  const pk = policy.spec?.paramKind;
  if (!isObject(pk)) return undefined;
  const ref = binding.spec?.paramRef;
  if (!isObject(ref)) return { error: `paramRef is required when paramKind is set` };
  const [g, v] = String(pk.apiVersion ?? '').includes('/') ? String(pk.apiVersion).split('/') : ['', String(pk.apiVersion ?? '')];
  const kind = kinds.find((k) => !k.virtual && k.group === g && k.version === v && k.kind === pk.kind);
  if (!kind) return { error: `failed to find resource referenced by paramKind: '${pk.apiVersion}, Kind=${pk.kind}'`, policyError: true };
  const reader = kind.custom ? custom?.() : builtin;
  if (!reader) return { error: `failed to find resource referenced by paramKind: '${pk.apiVersion}, Kind=${pk.kind}'`, policyError: true };
  let namespace = '';
  if (kind.namespaced) namespace = typeof ref.namespace === 'string' && ref.namespace ? ref.namespace : a.namespace;
  let found: any[] = [];
  if (kind.namespaced && !namespace) {
    // a namespaced param kind for a cluster-scoped request without paramRef.namespace
    return { error: `cannot use namespaced paramRef in policy binding that matches cluster-scoped resources` };
  }
  if (typeof ref.name === 'string' && ref.name) {
    const o = reader.get(kind.group, kind.resource, namespace, ref.name);
    if (o) found = [o];
  } else {
    const reqs = fromLabelSelector(isObject(ref.selector) ? ref.selector : {}) ?? [];
    found = reader.list(kind.group, kind.resource, namespace).filter((o) => matchLabels(reqs, labelsOf(o)));
  }
  if (found.length) return { params: found };
  if ((ref.parameterNotFoundAction ?? 'Deny') === 'Deny') return { error: `no params found for policy binding with \`Deny\` parameterNotFoundAction` };
  return { params: [] };
}

/** the validations of a policy against one parameter object: its violations and audit annotations */
function evaluatePolicy(policy: any, vars: Record<string, unknown>): { skipped: boolean; violations: Violation[]; annotations: [string, string][] } {
  const spec = policy.spec ?? {};
  const errs: string[] = [];
  for (const c of asArray<any>(spec.matchConditions)) {
    try {
      if (!evalBool(String(c?.expression ?? ''), vars)) return { skipped: true, violations: [], annotations: [] };
    } catch (e) {
      errs.push((e as Error).message);
    }
  }
  if (errs.length) return { skipped: false, violations: errs.map((m) => ({ message: m, reason: 'Invalid', error: true })), annotations: [] };
  const violations: Violation[] = [];
  asArray<any>(spec.validations).forEach((v, i) => {
    const expr = String(v?.expression ?? '');
    let ok: boolean;
    try {
      ok = evalBool(expr, vars);
    } catch (e) {
      violations.push({ message: (e as Error).message, reason: 'Invalid', expressionIndex: i, error: true });
      return;
    }
    if (ok) return;
    let message = typeof v.message === 'string' && v.message ? v.message : `failed expression: ${expr.trim()}`;
    if (typeof v.messageExpression === 'string' && v.messageExpression) {
      try {
        const m = evaluateCELValue(v.messageExpression, vars);
        if (typeof m === 'string' && m.trim() !== '' && !m.includes('\n')) message = m.trim();
      } catch {
        /* the static message stands */
      }
    }
    violations.push({ message, reason: typeof v.reason === 'string' && v.reason ? v.reason : 'Invalid', expressionIndex: i });
  });
  const annotations: [string, string][] = [];
  for (const an of asArray<any>(spec.auditAnnotations)) {
    try {
      const val = evaluateCELValue(String(an?.valueExpression ?? ''), vars);
      if (typeof val === 'string' && an.key) annotations.push([`${policy.metadata?.name}/${an.key}`, val]);
    } catch {
      /* an annotation that fails to evaluate is left out */
    }
  }
  return { skipped: false, violations, annotations };
}

/**
 * The equivalent versions the policies of `bindings` match whose objects a CRD's conversion
 * webhook converts, made ready (a promise), or undefined when there are none
 */
function prepareViews(reader: ClusterReader, bindings: any[], a: AdmissionAttributes, equivalents: EquivalentResolver | undefined): Promise<void> | undefined {
  if (!equivalents || !equivalents(a).some((v) => v.prepare)) return undefined;
  const views = new Set<EquivalentView>();
  for (const binding of bindings) {
    const policy = reader.get(GROUP, 'validatingadmissionpolicies', '', String(binding.spec?.policyName ?? ''));
    try {
      const v = policy ? matchesResources(reader, policy.spec?.matchConstraints, a, equivalents) : false;
      if (v && v.prepare) views.add(v);
    } catch {
      /* the policy's own error is reported when it is checked */
    }
  }
  if (views.size === 0) return undefined;
  return Promise.all([...views].map((v) => v.prepare!([a.object, a.oldObject]))).then(() => undefined);
}

export function validatingAdmissionPolicy(reader: ClusterReader, opts: VAPOptions = {}): AdmissionPlugin {
  const check = (a: AdmissionAttributes, bindings: any[]): void => {
    const kinds = opts.kinds?.() ?? [];
    // the variables but params, for each version a policy matched (undefined: the request's own)
    const bases = new Map<EquivalentView | undefined, Record<string, unknown>>();
    const denied: { policy: string; binding?: string; v: Violation }[] = [];
    const auditFailures: any[] = [];
    for (const binding of [...bindings].sort((x, y) => String(x.metadata?.name).localeCompare(String(y.metadata?.name)))) {
      const policy = reader.get(GROUP, 'validatingadmissionpolicies', '', String(binding.spec?.policyName ?? ''));
      if (!policy) continue;
      const pName = String(policy.metadata?.name ?? '');
      const bName = String(binding.metadata?.name ?? '');
      const failClosed = (policy.spec?.failurePolicy ?? 'Fail') === 'Fail';
      const actions = asArray<string>(binding.spec?.validationActions);
      let view: EquivalentView | undefined;
      try {
        const matched = matchesResources(reader, policy.spec?.matchConstraints, a, opts.equivalents);
        if (matched === false) continue;
        view = matched;
        const mr = binding.spec?.matchResources;
        // a binding without resourceRules matches whatever its policy matches
        if (isObject(mr) && matchesResources(reader, { ...mr, resourceRules: asArray(mr.resourceRules).length ? mr.resourceRules : [ANY_RESOURCE] }, a, opts.equivalents) === false) continue;
      } catch (e) {
        if (failClosed) denied.push({ policy: pName, binding: bName, v: { message: `failed to configure binding: ${(e as Error).message}`, reason: 'Invalid' } });
        continue;
      }
      let base = bases.get(view);
      if (!base) bases.set(view, (base = baseVars(reader, a, view, opts.authorizer)));
      const found = paramsFor(reader, opts.customReader, kinds, policy, binding, a);
      if (found && 'error' in found) {
        // a configuration error: denied under failurePolicy Fail whatever the validationActions
        if (failClosed) {
          const message = found.policyError ? `failed to configure policy: ${found.error}` : `failed to configure binding: ${found.error}`;
          denied.push({ policy: pName, binding: found.policyError ? undefined : bName, v: { message, reason: 'Invalid' } });
        }
        continue;
      }
      const paramSets = found ? found.params : [null];
      for (const params of paramSets) {
        const r = evaluatePolicy(policy, celVars(policy, { ...base, params }));
        if (r.skipped) continue;
        for (const [k, val] of r.annotations) {
          // distinct values of the same key (one per parameter object) are joined
          const have = a.auditAnnotations![k];
          if (have === undefined) a.auditAnnotations![k] = val;
          else if (!have.split(', ').includes(val)) a.auditAnnotations![k] = `${have}, ${val}`;
        }
        for (const v of r.violations) {
          if (v.error && !failClosed) continue;
          if (actions.includes('Deny')) denied.push({ policy: pName, binding: bName, v });
          if (actions.includes('Warn')) a.warnings!.push(`Validation failed for ValidatingAdmissionPolicy '${pName}' with binding '${bName}': ${v.message}`);
          if (actions.includes('Audit')) {
            auditFailures.push({ message: v.message, policy: pName, binding: bName, expressionIndex: v.expressionIndex ?? 0, validationActions: actions });
          }
        }
      }
    }
    if (auditFailures.length) a.auditAnnotations!['validation.policy.admission.k8s.io/validation_failure'] = JSON.stringify(auditFailures);
    if (!denied.length) return;
    const d = denied[0]!;
    const message =
      d.binding !== undefined
        ? `ValidatingAdmissionPolicy '${d.policy}' with binding '${d.binding}' denied request: ${d.v.message}`
        : `ValidatingAdmissionPolicy '${d.policy}' denied request: ${d.v.message}`;
    const f = forbidden(a, message);
    const err = new StatusError(REASON_CODES[d.v.reason] ?? 422, d.v.reason, f.message, { ...(f.details ?? {}), causes: [...(f.details?.causes ?? []), { message }] } as any);
    throw err;
  };
  return {
    name: 'ValidatingAdmissionPolicy',
    validate(a) {
      const bindings = reader.list(GROUP, 'validatingadmissionpolicybindings', '');
      if (!bindings.length || isExemptAdmissionConfiguration(a)) return;
      const ready = prepareViews(reader, bindings, a, opts.equivalents);
      if (ready) return ready.then(() => check(a, bindings));
      return check(a, bindings);
    },
  };
}

/** object, oldObject, request, namespaceObject and authorizer (the same for every binding) */
function baseVars(reader: ClusterReader, a: AdmissionAttributes, view: EquivalentView | undefined, authz: Authorizer | undefined): Record<string, unknown> {
  const v = versionedAttributes(a, view);
  const request = admissionRequest('', { accessor: undefined as any, resource: view?.resource ?? a.resource, subresource: a.subresource, kind: view?.kind ?? a.kind }, v);
  delete request.object;
  delete request.oldObject;
  const object = a.operation === 'DELETE' ? null : (v.object ?? null);
  const oldObject = a.operation === 'CREATE' ? null : (v.oldObject ?? null);
  // a Namespace's own request has no namespaceObject
  const isNamespace = a.kind.group === '' && a.kind.version === 'v1' && a.kind.kind === 'Namespace';
  const namespaceObject = a.namespace && !isNamespace ? (reader.get('', 'namespaces', '', a.namespace) ?? null) : null;
  const vars: Record<string, unknown> = { object, oldObject, request, namespaceObject };
  if (authz) vars.authorizer = celAuthorizer(authz, a.user, { group: a.resource.group, resource: a.resource.resource, subresource: a.subresource, namespace: a.namespace, name: a.name });
  return vars;
}
