// Rule matching (wildcards, resourceNames, subresources, non-resource URLs), coverage and the
// compact rule text of escalation messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  breakdownRule,
  compactRules,
  compactString,
  covers,
  aggregateMessages,
  ruleAllows,
  rulesEqual,
  type PolicyRule,
  type RuleRequest,
} from '../../src/apiserver/rbac/rules.js';
import { goQuote, goQuoteList } from '../../src/machinery/gostrings.js';

const res = (verb: string, apiGroup: string, resource: string, extra: Partial<RuleRequest> = {}): RuleRequest => ({
  verb,
  apiGroup,
  resource,
  subresource: '',
  name: '',
  resourceRequest: true,
  ...extra,
});
const url = (verb: string, path: string): RuleRequest => ({ verb, path, resourceRequest: false });

test('verbs, groups and resources: exact values and *', () => {
  const rule: PolicyRule = { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] };
  assert.equal(ruleAllows(res('get', '', 'pods'), rule), true);
  assert.equal(ruleAllows(res('list', '', 'pods'), rule), true);
  assert.equal(ruleAllows(res('watch', '', 'pods'), rule), false);
  assert.equal(ruleAllows(res('get', 'apps', 'pods'), rule), false, 'the core group is "" and only ""');
  assert.equal(ruleAllows(res('get', '', 'services'), rule), false);
  const all: PolicyRule = { verbs: ['*'], apiGroups: ['*'], resources: ['*'] };
  assert.equal(ruleAllows(res('escalate', 'rbac.authorization.k8s.io', 'clusterroles'), all), true);
  assert.equal(ruleAllows(res('get', '', 'pods', { subresource: 'log' }), all), true, '* covers subresources');
  assert.equal(ruleAllows(url('get', '/healthz'), all), false, 'a resource rule never matches a URL');
});

