// Policy rules: how a rule of a Role or ClusterRole matches a request, how one set of rules covers
// another (the escalation check and the bootstrap reconciliation both ask this), and the compact
// text Kubernetes prints for a rule in its escalation messages.
//
// Matching, as kube-apiserver's RBAC authorizer does it:
//  - verbs: `*` or the exact verb;
//  - apiGroups: `*` or the exact group ('' is the core group);
//  - resources: `*`, the exact `resource` or `resource/subresource`, or `*/subresource` for a
//    subresource of any resource;
//  - resourceNames: empty matches every name (and requests without a name); otherwise the
//    request's name must be listed (so a list, or a create by POST, never matches a rule with names);
//  - nonResourceURLs: `*`, the exact path, or a prefix ending in `*` (`/apis/*` matches `/apis/x`
//    and `/apis/`, not `/apis`).
import type { Attributes } from '../authz.js';
import { goQuoteList } from '../../machinery/gostrings.js';

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** the parts of a request a rule is matched against */
export type RuleRequest = Pick<Attributes, 'verb' | 'resourceRequest' | 'apiGroup' | 'resource' | 'subresource' | 'name' | 'path'>;

const ALL = '*';

function has(list: readonly string[] | undefined, v: string): boolean {
  if (!list) return false;
  for (const x of list) if (x === v) return true;
  return false;
}

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  for (const v of rule.verbs ?? []) if (v === ALL || v === verb) return true;
  return false;
}

export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  for (const g of rule.apiGroups ?? []) if (g === ALL || g === group) return true;
  return false;
}

/** `combined` is `resource` or `resource/subresource` */
export function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of rule.resources ?? []) {
    if (r === ALL || r === combined) return true;
    if (!subresource) continue;
    if (r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true;
  }
  return false;
}

export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames;
  if (!names || names.length === 0) return true;
  return has(names, name);
}

export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const u of rule.nonResourceURLs ?? []) {
    if (u === ALL || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.replace(/\*+$/, ''))) return true;
  }
  return false;
}

/** does this one rule allow the request? */
export function ruleAllows(a: RuleRequest, rule: PolicyRule): boolean {
  if (a.resourceRequest) {
    const resource = a.resource ?? '';
    const sub = a.subresource ?? '';
    const combined = sub ? `${resource}/${sub}` : resource;
    return verbMatches(rule, a.verb) && apiGroupMatches(rule, a.apiGroup ?? '') && resourceMatches(rule, combined, sub) && resourceNameMatches(rule, a.name ?? '');
  }
  return verbMatches(rule, a.verb) && nonResourceURLMatches(rule, a.path ?? '');
}

export function rulesAllow(a: RuleRequest, rules: readonly PolicyRule[]): boolean {
  for (const r of rules) if (ruleAllows(a, r)) return true;
  return false;
}

// ---- coverage (escalation checks, reconciliation) ----

/** a rule split into rules of one group, one resource, one verb and at most one name (or one URL and one verb) */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs ?? []) {
        if (rule.resourceNames && rule.resourceNames.length > 0) {
          for (const name of rule.resourceNames) out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] });
        } else {
          out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
        }
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) {
    for (const verb of rule.verbs ?? []) out.push({ nonResourceURLs: [url], verbs: [verb] });
  }
  return out;
}

function hasAll(set: readonly string[] | undefined, wanted: readonly string[] | undefined): boolean {
  if (!wanted || wanted.length === 0) return true;
  const own = new Set(set ?? []);
  for (const w of wanted) if (!own.has(w)) return false;
  return true;
}

function resourcesCover(owner: readonly string[] | undefined, wanted: readonly string[] | undefined): boolean {
  if (has(owner, ALL) || hasAll(owner, wanted)) return true;
  for (const path of wanted ?? []) {
    if (has(owner, path)) continue;
    const slash = path.indexOf('/');
    if (slash < 0) return false;
    if (!has(owner, `*/${path.slice(slash + 1)}`)) return false;
  }
  return true;
}

function urlCovers(owner: string, sub: string): boolean {
  if (owner === sub) return true;
  return owner.endsWith('*') && sub.startsWith(owner.replace(/\*+$/, ''));
}

function urlsCover(owner: readonly string[] | undefined, wanted: readonly string[] | undefined): boolean {
  for (const p of wanted ?? []) {
    let ok = false;
    for (const o of owner ?? []) {
      if (urlCovers(o, p)) {
        ok = true;
        break;
      }
    }
    if (!ok) return false;
  }
  return true;
}

