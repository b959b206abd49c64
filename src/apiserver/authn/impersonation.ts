// Impersonation (Impersonate-User, Impersonate-Group, Impersonate-Uid, Impersonate-Extra-<key>):
// an authenticated user acts as another when allowed the `impersonate` verb on each thing it
// asks for, as Kubernetes' WithImpersonation filter checks it:
//   Impersonate-User: <name>          users/<name>  (a system:serviceaccount:<ns>:<name> name is
//                                     serviceaccounts/<name> in <ns>, and brings the service
//                                     account groups unless groups are given)
//   Impersonate-Group: <group>        groups/<group>, once per header line
//   Impersonate-Extra-<key>: <value>  userextras/<key> (authentication.k8s.io) named <value>, once
//                                     per value; <key> is lower-cased and %-unescaped
//   Impersonate-Uid: <uid>            uids/<uid> (authentication.k8s.io)
// Groups, extras or a uid without a user is an internal error (500, plain text, as Kubernetes
// answers it). The impersonated user gets system:authenticated unless it is system:anonymous or
// its groups already hold system:authenticated or system:unauthenticated (system:anonymous gets
// system:unauthenticated).
import type { Attributes, UserInfo } from '../authz.js';
import { StatusError } from '../../machinery/errors.js';
import { headerFirst, headerNames, headerValues, unescapeExtraKey, type AuthnRequest } from './request.js';
import { makeGroupNames, makeUsername, splitUsername } from './serviceaccount.js';
import { goQuote } from '../../machinery/gostrings.js';

export const IMPERSONATE_USER_HEADER = 'Impersonate-User';
export const IMPERSONATE_GROUP_HEADER = 'Impersonate-Group';
export const IMPERSONATE_UID_HEADER = 'Impersonate-Uid';
export const IMPERSONATE_USER_EXTRA_HEADER_PREFIX = 'Impersonate-Extra-';

export type ImpersonationDecision = boolean | { allowed: boolean; reason?: string };

/** Asks the authorizer whether `user` may do `attrs` (here: impersonate). */
export type ImpersonationAuthorizer = (user: UserInfo, attrs: Attributes) => ImpersonationDecision | Promise<ImpersonationDecision>;

/**
 * Kubernetes answers a malformed impersonation request with Go's http.Error: status 500,
 * Content-Type `text/plain; charset=utf-8`, X-Content-Type-Options nosniff, and this body (plus
 * a newline). The server should send it as such rather than as a Status.
 */
export class ImpersonationInternalError extends Error {
  override name = 'ImpersonationInternalError';
  readonly code = 500;
  readonly contentType = 'text/plain; charset=utf-8';
  constructor(readonly body: string) {
    super(body);
  }
}

interface ImpersonationRequest {
  kind: 'ServiceAccount' | 'User' | 'Group' | 'UserExtra' | 'UID';
  namespace: string;
  name: string;
  apiVersion: string;
  fieldPath: string;
}

const AUTHN_GV = 'authentication.k8s.io/v1';
const sanitize = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Go's %v of an ObjectReference: its seven fields, space-separated. */
function refString(r: ImpersonationRequest): string {
  return `{${[r.kind, r.namespace, r.name, '', r.apiVersion, '', r.fieldPath].join(' ')}}`;
}

function requestsOf(req: AuthnRequest): ImpersonationRequest[] {
  const out: ImpersonationRequest[] = [];
  const user = headerFirst(req, IMPERSONATE_USER_HEADER);
  if (user) {
    const sa = splitUsername(user);
    if (sa) out.push({ kind: 'ServiceAccount', namespace: sa[0], name: sa[1], apiVersion: '', fieldPath: '' });
    else out.push({ kind: 'User', namespace: '', name: user, apiVersion: '', fieldPath: '' });
  }
  const groups = headerValues(req, IMPERSONATE_GROUP_HEADER);
  for (const g of groups) out.push({ kind: 'Group', namespace: '', name: g, apiVersion: '', fieldPath: '' });
  let hasExtra = false;
  const prefix = IMPERSONATE_USER_EXTRA_HEADER_PREFIX.toLowerCase();
  for (const n of headerNames(req)) {
    if (!n.startsWith(prefix)) continue;
    hasExtra = true;
    const key = unescapeExtraKey(n.slice(prefix.length).toLowerCase());
    for (const v of headerValues(req, n)) out.push({ kind: 'UserExtra', namespace: '', name: v, apiVersion: AUTHN_GV, fieldPath: key });
  }
  const uid = headerFirst(req, IMPERSONATE_UID_HEADER);
  if (uid) out.push({ kind: 'UID', namespace: '', name: uid, apiVersion: AUTHN_GV, fieldPath: '' });
  if ((groups.length > 0 || hasExtra || !!uid) && !user) {
    const uri = req.url ?? '';
    throw new ImpersonationInternalError(sanitize(`Internal Server Error: ${goQuote(uri)}: requested [${out.map(refString).join(' ')}] without impersonating a user`));
  }
  return out;
}

