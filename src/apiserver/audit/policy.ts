// The audit policy (audit.k8s.io/v1 Policy, --audit-policy-file): which requests are recorded and
// at which level. The first rule that matches a request decides; a request no rule matches is
// not recorded (level None). The policy's omitStages are added to every rule's, and a rule's
// omitManagedFields, when set, overrides the policy's.
import { readFileSync } from 'node:fs';
import { yaml } from '../../codec/yaml-lazy.js';
import { aggregate, field, type FieldError } from '../../machinery/errors.js';
import { validateName } from '../../machinery/validation.js';

export type Level = 'None' | 'Metadata' | 'Request' | 'RequestResponse';
export type Stage = 'RequestReceived' | 'ResponseStarted' | 'ResponseComplete' | 'Panic';

export const LEVELS: readonly Level[] = ['None', 'Metadata', 'Request', 'RequestResponse'];
export const STAGES: readonly Stage[] = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'];

/** the order of levels: a level records everything the levels below it record */
export function levelRank(l: Level): number {
  return LEVELS.indexOf(l);
}

export interface GroupResources {
  group: string;
  resources: string[];
  resourceNames: string[];
}

export interface PolicyRule {
  level: Level;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: GroupResources[];
  namespaces: string[];
  nonResourceURLs: string[];
  omitStages: Stage[];
  omitManagedFields?: boolean;
}

export interface Policy {
  rules: PolicyRule[];
  omitStages: Stage[];
  omitManagedFields: boolean;
}

/** what the policy looks at in a request (the authorizer's attributes) */
export interface AuditAttributes {
  user?: { name: string; groups: string[] };
  verb: string;
  isResourceRequest: boolean;
  path: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

/** how a request is recorded */
export interface RequestAuditConfig {
  level: Level;
  omitStages: ReadonlySet<Stage>;
  omitManagedFields: boolean;
}

// ---- loading ----

const POLICY_FIELDS = new Set(['apiVersion', 'kind', 'metadata', 'rules', 'omitStages', 'omitManagedFields']);
const RULE_FIELDS = new Set(['level', 'users', 'userGroups', 'verbs', 'resources', 'namespaces', 'nonResourceURLs', 'omitStages', 'omitManagedFields']);
const GROUP_RESOURCE_FIELDS = new Set(['group', 'resources', 'resourceNames']);

class DecodeError extends Error {}

function strings(v: unknown, path: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new DecodeError(`json: cannot unmarshal ${goType(v)} into Go struct field ${path} of type []string`);
  return v.map((x, i) => {
    if (typeof x !== 'string') throw new DecodeError(`json: cannot unmarshal ${goType(x)} into Go struct field ${path}[${i}] of type string`);
    return x;
  });
}

function str(v: unknown, path: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new DecodeError(`json: cannot unmarshal ${goType(v)} into Go struct field ${path} of type string`);
  return v;
}

function bool(v: unknown, path: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new DecodeError(`json: cannot unmarshal ${goType(v)} into Go struct field ${path} of type bool`);
  return v;
}

function goType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object' && v !== null) return 'object';
  return typeof v;
}

function unknownFields(o: Record<string, unknown>, known: Set<string>, prefix: string, out: string[]): void {
  for (const k of Object.keys(o)) if (!known.has(k)) out.push(`unknown field "${prefix}${k}"`);
}

/**
 * Decode and validate a policy document (YAML or JSON). Unknown fields are reported in
 * `warnings` (Kubernetes falls back to lenient decoding and logs them). Throws an Error with
 * Kubernetes' wording when the document is not an audit.k8s.io/v1 Policy or is invalid.
 */
