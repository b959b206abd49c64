// flowcontrol.apiserver.k8s.io/v1 validation: FlowSchema and PriorityLevelConfiguration objects,
// written defaulted in their v1 form, with the exact messages kube-apiserver 1.33 answers with;
// kube-apiserver's own mandatory (and some suggested) objects must pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  validateFlowSchema,
  validateFlowSchemaStatusUpdate,
  validateFlowSchemaUpdate,
  validatePriorityLevelConfiguration,
  validatePriorityLevelConfigurationStatusUpdate,
  validatePriorityLevelConfigurationUpdate,
} from '../../src/schema/validation/flowcontrol.js';
import { LABEL_MSG, SUBDOMAIN_MSG, mutate, strs } from './validation-helpers.js';

const NS_INTRO = "each member of this list must be '*' or a DNS-1123 label; ";
const VERBS = '"create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"';

// ---- objects ----

const AUTOUPDATE = { 'apf.kubernetes.io/autoupdate-spec': 'true' };
const ALL_RESOURCES = [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }];
const ALL_NON_RESOURCES = [{ verbs: ['*'], nonResourceURLs: ['*'] }];
const groupSubject = (name: string) => ({ kind: 'Group', group: { name } });
const dangling = (pl: string) => ({
  status: {
    conditions: [
      {
        type: 'Dangling',
        status: 'False',
        lastTransitionTime: '2025-05-01T10:00:00Z',
        reason: 'Found',
        message: `This FlowSchema references the PriorityLevelConfiguration object named "${pl}" and it exists`,
      },
    ],
  },
});

// kube-apiserver 1.33's mandatory objects as it creates them (apiserver's flowcontrol/bootstrap)
const MANDATORY_FS_EXEMPT = {
  apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
  kind: 'FlowSchema',
  metadata: { name: 'exempt', annotations: AUTOUPDATE },
  spec: {
    priorityLevelConfiguration: { name: 'exempt' },
    matchingPrecedence: 1,
    rules: [{ subjects: [groupSubject('system:masters')], resourceRules: ALL_RESOURCES, nonResourceRules: ALL_NON_RESOURCES }],
  },
  ...dangling('exempt'),
};
const MANDATORY_FS_CATCH_ALL = {
  apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
  kind: 'FlowSchema',
  metadata: { name: 'catch-all', annotations: AUTOUPDATE },
  spec: {
    priorityLevelConfiguration: { name: 'catch-all' },
    matchingPrecedence: 10000,
    distinguisherMethod: { type: 'ByUser' },
    rules: [
      {
        subjects: [groupSubject('system:unauthenticated'), groupSubject('system:authenticated')],
        resourceRules: ALL_RESOURCES,
        nonResourceRules: ALL_NON_RESOURCES,
      },
    ],
  },
  ...dangling('catch-all'),
};
const MANDATORY_PL_EXEMPT = {
  apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
  kind: 'PriorityLevelConfiguration',
  metadata: { name: 'exempt', annotations: AUTOUPDATE },
  spec: { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } },
  status: {},
};
const MANDATORY_PL_CATCH_ALL = {
  apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
  kind: 'PriorityLevelConfiguration',
  metadata: { name: 'catch-all', annotations: AUTOUPDATE },
  spec: { type: 'Limited', limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: 'Reject' } } },
  status: {},
};

// some of the suggested objects
const SUGGESTED_FS = [
  {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name: 'probes', annotations: AUTOUPDATE },
    spec: {
      priorityLevelConfiguration: { name: 'exempt' },
      matchingPrecedence: 2,
      rules: [
        {
          subjects: [groupSubject('system:unauthenticated'), groupSubject('system:authenticated')],
          nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }],
        },
      ],
    },
    status: {},
  },
  {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name: 'system-leader-election', annotations: AUTOUPDATE },
    spec: {
      priorityLevelConfiguration: { name: 'leader-election' },
      matchingPrecedence: 100,
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [
            { kind: 'User', user: { name: 'system:kube-controller-manager' } },
            { kind: 'User', user: { name: 'system:kube-scheduler' } },
            { kind: 'ServiceAccount', serviceAccount: { namespace: 'kube-system', name: '*' } },
          ],
          resourceRules: [
            { verbs: ['get', 'create', 'update'], apiGroups: [''], resources: ['endpoints', 'configmaps'], namespaces: ['kube-system'] },
            { verbs: ['get', 'create', 'update'], apiGroups: ['coordination.k8s.io'], resources: ['leases'], namespaces: ['*'] },
          ],
        },
      ],
    },
    status: {},
  },
  {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name: 'kube-system-service-accounts', annotations: AUTOUPDATE },
    spec: {
      priorityLevelConfiguration: { name: 'workload-high' },
      matchingPrecedence: 900,
      distinguisherMethod: { type: 'ByNamespace' },
      rules: [
        {
          subjects: [{ kind: 'ServiceAccount', serviceAccount: { namespace: 'kube-system', name: '*' } }],
          resourceRules: ALL_RESOURCES,
          nonResourceRules: ALL_NON_RESOURCES,
        },
      ],
    },
    status: {},
  },
];
const SUGGESTED_PL = [
  ['system', 30, 64, 6],
  ['node-high', 40, 64, 6],
  ['leader-election', 10, 16, 4],
  ['workload-high', 40, 128, 6],
  ['workload-low', 100, 128, 6],
  ['global-default', 20, 128, 6],
].map(([name, shares, queues, handSize]) => ({
  apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
  kind: 'PriorityLevelConfiguration',
  metadata: { name, annotations: AUTOUPDATE },
  spec: {
    type: 'Limited',
    limited: { nominalConcurrencyShares: shares, lendablePercent: 0, limitResponse: { type: 'Queue', queuing: { queues, handSize, queueLengthLimit: 50 } } },
  },
  status: {},
}));

