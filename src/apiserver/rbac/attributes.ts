// Request attributes for authorization, as kube-apiserver derives them, and the errors it answers
// when a check fails.
//
// The verb of a request:
//  - resource requests: POST create, GET/HEAD get, PUT update, PATCH patch, DELETE delete; a GET
//    without a name is list, or watch with `?watch=true` (or the legacy /watch/ prefix); a DELETE
//    without a name is deletecollection. A list or watch with `fieldSelector=metadata.name=x` is
//    authorized as a request for the object `x` (resourceNames rules apply to it). Subresources
//    are authorized as `resource/subresource` (pods/status, pods/log, pods/exec ...).
//  - non-resource requests (/api, /apis, /apis/apps/v1, /healthz, /metrics ...): the lower-cased
//    HTTP method (get, post, put, patch, delete, head, options) and the path.
//  - a dry run is authorized exactly as the real request.
//  - a write that turns out to create (PUT of a missing object where the kind allows create on
//    update, server-side apply of a missing object) is also authorized as `create`, with the
//    request's other attributes; refused, it answers `<resource> "<name>" is forbidden: <reason>`.
//  - a DELETE with ignoreStoreReadErrorWithClusterBreakingPotential=true is also authorized as
//    `unsafe-delete-ignore-read-errors` on the same object.
//  - impersonation is authorized as `impersonate` on users, groups, serviceaccounts (core group),
//    uids and userextras/<key> (authentication.k8s.io), by the impersonating user.
import { StatusError, type StatusDetails } from '../../machinery/errors.js';
import { parseFieldSelector, parseLabelSelector, requiresExactMatch, type FieldTerm, type Requirement } from '../../machinery/selectors.js';
import type { Attributes, Authorizer, UserInfo } from '../authz.js';
import type { RequestInfo } from '../requestinfo.js';
import { goQuote } from '../../machinery/gostrings.js';

/** the attributes with the selectors of a list, watch or deletecollection (the Node authorizer reads them) */
export interface RequestAttributes extends Attributes {
  /** parsed `fieldSelector` of a list/watch/deletecollection; undefined when absent or invalid */
  fieldSelector?: FieldTerm[];
  /** parsed `labelSelector` of a list/watch/deletecollection; undefined when absent or invalid */
  labelSelector?: Requirement[];
}

/** a path segment name as Kubernetes accepts it for an object named in a field selector */
function isValidPathSegmentName(name: string): boolean {
  if (name === '.' || name === '..') return false;
  return !name.includes('/') && !name.includes('%');
}

/**
 * The attributes of a request as the authorization filter sees them (before the handler knows
 * whether the object exists). `info` is parseRequestInfo's answer.
 */
export function requestAttributes(user: UserInfo, info: RequestInfo, method: string, query?: URLSearchParams): RequestAttributes {
  if (!info.isResourceRequest) {
    return { user, verb: method.toLowerCase(), path: info.path, resourceRequest: false };
  }
  const a: RequestAttributes = {
    user,
    verb: info.verb,
    namespace: info.namespace,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    name: info.name,
    resourceRequest: true,
    path: info.path,
  };
  if (query && (a.verb === 'list' || a.verb === 'watch' || a.verb === 'deletecollection')) {
    const fs = query.get('fieldSelector');
    if (fs) {
      try {
        a.fieldSelector = parseFieldSelector(fs);
        if (a.verb !== 'deletecollection' && !a.name) {
          const n = requiresExactMatch(a.fieldSelector, 'metadata.name');
          if (n !== undefined && n !== '' && isValidPathSegmentName(n)) a.name = n;
        }
      } catch {
        /* an invalid selector: authorized as if absent; the handler answers 400 */
      }
    }
    const ls = query.get('labelSelector');
    if (ls) {
      try {
        a.labelSelector = parseLabelSelector(ls);
      } catch {
        /* as above */
      }
    }
  }
  return a;
}

/** the same request, authorized as another verb (create on update/apply, unsafe delete) */
export function withVerb<T extends Attributes>(a: T, verb: string): T {
  return { ...a, verb };
}

/** `create` attributes of a write that creates (PUT or server-side apply of a missing object) */
export function createOnWriteAttributes<T extends Attributes>(a: T): T {
  return withVerb(a, 'create');
}

/**
 * The verb of a write once its outcome is known: 'create' when a PUT or an apply PATCH creates the
 * object (the request needs both its own verb and create), else the request's own verb.
 */
export function effectiveWriteVerbs(info: Pick<RequestInfo, 'verb'>, exists: boolean): string[] {
  if ((info.verb === 'update' || info.verb === 'patch') && !exists) return [info.verb, 'create'];
  return [info.verb];
}

// ---- Forbidden answers ----

