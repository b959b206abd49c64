// Shared pieces of the RBAC tests: users, objects and a resolver loaded with the bootstrap policy
// (aggregated roles filled as the aggregation controller fills them).
import type { UserInfo } from '../../src/apiserver/authz.js';
import { aggregatedRules } from '../../src/apiserver/rbac/aggregation.js';
import { bootstrapPolicy } from '../../src/apiserver/rbac/policy.js';
import { RBACResolver } from '../../src/apiserver/rbac/resolver.js';

export const user = (name: string, ...groups: string[]): UserInfo => ({ name, groups: [...groups, 'system:authenticated'] });
export const anonymous: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };
export const serviceAccount = (ns: string, name: string): UserInfo => ({
  name: `system:serviceaccount:${ns}:${name}`,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
});

const RBAC = 'rbac.authorization.k8s.io';

export function clusterRole(name: string, rules: any[], extra: any = {}): any {
  return { apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', metadata: { name, ...(extra.metadata ?? {}) }, rules, ...(extra.aggregationRule ? { aggregationRule: extra.aggregationRule } : {}) };
}

export function role(ns: string, name: string, rules: any[]): any {
  return { apiVersion: `${RBAC}/v1`, kind: 'Role', metadata: { name, namespace: ns }, rules };
}

export const subj = {
  user: (name: string) => ({ kind: 'User', apiGroup: RBAC, name }),
  group: (name: string) => ({ kind: 'Group', apiGroup: RBAC, name }),
  sa: (name: string, namespace?: string) => (namespace === undefined ? { kind: 'ServiceAccount', name } : { kind: 'ServiceAccount', name, namespace }),
};

export function clusterRoleBinding(name: string, roleName: string, subjects: any[], kind = 'ClusterRole'): any {
  return { apiVersion: `${RBAC}/v1`, kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: RBAC, kind, name: roleName }, subjects };
}

export function roleBinding(ns: string, name: string, roleKind: 'Role' | 'ClusterRole', roleName: string, subjects: any[]): any {
  return { apiVersion: `${RBAC}/v1`, kind: 'RoleBinding', metadata: { name, namespace: ns }, roleRef: { apiGroup: RBAC, kind: roleKind, name: roleName }, subjects };
}

/** a resolver holding the bootstrap policy with admin, edit and view aggregated */
export function bootstrapResolver(): RBACResolver {
  const p = bootstrapPolicy();
  // aggregate until stable (view feeds edit, edit feeds admin)
  for (let i = 0; i < 4; i++) {
    for (const r of p.clusterRoles) {
      const rules = aggregatedRules(r, p.clusterRoles);
      if (rules) r.rules = rules;
    }
  }
  const res = new RBACResolver();
  res.replace('clusterroles', p.clusterRoles);
  res.replace('clusterrolebindings', p.clusterRoleBindings);
  res.replace('roles', p.roles);
  res.replace('rolebindings', p.roleBindings);
  return res;
}

/** resource attributes in short */
export function ra(u: UserInfo, verb: string, resource: string, o: { group?: string; ns?: string; name?: string; sub?: string } = {}) {
  return { user: u, verb, apiGroup: o.group ?? '', resource, namespace: o.ns ?? '', name: o.name ?? '', subresource: o.sub ?? '', resourceRequest: true };
}

export function nra(u: UserInfo, verb: string, path: string) {
  return { user: u, verb, path, resourceRequest: false };
}