/** a valid user FlowSchema (defaulted) */
function flowSchema(spec: Record<string, unknown> = {}, name = 'web-traffic'): any {
  return {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name },
    spec: {
      priorityLevelConfiguration: { name: 'workload-low' },
      matchingPrecedence: 1000,
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [{ kind: 'User', user: { name: 'alice' } }],
          resourceRules: [{ verbs: ['get', 'list'], apiGroups: ['', 'apps'], resources: ['pods', 'deployments'], namespaces: ['default'] }],
          nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/metrics', '/apis/*'] }],
        },
      ],
      ...spec,
    },
    status: {},
  };
}
/** a FlowSchema with a single rule */
function fsRule(rule: Record<string, unknown>, name?: string): any {
  return flowSchema({ rules: [rule] }, name);
}
const aUser = [{ kind: 'User', user: { name: 'alice' } }];
const allURLs = ALL_NON_RESOURCES;

/** a valid user PriorityLevelConfiguration (defaulted) */
function priorityLevel(spec: Record<string, unknown> = {}, name = 'web'): any {
  return {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'PriorityLevelConfiguration',
    metadata: { name },
    spec: {
      type: 'Limited',
      limited: {
        nominalConcurrencyShares: 30,
        lendablePercent: 0,
        limitResponse: { type: 'Queue', queuing: { handSize: 8, queues: 64, queueLengthLimit: 50 } },
      },
      ...spec,
    },
    status: {},
  };
}
function limited(l: Record<string, unknown>, name?: string): any {
  return priorityLevel({ limited: { nominalConcurrencyShares: 30, lendablePercent: 0, limitResponse: { type: 'Reject' }, ...l } }, name);
}
function queuing(q: Record<string, unknown>): any {
  return limited({ limitResponse: { type: 'Queue', queuing: { handSize: 8, queues: 64, queueLengthLimit: 50, ...q } } });
}

const FS_EXEMPT_BAD_REPR =
  'flowcontrol.FlowSchemaSpec{PriorityLevelConfiguration:flowcontrol.PriorityLevelConfigurationReference{Name:"exempt"}, MatchingPrecedence:1, ' +
  'DistinguisherMethod:(*flowcontrol.FlowDistinguisherMethod)(nil), Rules:[]flowcontrol.PolicyRulesWithSubjects{flowcontrol.PolicyRulesWithSubjects{' +
  'Subjects:[]flowcontrol.Subject{flowcontrol.Subject{Kind:"Group", User:(*flowcontrol.UserSubject)(nil), Group:(*flowcontrol.GroupSubject)(0xc000010000), ' +
  'ServiceAccount:(*flowcontrol.ServiceAccountSubject)(nil)}}, ResourceRules:[]flowcontrol.ResourcePolicyRule{flowcontrol.ResourcePolicyRule{' +
  'Verbs:[]string{"*"}, APIGroups:[]string{"*"}, Resources:[]string{"*"}, ClusterScope:true, Namespaces:[]string{"*"}}}, ' +
  'NonResourceRules:[]flowcontrol.NonResourcePolicyRule{flowcontrol.NonResourcePolicyRule{Verbs:[]string{"*"}, NonResourceURLs:[]string{"/"}}}}}}';
const PL_LIMITED_REPR =
  'flowcontrol.PriorityLevelConfigurationSpec{Type:"Limited", Limited:(*flowcontrol.LimitedPriorityLevelConfiguration)(0xc000010000), Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(nil)}';

// ---- FlowSchema ----

test('valid FlowSchemas: the mandatory and suggested objects and a user one', () => {
  for (const o of [MANDATORY_FS_EXEMPT, MANDATORY_FS_CATCH_ALL, ...SUGGESTED_FS, flowSchema()]) {
    assert.deepEqual(strs(validateFlowSchema(o)), [], o.metadata.name);
    assert.deepEqual(strs(validateFlowSchemaUpdate(o, o)), [], o.metadata.name);
  }
  // a null member is an absent one, for the union rules and for the mandatory-spec check alike
  assert.deepEqual(strs(validateFlowSchema(mutate(MANDATORY_FS_CATCH_ALL, (f) => ((f.spec.rules[0].subjects[0].user = null), (f.spec.rules[0].subjects[1].serviceAccount = null))))), []);
  // cluster-scoped rules need no namespace, and `/` is a valid non-resource URL
  assert.deepEqual(strs(validateFlowSchema(fsRule({ subjects: aUser, resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true }] }))), []);
  assert.deepEqual(strs(validateFlowSchema(fsRule({ subjects: aUser, nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['/'] }] }))), []);
  // a spec without rules matches nothing but is valid
  assert.deepEqual(strs(validateFlowSchema(flowSchema({ rules: [] }))), []);
  assert.deepEqual(strs(validateFlowSchema(flowSchema({ distinguisherMethod: undefined }))), []);
});

