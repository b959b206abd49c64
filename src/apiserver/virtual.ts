// Virtual resources: operations rather than stored objects. Access reviews and self-subject
// reviews answer from the request's user and the authorizer; a Binding assigns a pod to a node;
// component statuses report the health of the control plane's parts.
import { errors, field, StatusError, type FieldError } from '../machinery/errors.js';
import type { KindDecl } from '../schema/model.js';
import type { Authorizer, UserInfo } from './authz.js';
import { accessReviewStatus, reviewAttributes, rulesReviewStatus } from './rbac/index.js';
import { admissionOf, decodeBody, dryRunOf, fieldValidationOf, normalizeBody, outputChoice, readBody, type RequestBase } from './handlers.js';
import { partialObjectMetadata, POM_TYPE, writeListObjects, writeObject } from './encode.js';
import type { ResourceStore } from './registry/store.js';
import { rfc3339 } from './registry/store.js';
import { admissionAttributes } from './admission/wiring.js';

export interface VirtualContext {
  authorizer: Authorizer;
  pods: ResourceStore;
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

function validateReviewSpec(kind: string, spec: any, needUser: boolean, more: (errs: FieldError[]) => void = () => {}): void {
  const errs: FieldError[] = [];
  const ra = spec?.resourceAttributes;
  const nra = spec?.nonResourceAttributes;
  // (Kubernetes reports the absent nonResourceAttributes as the bad value: "null")
  if (!ra && !nra) errs.push(field.invalid('spec.resourceAttributes', 'null', 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  if (ra && nra) errs.push(field.invalid('spec.nonResourceAttributes', nra, 'cannot be specified in combination with resourceAttributes'));
  if (needUser && !spec?.user && !(spec?.groups ?? []).length) errs.push(field.invalid('spec.user', '', 'at least one of user or group must be specified'));
  more(errs);
  if (errs.length) throw errors.invalid({ group: 'authorization.k8s.io', name: kind }, '', errs);
}

/** POST of a virtual kind: answer 201 with the request object and its status */
export async function handleVirtualCreate(r: RequestBase, kind: KindDecl, ctx: VirtualContext): Promise<void> {
  const user = r.user;
  if (!user) throw errors.unauthorized();
  // these kinds have no Table form (Table-only Accept is 406, as in Kubernetes); the metadata-only form they have
  const choice = outputChoice(r, false, { table: false });
  dryRunOf(r.query);
  const obj = await bodyOf(r, kind);
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
      validateReviewSpec(kind.kind, obj.spec, false);
      obj.status = reviewStatus(ctx, user, obj.spec);
      return reply(obj);
    case 'authorization.k8s.io/SubjectAccessReview': {
      validateReviewSpec(kind.kind, obj.spec, true);
      const subject: UserInfo = { name: obj.spec.user ?? '', uid: obj.spec.uid, groups: obj.spec.groups ?? [], extra: obj.spec.extra };
      obj.status = reviewStatus(ctx, subject, obj.spec);
      return reply(obj);
    }
    case 'authorization.k8s.io/LocalSubjectAccessReview': {
      // the namespace of the attributes must be the review's own (the URL's), even when left out
      validateReviewSpec(kind.kind, obj.spec, true, (errs) => {
        const ra = obj.spec?.resourceAttributes;
        if (ra && (ra.namespace ?? '') !== r.info.namespace) errs.push(field.invalid('spec.resourceAttributes.namespace', ra.namespace ?? '', 'must match metadata.namespace'));
        if (obj.spec?.nonResourceAttributes) errs.push(field.invalid('spec.nonResourceAttributes', obj.spec.nonResourceAttributes, 'disallowed on this kind of request'));
      });
      obj.metadata = { ...(obj.metadata ?? {}), namespace: r.info.namespace };
      const subject: UserInfo = { name: obj.spec.user ?? '', uid: obj.spec.uid, groups: obj.spec.groups ?? [], extra: obj.spec.extra };
      obj.status = reviewStatus(ctx, subject, obj.spec, r.info.namespace);
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

/** POST pods/<name>/binding, or a Binding: assign an unassigned pod to a node */
export async function bind(r: RequestBase, binding: any, ctx: VirtualContext, namespace: string, name: string): Promise<void> {
  const dryRun = dryRunOf(r.query);
  const target = binding?.target ?? {};
  const errs = [];
  if (!name) errs.push(field.required('metadata.name', 'name or generateName is required'));
  if (target.kind && target.kind !== 'Node') errs.push(field.notSupported('target.kind', target.kind, ['Node', '<empty>']));
  if (!target.name) errs.push(field.required('target.name', ''));
  if (errs.length) throw errors.invalid({ group: '', name: 'Binding' }, name, errs);
  const chain = r.ctx.admission;
  if (chain) {
    // a binding is a create on pods/binding, whose object is the Binding
    const a = admissionOf(r, {}, name);
    if (a) {
      const attrs = admissionAttributes(ctx.pods.kind, { ...a.request, namespace, subresource: 'binding', operation: 'CREATE', object: binding, options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', ...a.request.options }, dryRun });
      await chain.mutate(attrs);
      await chain.validate(attrs);
    }
  }
  await ctx.pods.guaranteedUpdate(
    namespace,
    name,
    (pod) => {
      if (pod.metadata.deletionTimestamp) {
        throw errors.conflict({ group: '', name: 'pods/binding' }, name, `pod ${name} is being deleted, cannot be assigned to a host`);
      }
      if (pod.spec?.nodeName) {
        throw errors.conflict({ group: '', name: 'pods/binding' }, name, `pod ${name} is already assigned to node "${pod.spec.nodeName}"`);
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
  writeListObjects(r.res, kind, items, choice);
}

export { StatusError };
