// flowcontrol.apiserver.k8s.io/v1: FlowSchema and PriorityLevelConfiguration, with the rules of
// Kubernetes 1.33's pkg/apis/flowcontrol/validation as its registry strategies apply them (a v1
// request, so the limited level's shares are reported as `nominalConcurrencyShares`, and zero
// shares are allowed). Objects arrive defaulted in their v1 form, whose fields are the internal
// type's; the mandatory `exempt` and `catch-all` objects must keep Kubernetes' fixed specs.
import { child, duplicate, forbidden, goPtr, goQuote, GoRepr, idx, invalid, notSupported, required, type Errs } from './errs.js';
import { arr, inclusiveRangeError, isDNS1123Subdomain, isSet, num, obj, str, validateNamespaceName, validateServiceAccountName } from './util.js';

const NAME_EXEMPT = 'exempt';
const NAME_CATCH_ALL = 'catch-all';
const MAX_MATCHING_PRECEDENCE = 10000;
const MAX_QUEUES = 10 * 1000 * 1000;
/** shufflesharding.MaxHashBits */
const MAX_HASH_BITS = 60;
/** the v1beta3 round-trip annotation, which must never reach the internal object */
const PRESERVE_ZERO_SHARES_KEY = 'flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares';

// sets.String.List() orders: sorted
const DISTINGUISHER_METHODS = ['ByNamespace', 'ByUser'];
const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'proxy', 'update', 'watch'];
const SUBJECT_KINDS = ['Group', 'ServiceAccount', 'User'];
const ENABLEMENTS = ['Exempt', 'Limited'];
const LIMIT_RESPONSE_TYPES = ['Queue', 'Reject'];

const NS_ERR_INTRO = "each member of this list must be '*' or a DNS-1123 label; ";

// ---- Go renderings of the internal types (%#v: none of them has a String method) ----

/** a []string as %#v prints it: `[]string(nil)` when absent */
function goStrs(v: unknown): GoRepr {
  if (!Array.isArray(v)) return new GoRepr('[]string(nil)');
  return new GoRepr(`[]string{${v.map((s) => goQuote(str(s))).join(', ')}}`);
}

function goSlice(type: string, v: unknown, item: (x: any) => string): string {
  if (!Array.isArray(v)) return `[]${type}(nil)`;
  return `[]${type}{${v.map((x) => item(obj(x))).join(', ')}}`;
}

function subjectRepr(s: any): string {
  return (
    `flowcontrol.Subject{Kind:${goQuote(str(s.kind))}, User:${goPtr('flowcontrol.UserSubject', isSet(s.user))}, ` +
    `Group:${goPtr('flowcontrol.GroupSubject', isSet(s.group))}, ServiceAccount:${goPtr('flowcontrol.ServiceAccountSubject', isSet(s.serviceAccount))}}`
  );
}

function resourceRuleRepr(r: any): string {
  return (
    `flowcontrol.ResourcePolicyRule{Verbs:${goStrs(r.verbs).repr}, APIGroups:${goStrs(r.apiGroups).repr}, Resources:${goStrs(r.resources).repr}, ` +
    `ClusterScope:${r.clusterScope === true}, Namespaces:${goStrs(r.namespaces).repr}}`
  );
}

function nonResourceRuleRepr(r: any): string {
  return `flowcontrol.NonResourcePolicyRule{Verbs:${goStrs(r.verbs).repr}, NonResourceURLs:${goStrs(r.nonResourceURLs).repr}}`;
}

function policyRulesRepr(r: any): string {
  return (
    `flowcontrol.PolicyRulesWithSubjects{Subjects:${goSlice('flowcontrol.Subject', r.subjects, subjectRepr)}, ` +
    `ResourceRules:${goSlice('flowcontrol.ResourcePolicyRule', r.resourceRules, resourceRuleRepr)}, ` +
    `NonResourceRules:${goSlice('flowcontrol.NonResourcePolicyRule', r.nonResourceRules, nonResourceRuleRepr)}}`
  );
}