const FS_CASES: { name: string; obj: any; want: string[] }[] = [
  {
    name: 'matchingPrecedence must be positive',
    obj: flowSchema({ matchingPrecedence: -1 }),
    want: ['spec.matchingPrecedence: Invalid value: -1: must be a positive value'],
  },
  {
    name: 'matchingPrecedence must not be greater than 10000',
    obj: flowSchema({ matchingPrecedence: 10001 }),
    want: ['spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000'],
  },
  {
    name: 'only exempt may have matchingPrecedence 1',
    obj: flowSchema({ matchingPrecedence: 1 }),
    want: ["spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1"],
  },
  {
    name: 'unsupported distinguisher method',
    obj: flowSchema({ distinguisherMethod: { type: 'ByFoo' } }),
    want: ['spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:"ByFoo"}: supported values: "ByNamespace", "ByUser"'],
  },
  {
    name: 'empty distinguisher method',
    obj: flowSchema({ distinguisherMethod: {} }),
    want: ['spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:""}: supported values: "ByNamespace", "ByUser"'],
  },
  {
    name: 'priority level reference must be a DNS subdomain',
    obj: flowSchema({ priorityLevelConfiguration: { name: 'system+++$$' } }),
    want: [`spec.priorityLevelConfiguration.name: Invalid value: "system+++$$": ${SUBDOMAIN_MSG}`],
  },
  {
    name: 'priority level reference is required',
    obj: flowSchema({ priorityLevelConfiguration: {} }),
    want: ['spec.priorityLevelConfiguration.name: Required value: must reference a priority level'],
  },
  {
    name: 'a rule needs subjects and at least one of resource and non-resource rules',
    obj: fsRule({ subjects: [] }),
    want: [
      'spec.rules[0].subjects: Required value: subjects must contain at least one value',
      'spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty',
    ],
  },
  {
    name: 'unsupported subject kind',
    obj: fsRule({ subjects: [{ kind: 'FooKind' }], nonResourceRules: allURLs }),
    want: ['spec.rules[0].subjects[0].kind: Unsupported value: "FooKind": supported values: "Group", "ServiceAccount", "User"'],
  },
  {
    name: 'missing subject kind',
    obj: fsRule({ subjects: [{ user: { name: 'alice' } }], nonResourceRules: allURLs }),
    want: ['spec.rules[0].subjects[0].kind: Unsupported value: "": supported values: "Group", "ServiceAccount", "User"'],
  },
  {
    name: 'malformed ServiceAccount subject union',
    obj: fsRule({ subjects: [{ kind: 'ServiceAccount', user: { name: 'fred' }, group: { name: 'fred' } }], nonResourceRules: allURLs }),
    want: [
      "spec.rules[0].subjects[0].serviceAccount: Required value: serviceAccount is required when subject kind is 'ServiceAccount'",
      "spec.rules[0].subjects[0].user: Forbidden: user is forbidden when subject kind is not 'User'",
      "spec.rules[0].subjects[0].group: Forbidden: group is forbidden when subject kind is not 'Group'",
    ],
  },
  {
    name: 'malformed User subject union',
    obj: fsRule({ subjects: [{ kind: 'User', group: { name: 'fred' }, serviceAccount: { namespace: 's', name: 'n' } }], nonResourceRules: allURLs }),
    want: [
      "spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User'",
      "spec.rules[0].subjects[0].serviceAccount: Forbidden: serviceAccount is forbidden when subject kind is not 'ServiceAccount'",
      "spec.rules[0].subjects[0].group: Forbidden: group is forbidden when subject kind is not 'Group'",
    ],
  },
  {
    name: 'malformed Group subject union',
    obj: fsRule({ subjects: [{ kind: 'Group', user: { name: 'fred' }, serviceAccount: { namespace: 's', name: 'n' } }], nonResourceRules: allURLs }),
    want: [
      "spec.rules[0].subjects[0].group: Required value: group is required when subject kind is 'Group'",
      "spec.rules[0].subjects[0].serviceAccount: Forbidden: serviceAccount is forbidden when subject kind is not 'ServiceAccount'",
      "spec.rules[0].subjects[0].user: Forbidden: user is forbidden when subject kind is not 'User'",
    ],
  },
  {
    name: 'user and group subjects need a name',
    obj: fsRule({ subjects: [{ kind: 'User', user: {} }, { kind: 'Group', group: { name: '' } }], nonResourceRules: allURLs }),
    want: ['spec.rules[0].subjects[0].user.name: Required value', 'spec.rules[0].subjects[1].group.name: Required value'],
  },
  {
    name: 'service account subject: name and namespace required',
    obj: fsRule({ subjects: [{ kind: 'ServiceAccount', serviceAccount: {} }], nonResourceRules: allURLs }),
    want: [
      'spec.rules[0].subjects[0].serviceAccount.name: Required value',
      'spec.rules[0].subjects[0].serviceAccount.namespace: Required value: must specify namespace for service account',
    ],
  },
  {
    name: 'service account subject: malformed name and namespace',
    obj: fsRule({ subjects: [{ kind: 'ServiceAccount', serviceAccount: { namespace: 'kube.system', name: 'Bad_Name' } }], nonResourceRules: allURLs }),
    want: [
      `spec.rules[0].subjects[0].serviceAccount.name: Invalid value: "Bad_Name": ${SUBDOMAIN_MSG}`,
      'spec.rules[0].subjects[0].serviceAccount.namespace: Invalid value: "kube.system": must not contain dots',
    ],
  },
  {
    name: 'resource rule: everything missing',
    obj: fsRule({ subjects: aUser, resourceRules: [{}] }),
    want: [
      'spec.rules[0].resourceRules[0].verbs: Required value: verbs must contain at least one value',
      'spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group',
      'spec.rules[0].resourceRules[0].resources: Required value: resource rules must supply at least one resource',
      'spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace',
    ],
  },
  {
    name: "resource rule: '*' mixed with particulars",
    obj: fsRule({ subjects: aUser, resourceRules: [{ verbs: ['*', 'create'], apiGroups: ['*', 'tak'], resources: ['*', 'tok'], namespaces: ['foo', '*'] }] }),
    want: [
      `spec.rules[0].resourceRules[0].verbs: Invalid value: []string{"*", "create"}: if '*' is present, must not specify other verbs`,
      `spec.rules[0].resourceRules[0].apiGroups: Invalid value: []string{"*", "tak"}: if '*' is present, must not specify other api groups`,
      `spec.rules[0].resourceRules[0].resources: Invalid value: []string{"*", "tok"}: if '*' is present, must not specify other resources`,
      `spec.rules[0].resourceRules[0].namespaces: Invalid value: []string{"foo", "*"}: if '*' is present, must not specify other namespaces`,
    ],
  },
  {
    name: 'resource rule: unsupported verb',
    obj: fsRule({ subjects: aUser, resourceRules: [{ verbs: ['get', 'feed'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }] }),
    want: [`spec.rules[0].resourceRules[0].verbs: Unsupported value: []string{"get", "feed"}: supported values: ${VERBS}`],
  },
  {
    name: 'resource rule: malformed namespaces',
    obj: fsRule({ subjects: aUser, resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], namespaces: ['-foo', 'ok', 'a.b'] }] }),
    want: [
      `spec.rules[0].resourceRules[0].namespaces[0]: Invalid value: "-foo": ${NS_INTRO}${LABEL_MSG}`,
      `spec.rules[0].resourceRules[0].namespaces[2]: Invalid value: "a.b": ${NS_INTRO}must not contain dots`,
    ],
  },
  {
    name: 'non-resource rule: everything missing',
    obj: fsRule({ subjects: aUser, nonResourceRules: [{}] }),
    want: [
      'spec.rules[0].nonResourceRules[0].verbs: Required value: verbs must contain at least one value',
      'spec.rules[0].nonResourceRules[0].nonResourceURLs: Required value: nonResourceURLs must contain at least one value',
    ],
  },
  {
    name: "non-resource rule: '*' mixed with particulars",
    obj: fsRule({ subjects: aUser, nonResourceRules: [{ verbs: ['*', 'get'], nonResourceURLs: ['*', 'tik'] }] }),
    want: [
      `spec.rules[0].nonResourceRules[0].verbs: Invalid value: []string{"*", "get"}: if '*' is present, must not specify other verbs`,
      `spec.rules[0].nonResourceRules[0].nonResourceURLs: Invalid value: []string{"*", "tik"}: if '*' is present, must not specify other non-resource URLs`,
    ],
  },
  {
    name: 'non-resource rule: unsupported verb and malformed URLs',
    obj: fsRule({ subjects: aUser, nonResourceRules: [{ verbs: ['post'], nonResourceURLs: ['', 'healthz', '/a b', '/a//b', '/a*', '/a/*/b/*', '/apis/*', '/'] }] }),
    want: [
      `spec.rules[0].nonResourceRules[0].verbs: Unsupported value: []string{"post"}: supported values: ${VERBS}`,
      'spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "": must not be empty',
      'spec.rules[0].nonResourceRules[0].nonResourceURLs[1]: Invalid value: "healthz": must start with slash',
      'spec.rules[0].nonResourceRules[0].nonResourceURLs[2]: Invalid value: "/a b": must not contain white-space',
      'spec.rules[0].nonResourceRules[0].nonResourceURLs[3]: Invalid value: "/a//b": must not contain double slash',
      'spec.rules[0].nonResourceRules[0].nonResourceURLs[4]: Invalid value: "/a*": wildcard can only do suffix matching',
      'spec.rules[0].nonResourceRules[0].nonResourceURLs[5]: Invalid value: "/a/*/b/*": wildcard can only do suffix matching',
    ],
  },
  {
    name: 'errors of several rules, in order',
    obj: flowSchema({
      matchingPrecedence: 20000,
      priorityLevelConfiguration: { name: 'UPPER' },
      rules: [{ subjects: aUser, nonResourceRules: allURLs }, { subjects: [{ kind: 'Group', group: {} }] }],
    }),
    want: [
      'spec.matchingPrecedence: Invalid value: 20000: must not be greater than 10000',
      `spec.priorityLevelConfiguration.name: Invalid value: "UPPER": ${SUBDOMAIN_MSG}`,
      'spec.rules[1].subjects[0].group.name: Required value',
      'spec.rules[1]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty',
    ],
  },
  {
    name: 'the mandatory exempt schema is fixed',
    obj: mutate(MANDATORY_FS_EXEMPT, (f) => (f.spec.rules[0].nonResourceRules[0].nonResourceURLs = ['/'])),
    want: [`spec: Invalid value: ${FS_EXEMPT_BAD_REPR}: spec of 'exempt' must equal the fixed value`],
  },
  {
    name: 'the mandatory catch-all schema is fixed (matchingPrecedence)',
    obj: mutate(MANDATORY_FS_CATCH_ALL, (f) => (f.spec.matchingPrecedence = 9999)),
    want: [
      'spec: Invalid value: flowcontrol.FlowSchemaSpec{PriorityLevelConfiguration:flowcontrol.PriorityLevelConfigurationReference{Name:"catch-all"}, MatchingPrecedence:9999, ' +
        'DistinguisherMethod:(*flowcontrol.FlowDistinguisherMethod)(0xc000010000), Rules:[]flowcontrol.PolicyRulesWithSubjects{flowcontrol.PolicyRulesWithSubjects{' +
        'Subjects:[]flowcontrol.Subject{flowcontrol.Subject{Kind:"Group", User:(*flowcontrol.UserSubject)(nil), Group:(*flowcontrol.GroupSubject)(0xc000010000), ' +
        'ServiceAccount:(*flowcontrol.ServiceAccountSubject)(nil)}, flowcontrol.Subject{Kind:"Group", User:(*flowcontrol.UserSubject)(nil), ' +
        'Group:(*flowcontrol.GroupSubject)(0xc000010000), ServiceAccount:(*flowcontrol.ServiceAccountSubject)(nil)}}, ' +
        'ResourceRules:[]flowcontrol.ResourcePolicyRule{flowcontrol.ResourcePolicyRule{Verbs:[]string{"*"}, APIGroups:[]string{"*"}, Resources:[]string{"*"}, ' +
        'ClusterScope:true, Namespaces:[]string{"*"}}}, NonResourceRules:[]flowcontrol.NonResourcePolicyRule{flowcontrol.NonResourcePolicyRule{' +
        `Verbs:[]string{"*"}, NonResourceURLs:[]string{"*"}}}}}}: spec of 'catch-all' must equal the fixed value`,
    ],
  },
  {
    name: 'the mandatory catch-all schema is fixed (no rules; the error comes after the spec errors)',
    obj: mutate(MANDATORY_FS_CATCH_ALL, (f) => ((f.spec.rules = undefined), (f.spec.distinguisherMethod = undefined), (f.spec.matchingPrecedence = 0))),
    want: [
      'spec.matchingPrecedence: Invalid value: 0: must be a positive value',
      'spec: Invalid value: flowcontrol.FlowSchemaSpec{PriorityLevelConfiguration:flowcontrol.PriorityLevelConfigurationReference{Name:"catch-all"}, MatchingPrecedence:0, ' +
        "DistinguisherMethod:(*flowcontrol.FlowDistinguisherMethod)(nil), Rules:[]flowcontrol.PolicyRulesWithSubjects(nil)}: spec of 'catch-all' must equal the fixed value",
    ],
  },
  {
    name: 'the mandatory exempt schema may not add a member to a subject',
    obj: mutate(MANDATORY_FS_EXEMPT, (f) => (f.spec.rules[0].subjects[0].user = { name: 'x' })),
    want: [
      "spec.rules[0].subjects[0].user: Forbidden: user is forbidden when subject kind is not 'User'",
      'spec: Invalid value: flowcontrol.FlowSchemaSpec{PriorityLevelConfiguration:flowcontrol.PriorityLevelConfigurationReference{Name:"exempt"}, MatchingPrecedence:1, ' +
        'DistinguisherMethod:(*flowcontrol.FlowDistinguisherMethod)(nil), Rules:[]flowcontrol.PolicyRulesWithSubjects{flowcontrol.PolicyRulesWithSubjects{' +
        'Subjects:[]flowcontrol.Subject{flowcontrol.Subject{Kind:"Group", User:(*flowcontrol.UserSubject)(0xc000010000), Group:(*flowcontrol.GroupSubject)(0xc000010000), ' +
        'ServiceAccount:(*flowcontrol.ServiceAccountSubject)(nil)}}, ResourceRules:[]flowcontrol.ResourcePolicyRule{flowcontrol.ResourcePolicyRule{' +
        'Verbs:[]string{"*"}, APIGroups:[]string{"*"}, Resources:[]string{"*"}, ClusterScope:true, Namespaces:[]string{"*"}}}, ' +
        `NonResourceRules:[]flowcontrol.NonResourcePolicyRule{flowcontrol.NonResourcePolicyRule{Verbs:[]string{"*"}, NonResourceURLs:[]string{"*"}}}}}}: spec of 'exempt' must equal the fixed value`,
    ],
  },
  {
    name: 'status conditions: duplicate and empty types',
    obj: mutate(flowSchema(), (f) => (f.status = { conditions: [{ type: 'Dangling', status: 'False' }, { type: '' }, { type: 'Dangling' }, { type: '' }] })),
    want: [
      'status.conditions[1].type: Required value: must not be empty',
      'status.conditions[2].type: Duplicate value: "Dangling"',
      'status.conditions[3].type: Duplicate value: ""',
      'status.conditions[3].type: Required value: must not be empty',
    ],
  },
];

