// ClusterRole aggregation, as kube-controller-manager's clusterrole-aggregation controller does it:
// the rules of a ClusterRole with an aggregationRule are the rules of every other ClusterRole its
// selectors match, selector by selector, roles in name order, each distinct rule once. On every
// change of any ClusterRole, every aggregated ClusterRole is recomputed and written when its
// rules differ (Kubernetes writes them by server-side apply, field manager
// `clusterrole-aggregation-controller`, forced).
import { fromLabelSelector, matchLabels } from '../../machinery/selectors.js';
import type { RBACResolver } from './resolver.js';
import { normalizeRule, ruleEqual, rulesEqual, type PolicyRule } from './rules.js';

export const AGGREGATION_FIELD_MANAGER = 'clusterrole-aggregation-controller';

/** the rules an aggregated ClusterRole should hold; undefined when it has no aggregationRule */
export function aggregatedRules(role: any, all: readonly any[]): PolicyRule[] | undefined {
  const rule = role?.aggregationRule;
  if (!rule) return undefined;
  const out: PolicyRule[] = [];
  const name = role.metadata?.name;
  const byName = [...all].sort((a, b) => {
    const x = a?.metadata?.name ?? '';
    const y = b?.metadata?.name ?? '';
    return x < y ? -1 : x > y ? 1 : 0;
  });
  for (const sel of rule.clusterRoleSelectors ?? []) {
    let reqs;
    try {
      reqs = fromLabelSelector(sel);
    } catch {
      continue; // an invalid selector matches nothing (validation refuses it anyway)
    }
    if (reqs === null) continue;
    for (const other of byName) {
      if (other?.metadata?.name === name) continue;
      if (!matchLabels(reqs, other?.metadata?.labels)) continue;
      for (const r of other.rules ?? []) {
        const n = normalizeRule(r);
        if (!out.some((x) => ruleEqual(x, n))) out.push(n);
      }
    }
  }
  return out;
}

/** the writes the aggregator makes: replace the rules of a ClusterRole (never a dry run) */
export interface AggregationWriter {
  setClusterRoleRules(name: string, rules: PolicyRule[]): Promise<void>;
}

/**
 * The aggregation controller, in-process over the resolver's ClusterRoles. It listens to the
 * resolver's changes, and after each burst of them recomputes every aggregated role.
 */
export class ClusterRoleAggregator {
  private scheduled = false;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private unlisten?: () => void;
  /** failures of the last run, by role name (retried on the next change or after a delay) */
  readonly failures = new Map<string, string>();

  constructor(
    private readonly resolver: RBACResolver,
    private readonly writer: AggregationWriter,
    private readonly opts: { retryMs?: number; onError?: (name: string, err: unknown) => void } = {},
  ) {}

  start(): void {
    this.unlisten = this.resolver.listen((resource) => {
      if (resource === 'clusterroles') this.kick();
    });
    this.kick();
  }

  stop(): void {
    this.stopped = true;
    this.unlisten?.();
  }

  /** schedule a run (coalesced) */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.running = this.syncAll().finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
    });
  }

  /** resolves once no run is pending or under way */
  async idle(): Promise<void> {
    for (;;) {
      if (this.running) await this.running;
      else if (this.scheduled || this.again) await new Promise((r) => setImmediate(r));
      else return;
    }
  }

  /** recompute every aggregated role now */
  async syncAll(): Promise<void> {
    const roles = this.resolver.allClusterRoles().map((e) => e.obj);
    let failed = false;
    for (const role of roles) {
      if (this.stopped) return;
      const want = aggregatedRules(role, roles);
      if (want === undefined) continue;
      if (rulesEqual(want, role.rules)) {
        this.failures.delete(role.metadata.name);
        continue;
      }
      try {
        await this.writer.setClusterRoleRules(role.metadata.name, want);
        this.failures.delete(role.metadata.name);
      } catch (e) {
        failed = true;
        this.failures.set(role.metadata.name, (e as Error).message);
        this.opts.onError?.(role.metadata.name, e);
      }
    }
    if (failed && !this.stopped) setTimeout(() => this.kick(), this.opts.retryMs ?? 1000).unref();
  }
}