/** flowcontrol.FlowSchemaSpec through %#v */
function flowSchemaSpecRepr(spec: any): GoRepr {
  return new GoRepr(
    `flowcontrol.FlowSchemaSpec{PriorityLevelConfiguration:flowcontrol.PriorityLevelConfigurationReference{Name:${goQuote(str(obj(spec.priorityLevelConfiguration).name))}}, ` +
      `MatchingPrecedence:${num(spec.matchingPrecedence)}, DistinguisherMethod:${goPtr('flowcontrol.FlowDistinguisherMethod', isSet(spec.distinguisherMethod))}, ` +
      `Rules:${goSlice('flowcontrol.PolicyRulesWithSubjects', spec.rules, policyRulesRepr)}}`,
  );
}

/** flowcontrol.PriorityLevelConfigurationSpec through %#v */
function priorityLevelSpecRepr(spec: any): GoRepr {
  return new GoRepr(
    `flowcontrol.PriorityLevelConfigurationSpec{Type:${goQuote(str(spec.type))}, ` +
      `Limited:${goPtr('flowcontrol.LimitedPriorityLevelConfiguration', isSet(spec.limited))}, ` +
      `Exempt:${goPtr('flowcontrol.ExemptPriorityLevelConfiguration', isSet(spec.exempt))}}`,
  );
}

// ---- the mandatory objects, compared as apiequality.Semantic.DeepEqual compares the internal specs ----
// (a nil and an empty slice are equal; a nil and a set pointer are not; absent scalars are zero)

const ptrNum = (v: unknown): number | null => (isSet(v) ? num(v) : null);
const strs = (v: unknown): string[] => arr(v).map(str);

function canonicalFlowSchemaSpec(spec: any): unknown {
  return {
    plc: str(obj(spec.priorityLevelConfiguration).name),
    precedence: num(spec.matchingPrecedence),
    dm: isSet(spec.distinguisherMethod) ? { type: str(obj(spec.distinguisherMethod).type) } : null,
    rules: arr(spec.rules).map((r0: any) => {
      const r = obj(r0);
      return {
        subjects: arr(r.subjects).map((s0: any) => {
          const s = obj(s0);
          return {
            kind: str(s.kind),
            user: isSet(s.user) ? { name: str(obj(s.user).name) } : null,
            group: isSet(s.group) ? { name: str(obj(s.group).name) } : null,
            sa: isSet(s.serviceAccount) ? { namespace: str(obj(s.serviceAccount).namespace), name: str(obj(s.serviceAccount).name) } : null,
          };
        }),
        resourceRules: arr(r.resourceRules).map((x0: any) => {
          const x = obj(x0);
          return { verbs: strs(x.verbs), apiGroups: strs(x.apiGroups), resources: strs(x.resources), clusterScope: x.clusterScope === true, namespaces: strs(x.namespaces) };
        }),
        nonResourceRules: arr(r.nonResourceRules).map((x0: any) => {
          const x = obj(x0);
          return { verbs: strs(x.verbs), urls: strs(x.nonResourceURLs) };
        }),
      };
    }),
  };
}

function canonicalExempt(e: unknown): unknown {
  if (!isSet(e)) return null;
  const x = obj(e);
  return { ncs: ptrNum(x.nominalConcurrencyShares), lendable: ptrNum(x.lendablePercent) };
}

function canonicalPriorityLevelSpec(spec: any): { type: string; limited: unknown; exempt: unknown } {
  let limited: unknown = null;
  if (isSet(spec.limited)) {
    const l = obj(spec.limited);
    const lr = obj(l.limitResponse);
    const q = isSet(lr.queuing) ? obj(lr.queuing) : null;
    limited = {
      // v1's *int32 becomes the internal int32: nil converts to 0
      ncs: num(l.nominalConcurrencyShares),
      limitResponse: { type: str(lr.type), queuing: q ? { queues: num(q.queues), handSize: num(q.handSize), queueLengthLimit: num(q.queueLengthLimit) } : null },
      lendable: ptrNum(l.lendablePercent),
      borrowing: ptrNum(l.borrowingLimitPercent),
    };
  }
  return { type: str(spec.type), limited, exempt: canonicalExempt(spec.exempt) };
}