for (const c of FS_CASES)
  test(`FlowSchema: ${c.name}`, () => {
    assert.deepEqual(strs(validateFlowSchema(c.obj)), c.want);
    // an update validates the new object exactly as a create does
    assert.deepEqual(strs(validateFlowSchemaUpdate(c.obj, flowSchema())), c.want);
  });

test('FlowSchema update: every spec field may change', () => {
  const old = flowSchema();
  const next = flowSchema({ priorityLevelConfiguration: { name: 'global-default' }, matchingPrecedence: 42, distinguisherMethod: { type: 'ByNamespace' }, rules: [] });
  assert.deepEqual(strs(validateFlowSchemaUpdate(next, old)), []);
  assert.deepEqual(strs(validateFlowSchemaUpdate(MANDATORY_FS_EXEMPT, MANDATORY_FS_EXEMPT)), []);
});

test('FlowSchema status update: only the conditions are checked', () => {
  const old = flowSchema();
  assert.deepEqual(strs(validateFlowSchemaStatusUpdate(mutate(old, (f) => Object.assign(f, dangling('workload-low'))), old)), []);
  assert.deepEqual(strs(validateFlowSchemaStatusUpdate(MANDATORY_FS_CATCH_ALL, MANDATORY_FS_CATCH_ALL)), []);
  // the status strategy keeps the old spec: a bad spec is not this update's business
  const badSpec = flowSchema({ matchingPrecedence: -5 });
  assert.deepEqual(strs(validateFlowSchemaStatusUpdate(badSpec, badSpec)), []);
  const dup = mutate(old, (f) => (f.status = { conditions: [{ type: 'Dangling', status: 'True' }, { type: 'Dangling', status: 'False' }, { status: 'True' }] }));
  assert.deepEqual(strs(validateFlowSchemaStatusUpdate(dup, old)), ['status.conditions[1].type: Duplicate value: "Dangling"', 'status.conditions[2].type: Required value: must not be empty']);
});