test('resourceNames: only named objects; lists and creates without a name do not match', () => {
  const rule: PolicyRule = { verbs: ['get', 'list', 'update', 'create'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a', 'b'] };
  assert.equal(ruleAllows(res('get', '', 'configmaps', { name: 'a' }), rule), true);
  assert.equal(ruleAllows(res('update', '', 'configmaps', { name: 'b' }), rule), true);
  assert.equal(ruleAllows(res('get', '', 'configmaps', { name: 'c' }), rule), false);
  assert.equal(ruleAllows(res('list', '', 'configmaps'), rule), false);
  assert.equal(ruleAllows(res('create', '', 'configmaps'), rule), false);
  // a list with fieldSelector=metadata.name=a is authorized as named 'a'
  assert.equal(ruleAllows(res('list', '', 'configmaps', { name: 'a' }), rule), true);
});

test('subresources: resource/subresource exactly, or */subresource', () => {
  const rule: PolicyRule = { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] };
  assert.equal(ruleAllows(res('get', '', 'pods', { subresource: 'log' }), rule), true);
  assert.equal(ruleAllows(res('get', '', 'pods'), rule), false, 'pods/log does not grant pods');
  assert.equal(ruleAllows(res('get', '', 'pods', { subresource: 'status' }), rule), false);
  const parent: PolicyRule = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
  assert.equal(ruleAllows(res('get', '', 'pods', { subresource: 'log' }), parent), false, 'pods does not grant pods/log');
  const anyScale: PolicyRule = { verbs: ['get', 'update'], apiGroups: ['*'], resources: ['*/scale'] };
  assert.equal(ruleAllows(res('update', 'apps', 'deployments', { subresource: 'scale' }), anyScale), true);
  assert.equal(ruleAllows(res('get', '', 'replicationcontrollers', { subresource: 'scale' }), anyScale), true);
  assert.equal(ruleAllows(res('get', 'apps', 'deployments'), anyScale), false);
  assert.equal(ruleAllows(res('get', 'apps', 'deployments', { subresource: 'status' }), anyScale), false);
  assert.equal(ruleAllows(res('get', 'apps', 'deployments', { subresource: 'xscale' }), anyScale), false, '*/scale is not a suffix match');
});

test('non-resource URLs: exact, *, and prefixes ending in *', () => {
  const rule: PolicyRule = { verbs: ['get'], nonResourceURLs: ['/healthz', '/apis/*', '/logs*'] };
  assert.equal(ruleAllows(url('get', '/healthz'), rule), true);
  assert.equal(ruleAllows(url('get', '/healthz/etcd'), rule), false);
  assert.equal(ruleAllows(url('get', '/apis/apps/v1'), rule), true);
  assert.equal(ruleAllows(url('get', '/apis/'), rule), true);
  assert.equal(ruleAllows(url('get', '/apis'), rule), false, '/apis/* does not cover /apis');
  assert.equal(ruleAllows(url('get', '/logsfoo'), rule), true);
  assert.equal(ruleAllows(url('post', '/healthz'), rule), false);
  assert.equal(ruleAllows(url('head', '/anything'), { verbs: ['*'], nonResourceURLs: ['*'] }), true);
  assert.equal(ruleAllows(res('get', '', 'pods'), rule), false, 'a URL rule never matches a resource request');
});

test('covers: broken-down rules, subresource wildcards, names, URLs', () => {
  const owner: PolicyRule[] = [
    { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', '*/status'] },
    { verbs: ['*'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['web'] },
    { verbs: ['get'], nonResourceURLs: ['/apis/*'] },
  ];
  assert.equal(covers(owner, [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]).covered, true);
  assert.equal(covers(owner, [{ verbs: ['get'], apiGroups: [''], resources: ['pods/status'] }]).covered, true);
  assert.equal(covers(owner, [{ verbs: ['delete'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['web'] }]).covered, true);
  assert.equal(covers(owner, [{ verbs: ['delete'], apiGroups: ['apps'], resources: ['deployments'] }]).covered, false, 'a named rule does not cover every name');
  assert.equal(covers(owner, [{ verbs: ['get'], nonResourceURLs: ['/apis/apps'] }]).covered, true);
  assert.equal(covers(owner, [{ verbs: ['get'], nonResourceURLs: ['/api'] }]).covered, false);
  const { missing } = covers(owner, [{ verbs: ['get', 'watch', 'delete'], apiGroups: [''], resources: ['pods', 'secrets'] }]);
  assert.deepEqual(
    missing.map(compactString),
    [
      '{APIGroups:[""], Resources:["pods"], Verbs:["watch"]}',
      '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
      '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
      '{APIGroups:[""], Resources:["secrets"], Verbs:["watch"]}',
      '{APIGroups:[""], Resources:["secrets"], Verbs:["delete"]}',
    ],
  );
  assert.deepEqual(compactRules(missing).map(compactString), [
    '{APIGroups:[""], Resources:["pods"], Verbs:["watch" "delete"]}',
    '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "watch" "delete"]}',
  ]);
});

test('breakdown: one group, resource, verb and name each; URLs with verbs', () => {
  assert.equal(breakdownRule({ verbs: ['get', 'list'], apiGroups: ['', 'apps'], resources: ['a', 'b'], resourceNames: ['x', 'y'] }).length, 16);
  assert.deepEqual(breakdownRule({ verbs: ['get', 'post'], nonResourceURLs: ['/a'] }), [
    { nonResourceURLs: ['/a'], verbs: ['get'] },
    { nonResourceURLs: ['/a'], verbs: ['post'] },
  ]);
});

test('Go formatting: %q of strings and lists, compact rules, aggregates', () => {
  assert.equal(goQuote('alice'), '"alice"');
  assert.equal(goQuote('a"b\\c\nd\u0001'), '"a\\"b\\\\c\\nd\\x01"');
  assert.equal(goQuote('été'), '"été"');
  assert.equal(goQuoteList(['system:authenticated', 'dev']), '["system:authenticated" "dev"]');
  assert.equal(goQuoteList([]), '[]');
  assert.equal(
    compactString({ verbs: ['get'], apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: ['kubernetes.io/x'] }),
    '{APIGroups:["certificates.k8s.io"], Resources:["signers"], ResourceNames:["kubernetes.io/x"], Verbs:["get"]}',
  );
  assert.equal(compactString({ verbs: ['get'], nonResourceURLs: ['/metrics'] }), '{NonResourceURLs:["/metrics"], Verbs:["get"]}');
  assert.equal(aggregateMessages(['a']), 'a');
  assert.equal(aggregateMessages(['a', 'b', 'a']), '[a, b]');
  assert.equal(aggregateMessages(['a', 'a']), 'a');
});

test('rule equality ignores absent versus empty lists, not order', () => {
  assert.equal(rulesEqual([{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: [] }], [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]), true);
  assert.equal(rulesEqual([{ verbs: ['get', 'list'] }], [{ verbs: ['list', 'get'] }]), false);
  assert.equal(rulesEqual(undefined, []), true);
});