/** does `owner` (any shape) cover `sub` (one broken-down rule)? */
export function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = has(owner.verbs, ALL) || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, ALL) || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = resourcesCover(owner.resources, sub.resources);
  const urls = urlsCover(owner.nonResourceURLs, sub.nonResourceURLs);
  const ownerNames = owner.resourceNames ?? [];
  const subNames = sub.resourceNames ?? [];
  const names = subNames.length === 0 ? ownerNames.length === 0 : ownerNames.length === 0 || hasAll(ownerNames, subNames);
  return verbs && groups && resources && names && urls;
}

/** whether `owner` covers every permission of `servant`, and the broken-down rules it does not */
export function covers(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): { covered: boolean; missing: PolicyRule[] } {
  const missing: PolicyRule[] = [];
  for (const rule of servant) {
    for (const sub of breakdownRule(rule)) {
      let ok = false;
      for (const o of owner) {
        if (ruleCovers(o, sub)) {
          ok = true;
          break;
        }
      }
      if (!ok) missing.push(sub);
    }
  }
  return { covered: missing.length === 0, missing };
}

/** rules of one group and one resource, without names or URLs, merged into one rule per group/resource */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  const order: string[] = [];
  for (const r of rules) {
    const isSimple =
      !(r.resourceNames && r.resourceNames.length) &&
      !(r.nonResourceURLs && r.nonResourceURLs.length) &&
      (r.apiGroups ?? []).length === 1 &&
      (r.resources ?? []).length === 1;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = `${r.apiGroups![0]}\u0000${r.resources![0]}`;
    const cur = simple.get(key);
    if (cur) cur.verbs = [...cur.verbs, ...(r.verbs ?? [])];
    else {
      simple.set(key, { apiGroups: [...r.apiGroups!], resources: [...r.resources!], verbs: [...(r.verbs ?? [])] });
      order.push(key);
    }
  }
  for (const k of order) out.push(simple.get(k)!);
  return out;
}

// ---- Go formatting (messages must read as kube-apiserver's) ----

/** the compact form of a rule Kubernetes prints in escalation errors: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}` */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups && r.apiGroups.length) parts.push(`APIGroups:${goQuoteList(r.apiGroups)}`);
  if (r.resources && r.resources.length) parts.push(`Resources:${goQuoteList(r.resources)}`);
  if (r.nonResourceURLs && r.nonResourceURLs.length) parts.push(`NonResourceURLs:${goQuoteList(r.nonResourceURLs)}`);
  if (r.resourceNames && r.resourceNames.length) parts.push(`ResourceNames:${goQuoteList(r.resourceNames)}`);
  if (r.verbs && r.verbs.length) parts.push(`Verbs:${goQuoteList(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/** an aggregate of error messages as Kubernetes' utilerrors.NewAggregate prints it (duplicates once) */
export function aggregateMessages(msgs: readonly string[]): string {
  const seen = new Set<string>();
  const uniq: string[] = [];
  for (const m of msgs) {
    if (seen.has(m)) continue;
    seen.add(m);
    uniq.push(m);
  }
  if (uniq.length === 0) return '';
  if (uniq.length === 1) return uniq[0]!;
  return `[${uniq.join(', ')}]`;
}

// ---- normalisation and equality ----

function cleanList(v: unknown): string[] | undefined {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  return v.map((x) => String(x));
}

/** a stored rule in our form (absent and empty lists alike) */
export function normalizeRule(r: any): PolicyRule {
  const out: PolicyRule = { verbs: cleanList(r?.verbs) ?? [] };
  const g = cleanList(r?.apiGroups);
  if (g) out.apiGroups = g;
  const res = cleanList(r?.resources);
  if (res) out.resources = res;
  const n = cleanList(r?.resourceNames);
  if (n) out.resourceNames = n;
  const u = cleanList(r?.nonResourceURLs);
  if (u) out.nonResourceURLs = u;
  return out;
}

function listEqual(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** semantic equality of two rules (nil and empty lists are equal, order matters) */
export function ruleEqual(a: PolicyRule, b: PolicyRule): boolean {
  return (
    listEqual(a.verbs, b.verbs) &&
    listEqual(a.apiGroups, b.apiGroups) &&
    listEqual(a.resources, b.resources) &&
    listEqual(a.resourceNames, b.resourceNames) &&
    listEqual(a.nonResourceURLs, b.nonResourceURLs)
  );
}

export function rulesEqual(a: readonly PolicyRule[] | undefined, b: readonly PolicyRule[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (!ruleEqual(normalizeRule(x[i]), normalizeRule(y[i]))) return false;
  return true;
}