const sameCanonical = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

function allRequestsRules(): any {
  return {
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
  };
}

/** the specs of the mandatory FlowSchemas kube-apiserver 1.33 creates (apiserver's flowcontrol/bootstrap) */
const MANDATORY_FLOW_SCHEMAS: Record<string, unknown> = {
  [NAME_EXEMPT]: canonicalFlowSchemaSpec({
    priorityLevelConfiguration: { name: NAME_EXEMPT },
    matchingPrecedence: 1,
    rules: [{ subjects: [{ kind: 'Group', group: { name: 'system:masters' } }], ...allRequestsRules() }],
  }),
  [NAME_CATCH_ALL]: canonicalFlowSchemaSpec({
    priorityLevelConfiguration: { name: NAME_CATCH_ALL },
    matchingPrecedence: 10000,
    distinguisherMethod: { type: 'ByUser' },
    rules: [
      {
        subjects: [
          { kind: 'Group', group: { name: 'system:unauthenticated' } },
          { kind: 'Group', group: { name: 'system:authenticated' } },
        ],
        ...allRequestsRules(),
      },
    ],
  }),
};

/** the specs of the mandatory PriorityLevelConfigurations kube-apiserver 1.33 creates */
const MANDATORY_PRIORITY_LEVELS: Record<string, ReturnType<typeof canonicalPriorityLevelSpec>> = {
  [NAME_EXEMPT]: canonicalPriorityLevelSpec({ type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } }),
  [NAME_CATCH_ALL]: canonicalPriorityLevelSpec({
    type: 'Limited',
    limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: 'Reject' } },
  }),
};

// ---- FlowSchema ----

const hasWildcard = (a: unknown[]): boolean => a.some((x) => x === '*');

function validateVerbs(verbs: unknown, path: string): Errs {
  const list = arr(verbs);
  if (list.length === 0) return [required(path, 'verbs must contain at least one value')];
  if (hasWildcard(list)) return list.length > 1 ? [invalid(path, goStrs(verbs), "if '*' is present, must not specify other verbs")] : [];
  if (list.some((v) => !VERBS.includes(str(v)))) return [notSupported(path, goStrs(verbs), VERBS)];
  return [];
}

/** ValidateNonResourceURLPath: at most one error */
function validateNonResourceURLPath(p: string, path: string): Errs {
  if (p.length === 0) return [invalid(path, p, 'must not be empty')];
  if (p === '/') return [];
  if (!p.startsWith('/')) return [invalid(path, p, 'must start with slash')];
  if (p.includes(' ')) return [invalid(path, p, 'must not contain white-space')];
  if (p.includes('//')) return [invalid(path, p, 'must not contain double slash')];
  const wildcards = p.split('*').length - 1;
  if (wildcards > 1 || (wildcards === 1 && !p.endsWith('/*'))) return [invalid(path, p, 'wildcard can only do suffix matching')];
  return [];
}