// ---- PriorityLevelConfiguration ----

test('valid PriorityLevelConfigurations: the mandatory and suggested objects and user ones', () => {
  const valid = [
    MANDATORY_PL_EXEMPT,
    MANDATORY_PL_CATCH_ALL,
    ...SUGGESTED_PL,
    priorityLevel(),
    // zero shares are allowed (since 1.30)
    limited({ nominalConcurrencyShares: 0 }),
    limited({ lendablePercent: 100, borrowingLimitPercent: 0 }),
    limited({ borrowingLimitPercent: 1000 }),
    // handSize 2 and 10^7 queues need 47 bits of entropy
    queuing({ queues: 10 * 1000 * 1000, handSize: 2 }),
    queuing({ queues: 1, handSize: 1 }),
    // 2^10 queues and a hand of 6 need exactly 60 bits
    queuing({ queues: 1024, handSize: 6 }),
    // an Exempt level other than `exempt` is refused by name, but `exempt` may change spec.exempt
    mutate(MANDATORY_PL_EXEMPT, (p) => (p.spec.exempt = { nominalConcurrencyShares: 10, lendablePercent: 10 })),
    mutate(MANDATORY_PL_EXEMPT, (p) => delete p.spec.exempt),
  ];
  for (const o of valid) {
    assert.deepEqual(strs(validatePriorityLevelConfiguration(o)), [], JSON.stringify(o.spec));
    assert.deepEqual(strs(validatePriorityLevelConfigurationUpdate(o, o)), [], JSON.stringify(o.spec));
  }
});

