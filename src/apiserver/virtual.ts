// Virtual resources: operations rather than stored objects. Access reviews and self-subject
// reviews answer from the request's user and the authorizer; a Binding assigns a pod to a node;
// an Eviction deletes a pod if its disruption budget allows it;
// component statuses report the health of the control plane's parts.
import { setStatusCondition } from '../machinery/conditions.js';
import { errors, field, StatusError, type FieldError } from '../machinery/errors.js';
import type { KindDecl } from '../schema/model.js';
import type { Authorizer, UserInfo } from './authz.js';
import { accessReviewStatus, reviewAttributes, reviewSubject, rulesReviewStatus } from './rbac/index.js';
import { validateFieldSelectorRequirement, validateLabelSelectorRequirement } from '../schema/validation/util.js';
import { admissionOf, decodeBody, dryRunOf, ensureRequestNamespace, fieldValidationOf, listOptionNumbers, normalizeBody, outputChoice, readBody, selection, validateListQuery, type RequestBase } from './handlers.js';
import { partialObjectMetadata, POM_TYPE, writeListObjects, writeObject } from './encode.js';
import type { ResourceStore } from './registry/store.js';
import { rfc3339 } from '../machinery/time.js';
import { admissionAttributes } from './admission/wiring.js';
import { fromLabelSelector, matchLabels } from '../machinery/selectors.js';

export interface VirtualContext {
  authorizer: Authorizer;
  pods: ResourceStore;
  /** policy/v1 PodDisruptionBudgets, which an eviction asks */
  pdbs: ResourceStore;
  authenticator?: import('./authn/index.js').RequestAuthenticator;
  /** health probes of the control plane's components, by component name */
  components: () => Promise<{ name: string; healthy: boolean; message: string; error?: string }[]>;
}

function userInfoOf(u: UserInfo): any {
  const out: any = { username: u.name };
  if (u.uid) out.uid = u.uid;
  if (u.groups.length) out.groups = u.groups;
  if (u.extra && Object.keys(u.extra).length) out.extra = u.extra;
  return out;
}

async function bodyOf(r: RequestBase, kind: KindDecl): Promise<any> {
  const body = await readBody(r.req);
  return normalizeBody(r, decodeBody(r, body, kind), kind, fieldValidationOf(r.query));
}

function reviewStatus(ctx: VirtualContext, user: UserInfo, spec: any, namespaceOverride?: string): any {
  return accessReviewStatus(ctx.authorizer, reviewAttributes(user, spec, namespaceOverride));
}

/**
 * The checks of an access review (Kubernetes' authorization validation): one of resource and
 * non-resource attributes; a user or group to ask about (not for the self review); selectors
 * well formed (an operator Kubernetes does not know is let through for newer clients, and left
 * out of the check); metadata empty, but for a local review's namespace, which its attributes
 * must name.
 */