function validateResourcePolicyRule(rule: any, path: string): Errs {
  const errs = validateVerbs(rule.verbs, child(path, 'verbs'));
  const groups = arr(rule.apiGroups);
  if (groups.length === 0) errs.push(required(child(path, 'apiGroups'), 'resource rules must supply at least one api group'));
  else if (groups.length > 1 && hasWildcard(groups)) errs.push(invalid(child(path, 'apiGroups'), goStrs(rule.apiGroups), "if '*' is present, must not specify other api groups"));
  const resources = arr(rule.resources);
  if (resources.length === 0) errs.push(required(child(path, 'resources'), 'resource rules must supply at least one resource'));
  else if (resources.length > 1 && hasWildcard(resources)) errs.push(invalid(child(path, 'resources'), goStrs(rule.resources), "if '*' is present, must not specify other resources"));
  const namespaces = arr(rule.namespaces);
  const np = child(path, 'namespaces');
  if (namespaces.length === 0 && rule.clusterScope !== true) errs.push(required(np, 'resource rules that are not cluster scoped must supply at least one namespace'));
  else if (hasWildcard(namespaces)) {
    if (namespaces.length > 1) errs.push(invalid(np, goStrs(rule.namespaces), "if '*' is present, must not specify other namespaces"));
  } else
    namespaces.forEach((ns, i) => {
      for (const m of validateNamespaceName(str(ns))) errs.push(invalid(idx(np, i), str(ns), NS_ERR_INTRO + m));
    });
  return errs;
}

function validateNonResourcePolicyRule(rule: any, path: string): Errs {
  const errs = validateVerbs(rule.verbs, child(path, 'verbs'));
  const urls = arr(rule.nonResourceURLs);
  const up = child(path, 'nonResourceURLs');
  if (urls.length === 0) errs.push(required(up, 'nonResourceURLs must contain at least one value'));
  else if (hasWildcard(urls)) {
    if (urls.length > 1) errs.push(invalid(up, goStrs(rule.nonResourceURLs), "if '*' is present, must not specify other non-resource URLs"));
  } else urls.forEach((u, i) => errs.push(...validateNonResourceURLPath(str(u), idx(up, i))));
  return errs;
}

function validateServiceAccountSubject(sa: unknown, path: string): Errs {
  if (!isSet(sa)) return [required(path, "serviceAccount is required when subject kind is 'ServiceAccount'")];
  const s = obj(sa);
  const errs: Errs = [];
  const name = str(s.name);
  if (!name) errs.push(required(child(path, 'name')));
  else if (name !== '*') for (const m of validateServiceAccountName(name)) errs.push(invalid(child(path, 'name'), name, m));
  const ns = str(s.namespace);
  if (ns) for (const m of validateNamespaceName(ns)) errs.push(invalid(child(path, 'namespace'), ns, m));
  else errs.push(required(child(path, 'namespace'), 'must specify namespace for service account'));
  return errs;
}

/** ValidateUserSubject and ValidateGroupSubject */
function validateNamedSubject(v: unknown, member: 'user' | 'group', path: string): Errs {
  const kind = member === 'user' ? 'User' : 'Group';
  if (!isSet(v)) return [required(path, `${member} is required when subject kind is '${kind}'`)];
  return str(obj(v).name) ? [] : [required(child(path, 'name'))];
}

function validateSubject(s: any, path: string): Errs {
  const errs: Errs = [];
  const user = () => {
    if (isSet(s.user)) errs.push(forbidden(child(path, 'user'), "user is forbidden when subject kind is not 'User'"));
  };
  const group = () => {
    if (isSet(s.group)) errs.push(forbidden(child(path, 'group'), "group is forbidden when subject kind is not 'Group'"));
  };
  const serviceAccount = () => {
    if (isSet(s.serviceAccount)) errs.push(forbidden(child(path, 'serviceAccount'), "serviceAccount is forbidden when subject kind is not 'ServiceAccount'"));
  };
  switch (s.kind) {
    case 'ServiceAccount':
      errs.push(...validateServiceAccountSubject(s.serviceAccount, child(path, 'serviceAccount')));
      user();
      group();
      break;
    case 'User':
      errs.push(...validateNamedSubject(s.user, 'user', child(path, 'user')));
      serviceAccount();
      group();
      break;
    case 'Group':
      errs.push(...validateNamedSubject(s.group, 'group', child(path, 'group')));
      serviceAccount();
      user();
      break;
    default:
      errs.push(notSupported(child(path, 'kind'), str(s.kind), SUBJECT_KINDS));
  }
  return errs;
}

