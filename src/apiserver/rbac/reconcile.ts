// Reconciliation of the bootstrap policy, as kube-apiserver's `rbac/bootstrap-roles` post-start
// hook runs it on every start:
//  - a missing role or binding is created;
//  - an existing role gains the permissions of the policy it lacks (extra permissions are kept),
//    the labels and annotations of the policy it lacks (its own values win), and the
//    aggregation selectors it lacks (an aggregationRule the policy does not have is removed);
//  - an existing binding gains the subjects it lacks; one whose roleRef differs is deleted and
//    created again (a roleRef cannot change);
//  - an object annotated `rbac.authorization.kubernetes.io/autoupdate: "false"` is left alone.
// Order: cluster roles, cluster role bindings, roles, role bindings.
import { copyJSON } from '../../codec/int64.js';
import { StatusError } from '../../machinery/errors.js';
import { bootstrapPolicy, AUTOUPDATE_ANNOTATION, type BootstrapPolicy } from './policy.js';
import { RBAC_GROUP, type RBACResource } from './resolver.js';
import { compactString, covers, normalizeRule, type PolicyRule } from './rules.js';

/** the writes reconciliation needs, over the API server's stores (never dry runs) */
export interface PolicyWriter {
  /** the stored object, or undefined */
  get(resource: RBACResource, namespace: string, name: string): Promise<any | undefined> | any | undefined;
  /** create; throws a StatusError 409 AlreadyExists when it exists */
  create(resource: RBACResource, obj: any): Promise<any>;
  /** update (obj carries the resourceVersion it was read at); throws 409 Conflict or 404 NotFound */
  update(resource: RBACResource, obj: any): Promise<any>;
  /** delete (used when a binding's roleRef changed); a missing object is not an error */
  delete(resource: RBACResource, namespace: string, name: string): Promise<void>;
}

export type ReconcileOperation = 'create' | 'update' | 'recreate' | 'none';

export interface ReconcileResult {
  resource: RBACResource;
  namespace: string;
  name: string;
  operation: ReconcileOperation;
  /** the object opted out (autoupdate "false"): nothing was written */
  protected: boolean;
  missingRules: PolicyRule[];
  missingSubjects: any[];
  /** the object written (or that would have been, when protected) */
  object: any;
}

const clone = <T>(v: T): T => (v === undefined ? v : copyJSON(v));

/** expected first, existing values win */
function mergeMaps(expected: Record<string, string> | undefined, existing: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!expected && !existing) return undefined;
  return { ...(expected ?? {}), ...(existing ?? {}) };
}

function sameMap(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const x = a ?? {};
  const y = b ?? {};
  const kx = Object.keys(x);
  if (kx.length !== Object.keys(y).length) return false;
  for (const k of kx) if (x[k] !== y[k]) return false;
  return true;
}

function stable(v: any): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .filter((k) => v[k] !== undefined && !(Array.isArray(v[k]) && v[k].length === 0))
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

function selectors(role: any): any[] | undefined {
  const s = role?.aggregationRule?.clusterRoleSelectors;
  return role?.aggregationRule ? (Array.isArray(s) ? s : []) : undefined;
}

/** what an existing role must become to hold the expected one (pure) */
export function computeReconciledRole(existing: any, expected: any, isClusterRole: boolean): { operation: ReconcileOperation; protected: boolean; object: any; missingRules: PolicyRule[] } {
  const isProtected = existing?.metadata?.annotations?.[AUTOUPDATE_ANNOTATION] === 'false';
  const obj = clone(existing);
  obj.metadata ??= {};
  let op: ReconcileOperation = 'none';
  const ann = mergeMaps(expected.metadata?.annotations, existing.metadata?.annotations);
  if (ann) obj.metadata.annotations = ann;
  if (!sameMap(ann, existing.metadata?.annotations)) op = 'update';
  const labels = mergeMaps(expected.metadata?.labels, existing.metadata?.labels);
  if (labels) obj.metadata.labels = labels;
  if (!sameMap(labels, existing.metadata?.labels)) op = 'update';

  const existingRules: PolicyRule[] = (Array.isArray(existing.rules) ? existing.rules : []).map(normalizeRule);
  const expectedRules: PolicyRule[] = (Array.isArray(expected.rules) ? expected.rules : []).map(normalizeRule);
  // a restart finds most roles exactly as the policy has them: no coverage check needed then
  const { missing } = JSON.stringify(existingRules) === JSON.stringify(expectedRules) ? { missing: [] as PolicyRule[] } : covers(existingRules, expectedRules);
  if (missing.length) {
    obj.rules = [...(Array.isArray(existing.rules) ? existing.rules : []), ...missing];
    op = 'update';
  }

  if (isClusterRole) {
    const want = selectors(expected);
    const have = selectors(existing);
    if (want === undefined && have !== undefined) {
      delete obj.aggregationRule;
      op = 'update';
    } else if (want !== undefined) {
      const haveKeys = new Set((have ?? []).map(stable));
      const lacking = want.filter((s) => !haveKeys.has(stable(s)));
      if (lacking.length || have === undefined) {
        obj.aggregationRule = { ...(obj.aggregationRule ?? {}), clusterRoleSelectors: [...(have ?? []), ...clone(lacking)] };
        op = 'update';
      }
    }
  }
  return { operation: op, protected: isProtected, object: obj, missingRules: missing };
}