function validateReview(kind: string, obj: any, opts: { needUser: boolean; namespace?: string }): void {
  const spec = obj?.spec;
  const errs: FieldError[] = [];
  const ra = spec?.resourceAttributes;
  const nra = spec?.nonResourceAttributes;
  if (ra && nra) errs.push(field.invalid('spec.nonResourceAttributes', nra, 'cannot be specified in combination with resourceAttributes'));
  // (Kubernetes reports the absent nonResourceAttributes as the bad value: "null")
  if (!ra && !nra) errs.push(field.invalid('spec.resourceAttributes', 'null', 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  if (opts.needUser && !spec?.user && !(spec?.groups ?? []).length) errs.push(field.invalid('spec.user', '', 'at least one of user or group must be specified'));
  if (ra) {
    selectorAttributeErrors(errs, ra.fieldSelector, 'spec.resourceAttributes.fieldSelector', (r, p) => validateFieldSelectorRequirement(r, p, true));
    selectorAttributeErrors(errs, ra.labelSelector, 'spec.resourceAttributes.labelSelector', (r, p) => validateLabelSelectorRequirement(r, p, false, true));
  }
  const local = opts.namespace !== undefined;
  if (!metadataEmpty(obj?.metadata, local)) errs.push(field.invalid('metadata', obj.metadata, local ? 'must be empty except for namespace' : 'must be empty'));
  if (local) {
    if (ra && (ra.namespace ?? '') !== opts.namespace) errs.push(field.invalid('spec.resourceAttributes.namespace', ra.namespace ?? '', 'must match metadata.namespace'));
    if (nra) errs.push(field.invalid('spec.nonResourceAttributes', nra, 'disallowed on this kind of request'));
  }
  if (errs.length) throw errors.invalid({ group: 'authorization.k8s.io', name: kind }, '', errs);
}

function selectorAttributeErrors(errs: FieldError[], sel: any, path: string, requirement: (r: any, path: string) => FieldError[]): void {
  if (sel == null) return;
  const raw = typeof sel.rawSelector === 'string' ? sel.rawSelector : '';
  const reqs: any[] = Array.isArray(sel.requirements) ? sel.requirements : [];
  if (raw && reqs.length) errs.push(field.invalid(`${path}.rawSelector`, raw, 'may not specified at the same time as requirements'));
  if (!raw && !reqs.length) errs.push(field.required(`${path}.requirements`, `when ${path} is specified, requirements or rawSelector is required`));
  reqs.forEach((r, i) => errs.push(...requirement(r, `${path}.requirements[${i}]`)));
}

/** whether a review's metadata is empty (managedFields aside, and a local review's namespace) */
function metadataEmpty(meta: any, local: boolean): boolean {
  if (meta == null) return true;
  for (const [k, v] of Object.entries(meta)) {
    if (k === 'managedFields' || (local && k === 'namespace')) continue;
    if (v == null || v === '' || v === 0 || (Array.isArray(v) && v.length === 0)) continue;
    if (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) continue;
    return false;
  }
  return true;
}

/** POST of a virtual kind: answer 201 with the request object and its status */
export async function handleVirtualCreate(r: RequestBase, kind: KindDecl, ctx: VirtualContext): Promise<void> {
  const user = r.user;
  if (!user) throw errors.unauthorized();
  // these kinds have no Table form (Table-only Accept is 406, as in Kubernetes); the metadata-only form they have
  const choice = outputChoice(r, false, { table: false, kind });
  dryRunOf(r.query);
  const obj = await bodyOf(r, kind);
  // as for any create: the object's namespace is the URL's (a cluster-scoped kind's is cleared)
  ensureRequestNamespace(kind, obj, r.info.namespace);
  const reply = (o: any) =>
    choice.transform === 'PartialObjectMetadata' ? writeObject(r.res, 201, partialObjectMetadata(o, choice.transformVersion), choice, POM_TYPE) : writeObject(r.res, 201, o, choice, kind.type);
  switch (`${kind.group}/${kind.kind}`) {
    case 'authentication.k8s.io/SelfSubjectReview':
      obj.metadata = { ...(obj.metadata ?? {}), creationTimestamp: rfc3339(Date.now()) };
      obj.status = { userInfo: userInfoOf(user) };
      return reply(obj);
    case 'authentication.k8s.io/TokenReview': {
      if (!obj.spec?.token) throw errors.invalid({ group: 'authentication.k8s.io', name: 'TokenReview' }, '', [field.required('spec.token', '')]);
      obj.status = ctx.authenticator ? await ctx.authenticator.authenticateToken(obj.spec.token, obj.spec.audiences ?? []) : { user: {} };
      return reply(obj);
    }
    case 'authorization.k8s.io/SelfSubjectAccessReview':
      validateReview(kind.kind, obj, { needUser: false });
      obj.status = reviewStatus(ctx, user, obj.spec);
      return reply(obj);
    case 'authorization.k8s.io/SubjectAccessReview': {
      validateReview(kind.kind, obj, { needUser: true });
      obj.status = reviewStatus(ctx, reviewSubject(obj.spec), obj.spec);
      return reply(obj);
    }
    case 'authorization.k8s.io/LocalSubjectAccessReview': {
      // the namespace of the attributes must be the review's own (the URL's), even when left out
      validateReview(kind.kind, obj, { needUser: true, namespace: r.info.namespace });
      obj.status = reviewStatus(ctx, reviewSubject(obj.spec), obj.spec, r.info.namespace);
      return reply(obj);
    }
    case 'authorization.k8s.io/SelfSubjectRulesReview': {
      const ns = obj.spec?.namespace ?? '';
      if (!ns) throw errors.badRequest('no namespace on request');
      obj.status = rulesReviewStatus(ctx.authorizer, user, ns);
      return reply(obj);
    }
    case '/Binding':
      return bind(r, obj, ctx, r.info.namespace, obj.metadata?.name ?? '');
  }
  throw errors.methodNotSupported({ group: kind.group, name: kind.resource }, 'create');
}

/**
 * The admission of a create on a subresource (a pod's binding or eviction, a service account's
 * token), whose object is the request's body: the mutating plugins, then the validating ones
 * (`validate` false: the caller runs them, as TokenRequest's REST runs them after its own validation).
 */
export async function admitSubresourceCreate(
  r: RequestBase,
  kind: KindDecl,
  namespace: string,
  name: string,
  subresource: string,
  object: any,
  dryRun: boolean,
): Promise<{ validate(object: any): Promise<void> }> {
  const chain = r.ctx.admission;
  const a = chain ? admissionOf(r, {}, name) : undefined;
  if (!chain || !a) return { validate: async () => {} };
  const attrsOf = (o: any) => admissionAttributes(kind, { ...a.request, namespace, subresource, operation: 'CREATE', object: o, options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', ...a.request.options }, dryRun });
  await chain.mutate(attrsOf(object));
  return {
    validate: async (o) => {
      await chain.validate(attrsOf(o));
    },
  };
}

async function admitPodSubresourceCreate(r: RequestBase, ctx: VirtualContext, namespace: string, name: string, subresource: string, object: any, dryRun: boolean): Promise<void> {
  await (await admitSubresourceCreate(r, ctx.pods.kind, namespace, name, subresource, object, dryRun)).validate(object);
}

/** POST pods/<name>/binding, or a Binding: assign an unassigned pod to a node */
export async function bind(r: RequestBase, binding: any, ctx: VirtualContext, namespace: string, name: string): Promise<void> {
  const dryRun = dryRunOf(r.query);
  const target = binding?.target ?? {};
  // ValidatePodBinding (Kubernetes answers its errors as a plain 500: a 422 here, the client's error)
  const errs = [];
  if (target.kind && target.kind !== 'Node') errs.push(field.notSupported('target.kind', target.kind, ['Node', '<empty>']));
  if (!target.name) errs.push(field.required('target.name', ''));
  if (errs.length) throw errors.invalid({ group: '', name: 'Binding' }, name, errs);
  // (a Binding without a name names no pod: the store's key function refuses it)
  if (!name) throw errors.badRequest('Name parameter required.');
  // a binding is a create on pods/binding, whose object is the Binding
  await admitPodSubresourceCreate(r, ctx, namespace, name, 'binding', binding, dryRun);
  await ctx.pods.guaranteedUpdate(
    namespace,
    name,
    (pod) => {
      // the Binding's uid and resourceVersion are preconditions of the write (setPodHostAndAnnotations)
      const pre = binding?.metadata ?? {};
      const storageConflict = (what: string, want: string, have: string) =>
        errors.conflict(
          { group: '', name: 'pods' },
          name,
          `StorageError: invalid object, Code: 4, Key: ${ctx.pods.key(namespace, name)}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: ${what} in precondition: ${want}, ${what} in object meta: ${have}`,
        );
      if (pre.uid && pre.uid !== pod.metadata.uid) throw storageConflict('UID', pre.uid, pod.metadata.uid);
      if (pre.resourceVersion && pre.resourceVersion !== pod.metadata.resourceVersion) throw storageConflict('ResourceVersion', pre.resourceVersion, pod.metadata.resourceVersion);
      if (pod.metadata.deletionTimestamp) {
        throw errors.conflict({ group: '', name: 'pods/binding' }, name, `pod ${name} is being deleted, cannot be assigned to a host`);
      }
      if (pod.spec?.nodeName) {
        throw errors.conflict({ group: '', name: 'pods/binding' }, name, `pod ${name} is already assigned to node "${pod.spec.nodeName}"`);
      }
      if ((pod.spec?.schedulingGates ?? []).length > 0) {
        throw errors.conflict({ group: '', name: 'pods/binding' }, name, `pod ${name} has non-empty .spec.schedulingGates`);
      }
      pod.spec.nodeName = target.name;
      const ann = binding.metadata?.annotations;
      if (ann && Object.keys(ann).length) pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), ...ann };
      pod.status ??= {};
      const conds: any[] = pod.status.conditions ?? [];
      const now = rfc3339(Date.now());
      const i = conds.findIndex((c) => c.type === 'PodScheduled');
      const sched = { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: now };
      if (i >= 0) {
        if (conds[i].status !== 'True') conds[i] = sched;
      } else conds.push(sched);
      pod.status.conditions = conds;
      return pod;
    },
    { dryRun, main: false, subresource: 'binding' },
  );
  writeObject(r.res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }, outputChoice(r, false), 'io.k8s.apimachinery.pkg.apis.meta.v1.Status');
}

/** GET of component statuses (deprecated in Kubernetes, still used by operators) */
export async function handleComponentStatuses(r: RequestBase, kind: KindDecl, ctx: VirtualContext): Promise<void> {
  const choice = outputChoice(r, !r.info.name);
  let sel: ReturnType<typeof selection> | undefined;
  if (!r.info.name) {
    // a list's options are decoded and checked as every list's are (ListResource): a bad one is a 400
    sel = selection(kind, r.query);
    listOptionNumbers(r.query);
    validateListQuery(r.query);
  }
  r.warnings.push('v1 ComponentStatus is deprecated in v1.19+');
  const items = (await ctx.components()).map((c) => {
    const cond: any = { type: 'Healthy', status: c.healthy ? 'True' : 'False', message: c.message };
    if (c.error) cond.error = c.error;
    return { kind: 'ComponentStatus', apiVersion: 'v1', metadata: { name: c.name }, conditions: [cond] };
  });
  if (r.info.name) {
    const one = items.find((i) => i.metadata.name === r.info.name);
    if (!one) throw errors.notFound({ group: '', name: 'componentstatuses' }, r.info.name);
    writeObject(r.res, 200, one, choice, 'io.k8s.api.core.v1.ComponentStatus');
    return;
  }
  // the selectors filter as on any list (the REST storage's matchesPredicate): a component status
  // has no labels, and its fields are metadata.name and an empty metadata.namespace
  const kept = items.filter((i) => {
    if (sel?.labels.length && !matchLabels(sel.labels, undefined)) return false;
    for (const t of sel?.fields ?? []) {
      const v = t.field === 'metadata.name' ? i.metadata.name : '';
      if ((v === t.value) !== (t.op === '=')) return false;
    }
    return true;
  });
  writeListObjects(r.res, kind, kept, choice);
}

export { StatusError };

// ---- eviction ---------------------------------------------------------------------------------

/** StatusCause type of kube-apiserver's eviction refusals (policy/v1 DisruptionBudgetCause) */
const DISRUPTION_BUDGET_CAUSE = 'DisruptionBudget';
/** more pods than this waiting in a budget's disruptedPods refuse further evictions (Kubernetes' MaxDisruptedPodSize) */
const MAX_DISRUPTED_PODS = 2000;
/** attempts at a conflicted write before the eviction gives up (Kubernetes' EvictionsRetry: 5 steps) */
const EVICTION_ATTEMPTS = 5;

function tooManyRequests(message: string, retryAfterSeconds: number, cause: string): StatusError {
  const details: any = { causes: [{ reason: DISRUPTION_BUDGET_CAUSE, message: cause }] };
  if (retryAfterSeconds > 0) details.retryAfterSeconds = retryAfterSeconds;
  return new StatusError(429, 'TooManyRequests', message, details, retryAfterSeconds > 0 ? { 'Retry-After': String(retryAfterSeconds) } : undefined);
}

/** the disruption budget has not yet been looked at by its controller (or changed since) */
function budgetInProcess(name: string): StatusError {
  return tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10, `The disruption budget ${name} is still being processed by the server.`);
}