function validatePolicyRulesWithSubjects(rule: any, path: string): Errs {
  const errs: Errs = [];
  const subjects = arr(rule.subjects);
  if (subjects.length > 0) subjects.forEach((s, i) => errs.push(...validateSubject(obj(s), idx(child(path, 'subjects'), i))));
  else errs.push(required(child(path, 'subjects'), 'subjects must contain at least one value'));
  const rr = arr(rule.resourceRules);
  const nrr = arr(rule.nonResourceRules);
  if (rr.length === 0 && nrr.length === 0) errs.push(required(path, 'at least one of resourceRules and nonResourceRules has to be non-empty'));
  rr.forEach((r, i) => errs.push(...validateResourcePolicyRule(obj(r), idx(child(path, 'resourceRules'), i))));
  nrr.forEach((r, i) => errs.push(...validateNonResourcePolicyRule(obj(r), idx(child(path, 'nonResourceRules'), i))));
  return errs;
}

function validateFlowSchemaSpec(name: string, spec: any, path: string): Errs {
  const errs: Errs = [];
  const mp = num(spec.matchingPrecedence);
  const mpPath = child(path, 'matchingPrecedence');
  if (mp <= 0) errs.push(invalid(mpPath, mp, 'must be a positive value'));
  if (mp > MAX_MATCHING_PRECEDENCE) errs.push(invalid(mpPath, mp, `must not be greater than ${MAX_MATCHING_PRECEDENCE}`));
  if (mp === 1 && name !== NAME_EXEMPT) errs.push(invalid(mpPath, mp, "only the schema named 'exempt' may have matchingPrecedence 1"));
  if (isSet(spec.distinguisherMethod)) {
    const type = str(obj(spec.distinguisherMethod).type);
    if (!DISTINGUISHER_METHODS.includes(type))
      errs.push(notSupported(child(path, 'distinguisherMethod', 'type'), new GoRepr(`flowcontrol.FlowDistinguisherMethod{Type:${goQuote(type)}}`), DISTINGUISHER_METHODS));
  }
  const plName = str(obj(spec.priorityLevelConfiguration).name);
  const plPath = child(path, 'priorityLevelConfiguration', 'name');
  if (plName) for (const m of isDNS1123Subdomain(plName)) errs.push(invalid(plPath, plName, m));
  else errs.push(required(plPath, 'must reference a priority level'));
  arr(spec.rules).forEach((r, i) => errs.push(...validatePolicyRulesWithSubjects(obj(r), idx(child(path, 'rules'), i))));
  return errs;
}

/** ValidateFlowSchemaStatus and ValidatePriorityLevelConfigurationStatus (the same rules) */
function validateStatusConditions(status: any, path: string): Errs {
  const errs: Errs = [];
  const seen = new Set<string>();
  arr(status.conditions).forEach((c0, i) => {
    const c = obj(c0);
    const p = idx(child(path, 'conditions'), i);
    const type = str(c.type);
    if (seen.has(type)) errs.push(duplicate(child(p, 'type'), type));
    seen.add(type);
    if (!type) errs.push(required(child(p, 'type'), 'must not be empty'));
  });
  return errs;
}

/** ValidateFlowSchema (without ObjectMeta, which the store checks) */
export function validateFlowSchema(fs: any): Errs {
  const name = str(fs.metadata?.name);
  const spec = obj(fs.spec);
  const errs = validateFlowSchemaSpec(name, spec, 'spec');
  const mand = MANDATORY_FLOW_SCHEMAS[name];
  if (Object.prototype.hasOwnProperty.call(MANDATORY_FLOW_SCHEMAS, name) && !sameCanonical(canonicalFlowSchemaSpec(spec), mand))
    errs.push(invalid('spec', flowSchemaSpecRepr(spec), `spec of '${name}' must equal the fixed value`));
  errs.push(...validateStatusConditions(obj(fs.status), 'status'));
  return errs;
}

