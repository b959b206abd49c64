// The answers of the access reviews (authorization.k8s.io/v1), as kube-apiserver gives them:
//  - SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview: status.allowed
//    (always present), status.denied (only when an authorizer denied), status.reason and
//    status.evaluationError (when not empty);
//  - SelfSubjectRulesReview: status.resourceRules, status.nonResourceRules (lists, possibly
//    empty), status.incomplete, status.evaluationError (when not empty).
import { parseFieldSelector, parseLabelSelector, type FieldTerm, type Requirement } from '../../machinery/selectors.js';
import type { Authorizer, UserInfo } from '../authz.js';
import type { RequestAttributes } from './attributes.js';

/** the attributes a review's spec asks about (an empty version means every version, "*") */
export function reviewAttributes(user: UserInfo, spec: any, namespaceOverride?: string): RequestAttributes {
  const ra = spec?.resourceAttributes;
  if (!ra) {
    const nra = spec?.nonResourceAttributes ?? {};
    return { user, verb: nra.verb ?? '', path: nra.path ?? '', resourceRequest: false };
  }
  const a: RequestAttributes = {
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
  const fs = selectorTerms(ra.fieldSelector, true) as FieldTerm[] | undefined;
  if (fs) a.fieldSelector = fs;
  const ls = selectorTerms(ra.labelSelector, false) as Requirement[] | undefined;
  if (ls) a.labelSelector = ls;
  return a;
}

function selectorTerms(sel: any, field: boolean): FieldTerm[] | Requirement[] | undefined {
  if (!sel) return undefined;
  try {
    if (typeof sel.rawSelector === 'string' && sel.rawSelector) return field ? parseFieldSelector(sel.rawSelector) : parseLabelSelector(sel.rawSelector);
    if (Array.isArray(sel.requirements)) {
      if (field) {
        const out: FieldTerm[] = [];
        for (const r of sel.requirements) {
          if (r?.operator === 'In' && Array.isArray(r.values) && r.values.length === 1) out.push({ field: r.key, op: '=', value: r.values[0] });
          else if (r?.operator === 'NotIn' && Array.isArray(r.values) && r.values.length === 1) out.push({ field: r.key, op: '!=', value: r.values[0] });
        }
        return out;
      }
      const ops: Record<string, Requirement['op']> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };
      return sel.requirements.filter((r: any) => ops[r?.operator]).map((r: any) => ({ key: r.key, op: ops[r.operator]!, values: [...(r.values ?? [])] }));
    }
  } catch {
    return undefined;
  }
  return undefined;
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
export function accessReviewStatus(authorizer: Authorizer, a: RequestAttributes): AccessReviewStatus {
  const r = authorizer.authorize(a) as { decision: string; reason: string; evaluationError?: string };
  const st: AccessReviewStatus = { allowed: r.decision === 'allow' };
  if (r.decision === 'deny') st.denied = true;
  if (r.reason) st.reason = r.reason;
  if (r.evaluationError) st.evaluationError = r.evaluationError;
  return st;
}

/** status of a SelfSubjectRulesReview */
export function rulesReviewStatus(authorizer: Authorizer, user: UserInfo, namespace: string): any {
  const r = authorizer.rulesFor(user, namespace);
  const st: any = { resourceRules: r.resourceRules, nonResourceRules: r.nonResourceRules, incomplete: r.incomplete };
  if (r.evaluationError) st.evaluationError = r.evaluationError;
  return st;
}
