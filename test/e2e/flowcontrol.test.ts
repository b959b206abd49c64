// API Priority and Fairness configuration objects: the mandatory and suggested FlowSchemas and
// PriorityLevelConfigurations kube-apiserver 1.33 creates at start, kept at their bootstrap spec
// while their auto-update annotation says so, and each FlowSchema's Dangling condition.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, until, type Cluster } from './harness.js';

let c: Cluster;
const FC = '/apis/flowcontrol.apiserver.k8s.io/v1';

before(async () => {
  c = await startCluster();
});

after(async () => {
  await c?.stop();
});

test('the bootstrap configuration, as kubectl shows it', async () => {
  const fs = c.kubectl(['get', 'flowschemas', '--no-headers', '-o', 'custom-columns=N:.metadata.name,P:.spec.priorityLevelConfiguration.name,M:.spec.matchingPrecedence,D:.spec.distinguisherMethod.type,MISSING:.status.conditions[0].status']);
  assert.equal(fs.code, 0, fs.stderr);
  const rows = fs.stdout.trim().split('\n').map((l) => l.trim().split(/\s+/));
  assert.deepEqual(rows, [
    ['catch-all', 'catch-all', '10000', 'ByUser', 'False'],
    ['endpoint-controller', 'workload-high', '150', 'ByUser', 'False'],
    ['exempt', 'exempt', '1', '<none>', 'False'],
    ['global-default', 'global-default', '9900', 'ByUser', 'False'],
    ['kube-controller-manager', 'workload-high', '800', 'ByNamespace', 'False'],
    ['kube-scheduler', 'workload-high', '800', 'ByNamespace', 'False'],
    ['kube-system-service-accounts', 'workload-high', '900', 'ByNamespace', 'False'],
    ['probes', 'exempt', '2', '<none>', 'False'],
    ['service-accounts', 'workload-low', '9000', 'ByUser', 'False'],
    ['system-leader-election', 'leader-election', '100', 'ByUser', 'False'],
    ['system-node-high', 'node-high', '400', 'ByUser', 'False'],
    ['system-nodes', 'system', '500', 'ByUser', 'False'],
    ['workload-leader-election', 'leader-election', '200', 'ByUser', 'False'],
  ]);
  const pl = (await c.raw('GET', `${FC}/prioritylevelconfigurations`)).json();
  assert.deepEqual(
    pl.items.map((o: any) => [o.metadata.name, o.spec.type, o.spec.limited?.nominalConcurrencyShares ?? o.spec.exempt?.nominalConcurrencyShares, o.spec.limited?.lendablePercent ?? 0, o.spec.limited?.limitResponse?.queuing?.queues ?? '-']),
    [
      ['catch-all', 'Limited', 5, 0, '-'],
      ['exempt', 'Exempt', 0, 0, '-'],
      ['global-default', 'Limited', 20, 50, 128],
      ['leader-election', 'Limited', 10, 0, 16],
      ['node-high', 'Limited', 40, 25, 64],
      ['system', 'Limited', 30, 33, 64],
      ['workload-high', 'Limited', 40, 50, 128],
      ['workload-low', 'Limited', 100, 90, 128],
    ],
  );
  const probes = (await c.raw('GET', `${FC}/flowschemas/probes`)).json();
  assert.equal(probes.metadata.annotations['apf.kubernetes.io/autoupdate-spec'], 'true');
  assert.deepEqual(probes.spec.rules, [
    { subjects: [{ kind: 'Group', group: { name: 'system:unauthenticated' } }, { kind: 'Group', group: { name: 'system:authenticated' } }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }] },
  ]);
  const cond = probes.status.conditions[0];
  assert.deepEqual([cond.type, cond.status, cond.reason, cond.message], ['Dangling', 'False', 'Found', 'This FlowSchema references the PriorityLevelConfiguration object named "exempt" and it exists']);
});

test('a FlowSchema naming a priority level that does not exist is Dangling until it does', async () => {
  const fs = {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name: 'mine' },
    spec: { priorityLevelConfiguration: { name: 'my-level' }, rules: [{ subjects: [{ kind: 'User', user: { name: 'alice' } }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] }] },
  };
  assert.equal((await c.raw('POST', `${FC}/flowschemas`, { body: fs })).status, 201);
  const dangling = await until('Dangling True', async () => {
    const o = (await c.raw('GET', `${FC}/flowschemas/mine`)).json();
    return o.status?.conditions?.find((x: any) => x.type === 'Dangling' && x.status === 'True');
  });
  assert.deepEqual([dangling.reason, dangling.message], ['NotFound', 'This FlowSchema references the PriorityLevelConfiguration object named "my-level" but there is no such object']);
  const pl = { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name: 'my-level' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 5, limitResponse: { type: 'Reject' } } } };
  assert.equal((await c.raw('POST', `${FC}/prioritylevelconfigurations`, { body: pl })).status, 201);
  await until('Dangling False', async () => (await c.raw('GET', `${FC}/flowschemas/mine`)).json().status?.conditions?.find((x: any) => x.type === 'Dangling' && x.status === 'False'));
});

test('a changed bootstrap object is set back at the next start while its annotation is "true"; "false" keeps the change', async () => {
  const patch = (name: string, body: object) => c.raw('PATCH', `${FC}/flowschemas/${name}`, { body, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal((await patch('service-accounts', { spec: { matchingPrecedence: 8000 } })).status, 200);
  assert.equal((await patch('global-default', { metadata: { annotations: { 'apf.kubernetes.io/autoupdate-spec': 'false' } }, spec: { matchingPrecedence: 9800 } })).status, 200);
  assert.equal((await c.raw('DELETE', `${FC}/flowschemas/kube-scheduler`)).status, 200);
  await c.stopProcess();
  await c.launch();
  const get = async (name: string) => (await c.raw('GET', `${FC}/flowschemas/${name}`)).json();
  assert.equal((await get('service-accounts')).spec.matchingPrecedence, 9000);
  assert.equal((await get('global-default')).spec.matchingPrecedence, 9800);
  assert.equal((await get('kube-scheduler')).spec.matchingPrecedence, 800, 'a deleted one is created again');
});
