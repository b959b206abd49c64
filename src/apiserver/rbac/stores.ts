// Writers over the API server's ResourceStores, for the bootstrap reconciliation and the
// aggregation controller (server-side writes: no request, no admission, never a dry run).
import { StatusError } from '../../machinery/errors.js';
import type { ResourceStore } from '../registry/store.js';
import type { AggregationWriter } from './aggregation.js';
import type { PolicyWriter } from './reconcile.js';
import type { RBACResource } from './resolver.js';
import type { PolicyRule } from './rules.js';

/** the store of one RBAC resource */
export type RBACStoreLookup = (resource: RBACResource) => ResourceStore;

/** a PolicyWriter over the stores of roles, rolebindings, clusterroles and clusterrolebindings */
export function storePolicyWriter(lookup: RBACStoreLookup): PolicyWriter {
  return {
    get(resource, namespace, name) {
      const e = lookup(resource).get(namespace, name);
      return e ? structuredClone(e.obj) : undefined;
    },
    async create(resource, obj) {
      return lookup(resource).create(obj, { dryRun: false });
    },
    async update(resource, obj) {
      const r = await lookup(resource).update(obj.metadata?.namespace ?? '', obj.metadata.name, obj, { dryRun: false });
      return r.obj;
    },
    async delete(resource, namespace, name) {
      try {
        await lookup(resource).delete(namespace, name, { dryRun: false });
      } catch (e) {
        if (!(e instanceof StatusError && e.code === 404)) throw e;
      }
    },
  };
}

/** an AggregationWriter replacing the rules of a ClusterRole in its store */
export function storeAggregationWriter(clusterRoles: ResourceStore): AggregationWriter {
  return {
    async setClusterRoleRules(name: string, rules: PolicyRule[]) {
      await clusterRoles.guaranteedUpdate(
        '',
        name,
        (cur) => {
          cur.rules = rules.map((r) => structuredClone(r));
          return cur;
        },
        { dryRun: false },
      );
    },
  };
}