/** Whether the request asks to impersonate anyone (a cheap test before `impersonate`). */
export function hasImpersonationHeaders(req: AuthnRequest): boolean {
  // asked of every request: a walk over the header names, without building a list of them
  for (const n in req.headers) {
    if (n.charCodeAt(0) !== 105 /* i */ || !n.startsWith('impersonate-')) continue;
    if (n === 'impersonate-user' || n === 'impersonate-group' || n === 'impersonate-uid' || n.startsWith(EXTRA_PREFIX)) return true;
  }
  return false;
}
const EXTRA_PREFIX = IMPERSONATE_USER_EXTRA_HEADER_PREFIX.toLowerCase();

/** The Forbidden error of a denied impersonation, worded as Kubernetes' responsewriters.Forbidden. */
export function impersonationForbidden(attrs: Attributes, reason: string): StatusError {
  let resource = attrs.resource ?? '';
  if (attrs.subresource) resource += '/' + attrs.subresource;
  const user = goQuote(attrs.user.name);
  const where = attrs.namespace ? `in the namespace ${goQuote(attrs.namespace)}` : 'at the cluster scope';
  const msg = sanitize(`User ${user} cannot ${attrs.verb} resource ${goQuote(resource)} in API group ${goQuote(attrs.apiGroup ?? '')} ${where}`);
  const why = reason ? `${msg}: ${reason}` : msg;
  const group = attrs.apiGroup ?? '';
  const res = attrs.resource ?? '';
  const qualified = group ? `${res}.${group}` : res;
  const name = attrs.name ?? '';
  const message = !res && !group ? `forbidden: ${why}` : name ? `${qualified} ${goQuote(name)} is forbidden: ${why}` : `${qualified} is forbidden: ${why}`;
  const details: { name?: string; group?: string; kind?: string } = {};
  if (name) details.name = name;
  if (group) details.group = group;
  details.kind = res;
  return new StatusError(403, 'Forbidden', message, details);
}

/**
 * Applies the impersonation headers of a request made by `requestor`: the user to act as, or
 * null when the request impersonates no one. Throws a 403 StatusError when the requestor may not
 * impersonate something it asks for, and an ImpersonationInternalError for groups, extras or a
 * uid without a user. The caller should then drop the Impersonate-* headers.
 */
export async function impersonate(requestor: UserInfo, req: AuthnRequest, authorize: ImpersonationAuthorizer): Promise<UserInfo | null> {
  const requests = requestsOf(req);
  if (!requests.length) return null;
  const groupsSpecified = headerValues(req, IMPERSONATE_GROUP_HEADER).length > 0;
  let username = '';
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  let uid = '';
  for (const r of requests) {
    const group = r.apiVersion ? r.apiVersion.split('/')[0]! : '';
    const version = r.apiVersion ? r.apiVersion.split('/')[1]! : '';
    const attrs: Attributes = {
      user: requestor,
      verb: 'impersonate',
      apiGroup: group,
      apiVersion: version,
      namespace: r.namespace,
      name: r.name,
      resourceRequest: true,
    };
    switch (r.kind) {
      case 'ServiceAccount':
        attrs.resource = 'serviceaccounts';
        username = makeUsername(r.namespace, r.name);
        if (!groupsSpecified) groups = makeGroupNames(r.namespace);
        break;
      case 'User':
        attrs.resource = 'users';
        username = r.name;
        break;
      case 'Group':
        attrs.resource = 'groups';
        groups.push(r.name);
        break;
      case 'UserExtra':
        attrs.resource = 'userextras';
        attrs.subresource = r.fieldPath;
        (extra[r.fieldPath] ??= []).push(r.name);
        break;
      case 'UID':
        attrs.resource = 'uids';
        uid = r.name;
        break;
    }
    let decision: ImpersonationDecision;
    try {
      decision = await authorize(requestor, attrs);
    } catch (e) {
      throw impersonationForbidden(attrs, (e as Error).message ?? '');
    }
    const allowed = typeof decision === 'boolean' ? decision : decision.allowed;
    if (!allowed) throw impersonationForbidden(attrs, typeof decision === 'boolean' ? '' : (decision.reason ?? ''));
  }
  if (username !== 'system:anonymous') {
    if (!groups.some((g) => g === 'system:authenticated' || g === 'system:unauthenticated')) groups.push('system:authenticated');
  } else if (!groups.includes('system:unauthenticated')) groups.push('system:unauthenticated');
  const user: UserInfo = { name: username, groups, extra };
  if (uid) user.uid = uid;
  return user;
}

/** The headers to remove once impersonation applied (lower-case names). */
export function impersonationHeaderNames(req: AuthnRequest): string[] {
  const prefix = IMPERSONATE_USER_EXTRA_HEADER_PREFIX.toLowerCase();
  return headerNames(req).filter((n) => n === 'impersonate-user' || n === 'impersonate-group' || n === 'impersonate-uid' || n.startsWith(prefix));
}