function isConflict(e: unknown): boolean {
  return e instanceof StatusError && e.code === 409;
}

/** a pod that is Ready (its Ready condition True): what a disruption budget counts as healthy */
function podReady(pod: any): boolean {
  return (pod.status?.conditions ?? []).some((c: any) => c?.type === 'Ready' && c.status === 'True');
}

/** the disruption budgets of the pod's namespace whose selector (valid, not empty) selects it */
function budgetsOf(ctx: VirtualContext, pod: any): any[] {
  const out = [];
  for (const e of ctx.pdbs.cacher.list({ prefix: ctx.pdbs.scopePrefix(pod.metadata.namespace) }).items) {
    const sel = e.obj.spec?.selector;
    let reqs;
    try {
      reqs = fromLabelSelector(sel);
    } catch {
      continue; // an invalid selector selects nothing
    }
    // a nil or empty selector selects nothing, not everything
    if (!reqs || reqs.length === 0) continue;
    if (matchLabels(reqs, pod.metadata.labels ?? {})) out.push(e.obj);
  }
  return out;
}

/**
 * POST pods/<name>/eviction: API-initiated eviction, as kube-apiserver's eviction subresource does
 * it. A pod that is not running (Pending, Succeeded, Failed) or already being deleted is deleted
 * at once. Otherwise the pod's PodDisruptionBudget decides: with none, the pod is deleted; with
 * more than one, the eviction is refused; with one, it must allow a disruption (its status, kept
 * by the disruption controller, says how many), which the eviction takes by decrementing
 * disruptionsAllowed and naming the pod in disruptedPods, or it is refused with 429. An unready
 * pod may go without taking a disruption when the budget's healthy pods suffice (or its
 * unhealthyPodEvictionPolicy is AlwaysAllow). The pod gets the condition DisruptionTarget before
 * it is deleted with the eviction's DeleteOptions. The answer is a Success Status with code 201.
 */