function roleRefKey(b: any): string {
  const r = b?.roleRef ?? {};
  return `${r.apiGroup ?? ''}\u0000${r.kind ?? ''}\u0000${r.name ?? ''}`;
}

function subjectKey(s: any): string {
  return `${s?.kind ?? ''}\u0000${s?.apiGroup ?? ''}\u0000${s?.name ?? ''}\u0000${s?.namespace ?? ''}`;
}

/** what an existing binding must become to hold the expected one (pure) */
export function computeReconciledBinding(existing: any, expected: any): { operation: ReconcileOperation; protected: boolean; object: any; missingSubjects: any[] } {
  const isProtected = existing?.metadata?.annotations?.[AUTOUPDATE_ANNOTATION] === 'false';
  if (roleRefKey(existing) !== roleRefKey(expected)) {
    return { operation: 'recreate', protected: isProtected, object: clone(expected), missingSubjects: clone(expected.subjects ?? []) };
  }
  const obj = clone(existing);
  obj.metadata ??= {};
  let op: ReconcileOperation = 'none';
  const ann = mergeMaps(expected.metadata?.annotations, existing.metadata?.annotations);
  if (ann) obj.metadata.annotations = ann;
  if (!sameMap(ann, existing.metadata?.annotations)) op = 'update';
  const labels = mergeMaps(expected.metadata?.labels, existing.metadata?.labels);
  if (labels) obj.metadata.labels = labels;
  if (!sameMap(labels, existing.metadata?.labels)) op = 'update';
  const have = new Set((existing.subjects ?? []).map(subjectKey));
  const missing = (expected.subjects ?? []).filter((s: any) => !have.has(subjectKey(s)));
  if (missing.length) {
    obj.subjects = [...(existing.subjects ?? []), ...clone(missing)];
    op = 'update';
  }
  return { operation: op, protected: isProtected, object: obj, missingSubjects: missing };
}

function isStatus(e: unknown, code: number): boolean {
  return e instanceof StatusError && e.code === code;
}

async function reconcileOne(writer: PolicyWriter, resource: RBACResource, expected: any): Promise<ReconcileResult> {
  const ns: string = expected.metadata?.namespace ?? '';
  const name: string = expected.metadata.name;
  const isRole = resource === 'roles' || resource === 'clusterroles';
  for (let attempt = 0; ; attempt++) {
    if (attempt > 5) throw new Error(`exceeded maximum attempts reconciling ${resource}.${RBAC_GROUP}/${name}`);
    const existing = await writer.get(resource, ns, name);
    if (!existing) {
      try {
        const created = await writer.create(resource, clone(expected));
        return {
          resource,
          namespace: ns,
          name,
          operation: 'create',
          protected: false,
          missingRules: isRole ? (expected.rules ?? []) : [],
          missingSubjects: isRole ? [] : (expected.subjects ?? []),
          object: created ?? expected,
        };
      } catch (e) {
        if (isStatus(e, 409)) continue; // created meanwhile: reconcile against it
        throw e;
      }
    }
    const base = { resource, namespace: ns, name };
    if (isRole) {
      const r = computeReconciledRole(existing, expected, resource === 'clusterroles');
      const result: ReconcileResult = { ...base, operation: r.operation, protected: r.protected, missingRules: r.missingRules, missingSubjects: [], object: r.object };
      if (r.protected || r.operation === 'none') return result;
      try {
        result.object = (await writer.update(resource, r.object)) ?? r.object;
        return result;
      } catch (e) {
        if (isStatus(e, 409) || isStatus(e, 404)) continue;
        throw e;
      }
    }
    const b = computeReconciledBinding(existing, expected);
    const result: ReconcileResult = { ...base, operation: b.operation, protected: b.protected, missingRules: [], missingSubjects: b.missingSubjects, object: b.object };
    if (b.protected || b.operation === 'none') return result;
    try {
      if (b.operation === 'recreate') {
        await writer.delete(resource, ns, name);
        result.object = (await writer.create(resource, b.object)) ?? b.object;
      } else {
        result.object = (await writer.update(resource, b.object)) ?? b.object;
      }
      return result;
    } catch (e) {
      if (isStatus(e, 409) || isStatus(e, 404)) continue;
      throw e;
    }
  }
}

