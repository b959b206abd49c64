// Escalation prevention on writes of Roles, ClusterRoles, RoleBindings and ClusterRoleBindings, as
// kube-apiserver's RBAC registry does it (the check runs on create and update, dry runs included,
// after the request was authorized and before validation and admission).
//
//  - members of system:masters may write anything;
//  - a Role or ClusterRole may be written by a user allowed the `escalate` verb on it, or who
//    already holds every permission it grants (in the namespace of the request); a ClusterRole with
//    an aggregationRule (new or old) needs `*` on everything (cluster-admin);
//  - a binding may be written by a user allowed the `bind` verb on its roleRef (in the binding's
//    namespace, or cluster-wide for a ClusterRoleBinding), or who holds every permission of the role
//    it refers to; a missing role then answers 404 NotFound;
//  - an update that changes only ownerReferences, finalizers or selfLink is never checked (the
//    garbage collector makes those).
//
// Refusals read as Kubernetes': `roles.rbac.authorization.k8s.io "x" is forbidden: user "alice"
// (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:`
// and one compact rule a line.
import { StatusError } from '../../machinery/errors.js';
import type { Authorizer, UserInfo } from '../authz.js';
import { newForbidden } from './attributes.js';
import { SYSTEM_PRIVILEGED_GROUP } from './authorizers.js';
import { RBAC_GROUP, type RBACResolver, type RBACResource, type RoleRef } from './resolver.js';
import { aggregateMessages, compactRules, compactString, covers, normalizeRule, type PolicyRule } from './rules.js';
import { goQuote, goQuoteList } from '../../machinery/gostrings.js';

/** `*` on every resource and every URL: what an aggregationRule needs */
export const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

export interface RBACWrite {
  /** the full authorizer chain (asked for `escalate` and `bind`) */
  authorizer: Authorizer;
  /** the RBAC rules the user holds */
  resolver: RBACResolver;
  user: UserInfo;
  resource: RBACResource;
  /** the namespace of the request ('' for cluster-scoped resources) */
  namespace: string;
  /** the name on the request's URL ('' for a create by POST) */
  requestName: string;
  /** the object to be written (after decoding and defaulting) */
  obj: any;
  /** the stored object, on update */
  old?: any;
}

/** members of system:masters may escalate (the API server's own loopback identity is one) */
export function escalationAllowed(user: UserInfo | undefined): boolean {
  if (!user) return false;
  return user.groups.includes(SYSTEM_PRIVILEGED_GROUP);
}