/** ValidateFlowSchemaUpdate: the new object is validated as on create; nothing is immutable */
export function validateFlowSchemaUpdate(fs: any, _old: any): Errs {
  return validateFlowSchema(fs);
}

/** ValidateFlowSchemaStatusUpdate */
export function validateFlowSchemaStatusUpdate(fs: any, _old: any): Errs {
  return validateStatusConditions(obj(fs.status), 'status');
}

// ---- PriorityLevelConfiguration ----

/** shufflesharding.RequiredEntropyBits: ceil(log2(deckSize) * handSize), with Go's math.Log2 */
function requiredEntropyBits(deckSize: number, handSize: number): number {
  // Go's Log2 splits x into frac * 2^exp (frac in [0.5, 1)) so that powers of two are exact
  let exp = 0;
  let frac = deckSize;
  while (frac >= 1) {
    frac /= 2;
    exp++;
  }
  while (frac < 0.5) {
    frac *= 2;
    exp--;
  }
  const log2 = frac === 0.5 ? exp - 1 : Math.log(frac) * Math.LOG2E + exp;
  return Math.ceil(log2 * handSize);
}

function validateQueuingConfiguration(q: any, path: string): Errs {
  const errs: Errs = [];
  const qll = num(q.queueLengthLimit);
  const queues = num(q.queues);
  const hand = num(q.handSize);
  if (qll <= 0) errs.push(invalid(child(path, 'queueLengthLimit'), qll, 'must be positive'));
  if (queues <= 0) errs.push(invalid(child(path, 'queues'), queues, 'must be positive'));
  else if (queues > MAX_QUEUES) errs.push(invalid(child(path, 'queues'), queues, `must not be greater than ${MAX_QUEUES}`));
  const hp = child(path, 'handSize');
  if (hand <= 0) errs.push(invalid(hp, hand, 'must be positive'));
  else if (hand > queues) errs.push(invalid(hp, hand, `should not be greater than queues (${queues})`));
  else if (requiredEntropyBits(queues, hand) > MAX_HASH_BITS)
    errs.push(invalid(hp, hand, `required entropy bits of deckSize ${queues} and handSize ${hand} should not be greater than ${MAX_HASH_BITS}`));
  return errs;
}

function validateLimitResponse(lr: any, path: string): Errs {
  const type = str(lr.type);
  switch (type) {
    case 'Reject':
      return isSet(lr.queuing) ? [forbidden(child(path, 'queuing'), 'must be nil if limited.limitResponse.type is not Limited')] : [];
    case 'Queue':
      if (!isSet(lr.queuing)) return [required(child(path, 'queuing'), 'must not be empty if limited.limitResponse.type is Limited')];
      return validateQueuingConfiguration(obj(lr.queuing), child(path, 'queuing'));
    default:
      return [notSupported(child(path, 'type'), type, LIMIT_RESPONSE_TYPES)];
  }
}

function validateLimited(l: any, path: string): Errs {
  const errs: Errs = [];
  const ncs = num(l.nominalConcurrencyShares);
  if (ncs < 0) errs.push(invalid(child(path, 'nominalConcurrencyShares'), ncs, 'must be a non-negative integer'));
  errs.push(...validateLimitResponse(obj(l.limitResponse), child(path, 'limitResponse')));
  if (isSet(l.lendablePercent)) {
    const lp = num(l.lendablePercent);
    if (!(lp >= 0 && lp <= 100)) errs.push(invalid(child(path, 'lendablePercent'), lp, inclusiveRangeError(0, 100)));
  }
  if (isSet(l.borrowingLimitPercent)) {
    const bp = num(l.borrowingLimitPercent);
    if (bp < 0) errs.push(invalid(child(path, 'borrowingLimitPercent'), bp, 'if specified, must be a non-negative integer'));
  }
  return errs;
}