const HTML = /[&<>]/g;
function sanitize(s: string): string {
  return s.replace(HTML, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

/** `User "alice" cannot list resource "pods" in API group "" in the namespace "default"` */
export function forbiddenMessage(a: Attributes): string {
  const user = goQuote(a.user?.name ?? '');
  if (!a.resourceRequest) return `User ${user} cannot ${a.verb} path ${goQuote(a.path ?? '')}`;
  let resource = a.resource ?? '';
  if (a.subresource) resource = `${resource}/${a.subresource}`;
  if (a.namespace) return `User ${user} cannot ${a.verb} resource ${goQuote(resource)} in API group ${goQuote(a.apiGroup ?? '')} in the namespace ${goQuote(a.namespace)}`;
  return `User ${user} cannot ${a.verb} resource ${goQuote(resource)} in API group ${goQuote(a.apiGroup ?? '')} at the cluster scope`;
}

/** Kubernetes' NewForbidden(groupResource, name, err) */
export function newForbidden(group: string, resource: string, name: string, why: string): StatusError {
  let message: string;
  if (!group && !resource) message = `forbidden: ${why}`;
  else {
    const qualified = group ? `${resource}.${group}` : resource;
    message = name ? `${qualified} ${goQuote(name)} is forbidden: ${why}` : `${qualified} is forbidden: ${why}`;
  }
  const details: StatusDetails = {};
  if (name) details.name = name;
  if (group) details.group = group;
  if (resource) details.kind = resource;
  return new StatusError(403, 'Forbidden', message, details);
}

/**
 * The 403 of the authorization filter, as kubectl prints it:
 * `pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"`,
 * with `: <reason>` when an authorizer gave one (the Node authorizer does, RBAC only on errors).
 */
export function forbiddenError(a: Attributes, reason: string): StatusError {
  const msg = sanitize(forbiddenMessage(a));
  const why = reason ? `${msg}: ${reason}` : msg;
  if (!a.resourceRequest) return newForbidden('', '', '', why);
  return newForbidden(a.apiGroup ?? '', a.resource ?? '', a.name ?? '', why);
}

/**
 * Authorize a request at the filter: undefined when allowed, the 403 to send otherwise. An
 * authorizer's evaluation error with no decision answers 500 in Kubernetes; ours do not raise.
 */
export function authorizeRequest(authorizer: Authorizer, a: Attributes): StatusError | undefined {
  const { decision, reason } = authorizer.authorize(a);
  if (decision === 'allow') return undefined;
  return forbiddenError(a, reason);
}

/**
 * The second check of a write that creates (PUT with create-on-update, apply of a missing object):
 * the same attributes as `create`. Kubernetes answers `<resource> "<name>" is forbidden: <reason>`
 * (the reason is often empty: the message then ends with ": ").
 */
export function authorizeCreateOnWrite(authorizer: Authorizer, a: Attributes): StatusError | undefined {
  const c = createOnWriteAttributes(a);
  const { decision, reason } = authorizer.authorize(c);
  if (decision === 'allow') return undefined;
  return newForbidden(c.apiGroup ?? '', c.resource ?? '', c.name ?? '', reason);
}

/** the extra check of a DELETE with ignoreStoreReadErrorWithClusterBreakingPotential=true */
export function authorizeUnsafeDelete(authorizer: Authorizer, a: Attributes): StatusError | undefined {
  const u = withVerb(a, 'unsafe-delete-ignore-read-errors');
  const { decision, reason } = authorizer.authorize(u);
  if (decision === 'allow') return undefined;
  return newForbidden(u.apiGroup ?? '', u.resource ?? '', u.name ?? '', `not permitted to do ${goQuote(u.verb)}, reason: ${reason}`);
}

// ---- impersonation ----

export type ImpersonationTarget =
  | { kind: 'user'; name: string }
  | { kind: 'group'; name: string }
  | { kind: 'serviceaccount'; namespace: string; name: string }
  | { kind: 'uid'; name: string }
  | { kind: 'userextra'; key: string; value: string };

/**
 * The attributes of one impersonation check (one per impersonated user, group, uid and extra
 * value), authorized for the requesting user. A user name `system:serviceaccount:<ns>:<name>` is
 * checked as the service account.
 */
export function impersonationAttributes(requestor: UserInfo, t: ImpersonationTarget): Attributes {
  const base = { user: requestor, verb: 'impersonate', resourceRequest: true };
  switch (t.kind) {
    case 'user': {
      const m = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(t.name);
      if (m) return { ...base, apiGroup: '', resource: 'serviceaccounts', namespace: m[1]!, name: m[2]! };
      return { ...base, apiGroup: '', resource: 'users', name: t.name };
    }
    case 'group':
      return { ...base, apiGroup: '', resource: 'groups', name: t.name };
    case 'serviceaccount':
      return { ...base, apiGroup: '', resource: 'serviceaccounts', namespace: t.namespace, name: t.name };
    case 'uid':
      return { ...base, apiGroup: 'authentication.k8s.io', resource: 'uids', name: t.name };
    case 'userextra':
      return { ...base, apiGroup: 'authentication.k8s.io', resource: 'userextras', subresource: t.key, name: t.value };
  }
}

/** the 403 of a refused impersonation: `users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope` */
export function impersonationForbidden(a: Attributes, reason: string): StatusError {
  return forbiddenError(a, reason);
}