const PL_CASES: { name: string; obj: any; want: string[] }[] = [
  {
    name: "the type must be 'Exempt' exactly for the level named exempt",
    obj: priorityLevel({ type: 'Exempt', limited: undefined }),
    want: ["spec.type: Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'"],
  },
  {
    name: 'unsupported type',
    obj: priorityLevel({ type: 'Unlimited' }),
    want: ['spec.type: Unsupported value: "Unlimited": supported values: "Exempt", "Limited"'],
  },
  {
    name: 'missing type',
    obj: priorityLevel({ type: '' }),
    want: ['spec.type: Unsupported value: "": supported values: "Exempt", "Limited"'],
  },
  {
    name: 'an exempt level must not be limited',
    obj: mutate(MANDATORY_PL_EXEMPT, (p) => (p.spec.limited = { nominalConcurrencyShares: 42, lendablePercent: 0, limitResponse: { type: 'Reject' } })),
    want: [
      'spec.limited: Forbidden: must be nil if the type is not Limited',
      'spec: Invalid value: flowcontrol.PriorityLevelConfigurationSpec{Type:"Exempt", Limited:(*flowcontrol.LimitedPriorityLevelConfiguration)(0xc000010000), ' +
        "Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(0xc000010000)}: spec of 'exempt' except the 'spec.exempt' field must equal the fixed value",
    ],
  },
  {
    name: 'exempt configuration values (above the range)',
    obj: mutate(MANDATORY_PL_EXEMPT, (p) => (p.spec.exempt = { nominalConcurrencyShares: -1, lendablePercent: 101 })),
    want: [
      'spec.exempt.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer',
      'spec.exempt.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive',
    ],
  },
  {
    name: 'exempt configuration values (below the range)',
    obj: mutate(MANDATORY_PL_EXEMPT, (p) => (p.spec.exempt = { nominalConcurrencyShares: -1, lendablePercent: -1 })),
    want: [
      'spec.exempt.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer',
      'spec.exempt.lendablePercent: Invalid value: -1: must be between 0 and 100, inclusive',
    ],
  },
  {
    name: "the exempt level can't be repurposed to a limited one",
    obj: mutate(MANDATORY_PL_EXEMPT, (p) => ((p.spec.type = 'Limited'), (p.spec.exempt = {}), (p.spec.limited = { nominalConcurrencyShares: 42, lendablePercent: 0, limitResponse: { type: 'Reject' } }))),
    want: [
      "spec.type: Invalid value: \"Limited\": type must be 'Exempt' if and only if name is 'exempt'",
      'spec.exempt: Forbidden: must be nil if the type is Limited',
      'spec: Invalid value: flowcontrol.PriorityLevelConfigurationSpec{Type:"Limited", Limited:(*flowcontrol.LimitedPriorityLevelConfiguration)(0xc000010000), ' +
        "Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(0xc000010000)}: spec of 'exempt' except the 'spec.exempt' field must equal the fixed value",
    ],
  },
  {
    name: 'the exempt level with a wrong limited spec',
    obj: mutate(MANDATORY_PL_EXEMPT, (p) => (p.spec = { type: 'Limited', limited: { nominalConcurrencyShares: 42, lendablePercent: 0, limitResponse: { type: 'Reject' } } })),
    want: [
      "spec.type: Invalid value: \"Limited\": type must be 'Exempt' if and only if name is 'exempt'",
      `spec: Invalid value: ${PL_LIMITED_REPR}: spec of 'exempt' except the 'spec.exempt' field must equal the fixed value`,
    ],
  },
  {
    name: 'a limited level must not set the exempt configuration, and needs the limited one',
    obj: priorityLevel({ exempt: {}, limited: undefined }),
    want: ['spec.exempt: Forbidden: must be nil if the type is Limited', 'spec.limited: Required value: must not be empty when type is Limited'],
  },
  {
    name: 'negative nominal concurrency shares',
    obj: limited({ nominalConcurrencyShares: -1 }),
    want: ['spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer'],
  },
  {
    name: 'lendable and borrowing limit percents',
    obj: limited({ lendablePercent: 101, borrowingLimitPercent: -1 }),
    want: [
      'spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive',
      'spec.limited.borrowingLimitPercent: Invalid value: -1: if specified, must be a non-negative integer',
    ],
  },
  {
    name: 'negative lendable percent, after the limit response errors',
    obj: limited({ lendablePercent: -1, limitResponse: {} }),
    want: [
      'spec.limited.limitResponse.type: Unsupported value: "": supported values: "Queue", "Reject"',
      'spec.limited.lendablePercent: Invalid value: -1: must be between 0 and 100, inclusive',
    ],
  },
  {
    name: 'unsupported limit response type',
    obj: limited({ limitResponse: { type: 'Drop' } }),
    want: ['spec.limited.limitResponse.type: Unsupported value: "Drop": supported values: "Queue", "Reject"'],
  },
  {
    name: 'queuing is forbidden when rejecting',
    obj: limited({ limitResponse: { type: 'Reject', queuing: { queues: 512, handSize: 4, queueLengthLimit: 100 } } }),
    want: ['spec.limited.limitResponse.queuing: Forbidden: must be nil if limited.limitResponse.type is not Limited'],
  },
  {
    name: 'queuing is required when queuing',
    obj: limited({ limitResponse: { type: 'Queue' } }),
    want: ['spec.limited.limitResponse.queuing: Required value: must not be empty if limited.limitResponse.type is Limited'],
  },
  {
    name: 'queuing values must be positive',
    obj: queuing({ queueLengthLimit: -1, queues: -2, handSize: -3 }),
    want: [
      'spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: -1: must be positive',
      'spec.limited.limitResponse.queuing.queues: Invalid value: -2: must be positive',
      'spec.limited.limitResponse.queuing.handSize: Invalid value: -3: must be positive',
    ],
  },
  {
    name: 'handSize is compared with queues even when queues is invalid',
    obj: queuing({ queues: -1, handSize: 2 }),
    want: [
      'spec.limited.limitResponse.queuing.queues: Invalid value: -1: must be positive',
      'spec.limited.limitResponse.queuing.handSize: Invalid value: 2: should not be greater than queues (-1)',
    ],
  },
  {
    name: 'handSize greater than queues',
    obj: queuing({ queues: 7, handSize: 8 }),
    want: ['spec.limited.limitResponse.queuing.handSize: Invalid value: 8: should not be greater than queues (7)'],
  },
  {
    name: 'too much entropy: 512 queues, hand of 8',
    obj: queuing({ queues: 512, handSize: 8 }),
    want: ['spec.limited.limitResponse.queuing.handSize: Invalid value: 8: required entropy bits of deckSize 512 and handSize 8 should not be greater than 60'],
  },
  {
    name: 'too much entropy: 128 queues, hand of 10',
    obj: queuing({ queues: 128, handSize: 10 }),
    want: ['spec.limited.limitResponse.queuing.handSize: Invalid value: 10: required entropy bits of deckSize 128 and handSize 10 should not be greater than 60'],
  },
  {
    name: 'too much entropy: 2^10 queues, hand of 7',
    obj: queuing({ queues: 1024, handSize: 7 }),
    want: ['spec.limited.limitResponse.queuing.handSize: Invalid value: 7: required entropy bits of deckSize 1024 and handSize 7 should not be greater than 60'],
  },
  {
    name: 'too many queues',
    obj: queuing({ queues: 2147483647, handSize: 3 }),
    want: [
      'spec.limited.limitResponse.queuing.queues: Invalid value: 2147483647: must not be greater than 10000000',
      'spec.limited.limitResponse.queuing.handSize: Invalid value: 3: required entropy bits of deckSize 2147483647 and handSize 3 should not be greater than 60',
    ],
  },
  {
    name: 'the mandatory catch-all level is fixed',
    obj: mutate(MANDATORY_PL_CATCH_ALL, (p) => (p.spec.limited.nominalConcurrencyShares = 42)),
    want: [`spec: Invalid value: ${PL_LIMITED_REPR}: spec of 'catch-all' must equal the fixed value`],
  },
  {
    name: 'the mandatory catch-all level is fixed (lendablePercent and queuing)',
    obj: mutate(MANDATORY_PL_CATCH_ALL, (p) => (p.spec.limited = { nominalConcurrencyShares: 5, lendablePercent: 10, limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 8, queueLengthLimit: 50 } } })),
    want: [`spec: Invalid value: ${PL_LIMITED_REPR}: spec of 'catch-all' must equal the fixed value`],
  },
  {
    name: 'the mandatory catch-all level must stay limited',
    obj: mutate(MANDATORY_PL_CATCH_ALL, (p) => (p.spec = { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } })),
    want: [
      "spec.type: Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'",
      'spec: Invalid value: flowcontrol.PriorityLevelConfigurationSpec{Type:"Exempt", Limited:(*flowcontrol.LimitedPriorityLevelConfiguration)(nil), ' +
        "Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(0xc000010000)}: spec of 'catch-all' must equal the fixed value",
    ],
  },
  {
    name: 'the v1beta3 round-trip annotation is forbidden',
    obj: mutate(priorityLevel(), (p) => (p.metadata.annotations = { 'flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares': '' })),
    want: ["metadata.annotations: Forbidden: annotation 'flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares' is forbidden"],
  },
  {
    name: 'status conditions: duplicate and empty types',
    obj: mutate(priorityLevel(), (p) => (p.status = { conditions: [{ type: '' }, { type: 'ConcurrencyShared' }, { type: 'ConcurrencyShared' }] })),
    want: ['status.conditions[0].type: Required value: must not be empty', 'status.conditions[2].type: Duplicate value: "ConcurrencyShared"'],
  },
];