export async function evict(r: RequestBase, eviction: any, ctx: VirtualContext, namespace: string, name: string): Promise<void> {
  if ((eviction?.metadata?.name ?? '') !== name) throw errors.badRequest('name in URL does not match name in Eviction object');
  // the dry run of the request and of the eviction's DeleteOptions: one, or both the same
  const urlDry = r.query.getAll('dryRun');
  const del: any = { ...(eviction.deleteOptions ?? {}) };
  const bodyDry: string[] = Array.isArray(del.dryRun) ? del.dryRun : [];
  if (urlDry.length && bodyDry.length && urlDry.join('\u0000') !== bodyDry.join('\u0000')) {
    // (propagateDryRun's words; Kubernetes answers them as a plain 500: the client's error, so a 400 here)
    throw errors.badRequest(`Non-matching dry-run options in request and content: [${urlDry.join(' ')}] and [${bodyDry.join(' ')}]`);
  }
  const dryRun = dryRunOf(r.query) || bodyDry.includes('All');
  // an eviction is a create on pods/eviction, whose object is the Eviction
  await admitPodSubresourceCreate(r, ctx, namespace, name, 'eviction', eviction, dryRun);
  const clientRV: string | undefined = del.preconditions?.resourceVersion;
  const deletePod = async (enforceRV: string | undefined): Promise<void> => {
    const preconditions = { ...(del.preconditions ?? {}) };
    if (enforceRV !== undefined && clientRV === undefined) preconditions.resourceVersion = enforceRV;
    if (!dryRun) {
      // the condition that tells the pod's owners why it goes (Kubernetes' PodDisruptionConditions)
      const updated = await ctx.pods.guaranteedUpdate(
        namespace,
        name,
        (pod) => {
          // (addConditionAndDeletePod's words, as BeforeDelete words them, for the resource "Pod")
          if (preconditions.uid && pod.metadata.uid !== preconditions.uid) {
            throw errors.conflict(
              { group: '', name: 'Pod' },
              name,
              `the UID in the precondition (${preconditions.uid}) does not match the UID in record (${pod.metadata.uid}). The object might have been deleted and then recreated`,
            );
          }
          if (preconditions.resourceVersion !== undefined && pod.metadata.resourceVersion !== preconditions.resourceVersion) {
            throw errors.conflict(
              { group: '', name: 'Pod' },
              name,
              `the ResourceVersion in the precondition (${preconditions.resourceVersion}) does not match the ResourceVersion in record (${pod.metadata.resourceVersion}). The object might have been modified`,
            );
          }
          pod.status ??= {};
          const conds: any[] = pod.status.conditions ?? [];
          const i = conds.findIndex((c) => c?.type === 'DisruptionTarget');
          const cond = { type: 'DisruptionTarget', status: 'True', lastProbeTime: null, lastTransitionTime: rfc3339(Date.now()), reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' };
          if (i >= 0 && conds[i].status === 'True' && conds[i].reason === cond.reason && conds[i].message === cond.message) return pod;
          if (i >= 0) conds[i] = cond;
          else conds.push(cond);
          pod.status.conditions = conds;
          return pod;
        },
        { dryRun: false, main: false, subresource: 'status' },
      );
      // the condition's own write moved the resourceVersion the precondition named: the delete
      // expects the pod as that write left it
      if (preconditions.resourceVersion !== undefined) preconditions.resourceVersion = updated?.metadata?.resourceVersion;
    }
    await ctx.pods.delete(namespace, name, {
      dryRun,
      gracePeriodSeconds: del.gracePeriodSeconds,
      preconditions: Object.keys(preconditions).length ? preconditions : undefined,
      propagationPolicy: del.propagationPolicy,
      orphanDependents: del.orphanDependents,
    });
  };
  const success = () =>
    writeObject(r.res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }, outputChoice(r, false), 'io.k8s.apimachinery.pkg.apis.meta.v1.Status');

  // a pod that is not running, or already going, is deleted without asking any budget
  let pod: any;
  for (let attempt = 1; ; attempt++) {
    const e = ctx.pods.get(namespace, name);
    if (!e) throw errors.notFound({ group: '', name: 'pods' }, name);
    pod = e.obj;
    const phase = pod.status?.phase;
    const ignoreBudget = phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || !!pod.metadata.deletionTimestamp;
    if (!ignoreBudget) break;
    try {
      // a terminal pod has disrupted already; any other pod is deleted only as it was read
      await deletePod(phase === 'Succeeded' || phase === 'Failed' ? undefined : pod.metadata.resourceVersion);
      return success();
    } catch (err) {
      if (!isConflict(err) || clientRV !== undefined || attempt >= EVICTION_ATTEMPTS) throw err;
    }
  }

  const budgets = budgetsOf(ctx, pod);
  if (budgets.length > 1) {
    // (EvictionREST returns this Status as its object, not as an error: the create handler writes
    // it with 201, the body's code saying 500)
    writeObject(
      r.res,
      201,
      { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.', code: 500 },
      outputChoice(r, false),
      'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
    );
    return;
  }
  let enforceRV: string | undefined;
  if (budgets.length === 1) {
    const pdb = budgets[0];
    const st = pdb.status ?? {};
    const unready = !podReady(pod);
    if (unready && (pdb.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow' || ((st.currentHealthy ?? 0) >= (st.desiredHealthy ?? 0) && (st.desiredHealthy ?? 0) > 0))) {
      // the unready pod does not count toward the budget: it goes, if it is still unready
      enforceRV = pod.metadata.resourceVersion;
    } else {
      await takeDisruption(ctx, pdb.metadata.namespace, pdb.metadata.name, name, dryRun);
    }
  }
  try {
    await deletePod(enforceRV);
  } catch (err) {
    // the unready pod changed since: it may have become ready, so the client tries again
    if (isConflict(err) && enforceRV !== undefined && clientRV === undefined) throw budgetInProcess(budgets[0].metadata.name);
    throw err;
  }
  return success();
}

/** takes one disruption from the budget (disruptionsAllowed - 1, the pod in disruptedPods), or refuses */
async function takeDisruption(ctx: VirtualContext, namespace: string, name: string, podName: string, dryRun: boolean): Promise<void> {
  const check = (pdb: any): void => {
    const st = pdb.status ?? {};
    if ((st.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0)) throw budgetInProcess(name);
    const allowed = st.disruptionsAllowed ?? 0;
    if (allowed < 0) throw errors.forbidden({ group: 'policy', name: 'poddisruptionbudget' }, name, 'pdb disruptions allowed is negative');
    if (Object.keys(st.disruptedPods ?? {}).length > MAX_DISRUPTED_PODS) {
      throw errors.forbidden({ group: 'policy', name: 'poddisruptionbudget' }, name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
    }
    if (allowed === 0) {
      throw tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0, `The disruption budget ${name} needs ${st.desiredHealthy ?? 0} healthy pods and has ${st.currentHealthy ?? 0} currently`);
    }
  };
  if (dryRun) {
    const e = ctx.pdbs.get(namespace, name);
    if (!e) throw errors.notFound({ group: 'policy', name: 'poddisruptionbudgets' }, name);
    check(e.obj);
    return;
  }
  for (let attempt = 1; ; attempt++) {
    try {
      await ctx.pdbs.guaranteedUpdate(
        namespace,
        name,
        (pdb) => {
          check(pdb);
          pdb.status.disruptionsAllowed -= 1;
          if (pdb.status.disruptionsAllowed === 0) {
            // as the disruption controller sets it when no disruption is left (UpdateDisruptionAllowedCondition)
            pdb.status.conditions = setStatusCondition(pdb.status.conditions, { type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods', message: '', observedGeneration: pdb.status.observedGeneration });
          }
          pdb.status.disruptedPods = { ...(pdb.status.disruptedPods ?? {}), [podName]: rfc3339(Date.now()) };
          return pdb;
        },
        { dryRun: false, main: false, subresource: 'status' },
      );
      return;
    } catch (err) {
      if (!isConflict(err) || attempt >= EVICTION_ATTEMPTS) throw err;
    }
  }
}
