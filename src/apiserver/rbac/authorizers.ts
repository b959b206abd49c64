// The authorizers of --authorization-mode and the chain that asks them in order.
//
// kube-apiserver's chain: members of system:masters are allowed everything first (whatever the
// modes), then each mode in the order given. The first authorizer that allows or denies decides;
// when none does, the request has no opinion and is refused, with the reasons of every
// authorizer joined by newlines. Rules reviews (SelfSubjectRulesReview) ask every mode that can
// list rules and join their answers.
import type { Attributes, Authorizer, Decision, UserInfo } from '../authz.js';
import { aggregateMessages, ruleAllows, type PolicyRule } from './rules.js';
import type { NotFoundStyle, RBACResolver } from './resolver.js';

export const SYSTEM_PRIVILEGED_GROUP = 'system:masters';

export interface AuthorizationResult {
  decision: Decision;
  reason: string;
  /** an evaluation error (SubjectAccessReview's status.evaluationError) */
  evaluationError?: string;
}

export interface ResourceRuleInfo {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

export interface NonResourceRuleInfo {
  verbs: string[];
  nonResourceURLs?: string[];
}

export interface RulesResult {
  resourceRules: ResourceRuleInfo[];
  nonResourceRules: NonResourceRuleInfo[];
  incomplete: boolean;
  evaluationError?: string;
}

/** an authorizer that can also say whether it lists rules (AlwaysAllow, AlwaysDeny, RBAC, Node do) */
export interface ModeAuthorizer extends Authorizer {
  authorize(a: Attributes): AuthorizationResult;
  rulesFor(user: UserInfo, namespace: string): RulesResult;
}

export class AlwaysAllowAuthorizer implements ModeAuthorizer {
  authorize(): AuthorizationResult {
    return { decision: 'allow', reason: '' };
  }
  rulesFor(): RulesResult {
    return {
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      incomplete: false,
    };
  }
}

/** AlwaysDeny: no opinion on anything (so the request is refused), "Everything is forbidden." */
export class AlwaysDenyAuthorizer implements ModeAuthorizer {
  authorize(): AuthorizationResult {
    return { decision: 'noOpinion', reason: 'Everything is forbidden.' };
  }
  rulesFor(): RulesResult {
    return { resourceRules: [], nonResourceRules: [], incomplete: false };
  }
}

/** members of the privileged groups (system:masters) may do anything, before any mode is asked */
export class PrivilegedGroupsAuthorizer {
  constructor(private readonly groups: readonly string[] = [SYSTEM_PRIVILEGED_GROUP]) {}
  authorize(a: Attributes): AuthorizationResult {
    for (const g of a.user?.groups ?? []) if (this.groups.includes(g)) return { decision: 'allow', reason: '' };
    return { decision: 'noOpinion', reason: '' };
  }
}

function splitRules(rules: readonly PolicyRule[]): { resourceRules: ResourceRuleInfo[]; nonResourceRules: NonResourceRuleInfo[] } {
  const resourceRules: ResourceRuleInfo[] = [];
  const nonResourceRules: NonResourceRuleInfo[] = [];
  for (const r of rules) {
    if (r.resources && r.resources.length > 0) {
      const out: ResourceRuleInfo = { verbs: [...r.verbs] };
      if (r.apiGroups && r.apiGroups.length) out.apiGroups = [...r.apiGroups];
      out.resources = [...r.resources];
      if (r.resourceNames && r.resourceNames.length) out.resourceNames = [...r.resourceNames];
      resourceRules.push(out);
    }
    if (r.nonResourceURLs && r.nonResourceURLs.length > 0) nonResourceRules.push({ verbs: [...r.verbs], nonResourceURLs: [...r.nonResourceURLs] });
  }
  return { resourceRules, nonResourceRules };
}

/**
 * RBAC: allows what a rule bound to the user allows (reason `RBAC: allowed by <binding>`); else
 * no opinion, with `RBAC: <errors>` when bindings that apply to the user name missing roles.
 */
export class RBACAuthorizer implements ModeAuthorizer {
  constructor(
    readonly resolver: RBACResolver,
    private readonly style: NotFoundStyle = 'lister',
  ) {}

