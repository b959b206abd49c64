// The RBAC rule resolver: the Roles, ClusterRoles, RoleBindings and ClusterRoleBindings of the
// cluster, kept in memory from the API server's watch caches (a full list, then change events),
// with the bindings indexed by subject so that an authorization looks only at the bindings that
// name the user, one of its groups or its service account.
//
// Resolution follows kube-apiserver: the ClusterRoleBindings that apply to the user, then (for a
// namespaced request) the RoleBindings of that namespace. A binding whose role is missing is an
// error of resolution, reported beside the rules found, never a reason to stop.
import type { UserInfo } from '../authz.js';
import { normalizeRule, type PolicyRule } from './rules.js';
import { goQuote } from '../../machinery/gostrings.js';

export type RBACResource = 'roles' | 'rolebindings' | 'clusterroles' | 'clusterrolebindings';
export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';
export const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

export interface Subject {
  kind: string;
  apiGroup?: string;
  name: string;
  namespace?: string;
}

export interface RoleRef {
  apiGroup?: string;
  kind: string;
  name: string;
}

/** a role as the resolver holds it: the stored object and its rules in our form */
export interface RoleEntry {
  obj: any;
  rules: PolicyRule[];
}

interface BindingEntry {
  obj: any;
  name: string;
  namespace: string;
  subjects: Subject[];
  roleRef: RoleRef;
}

/** how a missing role is named in an error: as the authorizer's listers do (`clusterrole.rbac...`), or the registry (`clusterroles.rbac...`) */
export type NotFoundStyle = 'lister' | 'registry';

export class ResolutionError extends Error {
  constructor(
    message: string,
    /** 'notfound' for a missing role (the registry answers 404 for it) */
    readonly kind: 'notfound' | 'other',
    readonly resource = '',
    readonly roleName = '',
  ) {
    super(message);
  }
}

/** the source of a rule, as the RBAC authorizer names it in its reasons */
export interface RuleSource {
  /** `ClusterRoleBinding "x" of ClusterRole "y" to User "z"` */
  describe(): string;
}

/** the user name a subject stands for (User and ServiceAccount subjects), '' when it can match nobody */
function subjectUserName(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'User') return s.name;
  if (s.kind === 'ServiceAccount') {
    const ns = s.namespace || bindingNamespace;
    if (!ns) return '';
    return `${SERVICE_ACCOUNT_PREFIX}${ns}:${s.name}`;
  }
  return '';
}

