// Authorization for the API server: --authorization-mode (AlwaysAllow, AlwaysDeny, RBAC, Node, in
// order, after the system:masters shortcut), the RBAC resolver and the Node graph fed from the
// server's watch caches, escalation prevention on RBAC writes, the bootstrap policy and the
// ClusterRole aggregation controller. `Authorization` bundles them; the modules below are usable
// alone.
import type { StatusError } from '../../machinery/errors.js';
import { ClusterRoleAggregator, type AggregationWriter } from './aggregation.js';
import {
  AlwaysAllowAuthorizer,
  AlwaysDenyAuthorizer,
  RBACAuthorizer,
  UnionAuthorizer,
  parseAuthorizationModes,
  validateAuthorizationModes,
  type ModeAuthorizer,
} from './authorizers.js';
import { checkRBACWrite, type RBACWrite } from './escalation.js';
import { feed, type FeedSource } from './feeds.js';
import { NodeAuthorizer, NodeGraph } from './node.js';
import { nodeRules } from './policy.js';
import { runBootstrapHook, type PolicyWriter, type ReconcileResult } from './reconcile.js';
import { RBACResolver, type ChangeType, type RBACResource } from './resolver.js';

export * from './aggregation.js';
export * from './attributes.js';
export * from './authorizers.js';
export * from './config.js';
export * from './escalation.js';
export * from './feeds.js';
export * from './node.js';
export * from './policy.js';
export * from './reconcile.js';
export * from './resolver.js';
export * from './reviews.js';
export * from './rules.js';
export * from './stores.js';

export interface AuthorizationOptions {
  /** --authorization-mode, parsed (e.g. ['RBAC', 'Node']) or as given ('RBAC,Node') */
  modes: readonly string[] | string;
  /** AuthorizeNodeWithSelectors (default on, as in Kubernetes 1.33) */
  nodeWithSelectors?: boolean;
  /** KubeletServiceAccountTokenForCredentialProviders (off by default in 1.33): nodes may get their pods' service accounts */
  nodeGetServiceAccounts?: boolean;
}

/** the stores the authorization needs, by resource (ResourceStores satisfy FeedSource) */
export type StoreLookup = (group: string, resource: string) => FeedSource | undefined;

const RBAC_RESOURCES: RBACResource[] = ['clusterroles', 'clusterrolebindings', 'roles', 'rolebindings'];

export class Authorization {
  readonly modes: string[];
  readonly resolver = new RBACResolver();
  readonly graph = new NodeGraph();
  /** the authorizer of the request chain and the access reviews */
  readonly authorizer: UnionAuthorizer;
  private readonly feeds: { stop(): void }[] = [];
  private aggregator?: ClusterRoleAggregator;

  constructor(opts: AuthorizationOptions) {
    this.modes = parseAuthorizationModes(opts.modes);
    const errs = validateAuthorizationModes(this.modes);
    if (errs.length) throw new Error(errs.join(', '));
    const chain: { name: string; authorizer: ModeAuthorizer }[] = [];
    for (const m of this.modes) {
      switch (m) {
        case 'AlwaysAllow':
          chain.push({ name: m, authorizer: new AlwaysAllowAuthorizer() });
          break;
        case 'AlwaysDeny':
          chain.push({ name: m, authorizer: new AlwaysDenyAuthorizer() });
          break;
        case 'RBAC':
          chain.push({ name: m, authorizer: new RBACAuthorizer(this.resolver) });
          break;
        case 'Node':
          chain.push({ name: m, authorizer: new NodeAuthorizer(this.graph, { nodeRules: nodeRules(), withSelectors: opts.nodeWithSelectors ?? true, getServiceAccounts: opts.nodeGetServiceAccounts ?? false }) });
          break;
      }
    }
    this.authorizer = new UnionAuthorizer(chain);
  }

  get nodeEnabled(): boolean {
    return this.modes.includes('Node');
  }

  /**
   * Feed the resolver (always: the escalation checks need it whatever the modes) and, with the
   * Node mode, the node graph from the server's watch caches. Call after the stores started.
   */
  attach(lookup: StoreLookup, onError?: (err: unknown) => void): void {
    for (const res of RBAC_RESOURCES) {
      const src = lookup('rbac.authorization.k8s.io', res);
      if (!src) throw new Error(`no store for ${res}.rbac.authorization.k8s.io`);
      this.feeds.push(
        feed(src, { replace: (objs) => this.resolver.replace(res, objs), onChange: (t, o, old) => this.resolver.onChange(res, t, o, old) }, { onError }),
      );
    }
    if (!this.nodeEnabled) return;
    const graphSources: ['' | 'storage.k8s.io', 'pods' | 'persistentvolumes' | 'volumeattachments'][] = [
      ['', 'pods'],
      ['', 'persistentvolumes'],
      ['storage.k8s.io', 'volumeattachments'],
    ];
    for (const [group, res] of graphSources) {
      const src = lookup(group, res);
      if (!src) throw new Error(`no store for ${res}`);
      this.feeds.push(feed(src, { replace: (objs) => this.graph.replace(res, objs), onChange: (t, o) => this.graph.onChange(res, t, o) }, { onError }));
    }
  }

  /** feed one RBAC change by hand (when not attached to stores) */
  onRBACChange(resource: RBACResource, type: ChangeType, obj: any, old?: any): void {
    this.resolver.onChange(resource, type, obj, old);
  }

  /** feed one node-graph change by hand (pods, persistentvolumes, volumeattachments) */
  onGraphChange(resource: 'pods' | 'persistentvolumes' | 'volumeattachments', type: ChangeType, obj: any): void {
    this.graph.onChange(resource, type, obj);
  }

  /** the escalation check of a create or update of an RBAC object (see escalation.ts) */
  checkWrite(w: Omit<RBACWrite, 'authorizer' | 'resolver'>): StatusError | undefined {
    return checkRBACWrite({ ...w, authorizer: this.authorizer, resolver: this.resolver });
  }

  /** the rbac/bootstrap-roles post-start hook: create or reconcile the bootstrap policy */
  bootstrap(writer: PolicyWriter, log?: (line: string) => void): Promise<ReconcileResult[]> {
    return runBootstrapHook(writer, { log });
  }

  /** start the ClusterRole aggregation controller (in-process) */
  startAggregation(writer: AggregationWriter, onError?: (name: string, err: unknown) => void): ClusterRoleAggregator {
    this.aggregator?.stop();
    this.aggregator = new ClusterRoleAggregator(this.resolver, writer, { onError });
    this.aggregator.start();
    return this.aggregator;
  }

  stop(): void {
    this.aggregator?.stop();
    for (const f of this.feeds.splice(0)) f.stop();
  }
}