  authorize(a: Attributes): AuthorizationResult {
    let allowedBy = '';
    const errs: string[] = [];
    this.resolver.visitRulesFor(
      a.user,
      a.namespace ?? '',
      (source, rule, err) => {
        if (rule && source && ruleAllows(a, rule)) {
          allowedBy = source.describe();
          return false;
        }
        if (err) errs.push(err.message);
        return true;
      },
      this.style,
    );
    if (allowedBy) return { decision: 'allow', reason: `RBAC: allowed by ${allowedBy}` };
    return { decision: 'noOpinion', reason: errs.length ? `RBAC: ${aggregateMessages(errs)}` : '' };
  }

  rulesFor(user: UserInfo, namespace: string): RulesResult {
    const { rules, errors } = this.resolver.rulesFor(user, namespace, this.style);
    const out: RulesResult = { ...splitRules(rules), incomplete: false };
    if (errors.length) out.evaluationError = aggregateMessages(errors.map((e) => e.message));
    return out;
  }
}

/**
 * The chain of --authorization-mode: privileged groups, then each mode in order. Implements the
 * project's Authorizer interface (authorize, rulesFor) for the request chain and the reviews.
 */
export class UnionAuthorizer implements ModeAuthorizer {
  private readonly privileged: PrivilegedGroupsAuthorizer | undefined;

  constructor(
    readonly modes: readonly { name: string; authorizer: ModeAuthorizer }[],
    opts: { privilegedGroups?: readonly string[] | false } = {},
  ) {
    this.privileged = opts.privilegedGroups === false ? undefined : new PrivilegedGroupsAuthorizer(opts.privilegedGroups ?? [SYSTEM_PRIVILEGED_GROUP]);
  }

  authorize(a: Attributes): AuthorizationResult {
    if (this.privileged && this.privileged.authorize(a).decision === 'allow') return { decision: 'allow', reason: '' };
    const reasons: string[] = [];
    const errors: string[] = [];
    for (const m of this.modes) {
      const r = m.authorizer.authorize(a);
      if (r.evaluationError) errors.push(r.evaluationError);
      if (r.reason) reasons.push(r.reason);
      if (r.decision === 'allow' || r.decision === 'deny') {
        const out: AuthorizationResult = { decision: r.decision, reason: r.reason };
        if (r.evaluationError) out.evaluationError = r.evaluationError;
        return out;
      }
    }
    const out: AuthorizationResult = { decision: 'noOpinion', reason: reasons.join('\n') };
    if (errors.length) out.evaluationError = aggregateMessages(errors);
    return out;
  }

  rulesFor(user: UserInfo, namespace: string): RulesResult {
    const out: RulesResult = { resourceRules: [], nonResourceRules: [], incomplete: false };
    const errors: string[] = [];
    for (const m of this.modes) {
      const r = m.authorizer.rulesFor(user, namespace);
      if (r.incomplete) out.incomplete = true;
      if (r.evaluationError) errors.push(r.evaluationError);
      out.resourceRules.push(...r.resourceRules);
      out.nonResourceRules.push(...r.nonResourceRules);
    }
    if (errors.length) out.evaluationError = aggregateMessages(errors);
    return out;
  }
}

// ---- --authorization-mode ----

export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'] as const;
/** the modes Keelson implements */
export const SUPPORTED_AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'RBAC', 'Node'] as const;

/** `--authorization-mode=RBAC,Node`: the comma list, trimmed, empty entries dropped */
export function parseAuthorizationModes(value: string | readonly string[]): string[] {
  const parts = Array.isArray(value) ? value : String(value).split(',');
  return parts.map((s) => s.trim()).filter((s) => s !== '');
}

/** kube-apiserver's validation messages of --authorization-mode, plus ours for the modes we lack */
export function validateAuthorizationModes(modes: readonly string[]): string[] {
  const errs: string[] = [];
  if (modes.length === 0) errs.push('at least one authorization-mode must be passed');
  for (const m of modes) {
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(m)) errs.push(`authorization-mode ${JSON.stringify(m)} is not a valid mode`);
    else if (!(SUPPORTED_AUTHORIZATION_MODES as readonly string[]).includes(m)) errs.push(`authorization-mode ${JSON.stringify(m)} is not supported by keelson`);
  }
  if (new Set(modes).size !== modes.length) errs.push(`authorization-mode [${modes.map((m) => JSON.stringify(m)).join(' ')}] has mode specified more than once`);
  return errs;
}