/** whether a binding subject applies to the user (the namespace defaults a ServiceAccount subject's) */
export function subjectApplies(user: UserInfo, s: Subject, bindingNamespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return user.name === s.name;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount': {
      const u = subjectUserName(s, bindingNamespace);
      return u !== '' && u === user.name;
    }
    default:
      return false;
  }
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${goQuote(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${goQuote(s.name)}`;
}

class SubjectIndex {
  private readonly byUser = new Map<string, Set<string>>();
  private readonly byGroup = new Map<string, Set<string>>();

  private static add(m: Map<string, Set<string>>, k: string, v: string): void {
    let s = m.get(k);
    if (!s) m.set(k, (s = new Set()));
    s.add(v);
  }

  private static remove(m: Map<string, Set<string>>, k: string, v: string): void {
    const s = m.get(k);
    if (!s) return;
    s.delete(v);
    if (s.size === 0) m.delete(k);
  }

  add(b: BindingEntry): void {
    for (const s of b.subjects) {
      if (s.kind === 'Group') SubjectIndex.add(this.byGroup, s.name, b.name);
      else {
        const u = subjectUserName(s, b.namespace);
        if (u) SubjectIndex.add(this.byUser, u, b.name);
      }
    }
  }

  remove(b: BindingEntry): void {
    for (const s of b.subjects) {
      if (s.kind === 'Group') SubjectIndex.remove(this.byGroup, s.name, b.name);
      else {
        const u = subjectUserName(s, b.namespace);
        if (u) SubjectIndex.remove(this.byUser, u, b.name);
      }
    }
  }

  /** the names of the bindings that may apply to the user, sorted */
  candidates(user: UserInfo): string[] {
    const out = new Set<string>();
    const u = this.byUser.get(user.name);
    if (u) for (const n of u) out.add(n);
    for (const g of user.groups) {
      const s = this.byGroup.get(g);
      if (s) for (const n of s) out.add(n);
    }
    if (out.size <= 1) return [...out];
    return [...out].sort();
  }

  get empty(): boolean {
    return this.byUser.size === 0 && this.byGroup.size === 0;
  }
}

function toSubjects(v: unknown): Subject[] {
  if (!Array.isArray(v)) return [];
  return v.filter((s) => s && typeof s === 'object').map((s: any) => ({ kind: String(s.kind ?? ''), apiGroup: s.apiGroup, name: String(s.name ?? ''), namespace: s.namespace }));
}

function toRoleRef(v: any): RoleRef {
  return { apiGroup: v?.apiGroup, kind: String(v?.kind ?? ''), name: String(v?.name ?? '') };
}

function toRules(v: unknown): PolicyRule[] {
  if (!Array.isArray(v)) return [];
  return v.map(normalizeRule);
}

interface BindingVisit {
  source?: RuleSource;
  rules?: readonly PolicyRule[];
  err?: ResolutionError;
}

/** a binding as a rule source; its description is built once, when first asked */
class BindingSource implements RuleSource {
  private text?: string;
  constructor(private readonly make: () => string) {}
  describe(): string {
    return (this.text ??= this.make());
  }
}

/** users, groups and namespaces whose resolution is kept between changes */
const CACHE_MAX = 4096;

export type ChangeListener = (resource: RBACResource, type: ChangeType, obj: any, old?: any) => void;

/**
 * The resolver. Feed it with `replace` (a full list of one resource) and `onChange` (a watch
 * event); ask it with `visitRulesFor`, `rulesFor` and `getRoleReferenceRules`.
 */
export class RBACResolver {
  private readonly clusterRoles = new Map<string, RoleEntry>();
  private readonly roles = new Map<string, Map<string, RoleEntry>>();
  private readonly clusterRoleBindings = new Map<string, BindingEntry>();
  private readonly roleBindings = new Map<string, Map<string, BindingEntry>>();
  private readonly crbIndex = new SubjectIndex();
  private readonly rbIndex = new Map<string, SubjectIndex>();
  private readonly listeners = new Set<ChangeListener>();
  private readonly cache = new Map<string, BindingVisit[]>();
  private cacheGeneration = -1;
  /** incremented on every change: callers may cache per generation */
  generation = 0;

  /** be told of every change applied (the aggregation controller listens here) */
  listen(l: ChangeListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** replace everything held of one resource by a full list (a cache's initial list, or a relist) */
  replace(resource: RBACResource, objs: readonly any[]): void {
    switch (resource) {
      case 'clusterroles':
        this.clusterRoles.clear();
        break;
      case 'roles':
        this.roles.clear();
        break;
      case 'clusterrolebindings':
        for (const b of this.clusterRoleBindings.values()) this.crbIndex.remove(b);
        this.clusterRoleBindings.clear();
        break;
      case 'rolebindings':
        this.roleBindings.clear();
        this.rbIndex.clear();
        break;
    }
    for (const o of objs) this.put(resource, o);
    this.generation++;
    for (const l of this.listeners) l(resource, 'ADDED', undefined);
  }

  /** apply one watch event (ADDED, MODIFIED, DELETED) */
  onChange(resource: RBACResource, type: ChangeType, obj: any, old?: any): void {
    if (type === 'DELETED') this.remove(resource, obj?.metadata?.namespace ?? '', obj?.metadata?.name ?? '');
    else {
      if (old && (old.metadata?.name !== obj?.metadata?.name || old.metadata?.namespace !== obj?.metadata?.namespace)) {
        this.remove(resource, old.metadata?.namespace ?? '', old.metadata?.name ?? '');
      }
      this.put(resource, obj);
    }
    this.generation++;
    for (const l of this.listeners) l(resource, type, obj, old);
  }

  private put(resource: RBACResource, obj: any): void {
    const name: string = obj?.metadata?.name ?? '';
    const ns: string = obj?.metadata?.namespace ?? '';
    if (!name) return;
    switch (resource) {
      case 'clusterroles':
        this.clusterRoles.set(name, { obj, rules: toRules(obj.rules) });
        return;
      case 'roles': {
        let m = this.roles.get(ns);
        if (!m) this.roles.set(ns, (m = new Map()));
        m.set(name, { obj, rules: toRules(obj.rules) });
        return;
      }
      case 'clusterrolebindings': {
        const prev = this.clusterRoleBindings.get(name);
        if (prev) this.crbIndex.remove(prev);
        const b: BindingEntry = { obj, name, namespace: '', subjects: toSubjects(obj.subjects), roleRef: toRoleRef(obj.roleRef) };
        this.clusterRoleBindings.set(name, b);
        this.crbIndex.add(b);
        return;
      }
      case 'rolebindings': {
        let m = this.roleBindings.get(ns);
        if (!m) this.roleBindings.set(ns, (m = new Map()));
        let idx = this.rbIndex.get(ns);
        if (!idx) this.rbIndex.set(ns, (idx = new SubjectIndex()));
        const prev = m.get(name);
        if (prev) idx.remove(prev);
        const b: BindingEntry = { obj, name, namespace: ns, subjects: toSubjects(obj.subjects), roleRef: toRoleRef(obj.roleRef) };
        m.set(name, b);
        idx.add(b);
        return;
      }
    }
  }

  private remove(resource: RBACResource, ns: string, name: string): void {
    switch (resource) {
      case 'clusterroles':
        this.clusterRoles.delete(name);
        return;
      case 'roles': {
        const m = this.roles.get(ns);
        m?.delete(name);
        if (m && m.size === 0) this.roles.delete(ns);
        return;
      }
      case 'clusterrolebindings': {
        const b = this.clusterRoleBindings.get(name);
        if (b) this.crbIndex.remove(b);
        this.clusterRoleBindings.delete(name);
        return;
      }
      case 'rolebindings': {
        const m = this.roleBindings.get(ns);
        const b = m?.get(name);
        if (b) this.rbIndex.get(ns)?.remove(b);
        m?.delete(name);
        if (m && m.size === 0) {
          this.roleBindings.delete(ns);
          this.rbIndex.delete(ns);
        }
        return;
      }
    }
  }

  // ---- reads ----

  clusterRole(name: string): RoleEntry | undefined {
    return this.clusterRoles.get(name);
  }

  role(namespace: string, name: string): RoleEntry | undefined {
    return this.roles.get(namespace)?.get(name);
  }

  allClusterRoles(): RoleEntry[] {
    return [...this.clusterRoles.values()];
  }

  /** the rules a binding's roleRef grants; an error when the role is missing or the kind unknown */
  getRoleReferenceRules(ref: RoleRef, bindingNamespace: string, style: NotFoundStyle = 'lister'): { rules: PolicyRule[] } | { error: ResolutionError } {
    switch (ref.kind) {
      case 'Role': {
        const r = bindingNamespace ? this.role(bindingNamespace, ref.name) : undefined;
        if (!r) {
          const res = style === 'lister' ? 'role' : 'roles';
          return { error: new ResolutionError(`${res}.${RBAC_GROUP} ${goQuote(ref.name)} not found`, 'notfound', 'roles', ref.name) };
        }
        return { rules: r.rules };
      }
      case 'ClusterRole': {
        const r = this.clusterRole(ref.name);
        if (!r) {
          const res = style === 'lister' ? 'clusterrole' : 'clusterroles';
          return { error: new ResolutionError(`${res}.${RBAC_GROUP} ${goQuote(ref.name)} not found`, 'notfound', 'clusterroles', ref.name) };
        }
        return { rules: r.rules };
      }
      default:
        return { error: new ResolutionError(`unsupported role reference kind: ${goQuote(ref.kind)}`, 'other') };
    }
  }

  /**
   * Visit every rule that applies to the user in the namespace ('' = cluster scope only), with its
   * source, and every resolution error. The visitor returns false to stop.
   */
  visitRulesFor(
    user: UserInfo,
    namespace: string,
    visit: (source: RuleSource | undefined, rule: PolicyRule | undefined, err: ResolutionError | undefined) => boolean,
    style: NotFoundStyle = 'lister',
  ): void {
    for (const b of this.bindingsFor(user, namespace, style)) {
      if (b.err) {
        if (!visit(undefined, undefined, b.err)) return;
        continue;
      }
      for (const rule of b.rules!) if (!visit(b.source, rule, undefined)) return;
    }
  }

  /**
   * The bindings that apply to a user in a namespace, in visiting order, each with its role's
   * rules (or the error resolving it). Kept per user, groups and namespace until the next change
   * of any RBAC object (least recently used dropped first).
   */
  private bindingsFor(user: UserInfo, namespace: string, style: NotFoundStyle): readonly BindingVisit[] {
    if (this.cacheGeneration !== this.generation) {
      this.cache.clear();
      this.cacheGeneration = this.generation;
    }
    const key = `${style}\u0000${namespace}\u0000${user.name}\u0000${user.groups.join('\u0000')}`;
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    const out = this.computeBindings(user, namespace, style);
    if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, out);
    return out;
  }

  private computeBindings(user: UserInfo, namespace: string, style: NotFoundStyle): BindingVisit[] {
    const out: BindingVisit[] = [];
    for (const name of this.crbIndex.candidates(user)) {
      const b = this.clusterRoleBindings.get(name);
      if (!b) continue;
      const subject = b.subjects.find((s) => subjectApplies(user, s, ''));
      if (!subject) continue;
      const got = this.getRoleReferenceRules(b.roleRef, '', style);
      if ('error' in got) out.push({ err: got.error });
      else out.push({ rules: got.rules, source: new BindingSource(() => `ClusterRoleBinding ${goQuote(b.name)} of ${b.roleRef.kind} ${goQuote(b.roleRef.name)} to ${describeSubject(subject, '')}`) });
    }
    if (!namespace) return out;
    const idx = this.rbIndex.get(namespace);
    const bindings = this.roleBindings.get(namespace);
    if (!idx || !bindings) return out;
    for (const name of idx.candidates(user)) {
      const b = bindings.get(name);
      if (!b) continue;
      const subject = b.subjects.find((s) => subjectApplies(user, s, namespace));
      if (!subject) continue;
      const got = this.getRoleReferenceRules(b.roleRef, namespace, style);
      if ('error' in got) out.push({ err: got.error });
      else
        out.push({
          rules: got.rules,
          source: new BindingSource(() => `RoleBinding ${goQuote(`${b.name}/${b.namespace}`)} of ${b.roleRef.kind} ${goQuote(b.roleRef.name)} to ${describeSubject(subject, namespace)}`),
        });
    }
    return out;
  }

  /** every rule that applies to the user in the namespace, and the resolution errors met */
  rulesFor(user: UserInfo, namespace: string, style: NotFoundStyle = 'lister'): { rules: PolicyRule[]; errors: ResolutionError[] } {
    const rules: PolicyRule[] = [];
    const errors: ResolutionError[] = [];
    this.visitRulesFor(
      user,
      namespace,
      (_s, rule, err) => {
        if (rule) rules.push(rule);
        if (err) errors.push(err);
        return true;
      },
      style,
    );
    return { rules, errors };
  }

  /** counts, for tests and metrics */
  size(): { clusterRoles: number; roles: number; clusterRoleBindings: number; roleBindings: number } {
    let roles = 0;
    for (const m of this.roles.values()) roles += m.size;
    let rbs = 0;
    for (const m of this.roleBindings.values()) rbs += m.size;
    return { clusterRoles: this.clusterRoles.size, roles, clusterRoleBindings: this.clusterRoleBindings.size, roleBindings: rbs };
  }
}