export function parsePolicy(text: string): { policy: Policy; warnings: string[] } {
  let doc: unknown;
  try {
    doc = yaml().parse(text, { version: '1.2' });
  } catch (e) {
    throw new Error(`failed decoding: ${(e as Error).message.split('\n')[0]}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error("failed decoding: Object 'Kind' is missing in the policy document");
  const o = doc as Record<string, unknown>;
  const apiVersion = typeof o.apiVersion === 'string' ? o.apiVersion : '';
  const kind = typeof o.kind === 'string' ? o.kind : '';
  if (!kind) throw new Error(`failed decoding: Object 'Kind' is missing in '${JSON.stringify(doc)}'`);
  if (!apiVersion) throw new Error(`failed decoding: Object 'apiVersion' is missing in '${JSON.stringify(doc)}'`);
  if (apiVersion !== 'audit.k8s.io/v1' || kind !== 'Policy') {
    throw new Error(`failed decoding: no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in scheme "k8s.io/apiserver/pkg/audit/scheme.go:31"`);
  }
  const warnings: string[] = [];
  let policy: Policy;
  try {
    unknownFields(o, POLICY_FIELDS, '', warnings);
    const rules = o.rules === undefined || o.rules === null ? [] : o.rules;
    if (!Array.isArray(rules)) throw new DecodeError(`json: cannot unmarshal ${goType(rules)} into Go struct field Policy.rules of type []v1.PolicyRule`);
    policy = {
      omitStages: strings(o.omitStages, 'Policy.omitStages') as Stage[],
      omitManagedFields: bool(o.omitManagedFields, 'Policy.omitManagedFields') ?? false,
      rules: rules.map((r: unknown, i: number) => {
        if (r === null || typeof r !== 'object' || Array.isArray(r)) throw new DecodeError(`json: cannot unmarshal ${goType(r)} into Go struct field Policy.rules of type v1.PolicyRule`);
        const rr = r as Record<string, unknown>;
        unknownFields(rr, RULE_FIELDS, `rules[${i}].`, warnings);
        const res = rr.resources === undefined || rr.resources === null ? [] : rr.resources;
        if (!Array.isArray(res)) throw new DecodeError(`json: cannot unmarshal ${goType(res)} into Go struct field PolicyRule.rules.resources of type []v1.GroupResources`);
        return {
          level: str(rr.level, 'PolicyRule.rules.level') as Level,
          users: strings(rr.users, 'PolicyRule.rules.users'),
          userGroups: strings(rr.userGroups, 'PolicyRule.rules.userGroups'),
          verbs: strings(rr.verbs, 'PolicyRule.rules.verbs'),
          namespaces: strings(rr.namespaces, 'PolicyRule.rules.namespaces'),
          nonResourceURLs: strings(rr.nonResourceURLs, 'PolicyRule.rules.nonResourceURLs'),
          omitStages: strings(rr.omitStages, 'PolicyRule.rules.omitStages') as Stage[],
          omitManagedFields: bool(rr.omitManagedFields, 'PolicyRule.rules.omitManagedFields'),
          resources: res.map((g: unknown, j: number) => {
            if (g === null || typeof g !== 'object' || Array.isArray(g)) throw new DecodeError(`json: cannot unmarshal ${goType(g)} into Go struct field PolicyRule.rules.resources of type v1.GroupResources`);
            const gg = g as Record<string, unknown>;
            unknownFields(gg, GROUP_RESOURCE_FIELDS, `rules[${i}].resources[${j}].`, warnings);
            return {
              group: str(gg.group, 'GroupResources.rules.resources.group'),
              resources: strings(gg.resources, 'GroupResources.rules.resources.resources'),
              resourceNames: strings(gg.resourceNames, 'GroupResources.rules.resources.resourceNames'),
            };
          }),
        };
      }),
    };
  } catch (e) {
    if (e instanceof DecodeError) throw new Error(`failed decoding: ${e.message}`);
    throw e;
  }
  const errs = validatePolicy(policy);
  if (errs.length) throw new Error(aggregate(errs.map((e) => e.toString())));
  if (policy.rules.length === 0) throw new Error('loaded illegal policy with 0 rules');
  return { policy, warnings };
}

/** --audit-policy-file: the policy, or an Error worded as kube-apiserver words it */
export function loadPolicyFile(path: string, warn?: (msg: string) => void): Policy {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : undefined;
    throw new Error(`loading audit policy file: failed to read file path ${JSON.stringify(path)}: ${why ? `open ${path}: ${why}` : (e as Error).message}`);
  }
  try {
    const { policy, warnings } = parsePolicy(text);
    if (warnings.length) warn?.(`Audit policy contains errors, falling back to lenient decoding: strict decoding error: ${warnings.join(', ')}`);
    return policy;
  } catch (e) {
    throw new Error(`loading audit policy file: ${(e as Error).message}: from file ${path}`);
  }
}

// ---- validation ----

function validateOmitStages(stages: string[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  stages.forEach((s, i) => {
    if (!(STAGES as readonly string[]).includes(s)) errs.push(field.invalid(`${path}[${i}]`, s, `allowed stages are ${STAGES.join(',')}`));
  });
  return errs;
}

export function validatePolicy(p: Policy): FieldError[] {
  const errs = validateOmitStages(p.omitStages, 'omitStages');
  p.rules.forEach((r, i) => {
    const path = `rules[${i}]`;
    if (r.level === ('' as Level)) errs.push(field.required(`${path}.level`, ''));
    else if (!LEVELS.includes(r.level)) errs.push(field.notSupported(`${path}.level`, r.level, [...LEVELS]));
    r.nonResourceURLs.forEach((u, j) => {
      if (u === '*') return;
      if (!u.startsWith('/')) errs.push(field.invalid(`${path}.nonResourceURLs[${j}]`, u, "non-resource URL rules must begin with a '/' character"));
      if (u !== '' && u.slice(0, -1).includes('*')) errs.push(field.invalid(`${path}.nonResourceURLs[${j}]`, u, "non-resource URL wildcards '*' must be the final character of the rule"));
    });
    for (const g of r.resources) {
      if (g.group !== '') {
        const msgs = validateName('subdomain', g.group, false);
        if (msgs.length) errs.push(field.invalid(`${path}.resources.group`, g.group, msgs.join(',')));
      }
      if (g.resourceNames.length > 0 && g.resources.length === 0) errs.push(field.invalid(`${path}.resources.resourceNames`, g.resourceNames, 'using resourceNames requires at least one resource'));
    }
    errs.push(...validateOmitStages(r.omitStages, `${path}.omitStages`));
    if (r.nonResourceURLs.length > 0 && (r.resources.length > 0 || r.namespaces.length > 0)) {
      errs.push(field.invalid(`${path}.nonResourceURLs`, r.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'));
    }
  });
  return errs;
}

// ---- evaluation ----

interface CompiledRule {
  rule: PolicyRule;
  config: RequestAuditConfig;
}

/** the policy, ready to be asked about requests (the first matching rule wins) */
export class PolicyRuleEvaluator {
  private readonly rules: CompiledRule[];
  private readonly fallback: RequestAuditConfig;

  constructor(readonly policy: Policy) {
    this.rules = policy.rules.map((rule) => ({
      rule,
      config: {
        level: rule.level,
        omitStages: new Set([...policy.omitStages, ...rule.omitStages]),
        omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields,
      },
    }));
    this.fallback = { level: 'None', omitStages: new Set(policy.omitStages), omitManagedFields: policy.omitManagedFields };
  }

  evaluate(a: AuditAttributes): RequestAuditConfig {
    for (const r of this.rules) if (ruleMatches(r.rule, a)) return r.config;
    return this.fallback;
  }
}

export function ruleMatches(r: PolicyRule, a: AuditAttributes): boolean {
  const user = a.user;
  if (r.users.length > 0 && (!user || !r.users.includes(user.name))) return false;
  if (r.userGroups.length > 0 && (!user || !user.groups.some((g) => r.userGroups.includes(g)))) return false;
  if (r.verbs.length > 0 && !r.verbs.includes(a.verb)) return false;
  if (r.namespaces.length > 0 || r.resources.length > 0) return ruleMatchesResource(r, a);
  if (r.nonResourceURLs.length > 0) return ruleMatchesNonResource(r, a);
  return true;
}

function ruleMatchesNonResource(r: PolicyRule, a: AuditAttributes): boolean {
  if (a.isResourceRequest) return false;
  return r.nonResourceURLs.some((spec) => spec === '*' || spec === a.path || (spec.endsWith('*') && a.path.startsWith(spec.replace(/\*+$/, ''))));
}

function ruleMatchesResource(r: PolicyRule, a: AuditAttributes): boolean {
  if (!a.isResourceRequest) return false;
  // cluster-scoped resources have the namespace ''
  if (r.namespaces.length > 0 && !r.namespaces.includes(a.namespace)) return false;
  if (r.resources.length === 0) return true;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  for (const gr of r.resources) {
    if (gr.group !== a.apiGroup) continue;
    if (gr.resources.length === 0) return true;
    if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(a.name)) continue;
    for (const res of gr.resources) {
      if (res === combined || res === '*') return true;
      if (a.subresource && res.startsWith('*/') && a.subresource === res.slice(2)) return true;
      if (res.endsWith('/*') && a.resource === res.slice(0, -2)) return true;
    }
  }
  return false;
}