for (const c of PL_CASES)
  test(`PriorityLevelConfiguration: ${c.name}`, () => {
    assert.deepEqual(strs(validatePriorityLevelConfiguration(c.obj)), c.want);
    assert.deepEqual(strs(validatePriorityLevelConfigurationUpdate(c.obj, priorityLevel())), c.want);
  });

test('PriorityLevelConfiguration update: every spec field may change', () => {
  const old = priorityLevel();
  assert.deepEqual(strs(validatePriorityLevelConfigurationUpdate(limited({ nominalConcurrencyShares: 0, lendablePercent: 50 }), old)), []);
  const exempt = mutate(MANDATORY_PL_EXEMPT, (p) => (p.spec.exempt.lendablePercent = 50));
  assert.deepEqual(strs(validatePriorityLevelConfigurationUpdate(exempt, MANDATORY_PL_EXEMPT)), []);
});

test('PriorityLevelConfiguration status update: only the conditions are checked', () => {
  const old = priorityLevel();
  const ok = mutate(old, (p) => (p.status = { conditions: [{ type: 'ConcurrencyShared', status: 'True', lastTransitionTime: '2025-05-01T10:00:00Z' }] }));
  assert.deepEqual(strs(validatePriorityLevelConfigurationStatusUpdate(ok, old)), []);
  assert.deepEqual(strs(validatePriorityLevelConfigurationStatusUpdate(MANDATORY_PL_EXEMPT, MANDATORY_PL_EXEMPT)), []);
  const badSpec = limited({ nominalConcurrencyShares: -1 });
  assert.deepEqual(strs(validatePriorityLevelConfigurationStatusUpdate(badSpec, badSpec)), []);
  const bad = mutate(old, (p) => (p.status = { conditions: [{ type: 'A' }, { type: 'A' }, { type: '' }] }));
  assert.deepEqual(strs(validatePriorityLevelConfigurationStatusUpdate(bad, old)), ['status.conditions[1].type: Duplicate value: "A"', 'status.conditions[2].type: Required value: must not be empty']);
});
