// ResourceQuota: object counts and compute resources, Kubernetes' `exceeded quota` words, the
// status writes (never on dry runs), scopes, and changes admitted but not yet stored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resourceQuota, recountUsage } from '../../src/apiserver/admission/resourcequota.js';
import { MemoryCluster, attrs, pod, rejection } from './fake.js';

function setup(hard: Record<string, string>, spec: any = {}) {
  const c = new MemoryCluster();
  c.namespace('apps');
  c.add('', 'resourcequotas', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'quota', namespace: 'apps' }, spec: { hard, ...spec } });
  const p = resourceQuota(c, c);
  /** admit a create, then store the object as the API server would */
  const create = async (resource: string, obj: any, opts: { dryRun?: boolean; store?: boolean } = {}) => {
    obj.metadata.uid ??= `uid-${obj.metadata.name}`;
    await p.validate!(attrs(resource as any, 'CREATE', { object: obj, dryRun: opts.dryRun }));
    if (opts.store !== false && !opts.dryRun) c.add(resource === 'deployments' ? 'apps' : '', resource, obj);
  };
  return { c, p, create };
}

const withResources = (name: string, resources: any) => pod(name, 'apps', { containers: [{ name: 'app', image: 'nginx', resources }] });

test('ResourceQuota: pods are counted; the one too many is refused in Kubernetes\' words', async () => {
  const { c, create } = setup({ pods: '2', 'count/pods': '5' });
  await create('pods', pod('p1', 'apps'));
  await create('pods', pod('p2', 'apps'));
  const err = await rejection(() => create('pods', pod('p3', 'apps')));
  assert.equal(err.code, 403);
  assert.equal(err.reason, 'Forbidden');
  assert.equal(err.message, 'pods "p3" is forbidden: exceeded quota: quota, requested: pods=1, used: pods=2, limited: pods=2');
  // status: hard from spec, used after each admission
  const q = c.get('', 'resourcequotas', 'apps', 'quota');
  assert.deepEqual(q.status, { hard: { 'count/pods': '5', pods: '2' }, used: { 'count/pods': '2', pods: '2' } });
  assert.deepEqual(
    c.statusWrites.map((w) => w.status.used.pods),
    ['1', '2'],
  );
});

test('ResourceQuota: dry runs are checked but charge nothing', async () => {
  const { c, create } = setup({ pods: '1' });
  await create('pods', pod('p1', 'apps'), { dryRun: true });
  await create('pods', pod('p1', 'apps'), { dryRun: true });
  assert.equal(c.statusWrites.length, 0);
  await create('pods', pod('p1', 'apps'));
  const err = await rejection(() => create('pods', pod('p2', 'apps'), { dryRun: true }));
  assert.equal(err.message, 'pods "p2" is forbidden: exceeded quota: quota, requested: pods=1, used: pods=1, limited: pods=1');
  assert.equal(c.statusWrites.length, 1);
});

test('ResourceQuota: compute resources must be stated, and are summed', async () => {
  const { create } = setup({ 'requests.cpu': '1', 'limits.memory': '1Gi' });
  let err = await rejection(() => create('pods', pod('bare', 'apps')));
  assert.equal(err.message, 'pods "bare" is forbidden: failed quota: quota: must specify limits.memory for: app; requests.cpu for: app');
  await create('pods', withResources('a', { requests: { cpu: '600m' }, limits: { memory: '512Mi' } }));
  err = await rejection(() => create('pods', withResources('b', { requests: { cpu: '600m' }, limits: { memory: '256Mi' } })));
  assert.equal(err.message, 'pods "b" is forbidden: exceeded quota: quota, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1');
  err = await rejection(() => create('pods', withResources('c', { requests: { cpu: '600m' }, limits: { memory: '768Mi' } })));
  assert.equal(err.message, 'pods "c" is forbidden: exceeded quota: quota, requested: limits.memory=768Mi,requests.cpu=600m, used: limits.memory=512Mi,requests.cpu=600m, limited: limits.memory=1Gi,requests.cpu=1');
  await create('pods', withResources('d', { requests: { cpu: '400m' }, limits: { memory: '512Mi' } }));
});

test('ResourceQuota: admitted changes the cache does not show yet still count', async () => {
  const { create } = setup({ pods: '1' });
  await create('pods', pod('p1', 'apps'), { store: false });
  const err = await rejection(() => create('pods', pod('p2', 'apps')));
  assert.equal(err.message, 'pods "p2" is forbidden: exceeded quota: quota, requested: pods=1, used: pods=1, limited: pods=1');
});

test('ResourceQuota: concurrent creates in one namespace are checked one after the other', async () => {
  const { p } = setup({ pods: '2' });
  const results = await Promise.allSettled(['a', 'b', 'c', 'd'].map((n) => p.validate!(attrs('pods', 'CREATE', { object: { ...pod(n, 'apps'), metadata: { name: n, namespace: 'apps', uid: n } } }))));
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'fulfilled', 'rejected', 'rejected'],
  );
});

test('ResourceQuota: deleted objects free their share at the next check', async () => {
  const { c, create } = setup({ pods: '1' });
  await create('pods', pod('p1', 'apps'));
  await rejection(() => create('pods', pod('p2', 'apps')));
  c.remove('', 'pods', 'apps', 'p1');
  await create('pods', pod('p2', 'apps'));
  // terminal pods are not charged for `pods` (count/pods still counts them)
  const done = c.get('', 'pods', 'apps', 'p2');
  done.status = { phase: 'Succeeded' };
  await create('pods', pod('p3', 'apps'));
});