const SINGULAR: Record<RBACResource, string> = { clusterroles: 'clusterrole', clusterrolebindings: 'clusterrolebinding', roles: 'role', rolebindings: 'rolebinding' };

/** the log line kube-apiserver writes for a result (undefined when nothing happened) */
export function describeResult(r: ReconcileResult): string | undefined {
  const what = `${SINGULAR[r.resource]}.${RBAC_GROUP}/${r.name}${r.namespace ? ` in ${r.namespace}` : ''}`;
  if (r.protected) {
    if (r.operation === 'none') return undefined;
    const missing = r.missingRules.length ? r.missingRules.map(compactString).join(', ') : JSON.stringify(r.missingSubjects);
    return `skipped reconcile-protected ${what} with missing ${r.missingRules.length ? 'permissions' : 'subjects'}: ${missing}`;
  }
  switch (r.operation) {
    case 'create':
      return `created ${what}`;
    case 'update':
      if (r.missingRules.length) return `updated ${what} with additional permissions: ${r.missingRules.map(compactString).join(', ')}`;
      if (r.missingSubjects.length) return `updated ${what} with additional subjects: ${JSON.stringify(r.missingSubjects)}`;
      return `updated ${what}`;
    case 'recreate':
      return `recreated ${what}`;
    default:
      return undefined;
  }
}

/**
 * Create or reconcile the whole bootstrap policy. Every object is tried; the first errors are
 * thrown together at the end (kube-apiserver's hook retries the run until it succeeds, for up to
 * 30 seconds, and fails the server's readiness otherwise).
 */
export async function reconcileBootstrapPolicy(
  writer: PolicyWriter,
  opts: { policy?: BootstrapPolicy; log?: (line: string) => void } = {},
): Promise<ReconcileResult[]> {
  const policy = opts.policy ?? bootstrapPolicy();
  const results: ReconcileResult[] = [];
  const errors: string[] = [];
  // the objects of one resource are reconciled together, so that their writes share the storage's
  // group commits (one after the other, a fresh cluster's ~120 writes took ~120 durable commits);
  // results and log lines keep the policy's order
  const run = async (resource: RBACResource, objs: any[]) => {
    const settled = await Promise.allSettled(objs.map((o) => reconcileOne(writer, resource, o)));
    settled.forEach((s, i) => {
      if (s.status === 'fulfilled') {
        results.push(s.value);
        const line = describeResult(s.value);
        if (line && opts.log) opts.log(line);
      } else {
        errors.push(`unable to reconcile ${SINGULAR[resource]}.${RBAC_GROUP}/${objs[i]?.metadata?.name}: ${(s.reason as Error).message}`);
      }
    });
  };
  await run('clusterroles', policy.clusterRoles);
  await run('clusterrolebindings', policy.clusterRoleBindings);
  await run('roles', policy.roles);
  await run('rolebindings', policy.roleBindings);
  if (errors.length) throw new Error(errors.join('; '));
  return results;
}

/** run reconcileBootstrapPolicy until it succeeds or the time is up (the post-start hook's loop) */
export async function runBootstrapHook(
  writer: PolicyWriter,
  opts: { policy?: BootstrapPolicy; log?: (line: string) => void; timeoutMs?: number; intervalMs?: number } = {},
): Promise<ReconcileResult[]> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    try {
      return await reconcileBootstrapPolicy(writer, opts);
    } catch (e) {
      if (Date.now() >= deadline) throw new Error(`unable to initialize roles: ${(e as Error).message}`);
      opts.log?.(`unable to reconcile the bootstrap policy, retrying: ${(e as Error).message}`);
      await new Promise((r) => setTimeout(r, opts.intervalMs ?? 1000));
    }
  }
}