function normalize(v: any): any {
  if (Array.isArray(v)) return v.length ? v.map(normalize) : undefined;
  if (v && typeof v === 'object') {
    const out: Record<string, any> = {};
    for (const k of Object.keys(v).sort()) {
      const n = normalize(v[k]);
      if (n !== undefined) out[k] = n;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return v === null ? undefined : v;
}

/** only the fields the garbage collector writes changed (ownerReferences, finalizers, selfLink) */
export function isOnlyMutatingGCFields(obj: any, old: any): boolean {
  if (!obj || !old) return false;
  const copy = { ...obj, metadata: { ...(obj.metadata ?? {}) } };
  const om = old.metadata ?? {};
  for (const f of ['ownerReferences', 'finalizers', 'selfLink']) {
    if (om[f] === undefined) delete copy.metadata[f];
    else copy.metadata[f] = om[f];
  }
  return JSON.stringify(normalize(copy)) === JSON.stringify(normalize(old));
}

function hasAggregationRule(role: any): boolean {
  const sel = role?.aggregationRule?.clusterRoleSelectors;
  return Array.isArray(sel) && sel.length > 0;
}

/**
 * Whether the user holds every permission of `rules` in the namespace; the message of the refusal
 * otherwise (without the `<resource> "<name>" is forbidden: ` prefix).
 */
export function confirmNoEscalation(resolver: RBACResolver, user: UserInfo, namespace: string, rules: readonly PolicyRule[]): string | undefined {
  const { rules: owner, errors } = resolver.rulesFor(user, namespace, 'registry');
  const { covered, missing } = covers(owner, rules.map(normalizeRule));
  if (covered) return undefined;
  const descriptions = [...new Set(compactRules(missing).map(compactString))].sort();
  let msg = `user ${goQuote(user.name)} (groups=${goQuoteList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${descriptions.join('\n')}`;
  if (errors.length) {
    msg += `; resolution errors: [${aggregateMessages(errors.map((e) => e.message))}]`;
  }
  return msg;
}

function roleRefOf(obj: any): RoleRef {
  return { apiGroup: obj?.roleRef?.apiGroup, kind: String(obj?.roleRef?.kind ?? ''), name: String(obj?.roleRef?.name ?? '') };
}

/** may the user bind this role (the `bind` verb on it, in the binding's namespace)? */
export function bindingAuthorized(authorizer: Authorizer, user: UserInfo, ref: RoleRef, bindingNamespace: string): boolean {
  let resource: string;
  if (ref.kind === 'ClusterRole') resource = 'clusterroles';
  else if (ref.kind === 'Role') resource = 'roles';
  else return false;
  const { decision } = authorizer.authorize({
    user,
    verb: 'bind',
    namespace: bindingNamespace,
    apiGroup: ref.apiGroup ?? '',
    apiVersion: '*',
    resource,
    name: ref.name,
    resourceRequest: true,
  });
  return decision === 'allow';
}

/** may the user escalate the role of the request (the `escalate` verb on it)? */
export function roleEscalationAuthorized(authorizer: Authorizer, user: UserInfo, resource: 'roles' | 'clusterroles', namespace: string, requestName: string): boolean {
  const { decision } = authorizer.authorize({
    user,
    verb: 'escalate',
    namespace,
    apiGroup: RBAC_GROUP,
    apiVersion: '*',
    resource,
    name: requestName,
    resourceRequest: true,
  });
  return decision === 'allow';
}

/**
 * The check the registry runs on a create or update of an RBAC object: undefined when the write may
 * proceed, the error to answer otherwise (403 Forbidden; 404 NotFound for a binding to a missing
 * role the user may not bind).
 */
export function checkRBACWrite(w: RBACWrite): StatusError | undefined {
  if (escalationAllowed(w.user)) return undefined;
  const name: string = w.obj?.metadata?.name ?? '';
  switch (w.resource) {
    case 'roles':
    case 'clusterroles': {
      if (roleEscalationAuthorized(w.authorizer, w.user, w.resource, w.namespace, w.requestName)) return undefined;
      if (w.old && isOnlyMutatingGCFields(w.obj, w.old)) return undefined;
      const rules: PolicyRule[] = Array.isArray(w.obj?.rules) ? w.obj.rules : [];
      const refused = confirmNoEscalation(w.resolver, w.user, w.namespace, rules);
      if (refused) return newForbidden(RBAC_GROUP, w.resource, name, refused);
      if (w.resource === 'clusterroles' && (hasAggregationRule(w.obj) || hasAggregationRule(w.old))) {
        if (confirmNoEscalation(w.resolver, w.user, w.namespace, FULL_AUTHORITY)) {
          return newForbidden(RBAC_GROUP, w.resource, name, 'must have cluster-admin privileges to use the aggregationRule');
        }
      }
      return undefined;
    }
    case 'rolebindings':
    case 'clusterrolebindings': {
      if (w.old && isOnlyMutatingGCFields(w.obj, w.old)) return undefined;
      const ns = w.resource === 'rolebindings' ? w.namespace : '';
      if (w.resource === 'rolebindings' && !ns) return new StatusError(400, 'BadRequest', 'namespace is required');
      const ref = roleRefOf(w.obj);
      if (bindingAuthorized(w.authorizer, w.user, ref, ns)) return undefined;
      const got = w.resolver.getRoleReferenceRules(ref, ns, 'registry');
      if ('error' in got) {
        const e = got.error;
        if (e.kind === 'notfound') {
          return new StatusError(404, 'NotFound', e.message, { name: e.roleName, group: RBAC_GROUP, kind: e.resource });
        }
        return new StatusError(500, 'InternalError', `Internal error occurred: ${e.message}`, { causes: [{ message: e.message }] });
      }
      const refused = confirmNoEscalation(w.resolver, w.user, w.namespace, got.rules);
      if (refused) return newForbidden(RBAC_GROUP, w.resource, name, refused);
      return undefined;
    }
  }
}