test('ResourceQuota: services, node ports and load balancers', async () => {
  const { create } = setup({ services: '5', 'services.nodeports': '1', 'services.loadbalancers': '0' });
  const svc = (name: string, type: string, ports = 1) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'apps' }, spec: { type, ports: Array.from({ length: ports }, (_, i) => ({ port: 80 + i })) } });
  await create('services', svc('plain', 'ClusterIP'));
  let err = await rejection(() => create('services', svc('np', 'NodePort', 2)));
  assert.equal(err.message, 'services "np" is forbidden: exceeded quota: quota, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1');
  err = await rejection(() => create('services', svc('lb', 'LoadBalancer')));
  assert.equal(err.message, 'services "lb" is forbidden: exceeded quota: quota, requested: services.loadbalancers=1, used: services.loadbalancers=0, limited: services.loadbalancers=0');
});

test('ResourceQuota: count/<resource>.<group> and the legacy object count names', async () => {
  const { c, create } = setup({ 'count/deployments.apps': '1', configmaps: '1' });
  const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'apps' } });
  const dep = (name: string) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: 'apps' }, spec: {} });
  await create('configmaps', cm('one'));
  let err = await rejection(() => create('configmaps', cm('two')));
  assert.equal(err.message, 'configmaps "two" is forbidden: exceeded quota: quota, requested: configmaps=1, used: configmaps=1, limited: configmaps=1');
  await create('deployments', dep('one'));
  err = await rejection(() => create('deployments', dep('two')));
  assert.equal(err.message, 'deployments.apps "two" is forbidden: exceeded quota: quota, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1');
  // objects no quota names pass
  await create('secrets', { metadata: { name: 's', namespace: 'apps' } });
  assert.deepEqual(c.get('', 'resourcequotas', 'apps', 'quota').status.used, { configmaps: '1', 'count/deployments.apps': '1' });
});

test('ResourceQuota: scopes select the pods a quota counts', async () => {
  const { c, create } = setup({ pods: '1' }, { scopes: ['BestEffort'] });
  await create('pods', pod('be1', 'apps'));
  // a Burstable pod is outside the quota
  await create('pods', withResources('burst', { requests: { cpu: '100m' } }));
  const err = await rejection(() => create('pods', pod('be2', 'apps')));
  assert.equal(err.message, 'pods "be2" is forbidden: exceeded quota: quota, requested: pods=1, used: pods=1, limited: pods=1');
  const quota = c.get('', 'resourcequotas', 'apps', 'quota');
  assert.deepEqual(listUsed(recountUsage(c, 'apps', quota)), { pods: '1' });
});

test('ResourceQuota: a PriorityClass scope selector', async () => {
  const { create } = setup({ pods: '1' }, { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } });
  await create('pods', pod('h1', 'apps', { priorityClassName: 'high' }));
  await create('pods', pod('l1', 'apps', { priorityClassName: 'low' }));
  const err = await rejection(() => create('pods', pod('h2', 'apps', { priorityClassName: 'high' })));
  assert.match(err.message, /exceeded quota: quota, requested: pods=1, used: pods=1, limited: pods=1$/);
});

test('ResourceQuota: updates are charged their growth (a claim resized)', async () => {
  const { c, p } = setup({ 'requests.storage': '10Gi' });
  const claim = (size: string) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'apps', uid: 'u1' }, spec: { resources: { requests: { storage: size } } } });
  await p.validate!(attrs('persistentvolumeclaims', 'CREATE', { object: claim('6Gi') }));
  const stored = c.add('', 'persistentvolumeclaims', claim('6Gi'));
  await p.validate!(attrs('persistentvolumeclaims', 'UPDATE', { object: claim('8Gi'), oldObject: stored }));
  c.add('', 'persistentvolumeclaims', claim('8Gi'));
  const err = await rejection(() => p.validate!(attrs('persistentvolumeclaims', 'UPDATE', { object: claim('12Gi'), oldObject: c.get('', 'persistentvolumeclaims', 'apps', 'data') })));
  assert.equal(err.message, 'persistentvolumeclaims "data" is forbidden: exceeded quota: quota, requested: requests.storage=4Gi, used: requests.storage=8Gi, limited: requests.storage=10Gi');
});

test('ResourceQuota: namespaces, cluster-scoped objects, events and other namespaces are not counted', async () => {
  const { c, p } = setup({ pods: '0', 'count/events': '0' });
  c.namespace('other');
  await p.validate!(attrs('pods', 'CREATE', { object: pod('x', 'other') }));
  await p.validate!(attrs('namespaces', 'CREATE', { object: { metadata: { name: 'apps' } }, namespace: 'apps' }));
  await p.validate!(attrs('nodes', 'CREATE', { object: { metadata: { name: 'n' } } }));
  await p.validate!(
    attrs('pods', 'CREATE', {
      kind: { group: '', version: 'v1', kind: 'Event' },
      resource: { group: '', version: 'v1', resource: 'events' },
      object: { metadata: { name: 'e', namespace: 'apps' } },
    }),
  );
});

function listUsed(list: Map<string, any>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of list) out[k] = String(v.nano / 1_000_000_000n);
  return out;
}
