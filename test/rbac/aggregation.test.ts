// ClusterRole aggregation: the rules of the roles an aggregationRule selects, and the controller
// keeping aggregated roles in sync as roles change.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aggregatedRules, ClusterRoleAggregator } from '../../src/apiserver/rbac/aggregation.js';
import { RBACResolver } from '../../src/apiserver/rbac/resolver.js';
import { RBACAuthorizer } from '../../src/apiserver/rbac/authorizers.js';
import type { PolicyRule } from '../../src/apiserver/rbac/rules.js';
import { clusterRole, clusterRoleBinding, ra, subj, user } from './helpers.js';

const labelled = (name: string, labels: Record<string, string>, rules: PolicyRule[]) => clusterRole(name, rules, { metadata: { labels } });
const agg = (name: string, selectors: any[]) => clusterRole(name, [], { aggregationRule: { clusterRoleSelectors: selectors } });

test('rules of matching roles, in name order, each distinct rule once, not the role itself', () => {
  const a: PolicyRule = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
  const b: PolicyRule = { verbs: ['list'], apiGroups: [''], resources: ['pods'] };
  const c: PolicyRule = { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] };
  const all = [
    labelled('zeta', { team: 'x' }, [c, a]),
    labelled('alpha', { team: 'x' }, [a, b]),
    labelled('other', { team: 'y' }, [c]),
    { ...agg('combined', [{ matchLabels: { team: 'x' } }, { matchExpressions: [{ key: 'team', operator: 'In', values: ['y'] }] }]), metadata: { name: 'combined', labels: { team: 'x' } } },
  ];
  assert.deepEqual(aggregatedRules(all[3], all), [a, b, c]);
  assert.equal(aggregatedRules(all[0], all), undefined, 'not aggregated');
  // an empty selector selects every role
  assert.equal(aggregatedRules(agg('everything', [{}]), all)!.length, 3);
  // no selectors: no rules
  assert.deepEqual(aggregatedRules(agg('none', []), all), []);
});

test('the controller fills aggregated roles and follows changes', async () => {
  const r = new RBACResolver();
  const writes: string[] = [];
  const aggregator = new ClusterRoleAggregator(r, {
    async setClusterRoleRules(name, rules) {
      writes.push(name);
      const cur = r.clusterRole(name)!.obj;
      r.onChange('clusterroles', 'MODIFIED', { ...cur, rules }, cur);
    },
  });
  r.replace('clusterroles', [
    agg('monitoring', [{ matchLabels: { 'example.com/aggregate-to-monitoring': 'true' } }]),
    labelled('pods-view', { 'example.com/aggregate-to-monitoring': 'true' }, [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }]),
  ]);
  r.replace('clusterrolebindings', [clusterRoleBinding('mon', 'monitoring', [subj.user('mon')])]);
  aggregator.start();
  await aggregator.idle();
  const rbac = new RBACAuthorizer(r);
  const mon = user('mon');
  assert.equal(rbac.authorize(ra(mon, 'list', 'pods')).decision, 'allow');
  assert.equal(rbac.authorize(ra(mon, 'list', 'nodes')).decision, 'noOpinion');
  r.onChange('clusterroles', 'ADDED', labelled('nodes-view', { 'example.com/aggregate-to-monitoring': 'true' }, [{ verbs: ['list'], apiGroups: [''], resources: ['nodes'] }]));
  await aggregator.idle();
  assert.equal(rbac.authorize(ra(mon, 'list', 'nodes')).decision, 'allow');
  // removing the label takes the rules away
  const nv = r.clusterRole('nodes-view')!.obj;
  r.onChange('clusterroles', 'MODIFIED', { ...nv, metadata: { name: 'nodes-view', labels: {} } }, nv);
  await aggregator.idle();
  assert.equal(rbac.authorize(ra(mon, 'list', 'nodes')).decision, 'noOpinion');
  assert.deepEqual(writes, ['monitoring', 'monitoring', 'monitoring']);
  // nothing changes: nothing is written
  r.onChange('clusterrolebindings', 'ADDED', clusterRoleBinding('x', 'monitoring', []));
  await aggregator.idle();
  assert.equal(writes.length, 3);
  aggregator.stop();
});

test('a failed write is retried', async () => {
  const r = new RBACResolver();
  let fail = 1;
  const errors: string[] = [];
  const aggregator = new ClusterRoleAggregator(
    r,
    {
      async setClusterRoleRules(name, rules) {
        if (fail-- > 0) throw new Error('conflict');
        const cur = r.clusterRole(name)!.obj;
        r.onChange('clusterroles', 'MODIFIED', { ...cur, rules }, cur);
      },
    },
    { retryMs: 10, onError: (n, e) => errors.push(`${n}: ${(e as Error).message}`) },
  );
  r.replace('clusterroles', [agg('a', [{ matchLabels: { x: 'y' } }]), labelled('b', { x: 'y' }, [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }])]);
  aggregator.start();
  await aggregator.idle();
  assert.deepEqual(errors, ['a: conflict']);
  assert.equal(aggregator.failures.get('a'), 'conflict');
  await new Promise((res) => setTimeout(res, 50));
  await aggregator.idle();
  assert.equal(r.clusterRole('a')!.rules.length, 1);
  assert.equal(aggregator.failures.size, 0);
  aggregator.stop();
});
