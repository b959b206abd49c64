// The answers of the access reviews (authorization.k8s.io/v1), as kube-apiserver gives them:
//  - SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview: status.allowed
//    (always present), status.denied (only when an authorizer denied), status.reason and
//    status.evaluationError (when not empty);
//  - SelfSubjectRulesReview: status.resourceRules, status.nonResourceRules (lists, possibly
//    empty), status.incomplete, status.evaluationError (when not empty).
import { parseFieldSelector, parseLabelSelector, type FieldTerm, type Requirement } from '../../machinery/selectors.js';
import type { Authorizer, UserInfo } from '../authz.js';
import type { RequestAttributes } from './attributes.js';

/** the attributes of a review, with what of its selectors could not be used (Kubernetes' parsing errors) */
export interface ReviewAttributes extends RequestAttributes {
  /** the field selector could not be used in part ('partial') or at all ('ignored') */
  fieldSelectorError?: 'partial' | 'ignored';
  labelSelectorError?: 'partial' | 'ignored';
}

/** the attributes a review's spec asks about (an empty version means every version, "*") */
export function reviewAttributes(user: UserInfo, spec: any, namespaceOverride?: string): ReviewAttributes {
  const ra = spec?.resourceAttributes;
  if (!ra) {
    const nra = spec?.nonResourceAttributes ?? {};
    return { user, verb: nra.verb ?? '', path: nra.path ?? '', resourceRequest: false };
  }
  const a: ReviewAttributes = {
    user,
    verb: ra.verb ?? '',
    namespace: namespaceOverride ?? ra.namespace ?? '',
    apiGroup: ra.group ?? '',
    apiVersion: ra.version || '*',
    resource: ra.resource ?? '',
    subresource: ra.subresource ?? '',
    name: ra.name ?? '',
    resourceRequest: true,
  };
  if (ra.fieldSelector) {
    const { terms, failed } = fieldSelectorTerms(ra.fieldSelector);
    if (terms) a.fieldSelector = terms;
    if (failed) a.fieldSelectorError = terms ? 'partial' : 'ignored';
  }
  if (ra.labelSelector) {
    const { terms, failed } = labelSelectorTerms(ra.labelSelector);
    if (terms) a.labelSelector = terms;
    if (failed) a.labelSelectorError = terms ? 'partial' : 'ignored';
  }
  return a;
}

// A selector is either a rawSelector in the query syntax or a list of requirements (validation
// refuses both at once). A requirement Kubernetes cannot use (an operator it does not know,
// which validation lets through for newer clients; a field requirement with other than one value,
// Exists/DoesNotExist on a field) is left out and reported in status.evaluationError: requirements
// are ANDed, so dropping one only widens the check.
interface Terms<T> {
  terms?: T[];
  failed: boolean;
}

function selectorTerms<T>(sel: any, parse: (raw: string) => T[], fromRequirement: (r: any) => T | undefined): Terms<T> {
  const reqs = Array.isArray(sel.requirements) ? sel.requirements : [];
  if (reqs.length === 0) {
    if (typeof sel.rawSelector !== 'string' || !sel.rawSelector) return { failed: false };
    try {
      return { terms: parse(sel.rawSelector), failed: false };
    } catch {
      return { failed: true };
    }
  }
  const out: T[] = [];
  let failed = false;
  for (const r of reqs) {
    const t = fromRequirement(r);
    if (t) out.push(t);
    else failed = true;
  }
  return { terms: out.length ? out : undefined, failed };
}

function fieldSelectorTerms(sel: any): Terms<FieldTerm> {
  return selectorTerms<FieldTerm>(sel, parseFieldSelector, (r) => {
    const values = Array.isArray(r?.values) ? r.values : [];
    if ((r?.operator === 'In' || r?.operator === 'NotIn') && values.length === 1) return { field: r.key ?? '', op: r.operator === 'In' ? '=' : '!=', value: values[0] };
    return undefined;
  });
}

const LABEL_OPS: Record<string, Requirement['op']> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

function labelSelectorTerms(sel: any): Terms<Requirement> {
  return selectorTerms<Requirement>(sel, parseLabelSelector, (r) => {
    const op = LABEL_OPS[r?.operator];
    return op ? { key: r.key, op, values: [...(r.values ?? [])] } : undefined;
  });
}

/** the user a SubjectAccessReview or LocalSubjectAccessReview asks about (groups as given) */
export function reviewSubject(spec: any): UserInfo {
  const u: UserInfo = { name: spec?.user ?? '', groups: Array.isArray(spec?.groups) ? [...spec.groups] : [] };
  if (spec?.uid) u.uid = spec.uid;
  if (spec?.extra && typeof spec.extra === 'object') u.extra = spec.extra;
  return u;
}

export interface AccessReviewStatus {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

/** status of an access review */
export function accessReviewStatus(authorizer: Authorizer, a: ReviewAttributes): AccessReviewStatus {
  const r = authorizer.authorize(a) as { decision: string; reason: string; evaluationError?: string };
  const st: AccessReviewStatus = { allowed: r.decision === 'allow' };
  if (r.decision === 'deny') st.denied = true;
  if (r.reason) st.reason = r.reason;
  // the authorizer's error, then what of the selectors was left out (BuildEvaluationError)
  const evaluation: string[] = r.evaluationError ? [r.evaluationError] : [];
  if (a.fieldSelectorError) evaluation.push(`spec.resourceAttributes.fieldSelector ${a.fieldSelectorError === 'partial' ? 'partially ' : ''}ignored due to parse error`);
  if (a.labelSelectorError) evaluation.push(`spec.resourceAttributes.labelSelector ${a.labelSelectorError === 'partial' ? 'partially ' : ''}ignored due to parse error`);
  if (evaluation.length) st.evaluationError = evaluation.join('; ');
  return st;
}

/** status of a SelfSubjectRulesReview */
export function rulesReviewStatus(authorizer: Authorizer, user: UserInfo, namespace: string): any {
  const r = authorizer.rulesFor(user, namespace);
  const st: any = { resourceRules: r.resourceRules, nonResourceRules: r.nonResourceRules, incomplete: r.incomplete };
  if (r.evaluationError) st.evaluationError = r.evaluationError;
  return st;
}