function validateExempt(e: any, path: string): Errs {
  const errs: Errs = [];
  if (isSet(e.nominalConcurrencyShares) && num(e.nominalConcurrencyShares) < 0)
    errs.push(invalid(child(path, 'nominalConcurrencyShares'), num(e.nominalConcurrencyShares), 'must be a non-negative integer'));
  if (isSet(e.lendablePercent)) {
    const lp = num(e.lendablePercent);
    if (!(lp >= 0 && lp <= 100)) errs.push(invalid(child(path, 'lendablePercent'), lp, inclusiveRangeError(0, 100)));
  }
  return errs;
}

function validatePriorityLevelSpec(spec: any, name: string, path: string): Errs {
  const errs: Errs = [];
  const type = str(spec.type);
  if ((name === NAME_EXEMPT) !== (type === 'Exempt')) errs.push(invalid(child(path, 'type'), type, "type must be 'Exempt' if and only if name is 'exempt'"));
  switch (type) {
    case 'Exempt':
      if (isSet(spec.limited)) errs.push(forbidden(child(path, 'limited'), 'must be nil if the type is not Limited'));
      if (isSet(spec.exempt)) errs.push(...validateExempt(obj(spec.exempt), child(path, 'exempt')));
      break;
    case 'Limited':
      if (isSet(spec.exempt)) errs.push(forbidden(child(path, 'exempt'), 'must be nil if the type is Limited'));
      if (!isSet(spec.limited)) errs.push(required(child(path, 'limited'), 'must not be empty when type is Limited'));
      else errs.push(...validateLimited(obj(spec.limited), child(path, 'limited')));
      break;
    default:
      errs.push(notSupported(child(path, 'type'), type, ENABLEMENTS));
  }
  return errs;
}

/** ValidateIfMandatoryPriorityLevelConfigurationObject: only `exempt`'s spec.exempt may differ */
function validateMandatoryPriorityLevel(name: string, spec: any, path: string): Errs {
  if (!Object.prototype.hasOwnProperty.call(MANDATORY_PRIORITY_LEVELS, name)) return [];
  const want = MANDATORY_PRIORITY_LEVELS[name]!;
  const have = canonicalPriorityLevelSpec(spec);
  if (name === NAME_EXEMPT) {
    if (!sameCanonical(want, { ...have, exempt: want.exempt }))
      return [invalid(path, priorityLevelSpecRepr(spec), `spec of '${name}' except the 'spec.exempt' field must equal the fixed value`)];
    return [];
  }
  if (!sameCanonical(want, have)) return [invalid(path, priorityLevelSpecRepr(spec), `spec of '${name}' must equal the fixed value`)];
  return [];
}

/** ValidatePriorityLevelConfiguration for a v1 request (without ObjectMeta, which the store checks) */
export function validatePriorityLevelConfiguration(pl: any): Errs {
  const errs: Errs = [];
  const name = str(pl.metadata?.name);
  const annotations = obj(pl.metadata?.annotations);
  if (Object.prototype.hasOwnProperty.call(annotations, PRESERVE_ZERO_SHARES_KEY))
    errs.push(forbidden('metadata.annotations', `annotation '${PRESERVE_ZERO_SHARES_KEY}' is forbidden`));
  const spec = obj(pl.spec);
  errs.push(...validatePriorityLevelSpec(spec, name, 'spec'));
  errs.push(...validateMandatoryPriorityLevel(name, spec, 'spec'));
  errs.push(...validateStatusConditions(obj(pl.status), 'status'));
  return errs;
}

/** the update strategy validates the new object exactly as on create */
export function validatePriorityLevelConfigurationUpdate(pl: any, _old: any): Errs {
  return validatePriorityLevelConfiguration(pl);
}

/** ValidatePriorityLevelConfigurationStatusUpdate */
export function validatePriorityLevelConfigurationStatusUpdate(pl: any, _old: any): Errs {
  return validateStatusConditions(obj(pl.status), 'status');
}
